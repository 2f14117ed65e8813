//! Sub-agent frames (§8.3): a `call_agent` call opens the callee's frame — a turn inside
//! the turn, run by the same driver — within the depth and count limits, or resumes the
//! one it opened before its turn parked; the frame's end becomes the call's result.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures_util::future::BoxFuture;

use super::calls::Outcome;
use super::decide::{self, Closing};
use super::{FrameInfo, MAX_DEPTH, MAX_FRAMES, Setup, Turn};
use crate::agent::context::{self, Rows};
use crate::agent::definition::Agent;
use crate::agent::events::LiveEvent;
use crate::agent::tools;
use crate::agent::{TurnError, pick_model, prompt_for};
use crate::ids::FrameId;
use crate::providers::{ContextMessage, ToolCall, ToolSpec};
use crate::store::StoreError;
use crate::store::chat::{self, Message, MessageRole, MessageStatus, TurnState};

/// A finished frame's result, read back from its closing row.
fn finished_frame(agent: &str, rows: &[Message]) -> Outcome {
    let closing = rows.iter().rev().find(|m| m.role == MessageRole::Assistant && m.tool_calls.is_none());
    match closing.and_then(|m| Some((m.status.ended_as()?, m))) {
        Some((TurnState::Done, m)) => Outcome::Done(m.text.clone(), MessageStatus::Ok),
        Some((TurnState::Stopped, _)) => Outcome::cancelled(),
        Some((TurnState::Error | TurnState::Parked | TurnState::Running, _)) | None => {
            Outcome::Done(format!("Error: the {agent} agent could not finish."), MessageStatus::Error)
        }
    }
}

/// What the caller's model reads of a frame that closed: its answer, a cancellation, or
/// why it could not finish.
fn answer_of(agent: &str, closing: Closing) -> Outcome {
    match closing.state {
        TurnState::Done if closing.text.trim().is_empty() => {
            Outcome::Done(format!("The {agent} agent finished without an answer."), MessageStatus::Ok)
        }
        TurnState::Done => Outcome::Done(closing.text, MessageStatus::Ok),
        TurnState::Stopped => Outcome::cancelled(),
        _ => {
            let why = closing.error.map_or_else(|| "it failed".to_owned(), |failure| failure.message);
            Outcome::Done(format!("Error: the {agent} agent could not finish: {why}"), MessageStatus::Error)
        }
    }
}

/// Why a frame may not open at `depth` when the turn already opened `opened`: none when
/// it may.
fn beyond_limits(depth: i64, opened: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return Some(format!(
            "agents may call each other at most {MAX_DEPTH} deep, and this call would be {depth} deep; do the task \
             yourself or answer with what you have"
        ));
    }
    (opened >= MAX_FRAMES).then(|| format!("this turn already called {MAX_FRAMES} agents; answer with what you have"))
}

impl Turn {
    /// Runs a `call_agent` call: opens the callee's frame (or resumes the one it opened
    /// before its turn parked) and runs it to its answer (§8.3).
    pub(super) async fn call_agent(&self, call: &ToolCall, slots: &tokio::sync::Semaphore) -> Outcome {
        let _slot = tokio::select! {
            biased;
            () = self.stop.cancelled() => return Outcome::cancelled(),
            slot = slots.acquire() => slot,
        };
        match self.frame_for(call).await {
            Ok(frame) => frame.run_frame().await,
            Err(outcome) => outcome,
        }
    }

    /// The callee's frame for a call: resumed from its stored rows when the call opened
    /// one before its turn parked, else opened now within the limits. Otherwise the call's
    /// result: why it opened none, or the answer of the frame that already finished.
    async fn frame_for(&self, call: &ToolCall) -> Result<Turn, Outcome> {
        let space = &self.session.space;
        let storage = |err: StoreError| Outcome::error(format!("the agent could not be started: {err}"));
        if let Some(frame) = chat::frame_for_call(space, &call.id).await.map_err(storage)? {
            let rows = chat::frame_rows(space, &frame.id).await.map_err(storage)?;
            if !matches!(frame.state.as_str(), "parked" | "running") {
                // It finished before its turn parked on a sibling's card: its answer is
                // read back, not worked out again.
                return Err(finished_frame(&frame.agent, &rows));
            }
            let agent = self.runtime.agents().load(&frame.agent).map_err(Outcome::error)?;
            let info = FrameInfo { id: frame.id.clone(), depth: frame.depth };
            let mut callee = self.callee(&agent, info, &rows).await?;
            callee.unsettled = context::unsettled_calls(&rows, &self.turn_id, Some(&frame.id));
            callee.last_row = rows.last().map_or(0, |m| m.id);
            chat::set_frame_state(space, &frame.id, TurnState::Running).await.map_err(storage)?;
            return Ok(callee);
        }
        let arguments = tools::parse_arguments(&call.arguments).map_err(Outcome::error)?;
        let (Some(agent_id), Some(task)) = (arguments["agent"].as_str(), arguments["task"].as_str()) else {
            return Err(Outcome::error("call_agent needs \"agent\" (an id from list_agents) and \"task\""));
        };
        let depth = self.depth() + 1;
        if let Some(why) = beyond_limits(depth, 0) {
            return Err(Outcome::error(why));
        }
        let agent = self
            .runtime
            .agents()
            .load(agent_id)
            .map_err(|err| Outcome::error(format!("{err}; list_agents shows the agents there are")))?;
        if let Some(why) = beyond_limits(depth, self.frames_opened.fetch_add(1, Ordering::AcqRel)) {
            return Err(Outcome::error(why));
        }
        let id = FrameId::generate();
        let mut callee = self.callee(&agent, FrameInfo { id: id.clone(), depth }, &[]).await?;
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
    /// its definition and its caller all allow, the same stop and the same limits; its
    /// context is its prompt and the frame's `rows` so far.
    async fn callee(&self, agent: &Agent, frame: FrameInfo, rows: &[Message]) -> Result<Turn, Outcome> {
        let refused = |err: TurnError| Outcome::error(err);
        let providers = self.runtime.provider_cache().await.map_err(refused)?;
        // The agent called is checked against the person's record like the conversation's,
        // with their role as the shared database states it now.
        let role = self.runtime.role_of(&self.session.user_id).await.map_err(refused)?;
        let standing =
            self.runtime.standing_with(&self.session, &role, Some(agent), &providers).await.map_err(refused)?;
        if !standing.holds.is_empty() {
            return Err(refused(TurnError::Held(standing.holds.len())));
        }
        if standing.withheld.agents.contains(&agent.id) {
            return Err(refused(TurnError::AgentDeclined(agent.id.clone())));
        }
        let models = standing.withheld.models(&providers.models);
        let (model, fallback) = pick_model(&models, &self.role, agent, None).map_err(refused)?;
        let endpoint =
            providers.endpoint(&self.runtime.inner.secrets, &model, &self.session.user_id).map_err(refused)?;
        let offered: Vec<ToolSpec> = self
            .runtime
            .inner
            .tools
            .offered_with_mcp(&self.role, &agent.meta.tools, &standing.withheld.mcp, standing.catalogue.as_ref())
            .into_iter()
            .filter(|tool| self.offered.iter().any(|mine| mine.name == tool.name))
            .collect();
        self.runtime.observe(agent);
        let prompt = prompt_for(self.session.space.prompt_prefix(), &agent.prompt);
        let context = context::compose_context(&prompt, None, rows, Rows::Frame(&frame.id));
        let withheld = Arc::new(standing.withheld);
        let setup = Setup { agent: agent.id.clone(), model, fallback, endpoint, offered, withheld, prompt, context };
        Ok(self.frame(frame, setup))
    }

    /// Runs a frame to its end and closes it: its answer, a cancellation, an error, or
    /// parked when a card inside it waits on the person. Boxed: frames nest.
    fn run_frame(mut self) -> BoxFuture<'static, Outcome> {
        Box::pin(async move {
            let rounds = self.rounds(&mut None).await.map_err(|err| err.to_string());
            let closing = decide::frame_closing(rounds);
            self.write_pending().await;
            if closing.state == TurnState::Parked {
                if let Some(frame) = self.frame_id()
                    && let Err(err) = chat::set_frame_state(&self.session.space, frame, TurnState::Parked).await
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
            answer_of(&self.agent, closing)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::context::tests::row;

    fn text(outcome: Outcome) -> (String, MessageStatus) {
        match outcome {
            Outcome::Done(text, status) => (text, status),
            Outcome::Park(_) => panic!("a closed frame does not park"),
        }
    }

    #[test]
    fn a_frame_that_answered_gives_its_answer_as_the_calls_result() {
        assert_eq!(text(answer_of("helper", Closing::done("42".into()))), ("42".into(), MessageStatus::Ok));
    }

    #[test]
    fn a_frame_that_said_nothing_says_so() {
        let (said, status) = text(answer_of("helper", Closing::done("  ".into())));
        assert_eq!((said.as_str(), status), ("The helper agent finished without an answer.", MessageStatus::Ok));
    }

    #[test]
    fn a_stopped_frame_is_a_cancelled_call() {
        assert_eq!(text(answer_of("helper", Closing::stopped(String::new()))).1, MessageStatus::Cancelled);
    }

    #[test]
    fn a_failed_frame_tells_the_caller_why() {
        let (said, status) = text(answer_of("helper", Closing::failed(String::new(), "step_limit", "too long")));
        assert_eq!(
            (said.as_str(), status),
            ("Error: the helper agent could not finish: too long", MessageStatus::Error)
        );
    }

    #[test]
    fn a_frame_that_finished_before_its_turn_parked_is_read_back_not_run_again() {
        let closing = |status: MessageStatus, said: &str| Message {
            status,
            ..row(1, MessageRole::Assistant, said, Some("frame_1"))
        };
        assert_eq!(
            text(finished_frame("helper", &[closing(MessageStatus::Done, "42")])),
            ("42".into(), MessageStatus::Ok)
        );
        assert_eq!(text(finished_frame("helper", &[closing(MessageStatus::Stopped, "")])).1, MessageStatus::Cancelled);
        let (said, status) = text(finished_frame("helper", &[closing(MessageStatus::Error, "")]));
        assert_eq!((said.as_str(), status), ("Error: the helper agent could not finish.", MessageStatus::Error));
    }

    #[test]
    fn a_frame_opens_within_the_depth_and_count_limits_only() {
        assert_eq!(beyond_limits(MAX_DEPTH, MAX_FRAMES - 1), None);
        assert!(beyond_limits(MAX_DEPTH + 1, 0).is_some_and(|why| why.contains("deep")));
        assert!(beyond_limits(2, MAX_FRAMES).is_some_and(|why| why.contains("already called")));
    }
}
