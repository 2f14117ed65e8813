//! Routes about the server and the instance rather than any person.

use axum::Json;
use axum::extract::State;
use serde::Serialize;

use super::AppState;
use super::error::ApiError;
use crate::store::instance;

#[derive(Serialize)]
pub struct Health {
    status: &'static str,
    version: &'static str,
}

/// `GET /api/health`
pub async fn health() -> Json<Health> {
    Json(Health { status: "ok", version: crate::VERSION })
}

#[derive(Serialize)]
pub struct Instance {
    setup_required: bool,
}

/// `GET /api/instance`: whether the first administrator still has to be created.
pub async fn instance(State(state): State<AppState>) -> Result<Json<Instance>, ApiError> {
    let setup_required = instance::setup_required(&state.system).await?;
    Ok(Json(Instance { setup_required }))
}
