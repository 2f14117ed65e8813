//! The data directory: created 0700, locked with `flock` for the life of the process so
//! two Skald processes never write it at once (§5.1), and the home of every path Skald
//! writes. Readers such as `skald verify` open files here without taking the lock.
//!
//! Everything in it is private to the account running Skald — files 0600, directories
//! 0700 — not by the directory's mode alone: once the lock is taken the process's umask is
//! 077, so what SQLite, the log and the agent copies create is private too, and anything
//! found looser at start is tightened, with a warning.

use std::fs::{self, DirBuilder, File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::StartError;

const LOCK_FILE: &str = "skald.lock";
const TOKEN_FILE: &str = "api-token";

/// A data directory this process has locked. Dropping it releases the lock.
#[derive(Debug)]
pub struct DataDir {
    root: PathBuf,
    // Held open for its flock; the OS releases the lock when the process ends, even on kill -9.
    _lock: File,
    /// Files and directories found open to others at start, and tightened.
    tightened: (usize, usize),
}

impl DataDir {
    /// Creates (0700) or tightens the directory, then takes its lock. Writes nothing
    /// but the lock file unless the lock is ours.
    pub fn open_locked(root: &Path) -> Result<Self, StartError> {
        let fail = |source| StartError::DataDir { path: root.to_path_buf(), source };
        create_private_dir(root).map_err(fail)?;
        let root = root.canonicalize().map_err(fail)?;

        let mut lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(root.join(LOCK_FILE))
            .map_err(|source| StartError::DataDir { path: root.clone(), source })?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = lock.read_to_string(&mut holder);
                let holder = holder.trim();
                let holder = if holder.chars().all(|c| c.is_ascii_digit()) && !holder.is_empty() {
                    format!(" (pid {holder})")
                } else {
                    String::new()
                };
                return Err(StartError::DataDirLocked { path: root, holder });
            }
            Err(TryLockError::Error(source)) => {
                return Err(StartError::DataDir { path: root, source });
            }
        }
        // Record who holds it, so a refused second process can say which one to stop.
        lock.set_len(0)
            .and_then(|()| lock.write_all(std::process::id().to_string().as_bytes()))
            .map_err(|source| StartError::DataDir { path: root.clone(), source })?;

        // From here on, whatever this process creates is its own account's alone.
        rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
        for sub in
            [Self::run_dir_of(&root), Self::logs_dir_of(&root), root.join("database"), root.join("database/users")]
        {
            create_private_dir(&sub).map_err(|source| StartError::DataDir { path: sub.clone(), source })?;
        }
        let tightened = tighten(&root);
        Ok(Self { root, _lock: lock, tightened })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How many files and directories were open to others at start (and are no longer),
    /// for the log once it runs.
    pub fn tightened(&self) -> (usize, usize) {
        self.tightened
    }

    pub fn system_db(&self) -> PathBuf {
        system_db_path(&self.root)
    }

    /// Where the private files live: `database/users/`.
    pub fn users_dir(&self) -> PathBuf {
        self.root.join("database").join("users")
    }

    /// The built-in provider's model files (§9); not private, so outside `users`.
    pub fn models_dir(&self) -> PathBuf {
        self.root.join("models")
    }

    pub fn logs_dir(&self) -> PathBuf {
        Self::logs_dir_of(&self.root)
    }

    pub fn token_file(&self) -> PathBuf {
        Self::run_dir_of(&self.root).join(TOKEN_FILE)
    }

    /// Writes this run's launch token, mode 0600, atomically: a reader sees the old file
    /// or the whole new one, never a prefix.
    pub fn write_token(&self, token: &str) -> std::io::Result<()> {
        let path = self.token_file();
        let tmp = path.with_extension("tmp");
        let mut file = OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
        // `mode` only applies on creation; a stale temp file from a crash keeps its bits.
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
        file.write_all(token.as_bytes())?;
        file.sync_all()?;
        fs::rename(&tmp, &path)?;
        File::open(Self::run_dir_of(&self.root))?.sync_all()
    }

    /// The token dies with the process, so its file goes too.
    pub fn remove_token(&self) {
        let _ = fs::remove_file(self.token_file());
    }

    fn run_dir_of(root: &Path) -> PathBuf {
        root.join("run")
    }

    fn logs_dir_of(root: &Path) -> PathBuf {
        root.join("logs")
    }
}

/// Where the shared database lives under a data directory; readers that do not hold the
/// lock (`skald verify`, backup) use this too.
pub fn system_db_path(root: &Path) -> PathBuf {
    root.join("database").join("system.db")
}

/// Takes away group and others' access to everything under `dir` (links are not
/// followed): how many files and directories it changed.
fn tighten(dir: &Path) -> (usize, usize) {
    let (mut files, mut dirs) = (0, 0);
    let Ok(entries) = fs::read_dir(dir) else { return (0, 0) };
    for entry in entries.flatten() {
        let Ok(meta) = entry.path().symlink_metadata() else { continue };
        let mode = meta.permissions().mode();
        if meta.is_dir() {
            let (f, d) = tighten(&entry.path());
            files += f;
            dirs += d;
        }
        if meta.file_type().is_symlink() || mode & 0o077 == 0 {
            continue;
        }
        if fs::set_permissions(entry.path(), fs::Permissions::from_mode(mode & 0o700)).is_ok() {
            if meta.is_dir() {
                dirs += 1;
            } else {
                files += 1;
            }
        }
    }
    (files, dirs)
}

/// Creates `path` and any missing ancestors as 0700; an existing directory is tightened
/// to 0700 because it will hold keys and private files.
fn create_private_dir(path: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(path)?;
    let meta = fs::metadata(path)?;
    if !meta.is_dir() {
        return Err(std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"));
    }
    if meta.permissions().mode() & 0o777 != 0o700 {
        fs::set_permissions(path, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}
