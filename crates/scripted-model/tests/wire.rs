//! The scripted model over real HTTP, through a raw client so what is checked is the bytes
//! on the wire, not a client library's reading of them.

use std::time::Duration;

use scripted_model::{Options, Reply, ScriptedCall, ScriptedModel};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

const PATIENCE: Duration = Duration::from_secs(5);

struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }

    /// The `data:` payloads of an SSE body, in order.
    fn events(&self) -> Vec<String> {
        self.body.split("\n\n").filter_map(|event| event.strip_prefix("data: ")).map(str::to_owned).collect()
    }
}

fn request(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut text = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text + &format!("Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len())
}

/// Sends one request and reads until the server closes the connection.
async fn send(model: &ScriptedModel, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut socket = TcpStream::connect(model.url().trim_start_matches("http://")).await.unwrap();
    socket.write_all(request(method, path, headers, body).as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    timeout(PATIENCE, socket.read_to_end(&mut raw)).await.expect("the answer ends").unwrap();
    parse(&String::from_utf8(raw).unwrap())
}

async fn chat(model: &ScriptedModel, body: Value) -> Answer {
    send(model, "POST", "/v1/chat/completions", &[], &body.to_string()).await
}

fn parse(raw: &str) -> Answer {
    let (head, body) = raw.split_once("\r\n\r\n").expect("a complete head");
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .map(|line| line.split_once(": ").unwrap())
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    let chunked = headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v == "chunked");
    let body = if chunked { dechunk(body) } else { body.to_owned() };
    Answer { status, headers, body }
}

fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size, 16).unwrap();
        if size == 0 {
            break;
        }
        body.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    body
}

fn streamed(content: &str) -> Value {
    json!({"model": "scripted-fast", "stream": true, "messages": [{"role": "user", "content": content}]})
}

#[tokio::test]
async fn streamed_text_arrives_as_sse_chunks_and_ends_with_done() {
    let model = ScriptedModel::start().await;
    model.push(Reply { delay_ms: 5, ..Reply::text("Hello brave world") });

    let answer = chat(&model, streamed("hi")).await;

    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    let events = answer.events();
    assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = events[..events.len() - 1].iter().map(|e| serde_json::from_str(e).unwrap()).collect();
    let contents: Vec<&str> = chunks.iter().map(|c| c["choices"][0]["delta"]["content"].as_str().unwrap()).collect();
    assert_eq!(contents, ["Hello", " brave", " world"]);
    assert_eq!(chunks[0]["object"], "chat.completion.chunk");
    assert_eq!(chunks[0]["model"], "scripted-fast");
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(chunks[2]["choices"][0]["finish_reason"], "stop");
}

#[tokio::test]
async fn split_tool_call_arguments_concatenate_to_the_scripted_json() {
    let model = ScriptedModel::start().await;
    let arguments = json!({"path": "notes/today.md", "lines": [1, 2]});
    let read =
        ScriptedCall { id: Some("call_read".into()), split: 4, ..ScriptedCall::new("read_file", arguments.clone()) };
    model.push(Reply::tool_calls([read, ScriptedCall::new("list", json!("{not json"))]));
    let mut body = streamed("go");
    body["stream_options"] = json!({"include_usage": true});

    let events = chat(&model, body).await.events();

    let chunks: Vec<Value> = events[..events.len() - 1].iter().map(|e| serde_json::from_str(e).unwrap()).collect();
    let deltas: Vec<&Value> = chunks.iter().filter_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0)).collect();
    assert_eq!(deltas.len(), 5);
    assert_eq!((&deltas[0]["id"], &deltas[0]["function"]["name"]), (&json!("call_read"), &json!("read_file")));
    assert!(deltas[1].get("id").is_none());
    let joined: String = deltas[..4].iter().map(|d| d["function"]["arguments"].as_str().unwrap()).collect();
    assert_eq!(serde_json::from_str::<Value>(&joined).unwrap(), arguments);
    assert_eq!((&deltas[4]["index"], &deltas[4]["function"]["arguments"]), (&json!(1), &json!("{not json")));
    assert_eq!(chunks[4]["choices"][0]["finish_reason"], "tool_calls");
    let usage = &chunks[5];
    assert_eq!((&usage["choices"], &usage["usage"]["completion_tokens"]), (&json!([]), &json!(5)));
}

#[tokio::test]
async fn a_429_carries_retry_after_for_as_many_times_as_scripted() {
    let model = ScriptedModel::start().await;
    model.push_all([Reply { times: 2, retry_after: Some(7), ..Reply::status(429) }, Reply::text("finally")]);

    for _ in 0..2 {
        let answer = chat(&model, streamed("hi")).await;
        assert_eq!(answer.status, 429);
        assert_eq!(answer.header("retry-after"), Some("7"));
        assert_eq!(answer.json()["error"]["code"], "rate_limit_exceeded");
    }
    assert_eq!(chat(&model, streamed("hi")).await.status, 200);
}

#[tokio::test]
async fn an_unscripted_request_is_echoed() {
    let model = ScriptedModel::start().await;

    let body = json!({"model": "m", "messages": [{"role": "user", "content": "what is up"}]});
    let answer = chat(&model, body).await.json();

    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["choices"][0]["message"]["content"], "You said: what is up");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
}

#[tokio::test]
async fn every_chat_request_is_recorded_even_when_refused() {
    let options = Options { api_key: Some("sk-test".into()), ..Options::default() };
    let model = ScriptedModel::start_with(options).await.unwrap();

    let refused = chat(&model, streamed("no key")).await;
    let bearer = [("Authorization", "Bearer sk-test")];
    let body = streamed("with key").to_string();
    let accepted = send(&model, "POST", "/v1/chat/completions", &bearer, &body).await;

    assert_eq!(refused.status, 401);
    assert_eq!(refused.json()["error"]["code"], "invalid_api_key");
    assert_eq!(accepted.status, 200);
    let received = model.requests();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].authorization, None);
    assert_eq!(received[1].authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(received[1].body["messages"][0]["content"], "with key");
    assert_eq!(received[1].raw, body);
    let over_http = send(&model, "GET", "/_scripted/requests", &[], "").await.json();
    assert_eq!(over_http[1]["path"], "/v1/chat/completions");
}

#[tokio::test]
async fn replies_scripted_over_http_are_answered_in_order() {
    let model = ScriptedModel::start().await;
    let replies = json!([{"text": "one"}, {"tokens": 3}]).to_string();

    assert_eq!(send(&model, "POST", "/_scripted/replies", &[], &replies).await.status, 204);
    assert_eq!(send(&model, "POST", "/_scripted/replies", &[], r#"{"txt":"typo"}"#).await.status, 400);

    let first = chat(&model, json!({"messages": []})).await.json();
    let second = chat(&model, json!({"messages": []})).await.json();
    assert_eq!(first["choices"][0]["message"]["content"], "one");
    assert_eq!(second["choices"][0]["message"]["content"], " tok0 tok1 tok2");
    let models = send(&model, "GET", "/v1/models", &[], "").await.json();
    assert_eq!(
        models["data"][2],
        json!({"id": "scripted-strong", "object": "model", "created": 0,
        "owned_by": "scripted", "context_length": 128_000})
    );
}

#[tokio::test]
async fn a_hanging_stream_flushes_its_deltas_and_stays_open_until_shutdown() {
    let model = ScriptedModel::start().await;
    model.push(Reply { hang: true, first_delay_ms: 20, ..Reply::text("partial") });
    let mut socket = TcpStream::connect(model.url().trim_start_matches("http://")).await.unwrap();
    let body = streamed("hi").to_string();
    socket.write_all(request("POST", "/v1/chat/completions", &[], &body).as_bytes()).await.unwrap();

    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains(r#""content":"partial""#) {
        let mut buffer = [0; 4096];
        let read = timeout(PATIENCE, socket.read(&mut buffer)).await.expect("the delta is flushed").unwrap();
        assert_ne!(read, 0, "the connection stays open");
        seen.extend_from_slice(&buffer[..read]);
    }
    let mut buffer = [0; 4096];
    assert!(timeout(Duration::from_millis(100), socket.read(&mut buffer)).await.is_err(), "nothing more comes");

    model.shut_down();
    let mut rest = Vec::new();
    timeout(PATIENCE, socket.read_to_end(&mut rest)).await.expect("shutdown ends the stream").unwrap();
    assert!(!String::from_utf8_lossy(&rest).contains("[DONE]"));
}

#[test]
fn the_binary_prints_its_ready_line_and_exits_cleanly_on_sigterm() {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_scripted-model"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.starts_with("scripted-model listening on http://127.0.0.1:"), "{line}");

    let pid = child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    assert!(child.wait().unwrap().success());
}
