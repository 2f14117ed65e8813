//! `note_search`: finds the person's notes by the words in them, best match first.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};
use crate::store::notes;

pub struct NoteSearch;

/// The most hits one search returns.
const MAX_HITS: u32 = 10;

/// The longest query. A few words find a note; the limit is also in the schema, so a
/// small model writing under a grammar that follows it cannot run on inside the string.
const MAX_QUERY_CHARS: usize = 200;

impl Tool for NoteSearch {
    fn name(&self) -> &'static str {
        "note_search"
    }

    fn description(&self) -> &'static str {
        "Searches the person's saved notes for words, in titles and text, and returns the best \
         matches (at most 10) with their id, title and the passage that matched. A note matches \
         when it holds every word (or a word starting with it); accents and case do not matter. \
         Use a few distinctive words, then note_read to see a note whole."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "maxLength": MAX_QUERY_CHARS,
                    "description": "Words to look for; plain words, no operators."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let query = super::search_words(&arguments, self.name(), MAX_QUERY_CHARS)?;
            let hits = notes::search(&context.space, query, MAX_HITS)
                .await
                .map_err(|err| format!("the notes could not be searched: {err}"))?;
            if hits.iter().any(|hit| hit.outside) {
                context.mark_outside();
            }
            if hits.is_empty() {
                return Ok("no note holds all of those words; try fewer or other words, or note_list".into());
            }
            Ok(hits
                .iter()
                .map(|hit| format!("{} {:?}: {}", hit.id, hit.title, hit.snippet))
                .collect::<Vec<_>>()
                .join("\n"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_bounds_the_query_as_the_call_does() {
        assert_eq!(NoteSearch.parameters()["properties"]["query"]["maxLength"], MAX_QUERY_CHARS);
        let long = json!({ "query": "é".repeat(MAX_QUERY_CHARS + 1) });
        assert!(super::super::search_words(&long, NoteSearch.name(), MAX_QUERY_CHARS).is_err());
    }
}
