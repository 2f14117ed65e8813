//! `note_write`: saves a note in the person's encrypted file, new or in place of an
//! existing one. Notes outlive the conversation, unlike the scratchpad.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};
use crate::store::StoreError;
use crate::store::notes::{self, MAX_BODY_CHARS, MAX_TITLE_CHARS};

pub struct NoteWrite;

impl Tool for NoteWrite {
    fn name(&self) -> &'static str {
        "note_write"
    }

    fn description(&self) -> &'static str {
        "Saves a note the person keeps beyond this conversation. Without an id it creates a new \
         note; with the id of an existing note it replaces that note's title and text, so give the \
         whole text, not only what changed (read it first with note_read). Use it when the person \
         asks you to note, remember or write something down for later."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "title": { "type": "string", "maxLength": MAX_TITLE_CHARS, "description": "A short title." },
                "text": { "type": "string", "maxLength": MAX_BODY_CHARS, "description": "The whole text of the note." },
                "id": { "type": "integer", "description": "The note to replace; leave out to create a new one." }
            },
            "required": ["title", "text"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let (Some(title), Some(text)) = (arguments["title"].as_str(), arguments["text"].as_str()) else {
                return Err("note_write needs \"title\" and \"text\"".into());
            };
            let title = title.trim();
            notes::check(Some(title), Some(text))?;
            let saved = match &arguments["id"] {
                Value::Null => notes::create(&context.space, title, text, context.outside_content).await,
                id => match id.as_i64() {
                    Some(id) => {
                        notes::update(&context.space, id, Some(title), Some(text), context.outside_content).await
                    }
                    None => return Err("\"id\" is the number of an existing note; leave it out for a new note".into()),
                },
            };
            match saved {
                Ok(note) => Ok(format!("saved note {} {:?}", note.id, note.title)),
                Err(StoreError::NotFound) => Err(format!(
                    "there is no note {}; leave out \"id\" to create a new note, or find it with note_list",
                    arguments["id"]
                )),
                Err(StoreError::WrongState(why)) => Err(why.into()),
                Err(err) => Err(format!("the note could not be saved: {err}")),
            }
        })
    }
}
