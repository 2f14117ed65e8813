//! Administering MCP servers (§12): adding one (or importing the `mcpServers` JSON other
//! clients use), changing, approving, restarting and removing it. The checks of what an
//! administrator may set live here, with the sealing of a declared environment and a
//! token under the instance key (§4), so the HTTP handlers only parse, call and map. No
//! answer ever carries an environment value or a token, only their names or presence.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Hub, env_purpose, pin, tier, token_purpose};
use crate::ids::McpServerId;
use crate::providers::privacy::Tier;
use crate::store::StoreError;
use crate::store::audit::Actor;
use crate::store::mcp::{self as stored, NewServer, ServerChange, ServerRow, ToolRow, ToolStatus};

/// Why an MCP change was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error(
        "a server name has 1 to 32 lowercase letters, digits or '-', not at either end (tools are offered as mcp__<name>__<tool>)"
    )]
    InvalidName,
    #[error("{0}")]
    Invalid(String),
    #[error("there is no such MCP server")]
    NoServer,
    #[error("another MCP server has that name")]
    NameTaken,
    #[error("the server's settings cannot be stored safely: {0}")]
    Sealing(String),
    #[error("{0}")]
    Unreachable(String),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for McpError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NameTaken => Self::NameTaken,
            StoreError::NotFound => Self::NoServer,
            StoreError::WrongState(why) => Self::Invalid(why.to_owned()),
            other => Self::Store(other),
        }
    }
}

/// A server to add (`POST /api/mcp/servers`).
#[derive(Debug, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "NewMcpServer")]
pub struct NewServerBody {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    #[ts(optional)]
    pub command: Option<String>,
    #[ts(optional)]
    pub args: Option<Vec<String>>,
    /// Variables the server is started with, beyond PATH, HOME and LANG. A value may say
    /// `{instance_dir}`: the instance's own folder.
    #[ts(optional)]
    pub env: Option<BTreeMap<String, String>>,
    #[ts(optional)]
    pub url: Option<String>,
    #[ts(optional)]
    pub token: Option<String>,
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub trusted_lan: bool,
    /// One instance for everyone instead of one per person.
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub shared: bool,
    /// Folders a server that asks for roots is told of: absolute paths, or ones under
    /// `{instance_dir}`. None by default.
    #[ts(optional)]
    pub roots: Option<Vec<String>>,
    #[ts(optional)]
    pub timeout_seconds: Option<i64>,
    /// `2025-11-25` (the default) or `2026-07-28`.
    #[ts(optional)]
    pub protocol: Option<String>,
}

/// A change (`PATCH /api/mcp/servers/{id}`); absent fields stay, `null` removes a secret.
#[derive(Debug, Default, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "McpServerPatch")]
pub struct PatchBody {
    #[ts(optional)]
    pub command: Option<String>,
    #[ts(optional)]
    pub args: Option<Vec<String>>,
    #[serde(default, deserialize_with = "crate::users::role_rules::present")]
    #[ts(optional)]
    pub env: Option<Option<BTreeMap<String, String>>>,
    #[ts(optional)]
    pub url: Option<String>,
    #[serde(default, deserialize_with = "crate::users::role_rules::present")]
    #[ts(optional)]
    pub token: Option<Option<String>>,
    #[ts(optional)]
    pub trusted_lan: Option<bool>,
    #[ts(optional)]
    pub shared: Option<bool>,
    #[ts(optional)]
    pub roots: Option<Vec<String>>,
    #[ts(optional)]
    pub timeout_seconds: Option<i64>,
    #[ts(optional)]
    pub protocol: Option<String>,
    #[ts(optional)]
    pub enabled: Option<bool>,
}

/// How a server stands now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "McpServerState")]
pub enum State {
    /// At least one instance is running.
    Running,
    /// None runs now; one starts at the next call.
    Idle,
    /// Its last instance ended or could not start; it is tried again at the next call.
    Down,
    /// It crashed repeatedly: nothing starts it until an administrator restarts it.
    GivenUp,
    Disabled,
}

/// Whether what runs is what was approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "McpApproval")]
pub enum Approval {
    Unapproved,
    Approved,
    /// Its launch spec changed since: none of its tools runs.
    Changed,
}

/// A tool as administrators see it: its pin and status, and the approved definition beside
/// the one the server lists now when they differ.
#[derive(Debug, Serialize, ts_rs::TS)]
#[ts(rename = "McpTool")]
pub struct ToolView {
    pub name: String,
    /// The name the model sees, or null when the server's name cannot be one.
    pub offered_as: Option<String>,
    pub status: ToolStatus,
    pub pin: String,
    pub approved_pin: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub read_only: bool,
    pub destructive: bool,
    #[ts(type = "Record<string, unknown>")]
    pub definition: Value,
    #[ts(type = "Record<string, unknown> | null")]
    pub approved_definition: Option<Value>,
    pub approved_at: Option<String>,
}

/// A server as administrators see it (`GET /api/mcp/servers`).
#[derive(Debug, Serialize, ts_rs::TS)]
#[ts(rename = "McpServer")]
pub struct ServerView {
    pub id: McpServerId,
    pub name: String,
    pub transport: String,
    pub command: Option<String>,
    pub args: Vec<String>,
    /// The names of the declared variables; their values are never shown.
    pub env_names: Vec<String>,
    pub url: Option<String>,
    pub has_token: bool,
    pub trusted_lan: bool,
    pub shared: bool,
    pub roots: Vec<String>,
    pub timeout_seconds: i64,
    pub protocol: String,
    pub enabled: bool,
    pub privacy: Tier,
    pub state: State,
    pub running: usize,
    pub approval: Approval,
    pub approved_by: Option<String>,
    pub approved_at: Option<String>,
    pub last_error: Option<String>,
    pub last_error_at: Option<String>,
    pub stderr_tail: Vec<String>,
    pub tools: Vec<ToolView>,
    pub created_by: String,
    pub created_at: String,
    pub updated_by: String,
    pub updated_at: String,
}

/// What importing one entry of an `mcpServers` object came to.
#[derive(Debug, Serialize, ts_rs::TS)]
#[ts(rename = "McpImported")]
pub struct Imported {
    pub name: String,
    pub id: Option<McpServerId>,
    pub error: Option<String>,
}

const PROTOCOLS: [&str; 2] = ["2025-11-25", "2026-07-28"];
const DEFAULT_TIMEOUT_SECONDS: i64 = 60;

impl Hub {
    /// Adds a server and lists its tools (none is offered before approval). A server that
    /// cannot be reached is still added, shown down with why.
    pub async fn add(&self, actor: &Actor, body: NewServerBody) -> Result<McpServerId, McpError> {
        let name = valid_name(&body.name)?;
        let id = McpServerId::generate();
        let timeout_ms = timeout_ms(body.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS))?;
        let protocol = valid_protocol(body.protocol.as_deref().unwrap_or(PROTOCOLS[0]))?;
        let args = body.args.unwrap_or_default();
        let (command, url) = match body.transport.as_str() {
            "stdio" => {
                let command = body.command.as_deref().ok_or_else(|| invalid("a stdio server needs a \"command\""))?;
                if body.url.is_some() || body.token.is_some() {
                    return Err(invalid("a stdio server takes a command, not a \"url\" or \"token\""));
                }
                (Some(valid_command(command, &args)?), None)
            }
            "http" => {
                let url = body.url.as_deref().ok_or_else(|| invalid("an http server needs a \"url\""))?;
                if body.command.is_some() || !args.is_empty() || body.env.is_some() || body.shared {
                    return Err(invalid("an http server takes a url and a token, not a command, args, env or shared"));
                }
                (None, Some(valid_url(url)?))
            }
            other => return Err(invalid(&format!("transport {other:?} is not one of stdio, http"))),
        };
        let env = body.env.as_ref().map(|env| self.seal_env(&id, env)).transpose()?;
        let token = body.token.as_deref().map(|token| self.seal_token(&id, token)).transpose()?;
        let roots = valid_roots(body.roots.unwrap_or_default())?;
        let new = NewServer {
            id: &id,
            name,
            transport: &body.transport,
            command,
            args: &args,
            env: env.as_deref(),
            url,
            token: token.as_deref(),
            trusted_lan: body.trusted_lan,
            shared: body.shared,
            roots: &roots,
            timeout_ms,
            protocol,
        };
        stored::insert(self.system(), actor, &new).await?;
        self.probe_logged(&id).await;
        Ok(id)
    }

    /// Adds each server of an `mcpServers` object, as other MCP clients write it; each
    /// entry is added or says why not.
    pub async fn import(&self, actor: &Actor, config: &Value) -> Result<Vec<Imported>, McpError> {
        let servers =
            config.get("mcpServers").or_else(|| config.get("servers")).and_then(Value::as_object).ok_or_else(|| {
                invalid("give an object with \"mcpServers\": { name: { command, args, env } or { url } }")
            })?;
        let mut imported = Vec::new();
        for (key, entry) in servers {
            let name = import_name(key);
            let body = import_body(&name, entry);
            let added = match body {
                Ok(body) => self.add(actor, body).await,
                Err(why) => Err(invalid(&why)),
            };
            imported.push(match added {
                Ok(id) => Imported { name, id: Some(id), error: None },
                Err(err) => Imported { name, id: None, error: Some(err.to_string()) },
            });
        }
        Ok(imported)
    }

    /// Every server with its state, approval and tools.
    pub async fn list(&self) -> Result<Vec<ServerView>, McpError> {
        let servers = stored::list(self.system()).await?;
        let tools = stored::tools(self.system()).await?;
        let mut views = Vec::with_capacity(servers.len());
        for server in servers {
            let server_tools: Vec<&ToolRow> = tools.iter().filter(|t| t.server_id == server.id).collect();
            views.push(self.view(server, &server_tools));
        }
        Ok(views)
    }

    pub async fn get(&self, id: &McpServerId) -> Result<ServerView, McpError> {
        let server = stored::get(self.system(), id).await?.ok_or(McpError::NoServer)?;
        let tools = stored::tools(self.system()).await?;
        let tools: Vec<&ToolRow> = tools.iter().filter(|t| t.server_id == *id).collect();
        Ok(self.view(server, &tools))
    }

    fn view(&self, server: ServerRow, tools: &[&ToolRow]) -> ServerView {
        let (running, given_up, health) = self.health(&server.id);
        let approval = match &server.approved_spec {
            None => Approval::Unapproved,
            Some(approved) if self.spec_now(&server).is_ok_and(|now| now == *approved) => Approval::Approved,
            Some(_) => Approval::Changed,
        };
        let state = match () {
            () if !server.enabled => State::Disabled,
            () if given_up => State::GivenUp,
            () if running > 0 => State::Running,
            () if health.last_error.is_some() => State::Down,
            () => State::Idle,
        };
        let env_names = self
            .env_of(&server)
            .ok()
            .and_then(|env| env.as_object().map(|o| o.keys().cloned().collect()))
            .unwrap_or_default();
        ServerView {
            tools: tools.iter().map(|tool| tool_view(&server.name, tool)).collect(),
            privacy: tier(&server),
            id: server.id,
            name: server.name,
            transport: server.transport,
            command: server.command,
            args: server.args.0,
            env_names,
            url: server.url,
            has_token: server.token.is_some(),
            trusted_lan: server.trusted_lan,
            shared: server.shared,
            roots: server.roots.0,
            timeout_seconds: server.timeout_ms / 1000,
            protocol: server.protocol,
            enabled: server.enabled,
            state,
            running,
            approval,
            approved_by: server.approved_by,
            approved_at: server.approved_at,
            last_error: health.last_error,
            last_error_at: health.last_error_at,
            stderr_tail: health.stderr_tail,
            created_by: server.created_by,
            created_at: server.created_at,
            updated_by: server.updated_by,
            updated_at: server.updated_at,
        }
    }

    /// Approves the server as it is now and the tools named (all it lists when `None`).
    /// Its tools are listed first if they never were.
    pub async fn approve(
        &self,
        actor: &Actor,
        id: &McpServerId,
        tools: Option<&[String]>,
    ) -> Result<Vec<String>, McpError> {
        let server = stored::get(self.system(), id).await?.ok_or(McpError::NoServer)?;
        let listed = stored::tools(self.system()).await?.iter().any(|t| t.server_id == *id && !t.gone);
        if !listed {
            self.probe(&server).await.map_err(McpError::Unreachable)?;
        }
        let spec = self.spec_now(&server).map_err(McpError::Invalid)?;
        let approved = stored::approve(self.system(), actor, id, &spec, tools).await?;
        // An instance started from what was there before (a file named in the command
        // has changed since) is not what was approved: it starts again at the next call.
        self.stop_unlike(id, &spec).await;
        Ok(approved)
    }

    /// Applies a change; one to what runs or is reached withdraws the approval. Running
    /// instances stop, and the tools are listed again.
    pub async fn patch(&self, actor: &Actor, id: &McpServerId, body: PatchBody) -> Result<(), McpError> {
        let server = stored::get(self.system(), id).await?.ok_or(McpError::NoServer)?;
        let stdio = server.transport == "stdio";
        if stdio && (body.url.is_some() || body.token.is_some() || body.trusted_lan.is_some()) {
            return Err(invalid("a stdio server takes a command, args and env, not a url, token or trusted_lan"));
        }
        if !stdio && (body.command.is_some() || body.args.is_some() || body.env.is_some() || body.shared == Some(true))
        {
            return Err(invalid("an http server takes a url and a token, not a command, args, env or shared"));
        }
        let args = body.args.clone();
        let command = match &body.command {
            Some(command) => Some(valid_command(command, args.as_deref().unwrap_or(&server.args.0))?.to_owned()),
            None => None,
        };
        let url = body.url.as_deref().map(valid_url).transpose()?.map(str::to_owned);
        let env = match &body.env {
            Some(Some(env)) => Some(Some(self.seal_env(id, env)?)),
            Some(None) => Some(None),
            None => None,
        };
        let token = match &body.token {
            Some(Some(token)) => Some(Some(self.seal_token(id, token)?)),
            Some(None) => Some(None),
            None => None,
        };
        let timeout_ms = body.timeout_seconds.map(timeout_ms).transpose()?;
        let protocol = body.protocol.as_deref().map(valid_protocol).transpose()?;
        let roots = body.roots.map(valid_roots).transpose()?;
        let spec_changed = command.as_ref().is_some_and(|c| Some(c) != server.command.as_ref())
            || args.as_ref().is_some_and(|a| *a != server.args.0)
            || env.is_some()
            || url.as_ref().is_some_and(|u| Some(u) != server.url.as_ref())
            || token.is_some()
            || body.trusted_lan.is_some_and(|t| t != server.trusted_lan)
            || body.shared.is_some_and(|s| s != server.shared)
            || roots.as_ref().is_some_and(|r| *r != server.roots.0);
        let change = ServerChange {
            command: command.as_deref(),
            args: args.as_deref(),
            env: env.as_ref().map(|e| e.as_deref()),
            url: url.as_deref(),
            token: token.as_ref().map(|t| t.as_deref()),
            trusted_lan: body.trusted_lan,
            shared: body.shared,
            roots: roots.as_deref(),
            timeout_ms,
            protocol,
            enabled: body.enabled,
        };
        stored::update(self.system(), actor, id, &change, spec_changed).await?;
        self.stop_server(id).await;
        if body.enabled != Some(false) {
            self.probe_logged(id).await;
        }
        Ok(())
    }

    /// Stops every instance, forgets its crashes and lists its tools again.
    pub async fn restart(&self, id: &McpServerId) -> Result<(), McpError> {
        let server = stored::get(self.system(), id).await?.ok_or(McpError::NoServer)?;
        self.stop_server(id).await;
        self.clear_crashes(id);
        self.probe(&server).await.map_err(McpError::Unreachable)
    }

    /// Removes a server, its instances and their folders.
    pub async fn remove(&self, actor: &Actor, id: &McpServerId) -> Result<String, McpError> {
        self.stop_server(id).await;
        let name = stored::delete(self.system(), actor, id).await?;
        self.clear_crashes(id);
        let folder = self.inner.root.join(id.as_str());
        if let Err(err) = std::fs::remove_dir_all(&folder)
            && err.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(server = %id, %err, "could not remove an MCP server's folders");
        }
        Ok(name)
    }

    async fn probe_logged(&self, id: &McpServerId) {
        let server = match stored::get(self.system(), id).await {
            Ok(Some(server)) => server,
            Ok(None) => return,
            Err(err) => return tracing::warn!(server = %id, %err, "could not read an MCP server to list its tools"),
        };
        if let Err(why) = self.probe(&server).await {
            tracing::warn!(server = %server.name, %why, "an MCP server's tools could not be listed");
        }
    }

    fn seal_env(&self, id: &McpServerId, env: &BTreeMap<String, String>) -> Result<Vec<u8>, McpError> {
        for name in env.keys() {
            let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(invalid(&format!("{name:?} is not a variable name (letters, digits and '_')")));
            }
            if name.to_ascii_uppercase().starts_with("SKALD_") {
                return Err(invalid(&format!("{name}: Skald's own variables are never given to a server")));
            }
        }
        if env.values().any(|v| v.contains('\0')) {
            return Err(invalid("an environment value cannot hold a NUL character"));
        }
        let plain = zeroize::Zeroizing::new(serde_json::to_vec(env).map_err(|err| McpError::Sealing(err.to_string()))?);
        self.secrets().seal(&plain, &env_purpose(id)).map_err(|err| McpError::Sealing(err.to_string()))
    }

    fn seal_token(&self, id: &McpServerId, token: &str) -> Result<Vec<u8>, McpError> {
        if token.is_empty() || token.chars().any(char::is_control) {
            return Err(invalid("a token is one line of text"));
        }
        self.secrets().seal(token.as_bytes(), &token_purpose(id)).map_err(|err| McpError::Sealing(err.to_string()))
    }
}

fn tool_view(server: &str, tool: &ToolRow) -> ToolView {
    let definition = &tool.definition.0;
    let text = |field: &str| definition[field].as_str().map(str::to_owned);
    let approved_definition =
        tool.approved_definition.as_ref().map(|d| d.0.clone()).filter(|_| tool.status() != ToolStatus::Approved);
    ToolView {
        name: tool.name.clone(),
        offered_as: pin::offered_name(server, &tool.name),
        status: tool.status(),
        pin: tool.pin.clone(),
        approved_pin: tool.approved_pin.clone(),
        title: text("title"),
        description: text("description"),
        read_only: definition["annotations"]["readOnlyHint"] == true,
        destructive: definition["annotations"]["destructiveHint"] == true,
        definition: definition.clone(),
        approved_definition,
        approved_at: tool.approved_at.clone(),
    }
}

fn invalid(why: &str) -> McpError {
    McpError::Invalid(why.to_owned())
}

fn valid_name(name: &str) -> Result<&str, McpError> {
    let fits = (1..=32).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if fits { Ok(name) } else { Err(McpError::InvalidName) }
}

fn valid_command<'a>(command: &'a str, args: &[String]) -> Result<&'a str, McpError> {
    if command.trim().is_empty() || command.contains('\0') || args.iter().any(|a| a.contains('\0')) {
        return Err(invalid("the command and its arguments must be text without NUL characters"));
    }
    Ok(command)
}

fn valid_url(url: &str) -> Result<&str, McpError> {
    match url::Url::parse(url) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") && parsed.host().is_some() => Ok(url),
        _ => Err(invalid("give the server's address, like http://127.0.0.1:3001/mcp")),
    }
}

/// At most this many roots per server.
const MAX_ROOTS: usize = 16;

/// Roots as an administrator lists them: existing folders named by absolute paths
/// without `..`, or folders under the instance's own (`{instance_dir}/…`), made when it
/// starts. A folder listed twice counts once.
fn valid_roots(roots: Vec<String>) -> Result<Vec<String>, McpError> {
    if roots.len() > MAX_ROOTS {
        return Err(invalid(&format!("a server takes at most {MAX_ROOTS} roots")));
    }
    let mut valid: Vec<String> = Vec::with_capacity(roots.len());
    for root in roots {
        let path = std::path::Path::new(&root);
        let climbs = root.split('/').any(|part| part == "..");
        if root.contains('\0') || climbs {
            return Err(invalid(&format!("the root {root:?} may not climb out with \"..\"")));
        }
        let own = root == super::INSTANCE_DIR || root.starts_with(&format!("{}/", super::INSTANCE_DIR));
        let folder_here = path.is_absolute() && path.is_dir();
        if !(own || folder_here) {
            return Err(invalid(&format!(
                "the root {root:?} is not a folder here: give an absolute path to an existing folder, or one under {}",
                super::INSTANCE_DIR
            )));
        }
        if !valid.contains(&root) {
            valid.push(root);
        }
    }
    Ok(valid)
}

fn timeout_ms(seconds: i64) -> Result<i64, McpError> {
    if (1..=3600).contains(&seconds) {
        Ok(seconds * 1000)
    } else {
        Err(invalid("timeout_seconds is between 1 and 3600"))
    }
}

fn valid_protocol(protocol: &str) -> Result<&str, McpError> {
    PROTOCOLS
        .iter()
        .find(|p| **p == protocol)
        .copied()
        .ok_or_else(|| invalid(&format!("protocol {protocol:?} is not one of {}", PROTOCOLS.join(", "))))
}

/// A name other clients' configurations use, made into one Skald takes.
fn import_name(key: &str) -> String {
    let mut name: String = key
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_lowercase() || c.is_ascii_digit() { c } else { '-' })
        .collect();
    while name.contains("--") {
        name = name.replace("--", "-");
    }
    name.trim_matches('-').chars().take(32).collect::<String>().trim_end_matches('-').to_owned()
}

/// One entry of an `mcpServers` object as a server to add.
fn import_body(name: &str, entry: &Value) -> Result<NewServerBody, String> {
    let strings = |field: &str| -> Result<Option<Vec<String>>, String> {
        match entry.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned).ok_or(format!("{field} must be a list of text")))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(format!("{field} must be a list of text")),
        }
    };
    let env = match entry.get("env") {
        None | Some(Value::Null) => None,
        Some(Value::Object(vars)) => Some(
            vars.iter()
                .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())).ok_or(format!("env.{k} must be text")))
                .collect::<Result<BTreeMap<_, _>, _>>()?,
        ),
        Some(_) => return Err("env must be an object of text values".into()),
    };
    let text = |field: &str| entry.get(field).and_then(Value::as_str).map(str::to_owned);
    let token = entry
        .get("headers")
        .and_then(|h| h.get("Authorization").or_else(|| h.get("authorization")))
        .and_then(Value::as_str)
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(str::to_owned);
    let base = NewServerBody {
        name: name.to_owned(),
        transport: String::new(),
        command: None,
        args: None,
        env: None,
        url: None,
        token: None,
        trusted_lan: false,
        shared: false,
        roots: None,
        timeout_seconds: None,
        protocol: None,
    };
    match (text("command"), text("url").or_else(|| text("serverUrl"))) {
        (Some(command), None) => {
            Ok(NewServerBody { transport: "stdio".into(), command: Some(command), args: strings("args")?, env, ..base })
        }
        (None, Some(url)) => {
            if entry.get("type").and_then(Value::as_str).is_some_and(|t| t == "sse") {
                return Err("the older SSE transport is not supported; use the server's streamable HTTP address".into());
            }
            Ok(NewServerBody { transport: "http".into(), url: Some(url), token, ..base })
        }
        _ => Err("an entry needs either a \"command\" or a \"url\"".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_what_a_tool_name_can_carry() {
        assert!(valid_name("everything").is_ok() && valid_name("home-assistant").is_ok());
        for bad in ["", "Files", "a_b", "-a", "a-", &"x".repeat(33), "a b"] {
            assert!(valid_name(bad).is_err(), "{bad:?}");
        }
        assert_eq!(import_name("GitHub_Server"), "github-server");
        assert_eq!(import_name("__x__"), "x");
    }

    #[test]
    fn another_clients_configuration_imports_as_stdio_or_http() {
        let stdio =
            import_body("files", &json!({ "command": "npx", "args": ["-y", "x"], "env": { "A": "1" } })).unwrap();
        assert_eq!((stdio.transport.as_str(), stdio.command.as_deref()), ("stdio", Some("npx")));
        assert_eq!(stdio.env.unwrap()["A"], "1");
        let http = import_body(
            "hass",
            &json!({ "type": "http", "url": "http://127.0.0.1:8123/mcp", "headers": { "Authorization": "Bearer t0k" } }),
        )
        .unwrap();
        assert_eq!((http.url.as_deref(), http.token.as_deref()), (Some("http://127.0.0.1:8123/mcp"), Some("t0k")));
        assert!(
            import_body("x", &json!({ "type": "sse", "url": "http://127.0.0.1/sse" })).unwrap_err().contains("SSE")
        );
        assert!(import_body("x", &json!({ "args": [] })).is_err());
        assert!(import_body("x", &json!({ "command": "a", "args": [1] })).is_err());
    }
}
