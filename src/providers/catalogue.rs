//! Which models a person may use and which one a turn gets (§9): a model is named
//! `provider/model`; a role's `allowed_models` are patterns over those names; a turn takes
//! the session's pinned model, else the agent's wish, else the role's preferred strength,
//! else the strongest allowed. Pure.

use serde::Serialize;

use super::privacy::{self, Tier};
use crate::store::providers::CatalogueRow;
use crate::store::providers::ProviderKind;
use crate::store::roles::PrivacyTier;

pub use crate::patterns::{allowed, glob};

/// Model strengths, weakest first.
pub const STRENGTHS: [&str; 3] = ["fast", "balanced", "strong"];

/// One model as a turn and the model picker see it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "Model")]
pub struct CatalogueModel {
    /// `provider/model`
    pub name: String,
    pub provider_id: String,
    pub provider: String,
    pub kind: ProviderKind,
    #[serde(skip)]
    pub base_url: String,
    /// The administrator's mark that this private-network address stays at home.
    #[serde(skip)]
    pub trusted_lan: bool,
    pub model_id: String,
    pub context_window: i64,
    pub strength: String,
    pub tools: bool,
    /// It reads pictures attached to a message.
    pub images: bool,
    /// Whether the words sent to it stay on this machine or home network (§16).
    pub privacy: Tier,
    /// Who connected the provider and who last changed it (§3).
    pub configured_by: String,
    pub changed_by: String,
}

impl From<CatalogueRow> for CatalogueModel {
    fn from(row: CatalogueRow) -> Self {
        Self {
            privacy: privacy::classify(row.kind, &row.base_url, row.trusted_lan),
            name: format!("{}/{}", row.provider_name, row.model_id),
            provider_id: row.provider_id,
            provider: row.provider_name,
            kind: row.kind,
            base_url: row.base_url,
            trusted_lan: row.trusted_lan,
            model_id: row.model_id,
            context_window: row.context_window,
            strength: row.strength,
            tools: row.tools,
            images: row.images,
            configured_by: row.created_by,
            changed_by: row.updated_by,
        }
    }
}

fn rank(strength: &str) -> usize {
    STRENGTHS.iter().position(|s| *s == strength).unwrap_or(1)
}

/// Whether a role's privacy tier lets a person's words go to a provider of this tier.
pub fn tier_allows(role_tier: PrivacyTier, provider: Tier) -> bool {
    provider == Tier::Local || role_tier != PrivacyTier::LocalOnly
}

/// What a turn would like; the first of these that an allowed model satisfies wins.
#[derive(Debug, Default)]
pub struct Wish<'a> {
    pub pinned: Option<&'a str>,
    pub agent_model: Option<&'a str>,
    pub agent_strength: Option<&'a str>,
    pub role_strength: Option<&'a str>,
}

/// The model a turn uses, among those the role allows.
pub fn choose<'m>(
    models: impl IntoIterator<Item = &'m CatalogueModel>,
    allowed_patterns: &[String],
    wish: &Wish,
) -> Option<&'m CatalogueModel> {
    let allowed: Vec<&CatalogueModel> = models.into_iter().filter(|m| allowed(allowed_patterns, &m.name)).collect();
    let named = |name: &str| allowed.iter().copied().find(|m| m.name.eq_ignore_ascii_case(name));
    let of_strength = |strength: &str| allowed.iter().copied().find(|m| m.strength == strength);
    if let Some(pinned) = wish.pinned {
        return named(pinned);
    }
    wish.agent_model
        .and_then(named)
        .or_else(|| wish.agent_strength.and_then(of_strength))
        .or_else(|| wish.role_strength.and_then(of_strength))
        .or_else(|| allowed.iter().copied().max_by_key(|m| (rank(&m.strength), m.context_window)))
}

/// A first guess at a model's strength from its name, for models a provider lists; the
/// administrator can correct it.
pub fn guess_strength(model_id: &str) -> &'static str {
    let id = model_id.to_lowercase();
    if let Some(billions) = parameter_billions(&id) {
        return if billions < 4.0 {
            "fast"
        } else if billions >= 60.0 {
            "strong"
        } else {
            "balanced"
        };
    }
    let has = |words: &[&str]| words.iter().any(|w| id.contains(w));
    if has(&["mini", "nano", "small", "tiny", "haiku", "flash", "lite"]) {
        "fast"
    } else if has(&["opus", "large", "sonnet", "gpt-4", "gpt-5", "-pro"]) {
        "strong"
    } else {
        "balanced"
    }
}

/// The parameter count a model id states, like `8b`, `1.5b` or `135m`, in billions.
fn parameter_billions(id: &str) -> Option<f64> {
    id.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.')).find_map(|token| {
        let (number, scale) = match token.as_bytes().last()? {
            b'b' => (&token[..token.len() - 1], 1.0),
            b'm' => (&token[..token.len() - 1], 0.001),
            _ => return None,
        };
        number.parse::<f64>().ok().filter(|n| *n > 0.0).map(|n| n * scale)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(name: &str, strength: &str, context: i64) -> CatalogueModel {
        let (provider, id) = name.split_once('/').unwrap();
        CatalogueModel {
            name: name.into(),
            provider_id: provider.into(),
            provider: provider.into(),
            kind: ProviderKind::Openai,
            base_url: String::new(),
            trusted_lan: false,
            model_id: id.into(),
            context_window: context,
            strength: strength.into(),
            tools: true,
            images: false,
            privacy: Tier::Remote,
            configured_by: String::new(),
            changed_by: String::new(),
        }
    }

    fn patterns(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn patterns_match_whole_names_with_stars() {
        assert!(allowed(&patterns(&["*"]), "a/b"));
        assert!(allowed(&patterns(&["home/*"]), "home/llama"));
        assert!(!allowed(&patterns(&["home/*"]), "cloud/llama"));
        assert!(allowed(&patterns(&["*/llama*"]), "home/llama-3"));
        assert!(allowed(&patterns(&["Cloud/GPT-4o"]), "cloud/gpt-4o"));
        assert!(!allowed(&patterns(&["cloud/gpt-4o"]), "cloud/gpt-4o-mini"));
        assert!(!allowed(&patterns(&[]), "a/b"));
        assert!(!allowed(&patterns(&["a*a"]), "a"), "the tail may not overlap the head");
    }

    #[test]
    fn a_turn_takes_the_pin_then_the_agent_then_the_role_then_the_strongest() {
        let models = [model("p/fast", "fast", 8), model("p/mid", "balanced", 8), model("p/big", "strong", 8)];
        let all = patterns(&["*"]);
        let pick = |wish: Wish| choose(&models, &all, &wish).map(|m| m.name.clone());
        assert_eq!(
            pick(Wish { pinned: Some("p/fast"), role_strength: Some("strong"), ..Wish::default() }).unwrap(),
            "p/fast"
        );
        assert_eq!(
            pick(Wish { agent_model: Some("p/mid"), role_strength: Some("fast"), ..Wish::default() }).unwrap(),
            "p/mid"
        );
        assert_eq!(
            pick(Wish { agent_strength: Some("fast"), role_strength: Some("strong"), ..Wish::default() }).unwrap(),
            "p/fast"
        );
        assert_eq!(pick(Wish { role_strength: Some("balanced"), ..Wish::default() }).unwrap(), "p/mid");
        assert_eq!(pick(Wish::default()).unwrap(), "p/big");
    }

    #[test]
    fn nothing_outside_the_role_is_chosen_not_even_when_pinned() {
        let models = [model("p/fast", "fast", 8), model("p/big", "strong", 8)];
        let only_fast = patterns(&["p/fast"]);
        assert_eq!(choose(&models, &only_fast, &Wish::default()).unwrap().name, "p/fast");
        assert!(choose(&models, &only_fast, &Wish { pinned: Some("p/big"), ..Wish::default() }).is_none());
    }

    #[test]
    fn model_names_suggest_a_strength() {
        assert_eq!(guess_strength("gpt-4o-mini"), "fast");
        assert_eq!(guess_strength("claude-opus-4"), "strong");
        assert_eq!(guess_strength("llama-3.1-8b-instruct"), "balanced");
        assert_eq!(guess_strength("qwen2.5-1.5b-instruct"), "fast");
        assert_eq!(guess_strength("SmolLM2-135M-Instruct"), "fast");
        assert_eq!(guess_strength("mixtral-8x22b"), "balanced", "8x22b states no plain size");
        assert_eq!(guess_strength("llama-3.3-70b"), "strong");
    }
}
