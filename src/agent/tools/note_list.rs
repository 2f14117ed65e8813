//! `note_list`: the person's notes, one line each, most recently changed first.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};
use crate::store::notes::{self, NoteSummary};

pub struct NoteList;

/// The most lines one answer holds; past that, searching is the better way in.
const MAX_LINES: usize = 200;

impl Tool for NoteList {
    fn name(&self) -> &'static str {
        "note_list"
    }

    fn description(&self) -> &'static str {
        "Lists the person's saved notes, most recently changed first: id, title and the date of \
         the last change. Use it to find a note to read or change; to find notes about \
         something, note_search is better."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {},
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, _: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let list =
                notes::list(&context.space).await.map_err(|err| format!("the notes could not be listed: {err}"))?;
            // Titles written from outside content carry it too.
            if list.iter().any(|note| note.outside) {
                context.mark_outside();
            }
            Ok(lines(&list))
        })
    }
}

fn lines(list: &[NoteSummary]) -> String {
    if list.is_empty() {
        return "(no notes yet)".into();
    }
    let mut out: Vec<String> = list
        .iter()
        .take(MAX_LINES)
        .map(|note| {
            let updated = note.updated_at.get(..10).unwrap_or(&note.updated_at);
            format!("{}\t{:?}\tupdated {updated}", note.id, note.title)
        })
        .collect();
    if list.len() > MAX_LINES {
        out.push(format!("… and {} older notes; use note_search to find them", list.len() - MAX_LINES));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(id: i64) -> NoteSummary {
        NoteSummary {
            id,
            title: format!("Note {id}"),
            updated_at: "2025-03-04T05:06:07.890Z".into(),
            chars: 3,
            outside: false,
        }
    }

    #[test]
    fn each_note_is_a_line_with_its_id_title_and_date() {
        assert_eq!(lines(&[note(2), note(1)]), "2\t\"Note 2\"\tupdated 2025-03-04\n1\t\"Note 1\"\tupdated 2025-03-04");
        assert_eq!(lines(&[]), "(no notes yet)");
    }

    #[test]
    fn a_long_list_is_cut_and_says_how_many_were_left_out() {
        let many: Vec<_> = (0..MAX_LINES as i64 + 5).map(note).collect();
        let text = lines(&many);
        assert_eq!(text.lines().count(), MAX_LINES + 1);
        assert!(text.ends_with("… and 5 older notes; use note_search to find them"), "{text}");
    }
}
