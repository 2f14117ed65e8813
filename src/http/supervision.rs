//! Supervision (docs/architecture.md §6.2): administrators ask for edges, the supervised
//! person accepts them in their own session (or enrols with them), the supervisor reads
//! read-only, every read logged in the supervised person's file and shown to them, and
//! either side (or an administrator) ends an edge, after which the supervised person may
//! rotate their key.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::json;
use ts_rs::TS;
use zeroize::Zeroizing;

use super::AppState;
use super::auth::{AdminActor, Caller, managing_actor};
use super::error::ApiError;
use super::json::Body;
use super::people::UnlockedBody;
use crate::agent::events::LiveEvent;
use crate::agent::inbox::{CardView, card_view};
use crate::ids::{ConversationId, UserId};
use crate::store::approvals::{self, CardKind, CardState};
use crate::store::audit::Actor;
use crate::store::chat::{self, Conversation, Message};
use crate::store::memories::{Memory, Pool, Pools};
use crate::store::notes::{self, Note, NoteSummary};
use crate::store::supervision::{self as edges, AccessEntry, Edge};
use crate::store::{notices, users};
use crate::users::supervision::SupervisedSpace;

/// `POST /api/supervision`.
#[derive(Deserialize, TS)]
#[ts(rename = "NewSupervision")]
pub struct NewEdge {
    pub supervisor: String,
    pub supervised: String,
}

/// `GET /api/me/supervision`: both directions.
#[derive(Serialize, TS)]
#[ts(rename = "MySupervision")]
pub struct Mine {
    /// People whose space I may open (active) or who were asked to let me (pending).
    pub supervising: Vec<Edge>,
    /// People who may open my space (active), or asked to (pending: mine to accept).
    pub supervised_by: Vec<Edge>,
}

/// `POST /api/me/rotate-key`.
#[derive(Deserialize)]
pub struct Rotation {
    password: String,
}

/// `POST /api/enrol/check`.
#[derive(Deserialize)]
pub struct EnrolmentCheck {
    name: String,
    enrolment_code: String,
}

/// What the enrolment screen says before a password is chosen.
#[derive(Serialize, TS)]
#[ts(rename = "EnrolmentCheck")]
pub struct EnrolmentChecked {
    /// Who will be able to open this space once it exists, by name.
    pub supervisors: Vec<String>,
}

async fn actor_of(state: &AppState, caller: &Caller) -> Result<Actor, ApiError> {
    let row = users::find(state.accounts.system(), &caller.session.user_id).await?.ok_or(ApiError::NotFound)?;
    Ok(Actor { id: row.id, name: row.name })
}

/// `POST /api/supervision` (administrators): asks for an edge. A person still to enrol
/// gets it at enrolment; an enrolled one is asked in their inbox.
pub async fn request(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Body(body): Body<NewEdge>,
) -> Result<(StatusCode, Json<Edge>), ApiError> {
    let supervisor = UserId::parse(&body.supervisor).ok_or(ApiError::NotFound)?;
    let supervised = UserId::parse(&body.supervised).ok_or(ApiError::NotFound)?;
    let edge = state.accounts.request_supervision(&actor, &supervisor, &supervised).await?;
    if !edge.at_enrolment {
        let body = json!({ "edge": edge.id, "supervisor": edge.supervisor_name, "by": actor.name });
        notices::tell(state.accounts.system(), &edge.supervised_id, "supervision_requested", &body).await?;
        state.agent.events().to_person(&edge.supervised_id, &LiveEvent::Notice);
    }
    Ok((StatusCode::CREATED, Json(edge)))
}

/// `GET /api/supervision` (administrators): every edge, with its counts.
pub async fn list(State(state): State<AppState>) -> Result<Json<Vec<Edge>>, ApiError> {
    Ok(Json(edges::all(state.accounts.system()).await?))
}

/// `GET /api/me/supervision`
pub async fn mine(State(state): State<AppState>, caller: Caller) -> Result<Json<Mine>, ApiError> {
    let me = &caller.session.user_id;
    let all = edges::of_person(state.accounts.system(), me).await?;
    let (supervised_by, supervising) = all.into_iter().partition(|e| &e.supervised_id == me);
    Ok(Json(Mine { supervising, supervised_by }))
}

/// `POST /api/supervision/{id}/accept`: the supervised person, in their own session,
/// seals a copy of their key to the supervisor.
pub async fn accept(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Edge>, ApiError> {
    Ok(Json(state.accounts.accept_supervision(&caller.session, &id).await?))
}

/// `DELETE /api/supervision/{id}`: an administrator, the supervisor, or the supervised
/// person where their role allows. The key copy is destroyed; the supervised person is
/// told, and offered a new key (`POST /api/me/rotate-key`).
pub async fn end(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Edge>, ApiError> {
    let admin = managing_actor(&state, &caller.session).await?;
    let actor = match &admin {
        Some(actor) => actor.clone(),
        None => actor_of(&state, &caller).await?,
    };
    let edge = state.accounts.end_supervision(&actor, admin.is_some(), &id).await?;
    if edge.state == "active" {
        let body = json!({ "supervisor": edge.supervisor_name, "by": actor.name, "rotate": true });
        notices::tell(state.accounts.system(), &edge.supervised_id, "supervision_ended", &body).await?;
        state.agent.events().to_person(&edge.supervised_id, &LiveEvent::Notice);
    }
    Ok(Json(edge))
}

/// `POST /api/me/rotate-key` `{"password"}`: a new key for my space; every window of mine
/// locks, and this answer is the new session with a new recovery code (shown once).
pub async fn rotate_key(
    State(state): State<AppState>,
    caller: Caller,
    Body(body): Body<Rotation>,
) -> Result<Json<UnlockedBody>, ApiError> {
    let password = Zeroizing::new(body.password);
    let unlocked = state.accounts.rotate_key(&caller.session, &password).await?;
    Ok(Json(unlocked.into()))
}

/// `GET /api/me/access-log`: every time a supervisor opened my space and what they read,
/// newest first.
pub async fn access_log(caller: Caller) -> Result<Json<Vec<AccessEntry>>, ApiError> {
    Ok(Json(edges::access_log(&caller.session.space, 500).await?))
}

/// `POST /api/enrol/check`: before a person chooses a password, who their account was
/// made to be supervised by. Limited as enrolments are.
pub async fn enrolment_check(
    State(state): State<AppState>,
    Body(body): Body<EnrolmentCheck>,
) -> Result<Json<EnrolmentChecked>, ApiError> {
    let code = Zeroizing::new(body.enrolment_code);
    let supervisors = state.accounts.supervisors_at_enrolment(&body.name, &code).await?;
    Ok(Json(EnrolmentChecked { supervisors }))
}

/// The supervised person's space, opened for the caller; 403 without an active edge.
async fn open(state: &AppState, caller: &Caller, user: &str) -> Result<SupervisedSpace, ApiError> {
    let supervised = UserId::parse(user).ok_or(ApiError::NotFound)?;
    Ok(state.accounts.open_supervised(&caller.session, &supervised).await?)
}

/// Runs `read` on the opened space, logs the access before answering, and closes it.
async fn reading<T>(
    state: &AppState,
    opened: SupervisedSpace,
    (action, what, item): (&str, &str, Option<&str>),
    read: impl AsyncFnOnce(&SupervisedSpace) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    let outcome = async {
        let found = read(&opened).await?;
        opened.log(&state.accounts, action, what, item).await?;
        Ok(found)
    }
    .await;
    opened.close().await;
    outcome
}

/// `GET /api/supervised/{user}/sessions`: their conversations (logged as opened).
pub async fn sessions(
    State(state): State<AppState>,
    caller: Caller,
    Path(user): Path<String>,
) -> Result<Json<Vec<Conversation>>, ApiError> {
    let opened = open(&state, &caller, &user).await?;
    let found =
        reading(&state, opened, ("opened", "conversations", None), async |s| Ok(chat::conversations(&s.space).await?))
            .await?;
    Ok(Json(found))
}

/// `GET /api/supervised/{user}/sessions/{id}/messages`: one conversation (logged as read).
pub async fn messages(
    State(state): State<AppState>,
    caller: Caller,
    Path((user, id)): Path<(String, String)>,
) -> Result<Json<Vec<Message>>, ApiError> {
    let conversation = ConversationId::new(id);
    let opened = open(&state, &caller, &user).await?;
    let found = reading(&state, opened, ("read", "conversation", Some(&conversation)), async |s| {
        chat::conversation(&s.space, &conversation).await?.ok_or(ApiError::NotFound)?;
        Ok(chat::history(&s.space, &conversation).await?)
    })
    .await?;
    Ok(Json(found))
}

/// `GET /api/supervised/{user}/notes`: their notes' titles (logged as opened).
pub async fn notes_list(
    State(state): State<AppState>,
    caller: Caller,
    Path(user): Path<String>,
) -> Result<Json<Vec<NoteSummary>>, ApiError> {
    let opened = open(&state, &caller, &user).await?;
    let found = reading(&state, opened, ("opened", "notes", None), async |s| Ok(notes::list(&s.space).await?)).await?;
    Ok(Json(found))
}

/// `GET /api/supervised/{user}/notes/{id}`: one note (logged as read).
pub async fn note(
    State(state): State<AppState>,
    caller: Caller,
    Path((user, id)): Path<(String, i64)>,
) -> Result<Json<Note>, ApiError> {
    let opened = open(&state, &caller, &user).await?;
    let item = id.to_string();
    let found = reading(&state, opened, ("read", "note", Some(&item)), async |s| {
        notes::get(&s.space, id).await?.ok_or(ApiError::NotFound)
    })
    .await?;
    Ok(Json(found))
}

/// `GET /api/supervised/{user}/memories`: what Skald remembers for them, from their own
/// file (logged as read).
pub async fn memories(
    State(state): State<AppState>,
    caller: Caller,
    Path(user): Path<String>,
) -> Result<Json<Vec<Memory>>, ApiError> {
    let opened = open(&state, &caller, &user).await?;
    let system = state.system.clone();
    let found = reading(&state, opened, ("read", "memories", None), async |s| {
        let pools = Pools { owner: &s.person.id, space: &s.space, system: &system };
        Ok(pools.list(Some(Pool::Private)).await?)
    })
    .await?;
    Ok(Json(found))
}

/// `GET /api/supervised/{user}/cards`: the cards waiting for their supervisor — calls their
/// role may not approve (logged as opened).
pub async fn cards(
    State(state): State<AppState>,
    caller: Caller,
    Path(user): Path<String>,
) -> Result<Json<Vec<CardView>>, ApiError> {
    let opened = open(&state, &caller, &user).await?;
    let found = reading(&state, opened, ("opened", "cards", None), async |s| {
        let pending = approvals::pending(&s.space).await?;
        Ok(pending.iter().filter(|c| c.kind == CardKind::Approval).map(card_view).collect())
    })
    .await?;
    Ok(Json(found))
}

/// `POST /api/supervised/{user}/cards/{id}`.
#[derive(Deserialize)]
pub struct SupervisorDecision {
    allow: bool,
    /// The arguments' hash as shown; a card that changed since is refused.
    #[serde(default)]
    arguments_hash: Option<String>,
}

/// `POST /api/supervised/{user}/cards/{id}` `{"allow","arguments_hash"}`: the supervisor
/// decides a card of a role that sends them its cards. The person's turn resumes at once
/// when they are logged in, else at their next login; either way the card says who
/// decided, and their access log has it.
pub async fn decide_card(
    State(state): State<AppState>,
    caller: Caller,
    Path((user, id)): Path<(String, String)>,
    Body(body): Body<SupervisorDecision>,
) -> Result<Json<CardView>, ApiError> {
    let opened = open(&state, &caller, &user).await?;
    let role = state.agent.role_of(&opened.person.id).await?;
    if !role.cards_to_supervisor {
        let message = format!("{}'s role decides their own cards", opened.person.name);
        opened.close().await;
        return Err(ApiError::Refused { code: "not_routed", message });
    }
    let me = actor_of(&state, &caller).await?;
    let action = if body.allow { "allowed" } else { "denied" };
    let live = state.accounts.sessions().of_user(&opened.person.id);
    let hash = body.arguments_hash.clone();
    let decided = reading(&state, opened, (action, "card", Some(&id)), async |s| match live {
        Some(session) => {
            let (card, _) = state.agent.decide_for(session, &id, body.allow, hash.as_deref(), &me.name).await?;
            Ok(card)
        }
        None => {
            let card = approvals::get(&s.space, &id).await?.ok_or(ApiError::NotFound)?;
            if card.kind != CardKind::Approval || card.state != CardState::Pending {
                return Err(ApiError::Conflict {
                    code: "already_decided",
                    message: "this card was already decided".into(),
                });
            }
            if hash.as_deref().is_some_and(|seen| seen != card.arguments_hash) {
                return Err(ApiError::Conflict {
                    code: "card_changed",
                    message: "the card changed since you saw it; look at it again before deciding".into(),
                });
            }
            // The turn goes on at the person's next login, when its cards are all decided.
            approvals::decide(&s.space, &id, body.allow, None, Some(&me.name)).await?;
            let card = approvals::get(&s.space, &id).await?.ok_or(ApiError::NotFound)?;
            Ok(card_view(&card))
        }
    })
    .await?;
    Ok(Json(decided))
}
