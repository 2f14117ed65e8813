//! The HTTP error boundary: every failure a route can return, mapped to a status and the
//! contract's body `{"error":{"code","message"}}` in one place. Internal details are
//! logged, never sent.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::agent::TurnError;
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
    /// 503: Skald cannot do this right now, and says why.
    #[error("{message}")]
    Unavailable { code: &'static str, message: String },
    #[error("no such route")]
    NotFound,
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
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
            | Self::Unavailable { code, .. } => code,
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
            AccountError::Store(store) => Self::Internal(Box::new(store)),
        }
    }
}

impl From<TurnError> for ApiError {
    fn from(err: TurnError) -> Self {
        use crate::agent::definition::DefinitionError;
        let message = err.to_string();
        match err {
            TurnError::NoSession => Self::Missing { code: "no_session", message },
            TurnError::Busy => Self::Conflict { code: "turn_running", message },
            TurnError::NothingToRetry => Self::Conflict { code: "nothing_to_retry", message },
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

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
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
        let mut response =
            (status, Json(json!({ "error": { "code": self.code(), "message": message } }))).into_response();
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
