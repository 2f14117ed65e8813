//! Administering providers (§9): connecting one (its models read from it, or given),
//! changing, refreshing and removing it, with its API key sealed under the instance key
//! (§4) on the way in. The checks of what an administrator may set live here, so the HTTP
//! handlers only parse, call and map.
//!
//! Never here: telling the agent that providers changed, or who accepted what (§3): the
//! caller does that once a change is stored. Never returns a key, only whether one is set.

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use super::catalogue::{STRENGTHS, guess_strength};
use super::local::LocalModels;
use super::privacy::Tier;
use super::{Endpoint, ProviderError, gguf};
use crate::ids::ProviderId;
use crate::secrets::{InstanceSecrets, SecretsError, key_purpose};
use crate::store::audit::Actor;
use crate::store::providers::{self, Model, NewProvider, Provider, ProviderChange, ProviderKind};
use crate::store::{StoreError, SystemStore, local_models};

/// Why a provider change was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("a provider name has 1 to 40 letters, digits, '.', '_' or '-' (it prefixes model names, as in home/llama)")]
    InvalidName,
    #[error("kind {0:?} is not one of openai, anthropic, ollama")]
    InvalidKind(String),
    #[error("{0}; give the API's base address, like https://api.openai.com/v1")]
    InvalidBaseUrl(&'static str),
    #[error("{0}")]
    InvalidModel(String),
    #[error("there is no such provider")]
    NoProvider,
    #[error("another provider has that name; model names must say which provider they come from")]
    NameTaken,
    /// What the built-in provider does not allow, said as such.
    #[error("{0}")]
    BuiltIn(String),
    /// The provider did not list its models; `message` says what to check.
    #[error("{message}")]
    Unreachable { code: &'static str, message: String },
    #[error("{0} lists no models; list them yourself in \"models\"")]
    NoModels(String),
    #[error("the key cannot be stored safely: {0}")]
    Sealing(SecretsError),
    /// Reading the built-in model's file header could not even start.
    #[error("reading the model file stopped: {0}")]
    Task(#[from] tokio::task::JoinError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A model as an administrator may give it: a bare id, or an id with what they know.
#[derive(Deserialize, ts_rs::TS)]
#[serde(untagged)]
#[ts(rename = "ModelInput")]
pub enum ModelInput {
    Id(String),
    Detailed {
        id: String,
        #[ts(optional)]
        context_window: Option<i64>,
        #[ts(optional)]
        strength: Option<String>,
        #[ts(optional)]
        tools: Option<bool>,
        /// It reads pictures attached to a message.
        #[ts(optional)]
        images: Option<bool>,
    },
}

/// A model's id with what was given of its context window, strength, tool support and
/// whether it reads pictures.
struct ModelParts {
    id: String,
    context_window: Option<i64>,
    strength: Option<String>,
    tools: Option<bool>,
    images: Option<bool>,
}

impl ModelInput {
    fn into_parts(self) -> ModelParts {
        match self {
            Self::Id(id) => ModelParts { id, context_window: None, strength: None, tools: None, images: None },
            Self::Detailed { id, context_window, strength, tools, images } => {
                ModelParts { id, context_window, strength, tools, images }
            }
        }
    }
}

/// A provider to connect (`POST /api/providers`).
#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct NewProviderBody {
    pub name: String,
    pub kind: String,
    pub base_url: String,
    #[ts(optional)]
    pub api_key: Option<String>,
    /// Without a list, the models are read from the provider.
    #[ts(optional)]
    pub models: Option<Vec<ModelInput>>,
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub trusted_lan: bool,
}

/// A change to a provider; what is `None` stays.
pub struct ProviderPatch {
    pub name: Option<String>,
    pub base_url: Option<String>,
    /// `Some(None)` removes the key.
    pub api_key: Option<Option<String>>,
    pub trusted_lan: Option<bool>,
    pub models: Option<Vec<ModelInput>>,
    /// The model to make pictures with; `Some(None)` sets none.
    pub image_model: Option<Option<String>>,
    /// The model to write speech down with; `Some(None)` sets none.
    pub transcription_model: Option<Option<String>>,
    /// The model to read answers aloud with; `Some(None)` sets none.
    pub speech_model: Option<Option<String>>,
    /// The provider's voice to read in; `Some(None)` leaves it to the provider.
    pub speech_voice: Option<Option<String>>,
}

/// A provider as administrators see it: its row, its models and its privacy tier.
#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "Provider")]
pub struct ProviderView {
    #[serde(flatten)]
    pub provider: Provider,
    pub models: Vec<Model>,
    pub privacy: Tier,
}

/// A connected provider: its new id and the models it offers.
#[derive(Serialize, ts_rs::TS)]
pub struct Added {
    pub id: ProviderId,
    pub models: Vec<Model>,
}

/// The handles provider administration works with.
pub struct ProviderAdmin<'a> {
    pub system: &'a SystemStore,
    pub secrets: &'a InstanceSecrets,
    pub client: &'a reqwest::Client,
    pub local: &'a LocalModels,
}

impl ProviderAdmin<'_> {
    /// Connects a provider. Without a model list its models are read from it now; one
    /// that cannot be reached is not saved.
    pub async fn add(&self, actor: &Actor, req: NewProviderBody) -> Result<Added, AdminError> {
        let name = valid_name(&req.name)?;
        let kind = check_kind(&req.kind)?;
        let base_url = valid_base_url(&req.base_url)?;
        let api_key = trimmed_key(req.api_key);
        let models = match req.models {
            Some(given) => models_from(given)?,
            None => self.listed_models(&name, kind, &base_url, api_key.clone()).await?,
        };
        let id = ProviderId::generate();
        let sealed = self.seal_key(&id, api_key.as_deref().map(String::as_str))?;
        let new = NewProvider {
            id: &id,
            name: &name,
            kind,
            base_url: &base_url,
            sealed_key: sealed.as_deref(),
            trusted_lan: req.trusted_lan,
        };
        providers::insert(self.system, actor, &new, &models).await.map_err(named)?;
        tracing::info!(provider = %id, models = models.len(), "provider added");
        Ok(Added { id, models })
    }

    /// Every provider with its models and tier.
    pub async fn list(&self) -> Result<Vec<ProviderView>, AdminError> {
        let mut out = Vec::new();
        for provider in providers::list(self.system).await? {
            let models = providers::models(self.system, &provider.id).await?;
            let privacy = super::privacy::classify(provider.kind, &provider.base_url, provider.trusted_lan);
            out.push(ProviderView { provider, models, privacy });
        }
        Ok(out)
    }

    /// Changes a provider. A key goes to whatever address the provider has: moved to
    /// another host without a new key, it loses the old one rather than carry it there.
    pub async fn update(&self, actor: &Actor, id: &str, req: ProviderPatch) -> Result<(), AdminError> {
        if id == local_models::PROVIDER_ID {
            self.check_built_in_patch(&req).await?;
        }
        let name = req.name.as_deref().map(valid_name).transpose()?;
        let base_url = req.base_url.as_deref().map(valid_base_url).transpose()?;
        let mut given = req.models;
        if id == local_models::PROVIDER_ID
            && let Some(list) = given.take()
        {
            let stored = providers::models(self.system, id).await?;
            given = Some(keep_stored(list, &stored));
        }
        let models = given.map(models_from).transpose()?;
        let image_model = self.openai_model(id, req.image_model, Route::Pictures).await?;
        let transcription_model = self.openai_model(id, req.transcription_model, Route::Transcription).await?;
        let speech_model = self.openai_model(id, req.speech_model, Route::Speech).await?;
        let speech_voice = req.speech_voice.map(|voice| voice.map(|v| valid_voice(&v)).transpose()).transpose()?;
        let mut api_key = req.api_key.map(trimmed_key);
        if api_key.is_none()
            && let Some(new_url) = &base_url
        {
            let current = providers::get(self.system, id).await?.ok_or(AdminError::NoProvider)?;
            if current.has_key && origin(&current.base_url) != origin(new_url) {
                api_key = Some(None);
            }
        }
        let sealed = match &api_key {
            Some(key) => Some(self.seal_key(id, key.as_deref().map(String::as_str))?),
            None => None,
        };
        let change = ProviderChange {
            name: name.as_deref(),
            base_url: base_url.as_deref(),
            sealed_key: sealed.as_ref().map(Option::as_deref),
            trusted_lan: req.trusted_lan,
            models: models.as_deref(),
            image_model: image_model.as_ref().map(|m| m.as_deref()),
            transcription_model: transcription_model.as_ref().map(|m| m.as_deref()),
            speech_model: speech_model.as_ref().map(|m| m.as_deref()),
            speech_voice: speech_voice.as_ref().map(|v| v.as_deref()),
        };
        providers::update(self.system, actor, id, &change).await.map_err(named)
    }

    /// Reads a provider's model list again, with its opened `key`; models that stay keep
    /// what the administrator set for them. The models now offered.
    pub async fn refresh(
        &self,
        actor: &Actor,
        id: &str,
        key: Option<Zeroizing<String>>,
    ) -> Result<Vec<Model>, AdminError> {
        let provider = providers::get(self.system, id).await?.ok_or(AdminError::NoProvider)?;
        let known = providers::models(self.system, id).await?;
        let listed = self.listed_models(&provider.name, provider.kind, &provider.base_url, key).await?;
        let merged: Vec<Model> = listed
            .into_iter()
            .map(|fresh| known.iter().find(|k| k.model_id == fresh.model_id).cloned().unwrap_or(fresh))
            .collect();
        let change = ProviderChange { models: Some(&merged), ..ProviderChange::default() };
        providers::update(self.system, actor, id, &change).await?;
        Ok(merged)
    }

    /// Removes a provider; the built-in one stays.
    pub async fn delete(&self, actor: &Actor, id: &str) -> Result<(), AdminError> {
        if id == local_models::PROVIDER_ID {
            return Err(built_in("the built-in provider stays; remove its models one by one instead"));
        }
        providers::delete(self.system, actor, id).await.map_err(named)
    }

    /// The built-in provider has no address or key and keeps its name (models are
    /// `local/<id>`); only its models' settings change, and only for models it has files of.
    async fn check_built_in_patch(&self, req: &ProviderPatch) -> Result<(), AdminError> {
        if req.name.is_some()
            || req.base_url.is_some()
            || req.api_key.is_some()
            || req.trusted_lan.is_some()
            || req.image_model.is_some()
            || req.transcription_model.is_some()
            || req.speech_model.is_some()
            || req.speech_voice.is_some()
        {
            return Err(built_in(
                "the built-in provider has no address or key and keeps its name; only its models' settings change",
            ));
        }
        let here = local_models::list(self.system).await?;
        for model in req.models.iter().flatten() {
            let (id, tools) = match model {
                ModelInput::Id(id) => (id, None),
                ModelInput::Detailed { images: Some(true), .. } => {
                    return Err(built_in("the built-in models read words only, not pictures"));
                }
                ModelInput::Detailed { id, tools, .. } => (id, *tools),
            };
            // What is not given is kept (`keep_stored`): only turning tools on is checked.
            let Some(found) = here.iter().find(|m| &m.id == id) else {
                return Err(built_in(&format!("the built-in provider has no model {id}; import or download it first")));
            };
            if tools == Some(true) && !self.template_takes_tools(id).await? {
                return Err(built_in(&format!(
                    "the chat template of {} does not lay out tools, so the model would never see them; \
                     pick a model made for tool calling",
                    found.name
                )));
            }
        }
        Ok(())
    }

    /// Whether the chat template in the built-in model `id`'s file takes tools (its header
    /// read again: an administrator may have turned them off and on since the import).
    async fn template_takes_tools(&self, id: &str) -> Result<bool, AdminError> {
        let path = self.local.path(id);
        let info = tokio::task::spawn_blocking(move || gguf::read_info(&path)).await?;
        info.map(|info| info.template_takes_tools).map_err(|err| built_in(&err.to_string()))
    }

    async fn listed_models(
        &self,
        name: &str,
        kind: ProviderKind,
        base_url: &str,
        api_key: Option<Zeroizing<String>>,
    ) -> Result<Vec<Model>, AdminError> {
        let endpoint = Endpoint {
            provider: name.to_owned(),
            kind,
            // Listing models carries nothing of anyone's; the tier does not matter here.
            privacy: super::privacy::classify(kind, base_url, false),
            base_url: base_url.to_owned(),
            api_key,
            local: None,
        };
        let models =
            super::list_models(self.client, &endpoint).await.map_err(|err: ProviderError| AdminError::Unreachable {
                code: err.code(),
                message: format!(
                    "{} Check the address and key, or list the models yourself in \"models\".",
                    err.advice(name)
                ),
            })?;
        if models.is_empty() {
            return Err(AdminError::NoModels(name.to_owned()));
        }
        Ok(models)
    }

    fn seal_key(&self, id: &str, key: Option<&str>) -> Result<Option<Vec<u8>>, AdminError> {
        let Some(key) = key else { return Ok(None) };
        self.secrets.seal(key.as_bytes(), &key_purpose(id)).map(Some).map_err(AdminError::Sealing)
    }
}

/// The store's refusals of a provider change, said as what they mean here.
fn named(err: StoreError) -> AdminError {
    match err {
        StoreError::NameTaken => AdminError::NameTaken,
        StoreError::NotFound => AdminError::NoProvider,
        other => AdminError::Store(other),
    }
}

fn built_in(message: &str) -> AdminError {
    AdminError::BuiltIn(message.to_owned())
}

/// Refreshing the built-in provider's list is refused: its models are its files.
pub fn refuse_built_in_refresh(id: &str) -> Result<(), AdminError> {
    if id == local_models::PROVIDER_ID {
        return Err(built_in(
            "the built-in provider's models are the files imported or downloaded, not a list to read",
        ));
    }
    Ok(())
}

/// What an administrator sets a model of an OpenAI-compatible provider for, beyond chat.
#[derive(Clone, Copy)]
enum Route {
    /// `/v1/images/generations`
    Pictures,
    /// `/v1/audio/transcriptions`
    Transcription,
    /// `/v1/audio/speech`
    Speech,
}

impl Route {
    fn what(self) -> &'static str {
        match self {
            Self::Pictures => "pictures are made",
            Self::Transcription => "speech is written down",
            Self::Speech => "answers are read aloud",
        }
    }

    fn path(self) -> &'static str {
        match self {
            Self::Pictures => "/v1/images/generations",
            Self::Transcription => "/v1/audio/transcriptions",
            Self::Speech => "/v1/audio/speech",
        }
    }
}

impl ProviderAdmin<'_> {
    /// A model for one of OpenAI's routes beyond chat, trimmed: 1 to 200 characters, on a
    /// provider that speaks OpenAI's protocol (the one the route belongs to). `Some(None)`
    /// passes: it sets none.
    async fn openai_model(
        &self,
        id: &str,
        given: Option<Option<String>>,
        route: Route,
    ) -> Result<Option<Option<String>>, AdminError> {
        let Some(Some(model)) = given else { return Ok(given) };
        let model = model.trim();
        if model.is_empty() || model.chars().count() > 200 {
            return Err(AdminError::InvalidModel("a model's name has 1 to 200 characters".into()));
        }
        let provider = providers::get(self.system, id).await?.ok_or(AdminError::NoProvider)?;
        if provider.kind != ProviderKind::Openai {
            return Err(AdminError::InvalidModel(format!(
                "{} through an OpenAI-compatible provider ({})",
                route.what(),
                route.path()
            )));
        }
        Ok(Some(Some(model.to_owned())))
    }
}

/// A provider's voice name, trimmed: 1 to 100 letters, digits, `_`, `-` or `.`.
fn valid_voice(voice: &str) -> Result<String, AdminError> {
    let voice = voice.trim();
    let fits = (1..=100).contains(&voice.len())
        && voice.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !fits {
        return Err(AdminError::InvalidModel(
            "a voice's name has 1 to 100 letters, digits, '_', '-' or '.' (alloy, af_bella)".into(),
        ));
    }
    Ok(voice.to_owned())
}

/// The built-in provider's models keep what a change does not give: their context and
/// tool support were read from each file, not guessed from a name as for other providers.
fn keep_stored(given: Vec<ModelInput>, stored: &[Model]) -> Vec<ModelInput> {
    let kept = |given: ModelInput| {
        let ModelParts { id, context_window, strength, tools, images } = given.into_parts();
        let stored = stored.iter().find(|m| m.model_id == id);
        ModelInput::Detailed {
            context_window: context_window.or(stored.map(|m| m.context_window)),
            strength: strength.or(stored.map(|m| m.strength.clone())),
            tools: tools.or(stored.map(|m| m.tools)),
            images: images.or(stored.map(|m| m.images)),
            id,
        }
    };
    given.into_iter().map(kept).collect()
}

fn models_from(given: Vec<ModelInput>) -> Result<Vec<Model>, AdminError> {
    let mut models: Vec<Model> = Vec::with_capacity(given.len());
    for input in given {
        let ModelParts { id, context_window, strength, tools, images } = input.into_parts();
        let id = id.trim().to_owned();
        if id.is_empty() || id.len() > 200 {
            return Err(AdminError::InvalidModel("a model id has 1 to 200 characters".into()));
        }
        if models.iter().any(|m| m.model_id == id) {
            return Err(AdminError::InvalidModel(format!("the model {id} is listed twice")));
        }
        let strength = strength.unwrap_or_else(|| guess_strength(&id).to_owned());
        if !STRENGTHS.contains(&strength.as_str()) {
            return Err(AdminError::InvalidModel(format!("strength {strength:?} is not fast, balanced or strong")));
        }
        let context_window = context_window.unwrap_or(8192);
        if context_window <= 0 {
            return Err(AdminError::InvalidModel("context_window must be positive".into()));
        }
        let (tools, images) = (tools.unwrap_or(true), images.unwrap_or(false));
        models.push(Model { model_id: id, context_window, strength, tools, images });
    }
    Ok(models)
}

fn valid_name(name: &str) -> Result<String, AdminError> {
    let name = name.trim();
    let fits = (1..=40).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !fits {
        return Err(AdminError::InvalidName);
    }
    Ok(name.to_owned())
}

/// The kind an administrator may connect; the built-in provider is Skald's own.
fn check_kind(kind: &str) -> Result<ProviderKind, AdminError> {
    match ProviderKind::parse(kind) {
        Some(known @ (ProviderKind::Openai | ProviderKind::Anthropic | ProviderKind::Ollama)) => Ok(known),
        Some(ProviderKind::Local) | None => Err(AdminError::InvalidKind(kind.to_owned())),
    }
}

/// An http(s) address without credentials, query or fragment; no trailing slash.
fn valid_base_url(raw: &str) -> Result<String, AdminError> {
    let url = reqwest::Url::parse(raw.trim()).map_err(|_| AdminError::InvalidBaseUrl("the base URL is not a URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(AdminError::InvalidBaseUrl("the base URL must start with http:// or https://"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(AdminError::InvalidBaseUrl("put the key in api_key, not in the URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(AdminError::InvalidBaseUrl("the base URL cannot have a query or fragment"));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// A pasted key without the spaces and line breaks that came with it; empty is none.
fn trimmed_key(key: Option<String>) -> Option<Zeroizing<String>> {
    let key = Zeroizing::new(key?);
    let trimmed = key.trim();
    (!trimmed.is_empty()).then(|| Zeroizing::new(trimmed.to_owned()))
}

/// Scheme, host and port of a URL.
fn origin(url: &str) -> Option<String> {
    reqwest::Url::parse(url).ok().map(|u| u.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_loses_its_trailing_slash_and_keeps_its_path() {
        assert_eq!(valid_base_url(" https://api.example.org/v1/ ").unwrap(), "https://api.example.org/v1");
    }

    #[test]
    fn a_base_url_with_credentials_a_query_or_another_scheme_is_refused() {
        for raw in ["https://key@api.example.org/v1", "https://api.example.org/v1?k=1", "ftp://example.org", "nope"] {
            assert!(matches!(valid_base_url(raw), Err(AdminError::InvalidBaseUrl(_))), "{raw}");
        }
    }

    #[test]
    fn a_bare_model_id_gets_a_guessed_strength_and_the_default_context() {
        let models = models_from(vec![ModelInput::Id(" llama3.1:8b ".into())]).unwrap();
        assert_eq!(models[0].model_id, "llama3.1:8b");
        assert_eq!(models[0].context_window, 8192);
        assert_eq!(models[0].strength, guess_strength("llama3.1:8b"));
        assert!(models[0].tools);
        assert!(!models[0].images, "reading pictures is said, not guessed");
    }

    #[test]
    fn a_model_listed_twice_or_with_an_unknown_strength_is_refused() {
        let twice = vec![ModelInput::Id("a".into()), ModelInput::Id("a".into())];
        assert!(matches!(models_from(twice), Err(AdminError::InvalidModel(_))));
        let odd = ModelInput::Detailed {
            id: "a".into(),
            context_window: None,
            strength: Some("huge".into()),
            tools: None,
            images: None,
        };
        assert!(matches!(models_from(vec![odd]), Err(AdminError::InvalidModel(_))));
    }

    #[test]
    fn the_built_in_provider_keeps_what_a_change_leaves_out() {
        let stored = [Model {
            model_id: "m".into(),
            context_window: 4096,
            strength: "fast".into(),
            tools: false,
            images: false,
        }];
        let kept = keep_stored(vec![ModelInput::Id("m".into())], &stored);
        let models = models_from(kept).unwrap();
        assert_eq!(models, stored.to_vec());
    }

    #[test]
    fn a_pasted_key_is_trimmed_and_a_blank_one_is_none() {
        assert_eq!(trimmed_key(Some(" sk-1\n".into())).as_deref().map(String::as_str), Some("sk-1"));
        assert!(trimmed_key(Some("  ".into())).is_none());
    }
}
