//! What a person agreed to (§3): where their words may go and what may act for them.
//! The record lives in their own encrypted file, which an administrator can neither read
//! nor forge, and is compared with the shared database before each turn. A change that
//! widens where words go or what runs without asking waits for the person; one that
//! narrows applies at once and is shown. Pure: the caller reads both sides, attributes
//! the changes and writes the record back.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Value, json};

use super::gate::{Effect, Rule};
use crate::providers::catalogue;
pub use crate::store::accepted::{AgentTerms, AuditHead, McpTerms, ProviderTerms, Record, RoleTerms, Terms};
use crate::store::roles::{PrivacyTier, Role};

/// One difference between the record and the shared database.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The item: `role.privacy_tier`, `provider.<id>`, `rule.<hash>`, `agent.<id>`…
    pub key: String,
    pub widens: bool,
    /// A sentence for the person.
    pub what: String,
    pub before: Value,
    pub after: Value,
}

impl Change {
    /// What a decision on this change binds to: the item and the value it would take.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(format!("{}\0{}", self.key, self.after).as_bytes());
        hex::encode(&digest[..16])
    }
}

/// Every difference between what the person accepted and what is in force now.
pub fn differences(accepted: &Terms, now: &Terms) -> Vec<Change> {
    let mut changes = Vec::new();
    role_differences(&accepted.role, &now.role, &mut changes);
    for (id, provider) in &now.providers {
        match accepted.providers.get(id) {
            None => changes.push(Change {
                key: format!("provider.{id}"),
                widens: true,
                what: format!("A model provider was added for you: {} at {}", provider.name, provider.base_url),
                before: Value::Null,
                after: json!(provider),
            }),
            Some(was) if was != provider => {
                // Every field widens: a new name can move a pinned conversation to it.
                let what = if was.base_url != provider.base_url {
                    format!("The model provider {} moved from {} to {}", provider.name, was.base_url, provider.base_url)
                } else if was.trusted_lan != provider.trusted_lan {
                    format!(
                        "The model provider {} at {} is now {} as staying on the home network",
                        provider.name,
                        provider.base_url,
                        if provider.trusted_lan { "trusted" } else { "no longer trusted" }
                    )
                } else if was.kind != provider.kind {
                    format!("The model provider {} is now spoken to as {}", provider.name, provider.kind)
                } else if was.transcription != provider.transcription {
                    match &provider.transcription {
                        Some(model) => format!(
                            "What you say into the microphone is now written down by {} at {} ({model})",
                            provider.name, provider.base_url
                        ),
                        None => format!("{} no longer writes down what you say", provider.name),
                    }
                } else if was.speech != provider.speech {
                    match &provider.speech {
                        Some(model) => format!(
                            "Answers read aloud to you are now made by {} at {} ({model})",
                            provider.name, provider.base_url
                        ),
                        None => format!("{} no longer reads answers aloud to you", provider.name),
                    }
                } else if was.key != provider.key {
                    format!(
                        "The model provider {} at {} now uses another key (maybe another account)",
                        provider.name, provider.base_url
                    )
                } else {
                    format!("The model provider {} was renamed from {}", provider.name, was.name)
                };
                changes.push(Change {
                    key: format!("provider.{id}"),
                    widens: true,
                    what,
                    before: json!(was),
                    after: json!(provider),
                });
            }
            Some(_) => {}
        }
    }
    for (id, was) in &accepted.providers {
        if !now.providers.contains_key(id) {
            changes.push(Change {
                key: format!("provider.{id}"),
                widens: false,
                what: format!("The model provider {} is no longer available to you", was.name),
                before: json!(was),
                after: Value::Null,
            });
        }
    }
    rule_differences(&accepted.rules, &now.rules, &mut changes);
    mcp_differences(&accepted.mcp, &now.mcp, &mut changes);
    // Agents are compared once seen in both: an agent not yet used is not yet in force.
    for (id, agent) in &now.agents {
        match accepted.agents.get(id) {
            Some(was) if was.version == agent.version => {}
            was => changes.push(Change {
                key: format!("agent.{id}"),
                // The version this binary ships is Skald's own, not an administrator's edit.
                widens: !agent.bundled,
                what: match (was, agent.bundled) {
                    (_, true) => format!("The agent {id} is as it ships with Skald"),
                    (None, false) => format!("The agent {id} was made or edited here, and you have not used it before"),
                    (Some(_), false) => format!("The agent {id}'s instructions or settings were edited"),
                },
                before: was.map_or(Value::Null, |w| json!(w)),
                after: json!(agent),
            }),
        }
    }
    changes
}

fn mcp_differences(
    was: &std::collections::BTreeMap<String, McpTerms>,
    now: &std::collections::BTreeMap<String, McpTerms>,
    changes: &mut Vec<Change>,
) {
    for (id, server) in now {
        let where_to = |s: &McpTerms| {
            format!(
                "{}{}{}",
                s.reaches,
                if s.remote { ", off this home network" } else { "" },
                if s.shared { ", one instance shared by everyone" } else { "" }
            )
        };
        let what = match was.get(id) {
            None => format!(
                "The assistant may now use the tools of the MCP server {} ({}): a call's arguments go to it",
                server.name,
                where_to(server)
            ),
            Some(before) if before == server => continue,
            Some(before) if before.spec != server.spec || before.remote != server.remote => {
                format!("The MCP server {} was changed and approved again: now {}", server.name, where_to(server))
            }
            Some(before) => {
                let added: Vec<&str> = server
                    .tools
                    .iter()
                    .filter(|(name, pin)| before.tools.get(*name) != Some(*pin))
                    .map(|(name, _)| name.as_str())
                    .collect();
                if added.is_empty() {
                    // Only fewer tools: nothing more reaches it.
                    changes.push(Change {
                        key: format!("mcp.{id}"),
                        widens: false,
                        what: format!("The MCP server {} offers fewer tools", server.name),
                        before: json!(before),
                        after: json!(server),
                    });
                    continue;
                }
                format!("The MCP server {} has new or changed tools, approved: {}", server.name, added.join(", "))
            }
        };
        changes.push(Change {
            key: format!("mcp.{id}"),
            widens: true,
            what,
            before: was.get(id).map_or(Value::Null, |w| json!(w)),
            after: json!(server),
        });
    }
    for (id, before) in was {
        if !now.contains_key(id) {
            changes.push(Change {
                key: format!("mcp.{id}"),
                widens: false,
                what: format!("The MCP server {} is no longer used for you", before.name),
                before: json!(before),
                after: Value::Null,
            });
        }
    }
}

fn role_differences(was: &RoleTerms, now: &RoleTerms, changes: &mut Vec<Change>) {
    let mut push = |key: &str, widens: bool, what: String, before: Value, after: Value| {
        changes.push(Change { key: format!("role.{key}"), widens, what, before, after });
    };
    if was.privacy_tier != now.privacy_tier {
        let widens = was.privacy_tier == PrivacyTier::LocalOnly;
        let what = if widens {
            "Your words may now go to model services outside this computer and home network".to_owned()
        } else if now.privacy_tier == PrivacyTier::LocalOnly {
            "Your words now stay on this computer and home network".to_owned()
        } else {
            format!("Your privacy tier changed from {} to {}", was.privacy_tier.as_str(), now.privacy_tier.as_str())
        };
        push("privacy_tier", widens, what, json!(was.privacy_tier), json!(now.privacy_tier));
    }
    if was.allowed_models != now.allowed_models {
        let widens = !subset(&now.allowed_models, &was.allowed_models);
        let what = format!("The models you may use changed to: {}", now.allowed_models.join(", "));
        push("allowed_models", widens, what, json!(was.allowed_models), json!(now.allowed_models));
    }
    if was.tools != now.tools {
        let widens = !subset(&now.tools, &was.tools);
        let what = format!("The tools that may act for you changed to: {}", now.tools.join(", "));
        push("tools", widens, what, json!(was.tools), json!(now.tools));
    }
    if was.may_schedule != now.may_schedule {
        let what = if now.may_schedule {
            "Scheduled work may now run for you"
        } else {
            "Scheduled work no longer runs for you"
        };
        push("may_schedule", now.may_schedule, what.to_owned(), json!(was.may_schedule), json!(now.may_schedule));
    }
    if was.may_use_subagents != now.may_use_subagents {
        let what =
            if now.may_use_subagents { "Sub-agents may now work for you" } else { "Sub-agents no longer work for you" };
        let (before, after) = (json!(was.may_use_subagents), json!(now.may_use_subagents));
        push("may_use_subagents", now.may_use_subagents, what.to_owned(), before, after);
    }
    if was.memory_retention_days != now.memory_retention_days {
        let widens = now.memory_retention_days > was.memory_retention_days;
        let what = format!(
            "Memories about you are now kept {} days (were {})",
            now.memory_retention_days, was.memory_retention_days
        );
        let (before, after) = (json!(was.memory_retention_days), json!(now.memory_retention_days));
        push("memory_retention_days", widens, what, before, after);
    }
}

/// A rule is one item, named by its content: an id in the shared database proves nothing.
fn rule_key(rule: &Rule) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(json!(rule).to_string().as_bytes());
    format!("rule.{}", hex::encode(&digest[..8]))
}

fn describe(rule: &Rule) -> String {
    let effect = match rule.effect {
        Effect::Allow => "runs without asking",
        Effect::Deny => "is refused",
        Effect::Require => "asks first",
    };
    match &rule.args {
        Some(args) => format!("{} with arguments matching {args} {effect}", rule.tool),
        None => format!("{} {effect}", rule.tool),
    }
}

fn rule_differences(was: &[Rule], now: &[Rule], changes: &mut Vec<Change>) {
    let any_allow = now.iter().any(|r| r.effect == Effect::Allow);
    for rule in now.iter().filter(|r| !was.contains(r)) {
        changes.push(Change {
            key: rule_key(rule),
            widens: rule.effect == Effect::Allow,
            what: format!("A new approval rule: {}", describe(rule)),
            before: Value::Null,
            after: json!(rule),
        });
    }
    for rule in was.iter().filter(|r| !now.contains(r)) {
        // Without a rule that asks or refuses, an allow below it may now take effect.
        changes.push(Change {
            key: rule_key(rule),
            widens: rule.effect != Effect::Allow && any_allow,
            what: format!("An approval rule was removed: {}", describe(rule)),
            before: json!(rule),
            after: Value::Null,
        });
    }
}

/// Whether every pattern in `now` is one of `was` or matched by one (`home/small` by
/// `home/*`): then nothing new is allowed.
fn subset(now: &[String], was: &[String]) -> bool {
    now.iter().all(|pattern| catalogue::allowed(was, pattern))
}

/// Brings a record's item to its value in `now`: the person accepted it, it narrowed, or
/// they made it themselves.
pub fn accept(record: &mut Record, now: &Terms, key: &str) {
    record.declined.remove(key);
    let terms = &mut record.terms;
    if let Some(attribute) = key.strip_prefix("role.") {
        let (from, to) = (&now.role, &mut terms.role);
        to.id.clone_from(&from.id);
        match attribute {
            "privacy_tier" => to.privacy_tier = from.privacy_tier,
            "allowed_models" => to.allowed_models.clone_from(&from.allowed_models),
            "tools" => to.tools.clone_from(&from.tools),
            "may_schedule" => to.may_schedule = from.may_schedule,
            "may_use_subagents" => to.may_use_subagents = from.may_use_subagents,
            "memory_retention_days" => to.memory_retention_days = from.memory_retention_days,
            _ => {}
        }
    } else if let Some(id) = key.strip_prefix("provider.") {
        match now.providers.get(id) {
            Some(provider) => terms.providers.insert(id.to_owned(), provider.clone()),
            None => terms.providers.remove(id),
        };
    } else if key.starts_with("rule.") {
        terms.rules.retain(|r| rule_key(r) != key);
        terms.rules.extend(now.rules.iter().find(|r| rule_key(r) == key).cloned());
    } else if let Some(id) = key.strip_prefix("agent.") {
        match now.agents.get(id) {
            Some(agent) => terms.agents.insert(id.to_owned(), agent.clone()),
            None => terms.agents.remove(id),
        };
    } else if let Some(id) = key.strip_prefix("mcp.") {
        match now.mcp.get(id) {
            Some(server) => terms.mcp.insert(id.to_owned(), server.clone()),
            None => terms.mcp.remove(id),
        };
    }
}

/// What stays out of force for a person while a widening change is held or declined:
/// the narrower of what they accepted and what is in force.
#[derive(Debug, Clone, Default)]
pub struct Withheld {
    /// The tier they accepted, when a looser one is not accepted.
    pub privacy_tier: Option<PrivacyTier>,
    /// Model patterns a model must also match.
    pub allowed_models: Option<Vec<String>>,
    /// The tool patterns they accepted, when wider ones are not accepted.
    pub tools: Option<Vec<String>>,
    pub may_schedule: bool,
    pub may_use_subagents: bool,
    pub memory_retention_days: Option<i64>,
    /// Providers not to be used.
    pub providers: BTreeSet<String>,
    /// The shared rules they accepted: an allow they did not accept is out of force, and a
    /// rule that asked or refused stays in force although removed — judged against the
    /// rules as read at each decision.
    pub accepted_rules: Option<Vec<Rule>>,
    /// Agents whose current version they did not accept.
    pub agents: BTreeSet<String>,
    /// MCP servers whose tools are not offered to them.
    pub mcp: BTreeSet<String>,
}

impl Withheld {
    /// The narrower of `changes` (each widening and not accepted) applied to a role.
    pub fn from_changes<'c>(accepted: &Terms, changes: impl IntoIterator<Item = &'c Change>) -> Self {
        // The rules are judged against what was accepted at every decision, even with no
        // rule change now: one made after this look must not decide a call before the
        // next look holds it.
        let mut withheld = Self { accepted_rules: Some(accepted.rules.clone()), ..Self::default() };
        for change in changes.into_iter().filter(|c| c.widens) {
            let key = change.key.as_str();
            match key {
                "role.privacy_tier" => withheld.privacy_tier = Some(accepted.role.privacy_tier),
                "role.allowed_models" => withheld.allowed_models = Some(accepted.role.allowed_models.clone()),
                "role.tools" => withheld.tools = Some(accepted.role.tools.clone()),
                "role.may_schedule" => withheld.may_schedule = true,
                "role.may_use_subagents" => withheld.may_use_subagents = true,
                "role.memory_retention_days" => {
                    withheld.memory_retention_days = Some(accepted.role.memory_retention_days);
                }
                _ => {}
            }
            if let Some(id) = key.strip_prefix("provider.") {
                withheld.providers.insert(id.to_owned());
            } else if let Some(id) = key.strip_prefix("agent.") {
                withheld.agents.insert(id.to_owned());
            } else if let Some(id) = key.strip_prefix("mcp.") {
                withheld.mcp.insert(id.to_owned());
            }
        }
        withheld
    }

    /// The role as it applies to the person: the shared database's, narrowed.
    pub fn narrow_role(&self, role: &mut Role) {
        if let Some(tier) = self.privacy_tier {
            role.privacy_tier = tier;
        }
        if self.may_schedule {
            role.may_schedule = false;
        }
        if self.may_use_subagents {
            role.may_use_subagents = false;
        }
        if let Some(days) = self.memory_retention_days {
            role.memory_retention_days = role.memory_retention_days.min(days);
        }
        if let Some(accepted) = &self.tools {
            let now = std::mem::take(&mut role.tools);
            role.tools = accepted.iter().filter(|pattern| catalogue::allowed(&now, pattern)).cloned().collect();
        }
    }

    /// Whether a model may be used: its provider is not withheld and, when wider model
    /// patterns are not accepted, the accepted ones allow it too.
    pub fn allows_model(&self, model: &catalogue::CatalogueModel) -> bool {
        !self.providers.contains(&model.provider_id)
            && self.allowed_models.as_ref().is_none_or(|patterns| catalogue::allowed(patterns, &model.name))
    }

    /// The models the person may use of those offered.
    pub fn models<'m>(
        &self,
        offered: &'m [catalogue::CatalogueModel],
    ) -> std::borrow::Cow<'m, [catalogue::CatalogueModel]> {
        if self.providers.is_empty() && self.allowed_models.is_none() {
            return std::borrow::Cow::Borrowed(offered);
        }
        offered.iter().filter(|model| self.allows_model(model)).cloned().collect()
    }

    /// The shared rules in force for the person, of `shared` as read now.
    pub fn rules(&self, shared: Vec<Rule>) -> Vec<Rule> {
        let Some(accepted) = &self.accepted_rules else { return shared };
        let mut rules: Vec<Rule> =
            shared.iter().filter(|r| r.effect != Effect::Allow || accepted.contains(r)).cloned().collect();
        rules.extend(accepted.iter().filter(|r| r.effect != Effect::Allow && !shared.contains(r)).cloned());
        rules
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::store::providers::ProviderKind;

    fn terms() -> Terms {
        let mut providers = BTreeMap::new();
        providers.insert(
            "home".to_owned(),
            ProviderTerms {
                name: "Home".into(),
                kind: ProviderKind::Openai,
                base_url: "http://127.0.0.1:8080/v1".into(),
                trusted_lan: false,
                key: None,
                transcription: None,
                speech: None,
            },
        );
        Terms {
            role: RoleTerms {
                id: "member".into(),
                privacy_tier: PrivacyTier::LocalOnly,
                allowed_models: vec!["home/*".into()],
                tools: vec!["note_*".into()],
                may_schedule: false,
                may_use_subagents: true,
                memory_retention_days: 90,
            },
            providers,
            rules: vec![Rule { tool: "note_*".into(), args: None, role: None, effect: Effect::Require, priority: 100 }],
            agents: BTreeMap::new(),
            mcp: BTreeMap::new(),
        }
    }

    #[test]
    fn an_approved_mcp_server_widens_until_accepted_and_fewer_tools_narrow() {
        let was = terms();
        let mut now = terms();
        let server = McpTerms {
            name: "files".into(),
            reaches: "node server.js".into(),
            shared: false,
            remote: false,
            spec: "s1".into(),
            tools: BTreeMap::from([("read".into(), "p1".into()), ("write".into(), "p2".into())]),
        };
        now.mcp.insert("mcp_1".into(), server.clone());
        assert_eq!(keys(&differences(&was, &now)), [("mcp.mcp_1", true)]);
        let withheld = Withheld::from_changes(&was, &differences(&was, &now));
        assert!(withheld.mcp.contains("mcp_1"));
        let mut record = Record { terms: was, audit: AuditHead::default(), declined: Default::default() };
        accept(&mut record, &now, "mcp.mcp_1");
        assert!(differences(&record.terms, &now).is_empty());
        // A tool whose pin changed and was approved again widens; one fewer narrows.
        let mut changed = now.clone();
        changed.mcp.get_mut("mcp_1").unwrap().tools.insert("write".into(), "p3".into());
        assert_eq!(keys(&differences(&now, &changed)), [("mcp.mcp_1", true)]);
        let mut fewer = now.clone();
        fewer.mcp.get_mut("mcp_1").unwrap().tools.remove("write");
        assert_eq!(keys(&differences(&now, &fewer)), [("mcp.mcp_1", false)]);
        let mut moved = now.clone();
        moved.mcp.get_mut("mcp_1").unwrap().spec = "s2".into();
        assert!(differences(&now, &moved)[0].what.contains("changed and approved again"));
        assert_eq!(keys(&differences(&now, &terms())), [("mcp.mcp_1", false)]);
    }

    fn keys(changes: &[Change]) -> Vec<(&str, bool)> {
        changes.iter().map(|c| (c.key.as_str(), c.widens)).collect()
    }

    #[test]
    fn the_same_terms_differ_in_nothing() {
        assert!(differences(&terms(), &terms()).is_empty());
    }

    #[test]
    fn every_change_to_a_provider_widens_and_its_removal_narrows() {
        let mut now = terms();
        now.providers.get_mut("home").unwrap().base_url = "http://203.0.113.9/v1".into();
        assert_eq!(keys(&differences(&terms(), &now)), [("provider.home", true)]);
        let mut now = terms();
        now.providers.get_mut("home").unwrap().trusted_lan = true;
        assert_eq!(keys(&differences(&terms(), &now)), [("provider.home", true)]);
        let mut now = terms();
        now.providers.get_mut("home").unwrap().name = "Upstairs".into();
        assert_eq!(keys(&differences(&terms(), &now)), [("provider.home", true)], "a pin by name could move");
        let mut now = terms();
        now.providers.get_mut("home").unwrap().key = Some("other".into());
        assert_eq!(keys(&differences(&terms(), &now)), [("provider.home", true)], "another key, maybe another account");
        let mut now = terms();
        now.providers.clear();
        assert_eq!(keys(&differences(&terms(), &now)), [("provider.home", false)]);
    }

    #[test]
    fn a_looser_tier_and_wider_patterns_widen_and_the_reverse_narrows() {
        let mut now = terms();
        now.role.privacy_tier = PrivacyTier::Any;
        now.role.allowed_models = vec!["*".into()];
        now.role.may_schedule = true;
        let changes = differences(&terms(), &now);
        assert_eq!(
            keys(&changes),
            [("role.privacy_tier", true), ("role.allowed_models", true), ("role.may_schedule", true)]
        );
        // Back again: each narrows.
        let back = differences(&now, &terms());
        assert!(back.iter().all(|c| !c.widens), "{back:?}");
        // A narrower pattern inside the accepted one narrows.
        let mut now = terms();
        now.role.allowed_models = vec!["home/small".into()];
        assert_eq!(keys(&differences(&terms(), &now)), [("role.allowed_models", false)]);
    }

    #[test]
    fn a_new_allow_widens_and_removing_an_ask_widens_only_where_an_allow_remains() {
        let allow = Rule { tool: "*".into(), args: None, role: None, effect: Effect::Allow, priority: 500 };
        let mut now = terms();
        now.rules.push(allow.clone());
        let changes = differences(&terms(), &now);
        assert_eq!(changes.len(), 1);
        assert!(changes[0].widens);
        let mut without_ask = terms();
        without_ask.rules.clear();
        assert!(!differences(&terms(), &without_ask)[0].widens, "nothing allows, so calls still ask");
        let mut was = terms();
        was.rules.push(allow.clone());
        let mut now = terms();
        now.rules = vec![allow];
        assert!(differences(&was, &now)[0].widens, "the allow now decides note calls");
    }

    #[test]
    fn an_edited_agent_widens_but_the_shipped_version_does_not() {
        let mut was = terms();
        was.agents.insert("general".into(), AgentTerms { version: "a".into(), bundled: true });
        let mut now = was.clone();
        now.agents.insert("general".into(), AgentTerms { version: "b".into(), bundled: false });
        assert_eq!(keys(&differences(&was, &now)), [("agent.general", true)]);
        now.agents.insert("general".into(), AgentTerms { version: "c".into(), bundled: true });
        assert_eq!(keys(&differences(&was, &now)), [("agent.general", false)]);
        // An agent not seen now is not compared.
        now.agents.clear();
        assert!(differences(&was, &now).is_empty());
    }

    #[test]
    fn accepting_each_change_leaves_nothing_to_differ() {
        let mut now = terms();
        now.role.privacy_tier = PrivacyTier::Any;
        now.providers.get_mut("home").unwrap().base_url = "http://203.0.113.9/v1".into();
        now.providers.insert("new".into(), now.providers["home"].clone());
        now.rules = vec![Rule { tool: "*".into(), args: None, role: None, effect: Effect::Allow, priority: 500 }];
        now.agents.insert("general".into(), AgentTerms { version: "b".into(), bundled: false });
        let mut record = Record { terms: terms(), audit: AuditHead::default(), declined: BTreeMap::new() };
        for change in differences(&record.terms, &now) {
            accept(&mut record, &now, &change.key);
        }
        assert_eq!(differences(&record.terms, &now), []);
    }

    #[test]
    fn what_is_withheld_is_the_narrower_of_the_two() {
        let allow = Rule { tool: "*".into(), args: None, role: None, effect: Effect::Allow, priority: 500 };
        let mut now = terms();
        now.role.privacy_tier = PrivacyTier::Any;
        now.role.tools = vec!["*".into()];
        now.rules = vec![allow.clone()];
        let accepted = terms();
        let changes = differences(&accepted, &now);
        let withheld = Withheld::from_changes(&accepted, &changes);
        assert_eq!(withheld.privacy_tier, Some(PrivacyTier::LocalOnly));
        assert_eq!(withheld.rules(now.rules.clone()), accepted.rules, "the new allow is out, the old ask back");
        let mut role: Role = serde_json::from_value(json!({
            "id": "member", "label": "Member", "manage_instance": false, "tools": ["*"], "may_approve": true,
            "may_schedule": false, "may_use_subagents": true, "max_turns": 8, "idle_timeout_minutes": 30,
            "lock_on_close": true, "allowed_models": ["*"], "preferred_strength": "balanced",
            "privacy_tier": "any", "memory_retention_days": 90
        }))
        .unwrap();
        withheld.narrow_role(&mut role);
        assert_eq!(role.privacy_tier, PrivacyTier::LocalOnly);
        assert_eq!(role.tools, ["note_*"], "`*` is wider than what was accepted");
    }

    #[test]
    fn a_rule_added_after_the_look_is_judged_against_what_was_accepted() {
        let allow = |tool: &str| Rule { tool: tool.into(), args: None, role: None, effect: Effect::Allow, priority: 5 };
        let accepted = terms();
        let mut now = terms();
        now.rules.push(allow("note_write"));
        let withheld = Withheld::from_changes(&accepted, &differences(&accepted, &now));
        // By the time the calls are judged, another allow was added and the ask removed.
        let later = vec![allow("note_write"), allow("web_fetch")];
        assert_eq!(withheld.rules(later), accepted.rules, "neither new allow counts; the removed ask still does");
        // Nothing withheld: the rules are as read.
        assert_eq!(Withheld::default().rules(vec![allow("x")]), [allow("x")]);
    }

    #[test]
    fn a_decision_binds_the_value_it_was_made_on() {
        let mut now = terms();
        now.providers.get_mut("home").unwrap().base_url = "http://203.0.113.9/v1".into();
        let first = differences(&terms(), &now).remove(0);
        now.providers.get_mut("home").unwrap().base_url = "http://203.0.113.10/v1".into();
        let second = differences(&terms(), &now).remove(0);
        assert_ne!(first.fingerprint(), second.fingerprint());
    }
}
