//! The caller's memories (§10): their private pool (in their own encrypted file) and the
//! shared pool, listed, searched, written by hand (no card: their own hand), edited,
//! pinned and erased — one at a time or everything about a subject.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use super::json::Body;
use crate::agent::meaning::MemoryCorpus;
use crate::agent::memory::{self, may_edit, may_erase};
use crate::ids::UserId;
use crate::store::StoreError;
use crate::store::memories::{Author, Memory, MemoryId, Pool, Pools, Subject};
use crate::store::roles::Role;
use crate::store::users;

/// How many memories a list returns at most by default, and at all.
const DEFAULT_LIMIT: usize = 200;
const MOST: usize = 1000;

#[derive(Deserialize)]
pub struct ListQuery {
    pool: Option<Pool>,
    /// `self`, `instance`, or a member's user id.
    subject: Option<String>,
    q: Option<String>,
    limit: Option<usize>,
}

fn no_memory() -> ApiError {
    ApiError::Missing { code: "no_memory", message: "there is no such memory you can read".into() }
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::BadRequest { code: "invalid_memory", message: message.into() }
}

async fn role(state: &AppState, caller: &Caller) -> Result<Role, ApiError> {
    Ok(state.agent.role_of(&caller.session.user_id).await?)
}

/// `GET /api/memories?pool=&subject=&q=&limit=`: what I can read, newest first; with `q`,
/// most relevant first.
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<ListQuery>,
) -> Result<Json<Vec<Memory>>, ApiError> {
    let me = &caller.session.user_id;
    let pools = Pools { owner: me, space: &caller.session.space, system: &state.system };
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MOST);
    let mut found = match query.q.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
        Some(q) => {
            let (mut found, by) =
                state.agent.meaning().search(&MemoryCorpus { pools: &pools, only: query.pool }, q, MOST).await?;
            found.retain(|m| memory::relevant(by, m));
            found
        }
        None => pools.list(query.pool).await?,
    };
    if let Some(subject) = query.subject.as_deref() {
        found.retain(|m| match (subject, &m.subject) {
            ("self", s) => s.is_about(me, me),
            ("instance", Subject::Instance) => true,
            (id, s) => crate::ids::UserId::parse(id).is_some_and(|id| s.is_about(&id, me)),
        });
    }
    found.truncate(limit);
    Ok(Json(named(&state, me, found).await?))
}

/// Fills in the names of the people memories are about and of those who wrote them: the
/// people here are few, and a member cannot list them otherwise.
async fn named(state: &AppState, viewer: &UserId, mut found: Vec<Memory>) -> Result<Vec<Memory>, ApiError> {
    let people: std::collections::HashMap<UserId, String> =
        users::list(&state.system).await?.into_iter().map(|u| (u.id, u.name)).collect();
    for memory in &mut found {
        let about = match &memory.subject {
            Subject::Own => Some(viewer),
            Subject::Member { id } => Some(id),
            Subject::Instance => None,
        };
        memory.about_name = about.and_then(|id| people.get(id).cloned());
        if let Author::Person { id } = &memory.author {
            memory.author_name = people.get(id).cloned();
        }
    }
    Ok(found)
}

/// `GET /api/memories/{id}`
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<MemoryId>,
) -> Result<Json<Memory>, ApiError> {
    let me = &caller.session.user_id;
    let pools = Pools { owner: me, space: &caller.session.space, system: &state.system };
    let memory = pools.get(&id).await?.ok_or_else(no_memory)?;
    Ok(Json(named(&state, me, vec![memory]).await?.remove(0)))
}

#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct NewMemoryBody {
    text: String,
    pool: Pool,
    subject: Subject,
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pinned: bool,
}

#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "MemoryCreated")]
pub struct Created {
    pub id: MemoryId,
}

/// `POST /api/memories` `{"text","pool","subject"}`: a memory I write myself, no card.
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<NewMemoryBody>,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    let me = &caller.session.user_id;
    let role = role(&state, &caller).await?;
    let arguments = serde_json::json!({ "text": req.text, "pool": req.pool, "subject": req.subject });
    let checked = memory::check(&state.system, me, &role, &arguments).await?.map_err(invalid)?;
    let pools = Pools { owner: me, space: &caller.session.space, system: &state.system };
    let author = Author::Person { id: me.clone() };
    let kept = checked.keep(&pools, &author, None, (!req.pinned).then_some(role.memory_retention_days)).await?;
    Ok((StatusCode::CREATED, Json(Created { id: kept.id })))
}

#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "MemoryChange")]
pub struct Change {
    #[ts(optional)]
    text: Option<String>,
    #[ts(optional)]
    pinned: Option<bool>,
    /// `shared` promotes a private memory, by its owner; a shared one never goes back.
    #[ts(optional)]
    pool: Option<Pool>,
}

/// `PATCH /api/memories/{id}` `{"text"?,"pinned"?,"pool"?}`: only the owner (for a shared
/// one, the one who kept it or an administrator) edits; the owner may share a private one.
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<MemoryId>,
    Body(req): Body<Change>,
) -> Result<Json<Memory>, ApiError> {
    let me = &caller.session.user_id;
    let role = role(&state, &caller).await?;
    let pools = Pools { owner: me, space: &caller.session.space, system: &state.system };
    let memory = pools.get(&id).await?.ok_or_else(no_memory)?;
    if !may_edit(&memory, me, role.manage_instance) {
        return Err(ApiError::Forbidden {
            code: "not_yours",
            message: "this shared memory was kept by someone else; only they or an administrator can change it",
        });
    }
    if let Some(text) = &req.text {
        crate::store::memories::check(text).map_err(invalid)?;
    }
    match (memory.pool, req.pool) {
        (Pool::Shared, Some(Pool::Private)) => {
            return Err(invalid("a shared memory cannot be made private again; erase it instead"));
        }
        (Pool::Private, Some(Pool::Shared)) => pools.promote(&id).await?,
        _ => {}
    }
    let updated = pools.update(&id, req.text.as_deref(), req.pinned, role.memory_retention_days).await?;
    if req.text.as_ref().is_some_and(|t| t.trim() != memory.text) {
        crate::store::memories::redact(&caller.session.space, std::slice::from_ref(&memory.text)).await?;
    }
    Ok(Json(updated))
}

/// `DELETE /api/memories/{id}`: erased for good, and its sentence redacted where it was
/// written.
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<MemoryId>,
) -> Result<StatusCode, ApiError> {
    let me = &caller.session.user_id;
    let role = role(&state, &caller).await?;
    let pools = Pools { owner: me, space: &caller.session.space, system: &state.system };
    let memory = pools.get(&id).await?.ok_or_else(no_memory)?;
    if !may_erase(&memory, me, role.manage_instance) {
        return Err(ApiError::Forbidden {
            code: "not_yours",
            message: "this shared memory was kept by someone else and is not about you; only they or an administrator can erase it",
        });
    }
    match memory::erase_one(&state.system, me, &caller.session.space, &memory).await {
        Ok(()) | Err(StoreError::NotFound) => Ok(StatusCode::NO_CONTENT),
        Err(err) => Err(err.into()),
    }
}

#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "MemoryErase")]
pub struct Erase {
    subject: Subject,
}

#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "MemoryErased")]
pub struct Erased {
    pub erased: usize,
    /// Redactions waiting for another person's file, applied at their next unlock.
    pub queued: usize,
}

/// `POST /api/memories/erase` `{"subject"}`: everything about a subject I may erase, at once.
pub async fn erase(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<Erase>,
) -> Result<Json<Erased>, ApiError> {
    let me = &caller.session.user_id;
    let role = role(&state, &caller).await?;
    let (erased, queued) =
        memory::erase_about(&state.system, me, &caller.session.space, &req.subject, role.manage_instance).await?;
    Ok(Json(Erased { erased, queued }))
}

#[derive(Deserialize)]
pub struct RecallQuery {
    q: String,
}

/// `GET /api/memories/recall?q=`: what a turn with that message would read into its context.
pub async fn recall(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<RecallQuery>,
) -> Result<Json<Vec<Memory>>, ApiError> {
    let pools = Pools { owner: &caller.session.user_id, space: &caller.session.space, system: &state.system };
    let (found, _) = memory::for_turn(&pools, &state.agent.meaning(), &query.q, false).await?;
    Ok(Json(named(&state, &caller.session.user_id, found).await?))
}

/// How memories are searched now (`GET /api/memories/search`).
#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "MemorySearch")]
pub struct Search {
    /// `meaning` with the embedding model, `words` (full-text) without one.
    pub by: memory::By,
    /// The embedding model's name, when one is used.
    pub model: Option<String>,
}

/// `GET /api/memories/search`: whether search and recall go by meaning or by words.
pub async fn search(State(state): State<AppState>, _caller: Caller) -> Result<Json<Search>, ApiError> {
    let model = state.agent.meaning().model_name().await;
    Ok(Json(Search { by: if model.is_some() { memory::By::Meaning } else { memory::By::Words }, model }))
}
