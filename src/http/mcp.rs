//! MCP servers (§12): administrators add, import, change, approve, restart and remove
//! them. The checks, the sealing and the pins are [`crate::mcp`]'s; these handlers parse,
//! call it, record the administrator's own approval as accepted by them (§3), and answer.
//! No route returns an environment value or a token.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::AppState;
use super::auth::{AdminActor, Caller};
use super::error::ApiError;
use super::json::{Body, OptionalBody};
use crate::agent::prompts::PromptRefused;
use crate::ids::McpServerId;
use crate::mcp::Hub;
pub use crate::mcp::admin::{Imported, NewServerBody, PatchBody, ServerView};

fn hub(state: &AppState) -> Result<&Hub, ApiError> {
    state.agent.mcp().ok_or(ApiError::Unavailable { code: "mcp_unavailable", message: "MCP is not set up here".into() })
}

/// A new server's id.
#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "McpAdded")]
pub struct Added {
    pub id: McpServerId,
}

/// `POST /api/mcp/servers` (administrators): adds a server and lists its tools; none is
/// offered before approval. 201 `{"id"}`.
pub async fn add(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Body(req): Body<NewServerBody>,
) -> Result<(StatusCode, Json<Added>), ApiError> {
    let id = hub(&state)?.add(&actor, req).await?;
    Ok((StatusCode::CREATED, Json(Added { id })))
}

/// What `POST /api/mcp/import` takes: the configuration other MCP clients write.
#[derive(Deserialize, ts_rs::TS)]
#[ts(rename = "McpImport")]
pub struct ImportBody {
    #[serde(rename = "mcpServers")]
    #[ts(rename = "mcpServers", type = "Record<string, unknown>")]
    pub mcp_servers: serde_json::Value,
}

/// `POST /api/mcp/import` (administrators): adds each server of an `mcpServers` object;
/// each entry says what it came to.
pub async fn import(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Body(req): Body<ImportBody>,
) -> Result<Json<Vec<Imported>>, ApiError> {
    let config = serde_json::json!({ "mcpServers": req.mcp_servers });
    Ok(Json(hub(&state)?.import(&actor, &config).await?))
}

/// `GET /api/mcp/servers` (administrators): every server with its state, approval and
/// tools (each with its pin and status).
pub async fn list(State(state): State<AppState>) -> Result<Json<Vec<ServerView>>, ApiError> {
    Ok(Json(hub(&state)?.list().await?))
}

/// `GET /api/mcp/servers/{id}` (administrators)
pub async fn get(State(state): State<AppState>, Path(id): Path<String>) -> Result<Json<ServerView>, ApiError> {
    Ok(Json(hub(&state)?.get(&McpServerId::new(id)).await?))
}

/// What `POST /api/mcp/servers/{id}/approve` takes.
#[derive(Default, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "McpApprove")]
pub struct ApproveBody {
    /// The tools to approve as they are now; every tool the server lists when absent.
    #[ts(optional)]
    pub tools: Option<Vec<String>>,
}

/// The tools an approval covered.
#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "McpApproved")]
pub struct Approved {
    pub tools: Vec<String>,
}

/// `POST /api/mcp/servers/{id}/approve` (administrators): approves the server's launch
/// spec and its tools as they are now. For everyone else it is a change to where their
/// words may go, held until they accept it (§3); the administrator's own is theirs.
pub async fn approve(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Path(id): Path<String>,
    OptionalBody(body): OptionalBody<ApproveBody>,
) -> Result<Json<Approved>, ApiError> {
    let id = McpServerId::new(id);
    let tools = hub(&state)?.approve(&actor, &id, body.tools.as_deref()).await?;
    let key = format!("mcp.{id}");
    state.agent.accept_own(&caller.session, |change| change.key == key).await;
    Ok(Json(Approved { tools }))
}

/// `PATCH /api/mcp/servers/{id}` (administrators): a change to what runs or is reached
/// withdraws the approval until it is given again.
pub async fn update(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
    Body(req): Body<PatchBody>,
) -> Result<StatusCode, ApiError> {
    hub(&state)?.patch(&actor, &McpServerId::new(id), req).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/mcp/servers/{id}/restart` (administrators): stops its instances, forgets its
/// crashes and lists its tools again.
pub async fn restart(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id = McpServerId::new(id);
    crate::store::mcp::restarted(&state.system, &actor, &id).await?;
    hub(&state)?.restart(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /api/mcp/servers/{id}` (administrators): removes it, its instances and their
/// folders.
pub async fn delete(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    hub(&state)?.remove(&actor, &McpServerId::new(id)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A person's own token for an MCP server reached over HTTP.
#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "McpOwnToken")]
pub struct OwnToken {
    pub token: String,
}

/// The longest token a person may set.
const MAX_TOKEN_CHARS: usize = 8192;

/// The id of an HTTP server the caller's role is offered, or 404.
async fn offered_http(state: &AppState, caller: &Caller, id: &str) -> Result<McpServerId, ApiError> {
    let role = state.agent.role_of(&caller.session.user_id).await?;
    let hub = hub(state)?;
    let offered = hub.terms(&role).await?.contains_key(id);
    let server = crate::store::mcp::get(&state.system, &McpServerId::new(id)).await?;
    match server {
        Some(server) if offered && server.transport == "http" => Ok(server.id),
        _ => Err(ApiError::Missing {
            code: "no_tool_server",
            message: "there is no tool server reached over HTTP by that id among yours".into(),
        }),
    }
}

/// `PUT /api/me/tool-servers/{id}/token` `{"token"}`: my own token for an HTTP tool
/// server, kept in my encrypted file and used for my calls instead of the shared one.
pub async fn put_own_token(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Body(req): Body<OwnToken>,
) -> Result<StatusCode, ApiError> {
    let token = zeroize::Zeroizing::new(req.token);
    let valid = !token.trim().is_empty() && token.chars().count() <= MAX_TOKEN_CHARS && !token.contains(['\r', '\n']);
    if !valid {
        let message = format!("a token is 1 to {MAX_TOKEN_CHARS} characters on one line");
        return Err(ApiError::BadRequest { code: "invalid_token", message });
    }
    let id = offered_http(&state, &caller, &id).await?;
    caller.session.space.put_mcp_token(id.as_str(), token.trim()).await?;
    hub(&state)?.stop_instance(&id, &caller.session.user_id).await;
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /api/me/tool-servers/{id}/token`: forgets my own token; my calls use the
/// shared one again, if there is one.
pub async fn delete_own_token(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id = offered_http(&state, &caller, &id).await?;
    caller.session.space.delete_mcp_token(id.as_str()).await?;
    hub(&state)?.stop_instance(&id, &caller.session.user_id).await;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/me/tool-prompts`: the prompts of the tool servers I am offered, as templates
/// for my messages.
pub async fn my_prompts(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Vec<crate::mcp::PromptView>>, ApiError> {
    Ok(Json(state.agent.tool_prompts(&caller.session).await?))
}

/// What `POST /api/me/tool-prompts/{server}/{name}` takes.
#[derive(Default, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "ToolPromptFill")]
pub struct PromptFill {
    /// A value for each of the prompt's arguments.
    #[serde(default)]
    #[ts(optional, type = "Record<string, string>")]
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

/// A prompt as text for my message.
#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "ToolPromptText")]
pub struct PromptText {
    pub text: String,
}

/// `POST /api/me/tool-prompts/{server}/{name}` `{"arguments"?}`: one of those prompts,
/// filled in, as the text of a message I read, edit and send myself.
pub async fn my_prompt(
    State(state): State<AppState>,
    caller: Caller,
    Path((server, name)): Path<(String, String)>,
    OptionalBody(req): OptionalBody<PromptFill>,
) -> Result<Json<PromptText>, ApiError> {
    if req.arguments.values().any(|v| !v.is_string()) {
        let message = "each of a prompt's arguments is text".to_owned();
        return Err(ApiError::BadRequest { code: "invalid_arguments", message });
    }
    let filled = state.agent.tool_prompt(&caller.session, &McpServerId::new(server), &name, req.arguments).await?;
    match filled {
        Ok(text) => Ok(Json(PromptText { text })),
        Err(PromptRefused::NotYours) => Err(ApiError::Missing {
            code: "no_tool_server",
            message: "there is no tool server by that id among yours (a new one waits until you continue)".into(),
        }),
        Err(PromptRefused::Server(why)) => Err(ApiError::Unavailable { code: "tool_server_failed", message: why }),
    }
}

/// `GET /api/me/tool-resources`: the resources of the tool servers I am offered, which I
/// may attach to a message.
pub async fn my_resources(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Vec<crate::mcp::ResourceView>>, ApiError> {
    Ok(Json(state.agent.tool_resources(&caller.session).await?))
}
