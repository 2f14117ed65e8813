//! OpenAI-compatible chat completions: OpenAI, OpenRouter, LM Studio, llama.cpp's server,
//! vLLM and Ollama's `/v1` all speak it. Requests stream as server-sent events, read by
//! [`super::sse`]; tool calls arrive as fragments keyed by index.

use futures_util::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    ChatRequest, ContextMessage, Delta, DeltaStream, Endpoint, ProviderError, bearer, fetch_json, function_tools,
    send_json, url,
};
use crate::store::providers::Model;

/// The request body, exactly as sent.
pub fn body(request: &ChatRequest) -> Value {
    let mut messages: Vec<Value> = Vec::with_capacity(request.messages.len());
    for each in &request.messages {
        match each {
            ContextMessage::Picture(picture) => add_picture(&mut messages, picture, request.images),
            other => messages.push(message(other)),
        }
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    if !request.tools.is_empty() {
        body["tools"] = function_tools(&request.tools);
    }
    if let Some(key) = &request.cache_key {
        body["prompt_cache_key"] = json!(key);
    }
    if let Some(max) = request.max_tokens {
        // The name every OpenAI-compatible server knows (OpenAI's own takes it too).
        body["max_tokens"] = json!(max);
    }
    body
}

/// A picture as a part of the person's message it follows (its text becomes the first
/// part): an `image_url` with the bytes as a data URL. The sentence standing in for one not
/// sent is added to the message's text, which stays a string for servers (and chat
/// templates) that read only strings.
fn add_picture(messages: &mut Vec<Value>, picture: &super::Picture, images: bool) {
    let Some(data) = picture.sent(images) else {
        let stand_in = picture.stand_in(images);
        match messages.last_mut() {
            Some(last) if last["role"] == "user" && last["content"].is_string() => {
                let text = format!("{}\n\n{stand_in}", last["content"].as_str().unwrap_or_default());
                last["content"] = json!(text);
            }
            Some(last) if last["role"] == "user" && last["content"].is_array() => {
                if let Some(parts) = last["content"].as_array_mut() {
                    parts.push(json!({ "type": "text", "text": stand_in }));
                }
            }
            _ => messages.push(json!({ "role": "user", "content": stand_in })),
        }
        return;
    };
    let part =
        json!({ "type": "image_url", "image_url": { "url": format!("data:{};base64,{data}", picture.media_type) } });
    match messages.last_mut() {
        Some(last) if last["role"] == "user" => {
            if let Value::String(text) = &last["content"] {
                last["content"] = json!([{ "type": "text", "text": text }]);
            }
            if let Some(parts) = last["content"].as_array_mut() {
                parts.push(part);
            }
        }
        _ => messages.push(json!({ "role": "user", "content": [part] })),
    }
}

fn message(message: &ContextMessage) -> Value {
    match message {
        ContextMessage::System(text) => json!({ "role": "system", "content": text }),
        ContextMessage::User(text) => json!({ "role": "user", "content": text }),
        ContextMessage::Assistant { text, tool_calls } if tool_calls.is_empty() => {
            json!({ "role": "assistant", "content": text })
        }
        ContextMessage::Assistant { text, tool_calls } => {
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } }))
                .collect();
            // A string even when empty: llama-cpp-python's server refuses `null` here (a
            // validation error, as HTTP 500), and chat templates that join contents choke
            // on it; OpenAI takes either.
            json!({ "role": "assistant", "content": text, "tool_calls": calls })
        }
        ContextMessage::Tool { call_id, content } => {
            json!({ "role": "tool", "tool_call_id": call_id, "content": content })
        }
        ContextMessage::Picture(picture) => json!({ "role": "user", "content": picture.stand_in(false) }),
    }
}

/// Asks `endpoint` for one picture of `prompt` from `model` (`POST {base}/images/generations`),
/// `size` as `WIDTHxHEIGHT`: the picture's bytes, sent back as base64 (`b64_json`). A reply
/// that holds only an address is refused: fetching it would reach a host nobody asked for.
pub async fn generate_image(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    model: &str,
    prompt: &str,
    size: &str,
) -> Result<Vec<u8>, ProviderError> {
    use base64::Engine;
    let body = json!({ "model": model, "prompt": prompt, "n": 1, "size": size, "response_format": "b64_json" });
    let response = send_json(bearer(client.post(url(endpoint, "images/generations")), endpoint), &body).await?;
    let answer: Value = response
        .json()
        .await
        .map_err(|err| ProviderError::Protocol(format!("the picture's answer is not JSON: {err}")))?;
    let Some(encoded) = answer["data"][0]["b64_json"].as_str() else {
        let why = if answer["data"][0]["url"].is_string() {
            "it sent an address to fetch the picture from rather than the picture"
        } else {
            "it sent no picture"
        };
        return Err(ProviderError::Protocol(why.to_owned()));
    };
    base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|err| ProviderError::Protocol(format!("the picture is not valid base64: {err}")))
}

/// Sends the request; on success, the reply's stream of deltas.
pub async fn start(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    request: &ChatRequest,
) -> Result<DeltaStream, ProviderError> {
    let response = send_json(bearer(client.post(url(endpoint, "chat/completions")), endpoint), &body(request)).await?;
    Ok(deltas(response.bytes_stream()))
}

/// The reply's bytes, in whatever pieces the network delivers them, as deltas: one item
/// per server-sent event, up to `[DONE]`.
pub(crate) fn deltas<B, E>(bytes: impl Stream<Item = Result<B, E>> + Send + 'static) -> DeltaStream
where
    B: AsRef<[u8]> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    // `None` marks the end of the bytes; `finished` whether a choice said how it ended.
    let deltas =
        super::sse::events(bytes).map(Some).chain(futures_util::stream::iter([None])).scan(false, |finished, event| {
            let item = match event {
                Some(Ok(event)) if event.data.trim() == "[DONE]" => None,
                Some(Ok(event)) if event.data.trim().is_empty() => Some(Ok(Vec::new())),
                Some(Ok(event)) => {
                    let deltas = parse_chunk(&event.data);
                    *finished |= deltas.as_ref().is_ok_and(|d| d.iter().any(|d| matches!(d, Delta::Finish(_))));
                    Some(deltas)
                }
                Some(Err(err)) => Some(Err(ProviderError::Unavailable {
                    status: None,
                    retry_after: None,
                    message: format!("the stream broke: {err}"),
                })),
                None if *finished => None,
                None => Some(Err(ProviderError::Protocol(UNFINISHED.to_owned()))),
            };
            std::future::ready(item)
        });
    Box::pin(deltas)
}

/// A stream that ends with neither a finish reason nor `[DONE]`: llama-cpp-python's server
/// ends so when it fails after answering 200, its error only in its own log.
const UNFINISHED: &str = "the stream ended before the reply was finished, with no finish reason and no [DONE]; \
                          the service may have failed to make it, as when a conversation is longer than its context";

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<Usage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: ChoiceDelta,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct ChoiceDelta {
    content: Option<String>,
    /// `null` on every delta but a call's from some servers (llama-cpp-python).
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    index: Option<usize>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

/// One event's JSON as deltas.
pub fn parse_chunk(data: &str) -> Result<Vec<Delta>, ProviderError> {
    let chunk: Chunk = serde_json::from_str(data)
        .map_err(|err| ProviderError::Protocol(format!("a stream event is not a chat completion chunk: {err}")))?;
    if let Some(error) = chunk.error {
        let message = error["message"].as_str().map_or_else(|| error.to_string(), str::to_owned);
        return Err(ProviderError::Unavailable { status: None, retry_after: None, message });
    }
    let mut deltas = Vec::new();
    for choice in chunk.choices {
        if let Some(text) = choice.delta.content.filter(|t| !t.is_empty()) {
            deltas.push(Delta::Text(text));
        }
        for (position, call) in choice.delta.tool_calls.into_iter().flatten().enumerate() {
            let function = call.function.unwrap_or(FunctionDelta { name: None, arguments: None });
            deltas.push(Delta::ToolCall {
                index: call.index.unwrap_or(position),
                id: call.id,
                name: function.name,
                arguments: function.arguments.unwrap_or_default(),
            });
        }
        if let Some(reason) = choice.finish_reason {
            deltas.push(Delta::Finish(reason));
        }
    }
    if let Some(usage) = chunk.usage {
        deltas.push(Delta::Usage {
            input: usage.prompt_tokens.unwrap_or(0),
            output: usage.completion_tokens.unwrap_or(0),
        });
    }
    Ok(deltas)
}

/// The models a provider lists at `GET /models`, with what each says of itself.
pub async fn list_models(client: &reqwest::Client, endpoint: &Endpoint) -> Result<Vec<Model>, ProviderError> {
    let listing = fetch_json(bearer(client.get(url(endpoint, "models")), endpoint)).await?;
    Ok(models_in(&listing))
}

/// The context window a provider states goes by several names; 8192 when none is given.
const DEFAULT_CONTEXT: i64 = 8192;

fn models_in(listing: &Value) -> Vec<Model> {
    let entries = listing["data"].as_array().or_else(|| listing["models"].as_array()).cloned().unwrap_or_default();
    let mut models: Vec<Model> = entries
        .iter()
        .filter_map(|entry| {
            let id = entry["id"].as_str()?.to_owned();
            let context = [
                &entry["context_length"],
                &entry["context_window"],
                &entry["max_context_length"],
                &entry["meta"]["n_ctx_train"],
                &entry["top_provider"]["context_length"],
            ]
            .into_iter()
            .find_map(Value::as_i64)
            .filter(|n| *n > 0)
            .unwrap_or(DEFAULT_CONTEXT);
            let tools = entry["supported_parameters"]
                .as_array()
                .is_none_or(|params| params.iter().any(|p| p.as_str() == Some("tools")));
            // OpenRouter-style listings say what a model takes in; others do not, and an
            // administrator marks the models that read pictures.
            let images = entry["architecture"]["input_modalities"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k.as_str() == Some("image")));
            let strength = super::catalogue::guess_strength(&id).to_owned();
            Some(Model { model_id: id, context_window: context, strength, tools, images })
        })
        .collect();
    models.sort_by(|a, b| a.model_id.cmp(&b.model_id));
    models.dedup_by(|a, b| a.model_id == b.model_id);
    models
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{Picture, ToolCall};

    fn with_picture(images: bool, data: Option<&str>) -> Value {
        let request = ChatRequest {
            model: "m".into(),
            messages: vec![
                ContextMessage::User("What is this?".into()),
                ContextMessage::Picture(Picture::of("image/png", data)),
            ],
            tools: Vec::new(),
            cache_key: None,
            max_tokens: None,
            images,
        };
        body(&request)["messages"].clone()
    }

    #[test]
    fn a_picture_joins_the_message_it_follows_as_an_image_part_or_a_sentence() {
        let sent = with_picture(true, Some("iVBOR"));
        assert_eq!(sent.as_array().unwrap().len(), 1, "one user message: {sent}");
        assert_eq!(
            sent[0]["content"],
            json!([
                { "type": "text", "text": "What is this?" },
                { "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBOR" } }
            ])
        );
        // Not sent, the picture is a sentence in the message's text, which stays a string.
        let unread = with_picture(false, Some("iVBOR"));
        assert_eq!(
            unread[0]["content"],
            "What is this?\n\n[a picture was attached here; this model does not read pictures]"
        );
        let gone = with_picture(true, None);
        assert!(gone[0]["content"].as_str().unwrap().ends_with("it has since been deleted]"), "{gone}");
    }

    #[test]
    fn text_tool_fragments_finish_and_usage_are_read_from_chunks() {
        let text = r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}"#;
        assert_eq!(parse_chunk(text).unwrap(), [Delta::Text("Hi".into())]);
        let call = r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c1","type":"function","function":{"name":"current_time","arguments":"{\"a"}}]}}]}"#;
        assert_eq!(
            parse_chunk(call).unwrap(),
            [Delta::ToolCall {
                index: 1,
                id: Some("c1".into()),
                name: Some("current_time".into()),
                arguments: "{\"a".into()
            }]
        );
        let end = r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":2}}"#;
        assert_eq!(
            parse_chunk(end).unwrap(),
            [Delta::Finish("tool_calls".into()), Delta::Usage { input: 9, output: 2 }]
        );
    }

    /// The deltas of a byte stream, read to its end.
    fn read(bytes: &'static [u8]) -> Vec<Result<Vec<Delta>, ProviderError>> {
        let pieces = bytes.chunks(7).map(Ok::<_, std::convert::Infallible>);
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(deltas(futures_util::stream::iter(pieces)).collect())
    }

    /// What llama-cpp-python 0.3.36's server streams for a call it was asked for by name,
    /// byte for byte: `"tool_calls": null` on the deltas without one.
    #[test]
    fn a_real_servers_call_with_null_tool_calls_around_it_reads_as_its_fragments() {
        let items = read(include_bytes!("captured/llama-cpp-python-forced-call.sse"));
        let deltas: Vec<Delta> = items.into_iter().flat_map(Result::unwrap).collect();
        let fragments: Vec<(Option<&str>, &str)> = deltas
            .iter()
            .filter_map(|d| match d {
                Delta::ToolCall { index: 0, name, arguments, .. } => Some((name.as_deref(), arguments.as_str())),
                _ => None,
            })
            .collect();
        let name = Some("current_time");
        assert_eq!(fragments, [(name, "{"), (name, " "), (name, "}"), (name, "")]);
        assert_eq!(deltas.last(), Some(&Delta::Finish("tool_calls".into())));
    }

    /// Over its context, llama-cpp-python's server answers 200 and closes the stream with
    /// no event at all; a stream cut off without a finish reason or `[DONE]` is no reply.
    #[test]
    fn a_stream_that_ends_unfinished_is_an_error_and_one_that_finished_is_not() {
        for unfinished in [&b""[..], b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n"] {
            let items = read(unfinished);
            let last = items.last().unwrap().as_ref().unwrap_err();
            assert_eq!(last.code(), "provider_protocol", "{last}");
            assert!(last.to_string().contains("longer than its context"), "{last}");
        }
        let finished = b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
        assert!(read(finished).into_iter().all(|item| item.is_ok()), "a finish reason without [DONE] ends it");
        let done = b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n";
        assert_eq!(read(done).into_iter().map(Result::unwrap).collect::<Vec<_>>(), [vec![Delta::Text("Hi".into())]]);
    }

    #[test]
    fn an_error_event_or_garbage_in_the_stream_is_an_error() {
        assert_eq!(parse_chunk(r#"{"error":{"message":"overloaded"}}"#).unwrap_err().code(), "provider_unavailable");
        assert_eq!(parse_chunk("not json").unwrap_err().code(), "provider_protocol");
    }

    #[test]
    fn an_assistant_turn_with_calls_goes_out_with_empty_content_and_its_calls() {
        let calls = vec![ToolCall { id: "call_1".into(), name: "current_time".into(), arguments: "{}".into() }];
        let value = message(&ContextMessage::Assistant { text: String::new(), tool_calls: calls });
        assert_eq!(value["content"], "", "a string, never null");
        assert_eq!(value["tool_calls"][0]["function"]["name"], "current_time");
        assert_eq!(value["tool_calls"][0]["id"], "call_1");
    }

    #[test]
    fn listed_models_carry_their_stated_context_and_tool_support() {
        let listing = json!({"data": [
            {"id": "b-model", "context_length": 32768, "supported_parameters": ["temperature"]},
            {"id": "a-model", "meta": {"n_ctx_train": 4096}},
            {"id": "a-model"},
        ]});
        let models = models_in(&listing);
        assert_eq!(models.len(), 2, "duplicates are dropped");
        assert_eq!((models[0].model_id.as_str(), models[0].context_window, models[0].tools), ("a-model", 4096, true));
        assert_eq!((models[1].context_window, models[1].tools), (32768, false));
    }
}
