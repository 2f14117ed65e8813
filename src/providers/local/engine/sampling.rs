//! How the engine picks a reply's tokens: the samplers, the grammar that keeps a tool
//! call well-formed, and the replies a test forces.

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::model::{ChatTemplateResult, GrammarTriggerType};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

use super::{Session, seed};

impl Session<'_> {
    /// The sampler that keeps a tool call's JSON well-formed, as the template's grammar
    /// asks: for tool-call syntax only once the model starts a call (lazy), or for the
    /// whole reply. None when the template gives none or llama.cpp cannot use it.
    pub(super) fn grammar(&self, rendered: &ChatTemplateResult) -> Option<LlamaSampler> {
        let grammar = rendered.grammar.as_deref()?;
        let sampler = if rendered.grammar_lazy {
            let mut patterns = Vec::new();
            let mut tokens = Vec::new();
            for trigger in &rendered.grammar_triggers {
                match trigger.trigger_type {
                    GrammarTriggerType::Token => tokens.extend(trigger.token),
                    GrammarTriggerType::Word => patterns.push(regex_escape(&trigger.value)),
                    GrammarTriggerType::Pattern => patterns.push(trigger.value.clone()),
                    GrammarTriggerType::PatternFull => {
                        let value = trigger.value.as_str();
                        let start = if value.starts_with('^') { "" } else { "^" };
                        let end = if value.ends_with('$') { "" } else { "$" };
                        patterns.push(format!("{start}{value}{end}"));
                    }
                }
            }
            if patterns.is_empty() && tokens.is_empty() {
                return None;
            }
            LlamaSampler::grammar_lazy_patterns(self.model, grammar, "root", &patterns, &tokens)
        } else {
            LlamaSampler::grammar(self.model, grammar, "root")
        };
        sampler.map_err(|err| tracing::warn!(model = %self.id, error = %err, "tool-call grammar not usable")).ok()
    }
}

/// Picks a reply's tokens. The grammars (a forced reply's, the template's for tool calls)
/// are first asked only about the token the other samplers chose, and filter the whole
/// vocabulary only when they refuse it, as llama.cpp's own sampling does: checking every
/// one of a vocabulary's 50,000–150,000 tokens at every step is what made generation
/// under a grammar slow, and the model's own choice is almost always allowed.
pub(super) struct Sampler {
    grammars: Vec<LlamaSampler>,
    /// Shapes the distribution and draws from it.
    draw: LlamaSampler,
}

impl Sampler {
    pub(super) fn new(grammars: Vec<LlamaSampler>) -> Self {
        let draw = LlamaSampler::chain_simple([
            LlamaSampler::top_k(40),
            LlamaSampler::top_p(0.95, 1),
            LlamaSampler::min_p(0.05, 1),
            LlamaSampler::temp(0.7),
            LlamaSampler::dist(seed()),
        ]);
        Self { grammars, draw }
    }

    /// The next token after the last one evaluated, taken by every sampler; or why there
    /// is none. The logits read are the first output row of the last batch: every batch
    /// decoded here asks for one output only (the prompt's last token, or the new one).
    pub(super) fn next(&mut self, context: &LlamaContext) -> Result<LlamaToken, String> {
        if self.grammars.is_empty() {
            // llama.cpp's own path, without copying the logits out.
            return Ok(self.draw.sample(context, -1));
        }
        let mut candidates = context.token_data_array();
        candidates.apply_sampler(&self.draw);
        let mut token = candidates.selected_token().ok_or("no token was drawn")?;
        if !self.allows(token) {
            let mut candidates = context.token_data_array();
            for grammar in &self.grammars {
                candidates.apply_sampler(grammar);
            }
            candidates.apply_sampler(&self.draw);
            token = candidates
                .selected_token()
                .filter(|token| self.allows(*token))
                .ok_or("the tool-call grammar allows no token here")?;
        }
        for grammar in &mut self.grammars {
            // A lazy grammar's trigger may bring in text it then refuses: it is spent, and
            // asking it about another token would abort the process.
            grammar
                .try_accept(token)
                .map_err(|err| format!("the tool-call grammar could not follow the reply: {err}"))?;
        }
        self.draw.accept(token);
        Ok(token)
    }

    fn allows(&self, token: LlamaToken) -> bool {
        self.grammars.iter().all(|grammar| {
            let mut one = LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 0.0, 0.0)], false);
            one.apply_sampler(grammar);
            one.data[0].logit().is_finite()
        })
    }
}

/// What a test makes the model write: a whole reply, or how it begins.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(untagged)]
pub(super) enum Forced {
    Exactly(String),
    StartsWith(StartsWith),
}

#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StartsWith {
    starts: String,
}

impl Forced {
    pub(super) fn grammar(&self) -> String {
        match self {
            Self::Exactly(text) => format!("root ::= {}", gbnf_literal(text)),
            Self::StartsWith(StartsWith { starts }) => format!("root ::= {} .*", gbnf_literal(starts)),
        }
    }
}

/// Debug builds: what `SKALD_TEST_LOCAL_OUTPUTS` lists, one per request: a JSON list of
/// replies (strings) and beginnings (`{"starts": "…"}`).
pub(super) fn forced_outputs() -> std::collections::VecDeque<Forced> {
    if !cfg!(debug_assertions) {
        return std::collections::VecDeque::new();
    }
    std::env::var("SKALD_TEST_LOCAL_OUTPUTS").ok().and_then(|list| serde_json::from_str(&list).ok()).unwrap_or_default()
}

/// `text` as a GBNF string literal.
fn gbnf_literal(text: &str) -> String {
    let mut literal = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '"' => literal.push_str("\\\""),
            '\\' => literal.push_str("\\\\"),
            '\n' => literal.push_str("\\n"),
            '\r' => literal.push_str("\\r"),
            '\t' => literal.push_str("\\t"),
            other => literal.push(other),
        }
    }
    format!("\"{literal}\"")
}

/// `text` as a regular expression matching it literally.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_grammar_quotes_what_gbnf_would_read() {
        assert_eq!(Forced::Exactly("a\"b\\c\nd".into()).grammar(), r#"root ::= "a\"b\\c\nd""#);
        let forced: Vec<Forced> = serde_json::from_str(r#"["hi", {"starts": "<tool_call>\n"}]"#).unwrap();
        assert_eq!(forced[1].grammar(), r#"root ::= "<tool_call>\n" .*"#);
    }

    #[test]
    fn trigger_words_are_matched_literally() {
        assert_eq!(regex_escape("<tool_call>"), "<tool_call>");
        assert_eq!(regex_escape("[TOOL_CALLS]"), "\\[TOOL_CALLS\\]");
        assert_eq!(regex_escape("a.b*"), "a\\.b\\*");
    }
}
