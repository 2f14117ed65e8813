//! How the engine reads a reply's raw text: with llama.cpp's parser for the model's chat
//! format, then for tool calls written outside it, so call syntax never reaches the
//! screen (§9.1).

use llama_cpp_2::model::ChatTemplateResult;
use llama_cpp_2::openai::ChatParseStateOaicompat;

use super::super::tool_calls;
use crate::providers::{Delta, ToolSpec, openai};

/// Turns the model's raw text into deltas with llama.cpp's parser for its chat format, so
/// tool calls written in the model's own syntax arrive as tool calls. If the parser cannot
/// follow, what it has not passed on yet goes out as text, and so does the rest.
pub(super) struct Parser {
    state: Option<ChatParseStateOaicompat>,
    model: String,
    /// All the raw text fed in, and all the text the parser passed on as content.
    fed: String,
    content: String,
    /// The calls the parser has read so far, passed on only once it has read the whole
    /// reply: a parser that gives up part-way has read a call it cannot vouch for (its
    /// arguments cut off where it stopped), and the reply's text, call included, goes to
    /// our own reading instead.
    calls: Vec<Delta>,
}

impl Parser {
    pub(super) fn new(rendered: &ChatTemplateResult, model: &str) -> Self {
        let state = rendered.streaming_state_oaicompat().ok();
        Self { state, model: model.to_owned(), fed: String::new(), content: String::new(), calls: Vec::new() }
    }

    pub(super) fn feed(&mut self, text: &str) -> Vec<Delta> {
        if text.is_empty() {
            return Vec::new();
        }
        self.fed.push_str(text);
        self.update(text, true)
    }

    /// The end of the reply; `cut` when the length limit ended it, which may be inside a
    /// call: the parser would then hand on a call the model never finished.
    pub(super) fn finish(&mut self, cut: bool) -> Vec<Delta> {
        if self.state.is_none() {
            return Vec::new();
        }
        if cut {
            // Never a call the model did not finish, whatever else is lost.
            let mut held = self.give_up();
            held.retain(|delta| matches!(delta, Delta::Text(_)));
            return held;
        }
        let mut deltas = self.update("", false);
        if self.state.is_some() {
            deltas.append(&mut self.calls);
        }
        deltas
    }

    fn update(&mut self, text: &str, partial: bool) -> Vec<Delta> {
        let Some(state) = self.state.as_mut() else { return vec![Delta::Text(text.to_owned())] };
        match state.update(text, partial) {
            Ok(diffs) => {
                let mut deltas = Vec::new();
                for diff in diffs {
                    let chunk = format!(r#"{{"choices":[{{"delta":{diff}}}]}}"#);
                    match openai::parse_chunk(&chunk) {
                        Ok(parsed) => deltas.extend(parsed),
                        Err(err) => tracing::warn!(model = %self.model, error = %err, "unreadable parser delta"),
                    }
                }
                let (calls, deltas): (Vec<Delta>, Vec<Delta>) =
                    deltas.into_iter().partition(|delta| matches!(delta, Delta::ToolCall { .. }));
                self.calls.extend(calls);
                for delta in &deltas {
                    if let Delta::Text(text) = delta {
                        self.content.push_str(text);
                    }
                }
                deltas
            }
            Err(err) => {
                tracing::debug!(model = %self.model, error = %err, "the chat parser gave up; the rest is plain text");
                self.give_up()
            }
        }
    }

    /// Stops parsing: what the parser held back is handed on as text.
    fn give_up(&mut self) -> Vec<Delta> {
        self.state = None;
        match self.fed.strip_prefix(self.content.as_str()) {
            // What it did not pass on as content, its calls included, is read again
            // by ours.
            Some(unsent) => {
                self.calls.clear();
                if unsent.is_empty() { Vec::new() } else { vec![Delta::Text(unsent.to_owned())] }
            }
            // Its content is no prefix of the reply (it rewrote something): its calls
            // cannot be read again, so they go on as it read them.
            None => {
                tracing::warn!(model = %self.model, "the chat parser gave up on a reply it had rewritten");
                std::mem::take(&mut self.calls)
            }
        }
    }
}

/// Holds back reply text that may be the start of a tool call written outside the
/// template's syntax, and at the reply's end turns what it held into calls — or releases
/// it as text. Calls the template's parser found pass straight through.
pub(super) struct Shaper {
    offered: Vec<ToolSpec>,
    text: String,
    shown: usize,
    /// Calls passed on so far; new ones are numbered after them.
    pub(super) calls: usize,
}

impl Shaper {
    pub(super) fn new(offered: &[ToolSpec]) -> Self {
        Self { offered: offered.to_vec(), text: String::new(), shown: 0, calls: 0 }
    }

    pub(super) fn push(&mut self, deltas: Vec<Delta>) -> Vec<Delta> {
        let mut out = Vec::new();
        let mut calls = Vec::new();
        for delta in deltas {
            match delta {
                Delta::Text(text) => self.text.push_str(&text),
                Delta::ToolCall { index, .. } => {
                    self.calls = self.calls.max(index + 1);
                    calls.push(delta);
                }
                other => calls.push(other),
            }
        }
        let safe = if self.offered.is_empty() {
            self.text.len()
        } else {
            self.shown + tool_calls::hold_from(&self.text[self.shown..])
        };
        if safe > self.shown {
            out.push(Delta::Text(self.text[self.shown..safe].to_owned()));
            self.shown = safe;
        }
        out.extend(calls);
        out
    }

    /// What is held, handed over: nothing is held after.
    fn take_held(&mut self) -> String {
        let held = self.text[self.shown..].to_owned();
        self.shown = self.text.len();
        held
    }

    /// What is held, as text.
    pub(super) fn release(&mut self) -> Vec<Delta> {
        let held = self.take_held();
        if held.is_empty() { Vec::new() } else { vec![Delta::Text(held)] }
    }

    pub(super) fn finish(&mut self) -> Vec<Delta> {
        let held = self.take_held();
        if held.is_empty() {
            return Vec::new();
        }
        let parsed = tool_calls::parse(&held, &self.offered);
        if parsed.calls.is_empty() {
            return vec![Delta::Text(held)];
        }
        let mut out = Vec::new();
        if !parsed.text.trim().is_empty() {
            out.push(Delta::Text(parsed.text));
        }
        for call in parsed.calls {
            out.push(Delta::ToolCall {
                index: self.calls,
                id: Some(format!("call_{}", crate::ids::random_id("local"))),
                name: Some(call.name),
                arguments: call.arguments,
            });
            self.calls += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(deltas: &[Delta]) -> String {
        deltas.iter().filter_map(|d| if let Delta::Text(t) = d { Some(t.as_str()) } else { None }).collect()
    }

    #[test]
    fn what_is_held_can_be_released_as_text() {
        let offered = [ToolSpec { name: "current_time".into(), description: String::new(), parameters: json!({}) }];
        let mut shaper = Shaper::new(&offered);
        let cut = "Sure. <tool_call>\n{\"name\": \"current_time\", \"arguments\": {\"zone\": \"Eur";
        let shown = texts(&shaper.push(vec![Delta::Text(cut.into())]));
        assert_eq!(shown, "Sure. ");
        let released = shaper.release();
        assert_eq!(texts(&released), &cut["Sure. ".len()..]);
        assert!(released.iter().all(|d| matches!(d, Delta::Text(_))), "{released:?}");
        assert_eq!(shaper.calls, 0);
    }

    #[test]
    fn a_call_written_in_tags_is_held_back_and_becomes_a_call() {
        let offered = [ToolSpec { name: "current_time".into(), description: String::new(), parameters: json!({}) }];
        let mut shaper = Shaper::new(&offered);
        let mut shown = String::new();
        for piece in
            ["Let me ", "check. <tool", "_call>\n{\"name\": \"current_time\", ", "\"arguments\": {}}\n</tool_call>"]
        {
            shown.push_str(&texts(&shaper.push(vec![Delta::Text(piece.into())])));
        }
        assert_eq!(shown, "Let me check. ", "nothing of the call was shown");
        let end = shaper.finish();
        assert!(
            matches!(&end[..], [Delta::ToolCall { index: 0, name: Some(name), arguments, .. }]
            if name == "current_time" && arguments == "{}"),
            "{end:?}"
        );
        assert_eq!(shaper.calls, 1);
    }

    #[test]
    fn held_text_that_is_no_call_is_released_at_the_end() {
        let offered = [ToolSpec { name: "current_time".into(), description: String::new(), parameters: json!({}) }];
        let mut shaper = Shaper::new(&offered);
        let shown = texts(&shaper.push(vec![Delta::Text("A set: {\"a\": 1}".into())]));
        assert_eq!(shown, "A set: ");
        assert_eq!(texts(&shaper.finish()), "{\"a\": 1}");
        // Without tools nothing is held.
        let mut plain = Shaper::new(&[]);
        assert_eq!(texts(&plain.push(vec![Delta::Text("<tool_call>{".into())])), "<tool_call>{");
    }
}
