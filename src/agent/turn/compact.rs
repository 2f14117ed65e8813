//! The turn's compaction step (§8.6): the older history summed up by this turn's model
//! through the one stream reader, stored, and the context composed again from it. What
//! to cut and how to word it is [`crate::agent::compaction`]'s; this is the doing.

use std::time::Instant;

use super::Turn;
use super::decide::End;
use super::record::{Measured, billed};
use crate::agent::events::LiveEvent;
use crate::agent::{compaction, context, prompt_for, usage};
use crate::providers::{ChatRequest, ContextMessage};
use crate::store::StoreError;
use crate::store::chat::{self, RequestOutcome, RequestPurpose};

/// The outcome and error code of a request made beside the turn's own (a summary, a
/// title): stopped whenever the person stopped the turn, ok only for a finished one with
/// words in it, else `empty`.
pub(super) fn summary_outcome(
    stopped: bool,
    end: &End,
    text: &str,
    empty: &'static str,
) -> (RequestOutcome, Option<&'static str>) {
    match end {
        _ if stopped => (RequestOutcome::Stopped, None),
        End::Finished if !text.trim().is_empty() => (RequestOutcome::Ok, None),
        End::Finished => (RequestOutcome::Error, Some(empty)),
        End::Stopped | End::NotSaved => (RequestOutcome::Stopped, None),
        End::Failed(err) => (RequestOutcome::Error, Some(err.code())),
    }
}

impl Turn {
    /// Summarises the older turns into a stored summary and rebuilds the context from it.
    /// The summary request is a recorded model request like any other, sent to this turn's
    /// model, so it obeys the person's privacy tier. Returns whether it compacted; a
    /// summary that fails leaves the context as it was.
    pub(super) async fn compact(&mut self) -> Result<bool, StoreError> {
        let space = self.session.space.clone();
        let after = self.summary.as_ref().map_or(0, |s| s.upto);
        let mut rows = chat::history_between(&space, &self.chat_id, chat::Path::Active, after, self.last_row).await?;
        rows.retain(|m| m.frame_id.is_none()); // frames' work is summed up in their results
        let keep = compaction::budget(self.model.context_window) / 2;
        let Some(upto) = compaction::cut(&rows, keep) else { return Ok(false) };
        let (older, newer): (Vec<_>, Vec<_>) = rows.into_iter().partition(|m| m.id <= upto);
        let transcript = compaction::transcript(self.summary.as_ref().map(|s| s.text.as_str()), &older);
        let room =
            compaction::budget(self.model.context_window) - usage::estimate_tokens(compaction::SUMMARY_PROMPT.len());
        let transcript = compaction::fit(transcript, usize::try_from(room.max(0) * 4 * 9 / 10).unwrap_or(0));
        // The summary request carries the person's history too: their own prefix first.
        let prompt = prompt_for(space.prompt_prefix(), compaction::SUMMARY_PROMPT);
        let request = ChatRequest {
            model: self.model.model_id.clone(),
            messages: vec![ContextMessage::System(prompt.clone()), ContextMessage::User(transcript)],
            tools: Vec::new(),
            cache_key: context::cache_key_of(&prompt),
            max_tokens: None,
            images: false,
        };
        let started = Instant::now();
        // Nothing sent (withheld, or stopped first): nothing to record or bill.
        let Some((reply, end)) = self.summary(&request).await else { return Ok(false) };
        let text = reply.text.trim();
        let outcome = summary_outcome(self.stop.is_cancelled(), &end, text, "empty_summary");
        // What the provider reported is billed; an estimate only for a summary that came back.
        let ok = outcome.0 == RequestOutcome::Ok;
        let counted = billed(reply.usage, ok, compaction::message_chars(&request), reply.text.len());
        let measured =
            Measured { reported: reply.usage, first_delta: None, took: started.elapsed(), attempts: 1, outcome };
        let source = self.source(RequestPurpose::Compaction, prompt, serde_json::Value::Array(Vec::new()), upto);
        self.pending = Some((self.record(measured, source), counted));
        self.write_pending().await;
        if !ok {
            tracing::warn!(user = %self.session.user_id, code = outcome.1, "compaction failed; the request goes unshortened");
            return Ok(false);
        }
        let summary = chat::add_summary(&space, &self.chat_id, upto, text).await?;
        self.events.emit(|of| LiveEvent::Compacted { of, upto });
        let mut context =
            context::compose_context(&self.prompt, Some(&summary.text), &newer, context::Rows::Conversation);
        crate::agent::documents::load_pictures(&space, self.runtime.system(), &mut context).await?;
        self.context = context;
        self.summary = Some(summary);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ProviderError;

    #[test]
    fn a_summary_with_words_in_it_compacts() {
        assert_eq!(
            summary_outcome(false, &End::Finished, "They spoke of cats.", "empty_summary"),
            (RequestOutcome::Ok, None)
        );
    }

    #[test]
    fn an_empty_summary_fails_and_the_request_goes_unshortened() {
        assert_eq!(
            summary_outcome(false, &End::Finished, "  ", "empty_summary"),
            (RequestOutcome::Error, Some("empty_summary"))
        );
    }

    #[test]
    fn a_summary_cut_short_by_a_stop_is_recorded_stopped_whatever_came_back() {
        assert_eq!(summary_outcome(true, &End::Finished, "words", "empty_summary"), (RequestOutcome::Stopped, None));
        let failed = End::Failed(ProviderError::Protocol("x".into()));
        assert_eq!(summary_outcome(true, &failed, "", "empty_summary"), (RequestOutcome::Stopped, None));
    }

    #[test]
    fn a_failed_summary_is_recorded_with_the_providers_code() {
        let failed = End::Failed(ProviderError::Protocol("x".into()));
        assert_eq!(
            summary_outcome(false, &failed, "", "empty_summary"),
            (RequestOutcome::Error, Some(ProviderError::Protocol("x".into()).code()))
        );
    }
}
