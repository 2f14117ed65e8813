//! The append-only history of a conversation: rows written and read back in order. What
//! is read is a path through the conversation's turns (see `branches`): the active one,
//! which is what the person sees and the model reads, or the path of one turn.

use serde_json::Value;

use super::super::private::PrivateStore;
use super::super::snapshots::{Snapshot, Touched};
use super::branches::{ACTIVE_PATH_AFTER, TURN_PATH_AFTER};
use super::{Message, MessageRole, MessageStatus, StoreError, Summary, timestamp};
use crate::ids::{CallId, ConversationId, FrameId, TurnId};

/// A row about to be appended.
#[derive(Debug, Default)]
pub struct NewMessage<'a> {
    pub session_id: &'a str,
    pub turn_id: &'a str,
    pub role: MessageRole,
    pub text: &'a str,
    pub status: MessageStatus,
    pub tool_calls: Option<Value>,
    pub tool_call_id: Option<&'a str>,
    pub tool_name: Option<&'a str>,
    pub model: Option<&'a str>,
    pub error_code: Option<&'a str>,
    pub error_message: Option<&'a str>,
    pub frame_id: Option<&'a str>,
    /// The pictures a person's message carries.
    pub images: Option<&'a [super::AttachedPicture]>,
}

impl NewMessage<'_> {
    /// The pictures as the row keeps them: none rather than an empty list.
    fn stored_images(&self) -> Option<&[super::AttachedPicture]> {
        self.images.filter(|p| !p.is_empty())
    }
}

/// Appends rows to the history in one transaction; returns their ids.
pub async fn append(store: &PrivateStore, messages: &[NewMessage<'_>]) -> Result<Vec<i64>, StoreError> {
    let mut writing = store.writing(Touched::conversations(messages.iter().map(|m| m.session_id)));
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let mut ids = Vec::with_capacity(messages.len());
    for message in messages {
        ids.push(insert_message(&mut tx, message, &now).await?);
    }
    tx.commit().await?;
    let rows: Vec<Message> = messages.iter().zip(&ids).map(|(m, &id)| as_read(id, m, &now)).collect();
    writing.follows(move |snapshot| follow_rows(snapshot, rows));
    Ok(ids)
}

/// A row just appended, as reading it back would return it.
pub(super) fn as_read(id: i64, m: &NewMessage<'_>, now: &str) -> Message {
    Message {
        id,
        turn_id: TurnId::new(m.turn_id),
        role: m.role,
        text: m.text.to_owned(),
        status: m.status,
        tool_calls: m.tool_calls.clone(),
        tool_call_id: m.tool_call_id.map(CallId::new),
        tool_name: m.tool_name.map(str::to_owned),
        model: m.model.map(str::to_owned),
        error_code: m.error_code.map(str::to_owned),
        error_message: m.error_message.map(str::to_owned),
        created_at: now.to_owned(),
        frame_id: m.frame_id.map(FrameId::new),
        redacted: false,
        images: m.stored_images().map(<[_]>::to_vec),
    }
}

/// Puts rows just appended at the end of a conversation's kept snapshot, as reading it
/// again would: they follow every row it holds, and it holds the rows of its path. Only
/// when each is of a turn known to be on that path (the turn ending it, or one it holds
/// rows of); false otherwise, and the snapshot is read again.
pub(super) fn follow_rows(snapshot: &mut Snapshot, rows: Vec<Message>) -> bool {
    let on_path = |turn: &TurnId| {
        snapshot.conversation.active_turn.as_ref() == Some(turn)
            || snapshot.history.iter().rev().any(|m| m.turn_id == *turn)
    };
    if !rows.iter().all(|row| on_path(&row.turn_id)) {
        return false;
    }
    snapshot.history.extend(rows);
    true
}

/// Which path through a conversation's turns a read follows.
#[derive(Debug, Clone, Copy)]
pub enum Path<'a> {
    /// The conversation as it reads now: its active path.
    Active,
    /// A turn and the turns it continues, as they were when it ran.
    Of(&'a str),
}

/// A conversation's history as it reads now (its active path), oldest first.
pub async fn history(store: &PrivateStore, session_id: &ConversationId) -> Result<Vec<Message>, StoreError> {
    history_between(store, session_id, Path::Active, 0, i64::MAX).await
}

/// The rows of the active path after `summary` (all of them without one), oldest first:
/// what a turn's context is made of.
pub async fn history_after(
    store: &PrivateStore,
    session_id: &ConversationId,
    summary: Option<&Summary>,
) -> Result<Vec<Message>, StoreError> {
    history_between(store, session_id, Path::Active, summary.map_or(0, |s| s.upto), i64::MAX).await
}

/// The rows on `path` after `after` up to and including `upto`, oldest first. The path is
/// walked back only as far as the turn holding row `after`: reading what follows a summary
/// costs what follows it, not the whole conversation.
pub async fn history_between(
    store: &PrivateStore,
    session_id: &ConversationId,
    path: Path<'_>,
    after: i64,
    upto: i64,
) -> Result<Vec<Message>, StoreError> {
    let (cte, turn) = match path {
        Path::Active => (ACTIVE_PATH_AFTER, None),
        Path::Of(turn) => (TURN_PATH_AFTER, Some(turn)),
    };
    let sql = sqlx::AssertSqlSafe(format!(
        "{cte} SELECT {COLUMNS} FROM messages
         WHERE session_id = ?1 AND id > ?3 AND id <= ?4 AND turn_id IN path ORDER BY id"
    ));
    Ok(sqlx::query_as(sql).bind(session_id).bind(turn).bind(after).bind(upto).fetch_all(store.pool()).await?)
}

/// The rows of at most `turns` turns on the active path, oldest first: the latest, or with
/// `before` those just before that turn on the path it continues (the page before one
/// already read). A page of the history, whole turns only. Its cost follows the page, not
/// the conversation: the path is walked back `turns` steps from its end, and the rows are
/// read by turn (`messages_by_turn`). [`StoreError::NotFound`] when `before` names a turn
/// the conversation does not have.
pub async fn history_page(
    store: &PrivateStore,
    session_id: &ConversationId,
    before: Option<&str>,
    turns: u32,
) -> Result<Vec<Message>, StoreError> {
    let mut tx = store.pool().begin().await?;
    if let Some(turn) = before {
        let known: Option<i64> = sqlx::query_scalar("SELECT 1 FROM turns WHERE id = ? AND session_id = ?")
            .bind(turn)
            .bind(session_id)
            .fetch_optional(&mut *tx)
            .await?;
        known.ok_or(StoreError::NotFound)?;
    }
    // The page's last turn: the path's end, or the turn the one named continues.
    let sql = sqlx::AssertSqlSafe(format!(
        "WITH RECURSIVE page(turn, depth) AS (
             SELECT last.turn, 1 FROM (SELECT CASE WHEN ?2 IS NULL
                 THEN (SELECT active_turn FROM chat_sessions WHERE id = ?1)
                 ELSE (SELECT after_turn FROM turns WHERE id = ?2 AND session_id = ?1) END AS turn) AS last
             WHERE last.turn IS NOT NULL
             UNION ALL
             SELECT t.after_turn, page.depth + 1 FROM turns t JOIN page ON t.id = page.turn
             WHERE t.after_turn IS NOT NULL AND page.depth < ?3)
         SELECT {COLUMNS} FROM messages INDEXED BY messages_by_turn
         WHERE turn_id IN (SELECT turn FROM page) AND session_id = ?1 ORDER BY id"
    ));
    let rows = sqlx::query_as(sql).bind(session_id).bind(before).bind(turns).fetch_all(&mut *tx).await?;
    tx.commit().await?;
    Ok(rows)
}

/// Every row of a conversation, on every path, oldest first: for the person's archive.
pub async fn all_rows(store: &PrivateStore, session_id: &ConversationId) -> Result<Vec<Message>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM messages WHERE session_id = ? ORDER BY id"));
    Ok(sqlx::query_as(sql).bind(session_id).fetch_all(store.pool()).await?)
}

const COLUMNS: &str = "id, turn_id, role, text, status, tool_calls, tool_call_id, tool_name, model, error_code,
    error_message, created_at, frame_id, redacted, images";

pub(super) async fn insert_message(
    tx: &mut sqlx::SqliteConnection,
    m: &NewMessage<'_>,
    now: &str,
) -> Result<i64, StoreError> {
    let id = sqlx::query(
        "INSERT INTO messages (session_id, turn_id, role, text, status, tool_calls, tool_call_id, tool_name, model,
                               error_code, error_message, created_at, frame_id, images)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
    .bind(m.stored_images().map(|p| serde_json::to_string(p).expect("pictures serialize")))
    .execute(tx)
    .await?
    .last_insert_rowid();
    Ok(id)
}
