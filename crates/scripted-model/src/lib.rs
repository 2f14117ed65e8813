//! A stand-in for a model service, for tests: a real HTTP server on 127.0.0.1 that speaks
//! three model protocols (streaming included) and answers what the test scripted.
//! Integration tests and benchmarks use it in-process through [`ScriptedModel`]; browser
//! tests run the `scripted-model` binary and script it over `/_scripted/*`.
//!
//! The routes, all on the one server ([`ScriptedModel::url`] is the base URL for an
//! Anthropic or Ollama client, [`ScriptedModel::openai_base`] for an OpenAI one):
//! - OpenAI: `POST /v1/chat/completions` (SSE `data:` chunks ending in `[DONE]`),
//!   `GET /v1/models`. With an API key, `Authorization: Bearer <key>`.
//! - Anthropic Messages: `POST /v1/messages` (SSE named events, `message_start` …
//!   `message_stop`), and `GET /v1/models` in Anthropic's shape when the request carries an
//!   `anthropic-version` or `x-api-key` header. With an API key, `x-api-key: <key>`.
//! - Ollama: `POST /api/chat` (NDJSON, streaming unless `"stream": false`), `GET /api/tags`,
//!   `POST /api/show`. Never asks for a key.
//!
//! The chat routes share one queue of [`Reply`]s: a test pushes a reply and whichever
//! protocol the next request speaks answers with it, in that protocol's shapes (errors
//! included). Every chat request is recorded as [`Received`].
//!
//! A map of the crate:
//! - `script` is protocol-neutral: the [`Reply`]s a test queues, the plan each request
//!   gets from them, and what a request asks for.
//! - `openai`, `anthropic` and `ollama` each read their protocol's requests and write plans,
//!   errors and model lists in its wire format.
//! - `server` is the route table, the API-key check and the pacing of streamed answers.
//!
//! Unscripted, it asks the [`Responder`] a test set, if any, for an answer made from the
//! request itself; without one, or when it has none, it echoes: `You said: <the last user
//! message>`.

mod anthropic;
mod audio;
mod ollama;
mod openai;
mod picture;
mod script;
mod server;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::sync::watch;

pub use script::{Reply, ScriptedCall};

/// Answers a chat request from the request itself (its parsed body, in the protocol it came
/// in) when no reply is queued; `None` leaves it to the echo. Called under the server's
/// lock, so it must not call back into the [`ScriptedModel`].
pub type Responder = Arc<dyn Fn(&serde_json::Value) -> Option<Reply> + Send + Sync>;
use server::{Ledger, Server, lock};

/// A running scripted model server. Dropping the handle shuts the server down.
#[derive(Debug)]
pub struct ScriptedModel {
    addr: SocketAddr,
    ledger: Arc<Mutex<Ledger>>,
    /// Never sent on: dropping it is the shutdown signal.
    _stop: watch::Sender<()>,
}

/// How to start the server.
#[derive(Clone, Debug)]
pub struct Options {
    /// The address to listen on: loopback, or for privacy-tier tests an address inside a
    /// network namespace the test made.
    pub host: IpAddr,
    /// 0 picks a free port.
    pub port: u16,
    /// When set, OpenAI's `/v1/*` routes require `Authorization: Bearer <key>` and
    /// Anthropic's `x-api-key: <key>`; Ollama's `/api/*` never ask.
    pub api_key: Option<String>,
    /// What `GET /v1/models` and `GET /api/tags` list, and `POST /api/show` shows.
    pub models: Vec<ModelInfo>,
}

impl Default for Options {
    fn default() -> Self {
        let model = |id: &str, context_length| ModelInfo { id: id.to_owned(), context_length };
        Self {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            api_key: None,
            models: vec![
                model("scripted-fast", 8192),
                model("scripted-balanced", 32768),
                model("scripted-strong", 128_000),
            ],
        }
    }
}

/// One entry of the model list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub id: String,
    pub context_length: u32,
}

/// One chat request as the server received it, kept so tests can assert on what was sent.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Received {
    pub path: String,
    /// The credential sent: the whole `Authorization` header (`Bearer …`) for OpenAI and
    /// Ollama, the `x-api-key` header's value for Anthropic.
    pub authorization: Option<String>,
    /// The parsed body, or null when it was not JSON.
    pub body: serde_json::Value,
    /// The body as sent (lossily decoded), for asserting on bytes the parse hides.
    pub raw: String,
}

impl ScriptedModel {
    /// Starts on a free port of 127.0.0.1 in the current tokio runtime.
    ///
    /// # Panics
    /// When no loopback port can be bound; use [`ScriptedModel::start_with`] to handle that.
    pub async fn start() -> ScriptedModel {
        Self::start_with(Options::default()).await.expect("binding a loopback port for the scripted model")
    }

    /// Starts with these options in the current tokio runtime. The server
    /// accepts connections once this returns.
    pub async fn start_with(options: Options) -> std::io::Result<ScriptedModel> {
        let listener = TcpListener::bind((options.host, options.port)).await?;
        let addr = listener.local_addr()?;
        let ledger = Arc::new(Mutex::new(Ledger::default()));
        let (stop, stopping) = watch::channel(());
        let app = server::router(Server {
            ledger: Arc::clone(&ledger),
            api_key: options.api_key.map(Arc::from),
            models: options.models.into(),
            stop: stopping.clone(),
        });
        tokio::spawn(async move {
            // Serving only ends at shutdown, and then there is no one left to tell.
            // Without TCP_NODELAY, Nagle's algorithm holds small streamed writes for ~40 ms.
            let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            });
            let _ = axum::serve(listener, app).with_graceful_shutdown(server::stopped(stopping)).await;
        });
        Ok(ScriptedModel { addr, ledger, _stop: stop })
    }

    /// `http://127.0.0.1:PORT`, also the base URL an Anthropic or Ollama client is
    /// configured with.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL an OpenAI client is configured with.
    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// Queues one reply behind those already queued.
    pub fn push(&self, reply: Reply) {
        lock(&self.ledger).script.push(reply);
    }

    /// Queues these replies, in order, behind those already queued.
    pub fn push_all(&self, replies: impl IntoIterator<Item = Reply>) {
        let mut ledger = lock(&self.ledger);
        replies.into_iter().for_each(|reply| ledger.script.push(reply));
    }

    /// Answers every request that finds the queue empty with `responder`, from then on.
    pub fn respond_with(&self, responder: impl Fn(&serde_json::Value) -> Option<Reply> + Send + Sync + 'static) {
        lock(&self.ledger).responder = Some(Arc::new(responder));
    }

    /// Every chat request received so far, oldest first, including refused ones.
    pub fn requests(&self) -> Vec<Received> {
        lock(&self.ledger).received.clone()
    }

    /// How many chat requests were received, without copying them.
    pub fn request_count(&self) -> usize {
        lock(&self.ledger).received.len()
    }

    /// Forgets the queued replies and the received requests (a responder stays).
    pub fn reset(&self) {
        lock(&self.ledger).reset();
    }

    /// Stops the server: no new connections, hanging answers end, the port is released
    /// once the in-flight answers finish. The same as dropping the handle.
    pub fn shut_down(self) {}
}
