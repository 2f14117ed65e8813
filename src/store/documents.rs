//! Documents (docs/architecture.md §12.2): a person's inside their encrypted file, the
//! shared pool's in the shared database, both the same shape — the original bytes in
//! chunks, the text of each page once read, and a full-text index of the pages. Nothing of
//! a document is written anywhere else, temporary files included.
//!
//! Duplicates are found by SHA-256 within one pool: a person's hashes stay in their file,
//! where only they can ask whether they already hold something.

use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;

use super::private::PrivateStore;
use super::snapshots::{Touched, Writing};
use super::system::SystemStore;
use super::{StoreError, timestamp};
use crate::extract::Kind;
use crate::ids::{DocumentId, UserId};

pub use super::memories::Pool;

/// The bytes of one stored chunk of an original: a download reads one row at a time.
pub const CHUNK_BYTES: usize = 1 << 20;
/// The most pages of one document a search returns.
pub const PAGES_PER_DOCUMENT: u32 = 3;
/// The longest name a document keeps, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// The longest passage a page is cut into for search by meaning, in characters: a few
/// sentences, well inside what the embedding model reads at once.
pub const PASSAGE_CHARS: usize = 600;

/// Where a document is being read, or why it holds no text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "DocumentStatus")]
pub enum Status {
    /// Its text is being read in the background.
    Reading,
    /// Its text is read and searchable.
    Ready,
    /// It was read and holds no text (a photo, a scan without OCR); the detail says why.
    NoText,
    /// Reading it failed; the detail says why.
    Failed,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Self::Reading => "reading",
            Self::Ready => "ready",
            Self::NoText => "no_text",
            Self::Failed => "failed",
        }
    }

    fn parse(text: &str) -> Self {
        match text {
            "ready" => Self::Ready,
            "no_text" => Self::NoText,
            "failed" => Self::Failed,
            _ => Self::Reading,
        }
    }
}

/// A document as lists and the viewer show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Document {
    pub id: DocumentId,
    pub name: String,
    pub pool: Pool,
    pub kind: Kind,
    /// The type its bytes are served with (HTML as plain text).
    pub media_type: String,
    /// In bytes.
    pub size: i64,
    /// How many pages of text it has, once read.
    pub pages: Option<i64>,
    pub status: Status,
    pub status_detail: Option<String>,
    pub created_at: String,
    /// Who put it in the shared pool; `None` in a person's own.
    pub uploaded_by: Option<UserId>,
    pub uploaded_by_name: Option<String>,
    /// Shared by someone whose words stay on this machine: never sent to a remote provider.
    pub local_only: bool,
}

/// A page that matched a search.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(rename = "DocumentHit")]
pub struct Hit {
    pub document: DocumentId,
    pub name: String,
    pub pool: Pool,
    /// Counted from 1.
    pub page: i64,
    /// A few words around the matches, each match wrapped in `**`.
    pub snippet: String,
    /// Higher is better; comparable within one answer only.
    pub score: f64,
    pub local_only: bool,
}

/// One page's text (`GET /api/documents/{id}/text?page=`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(rename = "DocumentText")]
pub struct PageText {
    pub document: DocumentId,
    /// Counted from 1.
    pub page: i64,
    pub pages: i64,
    pub text: String,
}

/// A passage waiting for its vector.
#[derive(Debug, Clone)]
pub struct Passage {
    pub id: i64,
    pub text: String,
}

/// A page's text cut into passages of at most [`PASSAGE_CHARS`], at the ends of lines or
/// sentences where it can, otherwise between words; blank ones are dropped.
pub fn passages(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for piece in pieces(page) {
        if current.chars().count() + piece.chars().count() > PASSAGE_CHARS && !current.trim().is_empty() {
            out.push(current.trim().to_owned());
            current.clear();
        }
        current.push_str(piece);
        // A piece longer than a passage alone is cut between words.
        while current.chars().count() > PASSAGE_CHARS {
            let at = current.char_indices().nth(PASSAGE_CHARS).map_or(current.len(), |(at, _)| at);
            let cut = current[..at].rfind(char::is_whitespace).filter(|&c| c > 0).unwrap_or(at);
            out.push(current[..cut].trim().to_owned());
            current = current[cut..].to_owned();
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out.retain(|p| !p.is_empty());
    out
}

/// The text in pieces that end at a line's end or after a sentence's full stop.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let bytes = rest.as_bytes();
        let mut end = rest.len();
        for (i, &b) in bytes.iter().enumerate() {
            let sentence_end = matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_some_and(u8::is_ascii_whitespace);
            if b == b'\n' || sentence_end {
                end = i + 1 + usize::from(sentence_end);
                break;
            }
        }
        let (piece, after) = rest.split_at(end);
        rest = after;
        Some(piece)
    })
}

/// A passage shortened for a snippet: its first words, at most about 240 characters.
fn snippet_of(text: &str) -> String {
    const MOST: usize = 240;
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= MOST {
        return flat;
    }
    let cut: String = flat.chars().take(MOST).collect();
    let cut = cut.rfind(' ').map_or(cut.as_str(), |at| &cut[..at]);
    format!("{cut}…")
}

/// One pool of documents: a person's own file, or the shared database.
#[derive(Clone, Copy)]
pub enum Shelf<'a> {
    Own(&'a PrivateStore),
    Shared(&'a SystemStore),
}

impl Shelf<'_> {
    pub fn pool(self) -> Pool {
        match self {
            Self::Own(_) => Pool::Private,
            Self::Shared(_) => Pool::Shared,
        }
    }

    fn db(&self) -> &SqlitePool {
        match self {
            Self::Own(space) => space.pool(),
            Self::Shared(system) => system.pool(),
        }
    }

    /// `name` of this pool's tables: `documents`, or `shared_documents`.
    fn table(self, name: &str) -> String {
        match self {
            Self::Own(_) => name.to_owned(),
            Self::Shared(_) => format!("shared_{name}"),
        }
    }

    fn writing(&self) -> Option<Writing> {
        match self {
            Self::Own(space) => Some(space.writing(Touched::Nothing)),
            Self::Shared(_) => None,
        }
    }
}

/// A document about to be kept.
pub struct NewDocument<'a> {
    pub name: &'a str,
    pub kind: Kind,
    pub bytes: &'a [u8],
    pub sha256: &'a str,
    pub uploaded_by: Option<&'a UserId>,
    pub local_only: bool,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: DocumentId,
    name: String,
    kind: String,
    size: i64,
    pages: Option<i64>,
    status: String,
    status_detail: Option<String>,
    created_at: String,
    uploaded_by: Option<UserId>,
    local_only: bool,
}

impl Row {
    fn into_document(self, pool: Pool, names: &std::collections::HashMap<String, String>) -> Document {
        let kind = Kind::parse(&self.kind).unwrap_or(Kind::Text);
        let uploaded_by_name = self.uploaded_by.as_ref().and_then(|id| names.get(id.as_str()).cloned());
        Document {
            id: self.id,
            name: self.name,
            pool,
            kind,
            media_type: kind.media_type().to_owned(),
            size: self.size,
            pages: self.pages,
            status: Status::parse(&self.status),
            status_detail: self.status_detail,
            created_at: self.created_at,
            uploaded_by: self.uploaded_by,
            uploaded_by_name,
            local_only: self.local_only,
        }
    }
}

const COLUMNS: &str = "id, name, kind, size, pages, status, status_detail, created_at, uploaded_by, local_only";

/// The name a document keeps: its last path part, without control characters, cut to
/// [`MAX_NAME_CHARS`]; "Untitled" when nothing is left.
pub fn clean_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let cleaned: String = last.chars().filter(|c| !c.is_control()).take(MAX_NAME_CHARS).collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() { "Untitled".to_owned() } else { cleaned.to_owned() }
}

/// Document `id` wherever the person of `space` may read it, with the pool it is in: their
/// own first, then the shared one.
pub async fn find<'a>(
    space: &'a PrivateStore,
    system: &'a SystemStore,
    id: &DocumentId,
) -> Result<Option<(Shelf<'a>, Document)>, StoreError> {
    for shelf in [Shelf::Own(space), Shelf::Shared(system)] {
        if let Some(document) = shelf.get(id).await? {
            return Ok(Some((shelf, document)));
        }
    }
    Ok(None)
}

/// Members' names by id, to say who shared what.
async fn names(system: Option<&SystemStore>) -> Result<std::collections::HashMap<String, String>, StoreError> {
    let Some(system) = system else { return Ok(Default::default()) };
    let rows: Vec<(String, String)> = sqlx::query_as("SELECT id, name FROM users").fetch_all(system.pool()).await?;
    Ok(rows.into_iter().collect())
}

impl Shelf<'_> {
    fn system(&self) -> Option<&SystemStore> {
        match self {
            Self::Own(_) => None,
            Self::Shared(system) => Some(system),
        }
    }

    async fn documents(&self, filter: &str, bind: Option<&str>) -> Result<Vec<Document>, StoreError> {
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM {} {filter} ORDER BY created_at DESC, id DESC",
            self.table("documents")
        ));
        let mut query = sqlx::query_as::<_, Row>(sql);
        if let Some(bind) = bind {
            query = query.bind(bind.to_owned());
        }
        let rows = query.fetch_all(self.db()).await?;
        let names = names(self.system()).await?;
        Ok(rows.into_iter().map(|row| row.into_document(self.pool(), &names)).collect())
    }

    /// Every document of this pool, newest first.
    pub async fn list(&self) -> Result<Vec<Document>, StoreError> {
        self.documents("", None).await
    }

    pub async fn get(&self, id: &DocumentId) -> Result<Option<Document>, StoreError> {
        Ok(self.documents("WHERE id = ?", Some(id.as_str())).await?.pop())
    }

    /// The document already kept with these bytes, if any.
    pub async fn find(&self, sha256: &str) -> Result<Option<Document>, StoreError> {
        Ok(self.documents("WHERE sha256 = ?", Some(sha256)).await?.pop())
    }

    /// Documents still waiting for their text: read again after a restart or a lock.
    pub async fn reading(&self) -> Result<Vec<Document>, StoreError> {
        self.documents("WHERE status = 'reading'", None).await
    }

    /// Keeps a new document, its bytes in chunks, as `reading`: all of it or nothing.
    /// [`StoreError::Exists`] when these bytes are kept already.
    pub async fn create(&self, new: &NewDocument<'_>) -> Result<Document, StoreError> {
        let id = DocumentId::generate();
        let _writing = self.writing();
        let mut tx = self.db().begin().await?;
        let insert = sqlx::AssertSqlSafe(format!(
            "INSERT INTO {} (id, name, kind, size, sha256, status, created_at, uploaded_by, local_only)
             VALUES (?, ?, ?, ?, ?, 'reading', ?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
            self.table("documents")
        ));
        let inserted = sqlx::query(insert)
            .bind(&id)
            .bind(clean_name(new.name))
            .bind(new.kind.as_str())
            .bind(new.bytes.len() as i64)
            .bind(new.sha256)
            .bind(timestamp())
            .bind(new.uploaded_by)
            .bind(new.local_only)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if inserted == 0 {
            return Err(StoreError::Exists);
        }
        let chunk = format!("INSERT INTO {} (document, seq, bytes) VALUES (?, ?, ?)", self.table("document_chunks"));
        for (seq, bytes) in new.bytes.chunks(CHUNK_BYTES).enumerate() {
            sqlx::query(sqlx::AssertSqlSafe(chunk.as_str()))
                .bind(&id)
                .bind(seq as i64)
                .bind(bytes)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        self.get(&id).await?.ok_or(StoreError::NotFound)
    }

    /// How many chunks the original of `id` has.
    pub async fn chunk_count(&self, id: &DocumentId) -> Result<i64, StoreError> {
        let sql =
            sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {} WHERE document = ?", self.table("document_chunks")));
        Ok(sqlx::query_scalar(sql).bind(id).fetch_one(self.db()).await?)
    }

    /// Chunk `seq` of the original of `id`.
    pub async fn chunk(&self, id: &DocumentId, seq: i64) -> Result<Option<Vec<u8>>, StoreError> {
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT bytes FROM {} WHERE document = ? AND seq = ?",
            self.table("document_chunks")
        ));
        Ok(sqlx::query_scalar(sql).bind(id).bind(seq).fetch_optional(self.db()).await?)
    }

    /// The whole original of `id`, for reading its text.
    pub async fn bytes(&self, id: &DocumentId) -> Result<Vec<u8>, StoreError> {
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT bytes FROM {} WHERE document = ? ORDER BY seq",
            self.table("document_chunks")
        ));
        let chunks: Vec<Vec<u8>> = sqlx::query_scalar(sql).bind(id).fetch_all(self.db()).await?;
        Ok(chunks.concat())
    }

    /// Records how reading `id` ended: its pages of text (replacing any), the status and
    /// why. A document deleted meanwhile stays deleted.
    pub async fn finish(
        &self,
        id: &DocumentId,
        pages: &[String],
        status: Status,
        detail: Option<&str>,
    ) -> Result<(), StoreError> {
        let _writing = self.writing();
        let mut tx = self.db().begin().await?;
        let update = sqlx::AssertSqlSafe(format!(
            "UPDATE {} SET status = ?, status_detail = ?, pages = ? WHERE id = ?",
            self.table("documents")
        ));
        let updated = sqlx::query(update)
            .bind(status.as_str())
            .bind(detail)
            .bind(pages.len() as i64)
            .bind(id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if updated == 0 {
            return Err(StoreError::NotFound);
        }
        let pages_table = self.table("document_pages");
        let clear = sqlx::AssertSqlSafe(format!("DELETE FROM {pages_table} WHERE document = ?"));
        sqlx::query(clear).bind(id).execute(&mut *tx).await?;
        let passages_table = self.table("document_passages");
        let clear = sqlx::AssertSqlSafe(format!("DELETE FROM {passages_table} WHERE document = ?"));
        sqlx::query(clear).bind(id).execute(&mut *tx).await?;
        let insert = format!("INSERT INTO {pages_table} (document, page, text) VALUES (?, ?, ?)");
        let passage = format!("INSERT INTO {passages_table} (document, page, text) VALUES (?, ?, ?)");
        for (index, text) in pages.iter().enumerate() {
            let page = index as i64 + 1;
            sqlx::query(sqlx::AssertSqlSafe(insert.as_str())).bind(id).bind(page).bind(text).execute(&mut *tx).await?;
            for part in passages(text) {
                sqlx::query(sqlx::AssertSqlSafe(passage.as_str()))
                    .bind(id)
                    .bind(page)
                    .bind(part)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Up to `limit` passages with no vector from `model` (the embedding model's checksum).
    pub async fn unembedded(&self, model: &str, limit: usize) -> Result<Vec<Passage>, StoreError> {
        let sql = sqlx::AssertSqlSafe(format!(
            // Three ranges of the vector_model index, so no row's vector is read to find them.
            "SELECT id, text FROM {} WHERE vector_model IS NULL OR vector_model < ?1 OR vector_model > ?1 LIMIT ?2",
            self.table("document_passages")
        ));
        let rows: Vec<(i64, String)> = sqlx::query_as(sql).bind(model).bind(limit as i64).fetch_all(self.db()).await?;
        Ok(rows.into_iter().map(|(id, text)| Passage { id, text }).collect())
    }

    /// Records `passage`'s vector from `model`, unless the passage is gone meanwhile.
    pub async fn set_vector(&self, passage: &Passage, model: &str, vector: &[f32]) -> Result<(), StoreError> {
        let _writing = self.writing();
        let sql = sqlx::AssertSqlSafe(format!(
            "UPDATE {} SET vector = ?, vector_model = ? WHERE id = ? AND text = ?",
            self.table("document_passages")
        ));
        sqlx::query(sql)
            .bind(super::vectors::to_bytes(vector))
            .bind(model)
            .bind(passage.id)
            .bind(&passage.text)
            .execute(self.db())
            .await?;
        Ok(())
    }

    /// The pages whose passages lie nearest `query` (a vector from `model`), best first,
    /// each page once with its nearest passage as the snippet and their cosine as the score.
    pub async fn nearest(&self, model: &str, query: &[f32], limit: usize) -> Result<Vec<Hit>, StoreError> {
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT p.document, p.page, p.text, p.vector, d.name, d.local_only
             FROM {} p JOIN {} d ON d.id = p.document WHERE p.vector_model = ?",
            self.table("document_passages"),
            self.table("documents")
        ));
        let rows: Vec<(DocumentId, i64, String, Vec<u8>, String, bool)> =
            sqlx::query_as(sql).bind(model).fetch_all(self.db()).await?;
        let mut best: std::collections::HashMap<(DocumentId, i64), Hit> = std::collections::HashMap::new();
        for (document, page, text, vector, name, local_only) in rows {
            let Some(score) = super::vectors::dot(&super::vectors::from_bytes(&vector), query) else { continue };
            let score = f64::from(score);
            let key = (document.clone(), page);
            if best.get(&key).is_some_and(|hit| hit.score >= score) {
                continue;
            }
            let snippet = snippet_of(&text);
            best.insert(key, Hit { document, name, pool: self.pool(), page, snippet, score, local_only });
        }
        let mut hits: Vec<Hit> = best.into_values().collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.page.cmp(&b.page)));
        hits.truncate(limit);
        Ok(hits)
    }

    /// The text of `page` (from 1) of `id`, with how many pages it has; `None` when the
    /// document or the page is not there.
    pub async fn page(&self, id: &DocumentId, page: i64) -> Result<Option<PageText>, StoreError> {
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT p.text, d.pages FROM {} p JOIN {} d ON d.id = p.document WHERE p.document = ? AND p.page = ?",
            self.table("document_pages"),
            self.table("documents")
        ));
        let row: Option<(String, Option<i64>)> =
            sqlx::query_as(sql).bind(id).bind(page).fetch_optional(self.db()).await?;
        Ok(row.map(|(text, pages)| PageText { document: id.clone(), page, pages: pages.unwrap_or(0), text }))
    }

    /// Pages `first..=last` (from 1) of `id`, in order, each with its number.
    pub async fn pages(&self, id: &DocumentId, first: i64, last: i64) -> Result<Vec<(i64, String)>, StoreError> {
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT page, text FROM {} WHERE document = ? AND page BETWEEN ? AND ? ORDER BY page",
            self.table("document_pages")
        ));
        Ok(sqlx::query_as(sql).bind(id).bind(first).bind(last).fetch_all(self.db()).await?)
    }

    /// How many characters of text `id` has, all pages together.
    pub async fn text_chars(&self, id: &DocumentId) -> Result<i64, StoreError> {
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT coalesce(sum(length(text)), 0) FROM {} WHERE document = ?",
            self.table("document_pages")
        ));
        Ok(sqlx::query_scalar(sql).bind(id).fetch_one(self.db()).await?)
    }

    /// Pages holding any telling word of `query` (as a word or the start of one), best
    /// first: what ranking by words brings to a search that also goes by meaning, where a
    /// question rarely repeats every word of its answer.
    pub async fn search_any(&self, query: &str, limit: u32) -> Result<Vec<Hit>, StoreError> {
        let words = super::memories::words(query);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let expression = words.iter().map(|w| super::notes::prefix_term(w)).collect::<Vec<_>>();
        self.matching(&expression.join(" OR "), limit).await
    }

    /// Pages matching the FTS5 `expression`, best first.
    async fn matching(&self, expression: &str, limit: u32) -> Result<Vec<Hit>, StoreError> {
        let (index, pages, documents) =
            (self.table("document_pages_search"), self.table("document_pages"), self.table("documents"));
        // At most PAGES_PER_DOCUMENT pages of one document, so that a long book holding the
        // words on every page does not crowd out the letter that holds them once.
        let sql = sqlx::AssertSqlSafe(format!(
            "SELECT id, name, page, snippet, -rank, local_only FROM (
                 SELECT *, row_number() OVER (PARTITION BY id ORDER BY rank, page) AS nth FROM (
                     SELECT d.id, d.name, p.page, snippet({index}, 0, '**', '**', '…', 24) AS snippet,
                            bm25({index}) AS rank, d.local_only, d.created_at
                     FROM {index} JOIN {pages} p ON p.id = {index}.rowid JOIN {documents} d ON d.id = p.document
                     WHERE {index} MATCH ?))
             WHERE nth <= {PAGES_PER_DOCUMENT}
             ORDER BY rank, created_at DESC, page
             LIMIT ?"
        ));
        let rows: Vec<(DocumentId, String, i64, String, f64, bool)> =
            sqlx::query_as(sql).bind(expression).bind(limit).fetch_all(self.db()).await?;
        Ok(rows
            .into_iter()
            .map(|(document, name, page, snippet, score, local_only)| Hit {
                document,
                name,
                pool: self.pool(),
                page,
                snippet,
                score,
                local_only,
            })
            .collect())
    }

    /// Deletes `id` with its bytes, pages and passages; its words leave the index at once.
    pub async fn delete(&self, id: &DocumentId) -> Result<(), StoreError> {
        let _writing = self.writing();
        let mut tx = self.db().begin().await?;
        // Pages one by one through the trigger that takes their tokens out (secure-delete).
        for table in ["document_pages", "document_passages", "document_chunks"] {
            let sql = sqlx::AssertSqlSafe(format!("DELETE FROM {} WHERE document = ?", self.table(table)));
            sqlx::query(sql).bind(id).execute(&mut *tx).await?;
        }
        let sql = sqlx::AssertSqlSafe(format!("DELETE FROM {} WHERE id = ?", self.table("documents")));
        let deleted = sqlx::query(sql).bind(id).execute(&mut *tx).await?.rows_affected();
        if deleted == 0 {
            return Err(StoreError::NotFound);
        }
        tx.commit().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_cut_into_passages_at_sentences_and_lines() {
        assert!(passages("  \n ").is_empty());
        assert_eq!(passages("Rent is due. Pay on the first."), ["Rent is due. Pay on the first."]);
        let sentence = "The deposit is returned within two months of the end of the lease. ";
        let page = sentence.repeat(20);
        let parts = passages(&page);
        assert!(parts.len() >= 2, "{parts:?}");
        for part in &parts {
            assert!(part.chars().count() <= PASSAGE_CHARS, "{part}");
            assert!(part.ends_with("lease."), "cut at a sentence's end: {part}");
        }
        assert_eq!(parts.join(" "), page.trim());
    }

    #[test]
    fn a_passage_without_stops_is_cut_between_words() {
        let page = "é word ".repeat(300);
        let parts = passages(&page);
        assert!(parts.iter().all(|p| p.chars().count() <= PASSAGE_CHARS && !p.starts_with(' ')), "{parts:?}");
        assert_eq!(parts.join(" ").split_whitespace().count(), 600);
    }

    #[test]
    fn a_snippet_keeps_whole_words() {
        assert_eq!(snippet_of("a  short\npassage"), "a short passage");
        let long = snippet_of(&"lease ".repeat(100));
        assert!(long.ends_with("lease…") && long.chars().count() <= 241, "{long}");
    }
}
