//! A person's export (§14, "my data"): everything in their private space as a zip archive
//! a person can read without Skald — conversations and notes as Markdown, their documents
//! as the files they uploaded, everything also as JSON. Built in memory from the open space and handed straight to the person: the
//! archive is never written to disk by Skald.

use std::io::Write;

use serde_json::{Value, json};
use zip::write::SimpleFileOptions;

use crate::store::StoreError;
use crate::store::approvals;
use crate::store::chat::{self, Conversation, Message, MessageRole};
use crate::store::documents::Shelf;
use crate::store::notes;
use crate::store::private::PrivateStore;

/// Why an export could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the archive could not be written: {0}")]
    Zip(#[from] zip::result::ZipError),
    #[error("the archive could not be written: {0}")]
    Io(#[from] std::io::Error),
}

const README: &str = "This archive holds everything Skald kept in your private space when you exported it.\n\n\
     conversations/   each conversation as Markdown, oldest message first\n\
     notes/           each note as Markdown\n\
     documents/       each of your own documents, as the file you uploaded\n\
     skald.json       all of it, and your settings and approval decisions, as JSON\n\n\
     Keep it somewhere safe: unlike your space in Skald, this archive is not encrypted.\n";

/// The person's space as zip bytes.
pub async fn archive(space: &PrivateStore, person: &str) -> Result<Vec<u8>, ExportError> {
    let sessions = chat::conversations(space).await?;
    let mut conversations = Vec::with_capacity(sessions.len());
    for session in sessions {
        // The Markdown reads as the conversation reads now; the JSON keeps every version.
        let (shown, every) = tokio::try_join!(chat::history(space, &session.id), chat::all_rows(space, &session.id))?;
        conversations.push((session, shown, every));
    }
    let notes = notes::all(space).await?;
    let shelf = Shelf::Own(space);
    let documents = shelf.list().await?;
    let cards = approvals::all(space).await?;
    let rules = approvals::personal_rules(space).await?;
    let settings: serde_json::Map<String, Value> =
        space.settings().await?.into_iter().map(|(k, v)| (k, Value::String(v))).collect();

    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("README.txt", options)?;
    zip.write_all(README.as_bytes())?;
    for (index, (session, history, _)) in conversations.iter().enumerate() {
        zip.start_file(format!("conversations/{:03}-{}.md", index + 1, slug(&session.title)), options)?;
        zip.write_all(conversation_markdown(session, history).as_bytes())?;
    }
    for note in &notes {
        zip.start_file(format!("notes/{:03}-{}.md", note.id, slug(&note.title)), options)?;
        zip.write_all(format!("# {}\n\n{}\n", note.title, note.body).as_bytes())?;
    }
    let mut files = Vec::with_capacity(documents.len());
    for (index, document) in documents.iter().enumerate() {
        let path = format!("documents/{}", file_name(index + 1, &document.name));
        zip.start_file(path.as_str(), options)?;
        // Chunk by chunk: the whole original is never held twice.
        for seq in 0..shelf.chunk_count(&document.id).await? {
            if let Some(bytes) = shelf.chunk(&document.id, seq).await? {
                zip.write_all(&bytes)?;
            }
        }
        files.push(json!({ "document": document, "file": path }));
    }
    let everything = json!({
        "person": person,
        "exported_at": crate::store::timestamp(),
        "conversations": conversations.iter().map(|(s, _, h)| json!({ "session": s, "messages": h })).collect::<Vec<_>>(),
        "notes": notes,
        "documents": files,
        "settings": settings,
        "cards": cards,
        "always_allow": rules,
    });
    zip.start_file("skald.json", options)?;
    zip.write_all(serde_json::to_string_pretty(&everything).expect("JSON serializes").as_bytes())?;
    Ok(zip.finish()?.into_inner())
}

/// A conversation as a person reads it: who said what, tool calls in brief.
fn conversation_markdown(session: &Conversation, history: &[Message]) -> String {
    let title = if session.title.is_empty() { "Untitled conversation" } else { &session.title };
    let mut out = format!("# {title}\n\nStarted {} with the {} agent.\n", session.created_at, session.agent);
    for message in history.iter().filter(|m| m.frame_id.is_none()) {
        let text = message.text.trim();
        match message.role {
            MessageRole::User => out.push_str(&format!("\n**You** ({}):\n\n{text}\n", message.created_at)),
            MessageRole::Assistant if !text.is_empty() => out.push_str(&format!("\n**Skald**:\n\n{text}\n")),
            MessageRole::Tool => out.push_str(&format!(
                "\n> {} ({}): {}\n",
                message.tool_name.as_deref().unwrap_or("tool"),
                message.status.as_str(),
                text.lines().next().unwrap_or("")
            )),
            MessageRole::Assistant => {}
        }
    }
    out
}

/// A file-name-safe form of a title: lowercase letters, digits and dashes, at most 40.
fn slug(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() && c.is_ascii() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 40 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() { "untitled".to_owned() } else { slug.to_owned() }
}

/// A document's file name in the archive: numbered, so two of one name both fit, and
/// kept to letters, digits, dots, dashes and underscores (its extension survives).
fn file_name(number: usize, name: &str) -> String {
    let kept: String =
        name.chars().map(|c| if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '-' }).collect();
    let kept = kept.trim_start_matches(['.', '-']);
    let mut kept: String = kept.chars().rev().take(80).collect::<Vec<_>>().into_iter().rev().collect();
    if kept.trim_matches(['-', '.']).is_empty() {
        kept = "document".to_owned();
    }
    format!("{number:03}-{kept}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_documents_file_name_is_numbered_and_keeps_its_extension() {
        assert_eq!(file_name(1, "lease 2026.pdf"), "001-lease-2026.pdf");
        assert_eq!(file_name(12, "../../etc/passwd"), "012-etc-passwd");
        assert_eq!(file_name(3, "..."), "003-document");
        let long = format!("{}.pdf", "a".repeat(200));
        assert!(file_name(4, &long).ends_with("aaa.pdf"));
        assert_eq!(file_name(4, &long).len(), 4 + 80);
    }

    #[test]
    fn a_slug_keeps_words_and_drops_everything_else() {
        assert_eq!(slug("Plan the Trip: Lyon & back!"), "plan-the-trip-lyon-back");
        assert_eq!(slug("   "), "untitled");
        assert_eq!(slug("Café au lait"), "caf-au-lait");
        assert!(slug(&"word ".repeat(20)).len() <= 40);
    }
}
