//! Helper processes Skald starts and watches: the built-in model's worker today, MCP
//! servers, the voice engine and document extraction as they arrive. One place decides
//! how such a process is started (a cleared environment, pipes for its stdin, stdout and
//! stderr, nothing else inherited), how its exit is told apart from a crash, what is kept
//! of what it wrote to stderr, and when a process that keeps crashing is given up on.
//!
//! A helper's stdout and stdin are the caller's to speak over; this module never reads
//! them. It reads stderr only to keep a bounded tail for the log and the administrator,
//! so helpers must never write a person's words there.
//!
//! Never here: what a helper is asked, or what its answers mean.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::{oneshot, watch};
use tokio_util::codec::{FramedRead, LinesCodec};

/// How many of the last stderr lines are kept, and how long each may be.
const TAIL_LINES: usize = 40;
const TAIL_LINE_CHARS: usize = 400;

/// What to start.
#[derive(Debug, Clone)]
pub struct Spec {
    /// What the helper is called in the log.
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// The whole environment beyond [`INHERITED`]: a helper never sees the rest of
    /// Skald's (tokens, keys, whatever the person's session put there).
    pub env: Vec<(OsString, OsString)>,
    /// Where it runs; Skald's own working folder when `None`.
    pub cwd: Option<PathBuf>,
}

/// The variables a helper inherits from Skald: enough to find programs, a home and a
/// language, and nothing that could carry a secret.
pub const INHERITED: &[&str] = &["PATH", "HOME", "LANG"];

/// A running helper. Dropping it kills the process.
pub struct Helper {
    pub pid: u32,
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    exit: watch::Receiver<Option<Exit>>,
    kill: Option<oneshot::Sender<()>>,
}

impl std::fmt::Debug for Helper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Helper").field("pid", &self.pid).finish_non_exhaustive()
    }
}

/// How a helper ended, with the last lines it wrote to stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// Its exit code, when it exited by itself.
    pub code: Option<i32>,
    /// The signal that ended it, by name (`SIGSEGV`), when one did.
    pub signal: Option<String>,
    pub stderr_tail: Vec<String>,
}

impl Exit {
    /// Whether it ended the way a helper asked to stop does: exit code 0.
    pub fn is_clean(&self) -> bool {
        self.code == Some(0)
    }

    /// "killed by SIGSEGV", "exited with code 3".
    pub fn describe(&self) -> String {
        match (&self.signal, self.code) {
            (Some(signal), _) => format!("killed by {signal}"),
            (None, Some(code)) => format!("exited with code {code}"),
            (None, None) => "ended".to_owned(),
        }
    }
}

/// Starts a helper as the leader of its own process group, so that what it starts in turn
/// (`npx` starting node, a shell script its program) ends with it: killing a helper, and a
/// helper's end, kill the whole group. Its stderr is drained into the log and a tail; its
/// exit is watched.
pub fn spawn(spec: &Spec) -> std::io::Result<Helper> {
    let mut command = Command::new(&spec.program);
    command.args(&spec.args).env_clear();
    for name in INHERITED {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command.envs(spec.env.iter().map(|(k, v)| (k, v)));
    if let Some(cwd) = &spec.cwd {
        command.current_dir(cwd);
    }
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true).process_group(0);
    let mut process = command.spawn()?;
    let pid = process.id().unwrap_or_default();
    let group = rustix::process::Pid::from_raw(pid as i32);
    let tail = Arc::new(Mutex::new(VecDeque::with_capacity(TAIL_LINES)));
    let drained = process.stderr.take().map(|stderr| {
        let (tail, name) = (tail.clone(), spec.name.clone());
        tokio::spawn(async move {
            let mut lines = FramedRead::new(stderr, LinesCodec::new_with_max_length(4 * TAIL_LINE_CHARS));
            while let Some(line) = lines.next().await {
                // An over-long line is cut by the codec, which then goes on with the next.
                let Ok(line) = line else { continue };
                let line: String = line.trim().chars().take(TAIL_LINE_CHARS).collect();
                tracing::info!(target: "skald::helper", helper = %name, pid, "{line}");
                let mut tail = tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if tail.len() == TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        })
    });
    let (stdin, stdout) = (process.stdin.take(), process.stdout.take());
    let (exit_tx, exit) = watch::channel(None);
    let (kill, killed) = oneshot::channel::<()>();
    let name = spec.name.clone();
    tokio::spawn(async move {
        let status = tokio::select! {
            status = process.wait() => status,
            _ = killed => {
                let _ = process.start_kill();
                process.wait().await
            }
        };
        // What it started dies with it, however it ended. The group's id stays taken while
        // any of them lives, so this reaches only them.
        if let Some(group) = group {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        // Everything it wrote before it ended belongs to its tail.
        if let Some(drained) = drained {
            let _ = tokio::time::timeout(Duration::from_secs(2), drained).await;
        }
        let stderr_tail = tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().cloned().collect();
        let exit = match status {
            Ok(status) => Exit { code: status.code(), signal: signal_name(status), stderr_tail },
            Err(err) => {
                tracing::warn!(helper = %name, pid, %err, "could not learn how a helper ended");
                Exit { code: None, signal: None, stderr_tail }
            }
        };
        tracing::info!(helper = %name, pid, how = %exit.describe(), "helper ended");
        let _ = exit_tx.send(Some(exit));
    });
    Ok(Helper { pid, stdin, stdout, exit, kill: Some(kill) })
}

impl Helper {
    /// Waits for the helper to end, however it ends.
    pub fn exited(&self) -> impl Future<Output = Exit> + Send + 'static {
        let mut exit = self.exit.clone();
        async move {
            match exit.wait_for(Option::is_some).await {
                Ok(exit) => exit.clone().unwrap_or_else(unknown_exit),
                Err(_) => unknown_exit(),
            }
        }
    }

    /// Whether the helper has ended (its end is known, however it ended).
    pub fn has_ended(&self) -> bool {
        self.exit.borrow().is_some()
    }

    /// Kills the helper now.
    pub fn kill(&mut self) {
        if let Some(kill) = self.kill.take() {
            let _ = kill.send(());
        }
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        self.kill();
    }
}

fn unknown_exit() -> Exit {
    Exit { code: None, signal: None, stderr_tail: Vec::new() }
}

fn signal_name(status: ExitStatus) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    let signal = status.signal()?;
    let name = match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        other => return Some(format!("signal {other}")),
    };
    Some(name.to_owned())
}

/// Called first thing inside a helper that holds a person's words (the model worker, the
/// document reader): no core file, no ptrace by other processes of this user, and no life
/// after Skald's, even if Skald is killed outright.
pub fn harden() -> std::io::Result<()> {
    rlimit::setrlimit(rlimit::Resource::CORE, 0, 0)
        .map_err(|err| std::io::Error::other(format!("could not disable core dumps: {err}")))?;
    #[cfg(target_os = "linux")]
    {
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
            .map_err(|err| std::io::Error::other(format!("could not make itself undumpable: {err}")))?;
        // Best effort: a helper that outlives Skald still has nothing to read from.
        let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    }
    Ok(())
}

/// When a helper that keeps crashing is given up on: `limit` crashes of the same thing
/// (a model, a server) within `window`. Until then each restart waits a little longer.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub limit: usize,
    pub window: Duration,
    /// The wait before the first restart after a crash, doubled for each further crash
    /// in the window, up to `max_backoff`.
    pub backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            limit: 3,
            window: Duration::from_secs(600),
            backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(8),
        }
    }
}

/// The crashes of each thing a helper ran, for [`Policy`]. Pure: the caller says when.
#[derive(Debug, Default)]
pub struct Crashes {
    by_key: HashMap<String, Record>,
}

/// What is known of the crashes of one thing.
#[derive(Debug, Clone)]
pub struct Record {
    /// Within the policy's window at the last crash, oldest first, as seconds on the
    /// caller's clock.
    times: VecDeque<Duration>,
    /// When the last one happened, RFC 3339.
    pub last_at: String,
    pub last: Exit,
    /// Given up on: not started again until someone clears it.
    pub given_up: bool,
}

impl Record {
    /// Crashes within the policy's window when the last one happened.
    pub fn count(&self) -> usize {
        self.times.len()
    }
}

/// What to do before starting a helper for a thing again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Start { after: Duration },
    GivenUp,
}

impl Crashes {
    /// Records that the helper running `key` crashed at `now` (any monotonic clock).
    pub fn record(&mut self, policy: &Policy, key: &str, now: Duration, exit: Exit, at: String) -> &Record {
        let record = self.by_key.entry(key.to_owned()).or_insert_with(|| Record {
            times: VecDeque::new(),
            last_at: String::new(),
            last: exit.clone(),
            given_up: false,
        });
        record.times.push_back(now);
        while record.times.front().is_some_and(|t| now.saturating_sub(*t) > policy.window) {
            record.times.pop_front();
        }
        record.last_at = at;
        record.last = exit;
        record.given_up |= record.count() >= policy.limit;
        record
    }

    /// Whether, and after how long, a helper for `key` may start at `now`.
    pub fn verdict(&self, policy: &Policy, key: &str, now: Duration) -> Verdict {
        let Some(record) = self.by_key.get(key) else { return Verdict::Start { after: Duration::ZERO } };
        if record.given_up {
            return Verdict::GivenUp;
        }
        let recent = record.times.iter().filter(|t| now.saturating_sub(**t) <= policy.window).count();
        let Some(last) = record.times.back().filter(|_| recent > 0) else {
            return Verdict::Start { after: Duration::ZERO };
        };
        let wait = policy.backoff.saturating_mul(1 << (recent - 1).min(16)).min(policy.max_backoff);
        Verdict::Start { after: wait.saturating_sub(now.saturating_sub(*last)) }
    }

    /// Forgets `key`'s crashes: someone asked for it to be tried again. False if there
    /// were none.
    pub fn clear(&mut self, key: &str) -> bool {
        self.by_key.remove(key).is_some()
    }

    pub fn get(&self, key: &str) -> Option<&Record> {
        self.by_key.get(key)
    }

    /// Every record, by key.
    pub fn all(&self) -> impl Iterator<Item = (&str, &Record)> {
        self.by_key.iter().map(|(key, record)| (key.as_str(), record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crash(signal: &str) -> Exit {
        Exit { code: None, signal: Some(signal.to_owned()), stderr_tail: vec!["ggml: fault".into()] }
    }

    #[allow(non_snake_case, reason = "reads as a unit: S(10) is ten seconds")]
    fn S(seconds: u64) -> Duration {
        Duration::from_secs(seconds)
    }

    #[test]
    fn the_third_crash_in_ten_minutes_gives_up_until_cleared() {
        let (policy, mut crashes) = (Policy::default(), Crashes::default());
        assert_eq!(crashes.verdict(&policy, "smol", S(0)), Verdict::Start { after: Duration::ZERO });
        crashes.record(&policy, "smol", S(10), crash("SIGSEGV"), "t1".into());
        crashes.record(&policy, "smol", S(100), crash("SIGSEGV"), "t2".into());
        assert!(matches!(crashes.verdict(&policy, "smol", S(100)), Verdict::Start { .. }));
        let record = crashes.record(&policy, "smol", S(300), crash("SIGABRT"), "t3".into());
        assert!(record.given_up && record.count() == 3 && record.last.signal.as_deref() == Some("SIGABRT"));
        assert_eq!(crashes.verdict(&policy, "smol", S(10_000)), Verdict::GivenUp, "not by waiting");
        assert_eq!(crashes.verdict(&policy, "other", S(300)), Verdict::Start { after: Duration::ZERO });
        assert!(crashes.clear("smol"));
        assert_eq!(crashes.verdict(&policy, "smol", S(301)), Verdict::Start { after: Duration::ZERO });
    }

    #[test]
    fn crashes_further_apart_than_the_window_never_add_up() {
        let (policy, mut crashes) = (Policy::default(), Crashes::default());
        for minute in [0, 11, 22, 33] {
            let record = crashes.record(&policy, "smol", S(minute * 60), crash("SIGSEGV"), String::new());
            assert!(!record.given_up && record.count() == 1, "{record:?}");
        }
    }

    #[test]
    fn each_restart_in_the_window_waits_twice_as_long() {
        let (policy, mut crashes) = (Policy::default(), Crashes::default());
        crashes.record(&policy, "m", S(0), crash("SIGKILL"), String::new());
        assert_eq!(crashes.verdict(&policy, "m", S(0)), Verdict::Start { after: Duration::from_millis(250) });
        crashes.record(&policy, "m", S(1), crash("SIGKILL"), String::new());
        assert_eq!(crashes.verdict(&policy, "m", S(1)), Verdict::Start { after: Duration::from_millis(500) });
        assert_eq!(crashes.verdict(&policy, "m", S(2)), Verdict::Start { after: Duration::ZERO }, "already waited");
    }

    #[test]
    fn an_exit_says_how_it_ended() {
        assert_eq!(crash("SIGSEGV").describe(), "killed by SIGSEGV");
        let exited = Exit { code: Some(3), signal: None, stderr_tail: vec![] };
        assert_eq!(exited.describe(), "exited with code 3");
        assert!(!exited.is_clean() && Exit { code: Some(0), ..exited }.is_clean());
    }

    #[tokio::test]
    async fn a_helper_sees_only_what_it_is_given_and_its_crash_is_told_with_its_last_words() {
        let spec = Spec {
            name: "sh".into(),
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "env; echo first >&2; echo last words >&2; kill -SEGV $$".into()],
            env: vec![("GIVEN".into(), "yes".into())],
            cwd: None,
        };
        let mut helper = spawn(&spec).unwrap();
        let mut stdout = helper.stdout.take().unwrap();
        let mut seen = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut stdout, &mut seen).await.unwrap();
        let names: Vec<&str> = seen.lines().filter_map(|l| l.split('=').next()).collect();
        assert!(names.contains(&"GIVEN"), "{seen}");
        for name in &names {
            assert!(INHERITED.contains(name) || ["GIVEN", "PWD", "SHLVL", "_"].contains(name), "leaked {name}: {seen}");
        }
        let exit = helper.exited().await;
        assert_eq!(exit.signal.as_deref(), Some("SIGSEGV"));
        assert_eq!(exit.stderr_tail, ["first", "last words"]);
    }

    #[tokio::test]
    async fn what_a_helper_started_ends_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let spec = Spec {
            name: "sh".into(),
            program: "/bin/sh".into(),
            // The grandchild outlives the shell unless the group is killed.
            args: vec!["-c".into(), "sleep 600 & echo $! > grandchild; wait".into()],
            env: vec![],
            cwd: Some(dir.path().to_owned()),
        };
        let mut helper = spawn(&spec).unwrap();
        let pidfile = dir.path().join("grandchild");
        let mut grandchild = None;
        for _ in 0..200 {
            if let Some(pid) = std::fs::read_to_string(&pidfile).ok().and_then(|t| t.trim().parse::<i32>().ok()) {
                grandchild = Some(pid);
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let grandchild = rustix::process::Pid::from_raw(grandchild.expect("the grandchild started")).unwrap();
        let exited = helper.exited();
        helper.kill();
        tokio::time::timeout(Duration::from_secs(10), exited).await.expect("it ended");
        let mut gone = false;
        for _ in 0..200 {
            // Gone, or a zombie its init has not reaped yet: either way, not running.
            let state = std::fs::read_to_string(format!("/proc/{}/stat", grandchild.as_raw_nonzero()));
            if state.map_or(true, |s| s.split(") ").nth(1).is_some_and(|rest| rest.starts_with('Z'))) {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(gone, "the grandchild {grandchild:?} outlived the helper");
    }

    #[tokio::test]
    async fn dropping_a_helper_kills_it() {
        let spec = Spec {
            name: "sleep".into(),
            program: "/bin/sleep".into(),
            args: vec!["600".into()],
            env: vec![],
            cwd: None,
        };
        let helper = spawn(&spec).unwrap();
        let exited = helper.exited();
        drop(helper);
        let exit = tokio::time::timeout(Duration::from_secs(10), exited).await.expect("it ended");
        assert_eq!(exit.signal.as_deref(), Some("SIGKILL"));
    }
}
