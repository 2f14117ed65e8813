//! Notices (§3): a change someone else made to what shapes where a person's words go or
//! how they are handled — a model provider, an agent's prompt — waits here until that
//! person has seen it. They hold names and ids, never content.

use serde_json::{Value, json};

use super::{StoreError, SystemStore, timestamp};
use crate::ids::UserId;

/// Leaves a notice for every active person but the one who made the change, inside the
/// caller's transaction (the change and its notices commit together).
pub(crate) async fn tell_everyone_but(
    tx: &mut sqlx::SqliteConnection,
    changed_by: Option<&UserId>,
    kind: &str,
    body: &Value,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO notices (user_id, kind, body, created_at)
         SELECT id, ?, ?, ? FROM users WHERE status = 'active' AND id IS NOT ?",
    )
    .bind(kind)
    .bind(body.to_string())
    .bind(timestamp())
    .bind(changed_by)
    .execute(tx)
    .await?;
    Ok(())
}

/// A person's notices not yet marked seen, oldest first.
pub async fn unseen(store: &SystemStore, user: &UserId) -> Result<Vec<Value>, StoreError> {
    let rows: Vec<(i64, String, String, String)> = sqlx::query_as(
        "SELECT id, kind, body, created_at FROM notices WHERE user_id = ? AND seen_at IS NULL ORDER BY id",
    )
    .bind(user)
    .fetch_all(store.pool())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, kind, body, created_at)| {
            let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            json!({ "id": id, "kind": kind, "body": body, "created_at": created_at })
        })
        .collect())
}

/// Marks a person's notices seen, up to and including `upto`.
pub async fn mark_seen(store: &SystemStore, user: &UserId, upto: i64) -> Result<u64, StoreError> {
    Ok(sqlx::query("UPDATE notices SET seen_at = ? WHERE user_id = ? AND id <= ? AND seen_at IS NULL")
        .bind(timestamp())
        .bind(user)
        .bind(upto)
        .execute(store.pool())
        .await?
        .rows_affected())
}
