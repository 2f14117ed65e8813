//! `skald-voice`: Skald's speech engine, a process of its own (docs/architecture.md §15).
//!
//! whisper.cpp links its own static ggml, which cannot share a binary with the built-in
//! model's llama.cpp; and a fault in either engine must cost one request, not the server.
//! So Skald starts this binary (found beside its own) for each transcription and each
//! passage read aloud, under its helper supervision, with the input on stdin and the
//! answer on stdout:
//!
//! ```text
//! skald-voice transcribe MODEL LANGUAGE       stdin: f32 little-endian samples, mono, 16 kHz
//!                                             stdout: {"text": "...", "language": "en"}
//! skald-voice check MODEL                     loads the model, answers nothing, exits 0
//! skald-voice speak RUNTIME ESPEAK VOICE SPEED  stdin: UTF-8 text; stdout: a 16-bit WAV
//! skald-voice check-voice RUNTIME ESPEAK VOICE  loads the voice and reads a word, exits 0
//! ```
//!
//! `LANGUAGE` is a code (`en`, `fr`, …) or `auto`. `RUNTIME` is ONNX Runtime's library
//! file, `ESPEAK` the `espeak-ng` program, `VOICE` a Piper `.onnx` (its `.onnx.json`
//! beside it), `SPEED` a factor of the voice's own pace (0.5–2). Exit codes: 0 answered,
//! 2 bad usage, 3 the model or voice could not be loaded, 4 the input could not be read,
//! 5 the engine failed, 6 this processor lacks an instruction set ggml was compiled to use.
//! Nothing a person said, or was read, is ever written to stderr, which Skald keeps a tail of.

mod speak;

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use serde::Serialize;
use whisper_rs::{FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters};

/// The rate whisper listens at.
const RATE: usize = 16_000;
/// The longest audio taken at once: 10 minutes.
const MAX_SAMPLES: usize = 600 * RATE;
/// Below this level (RMS over 30 ms windows, full scale 1.0) a window is silence. Whisper
/// invents words for silence, so audio without a window above it is never given to it.
const VOICE_FLOOR: f32 = 0.01;
/// How many windows above the floor make speech: a click or a cough is not.
const VOICED_WINDOWS: usize = 8;
/// A segment whisper itself thinks more likely silence than speech is dropped.
const NO_SPEECH: f32 = 0.6;

#[derive(Serialize)]
struct Answer {
    text: String,
    language: String,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [command, runtime, espeak, voice, speed] if command == "speak" => {
            crash_hook();
            return read_aloud(runtime, espeak, voice, speed);
        }
        [command, runtime, espeak, voice] if command == "check-voice" => {
            crash_hook();
            return check_voice(runtime, espeak, voice);
        }
        _ => {}
    }
    let (model, language) = match args.as_slice() {
        [command, model, language] if command == "transcribe" => (model, language.clone()),
        [command, model] if command == "check" => (model, String::new()),
        _ => {
            eprintln!(
                "usage: skald-voice transcribe MODEL LANGUAGE (audio on stdin) | skald-voice check MODEL \
                 | skald-voice speak RUNTIME ESPEAK VOICE SPEED (text on stdin) | skald-voice check-voice RUNTIME ESPEAK VOICE"
            );
            return ExitCode::from(2);
        }
    };
    crash_hook();
    let missing = missing_features();
    if !missing.is_empty() {
        eprintln!(
            "skald-voice: this processor lacks {}, which the speech engine is compiled to use",
            missing.join(", ")
        );
        return ExitCode::from(6);
    }
    if language.is_empty() {
        whisper_rs::install_logging_hooks();
        return match WhisperContext::new_with_params(model, WhisperContextParameters::default()) {
            Ok(_) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("skald-voice: the model could not be loaded: {err}");
                ExitCode::from(3)
            }
        };
    }
    let samples = match read_samples(std::io::stdin().lock()) {
        Ok(samples) => samples,
        Err(why) => {
            eprintln!("skald-voice: {why}");
            return ExitCode::from(4);
        }
    };
    if !has_voice(&samples) {
        return answer(&Answer { text: String::new(), language });
    }
    whisper_rs::install_logging_hooks();
    let context = match WhisperContext::new_with_params(model, WhisperContextParameters::default()) {
        Ok(context) => context,
        Err(err) => {
            eprintln!("skald-voice: the model could not be loaded: {err}");
            return ExitCode::from(3);
        }
    };
    match transcribe(&context, &language, &samples) {
        Ok(answered) => answer(&answered),
        Err(err) => {
            eprintln!("skald-voice: the engine failed: {err}");
            ExitCode::from(5)
        }
    }
}

fn transcribe(context: &WhisperContext, language: &str, samples: &[f32]) -> Result<Answer, whisper_rs::WhisperError> {
    let mut state = context.create_state()?;
    let mut params = FullParams::new(SamplingStrategy::BeamSearch { beam_size: 5, patience: -1.0 });
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    params.set_n_threads(i32::try_from(threads).unwrap_or(2));
    params.set_language(Some(if language == "auto" { "auto" } else { language }));
    params.set_no_context(true);
    params.set_suppress_blank(true);
    params.set_suppress_nst(true);
    params.set_no_speech_thold(NO_SPEECH);
    params.set_print_special(false);
    params.set_print_progress(false);
    params.set_print_realtime(false);
    params.set_print_timestamps(false);
    state.full(params, samples)?;
    let mut text = String::new();
    for segment in state.as_iter() {
        if segment.no_speech_probability() > NO_SPEECH {
            continue;
        }
        let words = segment.to_str_lossy()?;
        text.push_str(&words);
    }
    let language = whisper_rs::get_lang_str(state.full_lang_id_from_state()).unwrap_or(language).to_owned();
    Ok(Answer { text: text.trim().to_owned(), language })
}

/// `speak`: the text on stdin read aloud by the voice, as a WAV file on stdout.
fn read_aloud(runtime: &str, espeak: &str, voice: &str, speed: &str) -> ExitCode {
    let Some(speed) = speed.parse::<f32>().ok().filter(|s| (0.5..=2.0).contains(s)) else {
        eprintln!("skald-voice: the speed {speed:?} is not a factor between 0.5 and 2");
        return ExitCode::from(2);
    };
    let mut text = String::new();
    let read = std::io::stdin().lock().take(speak::MAX_TEXT as u64 + 1).read_to_string(&mut text);
    if let Err(err) = read {
        eprintln!("skald-voice: the text could not be read: {err}");
        return ExitCode::from(4);
    }
    if text.len() > speak::MAX_TEXT {
        eprintln!("skald-voice: the text is longer than {} bytes", speak::MAX_TEXT);
        return ExitCode::from(4);
    }
    let mut reader = match speak::Reader::load(Path::new(runtime), Path::new(espeak), Path::new(voice)) {
        Ok(reader) => reader,
        Err(why) => {
            eprintln!("skald-voice: {why}");
            return ExitCode::from(3);
        }
    };
    match reader.read(&text, speed) {
        Ok(samples) => {
            let mut out = std::io::stdout().lock();
            let file = speak::wav(&samples, reader.sample_rate());
            if out.write_all(&file).and_then(|()| out.flush()).is_err() { ExitCode::from(5) } else { ExitCode::SUCCESS }
        }
        Err(why) => {
            eprintln!("skald-voice: {why}");
            ExitCode::from(5)
        }
    }
}

/// `check-voice`: the voice loads and reads a word, so a voice that cannot is never kept.
fn check_voice(runtime: &str, espeak: &str, voice: &str) -> ExitCode {
    let mut reader = match speak::Reader::load(Path::new(runtime), Path::new(espeak), Path::new(voice)) {
        Ok(reader) => reader,
        Err(why) => {
            eprintln!("skald-voice: {why}");
            return ExitCode::from(3);
        }
    };
    match reader.read("Hello.", 1.0) {
        Ok(samples) if !samples.is_empty() => ExitCode::SUCCESS,
        Ok(_) => {
            eprintln!("skald-voice: the voice made no sound for a word");
            ExitCode::from(5)
        }
        Err(why) => {
            eprintln!("skald-voice: {why}");
            ExitCode::from(5)
        }
    }
}

fn answer(answer: &Answer) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let written = serde_json::to_writer(&mut out, answer).map_err(std::io::Error::from).and_then(|()| out.flush());
    if written.is_err() { ExitCode::from(5) } else { ExitCode::SUCCESS }
}

fn read_samples(mut input: impl Read) -> Result<Vec<f32>, String> {
    let mut bytes = Vec::new();
    input
        .by_ref()
        .take((MAX_SAMPLES * 4 + 1) as u64)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("the audio could not be read: {err}"))?;
    if bytes.len() > MAX_SAMPLES * 4 {
        return Err("the audio is longer than 10 minutes".to_owned());
    }
    if bytes.len() % 4 != 0 {
        return Err("the audio is not whole 32-bit samples".to_owned());
    }
    Ok(bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

/// Whether enough 30 ms windows of `samples` are loud enough to be someone speaking.
fn has_voice(samples: &[f32]) -> bool {
    let window = RATE * 30 / 1000;
    let voiced = samples
        .chunks(window)
        .filter(|w| {
            let energy: f32 = w.iter().map(|s| s * s).sum::<f32>() / w.len() as f32;
            energy.sqrt() >= VOICE_FLOOR
        })
        .count();
    voiced >= VOICED_WINDOWS
}

/// What ggml was compiled to use (`.cargo/config.toml`: its baseline, never the builder's
/// CPU) that this processor does not offer: checked before the engine runs, since a
/// missing instruction would end it with SIGILL instead of words.
fn missing_features() -> Vec<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        let features = [
            ("SSE4.2", std::arch::is_x86_feature_detected!("sse4.2")),
            ("AVX", std::arch::is_x86_feature_detected!("avx")),
            ("AVX2", std::arch::is_x86_feature_detected!("avx2")),
            ("FMA", std::arch::is_x86_feature_detected!("fma")),
            ("F16C", std::arch::is_x86_feature_detected!("f16c")),
            ("BMI2", std::arch::is_x86_feature_detected!("bmi2")),
        ];
        features.into_iter().filter(|(_, has)| !has).map(|(name, _)| name).collect()
    }
    #[cfg(not(target_arch = "x86_64"))]
    Vec::new()
}

/// Debug builds: aborts, as a fault inside whisper.cpp would, while the file that
/// `SKALD_TEST_VOICE_ABORT_FILE` names exists, so tests can show a crash costs one request.
fn crash_hook() {
    if cfg!(debug_assertions)
        && let Some(file) = std::env::var_os("SKALD_TEST_VOICE_ABORT_FILE")
        && std::path::Path::new(&file).exists()
    {
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silence_and_a_click_are_no_voice_and_a_tone_is() {
        assert!(!has_voice(&vec![0.0; RATE * 3]));
        assert!(!has_voice(&vec![0.004; RATE * 3]), "a quiet hiss is below the floor");
        let mut click = vec![0.0; RATE * 3];
        click[RATE..RATE + 100].fill(0.9);
        assert!(!has_voice(&click), "one loud window is a click");
        let tone: Vec<f32> =
            (0..RATE).map(|i| 0.2 * (i as f32 * 440.0 * std::f32::consts::TAU / RATE as f32).sin()).collect();
        assert!(has_voice(&tone));
    }

    #[test]
    fn samples_are_whole_little_endian_floats() {
        let bytes: Vec<u8> = [0.5f32, -1.0].iter().flat_map(|s| s.to_le_bytes()).collect();
        assert_eq!(read_samples(&bytes[..]).unwrap(), vec![0.5, -1.0]);
        assert_eq!(read_samples(&bytes[..7]).unwrap_err(), "the audio is not whole 32-bit samples");
    }
}
