//! MCP servers and their tools' pins (§12), in the shared database. A server's declared
//! environment and its bearer token arrive sealed under the instance key (§4); this module
//! never sees them open. Every change an administrator makes is audited with the change.

use serde::Serialize;
use serde_json::{Value, json};
use sqlx::types::Json;

use super::audit::{self, Actor};
use super::providers::name_taken;
use super::{StoreError, SystemStore, notices, timestamp};
use crate::ids::McpServerId;

/// A server as stored: its launch spec, its settings and whether it was approved as it is.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ServerRow {
    pub id: McpServerId,
    pub name: String,
    pub transport: String,
    pub command: Option<String>,
    pub args: Json<Vec<String>>,
    /// The declared environment, a JSON object sealed under the instance key.
    pub env: Option<Vec<u8>>,
    pub url: Option<String>,
    /// The shared bearer token, sealed under the instance key.
    pub token: Option<Vec<u8>>,
    pub trusted_lan: bool,
    pub shared: bool,
    /// The folders a server that asks for roots is told of.
    pub roots: Json<Vec<String>>,
    pub timeout_ms: i64,
    pub protocol: String,
    pub enabled: bool,
    /// The launch spec's digest as an administrator approved it.
    pub approved_spec: Option<String>,
    pub approved_by: Option<String>,
    pub approved_at: Option<String>,
    pub created_by: String,
    pub created_at: String,
    pub updated_by: String,
    pub updated_at: String,
}

/// One tool a server listed, with what it showed last and what was approved.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ToolRow {
    pub server_id: McpServerId,
    pub name: String,
    pub pin: String,
    pub definition: Json<Value>,
    pub approved_pin: Option<String>,
    pub approved_definition: Option<Json<Value>>,
    pub seen_at: String,
    pub approved_at: Option<String>,
    pub gone: bool,
}

/// Where a tool stands against its approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "McpToolStatus")]
pub enum ToolStatus {
    /// Listed, never approved: not offered.
    New,
    /// Listed as approved: offered.
    Approved,
    /// Listed with another definition than the one approved: refused until approved again.
    Changed,
    /// Approved once, no longer listed.
    Gone,
}

impl ToolRow {
    pub fn status(&self) -> ToolStatus {
        match (&self.approved_pin, self.gone) {
            (_, true) => ToolStatus::Gone,
            (None, false) => ToolStatus::New,
            (Some(approved), false) if *approved == self.pin => ToolStatus::Approved,
            (Some(_), false) => ToolStatus::Changed,
        }
    }
}

/// A server to add: its spec, with its secrets already sealed.
pub struct NewServer<'a> {
    pub id: &'a McpServerId,
    pub name: &'a str,
    pub transport: &'a str,
    pub command: Option<&'a str>,
    pub args: &'a [String],
    pub env: Option<&'a [u8]>,
    pub url: Option<&'a str>,
    pub token: Option<&'a [u8]>,
    pub trusted_lan: bool,
    pub shared: bool,
    pub roots: &'a [String],
    pub timeout_ms: i64,
    pub protocol: &'a str,
}

/// A change to a server; what is `None` stays. `Some(None)` removes a secret.
#[derive(Default)]
pub struct ServerChange<'a> {
    pub command: Option<&'a str>,
    pub args: Option<&'a [String]>,
    pub env: Option<Option<&'a [u8]>>,
    pub url: Option<&'a str>,
    pub token: Option<Option<&'a [u8]>>,
    pub trusted_lan: Option<bool>,
    pub shared: Option<bool>,
    pub roots: Option<&'a [String]>,
    pub timeout_ms: Option<i64>,
    pub protocol: Option<&'a str>,
    pub enabled: Option<bool>,
}

macro_rules! select_servers {
    ($tail:literal) => {
        concat!(
            "SELECT id, name, transport, command, args, env, url, token, trusted_lan, shared, roots, timeout_ms, protocol, ",
            "enabled, approved_spec, approved_by, approved_at, created_by, created_at, updated_by, updated_at ",
            "FROM mcp_servers ",
            $tail
        )
    };
}

pub async fn list(store: &SystemStore) -> Result<Vec<ServerRow>, StoreError> {
    Ok(sqlx::query_as(select_servers!("ORDER BY created_at, name")).fetch_all(store.pool()).await?)
}

pub async fn get(store: &SystemStore, id: &McpServerId) -> Result<Option<ServerRow>, StoreError> {
    Ok(sqlx::query_as(select_servers!("WHERE id = ?")).bind(id).fetch_optional(store.pool()).await?)
}

/// Every server's tools, ordered by server and name.
pub async fn tools(store: &SystemStore) -> Result<Vec<ToolRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT server_id, name, pin, definition, approved_pin, approved_definition, seen_at, approved_at, gone
         FROM mcp_tools ORDER BY server_id, name",
    )
    .fetch_all(store.pool())
    .await?)
}

pub async fn insert(store: &SystemStore, actor: &Actor, new: &NewServer<'_>) -> Result<(), StoreError> {
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query(
        "INSERT INTO mcp_servers (id, name, transport, command, args, env, url, token, trusted_lan, shared, roots,
                                  timeout_ms, protocol, created_by, created_at, updated_by, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(new.id)
    .bind(new.name)
    .bind(new.transport)
    .bind(new.command)
    .bind(Json(new.args))
    .bind(new.env)
    .bind(new.url)
    .bind(new.token)
    .bind(new.trusted_lan)
    .bind(new.shared)
    .bind(Json(new.roots))
    .bind(new.timeout_ms)
    .bind(new.protocol)
    .bind(&actor.name)
    .bind(&now)
    .bind(&actor.name)
    .bind(&now)
    .execute(&mut *tx)
    .await
    .map_err(name_taken)?;
    let detail = json!({
        "server": new.id, "name": new.name, "transport": new.transport, "command": new.command, "args": new.args,
        "url": new.url, "shared": new.shared, "roots": new.roots, "has_env": new.env.is_some(), "has_token": new.token.is_some(),
    });
    audit::record(&mut tx, actor, None, "mcp.added", detail).await?;
    tx.commit().await?;
    Ok(())
}

/// Applies a change. A change to the launch spec (command, arguments, environment,
/// address, token, shared, roots) withdraws the approval: the server offers nothing until an
/// administrator approves it again.
pub async fn update(
    store: &SystemStore,
    actor: &Actor,
    id: &McpServerId,
    change: &ServerChange<'_>,
    spec_changed: bool,
) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let updated = sqlx::query(
        "UPDATE mcp_servers SET command = coalesce(?, command), args = coalesce(?, args),
                env = CASE WHEN ? THEN ? ELSE env END, url = coalesce(?, url),
                token = CASE WHEN ? THEN ? ELSE token END, trusted_lan = coalesce(?, trusted_lan),
                shared = coalesce(?, shared), roots = coalesce(?, roots), timeout_ms = coalesce(?, timeout_ms), protocol = coalesce(?, protocol),
                enabled = coalesce(?, enabled),
                approved_spec = CASE WHEN ? THEN NULL ELSE approved_spec END,
                updated_by = ?, updated_at = ?
         WHERE id = ?",
    )
    .bind(change.command)
    .bind(change.args.map(Json))
    .bind(change.env.is_some())
    .bind(change.env.flatten())
    .bind(change.url)
    .bind(change.token.is_some())
    .bind(change.token.flatten())
    .bind(change.trusted_lan)
    .bind(change.shared)
    .bind(change.roots.map(Json))
    .bind(change.timeout_ms)
    .bind(change.protocol)
    .bind(change.enabled)
    .bind(spec_changed)
    .bind(&actor.name)
    .bind(timestamp())
    .bind(id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if updated == 0 {
        return Err(StoreError::NotFound);
    }
    let detail = json!({
        "server": id, "command": change.command, "args": change.args, "url": change.url,
        "env_changed": change.env.is_some(), "token_changed": change.token.is_some(),
        "trusted_lan": change.trusted_lan, "shared": change.shared, "roots": change.roots, "timeout_ms": change.timeout_ms,
        "protocol": change.protocol, "enabled": change.enabled, "approval_withdrawn": spec_changed,
    });
    audit::record(&mut tx, actor, None, "mcp.changed", detail).await?;
    tx.commit().await?;
    Ok(())
}

pub async fn delete(store: &SystemStore, actor: &Actor, id: &McpServerId) -> Result<String, StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let name: Option<String> = sqlx::query_scalar("DELETE FROM mcp_servers WHERE id = ? RETURNING name")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(name) = name else { return Err(StoreError::NotFound) };
    audit::record(&mut tx, actor, None, "mcp.deleted", json!({ "server": id, "name": name })).await?;
    tx.commit().await?;
    Ok(name)
}

/// Audits an administrator's restart of a server.
pub async fn restarted(store: &SystemStore, actor: &Actor, id: &McpServerId) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    audit::record(&mut tx, actor, None, "mcp.restarted", json!({ "server": id })).await?;
    tx.commit().await?;
    Ok(())
}

/// Approves the server's launch spec as `spec` and the tools named (all it lists now when
/// `None`) as they are now. Returns the tools approved.
pub async fn approve(
    store: &SystemStore,
    actor: &Actor,
    id: &McpServerId,
    spec: &str,
    names: Option<&[String]>,
) -> Result<Vec<String>, StoreError> {
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let updated = sqlx::query(
        "UPDATE mcp_servers SET approved_spec = ?, approved_by = ?, approved_at = ?, updated_by = ?, updated_at = ?
         WHERE id = ?",
    )
    .bind(spec)
    .bind(&actor.name)
    .bind(&now)
    .bind(&actor.name)
    .bind(&now)
    .bind(id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if updated == 0 {
        return Err(StoreError::NotFound);
    }
    let listed: Vec<String> =
        sqlx::query_scalar("SELECT name FROM mcp_tools WHERE server_id = ? AND gone = 0 ORDER BY name")
            .bind(id)
            .fetch_all(&mut *tx)
            .await?;
    let chosen: Vec<String> = match names {
        None => listed,
        Some(names) => {
            if names.iter().any(|n| !listed.contains(n)) {
                return Err(StoreError::WrongState("the server lists no tool by one of those names"));
            }
            names.to_vec()
        }
    };
    for name in &chosen {
        sqlx::query(
            "UPDATE mcp_tools SET approved_pin = pin, approved_definition = definition, approved_at = ?
             WHERE server_id = ? AND name = ?",
        )
        .bind(&now)
        .bind(id)
        .bind(name)
        .execute(&mut *tx)
        .await?;
    }
    audit::record(&mut tx, actor, None, "mcp.approved", json!({ "server": id, "spec": spec, "tools": chosen })).await?;
    tx.commit().await?;
    Ok(chosen)
}

/// A tool as a server listed it: its name, pin and the definition the pin covers.
pub struct Listed {
    pub name: String,
    pub pin: String,
    pub definition: Value,
}

/// Records what a server lists now: new tools are kept as `new`, a definition that
/// changed replaces the one seen (the approved one stays beside it), and tools no longer
/// listed are marked gone. Returns the names whose pin now differs from an approval, or
/// that appeared after the server was approved, for the administrators' notice; each such
/// change is told once.
pub async fn record_listing(
    store: &SystemStore,
    id: &McpServerId,
    listed: &[Listed],
) -> Result<Vec<String>, StoreError> {
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let before: Vec<(String, String, Option<String>, bool)> =
        sqlx::query_as("SELECT name, pin, approved_pin, gone FROM mcp_tools WHERE server_id = ?")
            .bind(id)
            .fetch_all(&mut *tx)
            .await?;
    let approved: Option<Option<String>> = sqlx::query_scalar("SELECT approved_spec FROM mcp_servers WHERE id = ?")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(approved) = approved else { return Err(StoreError::NotFound) };
    let mut news = Vec::new();
    for tool in listed {
        let was = before.iter().find(|(name, ..)| *name == tool.name);
        let newly_differs = match was {
            None => approved.is_some(),
            Some((_, pin, approved_pin, gone)) => {
                (*pin != tool.pin || *gone) && approved_pin.as_ref().is_some_and(|a| *a != tool.pin)
            }
        };
        if newly_differs {
            news.push(tool.name.clone());
        }
        sqlx::query(
            "INSERT INTO mcp_tools (server_id, name, pin, definition, seen_at, gone) VALUES (?, ?, ?, ?, ?, 0)
             ON CONFLICT (server_id, name) DO UPDATE SET pin = excluded.pin, definition = excluded.definition,
                 seen_at = excluded.seen_at, gone = 0",
        )
        .bind(id)
        .bind(&tool.name)
        .bind(&tool.pin)
        .bind(Json(&tool.definition))
        .bind(&now)
        .execute(&mut *tx)
        .await?;
    }
    for (name, ..) in before.iter().filter(|(name, .., gone)| !gone && !listed.iter().any(|t| t.name == *name)) {
        sqlx::query("UPDATE mcp_tools SET gone = 1 WHERE server_id = ? AND name = ?")
            .bind(id)
            .bind(name)
            .execute(&mut *tx)
            .await?;
    }
    // Tools never approved and no longer listed leave no trace.
    sqlx::query("DELETE FROM mcp_tools WHERE server_id = ? AND gone = 1 AND approved_pin IS NULL")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    if !news.is_empty() {
        let server: String =
            sqlx::query_scalar("SELECT name FROM mcp_servers WHERE id = ?").bind(id).fetch_one(&mut *tx).await?;
        let body = json!({ "server": id, "server_name": server, "tools": news });
        sqlx::query(
            "INSERT INTO notices (user_id, kind, body, created_at)
             SELECT u.id, 'mcp_tools_changed', ?, ? FROM users u JOIN roles r ON r.id = u.role_id
             WHERE u.status = 'active' AND r.manage_instance = 1",
        )
        .bind(body.to_string())
        .bind(&now)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(news)
}

/// Leaves every active person but the actor a notice of an MCP change, with the actor.
pub async fn tell_everyone(store: &SystemStore, actor: &Actor, kind: &str, detail: Value) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let body = super::providers::with_actor(detail, actor);
    notices::tell_everyone_but(&mut tx, Some(&actor.id), kind, &body).await?;
    tx.commit().await?;
    Ok(())
}
