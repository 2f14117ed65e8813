//! Full-text search inside a person's conversations (FTS5 over the words of their messages
//! and of the replies, kept in step by the triggers of
//! `database/migrations/user/0012_message_search.sql`). The index lives inside the same
//! encrypted file, so one person's search never reaches another's words.

use serde::Serialize;

use super::super::notes::match_expression;
use super::super::private::PrivateStore;
use super::StoreError;

/// A row of a conversation that matched a search.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
#[ts(rename = "MessageHit")]
pub struct Hit {
    pub session_id: String,
    pub message_id: i64,
    /// The conversation's title, to tell the hits apart.
    pub title: String,
    /// A few words of the row around the matches, each match wrapped in `**`. Plain text,
    /// never markup: the page shows it as text.
    pub snippet: String,
    pub created_at: String,
}

/// Rows of the person's own conversations holding every word of `query` (as a word or the
/// start of one), best match first, the newest first among equals. Any text is a valid
/// query (it is quoted as notes' search quotes it); one without words finds nothing.
pub async fn search(store: &PrivateStore, query: &str, limit: u32) -> Result<Vec<Hit>, StoreError> {
    let Some(expression) = match_expression(query) else { return Ok(Vec::new()) };
    Ok(sqlx::query_as(
        "SELECT m.session_id, m.id AS message_id, s.title,
                snippet(messages_search, 0, '**', '**', '…', 16) AS snippet, m.created_at
         FROM messages_search
         JOIN messages m ON m.id = messages_search.rowid
         JOIN chat_sessions s ON s.id = m.session_id
         WHERE messages_search MATCH ?
         ORDER BY bm25(messages_search), m.id DESC
         LIMIT ?",
    )
    .bind(expression)
    .bind(limit)
    .fetch_all(store.pool())
    .await?)
}

#[cfg(test)]
mod tests {
    use super::super::{
        MessageRole, MessageStatus, NewMessage, Place, TurnEnd, TurnState, append, begin_turn, create_conversation,
        delete_conversation, end_turn,
    };
    use super::*;

    /// A finished turn: the person's words, then the reply.
    async fn exchange(store: &PrivateStore, session: &str, turn: &str, asked: &str, replied: &str) {
        begin_turn(store, &session.into(), &turn.into(), asked, Place::Next).await.unwrap();
        let reply = NewMessage {
            session_id: session,
            turn_id: turn,
            role: MessageRole::Assistant,
            text: replied,
            status: MessageStatus::Done,
            ..NewMessage::default()
        };
        let end = TurnEnd { state: TurnState::Done, error_code: None, error_message: None };
        assert!(end_turn(store, &reply, &end, "", None, TurnState::Running).await.unwrap());
    }

    fn sessions(hits: &[Hit]) -> Vec<&str> {
        hits.iter().map(|h| h.session_id.as_str()).collect()
    }

    #[tokio::test]
    async fn a_word_of_a_reply_finds_its_conversation_with_a_snippet_around_it() {
        let (_dir, store) = PrivateStore::scratch().await;
        create_conversation(&store, &"chat_a".into(), "main", None).await.unwrap();
        create_conversation(&store, &"chat_b".into(), "main", None).await.unwrap();
        exchange(&store, "chat_a", "turn_a", "Where should we go?", "Try the café near the old lighthouse").await;
        exchange(&store, "chat_b", "turn_b", "What is for dinner?", "Soup, then a pear tart").await;

        let hits = search(&store, "lighthouse cafe", 10).await.unwrap();
        assert_eq!(sessions(&hits), ["chat_a"]);
        assert!(hits[0].snippet.contains("**lighthouse**"), "{}", hits[0].snippet);
        assert_eq!(hits[0].title, "Where should we go?");
        assert_eq!(sessions(&search(&store, "dinn", 10).await.unwrap()), ["chat_b"], "the person's words too");
        assert!(search(&store, "soup lighthouse", 10).await.unwrap().is_empty(), "every word must match");
        assert!(search(&store, "\" AND NOT (", 10).await.unwrap().is_empty(), "any text is a query");
    }

    #[tokio::test]
    async fn a_tool_result_is_never_found() {
        let (_dir, store) = PrivateStore::scratch().await;
        create_conversation(&store, &"chat_a".into(), "main", None).await.unwrap();
        begin_turn(&store, &"chat_a".into(), &"turn_a".into(), "look it up", Place::Next).await.unwrap();
        let result = NewMessage {
            session_id: "chat_a",
            turn_id: "turn_a",
            role: MessageRole::Tool,
            text: "zanzibar appears only in the tool output",
            status: MessageStatus::Ok,
            tool_call_id: Some("call_1"),
            tool_name: Some("web_fetch"),
            ..NewMessage::default()
        };
        append(&store, &[result]).await.unwrap();
        assert!(search(&store, "zanzibar", 10).await.unwrap().is_empty());
        assert_eq!(search(&store, "look", 10).await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_deleted_conversation_leaves_the_index_and_the_best_match_comes_first() {
        let (_dir, store) = PrivateStore::scratch().await;
        create_conversation(&store, &"chat_a".into(), "main", None).await.unwrap();
        create_conversation(&store, &"chat_b".into(), "main", None).await.unwrap();
        exchange(&store, "chat_a", "turn_a", "otters", "otters otters, and otters again").await;
        exchange(&store, "chat_b", "turn_b", "a long question that mentions otters once among many words", "ok").await;
        let hits = search(&store, "otters", 10).await.unwrap();
        assert_eq!(sessions(&hits), ["chat_a", "chat_a", "chat_b"]);
        assert_eq!(search(&store, "otters", 1).await.unwrap().len(), 1);

        delete_conversation(&store, &"chat_a".into()).await.unwrap();
        assert_eq!(sessions(&search(&store, "otters", 10).await.unwrap()), ["chat_b"]);
        let indexed: i64 =
            sqlx::query_scalar("SELECT count(*) FROM messages_search WHERE messages_search MATCH 'otters'")
                .fetch_one(store.pool())
                .await
                .unwrap();
        assert_eq!(indexed, 1, "no tokens of the deleted rows are left behind");
    }
}
