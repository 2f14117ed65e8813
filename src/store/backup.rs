//! What backup and restore need of the databases (docs/architecture.md §5.2): a consistent
//! copy of the shared database, a private file held still while its bytes are copied,
//! the record of backups written and their schedule, and what a restored copy must
//! forget (the secrets sealed under an instance key it does not have).

use sqlx::Row;

use super::private::PrivateStore;
use super::{StoreError, SystemStore, timestamp};
use crate::ids::UserId;

/// The shared database as one consistent image, with who has a private file in it.
pub struct SharedImage {
    pub bytes: sqlx::sqlite::SqliteOwnedBuf,
    pub instance_id: String,
    /// Each person with a private file: id, name, and the salt recorded for the file.
    pub people: Vec<(UserId, String, Vec<u8>)>,
}

/// Reads the whole shared database in one read transaction (`sqlite3_serialize`, which
/// reads every page through SQLite as the online backup API does): writers go on, and the
/// image is the database as of one commit.
pub async fn shared_image(store: &SystemStore) -> Result<SharedImage, StoreError> {
    let mut tx = store.pool().begin().await?;
    let instance_id: String =
        sqlx::query_scalar("SELECT instance_id FROM instance WHERE id = 1").fetch_one(&mut *tx).await?;
    let people = sqlx::query("SELECT id, name, file_salt FROM users WHERE file_salt IS NOT NULL ORDER BY name")
        .fetch_all(&mut *tx)
        .await?
        .into_iter()
        .map(|row| Ok((row.try_get("id")?, row.try_get("name")?, row.try_get("file_salt")?)))
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    let bytes = tx.serialize(None).await?;
    tx.rollback().await?;
    Ok(SharedImage { bytes, instance_id, people })
}

/// A private file held still: its WAL checkpointed into the file as far as readers allow,
/// then its write lock taken, so no connection commits to it until this is released and
/// its bytes (file and WAL) can be copied as they are.
pub struct Held(sqlx::Transaction<'static, sqlx::Sqlite>);

impl Held {
    pub async fn release(self) {
        let _ = self.0.rollback().await;
    }
}

impl PrivateStore {
    pub async fn hold_still(&self) -> Result<Held, StoreError> {
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(self.pool()).await?;
        Ok(Held(self.pool().begin_with("BEGIN IMMEDIATE").await?))
    }
}

/// A backup as recorded.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
#[ts(rename = "Backup")]
pub struct BackupRow {
    pub id: String,
    pub kind: String,
    pub state: String,
    pub path: String,
    pub started_by: Option<String>,
    pub started_at: String,
    pub finished_at: Option<String>,
    #[ts(type = "number | null")]
    pub bytes: Option<i64>,
    #[ts(type = "number | null")]
    pub people: Option<i64>,
    pub error: Option<String>,
}

const BACKUP_COLUMNS: &str = "id, kind, state, path, started_by, started_at, finished_at, bytes, people, error";

fn backup_row(row: &sqlx::sqlite::SqliteRow) -> Result<BackupRow, sqlx::Error> {
    Ok(BackupRow {
        id: row.try_get("id")?,
        kind: row.try_get("kind")?,
        state: row.try_get("state")?,
        path: row.try_get("path")?,
        started_by: row.try_get("started_by")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        bytes: row.try_get("bytes")?,
        people: row.try_get("people")?,
        error: row.try_get("error")?,
    })
}

pub async fn record_start(
    store: &SystemStore,
    id: &str,
    kind: &str,
    path: &str,
    by: Option<&UserId>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO backups (id, kind, state, path, started_by, started_at) VALUES (?, ?, 'running', ?, ?, ?)",
    )
    .bind(id)
    .bind(kind)
    .bind(path)
    .bind(by)
    .bind(timestamp())
    .execute(store.pool())
    .await?;
    Ok(())
}

pub async fn record_done(store: &SystemStore, id: &str, bytes: u64, people: usize) -> Result<(), StoreError> {
    sqlx::query("UPDATE backups SET state = 'done', finished_at = ?, bytes = ?, people = ? WHERE id = ?")
        .bind(timestamp())
        .bind(i64::try_from(bytes).unwrap_or(i64::MAX))
        .bind(people as i64)
        .bind(id)
        .execute(store.pool())
        .await?;
    Ok(())
}

pub async fn record_failed(store: &SystemStore, id: &str, error: &str) -> Result<(), StoreError> {
    sqlx::query("UPDATE backups SET state = 'failed', finished_at = ?, error = ? WHERE id = ?")
        .bind(timestamp())
        .bind(error)
        .bind(id)
        .execute(store.pool())
        .await?;
    Ok(())
}

/// The newest backups first.
pub async fn list(store: &SystemStore, limit: i64) -> Result<Vec<BackupRow>, StoreError> {
    let sql = format!("SELECT {BACKUP_COLUMNS} FROM backups ORDER BY started_at DESC, id DESC LIMIT ?");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(limit).fetch_all(store.pool()).await?;
    Ok(rows.iter().map(backup_row).collect::<Result<_, _>>()?)
}

/// Backups a crash cut short: marked failed, their paths handed back so the partial files
/// can go.
pub async fn fail_interrupted(store: &SystemStore) -> Result<Vec<String>, StoreError> {
    let paths: Vec<String> =
        sqlx::query_scalar("SELECT path FROM backups WHERE state = 'running'").fetch_all(store.pool()).await?;
    sqlx::query(
        "UPDATE backups SET state = 'failed', finished_at = ?, error = 'Skald stopped before the backup was finished' \
         WHERE state = 'running'",
    )
    .bind(timestamp())
    .execute(store.pool())
    .await?;
    Ok(paths)
}

/// The backup schedule as stored (its passphrase still sealed).
#[derive(Clone)]
pub struct ScheduleRow {
    pub folder: String,
    pub at_time: String,
    pub zone: String,
    pub keep: i64,
    pub include_models: bool,
    pub passphrase: Vec<u8>,
    pub next_run: String,
    pub updated_by: String,
    pub updated_at: String,
}

pub async fn schedule(store: &SystemStore) -> Result<Option<ScheduleRow>, StoreError> {
    let row = sqlx::query(
        "SELECT folder, at_time, zone, keep, include_models, passphrase, next_run, updated_by, updated_at \
         FROM backup_schedule WHERE id = 1",
    )
    .fetch_optional(store.pool())
    .await?;
    let Some(row) = row else { return Ok(None) };
    Ok(Some(ScheduleRow {
        folder: row.try_get("folder")?,
        at_time: row.try_get("at_time")?,
        zone: row.try_get("zone")?,
        keep: row.try_get("keep")?,
        include_models: row.try_get::<i64, _>("include_models")? != 0,
        passphrase: row.try_get("passphrase")?,
        next_run: row.try_get("next_run")?,
        updated_by: row.try_get("updated_by")?,
        updated_at: row.try_get("updated_at")?,
    }))
}

pub async fn put_schedule(store: &SystemStore, row: &ScheduleRow) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO backup_schedule (id, folder, at_time, zone, keep, include_models, passphrase, next_run, \
         updated_by, updated_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
         ON CONFLICT (id) DO UPDATE SET folder = excluded.folder, at_time = excluded.at_time, zone = excluded.zone, \
         keep = excluded.keep, include_models = excluded.include_models, passphrase = excluded.passphrase, \
         next_run = excluded.next_run, updated_by = excluded.updated_by, updated_at = excluded.updated_at",
    )
    .bind(&row.folder)
    .bind(&row.at_time)
    .bind(&row.zone)
    .bind(row.keep)
    .bind(i64::from(row.include_models))
    .bind(&row.passphrase)
    .bind(&row.next_run)
    .bind(&row.updated_by)
    .bind(&row.updated_at)
    .execute(store.pool())
    .await?;
    Ok(())
}

pub async fn set_schedule_next(store: &SystemStore, next_run: &str) -> Result<(), StoreError> {
    sqlx::query("UPDATE backup_schedule SET next_run = ? WHERE id = 1").bind(next_run).execute(store.pool()).await?;
    Ok(())
}

pub async fn delete_schedule(store: &SystemStore) -> Result<bool, StoreError> {
    Ok(sqlx::query("DELETE FROM backup_schedule WHERE id = 1").execute(store.pool()).await?.rows_affected() > 0)
}

/// `PRAGMA integrity_check` of the shared database: `None` when it says `ok`.
pub async fn integrity(store: &SystemStore) -> Result<Option<String>, StoreError> {
    let said: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check").fetch_all(store.pool()).await?;
    Ok(if said == ["ok"] { None } else { Some(said.join("; ")) })
}

/// A restored shared database was sealed under an instance key the archive does not
/// carry: every value sealed under it is cleared, the record of the key's backend is
/// reset so the first start makes a new key, and the schedule (whose passphrase was
/// sealed) goes. Returns what must be entered again, as people would name it.
pub async fn forget_instance_secrets(store: &SystemStore) -> Result<Vec<String>, StoreError> {
    let mut tx = store.pool().begin().await?;
    let mut again = Vec::new();
    let providers: Vec<String> =
        sqlx::query_scalar("SELECT name FROM providers WHERE api_key IS NOT NULL ORDER BY name")
            .fetch_all(&mut *tx)
            .await?;
    again.extend(providers.into_iter().map(|name| format!("the API key of the provider {name}")));
    let servers: Vec<(String, bool, bool)> = sqlx::query_as(
        "SELECT name, env IS NOT NULL, token IS NOT NULL FROM mcp_servers WHERE env IS NOT NULL OR token IS NOT NULL \
         ORDER BY name",
    )
    .fetch_all(&mut *tx)
    .await?;
    for (name, env, token) in servers {
        if env {
            again.push(format!("the environment of the MCP server {name}"));
        }
        if token {
            again.push(format!("the token of the MCP server {name}"));
        }
    }
    if sqlx::query("DELETE FROM backup_schedule").execute(&mut *tx).await?.rows_affected() > 0 {
        again.push("the backup schedule (its passphrase)".to_owned());
    }
    sqlx::query("UPDATE providers SET api_key = NULL WHERE api_key IS NOT NULL").execute(&mut *tx).await?;
    sqlx::query("UPDATE mcp_servers SET env = NULL, token = NULL WHERE env IS NOT NULL OR token IS NOT NULL")
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE instance SET secret_backend = NULL, secret_check = NULL WHERE id = 1")
        .execute(&mut *tx)
        .await?;
    // A backup that was running when the copy was taken did not finish in the copy.
    sqlx::query(
        "UPDATE backups SET state = 'failed', error = 'still running when this backup was taken' WHERE state = 'running'",
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(again)
}

/// What a backup's shared database recorded for one person: enough for their file as it
/// was then to open with their password of then.
pub struct PersonAsBackedUp {
    pub name: String,
    pub file_salt: [u8; 16],
    pub public_key: Option<Vec<u8>>,
    pub key_version: i64,
    pub wraps: Vec<(String, Vec<u8>)>,
}

/// Reads one person's row and key wraps out of a shared-database image, in memory.
pub async fn person_in_image(image: &[u8], user: &UserId) -> Result<Option<PersonAsBackedUp>, StoreError> {
    use sqlx::ConnectOptions;
    use std::str::FromStr;
    let mut bytes = zeroize::Zeroizing::new(image.to_vec());
    // An image of a WAL database says so in its header; in memory it is read as a rollback
    // journal one (bytes 18 and 19: the read and write versions).
    if bytes.len() > 19 {
        bytes[18] = 1;
        bytes[19] = 1;
    }
    let mut conn = sqlx::sqlite::SqliteConnectOptions::from_str("sqlite::memory:")?.connect().await?;
    conn.deserialize(None, sqlx::sqlite::SqliteOwnedBuf::try_from(&bytes[..])?, true).await?;
    let Some(row) = sqlx::query("SELECT name, file_salt, public_key, key_version FROM users WHERE id = ?")
        .bind(user)
        .fetch_optional(&mut conn)
        .await?
    else {
        return Ok(None);
    };
    let (name, salt, public_key, key_version): (String, Option<Vec<u8>>, Option<Vec<u8>>, i64) =
        (row.try_get("name")?, row.try_get("file_salt")?, row.try_get("public_key")?, row.try_get("key_version")?);
    let Some(salt) = salt else { return Ok(None) };
    let Ok(file_salt) = <[u8; 16]>::try_from(salt.as_slice()) else { return Ok(None) };
    let wraps: Vec<(String, Vec<u8>)> = sqlx::query_as("SELECT purpose, wrapped FROM key_wraps WHERE user_id = ?")
        .bind(user)
        .fetch_all(&mut conn)
        .await?;
    Ok(Some(PersonAsBackedUp { name, file_salt, public_key, key_version, wraps }))
}

/// Puts a person's keys back as a backup recorded them, in one commit: their wraps, their
/// file's salt, their public key. Every supervision edge they are on goes back to pending,
/// since its copy was sealed to keys that changed; returns how many.
pub async fn restore_person(
    store: &SystemStore,
    actor: &super::audit::Actor,
    user: &UserId,
    person: &PersonAsBackedUp,
    made_at: &str,
) -> Result<u64, StoreError> {
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let name: String = sqlx::query_scalar("SELECT name FROM users WHERE id = ?")
        .bind(user)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(StoreError::NotFound)?;
    sqlx::query("DELETE FROM key_wraps WHERE user_id = ?").bind(user).execute(&mut *tx).await?;
    for (purpose, wrapped) in &person.wraps {
        sqlx::query("INSERT INTO key_wraps (user_id, purpose, wrapped, updated_at) VALUES (?, ?, ?, ?)")
            .bind(user)
            .bind(purpose)
            .bind(wrapped)
            .bind(timestamp())
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query("UPDATE users SET file_salt = ?, public_key = ?, key_version = ? WHERE id = ?")
        .bind(&person.file_salt[..])
        .bind(&person.public_key)
        .bind(person.key_version)
        .bind(user)
        .execute(&mut *tx)
        .await?;
    let reset = sqlx::query(
        "UPDATE supervision SET state = 'pending', sealed_key = NULL, accepted_at = NULL, at_enrolment = 0
         WHERE (supervisor_id = ?1 OR supervised_id = ?1) AND state = 'active'",
    )
    .bind(user)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    let detail = serde_json::json!({ "backup_made_at": made_at, "supervision_reset": reset });
    super::audit::record(&mut tx, actor, Some((user, &name)), "person.restored", detail).await?;
    tx.commit().await?;
    store.people_changed();
    Ok(reset)
}
