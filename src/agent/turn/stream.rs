//! The one stream reader (§8.1): opens a model request, reads its deltas into a [`Reply`]
//! with a bound on every silence, retries as [`decide::after_attempt`] says, and shows the
//! text in the person's windows as it comes — or, for a compaction summary, does not.
//! Never decides what the reply means; the turn's driver does that.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use super::Turn;
use super::decide::{self, Attempt, End};
use crate::agent::events::LiveEvent;
use crate::ids::random_id;
use crate::providers::{self, ChatRequest, Delta, DeltaStream, ProviderError, ToolCall};

/// Whether the person's message is committed yet: the reply streams while it is.
/// The committed message's row id arrives through it; none when the commit failed.
pub(super) type Commit = Option<tokio::sync::oneshot::Receiver<Option<i64>>>;

/// What one model request produced.
#[derive(Default)]
pub(super) struct Reply {
    pub text: String,
    /// Tool calls by the index the provider gave them: (name, arguments). The provider's
    /// own call ids are dropped; some servers reuse them.
    pub calls: BTreeMap<usize, (String, String)>,
    pub usage: Option<(u64, u64)>,
    pub first_delta: Option<Duration>,
}

impl Reply {
    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.calls.is_empty()
    }

    /// Complete calls, in order, under ids of our own: providers reuse theirs.
    pub fn tool_calls(&self) -> Vec<ToolCall> {
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

    /// How much came back, in characters, for estimating tokens.
    pub fn chars(&self) -> usize {
        self.text.len() + self.calls.values().map(|(name, arguments)| name.len() + arguments.len()).sum::<usize>()
    }

    pub fn take(&mut self, delta: Delta, started: Instant) -> Option<String> {
        match delta {
            Delta::Text(text) => {
                self.first_delta.get_or_insert_with(|| started.elapsed());
                self.text.push_str(&text);
                return Some(text);
            }
            Delta::ToolCall { index, name, arguments, .. } => {
                self.first_delta.get_or_insert_with(|| started.elapsed());
                let call = self.calls.entry(index).or_default();
                // A name is one fragment, or pieces of one; llama-cpp-python's server sends
                // the whole name again with every fragment of the arguments.
                if let Some(name) = name
                    && call.0 != name
                {
                    call.0.push_str(&name);
                }
                call.1.push_str(&arguments);
            }
            Delta::Usage { input, output } => self.usage = Some(merge_usage(self.usage, input, output)),
            Delta::Finish(_) => {}
        }
        None
    }
}

/// Usage as some protocols report it, input and output in separate events.
fn merge_usage(seen: Option<(u64, u64)>, input: u64, output: u64) -> (u64, u64) {
    let (seen_in, seen_out) = seen.unwrap_or_default();
    (seen_in.max(input), seen_out.max(output))
}

/// Whether a reply's text goes to the person's windows as it streams.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Shown {
    Live,
    /// A summary for compaction: read whole, never shown.
    Hidden,
}

impl Turn {
    /// One model request, retried as the policy allows while nothing has streamed yet:
    /// the reply, how it ended, and how many attempts were sent (0: none was).
    pub(super) async fn request(&mut self, request: &ChatRequest, commit: &mut Commit) -> (Reply, End, u32) {
        let mut reply = Reply::default();
        let started = Instant::now();
        let (mut attempts, mut retries) = (0, 0);
        loop {
            attempts += 1;
            let opened = match self.open(request).await {
                None => return (reply, End::Stopped, attempts),
                Some(Ok(stream)) => Ok(self.read(stream, &mut reply, started, commit, Shown::Live).await),
                Some(Err(err)) => Err(err),
            };
            let policy = self.runtime.inner.limits.retry;
            match decide::after_attempt(opened, !reply.is_empty(), retries, &policy) {
                Attempt::Done(end) => return (reply, end, attempts),
                Attempt::Withheld(err) => return (reply, End::Failed(err), 0),
                Attempt::Retry { wait, failure } => {
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
        }
    }

    /// A summary request, sent once and read whole without showing it: the reply and how
    /// it ended; `None` when nothing was sent (withheld, or stopped before it went).
    pub(super) async fn summary(&mut self, request: &ChatRequest) -> Option<(Reply, End)> {
        let mut reply = Reply::default();
        let stream = match self.open(request).await? {
            Ok(stream) => stream,
            Err(ProviderError::Withheld(_)) => return None,
            Err(err) => return Some((reply, End::Failed(err))),
        };
        let end = self.read(stream, &mut reply, Instant::now(), &mut None, Shown::Hidden).await;
        Some((reply, end))
    }

    /// Sends a request and waits for its answer's head, bounded like any silence inside
    /// it; `None` when the person stopped the turn first.
    async fn open(&self, request: &ChatRequest) -> Option<Result<DeltaStream, ProviderError>> {
        let stall = self.runtime.inner.limits.stall;
        let send = providers::start(self.runtime.client(), &self.endpoint, request, self.role.privacy_tier);
        tokio::select! {
            biased;
            () = self.stop.cancelled() => None,
            opened = tokio::time::timeout(stall, send) => Some(opened.unwrap_or(Err(ProviderError::Stalled(stall)))),
        }
    }

    /// Reads a reply's stream to its end, forwarding text as it comes when `shown`. Only
    /// deltas with content count as progress: keep-alive lines do not hold a stalled
    /// stream open. If the person's message turns out not to be saved, the stream is
    /// dropped at once.
    ///
    /// Runs once per delta of every reply, so its waits are set up once: the stop's
    /// future is pinned for the whole read, and the silence timer is not moved at each
    /// delta — a delta only notes when it came, and the timer, when it fires, is set again
    /// from that moment if the stream was not silent for the whole `stall`.
    async fn read(
        &mut self,
        mut stream: DeltaStream,
        reply: &mut Reply,
        started: Instant,
        commit: &mut Commit,
        shown: Shown,
    ) -> End {
        let stall = self.runtime.inner.limits.stall;
        let stop = self.stop.clone();
        let stopped = stop.cancelled();
        tokio::pin!(stopped);
        let mut heard = tokio::time::Instant::now();
        let silence = tokio::time::sleep_until(heard + stall);
        tokio::pin!(silence);
        loop {
            let next = tokio::select! {
                biased;
                () = &mut stopped => return End::Stopped,
                saved = async { commit.as_mut().expect("guarded").await }, if commit.is_some() => {
                    *commit = None;
                    if !self.saved(saved.ok().flatten()) {
                        return End::NotSaved;
                    }
                    continue;
                }
                // Before the timer: a delta that is ready counts, however late.
                next = stream.next() => next,
                () = &mut silence => {
                    let due = heard + stall;
                    if tokio::time::Instant::now() >= due {
                        return End::Failed(ProviderError::Stalled(stall));
                    }
                    silence.as_mut().reset(due);
                    continue;
                }
            };
            let deltas = match next {
                None => return End::Finished,
                Some(Err(err)) => return End::Failed(err),
                Some(Ok(deltas)) => deltas,
            };
            if !deltas.is_empty() {
                heard = tokio::time::Instant::now();
            }
            // A reply already buffered is ready delta after delta: without the timer's
            // wait in each turn of the loop, this keeps the task's turns to tokio's budget
            // so it cannot starve the other tasks of its worker (new connections).
            tokio::task::consume_budget().await;
            for delta in deltas {
                if let Some(text) = reply.take(delta, started)
                    && shown == Shown::Live
                {
                    self.events.token(&text);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_reported_in_pieces_keeps_the_largest_of_each() {
        assert_eq!(merge_usage(None, 10, 0), (10, 0));
        assert_eq!(merge_usage(Some((10, 0)), 0, 7), (10, 7));
    }

    #[test]
    fn a_reply_gathers_text_and_calls_by_index_and_drops_nameless_ones() {
        let mut reply = Reply::default();
        let started = Instant::now();
        let piece = |index, name: Option<&str>, arguments: &str| Delta::ToolCall {
            index,
            id: None,
            name: name.map(str::to_owned),
            arguments: arguments.into(),
        };
        assert_eq!(reply.take(Delta::Text("Hi".into()), started), Some("Hi".into()));
        reply.take(piece(0, Some("current_time"), "{\"tz\":"), started);
        reply.take(piece(0, None, "\"UTC\"}"), started);
        reply.take(piece(1, None, "{}"), started);
        let calls = reply.tool_calls();
        assert_eq!(calls.len(), 1, "a call that never got its name is no call");
        assert_eq!((calls[0].name.as_str(), calls[0].arguments.as_str()), ("current_time", "{\"tz\":\"UTC\"}"));
        assert!(reply.first_delta.is_some() && !reply.is_empty());
    }

    /// What llama-cpp-python 0.3.36's server streams for a call it was asked for by name
    /// (`chatml-function-calling`): every fragment carries the call's id and whole name
    /// again, and the deltas without a call say `"tool_calls": null`.
    #[test]
    fn a_call_whose_name_every_fragment_repeats_is_one_call_of_that_name() {
        let captured = include_str!("../../providers/captured/llama-cpp-python-forced-call.sse");
        let mut reply = Reply::default();
        let started = Instant::now();
        let events = captured.split("\n\n").filter_map(|event| event.strip_prefix("data: "));
        for data in events.filter(|data| *data != "[DONE]") {
            for delta in crate::providers::openai::parse_chunk(data).unwrap() {
                reply.take(delta, started);
            }
        }
        let calls = reply.tool_calls();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!((calls[0].name.as_str(), calls[0].arguments.as_str()), ("current_time", "{ }"));
    }
}
