//! Which version of each agent definition has run, and who changed it (§3, §8.7); a
//! change leaves a notice for everyone else. Names, hashes and people only: an agent's
//! prompt stays in its files.

use serde::Serialize;
use serde_json::json;

use super::audit::Actor;
use super::{StoreError, SystemStore, notices, timestamp};

/// Where a version came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Shipped with Skald, unedited.
    Bundled,
    /// Saved through Skald by a person.
    App,
    /// Its files were edited outside Skald.
    Disk,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Self::Bundled => "bundled",
            Self::App => "app",
            Self::Disk => "disk",
        }
    }
}

/// The latest version of an agent, as the privacy page shows it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct Version {
    pub agent_id: String,
    pub hash: String,
    pub source: String,
    pub changed_by: Option<String>,
    pub changed_by_name: Option<String>,
    pub seen_at: String,
}

/// Records that `agent_id` now has `hash`, unless that is already its latest version. A
/// change, or a new agent that did not ship with Skald, leaves a notice for every active
/// person but the one who made it. Returns whether this was a new version.
pub async fn record(
    store: &SystemStore,
    agent_id: &str,
    hash: &str,
    source: Source,
    changed_by: Option<&Actor>,
) -> Result<bool, StoreError> {
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let latest: Option<String> =
        sqlx::query_scalar("SELECT hash FROM agent_versions WHERE agent_id = ? ORDER BY id DESC LIMIT 1")
            .bind(agent_id)
            .fetch_optional(&mut *tx)
            .await?;
    if latest.as_deref() == Some(hash) {
        return Ok(false);
    }
    sqlx::query("INSERT INTO agent_versions (agent_id, hash, source, changed_by, seen_at) VALUES (?, ?, ?, ?, ?)")
        .bind(agent_id)
        .bind(hash)
        .bind(source.as_str())
        .bind(changed_by.map(|actor| &actor.id))
        .bind(&now)
        .execute(&mut *tx)
        .await?;
    if let Some(actor) = changed_by {
        let detail = json!({ "agent": agent_id, "hash": hash });
        super::audit::record(&mut tx, actor, None, "agent.saved", detail).await?;
    }
    // A change to an agent, or an agent that appeared and did not ship with Skald: either
    // may now handle people's words.
    if latest.is_some() || source != Source::Bundled {
        let by = changed_by.map(|actor| json!({ "id": actor.id, "name": actor.name }));
        let body = json!({ "agent": agent_id, "hash": hash, "source": source.as_str(), "changed_by": by });
        notices::tell_everyone_but(&mut tx, changed_by.map(|actor| &actor.id), "agent_changed", &body).await?;
    }
    tx.commit().await?;
    Ok(true)
}

/// The latest version of every agent seen, by agent id.
pub async fn latest(store: &SystemStore) -> Result<Vec<Version>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT v.agent_id, v.hash, v.source, v.changed_by, u.name AS changed_by_name, v.seen_at
         FROM agent_versions v LEFT JOIN users u ON u.id = v.changed_by
         WHERE v.id = (SELECT max(id) FROM agent_versions WHERE agent_id = v.agent_id)
         ORDER BY v.agent_id",
    )
    .fetch_all(store.pool())
    .await?)
}
