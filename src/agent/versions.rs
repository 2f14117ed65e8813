//! Agent versions (§3, §8.7): each agent's version is recorded when this process first
//! sees it, and a change made outside Skald, or by an administrator, becomes a notice to
//! everyone else. Never decides what a change means for a person; `standing` does.

use super::definition::Agent;
use super::events::LiveEvent;
use super::{Runtime, TurnError};
use crate::ids::UserId;
use crate::store::agents::{self as agent_versions, Source as AgentSource};

impl Runtime {
    /// Records an agent's version when it is new to this process: for the privacy page,
    /// and as a notice to everyone when someone changed it (§3, §8.7). In the background:
    /// a turn does not wait for it.
    pub fn observe(&self, agent: &Agent) {
        if !self.first_sight(agent) {
            return;
        }
        let (runtime, agent) = (self.clone(), agent.clone());
        tokio::spawn(async move { runtime.record_version(&agent).await });
    }

    /// Records the version of every agent as its files are now: at start, so changes made
    /// while Skald was closed are on record (and noticed) before anyone talks to them, and
    /// before the list of agents is shown.
    pub async fn observe_all(&self) {
        for agent in self.inner.agents.list().into_iter().flatten() {
            if self.first_sight(&agent) {
                self.record_version(&agent).await;
            }
        }
    }

    /// Tells every active person's windows but one's that they have a new notice, so an
    /// open inbox shows it without waiting (the notice itself is in the shared database).
    pub async fn announce_notices(&self, except: Option<&UserId>) {
        match crate::store::users::list(self.system()).await {
            Ok(people) => {
                for person in people.iter().filter(|p| p.status == "active" && Some(&p.id) != except) {
                    self.inner.events.to_person(&person.id, &LiveEvent::Notice);
                }
            }
            Err(err) => tracing::warn!(%err, "could not announce new notices"),
        }
    }

    /// Whether this version of the agent is new to this process; marks it seen.
    fn first_sight(&self, agent: &Agent) -> bool {
        let mut seen = self.inner.agent_versions.lock().expect("agent versions");
        seen.insert(agent.id.clone(), agent.version.clone()).as_ref() != Some(&agent.version)
    }

    /// Records a version seen in the files: shipped, or edited outside Skald. A failure is
    /// logged and the version forgotten, so the next sight tries again.
    async fn record_version(&self, agent: &Agent) {
        let source = if self.inner.agents.is_bundled(agent) { AgentSource::Bundled } else { AgentSource::Disk };
        match agent_versions::record(self.system(), &agent.id, &agent.version, source, None).await {
            Ok(true) if source == AgentSource::Disk => self.announce_notices(None).await,
            Ok(_) => {}
            Err(err) => {
                tracing::warn!(agent = %agent.id, %err, "could not record an agent's version");
                self.inner.agent_versions.lock().expect("agent versions").remove(&agent.id);
            }
        }
    }

    /// Saves an agent's files for a person (an administrator) and records the version as
    /// theirs; everyone else finds a notice at their next login. The version is marked
    /// seen before the files change, so no turn in between records it as an edit on disk.
    pub async fn save_agent(
        &self,
        by: &crate::store::audit::Actor,
        id: &str,
        meta: &str,
        prompt: &str,
    ) -> Result<Agent, TurnError> {
        let planned = self.inner.agents.parse(id, meta, prompt)?;
        self.first_sight(&planned);
        let agent = self.inner.agents.save(id, meta, prompt)?;
        agent_versions::record(self.system(), &agent.id, &agent.version, AgentSource::App, Some(by)).await?;
        self.announce_notices(Some(&by.id)).await;
        Ok(agent)
    }
}
