//! The approval gate's shared rules (§8.4). Presets from
//! `database/presets/approval_rules.json` are seeded once, at the instance's first start;
//! after that administrators own the rows. Each change is in the audit trail.

use serde::Serialize;
use serde_json::json;

use super::audit::{self, Actor};
use super::{StoreError, SystemStore, timestamp};
use crate::rules::{ArgsPattern, Effect, Rule};

const PRESETS: &str = include_str!("../../database/presets/approval_rules.json");

/// A stored rule with its id and who made it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "ApprovalRule")]
pub struct StoredRule {
    pub id: i64,
    #[serde(flatten)]
    pub rule: Rule,
    pub created_by: String,
    pub created_at: String,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    tool: String,
    args: Option<String>,
    role_id: Option<String>,
    effect: String,
    priority: i64,
    created_by: String,
    created_at: String,
}

impl From<Row> for StoredRule {
    fn from(row: Row) -> Self {
        let effect = match row.effect.as_str() {
            "allow" => Effect::Allow,
            "deny" => Effect::Deny,
            // The table allows nothing else; an unknown value asks, the safe answer.
            _ => Effect::Require,
        };
        StoredRule {
            id: row.id,
            rule: Rule {
                tool: row.tool,
                args: row.args.map(ArgsPattern::from_stored),
                role: row.role_id,
                effect,
                priority: row.priority,
            },
            created_by: row.created_by,
            created_at: row.created_at,
        }
    }
}

fn effect_name(effect: Effect) -> &'static str {
    match effect {
        Effect::Allow => "allow",
        Effect::Deny => "deny",
        Effect::Require => "require",
    }
}

/// Seeds the preset rules, once in the instance's life.
pub async fn seed_presets(store: &SystemStore) -> Result<(), StoreError> {
    let presets: Vec<Rule> = serde_json::from_str(PRESETS).expect("database/presets/approval_rules.json is valid");
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let first_time = sqlx::query("UPDATE instance SET approval_rules_seeded = 1 WHERE approval_rules_seeded = 0")
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if first_time == 0 {
        return Ok(());
    }
    for rule in &presets {
        insert_row(&mut tx, rule, "Skald (preset)").await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Every rule, in the order the gate weighs them: by priority, then age.
pub async fn list(store: &SystemStore) -> Result<Vec<StoredRule>, StoreError> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT id, tool, args, role_id, effect, priority, created_by, created_at FROM approval_rules
         ORDER BY priority, id",
    )
    .fetch_all(store.pool())
    .await?;
    Ok(rows.into_iter().map(StoredRule::from).collect())
}

/// Adds a rule (already validated); returns its id.
pub async fn add(store: &SystemStore, actor: &Actor, rule: &Rule) -> Result<i64, StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let id = insert_row(&mut tx, rule, &actor.name).await?;
    audit::record(&mut tx, actor, None, "approval_rule.added", described(id, rule)).await?;
    tx.commit().await?;
    Ok(id)
}

/// Replaces a rule's fields (already validated).
pub async fn replace(store: &SystemStore, actor: &Actor, id: i64, rule: &Rule) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let updated =
        sqlx::query("UPDATE approval_rules SET tool = ?, args = ?, role_id = ?, effect = ?, priority = ? WHERE id = ?")
            .bind(&rule.tool)
            .bind(rule.args.as_ref().map(ArgsPattern::to_stored))
            .bind(&rule.role)
            .bind(effect_name(rule.effect))
            .bind(rule.priority)
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(unknown_role)?
            .rows_affected();
    if updated == 0 {
        return Err(StoreError::NotFound);
    }
    audit::record(&mut tx, actor, None, "approval_rule.changed", described(id, rule)).await?;
    tx.commit().await?;
    Ok(())
}

pub async fn delete(store: &SystemStore, actor: &Actor, id: i64) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let deleted =
        sqlx::query("DELETE FROM approval_rules WHERE id = ?").bind(id).execute(&mut *tx).await?.rows_affected();
    if deleted == 0 {
        return Err(StoreError::NotFound);
    }
    audit::record(&mut tx, actor, None, "approval_rule.deleted", json!({ "rule": id })).await?;
    tx.commit().await?;
    Ok(())
}

/// An audit entry's detail: the whole rule, so a person's record can tell this change
/// from one made in the files.
fn described(id: i64, rule: &Rule) -> serde_json::Value {
    json!({ "rule": id, "tool": rule.tool, "args": rule.args, "role": rule.role, "effect": rule.effect,
            "priority": rule.priority })
}

async fn insert_row(tx: &mut sqlx::SqliteConnection, rule: &Rule, by: &str) -> Result<i64, StoreError> {
    Ok(sqlx::query(
        "INSERT INTO approval_rules (tool, args, role_id, effect, priority, created_by, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&rule.tool)
    .bind(rule.args.as_ref().map(ArgsPattern::to_stored))
    .bind(&rule.role)
    .bind(effect_name(rule.effect))
    .bind(rule.priority)
    .bind(by)
    .bind(timestamp())
    .execute(tx)
    .await
    .map_err(unknown_role)?
    .last_insert_rowid())
}

/// A rule naming a role that does not exist breaks the foreign key.
fn unknown_role(err: sqlx::Error) -> StoreError {
    match err {
        sqlx::Error::Database(db) if db.is_foreign_key_violation() => StoreError::WrongState("there is no such role"),
        other => StoreError::Sqlx(other),
    }
}
