//! What Skald and the built-in model's worker process say to each other: one JSON object
//! per line, Skald's on the worker's stdin, the worker's on its stdout (which the worker
//! keeps for this alone; its logs go to stderr). Requests carry an id that every answer
//! to them repeats, so a second kind of request — embedding texts for memory, answered by
//! a small model held beside the chat model — is one more pair of variants, not a second
//! channel.
//!
//! Nothing secret crosses here: the worker is handed a model by path, the messages and
//! tools of one request, and an opaque number for whose request it is (its KV cache is
//! reused only between requests of the same number). Never here: the worker's engine or
//! the backend's bookkeeping.

use serde::{Deserialize, Serialize};

use super::{Loaded, RequestStats};
use crate::providers::{Delta, ToolSpec};

/// Identifies one request for as long as the worker lives.
pub type RequestId = u64;

/// A model the worker is to hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Its id in the catalogue, for logs and reports.
    pub id: String,
    pub path: std::path::PathBuf,
    /// The context Skald gives it, in tokens.
    pub context: u32,
    /// The memory it is expected to take, reported back once loaded.
    pub footprint_bytes: u64,
}

/// A conversation to answer with `model`, loading it first if another or none is held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Generate {
    pub id: RequestId,
    pub model: ModelSpec,
    /// Whose request this is, as a number only Skald can map back to a person: the KV
    /// cache is never reused across two numbers.
    pub partition: u64,
    /// The conversation as OpenAI-style messages (JSON text), for the chat template.
    pub messages: String,
    /// The tools as OpenAI-style functions (JSON text), loosened for the grammar.
    pub tools: Option<String>,
    /// The tools offered, to recognise calls written in other forms than the template's.
    pub offered: Vec<ToolSpec>,
}

/// Texts to embed with the embedding `model`, which the worker holds beside the chat
/// model (loading it first if it holds none or another).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Embed {
    pub id: RequestId,
    pub model: ModelSpec,
    pub texts: Vec<String>,
}

/// From Skald to the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToWorker {
    Generate(Generate),
    Embed(Embed),
    /// Stop answering request `id` (the person stopped, or the turn stopped listening).
    Cancel {
        id: RequestId,
    },
}

/// From the worker to Skald.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromWorker {
    /// The first line: the worker is up and what its engine was compiled to use.
    Ready { pid: u32, compiled_for: Vec<String> },
    /// A model is now held (or `None`: none is).
    Loaded { loaded: Option<Loaded> },
    /// The next part of request `id`'s reply; an empty list is a heartbeat while a long
    /// prompt is evaluated.
    Deltas { id: RequestId, deltas: Vec<Delta> },
    /// The answer to embedding request `id`: one unit vector per text, in order.
    Embedded { id: RequestId, vectors: Vec<Vec<f32>> },
    /// Request `id` failed; `message` says why and what to do. Nothing more comes for it.
    Failed { id: RequestId, message: String },
    /// Request `id` is over (answered, stopped or failed); nothing more comes for it.
    Done { id: RequestId, stats: RequestStats },
}

/// What `skald model-worker --inspect PATH` writes, as its one line, of a model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Inspected {
    /// llama.cpp read it: its parameter count.
    Parameters(u64),
    /// llama.cpp cannot use it: why.
    Refused(String),
}

/// One message as the line that carries it, newline included.
pub fn encode<T: Serialize>(message: &T) -> String {
    let mut line = serde_json::to_string(message).unwrap_or_else(|_| "{}".to_owned());
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_and_its_answers_read_back_as_they_were_written() {
        let ask = ToWorker::Generate(Generate {
            id: 7,
            model: ModelSpec { id: "smol".into(), path: "/m/smol.gguf".into(), context: 4096, footprint_bytes: 1 },
            partition: 2,
            messages: r#"[{"role":"user","content":"hi\nthere"}]"#.into(),
            tools: None,
            offered: vec![ToolSpec { name: "t".into(), description: "d".into(), parameters: serde_json::json!({}) }],
        });
        let line = encode(&ask);
        assert!(line.starts_with(r#"{"type":"generate","id":7,"#), "the tag beside the fields: {line}");
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1, "one line: {line}");
        assert_eq!(serde_json::from_str::<ToWorker>(&line).unwrap(), ask);
        let answer = FromWorker::Deltas {
            id: 7,
            deltas: vec![
                Delta::Text("é\n".into()),
                Delta::ToolCall { index: 0, id: Some("c".into()), name: None, arguments: "{}".into() },
                Delta::Finish("stop".into()),
            ],
        };
        assert_eq!(serde_json::from_str::<FromWorker>(&encode(&answer)).unwrap(), answer);
        assert!(encode(&ToWorker::Cancel { id: 7 }).starts_with(r#"{"type":"cancel","id":7}"#));
        let embed = ToWorker::Embed(Embed {
            id: 8,
            model: ModelSpec { id: "minilm".into(), path: "/m/minilm.gguf".into(), context: 512, footprint_bytes: 1 },
            texts: vec!["one".into(), "two\nlines".into()],
        });
        assert_eq!(serde_json::from_str::<ToWorker>(&encode(&embed)).unwrap(), embed);
        let vectors = FromWorker::Embedded { id: 8, vectors: vec![vec![0.25, -1.0], vec![0.0, 1.0]] };
        assert_eq!(serde_json::from_str::<FromWorker>(&encode(&vectors)).unwrap(), vectors);
    }
}
