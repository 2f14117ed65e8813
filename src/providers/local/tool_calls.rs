//! Tool calls as small local models really write them (§9). A model whose template has a
//! tool syntax is parsed by llama.cpp; but small models drift from it, and many write calls
//! in whatever shape their training showed them: Hermes/Qwen `<tool_call>` tags (closed or
//! not), a bare JSON object or a list of them, a fenced ```json block, OpenAI's
//! `{"function":{…}}` shape, `parameters` for `arguments`, arguments as a JSON string, a
//! trailing comma or a missing closing brace. This module finds such calls in a finished
//! reply and keeps only those naming a tool that was offered, with arguments that are an
//! object holding every property its schema requires.
//!
//! Pure: text and the offered tools in, calls and the remaining text out.

use serde_json::{Map, Value};

use crate::providers::ToolSpec;

/// A call found in a reply; `arguments` is compact JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundCall {
    pub name: String,
    pub arguments: String,
}

/// What a reply holds: its calls, in order, once each, and the text around them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    pub calls: Vec<FoundCall>,
    pub text: String,
}

/// Markers some models put before a call.
const PREFIXES: [&str; 4] = ["[TOOL_CALLS]", "<|python_tag|>", "functools", "<tools>"];
const OPEN_TAG: &str = "<tool_call>";
const CLOSE_TAG: &str = "</tool_call>";

/// Finds the calls in `output` to the `offered` tools.
pub fn parse(output: &str, offered: &[ToolSpec]) -> Parsed {
    let mut calls = Vec::new();
    let mut text = String::new();
    let mut rest = output;
    // Tagged calls first: what is between the tags is a call and nothing else.
    while let Some(start) = rest.find(OPEN_TAG) {
        text.push_str(&rest[..start]);
        let inner = &rest[start + OPEN_TAG.len()..];
        let (body, after) = match inner.find(CLOSE_TAG) {
            Some(end) => (&inner[..end], &inner[end + CLOSE_TAG.len()..]),
            // A model that stopped before closing the tag still meant the call.
            None => (inner, ""),
        };
        let found = calls_in(strip_fence(body.trim()), offered);
        if found.is_empty() {
            text.push_str(&rest[start..rest.len() - after.len()]);
        }
        calls.extend(found);
        rest = after;
    }
    text.push_str(rest);
    if calls.is_empty() {
        let (found, remaining) = untagged(&text, offered);
        calls = found;
        text = remaining;
    }
    Parsed { calls: unique(calls), text }
}

/// Where a streaming reply must start holding its text back, because a call may begin
/// there: the first call marker, fence or `{"` in `text`, or a marker cut off at its end.
/// `text.len()` when all of it may be shown.
pub fn hold_from(text: &str) -> usize {
    let markers = [OPEN_TAG, "```"].into_iter().chain(PREFIXES);
    let mut earliest = markers.clone().filter_map(|marker| text.find(marker)).min().unwrap_or(text.len());
    // An object whose first key is quoted: `{"` or `{ "`.
    for (index, _) in text.match_indices('{') {
        if index >= earliest {
            break;
        }
        let after = text[index + 1..].trim_start();
        if after.is_empty() || after.starts_with('"') {
            earliest = index;
            break;
        }
    }
    // The end may be the start of a marker still being written.
    for marker in markers {
        for cut in 1..marker.len() {
            if text.len() >= cut
                && text.is_char_boundary(text.len() - cut)
                && marker.starts_with(&text[text.len() - cut..])
            {
                earliest = earliest.min(text.len() - cut);
            }
        }
    }
    earliest
}

/// Calls in a reply without tags: fenced blocks, a reply that is all JSON, or a call object
/// inside prose.
fn untagged(text: &str, offered: &[ToolSpec]) -> (Vec<FoundCall>, String) {
    // Fenced blocks.
    let mut calls = Vec::new();
    let mut remaining = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after_open = &rest[open + 3..];
        let Some(close) = after_open.find("```") else { break };
        let block = &rest[open..open + 3 + close + 3];
        let found = calls_in(strip_fence(block), offered);
        remaining.push_str(&rest[..open]);
        if found.is_empty() {
            remaining.push_str(block);
        }
        calls.extend(found);
        rest = &after_open[close + 3..];
    }
    remaining.push_str(rest);
    if !calls.is_empty() {
        return (calls, remaining);
    }

    // The whole reply, after any marker, as JSON.
    let mut whole = text.trim();
    for prefix in PREFIXES {
        whole = whole.strip_prefix(prefix).unwrap_or(whole).trim_start();
    }
    let found = calls_in(whole, offered);
    if !found.is_empty() {
        return (found, String::new());
    }

    // A call object written inside prose: each `{` that opens one.
    let mut calls = Vec::new();
    let mut remaining = String::new();
    let mut position = 0;
    while let Some(offset) = text[position..].find('{') {
        let start = position + offset;
        match first_value(&text[start..]) {
            Some((value, length)) => {
                let found = calls_from_value(&value, offered);
                if found.is_empty() {
                    remaining.push_str(&text[position..start + 1]);
                    position = start + 1;
                } else {
                    remaining.push_str(&text[position..start]);
                    calls.extend(found);
                    position = start + length;
                }
            }
            None => {
                remaining.push_str(&text[position..start + 1]);
                position = start + 1;
            }
        }
    }
    remaining.push_str(&text[position..]);
    (calls, remaining)
}

/// The inside of a ```fence```, or the text itself.
fn strip_fence(text: &str) -> &str {
    let Some(inner) = text.trim().strip_prefix("```") else { return text };
    let inner = inner.strip_suffix("```").unwrap_or(inner);
    // The info string: `json`, `tool_call`…, up to the first line break.
    match inner.find('\n') {
        Some(newline) if !inner[..newline].contains(['{', '[']) => &inner[newline + 1..],
        _ => inner,
    }
    .trim()
}

/// Every call in `text`: one JSON value, a list, or several values one after another;
/// repaired once if it does not parse as written.
fn calls_in(text: &str, offered: &[ToolSpec]) -> Vec<FoundCall> {
    let values = values_in(text).or_else(|| values_in(&repair(text))).unwrap_or_default();
    values.iter().flat_map(|value| calls_from_value(value, offered)).collect()
}

/// The JSON values `text` consists of, separated by whitespace, commas or semicolons.
fn values_in(text: &str) -> Option<Vec<Value>> {
    let mut values = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (value, length) = first_value(rest)?;
        values.push(value);
        rest = rest[length..].trim_start_matches(|c: char| c.is_whitespace() || c == ',' || c == ';');
    }
    (!values.is_empty()).then_some(values)
}

/// The JSON value at the start of `text` and the bytes it took.
fn first_value(text: &str) -> Option<(Value, usize)> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match stream.next() {
        Some(Ok(value)) => Some((value, stream.byte_offset())),
        _ => None,
    }
}

/// Mends the arguments of the earlier calls in `messages` (OpenAI's shape) that are no
/// JSON object — a call a model cut off or mangled — where the slip is plain, else leaves
/// them empty. Templates lay arguments out as objects: one llama.cpp cannot read would
/// stop every later turn of the conversation.
pub fn mend_arguments(messages: &mut Value) {
    let Some(messages) = messages.as_array_mut() else { return };
    let calls = messages.iter_mut().filter_map(|m| m.get_mut("tool_calls")?.as_array_mut()).flatten();
    for arguments in calls.filter_map(|call| call.pointer_mut("/function/arguments")) {
        let text = arguments.as_str().unwrap_or_default();
        if serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object()) {
            continue;
        }
        let mended = serde_json::from_str::<Value>(&repair(text)).ok().filter(Value::is_object);
        *arguments = Value::String(mended.unwrap_or_else(|| Value::Object(Map::new())).to_string());
    }
}

/// The largest length or count bound a tool schema keeps for llama.cpp's grammar: its
/// parser refuses a repetition of 2,000 or more (and with it the whole tool-call grammar),
/// and a bound becomes one grammar rule per repeat.
const GRAMMAR_BOUND_LIMIT: u64 = 1000;

/// How deep `$ref`s are followed when a tool server's schema is inlined for the grammar.
const REF_DEPTH: usize = 6;

/// Makes tool schemas (OpenAI's `tools` list) ones llama.cpp's grammar takes, leaving
/// what they admit looser, never tighter; the tool still checks its arguments when it is
/// called. One schema the grammar refuses would otherwise cost every tool its grammar, and
/// a tool server's schema (MCP) can be anything:
/// - length and count bounds too large for it (a note's 65,536 characters) are dropped;
/// - `$ref`s into the schema's own `$defs` are inlined (to a bounded depth; a cycle, or a
///   reference elsewhere, becomes "any value"), and the definitions dropped;
/// - regular expressions (`pattern`, `patternProperties`), which it reads only in part,
///   are dropped.
pub fn loosen_for_grammar(tools: &mut Value) {
    if let Value::Array(tools) = tools {
        for parameters in tools.iter_mut().filter_map(|t| t.pointer_mut("/function/parameters")) {
            let root = parameters.clone();
            inline_refs(parameters, &root, 0);
        }
    }
    loosen(tools);
}

/// Replaces each `$ref` in `schema` by what it names in `root`.
fn inline_refs(schema: &mut Value, root: &Value, depth: usize) {
    match schema {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                let target = reference
                    .strip_prefix('#')
                    .filter(|_| depth < REF_DEPTH)
                    .and_then(|pointer| root.pointer(pointer))
                    .filter(|target| target.is_object())
                    .cloned();
                let mut inlined = target.unwrap_or_else(|| Value::Object(Map::new()));
                inline_refs(&mut inlined, root, depth + 1);
                *schema = inlined;
                return;
            }
            map.remove("$defs");
            map.remove("definitions");
            for (key, value) in map.iter_mut() {
                if !matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                    inline_refs(value, root, depth);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| inline_refs(item, root, depth)),
        _ => {}
    }
}

fn loosen(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            map.retain(|key, value| {
                let bound = matches!(key.as_str(), "maxLength" | "minLength" | "maxItems" | "minItems");
                let pattern = matches!(key.as_str(), "pattern" | "patternProperties");
                let too_large = bound && value.as_u64().is_none_or(|n| n > GRAMMAR_BOUND_LIMIT);
                !(pattern || too_large)
            });
            for (key, value) in map.iter_mut() {
                match (key.as_str(), value) {
                    // Names of properties or definitions, not keywords: each holds a schema.
                    ("properties" | "$defs" | "definitions", Value::Object(named)) => {
                        named.values_mut().for_each(loosen);
                    }
                    // Values, not schemas: left as they are.
                    ("enum" | "const" | "default" | "examples", _) => {}
                    (_, value) => loosen(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(loosen),
        _ => {}
    }
}

/// The slips small models make in JSON, mended: trailing commas, Python's literals, and
/// brackets left open at the end. Strings are left as they are.
fn repair(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    let mut open = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = text.trim().chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => open.push('}'),
            '[' => open.push(']'),
            '}' | ']' => {
                // A comma right before a closing bracket is dropped.
                let trimmed = out.trim_end().len();
                if out[..trimmed].ends_with(',') {
                    out.truncate(trimmed - 1);
                }
                open.pop();
            }
            _ => {}
        }
        let word: String = chars[i..].iter().take(5).collect();
        let literal = [("True", "true"), ("False", "false"), ("None", "null")]
            .into_iter()
            .find(|(python, _)| word.starts_with(python) && !out.ends_with(|p: char| p.is_alphanumeric()));
        if let Some((python, json)) = literal {
            out.push_str(json);
            i += python.len();
            continue;
        }
        out.push(c);
        i += 1;
    }
    if in_string {
        out.push('"');
    }
    let trimmed = out.trim_end().trim_end_matches(',').len();
    out.truncate(trimmed);
    while let Some(close) = open.pop() {
        out.push(close);
    }
    out
}

/// The calls a JSON value stands for: a call object, or a list of them.
fn calls_from_value(value: &Value, offered: &[ToolSpec]) -> Vec<FoundCall> {
    match value {
        Value::Array(items) => items.iter().filter_map(|item| call_from_object(item, offered)).collect(),
        Value::Object(_) => call_from_object(value, offered).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// A call object in any of the shapes models use, naming an offered tool, with arguments
/// its schema accepts.
fn call_from_object(value: &Value, offered: &[ToolSpec]) -> Option<FoundCall> {
    let object = value.as_object()?;
    // OpenAI's shape nests the call under `function`; some models add `type`.
    if let Some(inner) = object.get("function").filter(|f| f.is_object()) {
        return call_from_object(inner, offered);
    }
    let name = ["name", "tool", "tool_name", "function"].iter().find_map(|key| object.get(*key)?.as_str())?;
    let tool = offered.iter().find(|tool| tool.name == name)?;
    let arguments = ["arguments", "parameters", "args", "input"]
        .iter()
        .find_map(|key| object.get(*key))
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    // Arguments sent as a JSON string, as OpenAI's wire format has them.
    let arguments = match arguments {
        Value::String(encoded) => serde_json::from_str(&encoded).ok()?,
        Value::Null => Value::Object(Map::new()),
        other => other,
    };
    let fields = arguments.as_object()?;
    let required = tool.parameters["required"].as_array().into_iter().flatten().filter_map(Value::as_str);
    for field in required {
        if !fields.contains_key(field) {
            return None;
        }
    }
    Some(FoundCall { name: tool.name.clone(), arguments: arguments.to_string() })
}

/// Each call once: a model that writes the same call twice in a reply meant it once.
fn unique(calls: Vec<FoundCall>) -> Vec<FoundCall> {
    let mut seen: Vec<FoundCall> = Vec::new();
    for call in calls {
        if !seen.contains(&call) {
            seen.push(call);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolSpec> {
        let tool =
            |name: &str, parameters: Value| ToolSpec { name: name.into(), description: String::new(), parameters };
        vec![
            tool("current_time", json!({ "type": "object", "properties": { "timezone": { "type": "string" } } })),
            tool(
                "note_write",
                json!({ "type": "object", "properties": { "title": {}, "body": {} }, "required": ["title", "body"] }),
            ),
        ]
    }

    fn call(name: &str, arguments: Value) -> FoundCall {
        FoundCall { name: name.into(), arguments: arguments.to_string() }
    }

    /// Replies recorded from SmolLM2-135M-Instruct (Q4_1, through llama.cpp), prompted with
    /// Qwen2.5's tool template and a `get_weather(city)` tool, asked "What is the weather in
    /// Paris?": greedy under the template's tool grammar, then sampled without it (seeds 1
    /// and 6).
    const RECORDED_TAGGED: &str =
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\n    \"city\": \"Paris\"\n}}\n</tool_call>";
    const RECORDED_BRACES: &str = "{{weather.simplifiedInnerText}} Paris\n\nIn the provided JSON object, \
         {weather.simplifiedInnerText} is a JSON object with the function name and arguments as a JSON string.";
    const RECORDED_FENCE: &str = "A user query \"Paris\" would include a function call of the type:\n\n```javascript\n\
         const get_sum = function(obj) {\n    return obj.getValue();\n};\n```\nThis is";

    /// Replies recorded from SmolLM2-135M-Instruct (Q4_1, through llama.cpp 0.1.146) under
    /// a Hermes-style template of ours (the one `tests/it/chat/local.rs` gives it), offered
    /// `get_weather(city)`, sampled at temperature 0.8 without the grammar, with the prompt
    /// and seed noted. What a model this small writes when asked for calls: JSON-ish text
    /// that is no call of an offered tool. None may become a call (it would reach the gate
    /// or run), and none may lose a word. llama.cpp's own parser fails on four of them.
    const RECORDED_HERMES_STYLE: [&str; 8] = [
        // a bare object with no name, then a tag around no JSON — asked for one bare object, seed 1
        "{\"city\":{\"type\": \"discribe\", \"description\": \"Paris\"}, \"location\":\"Paris\"}\n<tool_call>\n\"address\":{\"type\": \"text\", \"text\": \"The capital of France is Paris\"}\n</tool_call>",
        // a call of a tool it was not offered, `args` for arguments, inside an unclosed brace — asked for a list of calls, seed 4
        "Yes, called \"weather\" in Berlin and Rome!\n\nHere's how you can call this:\nhttps://www.forecastesirelia.com/en/en-b-8-12-20-109/weather-20220418.html\nThe default data in the request will be: {\n\n{\"name\": \"weather\", \"args\": {\"city\": \"madrid\", \"type\": \"function\", \"type\": \"json\"}}\n}\n\n(You can use `request({method: \"",
        // a tag around an object with no name — asked for a list of calls, seed 7
        "The answer could be:\n<tool_call>\n{\"type\": \"function\", \"description\": \"The weather is in Berlin and Rome, but it seems to be in Moscow, and the weather in Berlin does not match Moscow's weather.\"}\n</tool_call>\nThe output is a JSON map with two key-value pairs:\n{\n    \"type\": \"function\",\n    \"description\": \"The weather is in Berlin and Rome, but it seems to be in Moscow, and the weather in Berlin does not match Moscow's weather.\",\n    \"type\": \"json\",",
        // the instructions' placeholder copied into a tag — asked for a list of calls, seed 8
        "<tool_call>\n{\"name\": \"<name>\", \"arguments\": {<arguments>}}\n</tool_call>\n\nWere you trying to call a function that was passed to a JSON-Format?",
        // a placeholder name and a list for arguments, then an unclosed tag — asked for a list of calls, seed 9
        "In Berlin, the \"Weather in Berlin\" is a geocoder by the example API on MarsRescue. For example, the \"get_weather_detail_info_201654.json.example.json\" JSON in the example API would return:\n<tool_call>\n{\"name\": \"<her_name_here>\", \"arguments\": [<example_data>]}\n</tool_call>\nThe data contains:\n<tool_call>\n{\"location\": \"Mumbai\", \"locationType\": \"Land\", \"tempList",
        // a fenced schema-like object naming the tool but with no arguments, cut off — asked for a json block, seed 10
        "```json\n{\n  \"type\": \"function\",\n  \"description\": \"GET weather of Paris\",\n  \"function\": {\n    \"name\": \"get_weather\",\n    \"properties\": {\n      \"city\": {\n        \"key\": \"key1\",\n        \"value\": \"key1\"\n      },\n    \"type\": \"string\"\n  },\n  \"parameters\": {\n    \"type\": \"object\",\n    \"properties\": {\n      \"key\": {\n        \"type\": \"string\",\n        \"default\": \"key5\"\n      },\n    \"key\": {\n      \"type\":",
        // a fence with a tool it was not offered and a list for arguments — asked for two calls, seed 4
        "Use:\n```\nzf_example_1\n{\n  \"key\": \"key_1\"\n  \"value\": \"Data::Berlin::Tunamman is a key-value data type in R. It is a part of the core R. It supports the keyset of strings. It supports the map, with the keyset.\nExample: {\n  \"type\": \"function\",\n  \"language\": \"ruby\",\n  \"name\": \"get_weather_cities_1\",\n  \"arguments\": [\n    {\n      \"key\": \"key_",
        // a JavaScript object with unquoted keys — told to answer only by calling, seed 3
        "{url: 'https://en.wikipedia.org/wiki/Paris', description:\"Everywhere. }",
    ];

    fn weather() -> Vec<ToolSpec> {
        let parameters =
            json!({ "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] });
        vec![ToolSpec { name: "get_weather".into(), description: String::new(), parameters }]
    }

    #[test]
    fn recorded_small_model_replies() {
        let tagged = parse(RECORDED_TAGGED, &weather());
        assert_eq!(tagged.calls, [call("get_weather", json!({ "city": "Paris" }))]);
        assert_eq!(tagged.text, "");
        for prose in [RECORDED_BRACES, RECORDED_FENCE] {
            let parsed = parse(prose, &weather());
            assert_eq!((parsed.calls.len(), parsed.text.as_str()), (0, prose), "no call is made up");
        }
        for reply in RECORDED_HERMES_STYLE {
            let parsed = parse(reply, &weather());
            assert_eq!((parsed.calls.len(), parsed.text.as_str()), (0, reply), "no call is made up");
        }
        // Streaming, the braces hold the text back until the end shows they are no call.
        assert_eq!(hold_from(RECORDED_BRACES), RECORDED_BRACES.len(), "`{{w` starts no JSON object");
        assert_eq!(hold_from(RECORDED_FENCE), RECORDED_FENCE.find("```").unwrap());
    }

    #[test]
    fn earlier_calls_with_broken_arguments_are_mended_for_the_template() {
        let call = |arguments: &str| json!({ "id": "c", "type": "function", "function": { "name": "t", "arguments": arguments } });
        let mut messages = json!([
            { "role": "user", "content": "hi" },
            { "role": "assistant", "content": "", "tool_calls": [
                call(r#"{"query": "otter","#), call("not json"), call("[1]"), call(r#"{"a": 1}"#)
            ] },
        ]);
        mend_arguments(&mut messages);
        let mended: Vec<&str> = messages[1]["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["function"]["arguments"].as_str().unwrap())
            .collect();
        assert_eq!(mended, [r#"{"query":"otter"}"#, "{}", "{}", r#"{"a": 1}"#]);
    }

    #[test]
    fn plain_text_has_no_calls() {
        let parsed = parse("Hello! How can I help you today?", &tools());
        assert_eq!(parsed, Parsed { calls: vec![], text: "Hello! How can I help you today?".into() });
        // Braces in prose are not calls.
        let prose = "Use {curly} braces, or {\"name\": \"x\"} for an unknown tool.";
        assert_eq!(parse(prose, &tools()).calls, vec![]);
        assert_eq!(parse(prose, &tools()).text, prose);
    }

    #[test]
    fn hermes_tags_closed_and_unclosed() {
        let closed =
            "<tool_call>\n{\"name\": \"current_time\", \"arguments\": {\"timezone\": \"Europe/Paris\"}}\n</tool_call>";
        assert_eq!(parse(closed, &tools()).calls, [call("current_time", json!({ "timezone": "Europe/Paris" }))]);
        assert_eq!(parse(closed, &tools()).text, "");
        let unclosed = "Let me check.\n<tool_call>\n{\"name\": \"current_time\", \"arguments\": {}}";
        let parsed = parse(unclosed, &tools());
        assert_eq!((parsed.calls, parsed.text.trim()), (vec![call("current_time", json!({}))], "Let me check."));
    }

    #[test]
    fn two_tagged_calls_and_a_repeat() {
        let output = "<tool_call>\n{\"name\": \"current_time\", \"arguments\": {\"timezone\": \"UTC\"}}\n</tool_call>\n\
                      <tool_call>\n{\"name\": \"note_write\", \"arguments\": {\"title\": \"t\", \"body\": \"b\"}}\n</tool_call>\n\
                      <tool_call>\n{\"name\": \"current_time\", \"arguments\": {\"timezone\": \"UTC\"}}\n</tool_call>";
        assert_eq!(
            parse(output, &tools()).calls,
            [
                call("current_time", json!({ "timezone": "UTC" })),
                call("note_write", json!({ "title": "t", "body": "b" }))
            ]
        );
    }

    #[test]
    fn bare_objects_lists_and_markers() {
        let bare = "{\"name\": \"current_time\", \"parameters\": {\"timezone\": \"Asia/Tokyo\"}}";
        assert_eq!(parse(bare, &tools()).calls, [call("current_time", json!({ "timezone": "Asia/Tokyo" }))]);
        let list = "[TOOL_CALLS] [{\"name\": \"current_time\", \"arguments\": {}}]";
        assert_eq!(parse(list, &tools()).calls, [call("current_time", json!({}))]);
        let python_tag = "<|python_tag|>{\"name\": \"current_time\", \"parameters\": {}}";
        assert_eq!(parse(python_tag, &tools()).calls, [call("current_time", json!({}))]);
        let openai = "{\"type\": \"function\", \"function\": {\"name\": \"current_time\", \"arguments\": \"{\\\"timezone\\\": \\\"UTC\\\"}\"}}";
        assert_eq!(parse(openai, &tools()).calls, [call("current_time", json!({ "timezone": "UTC" }))]);
    }

    #[test]
    fn fenced_blocks_and_calls_inside_prose() {
        let fenced = "Sure, I will save that.\n```json\n{\"name\": \"note_write\", \"arguments\": {\"title\": \"Milk\", \"body\": \"Buy milk\"}}\n```";
        let parsed = parse(fenced, &tools());
        assert_eq!(parsed.calls, [call("note_write", json!({ "title": "Milk", "body": "Buy milk" }))]);
        assert_eq!(parsed.text.trim(), "Sure, I will save that.");
        let inline =
            "I'll look that up: {\"name\": \"current_time\", \"arguments\": {\"timezone\": \"UTC\"}} one moment.";
        let parsed = parse(inline, &tools());
        assert_eq!(parsed.calls, [call("current_time", json!({ "timezone": "UTC" }))]);
        assert_eq!(parsed.text, "I'll look that up:  one moment.");
    }

    #[test]
    fn malformed_json_is_mended_where_the_intent_is_plain() {
        let trailing =
            "<tool_call>\n{\"name\": \"current_time\", \"arguments\": {\"timezone\": \"UTC\",},}\n</tool_call>";
        assert_eq!(parse(trailing, &tools()).calls, [call("current_time", json!({ "timezone": "UTC" }))]);
        let unclosed = "<tool_call>\n{\"name\": \"note_write\", \"arguments\": {\"title\": \"a\", \"body\": \"b\"";
        assert_eq!(parse(unclosed, &tools()).calls, [call("note_write", json!({ "title": "a", "body": "b" }))]);
        let python = "```\n{'name': 'current_time'}\n```";
        assert_eq!(parse(python, &tools()).calls, [], "single quotes are not JSON; not guessed at");
        let literal = "{\"name\": \"current_time\", \"arguments\": {\"utc\": True}}";
        assert_eq!(parse(literal, &tools()).calls, [call("current_time", json!({ "utc": true }))]);
    }

    #[test]
    fn calls_that_do_not_fit_the_schema_are_not_calls() {
        let missing = "<tool_call>{\"name\": \"note_write\", \"arguments\": {\"title\": \"only a title\"}}</tool_call>";
        let parsed = parse(missing, &tools());
        assert_eq!(parsed.calls, []);
        assert!(parsed.text.contains("only a title"), "the text stays for the person to see");
        let unknown = "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>";
        assert_eq!(parse(unknown, &tools()).calls, []);
        let not_object = "{\"name\": \"current_time\", \"arguments\": [1, 2]}";
        assert_eq!(parse(not_object, &tools()).calls, []);
    }

    #[test]
    fn a_streaming_reply_is_held_back_from_where_a_call_may_begin() {
        let cases = [
            ("Hello there", 11),
            ("Let me check. <tool_call>\n{", 14),
            ("Let me check. <tool", 14),
            ("Sure: {\"name\"", 6),
            ("Sure: { \"name\"", 6),
            ("x = {a, b} is a set", 19),
            ("ends with {", 10),
            ("```json\n{", 0),
            ("Code: `", 6),
            ("[TOOL_CALLS] [", 0),
            ("", 0),
        ];
        for (text, expected) in cases {
            assert_eq!(hold_from(text), expected, "{text:?}");
        }
    }

    #[test]
    fn bounds_too_large_for_the_grammar_are_dropped_and_the_rest_kept() {
        let mut tools = json!([{ "type": "function", "function": { "name": "note_write", "parameters": {
            "type": "object",
            "properties": {
                "title": { "type": "string", "maxLength": 200 },
                "text": { "type": "string", "maxLength": 65536, "minLength": 1 },
                "tags": { "type": "array", "items": { "type": "string", "maxLength": 1001 }, "maxItems": 5000 },
                "maxLength": { "type": "integer", "maximum": 1000000 },
                "odd": { "type": "string", "maxLength": "many" },
                "shape": { "type": "object", "default": { "maxLength": 5000 } }
            }
        }}}]);
        loosen_for_grammar(&mut tools);
        let properties = &tools[0]["function"]["parameters"]["properties"];
        assert_eq!(properties["title"], json!({ "type": "string", "maxLength": 200 }));
        assert_eq!(properties["text"], json!({ "type": "string", "minLength": 1 }));
        assert_eq!(properties["tags"], json!({ "type": "array", "items": { "type": "string" } }));
        // A property that happens to be called maxLength is a schema, not a bound.
        assert_eq!(properties["maxLength"], json!({ "type": "integer", "maximum": 1000000 }));
        assert_eq!(properties["odd"], json!({ "type": "string" }));
        assert_eq!(properties["shape"]["default"], json!({ "maxLength": 5000 }), "a value, not a schema");
    }

    #[test]
    fn a_tool_servers_refs_are_inlined_and_its_patterns_and_cycles_loosened() {
        let mut tools = json!([{ "type": "function", "function": { "name": "mcp__files__write", "parameters": {
            "type": "object",
            "$defs": {
                "path": { "type": "string", "pattern": "^(/[^/]+)+$", "maxLength": 4096 },
                "node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/node" } } }
            },
            "properties": {
                "path": { "$ref": "#/$defs/path" },
                "tree": { "$ref": "#/$defs/node" },
                "remote": { "$ref": "https://example.org/schema.json" },
                "missing": { "$ref": "#/$defs/nowhere" },
                "keep": { "type": "string", "default": { "$ref": "#/a value" } }
            }
        }}}]);
        loosen_for_grammar(&mut tools);
        let parameters = &tools[0]["function"]["parameters"];
        assert!(parameters.get("$defs").is_none(), "{parameters}");
        assert_eq!(parameters["properties"]["path"], json!({ "type": "string" }));
        assert_eq!(parameters["properties"]["remote"], json!({}));
        assert_eq!(parameters["properties"]["missing"], json!({}));
        assert_eq!(parameters["properties"]["keep"]["default"], json!({ "$ref": "#/a value" }));
        let mut depth = 0;
        let mut node = &parameters["properties"]["tree"];
        while let Some(next) = node.pointer("/properties/next") {
            node = next;
            depth += 1;
        }
        assert_eq!(node, &json!({}), "a cycle ends in any value");
        assert!(depth <= REF_DEPTH, "{depth}");
        assert!(!tools.to_string().contains("$ref\":\"#/$defs"), "{tools}");
    }
}
