//! Anthropic Messages: `POST {base}/messages` streamed as named server-sent events. Text,
//! `tool_use` blocks (arguments as `input_json_delta` fragments) and usage become
//! [`Delta`]s; thinking blocks are dropped cleanly — they are neither shown nor sent back.

use futures_util::{Stream, StreamExt};
use serde_json::{Value, json};

use super::{
    ChatRequest, ContextMessage, Delta, DeltaStream, Endpoint, ProviderError, arguments_object, fetch_json, send_json,
    url,
};
use crate::store::providers::Model;

/// The API version Skald speaks.
const VERSION: &str = "2023-06-01";
/// The most a reply may run to; Anthropic requires a bound.
const MAX_TOKENS: u32 = 8192;
/// Anthropic's models list no context window; theirs are all at least this.
const DEFAULT_CONTEXT: i64 = 200_000;

/// The request body, exactly as sent.
pub fn body(request: &ChatRequest) -> Value {
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter_map(|m| if let ContextMessage::System(text) = m { Some(text.as_str()) } else { None })
        .collect();
    // Anthropic wants user and assistant turns to alternate: consecutive rows of one role
    // (tool results, then the next question) merge into one message of blocks.
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, blocks) = match message {
            ContextMessage::System(_) => continue,
            ContextMessage::User(text) => ("user", vec![json!({ "type": "text", "text": text })]),
            ContextMessage::Tool { call_id, content } => {
                ("user", vec![json!({ "type": "tool_result", "tool_use_id": call_id, "content": content })])
            }
            // A picture is one more block of the person's message.
            ContextMessage::Picture(picture) => match picture.sent(request.images) {
                Some(data) => (
                    "user",
                    vec![json!({
                        "type": "image",
                        "source": { "type": "base64", "media_type": picture.media_type, "data": data }
                    })],
                ),
                None => ("user", vec![json!({ "type": "text", "text": picture.stand_in(request.images) })]),
            },
            ContextMessage::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({ "type": "text", "text": text }));
                }
                for call in tool_calls {
                    let input = arguments_object(&call.arguments);
                    blocks.push(json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input }));
                }
                ("assistant", blocks)
            }
        };
        match messages.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => messages.push((role, blocks)),
        }
    }
    let messages: Vec<Value> =
        messages.into_iter().map(|(role, content)| json!({ "role": role, "content": content })).collect();
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens.map_or(MAX_TOKENS, |max| max.min(MAX_TOKENS)),
        "messages": messages,
        "stream": true,
    });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.parameters }))
            .collect();
        body["tools"] = Value::Array(tools);
    }
    if let Some(key) = &request.cache_key {
        body["metadata"] = json!({ "user_id": key });
    }
    body
}

fn authorized(builder: reqwest::RequestBuilder, endpoint: &Endpoint) -> reqwest::RequestBuilder {
    let builder = builder.header("anthropic-version", VERSION);
    let Some(key) = &endpoint.api_key else { return builder };
    match reqwest::header::HeaderValue::from_str(key.as_str()) {
        Ok(mut value) => {
            // Kept out of any debug output of the request, like a bearer.
            value.set_sensitive(true);
            builder.header("x-api-key", value)
        }
        // A key with characters no header can carry: sent without it, refused as a bad key.
        Err(_) => builder,
    }
}

/// Sends the request; on success, the reply's stream of deltas.
pub async fn start(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    request: &ChatRequest,
) -> Result<DeltaStream, ProviderError> {
    let response = send_json(authorized(client.post(url(endpoint, "messages")), endpoint), &body(request)).await?;
    Ok(deltas(response.bytes_stream()))
}

/// The reply's bytes, in whatever pieces the network delivers them, as deltas: one item
/// per named event, up to `message_stop`.
pub(crate) fn deltas<B, E>(bytes: impl Stream<Item = Result<B, E>> + Send + 'static) -> DeltaStream
where
    B: AsRef<[u8]> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    let deltas = super::sse::events(bytes)
        .take_while(|event| std::future::ready(!matches!(event, Ok(e) if e.name == "message_stop")))
        .map(|event| match event {
            // An event without a name is the default kind, `message`.
            Ok(event) => parse_event(if event.name.is_empty() { "message" } else { &event.name }, &event.data),
            Err(err) => Err(ProviderError::Unavailable {
                status: None,
                retry_after: None,
                message: format!("the stream broke: {err}"),
            }),
        });
    Box::pin(deltas)
}

/// One named event as deltas.
pub fn parse_event(name: &str, data: &str) -> Result<Vec<Delta>, ProviderError> {
    if matches!(name, "ping" | "content_block_stop" | "message_stop") || data.trim().is_empty() {
        return Ok(Vec::new());
    }
    let value: Value = serde_json::from_str(data)
        .map_err(|err| ProviderError::Protocol(format!("a stream event is not JSON: {err}")))?;
    let index = value["index"].as_u64().unwrap_or(0) as usize;
    let deltas = match name {
        "message_start" => {
            let usage = &value["message"]["usage"];
            vec![Delta::Usage { input: usage["input_tokens"].as_u64().unwrap_or(0), output: 0 }]
        }
        "content_block_start" => {
            let block = &value["content_block"];
            match block["type"].as_str() {
                Some("tool_use") => vec![Delta::ToolCall {
                    index,
                    id: block["id"].as_str().map(str::to_owned),
                    name: block["name"].as_str().map(str::to_owned),
                    arguments: String::new(),
                }],
                Some("text") => block["text"]
                    .as_str()
                    .filter(|t| !t.is_empty())
                    .map(|t| Delta::Text(t.into()))
                    .into_iter()
                    .collect(),
                _ => Vec::new(),
            }
        }
        "content_block_delta" => {
            let delta = &value["delta"];
            match delta["type"].as_str() {
                Some("text_delta") => vec![Delta::Text(delta["text"].as_str().unwrap_or_default().to_owned())],
                Some("input_json_delta") => vec![Delta::ToolCall {
                    index,
                    id: None,
                    name: None,
                    arguments: delta["partial_json"].as_str().unwrap_or_default().to_owned(),
                }],
                // thinking and its signature are neither shown nor stored
                _ => Vec::new(),
            }
        }
        "message_delta" => {
            let mut out =
                vec![Delta::Usage { input: 0, output: value["usage"]["output_tokens"].as_u64().unwrap_or(0) }];
            if let Some(reason) = value["delta"]["stop_reason"].as_str() {
                out.push(Delta::Finish(reason.to_owned()));
            }
            out
        }
        "error" => {
            let message = value["error"]["message"].as_str().unwrap_or("an error event").to_owned();
            return Err(match value["error"]["type"].as_str() {
                Some("rate_limit_error") => ProviderError::RateLimited { retry_after: None, message },
                _ => ProviderError::Unavailable { status: None, retry_after: None, message },
            });
        }
        _ => Vec::new(),
    };
    Ok(deltas.into_iter().filter(|d| !matches!(d, Delta::Text(t) if t.is_empty())).collect())
}

/// The models the key may use, from `GET {base}/models`.
pub async fn list_models(client: &reqwest::Client, endpoint: &Endpoint) -> Result<Vec<Model>, ProviderError> {
    let listing = fetch_json(authorized(client.get(url(endpoint, "models")), endpoint)).await?;
    let mut models: Vec<Model> = listing["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry["id"].as_str())
        .map(|id| Model {
            model_id: id.to_owned(),
            context_window: DEFAULT_CONTEXT,
            strength: super::catalogue::guess_strength(id).to_owned(),
            tools: true,
            // Every Claude model since the third reads pictures.
            images: true,
        })
        .collect();
    models.sort_by(|a, b| a.model_id.cmp(&b.model_id));
    models.dedup_by(|a, b| a.model_id == b.model_id);
    Ok(models)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{ToolCall, ToolSpec};

    #[test]
    fn tool_results_and_the_next_question_merge_into_one_user_message() {
        let call = ToolCall { id: "call_1".into(), name: "current_time".into(), arguments: "{}".into() };
        let request = ChatRequest {
            model: "m".into(),
            messages: vec![
                ContextMessage::System("Be kind.".into()),
                ContextMessage::User("time?".into()),
                ContextMessage::Assistant { text: "Checking.".into(), tool_calls: vec![call] },
                ContextMessage::Tool { call_id: "call_1".into(), content: "noon".into() },
                ContextMessage::User("thanks".into()),
            ],
            tools: vec![ToolSpec { name: "current_time".into(), description: "d".into(), parameters: json!({}) }],
            cache_key: None,
            max_tokens: None,
            images: false,
        };
        let body = body(&request);
        assert_eq!(body["system"], "Be kind.");
        let messages = body["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "user"], "roles alternate");
        assert_eq!(messages[1]["content"][1]["type"], "tool_use");
        assert_eq!(messages[1]["content"][1]["input"], json!({}));
        assert_eq!(messages[2]["content"][0]["type"], "tool_result");
        assert_eq!(messages[2]["content"][1]["text"], "thanks");
        assert_eq!(body["tools"][0]["input_schema"], json!({}));
    }

    #[test]
    fn events_become_text_tool_fragments_and_usage_and_thinking_is_dropped() {
        let start = r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"current_time","input":{}}}"#;
        assert_eq!(
            parse_event("content_block_start", start).unwrap(),
            [Delta::ToolCall {
                index: 1,
                id: Some("toolu_1".into()),
                name: Some("current_time".into()),
                arguments: String::new()
            }]
        );
        let fragment =
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"tz"}}"#;
        assert_eq!(
            parse_event("content_block_delta", fragment).unwrap(),
            [Delta::ToolCall { index: 1, id: None, name: None, arguments: "{\"tz".into() }]
        );
        let text = r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#;
        assert_eq!(parse_event("content_block_delta", text).unwrap(), [Delta::Text("Hi".into())]);
        let thinking = r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#;
        assert!(parse_event("content_block_delta", thinking).unwrap().is_empty());
        let end = r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}"#;
        assert_eq!(
            parse_event("message_delta", end).unwrap(),
            [Delta::Usage { input: 0, output: 7 }, Delta::Finish("tool_use".into())]
        );
        let overloaded = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(parse_event("error", overloaded).unwrap_err().code(), "provider_unavailable");
    }
}
