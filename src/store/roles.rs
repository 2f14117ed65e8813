//! Roles (§6.1): rows, not code. The presets in `database/presets/roles.json` are seeded
//! once, into an empty table; after that the rows belong to the administrators. Every
//! attribute is stored and returned, including those no feature reads yet.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::SqliteQuery;
use super::audit::{self, Actor};
use super::{StoreError, SystemStore, timestamp};
use crate::ids::{RoleId, UserId};

const PRESETS: &str = include_str!("../../database/presets/roles.json");

/// A role as stored. List-valued attributes are JSON arrays in the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow, ts_rs::TS)]
pub struct Role {
    pub id: RoleId,
    pub label: String,
    #[serde(default)]
    pub description: String,
    pub manage_instance: bool,
    /// Tool name patterns this role may use (`*` for all).
    #[serde(default = "everything")]
    #[sqlx(json)]
    pub tools: Vec<String>,
    pub may_approve: bool,
    pub may_schedule: bool,
    pub may_use_subagents: bool,
    pub max_turns: i64,
    pub idle_timeout_minutes: i64,
    pub lock_on_close: bool,
    /// `provider/model` patterns this role may use (`*` for all).
    #[serde(default = "everything")]
    #[sqlx(json)]
    pub allowed_models: Vec<String>,
    pub preferred_strength: String,
    /// Model tokens (in and out) a person may use per calendar day; none means no cap.
    #[serde(default)]
    pub usage_cap_tokens: Option<i64>,
    pub privacy_tier: PrivacyTier,
    pub memory_retention_days: i64,
    /// May open the space of someone who accepted them as supervisor (§6.2).
    #[serde(default)]
    pub may_supervise: bool,
    /// May be asked to accept a supervisor.
    #[serde(default)]
    pub may_be_supervised: bool,
    /// A supervised person of this role may end the edge themselves.
    #[serde(default = "yes")]
    pub may_end_supervision: bool,
    /// Calls this role may not approve go to the person's supervisor as cards, instead of
    /// being refused (when they have one).
    #[serde(default)]
    pub cards_to_supervisor: bool,
}

fn yes() -> bool {
    true
}

/// Where a role lets a person's words go (§16): the `roles.privacy_tier` column, and the
/// words the API shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum PrivacyTier {
    /// Only to providers on this computer or the home network; the narrower, so the default.
    #[default]
    LocalOnly,
    /// To any provider the role allows.
    Any,
}

impl PrivacyTier {
    pub const ALL: [Self; 2] = [Self::LocalOnly, Self::Any];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::LocalOnly => "local_only",
            Self::Any => "any",
        }
    }

    /// The tier an administrator named, if it is one.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tier| tier.as_str() == name)
    }
}

fn everything() -> Vec<String> {
    vec!["*".to_owned()]
}

const SELECT: &str = "SELECT id, label, description, manage_instance, tools, may_approve, may_schedule, \
     may_use_subagents, max_turns, idle_timeout_minutes, lock_on_close, allowed_models, preferred_strength, \
     usage_cap_tokens, privacy_tier, memory_retention_days, may_supervise, may_be_supervised, \
     may_end_supervision, cards_to_supervisor FROM roles";

/// Seeds the preset roles if the table is empty (a new instance).
pub async fn seed_presets(store: &SystemStore) -> Result<(), StoreError> {
    let presets: Vec<Role> = serde_json::from_str(PRESETS).expect("database/presets/roles.json is valid");
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let existing: i64 = sqlx::query_scalar("SELECT count(*) FROM roles").fetch_one(&mut *tx).await?;
    if existing > 0 {
        return Ok(());
    }
    for role in &presets {
        insert_row(&mut tx, role).await?;
    }
    tx.commit().await?;
    store.people_changed();
    Ok(())
}

pub async fn list(store: &SystemStore) -> Result<Vec<Role>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{SELECT} ORDER BY created_at, id"));
    Ok(sqlx::query_as(sql).fetch_all(store.pool()).await?)
}

pub async fn get(store: &SystemStore, id: &RoleId) -> Result<Option<Role>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{SELECT} WHERE id = ?"));
    Ok(sqlx::query_as(sql).bind(id).fetch_optional(store.pool()).await?)
}

/// The role of an active person, in one query; none for anyone not active.
pub async fn of_active_user(store: &SystemStore, user: &UserId) -> Result<Option<Role>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!(
        "{SELECT} WHERE id = (SELECT role_id FROM users WHERE id = ? AND status = 'active')"
    ));
    Ok(sqlx::query_as(sql).bind(user).fetch_optional(store.pool()).await?)
}

/// The first role that manages the instance; setup gives it to the first person.
pub async fn first_managing(store: &SystemStore) -> Result<Option<RoleId>, StoreError> {
    Ok(sqlx::query_scalar("SELECT id FROM roles WHERE manage_instance = 1 ORDER BY created_at, id LIMIT 1")
        .fetch_optional(store.pool())
        .await?)
}

/// Adds a role an administrator defined (already validated).
pub async fn create(store: &SystemStore, actor: &Actor, role: &Role) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    insert_row(&mut tx, role).await.map_err(|err| match err {
        StoreError::Sqlx(sqlx::Error::Database(db)) if db.is_unique_violation() => StoreError::Exists,
        other => other,
    })?;
    audit::record(&mut tx, actor, None, "role.created", json!({ "role": role.id })).await?;
    tx.commit().await?;
    store.people_changed();
    Ok(())
}

/// The active people whose role manages the instance.
pub async fn managers(store: &SystemStore) -> Result<Vec<UserId>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT u.id FROM users u JOIN roles r ON r.id = u.role_id WHERE u.status = 'active' AND r.manage_instance = 1",
    )
    .fetch_all(store.pool())
    .await?)
}

/// Something a role may let its people do, that others may need to ask them for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ability {
    /// Manage the instance (`manage_instance`).
    Manage,
    /// Approve what the assistant asks to do (`may_approve`).
    Approve,
}

/// The names of the active people whose role has `ability`, by name: whom a person can
/// ask when their own role does not let them.
pub async fn names_who_may(store: &SystemStore, ability: Ability) -> Result<Vec<String>, StoreError> {
    let sql = match ability {
        Ability::Manage => {
            "SELECT u.name FROM users u JOIN roles r ON r.id = u.role_id
             WHERE u.status = 'active' AND r.manage_instance = 1 ORDER BY u.name"
        }
        Ability::Approve => {
            "SELECT u.name FROM users u JOIN roles r ON r.id = u.role_id
             WHERE u.status = 'active' AND r.may_approve = 1 ORDER BY u.name"
        }
    };
    Ok(sqlx::query_scalar(sql).fetch_all(store.pool()).await?)
}

/// Replaces a role's attributes (already validated). Refused when it would leave no
/// active person able to manage the instance.
pub async fn update(store: &SystemStore, actor: &Actor, role: &Role) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    if !role.manage_instance {
        let others: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM users u JOIN roles r ON r.id = u.role_id
             WHERE u.status = 'active' AND r.manage_instance = 1 AND r.id <> ?",
        )
        .bind(&role.id)
        .fetch_one(&mut *tx)
        .await?;
        if others == 0 {
            return Err(StoreError::LastAdmin);
        }
    }
    let sql = sqlx::AssertSqlSafe(format!("{SELECT} WHERE id = ?"));
    let Some(before): Option<Role> = sqlx::query_as(sql).bind(&role.id).fetch_optional(&mut *tx).await? else {
        return Err(StoreError::NotFound);
    };
    let updated = bind_attributes(
        sqlx::query(
            "UPDATE roles SET label = ?, description = ?, manage_instance = ?, tools = ?, may_approve = ?,
                    may_schedule = ?, may_use_subagents = ?, max_turns = ?, idle_timeout_minutes = ?,
                    lock_on_close = ?, allowed_models = ?, preferred_strength = ?, usage_cap_tokens = ?,
                    privacy_tier = ?, memory_retention_days = ?, may_supervise = ?, may_be_supervised = ?,
                    may_end_supervision = ?, cards_to_supervisor = ?
             WHERE id = ?",
        ),
        role,
    )
    .bind(&role.id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if updated == 0 {
        return Err(StoreError::NotFound);
    }
    let changed = changed_attributes(&before, role);
    // Each person with the role finds the change in their own audit, with what changed.
    let holders: Vec<(UserId, String)> = sqlx::query_as("SELECT id, name FROM users WHERE role_id = ? ORDER BY name")
        .bind(&role.id)
        .fetch_all(&mut *tx)
        .await?;
    let detail = json!({ "role": role.id, "changed": changed });
    if holders.is_empty() {
        audit::record(&mut tx, actor, None, "role.updated", detail.clone()).await?;
    }
    for (id, name) in &holders {
        audit::record(&mut tx, actor, Some((id, name)), "role.updated", detail.clone()).await?;
    }
    tx.commit().await?;
    store.people_changed();
    Ok(())
}

/// Removes a role nobody has.
pub async fn delete(store: &SystemStore, actor: &Actor, id: &RoleId) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let users: i64 =
        sqlx::query_scalar("SELECT count(*) FROM users WHERE role_id = ?").bind(id).fetch_one(&mut *tx).await?;
    if users > 0 {
        return Err(StoreError::RoleInUse);
    }
    let deleted = sqlx::query("DELETE FROM roles WHERE id = ?").bind(id).execute(&mut *tx).await?.rows_affected();
    if deleted == 0 {
        return Err(StoreError::NotFound);
    }
    audit::record(&mut tx, actor, None, "role.deleted", json!({ "role": id })).await?;
    tx.commit().await?;
    store.people_changed();
    Ok(())
}

/// Each attribute that differs, as `{"name": {"from": …, "to": …}}`.
fn changed_attributes(before: &Role, after: &Role) -> serde_json::Map<String, serde_json::Value> {
    let (before, after) = (json!(before), json!(after));
    let (Some(before), Some(after)) = (before.as_object(), after.as_object()) else { return Default::default() };
    after
        .iter()
        .filter(|(name, value)| before.get(*name) != Some(value))
        .map(|(name, value)| (name.clone(), json!({ "from": before.get(name), "to": value })))
        .collect()
}

async fn insert_row(tx: &mut sqlx::SqliteConnection, role: &Role) -> Result<(), StoreError> {
    bind_attributes(
        sqlx::query(
            "INSERT INTO roles (label, description, manage_instance, tools, may_approve, may_schedule,
                                may_use_subagents, max_turns, idle_timeout_minutes, lock_on_close, allowed_models,
                                preferred_strength, usage_cap_tokens, privacy_tier, memory_retention_days,
                                may_supervise, may_be_supervised, may_end_supervision, cards_to_supervisor, id,
                                created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ),
        role,
    )
    .bind(&role.id)
    .bind(timestamp())
    .execute(tx)
    .await?;
    Ok(())
}

/// Binds a role's attributes — everything but its id — in the column order both the
/// insert and the update list.
fn bind_attributes<'q>(query: SqliteQuery<'q>, role: &'q Role) -> SqliteQuery<'q> {
    query
        .bind(&role.label)
        .bind(&role.description)
        .bind(role.manage_instance)
        .bind(json!(role.tools).to_string())
        .bind(role.may_approve)
        .bind(role.may_schedule)
        .bind(role.may_use_subagents)
        .bind(role.max_turns)
        .bind(role.idle_timeout_minutes)
        .bind(role.lock_on_close)
        .bind(json!(role.allowed_models).to_string())
        .bind(&role.preferred_strength)
        .bind(role.usage_cap_tokens)
        .bind(role.privacy_tier)
        .bind(role.memory_retention_days)
        .bind(role.may_supervise)
        .bind(role.may_be_supervised)
        .bind(role.may_end_supervision)
        .bind(role.cards_to_supervisor)
}
