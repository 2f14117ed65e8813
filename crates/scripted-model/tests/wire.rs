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

    /// The `(event, data)` pairs of an SSE body of named events, in order.
    fn named_events(&self) -> Vec<(String, Value)> {
        let events = self.body.split("\n\n").filter(|event| !event.is_empty());
        events
            .map(|event| {
                let (name, data) = event.split_once('\n').expect("an event line and a data line");
                let name = name.strip_prefix("event: ").expect("an event line");
                (name.to_owned(), serde_json::from_str(data.strip_prefix("data: ").expect("a data line")).unwrap())
            })
            .collect()
    }

    /// The objects of an NDJSON body, in order.
    fn lines(&self) -> Vec<Value> {
        assert!(self.body.ends_with('\n'), "every line ends");
        self.body.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
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
async fn a_responder_answers_from_the_request_when_nothing_is_queued() {
    let model = ScriptedModel::start().await;
    model.respond_with(|body| {
        let last = body["messages"].as_array()?.last()?["content"].as_str()?.to_owned();
        last.contains("weather").then(|| Reply::tool_calls([ScriptedCall::new("forecast", json!({"asked": last}))]))
    });
    model.push(Reply::text("queued first"));

    let queued = chat(&model, streamed("the weather?")).await.events();
    assert!(queued.concat().contains("queued"), "{queued:?}");
    let made = chat(&model, streamed("the weather?")).await.events();
    let first: Value = serde_json::from_str(&made[0]).unwrap();
    let call = &first["choices"][0]["delta"]["tool_calls"][0]["function"];
    assert_eq!((&call["name"], &call["arguments"]), (&json!("forecast"), &json!(r#"{"asked":"the weather?"}"#)));
    let declined = chat(&model, streamed("hello")).await.events().concat();
    assert!(declined.contains(r#""You""#) && declined.contains(" hello"), "no answer made, so the echo: {declined}");
    model.reset();
    assert!(chat(&model, streamed("weather")).await.events()[0].contains("forecast"), "a reset keeps it");
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

const ANTHROPIC: (&str, &str) = ("anthropic-version", "2023-06-01");

async fn messages(model: &ScriptedModel, headers: &[(&str, &str)], body: Value) -> Answer {
    send(model, "POST", "/v1/messages", headers, &body.to_string()).await
}

fn anthropic_streamed(content: Value) -> Value {
    json!({"model": "scripted-fast", "max_tokens": 100, "stream": true, "messages": [{"role": "user", "content": content}]})
}

#[tokio::test]
async fn anthropic_streams_named_events_with_text_then_a_split_tool_use() {
    let model = ScriptedModel::start().await;
    let arguments = json!({"path": "notes/today.md", "lines": [1, 2]});
    let read = ScriptedCall { split: 3, ..ScriptedCall::new("read_file", arguments.clone()) };
    model.push(Reply { tool_calls: vec![read], ..Reply::text("Let me look") });

    let answer = messages(&model, &[ANTHROPIC], anthropic_streamed(json!("go"))).await;

    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    let events = answer.named_events();
    for (name, data) in &events {
        assert_eq!(data["type"], name.as_str());
    }
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names[..3], ["message_start", "ping", "content_block_start"]);
    assert_eq!(names[names.len() - 2..], ["message_delta", "message_stop"]);
    let message = &events[0].1["message"];
    assert_eq!(
        (&message["type"], &message["role"], &message["model"]),
        (&json!("message"), &json!("assistant"), &json!("scripted-fast"))
    );
    assert_eq!(
        (&message["content"], &message["stop_reason"], &message["usage"]["output_tokens"]),
        (&json!([]), &Value::Null, &json!(1))
    );

    let blocks: Vec<&Value> =
        events.iter().filter(|(name, _)| name == "content_block_start").map(|(_, data)| data).collect();
    assert_eq!(
        blocks[0],
        &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    );
    let tool = &blocks[1]["content_block"];
    assert_eq!(
        (&blocks[1]["index"], &tool["type"], &tool["name"], &tool["input"]),
        (&json!(1), &json!("tool_use"), &json!("read_file"), &json!({}))
    );
    assert!(tool["id"].as_str().unwrap().starts_with("toolu_"));
    let deltas = |index: u64| -> Vec<&Value> {
        events
            .iter()
            .filter(|(name, data)| name == "content_block_delta" && data["index"] == index)
            .map(|(_, data)| &data["delta"])
            .collect()
    };
    let text: String = deltas(0)
        .iter()
        .map(|d| {
            assert_eq!(d["type"], "text_delta");
            d["text"].as_str().unwrap()
        })
        .collect();
    assert_eq!(text, "Let me look");
    let pieces = deltas(1);
    assert_eq!(pieces.len(), 3);
    let joined: String = pieces
        .iter()
        .map(|d| {
            assert_eq!(d["type"], "input_json_delta");
            d["partial_json"].as_str().unwrap()
        })
        .collect();
    assert_eq!(serde_json::from_str::<Value>(&joined).unwrap(), arguments);
    let stops: Vec<&Value> =
        events.iter().filter(|(name, _)| name == "content_block_stop").map(|(_, data)| &data["index"]).collect();
    assert_eq!(stops, [&json!(0), &json!(1)]);
    let finish = &events[events.len() - 2].1;
    assert_eq!(finish["delta"], json!({"stop_reason": "tool_use", "stop_sequence": null}));
    assert_eq!(finish["usage"]["output_tokens"], 6);
}

#[tokio::test]
async fn anthropic_wants_the_key_in_x_api_key_and_it_is_recorded() {
    let options = Options { api_key: Some("sk-ant-test".into()), ..Options::default() };
    let model = ScriptedModel::start_with(options).await.unwrap();
    let body = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "what "}, {"type": "image", "source": {}}, {"type": "text", "text": "now"}]},
    ]});

    let bare = messages(&model, &[ANTHROPIC], body.clone()).await;
    let bearer = messages(&model, &[ANTHROPIC, ("Authorization", "Bearer sk-ant-test")], body.clone()).await;
    let keyed = messages(&model, &[ANTHROPIC, ("x-api-key", "sk-ant-test")], body).await;

    let refusal = json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}});
    assert_eq!((bare.status, bare.json()), (401, refusal.clone()));
    assert_eq!((bearer.status, bearer.json()), (401, refusal));
    assert_eq!(keyed.status, 200);
    let message = keyed.json();
    assert_eq!(message["content"], json!([{"type": "text", "text": "You said: what now"}]));
    assert_eq!(message["stop_reason"], "end_turn");
    let received = model.requests();
    assert_eq!(
        received.iter().map(|r| r.authorization.as_deref()).collect::<Vec<_>>(),
        [None, None, Some("sk-ant-test")]
    );
    assert_eq!(received[2].path, "/v1/messages");

    let listed = send(&model, "GET", "/v1/models", &[("x-api-key", "sk-ant-test")], "").await.json();
    assert_eq!(
        listed["data"][0],
        json!({"type": "model", "id": "scripted-fast", "display_name": "scripted-fast", "created_at": "1970-01-01T00:00:00Z"})
    );
    assert_eq!(
        (&listed["has_more"], &listed["first_id"], &listed["last_id"]),
        (&json!(false), &json!("scripted-fast"), &json!("scripted-strong"))
    );
    assert_eq!(send(&model, "GET", "/v1/models", &[ANTHROPIC], "").await.status, 401);
    let openai = send(&model, "GET", "/v1/models", &[("Authorization", "Bearer sk-ant-test")], "").await.json();
    assert_eq!(openai["object"], "list");
}

#[tokio::test]
async fn anthropic_errors_come_in_anthropics_shape_with_retry_after() {
    let model = ScriptedModel::start().await;
    model.push_all([Reply { retry_after: Some(3), ..Reply::status(429) }, Reply::status(529)]);

    let limited = messages(&model, &[ANTHROPIC], anthropic_streamed(json!("hi"))).await;
    let overloaded = messages(&model, &[ANTHROPIC], anthropic_streamed(json!("hi"))).await;

    assert_eq!(limited.status, 429);
    assert_eq!(limited.header("retry-after"), Some("3"));
    assert_eq!(
        limited.json(),
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Too Many Requests"}})
    );
    assert_eq!(overloaded.status, 529);
    assert_eq!(overloaded.json()["error"], json!({"type": "overloaded_error", "message": "Overloaded"}));
}

#[tokio::test]
async fn ollama_streams_ndjson_by_default_with_whole_tool_calls_and_a_done_line() {
    let options = Options { api_key: Some("ignored-here".into()), ..Options::default() };
    let model = ScriptedModel::start_with(options).await.unwrap();
    let call = ScriptedCall { split: 4, ..ScriptedCall::new("read_file", json!({"path": "a.md"})) };
    model.push(Reply {
        tool_calls: vec![call, ScriptedCall::new("list", json!("{not json"))],
        prompt_tokens: Some(12),
        ..Reply::text("On it")
    });
    let body = json!({"model": "llama3", "messages": [{"role": "user", "content": "go"}]});

    let answer = send(&model, "POST", "/api/chat", &[], &body.to_string()).await;

    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("application/x-ndjson"));
    let lines = answer.lines();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["message"], json!({"role": "assistant", "content": "On"}));
    assert_eq!((&lines[0]["model"], &lines[0]["done"]), (&json!("llama3"), &json!(false)));
    assert!(lines[0]["created_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(lines[1]["message"]["content"], " it");
    assert_eq!(
        lines[2]["message"],
        json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "a.md"}}}]})
    );
    assert_eq!(lines[3]["message"]["tool_calls"][0]["function"]["arguments"], "{not json");
    let done = &lines[4];
    assert_eq!(
        (&done["done"], &done["done_reason"], &done["message"]),
        (&json!(true), &json!("stop"), &json!({"role": "assistant", "content": ""}))
    );
    assert_eq!((&done["prompt_eval_count"], &done["eval_count"]), (&json!(12), &json!(7)));
    assert!(done["total_duration"].is_u64());
    assert_eq!(model.requests()[0].path, "/api/chat");

    let whole = send(
        &model,
        "POST",
        "/api/chat",
        &[],
        &json!({"stream": false, "messages": [{"role": "user", "content": "hey"}]}).to_string(),
    )
    .await;
    assert_eq!(whole.json()["message"]["content"], "You said: hey");
    model.push(Reply { message: Some("model is overloaded".into()), ..Reply::status(503) });
    let failed = send(&model, "POST", "/api/chat", &[], &body.to_string()).await;
    assert_eq!((failed.status, failed.json()), (503, json!({"error": "model is overloaded"})));
}

#[tokio::test]
async fn ollama_lists_its_models_and_shows_their_context_length() {
    let model = ScriptedModel::start().await;

    let tags = send(&model, "GET", "/api/tags", &[], "").await.json();
    let shown = send(&model, "POST", "/api/show", &[], r#"{"model":"scripted-balanced"}"#).await.json();
    let missing = send(&model, "POST", "/api/show", &[], r#"{"model":"nope"}"#).await;

    let names: Vec<&str> = tags["models"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["scripted-fast", "scripted-balanced", "scripted-strong"]);
    assert_eq!((&tags["models"][0]["model"], &tags["models"][0]["size"]), (&json!("scripted-fast"), &json!(0)));
    assert!(tags["models"][0]["details"]["parameter_size"].is_string());
    assert_eq!(shown["model_info"], json!({"general.architecture": "llama", "llama.context_length": 32768}));
    assert_eq!(shown["capabilities"], json!(["completion", "tools"]));
    assert_eq!((missing.status, missing.json()), (404, json!({"error": "model 'nope' not found"})));
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
