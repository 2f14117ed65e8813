//! The HTTP error boundary: every failure a route can return, mapped to a status and the
//! contract's body `{"error":{"code","message"}}` in one place. Each boundary below has one
//! error enum — the store's, the accounts', the turn's, provider administration's, the
//! model library's — and this file is the only place any of them becomes an [`ApiError`].
//! Internal details are logged once, when the response is made, and never sent.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::agent::definition::DefinitionError;
use crate::agent::documents::UploadError;
use crate::agent::inbox::DecisionError;
use crate::agent::{RebuildError, TurnError};
use crate::export::ExportError;
use crate::extract::Refused;
use crate::providers::admin::AdminError;
use crate::providers::library::LibraryError;
use crate::providers::local::ImportError;
use crate::store::StoreError;
use crate::users::AccountError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{message}")]
    Unauthorized { code: &'static str, message: &'static str },
    #[error("{message}")]
    Forbidden { code: &'static str, message: &'static str },
    #[error("{message}")]
    BadRequest { code: &'static str, message: String },
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    #[error("{message}")]
    TooManyRequests { retry_after: std::time::Duration, message: String },
    /// 403 with a message that names what was refused.
    #[error("{message}")]
    Refused { code: &'static str, message: String },
    /// 404 for a thing, not a route.
    #[error("{message}")]
    Missing { code: &'static str, message: String },
    /// 502: a service Skald depends on answered badly or not at all.
    #[error("{message}")]
    Upstream { code: &'static str, message: String },
    /// 429: the caller already holds as many of something as one may.
    #[error("{message}")]
    TooMany { code: &'static str, message: String },
    /// 429 for a daily usage cap: not a rate limit to retry in seconds.
    #[error("{message}")]
    OverCap { message: String },
    /// 413: the body is larger than the route takes.
    #[error("{message}")]
    TooLarge { message: String },
    /// 415: the body is not a kind of thing the route takes.
    #[error("{message}")]
    Unsupported { code: &'static str, message: String },
    /// 503: Skald cannot do this right now, and says why.
    #[error("{message}")]
    Unavailable { code: &'static str, message: String },
    #[error("no such route")]
    NotFound,
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    /// A failure inside Skald, logged once when its response is made.
    pub fn internal(err: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Internal(Box::new(err))
    }

    pub fn unauthorized() -> Self {
        Self::Unauthorized { code: "unauthorized", message: "missing or invalid bearer token" }
    }

    fn status(&self) -> StatusCode {
        match self {
            Self::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. } => StatusCode::FORBIDDEN,
            Self::BadRequest { .. } => StatusCode::BAD_REQUEST,
            Self::Conflict { .. } => StatusCode::CONFLICT,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Refused { .. } => StatusCode::FORBIDDEN,
            Self::OverCap { .. } | Self::TooMany { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Missing { .. } => StatusCode::NOT_FOUND,
            Self::Upstream { .. } => StatusCode::BAD_GATEWAY,
            Self::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Unsupported { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn code(&self) -> &'static str {
        match self {
            Self::Unauthorized { code, .. }
            | Self::Forbidden { code, .. }
            | Self::BadRequest { code, .. }
            | Self::Conflict { code, .. }
            | Self::Refused { code, .. }
            | Self::TooMany { code, .. }
            | Self::Missing { code, .. }
            | Self::Upstream { code, .. }
            | Self::Unsupported { code, .. }
            | Self::Unavailable { code, .. } => code,
            Self::TooLarge { .. } => "too_large",
            Self::TooManyRequests { .. } => "rate_limited",
            Self::OverCap { .. } => "usage_cap",
            Self::NotFound => "not_found",
            Self::Internal(_) => "internal",
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        Self::Internal(Box::new(err))
    }
}

/// What a route asked the store about, so that the store's refusals name it: a missing
/// row is 404 with the thing's own code, a refused value 400.
#[derive(Debug, Clone, Copy)]
pub enum Subject {
    Conversation,
    Note,
    Rule,
}

impl ApiError {
    /// The store's failure for a route about `subject`.
    pub fn about(subject: Subject) -> impl Fn(StoreError) -> Self {
        move |err| match (subject, err) {
            (Subject::Conversation, StoreError::NotFound) => TurnError::NoSession.into(),
            (Subject::Note, StoreError::NotFound) => Self::no_note(),
            (Subject::Note, StoreError::WrongState(why)) => {
                Self::BadRequest { code: "invalid_note", message: why.to_owned() }
            }
            (Subject::Rule, StoreError::NotFound) => {
                Self::Missing { code: "no_rule", message: "there is no such rule".into() }
            }
            (Subject::Rule, StoreError::WrongState(why)) => {
                Self::BadRequest { code: "unknown_role", message: why.into() }
            }
            (_, other) => other.into(),
        }
    }

    pub fn no_document() -> Self {
        Self::Missing { code: "no_document", message: "there is no such document you can read".into() }
    }

    pub fn no_note() -> Self {
        Self::Missing { code: "no_note", message: "there is no such note".into() }
    }

    /// An agent an administrator wrote that does not load is their request's fault (400),
    /// not a stored agent gone bad (409).
    pub fn saving_agent(err: TurnError) -> Self {
        match err {
            TurnError::Agent(invalid) => Self::BadRequest { code: "agent_invalid", message: invalid.to_string() },
            other => other.into(),
        }
    }

    /// Role attributes that do not parse.
    pub fn invalid_role(err: &serde_json::Error) -> Self {
        Self::BadRequest { code: "invalid_role", message: err.to_string() }
    }
}

/// An agent asked for by id (`GET /api/agents/{id}`).
impl From<DefinitionError> for ApiError {
    fn from(err: DefinitionError) -> Self {
        let message = err.to_string();
        match err {
            DefinitionError::Unknown(_) => Self::Missing { code: "unknown_agent", message },
            DefinitionError::Malformed { .. } => Self::Conflict { code: "agent_invalid", message },
        }
    }
}

impl From<DecisionError> for ApiError {
    fn from(err: DecisionError) -> Self {
        let message = err.to_string();
        match err {
            DecisionError::NotFound => Self::Missing { code: "no_card", message },
            DecisionError::AlreadyDecided => Self::Conflict { code: "already_decided", message },
            DecisionError::Changed => Self::Conflict { code: "card_changed", message },
            DecisionError::MayNotApprove => Self::Refused { code: "may_not_approve", message },
            DecisionError::AlwaysNotPermitted(_) => Self::Refused { code: "always_not_permitted", message },
            DecisionError::WrongKind(_) => Self::BadRequest { code: "wrong_card_kind", message },
            DecisionError::BadAnswer => Self::BadRequest { code: "invalid_answer", message },
            DecisionError::BadForm(_) => Self::BadRequest { code: "invalid_form", message },
            DecisionError::Turn(turn) => turn.into(),
        }
    }
}

impl From<RebuildError> for ApiError {
    fn from(err: RebuildError) -> Self {
        let message = err.to_string();
        match err {
            RebuildError::Store(store) => store.into(),
            RebuildError::NotFound => Self::Missing { code: "no_request", message },
            RebuildError::OtherVersion(_) => Self::Conflict { code: "render_version", message },
        }
    }
}

impl From<ExportError> for ApiError {
    fn from(err: ExportError) -> Self {
        match err {
            ExportError::Store(store) => store.into(),
            other => Self::Internal(Box::new(other)),
        }
    }
}

impl From<AdminError> for ApiError {
    fn from(err: AdminError) -> Self {
        let message = err.to_string();
        match err {
            AdminError::InvalidName => Self::BadRequest { code: "invalid_name", message },
            AdminError::InvalidKind(_) => Self::BadRequest { code: "invalid_kind", message },
            AdminError::InvalidBaseUrl(_) => Self::BadRequest { code: "invalid_base_url", message },
            AdminError::InvalidModel(_) => Self::BadRequest { code: "invalid_model", message },
            AdminError::NoProvider => Self::Missing { code: "no_provider", message },
            AdminError::NameTaken => Self::Conflict { code: "name_taken", message },
            AdminError::BuiltIn(_) => Self::Conflict { code: "built_in_provider", message },
            AdminError::Unreachable { code, message } => Self::Upstream { code, message },
            AdminError::NoModels(_) => Self::Upstream { code: "no_models", message },
            AdminError::Sealing(_) => Self::Unavailable { code: "secrets_unavailable", message },
            AdminError::Task(task) => Self::Internal(Box::new(task)),
            AdminError::Store(store) => store.into(),
        }
    }
}

impl From<crate::mcp::admin::McpError> for ApiError {
    fn from(err: crate::mcp::admin::McpError) -> Self {
        use crate::mcp::admin::McpError;
        let message = err.to_string();
        match err {
            McpError::InvalidName => Self::BadRequest { code: "invalid_name", message },
            McpError::Invalid(_) => Self::BadRequest { code: "invalid_mcp_server", message },
            McpError::NoServer => Self::Missing { code: "no_mcp_server", message },
            McpError::NameTaken => Self::Conflict { code: "name_taken", message },
            McpError::Sealing(_) => Self::Unavailable { code: "secrets_unavailable", message },
            McpError::Unreachable(_) => Self::Upstream { code: "mcp_unreachable", message },
            McpError::Store(store) => store.into(),
        }
    }
}

impl From<crate::jobs::JobError> for ApiError {
    fn from(err: crate::jobs::JobError) -> Self {
        use crate::jobs::JobError;
        let message = err.to_string();
        match err {
            JobError::Schedule(_) => Self::BadRequest { code: "invalid_schedule", message },
            JobError::Text => Self::BadRequest { code: "invalid_text", message },
            JobError::NotFound => Self::Missing { code: "no_job", message },
            JobError::MayNotSchedule => Self::Refused { code: "may_not_schedule", message },
            JobError::ReminderOnly => Self::BadRequest { code: "reminder_only", message },
            JobError::SharedAndFor => Self::BadRequest { code: "shared_and_for", message },
            JobError::ForReadable => Self::BadRequest { code: "for_not_readable", message },
            JobError::NoMember(_) => Self::BadRequest { code: "no_member", message },
            JobError::SharedNotYours => Self::Refused { code: "shared_not_yours", message },
            JobError::Turn(err) => err.into(),
            JobError::Store(err) => err.into(),
        }
    }
}

impl From<LibraryError> for ApiError {
    fn from(err: LibraryError) -> Self {
        let message = err.to_string();
        match err {
            LibraryError::RelativePath => Self::BadRequest { code: "invalid_path", message },
            LibraryError::NameTooLong => Self::BadRequest { code: "invalid_name", message },
            LibraryError::Import(import) => import.into(),
            LibraryError::AlreadyImported(_) => Self::Conflict { code: "already_imported", message },
            LibraryError::ProviderNameTaken(_) => Self::Conflict { code: "provider_name_taken", message },
            LibraryError::IdTaken(_) => Self::Conflict { code: "id_taken", message },
            LibraryError::NoModel(_) => Self::Missing { code: "no_model", message },
            LibraryError::UploadInterrupted { .. } => Self::BadRequest { code: "upload_interrupted", message },
            LibraryError::EmptyUpload => Self::BadRequest { code: "empty_upload", message },
            LibraryError::NotInCatalogue(_) => Self::Missing { code: "no_such_model", message },
            LibraryError::InvalidUrl => Self::BadRequest { code: "invalid_url", message },
            LibraryError::InvalidSha256 => Self::BadRequest { code: "invalid_sha256", message },
            LibraryError::Downloading(_) => Self::Conflict { code: "downloading", message },
            LibraryError::Io(io) => Self::Internal(Box::new(io)),
            LibraryError::Store(store) => store.into(),
        }
    }
}

impl From<ImportError> for ApiError {
    fn from(err: ImportError) -> Self {
        let message = err.to_string();
        match err {
            ImportError::NotBuilt => Self::Unavailable { code: "local_model_unavailable", message },
            ImportError::Unreadable { .. } | ImportError::NotAFile(_) => {
                Self::BadRequest { code: "unreadable", message }
            }
            ImportError::OutsideImportDirs(_) => Self::Refused { code: "outside_import_folders", message },
            ImportError::Invalid(_) | ImportError::Unsupported(_) => {
                Self::BadRequest { code: "invalid_model", message }
            }
            ImportError::Convert(crate::providers::local::convert::ConvertError::Io(source)) => {
                drop(source);
                Self::BadRequest { code: "unreadable", message }
            }
            ImportError::Convert(_) => Self::BadRequest { code: "invalid_model", message },
            ImportError::Io(source) => Self::Internal(Box::new(source)),
        }
    }
}

impl From<AccountError> for ApiError {
    fn from(err: AccountError) -> Self {
        let message = err.to_string();
        match err {
            AccountError::AlreadySetUp => Self::Conflict { code: "already_set_up", message },
            AccountError::NameTaken => Self::Conflict { code: "name_taken", message },
            AccountError::NotFound => Self::NotFound,
            AccountError::Exists => Self::Conflict { code: "exists", message },
            AccountError::LastAdmin(_) => Self::Conflict { code: "last_admin", message },
            AccountError::RoleInUse(_) => Self::Conflict { code: "role_in_use", message },
            AccountError::WrongState(_) => Self::Conflict { code: "wrong_state", message },
            AccountError::InvalidRole(_) => Self::BadRequest { code: "invalid_role", message },
            AccountError::ConfirmationMismatch => Self::BadRequest { code: "confirmation_mismatch", message },
            AccountError::InvalidName(_) => Self::BadRequest { code: "invalid_name", message },
            AccountError::WeakPassword(_) => Self::BadRequest { code: "weak_password", message },
            AccountError::UnknownRole(_) => Self::BadRequest { code: "unknown_role", message },
            AccountError::BadCredentials => {
                Self::Unauthorized { code: "invalid_credentials", message: "the name or password is wrong" }
            }
            AccountError::BadEnrolment => Self::Unauthorized {
                code: "invalid_enrolment",
                message: "the name or enrolment code is wrong, or the code was used or has expired; ask an administrator for a new one",
            },
            AccountError::BadRecovery => {
                Self::Unauthorized { code: "invalid_recovery", message: "the name or recovery code is wrong" }
            }
            AccountError::RateLimited(retry_after) => Self::TooManyRequests { retry_after, message },
            AccountError::KeyRecord(_) => Self::Conflict { code: "key_record_invalid", message },
            AccountError::PrivateFile(_) => Self::Conflict { code: "private_file_invalid", message },
            AccountError::Supervision(_) => Self::Refused { code: "supervision_refused", message },
            AccountError::NotSupervisor => Self::Refused { code: "not_supervisor", message },
            AccountError::Store(store) => Self::Internal(Box::new(store)),
        }
    }
}

impl From<TurnError> for ApiError {
    fn from(err: TurnError) -> Self {
        let message = err.to_string();
        match err {
            TurnError::NoSession => Self::Missing { code: "no_session", message },
            TurnError::Busy => Self::Conflict { code: "turn_running", message },
            TurnError::NothingToRetry => Self::Conflict { code: "nothing_to_retry", message },
            TurnError::NotOnPath => Self::Conflict { code: "not_on_path", message },
            TurnError::NoTurn => Self::Missing { code: "no_turn", message },
            TurnError::Waiting => Self::Conflict { code: "turn_waiting", message },
            TurnError::NoModel => Self::Conflict { code: "no_model", message },
            TurnError::ModelNotAllowed(_) => Self::Refused { code: "model_not_allowed", message },
            TurnError::UnknownModel(_) => Self::BadRequest { code: "unknown_model", message },
            TurnError::PrivacyTier { .. } => Self::Refused { code: "privacy_tier", message },
            TurnError::Held(_) => Self::Conflict { code: "held", message },
            TurnError::AgentDeclined(_) => Self::Refused { code: "agent_declined", message },
            TurnError::Declined(_) => Self::Refused { code: "declined", message },
            TurnError::NoNotice => Self::Missing { code: "no_notice", message },
            TurnError::StaleNotice => Self::Conflict { code: "notice_stale", message },
            TurnError::NoLocalModel => Self::Conflict { code: "no_local_model", message },
            TurnError::Agent(DefinitionError::Unknown(_)) => Self::BadRequest { code: "unknown_agent", message },
            TurnError::Agent(DefinitionError::Malformed { .. }) => Self::Conflict { code: "agent_invalid", message },
            TurnError::Secrets(_) => Self::Unavailable { code: "secrets_unavailable", message },
            TurnError::NoAccount => Self::Refused { code: "inactive", message },
            TurnError::Locked => Self::unauthorized(),
            TurnError::UsageCap { .. } => Self::OverCap { message },
            TurnError::Store(store) => Self::Internal(Box::new(store)),
        }
    }
}

/// The contract's error body: `{"error":{"code","message"}}`.
#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "ApiErrorBody")]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What failed: a stable code to branch on, and a sentence a person can act on.
#[derive(Serialize, ts_rs::TS)]
#[ts(rename = "ApiErrorDetail")]
pub struct ErrorDetail {
    pub code: &'static str,
    pub message: String,
}

impl From<UploadError> for ApiError {
    fn from(err: UploadError) -> Self {
        let message = err.to_string();
        match err {
            UploadError::TooLarge => Self::TooLarge { message },
            UploadError::Refused(Refused::Empty) => Self::BadRequest { code: "empty_file", message },
            UploadError::Refused(_) => Self::Unsupported { code: "unsupported_type", message },
            UploadError::Duplicate(_) => Self::Conflict { code: "duplicate_document", message },
            UploadError::Store(err) => err.into(),
        }
    }
}

/// Whether `err` or what caused it is a database pool that was closed: a person's file
/// closes when their session ends (a lock, a logout, a key rotation), and a request of
/// theirs still in flight then finds it closed.
fn pool_closed(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(err);
    while let Some(err) = cause {
        if matches!(err.downcast_ref::<sqlx::Error>(), Some(sqlx::Error::PoolClosed)) {
            return true;
        }
        cause = err.source();
    }
    false
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let Self::Internal(source) = &self
            && pool_closed(source.as_ref())
        {
            let message = "your session ended while this was being done (a lock, a logout or a new key): log in again";
            return Self::Unauthorized { code: "session_ended", message }.into_response();
        }
        if let Self::Internal(source) = &self {
            tracing::error!(error = %source, "request failed");
        }
        let status = self.status();
        let message = match &self {
            Self::Internal(_) => {
                "something went wrong inside Skald; the log in the data directory has details".to_owned()
            }
            other => other.to_string(),
        };
        let body = ErrorBody { error: ErrorDetail { code: self.code(), message } };
        let mut response = (status, Json(body)).into_response();
        if let Self::TooManyRequests { retry_after, .. } = &self {
            let seconds = retry_after.as_secs().max(1).to_string();
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_str(&seconds).expect("digits"));
        }
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"skald\""));
        }
        response
    }
}
