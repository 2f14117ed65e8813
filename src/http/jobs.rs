//! The caller's scheduled jobs (§11): made, listed, changed, paused and deleted by their
//! owner; what a schedule would come to, previewed. Another person's job is not found.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use super::json::Body;
use crate::ids::JobId;
use crate::jobs::{JobChange, JobView, Jobs, NewJob, Preview, PreviewRequest, SnoozeRequest};
use crate::store::jobs::RunRow;

/// `POST /api/jobs`: a reminder, once or again and again; 201 with the job, its
/// `next_run` and the next occurrences in its zone.
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Body(job): Body<NewJob>,
) -> Result<(StatusCode, Json<JobView>), ApiError> {
    Ok((StatusCode::CREATED, Json(state.jobs.create(&caller.session, job).await?)))
}

/// `GET /api/jobs`: my jobs, the next due first.
pub async fn list(State(state): State<AppState>, caller: Caller) -> Result<Json<Vec<JobView>>, ApiError> {
    Ok(Json(state.jobs.list(&caller.session).await?))
}

/// `GET /api/jobs/{id}/runs`: how each occurrence of one of my jobs went, the latest first.
pub async fn runs(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Vec<RunRow>>, ApiError> {
    Ok(Json(state.jobs.runs(&caller.session, &JobId::new(id)).await?))
}

/// `PATCH /api/jobs/{id}`: changes what is given (its words, schedule, zone, pause, …).
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Body(change): Body<JobChange>,
) -> Result<Json<JobView>, ApiError> {
    Ok(Json(state.jobs.update(&caller.session, &JobId::new(id), change).await?))
}

/// `DELETE /api/jobs/{id}`: deletes one of my jobs, its runs and its words.
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.jobs.delete(&caller.session, &JobId::new(id)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/jobs/{id}/snooze` `{"for":"10m"|"1h"|"tomorrow"}`: puts one of my jobs off;
/// a repeating one then goes on with its pattern.
pub async fn snooze(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Body(request): Body<SnoozeRequest>,
) -> Result<Json<JobView>, ApiError> {
    Ok(Json(state.jobs.snooze(&caller.session, &JobId::new(id), request.length).await?))
}

/// `POST /api/jobs/preview` `{"cron"|"at","zone"?}`: the next occurrences, or why the
/// schedule cannot be used.
pub async fn preview(_caller: Caller, Body(request): Body<PreviewRequest>) -> Result<Json<Preview>, ApiError> {
    Ok(Json(Jobs::preview(&request)?))
}
