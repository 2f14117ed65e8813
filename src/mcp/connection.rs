//! One live connection to an MCP server (§12), on the official SDK: a stdio server started
//! as a helper process under [`crate::supervise`] (a cleared environment, its own process
//! group, stderr drained into a bounded tail) or a streamable HTTP server reached over
//! loopback or the home network. The handshake is made once per connection, at the
//! protocol the administrator chose; every request has the server's timeout; dropping a
//! call's future tells the server it was cancelled.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, Implementation, InitializeRequestParams,
    ProtocolVersion, Tool,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::RwLock;
use zeroize::Zeroizing;

use crate::supervise::{self, Exit, Helper};

/// How to reach a server.
pub enum Launch {
    Stdio(supervise::Spec),
    Http { url: String, token: Option<Zeroizing<String>>, client: reqwest013::Client },
}

/// Why a connection could not be made or a call could not finish.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("could not start {0}")]
    Spawn(String),
    #[error("the server did not complete the MCP handshake: {0}")]
    Handshake(String),
    #[error("the server did not answer within {0} s")]
    Timeout(u64),
    #[error("the server did not list its tools: {0}")]
    Listing(String),
}

/// A call that did not come back with a result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("the server did not answer within {0} s, so the call was cancelled")]
    Timeout(u64),
    #[error("the server stopped while the call ran")]
    Closed,
    #[error("the server refused the call: {0}")]
    Refused(String),
    #[error("the call failed: {0}")]
    Failed(String),
}

/// What a connection's handler shares with its owner: the tools the server lists, kept
/// current when it says its list changed.
#[derive(Default)]
pub struct Listing {
    pub tools: RwLock<Vec<Tool>>,
    /// Set when the server said its list changed; the owner reads it again and records it.
    pub changed: tokio::sync::Notify,
}

/// Skald's side of the protocol.
pub struct Handler {
    protocol: ProtocolVersion,
    listing: Arc<Listing>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> InitializeRequestParams {
        // Only what Skald answers is advertised: the SDK then refuses the rest for us.
        let capabilities = ClientCapabilities::default();
        let info = Implementation::new("skald", env!("CARGO_PKG_VERSION"));
        InitializeRequestParams::new(capabilities, info).with_protocol_version(self.protocol.clone())
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.listing.changed.notify_one();
    }
}

/// A live connection. Dropping it closes the session and kills a stdio server's process
/// group.
pub struct Connection {
    service: RunningService<RoleClient, Handler>,
    helper: Option<Helper>,
    pub listing: Arc<Listing>,
    timeout: Duration,
}

impl Connection {
    /// Starts or reaches the server, makes the handshake and reads its tools, all within
    /// `timeout`.
    pub async fn open(launch: Launch, protocol: &str, timeout: Duration) -> Result<Self, ConnectError> {
        let protocol =
            if protocol == "2026-07-28" { ProtocolVersion::V_2026_07_28 } else { ProtocolVersion::V_2025_11_25 };
        let listing = Arc::new(Listing::default());
        let handler = Handler { protocol, listing: listing.clone() };
        let seconds = timeout.as_secs();
        let (service, helper) = match launch {
            Launch::Stdio(spec) => {
                let mut helper = supervise::spawn(&spec)
                    .map_err(|err| ConnectError::Spawn(format!("{}: {err}", spec.program.display())))?;
                let (Some(stdout), Some(stdin)) = (helper.stdout.take(), helper.stdin.take()) else {
                    return Err(ConnectError::Spawn("its pipes were not open".into()));
                };
                let exited = helper.exited();
                let service = tokio::select! {
                    served = tokio::time::timeout(timeout, handler.serve((stdout, stdin))) => served,
                    exit = exited => return Err(ConnectError::Handshake(ended(&exit))),
                };
                (service, Some(helper))
            }
            Launch::Http { url, token, client } => {
                let mut config =
                    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url);
                if let Some(token) = token {
                    config = config.auth_header(token.as_str());
                }
                let transport = rmcp::transport::StreamableHttpClientTransport::with_client(client, config);
                (tokio::time::timeout(timeout, handler.serve(transport)).await, None)
            }
        };
        let service = service
            .map_err(|_| ConnectError::Timeout(seconds))?
            .map_err(|err| ConnectError::Handshake(err.to_string()))?;
        let connection = Self { service, helper, listing, timeout };
        connection.relist().await?;
        Ok(connection)
    }

    /// Reads the server's tools again.
    pub async fn relist(&self) -> Result<Vec<Tool>, ConnectError> {
        let listed = tokio::time::timeout(self.timeout, self.service.peer().list_all_tools())
            .await
            .map_err(|_| ConnectError::Timeout(self.timeout.as_secs()))?
            .map_err(|err| ConnectError::Listing(err.to_string()))?;
        *self.listing.tools.write().await = listed.clone();
        Ok(listed)
    }

    /// Calls a tool. Dropping the future (the person stopped the turn) sends the server
    /// `notifications/cancelled`, as the timeout does.
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<CallToolResult, CallError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let called = tokio::time::timeout(self.timeout, self.service.peer().call_tool(params));
        match called.await {
            Err(_) => Err(CallError::Timeout(self.timeout.as_secs())),
            Ok(Ok(result)) => Ok(result),
            Ok(Err(rmcp::ServiceError::McpError(err))) => Err(CallError::Refused(err.message.into_owned())),
            Ok(Err(rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_))) => {
                Err(CallError::Closed)
            }
            Ok(Err(other)) => Err(CallError::Failed(other.to_string())),
        }
    }

    /// Waits until a stdio server's process ends, however it ends; `None` for HTTP.
    pub fn ended(&self) -> Option<impl Future<Output = Exit> + Send + 'static> {
        self.helper.as_ref().map(Helper::exited)
    }

    /// Whether the session is over (the server went away).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed()
    }

    /// The process id of a stdio server.
    pub fn pid(&self) -> Option<u32> {
        self.helper.as_ref().map(|h| h.pid)
    }

    /// Closes the session (a bounded wait) and kills what is left.
    pub async fn close(mut self) {
        let _ = self.service.close_with_timeout(Duration::from_secs(2)).await;
        if let Some(helper) = &mut self.helper {
            helper.kill();
        }
    }
}

/// "it exited with code 1: <last line of stderr>".
pub fn ended(exit: &Exit) -> String {
    match exit.stderr_tail.last() {
        Some(line) => format!("it {}: {line}", exit.describe()),
        None => format!("it {}", exit.describe()),
    }
}

/// The working folder of one instance.
pub fn instance_dir(root: &std::path::Path, server: &str, owner: &str) -> PathBuf {
    root.join(server).join(owner)
}
