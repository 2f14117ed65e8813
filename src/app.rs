//! The composition root: the one place that picks concrete types and wires them. Start-up
//! runs in an order that leaves nothing half-written on failure — bind the port, then
//! lock the data directory, then open the shared database, then write the token — and
//! shutdown runs it backwards after in-flight requests finish.

use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};

use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::error::StartError;
use crate::http::boundary::Boundary;
use crate::http::{self, AppState};
use crate::secret::LaunchToken;
use crate::store::{DataDir, SystemStore};

/// Binds 127.0.0.1 only — never 0.0.0.0 or `::` (§7). Port 0 takes any free port.
pub fn bind(port: u16) -> Result<std::net::TcpListener, StartError> {
    let fail = |source| StartError::Bind { port, source };
    let listener = std::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).map_err(fail)?;
    listener.set_nonblocking(true).map_err(fail)?;
    Ok(listener)
}

/// A server that is ready to accept: its port is bound, its data directory locked, its
/// database migrated and its token written.
pub struct App {
    listener: TcpListener,
    data_dir: DataDir,
    state: AppState,
    port: u16,
}

impl App {
    /// Must run inside a Tokio runtime.
    pub async fn start(listener: std::net::TcpListener, data_dir: DataDir) -> Result<Self, StartError> {
        let port = listener
            .local_addr()
            .map_err(|source| StartError::Bind { port: 0, source })?
            .port();
        let listener = TcpListener::from_std(listener).map_err(|source| StartError::Bind { port, source })?;
        let system = SystemStore::open(&data_dir.system_db()).await?;
        let launch_token = LaunchToken::generate();
        data_dir
            .write_token(launch_token.expose())
            .map_err(|source| StartError::Token {
                path: data_dir.token_file(),
                source,
            })?;
        let state = AppState {
            launch_token,
            system,
            boundary: Boundary::new(port),
            shutdown: CancellationToken::new(),
        };
        tracing::info!(port, data_dir = %data_dir.root().display(), version = crate::VERSION, "ready");
        Ok(Self {
            listener,
            data_dir,
            state,
            port,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn launch_token(&self) -> &LaunchToken {
        &self.state.launch_token
    }

    /// Serves until `stop` completes, then lets in-flight requests finish, closes live
    /// sockets, closes the database and removes the token file.
    pub async fn run(self, stop: impl Future<Output = ()> + Send + 'static) -> Result<(), StartError> {
        let Self {
            listener,
            data_dir,
            state,
            ..
        } = self;
        let shutdown = state.shutdown.clone();
        let trigger = shutdown.clone();
        tokio::spawn(async move {
            stop.await;
            trigger.cancel();
        });
        let system = state.system.clone();
        // Without TCP_NODELAY, Nagle's algorithm holds small streamed writes for ~40 ms.
        let listener = listener.tap_io(|tcp| {
            if let Err(err) = tcp.set_nodelay(true) {
                tracing::warn!(%err, "could not set TCP_NODELAY");
            }
        });
        let served = axum::serve(listener, http::router(state))
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await;
        tracing::info!("shutting down");
        system.close().await;
        data_dir.remove_token();
        served.map_err(StartError::Serve)
    }
}
