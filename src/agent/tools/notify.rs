//! `notify`: a short message to the person's own windows, shown as a desktop notification
//! by the shell. It reaches no one else.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};
use crate::agent::events::LiveEvent;
use crate::notify::Notification;

pub struct Notify;

const MAX_TITLE: usize = 100;
const MAX_BODY: usize = 1000;

impl Tool for Notify {
    fn name(&self) -> &'static str {
        "notify"
    }

    fn description(&self) -> &'static str {
        "Shows the person a desktop notification with a short title and text, for something they \
         asked to be told about. It reaches only them."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "title": { "type": "string", "maxLength": MAX_TITLE },
                "body": { "type": "string", "maxLength": MAX_BODY }
            },
            "required": ["title"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let title = arguments["title"].as_str().map(str::trim).filter(|t| !t.is_empty());
            let Some(title) = title else { return Err("a notification needs a title".into()) };
            let body = arguments["body"].as_str().unwrap_or("").trim();
            if title.chars().count() > MAX_TITLE || body.chars().count() > MAX_BODY {
                return Err(format!("keep the title within {MAX_TITLE} and the text within {MAX_BODY} characters"));
            }
            let event = LiveEvent::Notify { title: title.to_owned(), body: body.to_owned() };
            context.events.to_person(&context.user, &event);
            let shown = context.notifier.post(Notification::plain(title, body));
            Ok(if shown { "shown".into() } else { "sent to the person's open windows".into() })
        })
    }
}
