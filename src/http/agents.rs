//! Agent definitions (§8.7) and the notices their changes leave (§3): the list with each
//! agent's version and who last changed it, problems with malformed ones, an
//! administrator's edit, and a person's unseen notices.

use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AppState;
use super::auth::{AdminActor, Caller};
use super::error::ApiError;
use super::json::Body;
use crate::agent::definition::{Agent, DefinitionError};
use crate::agent::standing::Decision;
use crate::store::agents::{self, Version};
use crate::store::notices;

/// The longest `AGENT.md` an administrator can save.
const MAX_PROMPT_BYTES: usize = 64 * 1024;

/// An agent with its version, where that version came from and who last changed it.
#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "Agent")]
pub struct AgentView {
    pub id: String,
    pub name: String,
    pub description: String,
    pub preferred_model: Option<String>,
    pub preferred_strength: Option<String>,
    pub tools: Vec<String>,
    pub hash: String,
    /// `bundled`, `app` (an administrator edited it here) or `disk` (edited outside Skald).
    pub source: Option<String>,
    pub changed_by: Option<ChangedBy>,
    pub changed_at: Option<String>,
}

/// Who last changed an agent in Skald.
#[derive(Serialize, ts_rs::TS)]
pub struct ChangedBy {
    pub id: String,
    pub name: Option<String>,
}

/// One agent with its prompt as written.
#[derive(Serialize, ts_rs::TS)]
pub struct AgentDetail {
    #[serde(flatten)]
    pub agent: AgentView,
    pub prompt: String,
}

/// A folder that holds no usable agent, and why.
#[derive(Serialize, ts_rs::TS)]
pub struct AgentProblem {
    pub id: String,
    pub error: String,
}

/// The usable agents, and the folders that hold none.
#[derive(Serialize, ts_rs::TS)]
pub struct AgentList {
    pub agents: Vec<AgentView>,
    pub problems: Vec<AgentProblem>,
}

/// `GET /api/agents`: every agent with its version and who last changed it, and the
/// folders that hold no usable agent, with the reason.
pub async fn list(State(state): State<AppState>, _caller: Caller) -> Result<Json<AgentList>, ApiError> {
    state.agent.observe_all().await; // what the files hold now, on record before it is shown
    let versions = agents::latest(&state.system).await?;
    let (mut listed, mut problems) = (Vec::new(), Vec::new());
    for loaded in state.agent.agents().list() {
        match loaded {
            Ok(agent) => listed.push(view(&agent, versions.iter().find(|v| v.agent_id == agent.id))),
            Err(DefinitionError::Malformed { id, why }) => problems.push(AgentProblem { id, error: why }),
            Err(DefinitionError::Unknown(_)) => {}
        }
    }
    Ok(Json(AgentList { agents: listed, problems }))
}

/// `GET /api/agents/{id}`: one agent with its prompt and definition as written, so
/// anyone can read what shapes the answers they get (§3).
pub async fn get(
    State(state): State<AppState>,
    _caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<AgentDetail>, ApiError> {
    let agent = state.agent.agents().load(&id)?;
    let versions = agents::latest(&state.system).await?;
    let view = view(&agent, versions.iter().find(|v| v.agent_id == agent.id));
    Ok(Json(AgentDetail { agent: view, prompt: agent.prompt }))
}

#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "AgentEdit")]
pub struct Edit {
    /// `meta.json` as a JSON object.
    meta: Value,
    /// `AGENT.md`.
    prompt: String,
}

/// `PUT /api/agents/{id}` `{"meta":{…},"prompt":"…"}`: writes an agent's two files (a new
/// agent when the id is new), recorded as this administrator's change; everyone else
/// finds a notice at their next login. A malformed agent is refused, not written.
pub async fn save(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Path(id): Path<String>,
    Body(edit): Body<Edit>,
) -> Result<Json<AgentView>, ApiError> {
    if edit.prompt.len() > MAX_PROMPT_BYTES {
        let message = format!("AGENT.md is at most {} KiB", MAX_PROMPT_BYTES / 1024);
        return Err(ApiError::BadRequest { code: "agent_invalid", message });
    }
    if !edit.meta.is_object() {
        let message = "meta is the JSON object meta.json holds".to_owned();
        return Err(ApiError::BadRequest { code: "agent_invalid", message });
    }
    let meta = serde_json::to_string_pretty(&edit.meta).expect("a JSON value serializes");
    let agent = state.agent.save_agent(&actor, &id, &meta, &edit.prompt).await.map_err(ApiError::saving_agent)?;
    // The administrator's own edit is theirs to have accepted (§3).
    let key = format!("agent.{}", agent.id);
    state.agent.accept_own(&caller.session, |change| change.key == key).await;
    let versions = agents::latest(&state.system).await?;
    Ok(Json(view(&agent, versions.iter().find(|v| v.agent_id == agent.id))))
}

/// `GET /api/notices`: what changed while I was away, not yet marked seen, oldest first.
/// My record is compared with the shared database first, so a change that holds my next
/// turn is among them (`"holds": true`) before I try to send.
pub async fn notices(State(state): State<AppState>, caller: Caller) -> Result<Json<Vec<notices::Notice>>, ApiError> {
    let role = state.agent.role_of(&caller.session.user_id).await?;
    state.agent.standing(&caller.session, &role, None).await?;
    Ok(Json(notices::unseen(&state.system, &caller.session.user_id).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoldDecision {
    decision: Decision,
}

/// A person's answer to a held change, and how many changes still hold their turns.
#[derive(Serialize, ts_rs::TS)]
pub struct HoldDecided {
    #[ts(type = "\"accept\" | \"decline\"")]
    pub decision: Decision,
    pub holds_remaining: usize,
}

/// `POST /api/notices/{id}/accept` `{"decision": "accept" | "decline"}`: my answer to a
/// change that holds my turns. Declined, it stays out of force for me (the provider is not
/// used, the rule not applied, the looser setting not taken) until I accept it.
pub async fn decide(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<i64>,
    Body(req): Body<HoldDecision>,
) -> Result<Json<HoldDecided>, ApiError> {
    let holds_remaining = state.agent.decide_hold(&caller.session, id, req.decision).await?;
    Ok(Json(HoldDecided { decision: req.decision, holds_remaining }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seen {
    upto: i64,
}

/// How many notices were marked seen.
#[derive(Serialize, ts_rs::TS)]
pub struct MarkedSeen {
    pub marked: u64,
}

/// `POST /api/notices/seen` `{"upto": id}`: marks my notices up to `upto` as seen.
pub async fn seen(
    State(state): State<AppState>,
    caller: Caller,
    Body(seen): Body<Seen>,
) -> Result<Json<MarkedSeen>, ApiError> {
    let marked = notices::mark_seen(&state.system, &caller.session.user_id, seen.upto).await?;
    Ok(Json(MarkedSeen { marked }))
}

fn view(agent: &Agent, version: Option<&Version>) -> AgentView {
    AgentView {
        id: agent.id.clone(),
        name: agent.meta.name.clone(),
        description: agent.meta.description.clone(),
        preferred_model: agent.meta.preferred_model.clone(),
        preferred_strength: agent.meta.preferred_strength.clone(),
        tools: agent.meta.tools.clone(),
        hash: agent.version.clone(),
        source: version.map(|v| v.source.clone()),
        changed_by: version.and_then(|v| {
            v.changed_by.as_ref().map(|id| ChangedBy { id: id.clone(), name: v.changed_by_name.clone() })
        }),
        changed_at: version.map(|v| v.seen_at.clone()),
    }
}
