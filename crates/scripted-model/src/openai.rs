//! The OpenAI chat-completions wire format: reading what a request asks for, and writing
//! plans as SSE chunks or one `chat.completion` object, errors and the model list exactly
//! the way OpenAI does. Pure: never touches a socket or the queue.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::ModelInfo;
use crate::script::{Delta, Frames, Plan, Request};

/// Reads what the answer depends on from a chat-completions request body.
pub(crate) fn parse(body: &Value) -> Request {
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let last_user = messages.iter().rev().find(|m| m["role"] == "user").map(|m| content_text(&m["content"]));
    let chars: usize = messages.iter().map(|m| content_text(&m["content"]).chars().count()).sum();
    Request {
        model: body["model"].as_str().unwrap_or_default().to_owned(),
        stream: body["stream"].as_bool().unwrap_or(false),
        include_usage: body["stream_options"]["include_usage"].as_bool().unwrap_or(false),
        last_user: last_user.unwrap_or_default(),
        prompt_estimate: Request::estimate(chars),
    }
}

/// A message's text: the string itself, or the text parts of a multi-part content.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|part| part["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// The streamed answer: the first chunk's delta carries the role, the last delta's chunk
/// the finish reason; then the usage chunk when asked for, then `[DONE]`. Reasoning goes
/// out as `reasoning_content` deltas.
pub(crate) fn stream(plan: &Plan, request: &Request, id: &str) -> Frames {
    let chunk = Chunk { id, created: now(), model: &request.model };
    let deltas: Vec<Delta<'_>> = plan.deltas().collect();
    let finish = (!plan.hang).then_some(plan.finish_reason.as_str());
    let mut paced: Vec<String> = deltas
        .iter()
        .enumerate()
        .map(|(i, delta)| {
            let mut body = delta_json(delta);
            if i == 0 {
                body["role"] = json!("assistant");
            }
            chunk.event(body, if i + 1 == deltas.len() { finish } else { None })
        })
        .collect();
    if deltas.is_empty() && !plan.hang {
        paced.push(chunk.event(json!({"role": "assistant", "content": ""}), finish));
    }
    let mut tail = Vec::new();
    if !plan.hang {
        if request.include_usage {
            tail.push(sse(&chunk.usage(plan)));
        }
        tail.push("data: [DONE]\n\n".to_owned());
    }
    Frames { head: Vec::new(), paced, tail }
}

/// The whole answer as one `chat.completion` object, for `"stream": false`.
pub(crate) fn completion(plan: &Plan, request: &Request, id: &str) -> Value {
    let text = plan.full_text();
    let mut message = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
    if let Some(thinking) = plan.full_thinking() {
        message["reasoning_content"] = json!(thinking);
    }
    if !plan.calls.is_empty() {
        let calls = plan.calls.iter().map(|call| {
            let function = json!({"name": call.name, "arguments": call.arguments});
            json!({"id": call.id("call_"), "type": "function", "function": function})
        });
        message["tool_calls"] = calls.collect();
    }
    json!({
        "id": id,
        "object": "chat.completion",
        "created": now(),
        "model": request.model,
        "choices": [{"index": 0, "message": message, "finish_reason": plan.finish_reason}],
        "usage": usage(plan),
    })
}

/// An error body; `type` and `code` follow what OpenAI sends for the status.
pub(crate) fn error(status: u16, message: &str) -> Value {
    let (kind, code) = match status {
        401 => ("invalid_request_error", Some("invalid_api_key")),
        404 => ("invalid_request_error", Some("model_not_found")),
        429 => ("requests", Some("rate_limit_exceeded")),
        500.. => ("server_error", None),
        _ => ("invalid_request_error", None),
    };
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

pub(crate) fn models(models: &[ModelInfo]) -> Value {
    let data = models.iter().map(|model| {
        json!({
            "id": model.id,
            "object": "model",
            "created": 0,
            "owned_by": "scripted",
            "context_length": model.context_length,
        })
    });
    json!({"object": "list", "data": data.collect::<Vec<_>>()})
}

/// The fields every chunk of one streamed answer shares.
struct Chunk<'a> {
    id: &'a str,
    created: u64,
    model: &'a str,
}

impl Chunk<'_> {
    fn event(&self, delta: Value, finish_reason: Option<&str>) -> String {
        sse(&json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }))
    }

    fn usage(&self, plan: &Plan) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": usage(plan),
        })
    }
}

fn delta_json(delta: &Delta<'_>) -> Value {
    match delta {
        Delta::Thinking(text) => json!({"reasoning_content": text}),
        Delta::Text(text) => json!({"content": text}),
        Delta::Call { index, start: Some(call), arguments } => json!({"tool_calls": [{
            "index": index,
            "id": call.id("call_"),
            "type": "function",
            "function": {"name": call.name, "arguments": arguments},
        }]}),
        Delta::Call { index, start: None, arguments } => {
            json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]})
        }
    }
}

fn usage(plan: &Plan) -> Value {
    json!({
        "prompt_tokens": plan.prompt_tokens,
        "completion_tokens": plan.completion_tokens,
        "total_tokens": u64::from(plan.prompt_tokens) + u64::from(plan.completion_tokens),
    })
}

fn sse(data: &Value) -> String {
    format!("data: {data}\n\n")
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{Reply, ScriptedCall, plan};

    fn data(frame: &str) -> Value {
        serde_json::from_str(frame.strip_prefix("data: ").unwrap().trim_end()).unwrap()
    }

    #[test]
    fn parse_reads_the_last_user_message_and_estimates_the_prompt() {
        let body = json!({
            "model": "m", "stream": true, "stream_options": {"include_usage": true},
            "messages": [
                {"role": "user", "content": "first"},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": [{"type": "text", "text": "second"}]},
            ],
        });
        let request = parse(&body);
        assert_eq!(
            request,
            Request {
                model: "m".into(),
                stream: true,
                include_usage: true,
                last_user: "second".into(),
                prompt_estimate: 4
            }
        );
    }

    #[test]
    fn the_role_rides_on_the_first_delta_and_the_finish_on_the_last() {
        let request = parse(&json!({"model": "m", "stream": true}));
        let frames = stream(&plan(Reply::text("a b")), &request, "chatcmpl-1");
        let first = data(&frames.paced[0]);
        assert_eq!(first["choices"][0]["delta"], json!({"role": "assistant", "content": "a"}));
        assert_eq!(first["choices"][0]["finish_reason"], Value::Null);
        assert_eq!(data(&frames.paced[1])["choices"][0]["finish_reason"], "stop");
        assert_eq!(frames.tail, ["data: [DONE]\n\n"]);
    }

    #[test]
    fn a_hanging_answer_never_finishes() {
        let request = parse(&json!({"stream": true}));
        let frames = stream(&plan(Reply { hang: true, ..Reply::text("a") }), &request, "chatcmpl-1");
        assert_eq!(data(&frames.paced[0])["choices"][0]["finish_reason"], Value::Null);
        assert!(frames.tail.is_empty());
    }

    #[test]
    fn thinking_goes_out_as_reasoning_content() {
        let plan = plan(Reply { thinking: Some("hm".into()), ..Reply::text("ok") });
        let frames = stream(&plan, &parse(&json!({"stream": true})), "chatcmpl-1");
        let first = data(&frames.paced[0]);
        assert_eq!(first["choices"][0]["delta"], json!({"role": "assistant", "reasoning_content": "hm"}));
        let whole = completion(&plan, &parse(&json!({})), "chatcmpl-1");
        assert_eq!(whole["choices"][0]["message"]["reasoning_content"], "hm");
    }

    #[test]
    fn a_non_streamed_completion_carries_the_whole_call() {
        let call = ScriptedCall { split: 3, ..ScriptedCall::new("f", json!({"a": 1})) };
        let value = completion(&plan(Reply::tool_calls([call])), &parse(&json!({})), "chatcmpl-1");
        let message = &value["choices"][0]["message"];
        assert_eq!(message["content"], Value::Null);
        assert_eq!(message["tool_calls"][0]["function"]["arguments"], r#"{"a":1}"#);
        assert_eq!(value["usage"], json!({"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}));
    }
}
