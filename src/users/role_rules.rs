//! What makes a role valid, and how an administrator's changes apply to one. Pure: the
//! store keeps roles, this module only decides (§6.1).

use serde::{Deserialize, Deserializer};

use crate::ids::RoleId;
use crate::store::roles::{PrivacyTier, Role};

const STRENGTHS: [&str; 3] = ["fast", "balanced", "strong"];

/// The attributes an administrator may set; absent fields stay as they are.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolePatch {
    pub label: Option<String>,
    pub description: Option<String>,
    pub manage_instance: Option<bool>,
    pub tools: Option<Vec<String>>,
    pub may_approve: Option<bool>,
    pub may_schedule: Option<bool>,
    pub may_use_subagents: Option<bool>,
    pub max_turns: Option<i64>,
    pub idle_timeout_minutes: Option<i64>,
    pub lock_on_close: Option<bool>,
    pub allowed_models: Option<Vec<String>>,
    pub preferred_strength: Option<String>,
    /// `null` removes the cap; absent leaves it.
    #[serde(default, deserialize_with = "present")]
    pub usage_cap_tokens: Option<Option<i64>>,
    pub privacy_tier: Option<String>,
    pub memory_retention_days: Option<i64>,
    pub may_supervise: Option<bool>,
    pub may_be_supervised: Option<bool>,
    pub may_end_supervision: Option<bool>,
    pub cards_to_supervisor: Option<bool>,
}

/// For `Option<Option<T>>` patch fields: a present `null` is `Some(None)`, absent is `None`.
pub(crate) fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A new role starts as an ordinary one: all tools, no instance management.
pub fn new_role(id: RoleId, label: String) -> Role {
    Role {
        id,
        label,
        description: String::new(),
        manage_instance: false,
        tools: vec!["*".into()],
        may_approve: true,
        may_schedule: true,
        may_use_subagents: true,
        max_turns: 25,
        idle_timeout_minutes: 30,
        lock_on_close: true,
        allowed_models: vec!["*".into()],
        preferred_strength: "balanced".into(),
        usage_cap_tokens: None,
        privacy_tier: PrivacyTier::Any,
        memory_retention_days: 90,
        may_supervise: false,
        may_be_supervised: false,
        may_end_supervision: true,
        cards_to_supervisor: false,
    }
}

/// The role with the patch applied; a tier that is none is refused here, in the
/// administrator's words (the rest is checked by [`problem`]).
pub fn apply(mut role: Role, patch: RolePatch) -> Result<Role, String> {
    if let Some(name) = &patch.privacy_tier {
        role.privacy_tier = PrivacyTier::parse(name).ok_or_else(|| {
            let names: Vec<&str> = PrivacyTier::ALL.iter().map(|tier| tier.as_str()).collect();
            format!("privacy_tier is one of {}", names.join(", "))
        })?;
    }
    macro_rules! set {
        ($($field:ident),*) => { $( if let Some(v) = patch.$field { role.$field = v; } )* };
    }
    set!(
        label,
        description,
        manage_instance,
        tools,
        may_approve,
        may_schedule,
        may_use_subagents,
        max_turns,
        idle_timeout_minutes,
        lock_on_close,
        allowed_models,
        preferred_strength,
        usage_cap_tokens,
        memory_retention_days,
        may_supervise,
        may_be_supervised,
        may_end_supervision,
        cards_to_supervisor
    );
    Ok(role)
}

/// Why a role cannot be stored, in words for the administrator.
pub fn problem(role: &Role) -> Option<String> {
    let id = role.id.as_str();
    let id_ok = (1..=40).contains(&id.len())
        && id.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !id_ok {
        return Some("a role id is 1–40 lower-case letters, digits or '-', starting with a letter or digit".into());
    }
    let label = role.label.trim();
    if label.is_empty() || label.chars().count() > 60 || label.chars().any(char::is_control) {
        return Some("a role needs a label of 1–60 characters".into());
    }
    if role.description.chars().count() > 500 {
        return Some("a description has at most 500 characters".into());
    }
    for (what, list) in [("tools", &role.tools), ("allowed_models", &role.allowed_models)] {
        if list.len() > 200 || list.iter().any(|p| p.is_empty() || p.len() > 200 || p.chars().any(char::is_control)) {
            return Some(format!("{what} is a list of at most 200 non-empty patterns"));
        }
    }
    let ranges = [
        ("max_turns", role.max_turns, 1, 1000),
        ("idle_timeout_minutes", role.idle_timeout_minutes, 1, 1440),
        ("memory_retention_days", role.memory_retention_days, 1, 36500),
    ];
    for (what, value, low, high) in ranges {
        if !(low..=high).contains(&value) {
            return Some(format!("{what} must be between {low} and {high}"));
        }
    }
    if role.usage_cap_tokens.is_some_and(|cap| cap < 0) {
        return Some("usage_cap_tokens cannot be negative".into());
    }
    if !STRENGTHS.contains(&role.preferred_strength.as_str()) {
        return Some(format!("preferred_strength is one of {}", STRENGTHS.join(", ")));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role() -> Role {
        new_role(RoleId::new("guest"), "Guest".into())
    }

    #[test]
    fn a_new_role_is_valid_and_manages_nothing() {
        assert_eq!(problem(&role()), None);
        assert!(!role().manage_instance);
    }

    #[test]
    fn a_patch_changes_only_what_it_names() {
        let patched =
            apply(role(), RolePatch { max_turns: Some(7), usage_cap_tokens: Some(Some(1000)), ..Default::default() })
                .unwrap();
        assert_eq!(patched.max_turns, 7);
        assert_eq!(patched.usage_cap_tokens, Some(1000));
        assert_eq!(patched.label, "Guest");
    }

    #[test]
    fn out_of_range_or_unknown_values_are_refused_with_the_field_named() {
        let bad = |patch: RolePatch| apply(role(), patch).map_or_else(|why| why, |role| problem(&role).unwrap());
        assert!(bad(RolePatch { max_turns: Some(0), ..Default::default() }).contains("max_turns"));
        assert!(
            bad(RolePatch { privacy_tier: Some("sometimes".into()), ..Default::default() }).contains("privacy_tier")
        );
        assert!(
            bad(RolePatch { preferred_strength: Some("huge".into()), ..Default::default() })
                .contains("preferred_strength")
        );
        assert!(bad(RolePatch { tools: Some(vec![String::new()]), ..Default::default() }).contains("tools"));
        assert!(problem(&new_role(RoleId::new("Bad Id"), "x".into())).unwrap().contains("role id"));
    }

    #[test]
    fn unknown_fields_in_a_patch_are_an_error_not_ignored() {
        assert!(serde_json::from_str::<RolePatch>(r#"{"max_turn": 3}"#).is_err());
        let cleared: RolePatch = serde_json::from_str(r#"{"usage_cap_tokens": null}"#).unwrap();
        assert_eq!(cleared.usage_cap_tokens, Some(None));
    }
}
