//! `scratchpad`: the assistant's working notes for the current conversation — a plan, a
//! list in progress — kept in the person's encrypted file and gone with the conversation.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};
use crate::store::chat;

pub struct Scratchpad;

/// The most a scratchpad holds.
const MAX_CHARS: usize = 32 * 1024;

impl Tool for Scratchpad {
    fn name(&self) -> &'static str {
        "scratchpad"
    }

    fn description(&self) -> &'static str {
        "Your working notes for this conversation only: read them, replace them, or add a line. \
         Use it to keep a plan or a list while you work; the person can see it."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": { "type": "string", "enum": ["read", "write", "append"] },
                "text": { "type": "string", "description": "For write and append." }
            },
            "required": ["action"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let storage = |err: crate::store::StoreError| format!("the scratchpad could not be used: {err}");
            let current = chat::scratchpad(&context.space, &context.chat_id).await.map_err(storage)?;
            let text = arguments["text"].as_str();
            let next = match (arguments["action"].as_str(), text) {
                (Some("read"), _) => return Ok(if current.is_empty() { "(empty)".to_owned() } else { current }),
                (Some("write"), Some(text)) => text.to_owned(),
                (Some("append"), Some(text)) if current.is_empty() => text.to_owned(),
                (Some("append"), Some(text)) => format!("{current}\n{text}"),
                (Some("write" | "append"), None) => return Err("write and append need \"text\"".into()),
                _ => return Err("action is one of read, write, append".into()),
            };
            if next.chars().count() > MAX_CHARS {
                return Err(format!("the scratchpad holds at most {MAX_CHARS} characters; write a shorter version"));
            }
            chat::put_scratchpad(&context.space, &context.chat_id, &next).await.map_err(storage)?;
            Ok(format!("saved ({} characters)", next.chars().count()))
        })
    }
}
