//! A tool server's request for a model's answer (MCP sampling, `sampling/createMessage`),
//! as Skald reads it and answers it on the wire. Pure: what the person decides and which
//! model answers are the agent's (`agent::sampling`); this only turns the server's request
//! into plain text messages and the model's words back into the protocol's result.
//!
//! Text only: a request with images, audio or tool use is refused with an error the server
//! can read, before anyone is asked. `includeContext` is never honoured: nothing of the
//! conversation goes to the server's request but what the server itself wrote.

// Sampling is protocol 2025-11-25's, Skald's default; SEP-2577 deprecates it from
// 2026-07-28 on, and it is answered only on connections made at 2025-11-25.
#![allow(deprecated, reason = "sampling is deprecated from protocol 2026-07-28 on; Skald speaks it at 2025-11-25")]

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, Role, SamplingMessage, SamplingMessageContentBlock,
};

/// The most a server may ask the model to write for it, in tokens.
pub const MAX_SAMPLE_TOKENS: u32 = 4096;

/// The most text a request may carry, in characters.
const MAX_SAMPLE_CHARS: usize = 100_000;

/// Who said a message of a sampling request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    Person,
    Model,
}

/// A server's sampling request, as plain text.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRequest {
    /// The server's system prompt, if it gave one.
    pub system: Option<String>,
    pub messages: Vec<(Speaker, String)>,
    /// At most [`MAX_SAMPLE_TOKENS`].
    pub max_tokens: u32,
    /// The models the server would prefer, by name: shown, never obeyed (the person's
    /// own model answers).
    pub hints: Vec<String>,
}

/// The model's answer to a sampling request.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    pub text: String,
    /// The model that wrote it, as the catalogue names it.
    pub model: String,
    /// The answer was cut at the request's `max_tokens`.
    pub cut: bool,
}

/// Reads a server's request; the error says, in words the server can log, what Skald does
/// not answer.
pub fn read(params: CreateMessageRequestParams) -> Result<SampleRequest, String> {
    if params.tools.as_ref().is_some_and(|tools| !tools.is_empty()) || params.tool_choice.is_some() {
        return Err("Skald does not offer tools to a server's sampling request".into());
    }
    if params.messages.is_empty() {
        return Err("the sampling request has no messages".into());
    }
    let mut messages = Vec::with_capacity(params.messages.len());
    for message in params.messages {
        let speaker = match message.role {
            Role::User => Speaker::Person,
            Role::Assistant => Speaker::Model,
        };
        let mut text = String::new();
        for block in message.content.into_vec() {
            let SamplingMessageContentBlock::Text(block) = block else {
                return Err("Skald answers sampling requests of text only".into());
            };
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&block.text);
        }
        messages.push((speaker, text));
    }
    let chars = params.system_prompt.as_deref().map_or(0, str::len)
        + messages.iter().map(|(_, text)| text.len()).sum::<usize>();
    if chars > MAX_SAMPLE_CHARS {
        return Err(format!("the sampling request is longer than Skald takes ({MAX_SAMPLE_CHARS} characters)"));
    }
    if params.max_tokens == 0 {
        return Err("maxTokens must be at least 1".into());
    }
    let hints = params
        .model_preferences
        .and_then(|preferences| preferences.hints)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|hint| hint.name)
        .collect();
    Ok(SampleRequest {
        system: params.system_prompt.filter(|s| !s.trim().is_empty()),
        messages,
        max_tokens: params.max_tokens.min(MAX_SAMPLE_TOKENS),
        hints,
    })
}

/// The model's answer as the protocol's result.
pub fn result(sampled: Sampled) -> CreateMessageResult {
    let message = SamplingMessage::new(Role::Assistant, SamplingMessageContentBlock::text(sampled.text));
    let reason = if sampled.cut {
        CreateMessageResult::STOP_REASON_END_MAX_TOKEN
    } else {
        CreateMessageResult::STOP_REASON_END_TURN
    };
    CreateMessageResult::new(message, sampled.model).with_stop_reason(reason)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn params(value: serde_json::Value) -> CreateMessageRequestParams {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_text_request_is_read_with_its_system_prompt_and_a_bounded_length() {
        let request = read(params(json!({
            "messages": [
                { "role": "user", "content": { "type": "text", "text": "Name a colour." } },
                { "role": "assistant", "content": [{ "type": "text", "text": "Blue." }] },
                { "role": "user", "content": { "type": "text", "text": "Another." } },
            ],
            "systemPrompt": "Be brief.",
            "maxTokens": 1_000_000,
            "modelPreferences": { "hints": [{ "name": "claude" }] },
        })))
        .unwrap();
        assert_eq!(request.system.as_deref(), Some("Be brief."));
        assert_eq!(
            request.messages,
            [
                (Speaker::Person, "Name a colour.".to_owned()),
                (Speaker::Model, "Blue.".to_owned()),
                (Speaker::Person, "Another.".to_owned())
            ]
        );
        assert_eq!(request.max_tokens, MAX_SAMPLE_TOKENS);
        assert_eq!(request.hints, ["claude"]);
    }

    #[test]
    fn images_tools_and_empty_requests_are_refused_before_anyone_is_asked() {
        let image = params(json!({
            "messages": [{ "role": "user", "content": { "type": "image", "data": "AAAA", "mimeType": "image/png" } }],
            "maxTokens": 10,
        }));
        assert!(read(image).unwrap_err().contains("text only"));
        let tools = params(json!({
            "messages": [{ "role": "user", "content": { "type": "text", "text": "hi" } }],
            "maxTokens": 10,
            "tools": [{ "name": "t", "inputSchema": { "type": "object" } }],
        }));
        assert!(read(tools).unwrap_err().contains("tools"));
        assert!(read(params(json!({ "messages": [], "maxTokens": 10 }))).unwrap_err().contains("no messages"));
        let long = "x".repeat(MAX_SAMPLE_CHARS + 1);
        let long = params(json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": long } }],
            "maxTokens": 10 }));
        assert!(read(long).unwrap_err().contains("longer"));
    }

    #[test]
    fn an_answer_cut_at_its_length_says_so() {
        let sampled = Sampled { text: "Red".into(), model: "m".into(), cut: true };
        let value = serde_json::to_value(result(sampled)).unwrap();
        assert_eq!(value["stopReason"], "maxTokens");
        assert_eq!(value["content"]["text"], "Red");
        assert_eq!(value["role"], "assistant");
        assert_eq!(value["model"], "m");
    }
}
