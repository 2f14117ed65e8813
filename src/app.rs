//! The composition root: the one place that picks concrete types and wires them. Start-up
//! runs in an order that leaves nothing half-written on failure — bind the port, then
//! lock the data directory, then open the shared database, then write the token — and
//! shutdown runs it backwards after in-flight requests finish.

use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::agent::definition::AgentDir;
use crate::agent::tools::Registry;
use crate::agent::tools::web_fetch::FetchPolicy;
use crate::agent::{Limits, Runtime};
use crate::crypto::LaunchToken;
use crate::error::StartError;
use crate::http::assets::WebFiles;
use crate::http::boundary::Boundary;
use crate::http::serve::Limits as ConnectionLimits;
use crate::http::{self, AppState};
use crate::notify::{Notification, Notifier};
use crate::providers::local::{self, LocalModels};
use crate::secrets::InstanceSecrets;
use crate::store::{DataDir, SystemStore, approval_rules, roles};
use crate::users::sessions::Sessions;
use crate::users::{Accounts, KdfPolicy};

/// How often idle sessions are looked for; the timeout itself is per role.
const IDLE_SWEEP: std::time::Duration = std::time::Duration::from_secs(15);

/// Binds 127.0.0.1 only — never 0.0.0.0 or `::` (§7). Port 0 takes any free port.
pub fn bind(port: u16) -> Result<std::net::TcpListener, StartError> {
    let fail = |source| StartError::Bind { port, source };
    let listener = std::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).map_err(fail)?;
    listener.set_nonblocking(true).map_err(fail)?;
    Ok(listener)
}

/// How the process that hosts the core wants it started.
#[derive(Debug, Clone, Copy)]
pub struct StartOptions {
    /// `skald serve` writes the launch token to `run/api-token` for scripts; the desktop
    /// shell hands it to its window in memory and writes no file.
    pub write_token_file: bool,
    /// The web UI's files, which the binary embeds.
    pub web: WebFiles,
}

/// What the shell may do to a running core, and nothing more.
#[derive(Clone)]
pub struct CoreHandle {
    state: AppState,
}

impl CoreHandle {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.state.boundary.port())
    }

    pub fn launch_token(&self) -> &LaunchToken {
        &self.state.launch_token
    }

    pub fn handle(&self) -> CoreHandle {
        CoreHandle { state: self.state.clone() }
    }

    /// Whether a URL belongs to this server's own loopback origin.
    pub fn is_own_origin(&self, origin: &str) -> bool {
        self.state.boundary.is_own_origin(origin)
    }

    /// The tray's Lock: every session, everyone.
    pub async fn lock_all(&self) -> usize {
        self.state.accounts.sessions().end_all().await
    }

    /// The window was closed: lock the sessions whose role asks for it.
    pub async fn lock_for_closed_window(&self) -> usize {
        self.state.accounts.sessions().end_on_window_close().await
    }

    /// Begins a clean shutdown; [`App::run`] returns once in-flight work is done.
    pub fn shut_down(&self) {
        self.state.shutdown.cancel();
    }

    pub fn notifications(&self) -> tokio::sync::broadcast::Receiver<Notification> {
        self.state.notifier.subscribe()
    }

    /// Snoozes a reminder from its desktop notification (the shell's action buttons).
    pub async fn snooze_job(
        &self,
        id: &crate::ids::JobId,
        length: crate::jobs::Snooze,
    ) -> Result<(), crate::jobs::JobError> {
        self.state.jobs.snooze_from_desktop(id, length).await
    }
}

/// A server that is ready to accept: its port is bound, its data directory locked, its
/// database migrated and its token written.
pub struct App {
    listener: TcpListener,
    data_dir: DataDir,
    state: AppState,
    connections: ConnectionLimits,
}

impl App {
    /// Must run inside a Tokio runtime.
    pub async fn start(
        listener: std::net::TcpListener,
        data_dir: DataDir,
        options: StartOptions,
    ) -> Result<Self, StartError> {
        let port = listener.local_addr().map_err(|source| StartError::Bind { port: 0, source })?.port();
        let listener = TcpListener::from_std(listener).map_err(|source| StartError::Bind { port, source })?;
        let system = SystemStore::open(&data_dir.system_db()).await?;
        roles::seed_presets(&system)
            .await
            .map_err(|err| StartError::Prepare { path: data_dir.system_db(), reason: err.to_string() })?;
        approval_rules::seed_presets(&system)
            .await
            .map_err(|err| StartError::Prepare { path: data_dir.system_db(), reason: err.to_string() })?;
        crate::store::audit::chain_earlier_entries(&system)
            .await
            .map_err(|err| StartError::Prepare { path: data_dir.system_db(), reason: err.to_string() })?;
        let policy = KdfPolicy::from_env();
        if policy == KdfPolicy::Floor {
            tracing::warn!("SKALD_INSECURE_FAST_KDF: new keys use the minimum argon2id cost (a test setting)");
        }
        let accounts = Accounts::new(system.clone(), data_dir.users_dir(), policy);
        // A key rotation a crash cut short is finished or undone before anything reads a file.
        accounts
            .settle_rotations()
            .await
            .map_err(|err| StartError::Prepare { path: data_dir.users_dir(), reason: err.to_string() })?;
        let secrets = InstanceSecrets::load(&system, data_dir.root())
            .await
            .map_err(|err| StartError::Prepare { path: data_dir.root().to_path_buf(), reason: err.to_string() })?;
        let agents = AgentDir::new(data_dir.root());
        agents
            .seed()
            .map_err(|err| StartError::Prepare { path: data_dir.root().join("agents"), reason: err.to_string() })?;
        let notifier = Notifier::default();
        let mcp = crate::mcp::Hub::new(system.clone(), secrets.clone(), data_dir.root());
        let tools = Registry::builtin(FetchPolicy::from_env()).with_mcp(mcp);
        let local = LocalModels::new(data_dir.models_dir(), local::Settings::from_env());
        let agent =
            Runtime::new(system.clone(), secrets.clone(), agents, tools, Limits::from_env(), notifier.clone(), local);
        agent.observe_all().await;
        let connections = ConnectionLimits::from_env(raise_open_file_limit());
        let launch_token = LaunchToken::generate();
        if options.write_token_file {
            data_dir
                .write_token(launch_token.expose())
                .map_err(|source| StartError::Token { path: data_dir.token_file(), source })?;
        }
        let away = data_dir.root().join("away");
        let jobs =
            crate::jobs::Jobs::new(system.clone(), accounts.sessions().clone(), agent.clone(), notifier.clone(), away);
        agent.scheduling().plug(std::sync::Arc::new(jobs.clone()));
        let backups = crate::backup::Backups::new(data_dir.root(), system.clone(), accounts.clone(), secrets.clone());
        backups
            .settle_interrupted()
            .await
            .map_err(|err| StartError::Prepare { path: data_dir.system_db(), reason: err.to_string() })?;
        let extractor = crate::extract::Extractor::new(local::this_binary(), crate::extract::Limits::default());
        let documents = crate::agent::documents::Documents::new(system.clone(), extractor, agent.meaning());
        let state = AppState {
            launch_token,
            system,
            accounts,
            secrets,
            boundary: Boundary::new(port),
            notifier,
            agent,
            jobs,
            documents,
            backups,
            voice: crate::voice::Voice::new(data_dir.root()),
            shutdown: CancellationToken::new(),
            web: options.web,
        };
        tracing::info!(port, data_dir = %data_dir.root().display(), version = crate::VERSION, "ready");
        Ok(Self { listener, data_dir, state, connections })
    }

    pub fn url(&self) -> String {
        self.handle().url()
    }

    pub fn launch_token(&self) -> &LaunchToken {
        &self.state.launch_token
    }

    pub fn handle(&self) -> CoreHandle {
        CoreHandle { state: self.state.clone() }
    }

    /// Serves until `stop` completes, then lets in-flight requests finish, closes live
    /// sockets, closes the database and removes the token file.
    pub async fn run(self, stop: impl Future<Output = ()> + Send + 'static) -> Result<(), StartError> {
        let Self { listener, data_dir, state, connections } = self;
        let shutdown = state.shutdown.clone();
        let trigger = shutdown.clone();
        tokio::spawn(async move {
            stop.await;
            trigger.cancel();
        });
        let system = state.system.clone();
        let sessions = state.accounts.sessions().clone();
        let mcp = state.agent.mcp().cloned();
        tokio::spawn(end_idle_sessions(sessions.clone(), mcp.clone(), state.shutdown.clone()));
        // The one scheduler of this data directory: the directory's lock makes it the only one.
        tokio::spawn(state.jobs.clone().run(state.shutdown.clone()));
        tokio::spawn(state.backups.clone().run_schedule(state.shutdown.clone()));
        let control = tokio::spawn(crate::backup::control::serve(
            data_dir.root().to_path_buf(),
            state.backups.clone(),
            state.shutdown.clone(),
        ));
        http::serve::serve(listener, http::router(state), connections, shutdown).await;
        tracing::info!("shutting down");
        // The control socket's file goes with the server that answered on it.
        let _ = control.await;
        // Every key is forgotten before the process goes, and no server outlives it.
        sessions.end_all().await;
        if let Some(mcp) = mcp {
            mcp.stop_all().await;
        }
        system.close().await;
        data_dir.remove_token();
        Ok(())
    }
}

/// Ends idle sessions in the background, so a key nobody uses does not stay in memory
/// until the next request happens to notice; and stops the MCP instances of people no
/// longer logged in (locked, idle, window closed), so none keeps running for them.
async fn end_idle_sessions(sessions: Sessions, mcp: Option<crate::mcp::Hub>, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(IDLE_SWEEP);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {
                let ended = sessions.end_idle().await;
                if ended > 0 {
                    tracing::info!(ended, "idle sessions locked");
                }
                if let Some(mcp) = &mcp {
                    for user in mcp.people_running() {
                        if sessions.count_user(&user) == 0 {
                            mcp.stop_person(&user).await;
                        }
                    }
                }
            }
        }
    }
}

/// Raises the soft open-file limit to the hard one: every connection holds a descriptor,
/// and a soft limit of 1024 is what another local account's idle sockets would exhaust
/// first. The limit in force afterwards.
fn raise_open_file_limit() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => {
            tracing::info!(open_files = limit, "open-file limit");
            limit
        }
        Err(err) => {
            let (soft, _) = rlimit::Resource::NOFILE.get().unwrap_or((1024, 1024));
            tracing::warn!(%err, open_files = soft, "could not raise the open-file limit");
            soft
        }
    }
}

/// Keeps key material out of core dumps and away from other processes of the same user
/// in release builds (§7): no core file, and not dumpable, so none can ptrace Skald or
/// read its memory through /proc. Debug builds keep both for debugging; they never hold
/// real people's keys.
pub fn harden_process() {
    if cfg!(debug_assertions) {
        return;
    }
    if let Err(err) = rlimit::setrlimit(rlimit::Resource::CORE, 0, 0) {
        tracing::warn!(%err, "could not disable core dumps");
    }
    #[cfg(target_os = "linux")]
    if let Err(err) = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable) {
        tracing::warn!(%err, "could not make the process undumpable");
    }
}
