//! `document_read`: pages of one of the person's documents, or of a shared one, as text.
//! A long document is read a few pages at a time; what comes back says where to go on.
//! The text is outside content (§8.4).

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};
use crate::agent::documents::{READ_CHARS, as_read, pages_within};
use crate::ids::DocumentId;
use crate::store::documents::{self, Status};

pub struct DocumentRead;

impl Tool for DocumentRead {
    fn name(&self) -> &'static str {
        "document_read"
    }

    fn description(&self) -> &'static str {
        // Short: every word here is in every request to a small local model's window.
        "Reads a document (the person's or a shared one) by id, as many pages as fit, saying where to read on."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "document": { "type": "string", "description": "The document's id." },
                "pages": {
                    "type": "string",
                    "description": "Pages from 1: \"3\", \"2-5\" or \"6-\"; all when left out."
                }
            },
            "required": ["document"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        false
    }

    fn brings_outside_content(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let Some(id) = arguments["document"].as_str().map(str::trim).filter(|id| !id.is_empty()) else {
                return Err("document_read needs \"document\", a document's id; document_search finds them".into());
            };
            let (first, last) = pages(arguments["pages"].as_str())?;
            let id = DocumentId::new(id);
            let found = documents::find(&context.space, &context.system, &id)
                .await
                .map_err(|err| format!("the document could not be read: {err}"))?;
            let Some((shelf, document)) = found else {
                return Err(format!("there is no document {id} this person can read; document_search finds them"));
            };
            if context.remote && document.local_only {
                return Err("this document was shared by someone whose words stay on this machine, and this \
                            conversation may be read by a model outside it: it cannot be read here. Tell the person."
                    .into());
            }
            match document.status {
                Status::Ready => {}
                Status::Reading => return Err("this document's text is still being read; try again in a moment".into()),
                Status::NoText | Status::Failed => {
                    let why = document.status_detail.as_deref().unwrap_or("no text was found in it");
                    return Err(format!("this document has no text to read: {why}"));
                }
            }
            let of = document.pages.unwrap_or(0);
            if first > of {
                return Err(format!("this document has {of} page(s); there is no page {first}"));
            }
            let (text, next) = pages_within(shelf, &document.id, first, last.min(of), READ_CHARS)
                .await
                .map_err(|err| format!("the document could not be read: {err}"))?;
            Ok(as_read(&document, &text, of, next))
        })
    }
}

/// The pages asked for, from 1: `None` is from the first to the last.
fn pages(asked: Option<&str>) -> Result<(i64, i64), String> {
    let wrong = || "\"pages\" is a page number, a range such as \"2-5\", or \"6-\" for page 6 on".to_owned();
    let Some(asked) = asked.map(str::trim).filter(|a| !a.is_empty()) else { return Ok((1, i64::MAX)) };
    let number = |text: &str| text.trim().parse::<i64>().ok().filter(|n| *n >= 1);
    let (first, last) = match asked.split_once(['-', '–']) {
        None => {
            let page = number(asked).ok_or_else(wrong)?;
            (page, page)
        }
        Some((first, last)) => {
            let first = number(first).ok_or_else(wrong)?;
            let last = if last.trim().is_empty() { i64::MAX } else { number(last).ok_or_else(wrong)? };
            (first, last)
        }
    };
    if last < first {
        return Err(format!("pages {first} to {last} run backwards; give the first page first"));
    }
    Ok((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_one_a_range_or_an_open_end() {
        assert_eq!(pages(None), Ok((1, i64::MAX)));
        assert_eq!(pages(Some("3")), Ok((3, 3)));
        assert_eq!(pages(Some("2-5")), Ok((2, 5)));
        assert_eq!(pages(Some("2 – 5")), Ok((2, 5)));
        assert_eq!(pages(Some("6-")), Ok((6, i64::MAX)));
        assert!(pages(Some("0")).is_err());
        assert!(pages(Some("5-2")).unwrap_err().contains("backwards"));
        assert!(pages(Some("all")).is_err());
    }
}
