//! Automatic titles (issue 24): after a conversation's first reply, its own model names
//! it in a few words, through the one stream reader, as a recorded request billed like
//! any other and bound by the person's privacy tier. Only a title no person wrote is
//! replaced (`database/migrations/user/0015_titles.sql`), and the person's `auto_titles`
//! setting `off` turns it off.

use std::time::Instant;

use super::Turn;
use super::compact::summary_outcome;
use super::record::{Measured, billed};
use crate::agent::events::LiveEvent;
use crate::agent::{compaction, context, prompt_for};
use crate::providers::{ChatRequest, ContextMessage};
use crate::store::StoreError;
use crate::store::chat::{self, RequestOutcome, RequestPurpose};

/// The person's setting that turns automatic titles off, with the value `off`.
pub const AUTO_TITLES: &str = "auto_titles";

/// What the model is asked.
const TITLE_PROMPT: &str = "You name conversations. Reply with a title of two to six words for the \
     conversation below, in the language it is written in: no quotes, no full stop, nothing else.";

/// How much of the message and of the reply the model reads to name them.
const EXCERPT_CHARS: usize = 1500;

/// The longest title kept; a longer answer is cut at a word.
const MAX_TITLE_CHARS: usize = 80;

/// What the model reads: the person's message and the reply, each cut to an excerpt.
fn title_input(asked: &str, replied: &str) -> String {
    let cut = |text: &str| text.chars().take(EXCERPT_CHARS).collect::<String>();
    format!("Person: {}\n\nAssistant: {}", cut(asked), cut(replied))
}

/// A model's answer as a title: its first line, without the quotes, marks and full stop
/// small models add, cut at a word; none when nothing is left.
pub(super) fn title_from_answer(answer: &str) -> Option<String> {
    let marks = |c: char| c.is_whitespace() || "\"'`*#_“”«»".contains(c);
    let line = answer.lines().map(str::trim).find(|l| !l.is_empty())?.trim_matches(marks);
    let line = line.strip_prefix("Title:").or_else(|| line.strip_prefix("title:")).unwrap_or(line);
    let trimmed = line.trim_matches(marks).trim_end_matches('.').trim();
    if trimmed.is_empty() {
        return None;
    }
    if trimmed.chars().count() <= MAX_TITLE_CHARS {
        return Some(trimmed.to_owned());
    }
    let cut: String = trimmed.chars().take(MAX_TITLE_CHARS).collect();
    Some(cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head).trim_end().to_owned())
}

/// The person's message and the reply that ended the turn, from its context.
fn exchange(context: &[ContextMessage]) -> Option<(&str, &str)> {
    let asked = context.iter().rposition(|m| matches!(m, ContextMessage::User(_)))?;
    let ContextMessage::User(words) = &context[asked] else { return None };
    let replied = context[asked..].iter().rev().find_map(|m| match m {
        ContextMessage::Assistant { text, .. } if !text.trim().is_empty() => Some(text.as_str()),
        _ => None,
    })?;
    Some((words, replied))
}

impl Turn {
    /// Names the conversation if it still has no title a person or its model gave it and
    /// the person has not turned titles off. A failure leaves the title taken from the
    /// first message; it is logged, never shown as an error of the turn.
    pub async fn name_conversation(mut self) {
        if let Err(err) = self.try_naming().await {
            tracing::warn!(user = %self.session.user_id, %err, "the conversation could not be named");
        }
    }

    async fn try_naming(&mut self) -> Result<(), StoreError> {
        if !self.runtime.inner.limits.auto_titles {
            return Ok(());
        }
        let space = self.session.space.clone();
        let off = space.setting(AUTO_TITLES).await?.is_some_and(|v| v == "off");
        if off || self.frame.is_some() || !chat::wants_title(&space, &self.chat_id).await? {
            return Ok(());
        }
        let Some((asked, replied)) = exchange(&self.context) else { return Ok(()) };
        let prompt = prompt_for(space.prompt_prefix(), TITLE_PROMPT);
        let request = ChatRequest {
            model: self.model.model_id.clone(),
            messages: vec![ContextMessage::System(prompt.clone()), ContextMessage::User(title_input(asked, replied))],
            tools: Vec::new(),
            cache_key: context::cache_key_of(&prompt),
            max_tokens: None,
            images: false,
        };
        let started = Instant::now();
        let Some((reply, end)) = self.summary(&request).await else { return Ok(()) };
        let title = title_from_answer(&reply.text);
        let outcome = summary_outcome(self.stop.is_cancelled(), &end, title.as_deref().unwrap_or(""), "empty_title");
        let ok = outcome.0 == RequestOutcome::Ok;
        let counted = billed(reply.usage, ok, compaction::message_chars(&request), reply.text.len());
        let measured =
            Measured { reported: reply.usage, first_delta: None, took: started.elapsed(), attempts: 1, outcome };
        let source = self.source(RequestPurpose::Title, prompt, serde_json::Value::Array(Vec::new()), self.last_row);
        self.pending = Some((self.record(measured, source), counted));
        self.write_pending().await;
        let Some(title) = title.filter(|_| ok) else { return Ok(()) };
        if chat::set_model_title(&space, &self.chat_id, &title).await? {
            let event = LiveEvent::Titled { session: self.chat_id.clone(), title };
            self.runtime.events().to_person(&self.session.user_id, &event);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_the_answers_first_line_without_the_marks_small_models_add() {
        assert_eq!(title_from_answer("\n  \"Weekend trip to Lyon.\"\nmore").as_deref(), Some("Weekend trip to Lyon"));
        assert_eq!(title_from_answer("**Title: Bread recipe**").as_deref(), Some("Bread recipe"));
        assert_eq!(title_from_answer("Title: « Le pain »").as_deref(), Some("Le pain"));
        assert_eq!(title_from_answer(" \n\"\" \n"), None, "nothing left is no title");
    }

    #[test]
    fn a_long_answer_is_cut_at_a_word() {
        let title = title_from_answer(&"word ".repeat(40)).unwrap();
        assert!(title.chars().count() <= MAX_TITLE_CHARS && title.ends_with("word"), "{title}");
    }

    #[test]
    fn the_exchange_named_is_the_last_message_and_the_reply_after_it() {
        let context = [
            ContextMessage::System("p".into()),
            ContextMessage::User("Hi".into()),
            ContextMessage::Assistant { text: String::new(), tool_calls: Vec::new() },
            ContextMessage::Tool { call_id: "c".into(), content: "42".into() },
            ContextMessage::Assistant { text: "It is noon.".into(), tool_calls: Vec::new() },
        ];
        assert_eq!(exchange(&context), Some(("Hi", "It is noon.")));
        assert_eq!(exchange(&context[..3]), None, "no reply with words, nothing to name");
        let input = title_input(&"a".repeat(5000), "b");
        assert!(input.chars().count() < 1600, "the model reads excerpts");
    }
}
