//! Which provider, if any, writes down what a person says or reads answers aloud to them
//! (§15). A provider an administrator set a model for speech on is used for a person only
//! when their role's tier and model patterns allow it and they went on with it as it is
//! now (§3): what it does with their speech is part of the provider's terms in their
//! record, so setting or changing a speech model waits for them like a new address does.
//! Otherwise their speech stays with the engines on this machine.

use std::sync::Arc;

use super::{Runtime, TurnError};
use crate::providers::Endpoint;
use crate::providers::catalogue::{allowed, tier_allows};
use crate::providers::privacy::{Tier, classify};
use crate::store::providers::VoiceRow;
use crate::store::roles::{PrivacyTier, Role};
use crate::users::sessions::Session;

/// What speech work a provider may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// `/v1/audio/transcriptions`
    Transcription,
    /// `/v1/audio/speech`
    Speech,
}

/// A provider's speech work, as it stands in a person's terms: the model (and voice).
pub(super) fn offered(role: &Role, row: &VoiceRow) -> (Option<String>, Option<String>) {
    let tier = classify(row.kind, &row.base_url, row.trusted_lan);
    let fits = |model: &String| {
        tier_allows(role.privacy_tier, tier) && allowed(&role.allowed_models, &format!("{}/{model}", row.name))
    };
    let transcription = row.transcription_model.clone().filter(fits);
    let speech = row.speech_model.clone().filter(fits).map(|model| match &row.speech_voice {
        Some(voice) => format!("{model}, voice {voice}"),
        None => model,
    });
    (transcription, speech)
}

/// Where a person's speech goes.
pub struct SpeechProvider {
    pub endpoint: Endpoint,
    pub model: String,
    /// The provider's voice, for reading aloud; its default when none.
    pub voice: Option<String>,
    /// The tier it was chosen under: checked again as the request leaves.
    pub privacy_tier: PrivacyTier,
}

/// The answer to "which provider?": one, or none with why the ones set are not used.
pub enum Choice {
    Provider(SpeechProvider),
    /// This machine's engines; the reason a provider set for it is not used, if one is.
    Here(Option<String>),
}

impl Runtime {
    /// The provider for `purpose` for the person of `session`: of those set for it, on the
    /// home network first, the first their role allows and they went on with.
    pub async fn speech_provider(&self, session: &Arc<Session>, purpose: Purpose) -> Result<Choice, TurnError> {
        let cache = self.provider_cache().await?;
        let mut rows: Vec<&VoiceRow> = cache
            .voice
            .iter()
            .filter(|row| match purpose {
                Purpose::Transcription => row.transcription_model.is_some(),
                Purpose::Speech => row.speech_model.is_some(),
            })
            .collect();
        if rows.is_empty() {
            return Ok(Choice::Here(None));
        }
        rows.sort_by_key(|row| classify(row.kind, &row.base_url, row.trusted_lan) == Tier::Remote);
        let mut role = self.role_of(&session.user_id).await?;
        let standing = self.standing_with(session, &role, None, &cache).await?;
        standing.withheld.narrow_role(&mut role);
        let mut why = None;
        for row in rows {
            let tier = classify(row.kind, &row.base_url, row.trusted_lan);
            let (transcription, speech) = offered(&role, row);
            let model = match purpose {
                Purpose::Transcription => transcription.and(row.transcription_model.clone()),
                Purpose::Speech => speech.and(row.speech_model.clone()),
            };
            let Some(model) = model else {
                why.get_or_insert_with(|| {
                    if tier_allows(role.privacy_tier, tier) {
                        format!("your role does not allow {}'s models", row.name)
                    } else {
                        format!(
                            "{} is outside this computer and home network, and your role keeps your words here",
                            row.name
                        )
                    }
                });
                continue;
            };
            if standing.withheld.providers.contains(&row.id) {
                why.get_or_insert_with(|| {
                    format!("a change to {} waits for your decision: see the notice in your inbox", row.name)
                });
                continue;
            }
            let endpoint = Endpoint {
                provider: row.name.clone(),
                kind: row.kind,
                privacy: tier,
                base_url: row.base_url.clone(),
                api_key: cache.key(&self.inner.secrets, &row.id)?,
                local: None,
            };
            let voice = if purpose == Purpose::Speech { row.speech_voice.clone() } else { None };
            return Ok(Choice::Provider(SpeechProvider { endpoint, model, voice, privacy_tier: role.privacy_tier }));
        }
        Ok(Choice::Here(why))
    }
}
