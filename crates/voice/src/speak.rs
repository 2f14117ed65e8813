//! Speech out: text read aloud by a Piper voice (a VITS model in ONNX), with its phonemes
//! from Debian's `espeak-ng` and the model run by ONNX Runtime, loaded from the library
//! file Skald names (`ort`'s `load-dynamic`: nothing is downloaded at build time).
//!
//! A voice is `NAME.onnx` with `NAME.onnx.json` beside it, as Piper publishes them: the
//! JSON holds the sample rate, the espeak voice, the inference scales and the map from
//! each phoneme to the model's symbol ids.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use ort::session::Session;
use ort::value::Tensor;
use serde::Deserialize;

/// The most text taken at once: a long answer is read sentence by sentence, each a request.
pub const MAX_TEXT: usize = 16 * 1024;
/// The pause between two sentences, in seconds.
const SENTENCE_GAP: f32 = 0.25;

/// A voice's `.onnx.json`: what reading with it needs.
#[derive(Debug, Deserialize)]
pub struct VoiceConfig {
    audio: Audio,
    espeak: Espeak,
    #[serde(default)]
    inference: Inference,
    #[serde(default)]
    num_speakers: u32,
    phoneme_id_map: HashMap<String, Vec<i64>>,
}

#[derive(Debug, Deserialize)]
struct Audio {
    sample_rate: u32,
}

#[derive(Debug, Deserialize)]
struct Espeak {
    voice: String,
}

#[derive(Debug, Deserialize)]
struct Inference {
    noise_scale: f32,
    length_scale: f32,
    noise_w: f32,
}

impl Default for Inference {
    fn default() -> Self {
        Self { noise_scale: 0.667, length_scale: 1.0, noise_w: 0.8 }
    }
}

impl VoiceConfig {
    pub fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read(path).map_err(|err| format!("{}: {err}", path.display()))?;
        let config: Self = serde_json::from_slice(&text)
            .map_err(|err| format!("{} is not a Piper voice's settings: {err}", path.display()))?;
        for symbol in ["_", "^", "$"] {
            if !config.phoneme_id_map.contains_key(symbol) {
                return Err(format!("{} maps no id to {symbol:?}: it is not a Piper voice", path.display()));
            }
        }
        if !(8_000..=48_000).contains(&config.audio.sample_rate) {
            return Err(format!(
                "{}: a sample rate of {} Hz is not a voice's",
                path.display(),
                config.audio.sample_rate
            ));
        }
        Ok(config)
    }

    /// The model's symbol ids for `phonemes` (IPA as espeak writes it), in Piper's shape:
    /// a start, then each phoneme followed by a pause symbol, then an end. A phoneme the
    /// voice does not know is left out.
    pub fn ids(&self, phonemes: &str) -> Vec<i64> {
        let map = &self.phoneme_id_map;
        let pad = &map["_"];
        let mut ids = map["^"].clone();
        ids.extend(pad);
        let mut buf = [0u8; 4];
        for c in phonemes.chars() {
            if let Some(these) = map.get(&*c.encode_utf8(&mut buf)) {
                ids.extend(these);
                ids.extend(pad);
            }
        }
        ids.extend(&map["$"]);
        ids
    }

    pub fn sample_rate(&self) -> u32 {
        self.audio.sample_rate
    }
}

/// A loaded voice, ready to read.
pub struct Reader {
    session: Session,
    config: VoiceConfig,
    espeak: std::path::PathBuf,
    /// Kept alive as long as the session.
    _environment: ort::environment::Environment,
}

impl Reader {
    /// Loads ONNX Runtime from `runtime`, then the voice at `model` (its settings beside it).
    pub fn load(runtime: &Path, espeak: &Path, model: &Path) -> Result<Self, String> {
        let mut settings = model.as_os_str().to_owned();
        settings.push(".json");
        let config = VoiceConfig::read(Path::new(&settings))?;
        let environment = ort::init_from(runtime)
            .map_err(|err| format!("ONNX Runtime could not be loaded from {}: {err}", runtime.display()))?
            .with_name("skald-voice")
            .build()
            .map_err(|err| format!("ONNX Runtime did not start: {err}"))?;
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
        let session = Session::builder(&environment)
            .and_then(|b| b.with_intra_threads(threads).map_err(ort::Error::from))
            .and_then(|mut b| b.commit_from_file(model))
            .map_err(|err| format!("the voice could not be loaded: {err}"))?;
        Ok(Self { session, config, espeak: espeak.to_owned(), _environment: environment })
    }

    pub fn sample_rate(&self) -> u32 {
        self.config.sample_rate()
    }

    /// `text` read aloud at `speed` (1.0 is the voice's own pace), as samples in −1…1,
    /// sentence by sentence with a short pause between.
    pub fn read(&mut self, text: &str, speed: f32) -> Result<Vec<f32>, String> {
        let mut audio = Vec::new();
        let gap = (SENTENCE_GAP * self.sample_rate() as f32) as usize;
        for sentence in sentences(text) {
            let phonemes = phonemes(&self.espeak, &self.config.espeak.voice, sentence)?;
            if phonemes.trim().is_empty() {
                continue;
            }
            let ids = self.config.ids(&phonemes);
            let spoken = self.infer(ids, speed)?;
            if !audio.is_empty() {
                audio.extend(std::iter::repeat_n(0.0, gap));
            }
            audio.extend(spoken);
        }
        Ok(audio)
    }

    fn infer(&mut self, ids: Vec<i64>, speed: f32) -> Result<Vec<f32>, String> {
        let inference = &self.config.inference;
        let scales = vec![inference.noise_scale, inference.length_scale / speed.clamp(0.5, 2.0), inference.noise_w];
        let length = ids.len();
        let failed = |err: ort::Error| format!("the voice failed: {err}");
        let input = Tensor::from_array(([1usize, length], ids)).map_err(failed)?;
        let lengths = Tensor::from_array(([1usize], vec![length as i64])).map_err(failed)?;
        let scales = Tensor::from_array(([3usize], scales)).map_err(failed)?;
        let outputs = if self.config.num_speakers > 1 {
            let speaker = Tensor::from_array(([1usize], vec![0i64])).map_err(failed)?;
            self.session
                .run(ort::inputs!["input" => input, "input_lengths" => lengths, "scales" => scales, "sid" => speaker])
        } else {
            self.session.run(ort::inputs!["input" => input, "input_lengths" => lengths, "scales" => scales])
        }
        .map_err(failed)?;
        let (_, samples) = outputs[0].try_extract_tensor::<f32>().map_err(failed)?;
        Ok(samples.to_vec())
    }
}

/// `text` cut into sentences at `.`, `!` and `?` followed by a space (or the end), and at
/// line breaks, so each is read with its own intonation and none is too long for the model.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next_is_break = chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        if c == '\n' || (matches!(c, '.' | '!' | '?' | '…') && next_is_break) {
            let end = i + c.len_utf8();
            let sentence = text[start..end].trim();
            if !sentence.is_empty() {
                out.push(sentence);
            }
            start = end;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

/// A sentence's phonemes, in IPA as Piper's voices were trained on: espeak-ng writes each
/// clause (its text cut at `, ; : . ! ?`), and the punctuation that ended it is put back,
/// since the voices pause and lift on it.
pub fn phonemes(espeak: &Path, voice: &str, sentence: &str) -> Result<String, String> {
    let mut out = String::new();
    for (clause, mark) in clauses(sentence) {
        let said = espeak_ipa(espeak, voice, clause)?;
        let said = said.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
        if said.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&said);
        if let Some(mark) = mark {
            out.push(mark);
        }
    }
    Ok(out)
}

/// `sentence` cut at the punctuation espeak ends a clause on, each with that mark.
pub fn clauses(sentence: &str) -> Vec<(&str, Option<char>)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = sentence.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next_is_break = chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        if matches!(c, ',' | ';' | ':' | '.' | '!' | '?') && next_is_break {
            let clause = sentence[start..i].trim();
            if !clause.is_empty() {
                out.push((clause, Some(c)));
            }
            start = i + c.len_utf8();
        }
    }
    let rest = sentence[start..].trim();
    if !rest.is_empty() {
        out.push((rest, None));
    }
    out
}

/// espeak-ng's IPA for `text` (`-q`: no sound), the text on its stdin: never an argument,
/// which another user of the computer could read in the process list.
fn espeak_ipa(espeak: &Path, voice: &str, text: &str) -> Result<String, String> {
    let mut process = Command::new(espeak)
        .args(["-q", "--ipa", "-b", "1", "-v", voice, "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("espeak-ng could not be started from {}: {err}", espeak.display()))?;
    let mut stdin = process.stdin.take().expect("stdin is piped");
    // espeak reads the whole input before it writes, so writing first cannot block on it.
    let written = stdin.write_all(text.as_bytes()).and_then(|()| stdin.write_all(b"\n"));
    drop(stdin);
    let output = process.wait_with_output().map_err(|err| format!("espeak-ng failed: {err}"))?;
    written.map_err(|err| format!("espeak-ng did not take the text: {err}"))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(format!("espeak-ng failed ({}): {}", output.status, said.trim()));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `samples` as a 16-bit mono WAV file at `rate`, made as loud as it can be without
/// clipping (Piper's voices come out quiet and at varying levels).
pub fn wav(samples: &[f32], rate: u32) -> Vec<u8> {
    let peak = samples.iter().fold(0.0f32, |m, s| m.max(s.abs())).max(0.01);
    let data_len = u32::try_from(samples.len() * 2).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(44 + samples.len() * 2);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * 2).to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for s in samples {
        let scaled = (s / peak * 32_767.0).clamp(-32_768.0, 32_767.0) as i16;
        out.extend_from_slice(&scaled.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_end_at_stops_followed_by_space_and_at_line_breaks() {
        assert_eq!(
            sentences("Hello there. It costs 3.5 euros! Really?\nYes… fine"),
            vec!["Hello there.", "It costs 3.5 euros!", "Really?", "Yes…", "fine"]
        );
        assert!(sentences("  \n ").is_empty());
    }

    #[test]
    fn clauses_keep_the_mark_that_ended_them() {
        assert_eq!(
            clauses("Well, it is 3,5 here: fine."),
            vec![("Well", Some(',')), ("it is 3,5 here", Some(':')), ("fine", Some('.'))]
        );
        assert_eq!(clauses("no mark"), vec![("no mark", None)]);
    }

    #[test]
    fn ids_frame_each_phoneme_with_pauses_and_leave_out_unknown_ones() {
        let config: VoiceConfig = serde_json::from_value(serde_json::json!({
            "audio": { "sample_rate": 22050 },
            "espeak": { "voice": "en-us" },
            "phoneme_id_map": { "_": [0], "^": [1], "$": [2], "a": [7], "ˈ": [9] }
        }))
        .unwrap();
        assert_eq!(config.ids("ˈaX"), vec![1, 0, 9, 0, 7, 0, 2]);
    }

    #[test]
    fn a_wav_is_normalised_pcm_with_the_rate_in_its_header() {
        let file = wav(&[0.0, 0.25, -0.5], 22_050);
        assert_eq!(&file[..4], b"RIFF");
        assert_eq!(u32::from_le_bytes(file[24..28].try_into().unwrap()), 22_050);
        assert_eq!(u32::from_le_bytes(file[40..44].try_into().unwrap()), 6);
        let samples: Vec<i16> = file[44..].chunks_exact(2).map(|b| i16::from_le_bytes([b[0], b[1]])).collect();
        assert_eq!(samples, vec![0, 16_383, -32_767]);
    }
}
