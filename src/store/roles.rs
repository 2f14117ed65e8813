//! Roles (§6.1): rows, not code. The presets in `database/presets/roles.json` are seeded
//! once, into an empty table; after that the rows belong to the administrators.

use serde::{Deserialize, Serialize};

use super::{StoreError, SystemStore, timestamp};
use crate::ids::RoleId;

const PRESETS: &str = include_str!("../../database/presets/roles.json");

/// A role as stored. List-valued attributes are JSON arrays.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct Role {
    pub id: RoleId,
    pub label: String,
    pub description: String,
    pub manage_instance: bool,
    pub may_approve: bool,
    pub may_schedule: bool,
    pub may_use_subagents: bool,
    pub max_turns: i64,
    pub idle_timeout_minutes: i64,
    pub lock_on_close: bool,
    pub preferred_strength: String,
    pub privacy_tier: String,
    pub memory_retention_days: i64,
}

#[derive(Deserialize)]
struct Preset {
    id: String,
    label: String,
    description: String,
    manage_instance: bool,
    may_approve: bool,
    may_schedule: bool,
    may_use_subagents: bool,
    max_turns: i64,
    idle_timeout_minutes: i64,
    lock_on_close: bool,
    preferred_strength: String,
    privacy_tier: String,
    memory_retention_days: i64,
}

/// Seeds the preset roles if the table is empty (a new instance).
pub async fn seed_presets(store: &SystemStore) -> Result<(), StoreError> {
    let presets: Vec<Preset> = serde_json::from_str(PRESETS).expect("database/presets/roles.json is valid");
    let mut tx = store.pool().begin().await?;
    let existing: i64 = sqlx::query_scalar("SELECT count(*) FROM roles")
        .fetch_one(&mut *tx)
        .await?;
    if existing > 0 {
        return Ok(());
    }
    let now = timestamp();
    for p in presets {
        sqlx::query(
            "INSERT INTO roles (id, label, description, manage_instance, may_approve, may_schedule, may_use_subagents,
                                max_turns, idle_timeout_minutes, lock_on_close, preferred_strength, privacy_tier,
                                memory_retention_days, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(p.id)
        .bind(p.label)
        .bind(p.description)
        .bind(p.manage_instance)
        .bind(p.may_approve)
        .bind(p.may_schedule)
        .bind(p.may_use_subagents)
        .bind(p.max_turns)
        .bind(p.idle_timeout_minutes)
        .bind(p.lock_on_close)
        .bind(p.preferred_strength)
        .bind(p.privacy_tier)
        .bind(p.memory_retention_days)
        .bind(&now)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

pub async fn get(store: &SystemStore, id: &RoleId) -> Result<Option<Role>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, label, description, manage_instance, may_approve, may_schedule, may_use_subagents, max_turns,
                idle_timeout_minutes, lock_on_close, preferred_strength, privacy_tier, memory_retention_days
         FROM roles WHERE id = ?",
    )
    .bind(id)
    .fetch_optional(store.pool())
    .await?)
}

/// The first role that manages the instance; setup gives it to the first person.
pub async fn first_managing(store: &SystemStore) -> Result<Option<RoleId>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT id FROM roles WHERE manage_instance = 1 ORDER BY created_at, id LIMIT 1")
            .fetch_optional(store.pool())
            .await?,
    )
}
