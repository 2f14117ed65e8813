//! Notices (§3): a change someone else made to what shapes where a person's words go or
//! how they are handled — a model provider, an agent's prompt — waits here until that
//! person has seen it. They hold names and ids, never content.

use serde::Serialize;
use serde_json::Value;

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

/// Leaves one person a notice.
pub async fn tell(store: &SystemStore, user: &UserId, kind: &str, body: &Value) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO notices (user_id, kind, body, created_at) VALUES (?, ?, ?, ?)")
        .bind(user)
        .bind(kind)
        .bind(body.to_string())
        .bind(timestamp())
        .execute(store.pool())
        .await?;
    Ok(())
}

/// Someone else changed what shapes where a person's words go (`GET /api/notices`).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct Notice {
    pub id: i64,
    /// `agent_changed`, `provider_added`, `provider_changed`, `provider_deleted`,
    /// `change_applied`, `held_change` or `declined_change`; a page shows others plainly.
    pub kind: String,
    /// What changed, by kind: names and ids as the change wrote them.
    #[ts(type = "Record<string, unknown> | null")]
    pub body: Value,
    pub created_at: String,
    /// A change that widened where the person's words go or what runs without asking
    /// them: their turns wait until they decide on it.
    pub holds: bool,
}

/// A person's notices not yet marked seen (those that hold a turn among them), oldest first.
pub async fn unseen(store: &SystemStore, user: &UserId) -> Result<Vec<Notice>, StoreError> {
    let rows: Vec<(i64, String, String, String, bool)> = sqlx::query_as(
        "SELECT id, kind, body, created_at, holds FROM notices WHERE user_id = ? AND seen_at IS NULL ORDER BY id",
    )
    .bind(user)
    .fetch_all(store.pool())
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, kind, body, created_at, holds)| {
            let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            Notice { id, kind, body, created_at, holds }
        })
        .collect())
}

/// Marks a person's notices seen, up to and including `upto`. Notices that hold a turn
/// stay until the person decides on them.
pub async fn mark_seen(store: &SystemStore, user: &UserId, upto: i64) -> Result<u64, StoreError> {
    Ok(sqlx::query("UPDATE notices SET seen_at = ? WHERE user_id = ? AND id <= ? AND seen_at IS NULL AND holds = 0")
        .bind(timestamp())
        .bind(user)
        .bind(upto)
        .execute(store.pool())
        .await?
        .rows_affected())
}

/// The kind of the notices that hold a turn.
pub const HELD: &str = "held_change";
/// A held change the person declined: it stays out of force for them, and the notice
/// stays (not holding) so they can still accept it.
pub const DECLINED: &str = "declined_change";

/// Makes a person's holding notices the given ones: each (by its body's `fingerprint`) is
/// kept if it is there, added if not; open ones no longer held are closed, among those
/// whose item (`key`) the caller `compared`. Returns the notices' ids, in the order given,
/// and whether any was added. The holds themselves come from the person's own record
/// each time, so a row deleted in the files is only written again. Writes only when
/// something changes.
///
/// `open` is what [`open_holds`] read, under the same lock on the person's record: a
/// turn's start reads it beside its other reads.
pub async fn hold(
    store: &SystemStore,
    user: &UserId,
    open: OpenHolds,
    bodies: &[Value],
    compared: impl Fn(&str) -> bool,
) -> Result<(Vec<i64>, bool), StoreError> {
    let OpenHolds(open) = open;
    let field = |body: &Value, name: &str| body[name].as_str().map(str::to_owned);
    let kept: Vec<Option<i64>> = bodies
        .iter()
        .map(|body| open.iter().find(|(_, b)| field(b, "fingerprint") == field(body, "fingerprint")).map(|(id, _)| *id))
        .collect();
    let stale: Vec<i64> = open
        .iter()
        .filter(|(id, body)| !kept.contains(&Some(*id)) && field(body, "key").is_some_and(|key| compared(&key)))
        .map(|(id, _)| *id)
        .collect();
    let added = kept.iter().any(Option::is_none);
    if !added && stale.is_empty() {
        return Ok((kept.into_iter().flatten().collect(), false));
    }
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let mut ids = Vec::with_capacity(bodies.len());
    for (body, kept) in bodies.iter().zip(kept) {
        let id = match kept {
            Some(id) => id,
            None => sqlx::query("INSERT INTO notices (user_id, kind, body, created_at, holds) VALUES (?, ?, ?, ?, 1)")
                .bind(user)
                .bind(HELD)
                .bind(body.to_string())
                .bind(timestamp())
                .execute(&mut *tx)
                .await?
                .last_insert_rowid(),
        };
        ids.push(id);
    }
    for id in &stale {
        sqlx::query("UPDATE notices SET seen_at = ? WHERE id = ?").bind(timestamp()).bind(id).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok((ids, added))
}

/// A person's open holding notices, by id with their bodies.
pub struct OpenHolds(Vec<(i64, Value)>);

/// A person's open holding notices with their bodies.
pub async fn open_holds(store: &SystemStore, user: &UserId) -> Result<OpenHolds, StoreError> {
    let rows: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, body FROM notices WHERE user_id = ? AND holds = 1 AND seen_at IS NULL")
            .bind(user)
            .fetch_all(store.pool())
            .await?;
    Ok(OpenHolds(rows.into_iter().map(|(id, body)| (id, serde_json::from_str(&body).unwrap_or(Value::Null))).collect()))
}

/// One of a person's open notices of a held or declined change: its body.
pub async fn held(store: &SystemStore, user: &UserId, id: i64) -> Result<Option<Value>, StoreError> {
    let body: Option<String> = sqlx::query_scalar(
        "SELECT body FROM notices WHERE id = ? AND user_id = ? AND kind IN (?, ?) AND seen_at IS NULL",
    )
    .bind(id)
    .bind(user)
    .bind(HELD)
    .bind(DECLINED)
    .fetch_optional(store.pool())
    .await?;
    Ok(body.and_then(|body| serde_json::from_str(&body).ok()))
}

/// Turns a holding notice into one of a declined change.
pub async fn mark_declined(store: &SystemStore, user: &UserId, id: i64) -> Result<(), StoreError> {
    sqlx::query("UPDATE notices SET holds = 0, kind = ? WHERE id = ? AND user_id = ?")
        .bind(DECLINED)
        .bind(id)
        .bind(user)
        .execute(store.pool())
        .await?;
    Ok(())
}

/// Closes a holding notice once the person decided on it.
pub async fn close_hold(store: &SystemStore, user: &UserId, id: i64) -> Result<(), StoreError> {
    sqlx::query("UPDATE notices SET seen_at = ? WHERE id = ? AND user_id = ?")
        .bind(timestamp())
        .bind(id)
        .bind(user)
        .execute(store.pool())
        .await?;
    Ok(())
}
