//! Entry points for the micro-benchmarks in `benches/micro.rs` (compiled only with the
//! `benchmarks` feature; no build that ships has this module). Each case builds an input
//! shaped and sized like real use and hands it to the product's own pure function:
//! context composition, the gate, the small model's tool-call parser and the privacy
//! classifier. Nothing here decides anything itself.

use serde_json::{Value, json};

use crate::agent::compaction;
use crate::agent::context::{self, Rows};
use crate::agent::gate::{self, Decision, Situation};
use crate::agent::memory::recall_lines;
use crate::agent::tools::Registry;
use crate::agent::tools::web_fetch::FetchPolicy;
use crate::ids::{CallId, FrameId, MemoryId, TurnId, UserId};
use crate::providers::local::tool_calls::{self, Parsed};
use crate::providers::privacy::{self, Tier};
use crate::providers::{ContextMessage, ToolCall, ToolSpec};
use crate::rules::{ArgsPattern, Effect, Rule};
use crate::store::chat::{Message, MessageRole, MessageStatus};
use crate::store::memories::{Author, Memory, Pool, Subject};
use crate::store::providers::ProviderKind;

// ---- made-up prose ----------------------------------------------------------------------

/// Words the made-up messages are made of: plain English of everyday errands.
const WORDS: [&str; 48] = [
    "the",
    "a",
    "tomorrow",
    "morning",
    "appointment",
    "doctor",
    "train",
    "ticket",
    "price",
    "recipe",
    "oven",
    "minutes",
    "garden",
    "tomatoes",
    "water",
    "weekend",
    "weather",
    "forecast",
    "rain",
    "invoice",
    "insurance",
    "letter",
    "deadline",
    "school",
    "report",
    "meeting",
    "library",
    "book",
    "return",
    "bicycle",
    "repair",
    "shop",
    "opening",
    "hours",
    "birthday",
    "present",
    "budget",
    "electricity",
    "bill",
    "heating",
    "window",
    "neighbour",
    "parcel",
    "delivery",
    "holiday",
    "flight",
    "hotel",
    "booking",
];

/// A seeded xorshift: the same prose every run, so every run measures the same input.
struct Prose(u64);

impl Prose {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Sentences of 8 to 19 words up to about `chars` characters.
    fn text(&mut self, chars: usize) -> String {
        let mut out = String::with_capacity(chars + 120);
        while out.len() < chars {
            let words = 8 + (self.next() % 12) as usize;
            for at in 0..words {
                let word = WORDS[(self.next() % WORDS.len() as u64) as usize];
                if at == 0 {
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    let mut letters = word.chars();
                    out.extend(letters.next().map(|c| c.to_ascii_uppercase()));
                    out.push_str(letters.as_str());
                } else {
                    out.push(' ');
                    out.push_str(word);
                }
            }
            out.push('.');
        }
        out
    }

    /// Sentences up to between `least` and `least + more` characters.
    fn text_between(&mut self, least: usize, more: usize) -> String {
        let chars = least + (self.next() % more as u64) as usize;
        self.text(chars)
    }
}

// ---- context composition ----------------------------------------------------------------

/// A common context window: what Ollama reports for most models.
const CONTEXT_WINDOW: i64 = 32_768;

/// A conversation as a turn's start reads it: the agent's prompt, the summary standing in
/// for the older rows once it has been compacted, and the rows after that summary.
pub struct Conversation {
    prompt: String,
    summary: Option<String>,
    rows: Vec<Message>,
    messages: usize,
}

impl Conversation {
    /// A conversation of `messages` rows read whole, as a model with room for all of it
    /// reads it: turns of a person's message, the memories recalled for it (a `recall`
    /// call and its result), now and then a round of tool calls with their results (a
    /// fetched page, a note search) or a sub-agent's frame, and the reply.
    pub fn whole(messages: usize) -> Self {
        let prompt = context::prompt_for(
            "0123456789abcdef0123456789abcdef",
            &Prose(0x5eed).text(1_800), // an agent's AGENT.md
        );
        Self { prompt, summary: None, rows: history(messages), messages }
    }

    /// The same conversation as a turn reads it once compaction has run with a 32,768-token
    /// window: a summary for the older turns, and the rows compaction kept after it.
    pub fn compacted(messages: usize) -> Self {
        let mut conversation = Self::whole(messages);
        let mut own = conversation.rows.clone();
        own.retain(|m| m.frame_id.is_none());
        let keep = compaction::budget(CONTEXT_WINDOW) / 2;
        if let Some(upto) = compaction::cut(&own, keep) {
            conversation.rows.retain(|m| m.id > upto);
            conversation.summary = Some(Prose(0x50_11_a4).text(2_400));
        }
        conversation
    }

    /// The rows the conversation holds.
    pub fn messages(&self) -> usize {
        self.messages
    }

    /// The rows composition reads: all of them, or those after the summary.
    pub fn rows_read(&self) -> usize {
        self.rows.len()
    }

    /// What the model reads (`agent::context::compose_context`, as a turn's start calls it).
    pub fn compose(&self) -> Vec<ContextMessage> {
        context::compose_context(&self.prompt, self.summary.as_deref(), &self.rows, Rows::Conversation)
    }
}

/// `messages` rows of a conversation, oldest first.
fn history(messages: usize) -> Vec<Message> {
    let mut prose = Prose(0x1234_5678_9abc_def1);
    let mut rows: Vec<Message> = Vec::with_capacity(messages + 8);
    let memories = memories(&mut prose);
    let mut turn = 0;
    while rows.len() < messages {
        let turn_id = TurnId::new(format!("turn_{turn:024}"));
        let push = |rows: &mut Vec<Message>, role, text: String, frame: Option<&str>| {
            let id = rows.len() as i64 + 1;
            rows.push(row(id, &turn_id, role, text, frame));
        };
        let said = prose.text_between(120, 300);
        push(&mut rows, MessageRole::User, said.clone(), None);
        if turn % 3 == 0 {
            // The memories bearing on the message, recalled before the first request.
            let call = ToolCall {
                id: format!("call_recall_{turn}"),
                name: "recall".into(),
                arguments: json!({ "query": said }).to_string(),
            };
            let found = &memories[turn % 5..turn % 5 + 3];
            asked(&mut rows, &turn_id, String::new(), std::slice::from_ref(&call));
            answered(&mut rows, &turn_id, &call, recall_lines(found));
        }
        if turn % 4 == 1 {
            let calls = [
                ToolCall {
                    id: format!("call_fetch_{turn}"),
                    name: "web_fetch".into(),
                    arguments: json!({ "url": format!("https://www.example.org/guides/{turn}/opening-hours") })
                        .to_string(),
                },
                ToolCall {
                    id: format!("call_notes_{turn}"),
                    name: "note_search".into(),
                    arguments: json!({ "query": "opening hours" }).to_string(),
                },
            ];
            asked(&mut rows, &turn_id, prose.text(60), &calls);
            let page = crate::untrusted::wrap(&format!("https://www.example.org/guides/{turn}"), &prose.text(3_000));
            answered(&mut rows, &turn_id, &calls[0], page);
            answered(&mut rows, &turn_id, &calls[1], prose.text(400));
        }
        if turn % 10 == 7 {
            // A sub-agent's frame: its rows are its own, not the conversation's.
            let frame = format!("frame_{turn:024}");
            push(&mut rows, MessageRole::User, prose.text(200), Some(&frame));
            push(&mut rows, MessageRole::Assistant, prose.text(600), Some(&frame));
        }
        push(&mut rows, MessageRole::Assistant, prose.text_between(400, 800), None);
        turn += 1;
    }
    rows.truncate(messages);
    rows
}

fn row(id: i64, turn: &TurnId, role: MessageRole, text: String, frame: Option<&str>) -> Message {
    Message {
        id,
        turn_id: turn.clone(),
        role,
        status: match role {
            MessageRole::User => MessageStatus::Sent,
            MessageRole::Assistant => MessageStatus::Done,
            MessageRole::Tool => MessageStatus::Ok,
        },
        text,
        tool_calls: None,
        tool_call_id: None,
        tool_name: None,
        model: Some("qwen2.5:7b-instruct".into()),
        error_code: None,
        error_message: None,
        created_at: "2026-12-07T09:30:00Z".into(),
        frame_id: frame.map(FrameId::new),
        redacted: false,
        images: None,
    }
}

/// An assistant row asking for `calls`, as the turn stores it.
fn asked(rows: &mut Vec<Message>, turn: &TurnId, text: String, calls: &[ToolCall]) {
    let mut message = row(rows.len() as i64 + 1, turn, MessageRole::Assistant, text, None);
    message.status = MessageStatus::ToolCalls;
    message.tool_calls = Some(context::calls_to_json(calls));
    rows.push(message);
}

/// The result of `call`, as the turn stores it.
fn answered(rows: &mut Vec<Message>, turn: &TurnId, call: &ToolCall, result: String) {
    let mut message = row(rows.len() as i64 + 1, turn, MessageRole::Tool, result, None);
    message.tool_call_id = Some(CallId::new(call.id.clone()));
    message.tool_name = Some(call.name.clone());
    rows.push(message);
}

/// Eight kept memories, private and shared, to recall three of.
fn memories(prose: &mut Prose) -> Vec<Memory> {
    let owner = UserId::parse("0123456789abcdef0123456789abcdef").expect("a user id");
    (0..8)
        .map(|at| Memory {
            id: MemoryId::new(format!("mem_{at:024}")),
            text: prose.text(90),
            pool: if at % 2 == 0 { Pool::Private } else { Pool::Shared },
            subject: Subject::Own,
            author: Author::Model { agent: "assistant".into() },
            source_session: None,
            owner: owner.clone(),
            created_at: "2026-11-02T18:00:00Z".into(),
            updated_at: "2026-11-02T18:00:00Z".into(),
            expires_at: None,
            pinned: false,
            local_only: false,
            outside: false,
            score: Some(0.71),
            about_name: None,
            author_name: None,
        })
        .collect()
}

// ---- the gate ---------------------------------------------------------------------------

/// A model's `web_fetch` call before the gate, with the rules in force: the shared ones and
/// the person's own.
pub struct GateCase {
    arguments: Value,
    shared: Vec<Rule>,
    personal: Vec<Rule>,
}

impl GateCase {
    /// `rules` rules, three in four shared: tool rules like the presets, refusals and
    /// allows of addresses for `web_fetch`, a tool server's tools allowed for some folders,
    /// rules for other roles; the person's own "always allow" for sites they trust. With
    /// none at all the gate still decides (no rule covers the call).
    pub fn with_rules(rules: usize) -> Self {
        let shared = rules - rules / 4;
        let all: Vec<Rule> = (0..rules).map(|at| rule(at, at >= shared)).collect();
        let (shared, personal) = all.split_at(shared);
        Self {
            arguments: json!({ "url": "https://www.example.org/guides/42/opening-hours?lang=en" }),
            shared: shared.to_vec(),
            personal: personal.to_vec(),
        }
    }

    /// The rules the gate weighs.
    pub fn rules(&self) -> usize {
        self.shared.len() + self.personal.len()
    }

    /// The gate's decision (`agent::gate::decide`) for a member who may approve, in a
    /// conversation with no outside content yet.
    pub fn decide(&self) -> Decision {
        let situation = Situation {
            tool: "web_fetch",
            arguments: &self.arguments,
            role: "member",
            may_approve: true,
            routed: false,
            side_effects: true,
            outside_content: false,
            approved: None,
            destructive: false,
        };
        gate::decide(&situation, &self.shared, &self.personal)
    }
}

/// The `at`th rule of an instance: a person's own when `personal`.
fn rule(at: usize, personal: bool) -> Rule {
    let fields = |pointer: &str, pattern: String| {
        Some(ArgsPattern::Fields(std::iter::once((pointer.to_owned(), pattern)).collect()))
    };
    if personal {
        return Rule {
            tool: "web_fetch".into(),
            args: fields("/url", format!("https://site-{at}.example.net/*")),
            role: None,
            effect: Effect::Allow,
            priority: gate::PERSONAL_PRIORITY,
        };
    }
    let (tool, args, role, effect, priority) = match at % 6 {
        0 => ("note_*".to_owned(), None, None, Effect::Allow, 100),
        1 => (
            "web_fetch".to_owned(),
            fields("/url", format!("https://tracker-{at}.example.com/*")),
            None,
            Effect::Deny,
            10,
        ),
        2 => (
            "web_fetch".to_owned(),
            fields("/url", format!("https://docs-{at}.example.org/*")),
            None,
            Effect::Allow,
            100,
        ),
        3 => (
            format!("mcp__files_{at}__read_*"),
            fields("/path", format!("/srv/shared/{at}/*")),
            None,
            Effect::Allow,
            100,
        ),
        4 => ("web_fetch".to_owned(), None, Some(format!("role_{at}")), Effect::Require, 200),
        // One catch-all, as the presets end with; then a tool server's tools to confirm.
        _ if at == 5 => ("*".to_owned(), None, None, Effect::Require, 1000),
        _ => (format!("mcp__calendar_{at}__*"), None, None, Effect::Require, 100),
    };
    Rule { tool, args, role, effect, priority }
}

// ---- the small model's tool calls -------------------------------------------------------

/// A finished reply of a small local model, and the tools its turn offered: every built-in
/// tool, as `Registry::offered` lays them out.
pub struct Reply {
    text: String,
    offered: Vec<ToolSpec>,
}

impl Reply {
    fn new(text: String) -> Self {
        let offered = Registry::builtin(FetchPolicy::default()).offered(&["*".into()], &["*".into()]);
        Self { text, offered }
    }

    /// A sentence and one call in Hermes/Qwen tags.
    pub fn short_with_one_call() -> Self {
        Self::new(
            "I'll check the current time for you.\n<tool_call>\n{\"name\": \"current_time\", \"arguments\": {}}\n\
             </tool_call>"
                .into(),
        )
    }

    /// Two kilobytes of prose, then three calls as small models drift into writing them:
    /// one tagged, one in OpenAI's `function` shape with its arguments as a string, one
    /// unclosed with a trailing comma.
    pub fn long_with_several_calls() -> Self {
        let mut prose = Prose(0xca11);
        let text = format!(
            "{}\n\n<tool_call>\n{{\"name\": \"note_search\", \"arguments\": {{\"query\": \"insurance letter\"}}}}\n\
             </tool_call>\n{}\n<tool_call>{{\"function\": {{\"name\": \"web_fetch\", \"arguments\": \
             \"{{\\\"url\\\": \\\"https://www.example.org/guides/42/opening-hours\\\"}}\"}}}}</tool_call>\n\
             <tool_call>\n{{\"name\": \"remember\", \"parameters\": {{\"text\": \"{}\", \"pool\": \"private\", \
             \"subject\": {{\"kind\": \"self\"}},}}}}",
            prose.text(2_000),
            prose.text(200),
            prose.text(80),
        );
        Self::new(text)
    }

    /// Two kilobytes of prose around a fenced JSON example that names no tool: the parser
    /// tries the fence, the whole reply and every `{` in it, and finds nothing.
    pub fn long_with_none() -> Self {
        let mut prose = Prose(0x0a_c411);
        let text = format!(
            "{}\n\n```json\n{{\"heating\": {{\"morning\": \"06:30\", \"evening\": \"18:00\", \"target\": 20.5}}}}\n\
             ```\n\n{} {{ and this brace is just text }}",
            prose.text(1_200),
            prose.text(800),
        );
        Self::new(text)
    }

    /// The reply's length in bytes.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// Whether the reply is empty (never, for these replies).
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The calls in the reply (`providers::local::tool_calls::parse`).
    pub fn parse(&self) -> Parsed {
        tool_calls::parse(&self.text, &self.offered)
    }

    /// Where a streamed reply starts holding text back (`tool_calls::hold_from`).
    pub fn hold_from(&self) -> usize {
        tool_calls::hold_from(&self.text)
    }
}

// ---- the privacy classifier -------------------------------------------------------------

/// A provider as the privacy classifier sees it: its kind, its base URL, whether the
/// administrator marked its network trusted.
pub struct Provider {
    kind: ProviderKind,
    base_url: &'static str,
    trusted_lan: bool,
}

impl Provider {
    /// The built-in model.
    pub fn built_in() -> Self {
        Self { kind: ProviderKind::Local, base_url: "", trusted_lan: false }
    }

    /// Ollama on this machine: a short loopback URL.
    pub fn loopback() -> Self {
        Self { kind: ProviderKind::Ollama, base_url: "http://127.0.0.1:11434", trusted_lan: false }
    }

    /// A server on the home network by an IPv6 unique-local address, marked trusted.
    pub fn trusted_lan() -> Self {
        Self { kind: ProviderKind::Openai, base_url: "http://[fd12:3456:789a:1::20]:8080/v1", trusted_lan: true }
    }

    /// A remote service by a long host name and path.
    pub fn remote() -> Self {
        Self {
            kind: ProviderKind::Openai,
            base_url: "https://my-assistant-resource.openai.azure.com/openai/deployments/gpt-4o-mini-2024-07-18/v1",
            trusted_lan: false,
        }
    }

    /// Its tier (`providers::privacy::classify`).
    pub fn classify(&self) -> Tier {
        privacy::classify(self.kind, self.base_url, self.trusted_lan)
    }
}
