//! The audit trail (§3): administrator actions that affect a person, written in the same
//! transaction as the change they describe, and readable by that person.

use serde::Serialize;
use serde_json::Value;

use super::StoreError;
use super::SystemStore;
use super::timestamp;
use crate::ids::UserId;

/// Who acted, as recorded: the id and the name they had at the time.
#[derive(Debug, Clone)]
pub struct Actor {
    pub id: UserId,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct Entry {
    pub id: i64,
    pub at: String,
    pub actor_id: Option<String>,
    pub actor_name: String,
    pub subject_id: Option<String>,
    pub subject_name: Option<String>,
    pub action: String,
    #[sqlx(json)]
    pub detail: Value,
}

/// Appends an entry inside the caller's transaction.
pub(crate) async fn record(
    tx: &mut sqlx::SqliteConnection,
    actor: &Actor,
    subject: Option<(&UserId, &str)>,
    action: &str,
    detail: Value,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO audit (at, actor_id, actor_name, subject_id, subject_name, action, detail)
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(timestamp())
    .bind(&actor.id)
    .bind(&actor.name)
    .bind(subject.map(|(id, _)| id))
    .bind(subject.map(|(_, name)| name))
    .bind(action)
    .bind(detail.to_string())
    .execute(tx)
    .await?;
    Ok(())
}

/// Entries about one person, newest first.
pub async fn about(store: &SystemStore, subject: &UserId) -> Result<Vec<Entry>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, at, actor_id, actor_name, subject_id, subject_name, action, detail
         FROM audit WHERE subject_id = ? ORDER BY id DESC LIMIT 500",
    )
    .bind(subject)
    .fetch_all(store.pool())
    .await?)
}

/// Every entry, newest first (administrators).
pub async fn all(store: &SystemStore) -> Result<Vec<Entry>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, at, actor_id, actor_name, subject_id, subject_name, action, detail
         FROM audit ORDER BY id DESC LIMIT 1000",
    )
    .fetch_all(store.pool())
    .await?)
}
