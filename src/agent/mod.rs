//! The agent (§8): turns that stream a model's answer, run the tools it calls and record
//! everything in the person's encrypted file. [`Runtime`] starts, stops and tracks turns;
//! the loop itself is in [`turn`]; what a turn may use comes from the role (shared
//! database), the agent's definition ([`definition`]) and the [`tools`] registry.
//!
//! A turn runs as work of the session that started it: locking cancels it, and the
//! person's space stays open until the turn has recorded how it ended.

pub mod compaction;
pub mod consent;
pub mod definition;
pub mod events;
pub mod gate;
pub mod inbox;
pub mod standing;
pub mod tools;
mod turn;
pub mod usage;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use zeroize::Zeroizing;

use crate::ids::{UserId, random_id};
use crate::providers::catalogue::{self, CatalogueModel, Wish};
use crate::providers::local::LocalModels;
use crate::providers::retry::RetryPolicy;
use crate::providers::{ChatRequest, ContextMessage, Endpoint, ToolCall, ToolSpec};
use crate::secrets::{InstanceSecrets, SecretsError};
use crate::store::agents::{self as agent_versions, Source as AgentSource};
use crate::store::chat::{self, Message, MessageRole, TurnEnd, TurnState};
use crate::store::private::PrivateStore;
use crate::store::roles::{self, Role};
use crate::store::{StoreError, SystemStore, approvals, providers};
use crate::users::sessions::Session;
use definition::{Agent, AgentDir, DefinitionError};
use events::{Events, LiveEvent, TurnEvents};
use tools::Registry;

/// Why a turn could not start.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("there is no such conversation")]
    NoSession,
    #[error("a reply is still being written in this conversation; wait for it or stop it first")]
    Busy,
    #[error("the last reply in this conversation did not fail, so there is nothing to try again")]
    NothingToRetry,
    #[error("no model is available to you yet; an administrator can connect one in Settings → Models")]
    NoModel,
    #[error("your role does not allow the model {0}; pick another model for this conversation")]
    ModelNotAllowed(String),
    #[error("there is no model {0}")]
    UnknownModel(String),
    #[error(
        "your role keeps your words on this computer, and {model} is a remote service ({provider}); nothing was sent. Pick a local model"
    )]
    PrivacyTier { model: String, provider: String },
    #[error(
        "your role keeps your words on this computer, and no local model is connected; nothing was sent. An administrator can connect one in Settings → Models"
    )]
    NoLocalModel,
    #[error(transparent)]
    Agent(#[from] DefinitionError),
    #[error("the provider's key cannot be opened: {0}")]
    Secrets(#[from] SecretsError),
    #[error("this account no longer exists or is not active")]
    NoAccount,
    #[error("the session was locked")]
    Locked,
    #[error(
        "you have used {used} of the {cap} model tokens your role allows per day; the limit resets tomorrow, or an administrator can raise it"
    )]
    UsageCap { cap: i64, used: i64 },
    #[error(
        "something changed about where your words go or what may run without asking you, and it waits for your decision; nothing was sent. See the notice above the message box"
    )]
    Held(usize),
    #[error(
        "you declined the change to the agent {0}; accept it in your notices, or start a conversation with another agent"
    )]
    AgentDeclined(String),
    #[error(
        "you went on without the change that brought {0} to you; accept it in your notices to use it, or pick another model"
    )]
    Declined(String),
    #[error("there is no such notice waiting for your decision")]
    NoNotice,
    #[error("this change is no longer what the notice describes (it changed again); look at your notices again")]
    StaleNotice,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Settings a test may shorten; real runs use the defaults.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub retry: RetryPolicy,
    /// The longest silence tolerated inside a streamed reply.
    pub stall: Duration,
}

impl Limits {
    /// Defaults, with `SKALD_TEST_PROVIDER_STALL_MS` honoured in debug builds only.
    pub fn from_env() -> Self {
        let mut limits = Self { retry: RetryPolicy::default(), stall: Duration::from_secs(120) };
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
    inner: Arc<Inner>,
}

struct Inner {
    system: SystemStore,
    secrets: InstanceSecrets,
    agents: AgentDir,
    tools: Registry,
    notifier: crate::notify::Notifier,
    client: reqwest::Client,
    local: LocalModels,
    events: Events,
    limits: Limits,
    /// Running turns by conversation id: one at a time per conversation.
    running: Mutex<HashMap<(UserId, String), Running>>,
    /// Providers and models as last read, with the sealed keys; emptied by every change
    /// through [`Runtime::providers_changed`], so a turn reads the shared database only
    /// after an administrator changed something.
    providers: tokio::sync::Mutex<Option<Arc<ProviderCache>>>,
    /// Counts provider changes; a cache filled before the latest change is refilled.
    providers_generation: std::sync::atomic::AtomicU64,
    /// The agent versions last recorded, by agent id: a turn records its agent's version
    /// only when it changed.
    agent_versions: Mutex<HashMap<String, String>>,
    /// Each person's role as last read, with the people generation read before it.
    roles: Mutex<HashMap<UserId, (u64, Role)>>,
    /// One lock per person's record of what they accepted (`standing`).
    records: standing::RecordLocks,
    /// Whether the whole audit chain was intact at this head, once checked.
    chain_checked: Mutex<Option<((i64, String), bool)>>,
    /// How many events each parked turn had sent, by turn id: its `turn_ended`, when it is
    /// withdrawn, is numbered after them so the page sees no gap.
    parked_events: Mutex<HashMap<String, u64>>,
}

struct ProviderCache {
    generation: u64,
    models: Vec<CatalogueModel>,
    sealed_keys: HashMap<String, Vec<u8>>,
    /// The built-in provider, for endpoints of kind `local`.
    local: LocalModels,
}

impl ProviderCache {
    /// A model's provider address and key, opened for this request only, for `person`.
    fn endpoint(
        &self,
        secrets: &InstanceSecrets,
        model: &CatalogueModel,
        person: &UserId,
    ) -> Result<Endpoint, TurnError> {
        Ok(Endpoint {
            provider: model.provider.clone(),
            privacy: model.privacy,
            kind: model.kind.clone(),
            base_url: model.base_url.clone(),
            api_key: self.key(secrets, &model.provider_id)?,
            local: (model.kind == "local").then(|| (self.local.clone(), person.clone())),
        })
    }

    /// A digest of a provider's sealed key, so a person's record sees the key change
    /// without holding it: a new key can mean a new account, whose owner reads the logs.
    fn key_digest(&self, provider_id: &str) -> Option<String> {
        use sha2::{Digest, Sha256};
        self.sealed_keys.get(provider_id).map(|sealed| hex::encode(&Sha256::digest(sealed)[..8]))
    }

    fn key(&self, secrets: &InstanceSecrets, provider_id: &str) -> Result<Option<Zeroizing<String>>, TurnError> {
        let Some(sealed) = self.sealed_keys.get(provider_id) else { return Ok(None) };
        let plain = secrets.open(sealed, &key_purpose(provider_id))?;
        Ok(Some(Zeroizing::new(String::from_utf8_lossy(&plain).into_owned())))
    }
}

struct Running {
    turn_id: String,
    stop: CancellationToken,
    finished: CancellationToken,
    /// Set once the turn has its answer and is only writing its end.
    closing: Arc<AtomicBool>,
}

/// A conversation's claim on running a turn. Dropped — when the turn task ends, panics
/// included, or when starting fails — it frees the conversation and wakes a waiting stop.
struct Claim {
    runtime: Runtime,
    user: UserId,
    chat_id: String,
    turn_id: String,
    finished: CancellationToken,
    closing: Arc<AtomicBool>,
    /// The session the turn ran in, marked active again when it ends.
    owner: Option<Arc<Session>>,
}

impl Claim {
    fn handed_to_task(mut self, owner: Arc<Session>) -> Self {
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
    pub turn_id: String,
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
        };
        Self { inner: Arc::new(inner) }
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
    pub fn local_models(&self) -> &LocalModels {
        &self.inner.local
    }

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

    async fn provider_cache(&self) -> Result<Arc<ProviderCache>, TurnError> {
        let mut slot = self.inner.providers.lock().await;
        let generation = self.inner.providers_generation.load(Ordering::Acquire);
        if let Some(cache) = slot.as_ref().filter(|c| c.generation == generation) {
            return Ok(cache.clone());
        }
        // One read transaction: the models, addresses and keys of one moment.
        let mut tx = self.inner.system.pool().begin().await.map_err(StoreError::from)?;
        let rows = providers::catalogue_in(&mut tx).await?;
        let keys = providers::sealed_keys_in(&mut tx).await?;
        drop(tx);
        let cache = Arc::new(ProviderCache {
            generation,
            models: rows.into_iter().map(CatalogueModel::from).collect(),
            sealed_keys: keys.into_iter().filter_map(|(id, key)| Some((id, key?))).collect(),
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

    /// The models a role may use: allowed by name and by its privacy tier (§16).
    pub async fn models_for(&self, role: &Role) -> Result<Vec<CatalogueModel>, TurnError> {
        let cache = self.provider_cache().await?;
        Ok(cache.models.iter().filter(|m| usable(role, m)).cloned().collect())
    }

    /// The model a conversation's next turn would use, as things are now; none when no
    /// model is usable (the turn will say why).
    pub async fn next_model(&self, session: &Session, agent: &str, pinned: Option<&str>) -> Option<CatalogueModel> {
        // What the person declined is not what their next turn would use (§3).
        let (role, standing) = self.narrowed_role(session).await.ok()?;
        let agent = self.inner.agents.load(agent).ok()?;
        let providers = self.provider_cache().await.ok()?;
        let models = standing.declined.models(&providers.models);
        pick_model(&models, &role, &agent, pinned).ok().map(|(model, _)| model)
    }

    /// Starts a turn in `chat_id` with the person's message. Returns once the message is
    /// committed; the model request was sent concurrently, so durability costs the reply
    /// no time to its first token.
    pub async fn start_turn(&self, session: Arc<Session>, chat_id: &str, text: String) -> Result<Started, TurnError> {
        self.begin(session, chat_id, Some(text)).await
    }

    /// Tries a conversation's failed last turn again, from the person's last message: no
    /// new message, no copy of the old one. Only a turn that ended in `error` is retried.
    pub async fn retry_turn(&self, session: Arc<Session>, chat_id: &str) -> Result<Started, TurnError> {
        self.begin(session, chat_id, None).await
    }

    /// Starts a turn with the person's new message, or a retry of the failed one without.
    async fn begin(&self, session: Arc<Session>, chat_id: &str, text: Option<String>) -> Result<Started, TurnError> {
        // Claimed before the history is read, so the context includes the previous turn's end.
        let turn_id = random_id("turn");
        let stop = session.ended().child_token();
        let claim = match self.claim(&session.user_id, chat_id, &turn_id, &stop) {
            Ok(claim) => claim,
            // The turn before is only writing its end: the message waits for it, briefly.
            Err(Some(ending)) => {
                let _ = tokio::time::timeout(Duration::from_secs(5), ending.cancelled()).await;
                self.claim(&session.user_id, chat_id, &turn_id, &stop).map_err(|_| TurnError::Busy)?
            }
            Err(None) => return Err(TurnError::Busy),
        };
        let start = if text.is_some() { Start::Message } else { Start::Retry };
        let mut turn = self.set_up(&session, chat_id, turn_id.clone(), stop, start).await?;
        if let Some(text) = &text {
            turn.context.push(ContextMessage::User(text.clone()));
        }
        let (model, agent) = (turn.model.name.clone(), turn.agent.clone());
        turn.events.emit(|of| LiveEvent::TurnStarted { of, model, agent, resumed: false });
        let (committed_tx, committed_rx) = tokio::sync::oneshot::channel::<Option<i64>>();
        spawn_turn(&session, claim, turn, committed_rx)?;
        // Its own task, so a client that hangs up mid-commit cannot leave the turn unsure
        // whether its message was saved.
        let (space, chat, turn, words) = (session.space.clone(), chat_id.to_owned(), turn_id.clone(), text);
        let commit = tokio::spawn(async move {
            let result = match words {
                Some(words) => chat::begin_turn(&space, &chat, &turn, &words).await,
                None => chat::begin_retry(&space, &chat, &turn).await,
            };
            let _ = committed_tx.send(result.as_ref().ok().copied());
            result
        });
        let message_id = commit.await.map_err(|_| TurnError::Locked)??;
        Ok(Started { turn_id, message_id })
    }

    /// Reads what a turn starts from — the conversation, its history and summary, the
    /// role, the providers — and sets the turn up, its context ending with the history.
    /// The private file and the shared database are read at once: every lookup here stands
    /// between the person's message and the model's first token.
    async fn set_up(
        &self,
        session: &Arc<Session>,
        chat_id: &str,
        turn_id: String,
        stop: CancellationToken,
        start: Start,
    ) -> Result<turn::Turn, TurnError> {
        let space = &session.space;
        // Kept in memory between turns when nothing was written to it since (see
        // `store::snapshots`): then no read of the file at all.
        let private = async { chat::turn_start(space, chat_id).await?.ok_or(TurnError::NoSession) };
        let shared = async {
            let role = self.role_of(&session.user_id).await?;
            if let Some((cap, used)) = usage::over_cap(&self.inner.system, &role, &session.user_id).await? {
                return Err(TurnError::UsageCap { cap, used });
            }
            Ok((role, self.provider_cache().await?))
        };
        // One snapshot of the providers serves the whole start: the model, its fallback
        // and the key belong to the same moment.
        let (snapshot, (mut role, providers)) = tokio::try_join!(private, shared)?;
        let (conversation, summary) = (&snapshot.conversation, snapshot.summary.clone());
        // Rows in order of id: what the turn reads of them is a slice of the kept copy.
        let mut history: &[Message] = &snapshot.history;
        let reread;
        let agent = self.inner.agents.load(&conversation.agent)?;
        self.observe(&agent);
        // What the person accepted against what is in force now (§3): a widening change
        // they have not decided on holds the turn before anything is sent.
        let standing = self.standing_with(session, &role, Some(&agent), &providers).await?;
        if !standing.holds.is_empty() {
            return Err(TurnError::Held(standing.holds.len()));
        }
        if standing.withheld.agents.contains(&agent.id) {
            return Err(TurnError::AgentDeclined(agent.id.clone()));
        }
        standing.withheld.narrow_role(&mut role);
        let models = standing.withheld.models(&providers.models);
        if let Some(pinned) = conversation.model.as_deref() {
            declined_pin(&providers.models, &models, pinned)?;
        }
        let (model, fallback) = pick_model(&models, &role, &agent, conversation.model.as_deref())?;
        let endpoint = providers.endpoint(&self.inner.secrets, &model, &session.user_id)?;
        // A person who writes on while a turn waits on cards has moved on: that turn is
        // withdrawn, once nothing can refuse the new message any more. The caller holds
        // the conversation's claim.
        if start == Start::Retry {
            if conversation.turn_state != Some(TurnState::Error) {
                return Err(TurnError::NothingToRetry);
            }
            // The context ends with the person's last message, as it did for the failed try.
            let end = history
                .iter()
                .rposition(|m| m.role == MessageRole::User && m.frame_id.is_none())
                .map_or(0, |at| at + 1);
            history = &history[..end];
        }
        if start == Start::Message && conversation.turn_state == Some(TurnState::Parked) {
            self.withdraw_parked(session, chat_id, MOVED_ON).await?;
            reread = chat::history(space, chat_id).await?;
            history = &reread;
        }
        let unsettled = match start {
            Start::Resume => unsettled_calls(history, &turn_id, None),
            Start::Message | Start::Retry => None,
        };
        // A resumed turn counts the frames it opened before it parked against its cap.
        let frames_before = match start {
            Start::Resume => frame_count(history, &turn_id),
            Start::Message | Start::Retry => 0,
        };
        if let Some(summary) = &summary {
            history = &history[history.partition_point(|m| m.id <= summary.upto)..];
        }
        let mut offered = self.inner.tools.offered(&role.tools, &agent.meta.tools);
        offered.retain(|tool| role.may_use_subagents || tool.name != tools::CALL_AGENT);
        let prompt = prompt_for(space.prompt_prefix(), &agent.prompt);
        let context =
            compose(model.model_id.clone(), &prompt, summary.as_ref().map(|s| s.text.as_str()), history, Vec::new())
                .messages;
        let events =
            TurnEvents::new(self.inner.events.clone(), session.user_id.clone(), chat_id.to_owned(), turn_id.clone());
        Ok(turn::Turn {
            runtime: self.clone(),
            session: session.clone(),
            chat_id: chat_id.to_owned(),
            turn_id,
            model,
            fallback,
            endpoint,
            offered,
            context,
            max_rounds: usize::try_from(role.max_turns).unwrap_or(1).max(1),
            withheld: Arc::new(standing.withheld),
            prompt,
            summary,
            compaction_tried: false,
            last_row: history.last().map_or(0, |m| m.id),
            role,
            events,
            stop,
            pending: None,
            agent: agent.id.clone(),
            outside_content: Arc::new(AtomicBool::new(conversation.outside_content)),
            unsettled,
            frame: None,
            frames_opened: Arc::new(AtomicUsize::new(frames_before)),
            asks: Vec::new(),
            repeats: turn::Repeats::default(),
        })
    }

    /// Resumes a parked turn once no card holds it (§8.1): from the stored history, also
    /// after a restart. Returns false when there was nothing to resume (another window's
    /// decision resumed it first, or it was stopped or withdrawn meanwhile).
    pub async fn resume(&self, session: Arc<Session>, chat_id: &str, turn_id: &str) -> Result<bool, TurnError> {
        let stop = session.ended().child_token();
        let claim = match self.claim(&session.user_id, chat_id, turn_id, &stop) {
            Ok(claim) => claim,
            // The task that parked this turn may still be finishing up, or a stop may be
            // withdrawing it: either is over in moments.
            Err(_) => {
                if let Some(current) = self.finished_of(&session.user_id, chat_id) {
                    let _ = tokio::time::timeout(Duration::from_secs(5), current.cancelled()).await;
                }
                match self.claim(&session.user_id, chat_id, turn_id, &stop) {
                    Ok(claim) => claim,
                    Err(_) => return Err(TurnError::Busy),
                }
            }
        };
        if !approvals::unpark(&session.space, turn_id).await? {
            return Ok(false);
        }
        self.parked_events(turn_id);
        // From here the turn is `running` on disk: whatever fails ends it, with the reason.
        let started = async {
            let turn = self.set_up(&session, chat_id, turn_id.to_owned(), stop, Start::Resume).await?;
            let (committed_tx, committed_rx) = tokio::sync::oneshot::channel::<Option<i64>>();
            let _ = committed_tx.send(Some(turn.last_row)); // nothing new to commit
            let (model, agent) = (turn.model.name.clone(), turn.agent.clone());
            turn.events.emit(|of| LiveEvent::TurnStarted { of, model, agent, resumed: true });
            spawn_turn(&session, claim, turn, committed_rx)
        };
        if let Err(err) = started.await {
            let message = err.to_string();
            let code = if matches!(err, TurnError::Held(_)) { "held" } else { "resume_failed" };
            let end = TurnEnd { state: TurnState::Error, error_code: Some(code), error_message: Some(&message) };
            chat::close_turn(
                &session.space,
                chat_id,
                turn_id,
                &end,
                "Error: the turn could not go on.",
                TurnState::Running,
            )
            .await?;
            return Err(err);
        }
        Ok(true)
    }

    /// At unlock: parked turns whose cards were all decided but that never went on (the
    /// decision's resume was cut off by a crash) go on now. One that cannot is logged and
    /// the others still go on.
    pub async fn resume_ready(&self, session: Arc<Session>) -> Result<usize, StoreError> {
        let mut resumed = 0;
        for (turn_id, chat_id) in approvals::ready_to_resume(&session.space).await? {
            match self.resume(session.clone(), &chat_id, &turn_id).await {
                Ok(true) => resumed += 1,
                Ok(false) => {}
                Err(err) => tracing::warn!(user = %session.user_id, %err, "a decided turn could not go on"),
            }
        }
        Ok(resumed)
    }

    /// Ends the turns of a conversation that wait on cards: each ends `stopped`, its calls
    /// get a result saying why, and its cards are withdrawn. The caller holds the
    /// conversation's claim, so no decision can resume one meanwhile.
    async fn withdraw_parked(&self, session: &Session, chat_id: &str, why: &str) -> Result<usize, StoreError> {
        let space = &session.space;
        let mut ended = 0;
        for turn_id in approvals::parked_in(space, chat_id).await? {
            let end = TurnEnd { state: TurnState::Stopped, error_code: None, error_message: None };
            if !chat::close_turn(space, chat_id, &turn_id, &end, why, TurnState::Parked).await? {
                continue;
            }
            approvals::withdraw(space, &turn_id).await?;
            // A turn parked before a restart sent nothing the page still counts.
            let sent = self.parked_events(&turn_id).unwrap_or(0);
            let (events, user) = (self.inner.events.clone(), session.user_id.clone());
            TurnEvents::continuing(events, user, chat_id.to_owned(), turn_id, sent).ended(TurnState::Stopped, None);
            ended += 1;
        }
        Ok(ended)
    }

    /// Notes how many events a turn had sent when it parked.
    fn parked(&self, turn_id: &str, sent: u64) {
        self.inner.parked_events.lock().expect("parked turns").insert(turn_id.to_owned(), sent);
    }

    /// Takes how many events a parked turn had sent, if it parked in this process.
    fn parked_events(&self, turn_id: &str) -> Option<u64> {
        self.inner.parked_events.lock().expect("parked turns").remove(turn_id)
    }

    /// The token that fires when the conversation's current turn task is done, if one runs.
    fn finished_of(&self, user: &UserId, chat_id: &str) -> Option<CancellationToken> {
        let running = self.inner.running.lock().expect("running turns");
        running.get(&(user.clone(), chat_id.to_owned())).map(|r| r.finished.clone())
    }

    /// Marks a conversation as having a running turn. Refused when it already has one;
    /// then, if that turn is only writing its end, the token that fires when it is done.
    fn claim(
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

    /// Stops the running turn of a conversation, waiting until it has recorded its end.
    /// A turn parked on cards is ended too, its cards withdrawn. Returns whether a turn
    /// was running or waiting.
    pub async fn stop(&self, session: &Session, chat_id: &str) -> Result<bool, StoreError> {
        if self.cancel_running(&session.user_id, chat_id).await {
            return Ok(true);
        }
        // Nothing runs, but a turn may wait on cards: withdrawn under the conversation's
        // claim, so a decision cannot resume it halfway through.
        let withdrawing = CancellationToken::new();
        match self.claim(&session.user_id, chat_id, "withdrawing", &withdrawing) {
            Ok(_claim) => Ok(self.withdraw_parked(session, chat_id, STOPPED_UNDECIDED).await? > 0),
            // A decision resumed it a moment ago: that running turn is stopped instead.
            Err(_) => Ok(self.cancel_running(&session.user_id, chat_id).await),
        }
    }

    /// Cancels the turn task of a conversation and waits until it has recorded its end.
    async fn cancel_running(&self, user: &UserId, chat_id: &str) -> bool {
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

    /// At unlock: turns recorded as running that no task is running were cut off by a
    /// restart or crash. Each becomes `error`, and any call left without a result gets one,
    /// so the history stays whole (§8.1).
    pub async fn close_interrupted(&self, session: &Session) -> Result<usize, StoreError> {
        let space = &session.space;
        // The rows first, then the live set: a turn enters the set before its row is
        // written and leaves it after its end is, so no live turn is mistaken for a dead one.
        let recorded = chat::running_turns(space).await?;
        let live: Vec<String> =
            self.inner.running.lock().expect("running turns").values().map(|r| r.turn_id.clone()).collect();
        let mut closed = 0;
        for (turn_id, chat_id) in recorded {
            if live.contains(&turn_id) {
                continue;
            }
            let why = "Skald closed while this reply was being written. Send your message again.";
            let end = TurnEnd { state: TurnState::Error, error_code: Some("interrupted"), error_message: Some(why) };
            let orphan = "Error: Skald stopped before this call finished.";
            if !chat::close_turn(space, &chat_id, &turn_id, &end, orphan, TurnState::Running).await? {
                continue;
            }
            closed += 1;
        }
        if closed > 0 {
            tracing::info!(user = %session.user_id, closed, "interrupted turns closed at unlock");
        }
        Ok(closed)
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
    async fn endpoint(&self, model: &CatalogueModel, person: &UserId) -> Result<Endpoint, TurnError> {
        self.provider_cache().await?.endpoint(&self.inner.secrets, model, person)
    }

    /// A provider's API key, opened for one use, if it has one.
    pub async fn provider_key(&self, provider_id: &str) -> Result<Option<Zeroizing<String>>, TurnError> {
        self.provider_cache().await?.key(&self.inner.secrets, provider_id)
    }
}

/// How a turn starts: with the person's new message, as a retry of a failed one, or
/// resumed after its cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    Message,
    Retry,
    Resume,
}

/// Runs a set-up turn as work of its session, holding the conversation's claim until the
/// task ends; refused once the session has ended (locked).
fn spawn_turn(
    session: &Arc<Session>,
    claim: Claim,
    turn: turn::Turn,
    committed: tokio::sync::oneshot::Receiver<Option<i64>>,
) -> Result<(), TurnError> {
    let claim = claim.handed_to_task(session.clone());
    let closing = claim.closing.clone();
    let (space, chat_id) = (session.space.clone(), turn.chat_id.clone());
    let spawned = session.spawn(async move {
        {
            let _claim = claim;
            turn.run(committed, closing).await;
        }
        // What the next message starts from, read now that nobody waits on it.
        if let Err(err) = chat::turn_start(&space, &chat_id).await {
            tracing::debug!(error = %err, "the conversation could not be read back after its turn");
        }
    });
    if spawned { Ok(()) } else { Err(TurnError::Locked) }
}

/// The result a call waiting on a card gets when the person writes on instead.
const MOVED_ON: &str = "Not run: the person sent a new message instead of deciding on this call.";

/// The result a call waiting on a card gets when the person stops its turn.
const STOPPED_UNDECIDED: &str = "Not run: the person stopped the turn before deciding on this call.";

/// How many frames a turn has opened, from its rows.
fn frame_count(history: &[Message], turn_id: &str) -> usize {
    let mut frames: Vec<&str> =
        history.iter().filter(|m| m.turn_id == turn_id).filter_map(|m| m.frame_id.as_deref()).collect();
    frames.sort_unstable();
    frames.dedup();
    frames.len()
}

/// The calls of a turn's latest tool request in one frame (none for the conversation's
/// own) that have no result yet, with the text the model wrote beside them: what a resumed
/// turn or frame settles first.
fn unsettled_calls(history: &[Message], turn_id: &str, frame: Option<&str>) -> Option<(String, Vec<ToolCall>)> {
    let ours = |m: &&Message| m.turn_id == turn_id && m.frame_id.as_deref() == frame;
    let asked =
        history.iter().filter(ours).rev().find(|m| m.role == MessageRole::Assistant && m.tool_calls.is_some())?;
    let answered: Vec<&str> = history
        .iter()
        .filter(ours)
        .filter(|m| m.role == MessageRole::Tool)
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    let calls: Vec<ToolCall> = asked
        .tool_calls
        .as_ref()
        .map(calls_from_json)
        .unwrap_or_default()
        .into_iter()
        .filter(|c| !answered.contains(&c.id.as_str()))
        .collect();
    (!calls.is_empty()).then(|| (asked.text.clone(), calls))
}

/// The version of how requests are composed from stored parts (the system prompt, then
/// the history through `context_from`, then the tools). Bump it whenever that changes:
/// a stored request is only recomposed by the version that made it.
pub const RENDER_VERSION: i64 = 1;

/// Why a stored request cannot be composed again.
#[derive(Debug, thiserror::Error)]
pub enum RebuildError {
    #[error("there is no such request in this conversation, or it was made before its parts were kept")]
    NotFound,
    #[error("this request was composed by render version {0}; this Skald composes with version {RENDER_VERSION}")]
    OtherVersion(i64),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A stored model request composed again from what was stored: the protocol and the body
/// exactly as it was sent, whatever changed in the agent or the tools since (§8.1).
pub async fn rebuild(
    space: &PrivateStore,
    session_id: &str,
    request_id: i64,
) -> Result<(String, serde_json::Value), RebuildError> {
    let stored = chat::stored_request(space, session_id, request_id).await?.ok_or(RebuildError::NotFound)?;
    if stored.source.summary_id.is_some() && stored.summary.is_none() {
        return Err(RebuildError::NotFound); // its summary is gone: composing without it would be wrong
    }
    let source = stored.source;
    if source.render_version != RENDER_VERSION {
        return Err(RebuildError::OtherVersion(source.render_version));
    }
    let after = stored.summary.as_ref().map_or(0, |s| s.upto);
    let history = chat::history_between(space, session_id, after, source.history_upto).await?;
    let summary = stored.summary.as_ref().map(|s| s.text.as_str());
    let request =
        compose(stored.model, &source.prompt, summary, &history, crate::providers::tools_from_json(&source.tools));
    let body = crate::providers::body(&source.kind, &request).ok_or(RebuildError::NotFound)?;
    Ok((source.kind, body))
}

/// A request from its parts — the agent's prompt, the summary standing in for older rows,
/// the rows after it — the one place requests are composed (see [`RENDER_VERSION`]).
fn compose(
    model: String,
    prompt: &str,
    summary: Option<&str>,
    history: &[Message],
    tools: Vec<ToolSpec>,
) -> ChatRequest {
    let mut messages = vec![ContextMessage::System(prompt.to_owned())];
    messages.extend(summary.map(compaction::summary_message));
    messages.extend(context_from(history));
    ChatRequest { model, messages, tools, cache_key: cache_key_of(prompt) }
}

/// A system prompt as sent for a person: their own random line first, so no two people's
/// requests share a prefix a provider's prompt cache could be timed on (issue 22 #13),
/// then `prompt`. It is what a request's record keeps, so rebuilding needs nothing else.
pub fn prompt_for(prefix: &str, prompt: &str) -> String {
    format!("<!-- {prefix} -->\n{prompt}")
}

/// The person's key in a prompt made by [`prompt_for`]: sent to providers that keep
/// caches per end user. None for prompts from before there was one.
pub fn cache_key_of(prompt: &str) -> Option<String> {
    let key = prompt.strip_prefix("<!-- ")?.split_once(" -->\n")?.0;
    (key.len() == 32 && key.bytes().all(|b| b.is_ascii_hexdigit())).then(|| key.to_owned())
}

/// The model a turn uses and, unless the conversation is pinned, a fallback on another
/// provider for when the first one keeps failing — both within what the role allows.
fn pick_model(
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
fn declined_pin(all: &[CatalogueModel], mine: &[CatalogueModel], name: &str) -> Result<(), TurnError> {
    let named = |models: &[CatalogueModel]| models.iter().any(|m| m.name.eq_ignore_ascii_case(name));
    if named(all) && !named(mine) {
        return Err(TurnError::Declined(name.to_owned()));
    }
    Ok(())
}

/// Why a person may not pin a conversation to `name`, if they may not: it does not exist,
/// their role does not allow it, or it is remote and their tier is `local_only`.
fn check_pin(models: &[CatalogueModel], role: &Role, name: &str) -> Result<(), TurnError> {
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
fn usable(role: &Role, model: &CatalogueModel) -> bool {
    catalogue::allowed(&role.allowed_models, &model.name) && catalogue::tier_allows(role.privacy_tier, model.privacy)
}

/// What a provider's sealed key is bound to, so a key blob cannot be moved to another row.
pub fn key_purpose(provider_id: &str) -> String {
    format!("provider:{provider_id}")
}

/// The conversation's history as a model reads it: its own rows, not those of the
/// sub-agent frames inside it. Stored tool rows hold exactly what the model was given; an
/// errored turn's empty closing row is no message at all.
pub fn context_from(history: &[Message]) -> Vec<ContextMessage> {
    as_context(history.iter().filter(|m| m.frame_id.is_none()))
}

/// Rows as a model reads them.
fn as_context<'a>(rows: impl Iterator<Item = &'a Message>) -> Vec<ContextMessage> {
    rows.filter_map(|m| match m.role {
        MessageRole::User => Some(ContextMessage::User(m.text.clone())),
        MessageRole::Assistant => {
            let tool_calls = m.tool_calls.as_ref().map(calls_from_json).unwrap_or_default();
            (!m.text.is_empty() || !tool_calls.is_empty())
                .then(|| ContextMessage::Assistant { text: m.text.clone(), tool_calls })
        }
        MessageRole::Tool => {
            Some(ContextMessage::Tool { call_id: m.tool_call_id.clone().unwrap_or_default(), content: m.text.clone() })
        }
    })
    .collect()
}

/// Tool calls as stored with an assistant row.
pub fn calls_to_json(calls: &[ToolCall]) -> serde_json::Value {
    calls.iter().map(|c| serde_json::json!({ "id": c.id, "name": c.name, "arguments": c.arguments })).collect()
}

fn calls_from_json(value: &serde_json::Value) -> Vec<ToolCall> {
    value
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| ToolCall {
                    id: c["id"].as_str().unwrap_or_default().to_owned(),
                    name: c["name"].as_str().unwrap_or_default().to_owned(),
                    arguments: c["arguments"].as_str().unwrap_or_default().to_owned(),
                })
                .collect()
        })
        .unwrap_or_default()
}
