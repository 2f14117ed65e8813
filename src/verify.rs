//! `skald verify` (§3): who can open each private space, checked from the files alone.
//!
//! For each person it lists the keys that wrap their data key and checks that every wrap
//! names its owner and purpose with KDF parameters in range, that their private file is
//! encrypted and is the one recorded for them (its SQLCipher salt), and — across the whole
//! shared database — that no stored value opens any private file. It opens the shared
//! database read-only and takes no lock, so it runs beside a running Skald. It never
//! needs, asks for or prints a secret.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use sqlx::{ConnectOptions, Row};

use crate::crypto::{Purpose, WrappedKey};
use crate::store::data_dir::system_db_path;

/// Tables the shared database may hold. A table that is not listed here fails the check
/// until someone decides what it holds and adds it.
const KNOWN_TABLES: [&str; 38] = [
    "_sqlx_migrations",
    "sqlite_sequence",
    "instance",
    "roles",
    "users",
    "key_wraps",
    "audit",
    "providers",
    "models",
    "usage_daily",
    "approval_rules",
    "agent_versions",
    "notices",
    // names, sizes and checksums of the built-in provider's model files: nothing anyone said
    "local_models",
    // the shared memory pool: sentences every member and the administrator may read, and
    // labelled so wherever they are shown (§10); its full-text index and the index's parts
    "shared_memories",
    "shared_memories_search",
    "shared_memories_search_data",
    "shared_memories_search_idx",
    "shared_memories_search_docsize",
    "shared_memories_search_config",
    // a count of changes to the shared memories' vectors: a number, nothing anyone said
    "shared_memories_vectors_version",
    // erasures waiting for a locked person's file: ids only, never text
    "memory_erasures",
    // MCP servers an administrator configured (their environment and token sealed under the
    // instance key) and the tools they list, with their pins: nothing anyone said (§12)
    "mcp_servers",
    "mcp_tools",
    // scheduled jobs and their runs (§11): when, and how each run went; a job's words only
    // where its owner chose to keep them readable while away or shared them, labelled so
    // (§3); a reminder set for another and a task's answer while its owner was away only
    // sealed to that person's public key
    "jobs",
    "job_runs",
    // backups written and the optional schedule: paths, sizes and times; the schedule's
    // passphrase sealed under the instance key (§5.2)
    "backups",
    "backup_schedule",
    // supervision edges (§6.2): a supervised person's key sealed to their supervisor's
    // public key, listed by verify as a key that opens that space
    "supervision",
    // the shared pool of documents (§12): files a member chose to share with everyone,
    // labelled so wherever they are shown; their bytes, text by page, its full-text index
    // and the index's parts, and passages for search by meaning. A person's own documents
    // live only in their encrypted file
    "shared_documents",
    "shared_document_chunks",
    "shared_document_pages",
    "shared_document_pages_search",
    "shared_document_pages_search_data",
    "shared_document_pages_search_idx",
    "shared_document_pages_search_docsize",
    "shared_document_pages_search_config",
    "shared_document_passages",
];
const PLAIN_SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("no Skald data at {0}: there is no database/system.db")]
    NoData(PathBuf),
    #[error("cannot read the shared database {path}: {source}")]
    Read { path: PathBuf, source: sqlx::Error },
}

/// What one person's space looks like from the files.
#[derive(Debug)]
pub struct Person {
    pub name: String,
    pub role: String,
    pub status: String,
    pub file: Option<PathBuf>,
    /// Who can open the space, in words.
    pub opened_by: Vec<String>,
    /// How many of those are supervisors' copies (§6.2).
    pub supervisors: usize,
}

#[derive(Debug, Default)]
pub struct Report {
    pub data_dir: PathBuf,
    pub people: Vec<Person>,
    pub wraps_checked: usize,
    pub values_tried: usize,
    /// Audit entries whose chain was checked whole.
    pub audit_entries: usize,
    pub problems: Vec<String>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// The human-readable report.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "Skald verify: {}", self.data_dir.display());
        for p in &self.people {
            let _ = writeln!(out, "\n{} ({}, {})", p.name, p.role, p.status);
            match &p.file {
                Some(file) => {
                    let _ = writeln!(out, "  private file: {}", file.display());
                }
                None => {
                    let _ = writeln!(out, "  no private file yet (enrols with a one-time code that opens nothing)");
                }
            }
            if !p.opened_by.is_empty() {
                let _ = writeln!(out, "  can be opened by:");
                for who in &p.opened_by {
                    let _ = writeln!(out, "    - {who}");
                }
                if p.supervisors == 0 {
                    let _ = writeln!(out, "  and by nobody else: no supervisors");
                } else {
                    let _ = writeln!(out, "  and by nobody else");
                }
            }
        }
        let _ = writeln!(
            out,
            "\nShared database: {} stored values that could be keys were tried against every private file.",
            self.values_tried
        );
        let _ = writeln!(out, "Audit trail: {} entries, each chained to the one before.", self.audit_entries);
        let records = self.people.iter().filter(|p| p.file.is_some()).count();
        let _ = writeln!(
            out,
            "Not checked without a person's key: what each person accepted about where their words go \
             ({records} record(s), inside their private files; Skald compares each with the shared database \
             before every turn and holds it when something widened)."
        );
        if self.ok() {
            let _ = writeln!(
                out,
                "\nResult: OK. {} {}, {} key wraps checked; nothing else opens a private space.",
                self.people.len(),
                if self.people.len() == 1 { "person" } else { "people" },
                self.wraps_checked
            );
        } else {
            let _ = writeln!(out, "\nResult: {} problem(s):", self.problems.len());
            for problem in &self.problems {
                let _ = writeln!(out, "  PROBLEM: {problem}");
            }
        }
        out
    }
}

struct UserRow {
    id: String,
    name: String,
    role: String,
    status: String,
    file_salt: Option<Vec<u8>>,
}

/// Runs every check over the data directory at `root`.
pub async fn verify(root: &Path) -> Result<Report, VerifyError> {
    let db = system_db_path(root);
    if !db.exists() {
        return Err(VerifyError::NoData(root.to_path_buf()));
    }
    let fail = |source| VerifyError::Read { path: db.clone(), source };
    let options = SqliteConnectOptions::from_str("sqlite:")
        .map_err(fail)?
        .filename(&db)
        .read_only(true)
        .log_statements(log::LevelFilter::Off);
    let pool = SqlitePoolOptions::new().max_connections(1).connect_with(options).await.map_err(fail)?;
    let result = check(root, &pool).await.map_err(fail);
    pool.close().await;
    result
}

async fn check(root: &Path, pool: &SqlitePool) -> Result<Report, sqlx::Error> {
    let mut report = Report { data_dir: root.to_path_buf(), ..Report::default() };
    let users_dir = root.join("database").join("users");

    let tables: Vec<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'").fetch_all(pool).await?;
    for table in &tables {
        if !KNOWN_TABLES.contains(&table.as_str()) {
            report.problems.push(format!("the shared database has a table verify does not know: {table}"));
        }
    }

    let users: Vec<UserRow> = sqlx::query("SELECT u.id, u.name, u.status, u.file_salt, coalesce(r.label, u.role_id) AS role FROM users u LEFT JOIN roles r ON r.id = u.role_id ORDER BY u.name")
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|r| UserRow { id: r.get("id"), name: r.get("name"), role: r.get("role"), status: r.get("status"), file_salt: r.get("file_salt") })
        .collect();
    let mut wraps: HashMap<String, Vec<(String, Vec<u8>)>> = HashMap::new();
    for row in sqlx::query("SELECT user_id, purpose, wrapped FROM key_wraps").fetch_all(pool).await? {
        wraps.entry(row.get("user_id")).or_default().push((row.get("purpose"), row.get("wrapped")));
    }
    let known_ids: HashSet<&str> = users.iter().map(|u| u.id.as_str()).collect();
    for orphan in wraps.keys().filter(|id| !known_ids.contains(id.as_str())) {
        report.problems.push(format!("a key wrap belongs to no account ({orphan})"));
    }

    // Supervisors' sealed copies (§6.2), by the person whose space they open.
    let mut copies: HashMap<String, Vec<KeyCopy>> = HashMap::new();
    let edges = sqlx::query(
        "SELECT e.supervised_id, a.name AS supervisor, a.status, e.state, e.sealed_key FROM supervision e
         JOIN users a ON a.id = e.supervisor_id ORDER BY a.name",
    )
    .fetch_all(pool)
    .await?;
    for row in edges {
        let state: String = row.get("state");
        let status: String = row.get("status");
        copies.entry(row.get("supervised_id")).or_default().push((
            row.get("supervisor"),
            format!("{state}/{status}"),
            row.get("sealed_key"),
        ));
    }

    let mut salts_seen: HashMap<Vec<u8>, String> = HashMap::new();
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for user in &users {
        let mut person = Person {
            name: user.name.clone(),
            role: user.role.clone(),
            status: user.status.clone(),
            file: None,
            opened_by: Vec::new(),
            supervisors: 0,
        };
        let who = &user.name;
        let mine = wraps.get(&user.id).map(Vec::as_slice).unwrap_or(&[]);
        for (purpose, blob) in mine {
            report.wraps_checked += 1;
            match check_wrap(&user.id, purpose, blob) {
                Ok(description) => person.opened_by.push(format!("{who}'s {description}")),
                Err(problem) => report.problems.push(format!("{who}: the {purpose} key wrap {problem}")),
            }
        }
        for (supervisor, state, sealed) in copies.get(&user.id).map(Vec::as_slice).unwrap_or(&[]) {
            match (state.split_once('/'), sealed) {
                (Some(("active", status)), Some(blob)) if is_sealed_copy(blob) => {
                    report.wraps_checked += 1;
                    person.supervisors += 1;
                    let note = if status == "active" {
                        String::new()
                    } else {
                        format!(" — {supervisor}'s account is {status}; end the supervision to destroy it")
                    };
                    person
                        .opened_by
                        .push(format!("{supervisor}'s copy, as their supervisor (sealed to {supervisor}'s key){note}"));
                }
                (Some(("active", _)), _) => {
                    report.problems.push(format!("{who}: the key copy {supervisor} holds is malformed"));
                }
                _ => {}
            }
        }
        let file = users_dir.join(format!("{}.db", user.id));
        if user.status == "pending" {
            if !mine.is_empty() {
                report.problems.push(format!("{who} has not enrolled yet but has key wraps"));
            }
            if file.exists() {
                report.problems.push(format!("{who} has not enrolled yet but a private file exists for them"));
            }
        } else {
            for purpose in [Purpose::Password, Purpose::Recovery] {
                if !mine.iter().any(|(p, _)| p == purpose.as_str()) {
                    report.problems.push(format!("{who} has no {} key wrap", purpose.as_str()));
                }
            }
            if let Some(problem) = check_file(&file, user.file_salt.as_deref()) {
                report.problems.push(format!("{who}: {problem}"));
            }
            if let Some(salt) = &user.file_salt
                && let Some(other) = salts_seen.insert(salt.clone(), user.name.clone())
            {
                report.problems.push(format!("{who} and {other} are recorded with the same private file salt"));
            }
            person.file = Some(file.strip_prefix(root).unwrap_or(&file).to_path_buf());
            files.push((user.name.clone(), file));
        }
        report.people.push(person);
    }

    // Files nobody records.
    if let Ok(entries) = std::fs::read_dir(&users_dir) {
        let expected: HashSet<PathBuf> = files.iter().map(|(_, f)| f.clone()).collect();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "db") && !expected.contains(&path) {
                report.problems.push(format!("{} is a private file no account records", path.display()));
            }
        }
    }

    // The audit trail: an entry deleted or edited in the files breaks the chain.
    match crate::store::audit::check_chain(pool).await? {
        Ok(entries) => report.audit_entries = entries,
        Err(broken) => report.problems.push(format!("{broken}: the audit trail was altered outside Skald")),
    }

    // Nothing else in the shared database opens a private file.
    let candidates = key_candidates(pool, &tables).await?;
    report.values_tried = candidates.len();
    for (place, key) in &candidates {
        for (owner, file) in &files {
            if opens(file, key).await {
                report.problems.push(format!("{place} in the shared database opens {owner}'s private file"));
            }
        }
    }
    Ok(report)
}

/// A supervisor's key copy as the shared database holds it: who, `<edge state>/<their
/// account's status>`, and the sealed value.
type KeyCopy = (String, String, Option<Vec<u8>>);

/// A supervisor's copy is a value sealed to a public key (`crypto::seal_to`) holding
/// one 32-byte key: magic, ephemeral key, nonce, key and tag.
fn is_sealed_copy(blob: &[u8]) -> bool {
    blob.len() == 4 + 32 + 12 + 32 + 16 && blob.starts_with(b"SKS1")
}

/// A wrap must name its row's owner and purpose and have KDF parameters in range.
fn check_wrap(user_id: &str, purpose: &str, blob: &[u8]) -> Result<String, String> {
    let header = WrappedKey(blob.to_vec()).header().map_err(|err| format!("is unreadable ({err})"))?;
    if header.user_id != user_id || header.purpose.as_str() != purpose {
        return Err(format!(
            "names another account or purpose ({} / {}): it was moved here",
            header.user_id,
            header.purpose.as_str()
        ));
    }
    if !header.kdf.in_range() {
        return Err(format!("has KDF parameters outside the allowed range ({})", header.kdf));
    }
    Ok(match header.purpose {
        Purpose::Password => format!("password (argon2id, {})", header.kdf),
        Purpose::Recovery => "recovery code (shown once, to them alone)".to_owned(),
    })
}

fn check_file(file: &Path, recorded_salt: Option<&[u8]>) -> Option<String> {
    let header = match crate::store::private::read_salt(file) {
        Ok(header) => header,
        Err(_) => return Some(format!("the private file {} is missing or unreadable", file.display())),
    };
    if &header == PLAIN_SQLITE_HEADER {
        return Some("the private file is NOT encrypted (a plain SQLite file)".to_owned());
    }
    match recorded_salt {
        Some(salt) if salt == header => None,
        Some(_) => Some("the private file is not the one recorded for this person (its salt differs)".to_owned()),
        None => Some("no salt is recorded for the private file".to_owned()),
    }
}

/// Every stored value shaped like a raw 256-bit key — a 32-byte blob, 64 hex characters,
/// or a SQLCipher `x'…'` literal — with where it was found. Key wraps are sealed records,
/// not keys, and are left out.
async fn key_candidates(pool: &SqlitePool, tables: &[String]) -> Result<Vec<(String, Vec<u8>)>, sqlx::Error> {
    let mut out = Vec::new();
    for table in tables.iter().filter(|t| KNOWN_TABLES.contains(&t.as_str())) {
        let columns: Vec<String> =
            sqlx::query_scalar("SELECT name FROM pragma_table_info(?)").bind(table).fetch_all(pool).await?;
        for column in columns {
            let sealed = (table == "key_wraps" && column == "wrapped")
                || (table == "providers" && column == "api_key")
                || (table == "mcp_servers" && (column == "env" || column == "token"));
            if sealed {
                continue;
            }
            // Names come from the schema itself and are quoted.
            let sql = format!("SELECT \"{column}\" FROM \"{table}\"");
            for row in sqlx::query(sqlx::AssertSqlSafe(sql)).fetch_all(pool).await? {
                let place = format!("{table}.{column}");
                if let Ok(Some(blob)) = row.try_get::<Option<Vec<u8>>, _>(0)
                    && blob.len() == 32
                {
                    out.push((place.clone(), blob));
                }
                if let Ok(Some(text)) = row.try_get::<Option<String>, _>(0) {
                    for hex_run in hex_runs(&text) {
                        out.push((place.clone(), hex_run));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// 64-hex-character runs in a text (alone or inside a SQLCipher `x'…'` literal).
fn hex_runs(text: &str) -> Vec<Vec<u8>> {
    text.split(|c: char| !c.is_ascii_hexdigit())
        .filter(|run| run.len() >= 64)
        .filter_map(|run| hex::decode(&run[..64]).ok())
        .collect()
}

/// Whether `key` opens the SQLCipher file as its raw key.
async fn opens(file: &Path, key: &[u8]) -> bool {
    let literal = format!("\"x'{}'\"", hex::encode_upper(key));
    let Ok(options) = SqliteConnectOptions::from_str("sqlite:") else { return false };
    let options = options
        .filename(file)
        .read_only(true)
        .pragma("key", literal)
        .pragma("cipher_log_level", "NONE")
        .log_statements(log::LevelFilter::Off);
    let Ok(mut conn) = options.connect().await else { return false };
    let opened = sqlx::query_scalar::<_, i64>("SELECT count(*) FROM sqlite_master").fetch_one(&mut conn).await.is_ok();
    let _ = sqlx::Connection::close(conn).await;
    opened
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_runs_are_found_alone_and_inside_a_key_literal() {
        let key = "ab".repeat(32);
        assert_eq!(hex_runs(&key).len(), 1);
        assert_eq!(hex_runs(&format!("\"x'{key}'\"")).len(), 1);
        assert!(hex_runs("not hex at all").is_empty());
    }
}
