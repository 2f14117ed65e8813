//! A JSON body extractor whose refusals use the contract's error body, so a script that
//! sends bad JSON learns what was wrong instead of getting plain text.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;

use super::error::ApiError;

pub struct Body<T>(pub T);

impl<S, T> FromRequest<S> for Body<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(ApiError::BadRequest { code: "bad_json", message: describe(&rejection) }),
        }
    }
}

fn describe(rejection: &JsonRejection) -> String {
    match rejection {
        JsonRejection::MissingJsonContentType(_) => "send the body as JSON with Content-Type: application/json".into(),
        // serde's message names the field and the problem, never the secret values sent.
        JsonRejection::JsonDataError(err) => format!("the JSON body does not fit this route: {}", err.body_text()),
        JsonRejection::JsonSyntaxError(_) => "the body is not valid JSON".into(),
        other => other.body_text(),
    }
}

/// A JSON body that may be left out: no body at all reads as `T::default()`.
pub struct OptionalBody<T>(pub T);

impl<S, T> FromRequest<S> for OptionalBody<T>
where
    T: DeserializeOwned + Default,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let empty = req.headers().get(axum::http::header::CONTENT_LENGTH).is_some_and(|len| len == "0")
            || (req.headers().get(axum::http::header::CONTENT_TYPE).is_none()
                && req.headers().get(axum::http::header::TRANSFER_ENCODING).is_none()
                && req.headers().get(axum::http::header::CONTENT_LENGTH).is_none());
        if empty {
            return Ok(Self(T::default()));
        }
        Body::<T>::from_request(req, state).await.map(|Body(value)| Self(value))
    }
}
