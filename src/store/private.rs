//! A person's private file `database/users/<id>.db`: a whole-file SQLCipher database keyed
//! with their raw DEK (§4). The key pragma is the first statement on every connection
//! (sqlx orders `key` first); statement logging is off and the connect options — which
//! hold the key — are never formatted with `Debug`. WAL, full fsync, secure delete, and
//! temp tables in memory, so no temp file ever holds a decrypted page.
//!
//! Opened only through an unlocked session; later features read and write a person's
//! space through this type.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use sqlx::sqlite::SqlitePool;

use super::snapshots::{Snapshots, Touched, Writing};
use super::{StoreError, timestamp};
use crate::crypto::{Dek, KeyPair};
use crate::ids::UserId;

static MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("database/migrations/user");

/// An open private space. Dropping it (after [`PrivateStore::close`]) forgets the key.
#[derive(Clone)]
pub struct PrivateStore {
    pool: SqlitePool,
    snapshots: Arc<Snapshots>,
    /// This person's own prompt prefix (see `database/migrations/user/0011_prompt_prefix.sql`).
    prompt_prefix: Arc<str>,
    /// The private pool's memory vectors as last read; they go with the store at lock.
    vectors: Arc<super::memories::VectorCache>,
    /// The person's settings as last read: every turn's start asks for one. Only this
    /// process writes the file (nobody else holds its key), and it writes settings only
    /// through [`PrivateStore::put_setting`] and [`PrivateStore::delete_setting`].
    settings: Arc<std::sync::Mutex<SettingsCache>>,
}

/// Settings read from the file, with a count of the writes made to them: a read that
/// started before a write does not put what it read into the cache after it.
#[derive(Default)]
struct SettingsCache {
    writes: u64,
    values: std::collections::HashMap<String, Option<String>>,
}

/// Where a person's private file lives under the data directory.
pub fn path_for(users_dir: &Path, id: &UserId) -> PathBuf {
    users_dir.join(format!("{id}.db"))
}

impl PrivateStore {
    /// Makes a new private file for `owner` and stores the secret half of their key pair
    /// inside it. Refuses to overwrite an existing file.
    pub async fn create(
        path: &Path,
        dek: &Dek,
        file_salt: &[u8; 16],
        owner: &UserId,
        keys: &KeyPair,
    ) -> Result<Self, StoreError> {
        if path.exists() {
            return Err(StoreError::WrongFile("a private file already exists for this account"));
        }
        let mut store = Self::connect(path, dek, file_salt, true).await?;
        MIGRATIONS.run(&store.pool).await?;
        let now = timestamp();
        let mut tx = store.pool.begin().await?;
        sqlx::query("INSERT INTO space (id, user_id, created_at) VALUES (1, ?, ?)")
            .bind(owner)
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO space_keys (name, secret, public, created_at) VALUES ('x25519', ?, ?, ?)")
            .bind(&keys.secret[..])
            .bind(&keys.public[..])
            .bind(&now)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        store.prompt_prefix = store.own_prompt_prefix().await?;
        // Write page 1 (which carries the salt) into the main file now, so the file on
        // disk can be matched against its owner's row from the first moment.
        super::checkpoint(&store.pool).await?;
        Ok(store)
    }

    /// Opens `owner`'s file with their DEK. The file must carry the salt recorded for
    /// them and name them inside; a swapped or foreign file is refused.
    pub async fn open(path: &Path, dek: &Dek, file_salt: &[u8; 16], owner: &UserId) -> Result<Self, StoreError> {
        match read_salt(path) {
            Ok(found) if &found == file_salt => {}
            Ok(_) => {
                return Err(StoreError::WrongFile("the private file is not the one recorded for this account"));
            }
            Err(_) => return Err(StoreError::WrongFile("the private file is missing or unreadable")),
        }
        let mut store = Self::connect(path, dek, file_salt, false).await?;
        MIGRATIONS.run(&store.pool).await?;
        let named: Option<String> =
            sqlx::query_scalar("SELECT user_id FROM space WHERE id = 1").fetch_optional(&store.pool).await?;
        if named.as_deref() != Some(owner.as_str()) {
            store.close().await;
            return Err(StoreError::WrongFile("the private file belongs to another account"));
        }
        store.prompt_prefix = store.own_prompt_prefix().await?;
        Ok(store)
    }

    /// The person's prompt prefix, made at the first open that finds none.
    async fn own_prompt_prefix(&self) -> Result<Arc<str>, StoreError> {
        let made: Option<String> =
            sqlx::query_scalar("SELECT prompt_prefix FROM space WHERE id = 1").fetch_one(&self.pool).await?;
        if let Some(prefix) = made {
            return Ok(prefix.into());
        }
        let _writing = self.writing(Touched::Nothing);
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the OS random source is unavailable");
        sqlx::query("UPDATE space SET prompt_prefix = ? WHERE id = 1 AND prompt_prefix IS NULL")
            .bind(hex::encode(bytes))
            .execute(&self.pool)
            .await?;
        let prefix: String =
            sqlx::query_scalar("SELECT prompt_prefix FROM space WHERE id = 1").fetch_one(&self.pool).await?;
        Ok(prefix.into())
    }

    /// What tops every system prompt sent for this person, so no one else's requests
    /// share their prompt's first bytes (see `agent::prompt_for`).
    pub fn prompt_prefix(&self) -> &str {
        &self.prompt_prefix
    }

    async fn connect(path: &Path, dek: &Dek, file_salt: &[u8; 16], create: bool) -> Result<Self, StoreError> {
        let key = dek.sqlcipher_key(file_salt);
        // sqlx runs the key pragma first on every connection, whatever the order here.
        let options = super::connect_options(path, create)?
            .pragma("key", key.as_str().to_owned())
            // SQLCipher would print each failed page decryption to stderr; we report
            // wrong keys ourselves.
            .pragma("cipher_log_level", "NONE")
            .pragma("secure_delete", "ON");
        let snapshots = Snapshots::of_file(path);
        // Every commit on every connection is counted, so no write can leave a snapshot
        // that looks current (see `snapshots`).
        let commits = snapshots.commit_counter();
        let pool = super::pool_options()
            .max_connections(2)
            .min_connections(0)
            .after_connect(move |conn, _| {
                let commits = Arc::clone(&commits);
                Box::pin(async move {
                    conn.lock_handle().await?.set_commit_hook(move || {
                        commits.fetch_add(1, Ordering::SeqCst);
                        true
                    });
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(|err| match &err {
                // SQLCipher says "file is not a database" when the key does not fit.
                sqlx::Error::Database(db) if db.message().contains("not a database") => {
                    StoreError::WrongFile("the private file does not open with this account's key")
                }
                _ => StoreError::Sqlx(err),
            })?;
        Ok(Self { pool, snapshots, prompt_prefix: Arc::from(""), vectors: Arc::default(), settings: Arc::default() })
    }

    /// Tests: a new file for a new person in a temporary folder, kept while the folder is.
    #[cfg(test)]
    pub async fn scratch() -> (tempfile::TempDir, Self) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("space.db");
        let (dek, salt, owner) = (Dek::generate(), crate::crypto::file_salt(), UserId::generate());
        let store = Self::create(&path, &dek, &salt, &owner, &KeyPair::generate()).await.expect("a new private file");
        (dir, store)
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The private pool's memory vectors as last read (recall by meaning).
    pub fn vectors(&self) -> &super::memories::VectorCache {
        &self.vectors
    }

    /// What conversations' next turns start from, kept between turns.
    pub fn snapshots(&self) -> &Snapshots {
        &self.snapshots
    }

    /// A write about to be made through this store, accounted for when the result is
    /// dropped after it (see `snapshots`).
    pub fn writing(&self, touched: Touched) -> Writing {
        self.snapshots.writing(touched)
    }

    /// Closes every connection; pending writes are committed first.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// The secret half of the owner's X25519 key pair, kept only in this file: it opens what
    /// others sealed to them (`crypto::seal_to`).
    pub async fn key_secret(&self) -> Result<zeroize::Zeroizing<[u8; 32]>, StoreError> {
        let secret: zeroize::Zeroizing<Vec<u8>> = zeroize::Zeroizing::new(
            sqlx::query_scalar("SELECT secret FROM space_keys WHERE name = 'x25519'").fetch_one(&self.pool).await?,
        );
        let secret: [u8; 32] =
            secret.as_slice().try_into().map_err(|_| StoreError::WrongFile("the space's key pair is damaged"))?;
        Ok(zeroize::Zeroizing::new(secret))
    }

    pub async fn settings(&self) -> Result<Vec<(String, String)>, StoreError> {
        Ok(sqlx::query_as("SELECT key, value FROM settings ORDER BY key").fetch_all(&self.pool).await?)
    }

    /// One of the person's settings; none when it was never set.
    pub async fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        let writes = {
            let cache = self.settings.lock().expect("settings cache");
            if let Some(value) = cache.values.get(key) {
                return Ok(value.clone());
            }
            cache.writes
        };
        let value: Option<String> =
            sqlx::query_scalar("SELECT value FROM settings WHERE key = ?").bind(key).fetch_optional(&self.pool).await?;
        let mut cache = self.settings.lock().expect("settings cache");
        if cache.writes == writes {
            cache.values.insert(key.to_owned(), value.clone());
        }
        Ok(value)
    }

    /// After a write to setting `key` (committed or not): the next read goes to the file.
    fn setting_written(&self, key: &str) {
        let mut cache = self.settings.lock().expect("settings cache");
        cache.writes += 1;
        cache.values.remove(key);
    }

    pub async fn put_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        let (key, value) = (key.to_owned(), value.to_owned());
        self.write_setting(key.clone(), async move |store: Self| {
            sqlx::query(
                "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            )
            .bind(&key)
            .bind(&value)
            .bind(timestamp())
            .execute(&store.pool)
            .await
        })
        .await?;
        Ok(())
    }

    pub async fn delete_setting(&self, key: &str) -> Result<bool, StoreError> {
        let key = key.to_owned();
        let done = self
            .write_setting(key.clone(), async move |store: Self| {
                sqlx::query("DELETE FROM settings WHERE key = ?").bind(&key).execute(&store.pool).await
            })
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Runs a write of setting `key` to its end in a task of its own, so a caller that
    /// goes away cannot leave the file changed and the cache not told; the cache forgets
    /// the key before and after.
    async fn write_setting<F>(
        &self,
        key: String,
        write: impl FnOnce(Self) -> F + Send + 'static,
    ) -> Result<sqlx::sqlite::SqliteQueryResult, StoreError>
    where
        F: Future<Output = Result<sqlx::sqlite::SqliteQueryResult, sqlx::Error>> + Send,
    {
        let store = self.clone();
        self.setting_written(&key);
        let done = tokio::spawn(async move {
            let _writing = store.writing(Touched::Nothing);
            let done = write(store.clone()).await;
            store.setting_written(&key);
            done
        })
        .await
        .map_err(|_| StoreError::WrongState("a setting's write was cut short; try again"))?;
        Ok(done?)
    }

    /// The person's own token for an MCP server, when they set one.
    pub async fn mcp_token(&self, server: &str) -> Result<Option<zeroize::Zeroizing<String>>, StoreError> {
        let token: Option<String> = sqlx::query_scalar("SELECT token FROM mcp_credentials WHERE server_id = ?")
            .bind(server)
            .fetch_optional(&self.pool)
            .await?;
        Ok(token.map(zeroize::Zeroizing::new))
    }

    /// The servers the person set their own token for.
    pub async fn mcp_token_servers(&self) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT server_id FROM mcp_credentials ORDER BY server_id").fetch_all(&self.pool).await?)
    }

    pub async fn put_mcp_token(&self, server: &str, token: &str) -> Result<(), StoreError> {
        let _writing = self.writing(Touched::Nothing);
        sqlx::query(
            "INSERT INTO mcp_credentials (server_id, token, updated_at) VALUES (?, ?, ?)
             ON CONFLICT (server_id) DO UPDATE SET token = excluded.token, updated_at = excluded.updated_at",
        )
        .bind(server)
        .bind(token)
        .bind(timestamp())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn delete_mcp_token(&self, server: &str) -> Result<bool, StoreError> {
        let _writing = self.writing(Touched::Nothing);
        let done =
            sqlx::query("DELETE FROM mcp_credentials WHERE server_id = ?").bind(server).execute(&self.pool).await?;
        Ok(done.rows_affected() > 0)
    }
}

/// Where a key rotation writes the re-encrypted copy of `path` before it takes its place.
pub fn rotated_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().expect("a file name").to_os_string();
    name.push(".next");
    path.with_file_name(name)
}

/// Removes a SQLite file with its WAL and shared-memory files, whichever exist.
pub fn remove_with_logs(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

/// Finishes or undoes a key rotation a crash interrupted (docs/architecture.md §6.2):
/// a re-encrypted copy whose salt is the one recorded for the person was committed, and
/// takes the old file's place; any other copy never was, and goes. Returns whether the
/// copy took its place. Between the commit and this, only the copy opens with the key the
/// shared database records; after it, only the file does: one key, one file.
pub fn settle_rotation(path: &Path, recorded_salt: &[u8; 16]) -> std::io::Result<bool> {
    let next = rotated_path(path);
    let with_suffix = |p: &Path, suffix: &str| PathBuf::from(format!("{}{suffix}", p.display()));
    // A copy restored from a backup may come with its WAL (`<file>.next-wal`); it goes
    // with the copy. Moved after the copy, so a crash between the two is finished here.
    let move_log = || -> std::io::Result<()> {
        let log = with_suffix(&next, "-wal");
        if log.exists() && read_salt(path).is_ok_and(|salt| &salt == recorded_salt) {
            std::fs::rename(&log, with_suffix(path, "-wal"))?;
        }
        Ok(())
    };
    match read_salt(&next) {
        Ok(salt) if &salt == recorded_salt => {
            for suffix in ["-wal", "-shm"] {
                let _ = std::fs::remove_file(with_suffix(path, suffix));
            }
            std::fs::rename(&next, path)?;
            move_log()?;
            if let Some(folder) = path.parent() {
                std::fs::File::open(folder)?.sync_all()?;
            }
            Ok(true)
        }
        Ok(_) => {
            remove_with_logs(&next);
            Ok(false)
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            move_log()?;
            Ok(false)
        }
        // A copy too short to hold a salt was cut off before its first page: not committed.
        Err(_) => {
            remove_with_logs(&next);
            Ok(false)
        }
    }
}

impl PrivateStore {
    /// Writes this file, re-encrypted with `dek` and `file_salt`, to `to` (SQLCipher's
    /// `sqlcipher_export` under the write lock, so the copy is one committed state), and
    /// syncs it. The caller makes sure nothing writes afterwards.
    pub async fn export_rekeyed(&self, to: &Path, dek: &Dek, file_salt: &[u8; 16]) -> Result<(), StoreError> {
        remove_with_logs(to);
        // The file's connection may not create files, and ATTACH opens with its flags: an
        // empty file is an empty database to SQLite.
        std::fs::File::create(to).map_err(|err| StoreError::Io(err.to_string()))?;
        let key = dek.sqlcipher_key(file_salt);
        // The pragma form is `"x'…'"`; ATTACH takes the same text without the quotes.
        let literal = zeroize::Zeroizing::new(key.trim_matches('"').to_owned());
        let mut conn = self.pool.acquire().await?;
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut *conn).await?;
        sqlx::query("ATTACH DATABASE ? AS rekeyed KEY ?")
            .bind(to.to_string_lossy().into_owned())
            .bind(literal.as_str())
            .execute(&mut *conn)
            .await?;
        let exported = async {
            sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
            let done = sqlx::query("SELECT sqlcipher_export('rekeyed')").execute(&mut *conn).await;
            let end = if done.is_ok() { "COMMIT" } else { "ROLLBACK" };
            sqlx::query(end).execute(&mut *conn).await?;
            done.map(|_| ())
        }
        .await;
        sqlx::query("DETACH DATABASE rekeyed").execute(&mut *conn).await?;
        exported?;
        std::fs::File::open(to).and_then(|f| f.sync_all()).map_err(|err| StoreError::Io(err.to_string()))?;
        Ok(())
    }
}

/// The first 16 bytes of a SQLCipher file are its salt.
pub fn read_salt(path: &Path) -> std::io::Result<[u8; 16]> {
    let mut salt = [0u8; 16];
    std::fs::File::open(path)?.read_exact(&mut salt)?;
    Ok(salt)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies the user-file migrations numbered below `before` to a fresh in-memory file.
    async fn migrated_before(before: i64) -> SqlitePool {
        let pool = sqlx::sqlite::SqlitePoolOptions::new().max_connections(1).connect("sqlite::memory:").await.unwrap();
        for migration in MIGRATIONS.iter().filter(|m| m.version < before) {
            sqlx::raw_sql(sqlx::AssertSqlSafe(migration.sql.as_str().to_owned())).execute(&pool).await.unwrap();
        }
        pool
    }

    /// Applies the rest, from `from` on.
    async fn migrate_from(pool: &SqlitePool, from: i64) {
        for migration in MIGRATIONS.iter().filter(|m| m.version >= from) {
            sqlx::raw_sql(sqlx::AssertSqlSafe(migration.sql.as_str().to_owned())).execute(pool).await.unwrap();
        }
    }

    #[tokio::test]
    async fn a_setting_read_again_after_a_write_is_the_written_one() {
        let (_dir, store) = PrivateStore::scratch().await;
        assert_eq!(store.setting("memory").await.unwrap(), None, "never set, and now cached as such");
        store.put_setting("memory", "off").await.unwrap();
        assert_eq!(store.setting("memory").await.unwrap().as_deref(), Some("off"));
        store.put_setting("memory", "on").await.unwrap();
        assert_eq!(store.setting("memory").await.unwrap().as_deref(), Some("on"));
        assert!(store.delete_setting("memory").await.unwrap());
        assert_eq!(store.setting("memory").await.unwrap(), None);
        // A caller that goes away mid-write: the write still ends, and the cache hears of it.
        let dropped = store.put_setting("memory", "off");
        drop(tokio::time::timeout(std::time::Duration::ZERO, dropped).await);
        for _ in 0..200 {
            if store.setting("memory").await.unwrap().is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let from_file: Option<String> = sqlx::query_scalar("SELECT value FROM settings WHERE key = 'memory'")
            .fetch_optional(&store.pool)
            .await
            .unwrap();
        assert_eq!(from_file.as_deref(), Some("off"), "a write once begun runs to its end");
        assert_eq!(store.setting("memory").await.unwrap(), from_file, "the cache says what the file says");
    }

    #[tokio::test]
    async fn conversations_written_before_search_and_branches_are_found_and_read_as_one_path() {
        let pool = migrated_before(12).await;
        sqlx::raw_sql(
            "INSERT INTO chat_sessions (id, agent, title, created_at, updated_at)
                 VALUES ('chat', 'main', 'Old', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');
             INSERT INTO turns (id, session_id, state, started_at) VALUES
                 ('t1', 'chat', 'done', '2026-01-01T00:00:01Z'),
                 ('t2', 'chat', 'done', '2026-01-01T00:00:02Z'),
                 ('t3', 'chat', 'error', '2026-01-01T00:00:03Z');
             INSERT INTO messages (session_id, turn_id, role, text, status, created_at) VALUES
                 ('chat', 't1', 'user', 'Where is the café?', 'sent', '2026-01-01T00:00:01Z'),
                 ('chat', 't1', 'assistant', 'Round the corner.', 'done', '2026-01-01T00:00:01Z'),
                 ('chat', 't2', 'user', 'And the bakery?', 'sent', '2026-01-01T00:00:02Z'),
                 ('chat', 't2', 'assistant', 'Next to it.', 'done', '2026-01-01T00:00:02Z'),
                 ('chat', 't3', 'user', 'Thanks', 'sent', '2026-01-01T00:00:03Z');",
        )
        .execute(&pool)
        .await
        .unwrap();
        migrate_from(&pool, 12).await;

        // The full-text index holds what was written before it existed.
        let found: Vec<String> =
            sqlx::query_scalar("SELECT m.text FROM messages_search s JOIN messages m ON m.id = s.rowid WHERE messages_search MATCH 'cafe' ORDER BY m.id")
                .fetch_all(&pool)
                .await
                .unwrap();
        assert_eq!(found, ["Where is the café?"]);
        // Each turn continues the one started before it, and the last ends the active path.
        let links: Vec<(String, Option<String>)> =
            sqlx::query_as("SELECT id, after_turn FROM turns ORDER BY started_at").fetch_all(&pool).await.unwrap();
        assert_eq!(links, [("t1".into(), None), ("t2".into(), Some("t1".into())), ("t3".into(), Some("t2".into()))]);
        let active: Option<String> =
            sqlx::query_scalar("SELECT active_turn FROM chat_sessions").fetch_one(&pool).await.unwrap();
        assert_eq!(active.as_deref(), Some("t3"));
    }
}
