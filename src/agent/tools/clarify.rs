//! `clarify`: the assistant asks the person a question before it guesses (§8.5). The turn
//! parks on a question card in the person's inbox; their answer becomes the call's result.
//! The turn loop does the asking (`turn.rs`); this file is the tool's face to the model.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};

pub struct Clarify;

/// The longest question, and the most suggested answers, a card shows.
pub const MAX_QUESTION_CHARS: usize = 500;
pub const MAX_SUGGESTIONS: usize = 6;

impl Tool for Clarify {
    fn name(&self) -> &'static str {
        super::CLARIFY
    }

    fn description(&self) -> &'static str {
        "Asks the person one short question and waits for their answer, when a wrong guess would cost them \
         time or money. Offer a few likely answers in suggestions when you can."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "question": { "type": "string", "maxLength": MAX_QUESTION_CHARS },
                "suggestions": {
                    "type": "array",
                    "items": { "type": "string" },
                    "maxItems": MAX_SUGGESTIONS
                }
            },
            "required": ["question"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, arguments: Value, _: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        // Reached only when the arguments are no question a card could show.
        Box::pin(async move { Err(question(&arguments).err().unwrap_or("clarify asks through the inbox").into()) })
    }
}

/// The question and suggestions a card shows, or why these arguments are none.
pub fn question(arguments: &Value) -> Result<(String, Vec<String>), &'static str> {
    let text = arguments["question"].as_str().map(str::trim).unwrap_or("");
    if text.is_empty() {
        return Err("clarify needs a \"question\"");
    }
    if text.chars().count() > MAX_QUESTION_CHARS {
        return Err("ask a shorter question: at most 500 characters");
    }
    let suggestions: Vec<String> = match &arguments["suggestions"] {
        Value::Null => Vec::new(),
        Value::Array(items) if items.len() <= MAX_SUGGESTIONS && items.iter().all(Value::is_string) => {
            items.iter().filter_map(Value::as_str).map(str::to_owned).collect()
        }
        _ => return Err("\"suggestions\" is a list of at most 6 short answers"),
    };
    Ok((text.to_owned(), suggestions))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_needs_text_and_at_most_six_suggestions() {
        assert_eq!(question(&json!({ "question": " Which day? " })).unwrap(), ("Which day?".to_owned(), vec![]));
        let with = question(&json!({ "question": "Which?", "suggestions": ["a", "b"] })).unwrap();
        assert_eq!(with.1, ["a", "b"]);
        assert!(question(&json!({ "question": "" })).is_err());
        assert!(question(&json!({ "question": "q", "suggestions": ["1", "2", "3", "4", "5", "6", "7"] })).is_err());
        assert!(question(&json!({ "question": "q", "suggestions": [1] })).is_err());
    }
}
