//! The OpenAI-compatible provider (§9) against a real model server nobody here wrote:
//! llama-cpp-python's `python -m llama_cpp.server`, from the environment
//! tests/fetch-llama-server.sh builds, serving the test model (SmolLM2-135M-Instruct, from
//! tests/fetch-test-model.sh) on 127.0.0.1 in its `chatml-function-calling` format.
//! Skald is set up as an administrator would, through its own routes, and everything a
//! person sees is read back from them.
//!
//! `SKALD_TEST_LLAMA_SERVER` names the environment's bin folder and `SKALD_TEST_GGUF` the
//! model; without them these tests say why and pass without running (test.sh sets them
//! when the environment is already built).

use std::net::TcpListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use super::{PASSWORD, Socket, finished, of_type, tokens};
use crate::support::{PeerServer, Server};

/// The name the server lists its one model under.
const ALIAS: &str = "smollm2";

/// A message whose answer is long enough to be cut off mid-stream.
const STORY: &str = "Write a long story about a lighthouse keeper and her cat.";

/// The port llama.cpp's servers listen on unless told otherwise, where setup looks.
const LLAMA_CPP_PORT: u16 = 8080;

/// The environment's bin folder and the model, or `None` (and why) to skip.
fn peer() -> Option<(PathBuf, PathBuf)> {
    // Set and empty is unset: `tests/fetch-llama-server.sh --cached` prints nothing until
    // the environment is built.
    let set = |name| std::env::var_os(name).filter(|value| !value.is_empty());
    let (Some(bin), Some(gguf)) = (set("SKALD_TEST_LLAMA_SERVER"), set("SKALD_TEST_GGUF")) else {
        eprintln!(
            "skipped: SKALD_TEST_LLAMA_SERVER and SKALD_TEST_GGUF are not both set (run tests/fetch-llama-server.sh \
             and tests/fetch-test-model.sh and set them to what they print)"
        );
        return None;
    };
    let (bin, gguf) = (PathBuf::from(bin), PathBuf::from(gguf));
    assert!(
        bin.join("python").is_file(),
        "{} is missing: run tests/fetch-llama-server.sh",
        bin.join("python").display()
    );
    assert!(gguf.is_file(), "{} is missing: run tests/fetch-test-model.sh", gguf.display());
    Some((bin, gguf))
}

/// `python -m llama_cpp.server` serving the test model, killed when dropped.
struct Llama(PeerServer);

impl Llama {
    /// The server on a free port, with a context of `context` tokens.
    async fn start(context: u32) -> Option<Self> {
        let (bin, gguf) = peer()?;
        let context = context.to_string();
        let args = Self::args(gguf.to_str().unwrap(), &context);
        Some(Self(PeerServer::start(&bin.join("python"), &args, &[], "/v1/models").await))
    }

    /// The server on 127.0.0.1:8080, where setup looks for llama.cpp.
    async fn start_on_llama_cpp_port() -> Option<Self> {
        let (bin, gguf) = peer()?;
        if let Err(err) = TcpListener::bind(("127.0.0.1", LLAMA_CPP_PORT)) {
            panic!(
                "port {LLAMA_CPP_PORT} of 127.0.0.1 is taken on this machine ({err}); setup's detection of a \
                 llama.cpp server cannot be tested until whatever listens there stops"
            );
        }
        let args = Self::args(gguf.to_str().unwrap(), "4096");
        match PeerServer::start_on(LLAMA_CPP_PORT, &bin.join("python"), &args, &[], "/v1/models").await {
            Ok(server) => Some(Self(server)),
            Err(said) => panic!("llama_cpp.server did not start on port {LLAMA_CPP_PORT}: {said}"),
        }
    }

    /// Serving `gguf` in its function-calling chat format, with a context of `context`
    /// tokens.
    fn args<'a>(gguf: &'a str, context: &'a str) -> [&'a str; 14] {
        [
            "-m",
            "llama_cpp.server",
            "--model",
            gguf,
            "--model_alias",
            ALIAS,
            "--chat_format",
            "chatml-function-calling",
            "--n_ctx",
            context,
            "--n_threads",
            "2",
            "--seed",
            "7",
        ]
    }

    /// The OpenAI-compatible base URL, as an administrator types it.
    fn base_url(&self) -> String {
        format!("{}/v1", self.0.url)
    }

    fn said(&self) -> String {
        self.0.said()
    }

    async fn says(&self, text: &str) -> bool {
        self.0.says(text).await
    }

    fn kill(&mut self) {
        self.0.kill();
    }
}

/// Skald with an administrator who has connected `llama` as the OpenAI-compatible
/// provider `llama`, its models read from the server.
struct Skald {
    server: Server,
    token: String,
}

impl Skald {
    async fn with(llama: &Llama) -> Self {
        let server = Server::start();
        let (status, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
        assert_eq!(status, 201, "{setup}");
        let token = setup["token"].as_str().unwrap().to_owned();
        let provider = json!({ "name": "llama", "kind": "openai", "base_url": llama.base_url() });
        let (status, added) = server.post("/api/providers", Some(&token), provider).await;
        assert_eq!(status, 201, "{added}");
        let listed: Vec<&str> =
            added["models"].as_array().unwrap().iter().map(|m| m["model_id"].as_str().unwrap()).collect();
        assert_eq!(listed, [ALIAS], "the models the server lists: {added}");
        Self { server, token }
    }

    async fn session(&self) -> String {
        let body = json!({ "model": format!("llama/{ALIAS}") });
        let (status, created) = self.server.post("/api/sessions", Some(&self.token), body).await;
        assert_eq!(status, 201, "{created}");
        created["id"].as_str().unwrap().to_owned()
    }

    async fn send(&self, session: &str, text: &str) {
        let path = format!("/api/sessions/{session}/messages");
        let (status, body) = self.server.post(&path, Some(&self.token), json!({ "text": text })).await;
        assert_eq!(status, 202, "{body}");
    }

    async fn socket(&self) -> Socket {
        Socket::open(&self.server, &self.token).await
    }

    /// The session's history once its turn has ended; if it does not end in time, fails
    /// with what the model server said.
    async fn finished(&self, session: &str, llama: &Llama) -> Vec<Value> {
        let ended = tokio::time::timeout(TURN, finished(&self.server, &self.token, session, TURN * 2)).await;
        ended.unwrap_or_else(|_| {
            let said = llama.said();
            let tail = &said[said.len().saturating_sub(4000)..];
            panic!("the turn did not end in {} s; llama_cpp.server said:\n{tail}", TURN.as_secs())
        })
    }

    /// A new conversation asked for [`STORY`], once its first three tokens streamed: the
    /// socket, the session and the events so far.
    async fn story_begun(&self) -> (Socket, String, Vec<Value>) {
        let mut socket = self.socket().await;
        let session = self.session().await;
        self.send(&session, STORY).await;
        let mut seen = Vec::new();
        while of_type(&seen, "token").len() < 3 {
            let event = socket.next_event().await;
            assert_ne!(event["type"], "turn_ended", "the story ended after three tokens: {seen:?}");
            seen.push(event);
        }
        (socket, session, seen)
    }

    async fn requests(&self, session: &str) -> Value {
        let path = format!("/api/sessions/{session}/requests");
        let (status, requests) = self.server.call(Method::GET, &path, Some(&self.token), None).await;
        assert_eq!(status, 200, "{requests}");
        requests
    }
}

/// How long a turn may take: a small model on two busy cores.
const TURN: Duration = Duration::from_secs(90);

#[tokio::test]
async fn a_real_llama_cpp_server_streams_a_reply_that_is_stored() {
    let Some(llama) = Llama::start(8192).await else { return };
    let skald = Skald::with(&llama).await;
    let mut socket = skald.socket().await;
    let session = skald.session().await;
    let started = Instant::now();
    skald.send(&session, "Say hello to Ada in one short sentence.").await;

    let events = socket.until_turn_end().await;
    let streamed = tokens(&events);
    let pieces = of_type(&events, "token").len();
    eprintln!("llama_cpp.server said {streamed:?} in {pieces} pieces, {:.1} s", started.elapsed().as_secs_f64());
    let said = llama.said();
    for timing in said.lines().filter(|l| l.contains("prompt eval time") || l.contains("        eval time")) {
        eprintln!("  {}", timing.trim_start_matches("llama_perf_context_print:").trim());
    }
    assert_eq!(events[0]["type"], "turn_started", "{events:?}");
    assert_eq!(events.last().unwrap()["status"], "done", "{events:?}");
    assert!(pieces >= 2, "streamed in pieces, not at once: {events:?}");
    assert!(!streamed.trim().is_empty(), "a reply: {events:?}");

    let history = skald.finished(&session, &llama).await;
    let shape: Vec<(&str, &str)> =
        history.iter().map(|m| (m["role"].as_str().unwrap(), m["status"].as_str().unwrap())).collect();
    assert_eq!(shape, [("user", "sent"), ("assistant", "done")], "{history:?}");
    assert_eq!(history[1]["text"].as_str(), Some(streamed.as_str()), "exactly what streamed is stored");
    assert_eq!(history[1]["model"].as_str(), Some("llama/smollm2"), "{history:?}");

    let requests = skald.requests(&session).await;
    let request = &requests[0];
    assert_eq!((request["outcome"].as_str(), request["attempts"].as_i64()), (Some("ok"), Some(1)), "{requests}");
    // llama-cpp-python ignores `stream_options` and reports no usage: the record says none
    // was reported, and the person's count goes by Skald's estimate.
    assert_eq!((&request["tokens_in"], &request["tokens_out"]), (&Value::Null, &Value::Null), "{requests}");
    let (_, usage) = skald.server.call(Method::GET, "/api/usage", Some(&skald.token), None).await;
    assert!(usage[0]["today_tokens"].as_i64().unwrap() > 0, "{usage}");
}

#[tokio::test]
async fn stopping_a_real_server_mid_stream_ends_the_turn_and_the_next_one_is_answered() {
    let Some(llama) = Llama::start(8192).await else { return };
    let skald = Skald::with(&llama).await;
    let (mut socket, session, mut seen) = skald.story_begun().await;
    let path = format!("/api/sessions/{session}/stop");
    let (status, stopped) = skald.server.post(&path, Some(&skald.token), json!({})).await;
    assert_eq!((status, &stopped["stopped"]), (200, &json!(true)), "{stopped}");
    seen.extend(socket.until_turn_end().await);
    assert_eq!(seen.last().unwrap()["status"], "stopped", "{seen:?}");
    let history = skald.finished(&session, &llama).await;
    let last = history.last().unwrap();
    assert_eq!(last["status"], "stopped", "{history:?}");
    assert_eq!(last["text"].as_str(), Some(tokens(&seen).as_str()), "exactly what was streamed is kept");

    // The server is free again at once: the next turn is answered in full.
    skald.send(&session, "Now say goodbye in one short sentence.").await;
    let events = socket.until_turn_end().await;
    assert_eq!(events.last().unwrap()["status"], "done", "{events:?}");
    let history = skald.finished(&session, &llama).await;
    let last = history.last().unwrap();
    assert_eq!((last["status"].as_str(), last["text"].as_str()), (Some("done"), Some(tokens(&events).as_str())));
    assert!(!tokens(&events).trim().is_empty(), "{events:?}");
}

/// llama-cpp-python's `chatml-function-calling` takes up tools only when a request names
/// `tool_choice`, and refuses an automatic choice while streaming; Skald names none, so the
/// real server never asks for a tool (see the report of issue 31). What it must do is read
/// the conversation a call left behind: here another provider asked for the clock, Skald ran
/// it and stored the call and its result, and the person then moves the conversation to the
/// real server, which is sent the call and its result in OpenAI's shape and answers.
#[tokio::test]
async fn a_real_server_reads_a_tool_call_and_its_result_and_answers() {
    let Some(llama) = Llama::start(8192).await else { return };
    let skald = Skald::with(&llama).await;
    let scripted = scripted_model::ScriptedModel::start().await;
    let provider = json!({ "name": "scripted", "kind": "openai", "base_url": scripted.openai_base() });
    let (status, added) = skald.server.post("/api/providers", Some(&skald.token), provider).await;
    assert_eq!(status, 201, "{added}");
    let call = scripted_model::ScriptedCall::new("current_time", json!({ "timezone": "Europe/Paris" }));
    scripted.push(scripted_model::Reply::tool_calls([call]));
    scripted.push(scripted_model::Reply::text("It is evening in Paris."));
    let session = skald.session().await;
    let path = format!("/api/sessions/{session}");
    let pin = |model: &str| json!({ "model": model });
    let (status, body) =
        skald.server.call(Method::PATCH, &path, Some(&skald.token), Some(pin("scripted/scripted-fast"))).await;
    assert_eq!(status, 204, "{body}");
    skald.send(&session, "What time is it in Paris?").await;
    let history = skald.finished(&session, &llama).await;
    let shape: Vec<(&str, &str)> =
        history.iter().map(|m| (m["role"].as_str().unwrap(), m["status"].as_str().unwrap())).collect();
    assert_eq!(shape, [("user", "sent"), ("assistant", "tool_calls"), ("tool", "ok"), ("assistant", "done")]);

    let (status, body) =
        skald.server.call(Method::PATCH, &path, Some(&skald.token), Some(pin(&format!("llama/{ALIAS}")))).await;
    assert_eq!(status, 204, "{body}");
    let mut socket = skald.socket().await;
    skald.send(&session, "Thank you. Say it again in one short sentence.").await;
    let events = socket.until_turn_end().await;
    assert_eq!(events.last().unwrap()["status"], "done", "{events:?}\n{}", llama.said());
    let history = skald.finished(&session, &llama).await;
    let last = history.last().unwrap();
    assert_eq!((last["model"].as_str(), last["status"].as_str()), (Some("llama/smollm2"), Some("done")), "{last}");
    assert!(!last["text"].as_str().unwrap().trim().is_empty(), "{last}");
    assert_eq!(last["text"].as_str(), Some(tokens(&events).as_str()));
    assert_eq!(scripted.request_count(), 2, "the real server answered the second turn alone");
}

/// A message longer than the server's context. llama-cpp-python lists no context size, so
/// Skald takes its model for 8192 tokens while the server holds what `--n_ctx` says; over
/// it, the server answers 200, sends no event at all and closes the stream, its error only
/// in its own log. Skald says the reply never came and why it may not have, rather than
/// storing an empty answer as done.
#[tokio::test]
async fn a_message_longer_than_the_servers_context_is_a_clear_error_not_an_empty_answer() {
    let Some(llama) = Llama::start(512).await else { return };
    let skald = Skald::with(&llama).await;
    let session = skald.session().await;
    let long = "Please read all of this carefully. ".repeat(150);
    let started = Instant::now();
    skald.send(&session, &long).await;
    let history = skald.finished(&session, &llama).await;
    let last = history.last().unwrap();
    eprintln!("over the context: {last} after {:.1} s", started.elapsed().as_secs_f64());
    assert!(llama.says("exceed context window").await, "the server failed the request: {}", llama.said());
    assert_eq!((last["status"].as_str(), last["text"].as_str()), (Some("error"), Some("")), "{history:?}");
    let message = last["error_message"].as_str().unwrap();
    assert!(message.starts_with("llama ") && message.contains("longer than its context"), "{message}");
    assert_eq!(history[0]["text"].as_str(), Some(long.as_str()), "the person's message is kept");
}

#[tokio::test]
async fn a_real_server_killed_mid_stream_is_a_clear_error_and_nothing_is_lost() {
    let Some(mut llama) = Llama::start(8192).await else { return };
    let skald = Skald::with(&llama).await;
    let (mut socket, session, mut seen) = skald.story_begun().await;
    llama.kill();
    seen.extend(socket.until_turn_end().await);
    assert_eq!(seen.last().unwrap()["status"], "error", "{seen:?}");

    let history = skald.finished(&session, &llama).await;
    assert_eq!(history[0]["text"], STORY);
    let last = history.last().unwrap();
    assert_eq!(last["status"], "error", "{history:?}");
    assert_eq!(last["text"].as_str(), Some(tokens(&seen).as_str()), "what streamed before the kill is kept");
    let message = last["error_message"].as_str().unwrap();
    assert!(message.starts_with("llama "), "{message}");
    eprintln!("killed mid-stream: {} ({message})", last["error_code"]);

    // With the server gone, the next turn is a clear error too, in bounded time.
    skald.send(&session, "Are you there?").await;
    let last = skald.finished(&session, &llama).await.pop().unwrap();
    assert_eq!((last["status"].as_str(), last["error_code"].as_str()), (Some("error"), Some("provider_unavailable")));
    assert!(last["error_message"].as_str().unwrap().contains("cannot be reached"), "{last}");
}

/// Setup offers a llama.cpp server it finds on 127.0.0.1:8080, with the models it lists,
/// and connecting what it found works.
#[tokio::test]
async fn setup_finds_a_real_llama_cpp_server_on_port_8080() {
    let Some(llama) = Llama::start_on_llama_cpp_port().await else { return };
    let server = Server::start();
    let (status, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 201, "{setup}");
    let token = setup["token"].as_str().unwrap();
    let (status, found) = server.call(Method::GET, "/api/providers/detect", Some(token), None).await;
    assert_eq!(status, 200, "{found}");
    let llama_cpp = found
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["label"] == "llama.cpp")
        .unwrap_or_else(|| panic!("llama.cpp on port 8080 was not found: {found}\n{}", llama.said()));
    assert_eq!(
        (llama_cpp["kind"].as_str(), llama_cpp["base_url"].as_str()),
        (Some("openai"), Some("http://127.0.0.1:8080/v1")),
        "{llama_cpp}"
    );
    assert_eq!(llama_cpp["models"][0]["model_id"], ALIAS, "{llama_cpp}");

    // Connecting what setup found, as its button does.
    let provider = json!({ "name": "llama", "kind": llama_cpp["kind"], "base_url": llama_cpp["base_url"] });
    let (status, added) = server.post("/api/providers", Some(token), provider).await;
    assert_eq!(status, 201, "{added}");
    assert_eq!(added["models"][0]["model_id"], ALIAS, "{added}");
}
