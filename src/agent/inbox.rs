//! The inbox (§8.5): what waits on a person, and their decisions. An approval card shows
//! what the assistant wants to run, for whom, why, and the exact arguments; the decision
//! binds those arguments (by their hash) and, once no card holds the turn any more,
//! resumes it from the stored history.

use crate::ids::{CallId, CardId, ConversationId, TurnId};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

use super::events::LiveEvent;
use super::gate::{CONFIRMED_WRITES, Effect, PERSONAL_PRIORITY, Rule};
use super::{Runtime, TurnError};
use crate::ids::UserId;
use crate::providers::catalogue::allowed;
use crate::store::StoreError;
use crate::store::approvals::{self, Card, CardKind, CardState};
use crate::store::memories::Pools;
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
    /// A filled form that does not fit the server's schema: which field, and what it takes.
    #[error("{0}")]
    BadForm(String),
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
#[derive(Debug, Clone)]
pub struct Decision {
    pub allow: bool,
    /// Add a personal "always allow" rule for the tool.
    pub always: bool,
    /// On a `remember` card: the similar memory it showed that the new one replaces
    /// (erased when the person allows).
    pub replace: Option<crate::store::memories::MemoryId>,
}

/// The longest answer a person can give to a question card.
const MAX_ANSWER_CHARS: usize = 4000;

/// A card as the page shows it — in the inbox, the `card` and `card_decided` events and a
/// decision's answer: what it asks (`kind`, with its `details`) and where it stands.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(rename = "Card")]
pub struct CardView {
    pub id: CardId,
    #[serde(flatten)]
    pub asks: Asks,
    pub state: CardState,
    /// One line: the question, or the tool with its most telling argument.
    pub summary: String,
    pub session_id: ConversationId,
    pub created_at: String,
    /// Who decided it, when not the person themselves: their supervisor (§6.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub decided_by: Option<String>,
}

/// What a card asks of the person, by its kind.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "kind", content = "details", rename_all = "snake_case")]
pub enum Asks {
    /// Whether a tool call may run.
    Approval(CallDetails),
    /// A question the assistant asked (`clarify`).
    Question(QuestionDetails),
    /// A form a tool server asks the person to fill in while its call runs (MCP
    /// elicitation); answered with accept (the filled form), decline or cancel.
    Form(super::forms::FormDetails),
    /// A tool server's request for a model's answer while its call runs (MCP sampling);
    /// allowed (the turn's model answers it) or denied.
    Sample(super::forms::SampleDetails),
}

/// The call a card is about: what the assistant wants to run, why, and for whom.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(rename = "ApprovalDetails")]
pub struct CallDetails {
    pub tool: String,
    /// The arguments as the model sent them, parsed; `null` when they were not JSON.
    pub arguments: Value,
    /// What a decision binds (§8.4): it must still be this when the person decides.
    pub arguments_hash: String,
    pub agent: String,
    pub why: String,
    pub reason: String,
    pub turn_id: TurnId,
    pub call_id: CallId,
    /// Whom the card is for: named in the inbox and in the `card` event.
    #[serde(rename = "for", skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub for_person: Option<CardFor>,
    /// A `remember` card's lines: the sentence, about whom, by which agent, kept until
    /// when, who can read it, and memories it may replace.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub memory: Option<super::memory::MemoryCard>,
    /// An MCP call's server: where its arguments go, and whether it is shared by everyone.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_server: Option<crate::mcp::ServerLabel>,
    /// A `schedule` card's job: what, when in local time with the next occurrences, how it
    /// repeats, and for a task which agent and model.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub schedule: Option<super::scheduling::ScheduleCard>,
}

/// What a card shows beside the call, fixed when it is made (`cards.shows`) other than a
/// `remember` card's lines, which are stored as they are.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CardShows {
    ToolServer(crate::mcp::ServerLabel),
    Schedule(super::scheduling::ScheduleCard),
}

/// A question card's call, with the question as `clarify` gave it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct QuestionDetails {
    #[serde(flatten)]
    pub call: CallDetails,
    pub question: String,
    pub suggestions: Vec<String>,
    /// The person's answer, once given.
    pub answer: Option<String>,
}

/// A person as a card names them.
#[derive(Debug, Clone, Serialize, TS)]
pub struct CardFor {
    pub id: UserId,
    pub name: String,
}

impl CardView {
    /// The card naming whom it is for, as the inbox and the `card` event show it.
    pub fn for_person(mut self, person: Option<CardFor>) -> Self {
        match &mut self.asks {
            Asks::Approval(call) | Asks::Question(QuestionDetails { call, .. }) => call.for_person = person,
            Asks::Form(form) => form.for_person = person,
            Asks::Sample(sample) => sample.for_person = person,
        }
        self
    }
}

/// A card as the page shows it.
pub fn card_view(card: &Card) -> CardView {
    let call = CallDetails {
        tool: card.tool.clone(),
        arguments: serde_json::from_str(&card.arguments).unwrap_or(Value::Null),
        arguments_hash: card.arguments_hash.clone(),
        agent: card.agent.clone(),
        why: card.why.clone(),
        reason: card.reason.clone(),
        turn_id: card.turn_id.clone(),
        call_id: card.call_id.clone(),
        for_person: None,
        memory: card.shows.as_deref().and_then(|shows| serde_json::from_str(shows).ok()),
        tool_server: None,
        schedule: None,
    };
    let call = match card.shows.as_deref().map(serde_json::from_str) {
        Some(Ok(CardShows::ToolServer(label))) => CallDetails { tool_server: Some(label), ..call },
        Some(Ok(CardShows::Schedule(job))) => CallDetails { schedule: Some(job), ..call },
        _ => call,
    };
    let (summary, asks) = match card.kind {
        CardKind::Approval => (summary(&card.tool, &call.arguments), Asks::Approval(call)),
        CardKind::Question => {
            // A question card is only made for arguments `clarify` accepts.
            let (question, suggestions) = super::tools::clarify::question(&call.arguments).unwrap_or_default();
            let details =
                QuestionDetails { call, question: question.clone(), suggestions, answer: card.answer.clone() };
            (question, Asks::Question(details))
        }
    };
    CardView {
        id: card.id.clone(),
        asks,
        state: card.state,
        summary,
        session_id: card.session_id.clone(),
        created_at: card.created_at.clone(),
        decided_by: card.decided_by.clone(),
    }
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
    ) -> Result<(CardView, bool), DecisionError> {
        self.decide_as(session, card_id, decision, seen_hash, None).await
    }

    /// Records a supervisor's decision on a card of a person whose role sends what it may
    /// not approve to them (§6.2), and resumes the turn as [`Self::decide`] does. Never an
    /// "always": a standing rule is the person's own to make.
    pub async fn decide_for(
        &self,
        session: Arc<Session>,
        card_id: &str,
        allow: bool,
        seen_hash: Option<&str>,
        supervisor: &str,
    ) -> Result<(CardView, bool), DecisionError> {
        let decision = Decision { allow, always: false, replace: None };
        self.decide_as(session, card_id, decision, seen_hash, Some(supervisor)).await
    }

    async fn decide_as(
        &self,
        session: Arc<Session>,
        card_id: &str,
        decision: Decision,
        seen_hash: Option<&str>,
        supervisor: Option<&str>,
    ) -> Result<(CardView, bool), DecisionError> {
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
        if decision.allow && !role.may_approve && supervisor.is_none() {
            return Err(DecisionError::MayNotApprove);
        }
        if let Some(old) = &decision.replace {
            let shown: Option<super::memory::MemoryCard> =
                card.shows.as_deref().and_then(|s| serde_json::from_str(s).ok());
            if !decision.allow || !shown.is_some_and(|m| m.similar.iter().any(|s| s.id == *old)) {
                return Err(DecisionError::WrongKind(
                    "\"replace\" names a memory this card offered to replace, with allow",
                ));
            }
        }
        let always = match (decision.allow, decision.always) {
            (true, true) => {
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
        let waiting = approvals::decide(space, card_id, decision.allow, always.as_ref(), supervisor).await?;
        if let Some(old) = &decision.replace {
            let pools = Pools { owner: &session.user_id, space, system: self.system() };
            match pools.delete(old).await {
                Ok(_) | Err(StoreError::NotFound) => {}
                Err(err) => return Err(err.into()),
            }
        }
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
    ) -> Result<(CardView, bool), DecisionError> {
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
    async fn settled(
        &self,
        session: Arc<Session>,
        card: &Card,
        waiting: i64,
    ) -> Result<(CardView, bool), DecisionError> {
        let now = approvals::get(&session.space, &card.id).await?.ok_or(DecisionError::NotFound)?;
        let view = card_view(&now);
        self.events().to_person(&session.user_id, &LiveEvent::CardDecided { card: view.clone() });
        // Debug builds only: leave the decided turn parked, as a crash right here would, so
        // tests can check that the next unlock resumes it.
        let skip = cfg!(debug_assertions) && std::env::var_os("SKALD_TEST_SKIP_RESUME").is_some();
        let resumed = waiting == 0 && !skip && self.resume(session.clone(), &card.session_id, &card.turn_id).await?;
        Ok((view, resumed))
    }

    /// Sends a person's reply to a tool server's form card (§8.5): the filled form, a
    /// decline or a cancel. Nothing of it is kept here.
    pub fn reply_to_form(
        &self,
        session: &Session,
        card_id: &str,
        reply: super::forms::FormReply,
    ) -> Result<CardView, DecisionError> {
        self.forms().reply(self.events(), &session.user_id, card_id, reply)
    }

    /// A person as a card names them; none for someone no longer here.
    pub async fn person(&self, user: &UserId) -> Result<Option<CardFor>, StoreError> {
        let row = crate::store::users::find(self.system(), user).await?;
        Ok(row.map(|row| CardFor { id: row.id, name: row.name }))
    }

    /// The cards waiting on the person, each naming them, as the inbox shows them.
    pub async fn inbox(&self, session: &Session) -> Result<Vec<CardView>, StoreError> {
        let person = self.person(&session.user_id).await?;
        let stored = approvals::pending(&session.space).await?;
        let forms = self.forms().pending(&session.user_id);
        Ok(stored.iter().map(card_view).chain(forms).map(|card| card.for_person(person.clone())).collect())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn stored(kind: CardKind, arguments: &str) -> Card {
        Card {
            id: "card_1".into(),
            kind,
            session_id: "chat_1".into(),
            turn_id: "turn_1".into(),
            call_id: "call_1".into(),
            tool: "note_write".into(),
            arguments: arguments.into(),
            arguments_hash: "h".into(),
            agent: "main".into(),
            why: "to keep it".into(),
            reason: "writes a note".into(),
            state: CardState::Pending,
            answer: None,
            created_at: "2026-01-01T00:00:00Z".into(),
            decided_at: None,
            shows: None,
            decided_by: None,
        }
    }

    #[test]
    fn an_approval_card_shows_its_call_and_names_whom_it_is_for_only_when_told() {
        let card = card_view(&stored(CardKind::Approval, r#"{"title":"Shopping"}"#));
        let details = json!({
            "tool": "note_write", "arguments": { "title": "Shopping" }, "arguments_hash": "h", "agent": "main",
            "why": "to keep it", "reason": "writes a note", "turn_id": "turn_1", "call_id": "call_1",
        });
        let mut expected = json!({
            "id": "card_1", "kind": "approval", "state": "pending", "summary": "note_write: Shopping",
            "session_id": "chat_1", "created_at": "2026-01-01T00:00:00Z", "details": details,
        });
        assert_eq!(serde_json::to_value(&card).unwrap(), expected);
        let ada = UserId::generate();
        let named = card.for_person(Some(CardFor { id: ada.clone(), name: "Ada".into() }));
        expected["details"]["for"] = json!({ "id": ada, "name": "Ada" });
        assert_eq!(serde_json::to_value(&named).unwrap(), expected);
    }

    #[test]
    fn a_question_card_adds_its_question_suggestions_and_answer_to_the_call() {
        let mut asked = stored(CardKind::Question, r#"{"question":"Which day?","suggestions":["Monday"]}"#);
        asked.state = CardState::Answered;
        asked.answer = Some("Tuesday".into());
        let card = serde_json::to_value(card_view(&asked)).unwrap();
        assert_eq!(
            (&card["kind"], &card["state"], &card["summary"]),
            (&json!("question"), &json!("answered"), &json!("Which day?"))
        );
        let details = &card["details"];
        assert_eq!(
            (&details["question"], &details["suggestions"], &details["answer"]),
            (&json!("Which day?"), &json!(["Monday"]), &json!("Tuesday"))
        );
        assert_eq!(
            (&details["tool"], &details["call_id"]),
            (&json!("note_write"), &json!("call_1")),
            "the call's details beside them"
        );
        assert!(details.get("for").is_none());
    }

    #[test]
    fn arguments_that_are_not_json_show_as_null() {
        let card = serde_json::to_value(card_view(&stored(CardKind::Approval, "{not json"))).unwrap();
        assert_eq!((&card["details"]["arguments"], &card["summary"]), (&Value::Null, &json!("note_write")));
    }

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
