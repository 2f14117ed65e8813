//! Backup and restore of a whole data directory (docs/architecture.md §5.2).
//!
//! A backup is one archive ([`archive`]) holding the shared database as one consistent
//! image, every private file as the encrypted bytes on disk — no key is needed or used —
//! the agents' folders, and, when asked, the built-in model's files; sealed as a whole
//! with a passphrase the administrator chooses, because the shared database inside is
//! plain SQLite. The instance key is never in it.
//!
//! A private file nobody has open is copied as it is, with every file held closed to new
//! openers meanwhile ([`crate::users::Accounts::hold_files`]); an open one is checkpointed
//! and copied while its write lock is held ([`crate::store::private::PrivateStore`]'s
//! `hold_still`), so each copy is a state the file was in after a commit. While Skald
//! runs, `skald backup` asks the running server over its control socket ([`control`]);
//! otherwise it takes the data directory's lock and copies alone.
//!
//! Never here: a person's key, or anything read out of a private file.

pub mod archive;
pub mod command;
pub mod control;
mod restore;
mod schedule;

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

pub use archive::{ArchiveError, Manifest};
pub use restore::{PersonRestored, Restored, restore_into, restore_person};
pub use schedule::{ScheduleInput, ScheduleView};

use crate::crypto::KdfParams;
use crate::ids::UserId;
use crate::secrets::InstanceSecrets;
use crate::store::backup::{self as rows, BackupRow};
use crate::store::{StoreError, SystemStore, private};
use crate::users::Accounts;

/// What archives Skald names itself end with; the schedule prunes only these.
pub const ARCHIVE_EXTENSION: &str = "skb";
const NAME_PREFIX: &str = "skald-backup-";
/// How many bytes between two progress reports while a file is copied.
const REPORT_EVERY: u64 = 4 * 1024 * 1024;

/// A backup to write.
pub struct Request {
    /// A folder (the archive gets a dated name in it) or the archive's own path.
    pub to: PathBuf,
    pub passphrase: Zeroizing<String>,
    /// The built-in model's files too (they can be large, and can be downloaded again).
    pub include_models: bool,
}

/// Who asked for a backup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    CommandLine,
    Manual,
    Scheduled,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Self::CommandLine => "command_line",
            Self::Manual => "manual",
            Self::Scheduled => "scheduled",
        }
    }
}

/// How far a backup got.
#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
#[ts(rename = "BackupProgress")]
pub struct Progress {
    pub id: String,
    pub stage: Stage,
    /// Bytes copied so far, and the total expected (an estimate: files grow while Skald runs).
    #[ts(type = "number")]
    pub done: u64,
    #[ts(type = "number")]
    pub total: u64,
    pub path: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(rename = "BackupStage")]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    #[default]
    Shared,
    People,
    Agents,
    Models,
    Finishing,
    Done,
    Failed,
}

/// A backup written.
#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
#[ts(rename = "BackupDone")]
pub struct Done {
    pub id: String,
    pub path: String,
    #[ts(type = "number")]
    pub bytes: u64,
    pub people: usize,
    pub entries: usize,
}

/// Why a backup or restore did not happen. Never carries a passphrase or content.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("a backup is already running; wait for it to finish")]
    Busy,
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("{context}: {source}")]
    Io { context: String, source: io::Error },
}

impl BackupError {
    fn io(context: impl Into<String>) -> impl FnOnce(io::Error) -> Self {
        let context = context.into();
        move |source| Self::Io { context, source }
    }
}

/// Receives progress reports; called from blocking threads too.
pub type Report = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Where a backup reads from: the running server (which has people's files open), or a
/// process holding the data directory's lock itself (nobody has anything open).
#[derive(Clone)]
pub struct Source {
    root: PathBuf,
    system: SystemStore,
    accounts: Option<Accounts>,
}

impl Source {
    /// The running server's view: `accounts` knows whose files are open.
    pub fn live(root: &Path, system: SystemStore, accounts: Accounts) -> Self {
        Self { root: root.to_path_buf(), system, accounts: Some(accounts) }
    }

    /// A process that took the data directory's lock: nothing else has a file open.
    pub fn alone(root: &Path, system: SystemStore) -> Self {
        Self { root: root.to_path_buf(), system, accounts: None }
    }
}

/// One backup checked and recorded as started; [`Started::run`] writes it.
pub struct Started {
    id: String,
    dest: PathBuf,
    request: Request,
    source: Source,
    kind: Kind,
    _running: tokio::sync::OwnedMutexGuard<()>,
}

impl Started {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// Writes the archive, records how it went, and removes what a failure left.
    pub async fn run(self, report: Report) -> Result<Done, BackupError> {
        let Self { id, dest, request, source, kind, _running } = self;
        let partial = partial_path(&dest);
        let outcome = write_archive(&source, &request, &id, &dest, &partial, report.clone()).await;
        let progress =
            |stage, done| Progress { id: id.clone(), stage, done, total: done, path: dest.display().to_string() };
        match &outcome {
            Ok(done) => {
                rows::record_done(&source.system, &id, done.bytes, done.people).await?;
                tracing::info!(backup = %id, kind = kind.as_str(), bytes = done.bytes, people = done.people, "backup written");
                report(&progress(Stage::Done, done.bytes));
            }
            Err(err) => {
                let _ = fs::remove_file(&partial);
                let _ = rows::record_failed(&source.system, &id, &err.to_string()).await;
                tracing::warn!(backup = %id, error = %err, "backup failed");
                report(&progress(Stage::Failed, 0));
            }
        }
        outcome
    }
}

/// Checks a backup request — where it goes, the passphrase — and records it as running.
/// `running` is the one-at-a-time lock of this process.
pub async fn start(
    source: &Source,
    running: &Arc<tokio::sync::Mutex<()>>,
    request: Request,
    kind: Kind,
    by: Option<&UserId>,
) -> Result<Started, BackupError> {
    let running = running.clone().try_lock_owned().map_err(|_| BackupError::Busy)?;
    if let Some(why) = crate::users::password::weakness(&request.passphrase, "") {
        return Err(BackupError::Refused(format!("the backup passphrase is too weak. {why}")));
    }
    let dest = destination(&source.root, &request.to)?;
    let id = crate::ids::random_id("bk");
    rows::record_start(&source.system, &id, kind.as_str(), &dest.display().to_string(), by).await?;
    Ok(Started { id, dest, request, source: source.clone(), kind, _running: running })
}

/// Where the archive goes: a dated name inside an existing folder, or the path given,
/// which must not exist yet. Never inside the data directory itself.
fn destination(root: &Path, to: &Path) -> Result<PathBuf, BackupError> {
    if !to.is_absolute() {
        return Err(BackupError::Refused(format!(
            "give the backup's folder as an absolute path, not {}",
            to.display()
        )));
    }
    if to.is_dir() {
        let folder = checked_folder(root, to)?;
        let stamp = jiff::Timestamp::now().strftime("%Y%m%d-%H%M%S").to_string();
        // Two backups in one second get names of their own, still in the order made.
        return (1..100)
            .map(|n| {
                let suffix = if n == 1 { String::new() } else { format!("-{n:02}") };
                folder.join(format!("{NAME_PREFIX}{stamp}{suffix}.{ARCHIVE_EXTENSION}"))
            })
            .find(|path| !path.exists() && !partial_path(path).exists())
            .ok_or_else(|| BackupError::Refused("too many backups in one second; wait a moment".into()));
    }
    let folder = to.parent().filter(|p| p.is_dir()).ok_or_else(|| {
        BackupError::Refused(format!("there is no folder {}; make it first", to.parent().unwrap_or(to).display()))
    })?;
    if to.exists() {
        return Err(BackupError::Refused(format!("{} already exists; Skald never writes over a file", to.display())));
    }
    Ok(checked_folder(root, folder)?.join(to.file_name().expect("a file name")))
}

/// An existing folder outside the data directory, as its canonical path.
fn checked_folder(root: &Path, folder: &Path) -> Result<PathBuf, BackupError> {
    let canonical = folder
        .canonicalize()
        .map_err(|_| BackupError::Refused(format!("there is no folder {}; make it first", folder.display())))?;
    if !canonical.is_dir() {
        return Err(BackupError::Refused(format!("{} is not a folder", folder.display())));
    }
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    if canonical.starts_with(&root) {
        return Err(BackupError::Refused(
            "a backup cannot go inside the data directory it copies; choose another folder or drive".into(),
        ));
    }
    Ok(canonical)
}

fn partial_path(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().expect("a file name").to_os_string();
    name.push(".partial");
    dest.with_file_name(name)
}

/// A file to copy and the name it has in the archive.
struct Planned {
    name: String,
    path: PathBuf,
}

/// The writer moves between the async side (which holds files still) and blocking
/// threads (which copy), one step at a time.
type ArchiveWriter = archive::Writer<BufWriter<File>>;

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, BackupError> + Send + 'static,
) -> Result<T, BackupError> {
    tokio::task::spawn_blocking(work).await.map_err(|err| BackupError::Io {
        context: "the copy stopped".into(),
        source: io::Error::other(err.to_string()),
    })?
}

/// Counts bytes and reports at most every [`REPORT_EVERY`].
#[derive(Clone)]
struct Meter {
    id: String,
    path: String,
    total: u64,
    done: Arc<Mutex<(u64, u64, Stage)>>,
    report: Report,
}

impl Meter {
    fn stage(&self, stage: Stage) {
        let done = {
            let mut state = self.done.lock().expect("meter lock");
            state.2 = stage;
            state.1 = state.0;
            state.0
        };
        (self.report)(&Progress { id: self.id.clone(), stage, done, total: self.total, path: self.path.clone() });
    }

    fn add(&self, n: u64) {
        let due = {
            let mut state = self.done.lock().expect("meter lock");
            state.0 += n;
            (state.0 - state.1 >= REPORT_EVERY).then(|| {
                state.1 = state.0;
                (state.0, state.2)
            })
        };
        if let Some((done, stage)) = due {
            (self.report)(&Progress { id: self.id.clone(), stage, done, total: self.total, path: self.path.clone() });
        }
    }
}

async fn write_archive(
    source: &Source,
    request: &Request,
    id: &str,
    dest: &Path,
    partial: &Path,
    report: Report,
) -> Result<Done, BackupError> {
    let image = rows::shared_image(&source.system).await?;
    let users_dir = source.root.join("database").join("users");
    let mut extras = Vec::new();
    collect_files(&source.root, "agents", &mut extras)?;
    if request.include_models {
        collect_files(&source.root, "models", &mut extras)?;
    }
    let people_bytes: u64 = image
        .people
        .iter()
        .map(|(user, _, _)| private::path_for(&users_dir, user))
        .flat_map(|db| [db.clone(), wal_of(&db)])
        .filter_map(|path| fs::metadata(path).ok().map(|m| m.len()))
        .sum();
    let extra_bytes: u64 = extras.iter().filter_map(|f| fs::metadata(&f.path).ok().map(|m| m.len())).sum();
    let meter = Meter {
        id: id.to_owned(),
        path: dest.display().to_string(),
        total: image.bytes.len() as u64 + people_bytes + extra_bytes,
        done: Arc::default(),
        report,
    };

    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(partial)
        .map_err(BackupError::io(format!("cannot write {}", partial.display())))?;
    let passphrase = request.passphrase.clone();
    let mut writer = blocking(move || {
        Ok(archive::Writer::new(BufWriter::with_capacity(1 << 20, file), passphrase.as_bytes(), KdfParams::DEFAULT)?)
    })
    .await?;

    meter.stage(Stage::Shared);
    let shared = image.bytes;
    let shared_meter = meter.clone();
    writer = blocking(move || {
        writer.add("database/system.db", &shared)?;
        shared_meter.add(shared.len() as u64);
        Ok(writer)
    })
    .await?;

    meter.stage(Stage::People);
    let mut people = Vec::new();
    for (user, name, salt) in &image.people {
        let db = private::path_for(&users_dir, user);
        // Alone, nothing else will finish a key rotation a crash cut short: do it first,
        // so the copy is the file the recorded key opens.
        if source.accounts.is_none()
            && let Ok(salt) = <[u8; 16]>::try_from(salt.as_slice())
        {
            private::settle_rotation(&db, &salt)
                .map_err(BackupError::io("cannot finish an interrupted key rotation"))?;
        }
        // Nobody opens a file while it is copied; one already open is held still.
        let _closed = match &source.accounts {
            Some(accounts) => Some(accounts.hold_files().await),
            None => None,
        };
        let session = source.accounts.as_ref().and_then(|a| a.sessions().of_user(user));
        let held = match &session {
            Some(session) => Some(session.space.hold_still().await?),
            None => None,
        };
        let copied = {
            let meter = meter.clone();
            let user = user.clone();
            blocking(move || {
                let found = copy_private(&mut writer, &db, &user, &meter)?;
                Ok((writer, found))
            })
            .await
        };
        if let Some(held) = held {
            held.release().await;
        }
        let found;
        (writer, found) = copied?;
        if found {
            people.push(archive::Person { id: user.to_string(), name: name.clone() });
        } else {
            tracing::warn!(user = %user, "a private file listed in the shared database was not found; not in the backup");
        }
    }

    let mut stage = None;
    for planned in extras {
        let next = if planned.name.starts_with("models/") { Stage::Models } else { Stage::Agents };
        if stage != Some(next) {
            meter.stage(next);
            stage = Some(next);
        }
        let meter = meter.clone();
        writer = blocking(move || {
            let mut file =
                File::open(&planned.path).map_err(BackupError::io(format!("cannot read {}", planned.name)))?;
            let size = file.metadata().map_err(BackupError::io(format!("cannot read {}", planned.name)))?.len();
            writer.copy(&planned.name, size, &mut file, |n| meter.add(n))?;
            Ok(writer)
        })
        .await?;
    }

    meter.stage(Stage::Finishing);
    let manifest = Manifest {
        format: archive::MANIFEST_FORMAT,
        skald_version: crate::VERSION.to_owned(),
        created_at: jiff::Timestamp::now().to_string(),
        instance_id: image.instance_id,
        people: people.clone(),
        includes_models: request.include_models,
        entries: Vec::new(),
    };
    let (dest, partial) = (dest.to_path_buf(), partial.to_path_buf());
    let (bytes, entries) = blocking(move || {
        let bytes = writer.written();
        let (out, manifest) = writer.finish(manifest)?;
        let file = out.into_inner().map_err(|err| BackupError::io("cannot finish the archive")(err.into_error()))?;
        file.sync_all().map_err(BackupError::io("cannot finish the archive"))?;
        let bytes = file.metadata().map(|m| m.len()).unwrap_or(bytes);
        drop(file);
        fs::rename(&partial, &dest).map_err(BackupError::io(format!("cannot name the archive {}", dest.display())))?;
        if let Some(folder) = dest.parent() {
            let _ = File::open(folder).and_then(|f| f.sync_all());
        }
        Ok((bytes, manifest.entries.len()))
    })
    .await?;
    Ok(Done { id: id.to_owned(), path: meter.path.clone(), bytes, people: people.len(), entries })
}

fn wal_of(db: &Path) -> PathBuf {
    let mut name = db.file_name().expect("a file name").to_os_string();
    name.push("-wal");
    db.with_file_name(name)
}

/// Copies one private file and its WAL (when it has one) as they are on disk; false when
/// the file is gone.
fn copy_private(writer: &mut ArchiveWriter, db: &Path, user: &UserId, meter: &Meter) -> Result<bool, BackupError> {
    let mut file = match File::open(db) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(BackupError::io(format!("cannot read the private file of {user}"))(err)),
    };
    let size = file.metadata().map_err(BackupError::io("cannot read a private file"))?.len();
    writer.copy(&format!("database/users/{user}.db"), size, &mut file, |n| meter.add(n))?;
    if let Ok(mut wal) = File::open(wal_of(db)) {
        let size = wal.metadata().map_err(BackupError::io("cannot read a private file's log"))?.len();
        if size > 0 {
            writer.copy(&format!("database/users/{user}.db-wal"), size, &mut wal, |n| meter.add(n))?;
        }
    }
    Ok(true)
}

/// Every regular file under `root/top`, named by its path from `root` with `/`; links are
/// not followed.
fn collect_files(root: &Path, top: &str, out: &mut Vec<Planned>) -> Result<(), BackupError> {
    let mut pending = vec![root.join(top)];
    let mut found = Vec::new();
    while let Some(dir) = pending.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => return Err(BackupError::io(format!("cannot read {}", dir.display()))(err)),
        };
        for entry in entries {
            let entry = entry.map_err(BackupError::io(format!("cannot read {}", dir.display())))?;
            let kind = entry.file_type().map_err(BackupError::io(format!("cannot read {}", dir.display())))?;
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() {
                // A partial download or import is not a model yet.
                if path.extension().is_some_and(|e| e == "partial") {
                    continue;
                }
                let rel = path.strip_prefix(root).expect("under root");
                let name: Vec<String> =
                    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                found.push(Planned { name: name.join("/"), path });
            }
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    out.extend(found);
    Ok(())
}

/// The running server's backups: one at a time, recorded, reported, and scheduled.
#[derive(Clone)]
pub struct Backups {
    inner: Arc<Inner>,
}

struct Inner {
    source: Source,
    secrets: InstanceSecrets,
    running: Arc<tokio::sync::Mutex<()>>,
    current: Mutex<Option<Progress>>,
}

impl Backups {
    pub fn new(root: &Path, system: SystemStore, accounts: Accounts, secrets: InstanceSecrets) -> Self {
        Self {
            inner: Arc::new(Inner {
                source: Source::live(root, system, accounts),
                secrets,
                running: Arc::default(),
                current: Mutex::new(None),
            }),
        }
    }

    /// At start: backups a crash cut short are marked failed and their partial files go.
    pub async fn settle_interrupted(&self) -> Result<(), StoreError> {
        for path in rows::fail_interrupted(&self.inner.source.system).await? {
            let partial = partial_path(Path::new(&path));
            if fs::remove_file(&partial).is_ok() {
                tracing::info!(path = %partial.display(), "removed the partial file of an interrupted backup");
            }
        }
        Ok(())
    }

    /// Checks and records a backup; the caller runs it ([`Started::run`]) where it likes.
    pub async fn start(&self, request: Request, kind: Kind, by: Option<&UserId>) -> Result<Started, BackupError> {
        start(&self.inner.source, &self.inner.running, request, kind, by).await
    }

    /// A report that also keeps the latest progress for [`Self::current`], then passes it on.
    pub fn tracking(&self, then: Report) -> Report {
        let inner = self.inner.clone();
        Arc::new(move |progress: &Progress| {
            let finished = matches!(progress.stage, Stage::Done | Stage::Failed);
            *inner.current.lock().expect("progress lock") = (!finished).then(|| progress.clone());
            then(progress);
        })
    }

    /// The running backup's progress, if one runs.
    pub fn current(&self) -> Option<Progress> {
        self.inner.current.lock().expect("progress lock").clone()
    }

    pub async fn list(&self) -> Result<Vec<BackupRow>, StoreError> {
        rows::list(&self.inner.source.system, 50).await
    }

    fn system(&self) -> &SystemStore {
        &self.inner.source.system
    }

    fn secrets(&self) -> &InstanceSecrets {
        &self.inner.secrets
    }
}

/// Removes the oldest archives Skald named itself in `folder`, keeping the newest `keep`.
fn prune(folder: &Path, keep: usize) -> io::Result<usize> {
    let mut ours: Vec<PathBuf> = fs::read_dir(folder)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.is_file()
                && path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(NAME_PREFIX) && n.ends_with(&format!(".{ARCHIVE_EXTENSION}")))
        })
        .collect();
    // The names carry the time they were made, so their order is their age.
    ours.sort();
    let extra = ours.len().saturating_sub(keep);
    for old in &ours[..extra] {
        fs::remove_file(old)?;
    }
    Ok(extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_destination_is_never_relative_existing_or_inside_the_data_directory() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let named = destination(root.path(), elsewhere.path()).unwrap();
        let name = named.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(NAME_PREFIX) && name.ends_with(".skb"), "{name}");
        assert!(matches!(destination(root.path(), Path::new("relative/x.skb")), Err(BackupError::Refused(_))));
        assert!(matches!(destination(root.path(), &root.path().join("in-here.skb")), Err(BackupError::Refused(_))));
        assert!(matches!(
            destination(root.path(), &elsewhere.path().join("no/such/folder/x.skb")),
            Err(BackupError::Refused(_))
        ));
        fs::write(elsewhere.path().join("taken.skb"), b"x").unwrap();
        assert!(matches!(destination(root.path(), &elsewhere.path().join("taken.skb")), Err(BackupError::Refused(_))));
        assert_eq!(
            destination(root.path(), &elsewhere.path().join("mine.skb")).unwrap(),
            elsewhere.path().canonicalize().unwrap().join("mine.skb")
        );
    }

    #[test]
    fn pruning_keeps_the_newest_of_skalds_own_archives_only() {
        let dir = tempfile::tempdir().unwrap();
        for stamp in ["20261201-030000", "20261202-030000", "20261203-030000"] {
            fs::write(dir.path().join(format!("{NAME_PREFIX}{stamp}.skb")), b"x").unwrap();
        }
        fs::write(dir.path().join("holiday-photos.skb"), b"x").unwrap();
        assert_eq!(prune(dir.path(), 2).unwrap(), 1);
        assert!(!dir.path().join(format!("{NAME_PREFIX}20261201-030000.skb")).exists());
        assert!(dir.path().join(format!("{NAME_PREFIX}20261203-030000.skb")).exists());
        assert!(dir.path().join("holiday-photos.skb").exists(), "not one Skald named");
    }
}
