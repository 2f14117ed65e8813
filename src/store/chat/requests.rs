//! The record of each model request a conversation made, with the parts it was composed
//! from, so that it can be composed again (§8.1).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::private::PrivateStore;
use super::super::providers::ProviderKind;
use super::super::snapshots::Touched;
use super::{StoreError, Summary, timestamp};
use crate::ids::{ConversationId, TurnId};

/// One model request, for the record (§8.1).
#[derive(Debug)]
pub struct RequestRecord {
    pub figures: RequestFigures,
    /// What the request was built from; see [`RequestSource`].
    pub source: RequestSource,
}

/// What a model request cost and how it came out: recorded with it, and listed.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
pub struct RequestFigures {
    pub turn_id: TurnId,
    pub provider: String,
    pub model: String,
    pub tokens_in: Option<i64>,
    pub tokens_out: Option<i64>,
    /// Milliseconds to the first token.
    pub ttft_ms: Option<i64>,
    pub latency_ms: i64,
    pub attempts: i64,
    pub outcome: RequestOutcome,
    pub error_code: Option<String>,
}

/// How a model request came out: the `model_requests.outcome` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum RequestOutcome {
    /// The reply arrived whole.
    Ok,
    /// The person stopped the turn, or its end could not be saved.
    Stopped,
    /// The provider failed, or the reply was of no use.
    Error,
}

/// What a model request was for: the `model_requests.purpose` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum RequestPurpose {
    /// A round of a turn (or of a sub-agent's frame).
    Turn,
    /// A summary of the older turns (§8.6).
    Compaction,
    /// A title for the conversation, after its first reply.
    Title,
    /// A tool server's request for a model's answer during a call (MCP sampling), made
    /// once the person allowed it.
    Sampling,
}

/// What a request was composed from: enough to compose it again (§8.1).
#[derive(Debug, Clone)]
pub struct RequestSource {
    pub session_id: ConversationId,
    /// The wire protocol the body was written in.
    pub kind: ProviderKind,
    /// The version of the code that composes requests from these parts.
    pub render_version: i64,
    pub prompt: String,
    pub tools: Value,
    /// The last history row the context held.
    pub history_upto: i64,
    /// The summary that stood in for the rows before it, if any.
    pub summary_id: Option<i64>,
    /// A turn's round, or a summary.
    pub purpose: RequestPurpose,
    /// The sub-agent frame that made the request, if one did.
    pub frame_id: Option<String>,
    /// The model read pictures: the pictures went as themselves.
    pub images: bool,
}

/// Records a model request and the parts it was composed from, in one transaction.
pub async fn record_request(store: &PrivateStore, record: &RequestRecord) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::Nothing);
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    insert_request(&mut tx, record).await?;
    tx.commit().await?;
    Ok(())
}

pub(super) async fn insert_request(
    conn: &mut sqlx::SqliteConnection,
    record: &RequestRecord,
) -> Result<(), StoreError> {
    let (figures, source) = (&record.figures, &record.source);
    let prompt_version = content_version(source.prompt.as_bytes());
    let tools = source.tools.to_string();
    let toolset_version = content_version(tools.as_bytes());
    sqlx::query("INSERT INTO request_prompts (version, prompt) VALUES (?, ?) ON CONFLICT DO NOTHING")
        .bind(&prompt_version)
        .bind(&source.prompt)
        .execute(&mut *conn)
        .await?;
    sqlx::query("INSERT INTO request_toolsets (version, tools) VALUES (?, ?) ON CONFLICT DO NOTHING")
        .bind(&toolset_version)
        .bind(&tools)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO model_requests (turn_id, provider, model, tokens_in, tokens_out, ttft_ms, latency_ms, attempts,
                                     outcome, error_code, created_at, session_id, kind, render_version,
                                     prompt_version, toolset_version, history_upto, summary_id, purpose, frame_id,
                                     images)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&figures.turn_id)
    .bind(&figures.provider)
    .bind(&figures.model)
    .bind(figures.tokens_in)
    .bind(figures.tokens_out)
    .bind(figures.ttft_ms)
    .bind(figures.latency_ms)
    .bind(figures.attempts)
    .bind(figures.outcome)
    .bind(&figures.error_code)
    .bind(timestamp())
    .bind(&source.session_id)
    .bind(source.kind)
    .bind(source.render_version)
    .bind(&prompt_version)
    .bind(&toolset_version)
    .bind(source.history_upto)
    .bind(source.summary_id)
    .bind(source.purpose)
    .bind(&source.frame_id)
    .bind(source.images)
    .execute(conn)
    .await?;
    Ok(())
}

/// SHA-256 of stored content, naming its version.
fn content_version(content: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(content))
}

/// A stored request's parts, read back to compose it again.
#[derive(Debug)]
pub struct StoredRequest {
    /// The turn it was made in: its path is the history the request was composed from.
    pub turn_id: TurnId,
    pub model: String,
    pub source: RequestSource,
    pub summary: Option<Summary>,
}

/// The parts of request `id` of a conversation; none for another conversation's request
/// or one recorded before its parts were kept.
pub async fn stored_request(
    store: &PrivateStore,
    session_id: &ConversationId,
    id: i64,
) -> Result<Option<StoredRequest>, StoreError> {
    type Row = (TurnId, String, ProviderKind, i64, String, String, i64, Option<i64>, bool);
    let row: Option<Row> = sqlx::query_as(
        "SELECT r.turn_id, r.model, r.kind, r.render_version, p.prompt, t.tools, r.history_upto, r.summary_id,
                r.images
         FROM model_requests r
         JOIN request_prompts p ON p.version = r.prompt_version
         JOIN request_toolsets t ON t.version = r.toolset_version
         WHERE r.id = ? AND r.session_id = ? AND r.purpose = 'turn' AND r.frame_id IS NULL",
    )
    .bind(id)
    .bind(session_id)
    .fetch_optional(store.pool())
    .await?;
    let Some((turn_id, model, kind, render_version, prompt, tools, history_upto, summary_id, images)) = row else {
        return Ok(None);
    };
    let summary = match summary_id {
        Some(summary_id) => {
            sqlx::query_as("SELECT id, upto, text FROM summaries WHERE id = ?")
                .bind(summary_id)
                .fetch_optional(store.pool())
                .await?
        }
        None => None,
    };
    Ok(Some(StoredRequest {
        turn_id,
        model,
        source: RequestSource {
            session_id: session_id.clone(),
            kind,
            render_version,
            prompt,
            tools: serde_json::from_str(&tools).unwrap_or(Value::Null),
            history_upto,
            summary_id,
            purpose: RequestPurpose::Turn,
            frame_id: None,
            images,
        },
        summary,
    }))
}

/// One model request of a conversation, for the record (`GET /api/sessions/{id}/requests`).
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
#[ts(rename = "ModelRequest")]
pub struct RequestRow {
    pub id: i64,
    #[serde(flatten)]
    #[sqlx(flatten)]
    pub figures: RequestFigures,
    pub created_at: String,
    pub purpose: RequestPurpose,
    /// The summary that stood in for the older rows, if any.
    pub summary_id: Option<i64>,
    /// The last history row the context held; none for a request recorded before its
    /// parts were kept.
    pub history_upto: Option<i64>,
}

/// The model requests of a session's turns, oldest first.
pub async fn requests(store: &PrivateStore, session_id: &ConversationId) -> Result<Vec<RequestRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT r.id, r.turn_id, r.provider, r.model, r.tokens_in, r.tokens_out, r.ttft_ms, r.latency_ms,
                r.attempts, r.outcome, r.error_code, r.created_at, r.purpose, r.summary_id, r.history_upto
         FROM model_requests r JOIN turns t ON t.id = r.turn_id WHERE t.session_id = ? ORDER BY r.id",
    )
    .bind(session_id)
    .fetch_all(store.pool())
    .await?)
}
