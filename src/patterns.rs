//! `*` patterns: the one matcher for tool names, model names (`provider/model`) and rule
//! arguments. Pure.

/// Whether `name` matches one of the patterns, where `*` stands for any run of characters
/// (`*`, `work/*`, `*/llama-3.1-8b`, an exact name). Names compare case-insensitively.
pub fn allowed(patterns: &[String], name: &str) -> bool {
    patterns.iter().any(|p| glob(&p.to_lowercase(), &name.to_lowercase()))
}

/// `*` for any run of characters; everything else compared exactly.
pub fn glob(pattern: &str, text: &str) -> bool {
    let Some((head, rest)) = pattern.split_once('*') else { return pattern == text };
    let Some(mut text) = text.strip_prefix(head) else { return false };
    let mut parts: Vec<&str> = rest.split('*').collect();
    let tail = parts.pop().unwrap_or("");
    for part in parts {
        match text.find(part) {
            Some(at) => text = &text[at + part.len()..],
            None => return false,
        }
    }
    text.len() >= tail.len() && text.ends_with(tail)
}
