//! The audit trail (§3): administrator actions that affect a person, written in the same
//! transaction as the change they describe, and readable by that person. The entries form
//! a hash chain — each carries the hash of the one before, and the instance row the hash
//! of the newest — so an entry deleted or edited in the files is found without anyone's
//! key. Whoever owns the files could rebuild the whole chain; what stops them is each
//! person's own record of what they accepted (`agent::consent`), which the chain only
//! helps to attribute.

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

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
#[ts(rename = "AuditEntry")]
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

/// Actions that touch everyone (no subject): what a person's words may reach and what may
/// run for them. Each person's audit shows these beside the entries about them.
const EVERYONE: &str =
    "action LIKE 'provider.%' OR action LIKE 'local_model.%' OR action LIKE 'approval_rule.%' OR action LIKE 'agent.%'";

/// Appends an entry inside the caller's transaction, chained to the one before.
pub(crate) async fn record(
    tx: &mut sqlx::SqliteConnection,
    actor: &Actor,
    subject: Option<(&UserId, &str)>,
    action: &str,
    detail: Value,
) -> Result<(), StoreError> {
    let (_, prev): (i64, String) = head_in(&mut *tx).await?;
    let at = timestamp();
    let detail = detail.to_string();
    let id = sqlx::query(
        "INSERT INTO audit (at, actor_id, actor_name, subject_id, subject_name, action, detail, prev_hash)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&at)
    .bind(&actor.id)
    .bind(&actor.name)
    .bind(subject.map(|(id, _)| id))
    .bind(subject.map(|(_, name)| name))
    .bind(action)
    .bind(&detail)
    .bind(&prev)
    .execute(&mut *tx)
    .await?
    .last_insert_rowid();
    let link = Link {
        id,
        at,
        actor_id: Some(actor.id.to_string()),
        actor_name: actor.name.clone(),
        subject_id: subject.map(|(id, _)| id.to_string()),
        subject_name: subject.map(|(_, name)| name.to_owned()),
        action: action.to_owned(),
        detail,
        prev_hash: Some(prev),
        hash: None,
    };
    let hash = link.expected_hash();
    sqlx::query("UPDATE audit SET hash = ? WHERE id = ?").bind(&hash).bind(id).execute(&mut *tx).await?;
    sqlx::query("UPDATE instance SET audit_head_id = ?, audit_head_hash = ?")
        .bind(id)
        .bind(&hash)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// One entry as the chain hashes it: every column, the detail as stored text.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Link {
    pub id: i64,
    pub at: String,
    pub actor_id: Option<String>,
    pub actor_name: String,
    pub subject_id: Option<String>,
    pub subject_name: Option<String>,
    pub action: String,
    pub detail: String,
    pub prev_hash: Option<String>,
    pub hash: Option<String>,
}

impl Link {
    fn expected_hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let fields = serde_json::json!([
            self.prev_hash,
            self.id,
            self.at,
            self.actor_id,
            self.actor_name,
            self.subject_id,
            self.subject_name,
            self.action,
            self.detail
        ]);
        hex::encode(Sha256::digest(fields.to_string().as_bytes()))
    }
}

/// Where the chain breaks, in words for `skald verify` and for a person's notice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Break {
    #[error("audit entry {0} was edited after it was written")]
    Edited(i64),
    #[error("audit entries before entry {0} were deleted")]
    DeletedBefore(i64),
    #[error("the newest audit entries (after entry {0}) were deleted")]
    DeletedNewest(i64),
    #[error("the audit entry a person's record last saw ({0}) is gone or was changed")]
    Unanchored(i64),
}

const LINKS: &str =
    "SELECT id, at, actor_id, actor_name, subject_id, subject_name, action, detail, prev_hash, hash FROM audit";

/// The newest entry's id and hash, as the instance row states them.
pub async fn head(store: &SystemStore) -> Result<(i64, String), StoreError> {
    Ok(head_in(&mut *store.pool().acquire().await?).await?)
}

/// The head as the instance row states it, read on the caller's connection.
async fn head_in(conn: &mut sqlx::SqliteConnection) -> Result<(i64, String), sqlx::Error> {
    sqlx::query_as("SELECT audit_head_id, audit_head_hash FROM instance").fetch_one(conn).await
}

/// Checks the whole chain — every link, and the instance row's head — in any pool over
/// the shared database (`skald verify` opens its own). The number of entries when whole.
pub async fn check_chain(pool: &sqlx::SqlitePool) -> Result<Result<usize, Break>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let links: Vec<Link> =
        sqlx::query_as(sqlx::AssertSqlSafe(format!("{LINKS} ORDER BY id"))).fetch_all(&mut *tx).await?;
    let head: (i64, String) = head_in(&mut tx).await?;
    Ok(walk(&links, (0, String::new()), &head).map(|()| links.len()))
}

/// The entries after `from` (an id and hash a person's record saw), if the chain from it
/// to the head is intact; the break otherwise.
pub async fn since(store: &SystemStore, from: (i64, &str)) -> Result<Result<Vec<Link>, Break>, StoreError> {
    let mut tx = store.pool().begin().await?;
    let links: Vec<Link> = sqlx::query_as(sqlx::AssertSqlSafe(format!("{LINKS} WHERE id >= ? ORDER BY id")))
        .bind(from.0)
        .fetch_all(&mut *tx)
        .await?;
    let head: (i64, String) = head_in(&mut tx).await?;
    drop(tx);
    let mut links = links.as_slice();
    if from.0 > 0 {
        match links.first() {
            Some(first) if first.id == from.0 && first.hash.as_deref() == Some(from.1) => links = &links[1..],
            _ => return Ok(Err(Break::Unanchored(from.0))),
        }
    }
    Ok(walk(links, (from.0, from.1.to_owned()), &head).map(|()| links.to_vec()))
}

/// Who saved this version of an agent through Skald, by the audit: an agent is compared
/// only once a person uses it, maybe long after it was saved. Trust it only while the
/// whole chain is intact (the caller checks, once per head).
pub async fn agent_saved_by(
    store: &SystemStore,
    agent: &str,
    hash: &str,
) -> Result<Option<(String, String)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT actor_id, actor_name FROM audit
         WHERE action = 'agent.saved' AND json_extract(detail, '$.agent') = ? AND json_extract(detail, '$.hash') = ?
               AND actor_id IS NOT NULL
         ORDER BY id DESC LIMIT 1",
    )
    .bind(agent)
    .bind(hash)
    .fetch_optional(store.pool())
    .await?)
}

/// Walks links in id order from a known (id, hash) to the stated head.
fn walk(links: &[Link], from: (i64, String), head: &(i64, String)) -> Result<(), Break> {
    let (mut last_id, mut last_hash) = from;
    for link in links {
        if link.prev_hash.as_deref() != Some(last_hash.as_str()) {
            return Err(Break::DeletedBefore(link.id));
        }
        if link.hash.as_deref() != Some(link.expected_hash().as_str()) {
            return Err(Break::Edited(link.id));
        }
        (last_id, last_hash) = (link.id, link.hash.clone().unwrap_or_default());
    }
    if (last_id, &last_hash) != (head.0, &head.1) {
        return Err(Break::DeletedNewest(last_id));
    }
    Ok(())
}

/// Chains the entries written before the chain existed, once: only while the chain is
/// empty and no entry has a hash (a database from before, migrated at this start).
pub async fn chain_earlier_entries(store: &SystemStore) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let (head_id, _): (i64, String) = head_in(&mut tx).await?;
    let hashed: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit WHERE hash IS NOT NULL").fetch_one(&mut *tx).await?;
    if head_id != 0 || hashed != 0 {
        return Ok(());
    }
    let links: Vec<Link> =
        sqlx::query_as(sqlx::AssertSqlSafe(format!("{LINKS} ORDER BY id"))).fetch_all(&mut *tx).await?;
    if links.is_empty() {
        return Ok(());
    }
    let mut prev = String::new();
    for mut link in links {
        link.prev_hash = Some(prev);
        let hash = link.expected_hash();
        sqlx::query("UPDATE audit SET prev_hash = ?, hash = ? WHERE id = ?")
            .bind(&link.prev_hash)
            .bind(&hash)
            .bind(link.id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE instance SET audit_head_id = ?, audit_head_hash = ?")
            .bind(link.id)
            .bind(&hash)
            .execute(&mut *tx)
            .await?;
        prev = hash;
    }
    tx.commit().await?;
    Ok(())
}

/// Entries about one person and those that touch everyone, newest first.
pub async fn about(store: &SystemStore, subject: &UserId) -> Result<Vec<Entry>, StoreError> {
    let sql = format!(
        "SELECT id, at, actor_id, actor_name, subject_id, subject_name, action, detail
         FROM audit WHERE subject_id = ? OR (subject_id IS NULL AND ({EVERYONE})) ORDER BY id DESC LIMIT 500"
    );
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(subject).fetch_all(store.pool()).await?)
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
