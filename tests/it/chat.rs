//! Turns over the real server (§8.1, §8.2, §9): a scripted model server speaks the OpenAI
//! wire protocol on 127.0.0.1; Skald streams its replies to a WebSocket, runs tools,
//! stops, and turns provider failures into clear errors, all recorded in the person's file.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::Method;
use scripted_model::{Options, Reply, ScriptedCall, ScriptedModel};
use serde_json::{Value, json};
use skald::http::auth::ws_bearer_protocol;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::support::{Sandbox, Server};

mod agents;
mod approvals;
mod backup;
mod branches;
mod consent;
#[cfg(feature = "local-model")]
mod document_meaning;
mod documents;
mod jobs;
mod llama_server;
#[cfg(feature = "local-model")]
mod local;
mod mcp;
#[cfg(feature = "local-model")]
mod meaning;
mod memory;
mod mine;
mod search;
mod supervision;
mod titles;
mod voice;
mod voice_catalogue;
mod voice_peers;

const PASSWORD: &str = "otter lantern quietly";
const WAIT: Duration = Duration::from_secs(20);

/// A port where no model service answers: 1 (tcpmux), where nothing listens, rather than
/// one freed a moment ago, which a server another test starts at the same time may take.
const DEAD_PORT: u16 = 1;

/// A server with an administrator and a scripted provider named `scripted`.
struct Chat {
    server: Server,
    token: String,
    model: ScriptedModel,
}

impl Chat {
    async fn start() -> Self {
        Self::start_in(Sandbox::new(), ScriptedModel::start().await, None).await
    }

    async fn start_in(sandbox: Sandbox, model: ScriptedModel, api_key: Option<&str>) -> Self {
        Self::start_kind("openai", sandbox, model, api_key).await
    }

    async fn start_kind(kind: &str, sandbox: Sandbox, model: ScriptedModel, api_key: Option<&str>) -> Self {
        let server = Server::start_in(sandbox);
        let (status, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
        assert_eq!(status, 201, "{setup}");
        let token = setup["token"].as_str().unwrap().to_owned();
        let chat = Self { server, token, model };
        let base_url = if kind == "ollama" { chat.model.url() } else { chat.model.openai_base() };
        let mut provider = json!({ "name": "scripted", "kind": kind, "base_url": base_url });
        if let Some(key) = api_key {
            provider["api_key"] = json!(key);
        }
        let (status, added) = chat.server.post("/api/providers", Some(&chat.token), provider).await;
        assert_eq!(status, 201, "{added}");
        chat
    }

    async fn new_session(&self, body: Value) -> String {
        let (status, created) = self.server.post("/api/sessions", Some(&self.token), body).await;
        assert_eq!(status, 201, "{created}");
        created["id"].as_str().unwrap().to_owned()
    }

    async fn send(&self, session: &str, text: &str) -> Value {
        let path = format!("/api/sessions/{session}/messages");
        let (status, body) = self.server.post(&path, Some(&self.token), json!({ "text": text })).await;
        assert_eq!(status, 202, "{body}");
        body
    }

    async fn history(&self, session: &str) -> Vec<Value> {
        history(&self.server, &self.token, session).await
    }

    /// Polls the history until the turn's closing assistant row is there.
    async fn finished(&self, session: &str) -> Vec<Value> {
        finished(&self.server, &self.token, session, WAIT).await
    }

    /// Streams a long reply, stops it after its first token, and checks it ended stopped.
    async fn stop_mid_stream(&self) {
        self.model.push(Reply { tokens: Some(400), delay_ms: 15, ..Reply::default() });
        let mut socket = self.socket().await;
        let session = self.new_session(json!({})).await;
        self.send(&session, "count").await;
        while socket.next_event().await["type"] != "token" {}
        let (status, _) =
            self.server.post(&format!("/api/sessions/{session}/stop"), Some(&self.token), json!({})).await;
        assert_eq!(status, 200);
        assert_eq!(self.finished(&session).await.last().unwrap()["status"], "stopped");
    }

    async fn socket(&self) -> Socket {
        Socket::open(&self.server, &self.token).await
    }
}

/// A session's history, oldest first.
async fn history(server: &Server, token: &str, session: &str) -> Vec<Value> {
    let path = format!("/api/sessions/{session}/messages");
    let (status, body) = server.call(Method::GET, &path, Some(token), None).await;
    assert_eq!(status, 200, "{body}");
    body.as_array().unwrap().clone()
}

/// Polls a session's history until the turn's closing assistant row is there.
async fn finished(server: &Server, token: &str, session: &str, wait: Duration) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let history = history(server, token, session).await;
        let closed = history.last().is_some_and(|m| {
            m["role"] == "assistant"
                && m.get("frame_id").is_none()
                && ["done", "stopped", "error"].contains(&m["status"].as_str().unwrap())
        });
        if closed {
            return history;
        }
        assert!(tokio::time::Instant::now() < deadline, "the turn did not end: {history:?}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

struct Socket(tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>);

impl Socket {
    /// A WebSocket to `server` as the session `token`, past its hello.
    async fn open(server: &Server, token: &str) -> Self {
        let mut request = format!("ws://127.0.0.1:{}/api/ws", server.port).into_client_request().unwrap();
        let offered = format!("skald.v1, {}", ws_bearer_protocol(token));
        request.headers_mut().insert("sec-websocket-protocol", offered.parse().unwrap());
        let (socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
        let mut socket = Socket(socket);
        assert_eq!(socket.next_event().await["type"], "hello");
        socket
    }

    async fn next_event(&mut self) -> Value {
        loop {
            let message = tokio::time::timeout(WAIT, self.0.next()).await.expect("an event in time").unwrap().unwrap();
            if let Message::Text(text) = message {
                let event: Value = serde_json::from_str(&text).unwrap();
                if event["type"] != "heartbeat" {
                    return event;
                }
            }
        }
    }

    /// Every event up to and including `turn_ended`.
    async fn until_turn_end(&mut self) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let event = self.next_event().await;
            let end = event["type"] == "turn_ended";
            events.push(event);
            if end {
                return events;
            }
        }
    }
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn tokens(events: &[Value]) -> String {
    of_type(events, "token").iter().map(|e| e["text"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn a_streamed_reply_arrives_in_order_and_lands_in_the_history() {
    let chat = Chat::start().await;
    let reply = "The quick brown fox jumps over the lazy dog, twice over.";
    chat.model.push(Reply { chunk_chars: 3, ..Reply::text(reply) });
    let mut socket = chat.socket().await;
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "Tell me about foxes").await;

    let events = socket.until_turn_end().await;
    assert_eq!(events[0]["type"], "turn_started");
    assert_eq!(tokens(&events), reply, "the tokens, in order, are the reply");
    assert!(of_type(&events, "token").len() > 10, "streamed in pieces, not at once");
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "numbered without gaps: {seqs:?}");
    assert_eq!(events.last().unwrap()["status"], "done");

    let history = chat.finished(&session).await;
    let roles: Vec<&str> = history.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(history[0]["text"], "Tell me about foxes");
    assert_eq!((history[1]["text"].as_str().unwrap(), history[1]["status"].as_str().unwrap()), (reply, "done"));

    // The model got the main agent's prompt, the message and the tool catalogue.
    let sent = &chat.model.requests()[0].body;
    assert_eq!(sent["messages"][0]["role"], "system");
    let prompt = std::fs::read_to_string(chat.server.data_dir().join("agents/main/AGENT.md")).unwrap();
    assert_eq!(crate::support::unprefixed(&sent["messages"][0]["content"]), prompt.as_str());
    assert_eq!(sent["messages"][1], json!({ "role": "user", "content": "Tell me about foxes" }));
    assert_eq!(sent["tools"][0]["function"]["name"], "current_time");
    assert_eq!(sent["stream"], true);

    // The request is on record, with the usage the provider reported.
    let (_, requests) =
        chat.server.call(Method::GET, &format!("/api/sessions/{session}/requests"), Some(&chat.token), None).await;
    assert_eq!(requests[0]["outcome"], "ok");
    assert!(requests[0]["tokens_out"].as_i64().unwrap() > 0, "{requests}");
    let mut fields: Vec<&str> = requests[0].as_object().unwrap().keys().map(String::as_str).collect();
    fields.sort_unstable();
    let listed = [
        "attempts",
        "created_at",
        "error_code",
        "history_upto",
        "id",
        "latency_ms",
        "model",
        "outcome",
        "provider",
        "purpose",
        "summary_id",
        "tokens_in",
        "tokens_out",
        "ttft_ms",
        "turn_id",
    ];
    assert_eq!(fields, listed, "what the record lists of a request, and no more");
}

#[tokio::test]
async fn a_current_time_call_runs_and_its_result_goes_back_to_the_model() {
    let chat = Chat::start().await;
    chat.model.push(Reply::tool_calls([ScriptedCall::new("current_time", json!({ "timezone": "Europe/Paris" }))]));
    chat.model.push(Reply::text("It is late in Paris."));
    let mut socket = chat.socket().await;
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "What time is it in Paris?").await;

    let events = socket.until_turn_end().await;
    let started = of_type(&events, "tool_call_started");
    let finished = of_type(&events, "tool_call_finished");
    assert_eq!((started.len(), finished.len()), (1, 1), "{events:?}");
    assert_eq!(started[0]["call"]["name"], "current_time");
    assert_eq!(finished[0]["status"], "ok");

    let history = chat.finished(&session).await;
    let shape: Vec<(&str, &str)> =
        history.iter().map(|m| (m["role"].as_str().unwrap(), m["status"].as_str().unwrap())).collect();
    assert_eq!(shape, [("user", "sent"), ("assistant", "tool_calls"), ("tool", "ok"), ("assistant", "done")]);
    let call_id = history[1]["tool_calls"][0]["id"].as_str().unwrap();
    assert_eq!(history[2]["tool_call_id"], call_id);
    let result: Value = serde_json::from_str(history[2]["text"].as_str().unwrap()).unwrap();
    assert_eq!(result["timezone"], "Europe/Paris");

    // The second request carried the call and its result, linked by id.
    let second = &chat.model.requests()[1].body;
    let messages = second["messages"].as_array().unwrap();
    let asked = &messages[messages.len() - 2];
    let answered = &messages[messages.len() - 1];
    assert_eq!(asked["tool_calls"][0]["id"], call_id);
    assert_eq!((answered["role"].as_str(), answered["tool_call_id"].as_str()), (Some("tool"), Some(call_id)));
}

#[tokio::test]
async fn several_calls_in_one_response_with_split_arguments_each_get_one_result_in_order() {
    let chat = Chat::start().await;
    let zones = ["Europe/Paris", "Asia/Tokyo", "America/Lima"];
    let calls = zones.iter().enumerate().map(|(i, zone)| ScriptedCall {
        split: i + 2,
        ..ScriptedCall::new("current_time", json!({ "timezone": zone }))
    });
    chat.model.push(Reply::tool_calls(calls.chain([ScriptedCall::new("no_such_tool", json!({}))])));
    chat.model.push(Reply::text("Done."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "Three clocks please").await;

    let history = chat.finished(&session).await;
    let asked: Vec<&str> =
        history[1]["tool_calls"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    let results: Vec<&Value> = history.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(results.len(), 4, "one result per call: {history:?}");
    let answered: Vec<&str> = results.iter().map(|r| r["tool_call_id"].as_str().unwrap()).collect();
    assert_eq!(answered, asked, "results are recorded in call order");
    for (result, zone) in results.iter().zip(zones) {
        assert!(result["text"].as_str().unwrap().contains(zone), "{result}");
    }
    assert_eq!(results[3]["status"], "error", "a tool that does not exist is an error the model reads");
    assert!(results[3]["text"].as_str().unwrap().starts_with("Error: "));
    assert_eq!(history.last().unwrap()["status"], "done");
}

#[tokio::test]
async fn stop_ends_the_stream_at_once_and_keeps_what_was_said() {
    let chat = Chat::start().await;
    chat.model.push(Reply { tokens: Some(400), delay_ms: 15, ..Reply::default() });
    let mut socket = chat.socket().await;
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "Count slowly").await;
    let mut seen = Vec::new();
    while of_type(&seen, "token").len() < 5 {
        seen.push(socket.next_event().await);
    }
    let (status, stopped) =
        chat.server.post(&format!("/api/sessions/{session}/stop"), Some(&chat.token), json!({})).await;
    assert_eq!((status, &stopped["stopped"]), (200, &json!(true)));
    seen.extend(socket.until_turn_end().await);
    assert_eq!(seen.last().unwrap()["status"], "stopped");

    // Nothing streams after the end.
    let quiet = tokio::time::timeout(Duration::from_millis(400), socket.next_event()).await;
    assert!(quiet.is_err(), "an event after the turn ended: {quiet:?}");
    let history = chat.finished(&session).await;
    let last = history.last().unwrap();
    assert_eq!(last["status"], "stopped");
    let said = last["text"].as_str().unwrap();
    assert_eq!(said, tokens(&seen), "exactly what was streamed is kept");
    assert!(said.len() < 400 * 5, "stopped early");
    let (status, again) =
        chat.server.post(&format!("/api/sessions/{session}/stop"), Some(&chat.token), json!({})).await;
    assert_eq!((status, &again["stopped"]), (200, &json!(false)), "nothing left to stop");
}

/// Sends one message and returns the closing assistant row.
async fn one_turn(chat: &Chat) -> Value {
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "Hello?").await;
    chat.finished(&session).await.pop().unwrap()
}

#[tokio::test]
async fn a_refused_key_is_a_clear_error_and_is_not_retried() {
    let model =
        ScriptedModel::start_with(Options { api_key: Some("right-key".into()), ..Options::default() }).await.unwrap();
    let chat = Chat::start_in(Sandbox::new(), model, Some("right-key")).await;
    // The administrator then types a wrong key.
    let (status, providers) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
    assert_eq!(status, 200);
    let id = providers[0]["id"].as_str().unwrap();
    let patch = json!({ "api_key": "wrong-key" });
    let (status, body) =
        chat.server.call(Method::PATCH, &format!("/api/providers/{id}"), Some(&chat.token), Some(patch)).await;
    assert_eq!(status, 204, "{body}");
    let before = chat.model.request_count();

    let last = one_turn(&chat).await;
    assert_eq!((last["status"].as_str(), last["error_code"].as_str()), (Some("error"), Some("provider_auth")));
    assert!(last["error_message"].as_str().unwrap().contains("refused the API key"), "{last}");
    assert_eq!(chat.model.request_count() - before, 1, "a bad key is not retried");
}

/// Retry asks the model what the failed try asked: the context ends with the person's
/// message, without the call, result and error the failed try added after it.
#[tokio::test]
async fn a_retry_sends_the_context_of_the_failed_try_again() {
    let chat = Chat::start().await;
    let session = chat.new_session(json!({})).await;
    chat.model.push(Reply::text("Hello."));
    chat.send(&session, "Hi").await;
    chat.finished(&session).await;
    chat.model.push(Reply::tool_calls([ScriptedCall::new("current_time", json!({ "timezone": "UTC" }))]));
    chat.model.push(Reply::status(401));
    let first_try = chat.model.request_count();
    chat.send(&session, "What time is it?").await;
    let failed = chat.finished(&session).await;
    assert_eq!(failed.last().unwrap()["status"], "error", "{failed:?}");
    assert!(failed.iter().any(|m| m["role"] == "tool"), "the failed try ran its call: {failed:?}");

    chat.model.push(Reply::text("It is noon."));
    let path = format!("/api/sessions/{session}/retry");
    let (status, started) = chat.server.post(&path, Some(&chat.token), json!({})).await;
    assert_eq!(status, 202, "{started}");
    let deadline = tokio::time::Instant::now() + WAIT;
    let retried = loop {
        let history = chat.finished(&session).await;
        if history.last().unwrap()["turn_id"] == started["turn"] {
            break history;
        }
        assert!(tokio::time::Instant::now() < deadline, "the retry did not end: {history:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(retried.last().unwrap()["text"], "It is noon.", "{retried:?}");
    let requests = chat.model.requests();
    let (asked, asked_again) = (&requests[first_try].body["messages"], &requests.last().unwrap().body["messages"]);
    assert_eq!(asked_again, asked);
    assert_eq!(asked_again.as_array().unwrap().last().unwrap()["content"], "What time is it?");
}

#[tokio::test]
async fn a_rate_limit_is_retried_and_a_persistent_one_ends_in_a_clear_error() {
    let chat = Chat::start().await;
    chat.model.push(Reply { retry_after: Some(0), ..Reply::status(429) });
    chat.model.push(Reply::text("Made it."));
    let last = one_turn(&chat).await;
    assert_eq!((last["status"].as_str(), last["text"].as_str()), (Some("done"), Some("Made it.")));

    chat.model.reset();
    chat.model.push(Reply { retry_after: Some(0), times: 10, ..Reply::status(429) });
    let last = one_turn(&chat).await;
    assert_eq!(last["error_code"], "provider_rate_limited");
    assert!(last["error_message"].as_str().unwrap().contains("rate-limiting"), "{last}");
    assert_eq!(chat.model.request_count(), 4, "the first try and three retries");
}

#[tokio::test]
async fn a_dead_provider_ends_in_a_clear_error_after_bounded_retries() {
    let chat = Chat::start().await;
    let (status, providers) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
    assert_eq!(status, 200);
    let id = providers[0]["id"].as_str().unwrap();
    let dead_port = DEAD_PORT;
    let patch = json!({ "base_url": format!("http://127.0.0.1:{dead_port}/v1") });
    let (status, _) =
        chat.server.call(Method::PATCH, &format!("/api/providers/{id}"), Some(&chat.token), Some(patch)).await;
    assert_eq!(status, 204);
    let last = one_turn(&chat).await;
    assert_eq!(last["error_code"], "provider_unavailable");
    assert!(last["error_message"].as_str().unwrap().contains("cannot be reached"), "{last}");
}

#[tokio::test]
async fn a_provider_that_goes_silent_mid_reply_ends_the_turn_instead_of_hanging() {
    let mut sandbox = Sandbox::new();
    sandbox.env.push(("SKALD_TEST_PROVIDER_STALL_MS".into(), "500".into()));
    let chat = Chat::start_in(sandbox, ScriptedModel::start().await, None).await;
    chat.model.push(Reply { hang: true, ..Reply::text("Half a") });
    let last = one_turn(&chat).await;
    assert_eq!((last["status"].as_str(), last["error_code"].as_str()), (Some("error"), Some("provider_stalled")));
    assert_eq!(last["text"], "Half a", "what arrived is kept");
}

#[tokio::test]
async fn provider_keys_never_appear_in_any_response() {
    let key = "sk-canary-5f1e0c9a7b3d42e8";
    let model = ScriptedModel::start_with(Options { api_key: Some(key.into()), ..Options::default() }).await.unwrap();
    let chat = Chat::start_in(Sandbox::new(), model, Some(key)).await;
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "hi").await;
    chat.finished(&session).await;
    assert_eq!(
        chat.model.requests()[0].authorization.as_deref(),
        Some(format!("Bearer {key}").as_str()),
        "the key is used"
    );
    let reads = ["/api/providers", "/api/models", "/api/audit", "/api/me", "/api/sessions", "/api/me/audit"];
    for path in reads.iter().map(|p| p.to_string()).chain([format!("/api/sessions/{session}/messages")]) {
        let (status, body) = chat.server.call(Method::GET, &path, Some(&chat.token), None).await;
        assert_eq!(status, 200, "{path}");
        assert!(!body.to_string().contains("canary-5f1e"), "{path} returned the key: {body}");
    }
    let (_, providers) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
    assert_eq!(providers[0]["has_key"], true);
    // Nor is it in the shared database in the clear.
    let sandbox = chat.server.stop("TERM");
    let db = std::fs::read(sandbox.data_dir().join("database/system.db")).unwrap();
    assert!(!db.windows(key.len()).any(|w| w == key.as_bytes()));
}

#[tokio::test]
async fn a_pinned_model_outside_the_role_is_refused_with_403() {
    let chat = Chat::start().await;
    let member = json!({ "allowed_models": ["scripted/scripted-fast"] });
    let (status, body) = chat.server.call(Method::PATCH, "/api/roles/member", Some(&chat.token), Some(member)).await;
    assert_eq!(status, 200, "{body}");
    let (status, added) =
        chat.server.post("/api/users", Some(&chat.token), json!({ "name": "Bo", "role": "member" })).await;
    assert_eq!(status, 201);
    let code = added["enrolment_code"].as_str().unwrap();
    let enrol = json!({ "name": "Bo", "enrolment_code": code, "password": "maple harbour seventeen" });
    let (_, enrolled) = chat.server.post("/api/enrol", None, enrol).await;
    let bo = enrolled["token"].as_str().unwrap();

    let (status, refused) =
        chat.server.post("/api/sessions", Some(bo), json!({ "model": "scripted/scripted-strong" })).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("model_not_allowed")), "{refused}");
    let (status, _) = chat.server.post("/api/sessions", Some(bo), json!({ "model": "scripted/scripted-fast" })).await;
    assert_eq!(status, 201);
    let (status, _) = chat.server.post("/api/sessions", Some(bo), json!({ "model": "scripted/nonexistent" })).await;
    assert_eq!(status, 400);
    // Unpinned, Bo's turns use the one model the role allows.
    let (_, models) = chat.server.call(Method::GET, "/api/models", Some(bo), None).await;
    let names: Vec<&str> = models.as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["scripted/scripted-fast"]);
    let (_, session) = chat.server.post("/api/sessions", Some(bo), json!({})).await;
    let path = format!("/api/sessions/{}/messages", session["id"].as_str().unwrap());
    let (status, _) = chat.server.post(&path, Some(bo), json!({ "text": "hi" })).await;
    assert_eq!(status, 202);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(chat.model.requests().last().unwrap().body["model"], "scripted-fast");
}

#[tokio::test]
async fn locking_stops_a_running_turn_and_a_restart_turns_a_running_one_into_an_error() {
    let chat = Chat::start().await;
    chat.model.push(Reply { hang: true, ..Reply::text("Still thinking") });
    let mut socket = chat.socket().await;
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "first").await;
    while socket.next_event().await["type"] != "token" {}
    let (status, _) = chat.server.post("/api/lock", Some(&chat.token), json!({})).await;
    assert_eq!(status, 204);
    let (_, login) = chat.server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let token = login["token"].as_str().unwrap().to_owned();
    let path = format!("/api/sessions/{session}/messages");
    let (_, history) = chat.server.call(Method::GET, &path, Some(&token), None).await;
    let last = history.as_array().unwrap().last().unwrap().clone();
    assert_eq!((last["status"].as_str(), last["text"].as_str()), (Some("stopped"), Some("Still thinking")));

    // A crash mid-turn: the turn is `running` on disk until the owner next unlocks.
    chat.model.push(Reply { hang: true, ..Reply::text("Cut off") });
    let (status, _) = chat.server.post(&path, Some(&token), json!({ "text": "second" })).await;
    assert_eq!(status, 202);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let Chat { server, model, .. } = chat;
    let sandbox = server.stop("KILL");
    let server = Server::start_in(sandbox);
    let (_, login) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let token = login["token"].as_str().unwrap();
    let (_, history) = server.call(Method::GET, &path, Some(token), None).await;
    let history = history.as_array().unwrap();
    assert_eq!(history[history.len() - 2]["text"], "second", "the message sent before the crash survived");
    let last = history.last().unwrap();
    assert_eq!((last["status"].as_str(), last["error_code"].as_str()), (Some("error"), Some("interrupted")));
    let (_, session_now) = server.call(Method::GET, &format!("/api/sessions/{session}"), Some(token), None).await;
    assert_eq!(session_now["turn_state"], "error");
    drop(model);
}

#[tokio::test]
async fn a_turn_refuses_clearly_when_busy_or_when_no_model_is_connected() {
    let server = Server::start();
    let (_, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let token = setup["token"].as_str().unwrap();
    let (_, session) = server.post("/api/sessions", Some(token), json!({})).await;
    let path = format!("/api/sessions/{}/messages", session["id"].as_str().unwrap());
    let (status, body) = server.post(&path, Some(token), json!({ "text": "hi" })).await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("no_model")), "{body}");
    let (_, history) = server.call(Method::GET, &path, Some(token), None).await;
    assert_eq!(history, json!([]), "a refused message is not half-stored");

    let chat = Chat::start().await;
    chat.model.push(Reply { hang: true, ..Reply::default() });
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "one").await;
    let path = format!("/api/sessions/{session}/messages");
    let (status, body) = chat.server.post(&path, Some(&chat.token), json!({ "text": "two" })).await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("turn_running")));
    let (status, body) = chat.server.post(&path, Some(&chat.token), json!({ "text": "  " })).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("empty_message")));
}

#[tokio::test]
async fn a_provider_that_cannot_be_reached_is_not_saved_and_the_answer_says_why() {
    let server = Server::start();
    let (_, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let token = setup["token"].as_str().unwrap();
    let dead_port = DEAD_PORT;
    let body = json!({ "name": "home", "kind": "openai", "base_url": format!("http://127.0.0.1:{dead_port}/v1") });
    let (status, refused) = server.post("/api/providers", Some(token), body).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (502, Some("provider_unavailable")), "{refused}");
    let (_, listed) = server.call(Method::GET, "/api/providers", Some(token), None).await;
    assert_eq!(listed, json!([]));
    let bad = json!({ "name": "a/b", "kind": "openai", "base_url": "http://127.0.0.1:1/v1", "models": ["m"] });
    assert_eq!(server.post("/api/providers", Some(token), bad).await.0, 400);
    let bad = json!({ "name": "ok", "kind": "openai", "base_url": "ftp://x", "models": ["m"] });
    assert_eq!(server.post("/api/providers", Some(token), bad).await.0, 400);
    // Given explicitly, models need no listing; the catalogue then offers them.
    let given = json!({ "name": "home", "kind": "openai", "base_url": "http://127.0.0.1:1/v1",
                        "models": ["llama-3.1-8b", { "id": "tiny", "strength": "fast", "context_window": 2048 }] });
    let (status, added) = server.post("/api/providers", Some(token), given).await;
    assert_eq!(status, 201, "{added}");
    let (_, models) = server.call(Method::GET, "/api/models", Some(token), None).await;
    assert_eq!(models[0]["name"], "home/llama-3.1-8b");
    assert_eq!(models[0]["configured_by"], "Ada");
    assert_eq!((models[1]["strength"].as_str(), models[1]["context_window"].as_i64()), (Some("fast"), Some(2048)));
}

/// The Anthropic Messages protocol: the same turn semantics over its own wire format.
mod anthropic {
    use super::*;

    async fn start(api_key: Option<&str>) -> Chat {
        let options = Options { api_key: api_key.map(str::to_owned), ..Options::default() };
        let model = ScriptedModel::start_with(options).await.unwrap();
        Chat::start_kind("anthropic", Sandbox::new(), model, api_key).await
    }

    #[tokio::test]
    async fn a_reply_streams_thinking_is_dropped_and_a_tool_round_trip_lands() {
        let chat = start(Some("ant-key")).await;
        chat.model.push(Reply {
            thinking: Some("Let me think.".into()),
            chunk_chars: 2,
            ..Reply::text("Hello from Claude.")
        });
        let mut socket = chat.socket().await;
        let session = chat.new_session(json!({})).await;
        chat.send(&session, "hi").await;
        let events = socket.until_turn_end().await;
        assert_eq!(tokens(&events), "Hello from Claude.", "thinking is not shown");
        let history = chat.finished(&session).await;
        assert_eq!(
            (history[1]["text"].as_str(), history[1]["status"].as_str()),
            (Some("Hello from Claude."), Some("done"))
        );
        let first = &chat.model.requests()[0];
        assert_eq!(first.path, "/v1/messages");
        assert_eq!(first.authorization.as_deref(), Some("ant-key"), "the key goes in x-api-key");
        assert!(first.body["system"].as_str().unwrap().contains("Skald"));
        let user_id = first.body["metadata"]["user_id"].as_str().unwrap();
        assert!(user_id.len() == 32 && first.body["system"].as_str().unwrap().contains(user_id), "{}", first.body);

        let call = ScriptedCall { split: 4, ..ScriptedCall::new("current_time", json!({ "timezone": "Asia/Tokyo" })) };
        chat.model.push(Reply::tool_calls([call]));
        chat.model.push(Reply::text("Evening in Tokyo."));
        chat.send(&session, "time in Tokyo?").await;
        let events = socket.until_turn_end().await;
        assert_eq!(of_type(&events, "tool_call_finished")[0]["status"], "ok");
        let history = chat.finished(&session).await;
        let tool = history.iter().find(|m| m["role"] == "tool").unwrap();
        assert!(tool["text"].as_str().unwrap().contains("Asia/Tokyo"), "{tool}");
        assert_eq!(history.last().unwrap()["text"], "Evening in Tokyo.");
        // The result went back as a tool_result block bound to the tool_use id.
        let last = chat.model.requests().last().unwrap().body.clone();
        let messages = last["messages"].as_array().unwrap();
        let use_id = &messages[messages.len() - 2]["content"][0]["id"];
        assert_eq!(messages[messages.len() - 1]["content"][0]["tool_use_id"], *use_id);
    }

    #[tokio::test]
    async fn stop_a_refused_key_a_rate_limit_and_a_dead_provider_each_end_clearly() {
        let chat = start(Some("ant-key")).await;
        chat.stop_mid_stream().await;

        chat.model.push(Reply { retry_after: Some(0), times: 10, ..Reply::status(429) });
        let last = one_turn(&chat).await;
        assert_eq!(last["error_code"], "provider_rate_limited");

        let (_, providers) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
        let path = format!("/api/providers/{}", providers[0]["id"].as_str().unwrap());
        let (status, _) =
            chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(json!({ "api_key": "nope" }))).await;
        assert_eq!(status, 204);
        chat.model.reset();
        let last = one_turn(&chat).await;
        assert_eq!(last["error_code"], "provider_auth");
        assert_eq!(chat.model.request_count(), 1, "a refused key is not retried");

        let patch = json!({ "base_url": format!("http://127.0.0.1:{DEAD_PORT}/v1") });
        assert_eq!(chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(patch)).await.0, 204);
        let last = one_turn(&chat).await;
        assert_eq!(last["error_code"], "provider_unavailable");
    }
}

/// Ollama's native NDJSON protocol: the same turn semantics over its own wire format.
mod ollama {
    use super::*;

    #[tokio::test]
    async fn a_reply_streams_and_a_tool_round_trip_lands() {
        let chat = Chat::start_kind("ollama", Sandbox::new(), ScriptedModel::start().await, None).await;
        let (_, models) = chat.server.call(Method::GET, "/api/models", Some(&chat.token), None).await;
        assert_eq!(models.as_array().unwrap().len(), 3, "listed from /api/tags: {models}");
        chat.model.push(Reply { chunk_chars: 3, ..Reply::text("Hello from Ollama.") });
        let mut socket = chat.socket().await;
        let session = chat.new_session(json!({})).await;
        chat.send(&session, "hi").await;
        let events = socket.until_turn_end().await;
        assert_eq!(tokens(&events), "Hello from Ollama.");
        assert_eq!(chat.model.requests()[0].path, "/api/chat");

        chat.model.push(Reply::tool_calls([
            ScriptedCall::new("current_time", json!({ "timezone": "Europe/Oslo" })),
            ScriptedCall::new("current_time", json!({ "timezone": "Africa/Lagos" })),
        ]));
        chat.model.push(Reply::text("Two clocks."));
        chat.send(&session, "Oslo and Lagos?").await;
        socket.until_turn_end().await;
        let history = chat.finished(&session).await;
        let results: Vec<&Value> = history.iter().filter(|m| m["role"] == "tool").collect();
        assert_eq!(results.len(), 2);
        assert!(results[0]["text"].as_str().unwrap().contains("Europe/Oslo"));
        assert!(results[1]["text"].as_str().unwrap().contains("Africa/Lagos"));
        assert_eq!(history.last().unwrap()["text"], "Two clocks.");
        let last = chat.model.requests().last().unwrap().body.clone();
        let messages = last["messages"].as_array().unwrap();
        assert_eq!(messages[messages.len() - 1]["tool_name"], "current_time");
        assert_eq!(messages[messages.len() - 3]["tool_calls"][1]["function"]["arguments"]["timezone"], "Africa/Lagos");
    }

    #[tokio::test]
    async fn stop_a_refused_key_a_rate_limit_and_a_dead_provider_each_end_clearly() {
        let chat = Chat::start_kind("ollama", Sandbox::new(), ScriptedModel::start().await, None).await;
        chat.stop_mid_stream().await;

        // A proxy in front of Ollama that refuses the key.
        chat.model.reset();
        chat.model.push(Reply { times: 10, ..Reply::status(401) });
        assert_eq!(one_turn(&chat).await["error_code"], "provider_auth");
        assert_eq!(chat.model.request_count(), 1, "a refused key is not retried");

        chat.model.reset();
        chat.model.push(Reply { retry_after: Some(0), times: 10, ..Reply::status(429) });
        assert_eq!(one_turn(&chat).await["error_code"], "provider_rate_limited");
        assert_eq!(chat.model.request_count(), 4);

        let (_, providers) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
        let path = format!("/api/providers/{}", providers[0]["id"].as_str().unwrap());
        let dead_port = DEAD_PORT;
        let patch = json!({ "base_url": format!("http://127.0.0.1:{dead_port}") });
        assert_eq!(chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(patch)).await.0, 204);
        assert_eq!(one_turn(&chat).await["error_code"], "provider_unavailable");
    }
}

#[tokio::test]
async fn a_daily_usage_cap_stops_further_turns_and_resets_the_next_day() {
    let mut sandbox = Sandbox::new();
    sandbox.env.push(("SKALD_TEST_TODAY".into(), "2026-11-30".into()));
    let chat = Chat::start_in(sandbox, ScriptedModel::start().await, None).await;
    let cap = json!({ "usage_cap_tokens": 100 });
    assert_eq!(chat.server.call(Method::PATCH, "/api/roles/admin", Some(&chat.token), Some(cap)).await.0, 200);
    chat.model.push(Reply { prompt_tokens: Some(70), completion_tokens: Some(40), ..Reply::text("A long answer.") });
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "first").await;
    assert_eq!(chat.finished(&session).await.last().unwrap()["status"], "done");

    let path = format!("/api/sessions/{session}/messages");
    let (status, refused) = chat.server.post(&path, Some(&chat.token), json!({ "text": "second" })).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (429, Some("usage_cap")), "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("110 of the 100") && message.contains("resets tomorrow"), "{message}");
    assert_eq!(chat.model.request_count(), 1, "the refused turn sent nothing");

    // The administrator's view: counts and tokens, no words.
    let (_, usage) = chat.server.call(Method::GET, "/api/usage", Some(&chat.token), None).await;
    assert_eq!((usage[0]["name"].as_str(), usage[0]["today_tokens"].as_i64()), (Some("Ada"), Some(110)));
    assert_eq!(usage[0]["today_requests"], 1);
    assert!(!usage.to_string().contains("first"), "{usage}");

    // The next day the cap starts over.
    let Chat { server, model, .. } = chat;
    let mut sandbox = server.stop("TERM");
    sandbox.env = vec![("SKALD_TEST_TODAY".into(), "2026-12-01".into())];
    let server = Server::start_in(sandbox);
    let (_, login) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let token = login["token"].as_str().unwrap();
    let (status, body) = server.post(&path, Some(token), json!({ "text": "a new day" })).await;
    assert_eq!(status, 202, "{body}");
    let (_, usage) = server.call(Method::GET, "/api/usage", Some(token), None).await;
    assert!(usage[0]["month_tokens"].as_i64().unwrap() >= 110, "{usage}");
    drop(model);
}

#[tokio::test]
async fn when_the_chosen_provider_is_down_the_turn_falls_back_to_another_the_role_allows() {
    let chat = Chat::start().await;
    let dead_port = DEAD_PORT;
    // The main agent asks for a balanced model; only the dead provider has one.
    let (_, providers) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
    let path = format!("/api/providers/{}", providers[0]["id"].as_str().unwrap());
    let only_fast = json!({ "models": [{ "id": "scripted-fast", "strength": "fast" }] });
    assert_eq!(chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(only_fast)).await.0, 204);
    let primary = json!({ "name": "primary", "kind": "openai", "base_url": format!("http://127.0.0.1:{dead_port}/v1"),
                          "models": [{ "id": "huge", "strength": "balanced" }] });
    assert_eq!(chat.server.post("/api/providers", Some(&chat.token), primary).await.0, 201);
    chat.model.push(Reply::text("The backup answers."));
    let mut socket = chat.socket().await;
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "anyone there?").await;
    let events = socket.until_turn_end().await;
    assert_eq!(events[0]["model"], "primary/huge");
    let fallback = of_type(&events, "fallback");
    assert_eq!(fallback.len(), 1, "{events:?}");
    assert_eq!(
        (fallback[0]["to"].as_str(), fallback[0]["reason"].as_str()),
        (Some("scripted/scripted-fast"), Some("provider_unavailable"))
    );
    let history = chat.finished(&session).await;
    let last = history.last().unwrap();
    assert_eq!(
        (last["text"].as_str(), last["model"].as_str()),
        (Some("The backup answers."), Some("scripted/scripted-fast"))
    );
    let (_, requests) =
        chat.server.call(Method::GET, &format!("/api/sessions/{session}/requests"), Some(&chat.token), None).await;
    let outcomes: Vec<(&str, &str)> = requests
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["provider"].as_str().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(outcomes, [("primary", "error"), ("scripted", "ok")]);

    // A conversation pinned to the dead model does not fall back: the person chose it.
    let pinned = chat.new_session(json!({ "model": "primary/huge" })).await;
    chat.send(&pinned, "still there?").await;
    assert_eq!(chat.finished(&pinned).await.last().unwrap()["error_code"], "provider_unavailable");
}

#[tokio::test]
async fn model_servers_running_on_this_computer_are_detected_for_the_setup_flow() {
    let ollama = ScriptedModel::start().await;
    let lmstudio = ScriptedModel::start().await;
    let nothing = DEAD_PORT;
    let ports = format!("ollama={},lmstudio={},llamacpp={nothing}", port_of(&ollama), port_of(&lmstudio));
    let mut sandbox = Sandbox::new();
    sandbox.env.push(("SKALD_TEST_DETECT_PORTS".into(), ports));
    let server = Server::start_in(sandbox);
    let (_, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let token = setup["token"].as_str().unwrap();
    let (status, found) = server.call(Method::GET, "/api/providers/detect", Some(token), None).await;
    assert_eq!(status, 200);
    let found: Vec<(&str, &str)> =
        found.as_array().unwrap().iter().map(|f| (f["label"].as_str().unwrap(), f["kind"].as_str().unwrap())).collect();
    assert_eq!(found, [("Ollama", "ollama"), ("LM Studio", "openai")], "llama.cpp's port had nothing");
}

fn port_of(model: &ScriptedModel) -> u16 {
    model.url().rsplit(':').next().unwrap().parse().unwrap()
}

/// Accepts connections on 127.0.0.1 and never answers; counts them.
fn silent_listener() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(stream);
        }
    });
    (port, accepted)
}

#[tokio::test]
async fn a_provider_that_never_answers_ends_the_turn_instead_of_hanging() {
    let mut sandbox = Sandbox::new();
    sandbox.env.push(("SKALD_TEST_PROVIDER_STALL_MS".into(), "400".into()));
    let chat = Chat::start_in(sandbox, ScriptedModel::start().await, None).await;
    let (port, accepted) = silent_listener();
    let (_, providers) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
    let path = format!("/api/providers/{}", providers[0]["id"].as_str().unwrap());
    let patch = json!({ "base_url": format!("http://127.0.0.1:{port}/v1") });
    assert_eq!(chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(patch)).await.0, 204);
    let last = one_turn(&chat).await;
    assert_eq!(last["error_code"], "provider_stalled", "{last}");
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 4, "the first try and three retries");
}

#[tokio::test]
async fn provider_requests_never_go_through_a_proxy_from_the_environment() {
    let (proxy_port, contacted) = silent_listener();
    let proxy = format!("http://127.0.0.1:{proxy_port}");
    let mut sandbox = Sandbox::new();
    for name in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
        sandbox.env.push((name.into(), proxy.clone()));
    }
    sandbox.env.push(("NO_PROXY".into(), String::new()));
    sandbox.env.push(("no_proxy".into(), String::new()));
    let chat = Chat::start_in(sandbox, ScriptedModel::start().await, None).await;
    chat.model.push(Reply::text("Straight from the model."));
    let last = one_turn(&chat).await;
    assert_eq!(last["text"], "Straight from the model.");
    assert_eq!(contacted.load(std::sync::atomic::Ordering::SeqCst), 0, "the proxy saw nothing");
}

/// Providers cache prompt prefixes per account (issue 22 #13): two people on one provider
/// and one key share no prefix — their system prompts differ within the first 64 bytes,
/// and each request names its person's own cache key — while each request still composes
/// again byte for byte.
#[tokio::test]
async fn two_people_on_one_provider_share_no_prompt_prefix_and_each_request_rebuilds() {
    let chat = Chat::start().await;
    let (_, added) = chat.server.post("/api/users", Some(&chat.token), json!({ "name": "Bo", "role": "member" })).await;
    let enrol =
        json!({ "name": "Bo", "enrolment_code": added["enrolment_code"], "password": "maple harbour seventeen" });
    let (_, enrolled) = chat.server.post("/api/enrol", None, enrol).await;
    let bo = enrolled["token"].as_str().unwrap().to_owned();
    let mut sessions = Vec::new();
    for (token, text) in [(chat.token.as_str(), "Hello from Ada"), (bo.as_str(), "Hello from Bo")] {
        chat.model.push(Reply::text("Hi."));
        let (_, session) = chat.server.post("/api/sessions", Some(token), json!({})).await;
        let id = session["id"].as_str().unwrap().to_owned();
        let path = format!("/api/sessions/{id}/messages");
        assert_eq!(chat.server.post(&path, Some(token), json!({ "text": text })).await.0, 202);
        finished(&chat.server, token, &id, WAIT).await;
        sessions.push((token, id));
    }
    let sent = chat.model.requests();
    assert_eq!(sent.len(), 2);
    let system = |i: usize| sent[i].body["messages"][0]["content"].as_str().unwrap().as_bytes()[..64].to_vec();
    assert_ne!(system(0), system(1), "the first 64 bytes of the system prompts differ");
    assert_eq!(
        crate::support::unprefixed(&sent[0].body["messages"][0]["content"]),
        crate::support::unprefixed(&sent[1].body["messages"][0]["content"])
    );
    let keys: Vec<&str> = sent.iter().map(|r| r.body["prompt_cache_key"].as_str().unwrap()).collect();
    assert_ne!(keys[0], keys[1]);
    assert!(!keys.iter().any(|k| k.contains(&chat.token) || k.contains(&bo)), "the key is no token");

    for ((token, session), original) in sessions.iter().zip(&sent) {
        let path = format!("/api/sessions/{session}/requests");
        let (_, records) = chat.server.call(Method::GET, &path, Some(token), None).await;
        let id = records[0]["id"].as_i64().unwrap();
        let (status, rebuilt) = chat.server.call(Method::GET, &format!("{path}/{id}/rebuild"), Some(token), None).await;
        assert_eq!(status, 200, "{rebuilt}");
        assert_eq!(rebuilt["raw"].as_str().unwrap(), original.raw, "rebuilt differently");
    }
    // A person's prefix stays theirs: the next request, after a new login, starts the same.
    let (_, login) =
        chat.server.post("/api/login", None, json!({ "name": "Bo", "password": "maple harbour seventeen" })).await;
    let again = login["token"].as_str().unwrap();
    chat.model.push(Reply::text("Hi again."));
    let (_, session) = chat.server.post("/api/sessions", Some(again), json!({})).await;
    let id = session["id"].as_str().unwrap();
    assert_eq!(
        chat.server.post(&format!("/api/sessions/{id}/messages"), Some(again), json!({ "text": "again" })).await.0,
        202
    );
    finished(&chat.server, again, id, WAIT).await;
    assert_eq!(chat.model.requests()[2].body["prompt_cache_key"], keys[1]);
}

/// Golden test (§8.1): stored requests are composed again byte for byte, even after the
/// agent's prompt and the tool set changed.
#[tokio::test]
async fn a_stored_request_is_rebuilt_byte_for_byte_after_the_prompt_and_tools_changed() {
    let chat = Chat::start().await;
    chat.model.push(Reply::tool_calls([ScriptedCall::new("current_time", json!({ "timezone": "Asia/Tokyo" }))]));
    chat.model.push(Reply::text("Evening."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "What time is it in Tokyo?").await;
    chat.finished(&session).await;
    chat.model.push(Reply::text("You are welcome."));
    chat.send(&session, "Thanks!").await;
    chat.finished(&session).await;
    let sent: Vec<String> = chat.model.requests().iter().map(|r| r.raw.clone()).collect();
    assert_eq!(sent.len(), 3);

    // The prompt and the tools change after the fact.
    let agent = chat.server.data_dir().join("agents/main/AGENT.md");
    std::fs::write(&agent, "You are now a pirate.").unwrap();
    let no_tools = json!({ "tools": ["nothing_matches"] });
    assert_eq!(chat.server.call(Method::PATCH, "/api/roles/admin", Some(&chat.token), Some(no_tools)).await.0, 200);

    let (_, records) =
        chat.server.call(Method::GET, &format!("/api/sessions/{session}/requests"), Some(&chat.token), None).await;
    let ids: Vec<i64> = records.as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), 3);
    for (id, original) in ids.iter().zip(&sent) {
        let path = format!("/api/sessions/{session}/requests/{id}/rebuild");
        let (status, rebuilt) = chat.server.call(Method::GET, &path, Some(&chat.token), None).await;
        assert_eq!(status, 200, "{rebuilt}");
        assert_eq!(rebuilt["raw"].as_str().unwrap(), original, "request {id} rebuilt differently");
    }

    // The next turn does use the new prompt and no tools, once Ada has seen that the
    // agent was edited outside Skald (§3).
    assert_eq!(crate::support::accept_holds(&chat.server, &chat.token).await, 1);
    chat.model.push(Reply::text("Arr."));
    chat.send(&session, "Hello?").await;
    chat.finished(&session).await;
    let latest = chat.model.requests().last().unwrap().body.clone();
    assert_eq!(crate::support::unprefixed(&latest["messages"][0]["content"]), "You are now a pirate.");
    assert!(latest.get("tools").is_none());
    let path = format!("/api/sessions/{session}/requests/999/rebuild");
    assert_eq!(chat.server.call(Method::GET, &path, Some(&chat.token), None).await.0, 404);
}

/// Compaction (§8.6): under a small context budget older turns are summarised; later
/// requests carry the summary instead of them, a tool call never loses its result, and the
/// full history stays readable.
#[tokio::test]
async fn a_long_conversation_is_compacted_without_separating_a_call_from_its_result() {
    let chat = Chat::start().await;
    // The request sizes below assume the one tool.
    let one_tool = json!({ "tools": ["current_time"] });
    assert_eq!(chat.server.call(Method::PATCH, "/api/roles/admin", Some(&chat.token), Some(one_tool)).await.0, 200);
    let small = json!({ "name": "small", "kind": "openai", "base_url": chat.model.openai_base(),
                        "models": [{ "id": "scripted-small", "context_window": 1200 }] });
    assert_eq!(chat.server.post("/api/providers", Some(&chat.token), small).await.0, 201);
    let said = |marker: &str| format!("{marker} {}", "and so on ".repeat(40));
    chat.model.push(Reply::tool_calls([ScriptedCall::new("current_time", json!({}))]));
    chat.model.push(Reply::text(said("reply-one")));
    chat.model.push(Reply::text(said("reply-two")));
    chat.model.push(Reply::text(said("reply-three")));
    chat.model.push(Reply::text("SUMMARY-OF-EARLIER: they talked about time."));
    chat.model.push(Reply::text(said("reply-four")));
    chat.model.push(Reply::text(said("reply-five")));
    let session = chat.new_session(json!({ "model": "small/scripted-small" })).await;
    for marker in ["alpha", "bravo", "charlie", "delta", "echo"] {
        chat.send(&session, &said(marker)).await;
        let last = chat.finished(&session).await.pop().unwrap();
        assert_eq!(last["status"], "done", "{last}");
    }

    let requests: Vec<Value> = chat.model.requests().into_iter().map(|r| r.body).collect();
    let firsts: Vec<String> = requests
        .iter()
        .map(|r| crate::support::unprefixed(&r["messages"][0]["content"]).chars().take(12).collect())
        .collect();
    assert_eq!(requests.len(), 7, "{firsts:?}");
    let summarising: Vec<usize> = (0..requests.len())
        .filter(|&i| crate::support::unprefixed(&requests[i]["messages"][0]["content"]).starts_with("You summarise"))
        .collect();
    assert_eq!(summarising, [4], "one summary, made when the fourth turn would not fit");
    let transcript = requests[4]["messages"][1]["content"].as_str().unwrap();
    assert!(transcript.contains("Person: alpha") && transcript.contains("current_time returned"), "{transcript}");
    assert!(!transcript.contains("delta"), "the latest turn is kept, not summarised");
    for later in &requests[5..] {
        let text = later["messages"].to_string();
        assert!(text.contains("SUMMARY-OF-EARLIER"), "the summary stands in: {text}");
        assert!(!text.contains("alpha") && !text.contains("bravo"), "older turns are gone from the request");
        assert!(!text.contains("reply-two"), "the last summarised message too: {text}");
        assert!(text.contains("charlie") && text.contains("delta"));
    }
    // In every request, each tool result follows the assistant message that asked for it.
    for request in &requests {
        let messages = request["messages"].as_array().unwrap();
        for (i, message) in messages.iter().enumerate().filter(|(_, m)| m["role"] == "tool") {
            let id = &message["tool_call_id"];
            let asked = messages[..i].iter().rev().find(|m| m["role"] == "assistant").unwrap();
            assert!(asked["tool_calls"].as_array().unwrap().iter().any(|c| &c["id"] == id), "{request}");
        }
    }
    // The whole history is still there, and the summary request is on record.
    let history = chat.history(&session).await;
    assert!(history[0]["text"].as_str().unwrap().starts_with("alpha"));
    let (_, records) =
        chat.server.call(Method::GET, &format!("/api/sessions/{session}/requests"), Some(&chat.token), None).await;
    let records = records.as_array().unwrap();
    assert_eq!(records.iter().filter(|r| r["purpose"] == "compaction").count(), 1, "{records:?}");
    // A request made with the summary is rebuilt byte for byte too.
    let raw = chat.model.requests()[5].raw.clone();
    let id = records.iter().filter(|r| r["purpose"] == "turn").nth(4).unwrap()["id"].as_i64().unwrap();
    let path = format!("/api/sessions/{session}/requests/{id}/rebuild");
    let (_, rebuilt) = chat.server.call(Method::GET, &path, Some(&chat.token), None).await;
    assert_eq!(rebuilt["raw"].as_str().unwrap(), raw);

    // The first reply answered again: a turn the summary stands in for, which a turn's
    // start does not read until asked. The new version reads the message it answers and
    // nothing after it, with no summary (it would speak of what came after).
    chat.model.push(Reply::text("reply-one, again"));
    let first = history[0]["turn_id"].clone();
    let path = format!("/api/sessions/{session}/regenerate");
    let (status, body) = chat.server.call(Method::POST, &path, Some(&chat.token), Some(json!({ "turn": first }))).await;
    assert_eq!(status, 202, "{body}");
    let last = chat.finished(&session).await.pop().unwrap();
    assert_eq!((last["status"].as_str(), last["text"].as_str()), (Some("done"), Some("reply-one, again")), "{last}");
    let again = chat.model.requests().last().unwrap().body["messages"].to_string();
    assert!(again.contains("alpha") && !again.contains("bravo"), "{again}");
    assert!(!again.contains("SUMMARY-OF-EARLIER"), "{again}");
}

#[tokio::test]
async fn the_scratchpad_keeps_working_notes_and_notify_reaches_the_persons_windows() {
    let chat = Chat::start().await;
    chat.model.push(Reply::tool_calls([
        ScriptedCall::new("scratchpad", json!({ "action": "write", "text": "plan: A" })),
        ScriptedCall::new("notify", json!({ "title": "Tea is ready", "body": "Five minutes are up." })),
    ]));
    chat.model.push(Reply::tool_calls([ScriptedCall::new("scratchpad", json!({ "action": "append", "text": "B" }))]));
    chat.model.push(Reply::tool_calls([ScriptedCall::new("scratchpad", json!({ "action": "read" }))]));
    chat.model.push(Reply::text("Noted."));
    let mut socket = chat.socket().await;
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "Plan and remind me").await;
    let events = socket.until_turn_end().await;
    let notified = of_type(&events, "notify");
    assert_eq!(notified.len(), 1, "{events:?}");
    assert_eq!(
        (notified[0]["title"].as_str(), notified[0]["body"].as_str()),
        (Some("Tea is ready"), Some("Five minutes are up."))
    );
    let history = chat.finished(&session).await;
    let results: Vec<&str> =
        history.iter().filter(|m| m["role"] == "tool").map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(results.last().copied(), Some("plan: A\nB"), "{results:?}");
    // Another conversation has its own, empty scratchpad.
    chat.model.push(Reply::tool_calls([ScriptedCall::new("scratchpad", json!({ "action": "read" }))]));
    chat.model.push(Reply::text("Empty."));
    let other = chat.new_session(json!({})).await;
    chat.send(&other, "What is on your scratchpad?").await;
    let history = chat.finished(&other).await;
    assert_eq!(history.iter().find(|m| m["role"] == "tool").unwrap()["text"], "(empty)");
}

/// Checks a turn whose model made the same call three times: the first ran, the second
/// was not run and the model was told why, the third ended the turn. Its closing row.
fn told_once_then_stopped(history: &[Value]) -> &Value {
    let results: Vec<&Value> = history.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(results.len(), 2, "{history:?}");
    assert_eq!(results[0]["status"], "ok", "the first call runs");
    assert_eq!(results[1]["status"], "denied", "the same call again is not run");
    assert!(results[1]["text"].as_str().unwrap().contains("exactly the call you just made"), "{}", results[1]);
    let last = history.last().unwrap();
    assert_eq!((last["status"].as_str(), last["error_code"].as_str()), (Some("error"), Some("repeated_call")));
    last
}

#[tokio::test]
async fn a_model_repeating_the_same_call_is_told_once_then_stopped() {
    let chat = Chat::start().await;
    let same = || Reply::tool_calls([ScriptedCall::new("current_time", json!({ "timezone": "UTC" }))]);
    for _ in 0..3 {
        chat.model.push(same());
    }
    chat.model.push(Reply::text("never asked for"));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "What time is it?").await;
    let history = chat.finished(&session).await;

    let last = told_once_then_stopped(&history);
    assert!(last["error_message"].as_str().unwrap().contains("current_time"), "{last}");
    assert_eq!(chat.model.request_count(), 3, "no request after the model was stopped");
}

#[tokio::test]
async fn the_same_call_after_other_work_is_no_repeat() {
    let chat = Chat::start().await;
    let call = |zone: &str| Reply::tool_calls([ScriptedCall::new("current_time", json!({ "timezone": zone }))]);
    chat.model.push(call("UTC"));
    chat.model.push(call("Asia/Tokyo"));
    chat.model.push(call("UTC"));
    chat.model.push(Reply::text("Done."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "Compare the times").await;
    let history = chat.finished(&session).await;
    let statuses: Vec<&str> =
        history.iter().filter(|m| m["role"] == "tool").map(|m| m["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["ok", "ok", "ok"]);
    assert_eq!(history.last().unwrap()["status"], "done");
}

/// Each window a person opens has its own connection to their file, and a turn starts
/// from the conversation kept in memory: a turn taken in one window must be in the next
/// turn's context in another.
#[tokio::test]
async fn a_turn_in_one_window_is_in_the_next_turn_of_another() {
    let chat = Chat::start().await;
    let (status, login) = chat.server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 200, "{login}");
    let other = login["token"].as_str().unwrap().to_owned();
    let session = chat.new_session(json!({})).await;
    chat.model.push(Reply::text("first reply"));
    chat.send(&session, "from the first window").await;
    chat.finished(&session).await;

    chat.model.push(Reply::text("second reply"));
    let path = format!("/api/sessions/{session}/messages");
    let (status, body) = chat.server.post(&path, Some(&other), json!({ "text": "from the second window" })).await;
    assert_eq!(status, 202, "{body}");
    finished(&chat.server, &other, &session, WAIT).await;

    chat.model.push(Reply::text("third reply"));
    chat.send(&session, "back in the first window").await;
    chat.finished(&session).await;
    let requests = chat.model.requests();
    let said: Vec<&str> = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        said,
        ["from the first window", "first reply", "from the second window", "second reply", "back in the first window"]
    );
}

/// Each person's live events have a queue of their own (§8.1): ten people each with twenty
/// 500-token replies streaming at once, and every reply reaches its person's socket whole
/// — every token, in order, and its end — whatever the others' load.
#[tokio::test]
async fn ten_people_with_twenty_replies_each_at_once_receive_every_reply_whole() {
    const PEOPLE: usize = 10;
    const REPLIES: usize = 20;
    const TOKENS: usize = 500;
    let chat = Chat::start().await;
    let mut tokens = vec![chat.token.clone()];
    for n in 1..PEOPLE {
        let name = format!("Person{n}");
        let (_, added) =
            chat.server.post("/api/users", Some(&chat.token), json!({ "name": name, "role": "member" })).await;
        let enrol =
            json!({ "name": name, "enrolment_code": added["enrolment_code"], "password": "maple harbour seventeen" });
        let (status, enrolled) = chat.server.post("/api/enrol", None, enrol).await;
        assert_eq!(status, 201, "{enrolled}");
        tokens.push(enrolled["token"].as_str().unwrap().to_owned());
    }
    chat.model.push_all((0..PEOPLE * REPLIES).map(|_| Reply { tokens: Some(TOKENS), ..Reply::default() }));
    let mut sockets = Vec::new();
    for token in &tokens {
        sockets.push(Socket::open(&chat.server, token).await);
    }
    let server = &chat.server;
    // Every conversation first, then every message at once.
    let mut sessions = Vec::new();
    for token in &tokens {
        let mut mine = Vec::new();
        for _ in 0..REPLIES {
            let (_, session) = server.post("/api/sessions", Some(token), json!({})).await;
            mine.push(session["id"].as_str().unwrap().to_owned());
        }
        sessions.push(mine);
    }
    let sends = tokens.iter().zip(&sessions).flat_map(|(token, mine)| {
        mine.iter().map(move |id| async move {
            let path = format!("/api/sessions/{id}/messages");
            assert_eq!(server.post(&path, Some(token), json!({ "text": "count" })).await.0, 202);
        })
    });
    futures_util::future::join_all(sends).await;
    let readers = sockets.into_iter().map(|mut socket| async move {
        let (mut texts, mut ended) = (std::collections::HashMap::<String, String>::new(), 0);
        let mut last_seq = std::collections::HashMap::<String, u64>::new();
        while ended < REPLIES {
            let event = socket.next_event().await;
            assert_ne!(event["type"], "lagged", "a socket fell behind");
            let turn = event["turn"].as_str().unwrap_or_default().to_owned();
            if let Some(seq) = event["seq"].as_u64() {
                let before = last_seq.insert(turn.clone(), seq).unwrap_or(0);
                assert_eq!(seq, before + 1, "events of {turn} in order, none missing");
            }
            match event["type"].as_str() {
                Some("token") => texts.entry(turn).or_default().push_str(event["text"].as_str().unwrap()),
                Some("turn_ended") => {
                    assert_eq!(event["status"], "done", "{event}");
                    ended += 1;
                }
                _ => {}
            }
        }
        texts
    });
    let received = futures_util::future::join_all(readers).await;
    for ((token, mine), texts) in tokens.iter().zip(&sessions).zip(received) {
        assert_eq!(texts.len(), REPLIES);
        for id in mine {
            let history = finished(server, token, id, WAIT).await;
            let reply = history.last().unwrap();
            let turn = reply["turn_id"].as_str().unwrap_or_default();
            let streamed = texts.get(turn).map(String::as_str).unwrap_or_default();
            assert_eq!(streamed, reply["text"].as_str().unwrap(), "every token of {turn} arrived");
        }
    }
}

#[tokio::test]
async fn a_conversation_is_pinned_or_archived_and_only_what_is_named_changes() {
    let chat = Chat::start().await;
    let kept = chat.new_session(json!({})).await;
    let other = chat.new_session(json!({})).await;
    let patch = |id: &str, body: Value| {
        let path = format!("/api/sessions/{id}");
        let (server, token) = (&chat.server, chat.token.clone());
        async move { server.call(Method::PATCH, &path, Some(&token), Some(body)).await }
    };
    assert_eq!(patch(&kept, json!({ "pinned": true })).await.0, 204);
    assert_eq!(patch(&other, json!({ "archived": true })).await.0, 204);
    let flags = |list: &Value, id: &str| {
        let row = list.as_array().unwrap().iter().find(|s| s["id"] == id).unwrap().clone();
        (row["pinned"].as_bool(), row["archived"].as_bool())
    };
    let (_, list) = chat.server.call(Method::GET, "/api/sessions", Some(&chat.token), None).await;
    assert_eq!(flags(&list, &kept), (Some(true), Some(false)));
    assert_eq!(flags(&list, &other), (Some(false), Some(true)), "archived, still listed for the page to put away");
    // Only what is named changes: restoring keeps the title and the other flag.
    assert_eq!(patch(&kept, json!({ "title": "Kept" })).await.0, 204);
    assert_eq!(patch(&other, json!({ "archived": false })).await.0, 204);
    let (_, one) = chat.server.call(Method::GET, &format!("/api/sessions/{kept}"), Some(&chat.token), None).await;
    assert_eq!((one["title"].as_str(), one["pinned"].as_bool()), (Some("Kept"), Some(true)));
    assert_eq!(patch("chat_nope", json!({ "pinned": true })).await.0, 404);
    let (status, body) = patch(&kept, json!({ "pinned": "yes" })).await;
    assert_eq!(status, 400, "{body}");
}
