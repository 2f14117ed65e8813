//! A response's tool calls (§8.4): the gate's verdict on each — a pure function of the call,
//! its card, the rules and the role — the cards for those that need a person, running
//! the rest, and writing every call's one result in call order.

use std::sync::atomic::{AtomicBool, Ordering};

use super::Turn;
use super::decide::Settled;
use crate::agent::events::{CallView, LiveEvent};
use crate::agent::inbox::CardShows;
use crate::agent::scheduling::{SCHEDULE, ScheduleCard};
use crate::agent::tools::{self, ToolContext};
use crate::agent::{calls_to_json, gate, inbox};
use crate::ids::{CallId, CardId};
use crate::providers::{ContextMessage, ToolCall, ToolSpec};
use crate::store::approvals::{self, CardKind, CardState};
use crate::store::chat::{self, MessageRole, MessageStatus, NewMessage};
use crate::store::{StoreError, approval_rules};

/// What the model reads for a call the person stopped while it ran.
pub(super) const CANCELLED: &str = "Cancelled: the person stopped the turn before this call finished.";

/// What the model reads for a call the person declined.
const DENIED: &str = "Denied: the person declined this call, so it was not run. Do not try it again unless they ask; \
     tell them what you could not do.";

/// What a model that repeats its last calls reads instead of their results.
const REPEATED: &str = "Not run: this is exactly the call you just made, and its result is above. Do not make it \
     again; answer the person with what you have.";

/// The gate's verdict on one call of a response.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Run,
    /// Not run; the text is the call's result.
    Refuse(String),
    /// A person decides or answers first: an `approval` or a `question` card, with the
    /// gate's reason.
    Ask {
        reason: String,
        kind: CardKind,
    },
    /// A question the person answered; the text is the call's result.
    Answered(String),
    /// Not run: its arguments cannot be carried out (a job that cannot be scheduled);
    /// the text says why, as the call's error.
    Invalid(String),
}

/// What one call of a response came to.
pub(super) enum Outcome {
    /// Its result and status (`ok`, `error`, `denied`, `cancelled`).
    Done(String, MessageStatus),
    /// Its frame met calls that need the person: their cards, not yet written.
    Park(Vec<approvals::NewCard>),
}

impl Outcome {
    pub fn error(why: impl std::fmt::Display) -> Self {
        Self::Done(format!("Error: {why}"), MessageStatus::Error)
    }

    pub fn cancelled() -> Self {
        Self::Done(CANCELLED.to_owned(), MessageStatus::Cancelled)
    }
}

/// What the gate weighs for every call of a response alike.
pub(super) struct Ground<'a> {
    pub role: &'a str,
    pub may_approve: bool,
    /// What this role may not approve goes to the person's supervisor (§6.2).
    pub routed: bool,
    pub outside_content: bool,
    pub shared: &'a [gate::Rule],
    pub personal: &'a [gate::Rule],
}

/// What the gate says of one call: `side_effects` is none for a tool not offered,
/// `repeated` whether it repeats the response before, `card` the card it may already have.
pub(super) fn verdict(
    call: &ToolCall,
    side_effects: Option<bool>,
    destructive: bool,
    repeated: bool,
    card: Option<&approvals::Card>,
    ground: &Ground,
) -> Verdict {
    if repeated {
        return Verdict::Refuse(REPEATED.to_owned());
    }
    // A call that cannot run (a tool not offered, arguments that are no JSON object)
    // runs only to return its error: nothing to ask anyone about.
    let (Some(side_effects), Ok(arguments)) = (side_effects, tools::parse_arguments(&call.arguments)) else {
        return Verdict::Run;
    };
    // Withdrawn cards belong to turns that ended: they are never settled again.
    match card.map(|c| (c.state, c)) {
        Some((CardState::Denied, _)) => return Verdict::Refuse(DENIED.to_owned()),
        Some((CardState::Answered, c)) => {
            return Verdict::Answered(format!("The person answered: {}", c.answer.as_deref().unwrap_or("")));
        }
        Some((CardState::Pending, c)) => return Verdict::Ask { reason: c.reason.clone(), kind: card_kind(&call.name) },
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
        role: ground.role,
        // Answering a question is no approval: every role may.
        may_approve: ground.may_approve || asking,
        routed: ground.routed,
        side_effects,
        outside_content: ground.outside_content,
        approved,
        destructive,
    };
    let decision = gate::decide(&situation, ground.shared, ground.personal);
    match decision.effect {
        gate::Effect::Deny => Verdict::Refuse(format!(
            "Refused: {}. This call was not run; do not try it again, and tell the person what you could not do.",
            decision.reason
        )),
        // A question goes to the person unless a rule refuses it outright.
        _ if asking => Verdict::Ask { reason: "the assistant has a question for you".into(), kind: CardKind::Question },
        gate::Effect::Allow => Verdict::Run,
        // Decided once already, yet the gate still asks: the arguments are not the
        // ones the person saw. Never a second card for the same call.
        gate::Effect::Require if card.is_some() => {
            Verdict::Refuse("Refused: these arguments are not the ones the person approved.".to_owned())
        }
        gate::Effect::Require => Verdict::Ask { reason: decision.reason, kind: CardKind::Approval },
    }
}

/// The kind of card a call that needs the person raises.
fn card_kind(tool: &str) -> CardKind {
    if tool == tools::CLARIFY { CardKind::Question } else { CardKind::Approval }
}

/// Whether a tool is among those offered.
fn offers(offered: &[ToolSpec], name: &str) -> bool {
    offered.iter().any(|tool| tool.name == name)
}

impl Turn {
    /// Appends the model's request for tools, then settles the calls (see [`Turn::settle`]).
    pub(super) async fn run_tools(&mut self, text: String, calls: Vec<ToolCall>) -> Result<Settled, StoreError> {
        let asked = NewMessage {
            session_id: &self.chat_id,
            turn_id: &self.turn_id,
            role: MessageRole::Assistant,
            text: &text,
            status: MessageStatus::ToolCalls,
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
    /// allowed calls run concurrently (sub-agent frames at most
    /// [`super::MAX_PARALLEL_FRAMES`] at a time) and every call gets its one result, in
    /// call order: its output, its error, a refusal the model can read, or a cancellation
    /// when the person stops the turn. A frame that parks on a card parks the whole turn;
    /// the calls that finished keep their results.
    pub(super) async fn settle(&mut self, why: &str, calls: Vec<ToolCall>) -> Result<Settled, StoreError> {
        let space = self.session.space.clone();
        let (shared, personal, cards) = tokio::try_join!(
            approval_rules::list(self.runtime.system()),
            approvals::personal_rules(&space),
            approvals::of_turn(&space, &self.turn_id),
        )?;
        let shared = self.withheld.rules(shared.into_iter().map(|r| r.rule).collect());
        let registry = self.runtime.inner.tools.clone();
        let routed = !self.role.may_approve
            && self.role.cards_to_supervisor
            && crate::store::supervision::has_supervisor(self.runtime.system(), &self.session.user_id).await?;
        let ground = Ground {
            role: self.role.id.as_str(),
            may_approve: self.role.may_approve,
            routed,
            outside_content: self.outside_content.load(Ordering::Acquire),
            shared: &shared,
            personal: &personal,
        };
        let mut destructive = Vec::with_capacity(calls.len());
        for call in &calls {
            destructive.push(registry.destructive(&self.offered, &call.name).await);
        }
        let scheduled = self.scheduled(&calls).await;
        let verdicts: Vec<Verdict> = calls
            .iter()
            .zip(destructive)
            .zip(&scheduled)
            .map(|((call, destructive), job)| {
                // A job that could not be made asks no one: the model reads why.
                if let Some(Err(why)) = job {
                    return Verdict::Invalid(why.clone());
                }
                let card = cards.iter().find(|c| c.call_id == *call.id);
                let side_effects = registry.side_effects(&self.offered, &call.name);
                verdict(call, side_effects, destructive, self.repeats.refuses(&call.id), card, &ground)
            })
            .collect();
        let asks: Vec<approvals::NewCard> = calls
            .iter()
            .zip(&verdicts)
            .zip(scheduled)
            .filter_map(|((call, verdict), job)| match verdict {
                Verdict::Ask { reason, kind } => {
                    let mut card = self.new_card(call, why, reason, *kind);
                    if let Some(Ok(job)) = job {
                        let shows = CardShows::Schedule(job);
                        card.shows = Some(serde_json::to_string(&shows).expect("a job's card serializes"));
                    }
                    Some(card)
                }
                _ => None,
            })
            .collect();
        if !asks.is_empty() {
            let mut asks = asks;
            for card in asks.iter_mut().filter(|card| card.shows.is_none()) {
                card.shows = super::super::memory::card_shows(
                    &space,
                    &self.runtime.inner.system,
                    &self.runtime.meaning(),
                    &self.session.user_id,
                    &self.role,
                    card,
                )
                .await?;
                if let Some(hub) = self.runtime.mcp().filter(|_| card.shows.is_none()) {
                    let shows = hub.label(&card.tool).await.map(super::super::inbox::CardShows::ToolServer);
                    card.shows = shows.map(|shows| serde_json::to_string(&shows).expect("a label serializes"));
                }
            }
            return self.wait_on(asks).await;
        }
        let context = ToolContext {
            user: self.session.user_id.clone(),
            chat_id: self.chat_id.clone(),
            space: space.clone(),
            notifier: self.runtime.inner.notifier.clone(),
            events: self.runtime.inner.events.clone(),
            agents: self.runtime.agents().clone(),
            system: self.runtime.inner.system.clone(),
            meaning: self.runtime.meaning(),
            role: self.role.clone(),
            agent: self.agent.clone(),
            remote: self.may_reach_remote(),
            outside_content: self.outside_content.load(Ordering::Acquire),
            brought_outside: AtomicBool::new(false),
            turn_id: self.turn_id.clone(),
            turn_events: self.events.clone(),
            forms: self.runtime.forms().clone(),
            sampler: std::sync::Arc::new(self.sampler()),
            session: self.session.clone(),
            scheduling: self.runtime.scheduling().clone(),
            runtime: self.runtime.clone(),
        };
        let slots = tokio::sync::Semaphore::new(super::MAX_PARALLEL_FRAMES);
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
                            () = stop.cancelled() => Outcome::cancelled(),
                            result = registry.call(offered, call, context) => match result {
                                Ok(output) => Outcome::Done(output, MessageStatus::Ok),
                                Err(why) => Outcome::error(why),
                            },
                        },
                        Verdict::Refuse(text) => Outcome::Done(text, MessageStatus::Denied),
                        Verdict::Invalid(why) => Outcome::error(why),
                        Verdict::Answered(text) => Outcome::Done(text, MessageStatus::Ok),
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
                matches!(outcome, Outcome::Done(_, MessageStatus::Ok)) && registry.brings_outside_content(&call.name)
            });
        if brought_in && !self.outside_content.swap(true, Ordering::AcqRel) {
            chat::mark_outside_content(&space, &self.chat_id).await?;
        }
        let done: Vec<(&ToolCall, &str, MessageStatus)> = calls
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
                status: *status,
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
            let (status, result) = (*status, (*text).to_owned());
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
            let card = inbox::card_view(card).for_person(person.clone());
            self.events.emit(|of| LiveEvent::Card { of, card });
        }
        Ok(Settled::Parked)
    }

    /// For each offered `schedule` call whose arguments are a JSON object: the job it would
    /// make, as its card shows it, or why it cannot be made; none for other calls.
    async fn scheduled(&self, calls: &[ToolCall]) -> Vec<Option<Result<ScheduleCard, String>>> {
        let mut out = Vec::with_capacity(calls.len());
        for call in calls {
            let arguments = tools::parse_arguments(&call.arguments).ok();
            let job = match arguments {
                Some(arguments) if call.name == SCHEDULE && offers(&self.offered, SCHEDULE) => {
                    Some(match self.runtime.scheduling().get() {
                        Ok(service) => service.preview(&self.session, &arguments).await,
                        Err(why) => Err(why),
                    })
                }
                _ => None,
            };
            out.push(job);
        }
        out
    }

    fn new_card(&self, call: &ToolCall, why: &str, reason: &str, kind: CardKind) -> approvals::NewCard {
        let arguments = tools::parse_arguments(&call.arguments).unwrap_or_default();
        approvals::NewCard {
            id: CardId::generate(),
            kind,
            session_id: self.chat_id.clone(),
            turn_id: self.turn_id.clone(),
            call_id: CallId::new(call.id.clone()),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            arguments_hash: gate::arguments_hash(&call.name, &arguments),
            agent: self.agent.clone(),
            why: why.to_owned(),
            reason: reason.to_owned(),
            shows: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall { id: "call_1".into(), name: name.into(), arguments: arguments.into() }
    }

    fn card(state: CardState, arguments_hash: &str) -> approvals::Card {
        approvals::Card {
            id: "card_1".into(),
            kind: CardKind::Approval,
            session_id: "chat_1".into(),
            turn_id: "turn_1".into(),
            call_id: "call_1".into(),
            tool: "note_write".into(),
            arguments: "{}".into(),
            arguments_hash: arguments_hash.into(),
            agent: "assistant".into(),
            why: String::new(),
            reason: "note_write asks the person first".into(),
            state,
            answer: Some("Tuesday".into()),
            created_at: String::new(),
            decided_at: None,
            shows: None,
            decided_by: None,
        }
    }

    const GROUND: Ground<'static> =
        Ground { role: "member", may_approve: true, routed: false, outside_content: false, shared: &[], personal: &[] };

    fn judge(call: &ToolCall, card: Option<&approvals::Card>) -> Verdict {
        verdict(call, Some(true), false, false, card, &GROUND)
    }

    #[test]
    fn a_call_repeating_the_response_before_is_refused_unrun() {
        let refused = verdict(&call("note_write", "{}"), Some(true), false, true, None, &GROUND);
        assert_eq!(refused, Verdict::Refuse(REPEATED.to_owned()));
    }

    #[test]
    fn a_call_to_a_tool_not_offered_runs_only_to_return_its_error() {
        assert_eq!(verdict(&call("rm", "{}"), None, false, false, None, &GROUND), Verdict::Run);
        assert_eq!(judge(&call("note_write", "not json"), None), Verdict::Run);
    }

    #[test]
    fn a_call_no_rule_covers_asks_the_person_with_an_approval_card() {
        let Verdict::Ask { kind, .. } = judge(&call("note_write", "{}"), None) else { panic!("asks") };
        assert_eq!(kind, CardKind::Approval);
    }

    #[test]
    fn a_call_no_rule_covers_is_refused_for_a_role_that_may_not_approve() {
        let ground = Ground { may_approve: false, ..GROUND };
        assert!(matches!(
            verdict(&call("note_write", "{}"), Some(true), false, false, None, &ground),
            Verdict::Refuse(_)
        ));
    }

    #[test]
    fn a_declined_card_refuses_its_call() {
        assert_eq!(
            judge(&call("note_write", "{}"), Some(&card(CardState::Denied, ""))),
            Verdict::Refuse(DENIED.into())
        );
    }

    #[test]
    fn an_answered_question_becomes_the_calls_result() {
        let verdict = judge(&call(tools::CLARIFY, "{}"), Some(&card(CardState::Answered, "")));
        assert_eq!(verdict, Verdict::Answered("The person answered: Tuesday".into()));
    }

    #[test]
    fn a_pending_card_keeps_asking_with_its_reason() {
        let verdict = judge(&call("note_write", "{}"), Some(&card(CardState::Pending, "")));
        assert_eq!(
            verdict,
            Verdict::Ask { reason: "note_write asks the person first".into(), kind: CardKind::Approval }
        );
    }

    #[test]
    fn an_allowed_card_runs_its_call_while_the_arguments_are_those_approved() {
        let approved = gate::arguments_hash("note_write", &serde_json::json!({ "title": "a" }));
        let allowed = card(CardState::Allowed, &approved);
        assert_eq!(judge(&call("note_write", r#"{"title":"a"}"#), Some(&allowed)), Verdict::Run);
        let changed = judge(&call("note_write", r#"{"title":"b"}"#), Some(&allowed));
        assert_eq!(changed, Verdict::Refuse("Refused: these arguments are not the ones the person approved.".into()));
    }

    #[test]
    fn a_question_goes_to_the_person_as_a_question_card_even_for_a_role_that_may_not_approve() {
        let ground = Ground { may_approve: false, ..GROUND };
        let question = call(tools::CLARIFY, r#"{"question":"Which day?"}"#);
        let Verdict::Ask { kind, .. } = verdict(&question, Some(false), false, false, None, &ground) else {
            panic!("asks")
        };
        assert_eq!(kind, CardKind::Question);
    }
}
