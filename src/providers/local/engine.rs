//! The engine inside the built-in model's worker process (`worker`): llama.cpp holding one
//! model, its context and the tokens its KV cache holds, answering one request at a time.
//!
//! Each request's prompt is rendered by the model's own chat template through llama.cpp's
//! OpenAI-compatible path (which lays out tools and parses tool calls back out), and only
//! the part after what the KV cache already holds is evaluated: in a conversation that is
//! the new message, not the whole history again. What the cache holds is reused only for
//! the same person (the request's partition): each person's tokens are a sequence of
//! their own in the one KV cache ([`SLOTS`] of them share its cells), and another
//! person's request never reads them, so neither the figures nor the speed of a reply
//! tell anyone what someone else last said — while two people taking turns each keep
//! their own conversation cached.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{AddBos, ChatTemplateResult, GrammarTriggerType, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::openai::{ChatParseStateOaicompat, OpenAIChatTemplateParams};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

use super::protocol::{FromWorker, Generate as Job, ModelSpec, RequestId};
use super::worker::{Cancelled, Output};
use super::{Loaded, RequestStats, Settings, fit, tool_calls};
use crate::providers::{Delta, ProviderError, ToolSpec, openai};

/// llama.cpp's process-wide state, started on first use.
static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

fn backend() -> Result<&'static LlamaBackend, ProviderError> {
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|err| err.to_string())
        })
        .as_ref()
        .map_err(|err| ProviderError::Local(format!("the built-in model's engine could not start: {err}")))
}

/// How many people's tokens the KV cache keeps at once, each in a sequence of its own;
/// they share the context's cells, and the least recently used gives way when another
/// needs room. Unused sequences cost nothing.
const SLOTS: usize = 4;

/// Chat templates use ChatML when a model carries none.
const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + \
     '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

/// Where a request's reply goes, and whether anyone still listens.
struct Reply<'a> {
    id: RequestId,
    out: &'a Output,
    cancelled: &'a Cancelled,
}

impl Reply<'_> {
    fn is_closed(&self) -> bool {
        self.cancelled.contains(self.id)
    }

    /// Sends the next part of the reply, or its failure; an error when it was cancelled.
    fn blocking_send(&self, part: Result<Vec<Delta>, ProviderError>) -> Result<(), ()> {
        if self.is_closed() {
            return Err(());
        }
        self.out.send(&match part {
            Ok(deltas) => FromWorker::Deltas { id: self.id, deltas },
            Err(err) => FromWorker::Failed { id: self.id, message: err.to_string() },
        });
        Ok(())
    }
}

/// Reads a file's parameter count without loading its weights.
pub(super) fn inspect(path: &Path) -> Result<u64, String> {
    let backend = backend().map_err(|err| err.to_string())?;
    let params = LlamaModelParams::default().with_no_alloc(true);
    let model = LlamaModel::load_from_file(backend, path, &params).map_err(|err| {
        format!("it could not be read ({err}); it may be damaged or of an architecture this version does not know")
    })?;
    Ok(model.n_params())
}

/// Loads the model `spec` names, once this CPU is known to run what the engine was
/// compiled for (Skald checked before starting the worker; this is the last line).
pub(super) fn load(spec: &ModelSpec) -> Result<LlamaModel, String> {
    fit::check_this_cpu()?;
    let (id, path) = (&spec.id, &spec.path);
    let backend = backend().map_err(|err| err.to_string())?;
    LlamaModel::load_from_file(backend, path, &LlamaModelParams::default().with_use_mmap(true)).map_err(|err| {
        format!(
            "the built-in model {id} could not be loaded ({err}): the file may be damaged. An administrator can \
             import it again in Settings → Models."
        )
    })
}

/// A loaded model with its context, and the tokens its KV cache holds for each person.
pub(super) struct Session<'m> {
    model: &'m LlamaModel,
    id: String,
    loaded: Loaded,
    /// Each sequence of the KV cache: whose it is and what it holds; the sequence id is
    /// the index.
    slots: Vec<Slot>,
    /// The sequence of the request being answered.
    current: usize,
    /// Counts requests, for which slot was used least recently.
    clock: u64,
    /// Debug builds: abort at the next token while this file exists
    /// (`SKALD_TEST_LOCAL_ABORT_FILE`), as a fault inside llama.cpp would; hang there,
    /// deaf to cancels, while that one does (`SKALD_TEST_LOCAL_HANG_FILE`), as a deadlock
    /// would.
    abort_file: Option<PathBuf>,
    hang_file: Option<PathBuf>,
    context: LlamaContext<'m>,
    template: LlamaChatTemplate,
    n_ctx: u32,
    /// Whether the tokenizer starts a prompt with its BOS token.
    add_bos: bool,
    max_output: u32,
    ignore_eos: bool,
    /// Test builds: what the model is made to write, one per request, by a grammar
    /// (`SKALD_TEST_LOCAL_OUTPUTS`).
    forced: std::collections::VecDeque<Forced>,
}

/// One sequence of the KV cache: the tokens it holds at positions 0.., for one person.
#[derive(Default)]
struct Slot {
    /// The partition of the requests that filled it.
    owner: Option<u64>,
    cached: Vec<LlamaToken>,
    used: u64,
}

/// How a reply ended.
enum Ending {
    /// The model ended it, or it hit a limit: the finish reason.
    Finished(&'static str),
    /// The turn stopped listening.
    Stopped,
}

impl<'m> Session<'m> {
    /// A context for `model`, loaded for `spec` since `started`.
    pub(super) fn new(
        model: &'m LlamaModel,
        spec: &ModelSpec,
        settings: &Settings,
        started: Instant,
    ) -> Result<Self, String> {
        let (id, n_ctx) = (spec.id.as_str(), spec.context);
        let backend = backend().map_err(|err| err.to_string())?;
        let threads = i32::try_from(settings.threads).unwrap_or(4);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(512)
            .with_n_threads(threads)
            .with_n_threads_batch(threads)
            // One sequence a person, all able to reach the whole context, sharing its cells.
            .with_n_seq_max(SLOTS as u32)
            .with_kv_unified(true);
        let context = model
            .new_context(backend, params)
            .map_err(|err| format!("the built-in model {id} could not make room for its context: {err}"))?;
        let template = match model.chat_template(None) {
            Ok(template) => template,
            Err(_) => LlamaChatTemplate::new(CHATML).map_err(|err| format!("no chat template for {id}: {err}"))?,
        };
        let add_bos = model.meta_val_str("tokenizer.ggml.add_bos_token").map_or(true, |v| v == "true");
        let loaded = Loaded {
            model: id.to_owned(),
            context: n_ctx,
            load_ms: started.elapsed().as_millis() as u64,
            footprint_bytes: spec.footprint_bytes,
        };
        tracing::info!(model = id, ms = loaded.load_ms, context = n_ctx, "local model loaded");
        let hook = |name: &str| std::env::var_os(name).filter(|_| cfg!(debug_assertions)).map(PathBuf::from);
        Ok(Self {
            model,
            id: id.to_owned(),
            loaded,
            slots: (0..SLOTS).map(|_| Slot::default()).collect(),
            current: 0,
            clock: 0,
            abort_file: hook("SKALD_TEST_LOCAL_ABORT_FILE"),
            hang_file: hook("SKALD_TEST_LOCAL_HANG_FILE"),
            context,
            template,
            n_ctx,
            add_bos,
            max_output: settings.max_output,
            ignore_eos: settings.ignore_eos,
            forced: forced_outputs(),
        })
    }

    pub(super) fn loaded(&self) -> &Loaded {
        &self.loaded
    }

    /// Answers one request, streaming to `out`; returns how it went. Failures go to the
    /// reply as errors.
    pub(super) fn answer(&mut self, job: &Job, out: &Output, cancelled: &Cancelled) -> RequestStats {
        let mut stats = RequestStats { model: self.id.clone(), ..RequestStats::default() };
        let reply = Reply { id: job.id, out, cancelled };
        if reply.is_closed() {
            stats.stopped = true;
            return stats;
        }
        self.seat(job.partition);
        let result = self.run(job, &reply, &mut stats);
        match result {
            Ok(Ending::Stopped) => stats.stopped = true,
            Ok(Ending::Finished(_)) => {}
            Err(err) => {
                // What this sequence holds is no longer known: its next request starts afresh.
                self.empty(self.current);
                let _ = reply.blocking_send(Err(err));
            }
        }
        stats
    }

    /// Makes the sequence of `partition` the current one: theirs if they have one, else a
    /// free one, else the least recently used, emptied. Another person's tokens are never
    /// reused: they would show in the figures and in how soon the reply starts.
    fn seat(&mut self, partition: u64) {
        self.clock += 1;
        let seq = match self.slots.iter().position(|slot| slot.owner == Some(partition)) {
            Some(theirs) => theirs,
            None => {
                let free = self.slots.iter().position(|slot| slot.owner.is_none());
                let seq = free.unwrap_or_else(|| self.least_recently_used(|_, _| true).unwrap_or(0));
                self.empty(seq);
                self.slots[seq].owner = Some(partition);
                seq
            }
        };
        self.slots[seq].used = self.clock;
        self.current = seq;
    }

    /// The sequence used least recently, of those `eligible` allows.
    fn least_recently_used(&self, eligible: impl Fn(usize, &Slot) -> bool) -> Option<usize> {
        (0..self.slots.len()).filter(|seq| eligible(*seq, &self.slots[*seq])).min_by_key(|seq| self.slots[*seq].used)
    }

    /// Empties sequence `seq`; it keeps its owner and its place in the order of use, so
    /// its owner's next request starts it afresh. A cache that cannot empty one sequence
    /// (some recurrent models) is emptied whole.
    fn empty(&mut self, seq: usize) {
        let cleared = u32::try_from(seq).ok().and_then(|id| self.context.clear_kv_cache_seq(Some(id), None, None).ok());
        if cleared == Some(true) {
            self.slots[seq].cached.clear();
            return;
        }
        self.context.clear_kv_cache();
        for slot in &mut self.slots {
            slot.cached.clear();
        }
    }

    fn seq_id(&self) -> i32 {
        self.current as i32
    }

    /// Decodes `batch`; when the cells of the cache are all taken, other people's
    /// sequences give way, least recently used first.
    fn decode(&mut self, batch: &mut LlamaBatch) -> Result<(), ProviderError> {
        loop {
            match self.context.decode(batch) {
                Ok(()) => return Ok(()),
                Err(llama_cpp_2::DecodeError::NoKvCacheSlot) => {
                    let current = self.current;
                    let Some(victim) = self.least_recently_used(|seq, slot| seq != current && !slot.cached.is_empty())
                    else {
                        return Err(failed(&self.id, llama_cpp_2::DecodeError::NoKvCacheSlot));
                    };
                    self.empty(victim);
                }
                Err(err) => return Err(failed(&self.id, err)),
            }
        }
    }

    fn run(&mut self, job: &Job, reply: &Reply, stats: &mut RequestStats) -> Result<Ending, ProviderError> {
        let rendered = self.render(job)?;
        let prompt = self
            .model
            .str_to_token(&rendered.prompt, if self.add_bos { AddBos::Always } else { AddBos::Never })
            .map_err(|err| failed(&self.id, err))?;
        stats.prompt_tokens = prompt.len() as u64;
        if prompt.is_empty() {
            return Err(ProviderError::Local(format!("the built-in model {} was given an empty prompt", self.id)));
        }
        // Room to answer: a prompt that fills the context leaves none.
        let room = (self.n_ctx as usize).saturating_sub(prompt.len());
        if room < 16 {
            return Err(ProviderError::Local(format!(
                "this conversation ({} tokens) no longer fits the built-in model's context of {} tokens. \
                 Start a new conversation, or pick a model with a longer context.",
                prompt.len(),
                self.n_ctx
            )));
        }

        let evaluating = Instant::now();
        let keep = self.reuse_prefix(&prompt);
        stats.cached_tokens = keep as u64;
        stats.evaluated_tokens = (prompt.len() - keep) as u64;
        if !self.evaluate(&prompt[keep..], keep, reply)? {
            return Ok(Ending::Stopped);
        }
        stats.prompt_ms = evaluating.elapsed().as_millis() as u64;

        let generating = Instant::now();
        let ending = self.generate(&rendered, job, reply, stats, room)?;
        stats.generation_ms = generating.elapsed().as_millis() as u64;
        if stats.generated_tokens > 0 && stats.generation_ms > 0 {
            stats.tokens_per_second = stats.generated_tokens as f64 * 1000.0 / stats.generation_ms as f64;
        }
        tracing::info!(
            model = %self.id,
            prompt = stats.prompt_tokens,
            cached = stats.cached_tokens,
            evaluated = stats.evaluated_tokens,
            generated = stats.generated_tokens,
            tokens_per_second = format!("{:.1}", stats.tokens_per_second),
            "local model answered"
        );
        Ok(ending)
    }

    /// The prompt, laid out by the model's chat template with the tools it is offered.
    fn render(&self, job: &Job) -> Result<ChatTemplateResult, ProviderError> {
        let params = OpenAIChatTemplateParams {
            messages_json: &job.messages,
            tools_json: job.tools.as_deref(),
            tool_choice: None,
            json_schema: None,
            grammar: None,
            reasoning_format: None,
            chat_template_kwargs: None,
            add_generation_prompt: true,
            use_jinja: true,
            parallel_tool_calls: true,
            enable_thinking: false,
            add_bos: false,
            add_eos: false,
            parse_tool_calls: job.tools.is_some(),
        };
        self.model.apply_chat_template_oaicompat(&self.template, &params).map_err(|err| {
            ProviderError::Local(format!(
                "the chat template of the built-in model {} could not lay out this conversation: {err}",
                self.id
            ))
        })
    }

    /// Keeps the longest prefix of `prompt` the KV cache already holds, drops the rest of
    /// the cache, and returns how many tokens were kept. At least the last token is always
    /// evaluated again, for its logits.
    fn reuse_prefix(&mut self, prompt: &[LlamaToken]) -> usize {
        let seq = self.current;
        let cached = &self.slots[seq].cached;
        let common = cached.iter().zip(prompt).take_while(|(a, b)| a == b).count();
        let keep = common.min(prompt.len() - 1);
        if keep < cached.len() {
            let trimmed = u32::try_from(keep)
                .ok()
                .and_then(|from| self.context.clear_kv_cache_seq(Some(seq as u32), Some(from), None).ok())
                .unwrap_or(false);
            if !trimmed {
                // Some caches (recurrent models) cannot forget a suffix: start over.
                self.empty(seq);
                return 0;
            }
            self.slots[seq].cached.truncate(keep);
        }
        keep
    }

    /// Evaluates `tokens` at positions from `start`, in batches, asking logits of the last
    /// only. False when the turn stopped listening.
    fn evaluate(&mut self, tokens: &[LlamaToken], start: usize, reply: &Reply) -> Result<bool, ProviderError> {
        let batch_size = self.context.n_batch() as usize;
        let mut batch = LlamaBatch::new(batch_size, 1);
        let last = tokens.len().saturating_sub(1);
        for (chunk_index, chunk) in tokens.chunks(batch_size).enumerate() {
            if reply.is_closed() {
                return Ok(false);
            }
            batch.clear();
            for (offset, token) in chunk.iter().enumerate() {
                let index = chunk_index * batch_size + offset;
                let position = i32::try_from(start + index).map_err(|err| failed(&self.id, err))?;
                batch.add(*token, position, &[self.seq_id()], index == last).map_err(|err| failed(&self.id, err))?;
            }
            self.decode(&mut batch)?;
            self.slots[self.current].cached.extend_from_slice(chunk);
            // A heartbeat: a long prompt is progress, not a stalled provider.
            if reply.blocking_send(Ok(Vec::new())).is_err() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Samples the reply token by token, streaming what the template's parser makes of it.
    fn generate(
        &mut self,
        rendered: &ChatTemplateResult,
        job: &Job,
        reply: &Reply,
        stats: &mut RequestStats,
        room: usize,
    ) -> Result<Ending, ProviderError> {
        let forced = self.forced.pop_front();
        // A reply forced whole needs no other grammar; a forced beginning goes on under
        // the template's, which takes over where a call starts.
        let grammar = match &forced {
            Some(Forced::Exactly(_)) => None,
            Some(Forced::StartsWith(_)) | None => self.grammar(rendered),
        };
        stats.grammar = grammar.as_ref().map(|_| if rendered.grammar_lazy { "lazy" } else { "whole" }.to_owned());
        let mut grammars = Vec::new();
        grammars.extend(forced.and_then(|f| LlamaSampler::grammar(self.model, &f.grammar(), "root").ok()));
        grammars.extend(grammar);
        let mut sampler = Sampler::new(grammars);
        let mut parser = Parser::new(rendered, &self.id);
        let mut shaper = Shaper::new(&job.offered);
        let mut pending = Vec::new();
        let mut text = String::new();
        let mut batch = LlamaBatch::new(1, 1);
        let limit = room.min(self.max_output as usize);
        let mut ending = Ending::Finished("length");
        for _ in 0..limit {
            if reply.is_closed() {
                return Ok(Ending::Stopped);
            }
            let token = sampler.next(&self.context).map_err(|err| failed(&self.id, err))?;
            if self.abort_file.as_ref().is_some_and(|file| file.exists()) {
                tracing::error!(model = %self.id, "aborting at the test hook's request");
                std::process::abort();
            }
            if self.hang_file.as_ref().is_some_and(|file| file.exists()) {
                tracing::error!(model = %self.id, "hanging at the test hook's request");
                loop {
                    std::thread::sleep(std::time::Duration::from_secs(3600));
                }
            }
            if self.model.is_eog_token(token) && !self.ignore_eos {
                ending = Ending::Finished("stop");
                break;
            }
            stats.generated_tokens += 1;
            pending.extend(self.piece(token)?);
            let piece = take_utf8(&mut pending);
            text.push_str(&piece);
            let stop_at =
                rendered.additional_stops.iter().filter(|s| !s.is_empty()).find_map(|s| text.find(s.as_str()));
            let deltas = shaper.push(match stop_at {
                Some(at) => {
                    // Send only what comes before the stop sequence.
                    let before = piece.len().saturating_sub(text.len() - at);
                    parser.feed(&piece[..before])
                }
                None => parser.feed(&piece),
            });
            if !deltas.is_empty() && reply.blocking_send(Ok(deltas)).is_err() {
                return Ok(Ending::Stopped);
            }
            if stop_at.is_some() {
                ending = Ending::Finished("stop");
                break;
            }
            let position = i32::try_from(self.slots[self.current].cached.len()).map_err(|err| failed(&self.id, err))?;
            batch.clear();
            batch.add(token, position, &[self.seq_id()], true).map_err(|err| failed(&self.id, err))?;
            self.decode(&mut batch)?;
            self.slots[self.current].cached.push(token);
        }
        // A reply the length limit cut off may end inside a call: what either reading
        // would make of it, closing what was left open, is no call the model finished.
        let cut = matches!(ending, Ending::Finished("length"));
        let mut deltas = shaper.push(parser.finish(cut));
        deltas.extend(if cut { shaper.release() } else { shaper.finish() });
        let called = shaper.calls > 0;
        let reason = match ending {
            Ending::Finished(_) if called => "tool_calls",
            Ending::Finished(reason) => reason,
            Ending::Stopped => "stop",
        };
        deltas.push(Delta::Usage { input: stats.prompt_tokens, output: stats.generated_tokens });
        deltas.push(Delta::Finish(reason.to_owned()));
        if reply.blocking_send(Ok(deltas)).is_err() {
            return Ok(Ending::Stopped);
        }
        Ok(ending)
    }

    /// The sampler that keeps a tool call's JSON well-formed, as the template's grammar
    /// asks: for tool-call syntax only once the model starts a call (lazy), or for the
    /// whole reply. None when the template gives none or llama.cpp cannot use it.
    fn grammar(&self, rendered: &ChatTemplateResult) -> Option<LlamaSampler> {
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

    /// The bytes a token stands for; control tokens stand for none (llama.cpp reports
    /// their empty piece as an "unknown token type").
    fn piece(&self, token: LlamaToken) -> Result<Vec<u8>, ProviderError> {
        match self.model.token_to_piece_bytes(token, 32, false, None) {
            Err(llama_cpp_2::TokenToStringError::UnknownTokenType) => Ok(Vec::new()),
            Err(llama_cpp_2::TokenToStringError::InsufficientBufferSpace(needed)) => self
                .model
                .token_to_piece_bytes(token, needed.unsigned_abs() as usize, false, None)
                .map_err(|err| failed(&self.id, err)),
            other => other.map_err(|err| failed(&self.id, err)),
        }
    }
}

/// Picks a reply's tokens. The grammars (a forced reply's, the template's for tool calls)
/// are first asked only about the token the other samplers chose, and filter the whole
/// vocabulary only when they refuse it, as llama.cpp's own sampling does: checking every
/// one of a vocabulary's 50,000–150,000 tokens at every step is what made generation
/// under a grammar slow, and the model's own choice is almost always allowed.
struct Sampler {
    grammars: Vec<LlamaSampler>,
    /// Shapes the distribution and draws from it.
    draw: LlamaSampler,
}

impl Sampler {
    fn new(grammars: Vec<LlamaSampler>) -> Self {
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
    fn next(&mut self, context: &LlamaContext) -> Result<LlamaToken, String> {
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

/// Turns the model's raw text into deltas with llama.cpp's parser for its chat format, so
/// tool calls written in the model's own syntax arrive as tool calls. If the parser cannot
/// follow, what it has not passed on yet goes out as text, and so does the rest.
struct Parser {
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
    fn new(rendered: &ChatTemplateResult, model: &str) -> Self {
        let state = rendered.streaming_state_oaicompat().ok();
        Self { state, model: model.to_owned(), fed: String::new(), content: String::new(), calls: Vec::new() }
    }

    fn feed(&mut self, text: &str) -> Vec<Delta> {
        if text.is_empty() {
            return Vec::new();
        }
        self.fed.push_str(text);
        self.update(text, true)
    }

    /// The end of the reply; `cut` when the length limit ended it, which may be inside a
    /// call: the parser would then hand on a call the model never finished.
    fn finish(&mut self, cut: bool) -> Vec<Delta> {
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
struct Shaper {
    offered: Vec<ToolSpec>,
    text: String,
    shown: usize,
    /// Calls passed on so far; new ones are numbered after them.
    calls: usize,
}

impl Shaper {
    fn new(offered: &[ToolSpec]) -> Self {
        Self { offered: offered.to_vec(), text: String::new(), shown: 0, calls: 0 }
    }

    fn push(&mut self, deltas: Vec<Delta>) -> Vec<Delta> {
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
    fn release(&mut self) -> Vec<Delta> {
        let held = self.take_held();
        if held.is_empty() { Vec::new() } else { vec![Delta::Text(held)] }
    }

    fn finish(&mut self) -> Vec<Delta> {
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

/// What a test makes the model write: a whole reply, or how it begins.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(untagged)]
enum Forced {
    Exactly(String),
    StartsWith(StartsWith),
}

#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct StartsWith {
    starts: String,
}

impl Forced {
    fn grammar(&self) -> String {
        match self {
            Self::Exactly(text) => format!("root ::= {}", gbnf_literal(text)),
            Self::StartsWith(StartsWith { starts }) => format!("root ::= {} .*", gbnf_literal(starts)),
        }
    }
}

/// Debug builds: what `SKALD_TEST_LOCAL_OUTPUTS` lists, one per request: a JSON list of
/// replies (strings) and beginnings (`{"starts": "…"}`).
fn forced_outputs() -> std::collections::VecDeque<Forced> {
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

/// The longest whole UTF-8 prefix of `pending`, leaving an unfinished character for the
/// next token; bytes that can never be UTF-8 become U+FFFD.
fn take_utf8(pending: &mut Vec<u8>) -> String {
    let valid = match std::str::from_utf8(pending) {
        Ok(text) => text.len(),
        Err(err) if err.error_len().is_none() => err.valid_up_to(),
        Err(_) => pending.len(),
    };
    let text = String::from_utf8_lossy(&pending[..valid]).into_owned();
    pending.drain(..valid);
    text
}

fn failed(id: &str, err: impl std::fmt::Display) -> ProviderError {
    ProviderError::Local(format!("the built-in model {id} failed: {err}"))
}

fn seed() -> u32 {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).map_or(0x5eed, |()| u32::from_le_bytes(bytes))
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

    #[test]
    fn utf8_split_across_tokens_waits_for_its_end() {
        let mut pending = "é".as_bytes()[..1].to_vec();
        assert_eq!(take_utf8(&mut pending), "");
        pending.push("é".as_bytes()[1]);
        pending.extend_from_slice(b"!");
        assert_eq!(take_utf8(&mut pending), "é!");
        assert!(pending.is_empty());
        let mut broken = vec![0xff, b'a'];
        assert_eq!(take_utf8(&mut broken), "\u{fffd}a");
    }
}
