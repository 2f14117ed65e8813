//! The built-in provider's model files (§9), in the shared database. Importing a model adds
//! its row, the `local` provider (on first use) and the provider's model entry in one
//! transaction with its audit entry, so the catalogue never offers a model Skald has no
//! file for. The files themselves are the caller's: this module never touches the disk.

use serde::Serialize;
use serde_json::json;

use super::audit::{self, Actor};
use super::notices;
use super::providers::{self, Model, ProviderKind};
use super::{StoreError, SystemStore, timestamp};

/// The provider every imported model belongs to; its name makes models `local/<id>`.
pub const PROVIDER_ID: &str = "local";
pub const PROVIDER_NAME: &str = "local";
pub const PROVIDER_KIND: ProviderKind = ProviderKind::Local;

/// One model file as stored.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
pub struct LocalModel {
    pub id: String,
    pub name: String,
    pub file_size: i64,
    pub sha256: String,
    pub architecture: String,
    pub parameters: Option<i64>,
    pub quantization: Option<String>,
    pub context_length: i64,
    /// `chat`, or `embedding`: a model that turns text into vectors for recall by meaning
    /// (§10), never offered as a chat model.
    pub kind: String,
    pub source: String,
    pub imported_by: String,
    pub imported_at: String,
}

const SELECT: &str = "SELECT id, name, file_size, sha256, architecture, parameters, quantization, context_length, \
     kind, source, imported_by, imported_at FROM local_models";

pub const CHAT: &str = "chat";
pub const EMBEDDING: &str = "embedding";

pub async fn list(store: &SystemStore) -> Result<Vec<LocalModel>, StoreError> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!("{SELECT} ORDER BY imported_at, id")))
        .fetch_all(store.pool())
        .await?)
}

pub async fn get(store: &SystemStore, id: &str) -> Result<Option<LocalModel>, StoreError> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!("{SELECT} WHERE id = ?")))
        .bind(id)
        .fetch_optional(store.pool())
        .await?)
}

/// The model already holding a file with these contents, if any.
pub async fn by_sha256(store: &SystemStore, sha256: &str) -> Result<Option<LocalModel>, StoreError> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!("{SELECT} WHERE sha256 = ?")))
        .bind(sha256)
        .fetch_optional(store.pool())
        .await?)
}

/// The embedding model recall uses: the first imported, while one is here.
pub async fn embedder(store: &SystemStore) -> Result<Option<LocalModel>, StoreError> {
    let sql = format!("{SELECT} WHERE kind = '{EMBEDDING}' ORDER BY imported_at, id LIMIT 1");
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql)).fetch_optional(store.pool()).await?)
}

/// Whether `id` is free for a new model.
pub async fn id_free(store: &SystemStore, id: &str) -> Result<bool, StoreError> {
    let taken: Option<i64> =
        sqlx::query_scalar("SELECT 1 FROM local_models WHERE id = ?").bind(id).fetch_optional(store.pool()).await?;
    Ok(taken.is_none())
}

/// Records an imported model; a chat model (`model` given) is offered as `local/<id>`. The
/// first chat model creates the `local` provider, and everyone else hears of it as of any
/// new provider. An embedding model is recorded only: recall finds it here.
pub async fn insert(
    store: &SystemStore,
    actor: &Actor,
    row: &LocalModel,
    model: Option<&Model>,
) -> Result<(), StoreError> {
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    if let Some(model) = model {
        offer(&mut tx, actor, model, &now).await?;
    }
    sqlx::query(
        "INSERT INTO local_models (id, name, file_size, sha256, architecture, parameters, quantization,
                                   context_length, kind, source, imported_by, imported_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&row.id)
    .bind(&row.name)
    .bind(row.file_size)
    .bind(&row.sha256)
    .bind(&row.architecture)
    .bind(row.parameters)
    .bind(&row.quantization)
    .bind(row.context_length)
    .bind(&row.kind)
    .bind(&row.source)
    .bind(&actor.name)
    .bind(&now)
    .execute(&mut *tx)
    .await
    .map_err(|err| match err {
        sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::Exists,
        other => other.into(),
    })?;
    let detail = json!({ "model": row.id, "name": row.name, "sha256": row.sha256, "file_size": row.file_size, "kind": row.kind });
    audit::record(&mut tx, actor, None, "local_model.imported", detail).await?;
    tx.commit().await?;
    Ok(())
}

/// Offers `model` under the `local` provider, creating the provider on first use.
async fn offer(tx: &mut sqlx::SqliteConnection, actor: &Actor, model: &Model, now: &str) -> Result<(), StoreError> {
    let created = sqlx::query(
        "INSERT INTO providers (id, name, kind, base_url, api_key, trusted_lan, created_by, created_at, updated_by,
                                updated_at)
         VALUES (?, ?, ?, '', NULL, 0, ?, ?, ?, ?)
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(PROVIDER_ID)
    .bind(PROVIDER_NAME)
    .bind(PROVIDER_KIND)
    .bind(&actor.name)
    .bind(now)
    .bind(&actor.name)
    .bind(now)
    .execute(&mut *tx)
    .await
    .map_err(|err| match err {
        sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::WrongState(
            "another provider is already named \"local\"; rename it to make room for the built-in model",
        ),
        other => other.into(),
    })?
    .rows_affected()
        == 1;
    if created {
        let detail = json!({ "provider": PROVIDER_ID, "name": PROVIDER_NAME, "kind": PROVIDER_KIND, "base_url": "" });
        audit::record(&mut *tx, actor, None, "provider.added", detail.clone()).await?;
        let body = providers::with_actor(detail, actor);
        notices::tell_everyone_but(&mut *tx, Some(&actor.id), "provider_added", &body).await?;
    }
    sqlx::query(
        "INSERT INTO models (provider_id, model_id, context_window, strength, tools) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (provider_id, model_id) DO UPDATE SET context_window = excluded.context_window,
             strength = excluded.strength, tools = excluded.tools",
    )
    .bind(PROVIDER_ID)
    .bind(&model.model_id)
    .bind(model.context_window)
    .bind(&model.strength)
    .bind(model.tools)
    .execute(&mut *tx)
    .await?;
    sqlx::query("UPDATE providers SET updated_by = ?, updated_at = ? WHERE id = ?")
        .bind(&actor.name)
        .bind(now)
        .bind(PROVIDER_ID)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// Records that an administrator let model `id` start again after it crashed the
/// built-in model's worker too often. `NotFound` when there is no such model.
pub async fn record_retry(store: &SystemStore, actor: &Actor, id: &str) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let name: Option<String> =
        sqlx::query_scalar("SELECT name FROM local_models WHERE id = ?").bind(id).fetch_optional(&mut *tx).await?;
    let Some(name) = name else { return Err(StoreError::NotFound) };
    audit::record(&mut tx, actor, None, "local_model.retried", json!({ "model": id, "name": name })).await?;
    tx.commit().await?;
    Ok(())
}

/// Forgets a model and withdraws it from the catalogue; the caller removes the file after.
pub async fn delete(store: &SystemStore, actor: &Actor, id: &str) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let name: Option<String> = sqlx::query_scalar("DELETE FROM local_models WHERE id = ? RETURNING name")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(name) = name else { return Err(StoreError::NotFound) };
    sqlx::query("DELETE FROM models WHERE provider_id = ? AND model_id = ?")
        .bind(PROVIDER_ID)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    audit::record(&mut tx, actor, None, "local_model.deleted", json!({ "model": id, "name": name })).await?;
    tx.commit().await?;
    Ok(())
}
