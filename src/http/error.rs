//! The HTTP error boundary: every failure a route can return, mapped to a status and the
//! contract's body `{"error":{"code","message"}}` in one place. Internal details are
//! logged, never sent.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{message}")]
    Unauthorized { code: &'static str, message: &'static str },
    #[error("{message}")]
    Forbidden { code: &'static str, message: &'static str },
    #[error("{message}")]
    BadRequest { code: &'static str, message: String },
    #[error("no such route")]
    NotFound,
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    pub fn unauthorized() -> Self {
        Self::Unauthorized {
            code: "unauthorized",
            message: "missing or invalid bearer token",
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            Self::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. } => StatusCode::FORBIDDEN,
            Self::BadRequest { .. } => StatusCode::BAD_REQUEST,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn code(&self) -> &'static str {
        match self {
            Self::Unauthorized { code, .. } | Self::Forbidden { code, .. } | Self::BadRequest { code, .. } => code,
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
        let mut response = (
            status,
            Json(json!({ "error": { "code": self.code(), "message": message } })),
        )
            .into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"skald\""),
            );
        }
        response
    }
}
