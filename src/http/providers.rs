//! Model providers (§9): administrators connect, change and remove them; everyone sees
//! the models their role allows. An API key goes in sealed under the instance key and no
//! route ever returns it, only whether one is set.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use zeroize::Zeroizing;

use super::AppState;
use super::auth::{AdminActor, Caller};
use super::error::ApiError;
use super::json::Body;
use crate::agent::key_purpose;
use crate::ids::random_id;
use crate::providers::catalogue::{CatalogueModel, STRENGTHS, guess_strength};
use crate::providers::{Endpoint, gguf};
use crate::store::providers::{self, Model, NewProvider, ProviderChange, ProviderKind};
use crate::store::{StoreError, local_models};

/// A model as an administrator may give it: a bare id, or an id with what they know.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum ModelInput {
    Id(String),
    Detailed { id: String, context_window: Option<i64>, strength: Option<String>, tools: Option<bool> },
}

/// A model's id with what was given of its context window, strength and tool support.
type ModelParts = (String, Option<i64>, Option<String>, Option<bool>);

impl ModelInput {
    fn into_parts(self) -> ModelParts {
        match self {
            Self::Id(id) => (id, None, None, None),
            Self::Detailed { id, context_window, strength, tools } => (id, context_window, strength, tools),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewProviderBody {
    name: String,
    kind: String,
    base_url: String,
    api_key: Option<String>,
    models: Option<Vec<ModelInput>>,
    #[serde(default)]
    trusted_lan: bool,
}

/// `POST /api/providers` (administrators): connects a provider. Without a model list,
/// its models are read from the provider now; a provider that cannot be reached is not
/// saved, and the answer says why.
pub async fn add(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Body(req): Body<NewProviderBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let name = valid_name(&req.name)?;
    let kind = check_kind(&req.kind)?;
    let base_url = valid_base_url(&req.base_url)?;
    let api_key = trimmed_key(req.api_key);
    let models = match req.models {
        Some(given) => models_from(given)?,
        None => listed_models(&state, &name, kind, &base_url, api_key.clone()).await?,
    };
    let id = random_id("provider");
    let sealed = seal_key(&state, &id, api_key.as_deref().map(String::as_str))?;
    let new = NewProvider {
        id: &id,
        name: &name,
        kind,
        base_url: &base_url,
        sealed_key: sealed.as_deref(),
        trusted_lan: req.trusted_lan,
    };
    providers::insert(&state.system, &actor, &new, &models).await.map_err(name_taken)?;
    state.agent.providers_changed();
    // The administrator's own change is theirs to have accepted (§3).
    let key = format!("provider.{id}");
    state.agent.accept_own(&caller.session, |change| change.key == key).await;
    state.agent.announce_notices(Some(&actor.id)).await;
    tracing::info!(provider = %id, models = models.len(), "provider added");
    Ok((StatusCode::CREATED, Json(json!({ "id": id, "models": models }))))
}

/// `GET /api/providers` (administrators): every provider with its models; keys never.
pub async fn list(State(state): State<AppState>) -> Result<Json<Vec<Value>>, ApiError> {
    let mut out = Vec::new();
    for provider in providers::list(&state.system).await? {
        let models = providers::models(&state.system, &provider.id).await?;
        let privacy = crate::providers::privacy::classify(provider.kind, &provider.base_url, provider.trusted_lan);
        let mut value = json!(provider);
        value["models"] = json!(models);
        value["privacy"] = json!(privacy);
        out.push(value);
    }
    Ok(Json(out))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderPatch {
    name: Option<String>,
    base_url: Option<String>,
    /// `null` removes the key; absent leaves it.
    #[serde(default, deserialize_with = "crate::users::role_rules::present")]
    api_key: Option<Option<String>>,
    trusted_lan: Option<bool>,
    models: Option<Vec<ModelInput>>,
}

/// `PATCH /api/providers/{id}` (administrators)
pub async fn update(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Path(id): Path<String>,
    Body(req): Body<ProviderPatch>,
) -> Result<StatusCode, ApiError> {
    if id == local_models::PROVIDER_ID {
        check_built_in_patch(&state, &req).await?;
    }
    let name = req.name.as_deref().map(valid_name).transpose()?;
    let base_url = req.base_url.as_deref().map(valid_base_url).transpose()?;
    let mut given = req.models;
    if id == local_models::PROVIDER_ID
        && let Some(list) = given.take()
    {
        let stored = providers::models(&state.system, &id).await?;
        given = Some(keep_stored(list, &stored));
    }
    let models = given.map(models_from).transpose()?;
    let mut api_key = req.api_key.map(trimmed_key);
    // A key goes to whatever address the provider has: moved to another host without a
    // new key, it loses the old one rather than carry it there.
    if api_key.is_none()
        && let Some(new_url) = &base_url
    {
        let current = providers::get(&state.system, &id).await?.ok_or_else(no_provider)?;
        if current.has_key && origin(&current.base_url) != origin(new_url) {
            api_key = Some(None);
        }
    }
    let sealed = match &api_key {
        Some(key) => Some(seal_key(&state, &id, key.as_deref().map(String::as_str))?),
        None => None,
    };
    let change = ProviderChange {
        name: name.as_deref(),
        base_url: base_url.as_deref(),
        sealed_key: sealed.as_ref().map(Option::as_deref),
        trusted_lan: req.trusted_lan,
        models: models.as_deref(),
    };
    providers::update(&state.system, &actor, &id, &change).await.map_err(name_taken)?;
    state.agent.providers_changed();
    let key = format!("provider.{id}");
    state.agent.accept_own(&caller.session, |change| change.key == key).await;
    state.agent.announce_notices(Some(&actor.id)).await;
    Ok(StatusCode::NO_CONTENT)
}

/// The built-in provider has no address or key and keeps its name (models are
/// `local/<id>`); only its models' settings change, and only for models it has files of.
async fn check_built_in_patch(state: &AppState, req: &ProviderPatch) -> Result<(), ApiError> {
    if req.name.is_some() || req.base_url.is_some() || req.api_key.is_some() || req.trusted_lan.is_some() {
        return Err(built_in(
            "the built-in provider has no address or key and keeps its name; only its models' settings change",
        ));
    }
    let here = local_models::list(&state.system).await?;
    for model in req.models.iter().flatten() {
        let (id, tools) = match model {
            ModelInput::Id(id) => (id, None),
            ModelInput::Detailed { id, tools, .. } => (id, *tools),
        };
        // What is not given is kept (`keep_stored`): only turning tools on is checked.
        let Some(found) = here.iter().find(|m| &m.id == id) else {
            return Err(built_in(&format!("the built-in provider has no model {id}; import or download it first")));
        };
        if tools == Some(true) && !template_takes_tools(state, id).await? {
            return Err(built_in(&format!(
                "the chat template of {} does not lay out tools, so the model would never see them; \
                 pick a model made for tool calling",
                found.name
            )));
        }
    }
    Ok(())
}

/// The built-in provider's models keep what a change does not give: their context and
/// tool support were read from each file, not guessed from a name as for other providers.
fn keep_stored(given: Vec<ModelInput>, stored: &[Model]) -> Vec<ModelInput> {
    let kept = |given: ModelInput| {
        let (id, context_window, strength, tools) = given.into_parts();
        let stored = stored.iter().find(|m| m.model_id == id);
        ModelInput::Detailed {
            context_window: context_window.or(stored.map(|m| m.context_window)),
            strength: strength.or(stored.map(|m| m.strength.clone())),
            tools: tools.or(stored.map(|m| m.tools)),
            id,
        }
    };
    given.into_iter().map(kept).collect()
}

/// Whether the chat template in the built-in model `id`'s file takes tools (its header
/// read again: an administrator may have turned them off and on since the import).
async fn template_takes_tools(state: &AppState, id: &str) -> Result<bool, ApiError> {
    let path = state.agent.local_models().path(id);
    let info = tokio::task::spawn_blocking(move || gguf::read_info(&path))
        .await
        .map_err(|err| ApiError::Internal(Box::new(err)))?;
    info.map(|info| info.template_takes_tools).map_err(|err| built_in(&err.to_string()))
}

fn built_in(message: &str) -> ApiError {
    ApiError::Conflict { code: "built_in_provider", message: message.to_owned() }
}

/// `POST /api/providers/{id}/refresh` (administrators): reads the model list again;
/// models that stay keep what the administrator set for them.
pub async fn refresh(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    if id == local_models::PROVIDER_ID {
        return Err(built_in(
            "the built-in provider's models are the files imported or downloaded, not a list to read",
        ));
    }
    let provider = providers::get(&state.system, &id).await?.ok_or_else(no_provider)?;
    let key = state.agent.provider_key(&id).await?;
    let known = providers::models(&state.system, &id).await?;
    let listed = listed_models(&state, &provider.name, provider.kind, &provider.base_url, key).await?;
    let merged: Vec<Model> = listed
        .into_iter()
        .map(|fresh| known.iter().find(|k| k.model_id == fresh.model_id).cloned().unwrap_or(fresh))
        .collect();
    let change = ProviderChange { models: Some(&merged), ..ProviderChange::default() };
    providers::update(&state.system, &actor, &id, &change).await?;
    state.agent.providers_changed();
    state.agent.announce_notices(Some(&actor.id)).await;
    Ok(Json(json!({ "models": merged })))
}

/// `DELETE /api/providers/{id}` (administrators)
pub async fn delete(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if id == local_models::PROVIDER_ID {
        return Err(built_in("the built-in provider stays; remove its models one by one instead"));
    }
    providers::delete(&state.system, &actor, &id).await.map_err(|err| match err {
        StoreError::NotFound => no_provider(),
        other => other.into(),
    })?;
    state.agent.providers_changed();
    state.agent.announce_notices(Some(&actor.id)).await;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/models`: the models my role allows, with who configured their provider.
pub async fn models(State(state): State<AppState>, caller: Caller) -> Result<Json<Vec<CatalogueModel>>, ApiError> {
    Ok(Json(state.agent.models_of(&caller.session).await?))
}

async fn listed_models(
    state: &AppState,
    name: &str,
    kind: ProviderKind,
    base_url: &str,
    api_key: Option<Zeroizing<String>>,
) -> Result<Vec<Model>, ApiError> {
    let endpoint = Endpoint {
        provider: name.to_owned(),
        kind,
        // Listing models carries nothing of anyone's; the tier does not matter here.
        privacy: crate::providers::privacy::classify(kind, base_url, false),
        base_url: base_url.to_owned(),
        api_key,
        local: None,
    };
    let models =
        crate::providers::list_models(state.agent.client(), &endpoint).await.map_err(|err| ApiError::Upstream {
            code: err.code(),
            message: format!(
                "{} Check the address and key, or list the models yourself in \"models\".",
                err.advice(name)
            ),
        })?;
    if models.is_empty() {
        let message = format!("{name} lists no models; list them yourself in \"models\"");
        return Err(ApiError::Upstream { code: "no_models", message });
    }
    Ok(models)
}

fn models_from(given: Vec<ModelInput>) -> Result<Vec<Model>, ApiError> {
    let mut models: Vec<Model> = Vec::with_capacity(given.len());
    for input in given {
        let (id, context_window, strength, tools) = input.into_parts();
        let id = id.trim().to_owned();
        let bad = |message: String| ApiError::BadRequest { code: "invalid_model", message };
        if id.is_empty() || id.len() > 200 {
            return Err(bad("a model id has 1 to 200 characters".into()));
        }
        if models.iter().any(|m| m.model_id == id) {
            return Err(bad(format!("the model {id} is listed twice")));
        }
        let strength = strength.unwrap_or_else(|| guess_strength(&id).to_owned());
        if !STRENGTHS.contains(&strength.as_str()) {
            return Err(bad(format!("strength {strength:?} is not fast, balanced or strong")));
        }
        let context_window = context_window.unwrap_or(8192);
        if context_window <= 0 {
            return Err(bad("context_window must be positive".into()));
        }
        models.push(Model { model_id: id, context_window, strength, tools: tools.unwrap_or(true) });
    }
    Ok(models)
}

fn valid_name(name: &str) -> Result<String, ApiError> {
    let name = name.trim();
    let fits = (1..=40).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !fits {
        let message =
            "a provider name has 1 to 40 letters, digits, '.', '_' or '-' (it prefixes model names, as in home/llama)"
                .into();
        return Err(ApiError::BadRequest { code: "invalid_name", message });
    }
    Ok(name.to_owned())
}

/// The kind an administrator may connect; the built-in provider is Skald's own.
fn check_kind(kind: &str) -> Result<ProviderKind, ApiError> {
    match ProviderKind::parse(kind) {
        Some(known @ (ProviderKind::Openai | ProviderKind::Anthropic | ProviderKind::Ollama)) => Ok(known),
        Some(ProviderKind::Local) | None => Err(ApiError::BadRequest {
            code: "invalid_kind",
            message: format!("kind {kind:?} is not one of openai, anthropic, ollama"),
        }),
    }
}

/// An http(s) address without credentials, query or fragment; no trailing slash.
fn valid_base_url(raw: &str) -> Result<String, ApiError> {
    let bad = |why: &str| ApiError::BadRequest {
        code: "invalid_base_url",
        message: format!("{why}; give the API's base address, like https://api.openai.com/v1"),
    };
    let url = reqwest::Url::parse(raw.trim()).map_err(|_| bad("the base URL is not a URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(bad("the base URL must start with http:// or https://"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("put the key in api_key, not in the URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("the base URL cannot have a query or fragment"));
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

fn seal_key(state: &AppState, id: &str, key: Option<&str>) -> Result<Option<Vec<u8>>, ApiError> {
    let Some(key) = key else { return Ok(None) };
    state.secrets.seal(key.as_bytes(), &key_purpose(id)).map(Some).map_err(|err| ApiError::Unavailable {
        code: "secrets_unavailable",
        message: format!("the key cannot be stored safely: {err}"),
    })
}

fn no_provider() -> ApiError {
    ApiError::Missing { code: "no_provider", message: "there is no such provider".into() }
}

fn name_taken(err: StoreError) -> ApiError {
    match err {
        StoreError::NameTaken => ApiError::Conflict {
            code: "name_taken",
            message: "another provider has that name; model names must say which provider they come from".into(),
        },
        StoreError::NotFound => no_provider(),
        other => other.into(),
    }
}

/// `GET /api/providers/detect` (administrators): model servers running on this computer
/// (Ollama, LM Studio, llama.cpp), with their models, for the setup flow to offer first.
pub async fn detect(State(state): State<AppState>) -> Json<Vec<crate::providers::detect::Found>> {
    use crate::providers::detect;
    Json(detect::probe(state.agent.client(), detect::candidates()).await)
}
