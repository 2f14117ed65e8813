//! The fallback key store: `<data dir>/instance.key`, 32 raw bytes, mode 0600, written
//! atomically and never overwritten once it exists.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::KeyStore;
use crate::crypto::InstanceKey;

pub struct KeyFile {
    path: PathBuf,
}

impl KeyFile {
    pub fn new(data_dir: &Path) -> Self {
        Self { path: data_dir.join("instance.key") }
    }
}

impl KeyStore for KeyFile {
    fn load(&self) -> Result<Option<InstanceKey>, String> {
        match fs::read(&self.path) {
            Ok(bytes) => InstanceKey::from_bytes(&bytes)
                .map(Some)
                .ok_or_else(|| format!("{} is not a 32-byte key", self.path.display())),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(format!("cannot read {}: {err}", self.path.display())),
        }
    }

    fn save(&self, key: &InstanceKey) -> Result<(), String> {
        let fail = |err: std::io::Error| format!("{}: {err}", self.path.display());
        let tmp = self.path.with_extension("key.tmp");
        let mut file =
            OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp).map_err(fail)?;
        file.write_all(key.as_bytes()).and_then(|()| file.sync_all()).map_err(fail)?;
        // A hard link cannot replace an existing file: an existing key is never overwritten.
        let linked = fs::hard_link(&tmp, &self.path);
        let _ = fs::remove_file(&tmp);
        linked.map_err(fail)
    }
}
