//! One live connection to an MCP server (§12), on the official SDK: a stdio server started
//! as a helper process under [`crate::supervise`] (a cleared environment, its own process
//! group, stderr drained into a bounded tail) or a streamable HTTP server reached over
//! loopback or the home network. The handshake is made once per connection, at the
//! protocol the administrator chose; every request has the server's timeout; dropping a
//! call's future tells the server it was cancelled.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    ClientCapabilities, ClientRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    ErrorData, FormElicitationCapability, Implementation, InitializeRequestParams, InputRequest,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, RootsCapabilities, ServerResult, Tool,
};
// Roots are protocol 2025-11-25's, Skald's default; SEP-2577 deprecates them from
// 2026-07-28 on, and they are answered for as long as a server asks.
#[allow(deprecated)]
use rmcp::model::{ListRootsResult, Root};
// Sampling likewise: SEP-2577 deprecates it from 2026-07-28 on; it is offered at 2025-11-25 only.
#[allow(deprecated, reason = "sampling is answered on connections at protocol 2025-11-25 only")]
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::RwLock;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use zeroize::Zeroizing;

use super::sampling::{self, SampleRequest, Sampled};
use crate::supervise::{self, Exit, Helper};

/// How many times one call may come back asking for input (protocol 2026-07-28).
const MAX_INPUT_ROUNDS: usize = 8;

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

/// The person a call is made for, as the server's questions and progress reach them
/// (§8.5). The agent makes one per call.
pub trait Asker: Send + Sync {
    /// Whose call it is. A question goes only to the person who made the call.
    fn owner(&self) -> &str;
    /// Puts the server's question to the person; resolves with their reply. Dropped,
    /// unanswered, when the call ends first.
    fn ask(&self, question: Question) -> BoxFuture<'static, Reply>;
    /// The server's word on how far the call got.
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>);
    /// Puts the server's request for a model's answer to the person and, if they allow
    /// it, has their model answer; the error is what the server is told. Dropped,
    /// undecided, when the call ends first.
    fn sample(&self, request: SampleRequest) -> BoxFuture<'static, Result<Sampled, String>>;
}

/// What a server asks the person (a form elicitation): its words and the form's schema
/// (an object of primitive fields).
#[derive(Debug, Clone)]
pub struct Question {
    pub message: String,
    pub schema: Value,
}

/// The person's reply to a question, as the server receives it.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Accept(serde_json::Map<String, Value>),
    Decline,
    Cancel,
}

/// One call in flight on a connection.
struct Call {
    /// The progress token the SDK gave its request.
    token: Mutex<Option<ProgressToken>>,
    asker: Arc<dyn Asker>,
    /// Cancelled when the call ends, however it ends: a question still open is withdrawn.
    gone: CancellationToken,
    /// Questions open on the person now: the server's timeout does not run meanwhile.
    asking: AtomicUsize,
    /// When the person last answered: the server's time starts again from there.
    answered_at: Mutex<Option<Instant>>,
}

impl Call {
    /// Waits for what the person was asked, the server's clock stopped meanwhile; `None`
    /// when the server cancelled its request or the call ended first.
    async fn waiting<T>(&self, asked: BoxFuture<'static, T>, cancelled: Option<&CancellationToken>) -> Option<T> {
        let never = CancellationToken::new();
        let cancelled = cancelled.unwrap_or(&never);
        self.asking.fetch_add(1, Ordering::AcqRel);
        let answer = tokio::select! {
            answer = asked => Some(answer),
            () = cancelled.cancelled() => None,
            () = self.gone.cancelled() => None,
        };
        *self.answered_at.lock().expect("mcp call") = Some(Instant::now());
        self.asking.fetch_sub(1, Ordering::AcqRel);
        answer
    }

    /// A later deadline for a call whose time ran out while, or since, the person was
    /// asked something: the server's timeout counts the server's time, not theirs.
    fn extended(&self, timeout: Duration) -> Option<Instant> {
        if self.asking.load(Ordering::Acquire) > 0 {
            return Some(Instant::now() + timeout);
        }
        let answered = *self.answered_at.lock().expect("mcp call");
        answered.map(|at| at + timeout).filter(|later| *later > Instant::now())
    }
}

/// The calls in flight on a connection, for the questions and progress the server sends.
#[derive(Default)]
struct InFlight {
    calls: Mutex<Vec<Arc<Call>>>,
}

impl InFlight {
    fn enter(self: &Arc<Self>, asker: Arc<dyn Asker>) -> Entered {
        let call = Arc::new(Call {
            token: Mutex::new(None),
            asker,
            gone: CancellationToken::new(),
            asking: AtomicUsize::new(0),
            answered_at: Mutex::new(None),
        });
        self.calls.lock().expect("mcp calls").push(call.clone());
        Entered { in_flight: self.clone(), call }
    }

    /// The call a question is about. A server's request names no call over stdio, so it
    /// is the latest call when every call in flight is one person's; with several people's
    /// calls on a shared server, none: their questions are never shown to someone else.
    fn asked(&self) -> Option<Arc<Call>> {
        let calls = self.calls.lock().expect("mcp calls");
        let last = calls.last()?;
        calls.iter().all(|c| c.asker.owner() == last.asker.owner()).then(|| last.clone())
    }

    fn by_token(&self, token: &ProgressToken) -> Option<Arc<Call>> {
        let calls = self.calls.lock().expect("mcp calls");
        calls.iter().find(|c| c.token.lock().expect("mcp call").as_ref() == Some(token)).cloned()
    }
}

/// A call's place among those in flight, given up when the call ends.
struct Entered {
    in_flight: Arc<InFlight>,
    call: Arc<Call>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        self.call.gone.cancel();
        self.in_flight.calls.lock().expect("mcp calls").retain(|c| !Arc::ptr_eq(c, &self.call));
    }
}

/// Puts a server's form to the person a call is for and returns their reply as the
/// server takes it. The question is withdrawn when the call ends or the server cancels it.
async fn elicit(call: &Call, request: ElicitRequestParams, cancelled: Option<&CancellationToken>) -> ElicitResult {
    let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request else {
        // Not offered: a URL elicitation would send the person to a page of the server's.
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
    let asked = call.asker.ask(Question { message, schema });
    match call.waiting(asked, cancelled).await.unwrap_or(Reply::Cancel) {
        Reply::Accept(content) => ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)),
        Reply::Decline => ElicitResult::new(ElicitationAction::Decline),
        Reply::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    }
}

/// Skald's side of the protocol.
pub struct Handler {
    protocol: ProtocolVersion,
    listing: Arc<Listing>,
    in_flight: Arc<InFlight>,
    /// The folders the administrator listed for this server, told when it asks.
    roots: Vec<PathBuf>,
}

/// Whether a connection at `protocol` is offered sampling: 2026-07-28 deprecates it.
fn samples(protocol: &ProtocolVersion) -> bool {
    *protocol == ProtocolVersion::V_2025_11_25
}

impl ClientHandler for Handler {
    fn get_info(&self) -> InitializeRequestParams {
        // Only what Skald answers is advertised: the SDK then refuses the rest for us.
        // Forms only: a URL elicitation would send the person to a page of the server's.
        let mut capabilities = ClientCapabilities::default();
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::new());
        capabilities.elicitation = Some(elicitation);
        if !self.roots.is_empty() {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        // Every request for a model's answer waits on the person's card (agent::forms).
        if samples(&self.protocol) {
            #[allow(deprecated, reason = "sampling is deprecated from protocol 2026-07-28 on, offered only before")]
            let offered = rmcp::model::SamplingCapability::default();
            capabilities.sampling = Some(offered);
        }
        let info = Implementation::new("skald", env!("CARGO_PKG_VERSION"));
        InitializeRequestParams::new(capabilities, info).with_protocol_version(self.protocol.clone())
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.listing.changed.notify_one();
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(call) = self.in_flight.asked() else {
            tracing::warn!("an MCP server asked a question outside one person's call; it was declined");
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        Ok(elicit(&call, request, Some(&context.ct)).await)
    }

    #[allow(deprecated, reason = "sampling is answered on connections at protocol 2025-11-25 only")]
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        if !samples(&self.protocol) {
            return Err(ErrorData::invalid_request("sampling was not offered on this connection", None));
        }
        let Some(call) = self.in_flight.asked() else {
            tracing::warn!("an MCP server asked for a model's answer outside one person's call; it was refused");
            return Err(ErrorData::invalid_request("Skald answers sampling only during a person's tool call", None));
        };
        let request = sampling::read(params).map_err(|why| ErrorData::invalid_params(why, None))?;
        let asked = call.asker.sample(request);
        match call.waiting(asked, Some(&context.ct)).await {
            Some(Ok(sampled)) => Ok(sampling::result(sampled)),
            // The protocol's code for a person who declined: -1.
            Some(Err(why)) => Err(ErrorData::new(rmcp::model::ErrorCode(-1), why, None)),
            None => Err(ErrorData::new(rmcp::model::ErrorCode(-1), "the call ended before the person decided", None)),
        }
    }

    #[allow(deprecated)]
    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        Ok(roots_result(&self.roots))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        if let Some(call) = self.in_flight.by_token(&params.progress_token) {
            call.asker.progress(params.progress, params.total, params.message);
        }
    }
}

/// A live connection. Dropping it closes the session and kills a stdio server's process
/// group.
pub struct Connection {
    service: RunningService<RoleClient, Handler>,
    helper: Option<Helper>,
    pub listing: Arc<Listing>,
    in_flight: Arc<InFlight>,
    timeout: Duration,
    roots: Vec<PathBuf>,
}

/// What a start (the spawn, the runtime's own start-up, the handshake and the first listing)
/// is given at least. The administrator's timeout is a call's: an interpreter that imports
/// its SDK can take several seconds on a busy machine, which says nothing of its calls.
const START_ALLOWANCE: Duration = Duration::from_secs(30);

impl Connection {
    /// Starts or reaches the server, makes the handshake and reads its tools, all within
    /// `timeout` or [`START_ALLOWANCE`], whichever is longer.
    pub async fn open(
        launch: Launch,
        protocol: &str,
        timeout: Duration,
        roots: Vec<PathBuf>,
    ) -> Result<Self, ConnectError> {
        let protocol =
            if protocol == "2026-07-28" { ProtocolVersion::V_2026_07_28 } else { ProtocolVersion::V_2025_11_25 };
        let listing = Arc::new(Listing::default());
        let in_flight = Arc::new(InFlight::default());
        let handler =
            Handler { protocol, listing: listing.clone(), in_flight: in_flight.clone(), roots: roots.clone() };
        let start = timeout.max(START_ALLOWANCE);
        let (service, helper) = match launch {
            Launch::Stdio(spec) => {
                let mut helper = supervise::spawn(&spec)
                    .map_err(|err| ConnectError::Spawn(format!("{}: {err}", spec.program.display())))?;
                let (Some(stdout), Some(stdin)) = (helper.stdout.take(), helper.stdin.take()) else {
                    return Err(ConnectError::Spawn("its pipes were not open".into()));
                };
                let exited = helper.exited();
                let service = tokio::select! {
                    served = tokio::time::timeout(start, handler.serve((stdout, stdin))) => served,
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
                (tokio::time::timeout(start, handler.serve(transport)).await, None)
            }
        };
        let service = service
            .map_err(|_| ConnectError::Timeout(start.as_secs()))?
            .map_err(|err| ConnectError::Handshake(err.to_string()))?;
        let connection = Self { service, helper, listing, in_flight, timeout, roots };
        connection.list_within(start).await?;
        Ok(connection)
    }

    /// Reads the server's tools again.
    pub async fn relist(&self) -> Result<Vec<Tool>, ConnectError> {
        self.list_within(self.timeout).await
    }

    async fn list_within(&self, limit: Duration) -> Result<Vec<Tool>, ConnectError> {
        let listed = tokio::time::timeout(limit, self.service.peer().list_all_tools())
            .await
            .map_err(|_| ConnectError::Timeout(limit.as_secs()))?
            .map_err(|err| ConnectError::Listing(err.to_string()))?;
        *self.listing.tools.write().await = listed.clone();
        Ok(listed)
    }

    /// Calls a tool for the person `asker` speaks for (none for a probe): the server's
    /// questions and progress reach them. The timeout counts the server's time only, not
    /// the person's over a question. Dropping the future (the person stopped the turn)
    /// sends the server `notifications/cancelled`, as the timeout does, and withdraws a
    /// question still open.
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        asker: Option<Arc<dyn Asker>>,
    ) -> Result<CallToolResult, CallError> {
        let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let entered = asker.map(|asker| self.in_flight.enter(asker));
        let mut deadline = Instant::now() + self.timeout;
        for _ in 0..MAX_INPUT_ROUNDS {
            let called = self.call_once(params.clone(), entered.as_ref());
            tokio::pin!(called);
            let outcome = loop {
                tokio::select! {
                    outcome = &mut called => break outcome,
                    () = tokio::time::sleep_until(deadline) => {
                        match entered.as_ref().and_then(|e| e.call.extended(self.timeout)) {
                            Some(later) => deadline = later,
                            None => return Err(CallError::Timeout(self.timeout.as_secs())),
                        }
                    }
                }
            };
            let needs = match outcome {
                Ok(CallToolResponse::Complete(result)) => return Ok(result),
                Ok(CallToolResponse::InputRequired(needs)) => needs,
                Ok(_) => {
                    return Err(CallError::Failed("the server answered with something other than a result".into()));
                }
                Err(rmcp::ServiceError::McpError(err)) => return Err(CallError::Refused(err.message.into_owned())),
                Err(rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_)) => {
                    return Err(CallError::Closed);
                }
                Err(other) => return Err(CallError::Failed(other.to_string())),
            };
            // Protocol 2026-07-28: the server's questions come back as the call's result,
            // and the call is made again with the answers and the server's state.
            let asked = needs.input_requests.as_ref().map_or(0, BTreeMap::len);
            tracing::debug!(tool, asked, "an MCP call came back asking for input");
            let mut answers = BTreeMap::new();
            for (key, request) in needs.input_requests.unwrap_or_default() {
                let answer = match (request, entered.as_ref()) {
                    (InputRequest::Elicitation(request), Some(entered)) => {
                        serde_json::to_value(elicit(&entered.call, request.params, None).await)
                    }
                    (InputRequest::ListRoots(_), _) => serde_json::to_value(roots_result(&self.roots)),
                    _ => serde_json::to_value(ElicitResult::new(ElicitationAction::Decline)),
                };
                answers.insert(key, answer.unwrap_or_default());
            }
            params.input_responses = Some(answers);
            params.request_state = needs.request_state;
        }
        Err(CallError::Failed(format!("the server asked for input more than {MAX_INPUT_ROUNDS} times")))
    }

    /// Sends one `tools/call` and waits for its answer, the call's progress token noted
    /// for the notifications that name it (the SDK sets its own on every request). Dropped
    /// before the answer, it tells the server the call was cancelled.
    async fn call_once(
        &self,
        params: CallToolRequestParams,
        entered: Option<&Entered>,
    ) -> Result<CallToolResponse, rmcp::ServiceError> {
        let peer = self.service.peer();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = peer.send_cancellable_request(request, PeerRequestOptions::no_options()).await?;
        if let Some(entered) = entered {
            *entered.call.token.lock().expect("mcp call") = Some(handle.progress_token.clone());
        }
        let mut abandoned = Abandoned { peer: peer.clone(), id: Some(handle.id.clone()) };
        let answer = handle.await_response().await;
        abandoned.id = None;
        match answer? {
            ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
            ServerResult::InputRequiredResult(needs) => Ok(CallToolResponse::InputRequired(needs)),
            _ => Err(rmcp::ServiceError::UnexpectedResponse),
        }
    }

    /// The prompts the server lists; none when it offers none.
    pub async fn prompts(&self) -> Result<Vec<rmcp::model::Prompt>, CallError> {
        let offers = self.service.peer_info().is_some_and(|info| info.capabilities.prompts.is_some());
        if !offers {
            return Ok(Vec::new());
        }
        match tokio::time::timeout(self.timeout, self.service.peer().list_all_prompts()).await {
            Err(_) => Err(CallError::Timeout(self.timeout.as_secs())),
            Ok(Ok(prompts)) => Ok(prompts),
            Ok(Err(err)) => Err(CallError::Failed(err.to_string())),
        }
    }

    /// The resources the server lists; none when it offers none.
    pub async fn resources(&self) -> Result<Vec<rmcp::model::Resource>, CallError> {
        let offers = self.service.peer_info().is_some_and(|info| info.capabilities.resources.is_some());
        if !offers {
            return Ok(Vec::new());
        }
        match tokio::time::timeout(self.timeout, self.service.peer().list_all_resources()).await {
            Err(_) => Err(CallError::Timeout(self.timeout.as_secs())),
            Ok(Ok(resources)) => Ok(resources),
            Ok(Err(err)) => Err(CallError::Failed(err.to_string())),
        }
    }

    /// What one resource holds.
    pub async fn read(&self, uri: &str) -> Result<rmcp::model::ReadResourceResult, CallError> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        match tokio::time::timeout(self.timeout, self.service.read_resource(params)).await {
            Err(_) => Err(CallError::Timeout(self.timeout.as_secs())),
            Ok(Ok(read)) => Ok(read),
            Ok(Err(rmcp::ServiceError::McpError(err))) => Err(CallError::Refused(err.message.into_owned())),
            Ok(Err(err)) => Err(CallError::Failed(err.to_string())),
        }
    }

    /// One prompt, filled with `arguments`.
    pub async fn prompt(
        &self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<rmcp::model::GetPromptResult, CallError> {
        let mut params = rmcp::model::GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        match tokio::time::timeout(self.timeout, self.service.get_prompt(params)).await {
            Err(_) => Err(CallError::Timeout(self.timeout.as_secs())),
            Ok(Ok(got)) => Ok(got),
            Ok(Err(rmcp::ServiceError::McpError(err))) => Err(CallError::Refused(err.message.into_owned())),
            Ok(Err(err)) => Err(CallError::Failed(err.to_string())),
        }
    }

    /// Waits until a stdio server's process ends, however it ends; `None` for HTTP.
    pub fn ended(&self) -> Option<impl Future<Output = Exit> + Send + 'static> {
        self.helper.as_ref().map(Helper::exited)
    }

    /// Whether the session is over: the server went away, or its process ended (which the
    /// session may notice only at its next message).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.helper.as_ref().is_some_and(Helper::has_ended)
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

/// A request still waiting when its future is dropped: the server is told it was cancelled.
struct Abandoned {
    peer: rmcp::Peer<RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        tokio::spawn(async move {
            let cancelled = CancelledNotificationParam::new(Some(id), Some("the person stopped the call".into()));
            let _ = peer.notify_cancelled(cancelled).await;
        });
    }
}

/// The roots as the protocol states them: `file://` URIs, named by their last part.
#[allow(deprecated)]
fn roots_result(roots: &[PathBuf]) -> ListRootsResult {
    let roots = roots
        .iter()
        .filter_map(|path| {
            let uri = url::Url::from_directory_path(path).ok()?;
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let mut root = Root::new(uri.to_string());
            root.name = name;
            Some(root)
        })
        .collect();
    ListRootsResult::new(roots)
}

/// The working folder of one instance.
pub fn instance_dir(root: &std::path::Path, server: &str, owner: &str) -> PathBuf {
    root.join(server).join(owner)
}
