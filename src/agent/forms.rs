//! What a tool server asks while its call runs (§8.5), as a card in the inbox of the person
//! whose turn made the call: a form to fill in (MCP elicitation), answered accept, decline
//! or cancel; or a request for a model's answer (MCP sampling), allowed or denied, which
//! the turn's own model then answers (`turn::sample`). A card lives in memory only, for as
//! long as the call waits, and goes when the call ends (the turn stopped, the server gave
//! up). What the person types goes to the server and nowhere else: never into a database,
//! a log or the model's context, unless the server's own result carries it back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::oneshot;
use ts_rs::TS;

use super::events::{Events, LiveEvent, TurnEvents};
use super::inbox::{Asks, CardFor, CardView, DecisionError};
use super::turn::sample::Sampler;
use crate::ids::{CallId, CardId, ConversationId, TurnId, UserId};
use crate::mcp::connection::{Asker, Question, Reply};
use crate::mcp::sampling::{SampleRequest, Sampled, Speaker};
use crate::providers::privacy::Tier;
use crate::store::approvals::CardState;
use crate::store::timestamp;

/// The longest text a form field takes.
const MAX_FIELD_CHARS: usize = 4000;

/// A form card's details: which server asks, during which call, and the form.
#[derive(Debug, Clone, Serialize, TS)]
pub struct FormDetails {
    /// The tool being called, as offered: `mcp__<server>__<tool>`.
    pub tool: String,
    pub server: String,
    /// The server's words to the person.
    pub message: String,
    /// The form: an object schema of plain fields (text, number, yes/no, a choice), each
    /// with its `title`, `description` and `default` where the server gave them.
    #[ts(type = "Record<string, unknown>")]
    pub schema: Value,
    pub turn_id: TurnId,
    pub call_id: CallId,
    #[serde(rename = "for", skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub for_person: Option<CardFor>,
}

/// A sampling card's details: which server asks, during which call, what it would send
/// to which model, and how long an answer it wants.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SampleDetails {
    /// The tool being called, as offered: `mcp__<server>__<tool>`.
    pub tool: String,
    pub server: String,
    /// The server's system prompt, if it gave one.
    #[ts(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// What the server would have the model read, in order.
    pub messages: Vec<SampleMessage>,
    /// The longest answer it asks for, in tokens.
    pub max_tokens: u32,
    /// The models the server would prefer; the person's own model answers regardless.
    pub hints: Vec<String>,
    /// The model that would answer: this turn's.
    pub model: String,
    /// Whether the words stay here or go to a remote service (§16).
    pub privacy: Tier,
    pub turn_id: TurnId,
    pub call_id: CallId,
    #[serde(rename = "for", skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub for_person: Option<CardFor>,
}

/// One message of a sampling request: `user` (the server's words as if the person's) or
/// `assistant` (as if the model's).
#[derive(Debug, Clone, Serialize, TS)]
pub struct SampleMessage {
    pub role: String,
    pub text: String,
}

/// A person's reply to a form card, or their decision on a sampling card.
#[derive(Debug, Clone)]
pub enum FormReply {
    /// The filled form: checked against the schema, defaults added for what was left out.
    Accept(Value),
    Decline,
    Cancel,
    /// A sampling card: the model may answer.
    Allow,
    /// A sampling card: it may not.
    Deny,
}

/// How a form is answered.
const FORM_DECISIONS: &str =
    r#"a form takes {"decision":"accept","content":{…}}, {"decision":"decline"} or {"decision":"cancel"}"#;

/// How a sampling card is decided.
const SAMPLE_DECISIONS: &str = r#"a request for a model's answer takes {"decision":"allow"} or {"decision":"deny"}"#;

struct Open {
    user: UserId,
    view: CardView,
    reply: oneshot::Sender<Reply>,
}

/// The form cards open now, by card; cheap to clone.
#[derive(Clone, Default)]
pub struct Forms {
    open: Arc<Mutex<HashMap<CardId, Open>>>,
}

impl Forms {
    /// The person's open form cards, oldest first.
    pub fn pending(&self, user: &UserId) -> Vec<CardView> {
        let open = self.open.lock().expect("forms");
        let mut cards: Vec<CardView> = open.values().filter(|o| o.user == *user).map(|o| o.view.clone()).collect();
        cards.sort_by(|a, b| a.created_at.cmp(&b.created_at));
        cards
    }

    /// Whether `card` is one of the person's open form cards.
    pub fn is_open(&self, user: &UserId, card: &str) -> bool {
        self.open.lock().expect("forms").get(&CardId::new(card.to_owned())).is_some_and(|o| o.user == *user)
    }

    /// Sends the person's reply to the server that asked; the card as it now stands.
    pub fn reply(
        &self,
        events: &Events,
        user: &UserId,
        card: &str,
        reply: FormReply,
    ) -> Result<CardView, DecisionError> {
        let id = CardId::new(card.to_owned());
        let mut open = self.open.lock().expect("forms");
        let entry = open.get(&id).filter(|o| o.user == *user).ok_or(DecisionError::NotFound)?;
        // A sampling card's decision travels as a form's: accept (allow) or decline (deny).
        let (reply, state) = match (&entry.view.asks, reply) {
            (Asks::Form(details), FormReply::Accept(content)) => {
                let filled = filled(&details.schema, content).map_err(DecisionError::BadForm)?;
                (Reply::Accept(filled), CardState::Answered)
            }
            (Asks::Form(_), FormReply::Decline) => (Reply::Decline, CardState::Denied),
            (Asks::Form(_), FormReply::Cancel) => (Reply::Cancel, CardState::Withdrawn),
            (Asks::Sample(_), FormReply::Allow) => (Reply::Accept(Map::new()), CardState::Allowed),
            (Asks::Sample(_), FormReply::Deny) => (Reply::Decline, CardState::Denied),
            (Asks::Sample(_), _) => return Err(DecisionError::WrongKind(SAMPLE_DECISIONS)),
            _ => return Err(DecisionError::WrongKind(FORM_DECISIONS)),
        };
        let entry = open.remove(&id).expect("looked up above");
        drop(open);
        let mut view = entry.view;
        view.state = state;
        // The call may have ended a moment ago: then nobody waits for the reply.
        if entry.reply.send(reply).is_err() {
            return Err(DecisionError::AlreadyDecided);
        }
        events.to_person(user, &LiveEvent::CardDecided { card: view.clone() });
        Ok(view)
    }

    fn withdraw(&self, events: &Events, id: &CardId) {
        let Some(entry) = self.open.lock().expect("forms").remove(id) else { return };
        let mut view = entry.view;
        view.state = CardState::Withdrawn;
        events.to_person(&entry.user, &LiveEvent::CardDecided { card: view });
    }
}

/// One MCP call of a turn, speaking for its person: the server's forms and requests for a
/// model's answer become their cards, its progress shows on the call.
pub struct FormCall {
    pub forms: Forms,
    pub events: Events,
    pub turn_events: TurnEvents,
    pub user: UserId,
    pub person: Option<CardFor>,
    pub session: ConversationId,
    pub turn: TurnId,
    pub call: CallId,
    pub tool: String,
    /// Whether the person's role lets them approve what the assistant does: a request for
    /// a model's answer is refused, unasked, for one that does not.
    pub may_approve: bool,
    /// What answers a request for a model's answer once they allow it.
    pub sampler: Arc<Sampler>,
}

impl FormCall {
    /// The server this call goes to.
    fn server(&self) -> String {
        crate::mcp::pin::split(&self.tool).map(|(server, _)| server.to_owned()).unwrap_or_default()
    }

    /// Opens a card in the person's inbox; resolves with their reply, or `Cancel` when the
    /// card goes unanswered. The card is withdrawn when the wait is dropped (the call ended).
    fn open_card(&self, asks: Asks, summary: String) -> BoxFuture<'static, Reply> {
        let id = CardId::generate();
        let view = CardView {
            id: id.clone(),
            asks,
            state: CardState::Pending,
            summary,
            session_id: self.session.clone(),
            created_at: timestamp(),
            decided_by: None,
        };
        let (reply, replied) = oneshot::channel();
        let open = Open { user: self.user.clone(), view: view.clone(), reply };
        self.forms.open.lock().expect("forms").insert(id.clone(), open);
        self.turn_events.emit(|of| LiveEvent::Card { of, card: view });
        let withdraw = Withdraw { forms: self.forms.clone(), events: self.events.clone(), id };
        Box::pin(async move {
            let reply = replied.await.unwrap_or(Reply::Cancel);
            drop(withdraw);
            reply
        })
    }
}

impl Asker for FormCall {
    fn owner(&self) -> &str {
        self.user.as_str()
    }

    fn ask(&self, question: Question) -> BoxFuture<'static, Reply> {
        let server = self.server();
        let summary = summary(&server, &question.message);
        let details = FormDetails {
            tool: self.tool.clone(),
            server,
            message: question.message,
            schema: question.schema,
            turn_id: self.turn.clone(),
            call_id: self.call.clone(),
            for_person: self.person.clone(),
        };
        self.open_card(Asks::Form(details), summary)
    }

    fn sample(&self, request: SampleRequest) -> BoxFuture<'static, Result<Sampled, String>> {
        if !self.may_approve {
            let refused = "this person's role does not let them allow a tool server's request for a model's answer";
            return Box::pin(std::future::ready(Err(refused.to_owned())));
        }
        let server = self.server();
        let model = self.sampler.model_name().to_owned();
        let summary = format!("{server} asks for an answer from {model}");
        let messages = request
            .messages
            .iter()
            .map(|(speaker, text)| SampleMessage {
                role: match speaker {
                    Speaker::Person => "user",
                    Speaker::Model => "assistant",
                }
                .to_owned(),
                text: text.clone(),
            })
            .collect();
        let details = SampleDetails {
            tool: self.tool.clone(),
            server,
            system: request.system.clone(),
            messages,
            max_tokens: request.max_tokens,
            hints: request.hints.clone(),
            model,
            privacy: self.sampler.privacy(),
            turn_id: self.turn.clone(),
            call_id: self.call.clone(),
            for_person: self.person.clone(),
        };
        let decided = self.open_card(Asks::Sample(details), summary);
        let sampler = self.sampler.clone();
        Box::pin(async move {
            match decided.await {
                Reply::Accept(_) => sampler.answer_detached(request).await,
                Reply::Decline => Err("the person declined the request for a model's answer".to_owned()),
                Reply::Cancel => {
                    Err("the request for a model's answer was withdrawn before the person decided".to_owned())
                }
            }
        })
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        let call_id = self.call.clone();
        self.turn_events.emit(|of| LiveEvent::ToolProgress { of, call_id, progress, total, message });
    }
}

/// Withdraws a form card still open when its wait ends unanswered (the call ended).
struct Withdraw {
    forms: Forms,
    events: Events,
    id: CardId,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        self.forms.withdraw(&self.events, &self.id);
    }
}

/// "everything asks: Please provide your name…", one line.
fn summary(server: &str, message: &str) -> String {
    const SHOWN: usize = 80;
    let line = message.lines().next().unwrap_or_default();
    let line = if line.chars().count() > SHOWN {
        format!("{}…", line.chars().take(SHOWN).collect::<String>())
    } else {
        line.to_owned()
    };
    format!("{server} asks: {line}")
}

/// The form as the server takes it: every field one the schema names and of its type,
/// every required one there, and the schema's default for each left out (SEP-1034).
/// The error names the field and what it needs, never what was typed.
pub fn filled(schema: &Value, content: Value) -> Result<Map<String, Value>, String> {
    let Value::Object(mut content) = content else { return Err("the form's content is a JSON object".into()) };
    let empty = Map::new();
    let properties = schema["properties"].as_object().unwrap_or(&empty);
    if let Some(unknown) = content.keys().find(|k| !properties.contains_key(*k)) {
        return Err(format!("the form has no field {unknown:?}"));
    }
    for (name, field) in properties {
        if !content.contains_key(name)
            && let Some(default) = field.get("default")
        {
            content.insert(name.clone(), default.clone());
        }
    }
    let required = schema["required"].as_array().map(Vec::as_slice).unwrap_or_default();
    if let Some(missing) = required.iter().filter_map(Value::as_str).find(|r| !content.contains_key(*r)) {
        return Err(format!("the field {missing:?} is required"));
    }
    for (name, value) in &content {
        check_field(name, &properties[name], value)?;
    }
    Ok(content)
}

/// Whether `value` is one of `choices` (each a value, or a `{"const"}`); anything is
/// when the field offers no choices.
fn among(choices: Option<&Vec<Value>>, value: &Value) -> bool {
    choices.is_none_or(|c| c.iter().any(|choice| choice == value || choice.get("const") == Some(value)))
}

fn check_field(name: &str, field: &Value, value: &Value) -> Result<(), String> {
    let choices = field["enum"]
        .as_array()
        .or_else(|| field["oneOf"].as_array().filter(|o| o.iter().all(|c| c.get("const").is_some())));
    match (field["type"].as_str().unwrap_or_default(), value) {
        ("string", Value::String(text)) => {
            let chars = text.chars().count();
            let min = field["minLength"].as_u64().unwrap_or(0);
            let max = field["maxLength"].as_u64().map_or(MAX_FIELD_CHARS as u64, |m| m.min(MAX_FIELD_CHARS as u64));
            if (chars as u64) < min || chars as u64 > max {
                return Err(format!("the field {name:?} takes {min} to {max} characters"));
            }
            if !among(choices, value) {
                return Err(format!("the field {name:?} takes one of the choices offered"));
            }
            match field["format"].as_str() {
                Some("email") if !text.contains('@') => Err(format!("the field {name:?} takes an email address")),
                Some("uri") if url::Url::parse(text).is_err() => {
                    Err(format!("the field {name:?} takes an address (URI)"))
                }
                Some("date") if jiff::civil::Date::strptime("%Y-%m-%d", text).is_err() => {
                    Err(format!("the field {name:?} takes a date as YYYY-MM-DD"))
                }
                Some("date-time") if text.parse::<jiff::Timestamp>().is_err() => {
                    Err(format!("the field {name:?} takes a date and time (RFC 3339)"))
                }
                _ => Ok(()),
            }
        }
        ("number" | "integer", Value::Number(number)) => {
            let kind = field["type"].as_str().unwrap_or_default();
            if kind == "integer" && !(number.is_i64() || number.is_u64()) {
                return Err(format!("the field {name:?} takes a whole number"));
            }
            let n = number.as_f64().unwrap_or_default();
            if field["minimum"].as_f64().is_some_and(|min| n < min)
                || field["maximum"].as_f64().is_some_and(|max| n > max)
            {
                return Err(format!("the field {name:?} is out of its range"));
            }
            Ok(())
        }
        ("boolean", Value::Bool(_)) => Ok(()),
        ("array", Value::Array(items)) => {
            let item = &field["items"];
            let choices = item["enum"].as_array().or_else(|| item["anyOf"].as_array());
            if !items.iter().all(|item| among(choices, item)) {
                return Err(format!("the field {name:?} takes only the choices offered"));
            }
            let count = items.len() as u64;
            if field["minItems"].as_u64().is_some_and(|min| count < min)
                || field["maxItems"].as_u64().is_some_and(|max| count > max)
            {
                return Err(format!("the field {name:?} takes another number of choices"));
            }
            Ok(())
        }
        (kind, _) => Err(format!("the field {name:?} takes a {}", if kind.is_empty() { "value" } else { kind })),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "minLength": 1, "default": "Ada" },
                "age": { "type": "integer", "minimum": 0, "maximum": 150 },
                "colour": { "type": "string", "enum": ["red", "green"], "default": "green" },
                "ok": { "type": "boolean" },
                "when": { "type": "string", "format": "date" },
            },
            "required": ["age"],
        })
    }

    #[test]
    fn a_form_is_filled_with_the_defaults_left_out_and_checked_field_by_field() {
        let form = filled(&schema(), json!({ "age": 30 })).unwrap();
        assert_eq!(Value::Object(form), json!({ "name": "Ada", "age": 30, "colour": "green" }));
        assert!(filled_err(json!({})).contains("\"age\" is required"));
        assert!(filled_err(json!({ "age": 30.5 })).contains("whole number"));
        assert!(filled_err(json!({ "age": 200 })).contains("range"));
        assert!(filled_err(json!({ "age": 3, "colour": "blue" })).contains("choices"));
        assert!(filled_err(json!({ "age": 3, "ok": "yes" })).contains("boolean"));
        assert!(filled_err(json!({ "age": 3, "when": "tomorrow" })).contains("YYYY-MM-DD"));
        assert!(filled_err(json!({ "age": 3, "extra": 1 })).contains("no field \"extra\""));
        assert!(filled_err(json!("text")).contains("JSON object"));
        assert!(filled(&schema(), json!({ "age": 3, "when": "2026-12-03", "ok": true })).is_ok());
    }

    #[test]
    fn an_error_names_the_field_but_never_repeats_what_was_typed() {
        let typed = "my secret answer";
        let err = filled_err(json!({ "age": 3, "colour": typed }));
        assert!(!err.contains(typed), "{err}");
    }

    fn filled_err(content: Value) -> String {
        filled(&schema(), content).unwrap_err()
    }
}
