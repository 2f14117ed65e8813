//! The built-in provider's models as files (§9): importing a GGUF file from disk, taking
//! one uploaded, downloading one of the catalogue or from an address in the background,
//! and removing one. Each is checked before it is offered as `local/<id>`.
//!
//! Never here: telling people. A download says how it goes through the [`Announce`] its
//! caller gives it, and the caller tells the agent that a model was offered.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use super::local::download::{self, DownloadError, Status};
use super::local::{self, ImportError, LocalModels, catalogue};
use crate::ids::UserId;
use crate::store::audit::Actor;
use crate::store::local_models::{self, LocalModel};
use crate::store::providers::Model;
use crate::store::{StoreError, SystemStore, roles};

/// Why a model could not be imported, downloaded or removed.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error("give the model file's full path, starting at the root of the disk")]
    RelativePath,
    #[error("a model's name is at most 200 characters")]
    NameTooLong,
    #[error(transparent)]
    Import(#[from] ImportError),
    /// The same file is already here, as the model named when the store knows which.
    #[error("{}", .0.as_ref().map_or_else(|| "this model is already imported".to_owned(), |id| format!("this model is already imported as {id}")))]
    AlreadyImported(Option<String>),
    #[error("{0}")]
    ProviderNameTaken(&'static str),
    #[error("too many models are called {0}")]
    IdTaken(String),
    #[error("no local model {0}")]
    NoModel(String),
    #[error("the upload stopped after {received} bytes ({why}); try again")]
    UploadInterrupted { received: u64, why: String },
    #[error("the upload was empty")]
    EmptyUpload,
    #[error("the catalogue has no model {0}")]
    NotInCatalogue(String),
    #[error("name a model of the catalogue, or give an http or https address")]
    InvalidUrl,
    #[error("a SHA-256 is 64 hex digits")]
    InvalidSha256,
    #[error("{0} is already downloading")]
    Downloading(String),
    #[error("could not write the model file: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A model just offered: its id and its name as roles allow it, `local/<id>`.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "InstalledModel")]
pub struct Installed {
    pub id: String,
    pub model: String,
    /// `chat`, or `embedding` (used for recall, not offered as a chat model).
    pub kind: String,
}

/// What to download (`POST /api/local-models/downloads`).
#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct DownloadRequest {
    /// A model of the catalogue, by id; or else:
    #[ts(optional)]
    pub catalogue: Option<String>,
    /// an http(s) address of a GGUF file,
    #[ts(optional)]
    pub url: Option<String>,
    /// with the file's SHA-256, checked before the model is offered.
    #[ts(optional)]
    pub sha256: Option<String>,
    #[ts(optional)]
    pub name: Option<String>,
}

/// Where a download's progress goes: to the administrators of the moment, and on to the
/// rest of Skald once its model is offered.
pub trait Announce: Send + Sync + 'static {
    /// Tells each of `to` how the download stands now.
    fn progress(&self, to: &[UserId], status: &Status);
    /// The model was offered; called before the download says it is done.
    fn installed(&self, installed: &Installed) -> impl Future<Output = ()> + Send;
}

/// How often a download reads again who the administrators are.
const MANAGERS_REFRESH: std::time::Duration = std::time::Duration::from_secs(2);

/// The built-in provider's model files and the shared database that lists them.
#[derive(Clone)]
pub struct Library {
    pub system: SystemStore,
    pub models: LocalModels,
}

impl Library {
    /// Checks the file at `source` (absolute), copies it in and offers it.
    pub async fn import(&self, actor: &Actor, source: &str, name: Option<&str>) -> Result<Installed, LibraryError> {
        let source = PathBuf::from(source.trim());
        if !source.is_absolute() {
            return Err(LibraryError::RelativePath);
        }
        let name = given_name(name)?;
        let staged = self.models.stage(source.clone()).await?;
        self.install(actor, staged, name, format!("file:{}", source.display())).await
    }

    /// Writes an uploaded file's chunks to disk, hashed as they arrive, then checks and
    /// offers it like an import. A transfer that breaks off leaves nothing behind.
    pub async fn upload<B, E>(
        &self,
        actor: &Actor,
        name: Option<&str>,
        chunks: impl futures_util::Stream<Item = Result<B, E>> + Unpin,
    ) -> Result<Installed, LibraryError>
    where
        B: AsRef<[u8]>,
        E: std::fmt::Display,
    {
        let name = given_name(name)?;
        if !local::AVAILABLE {
            return Err(ImportError::NotBuilt.into());
        }
        let temp = self.models.partial_path("upload")?;
        let sha256 = match receive(chunks, &temp).await {
            Ok(sha256) => sha256,
            Err(err) => {
                let _ = tokio::fs::remove_file(&temp).await;
                return Err(err);
            }
        };
        let fallback = name.clone().unwrap_or_else(|| "uploaded model".to_owned());
        let staged = self.models.adopt(temp, sha256, fallback).await?;
        self.install(actor, staged, name, "upload".to_owned()).await
    }

    /// Offers a staged model: a fresh id from its name, its file moved into place, its row
    /// and catalogue entry written.
    async fn install(
        &self,
        actor: &Actor,
        staged: local::Staged,
        name: Option<String>,
        source: String,
    ) -> Result<Installed, LibraryError> {
        if let Some(existing) = local_models::by_sha256(&self.system, &staged.sha256).await? {
            return Err(LibraryError::AlreadyImported(Some(existing.id)));
        }
        let name = name.unwrap_or_else(|| staged.suggested_name.clone());
        let id = self.free_id(&local::slug(&name)).await?;
        let row = LocalModel {
            id: id.clone(),
            name,
            file_size: i64::try_from(staged.info.file_size).unwrap_or(i64::MAX),
            sha256: staged.sha256.clone(),
            architecture: staged.info.architecture.clone().unwrap_or_else(|| "unknown".to_owned()),
            parameters: staged.parameters.and_then(|n| i64::try_from(n).ok()),
            quantization: staged.info.file_type.map(quantization),
            context_length: i64::from(staged.context),
            kind: staged.kind.to_owned(),
            source,
            imported_by: actor.name.clone(),
            imported_at: String::new(),
        };
        // An embedding model is not offered to roles: recall finds it by its kind.
        let model = (staged.kind == local_models::CHAT).then(|| Model {
            model_id: id.clone(),
            context_window: i64::from(staged.context),
            strength: local::strength(staged.parameters).to_owned(),
            tools: staged.info.template_takes_tools,
            // The built-in engine reads words only.
            images: false,
        });
        staged.install(&self.models, &id)?;
        if let Err(err) = local_models::insert(&self.system, actor, &row, model.as_ref()).await {
            let _ = std::fs::remove_file(self.models.path(&id));
            return Err(match err {
                StoreError::WrongState(message) => LibraryError::ProviderNameTaken(message),
                StoreError::Exists => LibraryError::AlreadyImported(None),
                other => other.into(),
            });
        }
        tracing::info!(model = %id, bytes = row.file_size, "local model added");
        Ok(Installed { model: format!("{}/{id}", local_models::PROVIDER_NAME), id, kind: row.kind })
    }

    /// Withdraws a model, unloads it if loaded and removes its file.
    pub async fn delete(&self, actor: &Actor, id: &str) -> Result<(), LibraryError> {
        local_models::delete(&self.system, actor, id).await.map_err(|err| no_model(err, id))?;
        self.models.unload(id).await;
        if let Err(err) = std::fs::remove_file(self.models.path(id))
            && err.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(model = %id, error = %err, "could not remove a deleted model's file");
        }
        Ok(())
    }

    /// Lets a model that crashed the built-in model's worker too often start again.
    pub async fn retry(&self, actor: &Actor, id: &str) -> Result<(), LibraryError> {
        local_models::record_retry(&self.system, actor, id).await.map_err(|err| no_model(err, id))?;
        let had_crashes = self.models.retry(id);
        tracing::info!(model = %id, had_crashes, "local model may start again");
        Ok(())
    }

    /// The catalogue's recommended models, each with the model it already is here.
    pub async fn catalogue(&self) -> Result<Vec<CatalogueEntry>, LibraryError> {
        let here = local_models::list(&self.system).await?;
        let entries = catalogue::entries()
            .into_iter()
            .map(|entry| {
                // The same file, by its checksum; or, for one converted on arrival (whose
                // file no checksum of the download names), by where it was downloaded from.
                let checksum = entry.archive_member.as_ref().map_or(entry.sha256.as_str(), |m| m.sha256.as_str());
                let downloaded = format!("url:{}", entry.source_url);
                let installed = here
                    .iter()
                    .find(|m| m.sha256 == checksum || m.source == downloaded)
                    .map(|m| format!("{}/{}", local_models::PROVIDER_NAME, m.id));
                CatalogueEntry { entry, installed }
            })
            .collect();
        Ok(entries)
    }

    /// Starts fetching a model of the catalogue, or from an address, in the background;
    /// its id. Asked again after an interruption, it resumes where the transfer stopped.
    pub fn download(
        &self,
        actor: &Actor,
        req: DownloadRequest,
        announce: impl Announce,
    ) -> Result<String, LibraryError> {
        if !local::AVAILABLE {
            return Err(ImportError::NotBuilt.into());
        }
        let source = match req.catalogue.as_deref() {
            Some(id) => {
                let entry = catalogue::entries()
                    .into_iter()
                    .find(|e| e.id == id)
                    .ok_or_else(|| LibraryError::NotInCatalogue(id.to_owned()))?;
                Source {
                    catalogue: Some(entry.id),
                    url: entry.source_url,
                    sha256: Some(entry.sha256),
                    member: entry.archive_member,
                    name: Some(given_name(req.name.as_deref())?.unwrap_or_else(|| entry.name.clone())),
                    shown: entry.name,
                }
            }
            None => Source::from_address(req)?,
        };
        // The same file asked for again finds its partial download by this id.
        let id = {
            use sha2::Digest;
            let key = source.sha256.clone().unwrap_or_else(|| source.url.clone());
            hex::encode(sha2::Sha256::digest(key.as_bytes()))[..16].to_owned()
        };
        if !self.models.downloads().begin(&id, &source.shown, &source.url, source.catalogue.as_deref()) {
            return Err(LibraryError::Downloading(source.shown));
        }
        let (library, actor, task_id) = (self.clone(), actor.clone(), id.clone());
        tokio::spawn(async move { library.run_download(&actor, &task_id, source, announce).await });
        Ok(id)
    }

    /// Fetches, checks and offers one model, telling whoever administers the instance at
    /// the time how it goes.
    async fn run_download(&self, actor: &Actor, id: &str, source: Source, announce: impl Announce) {
        let models = &self.models;
        // Who hears of it: the administrators of the moment, read again every few seconds
        // so that someone who stops being one stops hearing of it.
        let mut first = roles::managers(&self.system).await.unwrap_or_default();
        if !first.contains(&actor.id) {
            first.push(actor.id.clone());
        }
        let managers = Arc::new(Mutex::new(first));
        let _refresh = {
            let (managers, system) = (Arc::clone(&managers), self.system.clone());
            tokio_util::task::AbortOnDropHandle::new(tokio::spawn(async move {
                loop {
                    tokio::time::sleep(MANAGERS_REFRESH).await;
                    if let Ok(now) = roles::managers(&system).await {
                        *managers.lock().unwrap_or_else(PoisonError::into_inner) = now;
                    }
                }
            }))
        };
        let tell = |status: Option<Status>| {
            if let Some(status) = status {
                announce.progress(&managers.lock().unwrap_or_else(PoisonError::into_inner), &status);
            }
        };
        let failed = |why: String| tell(models.downloads().update(id, |d| fail(d, why)));
        let partial = models.dir().join(format!(".download-{id}.partial"));
        if let Err(err) = std::fs::create_dir_all(models.dir()) {
            return failed(err.to_string());
        }
        let reach = models.settings().download_reach;
        let client = download::client(reach);
        let fetched = download::fetch(&client, reach, &source.url, &partial, |progress| {
            tell(models.downloads().update(id, |d| {
                d.received = progress.received;
                d.total = progress.total;
            }));
        })
        .await;
        let sha256 = match fetched {
            Ok(sha256) => sha256,
            Err(err @ DownloadError::Interrupted { .. }) => {
                return tell(models.downloads().update(id, |d| {
                    d.state = "interrupted";
                    d.error = Some(err.to_string());
                }));
            }
            Err(err) => return failed(err.to_string()),
        };
        if let Some(expected) = source.sha256.as_ref().filter(|expected| **expected != sha256) {
            let _ = tokio::fs::remove_file(&partial).await;
            return failed(download::mismatch(&sha256, expected));
        }
        tell(models.downloads().update(id, |d| d.state = "checking"));
        let (file, sha256) = match source.member {
            None => (partial, sha256),
            Some(member) => match unpack(models, &partial, &member).await {
                Ok(unpacked) => unpacked,
                Err(why) => return failed(why),
            },
        };
        let staged = match models.adopt(file, sha256, source.shown).await {
            Ok(staged) => staged,
            Err(err) => return failed(err.to_string()),
        };
        match self.install(actor, staged, source.name, format!("url:{}", source.url)).await {
            Ok(installed) => {
                announce.installed(&installed).await;
                tell(models.downloads().update(id, |d| {
                    d.state = "done";
                    d.model = Some(installed.model);
                }));
            }
            Err(err) => failed(said(&err)),
        }
    }

    /// `base`, or `base-2`, `base-3`… whichever is free.
    async fn free_id(&self, base: &str) -> Result<String, LibraryError> {
        for n in 1..1000 {
            let candidate = if n == 1 { base.to_owned() } else { format!("{base}-{n}") };
            if local_models::id_free(&self.system, &candidate).await? {
                return Ok(candidate);
            }
        }
        Err(LibraryError::IdTaken(base.to_owned()))
    }
}

/// A recommended model, with `local/<id>` when a model with its file is already here.
#[derive(Serialize, ts_rs::TS)]
pub struct CatalogueEntry {
    #[serde(flatten)]
    pub entry: catalogue::Entry,
    pub installed: Option<String>,
}

/// What one download fetches and checks.
struct Source {
    /// The catalogue's id for it, when it is one of the catalogue's.
    catalogue: Option<String>,
    url: String,
    sha256: Option<String>,
    member: Option<catalogue::ArchiveMember>,
    name: Option<String>,
    shown: String,
}

impl Source {
    fn from_address(req: DownloadRequest) -> Result<Self, LibraryError> {
        let url = req
            .url
            .as_deref()
            .and_then(|raw| url::Url::parse(raw.trim()).ok())
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .ok_or(LibraryError::InvalidUrl)?;
        let sha256 = match req.sha256.as_deref().map(|h| h.trim().to_ascii_lowercase()) {
            Some(hash) if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => Some(hash),
            Some(_) => return Err(LibraryError::InvalidSha256),
            None => None,
        };
        let name = given_name(req.name.as_deref())?;
        let file_name = url.path_segments().and_then(|mut s| s.next_back()).unwrap_or("model").to_owned();
        let shown = name.clone().unwrap_or_else(|| file_name.trim_end_matches(".gguf").to_owned());
        Ok(Self { catalogue: None, url: url.to_string(), sha256, member: None, name, shown })
    }
}

/// What a download's status tells the administrators of a model that could not be
/// offered: a failure inside Skald goes to the log, as it would for a request.
fn said(err: &LibraryError) -> String {
    match err {
        LibraryError::Io(_) | LibraryError::Store(_) | LibraryError::Import(ImportError::Io(_)) => {
            tracing::error!(error = %err, "a downloaded model could not be offered");
            "internal error".to_owned()
        }
        other => other.to_string(),
    }
}

/// The store's "not found" for a model, said with its id.
fn no_model(err: StoreError, id: &str) -> LibraryError {
    match err {
        StoreError::NotFound => LibraryError::NoModel(id.to_owned()),
        other => other.into(),
    }
}

/// Writes an upload's chunks to `path`, synced, and returns their SHA-256.
async fn receive<B, E>(
    mut chunks: impl futures_util::Stream<Item = Result<B, E>> + Unpin,
    path: &Path,
) -> Result<String, LibraryError>
where
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    use futures_util::StreamExt;
    use sha2::Digest;
    use tokio::io::AsyncWriteExt;
    let mut file = tokio::fs::File::create(path).await?;
    let mut hasher = sha2::Sha256::new();
    let mut received = 0u64;
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|err| LibraryError::UploadInterrupted { received, why: err.to_string() })?;
        let chunk = chunk.as_ref();
        hasher.update(chunk);
        received += chunk.len() as u64;
        file.write_all(chunk).await?;
    }
    if received == 0 {
        return Err(LibraryError::EmptyUpload);
    }
    file.sync_all().await?;
    Ok(hex::encode(hasher.finalize()))
}

/// The name a person gave a model: none when they left it blank (the model's own name or
/// its file's is used then); at most 200 characters.
fn given_name(raw: Option<&str>) -> Result<Option<String>, LibraryError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(name) if name.chars().count() > 200 => Err(LibraryError::NameTooLong),
        Some(name) => Ok(Some(name.to_owned())),
    }
}

/// llama.cpp's name for a `general.file_type`.
fn quantization(file_type: u32) -> String {
    let known = match file_type {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        7 => "Q8_0",
        8 => "Q5_0",
        9 => "Q5_1",
        10 => "Q2_K",
        11 => "Q3_K_S",
        12 => "Q3_K_M",
        13 => "Q3_K_L",
        14 => "Q4_K_S",
        15 => "Q4_K_M",
        16 => "Q5_K_S",
        17 => "Q5_K_M",
        18 => "Q6_K",
        19 => "IQ2_XXS",
        20 => "IQ2_XS",
        24 => "IQ1_S",
        25 => "IQ4_NL",
        26 => "IQ3_S",
        28 => "IQ4_XS",
        32 => "BF16",
        _ => return format!("type {file_type}"),
    };
    known.to_owned()
}

/// Takes the model out of a downloaded archive and checks it; the archive is removed
/// either way. The model's partial file and its checksum.
async fn unpack(
    models: &LocalModels,
    archive: &Path,
    member: &catalogue::ArchiveMember,
) -> Result<(PathBuf, String), String> {
    let out = models.partial_path("unpack").map_err(|err| err.to_string())?;
    let (from, to, path) = (archive.to_owned(), out.clone(), member.path.clone());
    let extracted = tokio::task::spawn_blocking(move || catalogue::extract(&from, &path, &to))
        .await
        .map_err(|err| err.to_string())
        .and_then(|done| done.map_err(|err| format!("the download is not the archive expected ({err})")));
    let _ = tokio::fs::remove_file(archive).await;
    match extracted {
        Ok(sha256) if sha256 == member.sha256 => Ok((out, sha256)),
        Ok(sha256) => {
            let _ = tokio::fs::remove_file(&out).await;
            Err(download::mismatch(&sha256, &member.sha256))
        }
        Err(why) => {
            let _ = tokio::fs::remove_file(&out).await;
            Err(why)
        }
    }
}

fn fail(status: &mut Status, why: String) {
    status.state = "failed";
    status.error = Some(why);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_name_is_none_and_a_long_one_is_refused() {
        assert_eq!(given_name(Some("  ")).unwrap(), None);
        assert_eq!(given_name(Some(" Tiny ")).unwrap().as_deref(), Some("Tiny"));
        assert!(matches!(given_name(Some(&"x".repeat(201))), Err(LibraryError::NameTooLong)));
    }

    #[test]
    fn an_address_without_a_name_is_shown_by_its_file_name() {
        let req = DownloadRequest {
            catalogue: None,
            url: Some("https://example.org/models/tiny.gguf".into()),
            sha256: None,
            name: None,
        };
        let source = Source::from_address(req).unwrap();
        assert_eq!(source.shown, "tiny");
        assert_eq!(source.url, "https://example.org/models/tiny.gguf");
    }

    #[test]
    fn a_checksum_that_is_not_64_hex_digits_is_refused() {
        let req = DownloadRequest {
            catalogue: None,
            url: Some("https://example.org/m.gguf".into()),
            sha256: Some("abc".into()),
            name: None,
        };
        assert!(matches!(Source::from_address(req), Err(LibraryError::InvalidSha256)));
    }

    #[test]
    fn an_internal_failure_is_not_shown_in_a_download_status() {
        let io = LibraryError::Io(std::io::Error::other("disk on fire"));
        assert_eq!(said(&io), "internal error");
        assert_eq!(said(&LibraryError::IdTaken("m".into())), "too many models are called m");
    }
}
