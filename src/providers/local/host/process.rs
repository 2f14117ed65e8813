//! One worker process's life, as the host sees it: started with only the settings it
//! needs, read line by line, each message routed to the request it answers, its end
//! settled (a crash recorded, the requests it held failed), and ended when idle (§9.1).
//! Also the short-lived worker that only reads a file's header (`--inspect`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec};

use super::super::protocol::{self, FromWorker, ToWorker};
use super::super::{Settings, fit};
use super::{Host, Routes, Running, lock};
use crate::providers::ProviderError;
use crate::supervise;

/// The longest line the worker may write: a reply's part is a token or a tool call.
const MAX_LINE: usize = 4 << 20;

/// How long a new worker may take to say it is ready (it loads no model before that).
const START_TIMEOUT: Duration = Duration::from_secs(30);

impl Host {
    /// Starts a worker and the tasks that feed it, read it and end it when idle.
    pub(super) fn spawn(self: &Arc<Self>, generation: u64) -> Result<Running, ProviderError> {
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
        Ok(Running { generation, to_worker, model: None, embedding: None, routes })
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
            cwd: None,
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
            FromWorker::Embedded { id, vectors } => {
                let waiting = lock(routes).pending.get_mut(&id).and_then(|route| route.vectors.take());
                if let Some(waiting) = waiting {
                    let _ = waiting.send(Ok(vectors));
                }
            }
            FromWorker::Failed { id, message } => {
                let (reply, waiting) = {
                    let mut routes = lock(routes);
                    let route = routes.pending.get_mut(&id);
                    route.map_or((None, None), |route| (route.reply.take(), route.vectors.take()))
                };
                if let Some(reply) = reply {
                    let _ = reply.send(Err(ProviderError::Local(message))).await;
                } else if let Some(waiting) = waiting {
                    let _ = waiting.send(Err(ProviderError::Local(message)));
                }
            }
            FromWorker::Done { id, stats } => {
                let route = {
                    let mut routes = lock(routes);
                    routes.last_activity = Instant::now();
                    routes.pending.remove(&id)
                };
                if let Some(route) = route
                    && !route.embedding
                {
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
            let error = if crashed {
                ProviderError::LocalCrashed(format!(
                    "the built-in model stopped unexpectedly ({how}); try again, or choose another model"
                ))
            } else {
                ProviderError::Local("the built-in model was let go before it answered; try again".to_owned())
            };
            if let Some(reply) = route.reply {
                let _ = reply.send(Err(error)).await;
            } else if let Some(waiting) = route.vectors {
                let _ = waiting.send(Err(error));
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
}

/// How long llama.cpp may take to read a file's header and tensor list.
const INSPECT_TIMEOUT: Duration = Duration::from_secs(120);

/// The parameter count of the model file at `path` as llama.cpp reads it, from a worker
/// started for this alone (`skald model-worker --inspect PATH`), or why it cannot be
/// used. A file that makes llama.cpp fault ends that worker, not the server.
pub(in crate::providers::local) async fn inspect(settings: &Settings, path: &Path) -> Result<u64, String> {
    fit::check_this_cpu()?;
    let spec = supervise::Spec {
        name: "model-inspect".to_owned(),
        program: settings.worker_program.clone(),
        args: vec!["model-worker".into(), "--inspect".into(), path.as_os_str().to_owned()],
        env: Vec::new(),
        cwd: None,
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
