//! Skald's side of the built-in model's worker: starts `skald model-worker` when a
//! request needs it ([`crate::supervise`]), routes each request's answers back to the
//! turn that asked, and keeps what the administrator is shown (what is loaded, how each
//! person's own last request went, how the worker last crashed).
//!
//! A worker that dies — a fault inside llama.cpp, an abort, `kill -9` — ends only the
//! requests it was serving, with [`ProviderError::LocalCrashed`]; the next request starts
//! a fresh one, after a short backoff, unless the same model has crashed it
//! [`supervise::Policy::limit`] times within the policy's window: then that model is not
//! started again until an administrator asks ([`Host::retry`]).
//!
//! One worker, holding one model at a time, answers requests in the order they were sent.
//! The slot (which worker runs, and which model it was last asked for) is one async
//! mutex, held while a worker is started and a request is sent, so two requests never
//! start two workers. A worker idle for the setting's period is asked to stop (its stdin
//! closes), which gives its memory back to the system.

use std::collections::HashMap;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec};

use super::fit::{self, Footprint};
use super::protocol::{self, FromWorker, ModelSpec, RequestId, ToWorker};
use super::{CrashReport, Loaded, RequestStats, Settings, Snapshot, tool_calls};
use crate::providers::{ChatRequest, Delta, DeltaStream, ProviderError, function_tools, gguf, openai};
use crate::supervise::{self, Crashes, Policy, Verdict};

/// Parts of a reply buffered per request; the worker's pipe fills when a turn reads
/// slower than this, and the worker then waits.
const REPLY_BUFFER: usize = 256;

/// The longest line the worker may write: a reply's part is a token or a tool call.
const MAX_LINE: usize = 4 << 20;

/// How long a new worker may take to say it is ready (it loads no model before that).
const START_TIMEOUT: Duration = Duration::from_secs(30);

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
    routes: Arc<Mutex<Routes>>,
}

/// A model as the worker is asked to hold it, checked once.
#[derive(Clone)]
struct Held {
    id: String,
    footprint: Footprint,
    context: u32,
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
        let wait = match self.verdict(id) {
            Verdict::GivenUp => return Err(self.given_up(id)),
            Verdict::Start { after } => after,
        };
        if slot.worker.as_ref().is_some_and(|w| lock(&w.routes).closed) {
            slot.worker = None;
        }
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
        if slot.worker.is_none() {
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            slot.generations += 1;
            let generation = slot.generations;
            slot.worker = Some(self.spawn(generation)?);
        }
        let worker = slot.worker.as_mut().expect("a worker was just started");
        worker.model = Some(held.clone());
        let request_id = self.next_request.fetch_add(1, Ordering::Relaxed);
        let (reply, replies) = mpsc::channel(REPLY_BUFFER);
        {
            let mut routes = lock(&worker.routes);
            routes.pending.insert(request_id, Route { partition, model: id.to_owned(), reply: Some(reply) });
            routes.last_activity = Instant::now();
        }
        let model = ModelSpec {
            id: id.to_owned(),
            path: path.to_owned(),
            context: held.context,
            footprint_bytes: held.footprint.total(),
        };
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

    fn verdict(&self, id: &str) -> Verdict {
        let report = lock(&self.report);
        report.crashes.verdict(&self.policy, id, self.epoch.elapsed())
    }

    fn given_up(&self, id: &str) -> ProviderError {
        let count = lock(&self.report).crashes.get(id).map_or(self.policy.limit, |record| record.count());
        ProviderError::LocalCrashed(format!(
            "the built-in model {id} stopped unexpectedly {count} times in the last few minutes, so Skald will not \
             start it again until an administrator asks it to in Settings → Models. Choose another model meanwhile."
        ))
    }

    /// Starts a worker and the tasks that feed it, read it and end it when idle.
    fn spawn(self: &Arc<Self>, generation: u64) -> Result<Running, ProviderError> {
        let spec = self.worker_spec();
        let mut helper = supervise::spawn(&spec).map_err(|err| {
            ProviderError::Local(format!(
                "the built-in model's worker could not start ({} {err}). Reinstall Skald, or choose another model.",
                spec.program.display()
            ))
        })?;
        let (stdin, stdout) = (helper.stdin.take(), helper.stdout.take());
        let (Some(mut stdin), Some(stdout)) = (stdin, stdout) else {
            return Err(ProviderError::Local("the built-in model's worker has no pipes".to_owned()));
        };
        let pid = helper.pid;
        tracing::info!(pid, "local model worker started");
        {
            let mut report = lock(&self.report);
            report.worker = Some((generation, pid));
            report.loaded = None;
        }
        let routes = Arc::new(Mutex::new(Routes {
            pending: HashMap::new(),
            last_activity: Instant::now(),
            closed: false,
            ending: false,
            model: None,
            kill: Arc::default(),
            killed_because: None,
        }));
        let (to_worker, mut outbox) = mpsc::unbounded_channel::<ToWorker>();
        tokio::spawn(async move {
            while let Some(message) = outbox.recv().await {
                let line = protocol::encode(&message);
                if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
            // Dropping stdin closes it: the worker finishes and exits.
        });
        let host = self.clone();
        let read_routes = routes.clone();
        tokio::spawn(async move { host.read(generation, helper, stdout, read_routes).await });
        let host = Arc::downgrade(self);
        let idle_routes = routes.clone();
        let idle = self.settings.idle;
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(idle.min(Duration::from_secs(1))).await;
                let Some(host) = host.upgrade() else { return };
                if !host.end_if_idle(generation, &idle_routes).await {
                    return;
                }
            }
        });
        Ok(Running { generation, to_worker, model: None, routes })
    }

    /// How the worker is started: this same binary, with only the settings it needs.
    fn worker_spec(&self) -> supervise::Spec {
        let settings = &self.settings;
        let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
            ("SKALD_LOCAL_THREADS".into(), settings.threads.to_string().into()),
            ("SKALD_LOCAL_CONTEXT".into(), settings.context.to_string().into()),
            ("SKALD_LOCAL_MAX_OUTPUT".into(), settings.max_output.to_string().into()),
            ("SKALD_LOCAL_IGNORE_EOS".into(), u8::from(settings.ignore_eos).to_string().into()),
        ];
        if cfg!(debug_assertions) {
            for name in ["SKALD_TEST_LOCAL_OUTPUTS", "SKALD_TEST_LOCAL_ABORT_FILE", "SKALD_TEST_LOCAL_HANG_FILE"] {
                if let Some(value) = std::env::var_os(name) {
                    env.push((name.into(), value));
                }
            }
        }
        supervise::Spec {
            name: "model-worker".to_owned(),
            program: settings.worker_program.clone(),
            args: vec!["model-worker".into()],
            env,
        }
    }

    /// Reads what worker `generation` says until it ends, then settles its end.
    async fn read(
        self: Arc<Self>,
        generation: u64,
        mut helper: supervise::Helper,
        stdout: tokio::process::ChildStdout,
        routes: Arc<Mutex<Routes>>,
    ) {
        let exited = helper.exited();
        let kill = lock(&routes).kill.clone();
        let mut lines = FramedRead::new(stdout, LinesCodec::new_with_max_length(MAX_LINE));
        let mut ready = false;
        loop {
            let next = tokio::select! {
                next = lines.next() => next,
                () = kill.notified() => {
                    helper.kill();
                    continue;
                }
                () = tokio::time::sleep(START_TIMEOUT), if !ready => {
                    tracing::error!("the local model worker did not say it was ready");
                    lock(&routes).killed_because =
                        Some("did not start");
                    helper.kill();
                    continue;
                }
            };
            let Some(line) = next else { break };
            let Ok(line) = line else { continue };
            ready = true;
            let message = match serde_json::from_str::<FromWorker>(&line) {
                Ok(message) => message,
                Err(err) => {
                    tracing::warn!(bytes = line.len(), error = %err, "unreadable line from the local model worker");
                    continue;
                }
            };
            self.dispatch(generation, message, &routes).await;
        }
        let exit = exited.await;
        drop(helper);
        self.settle(generation, &routes, exit).await;
    }

    async fn dispatch(&self, generation: u64, message: FromWorker, routes: &Mutex<Routes>) {
        match message {
            FromWorker::Ready { pid, compiled_for } => {
                tracing::info!(pid, compiled_for = %compiled_for.join(","), "local model worker ready");
            }
            FromWorker::Loaded { loaded } => {
                // The worker's own log, relayed, says how long the load took.
                if let Some(loaded) = &loaded {
                    lock(routes).model = Some(loaded.model.clone());
                }
                let mut report = lock(&self.report);
                if report.worker.is_some_and(|(newest, _)| newest == generation) {
                    report.loaded = loaded;
                }
            }
            FromWorker::Deltas { id, deltas } => {
                let reply = {
                    let mut routes = lock(routes);
                    routes.last_activity = Instant::now();
                    routes.pending.get(&id).and_then(|route| route.reply.clone())
                };
                if let Some(reply) = reply
                    && reply.send(Ok(deltas)).await.is_err()
                    && let Some(route) = lock(routes).pending.get_mut(&id)
                {
                    route.reply = None;
                }
            }
            FromWorker::Failed { id, message } => {
                let reply = lock(routes).pending.get_mut(&id).and_then(|route| route.reply.take());
                if let Some(reply) = reply {
                    let _ = reply.send(Err(ProviderError::Local(message))).await;
                }
            }
            FromWorker::Done { id, stats } => {
                let route = {
                    let mut routes = lock(routes);
                    routes.last_activity = Instant::now();
                    routes.pending.remove(&id)
                };
                if let Some(route) = route {
                    let mut report = lock(&self.report);
                    report.answered += 1;
                    let mut stats = stats;
                    stats.number = report.answered;
                    report.last.insert(route.partition, stats);
                }
            }
        }
    }

    /// After worker `generation` ended: every request it still served fails, its crash
    /// (if Skald did not ask it to stop) is recorded, and the slot lets it go.
    async fn settle(&self, generation: u64, routes: &Mutex<Routes>, exit: supervise::Exit) {
        let (pending, ending, model, killed_because) = {
            let mut routes = lock(routes);
            routes.closed = true;
            let pending = std::mem::take(&mut routes.pending);
            let serving = pending.iter().min_by_key(|(id, _)| **id).map(|(_, route)| route.model.clone());
            (pending, routes.ending, serving.or_else(|| routes.model.clone()), routes.killed_because)
        };
        let crashed = !(ending && exit.is_clean());
        let mut exit = exit;
        let how = match killed_because {
            Some(why) => {
                exit.stderr_tail.push(format!("(Skald ended the worker: it {why})"));
                format!("it {why} and was ended")
            }
            None => exit.describe(),
        };
        {
            let mut report = lock(&self.report);
            if report.worker.is_some_and(|(newest, _)| newest == generation) {
                report.loaded = None;
                report.worker = None;
            }
            if crashed && let Some(model) = &model {
                let now = self.epoch.elapsed();
                let record = report.crashes.record(&self.policy, model, now, exit.clone(), crate::store::timestamp());
                tracing::error!(
                    model = %model,
                    how = %how,
                    crashes = record.count(),
                    given_up = record.given_up,
                    "the built-in model's worker stopped unexpectedly"
                );
            }
        }
        for (_, route) in pending {
            if let Some(reply) = route.reply {
                let error = if crashed {
                    ProviderError::LocalCrashed(format!(
                        "the built-in model stopped unexpectedly ({how}); try again, or choose another model"
                    ))
                } else {
                    ProviderError::Local("the built-in model was let go before it answered; try again".to_owned())
                };
                let _ = reply.send(Err(error)).await;
            }
        }
        let mut slot = self.slot.lock().await;
        if slot.worker.as_ref().is_some_and(|w| w.generation == generation) {
            slot.worker = None;
        }
    }

    /// Asks worker `generation` to stop if it has served nothing for the idle period.
    /// False once that worker is gone.
    async fn end_if_idle(&self, generation: u64, routes: &Mutex<Routes>) -> bool {
        let idle = |routes: &Routes| routes.pending.is_empty() && routes.last_activity.elapsed() >= self.settings.idle;
        {
            let routes = lock(routes);
            if routes.closed {
                return false;
            }
            if !idle(&routes) {
                return true;
            }
        }
        let mut slot = self.slot.lock().await;
        let Some(worker) = slot.worker.as_ref().filter(|w| w.generation == generation) else { return false };
        {
            let mut routes = lock(&worker.routes);
            if !idle(&routes) {
                return true;
            }
            routes.ending = true;
        }
        tracing::info!("local model worker stopped after being idle");
        slot.worker = None;
        false
    }

    /// Lets go of model `id` if the worker was last asked for it: the worker finishes
    /// what it holds and exits.
    pub(super) async fn unload(&self, id: &str) {
        let mut slot = self.slot.lock().await;
        if slot.worker.as_ref().is_some_and(|w| w.model.as_ref().is_some_and(|held| held.id == id))
            && let Some(worker) = slot.worker.take()
        {
            lock(&worker.routes).ending = true;
        }
    }
}

/// How long llama.cpp may take to read a file's header and tensor list.
const INSPECT_TIMEOUT: Duration = Duration::from_secs(120);

/// The parameter count of the model file at `path` as llama.cpp reads it, from a worker
/// started for this alone (`skald model-worker --inspect PATH`), or why it cannot be
/// used. A file that makes llama.cpp fault ends that worker, not the server.
pub(super) async fn inspect(settings: &Settings, path: &Path) -> Result<u64, String> {
    fit::check_this_cpu()?;
    let spec = supervise::Spec {
        name: "model-inspect".to_owned(),
        program: settings.worker_program.clone(),
        args: vec!["model-worker".into(), "--inspect".into(), path.as_os_str().to_owned()],
        env: Vec::new(),
    };
    let mut helper = supervise::spawn(&spec)
        .map_err(|err| format!("Skald could not start its model reader ({} {err})", spec.program.display()))?;
    drop(helper.stdin.take());
    let mut said = String::new();
    let read = match helper.stdout.take() {
        Some(mut stdout) => {
            tokio::time::timeout(INSPECT_TIMEOUT, tokio::io::AsyncReadExt::read_to_string(&mut stdout, &mut said)).await
        }
        None => Ok(Ok(0)),
    };
    if read.is_err() {
        helper.kill();
    }
    let exit = helper.exited().await;
    let answer: Option<protocol::Inspected> = said.lines().next().and_then(|line| serde_json::from_str(line).ok());
    match answer {
        Some(protocol::Inspected::Parameters(parameters)) => Ok(parameters),
        Some(protocol::Inspected::Refused(why)) => Err(why),
        None if read.is_err() => Err(format!("reading it took more than {} seconds", INSPECT_TIMEOUT.as_secs())),
        None => Err(format!(
            "llama.cpp stopped while reading it ({}); it may be damaged or of an architecture this version does not know",
            exit.describe()
        )),
    }
}

/// Checks, before the worker reads a byte of it, that the file is sound, that this CPU
/// runs what the engine was compiled for and that the model fits the memory free
/// (counting `freed`, what the model now held gives back).
fn preflight(id: &str, path: &Path, context_cap: u32, freed: u64) -> Result<Held, ProviderError> {
    let info = gguf::read_info(path).map_err(|err| match err {
        gguf::GgufError::Io(io) if io.kind() == std::io::ErrorKind::NotFound => ProviderError::Local(format!(
            "the file of the built-in model {id} is missing. An administrator can import it again in Settings → Models."
        )),
        other => ProviderError::Local(format!(
            "the built-in model {id} cannot be loaded: {other}. An administrator can import it again in Settings → Models."
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
