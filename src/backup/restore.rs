//! Restoring an archive into an empty data directory: every entry checked against the
//! manifest, the shared database checked and made to forget the secrets sealed under an
//! instance key the archive does not carry, then `skald verify`'s checks run.

use std::collections::BTreeMap;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, BufReader, BufWriter};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::archive::{self, ArchiveError, Manifest, Person};
use super::{BackupError, Progress, Report, Stage};
use crate::store::{DataDir, SystemStore, backup as rows};

/// The manifest is small; anything larger is not one.
const MANIFEST_LIMIT: u64 = 16 * 1024 * 1024;

/// What a restore did.
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    pub created_at: String,
    pub skald_version: String,
    pub people: Vec<Person>,
    pub files: usize,
    /// Secrets that were sealed under the old instance key: whoever administers Skald
    /// enters them again.
    pub enter_again: Vec<String>,
    /// `skald verify`'s report on the restored directory, and whether it passed.
    pub verified: bool,
    pub verify_report: String,
}

/// Whether `dir` is missing or an empty folder.
fn is_empty_dir(dir: &Path) -> io::Result<bool> {
    match fs::read_dir(dir) {
        Ok(mut entries) => Ok(entries.next().is_none()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(true),
        Err(err) => Err(err),
    }
}

/// An entry's path, if it is one an archive may hold: the shared database, a private file
/// or its log, or a file under `agents/` or `models/`; never absolute, never `..`.
fn allowed(path: &str) -> Option<PathBuf> {
    let rel = Path::new(path);
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) || path.contains('\\') {
        return None;
    }
    let ok = path == "database/system.db"
        || path.strip_prefix("database/users/").is_some_and(|name| {
            let stem = name.strip_suffix(".db-wal").or_else(|| name.strip_suffix(".db"));
            stem.is_some_and(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        })
        || path.starts_with("agents/")
        || path.starts_with("models/");
    ok.then(|| rel.to_path_buf())
}

/// Restores `from` into `dir`, which must be empty or missing; on any failure what was
/// written is removed again, so the folder is left as it was found.
pub async fn restore_into(from: &Path, dir: &Path, passphrase: &[u8], report: Report) -> Result<Restored, BackupError> {
    if !is_empty_dir(dir).map_err(BackupError::io(format!("cannot read {}", dir.display())))? {
        return Err(BackupError::Refused(format!(
            "{} is not empty; restore only into an empty folder, so nothing there is overwritten",
            dir.display()
        )));
    }
    let existed = dir.exists();
    let outcome = restore_checked(from, dir, passphrase, report).await;
    if outcome.is_err() {
        clear(dir, existed);
    }
    outcome
}

/// Puts `dir` back as it was: gone, or empty.
fn clear(dir: &Path, existed: bool) {
    if !existed {
        let _ = fs::remove_dir_all(dir);
        return;
    }
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            let _ = if path.is_dir() { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
        }
    }
}

async fn restore_checked(from: &Path, dir: &Path, passphrase: &[u8], report: Report) -> Result<Restored, BackupError> {
    let total = fs::metadata(from).map_err(BackupError::io(format!("cannot read {}", from.display())))?.len();
    let input = File::open(from).map_err(BackupError::io(format!("cannot read {}", from.display())))?;
    // The lock keeps a Skald started on this folder meanwhile from opening half a restore.
    let data_dir = DataDir::open_locked(dir).map_err(|err| BackupError::Refused(err.to_string()))?;
    let root = data_dir.root().to_path_buf();
    let passphrase = zeroize::Zeroizing::new(passphrase.to_vec());
    let path_shown = from.display().to_string();
    let (manifest, files) = tokio::task::spawn_blocking(move || {
        unpack(BufReader::with_capacity(1 << 20, input), &passphrase, &root, total, &path_shown, &report)
    })
    .await
    .map_err(|err| BackupError::Io {
        context: "the restore stopped".into(),
        source: io::Error::other(err.to_string()),
    })??;

    let system = SystemStore::open(&data_dir.system_db()).await.map_err(|err| BackupError::Refused(err.to_string()))?;
    if let Some(problem) = rows::integrity(&system).await? {
        system.close().await;
        return Err(ArchiveError::Damaged(format!("the shared database fails its integrity check: {problem}")).into());
    }
    let enter_again = rows::forget_instance_secrets(&system).await?;
    system.close().await;
    let verified = crate::verify::verify(data_dir.root()).await.map_err(|err| BackupError::Refused(err.to_string()))?;
    drop(data_dir);
    Ok(Restored {
        created_at: manifest.created_at,
        skald_version: manifest.skald_version,
        people: manifest.people,
        files,
        enter_again,
        verified: verified.ok(),
        verify_report: verified.render(),
    })
}

/// Writes every entry under `root` and checks each against the manifest, which comes
/// last; anything missing, extra or different fails the whole restore.
fn unpack(
    input: impl io::Read,
    passphrase: &[u8],
    root: &Path,
    total: u64,
    shown: &str,
    report: &Report,
) -> Result<(Manifest, usize), BackupError> {
    let mut reader = archive::Reader::open(input, passphrase)?;
    let mut written: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let mut manifest = None;
    let mut done = 0;
    while let Some(head) = reader.next_entry()? {
        if manifest.is_some() {
            return Err(ArchiveError::Damaged("entries after the manifest".into()).into());
        }
        if head.path == archive::MANIFEST {
            let bytes = reader.read_entry(head.size, MANIFEST_LIMIT)?;
            let parsed: Manifest = serde_json::from_slice(&bytes)
                .map_err(|err| ArchiveError::Damaged(format!("the manifest does not read: {err}")))?;
            if parsed.format > archive::MANIFEST_FORMAT {
                return Err(BackupError::Refused(format!(
                    "this backup was made by Skald {}, whose format this Skald does not read; restore it with that \
                     version or newer",
                    parsed.skald_version
                )));
            }
            manifest = Some(parsed);
            continue;
        }
        let rel = allowed(&head.path)
            .ok_or_else(|| ArchiveError::Damaged(format!("an entry names a place outside the data: {}", head.path)))?;
        if written.contains_key(&head.path) {
            return Err(ArchiveError::Damaged(format!("{} is in the archive twice", head.path)).into());
        }
        let target = root.join(&rel);
        if let Some(folder) = target.parent() {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(folder)
                .map_err(BackupError::io(format!("cannot make {}", folder.display())))?;
        }
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&target)
            .map_err(BackupError::io(format!("cannot write {}", target.display())))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let digest = reader.copy_to(head.size, &mut out)?;
        let file = out.into_inner().map_err(|err| BackupError::io("cannot write")(err.into_error()))?;
        file.sync_all().map_err(BackupError::io(format!("cannot write {}", target.display())))?;
        written.insert(head.path, (head.size, digest));
        done += head.size;
        report(&Progress { id: String::new(), stage: Stage::People, done, total, path: shown.to_owned() });
    }
    let manifest = manifest.ok_or_else(|| ArchiveError::Damaged("the archive has no manifest".into()))?;
    let listed: BTreeMap<String, (u64, String)> =
        manifest.entries.iter().map(|e| (e.path.clone(), (e.size, e.sha256.clone()))).collect();
    if listed != written {
        let differing: Vec<&String> =
            listed.keys().chain(written.keys()).filter(|path| listed.get(*path) != written.get(*path)).collect();
        return Err(ArchiveError::Damaged(format!(
            "what the archive holds differs from its manifest: {}",
            differing.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
        ))
        .into());
    }
    if !written.contains_key("database/system.db") {
        return Err(ArchiveError::Damaged("the archive holds no shared database".into()).into());
    }
    for person in &manifest.people {
        if !written.contains_key(&format!("database/users/{}.db", person.id)) {
            return Err(ArchiveError::Damaged(format!("the private file of {} is missing", person.name)).into());
        }
    }
    if let Ok(folder) = File::open(root.join("database")) {
        let _ = folder.sync_all();
    }
    let files = written.len();
    Ok((manifest, files))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_data_directorys_own_places_may_be_written() {
        for ok in ["database/system.db", "database/users/u_1a.db", "database/users/u_1a.db-wal", "agents/a/AGENT.md"] {
            assert!(allowed(ok).is_some(), "{ok}");
        }
        for bad in [
            "/etc/passwd",
            "../x",
            "agents/../../x",
            "database/users/../system.db",
            "instance.key",
            "run/api-token",
            "database/users/.db",
            "database/users/a b.db",
            "database/other.db",
        ] {
            assert!(allowed(bad).is_none(), "{bad}");
        }
    }
}

/// What restoring one person did.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "PersonRestored")]
pub struct PersonRestored {
    pub name: String,
    pub backup_made_at: String,
    /// Supervision edges that went back to pending (their copies were sealed to keys that
    /// changed).
    #[ts(type = "number")]
    pub supervision_reset: u64,
}

/// Restores one person's private file from an archive into this running instance: their
/// file as it was then, and their key wraps as they were then, so the password they had
/// when the backup was made opens it. Their windows lock first, and nobody opens a file
/// while it is put in place; the file is switched the way a key rotation switches one
/// (`store::private::settle_rotation`), after one commit in the shared database.
pub async fn restore_person(
    accounts: &crate::users::Accounts,
    actor: &crate::store::audit::Actor,
    from: &Path,
    passphrase: &[u8],
    user: &crate::ids::UserId,
) -> Result<PersonRestored, BackupError> {
    use crate::store::private;
    let row = crate::store::users::find(accounts.system(), user).await?.filter(|r| r.status != "pending").ok_or_else(
        || BackupError::Refused("no such person here; restore the whole backup into an empty folder instead".into()),
    )?;
    let input = File::open(from).map_err(BackupError::io(format!("cannot read {}", from.display())))?;
    let users_dir = accounts.users_dir_path().to_path_buf();
    let path = private::path_for(&users_dir, user);
    let next = private::rotated_path(&path);
    let ended = accounts.sessions().end_user(user).await;
    let closed = accounts.hold_files().await;
    let (passphrase, user_id) = (zeroize::Zeroizing::new(passphrase.to_vec()), user.to_string());
    let next_for_copy = next.clone();
    let unpacked = tokio::task::spawn_blocking(move || {
        extract_person(BufReader::new(input), &passphrase, &user_id, &next_for_copy)
    })
    .await
    .map_err(|err| BackupError::Io {
        context: "the restore stopped".into(),
        source: io::Error::other(err.to_string()),
    })?;
    let outcome = async {
        let (image, made_at) = unpacked?;
        let person = rows::person_in_image(&image, user)
            .await?
            .ok_or_else(|| BackupError::Refused(format!("{} is not in this backup", row.name)))?;
        if private::read_salt(&next).ok() != Some(person.file_salt) {
            return Err(
                ArchiveError::Damaged(format!("the backup's file for {} is not the one it records", row.name)).into()
            );
        }
        let reset = rows::restore_person(accounts.system(), actor, user, &person, &made_at).await?;
        private::settle_rotation(&path, &person.file_salt)
            .map_err(BackupError::io("the restored file could not take its place; it will at the next start"))?;
        Ok(PersonRestored { name: row.name.clone(), backup_made_at: made_at, supervision_reset: reset })
    }
    .await;
    if outcome.is_err() {
        // Nothing was committed: the copy goes, the file stays as it is.
        private::remove_with_logs(&next);
    }
    drop(closed);
    if let Ok(done) = &outcome {
        tracing::info!(user = %user, ended, reset = done.supervision_reset, "one person restored from a backup");
    }
    outcome
}

/// Reads the archive through, keeping the shared database's image in memory and writing
/// `user`'s file (and its WAL) beside theirs as `next`; checks them against the manifest.
fn extract_person(
    input: impl io::Read,
    passphrase: &[u8],
    user: &str,
    next: &Path,
) -> Result<(zeroize::Zeroizing<Vec<u8>>, String), BackupError> {
    let mut reader = archive::Reader::open(input, passphrase)?;
    let (db_name, wal_name) = (format!("database/users/{user}.db"), format!("database/users/{user}.db-wal"));
    let next_wal = PathBuf::from(format!("{}-wal", next.display()));
    crate::store::private::remove_with_logs(next);
    let mut image = None;
    let mut hashes: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let mut manifest: Option<Manifest> = None;
    while let Some(head) = reader.next_entry()? {
        if head.path == archive::MANIFEST {
            let bytes = reader.read_entry(head.size, MANIFEST_LIMIT)?;
            manifest = Some(
                serde_json::from_slice(&bytes)
                    .map_err(|err| ArchiveError::Damaged(format!("the manifest does not read: {err}")))?,
            );
        } else if head.path == "database/system.db" {
            let bytes = reader.read_entry(head.size, 4 << 30)?;
            let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes[..]));
            hashes.insert(head.path, (head.size, digest));
            image = Some(bytes);
        } else if head.path == db_name || head.path == wal_name {
            let target = if head.path == db_name { next.to_path_buf() } else { next_wal.clone() };
            let file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&target)
                .map_err(BackupError::io(format!("cannot write {}", target.display())))?;
            let mut out = BufWriter::new(file);
            let digest = reader.copy_to(head.size, &mut out)?;
            let file = out.into_inner().map_err(|err| BackupError::io("cannot write")(err.into_error()))?;
            file.sync_all().map_err(BackupError::io("cannot write"))?;
            hashes.insert(head.path, (head.size, digest));
        } else {
            reader.copy_to(head.size, &mut io::sink())?;
        }
    }
    let manifest = manifest.ok_or_else(|| ArchiveError::Damaged("the archive has no manifest".into()))?;
    for entry in manifest.entries.iter().filter(|e| hashes.contains_key(&e.path)) {
        if hashes.get(&entry.path) != Some(&(entry.size, entry.sha256.clone())) {
            return Err(ArchiveError::Damaged(format!("{} differs from the manifest", entry.path)).into());
        }
    }
    if !hashes.contains_key(&db_name) {
        return Err(BackupError::Refused("this person's file is not in this backup".into()));
    }
    let image = image.ok_or_else(|| ArchiveError::Damaged("the archive holds no shared database".into()))?;
    Ok((image, manifest.created_at))
}
