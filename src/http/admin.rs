//! Administrator routes: managing people and roles, reading the audit trail and the
//! instance-secret status. Every route here is `Admin` in the route table, so the caller's
//! role is checked on the server, against the stored role, before any handler runs.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::Value;

use super::AppState;
use super::auth::{AdminActor, Caller};
use super::error::ApiError;
use super::json::Body;
use super::people::Enrolment;
use crate::agent::consent::Change;
use crate::ids::{RoleId, UserId};
use crate::store::audit::{self, Entry};
use crate::store::roles::{self, Role};
use crate::users::PublicUser;
use crate::users::role_rules::RolePatch;

fn user_id(raw: &str) -> Result<UserId, ApiError> {
    UserId::parse(raw).ok_or(ApiError::NotFound)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonPatch {
    name: Option<String>,
    role: Option<String>,
}

/// `PATCH /api/users/{id}` `{"name"?, "role"?}`
pub async fn update_person(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Path(id): Path<String>,
    Body(patch): Body<PersonPatch>,
) -> Result<Json<PublicUser>, ApiError> {
    let id = user_id(&id)?;
    if patch.name.is_none() && patch.role.is_none() {
        return Err(ApiError::BadRequest { code: "empty_patch", message: "send a name, a role, or both".into() });
    }
    let mut user = None;
    if let Some(name) = patch.name {
        user = Some(state.accounts.rename_person(&actor, &id, &name).await?);
    }
    if let Some(role) = patch.role {
        user = Some(state.accounts.change_role(&actor, &id, &RoleId::new(role)).await?);
        if id == actor.id {
            state.agent.accept_own(&caller.session, own_role_change).await;
        }
        state.agent.announce_notices(Some(&actor.id)).await;
    }
    Ok(Json(user.expect("one of the two was sent")))
}

/// `POST /api/users/{id}/deactivate`: their sessions end at once.
pub async fn deactivate(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<Json<PublicUser>, ApiError> {
    let id = user_id(&id)?;
    Ok(Json(state.accounts.deactivate(&actor, &id).await?))
}

/// `POST /api/users/{id}/reactivate`
pub async fn reactivate(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<Json<PublicUser>, ApiError> {
    let id = user_id(&id)?;
    Ok(Json(state.accounts.reactivate(&actor, &id).await?))
}

#[derive(Deserialize)]
pub struct Confirmation {
    /// The person's exact name.
    confirm: String,
}

/// `DELETE /api/users/{id}` `{"confirm": "<their name>"}`: removes them and destroys
/// their private file.
pub async fn delete_person(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
    Body(body): Body<Confirmation>,
) -> Result<StatusCode, ApiError> {
    let id = user_id(&id)?;
    state.accounts.delete_person(&actor, &id, &body.confirm).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/people`: everyone, whatever their state (pending, active, deactivated), for
/// the administration pages; the login picker shows only who can log in.
pub async fn people(State(state): State<AppState>) -> Result<Json<Vec<crate::users::PublicUser>>, ApiError> {
    let rows = crate::store::users::list(state.accounts.system()).await?;
    Ok(Json(rows.iter().map(crate::users::PublicUser::from).collect()))
}

/// `POST /api/users/{id}/enrolment-code`: a new code for someone not yet enrolled.
pub async fn reissue_enrolment(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<Json<Enrolment>, ApiError> {
    let id = user_id(&id)?;
    let (user, code) = state.accounts.reissue_enrolment(&actor, &id).await?;
    Ok(Json(Enrolment::new(user, &code)))
}

/// `GET /api/roles`
pub async fn list_roles(State(state): State<AppState>) -> Result<Json<Vec<Role>>, ApiError> {
    Ok(Json(roles::list(state.accounts.system()).await?))
}

#[derive(Deserialize)]
pub struct NewRole {
    id: String,
    label: String,
    #[serde(flatten)]
    attributes: Value,
}

/// `POST /api/roles` `{"id","label", …attributes}`
pub async fn create_role(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Body(req): Body<NewRole>,
) -> Result<(StatusCode, Json<Role>), ApiError> {
    let patch: RolePatch = serde_json::from_value(req.attributes).map_err(|err| ApiError::invalid_role(&err))?;
    let role = state.accounts.create_role(&actor, RoleId::new(req.id), req.label, patch).await?;
    Ok((StatusCode::CREATED, Json(role)))
}

/// `PATCH /api/roles/{id}` with any attributes; the rest stay.
pub async fn update_role(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
    caller: Caller,
    Body(patch): Body<RolePatch>,
) -> Result<Json<Role>, ApiError> {
    let mine = state.agent.role_of(&caller.session.user_id).await.is_ok_and(|r| r.id.as_str() == id);
    let role = state.accounts.update_role(&actor, &RoleId::new(id), patch).await?;
    if mine {
        state.agent.accept_own(&caller.session, own_role_change).await;
    }
    // Open pages read their notices again: a change that widens holds the next turn (§3).
    state.agent.announce_notices(Some(&actor.id)).await;
    Ok(Json(role))
}

/// `DELETE /api/roles/{id}`: only a role nobody has.
pub async fn delete_role(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.accounts.delete_role(&actor, &RoleId::new(id)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/instance/secrets`: where the instance key is kept, and whether it loaded.
pub async fn secrets_status(State(state): State<AppState>) -> Json<crate::secrets::Status> {
    Json(state.secrets.status())
}

/// `GET /api/audit`: the whole trail, newest first.
pub async fn audit_trail(State(state): State<AppState>) -> Result<Json<Vec<Entry>>, ApiError> {
    Ok(Json(audit::all(state.accounts.system()).await?))
}

/// `GET /api/usage`: each person's model use — requests and tokens today, over the last
/// 30 days and in all — and never what was asked.
pub async fn usage(State(state): State<AppState>) -> Result<Json<Vec<crate::store::usage::PersonUsage>>, ApiError> {
    let today = crate::agent::usage::today();
    let month_start = crate::agent::usage::month_start(&today);
    Ok(Json(crate::store::usage::summary(&state.system, &today, &month_start).await?))
}

/// What an administrator's change to their own role brings them, theirs to have accepted
/// (§3): the role's attributes, and providers newly within reach.
fn own_role_change(change: &Change) -> bool {
    change.key.starts_with("role.") || (change.key.starts_with("provider.") && change.before.is_null())
}
