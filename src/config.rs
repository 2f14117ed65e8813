//! Where Skald keeps its data and which port it listens on. Resolution only: this
//! module never creates, reads or locks anything (that is `store::data_dir`).

use std::path::PathBuf;

/// The environment variable that names the data directory when `--data-dir` is absent.
pub const DATA_DIR_ENV: &str = "SKALD_DATA_DIR";

/// What the server needs to know before it starts.
#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    /// 0 asks the OS for a free port.
    pub port: u16,
}

/// The data directory: the explicit flag, else `SKALD_DATA_DIR` (clap folds both into
/// `explicit`), else the OS's per-user data directory.
pub fn resolve_data_dir(explicit: Option<PathBuf>) -> Option<PathBuf> {
    explicit
        .filter(|p| !p.as_os_str().is_empty())
        .or_else(|| directories::ProjectDirs::from("", "", "Skald").map(|d| d.data_dir().to_path_buf()))
}
