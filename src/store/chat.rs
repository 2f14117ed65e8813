//! Conversations in a person's encrypted file (§8.1): sessions, turns, the append-only
//! history and the record of each model request. Callers pass the person's open
//! [`PrivateStore`]; nothing here reaches the shared database.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::private::PrivateStore;
use super::snapshots::{Snapshot, Touched};
use super::{StoreError, timestamp};

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct ChatSession {
    pub id: String,
    pub agent: String,
    pub model: Option<String>,
    pub title: String,
    pub created_at: String,
    pub updated_at: String,
    /// The state of the session's latest turn, if it has one.
    pub turn_state: Option<TurnState>,
    /// Content from outside Skald (a fetched page) has entered this conversation.
    pub outside_content: bool,
}

/// Who a row of history is from: the `messages.role` column, and the words the API shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, sqlx::Type)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum MessageRole {
    /// The person.
    #[default]
    User,
    /// The model: its words, its calls, and the turn's closing row.
    Assistant,
    /// A tool call's result.
    Tool,
}

/// One row of history, as the API returns it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct Message {
    pub id: i64,
    pub turn_id: String,
    pub role: MessageRole,
    pub text: String,
    pub status: String,
    #[sqlx(json(nullable))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    pub created_at: String,
    /// The sub-agent frame the row belongs to; none for the conversation itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<String>,
}

/// A row about to be appended.
#[derive(Debug, Default)]
pub struct NewMessage<'a> {
    pub session_id: &'a str,
    pub turn_id: &'a str,
    pub role: MessageRole,
    pub text: &'a str,
    pub status: &'a str,
    pub tool_calls: Option<Value>,
    pub tool_call_id: Option<&'a str>,
    pub tool_name: Option<&'a str>,
    pub model: Option<&'a str>,
    pub error_code: Option<&'a str>,
    pub error_message: Option<&'a str>,
    pub frame_id: Option<&'a str>,
}

/// Where a turn is: the `turns.state` column, and the words the API shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, sqlx::Type)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum TurnState {
    Running,
    /// Waiting on cards (§8.5).
    Parked,
    Done,
    Stopped,
    Error,
}

impl TurnState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Parked => "parked",
            Self::Done => "done",
            Self::Stopped => "stopped",
            Self::Error => "error",
        }
    }
}

/// How a turn ended, for the turn row.
#[derive(Debug)]
pub struct TurnEnd<'a> {
    pub state: TurnState,
    pub error_code: Option<&'a str>,
    pub error_message: Option<&'a str>,
}

/// One model request, for the record (§8.1).
#[derive(Debug)]
pub struct RequestRecord {
    pub turn_id: String,
    pub provider: String,
    pub model: String,
    pub tokens_in: Option<i64>,
    pub tokens_out: Option<i64>,
    pub ttft_ms: Option<i64>,
    pub latency_ms: i64,
    pub attempts: i64,
    pub outcome: &'static str,
    pub error_code: Option<&'static str>,
    /// What the request was built from; see [`RequestSource`].
    pub source: RequestSource,
}

/// What a request was composed from: enough to compose it again (§8.1).
#[derive(Debug, Clone)]
pub struct RequestSource {
    pub session_id: String,
    /// The wire protocol the body was written in.
    pub kind: String,
    /// The version of the code that composes requests from these parts.
    pub render_version: i64,
    pub prompt: String,
    pub tools: Value,
    /// The last history row the context held.
    pub history_upto: i64,
    /// The summary that stood in for the rows before it, if any.
    pub summary_id: Option<i64>,
    /// `turn`, or `compaction` for a request that wrote a summary.
    pub purpose: &'static str,
    /// The sub-agent frame that made the request, if one did.
    pub frame_id: Option<String>,
}

/// A summary of a conversation's rows up to `upto` (§8.6).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Summary {
    pub id: i64,
    pub upto: i64,
    pub text: String,
}

/// A conversation with its latest summary, in one query: a turn's start reads both.
pub async fn session_with_summary(
    store: &PrivateStore,
    id: &str,
) -> Result<Option<(ChatSession, Option<Summary>)>, StoreError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        session: ChatSession,
        summary_id: Option<i64>,
        summary_upto: Option<i64>,
        summary_text: Option<String>,
    }
    let sql = sqlx::AssertSqlSafe(format!(
        "SELECT c.*, m.id AS summary_id, m.upto AS summary_upto, m.text AS summary_text
         FROM ({SESSION_SELECT} WHERE s.id = ?1) c
         LEFT JOIN (SELECT id, upto, text FROM summaries WHERE session_id = ?1 ORDER BY id DESC LIMIT 1) m"
    ));
    let row: Option<Row> = sqlx::query_as(sql).bind(id).fetch_optional(store.pool()).await?;
    Ok(row.map(|row| {
        let summary = match (row.summary_id, row.summary_upto, row.summary_text) {
            (Some(id), Some(upto), Some(text)) => Some(Summary { id, upto, text }),
            _ => None,
        };
        (row.session, summary)
    }))
}

/// Stores a summary of the rows up to `upto`.
pub async fn add_summary(store: &PrivateStore, session_id: &str, upto: i64, text: &str) -> Result<Summary, StoreError> {
    let _writing = store.writing(Touched::conversation(session_id));
    let id = sqlx::query("INSERT INTO summaries (session_id, upto, text, created_at) VALUES (?, ?, ?, ?)")
        .bind(session_id)
        .bind(upto)
        .bind(text)
        .bind(timestamp())
        .execute(store.pool())
        .await?
        .last_insert_rowid();
    Ok(Summary { id, upto, text: text.to_owned() })
}

/// How long a title taken from the first message may be.
const TITLE_CHARS: usize = 60;

const SESSION_SELECT: &str = "SELECT s.id, s.agent, s.model, s.title, s.created_at, s.updated_at, s.outside_content,
        (SELECT t.state FROM turns t WHERE t.session_id = s.id ORDER BY t.started_at DESC, t.rowid DESC LIMIT 1)
          AS turn_state
     FROM chat_sessions s";

pub async fn create_session(
    store: &PrivateStore,
    id: &str,
    agent: &str,
    model: Option<&str>,
) -> Result<ChatSession, StoreError> {
    let writing = store.writing(Touched::conversation(id));
    let now = timestamp();
    sqlx::query(
        "INSERT INTO chat_sessions (id, agent, model, title, created_at, updated_at) VALUES (?, ?, ?, '', ?, ?)",
    )
    .bind(id)
    .bind(agent)
    .bind(model)
    .bind(&now)
    .bind(&now)
    .execute(store.pool())
    .await?;
    drop(writing);
    let session = ChatSession {
        id: id.to_owned(),
        agent: agent.to_owned(),
        model: model.map(str::to_owned),
        title: String::new(),
        created_at: now.clone(),
        updated_at: now,
        turn_state: None,
        outside_content: false,
    };
    // What its first turn starts from is known without reading it back.
    let snapshot = Snapshot { conversation: session.clone(), summary: None, history: Vec::new() };
    store.snapshots().put(id, store.snapshots().stamp(), Arc::new(snapshot));
    Ok(session)
}

/// What a conversation's next turn starts from: the conversation, its latest summary and
/// its whole history, from memory when nothing was written to it since it was last read
/// (see `store::snapshots`); none when there is no such conversation.
pub async fn turn_start(store: &PrivateStore, id: &str) -> Result<Option<Arc<Snapshot>>, StoreError> {
    if let Some(kept) = store.snapshots().get(id) {
        return Ok(Some(kept));
    }
    let stamp = store.snapshots().stamp();
    // Both at once: each stands between a person's message and the first token.
    let (found, history) = tokio::try_join!(session_with_summary(store, id), history(store, id))?;
    let Some((conversation, summary)) = found else { return Ok(None) };
    let snapshot = Arc::new(Snapshot { conversation, summary, history });
    store.snapshots().put(id, stamp, Arc::clone(&snapshot));
    Ok(Some(snapshot))
}

pub async fn session(store: &PrivateStore, id: &str) -> Result<Option<ChatSession>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{SESSION_SELECT} WHERE s.id = ?"));
    Ok(sqlx::query_as(sql).bind(id).fetch_optional(store.pool()).await?)
}

/// Sessions, most recently active first.
pub async fn sessions(store: &PrivateStore) -> Result<Vec<ChatSession>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{SESSION_SELECT} ORDER BY s.updated_at DESC, s.id"));
    Ok(sqlx::query_as(sql).fetch_all(store.pool()).await?)
}

pub async fn rename_session(store: &PrivateStore, id: &str, title: &str) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::conversation(id));
    let updated = sqlx::query("UPDATE chat_sessions SET title = ? WHERE id = ?")
        .bind(title)
        .bind(id)
        .execute(store.pool())
        .await?
        .rows_affected();
    if updated == 0 { Err(StoreError::NotFound) } else { Ok(()) }
}

/// Deletes a session with its whole history (the file's secure_delete zeroes the pages).
pub async fn delete_session(store: &PrivateStore, id: &str) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::conversation(id));
    let deleted =
        sqlx::query("DELETE FROM chat_sessions WHERE id = ?").bind(id).execute(store.pool()).await?.rows_affected();
    if deleted == 0 { Err(StoreError::NotFound) } else { Ok(()) }
}

/// Starts a turn with the person's message, in one transaction: once this returns, what
/// they sent survives a crash (§5.1). A session's first message becomes its title.
pub async fn begin_turn(store: &PrivateStore, session_id: &str, turn_id: &str, text: &str) -> Result<i64, StoreError> {
    let _writing = store.writing(Touched::conversation(session_id));
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    insert_running_turn(&mut tx, session_id, turn_id, &now).await?;
    let id = insert_message(
        &mut tx,
        &NewMessage { session_id, turn_id, role: MessageRole::User, text, status: "sent", ..NewMessage::default() },
        &now,
    )
    .await?;
    sqlx::query(
        "UPDATE chat_sessions SET updated_at = ?, title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?",
    )
    .bind(&now)
    .bind(title_from(text))
    .bind(session_id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(id)
}

async fn insert_running_turn(
    tx: &mut sqlx::SqliteConnection,
    session_id: &str,
    turn_id: &str,
    now: &str,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO turns (id, session_id, state, started_at) VALUES (?, ?, 'running', ?)")
        .bind(turn_id)
        .bind(session_id)
        .bind(now)
        .execute(tx)
        .await?;
    Ok(())
}

/// Starts a retry of a conversation's failed turn: a new turn with no new message. Returns
/// the row of the person's last message, which the retry answers.
pub async fn begin_retry(store: &PrivateStore, session_id: &str, turn_id: &str) -> Result<i64, StoreError> {
    let _writing = store.writing(Touched::conversation(session_id));
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    insert_running_turn(&mut tx, session_id, turn_id, &now).await?;
    let asked: Option<i64> =
        sqlx::query_scalar("SELECT max(id) FROM messages WHERE session_id = ? AND role = 'user' AND frame_id IS NULL")
            .bind(session_id)
            .fetch_one(&mut *tx)
            .await?;
    sqlx::query("UPDATE chat_sessions SET updated_at = ? WHERE id = ?")
        .bind(&now)
        .bind(session_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(asked.unwrap_or(0))
}

/// Pins a conversation to a model, or unpins it (none).
pub async fn set_session_model(store: &PrivateStore, id: &str, model: Option<&str>) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::conversation(id));
    let updated = sqlx::query("UPDATE chat_sessions SET model = ? WHERE id = ?")
        .bind(model)
        .bind(id)
        .execute(store.pool())
        .await?
        .rows_affected();
    if updated == 0 { Err(StoreError::NotFound) } else { Ok(()) }
}

/// Appends rows to the history in one transaction; returns their ids.
pub async fn append(store: &PrivateStore, messages: &[NewMessage<'_>]) -> Result<Vec<i64>, StoreError> {
    let _writing = store.writing(Touched::conversations(messages.iter().map(|m| m.session_id)));
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let mut ids = Vec::with_capacity(messages.len());
    for message in messages {
        ids.push(insert_message(&mut tx, message, &now).await?);
    }
    tx.commit().await?;
    Ok(ids)
}

/// Ends a turn in one transaction: every call of the turn still without a result gets
/// one (`orphan_result`, as `cancelled` for a stopped turn, else `error`), then the
/// closing assistant row, then the turn's state. However a turn ends, each of its calls
/// has exactly one result (§8.1). The turn's last model request, if given, is recorded in
/// the same transaction: one commit, one flush, at the end of every reply.
///
/// Only a turn in state `from` is ended: whoever finds it in another state lost a race
/// (a parked turn that a decision resumed meanwhile) and writes nothing; false then.
pub async fn end_turn(
    store: &PrivateStore,
    last: &NewMessage<'_>,
    end: &TurnEnd<'_>,
    orphan_result: &str,
    request: Option<&RequestRecord>,
    from: TurnState,
) -> Result<bool, StoreError> {
    let _writing = store.writing(Touched::conversation(last.session_id));
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let moved = sqlx::query(
        "UPDATE turns SET state = ?, error_code = ?, error_message = ?, ended_at = ? WHERE id = ? AND state = ?",
    )
    .bind(end.state)
    .bind(end.error_code)
    .bind(end.error_message)
    .bind(&now)
    .bind(last.turn_id)
    .bind(from)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if moved == 0 {
        return Ok(false);
    }
    if let Some(record) = request {
        insert_request(&mut tx, record).await?;
    }
    let status = if end.state == TurnState::Stopped { "cancelled" } else { "error" };
    for (call_id, name, frame_id) in unanswered_calls(&mut tx, last.turn_id).await? {
        let result = NewMessage {
            session_id: last.session_id,
            turn_id: last.turn_id,
            role: MessageRole::Tool,
            text: orphan_result,
            status,
            tool_call_id: Some(&call_id),
            tool_name: Some(&name),
            frame_id: frame_id.as_deref(),
            ..NewMessage::default()
        };
        insert_message(&mut tx, &result, &now).await?;
    }
    // Frames the turn ends around end with it: stopped with a stopped turn, else failed.
    let frame_state = if end.state == TurnState::Stopped { TurnState::Stopped } else { TurnState::Error };
    sqlx::query("UPDATE frames SET state = ?, ended_at = ? WHERE turn_id = ? AND state IN ('running', 'parked')")
        .bind(frame_state)
        .bind(&now)
        .bind(last.turn_id)
        .execute(&mut *tx)
        .await?;
    insert_message(&mut tx, last, &now).await?;
    sqlx::query("UPDATE chat_sessions SET updated_at = ? WHERE id = ?")
        .bind(&now)
        .bind(last.session_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(true)
}

/// Ends a turn that has nothing more to say (interrupted, withdrawn, unable to go on):
/// an empty closing row with the state and the error, if any. See [`end_turn`].
pub async fn close_turn(
    store: &PrivateStore,
    session_id: &str,
    turn_id: &str,
    end: &TurnEnd<'_>,
    orphan_result: &str,
    from: TurnState,
) -> Result<bool, StoreError> {
    let last = NewMessage {
        session_id,
        turn_id,
        role: MessageRole::Assistant,
        text: "",
        status: end.state.as_str(),
        error_code: end.error_code,
        error_message: end.error_message,
        ..NewMessage::default()
    };
    end_turn(store, &last, end, orphan_result, None, from).await
}

/// Marks a conversation as holding outside content (§8.4's injection hygiene). Never
/// cleared: what came in stays in the history.
pub async fn mark_outside_content(store: &PrivateStore, session_id: &str) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::conversation(session_id));
    sqlx::query("UPDATE chat_sessions SET outside_content = 1 WHERE id = ?")
        .bind(session_id)
        .execute(store.pool())
        .await?;
    Ok(())
}

/// A session's history, oldest first.
pub async fn history(store: &PrivateStore, session_id: &str) -> Result<Vec<Message>, StoreError> {
    history_between(store, session_id, 0, i64::MAX).await
}

/// Turns recorded as running, with their session: after a restart these were cut off.
pub async fn running_turns(store: &PrivateStore) -> Result<Vec<(String, String)>, StoreError> {
    Ok(sqlx::query_as("SELECT id, session_id FROM turns WHERE state = 'running'").fetch_all(store.pool()).await?)
}

/// Tool calls of a turn that have no recorded result: `(call id, tool name, frame)`, in
/// order, inner frames included.
async fn unanswered_calls(
    tx: &mut sqlx::SqliteConnection,
    turn_id: &str,
) -> Result<Vec<(String, String, Option<String>)>, StoreError> {
    let asked: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT tool_calls, frame_id FROM messages
         WHERE turn_id = ? AND role = 'assistant' AND tool_calls IS NOT NULL ORDER BY id",
    )
    .bind(turn_id)
    .fetch_all(&mut *tx)
    .await?;
    let answered: Vec<(String,)> =
        sqlx::query_as("SELECT tool_call_id FROM messages WHERE turn_id = ? AND role = 'tool'")
            .bind(turn_id)
            .fetch_all(&mut *tx)
            .await?;
    let mut open = Vec::new();
    for (calls, frame_id) in asked {
        let calls: Vec<Value> = serde_json::from_str(&calls).unwrap_or_default();
        for call in calls {
            let id = call["id"].as_str().unwrap_or_default();
            if !answered.iter().any(|(a,)| a == id) {
                open.push((id.to_owned(), call["name"].as_str().unwrap_or_default().to_owned(), frame_id.clone()));
            }
        }
    }
    Ok(open)
}

/// Records a model request and the parts it was composed from, in one transaction.
pub async fn record_request(store: &PrivateStore, record: &RequestRecord) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::Nothing);
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    insert_request(&mut tx, record).await?;
    tx.commit().await?;
    Ok(())
}

async fn insert_request(conn: &mut sqlx::SqliteConnection, record: &RequestRecord) -> Result<(), StoreError> {
    let source = &record.source;
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
                                     prompt_version, toolset_version, history_upto, summary_id, purpose, frame_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&record.turn_id)
    .bind(&record.provider)
    .bind(&record.model)
    .bind(record.tokens_in)
    .bind(record.tokens_out)
    .bind(record.ttft_ms)
    .bind(record.latency_ms)
    .bind(record.attempts)
    .bind(record.outcome)
    .bind(record.error_code)
    .bind(timestamp())
    .bind(&source.session_id)
    .bind(&source.kind)
    .bind(source.render_version)
    .bind(&prompt_version)
    .bind(&toolset_version)
    .bind(source.history_upto)
    .bind(source.summary_id)
    .bind(source.purpose)
    .bind(&source.frame_id)
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
    pub model: String,
    pub source: RequestSource,
    pub summary: Option<Summary>,
}

/// The parts of request `id` of a conversation; none for another conversation's request
/// or one recorded before its parts were kept.
pub async fn stored_request(
    store: &PrivateStore,
    session_id: &str,
    id: i64,
) -> Result<Option<StoredRequest>, StoreError> {
    type Row = (String, String, i64, String, String, i64, Option<i64>, String);
    let row: Option<Row> = sqlx::query_as(
        "SELECT r.model, r.kind, r.render_version, p.prompt, t.tools, r.history_upto, r.summary_id, r.purpose
         FROM model_requests r
         JOIN request_prompts p ON p.version = r.prompt_version
         JOIN request_toolsets t ON t.version = r.toolset_version
         WHERE r.id = ? AND r.session_id = ? AND r.purpose = 'turn' AND r.frame_id IS NULL",
    )
    .bind(id)
    .bind(session_id)
    .fetch_optional(store.pool())
    .await?;
    let Some((model, kind, render_version, prompt, tools, history_upto, summary_id, _)) = row else { return Ok(None) };
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
        model,
        source: RequestSource {
            session_id: session_id.to_owned(),
            kind,
            render_version,
            prompt,
            tools: serde_json::from_str(&tools).unwrap_or(Value::Null),
            history_upto,
            summary_id,
            purpose: "turn",
            frame_id: None,
        },
        summary,
    }))
}

/// A conversation's rows after `after` up to and including `upto`, oldest first.
pub async fn history_between(
    store: &PrivateStore,
    session_id: &str,
    after: i64,
    upto: i64,
) -> Result<Vec<Message>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, turn_id, role, text, status, tool_calls, tool_call_id, tool_name, model, error_code,
                error_message, created_at, frame_id
         FROM messages WHERE session_id = ? AND id > ? AND id <= ? ORDER BY id",
    )
    .bind(session_id)
    .bind(after)
    .bind(upto)
    .fetch_all(store.pool())
    .await?)
}

/// The model requests of a session's turns, oldest first.
pub async fn requests(store: &PrivateStore, session_id: &str) -> Result<Vec<Value>, StoreError> {
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT json_object('id', r.id, 'turn_id', r.turn_id, 'provider', r.provider, 'model', r.model,
                'tokens_in', r.tokens_in, 'tokens_out', r.tokens_out, 'ttft_ms', r.ttft_ms,
                'latency_ms', r.latency_ms, 'attempts', r.attempts, 'outcome', r.outcome,
                'error_code', r.error_code, 'created_at', r.created_at, 'purpose', r.purpose,
                'summary_id', r.summary_id, 'history_upto', r.history_upto)
         FROM model_requests r JOIN turns t ON t.id = r.turn_id WHERE t.session_id = ? ORDER BY r.id",
    )
    .bind(session_id)
    .fetch_all(store.pool())
    .await?;
    Ok(rows.into_iter().filter_map(|(json,)| serde_json::from_str(&json).ok()).collect())
}

async fn insert_message(tx: &mut sqlx::SqliteConnection, m: &NewMessage<'_>, now: &str) -> Result<i64, StoreError> {
    let id = sqlx::query(
        "INSERT INTO messages (session_id, turn_id, role, text, status, tool_calls, tool_call_id, tool_name, model,
                               error_code, error_message, created_at, frame_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(m.session_id)
    .bind(m.turn_id)
    .bind(m.role)
    .bind(m.text)
    .bind(m.status)
    .bind(m.tool_calls.as_ref().map(Value::to_string))
    .bind(m.tool_call_id)
    .bind(m.tool_name)
    .bind(m.model)
    .bind(m.error_code)
    .bind(m.error_message)
    .bind(now)
    .bind(m.frame_id)
    .execute(tx)
    .await?
    .last_insert_rowid();
    Ok(id)
}

/// The first line of a message, cut at a word boundary near [`TITLE_CHARS`].
fn title_from(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if line.chars().count() <= TITLE_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(TITLE_CHARS).collect();
    let at_word = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{}…", at_word.trim_end())
}

/// A sub-agent frame as stored (§8.3).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Frame {
    pub id: String,
    pub call_id: String,
    pub outer_id: Option<String>,
    pub agent: String,
    pub depth: i64,
    pub state: String,
}

/// A frame about to be opened.
#[derive(Debug)]
pub struct NewFrame<'a> {
    pub id: &'a str,
    pub session_id: &'a str,
    pub turn_id: &'a str,
    pub call_id: &'a str,
    pub outer_id: Option<&'a str>,
    pub agent: &'a str,
    pub depth: i64,
}

/// Opens a frame with the task it was given as its first row, in one transaction.
pub async fn open_frame(store: &PrivateStore, frame: &NewFrame<'_>, task: &str) -> Result<i64, StoreError> {
    let _writing = store.writing(Touched::conversation(frame.session_id));
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query(
        "INSERT INTO frames (id, turn_id, session_id, call_id, outer_id, agent, depth, state, started_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?)",
    )
    .bind(frame.id)
    .bind(frame.turn_id)
    .bind(frame.session_id)
    .bind(frame.call_id)
    .bind(frame.outer_id)
    .bind(frame.agent)
    .bind(frame.depth)
    .bind(&now)
    .execute(&mut *tx)
    .await?;
    let task_row = NewMessage {
        session_id: frame.session_id,
        turn_id: frame.turn_id,
        role: MessageRole::User,
        text: task,
        status: "sent",
        frame_id: Some(frame.id),
        ..NewMessage::default()
    };
    let id = insert_message(&mut tx, &task_row, &now).await?;
    tx.commit().await?;
    Ok(id)
}

/// Ends a frame with its closing row and its state, in one transaction.
pub async fn end_frame(store: &PrivateStore, last: &NewMessage<'_>, state: TurnState) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::conversation(last.session_id));
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    insert_message(&mut tx, last, &now).await?;
    sqlx::query("UPDATE frames SET state = ?, ended_at = ? WHERE id = ?")
        .bind(state)
        .bind(&now)
        .bind(last.frame_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Moves a frame to `state` (`parked` while its turn waits, `running` when it goes on).
pub async fn set_frame_state(store: &PrivateStore, frame_id: &str, state: &str) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::Nothing);
    sqlx::query("UPDATE frames SET state = ? WHERE id = ?").bind(state).bind(frame_id).execute(store.pool()).await?;
    Ok(())
}

/// The frame a `call_agent` call opened, if it opened one.
pub async fn frame_for_call(store: &PrivateStore, call_id: &str) -> Result<Option<Frame>, StoreError> {
    Ok(sqlx::query_as("SELECT id, call_id, outer_id, agent, depth, state FROM frames WHERE call_id = ?")
        .bind(call_id)
        .fetch_optional(store.pool())
        .await?)
}

/// A frame's rows, oldest first.
pub async fn frame_rows(store: &PrivateStore, frame_id: &str) -> Result<Vec<Message>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT id, turn_id, role, text, status, tool_calls, tool_call_id, tool_name, model, error_code,
                error_message, created_at, frame_id
         FROM messages WHERE frame_id = ? ORDER BY id",
    )
    .bind(frame_id)
    .fetch_all(store.pool())
    .await?)
}

/// A conversation's scratchpad; empty when nothing was written.
pub async fn scratchpad(store: &PrivateStore, session_id: &str) -> Result<String, StoreError> {
    Ok(sqlx::query_scalar("SELECT text FROM scratchpads WHERE session_id = ?")
        .bind(session_id)
        .fetch_optional(store.pool())
        .await?
        .unwrap_or_default())
}

/// Replaces a conversation's scratchpad.
pub async fn put_scratchpad(store: &PrivateStore, session_id: &str, text: &str) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::Nothing);
    sqlx::query(
        "INSERT INTO scratchpads (session_id, text, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (session_id) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
    )
    .bind(session_id)
    .bind(text)
    .bind(timestamp())
    .execute(store.pool())
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_the_first_non_empty_line_cut_at_a_word() {
        assert_eq!(title_from("\n  Plan the trip \nmore"), "Plan the trip");
        let long = "word ".repeat(30);
        let title = title_from(&long);
        assert!(title.ends_with('…') && title.chars().count() <= TITLE_CHARS + 1, "{title}");
        assert!(!title.contains("wor…"), "cut inside a word: {title}");
    }

    mod snapshots_in_a_private_file {
        use super::super::*;

        fn last<'a>(session_id: &'a str, turn_id: &'a str, text: &'a str) -> NewMessage<'a> {
            NewMessage {
                session_id,
                turn_id,
                role: MessageRole::Assistant,
                text,
                status: "done",
                ..NewMessage::default()
            }
        }

        async fn whole_turn(store: &PrivateStore, session: &str, turn: &str, words: &str) {
            begin_turn(store, session, turn, words).await.unwrap();
            let end = TurnEnd { state: TurnState::Done, error_code: None, error_message: None };
            assert!(end_turn(store, &last(session, turn, "ok"), &end, "", None, TurnState::Running).await.unwrap());
        }

        #[tokio::test]
        async fn a_turn_starts_from_memory_until_its_conversation_is_written() {
            let (_dir, store) = PrivateStore::scratch().await;
            create_session(&store, "chat_a", "main", None).await.unwrap();
            create_session(&store, "chat_b", "main", None).await.unwrap();
            // Both were kept when they were made; a turn in one leaves the other's good.
            whole_turn(&store, "chat_b", "turn_b1", "elsewhere").await;
            crate::store::notes::create(&store, "n", "b", false).await.unwrap();
            let served = store.snapshots().served();
            let a = turn_start(&store, "chat_a").await.unwrap().unwrap();
            assert_eq!(store.snapshots().served(), served + 1, "served from memory");
            assert!(a.history.is_empty());

            // A write to the conversation itself is read back.
            whole_turn(&store, "chat_a", "turn_a1", "hello there").await;
            let a = turn_start(&store, "chat_a").await.unwrap().unwrap();
            assert_eq!(store.snapshots().served(), served + 1, "read from the file");
            let texts: Vec<&str> = a.history.iter().map(|m| m.text.as_str()).collect();
            assert_eq!(texts, ["hello there", "ok"]);
            assert_eq!(
                (a.conversation.title.as_str(), a.conversation.turn_state),
                ("hello there", Some(TurnState::Done))
            );
            assert_eq!(turn_start(&store, "chat_a").await.unwrap().unwrap().history.len(), 2);
            assert_eq!(store.snapshots().served(), served + 2, "then kept");

            // Each kind of write to it is seen at once.
            rename_session(&store, "chat_a", "Renamed").await.unwrap();
            assert_eq!(turn_start(&store, "chat_a").await.unwrap().unwrap().conversation.title, "Renamed");
            add_summary(&store, "chat_a", 1, "they said hello").await.unwrap();
            let summary = turn_start(&store, "chat_a").await.unwrap().unwrap().summary.clone();
            assert_eq!(summary.unwrap().text, "they said hello");
            set_session_model(&store, "chat_a", Some("local/x")).await.unwrap();
            assert_eq!(
                turn_start(&store, "chat_a").await.unwrap().unwrap().conversation.model.as_deref(),
                Some("local/x")
            );
            mark_outside_content(&store, "chat_a").await.unwrap();
            assert!(turn_start(&store, "chat_a").await.unwrap().unwrap().conversation.outside_content);

            // A write no store function accounted for: nothing kept is trusted after it.
            sqlx::query("UPDATE chat_sessions SET title = 'behind its back' WHERE id = 'chat_a'")
                .execute(store.pool())
                .await
                .unwrap();
            assert_eq!(turn_start(&store, "chat_a").await.unwrap().unwrap().conversation.title, "behind its back");
            delete_session(&store, "chat_a").await.unwrap();
            assert!(turn_start(&store, "chat_a").await.unwrap().is_none());
        }
    }
}
