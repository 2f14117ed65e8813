//! `note_delete`: deletes one of the person's notes for good (the file's secure_delete
//! zeroes its pages and the search index drops its words).

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};
use crate::store::StoreError;
use crate::store::notes;

pub struct NoteDelete;

impl Tool for NoteDelete {
    fn name(&self) -> &'static str {
        "note_delete"
    }

    fn description(&self) -> &'static str {
        "Deletes one of the person's saved notes for good, by its id. Use it only when the person \
         asks for that note to be removed; check the id with note_list or note_read first."
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
        true
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let Some(id) = arguments["id"].as_i64() else {
                return Err("note_delete needs \"id\", the number of a note; note_list shows them".into());
            };
            match notes::delete(&context.space, id).await {
                Ok(()) => Ok(format!("deleted note {id}")),
                Err(StoreError::NotFound) => Err(format!("there is no note {id}; nothing was deleted")),
                Err(err) => Err(format!("the note could not be deleted: {err}")),
            }
        })
    }
}
