//! What the benchmarks that start the real binary share: `skald serve` in a home of its
//! own, its ready line, stopping it and whatever it started, and its WebSocket. Each
//! benchmark is a crate of its own and takes this file in with `#[path]`.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;
use skald::http::auth::ws_bearer_protocol;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

pub type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// `command` with its home, XDG folders and runtime folder under `work`, no data directory
/// from the environment, no session bus (the instance key falls back to a file in the data
/// directory) and no display.
pub fn sandboxed<'a>(command: &'a mut Command, work: &Path) -> &'a mut Command {
    let home = work.join("home");
    let runtime = work.join("run");
    std::fs::create_dir_all(&runtime).expect("runtime dir");
    std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700)).expect("0700");
    command
        .env_remove("SKALD_DATA_DIR")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("DISPLAY")
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("XDG_RUNTIME_DIR", runtime)
}

/// A running `skald serve`, stopped when dropped.
pub struct Serve {
    pub child: Child,
    pub port: u16,
    /// The launch token of its ready line.
    pub token: String,
    /// From the spawn to its ready line.
    pub ready: Duration,
}

impl Serve {
    /// `bin serve --port 0` on `data`, sandboxed under `work`, with `env` besides; its log
    /// goes to `work/skald.log` (it would drown a benchmark's progress lines, and stays
    /// beside the data for a failed run).
    pub fn start(bin: &Path, data: &Path, work: &Path, env: &[(&str, &OsStr)]) -> Self {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(work.join("skald.log")).expect("log");
        let started = Instant::now();
        let mut child = sandboxed(Command::new(bin).args(["serve", "--port", "0", "--data-dir"]).arg(data), work)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|err| panic!("starting {}: {err}", bin.display()));
        let Some((line, at)) = first_line(&mut child, Duration::from_secs(60)) else {
            terminate(&mut child);
            panic!("skald serve printed no ready line; see {}", work.join("skald.log").display());
        };
        let ready =
            line.strip_prefix("skald listening on http://127.0.0.1:").and_then(|rest| rest.split_once(" token="));
        let Some((port, token)) = ready.and_then(|(port, token)| Some((port.parse().ok()?, token.to_owned()))) else {
            terminate(&mut child);
            panic!("a malformed ready line: {line:?}");
        };
        Self { child, port, token, ready: at - started }
    }

    /// Stops it (SIGTERM, then SIGKILL): what dropping it does, said where it matters.
    pub fn stop(self) {}
}

impl Drop for Serve {
    fn drop(&mut self) {
        terminate(&mut self.child);
    }
}

/// The first line `child` writes on stdout and when it came, within `limit`; the rest is
/// drained, so a later write can never block the process.
pub fn first_line(child: &mut Child, limit: Duration) -> Option<(String, Instant)> {
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        if let Some(Ok(line)) = lines.next() {
            let _ = tx.send((line, Instant::now()));
        }
        lines.for_each(drop);
    });
    rx.recv_timeout(limit).ok()
}

/// SIGTERM, then SIGKILL when it has not exited within 10 s.
pub fn terminate(child: &mut Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Opens the WebSocket with `token` and reads its `hello`.
pub async fn socket(port: u16, token: &str) -> Socket {
    let mut request = format!("ws://127.0.0.1:{port}/api/ws").into_client_request().expect("ws request");
    let offered = format!("skald.v1, {}", ws_bearer_protocol(token));
    request.headers_mut().insert("sec-websocket-protocol", offered.parse().expect("header"));
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.expect("the WebSocket opens");
    let hello = next_event(&mut socket).await;
    assert_eq!(hello["type"], "hello", "the socket's first event: {hello}");
    socket
}

/// The next event that is not a heartbeat.
pub async fn next_event(socket: &mut Socket) -> Value {
    loop {
        match socket.next().await.expect("the socket stays open").expect("a WebSocket message") {
            Message::Text(text) => {
                let event: Value = serde_json::from_str(&text).expect("a JSON event");
                if event["type"] != "heartbeat" {
                    return event;
                }
            }
            Message::Close(frame) => panic!("the server closed the socket: {frame:?}"),
            _ => {}
        }
    }
}
