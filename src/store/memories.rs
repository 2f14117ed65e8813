//! Memories (§10, docs/architecture.md "Memory"): durable sentences about a person, another
//! member or how this instance runs, in two pools of one shape — private ones in the
//! owner's encrypted file (`memories`), shared ones in the shared database
//! (`shared_memories`, readable by every member and the administrator). Every memory says
//! about whom, who wrote it (a model, never claimed to be a person, or a person) and until
//! when; the sweep deletes an expired one. Erasing deletes the row and its search tokens
//! (FTS5 `secure-delete`, the databases' `secure_delete`) and truncates the WAL, so the
//! sentence does not survive on disk.

use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;

use super::private::PrivateStore;
use super::snapshots::Touched;
use super::system::SystemStore;
use super::{StoreError, checkpoint, timestamp};
pub use crate::ids::MemoryId;
use crate::ids::{ConversationId, UserId};

/// The longest memory, in characters: one sentence, as it should read months from now.
pub const MAX_CHARS: usize = 300;

/// Which pool a memory lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Pool {
    /// The owner's encrypted file: only they can read it.
    Private,
    /// The shared database: every member and the administrator can read it.
    Shared,
}

impl Pool {
    fn table(self) -> &'static str {
        match self {
            Self::Private => "memories",
            Self::Shared => "shared_memories",
        }
    }
}

/// Whom a memory is about, as the API and the `remember` tool name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[ts(rename = "MemorySubject")]
pub enum Subject {
    /// The person whose memory it is (in the shared pool: stored as about them by id).
    #[serde(rename = "self")]
    Own,
    /// Another member (or, read back from the shared pool, anyone) by their id.
    Member { id: UserId },
    /// How this instance runs.
    Instance,
}

impl Subject {
    /// The subject as stored in a pool: a shared memory "about self" names its owner.
    fn stored(&self, pool: Pool, owner: &UserId) -> (&'static str, Option<String>) {
        match (self, pool) {
            (Self::Own, Pool::Private) => ("self", None),
            (Self::Own, Pool::Shared) => ("member", Some(owner.to_string())),
            (Self::Member { id }, Pool::Private) if id == owner => ("self", None),
            (Self::Member { id }, _) => ("member", Some(id.to_string())),
            (Self::Instance, _) => ("instance", None),
        }
    }

    fn read(kind: &str, id: Option<String>) -> Self {
        match (kind, id) {
            ("member", Some(id)) => Self::Member { id: UserId::stored(id) },
            ("instance", _) => Self::Instance,
            _ => Self::Own,
        }
    }

    /// Whether this is about `person`, as seen by `viewer` (whose "self" is themselves).
    pub fn is_about(&self, person: &UserId, viewer: &UserId) -> bool {
        match self {
            Self::Own => person == viewer,
            Self::Member { id } => id == person,
            Self::Instance => false,
        }
    }
}

/// Who wrote a memory. A model's memory names the agent and the conversation it came from;
/// nothing a model sends can make it a person's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(rename = "MemoryAuthor")]
pub enum Author {
    Model { agent: String },
    Person { id: UserId },
}

impl Author {
    /// The author as stored: `author_kind` and `author_id`.
    fn stored(&self) -> (&'static str, String) {
        match self {
            Self::Model { agent } => ("model", agent.clone()),
            Self::Person { id } => ("person", id.to_string()),
        }
    }
}

/// A memory as the API shows it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct Memory {
    pub id: MemoryId,
    pub text: String,
    pub pool: Pool,
    pub subject: Subject,
    pub author: Author,
    /// The conversation a model's memory came from.
    pub source_session: Option<ConversationId>,
    /// Whose turn or hand put a shared memory there (who may edit it beside an
    /// administrator); for a private one, its owner.
    pub owner: UserId,
    pub created_at: String,
    pub updated_at: String,
    /// None while pinned.
    pub expires_at: Option<String>,
    pub pinned: bool,
    /// Written by or about someone whose role keeps their words on this machine: never
    /// sent to a remote provider.
    pub local_only: bool,
    /// Its source conversation held outside content (§8.4).
    pub outside: bool,
    /// How well it matched a query, higher is better; only on ranked results.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub score: Option<f64>,
    /// The names of the person it is about and of the person who wrote it, where the API
    /// shows it (a member reads names, not ids; the store leaves them empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub about_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub author_name: Option<String>,
}

/// A memory about to be written.
#[derive(Debug, Clone)]
pub struct NewMemory<'a> {
    pub text: &'a str,
    pub pool: Pool,
    pub subject: &'a Subject,
    pub author: &'a Author,
    pub source_session: Option<&'a ConversationId>,
    pub outside: bool,
    pub local_only: bool,
    /// How long it is kept; `None` pins it.
    pub keep_days: Option<i64>,
}

/// The pools one person reaches: their open file and the shared database.
#[derive(Clone, Copy)]
pub struct Pools<'a> {
    pub owner: &'a UserId,
    pub space: &'a PrivateStore,
    pub system: &'a SystemStore,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: MemoryId,
    text: String,
    subject_kind: String,
    subject_id: Option<String>,
    author_kind: String,
    author_id: String,
    owner: Option<String>,
    source_session: Option<ConversationId>,
    created_at: String,
    updated_at: String,
    expires_at: Option<String>,
    pinned: bool,
    local_only: bool,
    outside: bool,
    score: Option<f64>,
}

impl Row {
    fn into_memory(self, pool: Pool, owner: &UserId) -> Memory {
        let author = match self.author_kind.as_str() {
            "person" => Author::Person { id: UserId::stored(self.author_id) },
            _ => Author::Model { agent: self.author_id },
        };
        Memory {
            id: self.id,
            text: self.text,
            pool,
            subject: Subject::read(&self.subject_kind, self.subject_id),
            author,
            source_session: self.source_session,
            owner: self.owner.map_or_else(|| owner.clone(), UserId::stored),
            created_at: self.created_at,
            updated_at: self.updated_at,
            expires_at: self.expires_at,
            pinned: self.pinned,
            local_only: self.local_only,
            outside: self.outside,
            score: self.score,
            about_name: None,
            author_name: None,
        }
    }
}

/// Whether a sentence can be kept as a memory; the reason, in words a model can act on,
/// when it cannot.
pub fn check(text: &str) -> Result<&str, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("a memory needs its sentence in \"text\"".into());
    }
    let chars = text.chars().count();
    if chars > MAX_CHARS {
        return Err(format!(
            "a memory is one sentence of at most {MAX_CHARS} characters; this one has {chars}: keep only the durable fact"
        ));
    }
    if sentences(text) > 1 {
        return Err("a memory is one sentence; keep the one durable fact, or remember each separately".into());
    }
    Ok(text)
}

/// Sentences in a text: ends of sentence (`.`, `!`, `?`) followed by more words. "Dr. Rossi"
/// or "3.5" do not end one: the next character must be a space and then an upper-case letter.
fn sentences(text: &str) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let ends =
        chars.windows(3).filter(|w| matches!(w[0], '.' | '!' | '?') && w[1] == ' ' && w[2].is_uppercase()).count();
    // An abbreviation before the end ("Mr. Smith") is not an end of sentence.
    let abbreviations = ["Mr. ", "Mrs. ", "Ms. ", "Dr. ", "St. ", "Sr. ", "Jr. ", "Prof. "]
        .iter()
        .map(|a| text.matches(a).count())
        .sum::<usize>();
    1 + ends.saturating_sub(abbreviations)
}

/// The moment `days` from `now`, as stored.
pub fn days_from_now(days: i64) -> String {
    let later = now() + time::Duration::days(days);
    later.format(&time::format_description::well_known::Rfc3339).expect("UTC timestamps format")
}

/// Now, for expiry: in debug builds `SKALD_DEBUG_NOW` (RFC 3339) moves the clock, so a
/// test can see the sweep delete what has expired.
fn now() -> time::OffsetDateTime {
    #[cfg(debug_assertions)]
    if let Some(moved) = std::env::var("SKALD_DEBUG_NOW")
        .ok()
        .and_then(|at| time::OffsetDateTime::parse(&at, &time::format_description::well_known::Rfc3339).ok())
    {
        return moved;
    }
    time::OffsetDateTime::now_utc()
}

fn now_text() -> String {
    now().format(&time::format_description::well_known::Rfc3339).expect("UTC timestamps format")
}

const COLUMNS: &str = "id, text, subject_kind, subject_id, author_kind, author_id, source_session, created_at, \
     updated_at, expires_at, pinned, local_only, outside";

/// The columns a [`Row`] reads from `pool`'s table, each named through `table.`; a private
/// memory's owner is the file's, filled in after.
fn select(pool: Pool) -> String {
    let table = pool.table();
    let columns: Vec<String> = COLUMNS.split(", ").map(|c| format!("{table}.{c}")).collect();
    let owner = match pool {
        Pool::Private => "NULL".to_owned(),
        Pool::Shared => format!("{table}.owner"),
    };
    format!("SELECT {}, {owner} AS owner", columns.join(", "))
}

impl Pools<'_> {
    fn db(&self, pool: Pool) -> &SqlitePool {
        match pool {
            Pool::Private => self.space.pool(),
            Pool::Shared => self.system.pool(),
        }
    }

    /// Writes a memory.
    pub async fn create(&self, new: &NewMemory<'_>) -> Result<Memory, StoreError> {
        let text = check(new.text)
            .map_err(|_| StoreError::WrongState("a memory is one sentence of at most 300 characters"))?;
        let (subject_kind, subject_id) = new.subject.stored(new.pool, self.owner);
        let (author_kind, author_id) = new.author.stored();
        let id = MemoryId::generate();
        let created = timestamp();
        let expires = new.keep_days.map(days_from_now);
        let _writing = (new.pool == Pool::Private).then(|| self.space.writing(Touched::Nothing));
        let (owner_column, owner_value) = match new.pool {
            Pool::Private => ("", None),
            Pool::Shared => (", owner", Some(self.owner.to_string())),
        };
        let sql = sqlx::AssertSqlSafe(format!(
            "INSERT INTO {} (id, text, subject_kind, subject_id, author_kind, author_id, source_session, created_at, \
             updated_at, expires_at, pinned, local_only, outside{owner_column}) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?{})",
            new.pool.table(),
            if owner_value.is_some() { ", ?" } else { "" }
        ));
        let mut query = sqlx::query(sql)
            .bind(&id)
            .bind(text)
            .bind(subject_kind)
            .bind(subject_id)
            .bind(author_kind)
            .bind(author_id)
            .bind(new.source_session)
            .bind(&created)
            .bind(&created)
            .bind(&expires)
            .bind(new.keep_days.is_none())
            .bind(new.local_only)
            .bind(new.outside);
        if let Some(owner) = owner_value {
            query = query.bind(owner);
        }
        query.execute(self.db(new.pool)).await?;
        self.get(&id).await?.ok_or(StoreError::NotFound)
    }

    /// One memory this person can read, from whichever pool holds it.
    pub async fn get(&self, id: &MemoryId) -> Result<Option<Memory>, StoreError> {
        for pool in [Pool::Private, Pool::Shared] {
            let sql =
                sqlx::AssertSqlSafe(format!("{}, NULL AS score FROM {} WHERE id = ?", select(pool), pool.table()));
            let row: Option<Row> = sqlx::query_as(sql).bind(id).fetch_optional(self.db(pool)).await?;
            if let Some(row) = row {
                return Ok(Some(row.into_memory(pool, self.owner)));
            }
        }
        Ok(None)
    }

    /// Every memory this person can read (their private pool, then the shared one), newest
    /// first, optionally only one pool.
    pub async fn list(&self, only: Option<Pool>) -> Result<Vec<Memory>, StoreError> {
        let mut all = Vec::new();
        for pool in [Pool::Private, Pool::Shared].into_iter().filter(|p| only.is_none_or(|o| o == *p)) {
            let sql = sqlx::AssertSqlSafe(format!(
                "{}, NULL AS score FROM {} ORDER BY created_at DESC, id",
                select(pool),
                pool.table()
            ));
            let rows: Vec<Row> = sqlx::query_as(sql).fetch_all(self.db(pool)).await?;
            all.extend(rows.into_iter().map(|r| r.into_memory(pool, self.owner)));
        }
        all.sort_by(|a, b| b.created_at.cmp(&a.created_at));
        Ok(all)
    }

    /// The memories whose words match `query` (full-text, any telling word), best first,
    /// with a score in (0, 1]: the share of the query's telling words the memory holds.
    pub async fn search(&self, query: &str, only: Option<Pool>, limit: usize) -> Result<Vec<Memory>, StoreError> {
        let wanted = words(query);
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let fts = wanted.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(" OR ");
        // The two files at once: a turn's start waits on this.
        let in_pool = async |pool: Pool| {
            if only.is_some_and(|o| o != pool) {
                return Ok(Vec::new());
            }
            let table = pool.table();
            let sql = sqlx::AssertSqlSafe(format!(
                "{}, -bm25({table}_search) AS score FROM {table}_search JOIN {table} ON {table}.rowid = {table}_search.rowid \
                 WHERE {table}_search MATCH ? ORDER BY bm25({table}_search) LIMIT ?",
                select(pool)
            ));
            let rows: Vec<Row> = sqlx::query_as(sql)
                .bind(&fts)
                .bind(i64::try_from(limit).unwrap_or(i64::MAX))
                .fetch_all(self.db(pool))
                .await?;
            Ok::<_, StoreError>(rows.into_iter().map(|r| r.into_memory(pool, self.owner)).collect::<Vec<_>>())
        };
        let (private, shared) = tokio::try_join!(in_pool(Pool::Private), in_pool(Pool::Shared))?;
        let mut found = private;
        found.extend(shared);
        // bm25 is not comparable across two indexes: score by the share of query words held.
        for memory in &mut found {
            let held = words(&memory.text);
            let share = wanted.iter().filter(|w| held.contains(w)).count() as f64 / wanted.len() as f64;
            memory.score = Some(share);
        }
        found.sort_by(|a, b| b.score.partial_cmp(&a.score).unwrap_or(std::cmp::Ordering::Equal));
        found.truncate(limit);
        Ok(found)
    }

    /// Changes a memory's text or pin (pinning clears its expiry; unpinning starts a new
    /// one of `keep_days`).
    pub async fn update(
        &self,
        id: &MemoryId,
        text: Option<&str>,
        pinned: Option<bool>,
        keep_days: i64,
    ) -> Result<Memory, StoreError> {
        let memory = self.get(id).await?.ok_or(StoreError::NotFound)?;
        if let Some(text) = text {
            check(text).map_err(|_| StoreError::WrongState("a memory is one sentence of at most 300 characters"))?;
        }
        let expires = match pinned {
            Some(true) => None,
            Some(false) if memory.pinned => Some(days_from_now(keep_days)),
            _ => memory.expires_at.clone(),
        };
        let _writing = (memory.pool == Pool::Private).then(|| self.space.writing(Touched::Nothing));
        let sql = sqlx::AssertSqlSafe(format!(
            "UPDATE {} SET text = coalesce(?, text), pinned = coalesce(?, pinned), expires_at = ?, updated_at = ? WHERE id = ?",
            memory.pool.table()
        ));
        sqlx::query(sql)
            .bind(text.map(str::trim))
            .bind(pinned)
            .bind(expires)
            .bind(timestamp())
            .bind(id)
            .execute(self.db(memory.pool))
            .await?;
        if text.is_some() {
            checkpoint(self.db(memory.pool)).await?;
        }
        self.get(id).await?.ok_or(StoreError::NotFound)
    }

    /// Moves a private memory to the shared pool as it is (same id, author, expiry), then
    /// erases it from the private file: the owner's confirmed choice, never made silently.
    pub async fn promote(&self, id: &MemoryId) -> Result<(), StoreError> {
        let memory = self.get(id).await?.filter(|m| m.pool == Pool::Private).ok_or(StoreError::NotFound)?;
        let (subject_kind, subject_id) = memory.subject.stored(Pool::Shared, self.owner);
        let (author_kind, author_id) = memory.author.stored();
        sqlx::query(
            "INSERT INTO shared_memories (id, text, subject_kind, subject_id, author_kind, author_id, owner,
                 source_session, outside, local_only, pinned, created_at, updated_at, expires_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            // The vector is made again for the shared pool at the next upkeep or search.
        )
        .bind(&memory.id)
        .bind(&memory.text)
        .bind(subject_kind)
        .bind(subject_id)
        .bind(author_kind)
        .bind(author_id)
        .bind(self.owner)
        .bind(&memory.source_session)
        .bind(memory.outside)
        .bind(memory.local_only)
        .bind(memory.pinned)
        .bind(&memory.created_at)
        .bind(timestamp())
        .bind(&memory.expires_at)
        .execute(self.system.pool())
        .await?;
        let _writing = self.space.writing(Touched::Nothing);
        sqlx::query("DELETE FROM memories WHERE id = ?").bind(id).execute(self.space.pool()).await?;
        checkpoint(self.space.pool()).await
    }

    /// Erases one memory for good.
    pub async fn delete(&self, id: &MemoryId) -> Result<Memory, StoreError> {
        let memory = self.get(id).await?.ok_or(StoreError::NotFound)?;
        let _writing = (memory.pool == Pool::Private).then(|| self.space.writing(Touched::Nothing));
        let sql = sqlx::AssertSqlSafe(format!("DELETE FROM {} WHERE id = ?", memory.pool.table()));
        sqlx::query(sql).bind(id).execute(self.db(memory.pool)).await?;
        checkpoint(self.db(memory.pool)).await?;
        Ok(memory)
    }

    /// Deletes every memory whose time has passed in both pools; returns how many went.
    pub async fn sweep(&self) -> Result<u64, StoreError> {
        let mut gone = 0;
        {
            let _writing = self.space.writing(Touched::Nothing);
            gone += sweep_pool(self.space.pool(), Pool::Private).await?;
        }
        gone += sweep_shared(self.system).await?;
        Ok(gone)
    }
}

/// A memory whose sentence has no vector from the embedding model in use.
#[derive(Debug, Clone, PartialEq)]
pub struct Unembedded {
    pub pool: Pool,
    pub id: MemoryId,
    pub text: String,
}

/// A pool's vectors by memory, shared between the cache and a search.
type Vectors = std::sync::Arc<Vec<(MemoryId, Vec<f32>)>>;

/// One pool's vectors as last read, kept while its database is open, so a search compares
/// in memory rather than reading every row again. The version a trigger counts up on every
/// change to the pool's vectors (`<table>_vectors_version`) tells when it is stale.
#[derive(Default)]
pub struct VectorCache {
    held: std::sync::Mutex<Option<CachedVectors>>,
}

struct CachedVectors {
    version: i64,
    model: String,
    rows: Vectors,
}

impl std::fmt::Debug for VectorCache {
    /// Never the vectors: they are derived from what people said.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorCache").finish_non_exhaustive()
    }
}

impl VectorCache {
    fn get(&self, version: i64, model: &str) -> Option<Vectors> {
        let held = self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        held.as_ref().filter(|c| c.version == version && c.model == model).map(|c| c.rows.clone())
    }

    fn put(&self, version: i64, model: &str, rows: Vectors) {
        let mut held = self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *held = Some(CachedVectors { version, model: model.to_owned(), rows });
    }
}

impl Pools<'_> {
    fn vectors(&self, pool: Pool) -> &VectorCache {
        match pool {
            Pool::Private => self.space.vectors(),
            Pool::Shared => self.system.vectors(),
        }
    }

    /// Every vector `model` made in `pool`, from the cache unless a write changed them.
    async fn pool_vectors(&self, pool: Pool, model: &str) -> Result<Vectors, StoreError> {
        let table = pool.table();
        let sql = sqlx::AssertSqlSafe(format!("SELECT n FROM {table}_vectors_version"));
        let version: i64 = sqlx::query_scalar(sql).fetch_one(self.db(pool)).await?;
        if let Some(rows) = self.vectors(pool).get(version, model) {
            return Ok(rows);
        }
        let sql = sqlx::AssertSqlSafe(format!("SELECT id, vector FROM {table} WHERE vector_model = ?"));
        let stored: Vec<(MemoryId, Vec<u8>)> = sqlx::query_as(sql).bind(model).fetch_all(self.db(pool)).await?;
        let rows: Vec<(MemoryId, Vec<f32>)> =
            stored.into_iter().map(|(id, bytes)| (id, super::vectors::from_bytes(&bytes))).collect();
        let rows = std::sync::Arc::new(rows);
        self.vectors(pool).put(version, model, rows.clone());
        Ok(rows)
    }

    /// Up to `limit` memories, in both pools, with no vector from `model` (the embedding
    /// model's checksum): new ones, ones whose text changed, ones another model embedded.
    pub async fn unembedded(&self, model: &str, limit: usize) -> Result<Vec<Unembedded>, StoreError> {
        let mut found = Vec::new();
        for pool in [Pool::Private, Pool::Shared] {
            let left = limit.saturating_sub(found.len());
            if left == 0 {
                break;
            }
            let sql = sqlx::AssertSqlSafe(format!(
                // Three ranges of the vector_model index, so no row's vector is read to find them.
                "SELECT id, text FROM {} WHERE vector_model IS NULL OR vector_model < ?1 OR vector_model > ?1 LIMIT ?2",
                pool.table()
            ));
            let rows: Vec<(MemoryId, String)> =
                sqlx::query_as(sql).bind(model).bind(left as i64).fetch_all(self.db(pool)).await?;
            found.extend(rows.into_iter().map(|(id, text)| Unembedded { pool, id, text }));
        }
        Ok(found)
    }

    /// Keeps `vector` as memory `id`'s, made by `model` from `text`: unless its text has
    /// changed since, when the vector would be stale.
    pub async fn set_vector(&self, memory: &Unembedded, model: &str, vector: &[f32]) -> Result<(), StoreError> {
        let _writing = (memory.pool == Pool::Private).then(|| self.space.writing(Touched::Nothing));
        let sql = sqlx::AssertSqlSafe(format!(
            "UPDATE {} SET vector = ?, vector_model = ? WHERE id = ? AND text = ?",
            memory.pool.table()
        ));
        sqlx::query(sql)
            .bind(super::vectors::to_bytes(vector))
            .bind(model)
            .bind(&memory.id)
            .bind(&memory.text)
            .execute(self.db(memory.pool))
            .await?;
        Ok(())
    }

    /// The memories nearest `query` (a unit vector from `model`), best first, with their
    /// cosine as the score: every vector is compared, which stays fast at the tens of
    /// thousands a person keeps.
    pub async fn nearest(
        &self,
        model: &str,
        query: &[f32],
        only: Option<Pool>,
        limit: usize,
    ) -> Result<Vec<Memory>, StoreError> {
        let mut scored: Vec<(f32, Pool, MemoryId)> = Vec::new();
        for pool in [Pool::Private, Pool::Shared].into_iter().filter(|p| only.is_none_or(|o| o == *p)) {
            for (id, vector) in self.pool_vectors(pool, model).await?.iter() {
                if let Some(score) = super::vectors::dot(vector, query) {
                    scored.push((score, pool, id.clone()));
                }
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.truncate(limit);
        let mut found = Vec::with_capacity(scored.len());
        for (score, pool, id) in scored {
            let sql = sqlx::AssertSqlSafe(format!("{}, ? AS score FROM {} WHERE id = ?", select(pool), pool.table()));
            let row: Option<Row> =
                sqlx::query_as(sql).bind(f64::from(score)).bind(&id).fetch_optional(self.db(pool)).await?;
            found.extend(row.map(|row| row.into_memory(pool, self.owner)));
        }
        Ok(found)
    }
}

impl Pools<'_> {
    /// Every memory about `subject` that this person may erase: in their private pool, and
    /// in the shared pool those about it that they own, are the subject of, or (as an
    /// administrator) any. Returns what was erased; the caller redacts and queues.
    pub async fn erase_about(&self, subject: &Subject, administrator: bool) -> Result<Vec<Memory>, StoreError> {
        let mut erased = Vec::new();
        for pool in [Pool::Private, Pool::Shared] {
            let (kind, id) = subject.stored(pool, self.owner);
            let sql = sqlx::AssertSqlSafe(format!(
                "{}, NULL AS score FROM {} WHERE subject_kind = ? AND subject_id IS ?",
                select(pool),
                pool.table()
            ));
            let rows: Vec<Row> = sqlx::query_as(sql).bind(kind).bind(id).fetch_all(self.db(pool)).await?;
            let mine = |m: &Memory| {
                pool == Pool::Private
                    || administrator
                    || m.owner == *self.owner
                    || m.subject.is_about(self.owner, self.owner)
            };
            let found: Vec<Memory> =
                rows.into_iter().map(|r| r.into_memory(pool, self.owner)).filter(|m| mine(m)).collect();
            if found.is_empty() {
                continue;
            }
            let _writing = (pool == Pool::Private).then(|| self.space.writing(Touched::Nothing));
            let mut tx = self.db(pool).begin().await?;
            for memory in &found {
                let sql = sqlx::AssertSqlSafe(format!("DELETE FROM {} WHERE id = ?", pool.table()));
                sqlx::query(sql).bind(&memory.id).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            checkpoint(self.db(pool)).await?;
            erased.extend(found);
        }
        Ok(erased)
    }
}

/// What an erased memory's sentence reads as wherever it appeared.
pub const ERASED: &str = "[erased memory]";

/// Redacts each sentence wherever it appears in this person's file (messages, the calls'
/// arguments, cards, summaries), as written and as JSON escapes it once or twice (a call's
/// arguments are JSON text inside JSON), then truncates the WAL. Returns the rows changed.
pub async fn redact(space: &PrivateStore, sentences: &[String]) -> Result<u64, StoreError> {
    let _writing = space.writing(Touched::Unknown);
    let mut changed = 0;
    let mut tx = space.pool().begin_with("BEGIN IMMEDIATE").await?;
    for sentence in sentences.iter().filter(|s| !s.is_empty()) {
        let once = escaped(sentence);
        let twice = escaped(&once);
        let forms = [sentence.as_str(), once.as_str(), twice.as_str()];
        for (table, column, mark) in [
            ("messages", "text", ", redacted = 1"),
            ("messages", "tool_calls", ", redacted = 1"),
            ("cards", "arguments", ""),
            ("cards", "shows", ""),
            ("summaries", "text", ""),
        ] {
            let sql = sqlx::AssertSqlSafe(format!(
                "UPDATE {table} SET {column} = replace(replace(replace({column}, ?1, ?4), ?2, ?4), ?3, ?4){mark}
                 WHERE instr({column}, ?1) > 0 OR instr({column}, ?2) > 0 OR instr({column}, ?3) > 0"
            ));
            changed += sqlx::query(sql)
                .bind(forms[0])
                .bind(forms[1])
                .bind(forms[2])
                .bind(ERASED)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        }
    }
    tx.commit().await?;
    checkpoint(space.pool()).await?;
    Ok(changed)
}

/// The sentence of a memory this file's `remember` call wrote, found through the call's
/// result (which names the memory's id) and its card (which holds the arguments): how a
/// queued erasure, which holds only the id, finds what to redact.
pub async fn written_here(space: &PrivateStore, id: &MemoryId) -> Result<Option<String>, StoreError> {
    let arguments: Option<String> = sqlx::query_scalar(
        "SELECT c.arguments FROM messages m JOIN cards c ON c.call_id = m.tool_call_id
         WHERE m.role = 'tool' AND m.tool_name = 'remember' AND m.text LIKE ? ESCAPE '\\' LIMIT 1",
    )
    .bind(format!("remembered {}:%", id.replace('_', "\\_")))
    .fetch_optional(space.pool())
    .await?;
    Ok(arguments
        .and_then(|a| serde_json::from_str::<serde_json::Value>(&a).ok())
        .and_then(|a| a["text"].as_str().map(|t| t.trim().to_owned())))
}

/// The text JSON would put between the quotes of this string.
fn escaped(text: &str) -> String {
    let quoted = serde_json::to_string(text).expect("a string serialises");
    quoted[1..quoted.len() - 1].to_owned()
}

/// When a person is removed: every shared memory about them is erased, and each other
/// person's file is queued to erase its memories about them and to redact the shared
/// ones its turns proposed. Returns how many shared memories went.
pub async fn forget_person(system: &SystemStore, removed: &UserId) -> Result<u64, StoreError> {
    let now = timestamp();
    let mut tx = system.pool().begin().await?;
    let proposed: Vec<(String, String)> = sqlx::query_as(
        "SELECT owner, id FROM shared_memories WHERE subject_kind = 'member' AND subject_id = ? AND owner <> ?",
    )
    .bind(removed)
    .bind(removed)
    .fetch_all(&mut *tx)
    .await?;
    for (owner, id) in &proposed {
        sqlx::query("INSERT INTO memory_erasures (user_id, what, queued_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
            .bind(owner)
            .bind(id)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
    }
    let gone = sqlx::query("DELETE FROM shared_memories WHERE subject_kind = 'member' AND subject_id = ?")
        .bind(removed)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    sqlx::query(
        "INSERT INTO memory_erasures (user_id, what, queued_at) SELECT id, 'member:' || ?, ? FROM users WHERE id <> ?
         ON CONFLICT DO NOTHING",
    )
    .bind(removed)
    .bind(&now)
    .bind(removed)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    checkpoint(system.pool()).await?;
    Ok(gone)
}

/// Erasures waiting for a locked person's file (system `memory_erasures`): ids only.
pub mod queue {
    use super::{MemoryId, StoreError, SystemStore, UserId, timestamp};

    /// Queues redacting memory `id`'s sentence in `user`'s file.
    pub async fn redaction(system: &SystemStore, user: &UserId, id: &MemoryId) -> Result<(), StoreError> {
        add(system, user, id.as_str()).await
    }

    /// Queues erasing everything about `about` (a member's id) in `user`'s file.
    pub async fn subject(system: &SystemStore, user: &UserId, about: &UserId) -> Result<(), StoreError> {
        add(system, user, &format!("member:{about}")).await
    }

    async fn add(system: &SystemStore, user: &UserId, what: &str) -> Result<(), StoreError> {
        sqlx::query("INSERT INTO memory_erasures (user_id, what, queued_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
            .bind(user)
            .bind(what)
            .bind(timestamp())
            .execute(system.pool())
            .await?;
        Ok(())
    }

    /// What waits for `user`'s file.
    pub async fn waiting(system: &SystemStore, user: &UserId) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT what FROM memory_erasures WHERE user_id = ? ORDER BY queued_at")
            .bind(user)
            .fetch_all(system.pool())
            .await?)
    }

    /// Marks one queued erasure applied.
    pub async fn done(system: &SystemStore, user: &UserId, what: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM memory_erasures WHERE user_id = ? AND what = ?")
            .bind(user)
            .bind(what)
            .execute(system.pool())
            .await?;
        Ok(())
    }
}

/// Deletes every shared memory whose time has passed; run while the app runs.
pub async fn sweep_shared(system: &SystemStore) -> Result<u64, StoreError> {
    sweep_pool(system.pool(), Pool::Shared).await
}

async fn sweep_pool(db: &SqlitePool, pool: Pool) -> Result<u64, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!(
        "DELETE FROM {} WHERE pinned = 0 AND expires_at IS NOT NULL AND expires_at <= ?",
        pool.table()
    ));
    let gone = sqlx::query(sql).bind(now_text()).execute(db).await?.rows_affected();
    if gone > 0 {
        checkpoint(db).await?;
    }
    Ok(gone)
}

/// Words too common to tell one memory from another, in the page's languages.
const COMMON: &[&str] = &[
    "the", "and", "for", "are", "was", "were", "you", "your", "she", "her", "his", "him", "they", "them", "their",
    "what", "which", "who", "whom", "when", "where", "why", "how", "that", "this", "these", "those", "with", "from",
    "have", "has", "had", "does", "did", "can", "could", "would", "should", "will", "about", "into", "there", "here",
    "any", "all", "not", "but", "its", "our", "out", "again", "remember", "know", "tell", "like", "les", "des", "une",
    "est", "que", "qui", "pour", "dans", "avec", "sur", "pas", "mon", "ton", "son", "della", "delle", "che", "per",
    "con", "non", "una", "sono",
];

/// The words of a text that tell memories apart: lower-case letters and digits, at least
/// three characters, not among the most common words.
/// The telling words of `text`, lowercased, once each: three letters or more, the most
/// common words left out.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !COMMON.contains(&w.as_str()))
        .collect();
    words.sort();
    words.dedup();
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_is_one_short_sentence() {
        assert_eq!(check("  Ada is allergic to peanuts. ").unwrap(), "Ada is allergic to peanuts.");
        assert!(check("Dr. Rossi sees Ada on Tuesdays at 3.5 past.").is_ok());
        assert!(check("Ada likes tea. She hates coffee.").unwrap_err().contains("one sentence"));
        assert!(check(&"a".repeat(301)).unwrap_err().contains("300"));
        assert!(check(" ").is_err());
    }

    #[test]
    fn a_subject_is_stored_as_its_pool_reads_it() {
        let ada = UserId::parse("a0a00000000000000000000000000000").unwrap();
        assert_eq!(Subject::Own.stored(Pool::Private, &ada), ("self", None));
        assert_eq!(
            Subject::Own.stored(Pool::Shared, &ada),
            ("member", Some("a0a00000000000000000000000000000".into()))
        );
        let bob = Subject::Member { id: UserId::parse("b0b00000000000000000000000000000").unwrap() };
        assert_eq!(bob.stored(Pool::Private, &ada), ("member", Some("b0b00000000000000000000000000000".into())));
        assert_eq!(Subject::Member { id: ada.clone() }.stored(Pool::Private, &ada), ("self", None));
        let parsed: Subject =
            serde_json::from_str(r#"{"kind":"member","id":"b0b00000000000000000000000000000"}"#).unwrap();
        assert_eq!(parsed, bob);
    }

    async fn pools() -> (tempfile::TempDir, PrivateStore, SystemStore, UserId) {
        let (dir, space) = PrivateStore::scratch().await;
        let system = SystemStore::open(&dir.path().join("system.db")).await.unwrap();
        for statement in [
            "INSERT INTO roles (id, label, created_at) VALUES ('member', 'Member', 'now') ON CONFLICT DO NOTHING",
            "INSERT INTO users (id, name, role_id, status, file_salt, public_key, created_at)
             VALUES ('a0a00000000000000000000000000000', 'Ada', 'member', 'active', zeroblob(16), zeroblob(32), 'now')",
        ] {
            sqlx::query(statement).execute(system.pool()).await.unwrap();
        }
        (dir, space, system, UserId::parse("a0a00000000000000000000000000000").unwrap())
    }

    fn new<'a>(text: &'a str, pool: Pool, subject: &'a Subject, author: &'a Author) -> NewMemory<'a> {
        NewMemory {
            text,
            pool,
            subject,
            author,
            source_session: None,
            outside: false,
            local_only: false,
            keep_days: Some(90),
        }
    }

    #[tokio::test]
    async fn vectors_rank_by_cosine_and_a_changed_or_erased_memory_is_never_compared_stale() {
        let (_dir, space, system, ada) = pools().await;
        let pools = Pools { owner: &ada, space: &space, system: &system };
        let person = Author::Person { id: ada.clone() };
        let tea = pools.create(&new("Ada drinks tea.", Pool::Private, &Subject::Own, &person)).await.unwrap();
        let bins =
            pools.create(&new("The bins go out on Monday.", Pool::Shared, &Subject::Instance, &person)).await.unwrap();
        let missing = pools.unembedded("m1", 10).await.unwrap();
        assert_eq!(missing.len(), 2);
        let unit = |x: f32| [x, (1.0 - x * x).sqrt()];
        for memory in &missing {
            let vector = if memory.id == tea.id { unit(1.0) } else { unit(0.6) };
            pools.set_vector(memory, "m1", &vector).await.unwrap();
        }
        assert!(pools.unembedded("m1", 10).await.unwrap().is_empty());
        assert_eq!(pools.unembedded("m2", 10).await.unwrap().len(), 2, "another model's vectors do not count");
        let found = pools.nearest("m1", &unit(1.0), None, 5).await.unwrap();
        let ranked: Vec<(&MemoryId, f64)> = found.iter().map(|m| (&m.id, (m.score.unwrap() * 100.0).round())).collect();
        assert_eq!(ranked, [(&tea.id, 100.0), (&bins.id, 60.0)]);
        // A changed text drops its vector at once, though the last search held it in memory.
        pools.update(&tea.id, Some("Ada drinks coffee now."), None, 90).await.unwrap();
        let found = pools.nearest("m1", &unit(1.0), None, 5).await.unwrap();
        assert_eq!(found.iter().map(|m| &m.id).collect::<Vec<_>>(), [&bins.id]);
        assert_eq!(pools.unembedded("m1", 10).await.unwrap()[0].text, "Ada drinks coffee now.");
        pools.delete(&bins.id).await.unwrap();
        assert!(pools.nearest("m1", &unit(1.0), None, 5).await.unwrap().is_empty(), "an erased memory is gone");
        // A vector made from a text that has changed since is not kept.
        let stale = Unembedded { pool: Pool::Private, id: tea.id.clone(), text: "Ada drinks tea.".into() };
        pools.set_vector(&stale, "m1", &unit(1.0)).await.unwrap();
        assert!(pools.nearest("m1", &unit(1.0), None, 5).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn memories_are_written_searched_pinned_and_erased_in_both_pools() {
        let (_dir, space, system, ada) = pools().await;
        let pools = Pools { owner: &ada, space: &space, system: &system };
        let person = Author::Person { id: ada.clone() };
        let private = pools
            .create(&new("Ada prefers green tea in the morning.", Pool::Private, &Subject::Own, &person))
            .await
            .unwrap();
        assert!(private.expires_at.is_some());
        let shared = pools
            .create(&new("The bins go out on Monday night.", Pool::Shared, &Subject::Instance, &person))
            .await
            .unwrap();
        assert_eq!(pools.list(None).await.unwrap().len(), 2);
        assert_eq!(pools.list(Some(Pool::Shared)).await.unwrap()[0].id, shared.id);
        let found = pools.search("what tea does she drink", None, 3).await.unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, private.id);
        assert!(pools.search("bins monday", None, 3).await.unwrap()[0].id == shared.id);
        let pinned = pools.update(&private.id, None, Some(true), 90).await.unwrap();
        assert!(pinned.pinned && pinned.expires_at.is_none());
        pools.delete(&shared.id).await.unwrap();
        assert!(pools.get(&shared.id).await.unwrap().is_none());
        assert!(pools.search("bins", None, 3).await.unwrap().is_empty(), "its tokens went with it");
    }
}
