//! Conversations in a person's encrypted file (§8.1): sessions, turns, the append-only
//! history and the record of each model request. Callers pass the person's open
//! [`PrivateStore`]; nothing here reaches the shared database.
//!
//! This file holds the conversations themselves (made, listed, renamed, pinned,
//! deleted, read at a turn's start) with their summaries and scratchpads; `history`
//! appends and reads rows, `turns` begins and ends turns, `branches` keeps the tree of
//! turns and its active path, `frames` holds sub-agent frames, `requests` the record of
//! model requests, `search` finds words inside them.

mod branches;
mod frames;
mod history;
mod requests;
mod search;
mod turns;

use std::sync::Arc;

pub use super::conversation::{
    AttachedPicture, Conversation, Message, MessageRole, MessageStatus, StoredCall, Summary, TurnState,
};
use super::private::PrivateStore;
use super::snapshots::{Snapshot, Touched};
use super::{StoreError, timestamp};
use crate::ids::ConversationId;
pub use branches::{Place, Versions, choose_version, versions};
pub use frames::{Frame, NewFrame, end_frame, frame_for_call, frame_rows, open_frame, set_frame_state};
pub use history::{NewMessage, Path, all_rows, append, history, history_after, history_between, history_page};
pub use requests::{
    RequestFigures, RequestOutcome, RequestPurpose, RequestRecord, RequestRow, RequestSource, StoredRequest,
    record_request, requests, stored_request,
};
pub use search::{Hit, search};
pub use turns::{TurnEnd, begin_retry, begin_turn, begin_turn_with, close_turn, end_turn, running_turns};

/// A conversation with the summary nearest the end of its active path (the newest of those
/// ending in the same turn), in one query: a turn's start reads both. A summary made on
/// another path stands in for rows this one does not hold. The path is walked back from
/// its end only as far as the first turn a summary ends in, so a long conversation costs
/// what follows its summary.
pub async fn conversation_with_summary(
    store: &PrivateStore,
    id: &ConversationId,
) -> Result<Option<(Conversation, Option<Summary>)>, StoreError> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        session: Conversation,
        summary_id: Option<i64>,
        summary_upto: Option<i64>,
        summary_text: Option<String>,
    }
    let sql = sqlx::AssertSqlSafe(format!(
        "WITH RECURSIVE summed(turn) AS (
             SELECT r.turn_id FROM summaries s JOIN messages r ON r.id = s.upto WHERE s.session_id = ?1),
         path(id) AS (
             SELECT active_turn FROM chat_sessions WHERE id = ?1 AND active_turn IS NOT NULL
             UNION ALL
             SELECT t.after_turn FROM turns t JOIN path ON t.id = path.id
             WHERE t.after_turn IS NOT NULL AND path.id NOT IN summed)
         SELECT c.*, m.id AS summary_id, m.upto AS summary_upto, m.text AS summary_text
         FROM ({SESSION_SELECT} WHERE s.id = ?1) c
         LEFT JOIN (SELECT s.id, s.upto, s.text FROM summaries s JOIN messages r ON r.id = s.upto
                    WHERE s.session_id = ?1 AND r.turn_id IN path ORDER BY s.id DESC LIMIT 1) m"
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
pub async fn add_summary(
    store: &PrivateStore,
    session_id: &ConversationId,
    upto: i64,
    text: &str,
) -> Result<Summary, StoreError> {
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

const SESSION_SELECT: &str = "SELECT s.id, s.agent, s.model, s.title, s.created_at, s.updated_at, s.outside_content,
        s.pinned, s.archived, s.temporary, s.active_turn,
        (SELECT t.state FROM turns t WHERE t.id = s.active_turn) AS turn_state
     FROM chat_sessions s";

pub async fn create_conversation(
    store: &PrivateStore,
    id: &ConversationId,
    agent: &str,
    model: Option<&str>,
) -> Result<Conversation, StoreError> {
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
    let session = Conversation {
        id: id.clone(),
        agent: agent.to_owned(),
        model: model.map(str::to_owned),
        title: String::new(),
        created_at: now.clone(),
        updated_at: now,
        turn_state: None,
        active_turn: None,
        outside_content: false,
        pinned: false,
        archived: false,
        temporary: false,
    };
    // What its first turn starts from is known without reading it back.
    let snapshot = Snapshot { conversation: session.clone(), summary: None, history: Vec::new() };
    store.snapshots().put(id, store.snapshots().stamp(), Arc::new(snapshot));
    Ok(session)
}

/// What a conversation's next turn starts from: the conversation, its latest summary and
/// the history after that summary (all of it without one), from memory when nothing was
/// written to it since it was last read (see `store::snapshots`); none when there is no
/// such conversation. What it reads follows the summary, not the whole conversation, so a
/// turn's start costs the same in a long conversation as in a short one.
pub async fn turn_start(store: &PrivateStore, id: &ConversationId) -> Result<Option<Arc<Snapshot>>, StoreError> {
    if let Some(kept) = store.snapshots().get(id) {
        return Ok(Some(kept));
    }
    let stamp = store.snapshots().stamp();
    let Some((conversation, summary)) = conversation_with_summary(store, id).await? else { return Ok(None) };
    let history = history_after(store, id, summary.as_ref()).await?;
    let snapshot = Arc::new(Snapshot { conversation, summary, history });
    store.snapshots().put(id, stamp, Arc::clone(&snapshot));
    Ok(Some(snapshot))
}

pub async fn conversation(store: &PrivateStore, id: &ConversationId) -> Result<Option<Conversation>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{SESSION_SELECT} WHERE s.id = ?"));
    Ok(sqlx::query_as(sql).bind(id).fetch_optional(store.pool()).await?)
}

/// The conversations, most recently active first; temporary ones are not listed.
pub async fn conversations(store: &PrivateStore) -> Result<Vec<Conversation>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{SESSION_SELECT} WHERE s.temporary = 0 ORDER BY s.updated_at DESC, s.id"));
    Ok(sqlx::query_as(sql).fetch_all(store.pool()).await?)
}

/// Makes a new conversation temporary: it neither reads nor writes memories.
pub async fn make_temporary(store: &PrivateStore, id: &ConversationId) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::conversation(id));
    sqlx::query("UPDATE chat_sessions SET temporary = 1 WHERE id = ?").bind(id).execute(store.pool()).await?;
    Ok(())
}

/// Deletes every temporary conversation with no turn running (at lock, and at unlock for
/// any a crash left), with its whole history; how many went.
pub async fn delete_temporary(store: &PrivateStore) -> Result<u64, StoreError> {
    let _writing = store.writing(Touched::Unknown);
    let deleted = sqlx::query(
        "DELETE FROM chat_sessions WHERE temporary = 1
         AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = chat_sessions.id AND t.state = 'running')",
    )
    .execute(store.pool())
    .await?
    .rows_affected();
    if deleted > 0 {
        super::checkpoint(store.pool()).await?;
    }
    Ok(deleted)
}

/// The person names a conversation: their title is never replaced by the model's. An empty
/// one gives the naming back (the next message's first line, then the model).
pub async fn rename_conversation(store: &PrivateStore, id: &ConversationId, title: &str) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::conversation(id));
    let updated = sqlx::query(
        "UPDATE chat_sessions SET title = ?1, title_source = CASE WHEN ?1 = '' THEN 'message' ELSE 'person' END
         WHERE id = ?2",
    )
    .bind(title)
    .bind(id)
    .execute(store.pool())
    .await?
    .rows_affected();
    if updated == 0 { Err(StoreError::NotFound) } else { Ok(()) }
}

/// Whether a conversation still has the title taken from its first message, which its
/// model may replace (`database/migrations/user/0015_titles.sql`).
pub async fn wants_title(store: &PrivateStore, id: &ConversationId) -> Result<bool, StoreError> {
    let source: Option<String> = sqlx::query_scalar("SELECT title_source FROM chat_sessions WHERE id = ?")
        .bind(id)
        .fetch_optional(store.pool())
        .await?;
    Ok(source.as_deref() == Some("message"))
}

/// The model's title for a conversation, unless someone named it meanwhile; whether it
/// was kept.
pub async fn set_model_title(store: &PrivateStore, id: &ConversationId, title: &str) -> Result<bool, StoreError> {
    let _writing = store.writing(Touched::conversation(id));
    let updated = sqlx::query(
        "UPDATE chat_sessions SET title = ?, title_source = 'model' WHERE id = ? AND title_source = 'message'",
    )
    .bind(title)
    .bind(id)
    .execute(store.pool())
    .await?
    .rows_affected();
    Ok(updated == 1)
}

/// Pins or unpins, archives or restores a conversation; what is `None` stays as it is.
pub async fn set_flags(
    store: &PrivateStore,
    id: &ConversationId,
    pinned: Option<bool>,
    archived: Option<bool>,
) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::conversation(id));
    let updated = sqlx::query(
        "UPDATE chat_sessions SET pinned = coalesce(?, pinned), archived = coalesce(?, archived) WHERE id = ?",
    )
    .bind(pinned)
    .bind(archived)
    .bind(id)
    .execute(store.pool())
    .await?
    .rows_affected();
    if updated == 0 { Err(StoreError::NotFound) } else { Ok(()) }
}

/// Deletes a session with its whole history (the file's secure_delete zeroes the pages).
pub async fn delete_conversation(store: &PrivateStore, id: &ConversationId) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::conversation(id));
    let deleted =
        sqlx::query("DELETE FROM chat_sessions WHERE id = ?").bind(id).execute(store.pool()).await?.rows_affected();
    if deleted == 0 { Err(StoreError::NotFound) } else { Ok(()) }
}

/// Pins a conversation to a model, or unpins it (none).
pub async fn set_conversation_model(
    store: &PrivateStore,
    id: &ConversationId,
    model: Option<&str>,
) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::conversation(id));
    let updated = sqlx::query("UPDATE chat_sessions SET model = ? WHERE id = ?")
        .bind(model)
        .bind(id)
        .execute(store.pool())
        .await?
        .rows_affected();
    if updated == 0 { Err(StoreError::NotFound) } else { Ok(()) }
}

/// Marks a conversation as holding outside content (§8.4's injection hygiene). Never
/// cleared: what came in stays in the history.
pub async fn mark_outside_content(store: &PrivateStore, session_id: &ConversationId) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::conversation(session_id));
    sqlx::query("UPDATE chat_sessions SET outside_content = 1 WHERE id = ?")
        .bind(session_id)
        .execute(store.pool())
        .await?;
    Ok(())
}

/// A conversation's scratchpad; empty when nothing was written.
pub async fn scratchpad(store: &PrivateStore, session_id: &ConversationId) -> Result<String, StoreError> {
    Ok(sqlx::query_scalar("SELECT text FROM scratchpads WHERE session_id = ?")
        .bind(session_id)
        .fetch_optional(store.pool())
        .await?
        .unwrap_or_default())
}

/// Replaces a conversation's scratchpad.
pub async fn put_scratchpad(store: &PrivateStore, session_id: &ConversationId, text: &str) -> Result<(), StoreError> {
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
    use serde_json::json;

    use super::*;

    fn last<'a>(session_id: &'a str, turn_id: &'a str, text: &'a str) -> NewMessage<'a> {
        NewMessage {
            session_id,
            turn_id,
            role: MessageRole::Assistant,
            text,
            status: MessageStatus::Done,
            ..NewMessage::default()
        }
    }

    async fn whole_turn(store: &PrivateStore, session: &str, turn: &str, words: &str) {
        begin_turn(store, &session.into(), &turn.into(), words, Place::Next).await.unwrap();
        let end = TurnEnd { state: TurnState::Done, error_code: None, error_message: None };
        assert!(end_turn(store, &last(session, turn, "ok"), &end, "", None, TurnState::Running).await.unwrap());
    }

    /// What a turn's start reads from the file, past any snapshot, as comparable text.
    async fn read(store: &PrivateStore, id: &str) -> String {
        let (conversation, summary) = conversation_with_summary(store, &id.into()).await.unwrap().unwrap();
        let history = history_after(store, &id.into(), summary.as_ref()).await.unwrap();
        shown(&Snapshot { conversation, summary, history })
    }

    fn shown(snapshot: &Snapshot) -> String {
        let summary = snapshot.summary.as_ref().map(|s| (s.id, s.upto, &s.text));
        format!("{} {summary:?} {}", json!(snapshot.conversation), json!(snapshot.history))
    }

    /// A turn's start, and whether it was served from memory.
    async fn start(store: &PrivateStore, id: &str) -> (Arc<Snapshot>, bool) {
        let served = store.snapshots().served();
        let snapshot = turn_start(store, &id.into()).await.unwrap().unwrap();
        (snapshot, store.snapshots().served() > served)
    }

    #[tokio::test]
    async fn a_turn_starts_from_memory_until_its_conversation_is_written() {
        let (_dir, store) = PrivateStore::scratch().await;
        create_conversation(&store, &"chat_a".into(), "main", None).await.unwrap();
        create_conversation(&store, &"chat_b".into(), "main", None).await.unwrap();
        // Both were kept when they were made; a turn in one leaves the other's good.
        whole_turn(&store, "chat_b", "turn_b1", "elsewhere").await;
        crate::store::notes::create(&store, "n", "b", false).await.unwrap();
        let served = store.snapshots().served();
        let a = turn_start(&store, &"chat_a".into()).await.unwrap().unwrap();
        assert_eq!(store.snapshots().served(), served + 1, "served from memory");
        assert!(a.history.is_empty());

        // A turn in the conversation itself carries its snapshot on, as the file now reads.
        whole_turn(&store, "chat_a", "turn_a1", "hello there").await;
        let (a, from_memory) = start(&store, "chat_a").await;
        assert!(from_memory, "followed the turn");
        assert_eq!(shown(&a), read(&store, "chat_a").await);
        let texts: Vec<&str> = a.history.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["hello there", "ok"]);
        assert_eq!((a.conversation.title.as_str(), a.conversation.turn_state), ("hello there", Some(TurnState::Done)));

        // Each kind of write to it is seen at once.
        rename_conversation(&store, &"chat_a".into(), "Renamed").await.unwrap();
        assert_eq!(turn_start(&store, &"chat_a".into()).await.unwrap().unwrap().conversation.title, "Renamed");
        let first = a.history[0].id; // a summary stands in for rows of its own path
        add_summary(&store, &"chat_a".into(), first, "they said hello").await.unwrap();
        let summary = turn_start(&store, &"chat_a".into()).await.unwrap().unwrap().summary.clone();
        assert_eq!(summary.unwrap().text, "they said hello");
        set_conversation_model(&store, &"chat_a".into(), Some("local/x")).await.unwrap();
        assert_eq!(
            turn_start(&store, &"chat_a".into()).await.unwrap().unwrap().conversation.model.as_deref(),
            Some("local/x")
        );
        mark_outside_content(&store, &"chat_a".into()).await.unwrap();
        assert!(turn_start(&store, &"chat_a".into()).await.unwrap().unwrap().conversation.outside_content);

        // A write no store function accounted for: nothing kept is trusted after it.
        sqlx::query("UPDATE chat_sessions SET title = 'behind its back' WHERE id = 'chat_a'")
            .execute(store.pool())
            .await
            .unwrap();
        assert_eq!(turn_start(&store, &"chat_a".into()).await.unwrap().unwrap().conversation.title, "behind its back");
        delete_conversation(&store, &"chat_a".into()).await.unwrap();
        assert!(turn_start(&store, &"chat_a".into()).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_snapshot_follows_what_carries_the_conversation_on_and_is_read_again_after_the_rest() {
        let (_dir, store) = PrivateStore::scratch().await;
        let id = "chat_a";
        create_conversation(&store, &id.into(), "main", None).await.unwrap();
        whole_turn(&store, id, "turn_1", "first").await;
        // A turn begun, rows with a call appended, ended with the call unanswered: each
        // followed, each as the file reads.
        let held = start(&store, id).await.0;
        begin_turn_with(&store, &id.into(), &"turn_2".into(), "second", &[], Place::Next).await.unwrap();
        let (begun, from_memory) = start(&store, id).await;
        assert!(from_memory);
        assert_eq!(shown(&begun), read(&store, id).await);
        assert_eq!(begun.conversation.turn_state, Some(TurnState::Running));
        let calls = json!([{ "id": "call_1", "name": "web_fetch", "arguments": "{}" }]);
        let asked = NewMessage { tool_calls: Some(calls), status: MessageStatus::Done, ..last(id, "turn_2", "") };
        append(&store, &[asked, NewMessage { model: Some("home/llama"), ..last(id, "turn_2", "so far") }])
            .await
            .unwrap();
        assert_eq!(shown(&start(&store, id).await.0), read(&store, id).await);
        let end = TurnEnd { state: TurnState::Stopped, error_code: Some("stopped"), error_message: None };
        end_turn(&store, &last(id, "turn_2", "stopped"), &end, "cancelled", None, TurnState::Running).await.unwrap();
        let (ended, from_memory) = start(&store, id).await;
        assert!(from_memory);
        assert_eq!(shown(&ended), read(&store, id).await);
        assert_eq!(ended.history.iter().filter(|m| m.role == MessageRole::Tool).count(), 1, "the call was answered");
        assert_eq!(held.history.len(), 2, "a turn holding the snapshot it started from keeps it as it was");

        // Another version of a turn changes the path: read again.
        begin_turn(&store, &id.into(), &"turn_2b".into(), "second, again", Place::InPlaceOf("turn_2")).await.unwrap();
        let (beside, from_memory) = start(&store, id).await;
        assert!(!from_memory);
        assert_eq!(beside.history.len(), 3, "the first turn and the new version's message");
        // Rows of a turn off the path leave it to be read again, and the read leaves them out.
        append(&store, &[last(id, "turn_2", "late, on the other version")]).await.unwrap();
        let (after, from_memory) = start(&store, id).await;
        assert!(!from_memory);
        assert_eq!(shown(&after), read(&store, id).await);
        assert!(after.history.iter().all(|m| m.turn_id != "turn_2"));
        // So does a retry, which this does not follow.
        begin_retry(&store, &id.into(), &"turn_3".into(), Place::Next).await.unwrap();
        let (retried, from_memory) = start(&store, id).await;
        assert!(!from_memory);
        assert_eq!(retried.conversation.active_turn.as_deref(), Some("turn_3"));
    }
}
