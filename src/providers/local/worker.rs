//! The built-in model's worker: the `skald model-worker` process that holds a model and
//! answers requests, so that whatever faults inside llama.cpp (an assertion, an
//! instruction this CPU refuses) ends this process and not the server every person is
//! using. `host` starts it and speaks to it over its stdin and stdout ([`protocol`]).
//!
//! Before it reads a request it makes sure a crash leaves nothing of a person's words on
//! disk: no core file (`RLIMIT_CORE` 0) and not dumpable (`PR_SET_DUMPABLE` 0), in every
//! build. It opens no database and is given no key: its environment is what `host` sets.
//!
//! Started with `--inspect PATH`, it instead reads one model file's header with
//! llama.cpp, writes what it found as one line ([`protocol::Inspected`]) and exits: an
//! import never runs llama.cpp in the server either.
//!
//! Chat requests are answered one after another; embedding requests (recall by meaning)
//! on a thread of their own, with the embedding model held beside the chat model, so a
//! recall never waits for a reply. A reader thread takes lines off stdin, so a `cancel`
//! reaches a reply while it is being generated; when stdin closes (Skald asked it to stop,
//! or Skald itself ended) the worker finishes what it holds and exits 0.

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use super::engine;
use super::protocol::{Embed, FromWorker, Generate as Job, Inspected, ToWorker};
use super::{RequestStats, Settings};

/// Runs the worker until its stdin closes; or, given `inspect`, reads that model file.
pub fn run(inspect: Option<&std::path::Path>) -> ExitCode {
    // No core file, no ptrace by others of this user, no life after Skald's: the worker
    // holds prompts.
    if let Err(err) = crate::supervise::harden() {
        eprintln!("skald model-worker: {err}");
        return ExitCode::from(70);
    }
    let out = match Output::take_stdout() {
        Ok(out) => Arc::new(out),
        Err(err) => {
            eprintln!("skald model-worker: cannot keep stdout for the protocol: {err}");
            return ExitCode::FAILURE;
        }
    };
    init_logging();
    if let Some(path) = inspect {
        let found = super::fit::check_this_cpu().and_then(|()| engine::inspect(path));
        out.write(&super::protocol::encode(&match found {
            Ok(parameters) => Inspected::Parameters(parameters),
            Err(why) => Inspected::Refused(why),
        }));
        return ExitCode::SUCCESS;
    }
    let settings = Settings::from_env();
    let cancelled = Arc::new(Cancelled::default());
    let (jobs, queue) = mpsc::channel();
    let (embeds, embed_queue) = mpsc::channel();
    let reader = {
        let cancelled = cancelled.clone();
        std::thread::Builder::new()
            .name("skald-worker-in".into())
            .spawn(move || read_requests(&jobs, &embeds, &cancelled))
    };
    // Embeddings have a thread of their own: a person's recall does not wait for another
    // person's reply to finish.
    let embedder = {
        let (settings, out, cancelled) = (settings.clone(), out.clone(), cancelled.clone());
        std::thread::Builder::new()
            .name("skald-worker-embed".into())
            .spawn(move || serve_embeddings(&settings, &embed_queue, &out, &cancelled))
    };
    let (Ok(_), Ok(embedder)) = (reader, embedder) else {
        eprintln!("skald model-worker: cannot start its threads");
        return ExitCode::FAILURE;
    };
    let compiled_for = super::fit::COMPILED_FOR.iter().map(|feature| (*feature).to_owned()).collect();
    out.send(&FromWorker::Ready { pid: std::process::id(), compiled_for });
    serve(&settings, &queue, &out, &cancelled);
    let _ = embedder.join();
    ExitCode::SUCCESS
}

/// Logs go to stderr, which Skald keeps a tail of: Skald's own lines at info, llama.cpp's
/// only when it warns (its loader lists every key of the model at info).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::new("warn,skald=info");
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .without_time()
        .with_target(false)
        .try_init();
}

/// Where answers go: the original stdout, moved to a descriptor of its own, while fd 1
/// now points at stderr so nothing that prints (a C library's `printf`) can break a line
/// of the protocol.
pub(super) struct Output {
    file: Mutex<std::io::BufWriter<std::fs::File>>,
}

impl Output {
    fn take_stdout() -> std::io::Result<Self> {
        let stdout = std::io::stdout();
        let kept = rustix::io::dup(stdout.as_fd())?;
        rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
        Ok(Self { file: Mutex::new(std::io::BufWriter::new(std::fs::File::from(kept))) })
    }

    /// Writes one message. A write that fails means Skald is gone: exit, there is no one
    /// to answer.
    pub(super) fn send(&self, message: &FromWorker) {
        self.write(&super::protocol::encode(message));
    }

    fn write(&self, line: &str) {
        let mut file = self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if file.write_all(line.as_bytes()).and_then(|()| file.flush()).is_err() {
            std::process::exit(0);
        }
    }
}

/// The requests Skald has cancelled, which a reply checks between tokens.
#[derive(Default)]
pub(super) struct Cancelled {
    ids: Mutex<HashSet<u64>>,
}

impl Cancelled {
    pub(super) fn contains(&self, id: u64) -> bool {
        self.ids.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&id)
    }

    fn insert(&self, id: u64) {
        self.ids.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id);
    }

    fn remove(&self, id: u64) {
        self.ids.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&id);
    }
}

/// Takes requests off stdin until it closes: chat requests to `jobs`, embedding requests
/// to `embeds`. A line that is no request is logged (by its length only) and skipped.
fn read_requests(jobs: &mpsc::Sender<Job>, embeds: &mpsc::Sender<Embed>, cancelled: &Cancelled) {
    let stdin = std::io::stdin().lock();
    for line in stdin.lines() {
        let Ok(line) = line else { break };
        let sent = match serde_json::from_str::<ToWorker>(&line) {
            Ok(ToWorker::Generate(job)) => jobs.send(job).is_ok(),
            Ok(ToWorker::Embed(embed)) => embeds.send(embed).is_ok(),
            Ok(ToWorker::Cancel { id }) => {
                cancelled.insert(id);
                true
            }
            Err(err) => {
                tracing::warn!(bytes = line.len(), error = kind(&err), "unreadable request");
                true
            }
        };
        if !sent {
            break;
        }
    }
}

/// What kind of error a line was, without the text around it (which could be a person's).
fn kind(err: &serde_json::Error) -> &'static str {
    match err.classify() {
        serde_json::error::Category::Io => "io",
        serde_json::error::Category::Syntax => "syntax",
        serde_json::error::Category::Data => "data",
        serde_json::error::Category::Eof => "eof",
    }
}

/// Answers requests in order, holding one model at a time: a request for another model
/// lets the one held go and loads that one. Returns when stdin has closed and nothing is
/// left to answer.
fn serve(settings: &Settings, queue: &mpsc::Receiver<Job>, out: &Output, cancelled: &Cancelled) {
    let mut next: Option<Job> = None;
    loop {
        let Some(mut job) = next.take().or_else(|| queue.recv().ok()) else { return };
        let spec = job.model.clone();
        let started = std::time::Instant::now();
        let fail = |job: &Job, message: String| {
            out.send(&FromWorker::Failed { id: job.id, message });
            cancelled.remove(job.id);
        };
        let model = match engine::load(&spec) {
            Ok(model) => model,
            Err(message) => {
                fail(&job, message);
                continue;
            }
        };
        let mut session = match engine::Session::new(&model, &spec, settings, started) {
            Ok(session) => session,
            Err(message) => {
                fail(&job, message);
                continue;
            }
        };
        out.send(&FromWorker::Loaded { loaded: Some(session.loaded().clone()) });
        loop {
            let id = job.id;
            let stats = session.answer(&job, out, cancelled);
            out.send(&FromWorker::Done { id, stats });
            cancelled.remove(id);
            match queue.recv() {
                Ok(same) if same.model == spec => job = same,
                Ok(other) => {
                    next = Some(other);
                    break;
                }
                Err(_) => break,
            }
        }
        drop(session);
        drop(model);
        out.send(&FromWorker::Loaded { loaded: None });
        if next.is_none() {
            return;
        }
    }
}

/// Answers embedding requests in order, holding the embedding model once asked for it,
/// until stdin has closed.
fn serve_embeddings(settings: &Settings, queue: &mpsc::Receiver<Embed>, out: &Output, cancelled: &Cancelled) {
    let mut embedder = None;
    for embed in queue {
        answer_embed(&mut embedder, &embed, settings, out, cancelled);
    }
}

/// Embeds one request's texts, loading the embedding model it names first if another or
/// none is held; the answer, or why not, then `done`.
fn answer_embed(
    embedder: &mut Option<engine::Embedder>,
    embed: &Embed,
    settings: &Settings,
    out: &Output,
    cancelled: &Cancelled,
) {
    let started = std::time::Instant::now();
    if !embedder.as_ref().is_some_and(|held| held.holds(&embed.model)) {
        *embedder = None;
        match engine::Embedder::load(&embed.model, settings) {
            Ok(loaded) => *embedder = Some(loaded),
            Err(message) => out.send(&FromWorker::Failed { id: embed.id, message }),
        }
    }
    if let Some(held) = embedder.as_ref()
        && !cancelled.contains(embed.id)
    {
        out.send(&match held.embed(&embed.texts) {
            Ok(vectors) => FromWorker::Embedded { id: embed.id, vectors },
            Err(message) => FromWorker::Failed { id: embed.id, message },
        });
    }
    let stats = RequestStats {
        model: embed.model.id.clone(),
        prompt_ms: started.elapsed().as_millis() as u64,
        ..RequestStats::default()
    };
    out.send(&FromWorker::Done { id: embed.id, stats });
    cancelled.remove(embed.id);
}
