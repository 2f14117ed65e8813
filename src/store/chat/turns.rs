//! A turn's life in the person's file: begun with their message (or as a retry), at the
//! end of the active path or beside a turn as another version of it (see `branches`),
//! ended with its closing row and state, every call answered (§8.1).

use serde_json::Value;

use super::super::private::PrivateStore;
use super::super::snapshots::{Snapshot, Touched};
use super::branches::{ACTIVE_PATH, Place, after_turn_at};
use super::history::{as_read, follow_rows, insert_message};
use super::requests::insert_request;
use super::{MessageRole, MessageStatus, NewMessage, RequestRecord, StoreError, TurnState, timestamp};
use crate::ids::{ConversationId, TurnId};

/// How a turn ended, for the turn row.
#[derive(Debug)]
pub struct TurnEnd<'a> {
    pub state: TurnState,
    pub error_code: Option<&'a str>,
    pub error_message: Option<&'a str>,
}

/// How long a title taken from the first message may be.
const TITLE_CHARS: usize = 60;
/// Starts a turn with the person's message, in one transaction: once this returns, what
/// they sent survives a crash (§5.1). A session's first message becomes its title. The
/// turn goes at `place` and ends the active path from then on.
pub async fn begin_turn(
    store: &PrivateStore,
    session_id: &ConversationId,
    turn_id: &TurnId,
    text: &str,
    place: Place<'_>,
) -> Result<i64, StoreError> {
    begin_turn_with(store, session_id, turn_id, text, &[], place).await
}

/// The same, the message carrying `pictures`.
pub async fn begin_turn_with(
    store: &PrivateStore,
    session_id: &ConversationId,
    turn_id: &TurnId,
    text: &str,
    pictures: &[super::AttachedPicture],
    place: Place<'_>,
) -> Result<i64, StoreError> {
    let mut writing = store.writing(Touched::conversation(session_id));
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let after = insert_running_turn(&mut tx, session_id, turn_id, place, &now).await?;
    let message = NewMessage {
        session_id,
        turn_id,
        role: MessageRole::User,
        text,
        status: MessageStatus::Sent,
        images: Some(pictures),
        ..NewMessage::default()
    };
    let id = insert_message(&mut tx, &message, &now).await?;
    let title = title_from(text);
    sqlx::query(
        "UPDATE chat_sessions SET updated_at = ?, title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ?",
    )
    .bind(&now)
    .bind(&title)
    .bind(session_id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    // Begun after the turn ending the path, it carries the conversation on; beside one, the
    // path changed, and the snapshot is read again.
    let (row, turn) = (as_read(id, &message, &now), turn_id.clone());
    writing.follows(move |snapshot| {
        let conversation = &mut snapshot.conversation;
        if conversation.active_turn.as_deref() != after.as_deref() {
            return false;
        }
        conversation.active_turn = Some(turn);
        conversation.turn_state = Some(TurnState::Running);
        conversation.updated_at = now;
        if conversation.title.is_empty() {
            conversation.title = title;
        }
        snapshot.history.push(row);
        true
    });
    Ok(id)
}

/// Adds a running turn at `place` and makes it the end of the active path; the turn it
/// comes after.
async fn insert_running_turn(
    tx: &mut sqlx::SqliteConnection,
    session_id: &ConversationId,
    turn_id: &TurnId,
    place: Place<'_>,
    now: &str,
) -> Result<Option<String>, StoreError> {
    let after = after_turn_at(&mut *tx, session_id, place).await?;
    sqlx::query("INSERT INTO turns (id, session_id, state, started_at, after_turn) VALUES (?, ?, 'running', ?, ?)")
        .bind(turn_id)
        .bind(session_id)
        .bind(now)
        .bind(&after)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE chat_sessions SET active_turn = ? WHERE id = ?")
        .bind(turn_id)
        .bind(session_id)
        .execute(&mut *tx)
        .await?;
    Ok(after)
}

/// Starts a turn with no new message, at `place`: a retry of a failed turn, or another
/// version of one that answered the message before it. Returns the row of the person's
/// message it answers, their last one on its path.
pub async fn begin_retry(
    store: &PrivateStore,
    session_id: &ConversationId,
    turn_id: &TurnId,
    place: Place<'_>,
) -> Result<i64, StoreError> {
    let _writing = store.writing(Touched::conversation(session_id));
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    insert_running_turn(&mut tx, session_id, turn_id, place, &now).await?;
    let sql = sqlx::AssertSqlSafe(format!(
        "{ACTIVE_PATH} SELECT max(id) FROM messages
         WHERE session_id = ?1 AND role = 'user' AND frame_id IS NULL AND turn_id IN path"
    ));
    let asked: Option<i64> = sqlx::query_scalar(sql).bind(session_id).fetch_one(&mut *tx).await?;
    sqlx::query("UPDATE chat_sessions SET updated_at = ? WHERE id = ?")
        .bind(&now)
        .bind(session_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(asked.unwrap_or(0))
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
    let mut writing = store.writing(Touched::conversation(last.session_id));
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
    let status = if end.state == TurnState::Stopped { MessageStatus::Cancelled } else { MessageStatus::Error };
    let mut rows = Vec::new();
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
        rows.push(as_read(insert_message(&mut tx, &result, &now).await?, &result, &now));
    }
    // Frames the turn ends around end with it: stopped with a stopped turn, else failed.
    let frame_state = if end.state == TurnState::Stopped { TurnState::Stopped } else { TurnState::Error };
    sqlx::query("UPDATE frames SET state = ?, ended_at = ? WHERE turn_id = ? AND state IN ('running', 'parked')")
        .bind(frame_state)
        .bind(&now)
        .bind(last.turn_id)
        .execute(&mut *tx)
        .await?;
    rows.push(as_read(insert_message(&mut tx, last, &now).await?, last, &now));
    sqlx::query("UPDATE chat_sessions SET updated_at = ? WHERE id = ?")
        .bind(&now)
        .bind(last.session_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    let (turn, state) = (TurnId::new(last.turn_id), end.state);
    writing.follows(move |snapshot: &mut Snapshot| {
        if !follow_rows(snapshot, rows) {
            return false;
        }
        let conversation = &mut snapshot.conversation;
        if conversation.active_turn.as_ref() == Some(&turn) {
            conversation.turn_state = Some(state);
        }
        conversation.updated_at = now;
        true
    });
    Ok(true)
}

/// Ends a turn that has nothing more to say (interrupted, withdrawn, unable to go on):
/// an empty closing row with the state and the error, if any. See [`end_turn`].
pub async fn close_turn(
    store: &PrivateStore,
    session_id: &ConversationId,
    turn_id: &TurnId,
    end: &TurnEnd<'_>,
    orphan_result: &str,
    from: TurnState,
) -> Result<bool, StoreError> {
    let last = NewMessage {
        session_id,
        turn_id,
        role: MessageRole::Assistant,
        text: "",
        status: end.state.into(),
        error_code: end.error_code,
        error_message: end.error_message,
        ..NewMessage::default()
    };
    end_turn(store, &last, end, orphan_result, None, from).await
}

/// Turns recorded as running, with their session: after a restart these were cut off.
pub async fn running_turns(store: &PrivateStore) -> Result<Vec<(TurnId, ConversationId)>, StoreError> {
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
}
