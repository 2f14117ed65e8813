//! Approval rules as data (§8.4): what a rule says — which tool, which arguments, for whom,
//! with what effect — and how its arguments are matched. Stored by `store`, weighed by
//! `agent::gate`. Pure.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

// Argument patterns compare case too (`glob`): arguments are data, not names.
use crate::patterns::glob;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "RuleEffect")]
pub enum Effect {
    Allow,
    Deny,
    Require,
}

/// One rule, shared (from the shared database) or a person's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "RuleInput")]
pub struct Rule {
    /// A tool name pattern (`*` for any run of characters).
    pub tool: String,
    /// What the call's arguments must hold for the rule to apply, if it looks at them.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub args: Option<ArgsPattern>,
    /// The role it applies to; none for every role.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub role: Option<String>,
    pub effect: Effect,
    pub priority: i64,
}

/// A rule's condition on a call's arguments. Read from JSON as it is read back from storage
/// ([`ArgsPattern::from_stored`]): a map only when every key is a pointer, so a rule means
/// the same before and after it is stored (the fuzzer found `{"F/url": …}` did not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(untagged, from = "ArgsJson")]
pub enum ArgsPattern {
    /// `{"/url": "https://example.org/*"}`: the value each JSON pointer names matches its
    /// pattern (all of them). Only that value counts — a decoy field elsewhere that holds
    /// an allowed text proves nothing — and URL values are normalised first, so `HTTP://`,
    /// `/./` or `%62` spell the same address as their plain forms.
    Fields(BTreeMap<String, String>),
    /// A pattern over the whole arguments as compact JSON, as rules were written before
    /// pointers. Kept for rules that refuse or ask (matching too much is their safe side);
    /// an allow written so never matches, since any field could satisfy it.
    Text(String),
}

/// A condition as JSON carries it, before it is read the way storage reads it.
#[derive(Deserialize)]
#[serde(untagged)]
enum ArgsJson {
    Fields(BTreeMap<String, String>),
    Text(String),
}

impl From<ArgsJson> for ArgsPattern {
    fn from(json: ArgsJson) -> Self {
        match json {
            ArgsJson::Fields(fields) => {
                Self::from_stored(serde_json::to_string(&fields).expect("a map of strings serialises"))
            }
            ArgsJson::Text(text) => Self::from_stored(text),
        }
    }
}

impl ArgsPattern {
    /// The condition as stored: a pointer map as JSON, a text pattern as itself.
    pub fn to_stored(&self) -> String {
        match self {
            Self::Fields(fields) => serde_json::to_string(fields).expect("a map of strings serialises"),
            Self::Text(text) => text.clone(),
        }
    }

    /// Reads a stored condition: a JSON object whose keys are all pointers is a field map,
    /// anything else an old text pattern.
    pub fn from_stored(stored: String) -> Self {
        match serde_json::from_str::<BTreeMap<String, String>>(&stored) {
            Ok(fields) if !fields.is_empty() && fields.keys().all(|k| k.starts_with('/')) => Self::Fields(fields),
            _ => Self::Text(stored),
        }
    }

    /// Whether a call's arguments meet this condition, for a rule with `effect`.
    pub fn matches(&self, effect: Effect, arguments: &Value) -> bool {
        match self {
            Self::Fields(fields) => fields.iter().all(|(pointer, pattern)| match arguments.pointer(pointer) {
                Some(Value::String(text)) => glob(&normalise_url_pattern(pattern), &normalise_url(text)),
                Some(other) => glob(pattern, &canonical(other)),
                None => false,
            }),
            Self::Text(pattern) => effect != Effect::Allow && glob(pattern, &canonical(arguments)),
        }
    }
}

impl std::fmt::Display for ArgsPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Fields(fields) => {
                let parts: Vec<String> =
                    fields.iter().map(|(pointer, pattern)| format!("{pointer} = {pattern}")).collect();
                f.write_str(&parts.join(" and "))
            }
            Self::Text(text) => f.write_str(text),
        }
    }
}

/// A URL as rules compare it (RFC 3986 §6.2.2): scheme and host lower-case, unreserved
/// characters percent-decoded, dot segments removed. Text that is no absolute URL is
/// returned as it is.
pub fn normalise_url(text: &str) -> String {
    let Some((scheme, _)) = text.split_once("://") else { return text.to_owned() };
    if scheme.is_empty() || !scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')) {
        return text.to_owned();
    }
    // Decoding unreserved characters never changes what a URL names; doing it first lets
    // the parser see `%2e%2e` as the `..` it is.
    let decoded = decode_unreserved(text.trim());
    match url::Url::parse(&decoded) {
        Ok(url) => url.to_string(),
        Err(_) => decoded,
    }
}

/// A pattern written for a URL field, with its scheme and host lower-cased like the
/// values it is compared with (its `*`s left alone).
fn normalise_url_pattern(pattern: &str) -> String {
    let Some((scheme, rest)) = pattern.split_once("://") else { return pattern.to_owned() };
    let host_end = rest.find('/').unwrap_or(rest.len());
    format!("{}://{}{}", scheme.to_ascii_lowercase(), rest[..host_end].to_ascii_lowercase(), &rest[host_end..])
}

fn decode_unreserved(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%'
            && let Some(hex) = text.get(at + 1..at + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
            && (byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~'))
        {
            out.push(byte);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// JSON with object keys in sorted order, whatever order the model wrote them in.
pub fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> =
                keys.iter().map(|k| format!("{}:{}", Value::String((*k).clone()), canonical(&map[*k]))).collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}
