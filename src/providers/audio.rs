//! Speech through a provider (§15): OpenAI's `/v1/audio/transcriptions` and
//! `/v1/audio/speech`, the shapes OpenAI, Groq, LocalAI, speaches and Kokoro-FastAPI serve.
//! A person's recording and the answers read to them are their words, so the privacy tier
//! of their role is checked here, before a byte leaves, as [`super::start`] does for chat.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Endpoint, ProviderError, bearer, checked, url};
use crate::providers::catalogue::tier_allows;
use crate::store::roles::PrivacyTier;

/// How long a provider may take over one recording or one passage: generous for a slow
/// server on the home network, and a bound on one that stopped answering.
const AUDIO_TIMEOUT: Duration = Duration::from_secs(120);
/// The most audio a provider's answer may hold: ten minutes of 48 kHz 16-bit stereo.
const MAX_AUDIO_ANSWER: usize = 10 * 60 * 48_000 * 4 + 4096;

/// What a provider wrote down from `wav` (a WAV file), in `language` when one is given.
pub async fn transcribe(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    privacy_tier: PrivacyTier,
    model: &str,
    wav: Vec<u8>,
    language: Option<&str>,
) -> Result<String, ProviderError> {
    withheld(endpoint, privacy_tier)?;
    let mut form = Multipart::new();
    form.text("model", model);
    form.text("response_format", "json");
    if let Some(language) = language {
        form.text("language", language);
    }
    form.file("file", "speech.wav", "audio/wav", &wav);
    let request = client
        .post(url(endpoint, "audio/transcriptions"))
        .timeout(AUDIO_TIMEOUT)
        .header(reqwest::header::CONTENT_TYPE, form.content_type())
        .body(form.finish());
    let response = bearer(request, endpoint).send().await.map_err(|err| ProviderError::from_transport(&err))?;
    let answer: Value = checked(response)
        .await?
        .json()
        .await
        .map_err(|err| ProviderError::Protocol(format!("the transcription's answer is not JSON: {err}")))?;
    match answer["text"].as_str() {
        Some(text) => Ok(text.trim().to_owned()),
        None => Err(ProviderError::Protocol("the transcription's answer has no \"text\"".to_owned())),
    }
}

/// `text` read aloud by a provider: the bytes of a WAV file.
pub async fn speak(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    privacy_tier: PrivacyTier,
    model: &str,
    voice: Option<&str>,
    text: &str,
    speed: f32,
) -> Result<Vec<u8>, ProviderError> {
    withheld(endpoint, privacy_tier)?;
    let mut body = json!({ "model": model, "input": text, "response_format": "wav", "speed": speed });
    if let Some(voice) = voice {
        body["voice"] = json!(voice);
    }
    let request = client.post(url(endpoint, "audio/speech")).timeout(AUDIO_TIMEOUT).json(&body);
    let response = bearer(request, endpoint).send().await.map_err(|err| ProviderError::from_transport(&err))?;
    let mut response = checked(response).await?;
    let mut audio = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|err| ProviderError::from_transport(&err))? {
        if audio.len() + chunk.len() > MAX_AUDIO_ANSWER {
            return Err(ProviderError::Protocol("the audio it sent is longer than ten minutes".to_owned()));
        }
        audio.extend_from_slice(&chunk);
    }
    // The page plays what it gets: only a WAV file Skald can read goes to it.
    crate::voice::wav::read(&audio)
        .map_err(|err| ProviderError::Protocol(format!("the audio it sent cannot be played: {err}")))?;
    Ok(audio)
}

fn withheld(endpoint: &Endpoint, privacy_tier: PrivacyTier) -> Result<(), ProviderError> {
    if tier_allows(privacy_tier, endpoint.privacy) {
        return Ok(());
    }
    Err(ProviderError::Withheld(format!(
        "your role keeps your words on this computer, and {} is a remote service; nothing was sent",
        endpoint.provider
    )))
}

/// A `multipart/form-data` body, built in memory: the recording never touches the disk.
struct Multipart {
    boundary: String,
    body: Vec<u8>,
}

impl Multipart {
    fn new() -> Self {
        let boundary = crate::ids::random_id("skald");
        Self { boundary, body: Vec::new() }
    }

    fn content_type(&self) -> String {
        format!("multipart/form-data; boundary={}", self.boundary)
    }

    fn text(&mut self, name: &str, value: &str) {
        self.head(&format!("Content-Disposition: form-data; name=\"{name}\"\r\n"));
        self.body.extend_from_slice(value.as_bytes());
        self.body.extend_from_slice(b"\r\n");
    }

    fn file(&mut self, name: &str, file_name: &str, content_type: &str, bytes: &[u8]) {
        self.head(&format!(
            "Content-Disposition: form-data; name=\"{name}\"; filename=\"{file_name}\"\r\nContent-Type: {content_type}\r\n"
        ));
        self.body.extend_from_slice(bytes);
        self.body.extend_from_slice(b"\r\n");
    }

    fn head(&mut self, headers: &str) {
        self.body.extend_from_slice(format!("--{}\r\n{headers}\r\n", self.boundary).as_bytes());
    }

    fn finish(mut self) -> Vec<u8> {
        self.body.extend_from_slice(format!("--{}--\r\n", self.boundary).as_bytes());
        self.body
    }
}
