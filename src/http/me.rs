//! Routes about the caller's own account and private space.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use zeroize::Zeroizing;

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use super::json::Body;
use crate::store::{audit, roles, users};
use crate::users::PublicUser;

const MAX_SETTING_KEY: usize = 64;
const MAX_SETTING_VALUE: usize = 64 * 1024;

/// `GET /api/me`: who I am and what my role allows.
pub async fn me(State(state): State<AppState>, caller: Caller) -> Result<Json<Value>, ApiError> {
    let system = state.accounts.system();
    let row = users::find(system, &caller.session.user_id).await?.ok_or(ApiError::NotFound)?;
    let role = roles::get(system, &row.role_id).await?;
    Ok(Json(json!({ "user": PublicUser::from(&row), "role": role })))
}

#[derive(Deserialize)]
pub struct PasswordChange {
    current_password: String,
    new_password: String,
}

/// `POST /api/me/password`: re-wraps my key under a new password.
pub async fn change_password(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<PasswordChange>,
) -> Result<StatusCode, ApiError> {
    let (current, new) = (Zeroizing::new(req.current_password), Zeroizing::new(req.new_password));
    state.accounts.change_password(&caller.session.user_id, &current, &new).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/me/audit`: what administrators did that affects me (§3).
pub async fn audit(State(state): State<AppState>, caller: Caller) -> Result<Json<Vec<audit::Entry>>, ApiError> {
    Ok(Json(audit::about(state.accounts.system(), &caller.session.user_id).await?))
}

/// `GET /api/me/settings`: my settings, from my private file.
pub async fn settings(caller: Caller) -> Result<Json<BTreeMap<String, String>>, ApiError> {
    Ok(Json(caller.session.space.settings().await?.into_iter().collect()))
}

#[derive(Deserialize)]
pub struct SettingValue {
    value: String,
}

/// `PUT /api/me/settings/{key}`
pub async fn put_setting(
    caller: Caller,
    Path(key): Path<String>,
    Body(req): Body<SettingValue>,
) -> Result<StatusCode, ApiError> {
    check_key(&key)?;
    if req.value.len() > MAX_SETTING_VALUE {
        return Err(ApiError::BadRequest {
            code: "too_large",
            message: format!("a setting holds at most {MAX_SETTING_VALUE} bytes"),
        });
    }
    caller.session.space.put_setting(&key, &req.value).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /api/me/settings/{key}`
pub async fn delete_setting(caller: Caller, Path(key): Path<String>) -> Result<StatusCode, ApiError> {
    check_key(&key)?;
    match caller.session.space.delete_setting(&key).await? {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(ApiError::NotFound),
    }
}

fn check_key(key: &str) -> Result<(), ApiError> {
    let ok = !key.is_empty()
        && key.len() <= MAX_SETTING_KEY
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(ApiError::BadRequest {
            code: "invalid_key",
            message: format!("a setting key is 1–{MAX_SETTING_KEY} letters, digits, '.', '_' or '-'"),
        })
    }
}
