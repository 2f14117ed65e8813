//! The folders an administrator may import a model file from by path. Skald reads the
//! disk as the account it runs as, and an administrator of Skald need not be that
//! account's owner: outside these folders an import is refused with one answer, the same
//! whether the path exists or not, so the route cannot probe the rest of the disk.
//!
//! Never here: reading the file; this only decides which path may be read.

use std::path::{Component, Path, PathBuf};

/// The folders imports may read, each as the disk really names it (symlinks resolved).
#[derive(Debug, Clone, Default)]
pub struct ImportDirs(Vec<PathBuf>);

/// Where removable disks and extra drives are mounted, on Linux and macOS.
const MOUNTS: [&str; 4] = ["/media", "/run/media", "/mnt", "/Volumes"];

/// Why a path may not be imported.
#[derive(Debug, PartialEq, Eq)]
pub enum Confined {
    /// Outside every import folder, or leading out of one through a link. Carries nothing
    /// about the path: the answer must not depend on what is there.
    Outside,
    /// Inside an import folder, but nothing is there.
    Missing,
}

impl ImportDirs {
    /// The home folder of the account Skald runs as, the temporary folder, where disks are
    /// mounted, and any folders `SKALD_IMPORT_DIRS` lists (separated as in `PATH`).
    pub fn from_env() -> Self {
        let home = directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_path_buf());
        let listed: Vec<PathBuf> = std::env::var_os("SKALD_IMPORT_DIRS")
            .map(|list| std::env::split_paths(&list).collect())
            .unwrap_or_default();
        let dirs = home.into_iter().chain([std::env::temp_dir()]).chain(MOUNTS.iter().map(PathBuf::from)).chain(listed);
        Self::new(dirs)
    }

    /// The folders of `dirs` that exist, as the disk names them.
    pub fn new(dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut real: Vec<PathBuf> =
            dirs.into_iter().filter(|d| d.is_absolute()).filter_map(|d| std::fs::canonicalize(d).ok()).collect();
        real.sort();
        real.dedup();
        Self(real)
    }

    pub fn folders(&self) -> &[PathBuf] {
        &self.0
    }

    /// The real path of the file `source` names, if it lies inside an import folder.
    /// Judged by where the path really leads — a link inside a folder may point out of it
    /// — and, for a path that does not exist, by where its deepest existing folder leads,
    /// so that a missing file outside is refused exactly like an existing one.
    pub fn confine(&self, source: &Path) -> Result<PathBuf, Confined> {
        let lexical = without_dots(source);
        let mut existing = lexical.as_path();
        let real = loop {
            if let Ok(real) = std::fs::canonicalize(existing) {
                break real;
            }
            existing = existing.parent().ok_or(Confined::Outside)?;
        };
        let rest = lexical.strip_prefix(existing).unwrap_or(Path::new(""));
        let leads_to = real.join(rest);
        if !self.0.iter().any(|dir| leads_to.starts_with(dir)) {
            return Err(Confined::Outside);
        }
        if existing == lexical { Ok(real) } else { Err(Confined::Missing) }
    }
}

/// `path` with `.` dropped and each `..` taking away the component before it, as a person
/// reads it; the disk is then asked where that leads.
fn without_dots(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) | Component::Normal(_) => out.push(component),
            // What is left is `..`.
            _ => {
                out.pop();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_outside_is_refused_alike_whether_or_not_it_exists() {
        let allowed = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("there.gguf"), b"GGUF").unwrap();
        let dirs = ImportDirs::new([allowed.path().to_path_buf()]);
        assert_eq!(dirs.confine(&elsewhere.path().join("there.gguf")), Err(Confined::Outside));
        assert_eq!(dirs.confine(&elsewhere.path().join("not-there.gguf")), Err(Confined::Outside));
        assert_eq!(dirs.confine(&elsewhere.path().join("no/such/folder/x.gguf")), Err(Confined::Outside));
        assert_eq!(dirs.confine(Path::new("/")), Err(Confined::Outside));
    }

    #[test]
    fn a_file_inside_is_allowed_and_a_missing_one_inside_is_said_to_be_missing() {
        let allowed = tempfile::tempdir().unwrap();
        std::fs::write(allowed.path().join("here.gguf"), b"GGUF").unwrap();
        let dirs = ImportDirs::new([allowed.path().to_path_buf()]);
        let real = std::fs::canonicalize(allowed.path().join("here.gguf")).unwrap();
        assert_eq!(dirs.confine(&allowed.path().join("here.gguf")), Ok(real.clone()));
        assert_eq!(dirs.confine(&allowed.path().join("./sub/../here.gguf")), Ok(real));
        assert_eq!(dirs.confine(&allowed.path().join("gone.gguf")), Err(Confined::Missing));
    }

    #[test]
    fn dots_and_links_cannot_lead_out_of_an_import_folder() {
        let allowed = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("there.gguf"), b"GGUF").unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), allowed.path().join("link")).unwrap();
        let dirs = ImportDirs::new([allowed.path().to_path_buf()]);
        let name = elsewhere.path().file_name().unwrap();
        let dotted = allowed.path().join("..").join(name).join("there.gguf");
        assert_eq!(dirs.confine(&dotted), Err(Confined::Outside));
        assert_eq!(dirs.confine(&allowed.path().join("link/there.gguf")), Err(Confined::Outside));
        assert_eq!(dirs.confine(&allowed.path().join("link/not-there.gguf")), Err(Confined::Outside));
    }
}
