//! Supervision edges in the shared database (docs/architecture.md §6.2), and the access
//! log kept in the supervised person's own file. A pending edge holds no key; an active
//! one holds the supervised person's data key sealed to the supervisor, which only the
//! supervisor's own secret (inside their file) opens.

use serde::Serialize;
use serde_json::json;
use sqlx::Row;

use super::audit::{self, Actor};
use super::private::PrivateStore;
use super::snapshots::Touched;
use super::{StoreError, SystemStore, timestamp};
use crate::ids::UserId;

/// An edge as people see it (never its key copy).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "SupervisionEdge")]
pub struct Edge {
    pub id: String,
    pub supervisor_id: UserId,
    pub supervisor_name: String,
    pub supervised_id: UserId,
    pub supervised_name: String,
    /// `pending` (asked, no key) or `active` (the supervisor holds a sealed copy).
    pub state: String,
    /// Made with the account: becomes active when the person enrols.
    pub at_enrolment: bool,
    pub requested_by: String,
    pub requested_at: String,
    pub accepted_at: Option<String>,
    #[ts(type = "number")]
    pub opens: i64,
    #[ts(type = "number")]
    pub reads: i64,
    pub last_opened_at: Option<String>,
}

const SELECT: &str = "SELECT e.id, e.supervisor_id, a.name AS supervisor_name, e.supervised_id, \
     b.name AS supervised_name, e.state, e.at_enrolment, e.requested_by, e.requested_at, e.accepted_at, e.opens, \
     e.reads, e.last_opened_at FROM supervision e JOIN users a ON a.id = e.supervisor_id \
     JOIN users b ON b.id = e.supervised_id";

fn edge(row: &sqlx::sqlite::SqliteRow) -> Result<Edge, sqlx::Error> {
    Ok(Edge {
        id: row.try_get("id")?,
        supervisor_id: row.try_get("supervisor_id")?,
        supervisor_name: row.try_get("supervisor_name")?,
        supervised_id: row.try_get("supervised_id")?,
        supervised_name: row.try_get("supervised_name")?,
        state: row.try_get("state")?,
        at_enrolment: row.try_get::<i64, _>("at_enrolment")? != 0,
        requested_by: row.try_get("requested_by")?,
        requested_at: row.try_get("requested_at")?,
        accepted_at: row.try_get("accepted_at")?,
        opens: row.try_get("opens")?,
        reads: row.try_get("reads")?,
        last_opened_at: row.try_get("last_opened_at")?,
    })
}

pub async fn get(store: &SystemStore, id: &str) -> Result<Option<Edge>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{SELECT} WHERE e.id = ?"));
    let row = sqlx::query(sql).bind(id).fetch_optional(store.pool()).await?;
    Ok(row.as_ref().map(edge).transpose()?)
}

/// Every edge a person is on, either side, oldest first.
pub async fn of_person(store: &SystemStore, user: &UserId) -> Result<Vec<Edge>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!(
        "{SELECT} WHERE e.supervisor_id = ?1 OR e.supervised_id = ?1 ORDER BY e.requested_at, e.id"
    ));
    let rows = sqlx::query(sql).bind(user).fetch_all(store.pool()).await?;
    Ok(rows.iter().map(edge).collect::<Result<_, _>>()?)
}

/// Every edge, for the administrators' page.
pub async fn all(store: &SystemStore) -> Result<Vec<Edge>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{SELECT} ORDER BY b.name, a.name"));
    let rows = sqlx::query(sql).fetch_all(store.pool()).await?;
    Ok(rows.iter().map(edge).collect::<Result<_, _>>()?)
}

/// Asks for an edge (pending, no key). Recorded in the audit for both people.
pub async fn request(
    store: &SystemStore,
    actor: &Actor,
    supervisor: (&UserId, &str),
    supervised: (&UserId, &str),
    at_enrolment: bool,
) -> Result<String, StoreError> {
    let id = crate::ids::random_id("sup");
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let inserted = sqlx::query(
        "INSERT INTO supervision (id, supervisor_id, supervised_id, state, at_enrolment, requested_by, requested_at)
         VALUES (?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (supervisor_id, supervised_id) DO NOTHING",
    )
    .bind(&id)
    .bind(supervisor.0)
    .bind(supervised.0)
    .bind(i64::from(at_enrolment))
    .bind(&actor.name)
    .bind(timestamp())
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if inserted == 0 {
        return Err(StoreError::Exists);
    }
    let detail = json!({ "supervisor": supervisor.1, "supervised": supervised.1, "at_enrolment": at_enrolment });
    audit::record(&mut tx, actor, Some(supervised), "supervision.requested", detail.clone()).await?;
    audit::record(&mut tx, actor, Some(supervisor), "supervision.requested", detail).await?;
    tx.commit().await?;
    Ok(id)
}

/// A pending edge the supervised person accepts (or their enrolment makes), and the
/// supervisor's public key to seal to.
pub struct ToSeal {
    pub id: String,
    pub supervisor_id: UserId,
    pub supervisor_public: Vec<u8>,
    pub key_version: i64,
}

fn to_seal(row: &sqlx::sqlite::SqliteRow) -> Result<ToSeal, sqlx::Error> {
    Ok(ToSeal {
        id: row.try_get("id")?,
        supervisor_id: row.try_get("supervisor_id")?,
        supervisor_public: row.try_get::<Option<Vec<u8>>, _>("public_key")?.unwrap_or_default(),
        key_version: row.try_get("key_version")?,
    })
}

/// The pending edges of `supervised`; `at_enrolment_only` for those made with the account.
pub async fn pending_for(
    store: &SystemStore,
    supervised: &UserId,
    at_enrolment_only: bool,
) -> Result<Vec<ToSeal>, StoreError> {
    let rows = sqlx::query(
        "SELECT e.id, e.supervisor_id, u.public_key, e.key_version FROM supervision e
         JOIN users u ON u.id = e.supervisor_id
         WHERE e.supervised_id = ? AND e.state = 'pending' AND u.status = 'active' AND u.public_key IS NOT NULL
           AND (e.at_enrolment = 1 OR ? = 0)",
    )
    .bind(supervised)
    .bind(i64::from(at_enrolment_only))
    .fetch_all(store.pool())
    .await?;
    Ok(rows.iter().map(to_seal).collect::<Result<_, _>>()?)
}

/// Makes a pending edge active with the key copy sealed to its supervisor.
pub async fn activate(store: &SystemStore, id: &str, sealed_key: &[u8]) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE supervision SET state = 'active', sealed_key = ?, accepted_at = ? WHERE id = ? AND state = 'pending'",
    )
    .bind(sealed_key)
    .bind(timestamp())
    .bind(id)
    .execute(store.pool())
    .await?
    .rows_affected();
    Ok(done > 0)
}

/// The key copy a supervisor holds for `supervised`, with the edge's id and key version.
pub async fn sealed_copy(
    store: &SystemStore,
    supervisor: &UserId,
    supervised: &UserId,
) -> Result<Option<(String, Vec<u8>, i64)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, sealed_key, key_version FROM supervision
         WHERE supervisor_id = ? AND supervised_id = ? AND state = 'active'",
    )
    .bind(supervisor)
    .bind(supervised)
    .fetch_optional(store.pool())
    .await?)
}

/// Whether someone holds an active copy of `supervised`'s key: their cards may go to them.
pub async fn has_supervisor(store: &SystemStore, supervised: &UserId) -> Result<bool, StoreError> {
    let found: Option<i64> =
        sqlx::query_scalar("SELECT 1 FROM supervision WHERE supervised_id = ? AND state = 'active' LIMIT 1")
            .bind(supervised)
            .fetch_optional(store.pool())
            .await?;
    Ok(found.is_some())
}

/// Names of the people holding an active copy of `supervised`'s key.
pub async fn supervisor_names(store: &SystemStore, supervised: &UserId) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT u.name FROM supervision e JOIN users u ON u.id = e.supervisor_id
         WHERE e.supervised_id = ? AND e.state = 'active' ORDER BY u.name",
    )
    .bind(supervised)
    .fetch_all(store.pool())
    .await?)
}

/// Removes an edge, and with it (`secure_delete`) the bytes of its key copy.
pub async fn remove(store: &SystemStore, actor: &Actor, id: &str) -> Result<Edge, StoreError> {
    let Some(found) = get(store, id).await? else { return Err(StoreError::NotFound) };
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let gone = sqlx::query("DELETE FROM supervision WHERE id = ?").bind(id).execute(&mut *tx).await?.rows_affected();
    if gone == 0 {
        return Err(StoreError::NotFound);
    }
    let detail =
        json!({ "supervisor": found.supervisor_name, "supervised": found.supervised_name, "was": found.state });
    audit::record(
        &mut tx,
        actor,
        Some((&found.supervised_id, &found.supervised_name)),
        "supervision.removed",
        detail.clone(),
    )
    .await?;
    audit::record(&mut tx, actor, Some((&found.supervisor_id, &found.supervisor_name)), "supervision.removed", detail)
        .await?;
    tx.commit().await?;
    Ok(found)
}

/// Counts a supervisor's open and reads in the shared database (the details are in the
/// supervised person's file).
pub async fn count_access(store: &SystemStore, id: &str, opens: i64, reads: i64) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE supervision SET opens = opens + ?, reads = reads + ?,
         last_opened_at = CASE WHEN ? > 0 THEN ? ELSE last_opened_at END WHERE id = ?",
    )
    .bind(opens)
    .bind(reads)
    .bind(opens)
    .bind(timestamp())
    .bind(id)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Active edges of `supervised` with their supervisors' public keys: a key rotation seals
/// the new key to each again.
pub async fn active_for(store: &SystemStore, supervised: &UserId) -> Result<Vec<ToSeal>, StoreError> {
    let rows = sqlx::query(
        "SELECT e.id, e.supervisor_id, u.public_key, e.key_version FROM supervision e
         JOIN users u ON u.id = e.supervisor_id WHERE e.supervised_id = ? AND e.state = 'active'",
    )
    .bind(supervised)
    .fetch_all(store.pool())
    .await?;
    Ok(rows.iter().map(to_seal).collect::<Result<_, _>>()?)
}

/// One entry of the access log in a supervised person's file.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
#[ts(rename = "AccessEntry")]
pub struct AccessEntry {
    #[ts(type = "number")]
    pub id: i64,
    pub supervisor_id: String,
    pub supervisor_name: String,
    pub at: String,
    /// `opened` (a list) or `read` (one item).
    pub action: String,
    /// `conversations`, `conversation`, `notes`, `note` or `memories`.
    pub what: String,
    pub item: Option<String>,
}

/// Writes one access into the supervised person's file.
pub async fn log_access(
    space: &PrivateStore,
    supervisor: (&UserId, &str),
    action: &str,
    what: &str,
    item: Option<&str>,
) -> Result<(), StoreError> {
    let _writing = space.writing(Touched::Nothing);
    sqlx::query(
        "INSERT INTO access_log (supervisor_id, supervisor_name, at, action, what, item) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(supervisor.0)
    .bind(supervisor.1)
    .bind(timestamp())
    .bind(action)
    .bind(what)
    .bind(item)
    .execute(space.pool())
    .await?;
    Ok(())
}

/// The newest `limit` accesses, newest first.
pub async fn access_log(space: &PrivateStore, limit: i64) -> Result<Vec<AccessEntry>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, supervisor_id, supervisor_name, at, action, what, item FROM access_log ORDER BY id DESC LIMIT ?",
    )
    .bind(limit)
    .fetch_all(space.pool())
    .await?)
}
