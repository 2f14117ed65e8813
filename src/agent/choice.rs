//! Which model a turn uses (§9, §16): the one the conversation is pinned to, the agent
//! prefers or the role leans to, within what the role allows by name and privacy tier,
//! and a fallback on another provider. The choice itself is pure; the runtime's methods
//! here only fetch what it is made from.

use super::definition::Agent;
use super::{Runtime, TurnError};
use crate::providers::catalogue::{self, CatalogueModel, Wish};
use crate::store::roles::Role;
use crate::users::sessions::Session;

impl Runtime {
    /// The models a role may use: allowed by name and by its privacy tier (§16).
    pub async fn models_for(&self, role: &Role) -> Result<Vec<CatalogueModel>, TurnError> {
        let cache = self.provider_cache().await?;
        Ok(cache.models.iter().filter(|m| usable(role, m)).cloned().collect())
    }

    /// The model a conversation's next turn would use, as things are now; none when no
    /// model is usable (the turn will say why).
    pub async fn next_model(&self, session: &Session, agent: &str, pinned: Option<&str>) -> Option<CatalogueModel> {
        self.next_models(session, agent, pinned).await.map(|(model, _)| model)
    }

    /// The model a conversation's next turn would use and its fallback, as things are now.
    pub async fn next_models(
        &self,
        session: &Session,
        agent: &str,
        pinned: Option<&str>,
    ) -> Option<(CatalogueModel, Option<CatalogueModel>)> {
        // What the person declined is not what their next turn would use (§3).
        let (role, standing) = self.narrowed_role(session).await.ok()?;
        let agent = self.inner.agents.load(agent).ok()?;
        let providers = self.provider_cache().await.ok()?;
        let models = standing.declined.models(&providers.models);
        pick_model(&models, &role, &agent, pinned).ok()
    }
}

/// The model a turn uses and, unless the conversation is pinned, a fallback on another
/// provider for when the first one keeps failing — both within what the role allows.
pub(super) fn pick_model(
    models: &[CatalogueModel],
    role: &Role,
    agent: &Agent,
    pinned: Option<&str>,
) -> Result<(CatalogueModel, Option<CatalogueModel>), TurnError> {
    let within_tier = || models.iter().filter(|m| catalogue::tier_allows(role.privacy_tier, m.privacy));
    let wish = Wish {
        pinned,
        agent_model: agent.meta.preferred_model.as_deref(),
        agent_strength: agent.meta.preferred_strength.as_deref(),
        role_strength: Some(&role.preferred_strength),
    };
    if let Some(model) = catalogue::choose(within_tier(), &role.allowed_models, &wish) {
        let fallback = match pinned {
            Some(_) => None,
            None => {
                let others = within_tier().filter(|m| m.provider_id != model.provider_id);
                catalogue::choose(others, &role.allowed_models, &Wish { pinned: None, ..wish }).cloned()
            }
        };
        return Ok((model.clone(), fallback));
    }
    if let Some(name) = pinned {
        check_pin(models, role, name)?;
    }
    if models.iter().any(|m| catalogue::allowed(&role.allowed_models, &m.name)) {
        return Err(TurnError::NoLocalModel);
    }
    Err(TurnError::NoModel)
}

/// Refuses a pinned model that exists but is not among the person's: they went on
/// without the change that brought it to them (§3).
pub(super) fn declined_pin(all: &[CatalogueModel], mine: &[CatalogueModel], name: &str) -> Result<(), TurnError> {
    let named = |models: &[CatalogueModel]| models.iter().any(|m| m.name.eq_ignore_ascii_case(name));
    if named(all) && !named(mine) {
        return Err(TurnError::Declined(name.to_owned()));
    }
    Ok(())
}

/// Why a person may not pin a conversation to `name`, if they may not: it does not exist,
/// their role does not allow it, or it is remote and their tier is `local_only`.
pub(super) fn check_pin(models: &[CatalogueModel], role: &Role, name: &str) -> Result<(), TurnError> {
    match models.iter().find(|m| m.name.eq_ignore_ascii_case(name)) {
        None => Err(TurnError::UnknownModel(name.to_owned())),
        Some(m) if !catalogue::allowed(&role.allowed_models, &m.name) => {
            Err(TurnError::ModelNotAllowed(m.name.clone()))
        }
        Some(m) if !catalogue::tier_allows(role.privacy_tier, m.privacy) => {
            Err(TurnError::PrivacyTier { model: m.name.clone(), provider: m.provider.clone() })
        }
        Some(_) => Ok(()),
    }
}

/// Whether a role may use a model: by name and by privacy tier.
pub(super) fn usable(role: &Role, model: &CatalogueModel) -> bool {
    catalogue::allowed(&role.allowed_models, &model.name) && catalogue::tier_allows(role.privacy_tier, model.privacy)
}
