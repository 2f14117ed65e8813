//! MCP servers (§12): the other tools people here use, configured by administrators and
//! offered to the model as `mcp__<server>__<tool>` through the same approval gate as
//! Skald's own.
//!
//! The [`Hub`] owns every live connection. A stdio server runs one instance per person by
//! default — started at their first call, in a folder of its own, stopped when they lock —
//! so a stateful server never mixes people's data; a server marked shared runs one
//! instance for everyone. What an administrator approved is pinned ([`pin`]): the launch
//! spec's digest and each tool's definition. A tool whose definition differs from its
//! approval, or that appeared after it, is not offered and a call to it is refused until an
//! administrator approves it again; a server whose spec differs offers nothing.
//!
//! A server that ends is shown down, started again at the next call after a backoff
//! ([`crate::supervise::Policy`]), and given up on after repeated crashes until an
//! administrator restarts it; a call in flight when it ended gets a clear tool error.
//!
//! Never here: whether a call may run (the gate's), or what a person agreed to (§3,
//! `agent::consent`).

pub mod admin;
pub mod connection;
pub mod pin;
pub mod sampling;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use zeroize::Zeroizing;

use self::connection::{CallError, Connection, Launch};
use crate::ids::{McpServerId, UserId};
use crate::patterns::allowed;
use crate::providers::ToolSpec;
use crate::providers::privacy::{Tier, classify};
use crate::secrets::InstanceSecrets;
use crate::store::mcp::{self as stored, ServerRow, ToolStatus};
use crate::store::providers::ProviderKind;
use crate::store::{StoreError, SystemStore, timestamp};
use crate::supervise::{Crashes, Exit, Policy, Verdict};

/// The placeholder in a stdio server's arguments and environment values that stands for
/// its instance's own folder (one per person, or one for a shared server).
pub const INSTANCE_DIR: &str = "{instance_dir}";

/// Files named in a launch spec larger than this are not hashed into it (interpreters).
const MAX_HASHED_FILE: u64 = 16 << 20;

/// Whose instance of a server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Owner {
    Everyone,
    Person(UserId),
    /// The instance an administrator's listing starts and stops.
    Probe,
}

impl Owner {
    fn folder(&self) -> &str {
        match self {
            Self::Everyone => "shared",
            Self::Person(user) => user.as_str(),
            Self::Probe => "probe",
        }
    }
}

/// A live connection with the spec it was started from.
struct Live {
    connection: Connection,
    spec: String,
    /// Set when Skald closes it itself, so its end is no crash.
    closing: std::sync::atomic::AtomicBool,
}

type Slot = Arc<tokio::sync::Mutex<Option<Arc<Live>>>>;

/// What is known of a server's health, for the administration page.
#[derive(Debug, Clone, Default)]
pub struct Health {
    pub last_error: Option<String>,
    pub last_error_at: Option<String>,
    pub stderr_tail: Vec<String>,
}

/// The MCP connections; cheap to clone.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Inner>,
}

struct Inner {
    system: SystemStore,
    secrets: InstanceSecrets,
    /// `<data dir>/mcp`: each instance's working folder.
    root: PathBuf,
    http: reqwest013::Client,
    slots: Mutex<HashMap<(McpServerId, Owner), Slot>>,
    health: Mutex<HashMap<McpServerId, Health>>,
    crashes: Mutex<Crashes>,
    policy: Policy,
    clock: Instant,
}

/// A server's launch as resolved from its row: what to start or reach, and its digest.
struct Resolved {
    launch: Launch,
    spec: String,
    /// The folders the server is told of when it asks for roots.
    roots: Vec<PathBuf>,
}

impl Hub {
    pub fn new(system: SystemStore, secrets: InstanceSecrets, data_dir: &Path) -> Self {
        let http = reqwest013::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            // The administrator named this address; a proxy would be somewhere else.
            .no_proxy()
            .build()
            .unwrap_or_default();
        Self {
            inner: Arc::new(Inner {
                system,
                secrets,
                root: data_dir.join("mcp"),
                http,
                slots: Mutex::default(),
                health: Mutex::default(),
                crashes: Mutex::default(),
                policy: Policy::default(),
                clock: Instant::now(),
            }),
        }
    }

    /// The servers and their tools as the shared database states them now, both read at once.
    pub async fn catalogue(&self) -> Result<Catalogue, StoreError> {
        let (servers, tools) = tokio::try_join!(stored::list(&self.inner.system), stored::tools(&self.inner.system))?;
        Ok(Catalogue { servers, tools })
    }

    /// The approved servers whose tools a role may be offered, as a person's record of what
    /// they accepted states them (§3): where a call's arguments go, and the tools' pins.
    pub async fn terms(
        &self,
        role: &crate::store::roles::Role,
    ) -> Result<std::collections::BTreeMap<String, crate::store::accepted::McpTerms>, StoreError> {
        Ok(self.catalogue().await?.terms(role))
    }

    /// What a card about a call of `name` shows of its server; none for a tool that is no
    /// MCP server's.
    pub async fn label(&self, name: &str) -> Option<ServerLabel> {
        let (server, _) = pin::split(name)?;
        let servers = stored::list(&self.inner.system).await.ok()?;
        let server = servers.into_iter().find(|s| s.name == server)?;
        Some(ServerLabel {
            privacy: tier(&server),
            reaches: reaches(&server),
            server: server.name,
            shared: server.shared,
        })
    }

    /// Whether the server behind an offered MCP tool marks it destructive: the gate is then
    /// stricter (annotations never loosen it).
    pub async fn destructive(&self, name: &str) -> bool {
        let Some((server, tool)) = pin::split(name) else { return false };
        let Ok(tools) = stored::tools(&self.inner.system).await else { return true };
        let Ok(servers) = stored::list(&self.inner.system).await else { return true };
        let Some(server) = servers.iter().find(|s| s.name == server) else { return false };
        tools.iter().filter(|t| t.server_id == server.id && t.name == tool).any(|t| {
            let definition = t.approved_definition.as_ref().map_or(&t.definition.0, |d| &d.0);
            definition["annotations"]["destructiveHint"] == true
        })
    }

    /// Runs a call of an offered MCP tool for `user`: on their instance (or the shared
    /// one), only while the server's spec and the tool's definition are the ones approved.
    /// What comes back is the result or error the model reads. `asker` speaks for the
    /// person: the server's questions and progress reach them through it. An HTTP server
    /// is reached with the person's own token when they set one in their `space`.
    pub async fn call(
        &self,
        user: &UserId,
        space: &crate::store::private::PrivateStore,
        name: &str,
        arguments: Value,
        asker: Arc<dyn connection::Asker>,
    ) -> Result<String, String> {
        let Some((server_name, tool)) = pin::split(name) else {
            return Err(format!("there is no tool named {name:?} available here"));
        };
        let servers = stored::list(&self.inner.system).await.map_err(|err| err.to_string())?;
        let Some(server) = servers.into_iter().find(|s| s.name == server_name) else {
            return Err(format!("there is no MCP server named {server_name:?} any more"));
        };
        let live = self.approved_live(user, space, &server).await?;
        let listed = live.connection.listing.tools.read().await.iter().find(|t| t.name == tool).cloned();
        let Some(listed) = listed else {
            return Err(format!("the MCP server {server_name} no longer offers a tool named {tool:?}"));
        };
        let definition = pin::definition(&listed);
        let approved = stored::tools(&self.inner.system)
            .await
            .map_err(|err| err.to_string())?
            .into_iter()
            .find(|t| t.server_id == server.id && t.name == tool)
            .and_then(|t| t.approved_pin);
        if approved.as_deref() != Some(pin::pin(&definition).as_str()) {
            self.record(&server.id, &live).await;
            return Err(format!(
                "Refused: the tool {tool} of the MCP server {server_name} changed since it was approved, so it does \
                 not run until an administrator approves it again. Tell the person; do not retry."
            ));
        }
        let Value::Object(arguments) = arguments else { return Err("the arguments must be a JSON object".into()) };
        match live.connection.call(tool, arguments, Some(asker)).await {
            Ok(result) => pin::result_text(server_name, tool, &result),
            Err(CallError::Closed) => {
                let how = match live.connection.ended() {
                    Some(ended) => {
                        tokio::time::timeout(Duration::from_secs(2), ended).await.ok().map(|e| connection::ended(&e))
                    }
                    None => None,
                };
                Err(format!(
                    "the MCP server {server_name} stopped while this call ran{}; Skald starts it again at the next \
                     call. The call may or may not have had its effect.",
                    how.map(|h| format!(" ({h})")).unwrap_or_default()
                ))
            }
            Err(err) => Err(format!("the MCP server {server_name}: {err}")),
        }
    }

    /// The person's instance of an enabled server (or the shared one), started if need
    /// be, reached with their own token where they set one; refused unless it runs what
    /// was approved.
    async fn approved_live(
        &self,
        user: &UserId,
        space: &crate::store::private::PrivateStore,
        server: &ServerRow,
    ) -> Result<Arc<Live>, String> {
        let name = &server.name;
        if !server.enabled {
            return Err(format!("the MCP server {name} is turned off; an administrator can turn it on"));
        }
        let owner = if server.shared { Owner::Everyone } else { Owner::Person(user.clone()) };
        let own_token = match server.transport.as_str() {
            "http" => space.mcp_token(server.id.as_str()).await.map_err(|err| err.to_string())?,
            _ => None,
        };
        let live = self.connect(server, owner, own_token).await?;
        if server.approved_spec.as_deref() != Some(live.spec.as_str()) {
            return Err(format!(
                "Refused: the MCP server {name} changed since it was approved (what it runs or reaches is not what \
                 was approved), so none of its tools run until an administrator approves it again."
            ));
        }
        Ok(live)
    }

    /// The prompts of the servers named in `servers` (those a person is offered), each
    /// listed by their own instance, as templates for their messages. A server that
    /// cannot be reached lists none (logged).
    pub async fn prompts(
        &self,
        user: &UserId,
        space: &crate::store::private::PrivateStore,
        servers: &std::collections::BTreeSet<String>,
    ) -> Result<Vec<PromptView>, StoreError> {
        let mut prompts = Vec::new();
        for (server, live) in self.instances_of(user, space, servers).await? {
            match live.connection.prompts().await {
                Ok(listed) => prompts.extend(listed.into_iter().map(|prompt| PromptView::of(&server, prompt))),
                Err(err) => tracing::warn!(server = %server.name, %err, "an MCP server's prompts could not be listed"),
            }
        }
        Ok(prompts)
    }

    /// The person's approved instance of `server`, one of those named in `servers`.
    async fn offered_live(
        &self,
        user: &UserId,
        space: &crate::store::private::PrivateStore,
        servers: &std::collections::BTreeSet<String>,
        server: &McpServerId,
    ) -> Result<(ServerRow, Arc<Live>), String> {
        let row = stored::get(&self.inner.system, server).await.map_err(|err| err.to_string())?;
        let Some(row) = row.filter(|r| servers.contains(r.id.as_str())) else {
            return Err("there is no such tool server among yours".into());
        };
        let live = self.approved_live(user, space, &row).await?;
        Ok((row, live))
    }

    /// The person's approved instances of the servers named in `servers`, started if need
    /// be; one that cannot be reached is left out (logged).
    async fn instances_of(
        &self,
        user: &UserId,
        space: &crate::store::private::PrivateStore,
        servers: &std::collections::BTreeSet<String>,
    ) -> Result<Vec<(ServerRow, Arc<Live>)>, StoreError> {
        let mut instances = Vec::new();
        for server in stored::list(&self.inner.system).await?.into_iter().filter(|s| servers.contains(s.id.as_str())) {
            match self.approved_live(user, space, &server).await {
                Ok(live) => instances.push((server, live)),
                Err(why) => tracing::warn!(server = %server.name, %why, "an MCP server could not be reached"),
            }
        }
        Ok(instances)
    }

    /// The resources of the servers named in `servers` (those a person is offered), each
    /// listed by their own instance. A server that cannot be reached lists none (logged).
    pub async fn resources(
        &self,
        user: &UserId,
        space: &crate::store::private::PrivateStore,
        servers: &std::collections::BTreeSet<String>,
    ) -> Result<Vec<ResourceView>, StoreError> {
        let mut resources = Vec::new();
        for (server, live) in self.instances_of(user, space, servers).await? {
            match live.connection.resources().await {
                Ok(listed) => resources.extend(listed.into_iter().map(|r| ResourceView {
                    server_id: server.id.clone(),
                    server: server.name.clone(),
                    uri: r.uri,
                    name: r.name,
                    title: r.title,
                    description: r.description,
                    mime_type: r.mime_type,
                    size: r.size,
                })),
                Err(err) => {
                    tracing::warn!(server = %server.name, %err, "an MCP server's resources could not be listed")
                }
            }
        }
        Ok(resources)
    }

    /// One resource of one of the servers named in `servers`, as outside content for a
    /// person's message: its text, bounded and wrapped as untrusted. A resource of bytes
    /// (an image, a file) is refused here.
    pub async fn read_resource(
        &self,
        user: &UserId,
        space: &crate::store::private::PrivateStore,
        servers: &std::collections::BTreeSet<String>,
        server: &McpServerId,
        uri: &str,
    ) -> Result<String, String> {
        let (row, live) = self.offered_live(user, space, servers, server).await?;
        let read = live.connection.read(uri).await.map_err(|err| format!("the MCP server {}: {err}", row.name))?;
        pin::resource_text(&row.name, uri, &read)
    }

    /// A prompt of one of the servers named in `servers`, filled with `arguments`, as the
    /// text of a message the person reads, edits and sends themselves.
    pub async fn prompt_text(
        &self,
        user: &UserId,
        space: &crate::store::private::PrivateStore,
        servers: &std::collections::BTreeSet<String>,
        server: &McpServerId,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<String, String> {
        let (row, live) = self.offered_live(user, space, servers, server).await?;
        let got = live
            .connection
            .prompt(name, arguments)
            .await
            .map_err(|err| format!("the MCP server {}: {err}", row.name))?;
        Ok(pin::prompt_text(&got))
    }

    /// The live instance of `server` for `owner`, started if there is none (after the
    /// backoff its crashes call for).
    async fn connect(
        &self,
        server: &ServerRow,
        owner: Owner,
        own_token: Option<Zeroizing<String>>,
    ) -> Result<Arc<Live>, String> {
        let key = (server.id.clone(), owner.clone());
        let slot = self.inner.slots.lock().expect("mcp slots").entry(key).or_default().clone();
        let mut slot = slot.lock().await;
        if let Some(live) = slot.as_ref().filter(|live| !live.connection.is_closed()) {
            return Ok(live.clone());
        }
        let now = self.inner.clock.elapsed();
        let verdict = self.inner.crashes.lock().expect("mcp crashes").verdict(&self.inner.policy, &server.id, now);
        match verdict {
            Verdict::GivenUp => {
                return Err(format!(
                    "the MCP server {} crashed {} times in a row, so Skald stopped starting it; an administrator can \
                     restart it",
                    server.name, self.inner.policy.limit
                ));
            }
            Verdict::Start { after } => tokio::time::sleep(after).await,
        }
        let resolved =
            self.resolve(server, &owner, own_token).map_err(|why| format!("the MCP server {}: {why}", server.name))?;
        let timeout = Duration::from_millis(u64::try_from(server.timeout_ms).unwrap_or(60_000));
        let opened = Connection::open(resolved.launch, &server.protocol, timeout, resolved.roots).await;
        let connection = match opened {
            Ok(connection) => connection,
            Err(err) => {
                let why = format!("the MCP server {} could not be reached: {err}", server.name);
                self.note_error(&server.id, &why, Vec::new());
                let exit = Exit { code: None, signal: None, stderr_tail: Vec::new() };
                self.inner.crashes.lock().expect("mcp crashes").record(
                    &self.inner.policy,
                    &server.id,
                    now,
                    exit,
                    timestamp(),
                );
                return Err(why);
            }
        };
        let live = Arc::new(Live { connection, spec: resolved.spec, closing: Default::default() });
        self.record(&server.id, &live).await;
        self.watch(server, &live);
        *slot = Some(live.clone());
        Ok(live)
    }

    /// Records what a live instance lists, for the administrators and the pins.
    async fn record(&self, id: &McpServerId, live: &Live) {
        let tools = live.connection.listing.tools.read().await.clone();
        let listed: Vec<stored::Listed> = tools
            .iter()
            .map(|tool| {
                let definition = pin::definition(tool);
                stored::Listed { name: tool.name.to_string(), pin: pin::pin(&definition), definition }
            })
            .collect();
        if let Err(err) = stored::record_listing(&self.inner.system, id, &listed).await {
            tracing::warn!(server = %id, %err, "could not record an MCP server's tools");
        }
    }

    /// Follows a live instance: its tool list when the server says it changed, and its
    /// end, which is a crash unless Skald closed it.
    fn watch(&self, server: &ServerRow, live: &Arc<Live>) {
        let (hub, id, name) = (self.clone(), server.id.clone(), server.name.clone());
        let weak = Arc::downgrade(live);
        let listing = live.connection.listing.clone();
        tokio::spawn(async move {
            loop {
                listing.changed.notified().await;
                let Some(live) = weak.upgrade() else { return };
                match live.connection.relist().await {
                    Ok(_) => hub.record(&id, &live).await,
                    Err(err) => tracing::warn!(server = %name, %err, "an MCP server's tools could not be read again"),
                }
            }
        });
        let Some(ended) = live.connection.ended() else { return };
        let (hub, id, name) = (self.clone(), server.id.clone(), server.name.clone());
        let weak = Arc::downgrade(live);
        let pid = live.connection.pid();
        tokio::spawn(async move {
            let exit = ended.await;
            let closing = weak.upgrade().is_none_or(|live| live.closing.load(std::sync::atomic::Ordering::Acquire));
            if closing {
                return;
            }
            let how = connection::ended(&exit);
            tracing::warn!(server = %name, pid, %how, "an MCP server ended");
            hub.note_error(&id, &format!("the server ended: {how}"), exit.stderr_tail.clone());
            let now = hub.inner.clock.elapsed();
            hub.inner.crashes.lock().expect("mcp crashes").record(&hub.inner.policy, &id, now, exit, timestamp());
        });
    }

    fn note_error(&self, id: &McpServerId, why: &str, stderr_tail: Vec<String>) {
        let mut health = self.inner.health.lock().expect("mcp health");
        let entry = health.entry(id.clone()).or_default();
        entry.last_error = Some(why.to_owned());
        entry.last_error_at = Some(timestamp());
        if !stderr_tail.is_empty() {
            entry.stderr_tail = stderr_tail;
        }
    }

    /// Resolves a server's row into what to start or reach for `owner`, and the digest of
    /// its launch spec.
    fn resolve(
        &self,
        server: &ServerRow,
        owner: &Owner,
        own_token: Option<Zeroizing<String>>,
    ) -> Result<Resolved, String> {
        match server.transport.as_str() {
            "stdio" => {
                let command = server.command.as_deref().ok_or("it has no command")?;
                let env = self.env_of(server)?;
                let files = hashed_files(command, &server.args.0);
                let mut spec = pin::stdio_spec(command, &server.args.0, &env, server.shared, &files);
                spec["roots"] = serde_json::json!(server.roots.0);
                let spec = pin::spec_digest(&spec);
                let dir = connection::instance_dir(&self.inner.root, server.id.as_str(), owner.folder());
                make_private_dir(&dir)
                    .map_err(|err| format!("its folder {} could not be made: {err}", dir.display()))?;
                let place = dir.to_string_lossy().into_owned();
                let fill = |text: &str| text.replace(INSTANCE_DIR, &place);
                let roots = self.roots_of(server, &fill)?;
                let spec_env = env
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.into(), fill(v.as_str().unwrap_or_default()).into()))
                    .collect();
                let launch = Launch::Stdio(crate::supervise::Spec {
                    name: format!("mcp:{}", server.name),
                    program: command.into(),
                    args: server.args.0.iter().map(|a| fill(a).into()).collect(),
                    env: spec_env,
                    cwd: Some(dir),
                });
                Ok(Resolved { launch, spec, roots })
            }
            _ => {
                let url = server.url.clone().ok_or("it has no address")?;
                let token = self.token_of(server)?;
                // What was approved is the shared token; a person's own stands in for it.
                let mut spec = pin::http_spec(&url, server.trusted_lan, token.as_deref().map(String::as_str));
                let token = own_token.or(token);
                spec["roots"] = serde_json::json!(server.roots.0);
                let spec = pin::spec_digest(&spec);
                let dir = connection::instance_dir(&self.inner.root, server.id.as_str(), owner.folder());
                let place = dir.to_string_lossy().into_owned();
                let roots = self.roots_of(server, &|text: &str| text.replace(INSTANCE_DIR, &place))?;
                Ok(Resolved { launch: Launch::Http { url, token, client: self.inner.http.clone() }, spec, roots })
            }
        }
    }

    /// The folders a server is told of, its instance's own ones made.
    fn roots_of(&self, server: &ServerRow, fill: &dyn Fn(&str) -> String) -> Result<Vec<PathBuf>, String> {
        let mut roots = Vec::with_capacity(server.roots.0.len());
        for root in &server.roots.0 {
            let path = PathBuf::from(fill(root));
            if root.starts_with(INSTANCE_DIR) {
                make_private_dir(&path)
                    .map_err(|err| format!("its folder {} could not be made: {err}", path.display()))?;
            }
            roots.push(path);
        }
        Ok(roots)
    }

    /// The server's declared environment, opened.
    fn env_of(&self, server: &ServerRow) -> Result<Value, String> {
        let Some(sealed) = &server.env else { return Ok(Value::Object(Default::default())) };
        let plain = self
            .inner
            .secrets
            .open(sealed, &env_purpose(&server.id))
            .map_err(|err| format!("its environment cannot be opened: {err}"))?;
        serde_json::from_slice(&plain).map_err(|err| format!("its environment is damaged: {err}"))
    }

    fn token_of(&self, server: &ServerRow) -> Result<Option<Zeroizing<String>>, String> {
        let Some(sealed) = &server.token else { return Ok(None) };
        let plain = self
            .inner
            .secrets
            .open(sealed, &token_purpose(&server.id))
            .map_err(|err| format!("its token cannot be opened: {err}"))?;
        String::from_utf8(plain.to_vec())
            .map(|t| Some(Zeroizing::new(t)))
            .map_err(|_| "its token is damaged".to_owned())
    }

    /// Stops a person's instances: they locked.
    pub async fn stop_person(&self, user: &UserId) {
        self.stop_where(|(_, owner)| *owner == Owner::Person(user.clone())).await;
    }

    /// Stops a person's instance of one server: their own token for it changed.
    pub async fn stop_instance(&self, id: &McpServerId, user: &UserId) {
        self.stop_where(|(server, owner)| server == id && *owner == Owner::Person(user.clone())).await;
    }

    /// The people with an instance running.
    pub fn people_running(&self) -> Vec<UserId> {
        let slots = self.inner.slots.lock().expect("mcp slots");
        let mut people: Vec<UserId> = slots
            .keys()
            .filter_map(|(_, owner)| match owner {
                Owner::Person(user) => Some(user.clone()),
                _ => None,
            })
            .collect();
        people.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        people.dedup();
        people
    }

    /// Stops every instance of a server (it was changed, restarted or removed).
    pub async fn stop_server(&self, id: &McpServerId) {
        self.stop_where(|(server, _)| server == id).await;
    }

    /// Stops the instances of a server started from another spec than `spec`.
    pub async fn stop_unlike(&self, id: &McpServerId, spec: &str) {
        let stale: Vec<Owner> = {
            let slots = self.inner.slots.lock().expect("mcp slots");
            slots
                .iter()
                .filter(|((server, _), slot)| {
                    server == id && slot.try_lock().map_or(true, |live| live.as_ref().is_some_and(|l| l.spec != spec))
                })
                .map(|((_, owner), _)| owner.clone())
                .collect()
        };
        for owner in stale {
            self.stop_where(|(server, o)| server == id && *o == owner).await;
        }
    }

    /// Stops everything: Skald is shutting down.
    pub async fn stop_all(&self) {
        self.stop_where(|_| true).await;
    }

    async fn stop_where(&self, pick: impl Fn(&(McpServerId, Owner)) -> bool) {
        let slots: Vec<Slot> = {
            let mut slots = self.inner.slots.lock().expect("mcp slots");
            let keys: Vec<_> = slots.keys().filter(|k| pick(k)).cloned().collect();
            keys.into_iter().filter_map(|k| slots.remove(&k)).collect()
        };
        for slot in slots {
            let live = slot.lock().await.take();
            if let Some(live) = live {
                live.closing.store(true, std::sync::atomic::Ordering::Release);
                if let Ok(live) = Arc::try_unwrap(live) {
                    live.connection.close().await;
                }
                // Otherwise a call still holds it: it is killed when that call lets go.
            }
        }
    }

    /// Starts an instance for an administrator's listing, records its tools and stops it
    /// again (a shared server's one instance stays). The error says why it could not.
    pub async fn probe(&self, server: &ServerRow) -> Result<(), String> {
        let owner = if server.shared { Owner::Everyone } else { Owner::Probe };
        let result = self.connect(server, owner.clone(), None).await.map(|_| ());
        if owner == Owner::Probe {
            self.stop_where(|(id, o)| *id == server.id && *o == Owner::Probe).await;
        }
        result
    }

    /// The spec digest a server's row resolves to now (its files hashed as they are).
    pub fn spec_now(&self, server: &ServerRow) -> Result<String, String> {
        self.resolve(server, &Owner::Probe, None).map(|r| r.spec)
    }

    /// Forgets a server's crashes: an administrator restarts it.
    pub fn clear_crashes(&self, id: &McpServerId) {
        self.inner.crashes.lock().expect("mcp crashes").clear(id);
        self.inner.health.lock().expect("mcp health").remove(id);
    }

    /// What the administration page shows of a server's health: how many instances run,
    /// whether it was given up on, its last error and stderr tail.
    pub fn health(&self, id: &McpServerId) -> (usize, bool, Health) {
        let running = self
            .inner
            .slots
            .lock()
            .expect("mcp slots")
            .iter()
            .filter(|((server, _), slot)| {
                server == id && slot.try_lock().is_ok_and(|s| s.as_ref().is_some_and(|l| !l.connection.is_closed()))
            })
            .count();
        let given_up = self.inner.crashes.lock().expect("mcp crashes").get(id).is_some_and(|r| r.given_up);
        let health = self.inner.health.lock().expect("mcp health").get(id).cloned().unwrap_or_default();
        (running, given_up, health)
    }

    pub(crate) fn secrets(&self) -> &InstanceSecrets {
        &self.inner.secrets
    }

    pub(crate) fn system(&self) -> &SystemStore {
        &self.inner.system
    }
}

/// What a card about an MCP call shows of the server it goes to (§12.1): its name, where
/// its arguments go, and whether one instance serves everyone.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[ts(rename = "ToolServerLabel")]
pub struct ServerLabel {
    pub server: String,
    /// The command it runs or the address it is reached at.
    pub reaches: String,
    /// One instance serves everyone: what one person's calls leave in it, another's may read.
    pub shared: bool,
    pub privacy: Tier,
}

/// A tool server's prompt, offered to a person as a template for their message.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
#[ts(rename = "ToolPrompt")]
pub struct PromptView {
    pub server_id: McpServerId,
    pub server: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgument>,
}

/// A tool server's resource, which a person may attach to their message.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
#[ts(rename = "ToolResource")]
pub struct ResourceView {
    pub server_id: McpServerId,
    pub server: String,
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub size: Option<u64>,
}

/// What a prompt takes.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
#[ts(rename = "ToolPromptArgument")]
pub struct PromptArgument {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

impl PromptView {
    fn of(server: &ServerRow, prompt: rmcp::model::Prompt) -> Self {
        let arguments = prompt
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|a| PromptArgument { name: a.name, description: a.description, required: a.required.unwrap_or(false) })
            .collect();
        Self {
            server_id: server.id.clone(),
            server: server.name.clone(),
            name: prompt.name,
            title: prompt.title,
            description: prompt.description,
            arguments,
        }
    }
}

/// Whether a server keeps words on this machine or the home network (§16): a stdio server
/// runs here; an HTTP server is judged by its address like a provider.
pub fn tier(server: &ServerRow) -> Tier {
    match (&server.transport[..], &server.url) {
        ("http", Some(url)) => classify(ProviderKind::Openai, url, server.trusted_lan),
        _ => Tier::Local,
    }
}

/// What a server runs or is reached at, in words: its command with its arguments, or
/// its address.
fn reaches(server: &ServerRow) -> String {
    match (&server.command, &server.url) {
        (Some(command), _) => std::iter::once(command.as_str())
            .chain(server.args.0.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        (None, Some(url)) => url.clone(),
        (None, None) => String::new(),
    }
}

/// What a sealed environment is bound to, so it cannot be moved to another server.
pub fn env_purpose(id: &McpServerId) -> String {
    format!("mcp-env:{id}")
}

/// What a sealed token is bound to.
pub fn token_purpose(id: &McpServerId) -> String {
    format!("mcp-token:{id}")
}

/// The description the model reads: where the tool comes from, then the server's words.
fn describe(server: &ServerRow, definition: &Value) -> String {
    let shared = if server.shared { ", one instance shared by everyone" } else { "" };
    let words = definition["description"].as_str().or(definition["title"].as_str()).unwrap_or("");
    format!("(From the MCP server {}{shared}.) {words}", server.name)
}

/// A tool's input schema as a provider takes it: an object schema.
fn parameters(definition: &Value) -> Value {
    match &definition["inputSchema"] {
        Value::Object(schema) if !schema.is_empty() => Value::Object(schema.clone()),
        _ => serde_json::json!({ "type": "object", "properties": {} }),
    }
}

/// The SHA-256 of the command and of each argument that names a file here, as
/// `(path, digest)`; files too large to hash (interpreters) count by their size.
fn hashed_files(command: &str, args: &[String]) -> Vec<(String, String)> {
    let program = which(command);
    program
        .into_iter()
        .chain(args.iter().map(PathBuf::from).filter(|p| p.is_absolute()))
        .filter_map(|path| {
            let meta = std::fs::metadata(&path).ok().filter(std::fs::Metadata::is_file)?;
            let digest = if meta.len() > MAX_HASHED_FILE {
                format!("size:{}", meta.len())
            } else {
                use sha2::{Digest, Sha256};
                hex::encode(Sha256::digest(std::fs::read(&path).ok()?))
            };
            Some((path.to_string_lossy().into_owned(), digest))
        })
        .collect()
}

/// Where a command is found: itself when it names a path, else the first match on PATH.
fn which(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        return Some(PathBuf::from(command));
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(command)).find(|p| p.is_file())
}

fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// The MCP servers and their tools as stored, read once for a turn's start: what the
/// person's record is compared with and what the model is offered are the same.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    servers: Vec<stored::ServerRow>,
    tools: Vec<stored::ToolRow>,
}

impl Catalogue {
    /// The approved tools of the servers a person may use, as offered to the model: those
    /// `role_patterns` and `agent_patterns` both allow, of servers they have not declined
    /// (`withheld`), and only local ones where `local_only`.
    pub fn offered(
        &self,
        role_patterns: &[String],
        agent_patterns: &[String],
        local_only: bool,
        withheld: &std::collections::BTreeSet<String>,
    ) -> Vec<ToolSpec> {
        let mut offered = Vec::new();
        for server in self.servers.iter().filter(|s| s.enabled && s.approved_spec.is_some()) {
            if withheld.contains(server.id.as_str()) || (local_only && tier(server) == Tier::Remote) {
                continue;
            }
            for tool in self.tools.iter().filter(|t| t.server_id == server.id && t.status() == ToolStatus::Approved) {
                let Some(name) = pin::offered_name(&server.name, &tool.name) else { continue };
                if !allowed(role_patterns, &name) || !allowed(agent_patterns, &name) {
                    continue;
                }
                let definition = tool.approved_definition.as_ref().map_or(&tool.definition.0, |d| &d.0);
                offered.push(ToolSpec {
                    name,
                    description: describe(server, definition),
                    parameters: parameters(definition),
                });
            }
        }
        offered
    }

    /// See [`Hub::terms`].
    pub fn terms(
        &self,
        role: &crate::store::roles::Role,
    ) -> std::collections::BTreeMap<String, crate::store::accepted::McpTerms> {
        let local_only = role.privacy_tier == crate::store::roles::PrivacyTier::LocalOnly;
        let mut terms = std::collections::BTreeMap::new();
        for server in self.servers.iter().filter(|s| s.enabled) {
            let Some(spec) = &server.approved_spec else { continue };
            let remote = tier(server) == Tier::Remote;
            if local_only && remote {
                continue;
            }
            let offered: std::collections::BTreeMap<String, String> = self
                .tools
                .iter()
                .filter(|t| t.server_id == server.id && t.status() == ToolStatus::Approved)
                .filter(|t| pin::offered_name(&server.name, &t.name).is_some_and(|n| allowed(&role.tools, &n)))
                .map(|t| (t.name.clone(), t.pin.clone()))
                .collect();
            if offered.is_empty() {
                continue;
            }
            let reaches = reaches(server);
            terms.insert(
                server.id.to_string(),
                crate::store::accepted::McpTerms {
                    name: server.name.clone(),
                    reaches,
                    shared: server.shared,
                    remote,
                    spec: spec.clone(),
                    tools: offered,
                },
            );
        }
        terms
    }
}
