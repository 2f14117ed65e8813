//! Routes about the server and the instance rather than any person.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::AppState;
use super::error::ApiError;
use super::json::Body;
use crate::store::instance;

#[derive(Serialize, ts_rs::TS)]
pub struct Health {
    status: &'static str,
    version: &'static str,
}

/// `GET /api/health`
pub async fn health() -> Json<Health> {
    Json(Health { status: "ok", version: crate::VERSION })
}

/// Milestones the page may report; anything else is refused, so the log never holds
/// text a page made up.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientEvent {
    Rendered,
}

#[derive(Deserialize)]
pub struct ClientReport {
    event: ClientEvent,
}

/// `POST /api/client/events` `{"event":"rendered"}`: the page tells the log it got this far.
pub async fn client_event(Body(report): Body<ClientReport>) -> StatusCode {
    tracing::info!(event = ?report.event, "page reported");
    StatusCode::NO_CONTENT
}

#[derive(Serialize, ts_rs::TS)]
pub struct Instance {
    setup_required: bool,
}

/// `GET /api/instance`: whether the first administrator still has to be created.
pub async fn instance(State(state): State<AppState>) -> Result<Json<Instance>, ApiError> {
    let setup_required = instance::setup_required(&state.system).await?;
    Ok(Json(Instance { setup_required }))
}
