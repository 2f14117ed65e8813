//! Routes for people and their keys: setup, the login picker, adding a person, enrolment,
//! login, recovery, logout and locking (§1, §7). The administrator's answers never carry
//! anything that opens another person's space: only names, roles and one-time enrolment
//! codes, which open nothing.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use super::AppState;
use super::auth::{AdminActor, Caller};
use super::error::ApiError;
use super::json::Body;
use crate::ids::{RoleId, UserId};
use crate::users::{PublicUser, Unlocked};

#[derive(Deserialize)]
pub struct Credentials {
    name: String,
    password: String,
}

#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "Unlocked")]
pub struct UnlockedBody {
    token: String,
    user: PublicUser,
    /// At setup, enrolment and recovery only: shown once, to this person alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    recovery_code: Option<String>,
}

impl From<Unlocked> for UnlockedBody {
    fn from(u: Unlocked) -> Self {
        Self {
            token: u.token.as_str().to_owned(),
            user: u.user,
            recovery_code: u.recovery_code.map(|c| c.as_str().to_owned()),
        }
    }
}

/// A person as an administrator adds them: the one-time enrolment code comes back once.
#[derive(Serialize, ts_rs::TS)]
pub struct Enrolment {
    pub user: PublicUser,
    pub enrolment_code: String,
}

impl Enrolment {
    pub fn new(user: PublicUser, code: &str) -> Self {
        Self { user, enrolment_code: code.to_owned() }
    }
}

/// `POST /api/setup`: the first administrator, with their own password.
pub async fn setup(
    State(state): State<AppState>,
    Body(req): Body<Credentials>,
) -> Result<(StatusCode, Json<UnlockedBody>), ApiError> {
    let password = Zeroizing::new(req.password);
    let unlocked = state.accounts.setup(&req.name, &password).await?;
    first_record(&state, &unlocked).await;
    Ok((StatusCode::CREATED, Json(unlocked.into())))
}

/// `GET /api/users`: the login picker.
pub async fn directory(State(state): State<AppState>) -> Result<Json<Vec<PublicUser>>, ApiError> {
    Ok(Json(state.accounts.directory().await?))
}

#[derive(Deserialize)]
pub struct NewPerson {
    name: String,
    role: String,
    /// A supervisor the account is made with (§6.2): the edge takes the person's key
    /// when they enrol, and the enrolment screen says so first.
    #[serde(default)]
    supervisor: Option<String>,
}

/// `POST /api/users` (administrators): a person who will choose their own password.
pub async fn add(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Body(req): Body<NewPerson>,
) -> Result<(StatusCode, Json<Enrolment>), ApiError> {
    let role = RoleId::new(req.role);
    let supervisor = match req.supervisor.as_deref().filter(|s| !s.is_empty()) {
        Some(id) => {
            let id = UserId::parse(id).ok_or(ApiError::NotFound)?;
            state.accounts.check_supervision(&id, &role).await?;
            Some(id)
        }
        None => None,
    };
    let (user, code) = state.accounts.add_person(&actor, &req.name, &role).await?;
    if let Some(supervisor) = supervisor {
        state.accounts.request_supervision(&actor, &supervisor, &user.id).await?;
    }
    Ok((StatusCode::CREATED, Json(Enrolment::new(user, &code))))
}

#[derive(Deserialize)]
pub struct EnrolmentBody {
    name: String,
    enrolment_code: String,
    password: String,
}

/// `POST /api/enrol`: the person spends the code and chooses their password.
pub async fn enrol(
    State(state): State<AppState>,
    Body(req): Body<EnrolmentBody>,
) -> Result<(StatusCode, Json<UnlockedBody>), ApiError> {
    let (code, password) = (Zeroizing::new(req.enrolment_code), Zeroizing::new(req.password));
    let unlocked = state.accounts.enrol(&req.name, &code, &password).await?;
    first_record(&state, &unlocked).await;
    Ok((StatusCode::CREATED, Json(unlocked.into())))
}

/// `POST /api/login`
pub async fn login(
    State(state): State<AppState>,
    Body(req): Body<Credentials>,
) -> Result<Json<UnlockedBody>, ApiError> {
    let password = Zeroizing::new(req.password);
    let unlocked = state.accounts.login(&req.name, &password).await?;
    close_interrupted(&state, &unlocked).await;
    Ok(Json(unlocked.into()))
}

/// At unlock, turns cut off by a restart become `error`, and parked turns whose cards
/// were all decided go on (§8.1). A failure here is logged and does not refuse the login:
/// the history stays readable either way.
async fn close_interrupted(state: &AppState, unlocked: &Unlocked) {
    let Some(session) = state.accounts.sessions().resolve(unlocked.token.as_bytes()).await else { return };
    if let Err(err) = state.agent.close_interrupted(&session).await {
        tracing::error!(user = %session.user_id, %err, "could not close interrupted turns");
    }
    if let Err(err) = state.agent.resume_ready(session.clone()).await {
        tracing::error!(user = %session.user_id, %err, "could not resume decided turns");
    }
    // Tasks that came due while they were locked run now (§11).
    state.jobs.unlocked(session.clone()).await;
    // Temporary chats a crash or a timeout left behind, unless another window of theirs
    // is open (it may be in one).
    if state.accounts.sessions().count_user(&session.user_id) == 1
        && let Err(err) = crate::store::chat::delete_temporary(&session.space).await
    {
        tracing::warn!(user = %session.user_id, %err, "could not delete temporary chats left behind");
    }
    memory_upkeep(state, &session).await;
    // Documents whose reading a lock or a restart cut short are read again.
    if let Err(err) = state.documents.resume(&session).await {
        tracing::warn!(user = %session.user_id, %err, "could not resume reading documents");
    }
}

/// Queued erasures are applied and expired memories deleted at unlock, then hourly while
/// the person stays unlocked.
async fn memory_upkeep(state: &AppState, session: &std::sync::Arc<crate::users::sessions::Session>) {
    use crate::agent::memory::{SWEEP_EVERY, upkeep};
    use crate::store::memories::Pools;
    if let Err(err) = upkeep(&state.system, &session.user_id, &session.space).await {
        tracing::error!(user = %session.user_id, %err, "could not apply erasures or sweep expired memories");
    }
    // Vectors for memories that have none from the embedding model in use, off the
    // unlock's path: hourly after, with the sweep.
    let (system, held, meaning) = (state.system.clone(), session.clone(), state.agent.meaning());
    let documents = state.documents.clone();
    session.spawn(async move {
        let index = async |held: &crate::users::sessions::Session| {
            let pools = Pools { owner: &held.user_id, space: &held.space, system: &system };
            if let Err(err) = meaning.index(&crate::agent::meaning::MemoryCorpus { pools: &pools, only: None }).await {
                tracing::warn!(user = %held.user_id, %err, "could not embed memories for recall by meaning");
            }
            for pool in [crate::store::documents::Pool::Private, crate::store::documents::Pool::Shared] {
                if let Err(err) = documents.index(documents.shelf(pool, &held.space)).await {
                    tracing::warn!(user = %held.user_id, %err, "could not embed documents' passages");
                }
            }
        };
        index(&held).await;
        let mut every = tokio::time::interval(SWEEP_EVERY);
        every.tick().await;
        loop {
            tokio::select! {
                () = held.ended().cancelled() => return,
                _ = every.tick() => {}
            }
            if let Err(err) = upkeep(&system, &held.user_id, &held.space).await {
                tracing::warn!(user = %held.user_id, %err, "the hourly memory sweep failed");
            }
            index(&held).await;
        }
    });
}

/// The person's record of what they accept (§3) starts as what setup or enrolment shows
/// them. Written nowhere else: a file found without one accepted nothing. A failure is
/// logged; the person is then asked about everything in force at their first turn.
async fn first_record(state: &AppState, unlocked: &Unlocked) {
    let Some(session) = state.accounts.sessions().resolve(unlocked.token.as_bytes()).await else { return };
    if let Err(err) = state.agent.begin_record(&session).await {
        tracing::error!(user = %session.user_id, %err, "could not write the first record of what the person accepts");
    }
}

#[derive(Deserialize)]
pub struct Recovery {
    name: String,
    recovery_code: String,
    new_password: String,
}

/// `POST /api/recover`: a forgotten password, reset with the recovery code; a new code
/// replaces the spent one.
pub async fn recover(State(state): State<AppState>, Body(req): Body<Recovery>) -> Result<Json<UnlockedBody>, ApiError> {
    let (code, password) = (Zeroizing::new(req.recovery_code), Zeroizing::new(req.new_password));
    let unlocked = state.accounts.recover(&req.name, &code, &password).await?;
    close_interrupted(&state, &unlocked).await;
    Ok(Json(unlocked.into()))
}

/// `POST /api/logout`: ends this session and forgets its key.
pub async fn logout(State(state): State<AppState>, caller: Caller) -> StatusCode {
    state.accounts.sessions().end(&caller.token).await;
    StatusCode::NO_CONTENT
}

/// `POST /api/lock`: locks every window of the caller; their temporary chats go.
pub async fn lock(State(state): State<AppState>, caller: Caller) -> StatusCode {
    if let Err(err) = crate::store::chat::delete_temporary(&caller.session.space).await {
        tracing::warn!(user = %caller.session.user_id, %err, "could not delete temporary chats at lock");
    }
    state.accounts.sessions().end_user(&caller.session.user_id).await;
    if let Some(mcp) = state.agent.mcp() {
        mcp.stop_person(&caller.session.user_id).await;
    }
    StatusCode::NO_CONTENT
}

/// How many sessions a lock ended.
#[derive(Serialize, ts_rs::TS)]
pub struct Locked {
    pub locked: usize,
}

/// `POST /api/lock-all`: locks everyone (what the tray's Lock does).
pub async fn lock_all(State(state): State<AppState>) -> Json<Locked> {
    let locked = state.accounts.sessions().end_all().await;
    if let Some(mcp) = state.agent.mcp() {
        for user in mcp.people_running() {
            mcp.stop_person(&user).await;
        }
    }
    Json(Locked { locked })
}
