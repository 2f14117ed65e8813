//! Before each turn, each further round of one and each sub-agent frame: a person's record
//! of what they accepted against the shared database as it is now (§3, [`consent`]).
//! Widening changes they have not decided on hold the turn behind notices; narrowing ones
//! are written into the record at once; declined ones stay out of force for them. A
//! person's own changes are written into their record by the request that made them
//! ([`Runtime::accept_own`]) — never inferred from the shared database, whose audit anyone
//! who owns the files could forge; the audit only says who to name in a notice.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::consent::{self, AgentTerms, AuditHead, Change, ProviderTerms, Record, RoleTerms, Terms, Withheld};
use super::definition::Agent;
use super::{ProviderCache, Runtime, TurnError, usable};
use crate::ids::UserId;
use crate::mcp::Catalogue;
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
    /// The part of it they declined (not what merely waits for them): what they are not
    /// offered, as in the model picker.
    pub declined: Withheld,
    /// The notices of changes waiting for their decision; none lets the turn go on.
    pub holds: Vec<i64>,
    /// The MCP servers and tools the record was compared with: what a turn offers comes
    /// from the same read. None without MCP.
    pub catalogue: Option<Catalogue>,
}

/// A person's answer to a held change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Accept,
    Decline,
}

/// One lock per person: the record is read, compared and written back as one step, so two
/// windows, a turn's rounds and its frames never lose each other's writes.
#[derive(Default)]
pub(super) struct RecordLocks(std::sync::Mutex<HashMap<UserId, Arc<tokio::sync::Mutex<()>>>>);

impl RecordLocks {
    async fn lock(&self, user: &UserId) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = self.0.lock().expect("record locks").entry(user.clone()).or_default().clone();
        lock.lock_owned().await
    }
}

impl Runtime {
    /// The terms the shared database puts a person under now, with the providers of the
    /// snapshot the caller uses. Agents are compared once used: `agents` are the ones
    /// about to run or already in the person's record. The MCP servers and tools read for
    /// them come back too, so what a turn offers is what was compared.
    async fn terms_now(
        &self,
        role: &Role,
        agents: &[Agent],
        providers: &ProviderCache,
    ) -> Result<(Terms, Option<Catalogue>), TurnError> {
        let catalogue = async {
            match self.inner.tools.mcp() {
                Some(hub) => hub.catalogue().await.map(Some),
                None => Ok(None),
            }
        };
        let (rules, catalogue) = tokio::try_join!(approval_rules::list(self.system()), catalogue)?;
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
                kind: model.kind,
                base_url: model.base_url.clone(),
                trusted_lan: model.trusted_lan,
                key: providers.key_digest(&model.provider_id),
                transcription: None,
                speech: None,
            });
        }
        // What a provider does with the person's speech is part of its terms (§15).
        for row in &providers.voice {
            let (transcription, speech) = super::speech::offered(role, row);
            if transcription.is_none() && speech.is_none() {
                continue;
            }
            let terms = terms.providers.entry(row.id.clone()).or_insert_with(|| ProviderTerms {
                name: row.name.clone(),
                kind: row.kind,
                base_url: row.base_url.clone(),
                trusted_lan: row.trusted_lan,
                key: providers.key_digest(&row.id),
                transcription: None,
                speech: None,
            });
            terms.transcription = transcription;
            terms.speech = speech;
        }
        if let Some(catalogue) = &catalogue {
            terms.mcp = catalogue.terms(role);
        }
        for agent in agents {
            let bundled = self.inner.agents.is_bundled(agent);
            terms.agents.insert(agent.id.clone(), AgentTerms { version: agent.version.clone(), bundled });
        }
        Ok((terms, catalogue))
    }

    /// Writes a person's first record: what setup or enrolment shows them, as their file
    /// is made. A file found later without one accepted nothing (see [`Record`]).
    pub async fn begin_record(&self, session: &Session) -> Result<(), TurnError> {
        let _locked = self.inner.records.lock(&session.user_id).await;
        if accepted::get(&session.space).await?.is_some() {
            return Ok(());
        }
        let (id, hash) = audit::head(self.system()).await?;
        let role = self.role_of(&session.user_id).await?;
        let agents: Vec<Agent> = self.inner.agents.list().into_iter().flatten().collect();
        let (terms, _) = self.terms_now(&role, &agents, &*self.provider_cache().await?).await?;
        let record = Record { terms, audit: AuditHead { id, hash }, declined: Default::default() };
        accepted::put(&session.space, &record).await?;
        Ok(())
    }

    /// Writes into the person's record the changes they just made themselves through Skald
    /// — the changes `touched` picks — so their own change never holds their own turn.
    /// Called by the request that made the change, after it committed. A failure is
    /// logged: the person is then asked about their own change, the safe side.
    pub async fn accept_own(&self, session: &Session, touched: impl Fn(&Change) -> bool) {
        if let Err(err) = self.try_accept_own(session, touched).await {
            tracing::warn!(user = %session.user_id, %err, "could not record a person's own change as accepted");
        }
    }

    async fn try_accept_own(&self, session: &Session, touched: impl Fn(&Change) -> bool) -> Result<(), TurnError> {
        let _locked = self.inner.records.lock(&session.user_id).await;
        let Some(mut record) = accepted::get(&session.space).await? else { return Ok(()) };
        let role = self.role_of(&session.user_id).await?;
        let agents: Vec<Agent> = self.inner.agents.list().into_iter().flatten().collect();
        let (now, _) = self.terms_now(&role, &agents, &*self.provider_cache().await?).await?;
        let before = record.clone();
        for change in consent::differences(&record.terms, &now).iter().filter(|c| touched(c)) {
            consent::accept(&mut record, &now, &change.key);
        }
        if record != before {
            accepted::put(&session.space, &record).await?;
        }
        Ok(())
    }

    /// Compares the person's record with the shared database; see the module's comment.
    /// `agent` is the one about to run; without one, the agents the person has used.
    pub async fn standing(&self, session: &Session, role: &Role, agent: Option<&Agent>) -> Result<Standing, TurnError> {
        self.standing_with(session, role, agent, &*self.provider_cache().await?).await
    }

    /// [`Runtime::standing`] against the providers of the caller's snapshot, so what is
    /// compared is what the turn will use.
    pub(super) async fn standing_with(
        &self,
        session: &Session,
        role: &Role,
        agent: Option<&Agent>,
        providers: &ProviderCache,
    ) -> Result<Standing, TurnError> {
        let user = &session.user_id;
        let _locked = self.inner.records.lock(user).await;
        // The head first: an entry written while the terms are read is looked at next time.
        let ((head_id, head_hash), record) =
            tokio::try_join!(async { audit::head(self.system()).await.map_err(TurnError::from) }, async {
                accepted::get(&session.space).await.map_err(TurnError::from)
            })?;
        let mut record = record.unwrap_or_else(Record::nothing_accepted);
        let agents = match agent {
            Some(agent) => vec![agent.clone()],
            None => record.terms.agents.keys().filter_map(|id| self.inner.agents.load(id).ok()).collect(),
        };
        // The terms and the open holds together, after the head.
        let open = async { notices::open_holds(self.system(), user).await.map_err(TurnError::from) };
        let ((now, catalogue), open) = tokio::try_join!(self.terms_now(role, &agents, providers), open)?;
        // Holds about items this look did not compare (agents not loaded) are left alone.
        let compared = |key: &str| key.strip_prefix("agent.").is_none_or(|id| now.agents.contains_key(id));
        let changes = consent::differences(&record.terms, &now);
        let declined: Vec<bool> = changes
            .iter()
            .map(|change| change.widens && record.declined.get(&change.key) == Some(&change.fingerprint()))
            .collect();
        if declined.iter().all(|d| *d) {
            notices::hold(self.system(), user, open, &[], compared).await?;
            let withheld = Withheld::from_changes(&record.terms, &changes);
            return Ok(Standing { declined: withheld.clone(), withheld, holds: Vec::new(), catalogue });
        }
        // Who made each change, for the notice: the audit entries since the record's last
        // look, when the chain from there is whole; otherwise it was made outside Skald.
        let trail = audit::since(self.system(), (record.audit.id, &record.audit.hash)).await?;
        let before = record.clone();
        let (mut held, mut withheld, mut applied, mut refused) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (change, declined) in changes.into_iter().zip(declined) {
            if declined {
                refused.push(change.clone());
                withheld.push(change);
                continue;
            }
            let mut by = trail.as_ref().ok().and_then(|links| made_by(links, &change, user, &now));
            if by.is_none()
                && change.widens
                && let Some(id) = change.key.strip_prefix("agent.")
            {
                let version = change.after["version"].as_str().unwrap_or_default();
                by = self.agent_saved_by(id, version).await?;
            }
            if change.widens {
                held.push(notice_body(&change, by.as_ref(), trail.as_ref().err()));
                withheld.push(change);
                continue;
            }
            consent::accept(&mut record, &now, &change.key);
            // Skald's own agents as shipped need no word, and a change made through Skald
            // to a provider left everyone a notice of its own already.
            let told = change.key.starts_with("agent.") || (change.key.starts_with("provider.") && by.is_some());
            if !told {
                applied.push(notice_body(&change, by.as_ref(), trail.as_ref().err()));
            }
        }
        if held.is_empty() {
            // Everything up to here is settled: the next look starts from the head.
            record.audit = AuditHead { id: head_id, hash: head_hash };
        }
        if record != before {
            accepted::put(&session.space, &record).await?;
        }
        for body in &applied {
            notices::tell(self.system(), user, "change_applied", body).await?;
        }
        let (holds, added) = notices::hold(self.system(), user, open, &held, compared).await?;
        if !applied.is_empty() || added {
            self.inner.events.to_person(user, &super::events::LiveEvent::Notice);
        }
        Ok(Standing {
            withheld: Withheld::from_changes(&record.terms, &withheld),
            declined: Withheld::from_changes(&record.terms, &refused),
            holds,
            catalogue,
        })
    }

    /// Who saved this version of an agent through Skald, if the whole audit chain is
    /// intact: an agent is compared only once a person uses it, maybe long after it was
    /// saved. The chain is checked once per audit head.
    async fn agent_saved_by(&self, agent: &str, version: &str) -> Result<Option<(String, String)>, TurnError> {
        let head = audit::head(self.system()).await?;
        let known = self
            .inner
            .chain_checked
            .lock()
            .expect("chain check")
            .as_ref()
            .filter(|(h, _)| *h == head)
            .map(|(_, ok)| *ok);
        let whole = match known {
            Some(whole) => whole,
            None => {
                let whole =
                    audit::check_chain(self.system().pool()).await.map_err(crate::store::StoreError::from)?.is_ok();
                *self.inner.chain_checked.lock().expect("chain check") = Some((head, whole));
                whole
            }
        };
        if !whole {
            return Ok(None);
        }
        Ok(audit::agent_saved_by(self.system(), agent, version).await?)
    }

    /// The models a person may use now: their role's, less what they have not accepted.
    pub async fn models_of(&self, session: &Session) -> Result<Vec<CatalogueModel>, TurnError> {
        let (role, standing) = self.narrowed_role(session).await?;
        Ok(standing.declined.models(&self.models_for(&role).await?).into_owned())
    }

    /// Checks a model a person wants to pin a conversation to, against what they accepted too.
    pub async fn check_pin_of(&self, session: &Session, name: &str) -> Result<(), TurnError> {
        let (role, standing) = self.narrowed_role(session).await?;
        let all = self.provider_cache().await?.models.clone();
        let mine = standing.declined.models(&all);
        super::choice::declined_pin(&all, &mine, name)?;
        super::choice::check_pin(&mine, &role, name)
    }

    /// The person's role narrowed by what they declined, with their standing. What merely
    /// waits for their decision is offered: a turn with it is held until they decide.
    pub(super) async fn narrowed_role(&self, session: &Session) -> Result<(Role, Standing), TurnError> {
        let mut role = self.role_of(&session.user_id).await?;
        let standing = self.standing(session, &role, None).await?;
        standing.declined.narrow_role(&mut role);
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
        let providers = self.provider_cache().await?;
        {
            let _locked = self.inner.records.lock(user).await;
            let (now, _) = self.terms_now(&role, agent.as_slice(), &providers).await?;
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
        }
        Ok(self.standing_with(session, &role, agent.as_ref(), &providers).await?.holds.len())
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

/// Who to name for a change: the newest audit entry that describes exactly it. Only a
/// notice's words depend on this, never whether the change holds.
fn made_by(links: &[Link], change: &Change, user: &UserId, now: &Terms) -> Option<(String, String)> {
    let detail = |link: &Link| serde_json::from_str::<Value>(&link.detail).unwrap_or(Value::Null);
    let key = change.key.as_str();
    let (was, after) = (&change.before, &change.after);
    // A change to the person's role: of one attribute, or of what decides their providers.
    let role_change = |link: &Link, detail: &Value, attribute: Option<&str>| -> bool {
        let by_role = link.action == "role.updated"
            && detail["role"] == now.role.id.as_str()
            && match attribute {
                Some(attribute) => detail["changed"][attribute]["to"] == *after,
                None => ["allowed_models", "privacy_tier"].iter().any(|a| !detail["changed"][a].is_null()),
            };
        let moved = link.action == "person.role_changed" && link.subject_id.as_deref() == Some(user.as_str());
        by_role || moved
    };
    let describes = |link: &Link| -> bool {
        let detail = detail(link);
        if let Some(id) = key.strip_prefix("provider.") {
            if detail["provider"] != id {
                return false;
            }
            return match link.action.as_str() {
                // Added: the entry states the provider as it is.
                "provider.added" => ["name", "kind", "base_url", "trusted_lan"].iter().all(|f| detail[f] == after[f]),
                // Changed: every field that differs is one the entry says it set, to that.
                "provider.changed" => {
                    !after.is_null()
                        && was["kind"] == after["kind"]
                        && ["name", "base_url", "trusted_lan"]
                            .iter()
                            .all(|f| was[f] == after[f] || detail[f] == after[f])
                        && (was["key"] == after["key"] || detail["key_changed"] == true)
                }
                "provider.deleted" => after.is_null(),
                _ => false,
            };
        }
        if let Some(attribute) = key.strip_prefix("role.") {
            return role_change(link, &detail, Some(attribute));
        }
        if key.starts_with("rule.") {
            if after.is_null() {
                return link.action == "approval_rule.deleted" || link.action == "approval_rule.changed";
            }
            return matches!(link.action.as_str(), "approval_rule.added" | "approval_rule.changed")
                && ["tool", "args", "role", "effect", "priority"].iter().all(|f| detail[f] == after[f]);
        }
        if let Some(id) = key.strip_prefix("agent.") {
            return link.action == "agent.saved" && detail["agent"] == id && detail["hash"] == after["version"];
        }
        false
    };
    // A provider that came within reach because the person's role changed was brought
    // there by whoever changed the role.
    let newly_in_reach =
        |link: &Link| key.starts_with("provider.") && was.is_null() && role_change(link, &detail(link), None);
    let actor = |link: &Link| Some((link.actor_id.clone()?, link.actor_name.clone()));
    match links.iter().rev().find(|link| describes(link)) {
        Some(link) => actor(link),
        None => links.iter().rev().find(|link| newly_in_reach(link)).and_then(actor),
    }
}
