//! The approval gate's shared rules (§8.4), for administrators: list, add, change (a new
//! priority reorders), delete. Each change is in the audit trail.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Serialize;

use super::AppState;
use super::auth::{AdminActor, Caller};
use super::error::{ApiError, Subject};
use super::json::Body;
use crate::agent::consent::Change;
use crate::agent::gate::{ArgsPattern, Rule};
use crate::store::approval_rules::{self, StoredRule};

/// `GET /api/approval-rules`: every rule, in the order the gate weighs them.
pub async fn list(State(state): State<AppState>) -> Result<Json<Vec<StoredRule>>, ApiError> {
    Ok(Json(approval_rules::list(&state.system).await?))
}

/// A rule just added: its id.
#[derive(Serialize, ts_rs::TS)]
pub struct RuleAdded {
    pub id: i64,
}

/// `POST /api/approval-rules` `{"tool","args"?,"role"?,"effect","priority"}`
pub async fn add(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Body(rule): Body<Rule>,
) -> Result<(StatusCode, Json<RuleAdded>), ApiError> {
    let rule = valid(rule)?;
    let id = approval_rules::add(&state.system, &actor, &rule).await.map_err(ApiError::about(Subject::Rule))?;
    accept_own(&state, &caller, Some(&rule)).await;
    state.agent.announce_notices(Some(&actor.id)).await;
    Ok((StatusCode::CREATED, Json(RuleAdded { id })))
}

/// `PUT /api/approval-rules/{id}`: replaces a rule.
pub async fn replace(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Path(id): Path<i64>,
    Body(rule): Body<Rule>,
) -> Result<StatusCode, ApiError> {
    let rule = valid(rule)?;
    approval_rules::replace(&state.system, &actor, id, &rule).await.map_err(ApiError::about(Subject::Rule))?;
    accept_own(&state, &caller, Some(&rule)).await;
    state.agent.announce_notices(Some(&actor.id)).await;
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /api/approval-rules/{id}`
pub async fn delete(
    State(state): State<AppState>,
    AdminActor(actor): AdminActor,
    caller: Caller,
    Path(id): Path<i64>,
) -> Result<StatusCode, ApiError> {
    approval_rules::delete(&state.system, &actor, id).await.map_err(ApiError::about(Subject::Rule))?;
    accept_own(&state, &caller, None).await;
    state.agent.announce_notices(Some(&actor.id)).await;
    Ok(StatusCode::NO_CONTENT)
}

/// The administrator's own rule change is theirs to have accepted (§3): the rule they
/// wrote, and the one a change or deletion removed.
async fn accept_own(state: &AppState, caller: &Caller, written: Option<&Rule>) {
    let written = written.map(|rule| serde_json::json!(rule));
    let theirs = |change: &Change| {
        change.key.starts_with("rule.") && (change.after.is_null() || Some(&change.after) == written.as_ref())
    };
    state.agent.accept_own(&caller.session, theirs).await;
}

fn valid(mut rule: Rule) -> Result<Rule, ApiError> {
    let bad = |message: &str| ApiError::BadRequest { code: "invalid_rule", message: message.into() };
    rule.tool = rule.tool.trim().to_owned();
    let tool_fits = (1..=100).contains(&rule.tool.len())
        && rule
            .tool
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'.' | b'*'));
    if !tool_fits {
        return Err(bad(
            "tool is a tool name or pattern: lowercase letters, digits, '_', '-', '.', and '*' for any run",
        ));
    }
    match &rule.args {
        None => {}
        Some(ArgsPattern::Text(_)) => {
            return Err(bad(
                "args names each field by JSON pointer with the pattern its value must match, e.g. {\"/url\": \"https://example.org/*\"}",
            ));
        }
        Some(ArgsPattern::Fields(fields)) => {
            let fits = (1..=8).contains(&fields.len())
                && fields.iter().all(|(pointer, pattern)| {
                    pointer.starts_with('/') && pointer.len() <= 200 && (1..=1000).contains(&pattern.len())
                });
            if !fits {
                return Err(bad(
                    "args maps 1 to 8 JSON pointers (such as /url) to patterns of 1 to 1000 characters; '*' stands for any run",
                ));
            }
        }
    }
    if !(0..=1_000_000).contains(&rule.priority) {
        return Err(bad("priority is a number from 0 to 1000000; lower numbers are weighed first"));
    }
    Ok(rule)
}
