//! A person's export (§14, "my data"): everything in their private space as a zip archive
//! a person can read without Skald — conversations and notes as Markdown, everything also
//! as JSON. Built in memory from the open space and handed straight to the person: the
//! archive is never written to disk by Skald.

use std::io::Write;

use serde_json::{Value, json};
use zip::write::SimpleFileOptions;

use crate::store::StoreError;
use crate::store::approvals;
use crate::store::chat::{self, Conversation, Message, MessageRole};
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
    let everything = json!({
        "person": person,
        "exported_at": crate::store::timestamp(),
        "conversations": conversations.iter().map(|(s, _, h)| json!({ "session": s, "messages": h })).collect::<Vec<_>>(),
        "notes": notes,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slug_keeps_words_and_drops_everything_else() {
        assert_eq!(slug("Plan the Trip: Lyon & back!"), "plan-the-trip-lyon-back");
        assert_eq!(slug("   "), "untitled");
        assert_eq!(slug("Café au lait"), "caf-au-lait");
        assert!(slug(&"word ".repeat(20)).len() <= 40);
    }
}
