//! The turn loop (§8.1): send the context, stream the reply to the person's windows, run
//! the tools it asks for, append each result, and go again until the model answers
//! without tools, the person stops it, it fails, or the step limit is reached.
//!
//! Invariants kept here: history is only appended to; every tool call that reached the
//! history gets exactly one result row (ok, error, denied or cancelled); every model
//! request is recorded; a turn always ends in `done`, `stopped` or `error`, or waits
//! `parked` on cards a person decides, never hangs. Sub-agent frames (§8.3) are turns
//! inside the turn, run by the same loop.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::consent::Withheld;
use super::definition::Agent;
use super::events::{CallView, Failure, LiveEvent, TurnEvents};
use super::tools::{self, ToolContext};
use super::usage;
use super::{Runtime, calls_to_json, compaction, gate};
use crate::ids::random_id;
use crate::providers::catalogue::CatalogueModel;
use crate::providers::{
    self, ChatRequest, ContextMessage, Delta, DeltaStream, Endpoint, ProviderError, ToolCall, ToolSpec,
};
use crate::store::approvals::CardState;
use crate::store::chat::{self, MessageRole, NewMessage, RequestRecord, RequestSource, Summary, TurnEnd, TurnState};
use crate::store::roles::Role;
use crate::store::{StoreError, approval_rules, approvals, usage as usage_totals};
use crate::users::sessions::Session;

pub(super) struct Turn {
    pub runtime: Runtime,
    pub session: Arc<Session>,
    pub chat_id: String,
    pub turn_id: String,
    pub model: CatalogueModel,
    /// Another provider's model to switch to, once, when this one is down.
    pub fallback: Option<CatalogueModel>,
    pub endpoint: Endpoint,
    /// The tools the role and the agent allow; offered to models that take tools.
    pub offered: Vec<ToolSpec>,
    /// The system prompt, the history and the person's new message.
    pub context: Vec<ContextMessage>,
    pub max_rounds: usize,
    /// The person's role, read again before each further round: an administrator's change
    /// to its privacy tier (§16) or daily cap applies within the turn. Narrowed by what
    /// the person has not accepted (§3).
    pub role: Role,
    /// What stays out of force for the person (§3): shared rules among it.
    pub withheld: Arc<Withheld>,
    /// The agent's prompt as this turn read it, kept with each request's record.
    pub prompt: String,
    /// The summary standing in for the older history (§8.6), if any.
    pub summary: Option<Summary>,
    /// Compaction is tried at most once a turn.
    pub compaction_tried: bool,
    /// The last history row the context holds, kept with each request's record.
    pub last_row: i64,
    pub events: TurnEvents,
    pub stop: CancellationToken,
    /// The latest model request and its token counts, not yet written: the turn's last
    /// one is written with the turn's end, in one commit.
    pub pending: Option<(RequestRecord, (i64, i64))>,
    /// The agent the conversation runs, named on cards.
    pub agent: String,
    /// Outside content has entered the conversation (§8.4's injection hygiene); shared by
    /// the turn's frames, since they all write into the same conversation.
    pub outside_content: Arc<AtomicBool>,
    /// A resumed turn's calls still without results, with what the model said when it
    /// made them: settled before any further model request.
    pub unsettled: Option<(String, Vec<ToolCall>)>,
    /// The sub-agent frame this is; none for the conversation's own turn.
    pub frame: Option<FrameInfo>,
    /// How many frames the turn has opened, against [`MAX_FRAMES`].
    pub frames_opened: Arc<AtomicUsize>,
    /// A frame's cards, handed up to the conversation's own turn to write.
    pub asks: Vec<approvals::NewCard>,
    /// The calls of the latest response, to catch a model going round in circles.
    pub repeats: Repeats,
}

/// What a model asks for again and again: the calls of its last response, and whether the
/// current response repeats them exactly. Small local models fall into such loops.
#[derive(Debug, Default)]
pub(super) struct Repeats {
    last: Vec<String>,
    /// Calls of the current response refused, unrun, as repeats.
    refusing: Vec<String>,
    /// Responses in a row that repeated the one before.
    strikes: u32,
}

/// What a response's calls are, against the response before.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Repetition {
    New,
    /// The very calls of the response before: refused once, with a word to the model.
    Again,
    /// Again, after being told: the turn ends.
    Stuck,
}

impl Repeats {
    pub(super) fn check(&mut self, calls: &[ToolCall]) -> Repetition {
        let keys: Vec<String> = calls
            .iter()
            .map(|call| {
                let arguments = tools::parse_arguments(&call.arguments)
                    .unwrap_or_else(|_| serde_json::Value::String(call.arguments.clone()));
                gate::arguments_hash(&call.name, &arguments)
            })
            .collect();
        let again = !keys.is_empty() && keys == self.last;
        self.last = keys;
        self.refusing.clear();
        if !again {
            self.strikes = 0;
            return Repetition::New;
        }
        self.strikes += 1;
        if self.strikes > 1 {
            return Repetition::Stuck;
        }
        self.refusing = calls.iter().map(|call| call.id.clone()).collect();
        Repetition::Again
    }

    fn refuses(&self, call_id: &str) -> bool {
        self.refusing.iter().any(|id| id == call_id)
    }
}

/// What a model that repeats its last calls reads instead of their results.
const REPEATED: &str = "Not run: this is exactly the call you just made, and its result is above. Do not make it \
     again; answer the person with what you have.";

/// How one model request ended.
enum End {
    Finished,
    Stopped,
    Failed(ProviderError),
    /// The person's message could not be committed: nothing of this turn may be written.
    NotSaved,
}

/// Whether the person's message is committed yet: the reply streams while it is.
/// The committed message's row id arrives through it; none when the commit failed.
type Commit = Option<tokio::sync::oneshot::Receiver<Option<i64>>>;

/// The text a call without a result gets when its turn ends around it.
const ORPHAN_RESULT: &str = "Error: the turn ended before this call finished.";

/// What the model reads for a call the person stopped while it ran.
const CANCELLED: &str = "Cancelled: the person stopped the turn before this call finished.";

/// What the model reads for a call the person declined.
const DENIED: &str = "Denied: the person declined this call, so it was not run. Do not try it again unless they ask; \
     tell them what you could not do.";

/// The gate's verdict on one call of a response.
enum Verdict {
    Run,
    /// Not run; the text is the call's result.
    Refuse(String),
    /// A person decides or answers first: an `approval` or a `question` card, with the
    /// gate's reason.
    Ask {
        reason: String,
        kind: &'static str,
    },
    /// A question the person answered; the text is the call's result.
    Answered(String),
}

/// What one call of a response came to.
enum Outcome {
    /// Its result and status.
    Done(String, &'static str),
    /// Its frame met calls that need the person: their cards, not yet written.
    Park(Vec<approvals::NewCard>),
}

/// Why a `call_agent` call opens no frame to run.
enum FrameStart {
    /// Refused or failed, with the reason the model reads.
    Refused(String),
    /// Its frame already finished: the result as it ended.
    Finished(Outcome),
}

/// A finished frame's result, read back from its closing row.
fn finished_frame(agent: &str, rows: &[crate::store::chat::Message]) -> Outcome {
    let closing = rows.iter().rev().find(|m| m.role == MessageRole::Assistant && m.tool_calls.is_none());
    match closing.map(|m| (m.status.as_str(), m)) {
        Some(("done", m)) => Outcome::Done(m.text.clone(), "ok"),
        Some(("stopped", _)) => Outcome::Done(CANCELLED.to_owned(), "cancelled"),
        _ => Outcome::Done(format!("Error: the {agent} agent could not finish."), "error"),
    }
}

/// Whether a tool is among those offered.
fn offers(offered: &[ToolSpec], name: &str) -> bool {
    offered.iter().any(|tool| tool.name == name)
}

/// A sub-agent frame's place in its turn (§8.3).
pub(super) struct FrameInfo {
    pub id: String,
    /// 2 for a callee of the conversation's own agent.
    pub depth: i64,
}

/// How deep agents may call each other, the conversation's own agent counting as 1.
pub const MAX_DEPTH: i64 = 5;

/// The most frames one turn may open, however they nest.
pub const MAX_FRAMES: usize = 16;

/// The most frames of one response that run at the same time.
pub const MAX_PARALLEL_FRAMES: usize = 4;

/// The kind of card a call that needs the person raises.
fn card_kind(tool: &str) -> &'static str {
    if tool == tools::CLARIFY { "question" } else { "approval" }
}

/// How a response's calls came out.
pub(super) enum Settled {
    Ran,
    /// Cards wait on the person; the turn parks.
    Parked,
    /// The person stopped the turn before any card was written.
    Stopped,
}

/// What one model request produced.
#[derive(Default)]
struct Reply {
    text: String,
    /// Tool calls by the index the provider gave them: (name, arguments). The provider's
    /// own call ids are dropped; some servers reuse them.
    calls: BTreeMap<usize, (String, String)>,
    usage: Option<(u64, u64)>,
    first_delta: Option<Duration>,
}

impl Reply {
    fn is_empty(&self) -> bool {
        self.text.is_empty() && self.calls.is_empty()
    }

    /// Complete calls, in order, under ids of our own: providers reuse theirs.
    fn tool_calls(&self) -> Vec<ToolCall> {
        self.calls
            .values()
            .filter(|(name, _)| !name.is_empty())
            .map(|(name, arguments)| ToolCall {
                id: random_id("call"),
                name: name.clone(),
                arguments: arguments.clone(),
            })
            .collect()
    }
}

/// How a finished turn is closed.
struct Closing {
    state: TurnState,
    text: String,
    error: Option<(&'static str, String)>,
}

/// A provider's token count, within a range no honest reply leaves.
fn clamp(tokens: u64) -> i64 {
    i64::try_from(tokens.min(1 << 40)).unwrap_or(0)
}

/// Usage as some protocols report it, input and output in separate events.
fn merge_usage(seen: Option<(u64, u64)>, input: u64, output: u64) -> Option<(u64, u64)> {
    let (seen_in, seen_out) = seen.unwrap_or_default();
    Some((seen_in.max(input), seen_out.max(output)))
}

fn reply_chars(reply: &Reply) -> usize {
    reply.text.len() + reply.calls.values().map(|(name, arguments)| name.len() + arguments.len()).sum::<usize>()
}

impl Turn {
    /// Runs the turn to its end; `closing` is set once only its end remains to be written.
    pub async fn run(
        mut self,
        committed: tokio::sync::oneshot::Receiver<Option<i64>>,
        closing: Arc<std::sync::atomic::AtomicBool>,
    ) {
        let mut commit: Commit = Some(committed);
        let outcome = self.rounds(&mut commit).await;
        closing.store(true, std::sync::atomic::Ordering::Release);
        let closing = match outcome {
            Ok(Some(closing)) if closing.state == TurnState::Parked => {
                // The cards hold the turn now; it goes on when the person decides. A stop
                // that came while the cards were being written ends it here instead.
                self.write_pending().await;
                self.events.emit(|of| LiveEvent::TurnParked { of, status: TurnState::Parked });
                self.runtime.parked(&self.turn_id, self.events.sent());
                if self.stop.is_cancelled()
                    && let Err(err) =
                        self.runtime.withdraw_parked(&self.session, &self.chat_id, super::STOPPED_UNDECIDED).await
                {
                    tracing::error!(user = %self.session.user_id, %err, "could not withdraw the cards of a stopped turn");
                }
                return;
            }
            Ok(Some(closing)) => closing,
            Ok(None) => return,
            Err(err) => {
                tracing::error!(user = %self.session.user_id, %err, "a turn could not record its progress");
                Closing {
                    state: TurnState::Error,
                    text: String::new(),
                    error: Some(("storage", format!("Skald could not save this reply: {err}"))),
                }
            }
        };
        if let Err(err) = self.close(&closing).await {
            tracing::error!(user = %self.session.user_id, %err, "a turn could not record its end");
        }
        let error = closing.error.as_ref().map(|(code, message)| Failure::new(code, message.clone()));
        if let Some(error) = &error {
            self.events.emit(|of| LiveEvent::Error { of, error: error.clone() });
        }
        self.events.ended(closing.state, error);
    }

    /// Runs model rounds until the turn ends; `None` when the person's message was never
    /// committed (nothing of this turn may be written then).
    async fn rounds(&mut self, commit: &mut Commit) -> Result<Option<Closing>, StoreError> {
        if let Some((why, calls)) = self.unsettled.take() {
            if let Settled::Parked = self.settle(&why, calls).await? {
                return Ok(Some(Closing { state: TurnState::Parked, text: String::new(), error: None }));
            }
            if self.stop.is_cancelled() {
                return Ok(Some(Closing { state: TurnState::Stopped, text: String::new(), error: None }));
            }
            // The step limit counts from here again: each resume follows a person's decision.
        }
        let mut round = 0;
        while round < self.max_rounds {
            if round > 0
                && let Some(closing) = self.recheck_role().await?
            {
                return Ok(Some(closing));
            }
            let mut request = self.next_request();
            if !self.compaction_tried && compaction::estimate(&request) > compaction::budget(self.model.context_window)
            {
                // A summary is written to the person's file: only once their message is.
                if !self.committed(commit).await {
                    self.not_saved();
                    return Ok(None);
                }
                // Tried once a turn: a summary that fails is not retried, nor billed again.
                self.compaction_tried = true;
                if self.compact().await? {
                    request = self.next_request();
                }
            }
            let started = Instant::now();
            let (reply, end, attempts) = self.request(&request, commit).await;
            if matches!(end, End::NotSaved) || !self.committed(commit).await {
                self.not_saved();
                return Ok(None);
            }
            self.pending = self.account(&request, &reply, &end, attempts, started.elapsed());
            // A switch to the fallback model is no step of the turn: the round is redone.
            if let End::Failed(err) = &end
                && reply.is_empty()
                && err.is_outage()
                && self.switch_to_fallback(err).await
            {
                self.write_pending().await;
                continue;
            }
            match end {
                End::Stopped => return Ok(Some(Closing { state: TurnState::Stopped, text: reply.text, error: None })),
                End::Failed(err) => {
                    tracing::warn!(user = %self.session.user_id, code = err.code(), "model request failed");
                    let message = err.advice(&self.endpoint.provider);
                    return Ok(Some(Closing {
                        state: TurnState::Error,
                        text: reply.text,
                        error: Some((err.code(), message)),
                    }));
                }
                End::Finished | End::NotSaved => {}
            }
            let calls = reply.tool_calls();
            if calls.is_empty() {
                return Ok(Some(Closing { state: TurnState::Done, text: reply.text, error: None }));
            }
            if self.repeats.check(&calls) == Repetition::Stuck {
                let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
                let message = format!(
                    "The model kept making the same call ({}) with the same arguments, so it was stopped. \
                     Try asking another way, or pick another model.",
                    names.join(", ")
                );
                return Ok(Some(Closing {
                    state: TurnState::Error,
                    text: reply.text,
                    error: Some(("repeated_call", message)),
                }));
            }
            self.write_pending().await;
            if let Settled::Parked = self.run_tools(reply.text, calls).await? {
                return Ok(Some(Closing { state: TurnState::Parked, text: String::new(), error: None }));
            }
            if self.stop.is_cancelled() {
                return Ok(Some(Closing { state: TurnState::Stopped, text: String::new(), error: None }));
            }
            round += 1;
        }
        let message = format!("The assistant took {} steps without finishing, so it was stopped.", self.max_rounds);
        Ok(Some(Closing { state: TurnState::Error, text: String::new(), error: Some(("step_limit", message)) }))
    }

    /// Tells the windows the turn ended because the person's message could not be saved.
    fn not_saved(&mut self) {
        let error = Failure::new("not_saved", "Your message could not be saved; nothing was sent on.");
        self.events.ended(TurnState::Error, Some(error));
    }

    fn next_request(&self) -> ChatRequest {
        ChatRequest {
            model: self.model.model_id.clone(),
            messages: self.context.clone(),
            tools: if self.model.tools { self.offered.clone() } else { Vec::new() },
            cache_key: super::cache_key_of(&self.prompt),
        }
    }

    /// Summarises the older turns into a stored summary and rebuilds the context from it
    /// (§8.6). The summary request is a recorded model request like any other, sent to this
    /// turn's model, so it obeys the person's privacy tier. Returns whether it compacted;
    /// a summary that fails leaves the context as it was.
    async fn compact(&mut self) -> Result<bool, StoreError> {
        let space = self.session.space.clone();
        let after = self.summary.as_ref().map_or(0, |s| s.upto);
        let mut rows = chat::history_between(&space, &self.chat_id, after, self.last_row).await?;
        rows.retain(|m| m.frame_id.is_none()); // frames' work is summed up in their results
        let keep = compaction::budget(self.model.context_window) / 2;
        let Some(upto) = compaction::cut(&rows, keep) else { return Ok(false) };
        let (older, newer): (Vec<_>, Vec<_>) = rows.into_iter().partition(|m| m.id <= upto);
        let transcript = compaction::transcript(self.summary.as_ref().map(|s| s.text.as_str()), &older);
        let room =
            compaction::budget(self.model.context_window) - usage::estimate_tokens(compaction::SUMMARY_PROMPT.len());
        let transcript = compaction::fit(transcript, usize::try_from(room.max(0) * 4 * 9 / 10).unwrap_or(0));
        // The summary request carries the person's history too: their own prefix first.
        let prompt = super::prompt_for(space.prompt_prefix(), compaction::SUMMARY_PROMPT);
        let request = ChatRequest {
            model: self.model.model_id.clone(),
            messages: vec![ContextMessage::System(prompt.clone()), ContextMessage::User(transcript)],
            tools: Vec::new(),
            cache_key: super::cache_key_of(&prompt),
        };
        let started = Instant::now();
        let (text, usage, end) = self.summarise(&request).await;
        if matches!(end, Some(ProviderError::Withheld(_))) {
            return Ok(false); // nothing was sent: nothing to record or bill
        }
        let outcome = match &end {
            _ if self.stop.is_cancelled() => ("stopped", None),
            None if !text.trim().is_empty() => ("ok", None),
            None => ("error", Some("empty_summary")),
            Some(err) => ("error", Some(err.code())),
        };
        let record = RequestRecord {
            turn_id: self.turn_id.clone(),
            provider: self.model.provider.clone(),
            model: self.model.model_id.clone(),
            tokens_in: usage.map(|(input, _)| clamp(input)),
            tokens_out: usage.map(|(_, output)| clamp(output)),
            ttft_ms: None,
            latency_ms: i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX),
            attempts: 1,
            outcome: outcome.0,
            error_code: outcome.1,
            source: RequestSource {
                session_id: self.chat_id.clone(),
                kind: self.endpoint.kind.clone(),
                render_version: super::RENDER_VERSION,
                prompt,
                tools: serde_json::Value::Array(Vec::new()),
                history_upto: upto,
                summary_id: self.summary.as_ref().map(|s| s.id),
                purpose: "compaction",
                frame_id: None,
            },
        };
        // What the provider reported is billed; an estimate only for a summary that came back.
        let counted = match usage {
            Some((input, output)) => (clamp(input), clamp(output)),
            None if outcome.0 == "ok" => {
                (usage::estimate_tokens(compaction::message_chars(&request)), usage::estimate_tokens(text.len()))
            }
            None => (0, 0),
        };
        self.pending = Some((record, counted));
        self.write_pending().await;
        if outcome.0 != "ok" {
            tracing::warn!(user = %self.session.user_id, code = outcome.1, "compaction failed; the request goes unshortened");
            return Ok(false);
        }
        let summary = chat::add_summary(&space, &self.chat_id, upto, text.trim()).await?;
        self.events.emit(|of| LiveEvent::Compacted { of, upto });
        let mut context = vec![ContextMessage::System(self.prompt.clone()), compaction::summary_message(&summary.text)];
        context.extend(super::context_from(&newer));
        self.context = context;
        self.summary = Some(summary);
        Ok(true)
    }

    /// Streams a summary request to its end, without showing it: (text, usage, failure).
    async fn summarise(&self, request: &ChatRequest) -> (String, Option<(u64, u64)>, Option<ProviderError>) {
        let stall = self.runtime.inner.limits.stall;
        let send = providers::start(self.runtime.client(), &self.endpoint, request, self.role.privacy_tier);
        let mut stream = tokio::select! {
            () = self.stop.cancelled() => return (String::new(), None, Some(ProviderError::Withheld("stopped".into()))),
            opened = tokio::time::timeout(stall, send) => match opened {
                Ok(Ok(stream)) => stream,
                Ok(Err(err)) => return (String::new(), None, Some(err)),
                Err(_) => return (String::new(), None, Some(ProviderError::Stalled(stall))),
            },
        };
        let (mut text, mut usage) = (String::new(), None::<(u64, u64)>);
        loop {
            let next = tokio::select! {
                () = self.stop.cancelled() => return (text, usage, Some(ProviderError::Protocol("stopped".into()))),
                next = tokio::time::timeout(stall, stream.next()) => next,
            };
            match next {
                Err(_) => return (text, usage, Some(ProviderError::Stalled(stall))),
                Ok(None) => return (text, usage, None),
                Ok(Some(Err(err))) => return (text, usage, Some(err)),
                Ok(Some(Ok(deltas))) => {
                    for delta in deltas {
                        match delta {
                            Delta::Text(piece) => text.push_str(&piece),
                            Delta::Usage { input, output } => usage = merge_usage(usage, input, output),
                            Delta::ToolCall { .. } | Delta::Finish(_) => {}
                        }
                    }
                }
            }
        }
    }

    /// Waits for the person's message to be committed, if that is still pending.
    async fn committed(&mut self, commit: &mut Commit) -> bool {
        match commit.take() {
            Some(receiver) => self.saved(receiver.await.ok().flatten()),
            None => true,
        }
    }

    /// Notes the committed message's row as the history's end so far.
    fn saved(&mut self, row: Option<i64>) -> bool {
        match row {
            Some(id) => {
                self.last_row = id;
                true
            }
            None => false,
        }
    }

    /// Reads the role again before a further round; a closing when its daily cap is now
    /// reached. A change of privacy tier takes effect at the next send (§16).
    async fn recheck_role(&mut self) -> Result<Option<Closing>, StoreError> {
        let closing = |code, err: super::TurnError| Closing {
            state: TurnState::Error,
            text: String::new(),
            error: Some((code, err.to_string())),
        };
        let mut role = match self.runtime.role_of(&self.session.user_id).await {
            Ok(role) => role,
            Err(super::TurnError::Store(err)) => return Err(err),
            Err(other) => return Ok(Some(closing("inactive", other))),
        };
        // A change made while the turn runs holds it before its next request, like the next turn.
        let agent = self.runtime.agents().load(&self.agent).ok();
        match self.runtime.standing(&self.session, &role, agent.as_ref()).await {
            Ok(standing) if !standing.holds.is_empty() => {
                return Ok(Some(closing("held", super::TurnError::Held(standing.holds.len()))));
            }
            Ok(standing) => {
                standing.withheld.narrow_role(&mut role);
                self.withheld = Arc::new(standing.withheld);
            }
            Err(super::TurnError::Store(err)) => return Err(err),
            Err(other) => return Ok(Some(closing("held", other))),
        }
        self.role = role;
        let over = usage::over_cap(self.runtime.system(), &self.role, &self.session.user_id).await?;
        Ok(over.map(|(cap, used)| {
            let message = super::TurnError::UsageCap { cap, used }.to_string();
            Closing { state: TurnState::Error, text: String::new(), error: Some(("usage_cap", message)) }
        }))
    }

    /// Moves the turn to its fallback model, if it has one whose key opens; says so on the
    /// socket. The failed request stays on record.
    async fn switch_to_fallback(&mut self, failure: &ProviderError) -> bool {
        let Some(next) = self.fallback.take() else { return false };
        let endpoint = match self.runtime.endpoint(&next, &self.session.user_id).await {
            Ok(endpoint) => endpoint,
            Err(err) => {
                tracing::warn!(%err, "the fallback model cannot be used");
                return false;
            }
        };
        let (from, to, reason) = (self.model.name.clone(), next.name.clone(), failure.code().to_owned());
        self.events.emit(|of| LiveEvent::Fallback { of, from, to, reason });
        self.model = next;
        self.endpoint = endpoint;
        true
    }

    /// One model request, retried as the policy allows while nothing has streamed yet.
    async fn request(&mut self, request: &ChatRequest, commit: &mut Commit) -> (Reply, End, u32) {
        let mut reply = Reply::default();
        let started = Instant::now();
        let stall = self.runtime.inner.limits.stall;
        let (mut attempts, mut retries) = (0, 0);
        loop {
            attempts += 1;
            let send = providers::start(self.runtime.client(), &self.endpoint, request, self.role.privacy_tier);
            // The wait for the answer's head is bounded like any silence inside it.
            let opened = tokio::select! {
                biased;
                () = self.stop.cancelled() => return (reply, End::Stopped, attempts),
                opened = tokio::time::timeout(stall, send) => opened.unwrap_or(Err(ProviderError::Stalled(stall))),
            };
            let failure = match opened {
                Ok(stream) => match self.consume(stream, &mut reply, started, commit).await {
                    End::Failed(err) if reply.is_empty() => err,
                    end => return (reply, end, attempts),
                },
                Err(ProviderError::Withheld(why)) => return (reply, End::Failed(ProviderError::Withheld(why)), 0),
                Err(err) => err,
            };
            let Some(wait) = self.runtime.inner.limits.retry.next_wait(retries, &failure) else {
                return (reply, End::Failed(failure), attempts);
            };
            retries += 1;
            let wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
            let reason = failure.code().to_owned();
            self.events.emit(|of| LiveEvent::Retrying { of, attempt: attempts + 1, wait_ms, reason });
            tokio::select! {
                biased;
                () = self.stop.cancelled() => return (reply, End::Stopped, attempts),
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Reads a reply's stream to its end, forwarding text as it comes. Only deltas with
    /// content count as progress: keep-alive lines do not hold a stalled stream open. If
    /// the person's message turns out not to be saved, the stream is dropped at once.
    async fn consume(
        &mut self,
        mut stream: DeltaStream,
        reply: &mut Reply,
        started: Instant,
        commit: &mut Commit,
    ) -> End {
        let stall = self.runtime.inner.limits.stall;
        let mut deadline = tokio::time::Instant::now() + stall;
        loop {
            let next = tokio::select! {
                biased;
                () = self.stop.cancelled() => return End::Stopped,
                saved = async { commit.as_mut().expect("guarded").await }, if commit.is_some() => {
                    *commit = None;
                    if !self.saved(saved.ok().flatten()) {
                        return End::NotSaved;
                    }
                    continue;
                }
                next = tokio::time::timeout_at(deadline, stream.next()) => next,
            };
            let deltas = match next {
                Err(_) => return End::Failed(ProviderError::Stalled(stall)),
                Ok(None) => return End::Finished,
                Ok(Some(Err(err))) => return End::Failed(err),
                Ok(Some(Ok(deltas))) => deltas,
            };
            if !deltas.is_empty() {
                deadline = tokio::time::Instant::now() + stall;
            }
            for delta in deltas {
                match delta {
                    Delta::Text(text) => {
                        reply.first_delta.get_or_insert_with(|| started.elapsed());
                        self.events.token(&text);
                        reply.text.push_str(&text);
                    }
                    Delta::ToolCall { index, name, arguments, .. } => {
                        reply.first_delta.get_or_insert_with(|| started.elapsed());
                        let call = reply.calls.entry(index).or_default();
                        if let Some(name) = name {
                            call.0.push_str(&name);
                        }
                        call.1.push_str(&arguments);
                    }
                    Delta::Usage { input, output } => reply.usage = merge_usage(reply.usage, input, output),
                    Delta::Finish(_) => {}
                }
            }
        }
    }

    /// Appends the model's request for tools, then settles the calls (see [`Turn::settle`]).
    async fn run_tools(&mut self, text: String, calls: Vec<ToolCall>) -> Result<Settled, StoreError> {
        let asked = NewMessage {
            session_id: &self.chat_id,
            turn_id: &self.turn_id,
            role: MessageRole::Assistant,
            text: &text,
            status: "tool_calls",
            tool_calls: Some(calls_to_json(&calls)),
            model: Some(&self.model.name),
            frame_id: self.frame_id(),
            ..NewMessage::default()
        };
        self.last_row = chat::append(&self.session.space, &[asked]).await?.last().copied().unwrap_or(self.last_row);
        for call in &calls {
            let call = CallView { id: call.id.clone(), name: call.name.clone(), arguments: call.arguments.clone() };
            self.events.emit(|of| LiveEvent::ToolCallStarted { of, call });
        }
        self.context.push(ContextMessage::Assistant { text: text.clone(), tool_calls: calls.clone() });
        self.settle(&text, calls).await
    }

    /// Puts each call of one model response through the approval gate (§8.4). If any needs
    /// a person, cards are created for those and the turn parks: nothing of the response
    /// runs until every card is decided, so results stay in call order. Otherwise the
    /// allowed calls run concurrently (sub-agent frames at most [`MAX_PARALLEL_FRAMES`] at
    /// a time) and every call gets its one result, in call order: its output, its error, a
    /// refusal the model can read, or a cancellation when the person stops the turn. A
    /// frame that parks on a card parks the whole turn; the calls that finished keep
    /// their results.
    async fn settle(&mut self, why: &str, calls: Vec<ToolCall>) -> Result<Settled, StoreError> {
        let space = self.session.space.clone();
        let (shared, personal, cards) = tokio::try_join!(
            approval_rules::list(self.runtime.system()),
            approvals::personal_rules(&space),
            approvals::of_turn(&space, &self.turn_id),
        )?;
        let shared = self.withheld.rules(shared.into_iter().map(|r| r.rule).collect());
        let verdicts: Vec<Verdict> = calls
            .iter()
            .map(|call| self.judge(call, &shared, &personal, cards.iter().find(|c| c.call_id == call.id)))
            .collect();
        let asks: Vec<approvals::NewCard> = calls
            .iter()
            .zip(&verdicts)
            .filter_map(|(call, verdict)| match verdict {
                Verdict::Ask { reason, kind } => Some(self.new_card(call, why, reason, kind)),
                _ => None,
            })
            .collect();
        if !asks.is_empty() {
            return self.wait_on(asks).await;
        }
        let registry = self.runtime.inner.tools.clone();
        let context = ToolContext {
            user: self.session.user_id.clone(),
            chat_id: self.chat_id.clone(),
            space: space.clone(),
            notifier: self.runtime.inner.notifier.clone(),
            events: self.runtime.inner.events.clone(),
            agents: self.runtime.agents().clone(),
            outside_content: self.outside_content.load(Ordering::Acquire),
            brought_outside: AtomicBool::new(false),
        };
        let slots = tokio::sync::Semaphore::new(MAX_PARALLEL_FRAMES);
        let this: &Turn = self;
        let (offered, stop, context, slots) = (&this.offered, &this.stop, &context, &slots);
        let outcomes: Vec<Outcome> =
            futures_util::future::join_all(calls.iter().zip(verdicts).map(|(call, verdict)| {
                let registry = registry.clone();
                async move {
                    match verdict {
                        // Only where call_agent is offered: elsewhere it runs to return its error.
                        Verdict::Run if call.name == tools::CALL_AGENT && offers(offered, tools::CALL_AGENT) => {
                            this.call_agent(call, slots).await
                        }
                        Verdict::Run => tokio::select! {
                            biased;
                            () = stop.cancelled() => Outcome::Done(CANCELLED.to_owned(), "cancelled"),
                            result = registry.call(offered, &call.name, &call.arguments, context) => match result {
                                Ok(output) => Outcome::Done(output, "ok"),
                                Err(why) => Outcome::Done(format!("Error: {why}"), "error"),
                            },
                        },
                        Verdict::Refuse(text) => Outcome::Done(text, "denied"),
                        Verdict::Answered(text) => Outcome::Done(text, "ok"),
                        Verdict::Ask { .. } => unreachable!("a call that needs a person parks the turn"),
                    }
                }
            }))
            .await;
        // Outside content came in with a successful outside tool, or wherever a tool says
        // so through the context: web_fetch for any answer a server gave (an error page, a
        // redirect), a note tool for a note written from a fetched page.
        let brought_in = context.brought_outside.load(Ordering::Acquire)
            || calls.iter().zip(&outcomes).any(|(call, outcome)| {
                matches!(outcome, Outcome::Done(_, "ok")) && registry.brings_outside_content(&call.name)
            });
        if brought_in && !self.outside_content.swap(true, Ordering::AcqRel) {
            chat::mark_outside_content(&space, &self.chat_id).await?;
        }
        let done: Vec<(&ToolCall, &str, &'static str)> = calls
            .iter()
            .zip(&outcomes)
            .filter_map(|(call, outcome)| match outcome {
                Outcome::Done(text, status) => Some((call, text.as_str(), *status)),
                Outcome::Park(_) => None,
            })
            .collect();
        let frame_id = self.frame_id();
        let rows: Vec<NewMessage> = done
            .iter()
            .map(|(call, text, status)| NewMessage {
                session_id: &self.chat_id,
                turn_id: &self.turn_id,
                role: MessageRole::Tool,
                text,
                status,
                tool_call_id: Some(&call.id),
                tool_name: Some(&call.name),
                frame_id,
                ..NewMessage::default()
            })
            .collect();
        let appended = chat::append(&space, &rows).await?;
        self.last_row = appended.last().copied().unwrap_or(self.last_row);
        for (call, text, status) in &done {
            let (call_id, name) = (call.id.clone(), call.name.clone());
            let (status, result) = ((*status).to_owned(), (*text).to_owned());
            self.events.emit(|of| LiveEvent::ToolCallFinished { of, call_id, name, status, result });
        }
        // Frames that met a card hand theirs up. The calls that finished keep their
        // results (their work is done and must not run again); the parked ones get theirs
        // when the turn goes on, after them.
        let handed_up: Vec<approvals::NewCard> = outcomes
            .iter()
            .filter_map(|outcome| match outcome {
                Outcome::Park(cards) => Some(cards.iter().cloned()),
                Outcome::Done(..) => None,
            })
            .flatten()
            .collect();
        if !handed_up.is_empty() {
            return self.wait_on(handed_up).await;
        }
        for (call, text, _) in done {
            self.context.push(ContextMessage::Tool { call_id: call.id.clone(), content: text.to_owned() });
        }
        Ok(Settled::Ran)
    }

    /// Cards for calls that need the person. The conversation's own turn writes them and
    /// parks, once every frame of the response has come back: while any still runs the
    /// turn stays `running`, so a crash meanwhile closes it like any cut-off turn. A frame
    /// hands its cards up to its caller instead.
    async fn wait_on(&mut self, cards: Vec<approvals::NewCard>) -> Result<Settled, StoreError> {
        if self.stop.is_cancelled() {
            return Ok(Settled::Stopped); // no card for a turn the person already stopped
        }
        if self.frame.is_some() {
            self.asks.extend(cards);
            return Ok(Settled::Parked);
        }
        let space = &self.session.space;
        approvals::park(space, &self.turn_id, &cards).await?;
        let person = self.runtime.person(&self.session.user_id).await?;
        let created = approvals::of_turn(space, &self.turn_id).await?;
        for card in
            created.iter().filter(|c| c.state == CardState::Pending && cards.iter().any(|a| a.call_id == c.call_id))
        {
            let mut view = super::inbox::card_view(card);
            view["details"]["for"] = person.clone();
            self.events.emit(|of| LiveEvent::Card { of, card: view });
        }
        Ok(Settled::Parked)
    }

    /// What the gate says of one call, given the card it may already have.
    fn judge(
        &self,
        call: &ToolCall,
        shared: &[gate::Rule],
        personal: &[gate::Rule],
        card: Option<&approvals::Card>,
    ) -> Verdict {
        if self.repeats.refuses(&call.id) {
            return Verdict::Refuse(REPEATED.to_owned());
        }
        let registry = &self.runtime.inner.tools;
        // A call that cannot run (a tool not offered, arguments that are no JSON object)
        // runs only to return its error: nothing to ask anyone about.
        let (Some(side_effects), Ok(arguments)) =
            (registry.side_effects(&self.offered, &call.name), tools::parse_arguments(&call.arguments))
        else {
            return Verdict::Run;
        };
        // Withdrawn cards belong to turns that ended: they are never settled again.
        match card.map(|c| (c.state, c)) {
            Some((CardState::Denied, _)) => return Verdict::Refuse(DENIED.to_owned()),
            Some((CardState::Answered, c)) => {
                return Verdict::Answered(format!("The person answered: {}", c.answer.as_deref().unwrap_or("")));
            }
            Some((CardState::Pending, c)) => {
                return Verdict::Ask { reason: c.reason.clone(), kind: card_kind(&call.name) };
            }
            Some((CardState::Allowed | CardState::Withdrawn, _)) | None => {}
        }
        let approved = card.filter(|c| c.state == CardState::Allowed).map(|c| c.arguments_hash.as_str());
        let asking = call.name == tools::CLARIFY;
        if asking && tools::clarify::question(&arguments).is_err() {
            return Verdict::Run; // to return why it is no question
        }
        let situation = gate::Situation {
            tool: &call.name,
            arguments: &arguments,
            role: self.role.id.as_str(),
            // Answering a question is no approval: every role may.
            may_approve: self.role.may_approve || asking,
            side_effects,
            outside_content: self.outside_content.load(Ordering::Acquire),
            approved,
        };
        let decision = gate::decide(&situation, shared, personal);
        match decision.effect {
            gate::Effect::Deny => Verdict::Refuse(format!(
                "Refused: {}. This call was not run; do not try it again, and tell the person what you could not do.",
                decision.reason
            )),
            // A question goes to the person unless a rule refuses it outright.
            _ if asking => Verdict::Ask { reason: "the assistant has a question for you".into(), kind: "question" },
            gate::Effect::Allow => Verdict::Run,
            // Decided once already, yet the gate still asks: the arguments are not the
            // ones the person saw. Never a second card for the same call.
            gate::Effect::Require if card.is_some() => {
                Verdict::Refuse("Refused: these arguments are not the ones the person approved.".to_owned())
            }
            gate::Effect::Require => Verdict::Ask { reason: decision.reason, kind: "approval" },
        }
    }

    fn new_card(&self, call: &ToolCall, why: &str, reason: &str, kind: &'static str) -> approvals::NewCard {
        let arguments = tools::parse_arguments(&call.arguments).unwrap_or_default();
        approvals::NewCard {
            id: random_id("card"),
            kind,
            session_id: self.chat_id.clone(),
            turn_id: self.turn_id.clone(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            arguments_hash: gate::arguments_hash(&call.name, &arguments),
            agent: self.agent.clone(),
            why: why.to_owned(),
            reason: reason.to_owned(),
        }
    }

    fn frame_id(&self) -> Option<&str> {
        self.frame.as_ref().map(|f| f.id.as_str())
    }

    /// How deep this frame sits: 1 for the conversation's own.
    fn depth(&self) -> i64 {
        self.frame.as_ref().map_or(1, |f| f.depth)
    }

    /// Runs a `call_agent` call: opens the callee's frame (or resumes the one it opened
    /// before its turn parked) and runs it to its answer (§8.3).
    async fn call_agent(&self, call: &ToolCall, slots: &tokio::sync::Semaphore) -> Outcome {
        let _slot = tokio::select! {
            biased;
            () = self.stop.cancelled() => return Outcome::Done(CANCELLED.to_owned(), "cancelled"),
            slot = slots.acquire() => slot,
        };
        match self.frame_for(call).await {
            Ok(frame) => frame.run_frame().await,
            Err(FrameStart::Refused(why)) => Outcome::Done(format!("Error: {why}"), "error"),
            Err(FrameStart::Finished(outcome)) => outcome,
        }
    }

    /// The callee's frame for a call: resumed from its stored rows when the call opened
    /// one before its turn parked, else opened now within the limits.
    async fn frame_for(&self, call: &ToolCall) -> Result<Turn, FrameStart> {
        let space = &self.session.space;
        let storage = |err: StoreError| FrameStart::Refused(format!("the agent could not be started: {err}"));
        if let Some(frame) = chat::frame_for_call(space, &call.id).await.map_err(storage)? {
            let rows = chat::frame_rows(space, &frame.id).await.map_err(storage)?;
            if !matches!(frame.state.as_str(), "parked" | "running") {
                // It finished before its turn parked on a sibling's card: its answer is
                // read back, not worked out again.
                return Err(FrameStart::Finished(finished_frame(&frame.agent, &rows)));
            }
            let agent = self.runtime.agents().load(&frame.agent).map_err(|err| FrameStart::Refused(err.to_string()))?;
            let mut callee = self.callee(&agent, FrameInfo { id: frame.id.clone(), depth: frame.depth }).await?;
            callee.context.extend(super::as_context(rows.iter()));
            callee.unsettled = super::unsettled_calls(&rows, &self.turn_id, Some(&frame.id));
            callee.last_row = rows.last().map_or(0, |m| m.id);
            chat::set_frame_state(space, &frame.id, "running").await.map_err(storage)?;
            return Ok(callee);
        }
        let refused = |why: String| FrameStart::Refused(why);
        let arguments = tools::parse_arguments(&call.arguments).map_err(refused)?;
        let (Some(agent_id), Some(task)) = (arguments["agent"].as_str(), arguments["task"].as_str()) else {
            return Err(refused("call_agent needs \"agent\" (an id from list_agents) and \"task\"".into()));
        };
        let depth = self.depth() + 1;
        if depth > MAX_DEPTH {
            return Err(refused(format!(
                "agents may call each other at most {MAX_DEPTH} deep, and this call would be {depth} deep; do the \
                 task yourself or answer with what you have"
            )));
        }
        let agent = self
            .runtime
            .agents()
            .load(agent_id)
            .map_err(|err| refused(format!("{err}; list_agents shows the agents there are")))?;
        if self.frames_opened.fetch_add(1, Ordering::AcqRel) >= MAX_FRAMES {
            return Err(refused(format!("this turn already called {MAX_FRAMES} agents; answer with what you have")));
        }
        let id = random_id("frame");
        let mut callee = self.callee(&agent, FrameInfo { id: id.clone(), depth }).await?;
        let opened = chat::NewFrame {
            id: &id,
            session_id: &self.chat_id,
            turn_id: &self.turn_id,
            call_id: &call.id,
            outer_id: self.frame_id(),
            agent: &agent.id,
            depth,
        };
        callee.last_row = chat::open_frame(space, &opened, task).await.map_err(storage)?;
        callee.context.push(ContextMessage::User(task.to_owned()));
        let (agent, call_id) = (agent.id.clone(), call.id.clone());
        callee.events.emit(|of| LiveEvent::FrameStarted { of, agent, depth, call_id });
        Ok(callee)
    }

    /// A callee's turn, inside this one: its own prompt and model, the tools its role,
    /// its definition and its caller all allow, the same stop and the same limits.
    async fn callee(&self, agent: &Agent, frame: FrameInfo) -> Result<Turn, FrameStart> {
        let refused = |err: super::TurnError| FrameStart::Refused(err.to_string());
        let providers = self.runtime.provider_cache().await.map_err(refused)?;
        // The agent called is checked against the person's record like the conversation's,
        // with their role as the shared database states it now.
        let role = self.runtime.role_of(&self.session.user_id).await.map_err(refused)?;
        let standing =
            self.runtime.standing_with(&self.session, &role, Some(agent), &providers).await.map_err(refused)?;
        if !standing.holds.is_empty() {
            return Err(refused(super::TurnError::Held(standing.holds.len())));
        }
        if standing.withheld.agents.contains(&agent.id) {
            return Err(refused(super::TurnError::AgentDeclined(agent.id.clone())));
        }
        let models = standing.withheld.models(&providers.models);
        let (model, fallback) = super::pick_model(&models, &self.role, agent, None).map_err(refused)?;
        let endpoint =
            providers.endpoint(&self.runtime.inner.secrets, &model, &self.session.user_id).map_err(refused)?;
        let offered: Vec<ToolSpec> = self
            .runtime
            .inner
            .tools
            .offered(&self.role.tools, &agent.meta.tools)
            .into_iter()
            .filter(|tool| self.offered.iter().any(|mine| mine.name == tool.name))
            .collect();
        self.runtime.observe(agent);
        let withheld = Arc::new(standing.withheld);
        let prompt = super::prompt_for(self.session.space.prompt_prefix(), &agent.prompt);
        Ok(Turn {
            runtime: self.runtime.clone(),
            session: self.session.clone(),
            chat_id: self.chat_id.clone(),
            turn_id: self.turn_id.clone(),
            model,
            fallback,
            endpoint,
            offered,
            context: vec![ContextMessage::System(prompt.clone())],
            max_rounds: self.max_rounds,
            role: self.role.clone(),
            withheld,
            prompt,
            summary: None,
            // A frame's context is its task and its own work: nothing to compact.
            compaction_tried: true,
            last_row: 0,
            events: self.events.for_frame(&frame.id),
            stop: self.stop.clone(),
            pending: None,
            agent: agent.id.clone(),
            outside_content: self.outside_content.clone(),
            unsettled: None,
            frame: Some(frame),
            frames_opened: self.frames_opened.clone(),
            asks: Vec::new(),
            repeats: Repeats::default(),
        })
    }

    /// Runs a frame to its end and closes it: its answer, a cancellation, an error, or
    /// parked when a card inside it waits on the person. Boxed: frames nest.
    fn run_frame(mut self) -> BoxFuture<'static, Outcome> {
        Box::pin(async move {
            let closing = match self.rounds(&mut None).await {
                Ok(Some(closing)) => closing,
                Ok(None) => Closing { state: TurnState::Error, text: String::new(), error: None },
                Err(err) => Closing {
                    state: TurnState::Error,
                    text: String::new(),
                    error: Some(("storage", format!("Skald could not save this agent's work: {err}"))),
                },
            };
            self.write_pending().await;
            if closing.state == TurnState::Parked {
                if let Some(frame) = self.frame_id()
                    && let Err(err) = chat::set_frame_state(&self.session.space, frame, "parked").await
                {
                    tracing::error!(user = %self.session.user_id, %err, "could not mark an agent's frame as waiting");
                }
                return Outcome::Park(std::mem::take(&mut self.asks));
            }
            let last = self.closing_row(&closing);
            if let Err(err) = chat::end_frame(&self.session.space, &last, closing.state).await {
                tracing::error!(user = %self.session.user_id, %err, "could not record the end of an agent's frame");
            }
            self.events.emit(|of| LiveEvent::FrameEnded { of, status: closing.state });
            match (closing.state, closing.error) {
                (TurnState::Done, _) if closing.text.trim().is_empty() => {
                    Outcome::Done(format!("The {} agent finished without an answer.", self.agent), "ok")
                }
                (TurnState::Done, _) => Outcome::Done(closing.text, "ok"),
                (TurnState::Stopped, _) => Outcome::Done(CANCELLED.to_owned(), "cancelled"),
                (_, error) => {
                    let why = error.map_or_else(|| "it failed".to_owned(), |(_, message)| message);
                    Outcome::Done(format!("Error: the {} agent could not finish: {why}", self.agent), "error")
                }
            }
        })
    }

    /// What to record of a model request: the record for the person's file and the tokens
    /// for their usage totals. Tokens are estimated when the provider reported none but
    /// something came back, so caps hold for every provider; a request that returned
    /// nothing costs nothing, and one that was withheld is no request at all.
    fn account(
        &self,
        request: &ChatRequest,
        reply: &Reply,
        end: &End,
        attempts: u32,
        took: Duration,
    ) -> Option<(RequestRecord, (i64, i64))> {
        if attempts == 0 {
            return None;
        }
        let reported = reply.usage.map(|(input, output)| (clamp(input), clamp(output)));
        let counted = reported.unwrap_or_else(|| {
            if reply.is_empty() {
                (0, 0)
            } else {
                (usage::estimate_tokens(compaction::message_chars(request)), usage::estimate_tokens(reply_chars(reply)))
            }
        });
        let (outcome, error_code) = match end {
            End::Finished => ("ok", None),
            End::Stopped | End::NotSaved => ("stopped", None),
            End::Failed(err) => ("error", Some(err.code())),
        };
        let record = RequestRecord {
            turn_id: self.turn_id.clone(),
            provider: self.model.provider.clone(),
            model: self.model.model_id.clone(),
            tokens_in: reported.map(|(input, _)| input),
            tokens_out: reported.map(|(_, output)| output),
            ttft_ms: reply.first_delta.map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
            latency_ms: i64::try_from(took.as_millis()).unwrap_or(i64::MAX),
            attempts: i64::from(attempts),
            outcome,
            error_code,
            source: RequestSource {
                session_id: self.chat_id.clone(),
                kind: self.endpoint.kind.clone(),
                render_version: super::RENDER_VERSION,
                prompt: self.prompt.clone(),
                tools: providers::tools_to_json(&request.tools),
                history_upto: self.last_row,
                summary_id: self.summary.as_ref().map(|s| s.id),
                purpose: "turn",
                frame_id: self.frame_id().map(str::to_owned),
            },
        };
        Some((record, counted))
    }

    /// Writes the pending request record and usage now (a turn that goes on). Failures are
    /// logged: they never cost the person their reply.
    async fn write_pending(&mut self) {
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
    fn closing_row<'a>(&'a self, closing: &'a Closing) -> NewMessage<'a> {
        NewMessage {
            session_id: &self.chat_id,
            turn_id: &self.turn_id,
            role: MessageRole::Assistant,
            text: &closing.text,
            status: closing.state.as_str(),
            model: Some(&self.model.name),
            error_code: closing.error.as_ref().map(|(code, _)| *code),
            error_message: closing.error.as_ref().map(|(_, message)| message.as_str()),
            frame_id: self.frame_id(),
            ..NewMessage::default()
        }
    }

    /// Writes the turn's end with its last request record; the usage totals, in the other
    /// database, are written at the same time.
    async fn close(&mut self, closing: &Closing) -> Result<(), StoreError> {
        let (record, tokens) = match self.pending.take() {
            Some((record, tokens)) => (Some(record), Some(tokens)),
            None => (None, None),
        };
        let last = self.closing_row(closing);
        let end = TurnEnd {
            state: closing.state,
            error_code: closing.error.as_ref().map(|(code, _)| *code),
            error_message: closing.error.as_ref().map(|(_, message)| message.as_str()),
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
