//! The inbox (§8.5): the cards waiting on the caller, and their decisions. Cards live in
//! the caller's own encrypted file; nobody else's session can see or decide them.

use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use super::json::Body;
use crate::agent::forms::FormReply;
use crate::agent::inbox::{CardView, Decision};

/// `GET /api/inbox`: pending cards, oldest first, each saying for whom it is.
pub async fn list(State(state): State<AppState>, caller: Caller) -> Result<Json<Vec<CardView>>, ApiError> {
    Ok(Json(state.agent.inbox(&caller.session).await?))
}

#[derive(Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "CardAnswer")]
pub struct Answer {
    #[ts(optional)]
    decision: Option<String>,
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    always: bool,
    /// The `arguments_hash` the person saw; when given, it must still be the card's.
    #[ts(optional)]
    arguments_hash: Option<String>,
    #[ts(optional)]
    answer: Option<String>,
    /// With allow on a `remember` card: the similar memory it offered that the new one replaces.
    #[ts(optional, as = "Option<String>")]
    replace: Option<crate::store::memories::MemoryId>,
    /// With accept on a form card: the filled form, one value per field.
    #[ts(optional, type = "Record<string, unknown>")]
    content: Option<serde_json::Value>,
}

/// A card as it was decided, and whether its turn went on.
#[derive(Serialize, ts_rs::TS)]
pub struct Decided {
    pub card: CardView,
    pub resumed: bool,
}

/// `POST /api/inbox/{id}`: allows or denies an approval card (`always` beside `allow`
/// adds a personal always-allow rule where the role permits), answers a question card,
/// accepts (with the filled form), declines or cancels a tool server's form card, or allows
/// or denies a tool server's request for a model's answer.
pub async fn decide(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Body(req): Body<Answer>,
) -> Result<Json<Decided>, ApiError> {
    if state.agent.forms().is_open(&caller.session.user_id, &id) {
        let other = req.always || req.answer.is_some() || req.arguments_hash.is_some() || req.replace.is_some();
        let reply = match (req.decision.as_deref(), req.content) {
            (Some("accept"), content) if !other => FormReply::Accept(content.unwrap_or_else(|| serde_json::json!({}))),
            (Some("decline"), None) if !other => FormReply::Decline,
            (Some("cancel"), None) if !other => FormReply::Cancel,
            (Some("allow"), None) if !other => FormReply::Allow,
            (Some("deny"), None) if !other => FormReply::Deny,
            _ => {
                let message = r#"a form takes {"decision":"accept","content":{…}}, {"decision":"decline"} or {"decision":"cancel"}; a request for a model's answer {"decision":"allow"} or {"decision":"deny"}"#;
                return Err(ApiError::BadRequest { code: "invalid_decision", message: message.to_owned() });
            }
        };
        let card = state.agent.reply_to_form(&caller.session, &id, reply)?;
        return Ok(Json(Decided { card, resumed: false }));
    }
    if req.content.is_some() {
        // A form that is gone (its call ended) or never was: nothing waits for the content.
        let message = "there is no such form waiting in your inbox: its call ended".to_owned();
        return Err(ApiError::Missing { code: "no_card", message });
    }
    let allow = match (req.decision.as_deref(), &req.answer) {
        (Some("allow"), None) => true,
        (Some("deny"), None) => false,
        (None, Some(answer)) if !req.always && req.arguments_hash.is_none() && req.replace.is_none() => {
            let (card, resumed) = state.agent.answer(caller.session.clone(), &id, answer).await?;
            return Ok(Json(Decided { card, resumed }));
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
    let decision = Decision { allow, always: req.always, replace: req.replace };
    let (card, resumed) =
        state.agent.decide(caller.session.clone(), &id, decision, req.arguments_hash.as_deref()).await?;
    Ok(Json(Decided { card, resumed }))
}
