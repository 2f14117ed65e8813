//! The turn's choices (§8.1), as data: after each attempt, reply, batch of calls and round,
//! what the turn does next. The driver in [`super`] carries them out — it streams, stores
//! and emits; nothing here does. Pure: no IO, no clock, no randomness, so every
//! transition is tested below without a server.

use std::time::Duration;

use crate::agent::events::Failure;
use crate::agent::{gate, tools};
use crate::providers::retry::RetryPolicy;
use crate::providers::{ProviderError, ToolCall};
use crate::store::chat::TurnState;

/// How one model request's stream ended.
#[derive(Debug)]
pub(crate) enum End {
    Finished,
    Stopped,
    Failed(ProviderError),
    /// The person's message could not be committed: nothing of this turn may be written.
    NotSaved,
}

/// How a turn or frame ends, or parks: its state, what was said last, and why it failed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Closing {
    pub state: TurnState,
    pub text: String,
    pub error: Option<Failure>,
}

impl Closing {
    pub fn done(text: String) -> Self {
        Self { state: TurnState::Done, text, error: None }
    }

    pub fn stopped(text: String) -> Self {
        Self { state: TurnState::Stopped, text, error: None }
    }

    /// Waiting on cards: nothing is said yet.
    pub fn parked() -> Self {
        Self { state: TurnState::Parked, text: String::new(), error: None }
    }

    pub fn failed(text: String, code: &str, message: impl Into<String>) -> Self {
        Self { state: TurnState::Error, text, error: Some(Failure::new(code, message)) }
    }
}

/// What the turn does next.
#[derive(Debug, PartialEq)]
pub(crate) enum Step {
    /// Another round: a model request with what the context holds now.
    Next,
    /// Run the calls the model asked for, with what it said beside them.
    Run { text: String, calls: Vec<ToolCall> },
    /// Switch to the fallback model and redo the round, which counts no step; if the
    /// fallback cannot be used after all, close `otherwise`.
    Fallback { otherwise: Closing },
    /// The person's message was never committed: the turn writes nothing and just ends.
    Abandon,
    /// The turn ends, or parks, so.
    Close(Closing),
}

/// A reply as the decision needs it.
pub(crate) struct Replied {
    pub end: End,
    pub text: String,
    /// Its complete calls, under ids of our own.
    pub calls: Vec<ToolCall>,
    /// Nothing at all came back: no text and no call, not even a partial one.
    pub empty: bool,
}

/// The step after a model's reply: `saved` is whether the person's message is committed,
/// `fallback` whether another provider's model waits, `provider` names the one that
/// answered in the advice a failure gives.
pub(crate) fn after_reply(saved: bool, reply: Replied, fallback: bool, repeats: &mut Repeats, provider: &str) -> Step {
    if !saved || matches!(reply.end, End::NotSaved) {
        return Step::Abandon;
    }
    match reply.end {
        End::Stopped => Step::Close(Closing::stopped(reply.text)),
        End::Failed(err) => {
            let otherwise = Closing::failed(reply.text, err.code(), err.advice(provider));
            // Only an outage with nothing shown yet moves to the fallback: a partial reply
            // stays the reply, and a refusal would be refused there too.
            if fallback && reply.empty && err.is_outage() {
                Step::Fallback { otherwise }
            } else {
                Step::Close(otherwise)
            }
        }
        End::NotSaved => Step::Abandon,
        End::Finished if reply.calls.is_empty() => Step::Close(Closing::done(reply.text)),
        End::Finished if repeats.check(&reply.calls) == Repetition::Stuck => {
            let names: Vec<&str> = reply.calls.iter().map(|c| c.name.as_str()).collect();
            let message = format!(
                "The model kept making the same call ({}) with the same arguments, so it was stopped. Try asking \
                 another way, or pick another model.",
                names.join(", ")
            );
            Step::Close(Closing::failed(reply.text, "repeated_call", message))
        }
        End::Finished => Step::Run { text: reply.text, calls: reply.calls },
    }
}

/// How a response's calls came out.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Settled {
    Ran,
    /// Cards wait on the person.
    Parked,
    /// The person stopped the turn before any card was written.
    Stopped,
}

/// The step after a response's calls: the next round, unless they parked the turn or the
/// person stopped it meanwhile.
pub(crate) fn after_calls(settled: Settled, stopped: bool) -> Step {
    match settled {
        Settled::Parked => Step::Close(Closing::parked()),
        Settled::Stopped => Step::Close(Closing::stopped(String::new())),
        Settled::Ran if stopped => Step::Close(Closing::stopped(String::new())),
        Settled::Ran => Step::Next,
    }
}

/// How a turn that used all its rounds ends.
pub(crate) fn out_of_steps(max_rounds: usize) -> Closing {
    let message = format!("The assistant took {max_rounds} steps without finishing, so it was stopped.");
    Closing::failed(String::new(), "step_limit", message)
}

/// Whether a round's request is first shortened by a summary (§8.6): once a turn, when
/// its estimate exceeds the model's budget.
pub(crate) fn compacts(tried: bool, estimate: i64, budget: i64) -> bool {
    !tried && estimate > budget
}

/// What one attempt at a model request leads to.
#[derive(Debug)]
pub(crate) enum Attempt {
    /// The request is over, so.
    Done(End),
    /// Skald refused to send it (§16): nothing left the machine, nothing to record.
    Withheld(ProviderError),
    /// Tried again after `wait`, with the window told why.
    Retry { wait: Duration, failure: ProviderError },
}

/// The next move after an attempt: `opened` is the stream's end, or why it did not open;
/// `streamed` whether anything of the reply arrived; `retries` how many came before.
/// Only a failure before anything streamed is retried, as far as the policy allows.
pub(crate) fn after_attempt(
    opened: Result<End, ProviderError>,
    streamed: bool,
    retries: u32,
    policy: &RetryPolicy,
) -> Attempt {
    let failure = match opened {
        Ok(End::Failed(err)) if !streamed => err,
        Ok(end) => return Attempt::Done(end),
        Err(err @ ProviderError::Withheld(_)) => return Attempt::Withheld(err),
        Err(err) => err,
    };
    match policy.next_wait(retries, &failure) {
        Some(wait) => Attempt::Retry { wait, failure },
        None => Attempt::Done(End::Failed(failure)),
    }
}

/// How the rounds came out, as the turn closes them: `None` when nothing may be written
/// (the message was never saved), else the closing — a storage failure becomes one too.
pub(crate) fn turn_closing(rounds: Result<Option<Closing>, String>) -> Option<Closing> {
    match rounds {
        Ok(closing) => closing,
        Err(err) => Some(Closing::failed(String::new(), "storage", format!("Skald could not save this reply: {err}"))),
    }
}

/// How a frame's rounds came out, as the frame closes them: a frame always closes.
pub(crate) fn frame_closing(rounds: Result<Option<Closing>, String>) -> Closing {
    match rounds {
        Ok(Some(closing)) => closing,
        Ok(None) => Closing { state: TurnState::Error, text: String::new(), error: None },
        Err(err) => Closing::failed(String::new(), "storage", format!("Skald could not save this agent's work: {err}")),
    }
}

/// What re-reading the person's role before a further round found, each with the words
/// the person is told.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Recheck {
    /// They can no longer use Skald (deactivated, or their role is gone).
    Inactive(String),
    /// A change around them they have not seen yet holds the turn, as it holds the next.
    Held(String),
    /// Their daily cap is reached.
    OverCap(String),
    /// Nothing stops the next round.
    Clear,
}

/// Whether the turn goes on after the role was read again: a closing when it may not,
/// with the code the page and the record show.
pub(super) fn after_recheck(found: Recheck) -> Option<Closing> {
    let (code, why) = match found {
        Recheck::Clear => return None,
        Recheck::Inactive(why) => ("inactive", why),
        Recheck::Held(why) => ("held", why),
        Recheck::OverCap(why) => ("usage_cap", why),
    };
    Some(Closing::failed(String::new(), code, why))
}

/// What a model asks for again and again: the calls of its last response, and whether the
/// current response repeats them exactly. Small local models fall into such loops.
#[derive(Debug, Default)]
pub(crate) struct Repeats {
    last: Vec<String>,
    /// Calls of the current response refused, unrun, as repeats.
    refusing: Vec<String>,
    /// Responses in a row that repeated the one before.
    strikes: u32,
}

/// What a response's calls are, against the response before.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Repetition {
    New,
    /// The very calls of the response before: refused once, with a word to the model.
    Again,
    /// Again, after being told: the turn ends.
    Stuck,
}

impl Repeats {
    pub fn check(&mut self, calls: &[ToolCall]) -> Repetition {
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

    /// Whether a call of the current response is refused as a repeat.
    pub fn refuses(&self, call_id: &str) -> bool {
        self.refusing.iter().any(|id| id == call_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_made_inactive_mid_turn_ends_it_before_the_next_round() {
        let closing = after_recheck(Recheck::Inactive("your account is deactivated".into())).unwrap();
        assert_eq!((closing.state, closing.error.map(|e| e.code)), (TurnState::Error, Some("inactive".into())));
    }

    #[test]
    fn a_change_made_while_the_turn_runs_holds_it_before_its_next_request() {
        let closing = after_recheck(Recheck::Held("1 change waits for you".into())).unwrap();
        assert_eq!(closing.error.map(|e| (e.code, e.message)), Some(("held".into(), "1 change waits for you".into())));
    }

    #[test]
    fn a_daily_cap_reached_mid_turn_ends_it_with_the_cap() {
        let closing = after_recheck(Recheck::OverCap("the cap is reached".into())).unwrap();
        assert_eq!(closing.error.map(|e| e.code), Some("usage_cap".into()));
    }

    #[test]
    fn a_role_that_still_allows_the_turn_lets_it_go_on() {
        assert_eq!(after_recheck(Recheck::Clear), None);
    }

    fn call(id: &str, arguments: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "current_time".into(), arguments: arguments.into() }
    }

    fn finished(text: &str, calls: Vec<ToolCall>) -> Replied {
        Replied { end: End::Finished, text: text.into(), empty: text.is_empty() && calls.is_empty(), calls }
    }

    fn failed(err: ProviderError, text: &str) -> Replied {
        Replied { end: End::Failed(err), text: text.into(), calls: Vec::new(), empty: text.is_empty() }
    }

    fn outage() -> ProviderError {
        ProviderError::Unavailable { status: Some(503), retry_after: None, message: "down".into() }
    }

    fn decide(reply: Replied, fallback: bool) -> Step {
        after_reply(true, reply, fallback, &mut Repeats::default(), "Example")
    }

    #[test]
    fn a_reply_without_calls_ends_the_turn_done_with_its_text() {
        assert_eq!(decide(finished("Hello.", Vec::new()), true), Step::Close(Closing::done("Hello.".into())));
    }

    #[test]
    fn a_reply_with_tool_calls_runs_them_next() {
        let calls = vec![call("c1", "{}")];
        assert_eq!(
            decide(finished("Let me look.", calls.clone()), false),
            Step::Run { text: "Let me look.".into(), calls }
        );
    }

    #[test]
    fn a_stopped_reply_ends_the_turn_stopped_keeping_what_streamed() {
        let reply = Replied { end: End::Stopped, text: "Half".into(), calls: Vec::new(), empty: false };
        assert_eq!(decide(reply, true), Step::Close(Closing::stopped("Half".into())));
    }

    #[test]
    fn a_failed_reply_ends_the_turn_in_error_with_the_providers_advice() {
        let err = ProviderError::Auth { status: 401, message: "no".into() };
        let (code, advice) = (err.code(), err.advice("Example"));
        assert_eq!(decide(failed(err, ""), true), Step::Close(Closing::failed(String::new(), code, advice)));
    }

    #[test]
    fn an_outage_before_anything_streamed_switches_to_the_fallback_model() {
        let err = outage();
        let otherwise = Closing::failed(String::new(), err.code(), err.advice("Example"));
        assert_eq!(decide(failed(err, ""), true), Step::Fallback { otherwise });
    }

    #[test]
    fn an_outage_without_a_fallback_ends_the_turn_in_error() {
        assert!(matches!(decide(failed(outage(), ""), false), Step::Close(Closing { state: TurnState::Error, .. })));
    }

    #[test]
    fn an_outage_after_part_of_the_reply_streamed_keeps_that_reply_and_ends() {
        let step = decide(failed(outage(), "Part of"), true);
        assert!(matches!(step, Step::Close(Closing { state: TurnState::Error, ref text, .. }) if text == "Part of"));
    }

    #[test]
    fn a_reply_whose_message_was_never_saved_abandons_the_turn() {
        let mut repeats = Repeats::default();
        assert_eq!(after_reply(false, finished("Hi", Vec::new()), true, &mut repeats, "Example"), Step::Abandon);
        let reply = Replied { end: End::NotSaved, text: String::new(), calls: Vec::new(), empty: true };
        assert_eq!(after_reply(true, reply, true, &mut repeats, "Example"), Step::Abandon);
    }

    #[test]
    fn the_same_calls_a_second_time_run_refused_and_a_third_time_end_the_turn() {
        let mut repeats = Repeats::default();
        let mut again = |id: &str| {
            let reply = finished("", vec![call(id, r#"{"timezone":"UTC"}"#)]);
            after_reply(true, reply, false, &mut repeats, "Example")
        };
        assert!(matches!(again("c1"), Step::Run { .. }), "a first call runs");
        assert!(matches!(again("c2"), Step::Run { .. }), "a repeat still goes to the calls, to be refused there");
        let Step::Close(closing) = again("c3") else { panic!("a third repeat ends the turn") };
        assert_eq!(closing.error.map(|e| e.code), Some("repeated_call".to_owned()));
    }

    #[test]
    fn a_repeated_call_is_refused_once_and_new_arguments_clear_the_strikes() {
        let mut repeats = Repeats::default();
        assert_eq!(repeats.check(&[call("c1", r#"{"a":1}"#)]), Repetition::New);
        assert_eq!(repeats.check(&[call("c2", r#"{"a":1}"#)]), Repetition::Again);
        assert!(repeats.refuses("c2") && !repeats.refuses("c1"));
        assert_eq!(repeats.check(&[call("c3", r#"{"a":2}"#)]), Repetition::New);
        assert!(!repeats.refuses("c3"), "new arguments run");
        assert_eq!(repeats.check(&[call("c4", r#"{"a":2}"#)]), Repetition::Again);
        assert_eq!(repeats.check(&[call("c5", r#"{"a":2}"#)]), Repetition::Stuck);
    }

    #[test]
    fn calls_that_ran_lead_to_the_next_round() {
        assert_eq!(after_calls(Settled::Ran, false), Step::Next);
    }

    #[test]
    fn calls_that_need_a_person_park_the_turn() {
        assert_eq!(after_calls(Settled::Parked, false), Step::Close(Closing::parked()));
        assert_eq!(after_calls(Settled::Parked, true), Step::Close(Closing::parked()), "the cards are written");
    }

    #[test]
    fn a_stop_while_the_calls_ran_ends_the_turn_stopped() {
        assert_eq!(after_calls(Settled::Ran, true), Step::Close(Closing::stopped(String::new())));
        assert_eq!(after_calls(Settled::Stopped, true), Step::Close(Closing::stopped(String::new())));
    }

    #[test]
    fn a_turn_out_of_rounds_ends_at_the_step_limit() {
        let closing = out_of_steps(8);
        assert_eq!(closing.state, TurnState::Error);
        assert_eq!(
            closing.error,
            Some(Failure::new("step_limit", "The assistant took 8 steps without finishing, so it was stopped."))
        );
    }

    #[test]
    fn a_request_over_budget_is_compacted_once_a_turn() {
        assert!(compacts(false, 101, 100));
        assert!(!compacts(false, 100, 100), "one that fits goes as it is");
        assert!(!compacts(true, 500, 100), "a turn tries it once");
    }

    #[test]
    fn an_outage_before_anything_streamed_is_retried_while_the_policy_allows() {
        let policy = RetryPolicy { max_retries: 2, base: Duration::from_millis(10), max_wait: Duration::from_secs(1) };
        let Attempt::Retry { wait, .. } = after_attempt(Err(outage()), false, 0, &policy) else { panic!("retried") };
        assert_eq!(wait, Duration::from_millis(10));
        let Attempt::Retry { wait, .. } = after_attempt(Ok(End::Failed(outage())), false, 1, &policy) else {
            panic!("a stream that failed before any delta is retried too")
        };
        assert_eq!(wait, Duration::from_millis(20), "each wait doubles");
        assert!(matches!(after_attempt(Err(outage()), false, 2, &policy), Attempt::Done(End::Failed(_))));
    }

    #[test]
    fn a_failure_after_part_of_the_reply_streamed_is_not_retried() {
        let policy = RetryPolicy::default();
        assert!(matches!(after_attempt(Ok(End::Failed(outage())), true, 0, &policy), Attempt::Done(End::Failed(_))));
    }

    #[test]
    fn a_refused_key_is_not_retried() {
        let err = ProviderError::Auth { status: 401, message: "no".into() };
        assert!(matches!(after_attempt(Err(err), false, 0, &RetryPolicy::default()), Attempt::Done(End::Failed(_))));
    }

    #[test]
    fn a_withheld_request_is_no_attempt_at_all() {
        let err = ProviderError::Withheld("local only".into());
        assert!(matches!(after_attempt(Err(err), false, 0, &RetryPolicy::default()), Attempt::Withheld(_)));
    }

    #[test]
    fn a_finished_or_stopped_stream_ends_the_request() {
        let policy = RetryPolicy::default();
        assert!(matches!(after_attempt(Ok(End::Finished), true, 0, &policy), Attempt::Done(End::Finished)));
        assert!(matches!(after_attempt(Ok(End::Stopped), false, 0, &policy), Attempt::Done(End::Stopped)));
    }

    #[test]
    fn a_turn_whose_progress_could_not_be_saved_closes_in_error() {
        let closing = turn_closing(Err("disk full".into())).unwrap();
        assert_eq!(closing.error, Some(Failure::new("storage", "Skald could not save this reply: disk full")));
        assert_eq!(turn_closing(Ok(None)), None, "an unsaved message leaves nothing to close");
        assert_eq!(turn_closing(Ok(Some(Closing::parked()))), Some(Closing::parked()));
    }

    #[test]
    fn a_frame_always_closes_even_when_its_rounds_could_not() {
        assert_eq!(frame_closing(Ok(None)).state, TurnState::Error);
        let failed = frame_closing(Err("disk full".into()));
        assert_eq!(failed.error.map(|e| e.message), Some("Skald could not save this agent's work: disk full".into()));
        assert_eq!(frame_closing(Ok(Some(Closing::done("ok".into())))), Closing::done("ok".into()));
    }
}
