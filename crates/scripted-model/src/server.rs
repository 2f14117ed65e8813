//! The HTTP side: the route table, the API-key check, recording requests, and pacing a
//! planned answer onto the socket. Knows the wire formats only through the protocol
//! modules ([`crate::openai`], [`crate::anthropic`], [`crate::ollama`]), picked per route.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{OriginalUri, State};
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use futures_util::future::Either;
use futures_util::{StreamExt, stream};
use serde_json::Value;
use tokio::sync::watch;

use crate::script::{Answer, Failure, Frames, Plan, Reply, Request, Script};
use crate::{ModelInfo, Received, Responder, anthropic, ollama, openai};

const X_API_KEY: &str = "x-api-key";
const ANTHROPIC_VERSION: &str = "anthropic-version";

/// Everything the tests script and observe. Behind a std mutex: it is held only for
/// pushes and copies, never across an await.
#[derive(Default)]
pub(crate) struct Ledger {
    pub script: Script,
    pub received: Vec<Received>,
    /// Consulted when nothing is queued; kept across a reset.
    pub responder: Option<Responder>,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("script", &self.script)
            .field("received", &self.received)
            .field("responder", &self.responder.is_some())
            .finish()
    }
}

/// The handlers' state: one clone per request.
#[derive(Clone)]
pub(crate) struct Server {
    pub ledger: Arc<Mutex<Ledger>>,
    pub api_key: Option<Arc<str>>,
    pub models: Arc<[ModelInfo]>,
    /// Closes when the handle is dropped; ends hanging answers so shutdown can finish.
    pub stop: watch::Receiver<()>,
}

impl Ledger {
    pub(crate) fn reset(&mut self) {
        self.script.clear();
        self.received.clear();
    }
}

pub(crate) fn lock(ledger: &Mutex<Ledger>) -> MutexGuard<'_, Ledger> {
    // A test that panicked mid-push leaves nothing half-written worth refusing over.
    ledger.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Resolves once the sender side (held by the handle) is gone.
pub(crate) async fn stopped(mut stop: watch::Receiver<()>) {
    while stop.changed().await.is_ok() {}
}

pub(crate) fn router(server: Server) -> Router {
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/images/generations", post(picture))
        .route("/v1/audio/transcriptions", post(transcription))
        .route("/v1/audio/speech", post(speech))
        .route("/v1/chat/completions", post(|state, uri, headers, raw| chat(Wire::OpenAi, state, uri, headers, raw)))
        .route("/v1/messages", post(|state, uri, headers, raw| chat(Wire::Anthropic, state, uri, headers, raw)))
        .route("/api/chat", post(|state, uri, headers, raw| chat(Wire::Ollama, state, uri, headers, raw)))
        .route("/api/tags", get(tags))
        .route("/api/show", post(show))
        .route("/_scripted/replies", post(push_replies))
        .route("/_scripted/requests", get(requests))
        .route("/_scripted/reset", post(reset))
        .with_state(server)
}

/// The protocol a chat route speaks: how its requests read, its answers, errors and
/// credentials look.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Wire {
    OpenAi,
    Anthropic,
    Ollama,
}

impl Wire {
    fn parse(self, body: &Value) -> Request {
        match self {
            Wire::OpenAi => openai::parse(body),
            Wire::Anthropic => anthropic::parse(body),
            Wire::Ollama => ollama::parse(body),
        }
    }

    /// The credential the request carries, as recorded: the `Authorization` header, or
    /// for Anthropic the `x-api-key` header.
    fn credential(self, headers: &HeaderMap) -> Option<String> {
        match self {
            Wire::Anthropic => header_text(headers, X_API_KEY),
            Wire::OpenAi | Wire::Ollama => header_text(headers, AUTHORIZATION.as_str()),
        }
    }

    /// Whether `credential` opens the door; Ollama's never needs to.
    fn authorized(self, api_key: Option<&str>, credential: Option<&str>) -> bool {
        match (self, api_key) {
            (Wire::Ollama, _) | (_, None) => true,
            (Wire::Anthropic, Some(key)) => credential == Some(key),
            (Wire::OpenAi, Some(key)) => credential.and_then(|value| value.strip_prefix("Bearer ")) == Some(key),
        }
    }

    fn id(self, n: usize) -> String {
        match self {
            Wire::OpenAi => format!("chatcmpl-scripted-{n}"),
            Wire::Anthropic => format!("msg_scripted_{n}"),
            Wire::Ollama => String::new(),
        }
    }

    fn stream(self, plan: &Plan, request: &Request, id: &str) -> Frames {
        match self {
            Wire::OpenAi => openai::stream(plan, request, id),
            Wire::Anthropic => anthropic::stream(plan, request, id),
            Wire::Ollama => ollama::stream(plan, request),
        }
    }

    fn whole(self, plan: &Plan, request: &Request, id: &str) -> Value {
        match self {
            Wire::OpenAi => openai::completion(plan, request, id),
            Wire::Anthropic => anthropic::whole(plan, request, id),
            Wire::Ollama => ollama::whole(plan, request),
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Wire::OpenAi | Wire::Anthropic => "text/event-stream",
            Wire::Ollama => "application/x-ndjson",
        }
    }

    fn error(self, status: StatusCode, message: &str) -> Response {
        let body = match self {
            Wire::OpenAi => openai::error(status.as_u16(), message),
            Wire::Anthropic => anthropic::error(status.as_u16(), message),
            Wire::Ollama => ollama::error(message),
        };
        (status, Json(body)).into_response()
    }

    fn unauthorized(self) -> Response {
        let message = match self {
            Wire::Anthropic => anthropic::UNAUTHORIZED,
            Wire::OpenAi | Wire::Ollama => "Incorrect API key provided",
        };
        self.error(StatusCode::UNAUTHORIZED, message)
    }

    fn fail(self, failure: Failure) -> Response {
        let Ok(status) = StatusCode::from_u16(failure.status) else {
            let message = format!("the script asked for status {}, which is not an HTTP status", failure.status);
            return self.error(StatusCode::INTERNAL_SERVER_ERROR, &message);
        };
        let reason = if status.as_u16() == 529 { Some("Overloaded") } else { status.canonical_reason() };
        let message = failure.message.as_deref().or(reason).unwrap_or("scripted error");
        let mut response = self.error(status, message);
        if let Some(seconds) = failure.retry_after {
            response.headers_mut().insert(RETRY_AFTER, seconds.into());
        }
        response
    }
}

/// `GET /v1/models`: Anthropic's list when the request looks like Anthropic's (it has an
/// `anthropic-version` or `x-api-key` header), OpenAI's otherwise.
async fn models(State(server): State<Server>, headers: HeaderMap) -> Response {
    let wire = if headers.contains_key(ANTHROPIC_VERSION) || headers.contains_key(X_API_KEY) {
        Wire::Anthropic
    } else {
        Wire::OpenAi
    };
    if !wire.authorized(server.api_key.as_deref(), wire.credential(&headers).as_deref()) {
        return wire.unauthorized();
    }
    match wire {
        Wire::Anthropic => Json(anthropic::models(&server.models)).into_response(),
        Wire::OpenAi | Wire::Ollama => Json(openai::models(&server.models)).into_response(),
    }
}

async fn tags(State(server): State<Server>) -> Json<Value> {
    Json(ollama::tags(&server.models))
}

async fn show(State(server): State<Server>, raw: Bytes) -> Response {
    let body = serde_json::from_slice::<Value>(&raw).unwrap_or(Value::Null);
    match ollama::show(&server.models, &body) {
        Ok(shown) => Json(shown).into_response(),
        Err(message) => Wire::Ollama.error(StatusCode::NOT_FOUND, &message),
    }
}

async fn chat(
    wire: Wire,
    State(server): State<Server>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let authorization = wire.credential(&headers);
    let authorized = wire.authorized(server.api_key.as_deref(), authorization.as_deref());
    let body = serde_json::from_slice::<Value>(&raw);
    let request = body.as_ref().ok().map(|body| wire.parse(body));
    // Recording and answering under one lock keeps answers in the order requests were recorded.
    let (answer, id) = {
        let mut ledger = lock(&server.ledger);
        ledger.received.push(Received {
            path: uri.path().to_owned(),
            authorization,
            body: body.as_ref().cloned().unwrap_or(Value::Null),
            raw: String::from_utf8_lossy(&raw).into_owned(),
        });
        let id = wire.id(ledger.received.len());
        let answer = match (&request, &body) {
            (Some(request), Ok(body)) if authorized => {
                let Ledger { script, responder, .. } = &mut *ledger;
                let unscripted = || responder.as_ref().and_then(|respond| respond(body));
                Some(script.answer_or(&request.last_user, request.prompt_estimate, unscripted))
            }
            _ => None,
        };
        (answer, id)
    };
    if !authorized {
        return wire.unauthorized();
    }
    let (Some(request), Some(answer)) = (request, answer) else {
        let message = body.err().map(|err| format!("request body is not JSON: {err}")).unwrap_or_default();
        return wire.error(StatusCode::BAD_REQUEST, &message);
    };
    match answer {
        Answer::Fail(failure) => wire.fail(failure),
        Answer::Complete(plan) if request.stream => {
            streamed(wire.stream(&plan, &request, &id), &plan, wire.content_type(), server.stop)
        }
        Answer::Complete(plan) => {
            if plan.hang {
                stopped(server.stop).await;
                return wire.error(StatusCode::SERVICE_UNAVAILABLE, "the scripted model shut down");
            }
            pause(plan.duration()).await;
            Json(wire.whole(&plan, &request, &id)).into_response()
        }
    }
}

/// `POST /v1/images/generations`: a picture as `b64_json`, a new one each time; recorded like
/// a chat request.
async fn picture(
    State(server): State<Server>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let body = serde_json::from_slice::<Value>(&raw).unwrap_or(Value::Null);
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (authorized, count) = record_openai(&server, uri.path(), &headers, body.clone(), raw);
    if !authorized {
        return Wire::OpenAi.unauthorized();
    }
    let Some(prompt) = body["prompt"].as_str().filter(|p| !p.trim().is_empty()) else {
        return Wire::OpenAi.error(StatusCode::BAD_REQUEST, "a picture needs a prompt");
    };
    let png = crate::picture::png(u32::try_from(count).unwrap_or(u32::MAX), 16);
    Json(serde_json::json!({
        "created": 0,
        "data": [{ "b64_json": crate::picture::base64(&png), "revised_prompt": prompt }]
    }))
    .into_response()
}

/// `POST /v1/audio/transcriptions`: `{"text"}` saying how long the recording was; recorded
/// with the form's fields as the body (the file as its size and length).
async fn transcription(
    State(server): State<Server>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let content_type = header_text(&headers, CONTENT_TYPE.as_str()).unwrap_or_default();
    let fields = crate::audio::form_fields(&content_type, &raw);
    let body = fields.clone().unwrap_or(Value::Null);
    let (authorized, _) = record_openai(&server, uri.path(), &headers, body, String::new());
    if !authorized {
        return Wire::OpenAi.unauthorized();
    }
    match fields {
        Ok(fields) if fields["file_bytes"].is_number() => {
            Json(serde_json::json!({ "text": crate::audio::heard(&fields) })).into_response()
        }
        Ok(_) => Wire::OpenAi.error(StatusCode::BAD_REQUEST, "a transcription needs a file"),
        Err(err) => Wire::OpenAi.error(StatusCode::BAD_REQUEST, &err),
    }
}

/// `POST /v1/audio/speech`: the input read as a WAV tone; recorded like a chat request.
async fn speech(
    State(server): State<Server>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let body = serde_json::from_slice::<Value>(&raw).unwrap_or(Value::Null);
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (authorized, _) = record_openai(&server, uri.path(), &headers, body.clone(), raw);
    if !authorized {
        return Wire::OpenAi.unauthorized();
    }
    let Some(input) = body["input"].as_str().filter(|i| !i.trim().is_empty()) else {
        return Wire::OpenAi.error(StatusCode::BAD_REQUEST, "speech needs an input");
    };
    ([(CONTENT_TYPE, "audio/wav")], crate::audio::read_aloud(input)).into_response()
}

/// Records a request to one of OpenAI's routes beside chat; whether its credential was
/// right, and how many requests are recorded now.
fn record_openai(server: &Server, path: &str, headers: &HeaderMap, body: Value, raw: String) -> (bool, usize) {
    let authorization = Wire::OpenAi.credential(headers);
    let authorized = Wire::OpenAi.authorized(server.api_key.as_deref(), authorization.as_deref());
    let mut ledger = lock(&server.ledger);
    ledger.received.push(Received { path: path.to_owned(), authorization, body, raw });
    (authorized, ledger.received.len())
}

/// `POST /_scripted/replies`: one reply or an array of them.
async fn push_replies(State(server): State<Server>, raw: Bytes) -> Response {
    let parsed = serde_json::from_slice::<Value>(&raw).and_then(|value| match value {
        Value::Array(_) => serde_json::from_value::<Vec<Reply>>(value),
        value => serde_json::from_value::<Reply>(value).map(|reply| vec![reply]),
    });
    match parsed {
        Ok(replies) => {
            let mut ledger = lock(&server.ledger);
            replies.into_iter().for_each(|reply| ledger.script.push(reply));
            StatusCode::NO_CONTENT.into_response()
        }
        Err(err) => (StatusCode::BAD_REQUEST, format!("not a reply or a list of replies: {err}")).into_response(),
    }
}

async fn requests(State(server): State<Server>) -> Json<Vec<Received>> {
    Json(lock(&server.ledger).received.clone())
}

async fn reset(State(server): State<Server>) -> StatusCode {
    lock(&server.ledger).reset();
    StatusCode::NO_CONTENT
}

/// Streams the frames as they are due: the head at once, then the paced frames after the
/// reply's first delay and its delay between them, then the tail at once — or, for a
/// hanging answer, nothing more until shutdown. Each frame is its own body chunk, so hyper
/// writes it out before waiting on the next.
fn streamed(frames: Frames, plan: &Plan, content_type: &'static str, stop: watch::Receiver<()>) -> Response {
    let Frames { head, paced, tail } = frames;
    let (first_delay, delay) = (plan.first_delay, plan.delay);
    let paced = stream::iter(paced.into_iter().enumerate()).then(move |(i, frame)| async move {
        pause(if i == 0 { first_delay } else { delay }).await;
        frame
    });
    let end = if plan.hang { Either::Left(stream::pending()) } else { Either::Right(stream::empty()) };
    let frames = stream::iter(head)
        .chain(paced)
        .chain(stream::iter(tail))
        .chain(end)
        .take_until(stopped(stop))
        .map(Ok::<_, Infallible>);
    ([(CONTENT_TYPE, content_type), (CACHE_CONTROL, "no-cache")], Body::from_stream(frames)).into_response()
}

/// Sleeps, but not for zero: a zero sleep still waits for the timer's next tick.
async fn pause(duration: Duration) {
    if !duration.is_zero() {
        tokio::time::sleep(duration).await;
    }
}

fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name).map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
}
