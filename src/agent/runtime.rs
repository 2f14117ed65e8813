//! The agent's runtime: one shared handle to what turns need — the stores, the keys, the
//! tools, the event bus — with the conversations' claims on running a turn and the caches
//! that spare a turn's start reads of the shared database. Never runs a turn itself; see
//! [`super::lifecycle`] and [`super::turn`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use zeroize::Zeroizing;

use super::definition::AgentDir;
use super::events::Events;
use super::tools::Registry;
use super::{TurnError, standing};
use crate::ids::{TurnId, UserId};
use crate::providers::Endpoint;
use crate::providers::catalogue::CatalogueModel;
use crate::providers::local::LocalModels;
use crate::providers::retry::RetryPolicy;
use crate::secrets::InstanceSecrets;
use crate::store::providers::ProviderKind;
use crate::store::roles::{self, Role};
use crate::store::{StoreError, SystemStore, providers};
use crate::users::sessions::Session;

/// Settings a test may shorten; real runs use the defaults.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub retry: RetryPolicy,
    /// The longest silence tolerated inside a streamed reply.
    pub stall: Duration,
    /// Whether conversations may be named by their model after the first reply (each
    /// person can still turn it off); `SKALD_AUTO_TITLES=off` turns it off for everyone,
    /// for a machine whose model is too slow to spare the request, and for scripted tests
    /// that count requests.
    pub auto_titles: bool,
}

impl Limits {
    /// Defaults, with `SKALD_AUTO_TITLES`, and `SKALD_TEST_PROVIDER_STALL_MS` in debug
    /// builds only.
    pub fn from_env() -> Self {
        let auto_titles = std::env::var("SKALD_AUTO_TITLES").map_or(true, |v| v != "off");
        let mut limits = Self { retry: RetryPolicy::default(), stall: Duration::from_secs(120), auto_titles };
        if cfg!(debug_assertions)
            && let Some(ms) = std::env::var("SKALD_TEST_PROVIDER_STALL_MS").ok().and_then(|v| v.parse().ok())
        {
            limits.stall = Duration::from_millis(ms);
        }
        limits
    }
}

/// Starts and stops turns; cheap to clone.
#[derive(Clone)]
pub struct Runtime {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) system: SystemStore,
    pub(super) secrets: InstanceSecrets,
    pub(super) agents: AgentDir,
    pub(super) tools: Registry,
    pub(super) notifier: crate::notify::Notifier,
    pub(super) client: reqwest::Client,
    pub(super) local: LocalModels,
    pub(super) events: Events,
    pub(super) limits: Limits,
    /// Running turns by conversation id: one at a time per conversation.
    pub(super) running: Mutex<HashMap<(UserId, String), Running>>,
    /// Providers and models as last read, with the sealed keys; emptied by every change
    /// through [`Runtime::providers_changed`], so a turn reads the shared database only
    /// after an administrator changed something.
    pub(super) providers: tokio::sync::Mutex<Option<Arc<ProviderCache>>>,
    /// Counts provider changes; a cache filled before the latest change is refilled.
    pub(super) providers_generation: std::sync::atomic::AtomicU64,
    /// The agent versions last recorded, by agent id: a turn records its agent's version
    /// only when it changed.
    pub(super) agent_versions: Mutex<HashMap<String, String>>,
    /// Each person's role as last read, with the people generation read before it.
    pub(super) roles: Mutex<HashMap<UserId, (u64, Role)>>,
    /// One lock per person's record of what they accepted (`standing`).
    pub(super) records: standing::RecordLocks,
    /// Whether the whole audit chain was intact at this head, once checked.
    pub(super) chain_checked: Mutex<Option<((i64, String), bool)>>,
    /// How many events each parked turn had sent, by turn id: its `turn_ended`, when it is
    /// withdrawn, is numbered after them so the page sees no gap.
    pub(super) parked_events: Mutex<HashMap<String, u64>>,
    /// Tool servers' forms waiting on people, in memory only.
    pub(super) forms: super::forms::Forms,
    /// The jobs service, once `app` plugged it in: what the scheduling tools reach.
    pub(super) scheduling: super::scheduling::SchedulingPort,
}

pub(super) struct ProviderCache {
    pub(super) generation: u64,
    pub(super) models: Vec<CatalogueModel>,
    pub(super) sealed_keys: HashMap<String, Vec<u8>>,
    /// Providers that write speech down or read aloud (§15), with or without chat models.
    pub(super) voice: Vec<providers::VoiceRow>,
    /// The built-in provider, for endpoints of kind `local`.
    pub(super) local: LocalModels,
}

impl ProviderCache {
    /// A model's provider address and key, opened for this request only, for `person`.
    pub(super) fn endpoint(
        &self,
        secrets: &InstanceSecrets,
        model: &CatalogueModel,
        person: &UserId,
    ) -> Result<Endpoint, TurnError> {
        Ok(Endpoint {
            provider: model.provider.clone(),
            privacy: model.privacy,
            kind: model.kind,
            base_url: model.base_url.clone(),
            api_key: self.key(secrets, &model.provider_id)?,
            local: (model.kind == ProviderKind::Local).then(|| (self.local.clone(), person.clone())),
        })
    }

    /// A digest of a provider's sealed key, so a person's record sees the key change
    /// without holding it: a new key can mean a new account, whose owner reads the logs.
    pub(super) fn key_digest(&self, provider_id: &str) -> Option<String> {
        use sha2::{Digest, Sha256};
        self.sealed_keys.get(provider_id).map(|sealed| hex::encode(&Sha256::digest(sealed)[..8]))
    }

    pub(super) fn key(
        &self,
        secrets: &InstanceSecrets,
        provider_id: &str,
    ) -> Result<Option<Zeroizing<String>>, TurnError> {
        let Some(sealed) = self.sealed_keys.get(provider_id) else { return Ok(None) };
        let plain = secrets.open(sealed, &key_purpose(provider_id))?;
        Ok(Some(Zeroizing::new(String::from_utf8_lossy(&plain).into_owned())))
    }
}

pub(super) struct Running {
    pub(super) turn_id: String,
    pub(super) stop: CancellationToken,
    pub(super) finished: CancellationToken,
    /// Set once the turn has its answer and is only writing its end.
    pub(super) closing: Arc<AtomicBool>,
}

/// A conversation's claim on running a turn. Dropped — when the turn task ends, panics
/// included, or when starting fails — it frees the conversation and wakes a waiting stop.
pub(super) struct Claim {
    pub(super) runtime: Runtime,
    pub(super) user: UserId,
    pub(super) chat_id: String,
    pub(super) turn_id: String,
    pub(super) finished: CancellationToken,
    pub(super) closing: Arc<AtomicBool>,
    /// The session the turn ran in, marked active again when it ends.
    pub(super) owner: Option<Arc<Session>>,
}

impl Claim {
    pub(super) fn handed_to_task(mut self, owner: Arc<Session>) -> Self {
        self.owner = Some(owner);
        self
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.runtime.forget(&self.user, &self.chat_id, &self.turn_id);
        if let Some(owner) = &self.owner {
            owner.touch_now();
        }
        self.finished.cancel();
    }
}

/// A turn that has started: the person's message is committed.
#[derive(Debug)]
pub struct Started {
    pub turn_id: TurnId,
    pub message_id: i64,
}

impl Runtime {
    pub fn new(
        system: SystemStore,
        secrets: InstanceSecrets,
        agents: AgentDir,
        tools: Registry,
        limits: Limits,
        notifier: crate::notify::Notifier,
        local: LocalModels,
    ) -> Self {
        let inner = Inner {
            system,
            secrets,
            agents,
            tools,
            notifier,
            client: crate::providers::http_client(),
            local,
            events: Events::default(),
            limits,
            running: Mutex::new(HashMap::new()),
            providers: tokio::sync::Mutex::new(None),
            providers_generation: std::sync::atomic::AtomicU64::new(0),
            agent_versions: Mutex::default(),
            roles: Mutex::default(),
            records: standing::RecordLocks::default(),
            chain_checked: Mutex::default(),
            parked_events: Mutex::default(),
            forms: super::forms::Forms::default(),
            scheduling: super::scheduling::SchedulingPort::default(),
        };
        Self { inner: Arc::new(inner) }
    }

    /// Where the jobs service plugs in (docs/architecture.md §11).
    pub fn scheduling(&self) -> &super::scheduling::SchedulingPort {
        &self.inner.scheduling
    }

    pub fn forms(&self) -> &super::forms::Forms {
        &self.inner.forms
    }

    pub fn events(&self) -> &Events {
        &self.inner.events
    }

    pub fn agents(&self) -> &AgentDir {
        &self.inner.agents
    }

    pub fn system(&self) -> &SystemStore {
        &self.inner.system
    }

    pub fn client(&self) -> &reqwest::Client {
        &self.inner.client
    }

    /// The built-in provider's models.
    /// The MCP servers' connections, where Skald has them.
    pub fn mcp(&self) -> Option<&crate::mcp::Hub> {
        self.inner.tools.mcp()
    }

    pub fn local_models(&self) -> &LocalModels {
        &self.inner.local
    }

    /// Recall by meaning, with the embedding model when one is here.
    pub fn meaning(&self) -> super::meaning::Meaning {
        super::meaning::Meaning::new(self.inner.system.clone(), self.inner.local.clone())
    }

    /// The person's role as it is now: a change by an administrator applies to the next
    /// turn. Kept from the last read until any person or role changes, so a turn's start
    /// does not wait on the shared database for it.
    pub async fn role_of(&self, user: &UserId) -> Result<Role, TurnError> {
        let generation = self.inner.system.people_generation();
        if let Some((seen, role)) = self.inner.roles.lock().expect("role cache").get(user)
            && *seen == generation
        {
            return Ok(role.clone());
        }
        let role = roles::of_active_user(&self.inner.system, user).await?.ok_or(TurnError::NoAccount)?;
        self.inner.roles.lock().expect("role cache").insert(user.clone(), (generation, role.clone()));
        Ok(role)
    }

    pub(super) async fn provider_cache(&self) -> Result<Arc<ProviderCache>, TurnError> {
        let mut slot = self.inner.providers.lock().await;
        let generation = self.inner.providers_generation.load(Ordering::Acquire);
        if let Some(cache) = slot.as_ref().filter(|c| c.generation == generation) {
            return Ok(cache.clone());
        }
        // One read transaction: the models, addresses and keys of one moment.
        let mut tx = self.inner.system.pool().begin().await.map_err(StoreError::from)?;
        let rows = providers::catalogue_in(&mut tx).await?;
        let keys = providers::sealed_keys_in(&mut tx).await?;
        let voice = providers::voice_in(&mut tx).await?;
        drop(tx);
        let cache = Arc::new(ProviderCache {
            generation,
            models: rows.into_iter().map(CatalogueModel::from).collect(),
            sealed_keys: keys.into_iter().filter_map(|(id, key)| Some((id, key?))).collect(),
            voice,
            local: self.inner.local.clone(),
        });
        *slot = Some(cache.clone());
        Ok(cache)
    }

    /// Marks the cached providers stale; every route that changes one calls this right
    /// after the change is committed. Synchronous, so nothing can come between.
    pub fn providers_changed(&self) {
        self.inner.providers_generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Notes how many events a turn had sent when it parked.
    pub(super) fn parked(&self, turn_id: &str, sent: u64) {
        self.inner.parked_events.lock().expect("parked turns").insert(turn_id.to_owned(), sent);
    }

    /// Takes how many events a parked turn had sent, if it parked in this process.
    pub(super) fn parked_events(&self, turn_id: &str) -> Option<u64> {
        self.inner.parked_events.lock().expect("parked turns").remove(turn_id)
    }

    /// The token that fires when the conversation's current turn task is done, if one runs.
    pub(super) fn finished_of(&self, user: &UserId, chat_id: &str) -> Option<CancellationToken> {
        let running = self.inner.running.lock().expect("running turns");
        running.get(&(user.clone(), chat_id.to_owned())).map(|r| r.finished.clone())
    }

    /// Marks a conversation as having a running turn. Refused when it already has one;
    /// then, if that turn is only writing its end, the token that fires when it is done.
    pub(super) fn claim(
        &self,
        user: &UserId,
        chat_id: &str,
        turn_id: &str,
        stop: &CancellationToken,
    ) -> Result<Claim, Option<CancellationToken>> {
        let mut running = self.inner.running.lock().expect("running turns");
        let key = (user.clone(), chat_id.to_owned());
        if let Some(current) = running.get(&key) {
            return Err(current.closing.load(Ordering::Acquire).then(|| current.finished.clone()));
        }
        let (finished, closing) = (CancellationToken::new(), Arc::new(AtomicBool::new(false)));
        let entry = Running {
            turn_id: turn_id.to_owned(),
            stop: stop.clone(),
            finished: finished.clone(),
            closing: closing.clone(),
        };
        running.insert(key, entry);
        Ok(Claim {
            runtime: self.clone(),
            user: user.clone(),
            chat_id: chat_id.to_owned(),
            turn_id: turn_id.to_owned(),
            finished,
            closing,
            owner: None,
        })
    }

    /// Cancels the turn task of a conversation and waits until it has recorded its end.
    pub(super) async fn cancel_running(&self, user: &UserId, chat_id: &str) -> bool {
        let found = {
            let running = self.inner.running.lock().expect("running turns");
            running.get(&(user.clone(), chat_id.to_owned())).map(|r| (r.stop.clone(), r.finished.clone()))
        };
        let Some((stop, finished)) = found else { return false };
        stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(10), finished.cancelled()).await;
        true
    }

    /// Whether a conversation has a turn running in this process.
    pub fn is_running(&self, user: &UserId, chat_id: &str) -> bool {
        self.inner.running.lock().expect("running turns").contains_key(&(user.clone(), chat_id.to_owned()))
    }

    fn forget(&self, user: &UserId, chat_id: &str, turn_id: &str) {
        let mut running = self.inner.running.lock().expect("running turns");
        let key = (user.clone(), chat_id.to_owned());
        if running.get(&key).is_some_and(|r| r.turn_id == turn_id) {
            running.remove(&key);
        }
    }

    /// A model's provider address and key, from the providers as they are now, for
    /// `person`.
    pub(super) async fn endpoint(&self, model: &CatalogueModel, person: &UserId) -> Result<Endpoint, TurnError> {
        self.provider_cache().await?.endpoint(&self.inner.secrets, model, person)
    }

    /// A provider's API key, opened for one use, if it has one.
    pub async fn provider_key(&self, provider_id: &str) -> Result<Option<Zeroizing<String>>, TurnError> {
        self.provider_cache().await?.key(&self.inner.secrets, provider_id)
    }
}

/// What a provider's sealed key is bound to, so a key blob cannot be moved to another row.
pub fn key_purpose(provider_id: &str) -> String {
    format!("provider:{provider_id}")
}
