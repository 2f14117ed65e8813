//! The inbox (§8.5): the cards waiting on the caller, and their decisions. Cards live in
//! the caller's own encrypted file; nobody else's session can see or decide them.

use axum::Json;
use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::{Value, json};

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use super::json::Body;
use crate::agent::inbox::{Decision, DecisionError};

/// `GET /api/inbox`: pending cards, oldest first, each saying for whom it is.
pub async fn list(State(state): State<AppState>, caller: Caller) -> Result<Json<Vec<Value>>, ApiError> {
    let person = state.agent.person(&caller.session.user_id).await?;
    let mut cards = state.agent.inbox(&caller.session).await?;
    for card in &mut cards {
        card["details"]["for"] = person.clone();
    }
    Ok(Json(cards))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    decision: Option<String>,
    #[serde(default)]
    always: bool,
    /// The `arguments_hash` the person saw; when given, it must still be the card's.
    arguments_hash: Option<String>,
    answer: Option<String>,
}

/// `POST /api/inbox/{id}`: allows or denies an approval card (`always` beside `allow`
/// adds a personal always-allow rule where the role permits), or answers a question card.
pub async fn decide(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Body(req): Body<Answer>,
) -> Result<Json<Value>, ApiError> {
    let allow = match (req.decision.as_deref(), &req.answer) {
        (Some("allow"), None) => true,
        (Some("deny"), None) => false,
        (None, Some(answer)) if !req.always && req.arguments_hash.is_none() => {
            let (card, resumed) =
                state.agent.answer(caller.session.clone(), &id, answer).await.map_err(decision_error)?;
            return Ok(Json(json!({ "card": card, "resumed": resumed })));
        }
        _ => {
            let message =
                r#"send {"decision":"allow"}, {"decision":"deny"} or, for a question, {"answer":"…"}"#.to_owned();
            return Err(ApiError::BadRequest { code: "invalid_decision", message });
        }
    };
    if req.always && !allow {
        let message = "\"always\" goes with allow only".to_owned();
        return Err(ApiError::BadRequest { code: "invalid_decision", message });
    }
    let decision = Decision { allow, always: req.always };
    let (card, resumed) = state
        .agent
        .decide(caller.session.clone(), &id, decision, req.arguments_hash.as_deref())
        .await
        .map_err(decision_error)?;
    Ok(Json(json!({ "card": card, "resumed": resumed })))
}

fn decision_error(err: DecisionError) -> ApiError {
    let message = err.to_string();
    match err {
        DecisionError::NotFound => ApiError::Missing { code: "no_card", message },
        DecisionError::AlreadyDecided => ApiError::Conflict { code: "already_decided", message },
        DecisionError::Changed => ApiError::Conflict { code: "card_changed", message },
        DecisionError::MayNotApprove => ApiError::Refused { code: "may_not_approve", message },
        DecisionError::AlwaysNotPermitted(_) => ApiError::Refused { code: "always_not_permitted", message },
        DecisionError::WrongKind(_) => ApiError::BadRequest { code: "wrong_card_kind", message },
        DecisionError::BadAnswer => ApiError::BadRequest { code: "invalid_answer", message },
        DecisionError::Turn(turn) => turn.into(),
    }
}
