//! Why the server could not start. Each variant renders as one line a person can act on;
//! the binary prints it on stderr and exits non-zero.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("no data directory: the OS reports no per-user data directory; pass --data-dir or set SKALD_DATA_DIR")]
    NoDataDir,
    #[error("cannot use data directory {path}: {source}")]
    DataDir { path: PathBuf, source: std::io::Error },
    #[error("data directory {path} is in use by another Skald process{holder}; stop it or pass another --data-dir")]
    DataDirLocked { path: PathBuf, holder: String },
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind { port: u16, source: std::io::Error },
    #[error("cannot open the shared database {path}: {source}")]
    Database { path: PathBuf, source: sqlx::Error },
    #[error("cannot migrate the shared database {path}: {source}; the file may come from a newer Skald")]
    Migrate { path: PathBuf, source: sqlx::migrate::MigrateError },
    #[error("cannot prepare {path}: {reason}")]
    Prepare { path: PathBuf, reason: String },
    #[error("cannot write the launch token to {path}: {source}")]
    Token { path: PathBuf, source: std::io::Error },
    #[error("server failed: {0}")]
    Serve(std::io::Error),
}
