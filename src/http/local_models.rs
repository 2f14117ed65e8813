//! The built-in provider's models (§9): administrators import GGUF files from disk or
//! upload them, download them, list them with what the engine is doing, and delete them.
//! An imported model is offered as `local/<id>` to every role that allows it. The work is
//! [`crate::providers::library`]'s; these handlers parse, call it and answer, and tell the
//! agent and the administrators' windows what happened.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::AppState;
use super::auth::{AdminActor, Caller};
use super::error::ApiError;
use super::json::Body;
use super::providers::providers_changed;
use crate::agent::events::LiveEvent;
use crate::ids::UserId;
use crate::providers::library::{Announce, CatalogueEntry, DownloadRequest, Installed, Library};
use crate::providers::local::{self, download};
use crate::store::audit::Actor;
use crate::store::local_models::{self, LocalModel};
use crate::users::sessions::Session;

fn library(state: &AppState) -> Library {
    Library { system: state.system.clone(), models: state.agent.local_models().clone() }
}

/// A model was offered: the agent, the administrator's record (§3) and the others' pages
/// learn of it, as for any provider change.
async fn offered(state: &AppState, by: &Session, actor: &Actor) {
    providers_changed(state, Some(by), actor, local_models::PROVIDER_ID).await;
}

#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "ImportRequest")]
pub struct ImportBody {
    /// An absolute path to a `.gguf` file on this computer.
    path: String,
    /// What people see it called; the file's own name for itself otherwise.
    #[ts(optional)]
    name: Option<String>,
}

/// `POST /api/local-models` (administrators): checks the file, copies it into the data
/// directory and offers it. 201 `{"id","model"}`.
pub async fn import(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Body(req): Body<ImportBody>,
) -> Result<(StatusCode, Json<Installed>), ApiError> {
    let installed = library(&state).import(&actor, &req.path, req.name.as_deref()).await?;
    offered(&state, &caller.session, &actor).await;
    Ok((StatusCode::CREATED, Json(installed)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadQuery {
    name: Option<String>,
}

/// `POST /api/local-models/upload?name=…` (administrators): the body is the GGUF file
/// itself, streamed to disk and hashed as it arrives, then checked and offered like an
/// import. A transfer that breaks off leaves nothing behind.
pub async fn upload(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Query(query): Query<UploadQuery>,
    body: axum::body::Body,
) -> Result<(StatusCode, Json<Installed>), ApiError> {
    let installed = library(&state).upload(&actor, query.name.as_deref(), body.into_data_stream()).await?;
    offered(&state, &caller.session, &actor).await;
    Ok((StatusCode::CREATED, Json(installed)))
}

/// `GET /api/local-models`: the models, the disk they take and what the engine is doing.
#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "LocalModelsReport")]
pub struct LocalModels {
    pub models: Vec<LocalModel>,
    pub disk_bytes: i64,
    pub engine: local::Status,
}

/// `GET /api/local-models` (administrators): the models, the disk they take and what the
/// engine is doing.
pub async fn list(State(state): State<AppState>, AdminActor(actor): AdminActor) -> Result<Json<LocalModels>, ApiError> {
    let models = local_models::list(&state.system).await?;
    let disk_bytes: i64 = models.iter().map(|m| m.file_size).sum();
    // The figures of the asking administrator's own last request only: another person's
    // would tell how much of their prompt a guess shares.
    let engine = state.agent.local_models().status(&actor.id);
    Ok(Json(LocalModels { models, disk_bytes, engine }))
}

/// `DELETE /api/local-models/{id}` (administrators): unloads it if loaded, withdraws it
/// and removes its file.
pub async fn delete(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    library(&state).delete(&actor, &id).await?;
    state.agent.providers_changed();
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/local-models/{id}/retry` (administrators): lets a model that crashed the
/// built-in model's worker too often start again. 204; 404 for no such model.
pub async fn retry(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    library(&state).retry(&actor, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/local-models/catalogue`: `available` is false in a build without the engine
/// or on a processor it cannot run on; `unavailable` then says why.
#[derive(Serialize, ts_rs::TS)]
pub struct Catalogue {
    pub available: bool,
    pub unavailable: Option<String>,
    pub models: Vec<CatalogueEntry>,
}

/// `GET /api/local-models/catalogue` (administrators): the recommended models, each
/// marked when it is already here.
pub async fn catalogue(State(state): State<AppState>) -> Result<Json<Catalogue>, ApiError> {
    let models = library(&state).catalogue().await?;
    // A build without the engine, or a processor below its baseline: said before anyone
    // downloads a model that could not run.
    let unavailable = state.agent.local_models().unavailable();
    Ok(Json(Catalogue { available: unavailable.is_none(), unavailable, models }))
}

/// A download just started (`POST /api/local-models/downloads`).
#[derive(Serialize, ts_rs::TS)]
pub struct DownloadStarted {
    pub id: String,
}

/// Tells the administrators' windows how a download goes, and the agent once its model is
/// offered.
struct Windows {
    state: AppState,
    by: std::sync::Arc<Session>,
    actor: Actor,
}

impl Announce for Windows {
    fn progress(&self, to: &[UserId], status: &download::Status) {
        let event = LiveEvent::LocalModelDownload { download: status.clone() };
        for manager in to {
            self.state.agent.events().to_person(manager, &event);
        }
    }

    async fn installed(&self, _installed: &Installed) {
        offered(&self.state, &self.by, &self.actor).await;
    }
}

/// `POST /api/local-models/downloads` (administrators): fetches a model of the catalogue,
/// or from an address, in the background; 202 `{"id"}`. Progress goes to the
/// administrators' windows as `local_model_download` events and to
/// `GET /api/local-models/downloads`. Asked again after an interruption, it resumes where
/// the transfer stopped.
pub async fn download(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Body(req): Body<DownloadRequest>,
) -> Result<(StatusCode, Json<DownloadStarted>), ApiError> {
    let windows = Windows { state: state.clone(), by: caller.session.clone(), actor: actor.clone() };
    let id = library(&state).download(&actor, req, windows)?;
    Ok((StatusCode::ACCEPTED, Json(DownloadStarted { id })))
}

/// `GET /api/local-models/downloads` (administrators)
pub async fn downloads(State(state): State<AppState>) -> Json<Vec<download::Status>> {
    Json(state.agent.local_models().downloads().list())
}
