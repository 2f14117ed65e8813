//! Conversations (§8.1): create, list, rename, delete; send a message (which starts a
//! turn), read the history, stop. Everything read or written here is in the caller's own
//! encrypted file; live progress goes out over the WebSocket.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AppState;
use super::auth::Caller;
use super::error::{ApiError, Subject};
use super::json::Body;
use crate::agent::Said;
use crate::agent::TurnError;
use crate::agent::definition::DefinitionError;
use crate::agent::documents::{self, AttachError};
use crate::agent::prompts::PromptRefused;
use crate::ids::{ConversationId, DocumentId, TurnId};
use crate::providers::privacy::Tier;
use crate::store::StoreError;
use crate::store::chat::{self, Conversation, Message};
use crate::store::providers::ProviderKind;

/// The longest message a person can send: far beyond any context window, short of abuse.
const MAX_MESSAGE_BYTES: usize = 256 * 1024;
const MAX_TITLE_CHARS: usize = 200;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewSession {
    agent: Option<String>,
    model: Option<String>,
    /// A temporary chat: no memory read or written, not listed, deleted when left.
    #[serde(default)]
    temporary: bool,
}

/// `POST /api/sessions`: a new conversation, optionally pinned to a model the role allows.
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<NewSession>,
) -> Result<(StatusCode, Json<Conversation>), ApiError> {
    let agent = req.agent.as_deref().unwrap_or("main");
    match state.agent.agents().load(agent) {
        Ok(_) | Err(DefinitionError::Malformed { .. }) => {}
        Err(err) => return Err(TurnError::Agent(err).into()),
    }
    if let Some(model) = &req.model {
        state.agent.check_pin_of(&caller.session, model).await?;
    }
    let id = ConversationId::generate();
    let mut session = chat::create_conversation(&caller.session.space, &id, agent, req.model.as_deref()).await?;
    if req.temporary {
        chat::make_temporary(&caller.session.space, &id).await?;
        session.temporary = true;
    }
    Ok((StatusCode::CREATED, Json(session)))
}

/// `GET /api/sessions`: my conversations, most recent first.
pub async fn list(caller: Caller) -> Result<Json<Vec<Conversation>>, ApiError> {
    Ok(Json(chat::conversations(&caller.session.space).await?))
}

#[derive(Deserialize)]
pub struct SearchQuery {
    q: Option<String>,
    limit: Option<u32>,
}

/// How many hits a search returns unless asked for fewer, and at most.
const HITS: u32 = 20;
const MAX_HITS: u32 = 50;

/// What `GET /api/sessions/search` answers: the matching rows, best first.
#[derive(Serialize, ts_rs::TS)]
pub struct SessionHits {
    pub hits: Vec<chat::Hit>,
}

/// `GET /api/sessions/search?q=words[&limit=n]`: rows of my conversations holding every
/// word, each with its conversation's title and a snippet. 400 `invalid_query` without a
/// word to look for; `limit` is kept between 1 and 50.
pub async fn search(caller: Caller, Query(search): Query<SearchQuery>) -> Result<Json<SessionHits>, ApiError> {
    let Some(query) = search.q.as_deref().map(str::trim).filter(|q| !q.is_empty()) else {
        return Err(ApiError::BadRequest { code: "invalid_query", message: "give a word to search for".into() });
    };
    let limit = search.limit.unwrap_or(HITS).clamp(1, MAX_HITS);
    Ok(Json(SessionHits { hits: chat::search(&caller.session.space, query, limit).await? }))
}

/// Where the next turn of a conversation would go.
#[derive(Serialize, ts_rs::TS)]
pub struct NextModel {
    pub name: String,
    pub provider: String,
    pub privacy: Tier,
}

/// A conversation with the model its next turn would use, null when none is usable now,
/// and the versions of the turns on its active path that have more than one.
#[derive(Serialize, ts_rs::TS)]
pub struct SessionDetail {
    #[serde(flatten)]
    pub session: Conversation,
    pub next_model: Option<NextModel>,
    pub versions: Vec<chat::Versions>,
}

/// `GET /api/sessions/{id}`, with `next_model`: the model the next turn would use as
/// things are now (`name`, `provider`, `privacy`), or null when none is usable; and
/// `versions`: each turn of the active path that has other versions, with all of them.
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<ConversationId>,
) -> Result<Json<SessionDetail>, ApiError> {
    let session = find(&caller, &id).await?;
    let (next, versions) = tokio::join!(
        state.agent.next_model(&caller.session, &session.agent, session.model.as_deref()),
        chat::versions(&caller.session.space, &id)
    );
    let next_model = next.map(|m| NextModel { name: m.name, provider: m.provider, privacy: m.privacy });
    Ok(Json(SessionDetail { session, next_model, versions: versions? }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionPatch {
    title: Option<String>,
    /// Keep it at the top of the list, or not.
    pinned: Option<bool>,
    /// Put it away out of the list, or back.
    archived: Option<bool>,
    /// A model to pin the conversation to; `null` unpins it; absent leaves it.
    #[serde(default, deserialize_with = "crate::users::role_rules::present")]
    model: Option<Option<String>>,
}

/// `PATCH /api/sessions/{id}` `{"title"?, "model"?, "pinned"?, "archived"?}`: renames a
/// conversation, pins it to another model the role allows (403 otherwise) or unpins it
/// with `null`, keeps it at the top of the list, or puts it away.
pub async fn rename(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<ConversationId>,
    Body(req): Body<SessionPatch>,
) -> Result<StatusCode, ApiError> {
    find(&caller, &id).await?;
    if let Some(title) = &req.title {
        let title = title.trim();
        if title.chars().count() > MAX_TITLE_CHARS {
            let message = format!("a title has at most {MAX_TITLE_CHARS} characters");
            return Err(ApiError::BadRequest { code: "invalid_title", message });
        }
        chat::rename_conversation(&caller.session.space, &id, title)
            .await
            .map_err(ApiError::about(Subject::Conversation))?;
    }
    if req.pinned.is_some() || req.archived.is_some() {
        chat::set_flags(&caller.session.space, &id, req.pinned, req.archived)
            .await
            .map_err(ApiError::about(Subject::Conversation))?;
    }
    if let Some(model) = &req.model {
        if let Some(name) = model {
            state.agent.check_pin_of(&caller.session, name).await?;
        }
        chat::set_conversation_model(&caller.session.space, &id, model.as_deref())
            .await
            .map_err(ApiError::about(Subject::Conversation))?;
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /api/sessions/{id}`: deletes a conversation and its history.
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<ConversationId>,
) -> Result<StatusCode, ApiError> {
    if state.agent.is_running(&caller.session.user_id, &id) {
        // A temporary chat is deleted when left, even mid-reply (the page closing): its
        // turn is stopped first. Any other conversation is kept until the turn ends.
        let temporary = chat::conversation(&caller.session.space, &id).await?.is_some_and(|c| c.temporary);
        if !temporary {
            return Err(TurnError::Busy.into());
        }
        state.agent.stop(&caller.session, &id).await?;
    }
    chat::delete_conversation(&caller.session.space, &id).await.map_err(ApiError::about(Subject::Conversation))?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct NewMessage {
    text: String,
    /// A turn of the active path this message is another version of: the person's
    /// message there, edited and sent again.
    #[ts(optional)]
    replaces: Option<TurnId>,
    /// Resources of tool servers (MCP) to attach: read now, they follow the words as
    /// outside content.
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<Attached>>")]
    resources: Vec<Attached>,
    /// Documents to attach (the sender's own or shared ones, read): each goes in whole
    /// when it fits the window of the model that will reply, otherwise named for the model
    /// to read by pages; either way as outside content.
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<DocumentId>>")]
    documents: Vec<DocumentId>,
}

/// A tool server's resource to attach to a message.
#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "AttachedResource")]
pub struct Attached {
    server: crate::ids::McpServerId,
    uri: String,
}

/// How many resources one message may carry.
const MAX_ATTACHED: usize = 4;

/// A turn just started: its id and the person's message row (202 of send and retry).
#[derive(Serialize, ts_rs::TS)]
pub struct TurnStarted {
    pub turn: TurnId,
    pub message: i64,
}

impl From<crate::agent::Started> for TurnStarted {
    fn from(started: crate::agent::Started) -> Self {
        Self { turn: started.turn_id, message: started.message_id }
    }
}

/// `POST /api/sessions/{id}/messages` `{"text", "replaces"?, "resources"?, "documents"?}`:
/// sends a message and starts
/// a turn. 202 once the message is committed; the reply streams over the WebSocket. With
/// `replaces`, the message is another version of that turn's (see
/// `store::chat::branches`): the turn and what followed it stay, on their own path.
pub async fn send(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<ConversationId>,
    Body(req): Body<NewMessage>,
) -> Result<(StatusCode, Json<TurnStarted>), ApiError> {
    if req.text.trim().is_empty() {
        return Err(ApiError::BadRequest { code: "empty_message", message: "the message is empty".into() });
    }
    if req.text.len() > MAX_MESSAGE_BYTES {
        let message =
            format!("the message is longer than {} KiB; attach it as a file instead", MAX_MESSAGE_BYTES / 1024);
        return Err(ApiError::BadRequest { code: "message_too_long", message });
    }
    if req.resources.len() > MAX_ATTACHED {
        let message = format!("a message takes at most {MAX_ATTACHED} resources");
        return Err(ApiError::BadRequest { code: "too_many_resources", message });
    }
    if req.documents.len() > documents::MAX_ATTACHED {
        let message = format!("a message takes at most {} documents", documents::MAX_ATTACHED);
        return Err(ApiError::BadRequest { code: "too_many_documents", message });
    }
    let mut text = req.text;
    let mut pictures = Vec::new();
    if !req.documents.is_empty() {
        let attached = attach_documents(&state, &caller, &id, &req.documents).await?;
        text = format!("{text}\n\n{}", attached.blocks);
        pictures = attached.pictures;
    }
    if !req.resources.is_empty() {
        let wanted: Vec<_> = req.resources.into_iter().map(|r| (r.server, r.uri)).collect();
        match state.agent.attach(&caller.session, &id, &wanted).await? {
            Ok(blocks) => text = format!("{text}\n\n{blocks}"),
            Err(PromptRefused::NotYours) => {
                let message = "there is no tool server by that id among yours (a new one waits until you continue)";
                return Err(ApiError::Missing { code: "no_tool_server", message: message.into() });
            }
            Err(PromptRefused::Server(why)) => {
                return Err(ApiError::Unavailable { code: "tool_server_failed", message: why });
            }
        }
    }
    let said = Said { text, pictures };
    let started = match req.replaces {
        Some(turn) => state.agent.version_turn(caller.session.clone(), &id, &turn, Some(said)).await?,
        None => state.agent.start_turn(caller.session.clone(), &id, said).await?,
    };
    Ok((StatusCode::ACCEPTED, Json(started.into())))
}

/// Documents `ids` as they follow a message in conversation `id`, sized for the model
/// that would reply; the conversation then holds outside content.
async fn attach_documents(
    state: &AppState,
    caller: &Caller,
    id: &ConversationId,
    ids: &[DocumentId],
) -> Result<documents::Attached, ApiError> {
    use crate::providers::privacy::classify;
    let conversation = find(caller, id).await?;
    let next = state.agent.next_models(&caller.session, &conversation.agent, conversation.model.as_deref()).await;
    // With no model to reply, nothing is sent anywhere: the turn will say why.
    let (window, remote, images) = next.map_or((0, false, false), |(model, fallback)| {
        let remote = model.privacy == Tier::Remote
            || fallback.as_ref().is_some_and(|f| classify(f.kind, &f.base_url, f.trusted_lan) == Tier::Remote);
        // A picture goes as itself only when the fallback, too, would see it.
        let images = model.images && fallback.is_none_or(|f| f.images);
        (model.context_window, remote, images)
    });
    let space = &caller.session.space;
    match state.documents.attach(space, ids, window, remote, images).await? {
        Ok(blocks) => {
            chat::mark_outside_content(space, id).await?;
            Ok(blocks)
        }
        Err(AttachError::Missing(_)) => Err(ApiError::no_document()),
        Err(err @ AttachError::NotReady(_)) => {
            Err(ApiError::Conflict { code: "document_not_ready", message: err.to_string() })
        }
        Err(err @ AttachError::Unseen(_)) => {
            Err(ApiError::Conflict { code: "picture_not_read", message: err.to_string() })
        }
        Err(err @ AttachError::LocalOnly(_)) => {
            Err(ApiError::Refused { code: "document_local_only", message: err.to_string() })
        }
    }
}

/// Which turn a route is about.
#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct TurnChoice {
    turn: TurnId,
}

/// `POST /api/sessions/{id}/regenerate` `{"turn"}`: another reply to the same message, as
/// a new version of that turn of the active path; the reply it had stays readable. 202
/// like a new message; 409 `not_on_path` for a turn not on the path shown.
pub async fn regenerate(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<ConversationId>,
    Body(req): Body<TurnChoice>,
) -> Result<(StatusCode, Json<TurnStarted>), ApiError> {
    let started = state.agent.version_turn(caller.session.clone(), &id, &req.turn, None).await?;
    Ok((StatusCode::ACCEPTED, Json(started.into())))
}

/// The turn that ends a conversation's active path.
#[derive(Serialize, ts_rs::TS)]
pub struct ActivePath {
    pub active_turn: TurnId,
}

/// `PUT /api/sessions/{id}/active` `{"turn"}`: shows the version through `turn`, which
/// the next message continues (the newest turn after it ends the path). 404 `no_turn`
/// for a turn of no version; 409 while a reply is written or waits on a card.
pub async fn choose_version(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<ConversationId>,
    Body(req): Body<TurnChoice>,
) -> Result<Json<ActivePath>, ApiError> {
    find(&caller, &id).await?;
    let active_turn = state.agent.choose_version(&caller.session, &id, &req.turn).await?;
    Ok(Json(ActivePath { active_turn }))
}

/// `POST /api/sessions/{id}/retry`: tries the failed last turn again from the person's last
/// message (409 `nothing_to_retry` when it did not fail). 202 like a new message.
pub async fn retry(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<ConversationId>,
) -> Result<(StatusCode, Json<TurnStarted>), ApiError> {
    let started = state.agent.retry_turn(caller.session.clone(), &id).await?;
    Ok((StatusCode::ACCEPTED, Json(started.into())))
}

/// `GET /api/sessions/{id}/messages[?turns=N][&before=TURN]`: the history, oldest first;
/// every row, or with either parameter a page of whole turns on the active path (the
/// latest `turns`, 50 unless asked, at most 500; or those before the turn `before`), which
/// costs what the page holds, however long the conversation. 404 `no_turn` when `before`
/// is not a turn of this conversation.
pub async fn messages(
    caller: Caller,
    Path(id): Path<ConversationId>,
    Query(page): Query<HistoryQuery>,
) -> Result<Json<Vec<Message>>, ApiError> {
    find(&caller, &id).await?;
    let space = &caller.session.space;
    if page.turns.is_none() && page.before.is_none() {
        return Ok(Json(chat::history(space, &id).await?));
    }
    let turns = page.turns.unwrap_or(PAGE_TURNS).clamp(1, MAX_PAGE_TURNS);
    match chat::history_page(space, &id, page.before.as_deref(), turns).await {
        Ok(rows) => Ok(Json(rows)),
        Err(StoreError::NotFound) => Err(ApiError::Missing {
            code: "no_turn",
            message: "this conversation has no such turn; read its latest page again".into(),
        }),
        Err(error) => Err(error.into()),
    }
}

/// A page of a conversation's history: `GET /api/sessions/{id}/messages?turns=N&before=TURN`.
#[derive(Deserialize)]
pub struct HistoryQuery {
    /// At most this many turns, whole: from the end of the active path, or before `before`.
    turns: Option<u32>,
    /// The page ends just before this turn, on the path it continues.
    before: Option<TurnId>,
}

/// The turns of a page unless asked for another count, and at most.
const PAGE_TURNS: u32 = 50;
const MAX_PAGE_TURNS: u32 = 500;

/// `GET /api/sessions/{id}/requests`: each model request of the conversation, for the record.
pub async fn requests(caller: Caller, Path(id): Path<ConversationId>) -> Result<Json<Vec<chat::RequestRow>>, ApiError> {
    find(&caller, &id).await?;
    Ok(Json(chat::requests(&caller.session.space, &id).await?))
}

/// A stored model request composed again: the protocol, the body as JSON and as the bytes.
#[derive(Serialize, ts_rs::TS)]
pub struct Rebuilt {
    pub id: i64,
    pub kind: ProviderKind,
    pub body: Value,
    pub raw: String,
    /// An erased memory was redacted from what the request read (the body reads "[erased
    /// memory]" where the sentence was sent), or a picture it carried was deleted since
    /// (the body says so where the picture was).
    pub redacted: bool,
}

/// `GET /api/sessions/{id}/requests/{request}/rebuild`: a stored model request composed
/// again from what was stored — the body exactly as it was sent (§8.1), as JSON and as the
/// bytes, whatever changed in the agent or the tools since.
pub async fn rebuild(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, request)): Path<(ConversationId, i64)>,
) -> Result<Json<Rebuilt>, ApiError> {
    find(&caller, &id).await?;
    let (kind, body, redacted) = crate::agent::rebuild(&caller.session.space, &state.system, &id, request).await?;
    let raw = body.to_string();
    Ok(Json(Rebuilt { id: request, kind, body, raw, redacted }))
}

/// Whether a turn was stopped (`POST /api/sessions/{id}/stop`).
#[derive(Serialize, ts_rs::TS)]
pub struct Stopped {
    pub stopped: bool,
}

/// `POST /api/sessions/{id}/stop`: stops the running turn, or ends one waiting on cards;
/// returns once it has stopped.
pub async fn stop(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<ConversationId>,
) -> Result<Json<Stopped>, ApiError> {
    find(&caller, &id).await?;
    let stopped = state.agent.stop(&caller.session, &id).await?;
    Ok(Json(Stopped { stopped }))
}

async fn find(caller: &Caller, id: &ConversationId) -> Result<Conversation, ApiError> {
    chat::conversation(&caller.session.space, id).await?.ok_or_else(|| TurnError::NoSession.into())
}
