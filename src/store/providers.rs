//! Model providers and their models (§9), in the shared database. The API key column
//! holds a blob sealed under the instance key; this module never sees it opened. Every
//! change names who made it, in the row (for the privacy page) and in the audit trail.

use crate::ids::ProviderId;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::audit::{self, Actor};
use super::notices;
use super::{StoreError, SystemStore, timestamp};

/// The wire protocol a provider is spoken to in: the `providers.kind` column (also
/// `model_requests.kind`), and the words the API shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum ProviderKind {
    /// Any OpenAI-compatible server.
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
    /// Ollama's native API.
    Ollama,
    /// The built-in model (§9.1).
    Local,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
            Self::Ollama => "ollama",
            Self::Local => "local",
        }
    }

    /// The kind these words name, as the API and the database spell it.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "openai" => Some(Self::Openai),
            "anthropic" => Some(Self::Anthropic),
            "ollama" => Some(Self::Ollama),
            "local" => Some(Self::Local),
            _ => None,
        }
    }
}

impl std::fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A provider as stored, without its key.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
#[ts(rename = "ProviderRow")]
pub struct Provider {
    pub id: ProviderId,
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub trusted_lan: bool,
    /// The model it makes pictures with, if an administrator set one (`image_generate`).
    pub image_model: Option<String>,
    /// The model it writes speech down with, if an administrator set one (§15).
    pub transcription_model: Option<String>,
    /// The model it reads answers aloud with, if an administrator set one.
    pub speech_model: Option<String>,
    /// The voice it reads aloud in (`alloy`, `af_bella`…); the provider's default when none.
    pub speech_voice: Option<String>,
    /// Whether a key is stored; the key itself is never part of this type.
    pub has_key: bool,
    pub created_by: String,
    pub created_at: String,
    pub updated_by: String,
    pub updated_at: String,
}

/// One model a provider offers.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow, ts_rs::TS)]
#[ts(rename = "ProviderModel")]
pub struct Model {
    pub model_id: String,
    pub context_window: i64,
    pub strength: String,
    pub tools: bool,
    /// It reads pictures attached to a message.
    pub images: bool,
}

/// A model with the provider that serves it: one row of the catalogue.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct CatalogueRow {
    pub provider_id: String,
    pub provider_name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub trusted_lan: bool,
    pub created_by: String,
    pub updated_by: String,
    pub model_id: String,
    pub context_window: i64,
    pub strength: String,
    pub tools: bool,
    pub images: bool,
}

/// What an administrator set for a new provider; the key arrives already sealed.
pub struct NewProvider<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub kind: ProviderKind,
    pub base_url: &'a str,
    pub sealed_key: Option<&'a [u8]>,
    pub trusted_lan: bool,
}

/// What an administrator changes; absent fields stay.
#[derive(Default)]
pub struct ProviderChange<'a> {
    pub name: Option<&'a str>,
    pub base_url: Option<&'a str>,
    /// `Some(None)` removes the key.
    pub sealed_key: Option<Option<&'a [u8]>>,
    pub trusted_lan: Option<bool>,
    pub models: Option<&'a [Model]>,
    /// `Some(None)` sets no model for pictures.
    pub image_model: Option<Option<&'a str>>,
    /// `Some(None)` sets no model for speech to text.
    pub transcription_model: Option<Option<&'a str>>,
    /// `Some(None)` sets no model for reading aloud.
    pub speech_model: Option<Option<&'a str>>,
    /// `Some(None)` leaves the voice to the provider.
    pub speech_voice: Option<Option<&'a str>>,
}

const SELECT: &str = "SELECT id, name, kind, base_url, trusted_lan, image_model, transcription_model, speech_model, speech_voice, \
     api_key IS NOT NULL AS has_key, \
     created_by, created_at, updated_by, updated_at FROM providers";

pub async fn list(store: &SystemStore) -> Result<Vec<Provider>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{SELECT} ORDER BY created_at, name"));
    Ok(sqlx::query_as(sql).fetch_all(store.pool()).await?)
}

pub async fn get(store: &SystemStore, id: &str) -> Result<Option<Provider>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{SELECT} WHERE id = ?"));
    Ok(sqlx::query_as(sql).bind(id).fetch_optional(store.pool()).await?)
}

/// Every provider's sealed key, by provider id, read in the caller's transaction.
pub async fn sealed_keys_in(tx: &mut sqlx::SqliteConnection) -> Result<Vec<(String, Option<Vec<u8>>)>, StoreError> {
    Ok(sqlx::query_as("SELECT id, api_key FROM providers").fetch_all(tx).await?)
}

pub async fn models(store: &SystemStore, provider_id: &str) -> Result<Vec<Model>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT model_id, context_window, strength, tools, images FROM models WHERE provider_id = ? ORDER BY model_id",
    )
    .bind(provider_id)
    .fetch_all(store.pool())
    .await?)
}

/// Every model of every provider, in a stable order, read in the caller's transaction.
pub async fn catalogue_in(tx: &mut sqlx::SqliteConnection) -> Result<Vec<CatalogueRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT p.id AS provider_id, p.name AS provider_name, p.kind, p.base_url, p.trusted_lan, p.created_by,
                p.updated_by, m.model_id, m.context_window, m.strength, m.tools, m.images
         FROM models m JOIN providers p ON p.id = m.provider_id
         ORDER BY p.created_at, p.name, m.model_id",
    )
    .fetch_all(tx)
    .await?)
}

/// A provider an administrator set a model for speech on (§15).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct VoiceRow {
    pub id: String,
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub trusted_lan: bool,
    pub transcription_model: Option<String>,
    pub speech_model: Option<String>,
    pub speech_voice: Option<String>,
}

/// Every provider that writes speech down or reads aloud, in a stable order, read in the
/// caller's transaction.
pub async fn voice_in(tx: &mut sqlx::SqliteConnection) -> Result<Vec<VoiceRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, name, kind, base_url, trusted_lan, transcription_model, speech_model, speech_voice
         FROM providers WHERE transcription_model IS NOT NULL OR speech_model IS NOT NULL
         ORDER BY created_at, name",
    )
    .fetch_all(tx)
    .await?)
}

/// Adds a provider with its models, in one transaction with its audit entry.
pub async fn insert(
    store: &SystemStore,
    actor: &Actor,
    new: &NewProvider<'_>,
    models: &[Model],
) -> Result<(), StoreError> {
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query(
        "INSERT INTO providers (id, name, kind, base_url, api_key, trusted_lan, created_by, created_at, updated_by,
                                updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(new.id)
    .bind(new.name)
    .bind(new.kind)
    .bind(new.base_url)
    .bind(new.sealed_key)
    .bind(new.trusted_lan)
    .bind(&actor.name)
    .bind(&now)
    .bind(&actor.name)
    .bind(&now)
    .execute(&mut *tx)
    .await
    .map_err(name_taken)?;
    replace_models(&mut tx, new.id, models).await?;
    let detail = json!({
        "provider": new.id, "name": new.name, "kind": new.kind, "base_url": new.base_url, "trusted_lan": new.trusted_lan,
    });
    audit::record(&mut tx, actor, None, "provider.added", detail.clone()).await?;
    notices::tell_everyone_but(&mut tx, Some(&actor.id), "provider_added", &with_actor(detail, actor)).await?;
    tx.commit().await?;
    Ok(())
}

/// Applies an administrator's change, recording them as the provider's last editor.
pub async fn update(
    store: &SystemStore,
    actor: &Actor,
    id: &str,
    change: &ProviderChange<'_>,
) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let updated = sqlx::query(
        "UPDATE providers SET name = coalesce(?, name), base_url = coalesce(?, base_url),
                api_key = CASE WHEN ? THEN ? ELSE api_key END, trusted_lan = coalesce(?, trusted_lan),
                image_model = CASE WHEN ? THEN ? ELSE image_model END,
                transcription_model = CASE WHEN ? THEN ? ELSE transcription_model END,
                speech_model = CASE WHEN ? THEN ? ELSE speech_model END,
                speech_voice = CASE WHEN ? THEN ? ELSE speech_voice END, updated_by = ?, updated_at = ?
         WHERE id = ?",
    )
    .bind(change.name)
    .bind(change.base_url)
    .bind(change.sealed_key.is_some())
    .bind(change.sealed_key.flatten())
    .bind(change.trusted_lan)
    .bind(change.image_model.is_some())
    .bind(change.image_model.flatten())
    .bind(change.transcription_model.is_some())
    .bind(change.transcription_model.flatten())
    .bind(change.speech_model.is_some())
    .bind(change.speech_model.flatten())
    .bind(change.speech_voice.is_some())
    .bind(change.speech_voice.flatten())
    .bind(&actor.name)
    .bind(timestamp())
    .bind(id)
    .execute(&mut *tx)
    .await
    .map_err(name_taken)?
    .rows_affected();
    if updated == 0 {
        return Err(StoreError::NotFound);
    }
    if let Some(models) = change.models {
        replace_models(&mut tx, id, models).await?;
    }
    let detail = json!({
        "provider": id,
        "name": change.name,
        "base_url": change.base_url,
        "key_changed": change.sealed_key.is_some(),
        "trusted_lan": change.trusted_lan,
        "models_changed": change.models.is_some(),
        "image_model": change.image_model,
        "transcription_model": change.transcription_model,
        "speech_model": change.speech_model,
        "speech_voice": change.speech_voice,
    });
    audit::record(&mut tx, actor, None, "provider.changed", detail.clone()).await?;
    let name: String =
        sqlx::query_scalar("SELECT name FROM providers WHERE id = ?").bind(id).fetch_one(&mut *tx).await?;
    let mut body = with_actor(detail, actor);
    body["provider_name"] = json!(name); // `name` is there only when it changed
    notices::tell_everyone_but(&mut tx, Some(&actor.id), "provider_changed", &body).await?;
    tx.commit().await?;
    Ok(())
}

pub async fn delete(store: &SystemStore, actor: &Actor, id: &str) -> Result<(), StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let name: Option<String> = sqlx::query_scalar("DELETE FROM providers WHERE id = ? RETURNING name")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(name) = name else { return Err(StoreError::NotFound) };
    audit::record(&mut tx, actor, None, "provider.deleted", json!({ "provider": id, "name": name })).await?;
    let body = with_actor(json!({ "provider": id, "provider_name": name }), actor);
    notices::tell_everyone_but(&mut tx, Some(&actor.id), "provider_deleted", &body).await?;
    tx.commit().await?;
    Ok(())
}

/// A notice's body: the change and who made it, by name as they were called then.
pub(super) fn with_actor(mut detail: serde_json::Value, actor: &Actor) -> serde_json::Value {
    detail["changed_by"] = json!({ "id": actor.id, "name": actor.name });
    detail
}

async fn replace_models(
    tx: &mut sqlx::SqliteConnection,
    provider_id: &str,
    models: &[Model],
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM models WHERE provider_id = ?").bind(provider_id).execute(&mut *tx).await?;
    for model in models {
        sqlx::query(
            "INSERT INTO models (provider_id, model_id, context_window, strength, tools, images)
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(provider_id)
        .bind(&model.model_id)
        .bind(model.context_window)
        .bind(&model.strength)
        .bind(model.tools)
        .bind(model.images)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// A unique-name violation said as what it means.
pub(super) fn name_taken(err: sqlx::Error) -> StoreError {
    match err {
        sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::NameTaken,
        other => StoreError::Sqlx(other),
    }
}
