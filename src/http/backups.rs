//! Backups for administrators (docs/architecture.md §5.2): write one now, see those
//! written, and set the schedule. Every route here is `Admin`.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use ts_rs::TS;
use zeroize::Zeroizing;

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use super::json::Body;
use crate::agent::events::LiveEvent;
use crate::backup::{BackupError, Kind, Progress, Request, ScheduleInput, ScheduleView};
use crate::store::backup::BackupRow;

/// `POST /api/backups`: where to, and the passphrase that seals the archive.
#[derive(Deserialize, TS)]
#[ts(rename = "NewBackup")]
pub struct NewBackup {
    /// An absolute folder (the archive gets a dated name) or the archive's path.
    pub to: String,
    pub passphrase: String,
    #[serde(default)]
    #[ts(optional)]
    pub include_models: Option<bool>,
}

/// The answer to `POST /api/backups`: it runs now; progress comes as `backup` events.
#[derive(Serialize, TS)]
#[ts(rename = "BackupStarted")]
pub struct Started {
    pub id: String,
    pub path: String,
}

/// `GET /api/backups`.
#[derive(Serialize, TS)]
#[ts(rename = "BackupList")]
pub struct BackupList {
    /// The backup running now, if any.
    pub current: Option<Progress>,
    pub backups: Vec<BackupRow>,
    pub schedule: Option<ScheduleView>,
}

/// `PUT /api/backups/schedule`.
#[derive(Deserialize, TS)]
#[ts(rename = "BackupScheduleBody")]
pub struct ScheduleBody {
    pub folder: String,
    /// `HH:MM`, 24-hour.
    pub at_time: String,
    #[serde(default)]
    #[ts(optional)]
    pub zone: Option<String>,
    pub keep: u32,
    #[serde(default)]
    #[ts(optional)]
    pub include_models: Option<bool>,
    /// Required the first time; the stored one is kept when left out.
    #[serde(default)]
    #[ts(optional)]
    pub passphrase: Option<String>,
}

impl From<BackupError> for ApiError {
    fn from(err: BackupError) -> Self {
        let message = err.to_string();
        match err {
            BackupError::Busy => Self::Conflict { code: "backup_running", message },
            BackupError::Refused(_) => Self::BadRequest { code: "backup_refused", message },
            BackupError::Archive(_) => Self::BadRequest { code: "backup_archive", message },
            BackupError::Store(err) => err.into(),
            BackupError::Io { .. } => Self::Unavailable { code: "backup_io", message },
        }
    }
}

/// `POST /api/backups` → 202: checked (folder, passphrase, one at a time) before it
/// answers; then written in the background, its progress sent to the caller's windows.
pub async fn start(
    State(state): State<AppState>,
    caller: Caller,
    Body(body): Body<NewBackup>,
) -> Result<(StatusCode, Json<Started>), ApiError> {
    let request = Request {
        to: PathBuf::from(body.to),
        passphrase: Zeroizing::new(body.passphrase),
        include_models: body.include_models.unwrap_or(false),
    };
    let started = state.backups.start(request, Kind::Manual, Some(&caller.session.user_id)).await?;
    let answer = Started { id: started.id().to_owned(), path: started.path().display().to_string() };
    let (events, user) = (state.agent.events().clone(), caller.session.user_id.clone());
    let report = state.backups.tracking(Arc::new(move |progress: &Progress| {
        events.to_person(&user, &LiveEvent::Backup { progress: progress.clone() });
    }));
    tokio::spawn(async move {
        // The outcome is recorded in the backups table and sent as the last event.
        let _ = started.run(report).await;
    });
    Ok((StatusCode::ACCEPTED, Json(answer)))
}

/// `GET /api/backups`: the one running, the newest 50 written, and the schedule.
pub async fn list(State(state): State<AppState>) -> Result<Json<BackupList>, ApiError> {
    Ok(Json(BackupList {
        current: state.backups.current(),
        backups: state.backups.list().await?,
        schedule: state.backups.schedule().await?,
    }))
}

/// `PUT /api/backups/schedule`: every day at a time, to a folder, keeping the newest few.
pub async fn set_schedule(
    State(state): State<AppState>,
    caller: Caller,
    Body(body): Body<ScheduleBody>,
) -> Result<Json<ScheduleView>, ApiError> {
    let input = ScheduleInput {
        folder: PathBuf::from(body.folder),
        at_time: body.at_time,
        zone: body.zone.filter(|z| !z.trim().is_empty()),
        keep: body.keep,
        include_models: body.include_models.unwrap_or(false),
        passphrase: body.passphrase.filter(|p| !p.is_empty()).map(Zeroizing::new),
    };
    Ok(Json(state.backups.set_schedule(&caller.session.user_id, input).await?))
}

/// `DELETE /api/backups/schedule`: no more scheduled backups (those written stay).
pub async fn clear_schedule(State(state): State<AppState>) -> Result<StatusCode, ApiError> {
    state.backups.clear_schedule().await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/backups/restore-person`.
#[derive(Deserialize, TS)]
#[ts(rename = "RestorePersonBody")]
pub struct RestorePerson {
    /// The archive's absolute path on this computer.
    pub from: String,
    pub passphrase: String,
    /// The person's id.
    pub user: String,
}

/// `POST /api/backups/restore-person`: one person's file and keys as a backup holds them;
/// their windows lock, and the password they had then opens it.
pub async fn restore_person(
    State(state): State<AppState>,
    super::auth::AdminActor(actor): super::auth::AdminActor,
    Body(body): Body<RestorePerson>,
) -> Result<Json<crate::backup::PersonRestored>, ApiError> {
    let user = crate::ids::UserId::parse(&body.user).ok_or(ApiError::NotFound)?;
    let passphrase = Zeroizing::new(body.passphrase);
    let from = PathBuf::from(body.from);
    Ok(Json(crate::backup::restore_person(&state.accounts, &actor, &from, passphrase.as_bytes(), &user).await?))
}
