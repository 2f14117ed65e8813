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
        let insert = format!("INSERT INTO {pages_table} (document, page, text) VALUES (?, ?, ?)");
        for (index, text) in pages.iter().enumerate() {
            sqlx::query(sqlx::AssertSqlSafe(insert.as_str()))
                .bind(id)
                .bind(index as i64 + 1)
                .bind(text)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
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

    /// Pages holding every word of `query` (as a word or the start of one), best first.
    pub async fn search(&self, query: &str, limit: u32) -> Result<Vec<Hit>, StoreError> {
        let Some(expression) = super::notes::match_expression(query) else { return Ok(Vec::new()) };
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
