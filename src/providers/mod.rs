//! Model providers (§9): what a turn sends a model and what streams back, independent of
//! the wire protocol. Each protocol lives in its own module and turns its stream into
//! [`Delta`]s; [`retry`] decides what a failure deserves; [`catalogue`] picks a model.
//! [`admin`] and [`library`] are the administrators' services: providers and their keys,
//! and the built-in provider's model files.
//!
//! Never here: the history, tools or the person's store — the agent composes those.

pub mod admin;
pub mod anthropic;
pub mod audio;
pub mod catalogue;
pub mod detect;
pub mod gguf;
pub mod library;
pub mod local;
pub mod ollama;
pub mod openai;
pub mod privacy;
pub mod retry;
pub(crate) mod sse;
pub mod voice_catalogue;

use std::pin::Pin;
use std::time::Duration;

use futures_util::Stream;
use serde_json::Value;
use zeroize::Zeroizing;

use crate::store::providers::ProviderKind;
use crate::store::roles::PrivacyTier;

/// One message of a request's context, in the order the model reads them.
#[derive(Debug, Clone, PartialEq)]
pub enum ContextMessage {
    System(String),
    User(String),
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        call_id: String,
        content: String,
    },
    /// A picture that follows the person's message (§12.2).
    Picture(Picture),
}

/// A picture attached to a message: the document it is, and its bytes once read.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    pub document: crate::ids::DocumentId,
    pub media_type: String,
    /// The bytes in base64, read from the document when the request is composed; `None`
    /// when the document is no longer kept.
    pub data: Option<std::sync::Arc<str>>,
}

impl Picture {
    /// A picture of `media_type` with `data` (base64), as tests make them.
    #[cfg(test)]
    pub fn of(media_type: &str, data: Option<&str>) -> Self {
        Self {
            document: crate::ids::DocumentId::new("doc_test"),
            media_type: media_type.into(),
            data: data.map(Into::into),
        }
    }

    /// What a model reads in place of the picture, when it does not get the picture itself.
    pub fn stand_in(&self, images: bool) -> &'static str {
        if self.data.is_none() {
            "[a picture was attached here; it has since been deleted]"
        } else if images {
            "[a picture]"
        } else {
            "[a picture was attached here; this model does not read pictures]"
        }
    }

    /// The picture itself, when the model reads pictures and it is still kept.
    pub fn sent(&self, images: bool) -> Option<&str> {
        self.data.as_deref().filter(|_| images)
    }
}

/// A call the model asked for. `arguments` is the JSON text exactly as the model wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// Everything one model request carries.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<ContextMessage>,
    pub tools: Vec<ToolSpec>,
    /// An opaque key no one else's requests carry, for providers that keep prompt caches
    /// or abuse signals per end user (OpenAI's `prompt_cache_key`, Anthropic's
    /// `metadata.user_id`); none for requests composed before there was one.
    pub cache_key: Option<String>,
    /// The most the reply may be, in tokens; the provider's own bound when none (a tool
    /// server's sampling request states one).
    pub max_tokens: Option<u32>,
    /// The model reads pictures: [`ContextMessage::Picture`]s go as pictures, otherwise as
    /// a sentence saying one was there.
    pub images: bool,
}

/// A piece of a streamed reply.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Delta {
    Text(String),
    /// A fragment of the call at `index`: the first usually names it, later ones add to
    /// its arguments.
    ToolCall {
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
    Usage {
        input: u64,
        output: u64,
    },
    Finish(String),
}

/// The stream of a reply; each item is one server event's worth of deltas.
pub type DeltaStream = Pin<Box<dyn Stream<Item = Result<Vec<Delta>, ProviderError>> + Send>>;

/// Where a request goes: a provider's address and, opened just for this request, its key.
pub struct Endpoint {
    pub provider: String,
    /// The wire protocol.
    pub kind: ProviderKind,
    /// Whether words sent here stay on this machine or home network (§16).
    pub privacy: privacy::Tier,
    pub base_url: String,
    pub api_key: Option<Zeroizing<String>>,
    /// For the built-in provider, its models and whose request this is (what the engine
    /// caches of a prompt is reused only for the same person).
    pub local: Option<(local::LocalModels, crate::ids::UserId)>,
}

/// The body a request is sent with in a protocol, exactly.
pub fn body(kind: ProviderKind, request: &ChatRequest) -> Value {
    match kind {
        ProviderKind::Openai => openai::body(request),
        ProviderKind::Anthropic => anthropic::body(request),
        ProviderKind::Ollama => ollama::body(request),
        // The built-in model is given the same messages and tools, rendered by its template.
        ProviderKind::Local => openai::body(request),
    }
}

/// Tools as stored with a request record.
pub fn tools_to_json(tools: &[ToolSpec]) -> Value {
    tools
        .iter()
        .map(|t| serde_json::json!({ "name": t.name, "description": t.description, "parameters": t.parameters }))
        .collect()
}

/// Tools as read back from a request record.
pub fn tools_from_json(value: &Value) -> Vec<ToolSpec> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| ToolSpec {
            name: t["name"].as_str().unwrap_or_default().to_owned(),
            description: t["description"].as_str().unwrap_or_default().to_owned(),
            parameters: t["parameters"].clone(),
        })
        .collect()
}

/// Sends a request carrying a person's private content, in the endpoint's protocol; on
/// success, the reply's stream of deltas. Every such request passes here, so the privacy
/// tier of the person's role (§16) is checked here, before a byte leaves: a `local_only`
/// person's words never go to a remote provider, whichever feature sends them.
pub async fn start(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    request: &ChatRequest,
    privacy_tier: PrivacyTier,
) -> Result<DeltaStream, ProviderError> {
    if !catalogue::tier_allows(privacy_tier, endpoint.privacy) {
        return Err(ProviderError::Withheld(format!(
            "your role keeps your words on this computer, and {} is a remote service; nothing was sent",
            endpoint.provider
        )));
    }
    match endpoint.kind {
        ProviderKind::Openai => openai::start(client, endpoint, request).await,
        ProviderKind::Anthropic => anthropic::start(client, endpoint, request).await,
        ProviderKind::Ollama => ollama::start(client, endpoint, request).await,
        ProviderKind::Local => match &endpoint.local {
            Some((local, person)) => local.start(request, person).await,
            None => Err(unknown_kind(ProviderKind::Local)),
        },
    }
}

/// The models a provider lists, in its protocol.
pub async fn list_models(
    client: &reqwest::Client,
    endpoint: &Endpoint,
) -> Result<Vec<crate::store::providers::Model>, ProviderError> {
    match endpoint.kind {
        ProviderKind::Openai => openai::list_models(client, endpoint).await,
        ProviderKind::Anthropic => anthropic::list_models(client, endpoint).await,
        ProviderKind::Ollama => ollama::list_models(client, endpoint).await,
        ProviderKind::Local => Err(ProviderError::Local(
            "the built-in provider's models are files an administrator imports, not a list to read".to_owned(),
        )),
    }
}

/// A provider of a kind this build cannot speak to.
fn unknown_kind(kind: ProviderKind) -> ProviderError {
    ProviderError::Rejected {
        status: 0,
        message: format!("Skald cannot talk to {:?} providers in this build", kind.as_str()),
    }
}

/// The request with the endpoint's key as a bearer, if it has one.
pub(crate) fn bearer(builder: reqwest::RequestBuilder, endpoint: &Endpoint) -> reqwest::RequestBuilder {
    match &endpoint.api_key {
        Some(key) => builder.bearer_auth(key.as_str()),
        None => builder,
    }
}

/// Sends a JSON request body; the response if it succeeded, else why not.
pub(crate) async fn send_json(
    builder: reqwest::RequestBuilder,
    body: &Value,
) -> Result<reqwest::Response, ProviderError> {
    let response = builder.json(body).send().await.map_err(|err| ProviderError::from_transport(&err))?;
    checked(response).await
}

/// A model list or other small JSON a provider answers with.
pub(crate) async fn fetch_json(builder: reqwest::RequestBuilder) -> Result<Value, ProviderError> {
    let response =
        builder.timeout(Duration::from_secs(15)).send().await.map_err(|err| ProviderError::from_transport(&err))?;
    checked(response)
        .await?
        .json()
        .await
        .map_err(|err| ProviderError::Protocol(format!("the answer is not JSON: {err}")))
}

/// Tools in the `{"type":"function","function":{…}}` shape OpenAI and Ollama share.
pub(crate) fn function_tools(tools: &[ToolSpec]) -> Value {
    tools
        .iter()
        .map(|t| {
            serde_json::json!({ "type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters,
            }})
        })
        .collect()
}

/// A call's arguments as the JSON object protocols that want one need. Arguments the
/// model garbled were answered with an error already; they go back as `{}`.
pub(crate) fn arguments_object(arguments: &str) -> Value {
    serde_json::from_str::<Value>(arguments).ok().filter(Value::is_object).unwrap_or_else(|| serde_json::json!({}))
}

/// `{base}/{path}`, whatever the base's trailing slash.
pub(crate) fn url(endpoint: &Endpoint, path: &str) -> String {
    format!("{}/{path}", endpoint.base_url.trim_end_matches('/'))
}

/// The response if it succeeded, else its status and message as an error.
pub(crate) async fn checked(response: reqwest::Response) -> Result<reqwest::Response, ProviderError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let wait = retry_after(response.headers());
    Err(ProviderError::from_status(status.as_u16(), wait, error_message(response).await))
}

/// Why a provider did not answer, sorted by what to do about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// 401/403: the key is wrong or lacks access. Retrying cannot help.
    #[error("the model service refused the key (HTTP {status}): {message}")]
    Auth { status: u16, message: String },
    /// 429: try again after `retry_after`, if it said.
    #[error("the model service is rate-limiting requests: {message}")]
    RateLimited { retry_after: Option<Duration>, message: String },
    /// 5xx, overload, refused or dropped connections: may pass.
    #[error("the model service is unavailable: {message}")]
    Unavailable { status: Option<u16>, retry_after: Option<Duration>, message: String },
    /// 4xx other than the above: this request will not work as sent.
    #[error("the model service rejected the request (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },
    /// The reply did not follow the protocol.
    #[error("the model service sent a reply Skald cannot read: {0}")]
    Protocol(String),
    /// Skald refused to send the request at all (§16); nothing left the machine.
    #[error("Skald did not send this request: {0}")]
    Withheld(String),
    /// Nothing arrived for too long.
    #[error("the model service stopped sending for {} seconds", .0.as_secs())]
    Stalled(Duration),
    /// The built-in model cannot answer: it cannot load, does not fit or failed; the text
    /// says why and what to do. Retrying as is cannot help.
    #[error("{0}")]
    Local(String),
    /// The built-in model's worker process died while it served this request (a fault
    /// inside llama.cpp, an abort, a kill), or has died too often on this model to be
    /// started again yet. The text says which, and what to do.
    #[error("{0}")]
    LocalCrashed(String),
}

impl ProviderError {
    /// A stable code for the API and the record.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Auth { .. } => "provider_auth",
            Self::RateLimited { .. } => "provider_rate_limited",
            Self::Unavailable { .. } => "provider_unavailable",
            Self::Rejected { .. } => "provider_rejected",
            Self::Protocol(_) => "provider_protocol",
            Self::Stalled(_) => "provider_stalled",
            Self::Withheld(_) => "privacy_tier",
            Self::Local(_) => "local_model",
            Self::LocalCrashed(_) => "local_model_crashed",
        }
    }

    /// Whether the provider itself is down or overwhelmed, so another provider may do.
    pub fn is_outage(&self) -> bool {
        matches!(self, Self::Unavailable { .. } | Self::Stalled(_) | Self::RateLimited { .. })
    }

    /// What the person is told: what happened and what to do.
    pub fn advice(&self, provider: &str) -> String {
        match self {
            Self::Auth { .. } => {
                format!(
                    "{provider} refused the API key. An administrator can enter a valid key in Administration → Models."
                )
            }
            Self::RateLimited { retry_after, .. } => match retry_after {
                Some(wait) => {
                    format!("{provider} is rate-limiting requests. Try again in {} seconds.", wait.as_secs().max(1))
                }
                None => format!("{provider} is rate-limiting requests. Try again in a minute."),
            },
            Self::Unavailable { .. } => {
                format!("{provider} cannot be reached or is overloaded ({self}). Try again later.")
            }
            Self::Rejected { .. } => format!("{provider} rejected the request ({self})."),
            Self::Protocol(_) | Self::Stalled(_) => format!("{provider} failed mid-reply ({self}). Try again."),
            Self::Withheld(why) | Self::Local(why) | Self::LocalCrashed(why) => why.clone(),
        }
    }

    /// Classifies an HTTP error status and the body's message.
    pub fn from_status(status: u16, retry_after: Option<Duration>, message: String) -> Self {
        match status {
            401 | 403 => Self::Auth { status, message },
            429 => Self::RateLimited { retry_after, message },
            408 | 409 | 425 | 500..=599 => Self::Unavailable { status: Some(status), retry_after, message },
            _ => Self::Rejected { status, message },
        }
    }

    /// Classifies a transport failure (no HTTP answer at all).
    pub fn from_transport(err: &reqwest::Error) -> Self {
        let what = if err.is_connect() {
            "could not connect"
        } else if err.is_timeout() {
            "timed out"
        } else {
            "the connection failed"
        };
        // The error's own text names the URL, never a key or any content.
        Self::Unavailable { status: None, retry_after: None, message: format!("{what}: {}", root_cause(err)) }
    }
}

fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// The one HTTP client every provider request goes through: connection reuse, no Nagle
/// delay on streamed bytes, and a bounded connect.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(10))
        .pool_idle_timeout(Duration::from_secs(90))
        .user_agent(concat!("skald/", env!("CARGO_PKG_VERSION")))
        // A redirect could carry a request classified as local (§16) to another host, and
        // so could a proxy from the environment (HTTP_PROXY): requests go direct, always.
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .expect("the HTTP client builds with static settings")
}

/// The most of an error body Skald reads: enough for the provider's message.
const ERROR_BODY_LIMIT: usize = 16 * 1024;

/// The message inside an error response body (`{"error":{"message":…}}` and its
/// variants), or the body's start.
pub async fn error_message(response: reqwest::Response) -> String {
    use futures_util::StreamExt;
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    let read = async {
        while let Some(Ok(chunk)) = stream.next().await {
            body.extend_from_slice(&chunk);
            if body.len() >= ERROR_BODY_LIMIT {
                body.truncate(ERROR_BODY_LIMIT);
                break;
            }
        }
    };
    // An error body that trickles in forever must not hold the turn.
    let _ = tokio::time::timeout(ERROR_BODY_TIME, read).await;
    message_in(&body)
}

/// How long Skald waits for an error body.
const ERROR_BODY_TIME: Duration = Duration::from_secs(10);

fn message_in(body: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        let found = [&value["error"]["message"], &value["error"], &value["message"], &value["detail"]]
            .into_iter()
            .find_map(|v| v.as_str().map(str::to_owned));
        if let Some(message) = found {
            return message;
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() { "no details given".to_owned() } else { text.chars().take(300).collect() }
}

/// `Retry-After` as seconds or an HTTP date.
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(std::time::SystemTime::now()).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_local_only_persons_request_to_a_remote_endpoint_is_withheld_before_connecting() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = Endpoint {
            provider: "cloud".into(),
            kind: ProviderKind::Openai,
            privacy: privacy::Tier::Remote,
            base_url: format!("http://{}/v1", listener.local_addr().unwrap()),
            api_key: None,
            local: None,
        };
        let request = ChatRequest {
            model: "m".into(),
            messages: vec![ContextMessage::User("secret".into())],
            tools: vec![],
            cache_key: None,
            max_tokens: None,
            images: false,
        };
        let refused = start(&http_client(), &endpoint, &request, PrivacyTier::LocalOnly).await.err().unwrap();
        assert_eq!(refused.code(), "privacy_tier");
        assert!(refused.advice("cloud").contains("nothing was sent"));
        let accepted = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
        assert!(accepted.is_err(), "no connection was made");
    }

    #[test]
    fn statuses_sort_into_what_to_do() {
        assert_eq!(ProviderError::from_status(401, None, "x".into()).code(), "provider_auth");
        assert_eq!(ProviderError::from_status(403, None, "x".into()).code(), "provider_auth");
        assert_eq!(ProviderError::from_status(429, None, "x".into()).code(), "provider_rate_limited");
        assert_eq!(ProviderError::from_status(503, None, "x".into()).code(), "provider_unavailable");
        assert_eq!(ProviderError::from_status(529, None, "x".into()).code(), "provider_unavailable");
        assert_eq!(ProviderError::from_status(400, None, "x".into()).code(), "provider_rejected");
    }

    #[test]
    fn the_providers_message_is_found_in_its_error_body() {
        assert_eq!(message_in(br#"{"error":{"message":"Incorrect API key"}}"#), "Incorrect API key");
        assert_eq!(message_in(br#"{"error":"model not found"}"#), "model not found");
        assert_eq!(message_in(b"Bad Gateway"), "Bad Gateway");
        assert_eq!(message_in(b""), "no details given");
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::RETRY_AFTER, "7".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert(reqwest::header::RETRY_AFTER, "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::ZERO), "a date in the past means now");
        headers.insert(reqwest::header::RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
    }
}
