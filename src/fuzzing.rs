//! Entry points for the fuzz targets in `fuzz/` (cargo-fuzz compiles the crate with
//! `--cfg fuzzing`; no other build has this module). Each takes the fuzzer's bytes to one
//! of Skald's parsers of outside input and checks, beyond "does not panic", what must hold
//! of its answer wherever that is cheap to say. `tests/fuzz.sh` runs them.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::agent::gate::{self, Situation};
use crate::providers::{Delta, DeltaStream, ProviderError, ToolSpec};
use crate::rules::{ArgsPattern, Effect, Rule};

// ---- key wraps ------------------------------------------------------------------------

/// A stored key-wrap record as read before any secret is tried, and the sealed values.
pub fn key_wrap(data: &[u8]) {
    use crate::crypto::{self, CryptoError, InstanceKey, Purpose, WrapHeader, WrappedKey};

    if let Ok((header, used)) = WrapHeader::decode(data) {
        // What the reader accepted is exactly what the writer writes for that header.
        assert_eq!(header.encode(), data[..used], "a wrap header reads back as written");
        let wrapped = WrappedKey(data.to_vec());
        assert_eq!(wrapped.header().as_ref(), Ok(&header));
        // A record moved to another person or purpose is refused before any derivation.
        let other = format!("{}x", header.user_id);
        assert!(matches!(crypto::unwrap(&wrapped, b"pw", &other, header.purpose), Err(CryptoError::Misbound { .. })));
        // Its own binding: refused for its parameters or its length, still before any
        // derivation; a record that passes both would run argon2 (too slow to fuzz).
        if !header.kdf.in_range() || data.len() - used != 12 + 32 + 16 {
            let opened = crypto::unwrap(&wrapped, b"pw", &header.user_id, header.purpose);
            assert!(matches!(opened, Err(CryptoError::KdfOutOfRange(_) | CryptoError::Malformed(_))));
        }
        assert_eq!(Purpose::parse(header.purpose.as_str()), Some(header.purpose));
    } else {
        assert!(WrappedKey(data.to_vec()).header().is_err());
    }
    // Sealed values: bytes nobody sealed never open.
    let key = InstanceKey::from_bytes(&[7; 32]).expect("32 bytes");
    assert!(key.open(data, b"fuzz").is_err(), "unsealed bytes opened");
    assert!(crypto::open_sealed(&[9; 32], data, b"fuzz").is_err(), "unsealed bytes opened");
}

// ---- provider streams -----------------------------------------------------------------

/// What a stream yields, every item; errors by their words.
type Items = Vec<Result<Vec<Delta>, String>>;

/// The pieces `data` arrives in: whole, a byte at a time, and cut where a hash of the
/// bytes says. A parser of a byte stream must read the same whatever the cuts.
fn cuts(data: &[u8]) -> [Vec<Vec<u8>>; 3] {
    let whole = vec![data.to_vec()];
    let bytes = data.iter().map(|b| vec![*b]).collect();
    let mut state =
        data.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3));
    let mut pieces = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let length = ((state % 17) as usize + 1).min(rest.len());
        pieces.push(rest[..length].to_vec());
        rest = &rest[length..];
    }
    [whole, bytes, pieces]
}

/// Every item of a stream whose input is all at hand, without a runtime.
fn drain(mut stream: DeltaStream) -> Items {
    let mut context = Context::from_waker(Waker::noop());
    let mut items = Vec::new();
    loop {
        match Pin::as_mut(&mut stream).poll_next(&mut context) {
            Poll::Ready(Some(item)) => items.push(item.map_err(|err: ProviderError| err.to_string())),
            Poll::Ready(None) => return items,
            Poll::Pending => panic!("a stream whose bytes are all at hand waited"),
        }
    }
}

fn same_whatever_the_cuts(data: &[u8], read: impl Fn(Vec<Vec<u8>>) -> DeltaStream) {
    let [whole, bytes, pieces] = cuts(data);
    let expected = drain(read(whole));
    assert_eq!(drain(read(bytes)), expected, "a byte at a time reads otherwise than whole");
    assert_eq!(drain(read(pieces)), expected, "pieces read otherwise than whole");
}

/// An OpenAI-compatible reply's server-sent events.
pub fn openai_stream(data: &[u8]) {
    same_whatever_the_cuts(data, |pieces| {
        crate::providers::openai::deltas(futures_util::stream::iter(pieces.into_iter().map(Ok::<_, std::io::Error>)))
    });
}

/// An Anthropic reply's named server-sent events.
pub fn anthropic_stream(data: &[u8]) {
    same_whatever_the_cuts(data, |pieces| {
        crate::providers::anthropic::deltas(futures_util::stream::iter(pieces.into_iter().map(Ok::<_, std::io::Error>)))
    });
}

/// An Ollama reply's lines of JSON.
pub fn ollama_stream(data: &[u8]) {
    use tokio_util::bytes::Bytes;
    same_whatever_the_cuts(data, |pieces| {
        crate::providers::ollama::deltas(futures_util::stream::iter(
            pieces.into_iter().map(|piece| Ok::<_, std::io::Error>(Bytes::from(piece))),
        ))
    });
}

// ---- the small model's tool calls ------------------------------------------------------

/// A small local model's reply, read for calls to the offered tools; and, when the bytes
/// are JSON, earlier calls' arguments mended and tool schemas loosened for the grammar.
pub fn tool_calls(data: &[u8]) {
    use crate::providers::local::tool_calls;

    let text = String::from_utf8_lossy(data);
    let offered = vec![
        ToolSpec {
            name: "web_fetch".into(),
            description: String::new(),
            parameters: json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}),
        },
        ToolSpec { name: "get_time".into(), description: String::new(), parameters: json!({"type": "object"}) },
        ToolSpec {
            name: "remember".into(),
            description: String::new(),
            parameters: json!({"type": "object", "required": ["text", "when"]}),
        },
    ];
    let parsed = tool_calls::parse(&text, &offered);
    for (at, call) in parsed.calls.iter().enumerate() {
        let tool = offered.iter().find(|t| t.name == call.name).expect("a call names an offered tool");
        let arguments: Value = serde_json::from_str(&call.arguments).expect("arguments are JSON");
        let arguments = arguments.as_object().expect("arguments are an object");
        for required in tool.parameters["required"].as_array().into_iter().flatten() {
            assert!(arguments.contains_key(required.as_str().unwrap_or_default()), "a required argument is missing");
        }
        assert!(!parsed.calls[..at].contains(call), "a call is found twice");
    }
    assert_eq!(tool_calls::parse(&text, &offered), parsed, "the same reply reads the same");
    let hold = tool_calls::hold_from(&text);
    assert!(hold <= text.len() && text.is_char_boundary(hold));

    if let Ok(mut value) = serde_json::from_slice::<Value>(data) {
        let mut messages = value.clone();
        tool_calls::mend_arguments(&mut messages);
        // Mended arguments are each a JSON object as text.
        for call in messages.as_array().into_iter().flatten().filter_map(|m| m["tool_calls"].as_array()).flatten() {
            if let Some(arguments) = call.pointer("/function/arguments") {
                let text = arguments.as_str().unwrap_or("{}");
                assert!(serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object()), "unmended: {text}");
            }
        }
        tool_calls::loosen_for_grammar(&mut value);
    }
}

// ---- GGUF -----------------------------------------------------------------------------

/// A model file's header, walked before llama.cpp sees it.
pub fn gguf(data: &[u8]) {
    use crate::providers::gguf::{GgufError, parse};

    let exact = parse(&mut &data[..], data.len() as u64);
    if let Ok(info) = &exact {
        assert_eq!(info.file_size, data.len() as u64);
        assert!(info.tensor_count <= 1_000_000);
    }
    // A file that claims more bytes than arrive: the same answer, or cut short.
    let longer = parse(&mut &data[..], data.len() as u64 + 4096);
    if let (Ok(a), Ok(b)) = (&exact, &longer) {
        assert_eq!(GgufInfoSansSize::from(a), GgufInfoSansSize::from(b));
    }
    if let Err(GgufError::Io(err)) = exact {
        panic!("reading from memory cannot fail: {err}");
    }
}

/// What a header says, apart from the file's size.
#[derive(Debug, PartialEq)]
struct GgufInfoSansSize(crate::providers::gguf::GgufInfo);

impl From<&crate::providers::gguf::GgufInfo> for GgufInfoSansSize {
    fn from(info: &crate::providers::gguf::GgufInfo) -> Self {
        Self(crate::providers::gguf::GgufInfo { file_size: 0, ..info.clone() })
    }
}

// ---- approval rules -------------------------------------------------------------------

#[derive(Deserialize)]
struct RuleCase {
    #[serde(default)]
    shared: Vec<Rule>,
    #[serde(default)]
    personal: Vec<Rule>,
    tool: String,
    #[serde(default)]
    arguments: Value,
    #[serde(default)]
    role: String,
    #[serde(default)]
    flags: u8,
    #[serde(default)]
    approved: Option<String>,
}

/// The gate over rules and a call written as JSON; other bytes go to the matcher itself as
/// a pattern and a text (split at the first line end).
pub fn rules(data: &[u8]) {
    let Ok(case) = serde_json::from_slice::<RuleCase>(data) else {
        let text = String::from_utf8_lossy(data);
        let (pattern, text) = text.split_once('\n').unwrap_or((&text, ""));
        matcher(pattern, text);
        return;
    };
    let flag = |bit: u8| case.flags & (1 << bit) != 0;
    let situation = Situation {
        tool: &case.tool,
        arguments: &case.arguments,
        role: &case.role,
        may_approve: flag(0),
        routed: flag(1),
        side_effects: flag(2),
        outside_content: flag(3),
        approved: case.approved.as_deref(),
        destructive: flag(4),
    };
    let decision = gate::decide(&situation, &case.shared, &case.personal);
    assert_eq!(gate::decide(&situation, &case.shared, &case.personal), decision, "the gate is a function");

    // Equal arguments, written anew, decide alike.
    let rewritten: Value = serde_json::from_str(&case.arguments.to_string()).expect("JSON reads back");
    let again = gate::decide(&Situation { arguments: &rewritten, ..situation.clone() }, &case.shared, &case.personal);
    assert_eq!(again, decision, "equal arguments decided otherwise");

    // Nothing allows a call with side effects once outside content is in, unless the
    // person allowed these very arguments on a card.
    let approved_these =
        case.approved.as_deref().is_some_and(|hash| hash == gate::arguments_hash(&case.tool, &case.arguments));
    if situation.outside_content && situation.side_effects && !approved_these {
        assert_ne!(decision.effect, Effect::Allow, "an allow stood in after outside content: {decision:?}");
    }
    // No rule at all allows nothing by itself.
    let bare = gate::decide(&situation, &[], &[]);
    if !approved_these {
        assert_ne!(bare.effect, Effect::Allow);
    }
    // A refusal of every tool for every role refuses this call, whatever else allows it.
    let mut shared = case.shared.clone();
    shared.push(Rule { tool: "*".into(), args: None, role: None, effect: Effect::Deny, priority: i64::MAX });
    assert_eq!(gate::decide(&situation, &shared, &case.personal).effect, Effect::Deny);

    for rule in case.shared.iter().chain(&case.personal) {
        matcher(&rule.tool, &case.tool);
        if let Some(args) = &rule.args {
            assert_eq!(&ArgsPattern::from_stored(args.to_stored()), args, "a stored condition reads back");
        }
    }
}

/// The `*` matcher, the URL normaliser and a stored argument condition on one text.
fn matcher(pattern: &str, text: &str) {
    use crate::patterns::{allowed, glob};

    let matched = glob(pattern, text);
    if !pattern.contains('*') {
        assert_eq!(matched, pattern == text, "a pattern without `*` is the text itself");
    }
    if !text.contains('*') {
        assert!(glob(text, text), "a text matches itself");
    }
    assert!(glob("*", text));
    if matched {
        let head = pattern.split('*').next().unwrap_or("");
        assert!(text.starts_with(head), "a match starts with the pattern's head");
    }
    assert_eq!(allowed(&[pattern.to_owned()], text), glob(&pattern.to_lowercase(), &text.to_lowercase()));
    let _ = crate::rules::normalise_url(text);
    let condition = ArgsPattern::from_stored(pattern.to_owned());
    assert_eq!(ArgsPattern::from_stored(condition.to_stored()), condition, "a stored condition reads back");
    let arguments = json!({ "url": text, "n": text.len() });
    for effect in [Effect::Allow, Effect::Deny, Effect::Require] {
        let _ = condition.matches(effect, &arguments);
    }
    if let ArgsPattern::Text(_) = condition {
        assert!(!condition.matches(Effect::Allow, &arguments), "a text condition never allows");
    }
}

// ---- MCP ------------------------------------------------------------------------------

/// One JSON-RPC message from an MCP server (a line of stdio, a body or one server-sent
/// event of the streamable HTTP transport), decoded as the SDK does and then read as
/// Skald reads what it holds: tool lists and their pins, tool results, resources, prompts
/// and sampling requests.
#[allow(deprecated, reason = "sampling is deprecated from protocol 2026-07-28 on; Skald speaks it at 2025-11-25")]
pub fn mcp_message(text: &str) {
    use rmcp::model::{
        CallToolResult, CreateMessageRequestParams, GetPromptResult, ListToolsResult, ReadResourceResult,
        ServerJsonRpcMessage,
    };

    use crate::mcp::{pin, sampling};
    use crate::untrusted::WRAPPER;

    let _ = serde_json::from_str::<ServerJsonRpcMessage>(text);
    let Ok(value) = serde_json::from_str::<Value>(text) else { return };
    let wrapped_once = |out: &str| {
        let lower = out.to_ascii_lowercase();
        assert_eq!(lower.matches(WRAPPER).count(), 2, "outside text opened or closed the wrapper:\n{out}");
        assert!(out.ends_with(&format!("\n</{WRAPPER}>")));
    };
    let result = &value["result"];
    if let Ok(list) = serde_json::from_value::<ListToolsResult>(result.clone()) {
        for tool in &list.tools {
            let definition = pin::definition(tool);
            assert_eq!(pin::pin(&definition), pin::pin(&pin::definition(tool)), "a pin is a function");
            if let Some(name) = pin::offered_name("files", &tool.name) {
                assert!(name.len() <= 64 && pin::is_mcp(&name));
                assert_eq!(pin::split(&name), Some(("files", tool.name.as_ref())));
            }
        }
    }
    if let Ok(called) = serde_json::from_value::<CallToolResult>(result.clone()) {
        let out = pin::result_text("files", "read", &called);
        let out = out.as_deref().unwrap_or_else(|error| error);
        wrapped_once(out);
    }
    if let Ok(read) = serde_json::from_value::<ReadResourceResult>(result.clone()) {
        let uri = value["uri"].as_str().unwrap_or("file:///notes.txt");
        if let Ok(out) = pin::resource_text("files", uri, &read) {
            wrapped_once(&out);
        }
    }
    if let Ok(prompt) = serde_json::from_value::<GetPromptResult>(result.clone()) {
        assert!(pin::prompt_text(&prompt).chars().count() <= pin::MAX_RESULT_CHARS);
    }
    if value["method"] == "sampling/createMessage"
        && let Ok(params) = serde_json::from_value::<CreateMessageRequestParams>(value["params"].clone())
        && let Ok(request) = sampling::read(params)
    {
        assert!((1..=sampling::MAX_SAMPLE_TOKENS).contains(&request.max_tokens));
        assert!(!request.messages.is_empty());
    }
}

// ---- documents ------------------------------------------------------------------------

/// A PDF's text as read in this process (the helper's pdf-extract part; the programs it
/// falls back on are not run here), and the kind sniffed from its first bytes.
pub fn pdf(data: &[u8]) {
    use crate::extract::read::{pdf_pages, tidy};

    let _ = crate::extract::sniff(data, "fuzzed.pdf");
    // pdf_pages contains pdf-extract's own panics (a file it cannot read); libFuzzer's hook
    // would abort on them before they are caught, so a silent one stands in meanwhile. A
    // panic that escapes still ends the run.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let read = std::panic::catch_unwind(|| pdf_pages(data));
    std::panic::set_hook(hook);
    let Ok(read) = read else { panic!("a panic escaped pdf_pages") };
    if let Ok(Some(pages)) = read {
        assert!(pages.len() <= crate::extract::MAX_PAGES);
        for page in &pages {
            let tidied = tidy(page);
            assert_eq!(tidy(&tidied), tidied, "tidying is done in one pass");
        }
    }
}
