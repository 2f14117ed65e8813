//! Routes about the caller's own account and private space.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use super::json::Body;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::providers::privacy::Tier;
use crate::store::agents as agent_versions;
use crate::store::approvals::{self, PersonalRule};
use crate::store::providers::ProviderKind;
use crate::store::roles::Role;
use crate::store::usage::PersonUsage;
use crate::store::{audit, notices, roles, users};
use crate::users::PublicUser;

const MAX_SETTING_KEY: usize = 64;
const MAX_SETTING_VALUE: usize = 64 * 1024;

/// Who I am and what my role allows.
#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "Me")]
pub struct MeView {
    pub user: PublicUser,
    pub role: Option<Role>,
    /// Who manages this Skald, by name: whom to ask about a model that does not answer.
    pub administrators: Vec<String>,
    /// Who may approve what the assistant asks, by name: whom to ask when one's own role
    /// may not.
    pub approvers: Vec<String>,
    /// The other active members, by name: whom one can set a reminder for (§11).
    pub members: Vec<String>,
}

/// `GET /api/me`: who I am and what my role allows.
pub async fn me(State(state): State<AppState>, caller: Caller) -> Result<Json<MeView>, ApiError> {
    let system = state.accounts.system();
    let row = users::find(system, &caller.session.user_id).await?.ok_or(ApiError::NotFound)?;
    let role = roles::get(system, &row.role_id).await?;
    let administrators = roles::names_who_may(system, roles::Ability::Manage).await?;
    let approvers = roles::names_who_may(system, roles::Ability::Approve).await?;
    let members = users::list(system)
        .await?
        .into_iter()
        .filter(|other| other.status == "active" && other.id != row.id)
        .map(|other| other.name)
        .collect();
    Ok(Json(MeView { user: PublicUser::from(&row), role, administrators, approvers, members }))
}

#[derive(Deserialize)]
pub struct PasswordChange {
    current_password: String,
    new_password: String,
}

/// `POST /api/me/password`: re-wraps my key under a new password and ends my other
/// sessions (this one goes on).
pub async fn change_password(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<PasswordChange>,
) -> Result<StatusCode, ApiError> {
    let (current, new) = (Zeroizing::new(req.current_password), Zeroizing::new(req.new_password));
    state.accounts.change_password(&caller.session.user_id, &current, &new, &caller.token).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/me/audit`: what administrators did that affects me (§3).
pub async fn audit(State(state): State<AppState>, caller: Caller) -> Result<Json<Vec<audit::Entry>>, ApiError> {
    Ok(Json(audit::about(state.accounts.system(), &caller.session.user_id).await?))
}

/// `GET /api/me/settings`: my settings, from my private file.
pub async fn settings(caller: Caller) -> Result<Json<BTreeMap<String, String>>, ApiError> {
    Ok(Json(caller.session.space.settings().await?.into_iter().collect()))
}

#[derive(Deserialize)]
pub struct SettingValue {
    value: String,
}

/// `PUT /api/me/settings/{key}`
pub async fn put_setting(
    caller: Caller,
    Path(key): Path<String>,
    Body(req): Body<SettingValue>,
) -> Result<StatusCode, ApiError> {
    check_key(&key)?;
    if req.value.len() > MAX_SETTING_VALUE {
        return Err(ApiError::BadRequest {
            code: "too_large",
            message: format!("a setting holds at most {MAX_SETTING_VALUE} bytes"),
        });
    }
    caller.session.space.put_setting(&key, &req.value).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /api/me/settings/{key}`
pub async fn delete_setting(caller: Caller, Path(key): Path<String>) -> Result<StatusCode, ApiError> {
    check_key(&key)?;
    match caller.session.space.delete_setting(&key).await? {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(ApiError::NotFound),
    }
}

/// `GET /api/me/rules`: my own "always allow" rules, from my private file.
pub async fn rules(caller: Caller) -> Result<Json<Vec<PersonalRule>>, ApiError> {
    Ok(Json(approvals::list_personal_rules(&caller.session.space).await?))
}

/// `DELETE /api/me/rules/{id}`: takes one of my "always allow" rules back; the tool asks
/// me again from the next call on.
pub async fn delete_rule(caller: Caller, Path(id): Path<i64>) -> Result<StatusCode, ApiError> {
    match approvals::delete_personal_rule(&caller.session.space, id).await? {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(ApiError::Missing { code: "no_rule", message: "there is no such rule of yours".into() }),
    }
}

fn check_key(key: &str) -> Result<(), ApiError> {
    let ok = !key.is_empty()
        && key.len() <= MAX_SETTING_KEY
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(ApiError::BadRequest {
            code: "invalid_key",
            message: format!("a setting key is 1–{MAX_SETTING_KEY} letters, digits, '.', '_' or '-'"),
        })
    }
}

/// Something that opens my space: `kind` is the key wrap's purpose, `what` says it in words.
#[derive(Serialize, ts_rs::TS)]
pub struct SpaceKey {
    pub kind: String,
    pub what: &'static str,
}

/// A provider my turns may go to, and who set it up.
#[derive(Serialize, ts_rs::TS)]
pub struct PrivacyProvider {
    pub id: String,
    pub name: String,
    pub kind: ProviderKind,
    pub privacy: Tier,
    pub configured_by: String,
    pub changed_by: String,
    pub models: Vec<String>,
}

/// An agent that shapes my turns, and who last changed it.
#[derive(Serialize, ts_rs::TS)]
pub struct PrivacyAgent {
    pub id: String,
    pub name: String,
    pub hash: String,
    /// `bundled`, `app` (an administrator edited it here) or `disk` (edited outside Skald).
    pub source: Option<String>,
    pub changed_by: Option<String>,
    pub changed_at: Option<String>,
}

/// A tool server my turns may call (§12.1): where a call's arguments go, whether one
/// instance serves everyone, and the tools my role is offered.
#[derive(Serialize, ts_rs::TS)]
pub struct PrivacyToolServer {
    pub id: String,
    pub name: String,
    /// The command it runs or the address it is reached at.
    pub reaches: String,
    /// One instance serves everyone: what one person's calls leave in it, another's may read.
    pub shared: bool,
    pub privacy: Tier,
    pub tools: Vec<String>,
    /// Reached over HTTP: I may set my own token for it.
    pub http: bool,
    /// My own token for it is set (it is never shown).
    pub own_token: bool,
}

/// What the administrators can see about me: never my words.
#[derive(Serialize, ts_rs::TS)]
pub struct AdministratorsSee {
    pub name: String,
    pub role: String,
    pub usage: Option<PersonUsage>,
    pub audit: Vec<audit::Entry>,
    /// My jobs whose words I chose to keep readable while I am away, or shared with
    /// everyone: kept outside my encrypted file, so the administrator can read them (§3).
    pub readable_jobs: Vec<ReadableJob>,
}

/// One of my jobs whose words the administrator can read.
#[derive(Serialize, ts_rs::TS)]
pub struct ReadableJob {
    pub id: crate::ids::JobId,
    pub kind: crate::store::jobs::JobKind,
    pub text: String,
    pub shared: bool,
}

/// `GET /api/me/privacy`: who can see my words (§3).
#[derive(Serialize, ts_rs::TS)]
pub struct PrivacyReport {
    pub keys: Vec<SpaceKey>,
    /// The people whose keys open my space besides mine: supervisors with an active edge
    /// (§6.2), by name.
    pub supervisors: Vec<PublicUser>,
    pub providers: Vec<PrivacyProvider>,
    /// The tool servers (MCP) my turns may call.
    pub tool_servers: Vec<PrivacyToolServer>,
    pub agents: Vec<PrivacyAgent>,
    pub administrators_see: AdministratorsSee,
    pub notices: Vec<notices::Notice>,
}

/// `GET /api/me/privacy`: who can see my words (§3) — what opens my space, where my turns
/// go and who configured it, the agents that shape them and who changed those, what the
/// administrators can see about me, and what changed while I was away.
pub async fn privacy(State(state): State<AppState>, caller: Caller) -> Result<Json<PrivacyReport>, ApiError> {
    let system = state.accounts.system();
    let me = &caller.session.user_id;
    let row = users::find(system, me).await?.ok_or(ApiError::NotFound)?;
    let role = state.agent.role_of(me).await?;
    let keys = users::wrap_purposes(system, me)
        .await?
        .into_iter()
        .map(|purpose| {
            let what = match purpose.as_str() {
                "password" => "your password",
                "recovery" => "your recovery code",
                _ => "another key",
            };
            SpaceKey { kind: purpose, what }
        })
        .collect();
    let mut providers: Vec<PrivacyProvider> = Vec::new();
    for model in state.agent.models_for(&role).await? {
        match providers.iter_mut().find(|p| p.id == model.provider_id) {
            Some(provider) => provider.models.push(model.model_id),
            None => providers.push(PrivacyProvider {
                id: model.provider_id,
                name: model.provider,
                kind: model.kind,
                privacy: model.privacy,
                configured_by: model.configured_by,
                changed_by: model.changed_by,
                models: vec![model.model_id],
            }),
        }
    }
    let mut tool_servers = Vec::new();
    if let Some(hub) = state.agent.mcp() {
        let own = caller.session.space.mcp_token_servers().await?;
        let servers = crate::store::mcp::list(system).await?;
        for (id, terms) in hub.terms(&role).await? {
            let http = servers.iter().any(|s| s.id.as_str() == id && s.transport == "http");
            tool_servers.push(PrivacyToolServer {
                own_token: own.contains(&id),
                http,
                id,
                privacy: if terms.remote { Tier::Remote } else { Tier::Local },
                tools: terms.tools.into_keys().collect(),
                name: terms.name,
                reaches: terms.reaches,
                shared: terms.shared,
            });
        }
    }
    state.agent.observe_all().await; // the agents as their files are now, on record
    let versions = agent_versions::latest(system).await?;
    let agents = state
        .agent
        .agents()
        .list()
        .into_iter()
        .flatten()
        .map(|agent| {
            let version = versions.iter().find(|v| v.agent_id == agent.id);
            PrivacyAgent {
                name: agent.meta.name,
                hash: agent.version,
                source: version.map(|v| v.source.clone()),
                changed_by: version.and_then(|v| v.changed_by_name.clone()),
                changed_at: version.map(|v| v.seen_at.clone()),
                id: agent.id,
            }
        })
        .collect();
    let mut supervisors = Vec::new();
    for edge in state.accounts.supervisors_of(me).await?.into_iter().filter(|e| e.state == "active") {
        if let Some(row) = crate::store::users::find(system, &edge.supervisor_id).await? {
            supervisors.push(PublicUser::from(&row));
        }
    }
    let today = crate::agent::usage::today();
    let usage = crate::store::usage::summary(system, &today, &crate::agent::usage::month_start(&today))
        .await?
        .into_iter()
        .find(|u| u.user_id == me.as_str());
    Ok(Json(PrivacyReport {
        keys,
        supervisors,
        providers,
        tool_servers,
        agents,
        administrators_see: AdministratorsSee {
            name: row.name,
            role: role.label,
            usage,
            audit: audit::about(system, me).await?,
            readable_jobs: crate::store::jobs::of_owner(system, me)
                .await?
                .into_iter()
                .filter(|job| job.owner_id == *me)
                .filter_map(|job| {
                    let text = job.settings.text?;
                    Some(ReadableJob { id: job.id, kind: job.settings.kind, text, shared: job.settings.shared })
                })
                .collect(),
        },
        notices: notices::unseen(system, me).await?,
    }))
}

/// `GET /api/me/export`: everything in my space as a zip archive I can read without Skald.
pub async fn export(State(state): State<AppState>, caller: Caller) -> Result<Response, ApiError> {
    let row = users::find(state.accounts.system(), &caller.session.user_id).await?.ok_or(ApiError::NotFound)?;
    let bytes = crate::export::archive(&caller.session.space, &row.name).await?;
    let day = crate::agent::usage::today();
    let disposition = format!("attachment; filename=\"skald-export-{day}.zip\"");
    let headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static("application/zip")),
        (header::CONTENT_DISPOSITION, HeaderValue::from_str(&disposition).expect("an ASCII header")),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    Ok((headers, bytes).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteAccount {
    password: String,
    /// My exact name, typed.
    confirm: String,
}

/// `DELETE /api/me` `{"password","confirm"}`: deletes my account and destroys my private
/// file. The last administrator cannot (409 `last_admin`).
pub async fn delete_account(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<DeleteAccount>,
) -> Result<StatusCode, ApiError> {
    let password = Zeroizing::new(req.password);
    state.accounts.delete_own_account(&caller.session.user_id, &password, &req.confirm).await?;
    Ok(StatusCode::NO_CONTENT)
}
