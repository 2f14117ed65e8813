//! The script: what a test says the model will answer, the queue of those answers, and the
//! protocol-neutral plan each request gets. Pure: no sockets, no clocks, no wire format —
//! the protocol modules encode a [`Plan`] and the server paces it.

use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One scripted answer, as a test writes it in Rust or as JSON to `POST /_scripted/replies`.
/// Every field is optional; an empty reply streams nothing and finishes with "stop".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Reply {
    /// Assistant text to stream.
    pub text: Option<String>,
    /// Instead of `text`: N deltas " tok0", " tok1", …, for benchmarks. Wins over `text`.
    pub tokens: Option<usize>,
    /// 0 splits text into words that keep their leading space ("Hello", " world");
    /// otherwise pieces of exactly this many characters.
    pub chunk_chars: usize,
    /// Pause between deltas.
    pub delay_ms: u64,
    /// Pause after the response headers, before the first delta.
    pub first_delay_ms: u64,
    /// Tool calls, streamed after the text, each call's deltas in turn.
    pub tool_calls: Vec<ScriptedCall>,
    /// Answer with this HTTP error status and an error body instead of a completion.
    pub status: Option<u16>,
    /// `Retry-After` seconds sent with `status`.
    pub retry_after: Option<u64>,
    /// The error message sent with `status` (default: the status's reason phrase).
    pub message: Option<String>,
    /// How many requests in a row this reply answers (0 counts as 1).
    pub times: usize,
    /// Send the headers and the scripted deltas, then never finish: the stream stays open
    /// until the client goes away or the server shuts down.
    pub hang: bool,
    /// Default "stop", or "tool_calls" when there are tool calls.
    pub finish_reason: Option<String>,
    /// Reported usage; default a rough estimate from the request (the protocol decides how).
    pub prompt_tokens: Option<u32>,
    /// Reported usage; default the number of deltas.
    pub completion_tokens: Option<u32>,
}

impl Default for Reply {
    fn default() -> Self {
        Self {
            text: None,
            tokens: None,
            chunk_chars: 0,
            delay_ms: 0,
            first_delay_ms: 0,
            tool_calls: Vec::new(),
            status: None,
            retry_after: None,
            message: None,
            times: 1,
            hang: false,
            finish_reason: None,
            prompt_tokens: None,
            completion_tokens: None,
        }
    }
}

impl Reply {
    /// A reply that streams `text`.
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: Some(text.into()), ..Self::default() }
    }

    /// A reply that fails with the HTTP `status`.
    pub fn status(status: u16) -> Self {
        Self { status: Some(status), ..Self::default() }
    }

    /// A reply that calls these tools.
    pub fn tool_calls(calls: impl IntoIterator<Item = ScriptedCall>) -> Self {
        Self { tool_calls: calls.into_iter().collect(), ..Self::default() }
    }

    /// What the server answers when the queue is empty, so it is useful unscripted.
    fn echo(last_user: &str) -> Self {
        Self::text(format!("You said: {last_user}"))
    }
}

/// One scripted tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// Default `call_<n>`, with n counting up across the server's life so ids never repeat
    /// within a conversation.
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    /// A JSON value is sent compactly serialized; a JSON string is sent as-is, so a test
    /// can send malformed arguments.
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// Over how many deltas the arguments are spread (0 counts as 1).
    #[serde(default = "one")]
    pub split: usize,
}

impl ScriptedCall {
    /// A call with a default id, its arguments in one delta.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self { id: None, name: name.into(), arguments, split: 1 }
    }
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

fn one() -> usize {
    1
}

/// The queue of replies plus the counter behind default call ids.
#[derive(Debug, Default)]
pub(crate) struct Script {
    queue: VecDeque<(Reply, usize)>,
    calls_made: u64,
}

impl Script {
    pub(crate) fn push(&mut self, reply: Reply) {
        let times = reply.times.max(1);
        self.queue.push_back((reply, times));
    }

    pub(crate) fn clear(&mut self) {
        self.queue.clear();
    }

    /// Takes the next reply (or the echo of `last_user` when none is queued) and plans it.
    /// `prompt_estimate` is the protocol's guess at the prompt's token count.
    pub(crate) fn answer(&mut self, last_user: &str, prompt_estimate: u32) -> Answer {
        let reply = match self.queue.pop_front() {
            Some((reply, left)) => {
                if left > 1 {
                    self.queue.push_front((reply.clone(), left - 1));
                }
                reply
            }
            None => Reply::echo(last_user),
        };
        self.plan(reply, prompt_estimate)
    }

    fn plan(&mut self, reply: Reply, prompt_estimate: u32) -> Answer {
        if let Some(status) = reply.status {
            return Answer::Fail(Failure { status, message: reply.message, retry_after: reply.retry_after });
        }
        let text = match (reply.tokens, &reply.text) {
            (Some(n), _) => (0..n).map(|i| format!(" tok{i}")).collect(),
            (None, Some(text)) => split_text(text, reply.chunk_chars),
            (None, None) => Vec::new(),
        };
        let calls: Vec<Call> = reply
            .tool_calls
            .into_iter()
            .map(|call| {
                self.calls_made += 1;
                let arguments = match call.arguments {
                    Value::String(raw) => raw,
                    value => value.to_string(),
                };
                Call {
                    id: call.id.unwrap_or_else(|| format!("call_{}", self.calls_made)),
                    name: call.name,
                    pieces: split_even(&arguments, call.split.max(1)),
                    arguments,
                }
            })
            .collect();
        let default_finish = if calls.is_empty() { "stop" } else { "tool_calls" };
        let deltas = text.len() + calls.iter().map(|call| call.pieces.len()).sum::<usize>();
        Answer::Complete(Plan {
            finish_reason: reply.finish_reason.unwrap_or_else(|| default_finish.to_owned()),
            prompt_tokens: reply.prompt_tokens.unwrap_or(prompt_estimate),
            completion_tokens: reply.completion_tokens.unwrap_or(u32::try_from(deltas).unwrap_or(u32::MAX)),
            first_delay: Duration::from_millis(reply.first_delay_ms),
            delay: Duration::from_millis(reply.delay_ms),
            hang: reply.hang,
            text,
            calls,
        })
    }
}

/// What one request gets.
#[derive(Debug, PartialEq)]
pub(crate) enum Answer {
    Fail(Failure),
    Complete(Plan),
}

#[derive(Debug, PartialEq)]
pub(crate) struct Failure {
    pub status: u16,
    pub message: Option<String>,
    pub retry_after: Option<u64>,
}

/// A successful answer, already cut into the deltas it streams as.
#[derive(Debug, PartialEq)]
pub(crate) struct Plan {
    /// The text's pieces, one per delta.
    pub text: Vec<String>,
    pub calls: Vec<Call>,
    pub finish_reason: String,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub first_delay: Duration,
    pub delay: Duration,
    pub hang: bool,
}

impl Plan {
    /// The whole text, for answers that are not streamed.
    pub(crate) fn full_text(&self) -> String {
        self.text.concat()
    }

    /// Every delta in streaming order: the text, then each call's argument pieces.
    pub(crate) fn deltas(&self) -> impl Iterator<Item = Delta<'_>> {
        let text = self.text.iter().map(|piece| Delta::Text(piece));
        let calls = self.calls.iter().enumerate().flat_map(|(index, call)| {
            call.pieces.iter().enumerate().map(move |(n, arguments)| Delta::Call {
                index,
                start: (n == 0).then_some(call),
                arguments,
            })
        });
        text.chain(calls)
    }
}

#[derive(Debug, PartialEq)]
pub(crate) struct Call {
    pub id: String,
    pub name: String,
    pub arguments: String,
    /// `arguments` cut into the fragments the deltas carry; never empty.
    pub pieces: Vec<String>,
}

/// One streamed increment.
#[derive(Debug, PartialEq)]
pub(crate) enum Delta<'a> {
    Text(&'a str),
    /// A fragment of call `index`'s arguments; the call's first delta also starts it.
    Call {
        index: usize,
        start: Option<&'a Call>,
        arguments: &'a str,
    },
}

/// An encoded streamed answer: the server spreads `paced` frames by the reply's delays and
/// sends the `tail` (finish, usage, end marker) at once. A hanging answer has no tail.
#[derive(Debug, PartialEq)]
pub(crate) struct Frames {
    pub paced: Vec<String>,
    pub tail: Vec<String>,
}

/// Cuts `text` into words that keep their leading whitespace, or into `chunk_chars`-long
/// pieces (counted in chars, so a multi-byte character is never split).
fn split_text(text: &str, chunk_chars: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut piece = String::new();
    let mut piece_chars = 0;
    let mut previous_was_space = true;
    for c in text.chars() {
        let boundary =
            if chunk_chars == 0 { c.is_whitespace() && !previous_was_space } else { piece_chars == chunk_chars };
        if boundary && !piece.is_empty() {
            pieces.push(std::mem::take(&mut piece));
            piece_chars = 0;
        }
        previous_was_space = c.is_whitespace();
        piece.push(c);
        piece_chars += 1;
    }
    if !piece.is_empty() {
        pieces.push(piece);
    }
    pieces
}

/// Cuts `text` into exactly `parts` pieces of near-equal char counts (some may be empty).
fn split_even(text: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let (base, extra) = (chars.len() / parts, chars.len() % parts);
    let mut start = 0;
    (0..parts)
        .map(|i| {
            let len = base + usize::from(i < extra);
            let piece = chars[start..start + len].iter().collect();
            start += len;
            piece
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(script: &mut Script) -> Plan {
        match script.answer("hi", 7) {
            Answer::Complete(plan) => plan,
            Answer::Fail(failure) => panic!("unexpected failure {failure:?}"),
        }
    }

    #[test]
    fn words_keep_their_leading_whitespace() {
        assert_eq!(split_text("Hello world  again\nnow", 0), ["Hello", " world", "  again", "\nnow"]);
        assert_eq!(split_text(" lead", 0), [" lead"]);
    }

    #[test]
    fn fixed_chunks_count_chars_not_bytes() {
        assert_eq!(split_text("héllo wörld", 4), ["héll", "o wö", "rld"]);
    }

    #[test]
    fn arguments_split_into_exactly_the_asked_number_of_pieces() {
        assert_eq!(split_even("abcdefg", 3), ["abc", "de", "fg"]);
        assert_eq!(split_even("ab", 3), ["a", "b", ""]);
    }

    #[test]
    fn an_empty_queue_echoes_the_last_user_message() {
        let plan = plan(&mut Script::default());
        assert_eq!(plan.full_text(), "You said: hi");
        assert_eq!((plan.finish_reason.as_str(), plan.prompt_tokens, plan.completion_tokens), ("stop", 7, 3));
    }

    #[test]
    fn a_reply_with_times_answers_that_many_requests() {
        let mut script = Script::default();
        script.push(Reply { times: 2, ..Reply::status(429) });
        script.push(Reply::text("ok"));
        assert!(matches!(script.answer("", 0), Answer::Fail(Failure { status: 429, .. })));
        assert!(matches!(script.answer("", 0), Answer::Fail(Failure { status: 429, .. })));
        assert_eq!(plan(&mut script).full_text(), "ok");
        assert_eq!(plan(&mut script).full_text(), "You said: hi");
    }

    #[test]
    fn tool_calls_get_fresh_default_ids_and_finish_with_tool_calls() {
        let mut script = Script::default();
        let call = ScriptedCall { split: 2, ..ScriptedCall::new("read", json!({"path": "a"})) };
        script.push(Reply::tool_calls([call.clone(), ScriptedCall::new("raw", json!("{oops"))]));
        script.push(Reply::tool_calls([call]));
        let first = plan(&mut script);
        assert_eq!(first.finish_reason, "tool_calls");
        assert_eq!(first.calls[0].arguments, r#"{"path":"a"}"#);
        assert_eq!(first.calls[0].pieces.concat(), first.calls[0].arguments);
        assert_eq!(first.calls[1].arguments, "{oops");
        assert_eq!(first.deltas().count(), 3);
        assert_eq!(plan(&mut script).calls[0].id, "call_3");
    }

    #[test]
    fn reply_json_rejects_unknown_fields() {
        assert!(serde_json::from_value::<Reply>(json!({"txt": "typo"})).is_err());
        let reply: Reply = serde_json::from_value(json!({"status": 429, "times": 4})).unwrap();
        assert_eq!(reply, Reply { times: 4, ..Reply::status(429) });
    }
}
