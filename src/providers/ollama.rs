//! Ollama's native API: `POST {base}/api/chat`, streamed as one JSON object per line.
//! Tool calls arrive whole, with arguments as a JSON object and no id; results go back as
//! `tool` messages naming the tool. Models come from `/api/tags`, with their context
//! length and tool support from `/api/show`.

use futures_util::{Stream, StreamExt, TryStreamExt};
use serde_json::{Value, json};
use tokio_util::bytes::Buf;
use tokio_util::codec::{FramedRead, LinesCodec};
use tokio_util::io::StreamReader;

use super::{
    ChatRequest, ContextMessage, Delta, DeltaStream, Endpoint, ProviderError, arguments_object, bearer, fetch_json,
    function_tools, send_json, url,
};
use crate::store::providers::Model;

/// The longest line Skald reads: far beyond any one streamed piece.
const MAX_LINE: usize = 1024 * 1024;
const DEFAULT_CONTEXT: i64 = 4096;

/// The request body, exactly as sent.
pub fn body(request: &ChatRequest) -> Value {
    let mut names = std::collections::HashMap::new();
    let mut messages: Vec<Value> = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        let value = match message {
            // A picture goes in the `images` of the person's message it follows.
            ContextMessage::Picture(picture) => {
                let follows = messages.last_mut().filter(|last| last["role"] == "user");
                match (picture.sent(request.images), follows) {
                    (Some(data), Some(last)) => {
                        if !last["images"].is_array() {
                            last["images"] = json!([]);
                        }
                        last["images"].as_array_mut().expect("made an array").push(json!(data));
                    }
                    (Some(data), None) => messages.push(json!({ "role": "user", "content": "", "images": [data] })),
                    (None, _) => messages.push(json!({ "role": "user", "content": picture.stand_in(request.images) })),
                }
                continue;
            }
            ContextMessage::System(text) => json!({ "role": "system", "content": text }),
            ContextMessage::User(text) => json!({ "role": "user", "content": text }),
            ContextMessage::Assistant { text, tool_calls } => {
                let mut value = json!({ "role": "assistant", "content": text });
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            names.insert(c.id.as_str(), c.name.as_str());
                            json!({ "function": { "name": c.name, "arguments": arguments_object(&c.arguments) } })
                        })
                        .collect();
                    value["tool_calls"] = Value::Array(calls);
                }
                value
            }
            ContextMessage::Tool { call_id, content } => {
                json!({ "role": "tool", "content": content, "tool_name": names.get(call_id.as_str()).copied().unwrap_or("") })
            }
        };
        messages.push(value);
    }
    let mut body = json!({ "model": request.model, "messages": messages, "stream": true });
    if let Some(max) = request.max_tokens {
        body["options"] = json!({ "num_predict": max });
    }
    if !request.tools.is_empty() {
        body["tools"] = function_tools(&request.tools);
    }
    body
}

/// Sends the request; on success, the reply's stream of deltas.
pub async fn start(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    request: &ChatRequest,
) -> Result<DeltaStream, ProviderError> {
    let response = send_json(bearer(client.post(url(endpoint, "api/chat")), endpoint), &body(request)).await?;
    Ok(deltas(response.bytes_stream().map_err(std::io::Error::other)))
}

/// The reply's bytes, in whatever pieces the network delivers them, as deltas: one item
/// per line.
pub(crate) fn deltas<B: Buf + Send + 'static>(
    bytes: impl Stream<Item = std::io::Result<B>> + Send + 'static,
) -> DeltaStream {
    let lines = FramedRead::new(StreamReader::new(bytes), LinesCodec::new_with_max_length(MAX_LINE));
    // Ollama gives calls no index; they are numbered in the order they arrive.
    let mut calls = 0;
    let deltas = lines.map(move |line| match line {
        Ok(line) => parse_line(&line, &mut calls),
        Err(err) => Err(ProviderError::Unavailable {
            status: None,
            retry_after: None,
            message: format!("the stream broke: {err}"),
        }),
    });
    Box::pin(deltas)
}

/// One line as deltas; `calls` counts the tool calls seen so far.
pub fn parse_line(line: &str, calls: &mut usize) -> Result<Vec<Delta>, ProviderError> {
    if line.trim().is_empty() {
        return Ok(Vec::new());
    }
    let value: Value = serde_json::from_str(line)
        .map_err(|err| ProviderError::Protocol(format!("a stream line is not JSON: {err}")))?;
    if let Some(error) = value["error"].as_str() {
        return Err(ProviderError::Unavailable { status: None, retry_after: None, message: error.to_owned() });
    }
    let mut deltas = Vec::new();
    if let Some(text) = value["message"]["content"].as_str().filter(|t| !t.is_empty()) {
        deltas.push(Delta::Text(text.to_owned()));
    }
    for call in value["message"]["tool_calls"].as_array().into_iter().flatten() {
        let function = &call["function"];
        let arguments = match &function["arguments"] {
            Value::String(text) => text.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        deltas.push(Delta::ToolCall {
            index: *calls,
            id: call["id"].as_str().map(str::to_owned),
            name: function["name"].as_str().map(str::to_owned),
            arguments,
        });
        *calls += 1;
    }
    if value["done"].as_bool() == Some(true) {
        let count = |key: &str| value[key].as_u64().unwrap_or(0);
        deltas.push(Delta::Usage { input: count("prompt_eval_count"), output: count("eval_count") });
        deltas.push(Delta::Finish(value["done_reason"].as_str().unwrap_or("stop").to_owned()));
    }
    Ok(deltas)
}

/// The models Ollama has pulled, each with what `/api/show` says of it.
pub async fn list_models(client: &reqwest::Client, endpoint: &Endpoint) -> Result<Vec<Model>, ProviderError> {
    let tags = fetch_json(bearer(client.get(url(endpoint, "api/tags")), endpoint)).await?;
    let mut models = Vec::new();
    for name in tags["models"].as_array().into_iter().flatten().filter_map(|m| m["name"].as_str()) {
        let show = bearer(client.post(url(endpoint, "api/show")), endpoint).json(&json!({ "model": name }));
        // A model whose details cannot be read is still listed, with defaults.
        let shown = fetch_json(show).await.unwrap_or(Value::Null);
        models.push(model_from_show(name, &shown));
    }
    models.sort_by(|a, b| a.model_id.cmp(&b.model_id));
    models.dedup_by(|a, b| a.model_id == b.model_id);
    Ok(models)
}

/// A model's context length hides under `<architecture>.context_length`.
fn model_from_show(name: &str, shown: &Value) -> Model {
    let info = &shown["model_info"];
    let context = info["general.architecture"]
        .as_str()
        .and_then(|arch| info[format!("{arch}.context_length")].as_i64())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_CONTEXT);
    let capable =
        |what: &str| shown["capabilities"].as_array().map(|caps| caps.iter().any(|c| c.as_str() == Some(what)));
    Model {
        model_id: name.to_owned(),
        context_window: context,
        strength: super::catalogue::guess_strength(name).to_owned(),
        tools: capable("tools").unwrap_or(true),
        images: capable("vision").unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{Picture, ToolCall};

    #[test]
    fn pictures_go_in_the_images_of_the_message_they_follow() {
        let request = ChatRequest {
            model: "m".into(),
            messages: vec![
                ContextMessage::User("Both?".into()),
                ContextMessage::Picture(Picture::of("image/png", Some("AAA"))),
                ContextMessage::Picture(Picture::of("image/jpeg", Some("BBB"))),
            ],
            tools: Vec::new(),
            cache_key: None,
            max_tokens: None,
            images: true,
        };
        let sent = body(&request)["messages"].clone();
        assert_eq!(sent, json!([{ "role": "user", "content": "Both?", "images": ["AAA", "BBB"] }]));
        let request = ChatRequest { images: false, ..request };
        let sent = body(&request)["messages"].clone();
        assert_eq!(sent.as_array().unwrap().len(), 3, "{sent}");
        assert!(sent[0].get("images").is_none() && !sent.to_string().contains("AAA"), "{sent}");
    }

    #[test]
    fn lines_become_text_numbered_whole_calls_and_a_final_usage() {
        let mut calls = 0;
        let text = r#"{"model":"m","message":{"role":"assistant","content":"Hi"},"done":false}"#;
        assert_eq!(parse_line(text, &mut calls).unwrap(), [Delta::Text("Hi".into())]);
        let call = r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"current_time","arguments":{"timezone":"Europe/Paris"}}}]},"done":false}"#;
        let parsed = parse_line(call, &mut calls).unwrap();
        assert_eq!(
            parsed,
            [Delta::ToolCall {
                index: 0,
                id: None,
                name: Some("current_time".into()),
                arguments: r#"{"timezone":"Europe/Paris"}"#.into()
            }]
        );
        assert!(matches!(parse_line(call, &mut calls).unwrap()[0], Delta::ToolCall { index: 1, .. }));
        let done = r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":12,"eval_count":3}"#;
        assert_eq!(
            parse_line(done, &mut calls).unwrap(),
            [Delta::Usage { input: 12, output: 3 }, Delta::Finish("stop".into())]
        );
        assert_eq!(
            parse_line(r#"{"error":"model not found"}"#, &mut calls).unwrap_err().code(),
            "provider_unavailable"
        );
    }

    #[test]
    fn tool_results_go_back_naming_their_tool_and_arguments_as_objects() {
        let call =
            ToolCall { id: "call_1".into(), name: "current_time".into(), arguments: r#"{"timezone":"UTC"}"#.into() };
        let request = ChatRequest {
            model: "m".into(),
            messages: vec![
                ContextMessage::Assistant { text: String::new(), tool_calls: vec![call] },
                ContextMessage::Tool { call_id: "call_1".into(), content: "noon".into() },
            ],
            tools: Vec::new(),
            cache_key: None,
            max_tokens: None,
            images: false,
        };
        let body = body(&request);
        assert_eq!(body["messages"][0]["tool_calls"][0]["function"]["arguments"], json!({ "timezone": "UTC" }));
        assert_eq!(body["messages"][1]["tool_name"], "current_time");
        assert!(body.get("tools").is_none());
    }

    #[test]
    fn the_context_length_is_read_under_the_architecture() {
        let shown = json!({ "model_info": { "general.architecture": "qwen2", "qwen2.context_length": 32768 }, "capabilities": ["completion"] });
        let model = model_from_show("qwen2.5:7b", &shown);
        assert_eq!((model.context_window, model.tools), (32768, false));
    }
}
