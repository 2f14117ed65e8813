//! The HTTP side: the route table, the API-key check, recording requests, and pacing a
//! planned answer onto the socket. Knows the wire format only through [`crate::openai`].

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

use crate::script::{Answer, Failure, Frames, Plan, Reply, Script};
use crate::{ModelInfo, Received, openai};

/// Everything the tests script and observe. Behind a std mutex: it is held only for
/// pushes and copies, never across an await.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    pub script: Script,
    pub received: Vec<Received>,
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
        .route("/v1/chat/completions", post(chat))
        .route("/_scripted/replies", post(push_replies))
        .route("/_scripted/requests", get(requests))
        .route("/_scripted/reset", post(reset))
        .with_state(server)
}

async fn models(State(server): State<Server>, headers: HeaderMap) -> Response {
    if !server.authorized(header_text(&headers, AUTHORIZATION).as_deref()) {
        return unauthorized();
    }
    Json(openai::models(&server.models)).into_response()
}

async fn chat(State(server): State<Server>, OriginalUri(uri): OriginalUri, headers: HeaderMap, raw: Bytes) -> Response {
    let authorization = header_text(&headers, AUTHORIZATION);
    let authorized = server.authorized(authorization.as_deref());
    let body = serde_json::from_slice::<Value>(&raw);
    let request = body.as_ref().ok().map(openai::ChatRequest::parse);
    // Recording and answering under one lock keeps answers in the order requests were recorded.
    let (answer, id) = {
        let mut ledger = lock(&server.ledger);
        ledger.received.push(Received {
            path: uri.path().to_owned(),
            authorization,
            body: body.as_ref().cloned().unwrap_or(Value::Null),
            raw: String::from_utf8_lossy(&raw).into_owned(),
        });
        let id = format!("chatcmpl-scripted-{}", ledger.received.len());
        let answer = match &request {
            Some(request) if authorized => Some(ledger.script.answer(&request.last_user, request.prompt_estimate)),
            _ => None,
        };
        (answer, id)
    };
    if !authorized {
        return unauthorized();
    }
    let (Some(request), Some(answer)) = (request, answer) else {
        let message = body.err().map(|err| format!("request body is not JSON: {err}")).unwrap_or_default();
        return error(StatusCode::BAD_REQUEST, &message);
    };
    match answer {
        Answer::Fail(failure) => fail(failure),
        Answer::Complete(plan) if request.stream => sse(openai::stream(&plan, &request, &id), &plan, server.stop),
        Answer::Complete(plan) => {
            if plan.hang {
                stopped(server.stop).await;
                return error(StatusCode::SERVICE_UNAVAILABLE, "the scripted model shut down");
            }
            pause(whole_duration(&plan)).await;
            Json(openai::completion(&plan, &request, &id)).into_response()
        }
    }
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

impl Server {
    fn authorized(&self, authorization: Option<&str>) -> bool {
        match &self.api_key {
            None => true,
            Some(key) => authorization.and_then(|value| value.strip_prefix("Bearer ")) == Some(key),
        }
    }
}

/// Streams the frames as they are due: the reply's first delay, its delay between paced
/// frames, then the tail at once — or, for a hanging answer, nothing more until shutdown.
/// Each frame is its own body chunk, so hyper writes it out before waiting on the next.
fn sse(frames: Frames, plan: &Plan, stop: watch::Receiver<()>) -> Response {
    let Frames { paced, tail } = frames;
    let (first_delay, delay) = (plan.first_delay, plan.delay);
    let paced = stream::iter(paced.into_iter().enumerate()).then(move |(i, frame)| async move {
        pause(if i == 0 { first_delay } else { delay }).await;
        frame
    });
    let end = if plan.hang { Either::Left(stream::pending()) } else { Either::Right(stream::empty()) };
    let frames = paced.chain(stream::iter(tail)).chain(end).take_until(stopped(stop)).map(Ok::<_, Infallible>);
    ([(CONTENT_TYPE, "text/event-stream"), (CACHE_CONTROL, "no-cache")], Body::from_stream(frames)).into_response()
}

fn fail(failure: Failure) -> Response {
    let Ok(status) = StatusCode::from_u16(failure.status) else {
        let message = format!("the script asked for status {}, which is not an HTTP status", failure.status);
        return error(StatusCode::INTERNAL_SERVER_ERROR, &message);
    };
    let message = failure.message.as_deref().or(status.canonical_reason()).unwrap_or("scripted error");
    let mut response = error(status, message);
    if let Some(seconds) = failure.retry_after {
        response.headers_mut().insert(RETRY_AFTER, seconds.into());
    }
    response
}

fn unauthorized() -> Response {
    error(StatusCode::UNAUTHORIZED, "Incorrect API key provided")
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(openai::error(status.as_u16(), message))).into_response()
}

/// How long a non-streamed answer takes: as long as streaming it would.
fn whole_duration(plan: &Plan) -> Duration {
    let gaps = u32::try_from(plan.deltas().count().saturating_sub(1)).unwrap_or(u32::MAX);
    plan.first_delay.saturating_add(plan.delay.saturating_mul(gaps))
}

/// Sleeps, but not for zero: a zero sleep still waits for the timer's next tick.
async fn pause(duration: Duration) {
    if !duration.is_zero() {
        tokio::time::sleep(duration).await;
    }
}

fn header_text(headers: &HeaderMap, name: axum::http::HeaderName) -> Option<String> {
    headers.get(name).map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
}
