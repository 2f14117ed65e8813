//! A person's notes in their encrypted file, with full-text search (FTS5) over title and
//! body. Callers pass the person's open [`PrivateStore`]; nothing here reaches the shared
//! database, and the search index lives inside the same encrypted file.

use serde::Serialize;

use super::private::PrivateStore;
use super::snapshots::Touched;
use super::{StoreError, timestamp};

/// The longest title a note may have, in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// The longest text a note may have, in characters (64 KiB worth).
pub const MAX_BODY_CHARS: usize = 64 * 1024;

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
pub struct Note {
    pub id: i64,
    pub title: String,
    pub body: String,
    pub created_at: String,
    pub updated_at: String,
    /// Written while outside content (a fetched page) was in the conversation: reading it
    /// brings that content into the reader's conversation (§8.4's injection hygiene).
    pub outside: bool,
}

/// A line of the list of notes: enough to pick one without reading them all.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
pub struct NoteSummary {
    pub id: i64,
    pub title: String,
    pub updated_at: String,
    /// The length of the body in characters.
    pub chars: i64,
    pub outside: bool,
}

/// A note that matched a search.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
#[ts(rename = "NoteHit")]
pub struct Hit {
    pub id: i64,
    pub title: String,
    /// A few words of the body around the matches, each match wrapped in `**`; the start
    /// of the body when only the title matched.
    pub snippet: String,
    pub outside: bool,
}

const NOTE_COLUMNS: &str = "id, title, body, created_at, updated_at, outside";

/// Whether a title and body (either left out when unchanged) fit a note; the reason
/// when they do not, in words a person or a model can act on.
pub fn check(title: Option<&str>, body: Option<&str>) -> Result<(), &'static str> {
    if let Some(title) = title {
        if title.trim().is_empty() {
            return Err("a note needs a title");
        }
        if title.chars().count() > MAX_TITLE_CHARS {
            return Err("a note's title is at most 200 characters; give a shorter one");
        }
    }
    if body.is_some_and(|body| body.chars().count() > MAX_BODY_CHARS) {
        return Err("a note's text is at most 65536 characters; split it into several notes");
    }
    Ok(())
}

/// A new note; `outside` when outside content was in the conversation that wrote it.
pub async fn create(store: &PrivateStore, title: &str, body: &str, outside: bool) -> Result<Note, StoreError> {
    check(Some(title), Some(body)).map_err(StoreError::WrongState)?;
    let _writing = store.writing(Touched::Nothing);
    let now = timestamp();
    let sql = sqlx::AssertSqlSafe(format!(
        "INSERT INTO notes (title, body, created_at, updated_at, outside) VALUES (?, ?, ?, ?, ?) RETURNING {NOTE_COLUMNS}"
    ));
    Ok(sqlx::query_as(sql).bind(title).bind(body).bind(&now).bind(&now).bind(outside).fetch_one(store.pool()).await?)
}

/// Replaces the title, the body, or both, of note `id`. A note once written with outside
/// content stays marked.
pub async fn update(
    store: &PrivateStore,
    id: i64,
    title: Option<&str>,
    body: Option<&str>,
    outside: bool,
) -> Result<Note, StoreError> {
    check(title, body).map_err(StoreError::WrongState)?;
    let _writing = store.writing(Touched::Nothing);
    let sql = sqlx::AssertSqlSafe(format!(
        "UPDATE notes SET title = coalesce(?, title), body = coalesce(?, body), updated_at = ?, outside = outside OR ?
         WHERE id = ? RETURNING {NOTE_COLUMNS}"
    ));
    let note = sqlx::query_as(sql)
        .bind(title)
        .bind(body)
        .bind(timestamp())
        .bind(outside)
        .bind(id)
        .fetch_optional(store.pool())
        .await?;
    note.ok_or(StoreError::NotFound)
}

pub async fn get(store: &PrivateStore, id: i64) -> Result<Option<Note>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("SELECT {NOTE_COLUMNS} FROM notes WHERE id = ?"));
    Ok(sqlx::query_as(sql).bind(id).fetch_optional(store.pool()).await?)
}

/// Every note whole, oldest first: for the person's export.
pub async fn all(store: &PrivateStore) -> Result<Vec<Note>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("SELECT {NOTE_COLUMNS} FROM notes ORDER BY id"));
    Ok(sqlx::query_as(sql).fetch_all(store.pool()).await?)
}

/// Every note, most recently changed first.
pub async fn list(store: &PrivateStore) -> Result<Vec<NoteSummary>, StoreError> {
    // SQLite's length() of TEXT counts characters, as `chars().count()` does.
    Ok(sqlx::query_as(
        "SELECT id, title, updated_at, length(body) AS chars, outside FROM notes ORDER BY updated_at DESC, id DESC",
    )
    .fetch_all(store.pool())
    .await?)
}

/// Notes holding every word of `query` (as a word or the start of one), best match
/// first. Any text is a valid query; one without words finds nothing.
pub async fn search(store: &PrivateStore, query: &str, limit: u32) -> Result<Vec<Hit>, StoreError> {
    let Some(expression) = match_expression(query) else { return Ok(Vec::new()) };
    // A word in the title counts for more than one in the body.
    Ok(sqlx::query_as(
        "SELECT n.id, n.title, snippet(notes_search, 1, '**', '**', '…', 16) AS snippet, n.outside
         FROM notes_search JOIN notes n ON n.id = notes_search.rowid
         WHERE notes_search MATCH ?
         ORDER BY bm25(notes_search, 4.0, 1.0), n.id DESC
         LIMIT ?",
    )
    .bind(expression)
    .bind(limit)
    .fetch_all(store.pool())
    .await?)
}

/// Deletes note `id`; its tokens leave the search index in the same statement.
pub async fn delete(store: &PrivateStore, id: i64) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::Nothing);
    let deleted = sqlx::query("DELETE FROM notes WHERE id = ?").bind(id).execute(store.pool()).await?.rows_affected();
    if deleted == 0 { Err(StoreError::NotFound) } else { Ok(()) }
}

/// Turns what someone typed into an FTS5 expression that cannot be a syntax error: each
/// word becomes a quoted string (inner quotes doubled) matching as a prefix, and the words
/// are joined by spaces, which FTS5 reads as AND. So `AND`, `NOT`, `col:`, `*`, `^` and
/// stray quotes are searched for as text, never obeyed. Control characters separate words
/// like spaces: FTS5 would read a NUL as the end of the expression, and its tokenizer
/// never indexes them anyway. None when there is no word at all. Conversations' search
/// quotes its queries the same way.
pub(super) fn match_expression(query: &str) -> Option<String> {
    let words: Vec<String> = query
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|word| !word.is_empty())
        .map(prefix_term)
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// One word as an FTS5 term: quoted (a quote inside doubled), so operators and column
/// names in it are searched for as text, and a prefix, so "bread" finds "breadcrumbs".
pub(super) fn prefix_term(word: &str) -> String {
    format!("\"{}\"*", word.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_word_becomes_a_quoted_prefix_and_the_words_must_all_match() {
        assert_eq!(match_expression("milk  bread\n").as_deref(), Some("\"milk\"* \"bread\"*"));
    }

    #[test]
    fn fts_operators_and_quotes_in_the_query_are_searched_for_as_text() {
        assert_eq!(match_expression("a OR b").as_deref(), Some("\"a\"* \"OR\"* \"b\"*"));
        assert_eq!(match_expression("say \"hi").as_deref(), Some("\"say\"* \"\"\"hi\"*"));
        assert_eq!(match_expression("title:x NEAR(y)").as_deref(), Some("\"title:x\"* \"NEAR(y)\"*"));
    }

    #[test]
    fn control_characters_separate_words_and_never_reach_the_expression() {
        assert_eq!(match_expression("milk\0bread\u{7}").as_deref(), Some("\"milk\"* \"bread\"*"));
        assert_eq!(match_expression("\0"), None);
    }

    #[test]
    fn a_query_without_words_is_no_query() {
        assert_eq!(match_expression(""), None);
        assert_eq!(match_expression(" \t\n "), None);
    }

    #[test]
    fn a_title_must_be_present_and_short_and_a_body_within_its_limit() {
        assert!(check(Some("Shopping"), Some("milk")).is_ok());
        assert!(check(None, None).is_ok(), "nothing to change is nothing wrong");
        assert_eq!(check(Some("  "), None), Err("a note needs a title"));
        assert!(check(Some(&"é".repeat(MAX_TITLE_CHARS)), None).is_ok(), "limits count characters, not bytes");
        assert!(
            check(Some(&"t".repeat(MAX_TITLE_CHARS + 1)), None).unwrap_err().contains(&MAX_TITLE_CHARS.to_string())
        );
        assert!(check(None, Some(&"b".repeat(MAX_BODY_CHARS))).is_ok());
        assert!(check(None, Some(&"b".repeat(MAX_BODY_CHARS + 1))).unwrap_err().contains(&MAX_BODY_CHARS.to_string()));
    }

    mod in_a_private_file {
        use super::super::*;

        fn ids(hits: &[Hit]) -> Vec<i64> {
            hits.iter().map(|h| h.id).collect()
        }

        #[tokio::test]
        async fn a_note_is_written_read_changed_and_deleted_by_id() {
            let (_dir, store) = PrivateStore::scratch().await;
            let note = create(&store, "Shopping", "milk", false).await.unwrap();
            assert_eq!(get(&store, note.id).await.unwrap().unwrap().body, "milk");

            let changed = update(&store, note.id, None, Some("milk, bread"), false).await.unwrap();
            assert_eq!((changed.title.as_str(), changed.body.as_str()), ("Shopping", "milk, bread"));
            assert_eq!(changed.created_at, note.created_at);

            delete(&store, note.id).await.unwrap();
            assert!(get(&store, note.id).await.unwrap().is_none());
            assert!(matches!(delete(&store, note.id).await, Err(StoreError::NotFound)));
            assert!(matches!(update(&store, note.id, Some("x"), None, false).await, Err(StoreError::NotFound)));
        }

        #[tokio::test]
        async fn the_list_shows_the_latest_change_first_with_the_length_in_characters() {
            let (_dir, store) = PrivateStore::scratch().await;
            let first = create(&store, "First", "café", false).await.unwrap();
            let second = create(&store, "Second", "", false).await.unwrap();
            update(&store, first.id, Some("First, again"), None, false).await.unwrap();
            let list = list(&store).await.unwrap();
            assert_eq!(list.iter().map(|n| n.id).collect::<Vec<_>>(), [first.id, second.id]);
            assert_eq!((list[0].title.as_str(), list[0].chars), ("First, again", 4));
        }

        #[tokio::test]
        async fn search_finds_every_word_by_prefix_without_accents_and_follows_changes() {
            let (_dir, store) = PrivateStore::scratch().await;
            let trip = create(&store, "Trip", "Train to Lyon, then the café near the station", false).await.unwrap();
            let shop = create(&store, "Shopping", "milk, bread, coffee", false).await.unwrap();

            assert_eq!(ids(&search(&store, "cafe station", 10).await.unwrap()), [trip.id]);
            assert_eq!(ids(&search(&store, "shop", 10).await.unwrap()), [shop.id], "a word's start finds it");
            assert!(search(&store, "milk lyon", 10).await.unwrap().is_empty(), "every word must match");
            let hit = &search(&store, "lyon", 10).await.unwrap()[0];
            assert!(hit.snippet.contains("**Lyon**"), "{}", hit.snippet);

            update(&store, shop.id, None, Some("tea"), false).await.unwrap();
            assert!(search(&store, "milk", 10).await.unwrap().is_empty());
            assert_eq!(ids(&search(&store, "tea", 10).await.unwrap()), [shop.id]);
            delete(&store, trip.id).await.unwrap();
            assert!(search(&store, "lyon", 10).await.unwrap().is_empty());
        }

        #[tokio::test]
        async fn a_title_match_ranks_above_a_body_match() {
            let (_dir, store) = PrivateStore::scratch().await;
            let in_body = create(&store, "Groceries", "remember the garden hose", false).await.unwrap();
            let in_title = create(&store, "Garden", "tomatoes and beans", false).await.unwrap();
            assert_eq!(ids(&search(&store, "garden", 10).await.unwrap()), [in_title.id, in_body.id]);
            assert_eq!(search(&store, "garden", 1).await.unwrap().len(), 1);
        }

        #[tokio::test]
        async fn any_text_is_a_query_that_cannot_fail() {
            let (_dir, store) = PrivateStore::scratch().await;
            let note = create(&store, "Odd", "say \"hi\" AND NOT (x) col:y ^z", false).await.unwrap();
            for query in ["\"", "AND", "NOT (x", "col:y", "^z", "*", "?!", "\"hi\"", "NEAR(", "\0"] {
                let result = search(&store, query, 10).await;
                assert!(result.is_ok(), "{query:?} failed: {:?}", result.err());
            }
            assert_eq!(ids(&search(&store, "hi\" AND", 10).await.unwrap()), [note.id]);
            assert!(search(&store, "   ", 10).await.unwrap().is_empty());
        }

        #[tokio::test]
        async fn a_title_or_body_over_the_limit_is_refused() {
            let (_dir, store) = PrivateStore::scratch().await;
            let long = "t".repeat(MAX_TITLE_CHARS + 1);
            assert!(matches!(create(&store, &long, "", false).await, Err(StoreError::WrongState(_))));
            assert!(matches!(create(&store, " ", "", false).await, Err(StoreError::WrongState(_))));
            assert!(list(&store).await.unwrap().is_empty());
        }
    }
}
