//! The inbox (§8.5): what waits on a person, and their decisions. An approval card shows
//! what the assistant wants to run, for whom, why, and the exact arguments; the decision
//! binds those arguments (by their hash) and, once no card holds the turn any more,
//! resumes it from the stored history.

use std::sync::Arc;

use serde_json::{Value, json};

use super::events::LiveEvent;
use super::gate::{CONFIRMED_WRITES, Effect, PERSONAL_PRIORITY, Rule};
use super::{Runtime, TurnError};
use crate::providers::catalogue::allowed;
use crate::store::StoreError;
use crate::store::approvals::{self, Card, CardKind, CardState};
use crate::users::sessions::Session;

/// Why a decision was not taken.
#[derive(Debug, thiserror::Error)]
pub enum DecisionError {
    #[error("there is no such card in your inbox")]
    NotFound,
    #[error("this card was already decided")]
    AlreadyDecided,
    /// Cards never change once written: this catches a window deciding from a stale or
    /// mixed-up view (another card's hash), so a decision never covers what was not shown.
    #[error("the card changed since you saw it; look at it again before deciding")]
    Changed,
    #[error("your role does not let you approve the assistant's actions; you can deny it")]
    MayNotApprove,
    #[error("your role does not let you always allow {0}; you can allow it this once")]
    AlwaysNotPermitted(String),
    #[error("{0}")]
    WrongKind(&'static str),
    #[error("an answer is 1 to 4000 characters")]
    BadAnswer,
    #[error(transparent)]
    Turn(#[from] TurnError),
}

impl From<StoreError> for DecisionError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::WrongState(_) => Self::AlreadyDecided,
            other => Self::Turn(TurnError::Store(other)),
        }
    }
}

/// A person's answer to an approval card.
#[derive(Debug, Clone, Copy)]
pub struct Decision {
    pub allow: bool,
    /// Add a personal "always allow" rule for the tool.
    pub always: bool,
}

/// The longest answer a person can give to a question card.
const MAX_ANSWER_CHARS: usize = 4000;

/// A card as the inbox shows it. A question card adds `question`, `suggestions` and, once
/// answered, `answer` to its details.
pub fn card_view(card: &Card) -> Value {
    let arguments: Value = serde_json::from_str(&card.arguments).unwrap_or(Value::Null);
    let question =
        (card.kind == CardKind::Question).then(|| super::tools::clarify::question(&arguments).ok()).flatten();
    let summary = match &question {
        Some((text, _)) => text.clone(),
        None => summary(&card.tool, &arguments),
    };
    let mut view = json!({
        "id": card.id,
        "kind": card.kind,
        "state": card.state,
        "summary": summary,
        "session_id": card.session_id,
        "created_at": card.created_at,
        "details": {
            "tool": card.tool,
            "arguments": arguments,
            "arguments_hash": card.arguments_hash,
            "agent": card.agent,
            "why": card.why,
            "reason": card.reason,
            "turn_id": card.turn_id,
            "call_id": card.call_id,
        },
    });
    if let Some((text, suggestions)) = question {
        view["details"]["question"] = json!(text);
        view["details"]["suggestions"] = json!(suggestions);
        view["details"]["answer"] = json!(card.answer);
    }
    view
}

/// One line naming the action: the tool and its most telling argument.
fn summary(tool: &str, arguments: &Value) -> String {
    const SHOWN: usize = 80;
    let telling = ["title", "url", "query", "id", "text"]
        .iter()
        .find_map(|key| arguments.get(*key).filter(|v| !v.is_null()))
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    match telling {
        Some(text) if text.chars().count() > SHOWN => {
            format!("{tool}: {}…", text.chars().take(SHOWN).collect::<String>())
        }
        Some(text) => format!("{tool}: {text}"),
        None => tool.to_owned(),
    }
}

impl Runtime {
    /// Records a decision on one of the person's cards and, when it was the last one
    /// holding its turn, resumes the turn. `seen_hash`, when given, must be the hash of the
    /// arguments the person saw. Returns the card as decided and whether the turn resumed.
    pub async fn decide(
        &self,
        session: Arc<Session>,
        card_id: &str,
        decision: Decision,
        seen_hash: Option<&str>,
    ) -> Result<(Value, bool), DecisionError> {
        let space = &session.space;
        let card = approvals::get(space, card_id).await?.ok_or(DecisionError::NotFound)?;
        if card.kind != CardKind::Approval {
            return Err(DecisionError::WrongKind(r#"this card asks a question: answer it with {"answer": "…"}"#));
        }
        if card.state != CardState::Pending {
            return Err(DecisionError::AlreadyDecided);
        }
        if seen_hash.is_some_and(|seen| seen != card.arguments_hash) {
            return Err(DecisionError::Changed);
        }
        let role = self.role_of(&session.user_id).await?;
        if decision.allow && !role.may_approve {
            return Err(DecisionError::MayNotApprove);
        }
        let always = match decision {
            Decision { allow: true, always: true } => {
                let permitted = role.may_approve
                    && allowed(&role.tools, &card.tool)
                    && !CONFIRMED_WRITES.contains(&card.tool.as_str());
                if !permitted {
                    return Err(DecisionError::AlwaysNotPermitted(card.tool.clone()));
                }
                Some(Rule {
                    tool: card.tool.clone(),
                    args: None,
                    role: None,
                    effect: Effect::Allow,
                    priority: PERSONAL_PRIORITY,
                })
            }
            _ => None,
        };
        let waiting = approvals::decide(space, card_id, decision.allow, always.as_ref()).await?;
        self.settled(session, &card, waiting).await
    }

    /// Records a person's answer to one of their question cards and, when it was the last
    /// card holding its turn, resumes the turn. Returns the card as answered and whether the
    /// turn resumed.
    pub async fn answer(
        &self,
        session: Arc<Session>,
        card_id: &str,
        text: &str,
    ) -> Result<(Value, bool), DecisionError> {
        let text = text.trim();
        if text.is_empty() || text.chars().count() > MAX_ANSWER_CHARS {
            return Err(DecisionError::BadAnswer);
        }
        let space = &session.space;
        let card = approvals::get(space, card_id).await?.ok_or(DecisionError::NotFound)?;
        if card.kind != CardKind::Question {
            return Err(DecisionError::WrongKind(
                r#"this card asks for a decision: send {"decision": "allow"} or "deny""#,
            ));
        }
        if card.state != CardState::Pending {
            return Err(DecisionError::AlreadyDecided);
        }
        let waiting = approvals::answer(space, card_id, text).await?;
        self.settled(session, &card, waiting).await
    }

    /// After a decision or an answer: the card as it now stands, shown in the person's
    /// windows, and its turn resumed when no other card holds it (`waiting` is how many
    /// still do). Returns the card and whether the turn resumed.
    async fn settled(&self, session: Arc<Session>, card: &Card, waiting: i64) -> Result<(Value, bool), DecisionError> {
        let now = approvals::get(&session.space, &card.id).await?.ok_or(DecisionError::NotFound)?;
        let view = card_view(&now);
        self.events().to_person(&session.user_id, &LiveEvent::CardDecided { card: view.clone() });
        // Debug builds only: leave the decided turn parked, as a crash right here would, so
        // tests can check that the next unlock resumes it.
        let skip = cfg!(debug_assertions) && std::env::var_os("SKALD_TEST_SKIP_RESUME").is_some();
        let resumed = waiting == 0 && !skip && self.resume(session.clone(), &card.session_id, &card.turn_id).await?;
        Ok((view, resumed))
    }

    /// A person as a card names them: `{"id","name"}`.
    pub async fn person(&self, user: &crate::ids::UserId) -> Result<Value, StoreError> {
        let row = crate::store::users::find(self.system(), user).await?;
        Ok(row.map_or(Value::Null, |row| json!({ "id": row.id, "name": row.name })))
    }

    /// The cards waiting on the person, as the inbox shows them.
    pub async fn inbox(&self, session: &Session) -> Result<Vec<Value>, StoreError> {
        Ok(approvals::pending(&session.space).await?.iter().map(card_view).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_names_the_tool_and_its_most_telling_argument() {
        assert_eq!(summary("note_write", &json!({ "title": "Shopping", "text": "eggs" })), "note_write: Shopping");
        assert_eq!(summary("web_fetch", &json!({ "url": "https://example.org" })), "web_fetch: https://example.org");
        assert_eq!(summary("note_delete", &json!({ "id": 4 })), "note_delete: 4");
        assert_eq!(summary("current_time", &json!({})), "current_time");
        let long = summary("note_write", &json!({ "text": "x".repeat(200) }));
        assert!(long.ends_with('…') && long.chars().count() < 100, "{long}");
    }
}
