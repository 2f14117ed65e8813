//! The turn (§8.1): send the context, stream the reply to the person's windows, run the
//! tools it asks for, append each result, and go again until the model answers without
//! tools, the person stops it, it fails, or the step limit is reached.
//!
//! Split into decisions and a driver: [`decide`] chooses each next step as data, without
//! IO; this module's [`Turn::rounds`] carries the steps out, helped by [`stream`] (the one
//! stream reader), [`calls`] (verdicts, cards, running tools), [`frames`] (sub-agents),
//! [`compact`] (summaries) and [`record`] (request records, closing rows).
//!
//! Invariants kept here: history is only appended to; every tool call that reached the
//! history gets exactly one result row (ok, error, denied or cancelled); every model
//! request is recorded; a turn always ends in `done`, `stopped` or `error`, or waits
//! `parked` on cards a person decides, never hangs. Sub-agent frames (§8.3) are turns
//! inside the turn, run by the same loop.

mod calls;
mod compact;
pub(crate) mod decide;
mod frames;
mod record;
pub(crate) mod sample;
mod stream;
mod title;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::consent::Withheld;
use super::events::{Failure, LiveEvent, TurnEvents};
use super::{Runtime, TurnError, compaction, context, usage};
use crate::ids::{ConversationId, FrameId, TurnId};
use crate::providers::catalogue::CatalogueModel;
use crate::providers::{ChatRequest, ContextMessage, Endpoint, ToolCall, ToolSpec};
use crate::store::StoreError;
use crate::store::approvals;
use crate::store::chat::{Summary, TurnState};
use crate::store::roles::Role;
use crate::users::sessions::Session;
use decide::{Closing, Recheck, Repeats, Replied, Step};
use record::Pending;
use stream::Commit;

/// How deep agents may call each other, the conversation's own agent counting as 1.
pub const MAX_DEPTH: i64 = 5;

/// The most frames one turn may open, however they nest.
pub const MAX_FRAMES: usize = 16;

/// The most frames of one response that run at the same time.
pub const MAX_PARALLEL_FRAMES: usize = 4;

/// A sub-agent frame's place in its turn (§8.3).
pub(crate) struct FrameInfo {
    pub id: FrameId,
    /// 2 for a callee of the conversation's own agent.
    pub depth: i64,
}

/// What a turn or frame runs with, chosen before it starts: its agent, model and tools.
pub(crate) struct Setup {
    /// The agent it runs, named on cards.
    pub agent: String,
    pub model: CatalogueModel,
    /// Another provider's model to switch to, once, when this one is down.
    pub fallback: Option<CatalogueModel>,
    pub endpoint: Endpoint,
    /// The tools the role and the agent allow; offered to models that take tools.
    pub offered: Vec<ToolSpec>,
    /// What stays out of force for the person (§3): shared rules among it.
    pub withheld: Arc<Withheld>,
    /// The agent's prompt as this turn read it, kept with each request's record.
    pub prompt: String,
    /// The system prompt and the history so far.
    pub context: Vec<ContextMessage>,
}

/// Where a conversation's own turn starts: besides its [`Setup`], what it inherits from
/// the conversation.
pub(crate) struct Opening {
    pub runtime: Runtime,
    pub session: Arc<Session>,
    pub chat_id: ConversationId,
    pub turn_id: TurnId,
    pub stop: CancellationToken,
    /// Narrowed by what the person has not accepted (§3).
    pub role: Role,
    pub summary: Option<Summary>,
    /// The last history row the context holds.
    pub last_row: i64,
    /// Whether outside content entered the conversation before this turn.
    pub outside_content: bool,
    /// A resumed turn's calls still without results, with what the model said beside them.
    pub unsettled: Option<(String, Vec<ToolCall>)>,
    /// The frames a resumed turn opened before it parked.
    pub frames_before: usize,
}

/// One turn being run — the conversation's own, or a sub-agent's frame inside it — with
/// everything its rounds read and change.
pub(crate) struct Turn {
    runtime: Runtime,
    session: Arc<Session>,
    pub(crate) chat_id: ConversationId,
    turn_id: TurnId,
    /// The agent the conversation runs, named on cards.
    agent: String,
    model: CatalogueModel,
    fallback: Option<CatalogueModel>,
    endpoint: Endpoint,
    offered: Vec<ToolSpec>,
    /// The system prompt, the history and the person's new message.
    pub(crate) context: Vec<ContextMessage>,
    max_rounds: usize,
    /// The person's role, read again before each further round: an administrator's change
    /// to its privacy tier (§16) or daily cap applies within the turn. Narrowed by what
    /// the person has not accepted (§3).
    role: Role,
    withheld: Arc<Withheld>,
    prompt: String,
    /// The summary standing in for the older history (§8.6), if any.
    summary: Option<Summary>,
    /// Compaction is tried at most once a turn.
    compaction_tried: bool,
    /// The last history row the context holds, kept with each request's record.
    pub(crate) last_row: i64,
    events: TurnEvents,
    stop: CancellationToken,
    /// The latest model request and its token counts, not yet written: the turn's last
    /// one is written with the turn's end, in one commit.
    pending: Option<Pending>,
    /// Outside content has entered the conversation (§8.4's injection hygiene); shared by
    /// the turn's frames, since they all write into the same conversation.
    outside_content: Arc<AtomicBool>,
    /// Calls still without results, settled before any further model request.
    unsettled: Option<(String, Vec<ToolCall>)>,
    /// The sub-agent frame this is; none for the conversation's own turn.
    frame: Option<FrameInfo>,
    /// How many frames the turn has opened, against [`MAX_FRAMES`].
    frames_opened: Arc<AtomicUsize>,
    /// A frame's cards, handed up to the conversation's own turn to write.
    asks: Vec<approvals::NewCard>,
    /// The calls of the latest response, to catch a model going round in circles.
    repeats: Repeats,
}

impl Turn {
    /// A conversation's own turn.
    pub fn conversation(opening: Opening, setup: Setup) -> Self {
        let Opening { runtime, session, chat_id, turn_id, stop, role, summary, last_row, .. } = opening;
        Self {
            max_rounds: usize::try_from(role.max_turns).unwrap_or(1).max(1),
            outside_content: Arc::new(AtomicBool::new(opening.outside_content)),
            unsettled: opening.unsettled,
            frames_opened: Arc::new(AtomicUsize::new(opening.frames_before)),
            ..Self::blank(runtime, session, chat_id, turn_id, stop, role, setup, summary, last_row)
        }
    }

    /// A sub-agent's frame inside this turn: the same conversation, stop, limits and
    /// numbering of events; its own agent, model and tools.
    fn frame(&self, frame: FrameInfo, setup: Setup) -> Self {
        let (runtime, session, stop) = (self.runtime.clone(), self.session.clone(), self.stop.clone());
        let (chat_id, turn_id) = (self.chat_id.clone(), self.turn_id.clone());
        Self {
            max_rounds: self.max_rounds,
            // A frame's context is its task and its own work: nothing to compact.
            compaction_tried: true,
            events: self.events.for_frame(&frame.id),
            outside_content: self.outside_content.clone(),
            frames_opened: self.frames_opened.clone(),
            frame: Some(frame),
            ..Self::blank(runtime, session, chat_id, turn_id, stop, self.role.clone(), setup, None, 0)
        }
    }

    /// The fields every kind of turn sets alike.
    #[allow(clippy::too_many_arguments, reason = "private: the two constructors above are its only callers")]
    fn blank(
        runtime: Runtime,
        session: Arc<Session>,
        chat_id: ConversationId,
        turn_id: TurnId,
        stop: CancellationToken,
        role: Role,
        setup: Setup,
        summary: Option<Summary>,
        last_row: i64,
    ) -> Self {
        let events =
            TurnEvents::new(runtime.events().clone(), session.user_id.clone(), chat_id.clone(), turn_id.clone());
        Self {
            runtime,
            session,
            chat_id,
            turn_id,
            agent: setup.agent,
            model: setup.model,
            fallback: setup.fallback,
            endpoint: setup.endpoint,
            offered: setup.offered,
            context: setup.context,
            max_rounds: 1,
            role,
            withheld: setup.withheld,
            prompt: setup.prompt,
            summary,
            compaction_tried: false,
            last_row,
            events,
            stop,
            pending: None,
            outside_content: Arc::default(),
            unsettled: None,
            frame: None,
            frames_opened: Arc::default(),
            asks: Vec::new(),
            repeats: Repeats::default(),
        }
    }

    /// Tells the windows the turn began, or went on after its cards.
    pub fn started(&self, resumed: bool) {
        let (model, agent) = (self.model.name.clone(), self.agent.clone());
        self.events.emit(|of| LiveEvent::TurnStarted { of, model, agent, resumed });
    }

    /// Runs the turn to its end; `closing` is set once only its end remains to be written.
    /// Returns the turn when it ended `done`, for what may follow it (a title).
    pub async fn run(
        mut self,
        committed: tokio::sync::oneshot::Receiver<Option<i64>>,
        closing: Arc<AtomicBool>,
    ) -> Option<Self> {
        let mut commit: Commit = Some(committed);
        let rounds = self.rounds(&mut commit).await.map_err(|err| {
            tracing::error!(user = %self.session.user_id, %err, "a turn could not record its progress");
            err.to_string()
        });
        closing.store(true, std::sync::atomic::Ordering::Release);
        let closing = decide::turn_closing(rounds)?;
        if closing.state == TurnState::Parked {
            // The cards hold the turn now; it goes on when the person decides. A stop that
            // came while the cards were being written ends it here instead.
            self.write_pending().await;
            self.events.emit(|of| LiveEvent::TurnParked { of, status: TurnState::Parked });
            self.runtime.parked(&self.turn_id, self.events.sent());
            if self.stop.is_cancelled()
                && let Err(err) =
                    self.runtime.withdraw_parked(&self.session, &self.chat_id, super::STOPPED_UNDECIDED).await
            {
                tracing::error!(user = %self.session.user_id, %err, "could not withdraw the cards of a stopped turn");
            }
            return None;
        }
        if let Err(err) = self.close(&closing).await {
            tracing::error!(user = %self.session.user_id, %err, "a turn could not record its end");
        }
        if let Some(error) = &closing.error {
            self.events.emit(|of| LiveEvent::Error { of, error: error.clone() });
        }
        let done = closing.state == TurnState::Done;
        if done {
            // The context as the history now reads, for what follows the turn (a title).
            self.context.push(ContextMessage::Assistant { text: closing.text, tool_calls: Vec::new() });
        }
        self.events.ended(closing.state, closing.error);
        done.then_some(self)
    }

    /// Runs model rounds until the turn ends; `None` when the person's message was never
    /// committed (nothing of this turn may be written then).
    async fn rounds(&mut self, commit: &mut Commit) -> Result<Option<Closing>, StoreError> {
        if let Some((why, calls)) = self.unsettled.take() {
            let settled = self.settle(&why, calls).await?;
            if let Step::Close(closing) = decide::after_calls(settled, self.stop.is_cancelled()) {
                return Ok(Some(closing));
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
            let budget = compaction::budget(self.model.context_window);
            if decide::compacts(self.compaction_tried, compaction::estimate(&request), budget) {
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
            let saved = !matches!(end, decide::End::NotSaved) && self.committed(commit).await;
            if saved {
                self.pending = self.account(&request, &reply, &end, attempts, started.elapsed());
            }
            let failure = match &end {
                decide::End::Failed(err) => Some(err.code()),
                _ => None,
            };
            let replied = Replied { end, empty: reply.is_empty(), calls: reply.tool_calls(), text: reply.text };
            let step = decide::after_reply(
                saved,
                replied,
                self.fallback.is_some(),
                &mut self.repeats,
                &self.endpoint.provider,
            );
            match step {
                Step::Next => {}
                Step::Run { text, calls } => {
                    self.write_pending().await;
                    let settled = self.run_tools(text, calls).await?;
                    if let Step::Close(closing) = decide::after_calls(settled, self.stop.is_cancelled()) {
                        return Ok(Some(closing));
                    }
                }
                // A switch to the fallback model is no step of the turn: the round is redone.
                Step::Fallback { otherwise } => {
                    if self.switch_to_fallback(failure.unwrap_or_default()).await {
                        self.write_pending().await;
                        continue;
                    }
                    tracing::warn!(user = %self.session.user_id, code = failure, "model request failed");
                    return Ok(Some(otherwise));
                }
                Step::Abandon => {
                    self.not_saved();
                    return Ok(None);
                }
                Step::Close(closing) => {
                    if let Some(code) = failure {
                        tracing::warn!(user = %self.session.user_id, code, "model request failed");
                    }
                    return Ok(Some(closing));
                }
            }
            round += 1;
        }
        Ok(Some(decide::out_of_steps(self.max_rounds)))
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
            cache_key: context::cache_key_of(&self.prompt),
            max_tokens: None,
            images: self.model.images,
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
        Ok(decide::after_recheck(self.reread_role().await?))
    }

    /// Reads the role, what holds the person and their usage again; the turn's role and
    /// withheld models follow what was read. What it found is decided in `decide`.
    async fn reread_role(&mut self) -> Result<Recheck, StoreError> {
        let mut role = match self.runtime.role_of(&self.session.user_id).await {
            Ok(role) => role,
            Err(TurnError::Store(err)) => return Err(err),
            Err(other) => return Ok(Recheck::Inactive(other.to_string())),
        };
        let agent = self.runtime.agents().load(&self.agent).ok();
        match self.runtime.standing(&self.session, &role, agent.as_ref()).await {
            Ok(standing) if !standing.holds.is_empty() => {
                return Ok(Recheck::Held(TurnError::Held(standing.holds.len()).to_string()));
            }
            Ok(standing) => {
                standing.withheld.narrow_role(&mut role);
                self.withheld = Arc::new(standing.withheld);
            }
            Err(TurnError::Store(err)) => return Err(err),
            Err(other) => return Ok(Recheck::Held(other.to_string())),
        }
        self.role = role;
        let over = usage::over_cap(self.runtime.system(), &self.role, &self.session.user_id).await?;
        Ok(over.map_or(Recheck::Clear, |(cap, used)| Recheck::OverCap(TurnError::UsageCap { cap, used }.to_string())))
    }

    /// Whether memories are read into this turn, and if so whether the context may reach a
    /// remote provider: only where `recall` is offered to a model that takes tools, so the
    /// recall stands in the history as the call and result the model could have made.
    pub(super) fn recalls(&self) -> Option<bool> {
        (self.model.tools && self.offered.iter().any(|t| t.name == "recall")).then(|| self.may_reach_remote())
    }

    /// Reads a recall made before the first request into the context, marking the turn
    /// when a recalled memory came from a conversation with outside content.
    pub(super) fn recalled(&mut self, call: crate::providers::ToolCall, result: String, outside: bool) {
        self.context.push(ContextMessage::Assistant { text: String::new(), tool_calls: vec![call.clone()] });
        self.context.push(ContextMessage::Tool { call_id: call.id, content: result });
        if outside {
            self.outside_content.store(true, std::sync::atomic::Ordering::Release);
        }
    }

    /// Whether what this turn reads may be sent to a remote provider: its model's or its
    /// fallback's (a switch mid-turn would carry the context along).
    pub(super) fn may_reach_remote(&self) -> bool {
        use crate::providers::privacy::{Tier, classify};
        self.endpoint.privacy == Tier::Remote
            || self.fallback.as_ref().is_some_and(|f| classify(f.kind, &f.base_url, f.trusted_lan) == Tier::Remote)
    }

    /// Moves the turn to its fallback model, if it has one whose key opens; says so on the
    /// socket. The failed request stays on record.
    async fn switch_to_fallback(&mut self, reason: &str) -> bool {
        let Some(next) = self.fallback.take() else { return false };
        let endpoint = match self.runtime.endpoint(&next, &self.session.user_id).await {
            Ok(endpoint) => endpoint,
            Err(err) => {
                tracing::warn!(%err, "the fallback model cannot be used");
                return false;
            }
        };
        let (from, to, reason) = (self.model.name.clone(), next.name.clone(), reason.to_owned());
        self.events.emit(|of| LiveEvent::Fallback { of, from, to, reason });
        self.model = next;
        self.endpoint = endpoint;
        true
    }

    fn frame_id(&self) -> Option<&str> {
        self.frame.as_ref().map(|f| f.id.as_str())
    }

    /// How deep this frame sits: 1 for the conversation's own.
    fn depth(&self) -> i64 {
        self.frame.as_ref().map_or(1, |f| f.depth)
    }
}
