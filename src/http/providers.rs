//! Model providers (§9): administrators connect, change and remove them; everyone sees
//! the models their role allows. The checks and the key sealing are
//! [`crate::providers::admin`]'s; these handlers parse, call it, tell the agent, and answer.
//! No route ever returns a key, only whether one is set.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::AppState;
use super::auth::{AdminActor, Caller};
use super::error::ApiError;
use super::json::Body;
use crate::providers::admin::{self, Added, ProviderAdmin, ProviderView, refuse_built_in_refresh};
pub use crate::providers::admin::{ModelInput, NewProviderBody};
use crate::providers::catalogue::CatalogueModel;
use crate::store::audit::Actor;
use crate::store::providers::Model;
use crate::users::sessions::Session;

fn admin(state: &AppState) -> ProviderAdmin<'_> {
    ProviderAdmin {
        system: &state.system,
        secrets: &state.secrets,
        client: state.agent.client(),
        local: state.agent.local_models(),
    }
}

/// After a stored change to provider `id`: the agent reads providers again, the
/// administrator's own change is theirs to have accepted (§3), and the others' open pages
/// read their notices again.
pub(super) async fn providers_changed(state: &AppState, by: Option<&Session>, actor: &Actor, id: &str) {
    state.agent.providers_changed();
    if let Some(session) = by {
        let key = format!("provider.{id}");
        state.agent.accept_own(session, |change| change.key == key).await;
    }
    state.agent.announce_notices(Some(&actor.id)).await;
}

/// `POST /api/providers` (administrators): connects a provider. Without a model list,
/// its models are read from the provider now; a provider that cannot be reached is not
/// saved, and the answer says why. 201 `{"id","models"}`.
pub async fn add(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Body(req): Body<NewProviderBody>,
) -> Result<(StatusCode, Json<Added>), ApiError> {
    let added = admin(&state).add(&actor, req).await?;
    providers_changed(&state, Some(&caller.session), &actor, &added.id).await;
    Ok((StatusCode::CREATED, Json(added)))
}

/// `GET /api/providers` (administrators): every provider with its models; keys never.
pub async fn list(State(state): State<AppState>) -> Result<Json<Vec<ProviderView>>, ApiError> {
    Ok(Json(admin(&state).list().await?))
}

/// What `PATCH /api/providers/{id}` takes; absent fields stay.
#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct ProviderPatch {
    #[ts(optional)]
    name: Option<String>,
    #[ts(optional)]
    base_url: Option<String>,
    /// `null` removes the key; absent leaves it.
    #[serde(default, deserialize_with = "crate::users::role_rules::present")]
    #[ts(optional)]
    api_key: Option<Option<String>>,
    #[ts(optional)]
    trusted_lan: Option<bool>,
    #[ts(optional)]
    models: Option<Vec<ModelInput>>,
    /// The model to make pictures with (`image_generate`); `null` sets none.
    #[serde(default, deserialize_with = "crate::users::role_rules::present")]
    #[ts(optional)]
    image_model: Option<Option<String>>,
    /// The model to write speech down with (`/v1/audio/transcriptions`); `null` sets none.
    #[serde(default, deserialize_with = "crate::users::role_rules::present")]
    #[ts(optional)]
    transcription_model: Option<Option<String>>,
    /// The model to read answers aloud with (`/v1/audio/speech`); `null` sets none.
    #[serde(default, deserialize_with = "crate::users::role_rules::present")]
    #[ts(optional)]
    speech_model: Option<Option<String>>,
    /// The provider's voice to read in (`alloy`); `null` leaves it to the provider.
    #[serde(default, deserialize_with = "crate::users::role_rules::present")]
    #[ts(optional)]
    speech_voice: Option<Option<String>>,
}

impl From<ProviderPatch> for admin::ProviderPatch {
    fn from(body: ProviderPatch) -> Self {
        let ProviderPatch {
            name,
            base_url,
            api_key,
            trusted_lan,
            models,
            image_model,
            transcription_model,
            speech_model,
            speech_voice,
        } = body;
        Self {
            name,
            base_url,
            api_key,
            trusted_lan,
            models,
            image_model,
            transcription_model,
            speech_model,
            speech_voice,
        }
    }
}

/// `PATCH /api/providers/{id}` (administrators)
pub async fn update(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Path(id): Path<String>,
    Body(req): Body<ProviderPatch>,
) -> Result<StatusCode, ApiError> {
    admin(&state).update(&actor, &id, req.into()).await?;
    providers_changed(&state, Some(&caller.session), &actor, &id).await;
    Ok(StatusCode::NO_CONTENT)
}

/// The models a provider offers now (`POST /api/providers/{id}/refresh`).
#[derive(Serialize, ts_rs::TS)]
pub struct Refreshed {
    pub models: Vec<Model>,
}

/// `POST /api/providers/{id}/refresh` (administrators): reads the model list again;
/// models that stay keep what the administrator set for them.
pub async fn refresh(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<Json<Refreshed>, ApiError> {
    refuse_built_in_refresh(&id)?;
    let key = state.agent.provider_key(&id).await?;
    let models = admin(&state).refresh(&actor, &id, key).await?;
    providers_changed(&state, None, &actor, &id).await;
    Ok(Json(Refreshed { models }))
}

/// `DELETE /api/providers/{id}` (administrators)
pub async fn delete(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    admin(&state).delete(&actor, &id).await?;
    providers_changed(&state, None, &actor, &id).await;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/models`: the models my role allows, with who configured their provider.
pub async fn models(State(state): State<AppState>, caller: Caller) -> Result<Json<Vec<CatalogueModel>>, ApiError> {
    Ok(Json(state.agent.models_of(&caller.session).await?))
}

/// `GET /api/providers/detect` (administrators): model servers running on this computer
/// (Ollama, LM Studio, llama.cpp), with their models, for the setup flow to offer first.
pub async fn detect(State(state): State<AppState>) -> Json<Vec<crate::providers::detect::Found>> {
    use crate::providers::detect;
    Json(detect::probe(state.agent.client(), detect::candidates()).await)
}
