//! Everything Skald keeps on disk: the locked data directory and the databases in it.
//! SQL lives in this module tree and nowhere else; callers get typed functions.
//!
//! ```text
//! <data dir>/skald.lock               flock held by the running process
//! <data dir>/run/api-token            this run's launch token (0600), removed at exit
//! <data dir>/logs/                    rotating diagnostics, never private content
//! <data dir>/database/system.db       the shared database (plain SQLite)
//! <data dir>/database/users/<id>.db   one encrypted file per person (SQLCipher)
//! ```

pub mod accepted;
pub mod agents;
pub mod approval_rules;
pub mod approvals;
pub mod audit;
pub mod backup;
pub mod chat;
mod conversation;
pub mod data_dir;
pub mod documents;
pub mod instance;
pub mod jobs;
pub mod local_models;
pub mod mcp;
pub mod memories;
pub mod notes;
pub mod notices;
pub mod private;
pub mod providers;
pub mod roles;
pub mod snapshots;
pub mod supervision;
pub mod system;
pub mod usage;
pub mod users;
pub mod vectors;

pub use data_dir::DataDir;
pub use system::SystemStore;

/// Failures of the storage layer that a caller may want to tell apart.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("that name is already taken")]
    NameTaken,
    #[error("{0}")]
    WrongState(&'static str),
    #[error("that already exists")]
    Exists,
    #[error("not found")]
    NotFound,
    #[error("this would leave nobody able to manage Skald; make someone else an administrator first")]
    LastAdmin,
    #[error("people still have this role; give them another role first")]
    RoleInUse,
    #[error("{0}")]
    WrongFile(&'static str),
    #[error("a file could not be written: {0}")]
    Io(String),
}

/// A query under construction against SQLite.
pub(crate) type SqliteQuery<'q> = sqlx::query::Query<'q, sqlx::Sqlite, <sqlx::Sqlite as sqlx::Database>::Arguments>;

/// What every database Skald opens shares: WAL, full fsync (a committed write survives a
/// power cut, §5.1), foreign keys, temp tables in memory, and no statement logging (a
/// private file's key pragma must never reach a log). Callers add their own pragmas;
/// sqlx always runs `key` first.
pub(crate) fn connect_options(
    path: &std::path::Path,
    create: bool,
) -> Result<sqlx::sqlite::SqliteConnectOptions, sqlx::Error> {
    use sqlx::ConnectOptions;
    use std::str::FromStr;
    Ok(sqlx::sqlite::SqliteConnectOptions::from_str("sqlite:")?
        .filename(path)
        .create_if_missing(create)
        .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
        .synchronous(sqlx::sqlite::SqliteSynchronous::Full)
        .foreign_keys(true)
        .busy_timeout(std::time::Duration::from_secs(5))
        .pragma("temp_store", "MEMORY")
        .log_statements(log::LevelFilter::Off)
        .log_slow_statements(log::LevelFilter::Off, std::time::Duration::from_secs(3600)))
}

/// A pool of connections to one database file. An idle connection is handed out as it is:
/// sqlx would otherwise ping it first, a round trip to the connection's worker thread
/// (two thread wake-ups) before every statement, which finds nothing on a file that
/// cannot hang up. (sqlx still pings a connection as it comes back to the pool.)
pub(crate) fn pool_options() -> sqlx::sqlite::SqlitePoolOptions {
    sqlx::sqlite::SqlitePoolOptions::new().test_before_acquire(false)
}

/// Moves every committed page into the main file and empties the WAL, so the old pages
/// of what was just erased do not linger there.
pub(crate) async fn checkpoint(db: &sqlx::SqlitePool) -> Result<(), StoreError> {
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(db).await?;
    Ok(())
}

/// Now, as stored everywhere: RFC 3339 in UTC with milliseconds.
pub(crate) fn timestamp() -> String {
    let now = time::OffsetDateTime::now_utc();
    now.format(&time::format_description::well_known::Rfc3339).expect("UTC timestamps format")
}
