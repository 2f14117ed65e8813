//! The only door into Skald: an HTTP server on 127.0.0.1 whose every `/api` route is
//! listed in one declarative table ([`routes::table`]) with who may call it. The router is
//! built from that table, and the tests read the same table, since axum cannot list its
//! routes. Around everything sits the loopback boundary ([`boundary`], §7).
//!
//! Never here: SQL (that is `store`), decisions about keys or people.

pub mod admin;
pub mod agents;
#[cfg(test)]
mod api_types;
pub mod assets;
pub mod auth;
pub mod backups;
pub mod boundary;
pub mod chat;
pub mod documents;
pub mod error;
pub mod inbox;
pub mod jobs;
pub mod json;
pub mod local_models;
pub mod mcp;
pub mod me;
pub mod memories;
pub mod meta;
pub mod notes;
pub mod people;
pub mod providers;
pub mod routes;
pub mod rules;
pub mod serve;
pub mod state;
pub mod supervision;
pub mod voice;
pub mod ws;

use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;

pub use state::AppState;

/// Builds the whole application: the route table behind its per-route access checks, the
/// web assets, and the boundary checks and security headers around all of it.
pub fn router(state: AppState) -> Router {
    let mut api = Router::new();
    for route in routes::table() {
        api = api.route(route.path, route.into_method_router(&state));
    }
    api.fallback(assets::fallback)
        .layer(middleware::from_fn(log_request))
        .layer(middleware::from_fn_with_state(state.clone(), boundary::guard))
        .with_state(state)
}

/// One debug line per request: method, path without its query, status, time. Headers and
/// bodies are never logged (they carry bearers and private words).
async fn log_request(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let response = next.run(req).await;
    tracing::debug!(%method, %path, status = response.status().as_u16(), elapsed_ms = started.elapsed().as_millis() as u64, "request");
    response
}
