//! What a turn writes of itself (§8.1): each model request's record and the tokens it
//! cost, and the closing row that ends a turn or a frame. The counting is pure; the
//! writes never cost the person their reply — a failure is logged.

use std::time::Duration;

use super::Turn;
use super::decide::{Closing, End};
use super::stream::Reply;
use crate::agent::{RENDER_VERSION, compaction, usage};
use crate::providers::{self, ChatRequest};
use crate::store::StoreError;
use crate::store::chat::{
    self, MessageRole, NewMessage, RequestFigures, RequestOutcome, RequestPurpose, RequestRecord, RequestSource,
    TurnEnd, TurnState,
};
use crate::store::usage as usage_totals;

/// The text a call without a result gets when its turn ends around it.
const ORPHAN_RESULT: &str = "Error: the turn ended before this call finished.";

/// A request's record with the tokens billed for it, not yet written.
pub(super) type Pending = (RequestRecord, (i64, i64));

/// A provider's token count, within a range no honest reply leaves.
pub(super) fn clamp(tokens: u64) -> i64 {
    i64::try_from(tokens.min(1 << 40)).unwrap_or(0)
}

fn millis(took: Duration) -> i64 {
    i64::try_from(took.as_millis()).unwrap_or(i64::MAX)
}

/// The tokens billed for a request: what the provider reported, else an estimate from
/// the characters sent and received when something `came_back`, else nothing — so caps
/// hold for every provider, and a request that returned nothing costs nothing.
pub(super) fn billed(reported: Option<(u64, u64)>, came_back: bool, sent: usize, received: usize) -> (i64, i64) {
    match reported {
        Some((input, output)) => (clamp(input), clamp(output)),
        None if came_back => (usage::estimate_tokens(sent), usage::estimate_tokens(received)),
        None => (0, 0),
    }
}

/// A turn request's outcome and error code, as its record keeps them.
fn outcome_of(end: &End) -> (RequestOutcome, Option<&'static str>) {
    match end {
        End::Finished => (RequestOutcome::Ok, None),
        End::Stopped | End::NotSaved => (RequestOutcome::Stopped, None),
        End::Failed(err) => (RequestOutcome::Error, Some(err.code())),
    }
}

/// A request's record: made in `turn` to `model`, how it went, and what it was made of.
pub(super) fn request_record(
    turn: &crate::ids::TurnId,
    model: &crate::providers::catalogue::CatalogueModel,
    measured: Measured,
    source: RequestSource,
) -> RequestRecord {
    let figures = RequestFigures {
        turn_id: turn.clone(),
        provider: model.provider.clone(),
        model: model.model_id.clone(),
        tokens_in: measured.reported.map(|(input, _)| clamp(input)),
        tokens_out: measured.reported.map(|(_, output)| clamp(output)),
        ttft_ms: measured.first_delta.map(millis),
        latency_ms: millis(measured.took),
        attempts: i64::from(measured.attempts),
        outcome: measured.outcome.0,
        error_code: measured.outcome.1.map(str::to_owned),
    };
    RequestRecord { figures, source }
}

/// How a request went, for its record.
pub(super) struct Measured {
    pub reported: Option<(u64, u64)>,
    pub first_delta: Option<Duration>,
    pub took: Duration,
    pub attempts: u32,
    pub outcome: (RequestOutcome, Option<&'static str>),
}

impl Turn {
    /// What to record of a turn's model request: the record for the person's file and the
    /// tokens for their usage totals. One that was withheld (no attempt) is no request.
    pub(super) fn account(
        &self,
        request: &ChatRequest,
        reply: &Reply,
        end: &End,
        attempts: u32,
        took: Duration,
    ) -> Option<Pending> {
        if attempts == 0 {
            return None;
        }
        let counted = billed(reply.usage, !reply.is_empty(), compaction::message_chars(request), reply.chars());
        let measured = Measured {
            reported: reply.usage,
            first_delta: reply.first_delta,
            took,
            attempts,
            outcome: outcome_of(end),
        };
        let source = self.source(
            RequestPurpose::Turn,
            self.prompt.clone(),
            providers::tools_to_json(&request.tools),
            self.last_row,
        );
        Some((self.record(measured, source), counted))
    }

    /// Where a request came from, so it can be composed again (§8.1).
    pub(super) fn source(
        &self,
        purpose: RequestPurpose,
        prompt: String,
        tools: serde_json::Value,
        history_upto: i64,
    ) -> RequestSource {
        RequestSource {
            session_id: self.chat_id.clone(),
            kind: self.endpoint.kind,
            render_version: RENDER_VERSION,
            prompt,
            tools,
            history_upto,
            summary_id: self.summary.as_ref().map(|s| s.id),
            purpose,
            frame_id: self.frame_id().map(str::to_owned),
            images: self.model.images,
        }
    }

    /// A request's record, with this turn's model.
    pub(super) fn record(&self, measured: Measured, source: RequestSource) -> RequestRecord {
        request_record(&self.turn_id, &self.model, measured, source)
    }

    /// Writes the pending request record and usage now (a turn that goes on). Failures are
    /// logged: they never cost the person their reply.
    pub(super) async fn write_pending(&mut self) {
        let Some((record, tokens)) = self.pending.take() else { return };
        let (recorded, counted) =
            tokio::join!(chat::record_request(&self.session.space, &record), self.add_usage(tokens));
        if let Err(err) = recorded {
            tracing::error!(user = %self.session.user_id, %err, "could not record a model request");
        }
        if let Err(err) = counted {
            tracing::error!(user = %self.session.user_id, %err, "could not add to the usage totals");
        }
    }

    async fn add_usage(&self, (tokens_in, tokens_out): (i64, i64)) -> Result<(), StoreError> {
        usage_totals::add(self.runtime.system(), &self.session.user_id, &usage::today(), tokens_in, tokens_out).await
    }

    /// The row that ends this turn or frame: what was said last, its state and error.
    pub(super) fn closing_row<'a>(&'a self, closing: &'a Closing) -> NewMessage<'a> {
        NewMessage {
            session_id: &self.chat_id,
            turn_id: &self.turn_id,
            role: MessageRole::Assistant,
            text: &closing.text,
            status: closing.state.into(),
            model: Some(&self.model.name),
            error_code: closing.error.as_ref().map(|failure| failure.code.as_str()),
            error_message: closing.error.as_ref().map(|failure| failure.message.as_str()),
            frame_id: self.frame_id(),
            ..NewMessage::default()
        }
    }

    /// Writes the turn's end with its last request record; the usage totals, in the other
    /// database, are written at the same time.
    pub(super) async fn close(&mut self, closing: &Closing) -> Result<(), StoreError> {
        let (record, tokens) = match self.pending.take() {
            Some((record, tokens)) => (Some(record), Some(tokens)),
            None => (None, None),
        };
        let last = self.closing_row(closing);
        let end = TurnEnd {
            state: closing.state,
            error_code: closing.error.as_ref().map(|failure| failure.code.as_str()),
            error_message: closing.error.as_ref().map(|failure| failure.message.as_str()),
        };
        let usage = async {
            match tokens {
                Some(tokens) => self.add_usage(tokens).await,
                None => Ok(()),
            }
        };
        let (ended, counted) = tokio::join!(
            chat::end_turn(&self.session.space, &last, &end, ORPHAN_RESULT, record.as_ref(), TurnState::Running),
            usage
        );
        if let Err(err) = counted {
            tracing::error!(user = %self.session.user_id, %err, "could not add to the usage totals");
        }
        match ended {
            // The record must not cost the turn its end: written again without it.
            Err(err) if record.is_some() => {
                tracing::error!(user = %self.session.user_id, %err, "ending the turn with its request record failed");
                chat::end_turn(&self.session.space, &last, &end, ORPHAN_RESULT, None, TurnState::Running)
                    .await
                    .map(drop)
            }
            other => other.map(drop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ProviderError;

    #[test]
    fn reported_tokens_are_billed_as_reported_within_a_sane_range() {
        assert_eq!(billed(Some((12, 3)), true, 4000, 4000), (12, 3));
        assert_eq!(billed(Some((u64::MAX, 0)), true, 0, 0), (1 << 40, 0));
    }

    #[test]
    fn a_reply_without_reported_usage_is_billed_by_estimate_and_an_empty_one_costs_nothing() {
        let estimated = billed(None, true, 400, 40);
        assert_eq!(estimated, (usage::estimate_tokens(400), usage::estimate_tokens(40)));
        assert!(estimated.0 > 0);
        assert_eq!(billed(None, false, 400, 0), (0, 0));
    }

    #[test]
    fn a_request_is_recorded_as_ok_stopped_or_failed_with_its_code() {
        assert_eq!(outcome_of(&End::Finished), (RequestOutcome::Ok, None));
        assert_eq!(outcome_of(&End::Stopped), (RequestOutcome::Stopped, None));
        assert_eq!(outcome_of(&End::NotSaved), (RequestOutcome::Stopped, None));
        let failed = End::Failed(ProviderError::Protocol("x".into()));
        assert_eq!(outcome_of(&failed), (RequestOutcome::Error, Some(ProviderError::Protocol("x".into()).code())));
    }
}
