//! Before each turn, and each further round of one: a person's record of what they
//! accepted against the shared database as it is now (§3, [`consent`]). Widening changes
//! they have not decided on hold the turn behind notices; narrowing ones, and their own,
//! are written into the record at once; declined ones stay out of force for them.

use serde_json::{Value, json};

use super::consent::{self, AgentTerms, AuditHead, Change, ProviderTerms, Record, RoleTerms, Terms, Withheld};
use super::definition::Agent;
use super::{Runtime, TurnError, usable};
use crate::ids::UserId;
use crate::providers::catalogue::CatalogueModel;
use crate::store::audit::{self, Link};
use crate::store::roles::Role;
use crate::store::{accepted, approval_rules, notices};
use crate::users::sessions::Session;

/// What stands between the person and their next model request or tool call.
#[derive(Debug, Default)]
pub struct Standing {
    /// What stays out of force for them: the narrower of what they accepted and what is.
    pub withheld: Withheld,
    /// The notices of changes waiting for their decision; none lets the turn go on.
    pub holds: Vec<i64>,
}

/// A person's answer to a held change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Accept,
    Decline,
}

impl Runtime {
    /// The terms the shared database puts a person under now. Agents are compared once
    /// used: `agents` are the ones about to run or already in the person's record.
    async fn terms_now(&self, role: &Role, agents: &[Agent]) -> Result<Terms, TurnError> {
        let providers = self.provider_cache().await?;
        let rules = approval_rules::list(self.system()).await?;
        let role_id = role.id.to_string();
        let mut terms = Terms {
            role: RoleTerms::from(role),
            rules: rules
                .into_iter()
                .map(|stored| stored.rule)
                .filter(|rule| rule.role.as_deref().is_none_or(|r| r == role_id || r == "*"))
                .collect(),
            ..Terms::default()
        };
        for model in providers.models.iter().filter(|m| usable(role, m)) {
            terms.providers.entry(model.provider_id.clone()).or_insert_with(|| ProviderTerms {
                name: model.provider.clone(),
                kind: model.kind.clone(),
                base_url: model.base_url.clone(),
                trusted_lan: model.trusted_lan,
            });
        }
        for agent in agents {
            let bundled = self.inner.agents.is_bundled(agent);
            terms.agents.insert(agent.id.clone(), AgentTerms { version: agent.version.clone(), bundled });
        }
        Ok(terms)
    }

    /// Writes a person's first record — what setup, enrolment or (for an account from
    /// before records) their first login shows them — unless they have one.
    pub async fn begin_record(&self, session: &Session) -> Result<(), TurnError> {
        if accepted::get(&session.space).await?.is_some() {
            return Ok(());
        }
        let role = self.role_of(&session.user_id).await?;
        let terms = self.terms_now(&role, &self.inner.agents.list().into_iter().flatten().collect::<Vec<_>>()).await?;
        let (id, hash) = audit::head(self.system()).await?;
        let record = Record { terms, audit: AuditHead { id, hash }, declined: Default::default() };
        accepted::put(&session.space, &record).await?;
        Ok(())
    }

    /// Compares the person's record with the shared database; see the module's comment.
    /// `agent` is the one about to run; without one, the agents the person has used.
    pub async fn standing(&self, session: &Session, role: &Role, agent: Option<&Agent>) -> Result<Standing, TurnError> {
        let Some(mut record) = accepted::get(&session.space).await? else {
            self.begin_record(session).await?;
            return Ok(Standing::default());
        };
        let agents = match agent {
            Some(agent) => vec![agent.clone()],
            None => record.terms.agents.keys().filter_map(|id| self.inner.agents.load(id).ok()).collect(),
        };
        let now = self.terms_now(role, &agents).await?;
        let changes = consent::differences(&record.terms, &now);
        if changes.is_empty() {
            return Ok(Standing::default());
        }
        let user = &session.user_id;
        // Who made each change: the audit entries since the record's last look, when the
        // chain from there is whole. Otherwise the change was made outside Skald.
        let trail = audit::since(self.system(), (record.audit.id, &record.audit.hash)).await?;
        let before = record.clone();
        let (mut held, mut withheld, mut applied) = (Vec::new(), Vec::new(), Vec::new());
        for change in changes {
            let mut by = trail.as_ref().ok().and_then(|links| made_by(links, &change, user, &now));
            if by.is_none()
                && change.widens
                && let Some(id) = change.key.strip_prefix("agent.")
            {
                let version = change.after["version"].as_str().unwrap_or_default();
                by = audit::agent_saved_by(self.system(), id, version).await?;
            }
            let own = by.as_ref().is_some_and(|(id, _)| id == user.as_str());
            if !change.widens || own {
                consent::accept(&mut record, &now, &change.key);
                // Skald's own agents as shipped need no word, and a change made through
                // Skald to a provider left everyone a notice of its own already.
                let told = change.key.starts_with("agent.") || (change.key.starts_with("provider.") && by.is_some());
                if !own && !told {
                    applied.push(notice_body(&change, by.as_ref(), trail.as_ref().err()));
                }
            } else if record.declined.get(&change.key) == Some(&change.fingerprint()) {
                withheld.push(change);
            } else {
                held.push(notice_body(&change, by.as_ref(), trail.as_ref().err()));
                withheld.push(change);
            }
        }
        if held.is_empty() {
            // Everything up to here is settled: the next look starts from the head.
            let (id, hash) = audit::head(self.system()).await?;
            record.audit = AuditHead { id, hash };
        }
        if record != before {
            accepted::put(&session.space, &record).await?;
        }
        for body in &applied {
            notices::tell(self.system(), user, "change_applied", body).await?;
        }
        let (holds, added) = notices::hold(self.system(), user, &held).await?;
        if !applied.is_empty() || added {
            self.inner.events.to_person(user, json!({ "type": "notice" }));
        }
        Ok(Standing { withheld: Withheld::from_changes(&record.terms, &withheld), holds })
    }

    /// The models a person may use now: their role's, less what they have not accepted.
    pub async fn models_of(&self, session: &Session) -> Result<Vec<CatalogueModel>, TurnError> {
        let (role, standing) = self.narrowed_role(session).await?;
        Ok(standing.withheld.models(&self.models_for(&role).await?).into_owned())
    }

    /// Checks a model a person wants to pin a conversation to, against what they accepted too.
    pub async fn check_pin_of(&self, session: &Session, name: &str) -> Result<(), TurnError> {
        let (role, standing) = self.narrowed_role(session).await?;
        let all = self.provider_cache().await?.models.clone();
        let mine = standing.withheld.models(&all);
        let named = |models: &[CatalogueModel]| models.iter().any(|m| m.name.eq_ignore_ascii_case(name));
        if named(&all) && !named(&mine) {
            return Err(TurnError::Declined(name.to_owned()));
        }
        super::check_pin(&mine, &role, name)
    }

    /// The person's role narrowed by what they have not accepted, with their standing.
    async fn narrowed_role(&self, session: &Session) -> Result<(Role, Standing), TurnError> {
        let mut role = self.role_of(&session.user_id).await?;
        let standing = self.standing(session, &role, None).await?;
        standing.withheld.narrow_role(&mut role);
        Ok((role, standing))
    }

    /// Records a person's decision on a held change; returns how many holds remain.
    /// Refused when the change is no longer the one the notice describes.
    pub async fn decide_hold(&self, session: &Session, notice: i64, decision: Decision) -> Result<usize, TurnError> {
        let user = &session.user_id;
        let body = notices::held(self.system(), user, notice).await?.ok_or(TurnError::NoNotice)?;
        let (key, fingerprint) = (body["key"].as_str().unwrap_or_default(), body["fingerprint"].as_str());
        let role = self.role_of(user).await?;
        let agent = match key.strip_prefix("agent.") {
            Some(id) => Some(self.inner.agents.load(id)?),
            None => None,
        };
        let now = self.terms_now(&role, agent.as_slice()).await?;
        let mut record = accepted::get(&session.space).await?.unwrap_or_else(Record::nothing_accepted);
        let change = consent::differences(&record.terms, &now)
            .into_iter()
            .find(|c| c.key == key && Some(c.fingerprint().as_str()) == fingerprint);
        let Some(change) = change else {
            notices::close_hold(self.system(), user, notice).await?;
            return Err(TurnError::StaleNotice);
        };
        match decision {
            Decision::Accept => consent::accept(&mut record, &now, key),
            Decision::Decline => {
                record.declined.insert(change.key.clone(), change.fingerprint());
            }
        }
        accepted::put(&session.space, &record).await?;
        match decision {
            Decision::Accept => notices::close_hold(self.system(), user, notice).await?,
            Decision::Decline => notices::mark_declined(self.system(), user, notice).await?,
        }
        Ok(self.standing(session, &role, agent.as_ref()).await?.holds.len())
    }
}

/// What a notice about a change says: the change, who made it if the audit says so and
/// is whole, and otherwise that it was made outside Skald.
fn notice_body(change: &Change, by: Option<&(String, String)>, broken: Option<&audit::Break>) -> Value {
    json!({
        "key": change.key,
        "fingerprint": change.fingerprint(),
        "what": change.what,
        "widens": change.widens,
        "before": change.before,
        "after": change.after,
        "changed_by": by.map(|(id, name)| json!({ "id": id, "name": name })),
        "outside_skald": by.is_none(),
        "audit_broken": broken.map(ToString::to_string),
    })
}

/// The person who made a change, from the newest audit entry that describes exactly it.
fn made_by(links: &[Link], change: &Change, user: &UserId, now: &Terms) -> Option<(String, String)> {
    let detail = |link: &Link| serde_json::from_str::<Value>(&link.detail).unwrap_or(Value::Null);
    let key = change.key.as_str();
    // A change to the person's role: of one attribute, or of what decides their providers.
    let role_change = |link: &Link, detail: &Value, attribute: Option<&str>| -> bool {
        let by_role = link.action == "role.updated"
            && detail["role"] == now.role.id.as_str()
            && match attribute {
                Some(attribute) => detail["changed"][attribute]["to"] == change.after,
                None => ["allowed_models", "privacy_tier"].iter().any(|a| !detail["changed"][a].is_null()),
            };
        let moved = link.action == "person.role_changed" && link.subject_id.as_deref() == Some(user.as_str());
        by_role || moved
    };
    let describes = |link: &Link| -> bool {
        let detail = detail(link);
        if let Some(id) = key.strip_prefix("provider.") {
            let after = &change.after;
            let fits = |field: &str| detail[field].is_null() || detail[field] == after[field];
            return matches!(link.action.as_str(), "provider.added" | "provider.changed")
                && detail["provider"] == id
                && (after.is_null() || (fits("base_url") && fits("trusted_lan")));
        }
        if let Some(attribute) = key.strip_prefix("role.") {
            return role_change(link, &detail, Some(attribute));
        }

        if key.starts_with("rule.") {
            let rule = if change.after.is_null() { &change.before } else { &change.after };
            return link.action.starts_with("approval_rule.")
                && (link.action == "approval_rule.deleted"
                    || (detail["tool"] == rule["tool"]
                        && detail["effect"] == rule["effect"]
                        && detail["args"] == rule["args"]));
        }
        if let Some(id) = key.strip_prefix("agent.") {
            return link.action == "agent.saved" && detail["agent"] == id && detail["hash"] == change.after["version"];
        }
        false
    };
    // A provider that came within reach because the person's role changed was brought
    // there by whoever changed the role.
    let newly_in_reach =
        |link: &Link| key.starts_with("provider.") && change.before.is_null() && role_change(link, &detail(link), None);
    let actor = |link: &Link| Some((link.actor_id.clone()?, link.actor_name.clone()));
    match links.iter().rev().find(|link| describes(link)) {
        Some(link) => actor(link),
        None => links.iter().rev().find(|link| newly_in_reach(link)).and_then(actor),
    }
}
