//! Branches (`database/migrations/user/0014_branches.sql`): a conversation is a tree of
//! turns. A new turn continues the active path; another version of a turn (a reply
//! regenerated, a message edited and sent again) is a sibling of it, and becomes the end of
//! the active path. Nothing is rewritten: every version stays whole, and choosing one
//! makes the path through it active again.

use super::super::private::PrivateStore;
use super::super::snapshots::Touched;
use super::StoreError;
use crate::ids::{ConversationId, TurnId};

/// A recursive `path(id)` of the turns on conversation `?1`'s active path, for the head of
/// a query.
pub(super) const ACTIVE_PATH: &str = "WITH RECURSIVE path(id) AS (
        SELECT active_turn FROM chat_sessions WHERE id = ?1 AND active_turn IS NOT NULL
        UNION ALL
        SELECT t.after_turn FROM turns t JOIN path ON t.id = path.id WHERE t.after_turn IS NOT NULL)";

/// The turns of [`ACTIVE_PATH`] read back from its end only as far as the turn holding row
/// `?3` (all of them when `?3` is no row): rows after a summary are read without walking
/// the turns the summary stands in for. A turn's rows all come after those of the turns it
/// continues, so the turns left out hold no row after `?3`.
pub(super) const ACTIVE_PATH_AFTER: &str = "WITH RECURSIVE path(id) AS (
        SELECT active_turn FROM chat_sessions WHERE id = ?1 AND active_turn IS NOT NULL
        UNION ALL
        SELECT t.after_turn FROM turns t JOIN path ON t.id = path.id
        WHERE t.after_turn IS NOT NULL AND path.id IS NOT (SELECT turn_id FROM messages WHERE id = ?3))";

/// A recursive `path(id)` of turn `?2` of conversation `?1` and the turns it continues,
/// read back only as far as the turn holding row `?3`, as [`ACTIVE_PATH_AFTER`].
pub(super) const TURN_PATH_AFTER: &str = "WITH RECURSIVE path(id) AS (
        SELECT id FROM turns WHERE id = ?2 AND session_id = ?1
        UNION ALL
        SELECT t.after_turn FROM turns t JOIN path ON t.id = path.id
        WHERE t.after_turn IS NOT NULL AND path.id IS NOT (SELECT turn_id FROM messages WHERE id = ?3))";

/// Where a new turn goes in its conversation's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place<'a> {
    /// At the end of the active path: the conversation goes on.
    Next,
    /// Beside this turn, as another version of it.
    InPlaceOf(&'a str),
}

/// The turn a new turn at `place` comes after, read inside the transaction that adds it.
/// [`StoreError::NotFound`] when the turn to stand beside is not in this conversation.
pub(super) async fn after_turn_at(
    tx: &mut sqlx::SqliteConnection,
    session_id: &ConversationId,
    place: Place<'_>,
) -> Result<Option<String>, StoreError> {
    match place {
        Place::Next => Ok(sqlx::query_scalar("SELECT active_turn FROM chat_sessions WHERE id = ?")
            .bind(session_id)
            .fetch_optional(&mut *tx)
            .await?
            .flatten()),
        Place::InPlaceOf(turn) => {
            let after: Option<Option<String>> =
                sqlx::query_scalar("SELECT after_turn FROM turns WHERE id = ? AND session_id = ?")
                    .bind(turn)
                    .bind(session_id)
                    .fetch_optional(&mut *tx)
                    .await?;
            after.ok_or(StoreError::NotFound)
        }
    }
}

/// The versions of a turn on the active path that has more than one: all its siblings
/// (itself among them), oldest first.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct Versions {
    /// The turn on the active path.
    pub turn: String,
    /// Every version of it, oldest first; the turn itself is one of them.
    pub versions: Vec<String>,
}

/// The turns of the active path that have other versions, in the path's order. Most
/// conversations have none, and that is known from the index of turns alone; otherwise the
/// path is walked back from its end only as far as the oldest version.
pub async fn versions(store: &PrivateStore, session_id: &ConversationId) -> Result<Vec<Versions>, StoreError> {
    // Every turn that has a sibling, with the turn it continues, oldest first.
    let siblings: Vec<(String, Option<String>, i64)> = sqlx::query_as(
        "SELECT v.id, v.after_turn, v.rowid FROM turns v
         JOIN (SELECT after_turn AS branch FROM turns WHERE session_id = ?1
               GROUP BY after_turn HAVING count(*) > 1) g ON v.after_turn IS g.branch
         WHERE v.session_id = ?1 ORDER BY v.started_at, v.rowid",
    )
    .bind(session_id)
    .fetch_all(store.pool())
    .await?;
    let Some(oldest) = siblings.iter().map(|&(_, _, row)| row).min() else { return Ok(Vec::new()) };
    // The path from its end, as far back as the first turn older than every version: a turn
    // continues one written before it (a smaller rowid), so no version is further back.
    let path: Vec<String> = sqlx::query_scalar(
        "WITH RECURSIVE path(id, row) AS (
             SELECT t.id, t.rowid FROM chat_sessions s JOIN turns t ON t.id = s.active_turn WHERE s.id = ?1
             UNION ALL
             SELECT p.id, p.rowid FROM path JOIN turns t ON t.id = path.id JOIN turns p ON p.id = t.after_turn
             WHERE path.row >= ?2)
         SELECT id FROM path",
    )
    .bind(session_id)
    .bind(oldest)
    .fetch_all(store.pool())
    .await?;
    let mut found: Vec<Versions> = path
        .iter()
        .rev()
        .filter_map(|turn| {
            let (_, after, _) = siblings.iter().find(|(id, _, _)| id == turn)?;
            let versions = siblings.iter().filter(|(_, a, _)| a == after).map(|(id, _, _)| id.clone()).collect();
            Some(Versions { turn: turn.clone(), versions })
        })
        .collect();
    found.retain(|v| v.versions.len() > 1);
    Ok(found)
}

/// Makes the path through `turn` active: it ends at the newest turn that continues it
/// (`turn` itself when none does). Returns that turn; [`StoreError::NotFound`] when the
/// conversation has no such turn.
pub async fn choose_version(
    store: &PrivateStore,
    session_id: &ConversationId,
    turn: &str,
) -> Result<TurnId, StoreError> {
    let _writing = store.writing(Touched::conversation(session_id));
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let end: Option<TurnId> = sqlx::query_scalar(
        "WITH RECURSIVE below(id, started_at, seq) AS (
             SELECT id, started_at, rowid FROM turns WHERE id = ?2 AND session_id = ?1
             UNION ALL
             SELECT t.id, t.started_at, t.rowid FROM turns t JOIN below b ON t.session_id = ?1 AND t.after_turn = b.id)
         SELECT id FROM below b
         WHERE NOT EXISTS (SELECT 1 FROM turns c WHERE c.session_id = ?1 AND c.after_turn = b.id)
         ORDER BY started_at DESC, seq DESC LIMIT 1",
    )
    .bind(session_id)
    .bind(turn)
    .fetch_optional(&mut *tx)
    .await?;
    let end = end.ok_or(StoreError::NotFound)?;
    sqlx::query("UPDATE chat_sessions SET active_turn = ? WHERE id = ?")
        .bind(&end)
        .bind(session_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::super::{
        MessageRole, MessageStatus, NewMessage, Path, TurnEnd, TurnState, add_summary, all_rows, begin_retry,
        begin_turn, conversation, conversation_with_summary, create_conversation, end_turn, history, history_between,
        history_page, turn_start,
    };
    use super::*;

    /// A whole turn at `place`: the person's `asked` (none for a retry), answered `said`.
    async fn turn(store: &PrivateStore, id: &str, asked: Option<&str>, said: &str, place: Place<'_>) {
        match asked {
            Some(asked) => begin_turn(store, &"chat".into(), &id.into(), asked, place).await.unwrap(),
            None => begin_retry(store, &"chat".into(), &id.into(), place).await.unwrap(),
        };
        let last = NewMessage {
            session_id: "chat",
            turn_id: id,
            role: MessageRole::Assistant,
            text: said,
            status: MessageStatus::Done,
            ..NewMessage::default()
        };
        let end = TurnEnd { state: TurnState::Done, error_code: None, error_message: None };
        assert!(end_turn(store, &last, &end, "", None, TurnState::Running).await.unwrap());
    }

    async fn texts(store: &PrivateStore) -> Vec<String> {
        history(store, &"chat".into()).await.unwrap().into_iter().map(|m| m.text).collect()
    }

    #[tokio::test]
    async fn another_version_of_a_turn_ends_the_path_and_the_first_stays_whole() {
        let (_dir, store) = PrivateStore::scratch().await;
        create_conversation(&store, &"chat".into(), "main", None).await.unwrap();
        turn(&store, "t1", Some("Hi"), "Hello", Place::Next).await;
        turn(&store, "t2", Some("Plan a trip"), "To Lyon?", Place::Next).await;
        turn(&store, "t3", Some("Yes"), "Booked", Place::Next).await;

        // The second message edited: the new version follows the first turn, not the third.
        turn(&store, "t2b", Some("Plan a walk"), "Along the river?", Place::InPlaceOf("t2")).await;
        assert_eq!(texts(&store).await, ["Hi", "Hello", "Plan a walk", "Along the river?"]);
        let versions = versions(&store, &"chat".into()).await.unwrap();
        assert_eq!(versions, [Versions { turn: "t2b".into(), versions: vec!["t2".into(), "t2b".into()] }]);
        assert_eq!(conversation(&store, &"chat".into()).await.unwrap().unwrap().active_turn.as_deref(), Some("t2b"));
        // Nothing was rewritten: every row of every version is still there.
        assert_eq!(all_rows(&store, &"chat".into()).await.unwrap().len(), 8);

        // Back to the first version: its path ends where it ended, at the third turn.
        assert_eq!(choose_version(&store, &"chat".into(), "t2").await.unwrap(), "t3");
        assert_eq!(texts(&store).await, ["Hi", "Hello", "Plan a trip", "To Lyon?", "Yes", "Booked"]);
        // And what a turn starts from follows the choice, not what is kept in memory.
        let start = turn_start(&store, &"chat".into()).await.unwrap().unwrap();
        assert_eq!(start.history.last().unwrap().text, "Booked");

        // A conversation has no turn of another's.
        assert!(matches!(choose_version(&store, &"chat".into(), "elsewhere").await, Err(StoreError::NotFound)));
        assert!(matches!(
            begin_turn(&store, &"chat".into(), &"t9".into(), "x", Place::InPlaceOf("elsewhere")).await,
            Err(StoreError::NotFound)
        ));
    }

    #[tokio::test]
    async fn a_first_turn_has_versions_too_and_a_regenerated_reply_answers_the_same_message() {
        let (_dir, store) = PrivateStore::scratch().await;
        create_conversation(&store, &"chat".into(), "main", None).await.unwrap();
        turn(&store, "t1", Some("Hi"), "Hello", Place::Next).await;
        turn(&store, "t1b", Some("Hi"), "Hi there", Place::InPlaceOf("t1")).await;
        turn(&store, "t1c", Some("Hello!"), "Hey", Place::InPlaceOf("t1b")).await;
        let versions_now = versions(&store, &"chat".into()).await.unwrap();
        assert_eq!(versions_now[0].versions, ["t1", "t1b", "t1c"]);
        assert_eq!(texts(&store).await, ["Hello!", "Hey"]);
        // The conversation goes on: the first turn's versions are still found from its end,
        // and a later turn regenerated adds its own, in the path's order.
        turn(&store, "u2", Some("And?"), "And so on", Place::Next).await;
        turn(&store, "u3", Some("More"), "Yes", Place::Next).await;
        turn(&store, "u3b", Some("More"), "Indeed", Place::InPlaceOf("u3")).await;
        turn(&store, "u4", Some("Done"), "Bye", Place::Next).await;
        let found = versions(&store, &"chat".into()).await.unwrap();
        assert_eq!(
            found,
            [
                Versions { turn: "t1c".into(), versions: vec!["t1".into(), "t1b".into(), "t1c".into()] },
                Versions { turn: "u3b".into(), versions: vec!["u3".into(), "u3b".into()] },
            ]
        );
        choose_version(&store, &"chat".into(), "t1").await.unwrap();
        let found = versions(&store, &"chat".into()).await.unwrap();
        assert_eq!(found, [Versions { turn: "t1".into(), versions: vec!["t1".into(), "t1b".into(), "t1c".into()] }]);
        choose_version(&store, &"chat".into(), "t1c").await.unwrap();

        // A version without a message of its own (another try of a retry) answers the last
        // message on its path.
        choose_version(&store, &"chat".into(), "t1").await.unwrap();
        let asked = begin_retry(&store, &"chat".into(), &"t2".into(), Place::Next).await.unwrap();
        let rows = history(&store, &"chat".into()).await.unwrap();
        assert_eq!(rows.iter().find(|m| m.id == asked).unwrap().turn_id, "t1");
    }

    #[tokio::test]
    async fn a_summary_stands_in_only_on_the_path_it_was_made_on() {
        let (_dir, store) = PrivateStore::scratch().await;
        create_conversation(&store, &"chat".into(), "main", None).await.unwrap();
        turn(&store, "t1", Some("one"), "1", Place::Next).await;
        turn(&store, "t2", Some("two"), "2", Place::Next).await;
        turn(&store, "t3", Some("three"), "3", Place::Next).await;
        let rows = history(&store, &"chat".into()).await.unwrap();
        let upto_t2 = rows[3].id;
        add_summary(&store, &"chat".into(), rows[1].id, "about one").await.unwrap();
        add_summary(&store, &"chat".into(), upto_t2, "about one and two").await.unwrap();
        let summary = |store: &PrivateStore| {
            let store = store.clone();
            async move { conversation_with_summary(&store, &"chat".into()).await.unwrap().unwrap().1.map(|s| s.text) }
        };
        assert_eq!(summary(&store).await.as_deref(), Some("about one and two"));
        // A turn starts from the rows after the summary, not the whole conversation.
        let start = turn_start(&store, &"chat".into()).await.unwrap().unwrap();
        assert_eq!(start.history.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(), ["three", "3"]);
        let after = history_between(&store, &"chat".into(), Path::Active, rows[1].id, i64::MAX).await.unwrap();
        assert_eq!(after.len(), 4, "the rows after the first turn");

        // A version of the second turn: the summary of turns one and two holds words this
        // path does not, so the one before it stands in.
        turn(&store, "t2b", Some("deux"), "2", Place::InPlaceOf("t2")).await;
        assert_eq!(summary(&store).await.as_deref(), Some("about one"));
        choose_version(&store, &"chat".into(), "t3").await.unwrap();
        assert_eq!(summary(&store).await.as_deref(), Some("about one and two"));

        // The rows of a turn's own path, whatever is active: what its requests were made of.
        choose_version(&store, &"chat".into(), "t2b").await.unwrap();
        let then: Vec<String> = history_between(&store, &"chat".into(), Path::Of("t3"), 0, i64::MAX)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.text)
            .collect();
        assert_eq!(then, ["one", "1", "two", "2", "three", "3"]);
    }

    #[tokio::test]
    async fn a_page_of_the_history_is_whole_turns_of_the_active_path_read_back_from_its_end() {
        let (_dir, store) = PrivateStore::scratch().await;
        let chat: ConversationId = "chat".into();
        create_conversation(&store, &chat, "main", None).await.unwrap();
        let page = |before: Option<&'static str>, turns: u32| {
            let (store, chat) = (store.clone(), chat.clone());
            async move {
                let rows = history_page(&store, &chat, before, turns).await?;
                Ok::<_, StoreError>(rows.into_iter().map(|m| m.text).collect::<Vec<_>>())
            }
        };
        // Nothing said yet: an empty page, not an error.
        assert!(page(None, 5).await.unwrap().is_empty());
        for (id, asked) in [("t1", "one"), ("t2", "two"), ("t3", "three"), ("t4", "four")] {
            turn(&store, id, Some(asked), &asked.to_uppercase(), Place::Next).await;
        }
        turn(&store, "t3b", Some("trois"), "TROIS", Place::InPlaceOf("t3")).await;
        // The active path is t1, t2, t3b: the latest two turns, then the one before them.
        assert_eq!(page(None, 2).await.unwrap(), ["two", "TWO", "trois", "TROIS"]);
        assert_eq!(page(Some("t2"), 2).await.unwrap(), ["one", "ONE"]);
        assert!(page(Some("t1"), 2).await.unwrap().is_empty(), "nothing before the first turn");
        // Every page put together is the history, whatever the page's size.
        assert_eq!(page(None, 50).await.unwrap(), texts(&store).await);
        // A page before a turn of another version follows that turn's own path.
        assert_eq!(page(Some("t4"), 1).await.unwrap(), ["three", "THREE"]);
        // A turn the conversation does not have.
        assert!(matches!(page(Some("elsewhere"), 2).await, Err(StoreError::NotFound)));
    }
}
