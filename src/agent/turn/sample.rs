//! A tool server's request for a model's answer (MCP sampling, §12.1), once the person
//! allowed it on its card: one request to the turn's own model — so the person's privacy
//! tier (§16), daily cap (§6.1) and record of requests (§8.1) hold as for any request of
//! theirs — read whole without showing it, cut at the length the server asked for.
//! Never here: the card (`agent::forms`) or the protocol (`mcp::sampling`).

use std::time::Instant;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::Turn;
use super::compact::summary_outcome;
use super::decide::End;
use super::record::{Measured, billed, clamp, request_record};
use super::stream::Reply;
use crate::agent::{RENDER_VERSION, Runtime, compaction, usage};
use crate::ids::{ConversationId, TurnId, UserId};
use crate::mcp::sampling::{SampleRequest, Sampled, Speaker};
use crate::providers::catalogue::CatalogueModel;
use crate::providers::privacy::Tier;
use crate::providers::{self, ChatRequest, ContextMessage, DeltaStream, ProviderError};
use crate::store::chat::{self, RequestOutcome, RequestPurpose, RequestSource};
use crate::store::private::PrivateStore;
use crate::store::roles::Role;
use crate::store::usage as usage_totals;

/// What the server is told when the person stopped the turn, or the call ended, first.
const STOPPED: &str = "the call ended before the model answered";

/// What answers a tool server's sampling requests during one response's calls: the
/// turn's model, for the turn's person, on their record. Cheap to share between calls.
pub struct Sampler {
    runtime: Runtime,
    user: UserId,
    space: PrivateStore,
    role: Role,
    model: CatalogueModel,
    chat_id: ConversationId,
    turn_id: TurnId,
    frame_id: Option<String>,
    history_upto: i64,
    /// The turn's stop: stopping it stops an answer being written.
    stop: CancellationToken,
}

impl Turn {
    /// What answers sampling requests for this turn's calls, with its model as it is now.
    pub(super) fn sampler(&self) -> Sampler {
        Sampler {
            runtime: self.runtime.clone(),
            user: self.session.user_id.clone(),
            space: self.session.space.clone(),
            role: self.role.clone(),
            model: self.model.clone(),
            chat_id: self.chat_id.clone(),
            turn_id: self.turn_id.clone(),
            frame_id: self.frame_id().map(str::to_owned),
            history_upto: self.last_row,
            stop: self.stop.clone(),
        }
    }
}

impl Sampler {
    /// The model that would answer, as the catalogue names it.
    pub fn model_name(&self) -> &str {
        &self.model.name
    }

    /// Whether the words would stay here or go to a remote service (§16).
    pub fn privacy(&self) -> Tier {
        self.model.privacy
    }

    /// Has the model answer `request`. The request runs on to its end (and its record) even
    /// when the caller stops waiting: then it is stopped at once, and recorded so.
    pub async fn answer_detached(self: std::sync::Arc<Self>, request: SampleRequest) -> Result<Sampled, String> {
        let stop = self.stop.child_token();
        let _stopped_when_dropped = stop.clone().drop_guard();
        let task = tokio::spawn(async move { self.answer(&request, &stop).await });
        task.await.unwrap_or_else(|_| Err("Skald could not have the model answer".into()))
    }

    /// One request to the turn's model, recorded and counted; the error is what the server
    /// is told.
    async fn answer(&self, request: &SampleRequest, stop: &CancellationToken) -> Result<Sampled, String> {
        match usage::over_cap(self.runtime.system(), &self.role, &self.user).await {
            Ok(None) => {}
            Ok(Some((cap, used))) => return Err(crate::agent::TurnError::UsageCap { cap, used }.to_string()),
            Err(err) => {
                tracing::error!(user = %self.user, %err, "could not read the usage before a sampling request");
                return Err("Skald could not read the person's usage today, so nothing was sent".into());
            }
        }
        let endpoint = self.runtime.endpoint(&self.model, &self.user).await.map_err(|err| err.to_string())?;
        let chat = chat_request(&self.model.model_id, request);
        let stall = self.runtime.inner.limits.stall;
        let started = Instant::now();
        let send = providers::start(self.runtime.client(), &endpoint, &chat, self.role.privacy_tier);
        let opened = tokio::select! {
            biased;
            () = stop.cancelled() => return Err(STOPPED.into()),
            opened = tokio::time::timeout(stall, send) => opened.unwrap_or(Err(ProviderError::Stalled(stall))),
        };
        let mut reply = Reply::default();
        let (end, cut) = match opened {
            // Nothing was sent: nothing to record or count.
            Err(ProviderError::Withheld(why)) => return Err(why),
            Err(err) => (End::Failed(err), false),
            Ok(stream) => read(stream, &mut reply, started, stall, stop, request.max_tokens).await,
        };
        let outcome = summary_outcome(stop.is_cancelled(), &end, &reply.text, "empty_sample");
        let ok = outcome.0 == RequestOutcome::Ok;
        let counted = billed(reply.usage, !reply.is_empty(), compaction::message_chars(&chat), reply.chars());
        let measured = Measured {
            reported: reply.usage,
            first_delta: reply.first_delta,
            took: started.elapsed(),
            attempts: 1,
            outcome,
        };
        self.write(measured, request, counted).await;
        match end {
            _ if ok => Ok(Sampled { text: reply.text, model: self.model.name.clone(), cut }),
            End::Finished => Err("the model gave an empty answer".into()),
            End::Stopped | End::NotSaved => Err(STOPPED.into()),
            End::Failed(err) => Err(format!("the model could not answer: {err}")),
        }
    }

    /// Records the request and adds its tokens to the person's totals. Failures are
    /// logged: they never cost the server its answer.
    async fn write(&self, measured: Measured, request: &SampleRequest, (tokens_in, tokens_out): (i64, i64)) {
        let source = RequestSource {
            session_id: self.chat_id.clone(),
            kind: self.model.kind,
            render_version: RENDER_VERSION,
            prompt: request.system.clone().unwrap_or_default(),
            tools: serde_json::Value::Array(Vec::new()),
            history_upto: self.history_upto,
            summary_id: None,
            purpose: RequestPurpose::Sampling,
            frame_id: self.frame_id.clone(),
            images: false,
        };
        let record = request_record(&self.turn_id, &self.model, measured, source);
        let today = usage::today();
        let (recorded, counted) = tokio::join!(
            chat::record_request(&self.space, &record),
            usage_totals::add(self.runtime.system(), &self.user, &today, tokens_in, tokens_out)
        );
        if let Err(err) = recorded {
            tracing::error!(user = %self.user, %err, "could not record a sampling request");
        }
        if let Err(err) = counted {
            tracing::error!(user = %self.user, %err, "could not add a sampling request to the usage totals");
        }
    }
}

/// The model request for a server's sampling request: its system prompt and messages as
/// they are, no tools, at most the length it asked for.
fn chat_request(model: &str, request: &SampleRequest) -> ChatRequest {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        messages.push(ContextMessage::System(system.clone()));
    }
    for (speaker, text) in &request.messages {
        messages.push(match speaker {
            Speaker::Person => ContextMessage::User(text.clone()),
            Speaker::Model => ContextMessage::Assistant { text: text.clone(), tool_calls: Vec::new() },
        });
    }
    ChatRequest {
        model: model.to_owned(),
        messages,
        tools: Vec::new(),
        cache_key: None,
        max_tokens: Some(request.max_tokens),
        images: false,
    }
}

/// Reads an answer to its end, each silence bounded by `stall`; a reply that reaches
/// `max_tokens` (by the provider's count, else an estimate) is cut there: `(end, cut)`.
async fn read(
    mut stream: DeltaStream,
    reply: &mut Reply,
    started: Instant,
    stall: std::time::Duration,
    stop: &CancellationToken,
    max_tokens: u32,
) -> (End, bool) {
    loop {
        let next = tokio::select! {
            biased;
            () = stop.cancelled() => return (End::Stopped, false),
            next = tokio::time::timeout(stall, stream.next()) => next,
        };
        let deltas = match next {
            Err(_) => return (End::Failed(ProviderError::Stalled(stall)), false),
            Ok(None) => return (End::Finished, false),
            Ok(Some(Err(err))) => return (End::Failed(err), false),
            Ok(Some(Ok(deltas))) => deltas,
        };
        for delta in deltas {
            reply.take(delta, started);
        }
        let written = reply.usage.map_or_else(|| usage::estimate_tokens(reply.text.len()), |(_, out)| clamp(out));
        if written >= i64::from(max_tokens) {
            return (End::Finished, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Delta;

    fn stream(pieces: &[&str]) -> DeltaStream {
        let deltas: Vec<Result<Vec<Delta>, ProviderError>> =
            pieces.iter().map(|p| Ok(vec![Delta::Text((*p).to_owned())])).collect();
        Box::pin(futures_util::stream::iter(deltas))
    }

    async fn read_all(pieces: &[&str], max_tokens: u32) -> (String, bool) {
        let mut reply = Reply::default();
        let stall = std::time::Duration::from_secs(5);
        let (end, cut) =
            read(stream(pieces), &mut reply, Instant::now(), stall, &CancellationToken::new(), max_tokens).await;
        assert!(matches!(end, End::Finished));
        (reply.text, cut)
    }

    #[tokio::test]
    async fn an_answer_is_read_whole_or_cut_once_it_reaches_the_length_asked_for() {
        assert_eq!(read_all(&["Rain ", "taps."], 50).await, ("Rain taps.".to_owned(), false));
        // Four characters a token, when the provider reports no usage: cut after 8 tokens.
        let (text, cut) = read_all(&["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc"], 8).await;
        assert_eq!((text.as_str(), cut), ("aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb", true));
    }

    #[tokio::test]
    async fn a_stopped_answer_ends_stopped() {
        let stop = CancellationToken::new();
        stop.cancel();
        let mut reply = Reply::default();
        let (end, cut) =
            read(stream(&["never"]), &mut reply, Instant::now(), std::time::Duration::from_secs(5), &stop, 10).await;
        assert!(matches!(end, End::Stopped) && !cut && reply.text.is_empty());
    }

    #[test]
    fn a_sampling_request_carries_the_servers_words_as_they_are_and_no_tools() {
        let request = SampleRequest {
            system: Some("Be brief.".into()),
            messages: vec![(Speaker::Person, "Hi".into()), (Speaker::Model, "Hello".into())],
            max_tokens: 20,
            hints: Vec::new(),
        };
        let chat = chat_request("m", &request);
        assert_eq!((chat.model.as_str(), chat.max_tokens), ("m", Some(20)));
        assert!(chat.tools.is_empty() && chat.cache_key.is_none());
        assert!(matches!(&chat.messages[0], ContextMessage::System(s) if s == "Be brief."));
        assert!(matches!(&chat.messages[1], ContextMessage::User(s) if s == "Hi"));
        assert!(
            matches!(&chat.messages[2], ContextMessage::Assistant { text, tool_calls } if text == "Hello" && tool_calls.is_empty())
        );
    }
}
