//! Sub-agent frames in a person's file (§8.3): opened with their task, ended with their
//! closing row, and their rows read back.

use super::super::private::PrivateStore;
use super::super::snapshots::Touched;
use super::history::insert_message;
use super::{Message, MessageRole, MessageStatus, NewMessage, StoreError, TurnState, timestamp};
use crate::ids::{CallId, FrameId};

/// A sub-agent frame as stored (§8.3).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Frame {
    pub id: FrameId,
    pub call_id: CallId,
    pub outer_id: Option<FrameId>,
    pub agent: String,
    pub depth: i64,
    pub state: TurnState,
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
        status: MessageStatus::Sent,
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
pub async fn set_frame_state(store: &PrivateStore, frame_id: &str, state: TurnState) -> Result<(), StoreError> {
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
                error_message, created_at, frame_id, redacted, images
         FROM messages WHERE frame_id = ? ORDER BY id",
    )
    .bind(frame_id)
    .fetch_all(store.pool())
    .await?)
}
