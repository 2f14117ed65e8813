//! Skald's side of the built-in model's worker: starts `skald model-worker` when a
//! request needs it ([`crate::supervise`]), routes each request's answers back to the
//! turn that asked, and keeps what the administrator is shown (what is loaded, how each
//! person's own last request went, how the worker last crashed).
//!
//! A worker that dies — a fault inside llama.cpp, an abort, `kill -9` — ends only the
//! requests it was serving, with [`ProviderError::LocalCrashed`]; the next request starts
//! a fresh one, after a short backoff, unless the same model has crashed it
//! [`crate::supervise::Policy::limit`] times within the policy's window: then that model is not
//! started again until an administrator asks ([`Host::retry`]).
//!
//! One worker, holding one model at a time, answers requests in the order they were sent.
//! The slot (which worker runs, and which model it was last asked for) is one async
//! mutex, held while a worker is started and a request is sent, so two requests never
//! start two workers. A worker idle for the setting's period is asked to stop (its stdin
//! closes), which gives its memory back to the system.
//!
//! This file holds the host, the slot and the routes, and sends each request; `process`
//! is one worker process's life: started, read, settled when it ends, ended when idle.

mod process;

pub(super) use process::inspect;

use std::collections::HashMap;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::Stream;
use tokio::sync::mpsc;

use super::fit::{self, Footprint};
use super::protocol::{self, ModelSpec, RequestId, ToWorker};
use super::{CrashReport, Loaded, RequestStats, Settings, Snapshot, tool_calls};
use crate::providers::{ChatRequest, Delta, DeltaStream, ProviderError, function_tools, gguf, openai};
use crate::supervise::{Crashes, Policy, Verdict};

/// Parts of a reply buffered per request; the worker's pipe fills when a turn reads
/// slower than this, and the worker then waits.
const REPLY_BUFFER: usize = 256;

/// How long a worker may go on with a request after it was cancelled. A worker that
/// cannot stop between two tokens in that time is stuck inside llama.cpp: it is killed,
/// as a crash, so the requests queued behind it are not stuck too. Debug builds take
/// `SKALD_TEST_LOCAL_STOP_GRACE_MS`.
fn stop_grace() -> Duration {
    let test = std::env::var("SKALD_TEST_LOCAL_STOP_GRACE_MS").ok().filter(|_| cfg!(debug_assertions));
    test.and_then(|ms| ms.parse().ok()).map_or(Duration::from_secs(30), Duration::from_millis)
}

pub(super) struct Host {
    settings: Settings,
    policy: Policy,
    /// Crash times are measured from here.
    epoch: Instant,
    slot: tokio::sync::Mutex<Slot>,
    /// What the API reports; written by the tasks that read each worker.
    report: Arc<Mutex<Report>>,
    next_request: AtomicU64,
    /// Each person's partition of the KV cache: a number the worker sees instead of an id.
    partitions: Mutex<HashMap<String, u64>>,
}

#[derive(Default)]
struct Slot {
    worker: Option<Running>,
    generations: u64,
}

/// A worker process as the slot holds it.
struct Running {
    generation: u64,
    /// Requests to the worker; dropping the last sender closes its stdin, which asks it to
    /// finish what it holds and exit.
    to_worker: mpsc::UnboundedSender<ToWorker>,
    /// The model it was last asked for: the model it holds once the requests sent so far
    /// are answered.
    model: Option<Held>,
    /// The embedding model it was last asked for, checked once for the worker's life
    /// rather than before every search.
    embedding: Option<Held>,
    routes: Arc<Mutex<Routes>>,
}

/// A model as the worker is asked to hold it, checked once.
#[derive(Clone)]
struct Held {
    id: String,
    footprint: Footprint,
    context: u32,
}

impl Held {
    /// What the worker is told of the model, whose file is at `path`.
    fn spec(&self, path: &Path) -> ModelSpec {
        ModelSpec {
            id: self.id.clone(),
            path: path.to_owned(),
            context: self.context,
            footprint_bytes: self.footprint.total(),
        }
    }
}

/// The requests a worker is serving, and when it last did anything.
struct Routes {
    pending: HashMap<RequestId, Route>,
    last_activity: Instant,
    /// Set once the worker has ended: nothing more may be routed to it.
    closed: bool,
    /// Set when Skald asked it to stop: its end is no crash.
    ending: bool,
    /// The model it last said it holds: a crash with no request in hand is put down to it.
    model: Option<String>,
    /// Wakes the reader to kill the worker: it did not stop when asked.
    kill: Arc<tokio::sync::Notify>,
    /// Why it was killed, when Skald killed it.
    killed_because: Option<&'static str>,
}

struct Route {
    partition: u64,
    /// The model asked for: a crash while the worker serves this request (the oldest it
    /// holds, as it answers in order) is put down to it.
    model: String,
    /// Gone once the request failed (its error was sent) or was cancelled.
    reply: Option<mpsc::Sender<Result<Vec<Delta>, ProviderError>>>,
    /// An embedding request's answer, once: its vectors or why not.
    vectors: Option<tokio::sync::oneshot::Sender<Result<Vec<Vec<f32>>, ProviderError>>>,
    /// An embedding request: not counted among the chat requests reported.
    embedding: bool,
}

/// What the API reports of the engine.
#[derive(Default)]
struct Report {
    loaded: Option<Loaded>,
    /// The newest worker, by generation, and its pid: an older one still finishing its
    /// queue after it was asked to stop reports nothing over it.
    worker: Option<(u64, u32)>,
    /// Each partition's own last request.
    last: HashMap<u64, RequestStats>,
    answered: u64,
    crashes: Crashes,
}

/// A std mutex's guard, even after a panic elsewhere held it: each value here is whole
/// between statements, so a poisoned lock holds nothing half-written.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Host {
    pub(super) fn new(settings: Settings) -> Arc<Self> {
        Arc::new(Self {
            settings,
            policy: Policy::default(),
            epoch: Instant::now(),
            slot: tokio::sync::Mutex::default(),
            report: Arc::default(),
            next_request: AtomicU64::new(1),
            partitions: Mutex::default(),
        })
    }

    fn partition(&self, person: &str) -> u64 {
        let mut partitions = lock(&self.partitions);
        let next = partitions.len() as u64 + 1;
        *partitions.entry(person.to_owned()).or_insert(next)
    }

    /// What is loaded, `viewer`'s own last request, and how the worker has crashed.
    pub(super) fn snapshot(&self, viewer: &str) -> Snapshot {
        let partition = self.partition(viewer);
        let report = lock(&self.report);
        let mut crashes: Vec<CrashReport> = report
            .crashes
            .all()
            .map(|(model, record)| CrashReport {
                model: model.to_owned(),
                count: record.count(),
                last_at: record.last_at.clone(),
                how: record.last.describe(),
                signal: record.last.signal.clone(),
                exit_code: record.last.code,
                stderr_tail: record.last.stderr_tail.clone(),
                given_up: record.given_up,
            })
            .collect();
        crashes.sort_by(|a, b| a.model.cmp(&b.model));
        Snapshot {
            loaded: report.loaded.clone(),
            last_request: report.last.get(&partition).cloned(),
            requests_answered: report.answered,
            worker_pid: report.worker.map(|(_, pid)| pid),
            crashes,
        }
    }

    /// Lets model `id` be started again after it crashed the worker; false if it had no
    /// crashes on record.
    pub(super) fn retry(&self, id: &str) -> bool {
        lock(&self.report).crashes.clear(id)
    }

    /// Sends `request` for model `id` (at `path`) on `person`'s behalf to the worker,
    /// starting one if none runs, and returns the reply's stream. Dropping the stream
    /// cancels the request.
    pub(super) async fn start(
        self: &Arc<Self>,
        id: &str,
        path: &Path,
        request: &ChatRequest,
        person: &str,
    ) -> Result<DeltaStream, ProviderError> {
        let mut messages = openai::body(request)["messages"].take();
        tool_calls::mend_arguments(&mut messages);
        let tools = (!request.tools.is_empty()).then(|| {
            let mut tools = function_tools(&request.tools);
            tool_calls::loosen_for_grammar(&mut tools);
            tools.to_string()
        });
        let partition = self.partition(person);

        let mut slot = self.slot.lock().await;
        let wait = self.admit(&mut slot, id)?;
        let held = slot.worker.as_ref().and_then(|w| w.model.clone());
        let held = match held {
            Some(held) if held.id == id => held,
            other => {
                let freed = other.map_or(0, |held| held.footprint.total());
                let path = path.to_owned();
                let (context, id) = (self.settings.context, id.to_owned());
                tokio::task::spawn_blocking(move || preflight(&id, &path, context, freed))
                    .await
                    .map_err(|err| ProviderError::Local(format!("the built-in model failed: {err}")))??
            }
        };
        let worker = self.running(&mut slot, wait).await?;
        worker.model = Some(held.clone());
        let request_id = self.next_request.fetch_add(1, Ordering::Relaxed);
        let (reply, replies) = mpsc::channel(REPLY_BUFFER);
        {
            let mut routes = lock(&worker.routes);
            let route = Route { partition, model: id.to_owned(), reply: Some(reply), vectors: None, embedding: false };
            routes.pending.insert(request_id, route);
            routes.last_activity = Instant::now();
        }
        let model = held.spec(path);
        let generate = ToWorker::Generate(protocol::Generate {
            id: request_id,
            model,
            partition,
            messages: messages.to_string(),
            tools,
            offered: request.tools.clone(),
        });
        if worker.to_worker.send(generate).is_err() {
            // Its writer ended: the worker is gone, and its reader fails the route.
            tracing::warn!(model = id, "the built-in model's worker ended as a request was sent");
        }
        let cancel = Some((request_id, worker.to_worker.downgrade()));
        Ok(Box::pin(Reply { replies, cancel, routes: Arc::downgrade(&worker.routes) }))
    }

    /// Embeds `texts` with the embedding model `id` (at `path`), which the worker holds
    /// beside whatever chat model it holds, starting a worker if none runs: one unit
    /// vector per text, in order.
    pub(super) async fn embed(
        self: &Arc<Self>,
        id: &str,
        path: &Path,
        texts: Vec<String>,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        let answer = {
            let mut slot = self.slot.lock().await;
            let wait = self.admit(&mut slot, id)?;
            let held = match slot.worker.as_ref().and_then(|w| w.embedding.clone()) {
                Some(held) if held.id == id => held,
                _ => {
                    let (id, path) = (id.to_owned(), path.to_owned());
                    tokio::task::spawn_blocking(move || preflight(&id, &path, 512, 0))
                        .await
                        .map_err(|err| ProviderError::Local(format!("the embedding model failed: {err}")))??
                }
            };
            let worker = self.running(&mut slot, wait).await?;
            worker.embedding = Some(held.clone());
            let request_id = self.next_request.fetch_add(1, Ordering::Relaxed);
            let (vectors, answer) = tokio::sync::oneshot::channel();
            {
                let mut routes = lock(&worker.routes);
                let route =
                    Route { partition: 0, model: id.to_owned(), reply: None, vectors: Some(vectors), embedding: true };
                routes.pending.insert(request_id, route);
                routes.last_activity = Instant::now();
            }
            let model = held.spec(path);
            if worker.to_worker.send(ToWorker::Embed(protocol::Embed { id: request_id, model, texts })).is_err() {
                tracing::warn!(model = id, "the built-in model's worker ended as a request was sent");
            }
            answer
        };
        answer
            .await
            .unwrap_or_else(|_| Err(ProviderError::Local("the embedding model did not answer; try again".into())))
    }

    /// Whether model `id` may have a worker now, and after what backoff (its recent
    /// crashes); a worker that has ended is let go, so a fresh one starts.
    fn admit(&self, slot: &mut Slot, id: &str) -> Result<Duration, ProviderError> {
        let wait = match self.verdict(id) {
            Verdict::GivenUp => return Err(self.given_up(id)),
            Verdict::Start { after } => after,
        };
        if slot.worker.as_ref().is_some_and(|w| lock(&w.routes).closed) {
            slot.worker = None;
        }
        Ok(wait)
    }

    /// The worker the slot holds, started (after `wait`, the backoff after a crash) if none
    /// runs.
    async fn running<'s>(
        self: &Arc<Self>,
        slot: &'s mut Slot,
        wait: Duration,
    ) -> Result<&'s mut Running, ProviderError> {
        if slot.worker.is_none() {
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            slot.generations += 1;
            let generation = slot.generations;
            slot.worker = Some(self.spawn(generation)?);
        }
        Ok(slot.worker.as_mut().expect("a worker was just started"))
    }

    fn verdict(&self, id: &str) -> Verdict {
        let report = lock(&self.report);
        report.crashes.verdict(&self.policy, id, self.epoch.elapsed())
    }

    fn given_up(&self, id: &str) -> ProviderError {
        let count = lock(&self.report).crashes.get(id).map_or(self.policy.limit, |record| record.count());
        ProviderError::LocalCrashed(format!(
            "the built-in model {id} stopped unexpectedly {count} times in the last few minutes, so Skald will not \
             start it again until an administrator asks it to in Administration → Models. Choose another model meanwhile."
        ))
    }

    /// Lets go of model `id` if the worker was last asked for it: the worker finishes
    /// what it holds and exits.
    pub(super) async fn unload(&self, id: &str) {
        let mut slot = self.slot.lock().await;
        // An embedding model is checked afresh at its next use (its file is gone).
        if let Some(worker) = slot.worker.as_mut()
            && worker.embedding.as_ref().is_some_and(|held| held.id == id)
        {
            worker.embedding = None;
        }
        if slot.worker.as_ref().is_some_and(|w| w.model.as_ref().is_some_and(|held| held.id == id))
            && let Some(worker) = slot.worker.take()
        {
            lock(&worker.routes).ending = true;
        }
    }
}

/// Checks, before the worker reads a byte of it, that the file is sound, that this CPU
/// runs what the engine was compiled for and that the model fits the memory free
/// (counting `freed`, what the model now held gives back).
fn preflight(id: &str, path: &Path, context_cap: u32, freed: u64) -> Result<Held, ProviderError> {
    let info = gguf::read_info(path).map_err(|err| match err {
        gguf::GgufError::Io(io) if io.kind() == std::io::ErrorKind::NotFound => ProviderError::Local(format!(
            "the file of the built-in model {id} is missing. An administrator can import it again in Administration → Models."
        )),
        other => ProviderError::Local(format!(
            "the built-in model {id} cannot be loaded: {other}. An administrator can import it again in Administration → Models."
        )),
    })?;
    fit::check_this_cpu().map_err(ProviderError::Local)?;
    let n_ctx = fit::context_for(&info, context_cap);
    let footprint = fit::footprint(&info, u64::from(n_ctx));
    fit::check_memory(id, footprint, fit::available_memory(), freed).map_err(ProviderError::Local)?;
    Ok(Held { id: id.to_owned(), footprint, context: n_ctx })
}

/// A request's reply as it arrives from the worker. Dropped before its end, it cancels the
/// request, so a stopped turn stops the worker within a token; a worker that does not
/// stop within [`stop_grace`] is killed.
struct Reply {
    replies: mpsc::Receiver<Result<Vec<Delta>, ProviderError>>,
    cancel: Option<(RequestId, mpsc::WeakUnboundedSender<ToWorker>)>,
    routes: std::sync::Weak<Mutex<Routes>>,
}

impl Stream for Reply {
    type Item = Result<Vec<Delta>, ProviderError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.replies.poll_recv(cx);
        if let Poll::Ready(None) = next {
            // Answered in full: nothing to cancel.
            self.cancel = None;
        }
        next
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        let Some((id, to_worker)) = self.cancel.take() else { return };
        if let Some(to_worker) = to_worker.upgrade() {
            let _ = to_worker.send(ToWorker::Cancel { id });
        }
        let routes = self.routes.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                tokio::time::sleep(stop_grace()).await;
                let Some(routes) = routes.upgrade() else { return };
                let mut routes = lock(&routes);
                if !routes.closed && routes.pending.contains_key(&id) {
                    tracing::error!(request = id, "the local model worker did not stop when asked");
                    routes.killed_because = Some("did not stop when asked");
                    routes.kill.notify_one();
                }
            });
        }
    }
}
