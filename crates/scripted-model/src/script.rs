//! The script: what a test says the model will answer, the queue of those answers, and the
//! protocol-neutral plan each request gets. Pure: no sockets, no clocks, no wire format —
//! the protocol modules encode a [`Plan`] and the server paces it.

use std::collections::VecDeque;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One scripted answer, as a test writes it in Rust or as JSON to `POST /_scripted/replies`.
/// Every field is optional; an empty reply streams nothing and finishes with "stop".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Reply {
    /// Assistant text to stream.
    pub text: Option<String>,
    /// Reasoning streamed before the text, cut the same way. Anthropic gets a `thinking`
    /// block (closed by a `signature_delta` of "sig"), Ollama `message.thinking`, and
    /// OpenAI `reasoning_content` (as llama.cpp, vLLM and DeepSeek send it).
    pub thinking: Option<String>,
    /// Instead of `text`: N deltas " tok0", " tok1", …, for benchmarks. Wins over `text`.
    pub tokens: Option<usize>,
    /// 0 splits text into words that keep their leading space ("Hello", " world");
    /// otherwise pieces of exactly this many characters.
    pub chunk_chars: usize,
    /// Pause between deltas.
    pub delay_ms: u64,
    /// Pause after the response headers, before the first delta.
    pub first_delay_ms: u64,
    /// Tool calls, streamed after the text, each call's deltas in turn (Ollama sends each
    /// call whole, as it does).
    pub tool_calls: Vec<ScriptedCall>,
    /// Answer with this HTTP error status and an error body (in the protocol's shape)
    /// instead of a completion.
    pub status: Option<u16>,
    /// `Retry-After` seconds sent with `status`.
    pub retry_after: Option<u64>,
    /// The error message sent with `status` (default: the status's reason phrase).
    pub message: Option<String>,
    /// How many requests in a row this reply answers (0 counts as 1).
    pub times: usize,
    /// Send the headers and the scripted deltas, then never finish: the stream stays open
    /// until the client goes away or the server shuts down.
    pub hang: bool,
    /// Default "stop", or "tool_calls" when there are tool calls, in OpenAI's words: the
    /// other protocols map "stop", "tool_calls" and "length" to theirs and send any other
    /// value as it is.
    pub finish_reason: Option<String>,
    /// Reported usage; default a rough estimate from the request (the protocol decides how).
    pub prompt_tokens: Option<u32>,
    /// Reported usage; default the number of deltas.
    pub completion_tokens: Option<u32>,
}

impl Default for Reply {
    fn default() -> Self {
        Self {
            text: None,
            thinking: None,
            tokens: None,
            chunk_chars: 0,
            delay_ms: 0,
            first_delay_ms: 0,
            tool_calls: Vec::new(),
            status: None,
            retry_after: None,
            message: None,
            times: 1,
            hang: false,
            finish_reason: None,
            prompt_tokens: None,
            completion_tokens: None,
        }
    }
}

impl Reply {
    /// A reply that streams `text`.
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: Some(text.into()), ..Self::default() }
    }

    /// A reply that fails with the HTTP `status`.
    pub fn status(status: u16) -> Self {
        Self { status: Some(status), ..Self::default() }
    }

    /// A reply that calls these tools.
    pub fn tool_calls(calls: impl IntoIterator<Item = ScriptedCall>) -> Self {
        Self { tool_calls: calls.into_iter().collect(), ..Self::default() }
    }

    /// What the server answers when the queue is empty, so it is useful unscripted.
    fn echo(last_user: &str) -> Self {
        Self::text(format!("You said: {last_user}"))
    }
}

/// One scripted tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// Default `call_<n>` (Anthropic: `toolu_<n>`; Ollama sends no id), with n counting up
    /// across the server's life so ids never repeat within a conversation.
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    /// A JSON value is sent compactly serialized; a JSON string is sent as-is, so a test
    /// can send malformed arguments. Where the protocol carries arguments as an object
    /// (Ollama, Anthropic's non-streamed `input`), a string that does not parse as JSON is
    /// sent as a JSON string.
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// Over how many deltas the arguments are spread (0 counts as 1).
    #[serde(default = "one")]
    pub split: usize,
}

impl ScriptedCall {
    /// A call with a default id, its arguments in one delta.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self { id: None, name: name.into(), arguments, split: 1 }
    }
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

fn one() -> usize {
    1
}

/// The queue of replies plus the counter behind default call ids.
#[derive(Debug, Default)]
pub(crate) struct Script {
    queue: VecDeque<(Reply, usize)>,
    calls_made: u64,
}

impl Script {
    pub(crate) fn push(&mut self, reply: Reply) {
        let times = reply.times.max(1);
        self.queue.push_back((reply, times));
    }

    pub(crate) fn clear(&mut self) {
        self.queue.clear();
    }

    /// Takes the next reply (or the echo of `last_user` when none is queued) and plans it.
    /// `prompt_estimate` is the protocol's guess at the prompt's token count.
    #[cfg(test)]
    pub(crate) fn answer(&mut self, last_user: &str, prompt_estimate: u32) -> Answer {
        self.answer_or(last_user, prompt_estimate, || None)
    }

    /// The same, but with nothing queued `unscripted` is asked first, and only when it has
    /// no reply does the echo answer.
    pub(crate) fn answer_or(
        &mut self,
        last_user: &str,
        prompt_estimate: u32,
        unscripted: impl FnOnce() -> Option<Reply>,
    ) -> Answer {
        let reply = match self.queue.pop_front() {
            Some((reply, left)) => {
                if left > 1 {
                    self.queue.push_front((reply.clone(), left - 1));
                }
                reply
            }
            None => unscripted().unwrap_or_else(|| Reply::echo(last_user)),
        };
        self.plan(reply, prompt_estimate)
    }

    fn plan(&mut self, reply: Reply, prompt_estimate: u32) -> Answer {
        if let Some(status) = reply.status {
            return Answer::Fail(Failure { status, message: reply.message, retry_after: reply.retry_after });
        }
        let text = match (reply.tokens, &reply.text) {
            (Some(n), _) => (0..n).map(|i| format!(" tok{i}")).collect(),
            (None, Some(text)) => split_text(text, reply.chunk_chars),
            (None, None) => Vec::new(),
        };
        let thinking = reply.thinking.as_deref().map(|text| split_text(text, reply.chunk_chars)).unwrap_or_default();
        let calls: Vec<Call> = reply
            .tool_calls
            .into_iter()
            .map(|call| {
                self.calls_made += 1;
                let arguments = match call.arguments {
                    Value::String(raw) => raw,
                    value => value.to_string(),
                };
                Call {
                    id: call.id,
                    serial: self.calls_made,
                    name: call.name,
                    pieces: split_even(&arguments, call.split.max(1)),
                    arguments,
                }
            })
            .collect();
        let default_finish = if calls.is_empty() { "stop" } else { "tool_calls" };
        let deltas = thinking.len() + text.len() + calls.iter().map(|call| call.pieces.len()).sum::<usize>();
        Answer::Complete(Plan {
            finish_reason: reply.finish_reason.unwrap_or_else(|| default_finish.to_owned()),
            prompt_tokens: reply.prompt_tokens.unwrap_or(prompt_estimate),
            completion_tokens: reply.completion_tokens.unwrap_or(u32::try_from(deltas).unwrap_or(u32::MAX)),
            first_delay: Duration::from_millis(reply.first_delay_ms),
            delay: Duration::from_millis(reply.delay_ms),
            hang: reply.hang,
            thinking,
            text,
            calls,
        })
    }
}

/// What the answer depends on in a chat request, whichever protocol it came in; each
/// protocol module reads its own body into one.
#[derive(Debug, PartialEq)]
pub(crate) struct Request {
    pub model: String,
    pub stream: bool,
    /// OpenAI's `stream_options.include_usage`; the other protocols always report usage.
    pub include_usage: bool,
    /// The text of the last user message, for the echo reply.
    pub last_user: String,
    /// A rough prompt token count: the prompt's characters / 4.
    pub prompt_estimate: u32,
}

impl Request {
    /// The estimate for a prompt of `chars` characters.
    pub(crate) fn estimate(chars: usize) -> u32 {
        u32::try_from(chars.div_ceil(4)).unwrap_or(u32::MAX)
    }
}

/// What one request gets.
#[derive(Debug, PartialEq)]
pub(crate) enum Answer {
    Fail(Failure),
    Complete(Plan),
}

#[derive(Debug, PartialEq)]
pub(crate) struct Failure {
    pub status: u16,
    pub message: Option<String>,
    pub retry_after: Option<u64>,
}

/// A successful answer, already cut into the deltas it streams as.
#[derive(Debug, PartialEq)]
pub(crate) struct Plan {
    /// The reasoning's pieces, one per delta, streamed before the text.
    pub thinking: Vec<String>,
    /// The text's pieces, one per delta.
    pub text: Vec<String>,
    pub calls: Vec<Call>,
    pub finish_reason: String,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub first_delay: Duration,
    pub delay: Duration,
    pub hang: bool,
}

impl Plan {
    /// The whole text, for answers that are not streamed.
    pub(crate) fn full_text(&self) -> String {
        self.text.concat()
    }

    /// The whole reasoning, for answers that are not streamed.
    pub(crate) fn full_thinking(&self) -> Option<String> {
        (!self.thinking.is_empty()).then(|| self.thinking.concat())
    }

    /// Every delta in streaming order: the reasoning, the text, then each call's argument
    /// pieces.
    pub(crate) fn deltas(&self) -> impl Iterator<Item = Delta<'_>> {
        let thinking = self.thinking.iter().map(|piece| Delta::Thinking(piece));
        let text = self.text.iter().map(|piece| Delta::Text(piece));
        let calls = self.calls.iter().enumerate().flat_map(|(index, call)| {
            call.pieces.iter().enumerate().map(move |(n, arguments)| Delta::Call {
                index,
                start: (n == 0).then_some(call),
                arguments,
            })
        });
        thinking.chain(text).chain(calls)
    }

    /// How long answering takes when its deltas are spread by the reply's delays: the
    /// first delay, then a delay between each two deltas.
    pub(crate) fn duration(&self) -> Duration {
        let gaps = u32::try_from(self.deltas().count().saturating_sub(1)).unwrap_or(u32::MAX);
        self.first_delay.saturating_add(self.delay.saturating_mul(gaps))
    }
}

#[derive(Debug, PartialEq)]
pub(crate) struct Call {
    /// The scripted id; see [`Call::id`].
    pub id: Option<String>,
    /// Which call of the server's life this is, counting from 1.
    pub serial: u64,
    pub name: String,
    pub arguments: String,
    /// `arguments` cut into the fragments the deltas carry; never empty.
    pub pieces: Vec<String>,
}

impl Call {
    /// The scripted id, or `<prefix><serial>`: each protocol has its own look of id.
    pub(crate) fn id(&self, prefix: &str) -> String {
        self.id.clone().unwrap_or_else(|| format!("{prefix}{}", self.serial))
    }

    /// The arguments as a JSON value, for protocols that send an object: parsed, or when
    /// they are not JSON (a malformed-input test) the raw text as a JSON string.
    pub(crate) fn arguments_value(&self) -> Value {
        serde_json::from_str(&self.arguments).unwrap_or_else(|_| Value::String(self.arguments.clone()))
    }
}

/// One streamed increment.
#[derive(Debug, PartialEq)]
pub(crate) enum Delta<'a> {
    Thinking(&'a str),
    Text(&'a str),
    /// A fragment of call `index`'s arguments; the call's first delta also starts it.
    Call {
        index: usize,
        start: Option<&'a Call>,
        arguments: &'a str,
    },
}

/// An encoded streamed answer: the server sends the `head` (what a protocol says before any
/// content, like Anthropic's `message_start`) at once, spreads the `paced` frames by the
/// reply's delays, and sends the `tail` (finish, usage, end marker) at once. A hanging
/// answer has no tail. A frame may hold several events; it goes out as one body chunk.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Frames {
    pub head: Vec<String>,
    pub paced: Vec<String>,
    pub tail: Vec<String>,
}

/// Cuts `text` into words that keep their leading whitespace, or into `chunk_chars`-long
/// pieces (counted in chars, so a multi-byte character is never split).
fn split_text(text: &str, chunk_chars: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut piece = String::new();
    let mut piece_chars = 0;
    let mut previous_was_space = true;
    for c in text.chars() {
        let boundary =
            if chunk_chars == 0 { c.is_whitespace() && !previous_was_space } else { piece_chars == chunk_chars };
        if boundary && !piece.is_empty() {
            pieces.push(std::mem::take(&mut piece));
            piece_chars = 0;
        }
        previous_was_space = c.is_whitespace();
        piece.push(c);
        piece_chars += 1;
    }
    if !piece.is_empty() {
        pieces.push(piece);
    }
    pieces
}

/// Cuts `text` into exactly `parts` pieces of near-equal char counts (some may be empty).
fn split_even(text: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let (base, extra) = (chars.len() / parts, chars.len() % parts);
    let mut start = 0;
    (0..parts)
        .map(|i| {
            let len = base + usize::from(i < extra);
            let piece = chars[start..start + len].iter().collect();
            start += len;
            piece
        })
        .collect()
}

/// The plan a lone reply makes, for the protocol modules' tests.
#[cfg(test)]
pub(crate) fn plan(reply: Reply) -> Plan {
    let mut script = Script::default();
    script.push(reply);
    match script.answer("", 3) {
        Answer::Complete(plan) => plan,
        Answer::Fail(failure) => panic!("unexpected failure {failure:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(script: &mut Script) -> Plan {
        match script.answer("hi", 7) {
            Answer::Complete(plan) => plan,
            Answer::Fail(failure) => panic!("unexpected failure {failure:?}"),
        }
    }

    #[test]
    fn words_keep_their_leading_whitespace() {
        assert_eq!(split_text("Hello world  again\nnow", 0), ["Hello", " world", "  again", "\nnow"]);
        assert_eq!(split_text(" lead", 0), [" lead"]);
    }

    #[test]
    fn fixed_chunks_count_chars_not_bytes() {
        assert_eq!(split_text("héllo wörld", 4), ["héll", "o wö", "rld"]);
    }

    #[test]
    fn arguments_split_into_exactly_the_asked_number_of_pieces() {
        assert_eq!(split_even("abcdefg", 3), ["abc", "de", "fg"]);
        assert_eq!(split_even("ab", 3), ["a", "b", ""]);
    }

    #[test]
    fn an_empty_queue_echoes_the_last_user_message() {
        let plan = plan(&mut Script::default());
        assert_eq!(plan.full_text(), "You said: hi");
        assert_eq!((plan.finish_reason.as_str(), plan.prompt_tokens, plan.completion_tokens), ("stop", 7, 3));
    }

    #[test]
    fn a_reply_with_times_answers_that_many_requests() {
        let mut script = Script::default();
        script.push(Reply { times: 2, ..Reply::status(429) });
        script.push(Reply::text("ok"));
        assert!(matches!(script.answer("", 0), Answer::Fail(Failure { status: 429, .. })));
        assert!(matches!(script.answer("", 0), Answer::Fail(Failure { status: 429, .. })));
        assert_eq!(plan(&mut script).full_text(), "ok");
        assert_eq!(plan(&mut script).full_text(), "You said: hi");
    }

    #[test]
    fn tool_calls_get_fresh_default_ids_and_finish_with_tool_calls() {
        let mut script = Script::default();
        let call = ScriptedCall { split: 2, ..ScriptedCall::new("read", json!({"path": "a"})) };
        script.push(Reply::tool_calls([call.clone(), ScriptedCall::new("raw", json!("{oops"))]));
        script.push(Reply::tool_calls([call]));
        let first = plan(&mut script);
        assert_eq!(first.finish_reason, "tool_calls");
        assert_eq!(first.calls[0].arguments, r#"{"path":"a"}"#);
        assert_eq!(first.calls[0].pieces.concat(), first.calls[0].arguments);
        assert_eq!(first.calls[1].arguments, "{oops");
        assert_eq!(first.deltas().count(), 3);
        assert_eq!(first.calls[1].arguments_value(), json!("{oops"));
        assert_eq!(plan(&mut script).calls[0].id("call_"), "call_3");
    }

    #[test]
    fn thinking_streams_first_and_counts_as_deltas() {
        let mut script = Script::default();
        script.push(Reply { thinking: Some("hm ok".into()), ..Reply::text("yes") });
        let plan = plan(&mut script);
        let deltas: Vec<Delta<'_>> = plan.deltas().collect();
        assert_eq!(deltas, [Delta::Thinking("hm"), Delta::Thinking(" ok"), Delta::Text("yes")]);
        assert_eq!((plan.full_thinking().as_deref(), plan.completion_tokens), (Some("hm ok"), 3));
    }

    #[test]
    fn with_nothing_queued_the_unscripted_answer_comes_before_the_echo() {
        let mut script = Script::default();
        script.push(Reply::text("queued"));
        let answer = |script: &mut Script, reply: Option<Reply>| match script.answer_or("hi", 0, || reply) {
            Answer::Complete(plan) => plan.full_text(),
            Answer::Fail(failure) => panic!("unexpected failure {failure:?}"),
        };
        assert_eq!(answer(&mut script, Some(Reply::text("made"))), "queued", "the queue goes first");
        assert_eq!(answer(&mut script, Some(Reply::text("made"))), "made");
        assert_eq!(answer(&mut script, None), "You said: hi", "no answer made: the echo");
    }

    #[test]
    fn reply_json_rejects_unknown_fields() {
        assert!(serde_json::from_value::<Reply>(json!({"txt": "typo"})).is_err());
        let reply: Reply = serde_json::from_value(json!({"status": 429, "times": 4})).unwrap();
        assert_eq!(reply, Reply { times: 4, ..Reply::status(429) });
    }
}
