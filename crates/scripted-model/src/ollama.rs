//! Ollama's native wire format: reading what an `/api/chat` request asks for, and writing
//! plans as NDJSON lines or one object, errors, `/api/tags` and `/api/show` the way Ollama
//! does. Pure: never touches a socket or the queue.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::ModelInfo;
use crate::script::{Call, Frames, Plan, Request};

/// What `/api/tags` reports as every model's size.
const PARAMETER_SIZE: &str = "7B";

/// Reads what the answer depends on from an `/api/chat` body. Ollama streams unless told
/// `"stream": false`.
pub(crate) fn parse(body: &Value) -> Request {
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let text = |message: &Value| message["content"].as_str().unwrap_or_default().to_owned();
    let last_user = messages.iter().rev().find(|m| m["role"] == "user").map(text);
    let chars: usize = messages.iter().map(|m| text(m).chars().count()).sum();
    Request {
        model: body["model"].as_str().unwrap_or_default().to_owned(),
        stream: body["stream"].as_bool().unwrap_or(true),
        include_usage: true,
        last_user: last_user.unwrap_or_default(),
        prompt_estimate: Request::estimate(chars),
    }
}

/// The streamed answer, one JSON object a line: a line per reasoning piece
/// (`message.thinking`), per text piece (`message.content`) and per tool call (whole, its
/// arguments an object), then the `done` line with the counts.
pub(crate) fn stream(plan: &Plan, request: &Request) -> Frames {
    let created_at = timestamp(SystemTime::now());
    let line = |message: Value, done: bool| {
        let mut object = json!({"model": request.model, "created_at": created_at, "message": message, "done": done});
        if done {
            finish(&mut object, plan);
        }
        format!("{object}\n")
    };
    let thinking = plan.thinking.iter().map(|piece| json!({"role": "assistant", "content": "", "thinking": piece}));
    let text = plan.text.iter().map(|piece| json!({"role": "assistant", "content": piece}));
    let calls =
        plan.calls.iter().map(|call| json!({"role": "assistant", "content": "", "tool_calls": [tool_call(call)]}));
    let paced = thinking.chain(text).chain(calls).map(|message| line(message, false)).collect();
    let tail = if plan.hang { Vec::new() } else { vec![line(json!({"role": "assistant", "content": ""}), true)] };
    Frames { head: Vec::new(), paced, tail }
}

/// The whole answer as one object, for `"stream": false`.
pub(crate) fn whole(plan: &Plan, request: &Request) -> Value {
    let mut message = json!({"role": "assistant", "content": plan.full_text()});
    if let Some(thinking) = plan.full_thinking() {
        message["thinking"] = json!(thinking);
    }
    if !plan.calls.is_empty() {
        message["tool_calls"] = plan.calls.iter().map(tool_call).collect();
    }
    let mut object = json!({
        "model": request.model,
        "created_at": timestamp(SystemTime::now()),
        "message": message,
        "done": true,
    });
    finish(&mut object, plan);
    object
}

/// An error body: Ollama sends just the message.
pub(crate) fn error(message: &str) -> Value {
    json!({"error": message})
}

/// `GET /api/tags`.
pub(crate) fn tags(models: &[ModelInfo]) -> Value {
    let models = models.iter().map(|model| {
        json!({
            "name": model.id,
            "model": model.id,
            "modified_at": "1970-01-01T00:00:00Z",
            "size": 0,
            "digest": "",
            "details": {"format": "gguf", "family": "llama", "parameter_size": PARAMETER_SIZE},
        })
    });
    json!({"models": models.collect::<Vec<_>>()})
}

/// `POST /api/show` for the model the body names (`model`, or the older `name`), or the
/// message of Ollama's 404 when there is no such model.
pub(crate) fn show(models: &[ModelInfo], body: &Value) -> Result<Value, String> {
    let name = body["model"].as_str().or(body["name"].as_str()).unwrap_or_default();
    let model = models.iter().find(|model| model.id == name).ok_or_else(|| format!("model '{name}' not found"))?;
    Ok(json!({
        "model_info": {"general.architecture": "llama", "llama.context_length": model.context_length},
        "capabilities": ["completion", "tools"],
    }))
}

fn tool_call(call: &Call) -> Value {
    json!({"function": {"name": call.name, "arguments": call.arguments_value()}})
}

/// The `done` line's fields. Ollama says "stop" for an answer that calls tools too; the
/// durations are the scripted ones, in nanoseconds.
fn finish(object: &mut Value, plan: &Plan) {
    let done_reason = match plan.finish_reason.as_str() {
        "stop" | "tool_calls" => "stop",
        other => other,
    };
    let nanos = u64::try_from(plan.duration().as_nanos()).unwrap_or(u64::MAX);
    let fields = json!({
        "done_reason": done_reason,
        "total_duration": nanos,
        "load_duration": 0,
        "prompt_eval_count": plan.prompt_tokens,
        "prompt_eval_duration": 0,
        "eval_count": plan.completion_tokens,
        "eval_duration": nanos,
    });
    if let (Some(object), Value::Object(fields)) = (object.as_object_mut(), fields) {
        object.extend(fields);
    }
}

/// RFC 3339 in UTC with microseconds, the way Ollama writes `created_at`.
fn timestamp(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let (days, seconds) = (since.as_secs() / 86_400, since.as_secs() % 86_400);
    let (year, month, day) = civil(days);
    let (hour, minute, second) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    let micros = since.subsec_micros();
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{micros:06}Z")
}

/// The Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{Reply, ScriptedCall, plan};

    fn line(frame: &str) -> Value {
        assert!(frame.ends_with('\n') && !frame.trim_end().contains('\n'), "one line: {frame:?}");
        serde_json::from_str(frame).unwrap()
    }

    #[test]
    fn ollama_streams_unless_told_not_to() {
        assert!(parse(&json!({"messages": [{"role": "user", "content": "hi"}]})).stream);
        assert!(!parse(&json!({"stream": false})).stream);
        assert_eq!(parse(&json!({"messages": [{"role": "user", "content": "hi"}]})).last_user, "hi");
    }

    #[test]
    fn calls_go_whole_with_object_arguments_and_the_done_line_counts() {
        let calls = [ScriptedCall { split: 3, ..ScriptedCall::new("f", json!({"a": 1})) }];
        let reply = Reply { thinking: Some("hm".into()), tool_calls: calls.into(), ..Reply::text("a b") };
        let frames = stream(&plan(reply), &parse(&json!({"model": "llama"})));
        let lines: Vec<Value> = frames.paced.iter().chain(&frames.tail).map(|frame| line(frame)).collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0]["message"], json!({"role": "assistant", "content": "", "thinking": "hm"}));
        assert_eq!(lines[2]["message"]["content"], " b");
        assert_eq!(lines[3]["message"]["tool_calls"], json!([{"function": {"name": "f", "arguments": {"a": 1}}}]));
        let done = &lines[4];
        assert_eq!((&done["done"], &done["done_reason"]), (&json!(true), &json!("stop")));
        assert_eq!((&done["prompt_eval_count"], &done["eval_count"]), (&json!(3), &json!(6)));
        assert_eq!(lines[0]["model"], "llama");
    }

    #[test]
    fn show_reports_the_context_length_or_ollamas_404() {
        let models = [ModelInfo { id: "m".into(), context_length: 4096 }];
        let shown = show(&models, &json!({"model": "m"})).unwrap();
        assert_eq!(shown["model_info"]["llama.context_length"], 4096);
        assert_eq!(show(&models, &json!({"model": "x"})), Err("model 'x' not found".to_owned()));
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let time = UNIX_EPOCH + Duration::from_micros(1_709_251_199_123_456);
        assert_eq!(timestamp(time), "2024-02-29T23:59:59.123456Z");
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
    }
}
