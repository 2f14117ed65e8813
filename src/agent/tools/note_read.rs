//! `note_read`: one of the person's notes, whole, by its id.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};
use crate::store::notes;

pub struct NoteRead;

impl Tool for NoteRead {
    fn name(&self) -> &'static str {
        "note_read"
    }

    fn description(&self) -> &'static str {
        "Reads one of the person's saved notes in full: its title and text. Find the id with \
         note_list or note_search first."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "id": { "type": "integer", "description": "The note's id." }
            },
            "required": ["id"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let Some(id) = arguments["id"].as_i64() else {
                return Err("note_read needs \"id\", the number of a note; note_list shows them".into());
            };
            let note =
                notes::get(&context.space, id).await.map_err(|err| format!("the note could not be read: {err}"))?;
            let Some(note) = note else {
                return Err(format!("there is no note {id}; note_list shows the notes there are"));
            };
            if note.outside {
                context.mark_outside();
            }
            let updated = note.updated_at.get(..10).unwrap_or(&note.updated_at);
            Ok(format!("note {} {:?}, updated {updated}\n\n{}", note.id, note.title, note.body))
        })
    }
}
