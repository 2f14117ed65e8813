//! Pictures made by a model (§12.2, `image_generate`): through a provider speaking OpenAI's
//! `/v1/images/generations` (OpenAI, stable-diffusion.cpp's server, LocalAI) for which an
//! administrator set a model for pictures. Only a provider the person may use and went on
//! with (§3) makes theirs — one of whose chat models is among their own — and the picture
//! is kept in their space as a document.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::{Runtime, TurnError};
use crate::providers::Endpoint;
use crate::providers::catalogue::{allowed, tier_allows};
use crate::providers::privacy::classify;
use crate::store::StoreError;
use crate::store::documents::{Document, NewDocument, Shelf, Status};
use crate::store::private::PrivateStore;
use crate::store::providers;
use crate::users::sessions::Session;

/// Where a person's pictures are made: the provider, its model for pictures.
pub struct Studio {
    pub endpoint: Endpoint,
    pub model: String,
}

impl Runtime {
    /// The first provider that makes pictures for the person of `session`: it has a model
    /// for pictures, their role's tier and model patterns allow it, and they use one of its
    /// chat models. The error says, in words, why there is none.
    pub async fn studio(&self, session: &Arc<Session>) -> Result<Result<Studio, String>, TurnError> {
        let role = self.role_of(&session.user_id).await?;
        let theirs = self.models_of(session).await?;
        for provider in providers::list(&self.inner.system).await? {
            let Some(model) = provider.image_model.clone() else { continue };
            let tier = classify(provider.kind, &provider.base_url, provider.trusted_lan);
            let name = format!("{}/{model}", provider.name);
            if !tier_allows(role.privacy_tier, tier)
                || !allowed(&role.allowed_models, &name)
                || !theirs.iter().any(|m| m.provider_id == provider.id.as_str())
            {
                continue;
            }
            let api_key = self.provider_key(&provider.id).await?;
            let endpoint = Endpoint {
                provider: provider.name,
                kind: provider.kind,
                privacy: tier,
                base_url: provider.base_url,
                api_key,
                local: None,
            };
            return Ok(Ok(Studio { endpoint, model }));
        }
        Ok(Err("no provider makes pictures for this person: an administrator sets a model for pictures on an \
                OpenAI-compatible provider this person uses"
            .to_owned()))
    }
}

/// Keeps a made picture among the person's documents, read already (a picture of no
/// text): named after when it was made, with what it was made from as its detail. The same
/// bytes again are the document kept before.
pub async fn keep(space: &PrivateStore, png: &[u8], made_by: &str, prompt: &str) -> Result<Document, KeepError> {
    let name = format!("picture-{}.png", crate::store::timestamp().replace([':', '.'], "-"));
    let kind = crate::extract::sniff(png, &name).map_err(|_| KeepError::NotAPicture)?;
    if !kind.is_image() {
        return Err(KeepError::NotAPicture);
    }
    let sha256 = hex::encode(Sha256::digest(png));
    let shelf = Shelf::Own(space);
    let new = NewDocument { name: &name, kind, bytes: png, sha256: &sha256, uploaded_by: None, local_only: false };
    let document = match shelf.create(&new).await {
        Ok(document) => document,
        Err(StoreError::Exists) => return shelf.find(&sha256).await?.ok_or(KeepError::Store(StoreError::NotFound)),
        Err(err) => return Err(err.into()),
    };
    let prompt: String = prompt.chars().take(300).collect();
    let detail = format!("Made by {made_by} from: {prompt}");
    shelf.finish(&document.id, &[], Status::NoText, Some(&detail)).await?;
    Ok(shelf.get(&document.id).await?.unwrap_or(document))
}

/// Why a made picture was not kept.
#[derive(Debug, thiserror::Error)]
pub enum KeepError {
    #[error("the provider sent something that is not a picture")]
    NotAPicture,
    #[error(transparent)]
    Store(#[from] StoreError),
}
