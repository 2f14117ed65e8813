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
//!
//! This file holds the session (loading, the KV cache's sequences, evaluating, the token
//! loop); `sampling` picks each token under the grammars, `reading` turns the raw text
//! into text and tool calls.

mod embedding;
mod reading;
mod sampling;

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{AddBos, ChatTemplateResult, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::openai::OpenAIChatTemplateParams;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use super::protocol::{FromWorker, Generate as Job, ModelSpec, RequestId};
use super::worker::{Cancelled, Output};
use super::{Loaded, RequestStats, Settings, fit};
use crate::providers::{Delta, ProviderError};
pub(super) use embedding::Embedder;
use reading::{Parser, Shaper};
use sampling::{Forced, Sampler, forced_outputs};

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
             import it again in Administration → Models."
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
    use super::*;

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
