//! The Anthropic Messages wire format: reading what a `/v1/messages` request asks for, and
//! writing plans as named SSE events or one `message` object, errors and the model list the
//! way Anthropic does. Pure: never touches a socket or the queue.

use serde_json::{Value, json};

use crate::ModelInfo;
use crate::script::{Call, Delta, Frames, Plan, Request};

/// The signature that closes every scripted thinking block.
const SIGNATURE: &str = "sig";

/// Reads what the answer depends on from a Messages request body. The prompt estimate
/// counts the system prompt and the messages' text blocks.
pub(crate) fn parse(body: &Value) -> Request {
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let last_user = messages.iter().rev().find(|m| m["role"] == "user").map(|m| content_text(&m["content"]));
    let chars: usize = std::iter::once(&body["system"])
        .chain(messages.iter().map(|m| &m["content"]))
        .map(|content| content_text(content).chars().count())
        .sum();
    Request {
        model: body["model"].as_str().unwrap_or_default().to_owned(),
        stream: body["stream"].as_bool().unwrap_or(false),
        include_usage: true,
        last_user: last_user.unwrap_or_default(),
        prompt_estimate: Request::estimate(chars),
    }
}

/// A content's text: the string itself, or its `text` blocks joined.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter(|block| block["type"] == "text").filter_map(|block| block["text"].as_str()).collect()
        }
        _ => String::new(),
    }
}

/// The streamed answer. `message_start` and one `ping` go out at once; each delta is paced,
/// carrying along the `content_block_stop` of the block before it and the
/// `content_block_start` of its own block when it opens one; the last block's stop,
/// `message_delta` and `message_stop` are the tail.
pub(crate) fn stream(plan: &Plan, request: &Request, id: &str) -> Frames {
    let mut message = message(request, id, Vec::new(), Value::Null);
    message["usage"] = json!({"input_tokens": plan.prompt_tokens, "output_tokens": 1});
    let head = vec![
        event("message_start", json!({"type": "message_start", "message": message})),
        event("ping", json!({"type": "ping"})),
    ];
    let mut paced = Vec::new();
    // The open block: its index in the message and what it is.
    let mut open: Option<(usize, Block)> = None;
    for delta in plan.deltas() {
        let block = Block::of(&delta);
        let mut frame = String::new();
        if open.map(|(_, kind)| kind) != Some(block) {
            let index = match open {
                Some((index, kind)) => {
                    frame.push_str(&close(index, kind));
                    index + 1
                }
                None => 0,
            };
            frame.push_str(&event(
                "content_block_start",
                json!({
                    "type": "content_block_start", "index": index, "content_block": start(&delta),
                }),
            ));
            open = Some((index, block));
        }
        let index = open.map_or(0, |(index, _)| index);
        frame.push_str(&event(
            "content_block_delta",
            json!({
                "type": "content_block_delta", "index": index, "delta": delta_json(&delta),
            }),
        ));
        paced.push(frame);
    }
    let mut tail = Vec::new();
    if !plan.hang {
        if let Some((index, kind)) = open {
            tail.push(close(index, kind));
        }
        tail.push(event(
            "message_delta",
            json!({
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason(&plan.finish_reason), "stop_sequence": null},
                "usage": {"output_tokens": plan.completion_tokens},
            }),
        ));
        tail.push(event("message_stop", json!({"type": "message_stop"})));
    }
    Frames { head, paced, tail }
}

/// The whole answer as one `message` object, for requests that do not stream. A tool
/// call's `input` is its arguments parsed, or the raw text when they are not JSON.
pub(crate) fn whole(plan: &Plan, request: &Request, id: &str) -> Value {
    let mut content = Vec::new();
    if let Some(thinking) = plan.full_thinking() {
        content.push(json!({"type": "thinking", "thinking": thinking, "signature": SIGNATURE}));
    }
    if !plan.text.is_empty() {
        content.push(json!({"type": "text", "text": plan.full_text()}));
    }
    content.extend(plan.calls.iter().map(
        |call| json!({"type": "tool_use", "id": call.id("toolu_"), "name": call.name, "input": call.arguments_value()}),
    ));
    let stop = json!(stop_reason(&plan.finish_reason));
    let mut message = message(request, id, content, stop);
    message["usage"] = json!({"input_tokens": plan.prompt_tokens, "output_tokens": plan.completion_tokens});
    message
}

/// An error body; `error.type` follows what Anthropic sends for the status.
pub(crate) fn error(status: u16, message: &str) -> Value {
    let kind = match status {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        500.. => "api_error",
        _ => "invalid_request_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// What a 401 says.
pub(crate) const UNAUTHORIZED: &str = "invalid x-api-key";

/// `GET /v1/models` as Anthropic lists it (one page, everything on it).
pub(crate) fn models(models: &[ModelInfo]) -> Value {
    let data: Vec<Value> = models
        .iter()
        .map(|model| {
            json!({"type": "model", "id": model.id, "display_name": model.id, "created_at": "1970-01-01T00:00:00Z"})
        })
        .collect();
    let (first, last) = (data.first().map(|m| m["id"].clone()), data.last().map(|m| m["id"].clone()));
    json!({"data": data, "has_more": false, "first_id": first, "last_id": last})
}

/// The `message` object's fields, shared by `message_start` and the non-streamed answer.
fn message(request: &Request, id: &str, content: Vec<Value>, stop_reason: Value) -> Value {
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": request.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
    })
}

/// OpenAI's finish reasons in Anthropic's words; anything else is sent as scripted.
fn stop_reason(finish_reason: &str) -> &str {
    match finish_reason {
        "stop" => "end_turn",
        "tool_calls" => "tool_use",
        "length" => "max_tokens",
        other => other,
    }
}

/// What kind of content block a delta belongs to; each call is its own block.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Block {
    Thinking,
    Text,
    Call(usize),
}

impl Block {
    fn of(delta: &Delta<'_>) -> Self {
        match delta {
            Delta::Thinking(_) => Self::Thinking,
            Delta::Text(_) => Self::Text,
            Delta::Call { index, .. } => Self::Call(*index),
        }
    }
}

/// The `content_block` of the `content_block_start` that opens `delta`'s block.
fn start(delta: &Delta<'_>) -> Value {
    match delta {
        Delta::Thinking(_) => json!({"type": "thinking", "thinking": ""}),
        Delta::Text(_) => json!({"type": "text", "text": ""}),
        Delta::Call { start, .. } => tool_use(*start),
    }
}

fn tool_use(call: Option<&Call>) -> Value {
    let (id, name) = call.map(|call| (call.id("toolu_"), call.name.as_str())).unwrap_or_default();
    json!({"type": "tool_use", "id": id, "name": name, "input": {}})
}

/// Ends block `index`; a thinking block first gets its signature.
fn close(index: usize, kind: Block) -> String {
    let mut events = String::new();
    if kind == Block::Thinking {
        events.push_str(&event(
            "content_block_delta",
            json!({
                "type": "content_block_delta", "index": index,
                "delta": {"type": "signature_delta", "signature": SIGNATURE},
            }),
        ));
    }
    events + &event("content_block_stop", json!({"type": "content_block_stop", "index": index}))
}

fn delta_json(delta: &Delta<'_>) -> Value {
    match delta {
        Delta::Thinking(text) => json!({"type": "thinking_delta", "thinking": text}),
        Delta::Text(text) => json!({"type": "text_delta", "text": text}),
        Delta::Call { arguments, .. } => json!({"type": "input_json_delta", "partial_json": arguments}),
    }
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{Reply, ScriptedCall, plan};

    /// Every `(event name, data)` of some frames, in order.
    fn events(frames: &[String]) -> Vec<(String, Value)> {
        frames
            .iter()
            .flat_map(|frame| frame.split("\n\n").filter(|event| !event.is_empty()))
            .map(|event| {
                let (name, data) = event.split_once('\n').unwrap();
                let name = name.strip_prefix("event: ").unwrap().to_owned();
                (name, serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap())
            })
            .collect()
    }

    #[test]
    fn parse_takes_the_text_blocks_of_the_last_user_message() {
        let body = json!({
            "model": "claude", "stream": true, "system": "be brief",
            "messages": [
                {"role": "user", "content": "first"},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t", "content": "ignored"},
                    {"type": "text", "text": "sec"}, {"type": "text", "text": "ond"},
                ]},
            ],
        });
        let request = parse(&body);
        assert_eq!((request.model.as_str(), request.stream, request.last_user.as_str()), ("claude", true, "second"));
        assert_eq!(request.prompt_estimate, 5);
        assert!(!parse(&json!({})).stream);
    }

    #[test]
    fn blocks_open_and_close_around_their_deltas() {
        let call = ScriptedCall { split: 2, ..ScriptedCall::new("f", json!({"a": 1})) };
        let plan = plan(Reply { thinking: Some("hm".into()), tool_calls: vec![call], ..Reply::text("a b") });
        let frames = stream(&plan, &parse(&json!({"model": "m"})), "msg_1");
        let names: Vec<String> = events(&frames.head).into_iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["message_start", "ping"]);
        assert_eq!(frames.paced.len(), 5);
        let all: Vec<(String, Value)> = events(&[frames.paced.clone(), frames.tail.clone()].concat());
        let kinds: Vec<String> = all
            .iter()
            .map(|(name, data)| match name.as_str() {
                "content_block_start" => format!("start {} {}", data["index"], data["content_block"]["type"]),
                "content_block_delta" => format!("delta {} {}", data["index"], data["delta"]["type"]),
                "content_block_stop" => format!("stop {}", data["index"]),
                other => other.to_owned(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "start 0 \"thinking\"",
                "delta 0 \"thinking_delta\"",
                "delta 0 \"signature_delta\"",
                "stop 0",
                "start 1 \"text\"",
                "delta 1 \"text_delta\"",
                "delta 1 \"text_delta\"",
                "stop 1",
                "start 2 \"tool_use\"",
                "delta 2 \"input_json_delta\"",
                "delta 2 \"input_json_delta\"",
                "stop 2",
                "message_delta",
                "message_stop",
            ]
        );
        let finish = &all[all.len() - 2].1;
        assert_eq!(finish["delta"]["stop_reason"], "tool_use");
        assert_eq!(finish["usage"]["output_tokens"], 5);
    }

    #[test]
    fn a_hanging_answer_leaves_its_block_open() {
        let frames = stream(&plan(Reply { hang: true, ..Reply::text("a") }), &parse(&json!({})), "msg_1");
        assert_eq!(frames.paced.len(), 1);
        assert!(frames.tail.is_empty());
    }

    #[test]
    fn a_whole_message_carries_parsed_input_and_the_mapped_stop_reason() {
        let calls = [ScriptedCall::new("f", json!({"a": 1})), ScriptedCall::new("g", json!("{oops"))];
        let reply = Reply { finish_reason: Some("length".into()), ..Reply::tool_calls(calls) };
        let message = whole(&plan(reply), &parse(&json!({"model": "m"})), "msg_1");
        assert_eq!(message["content"][0]["input"], json!({"a": 1}));
        assert_eq!(message["content"][1]["input"], json!("{oops"));
        assert!(message["content"][0]["id"].as_str().unwrap().starts_with("toolu_"));
        assert_eq!(message["stop_reason"], "max_tokens");
        assert_eq!(message["usage"], json!({"input_tokens": 3, "output_tokens": 2}));
    }
}
