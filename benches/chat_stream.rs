//! What Skald adds to a streamed reply: 500-token replies from the scripted model server,
//! read directly over its OpenAI wire protocol and read through a real `skald serve`
//! (POST the message, tokens over the WebSocket), interleaved pair by pair so a noisy,
//! shared machine slows both arms alike. Both clocks start at the POST. Reports
//! time-to-first-token and total (p50/p95) of each arm, what Skald adds (the per-pair
//! difference), and the CPU the skald process spends per reply.
//!
//! Targets: at most 2 ms added time-to-first-token and 3 ms added total, at p50.
//!
//! `cargo bench --bench chat_stream` (`SKALD_BENCH_REPLIES=50` for a quicker run)

#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use scripted_model::{Reply, ScriptedModel};
use serde_json::{Value, json};
use skald::http::auth::ws_bearer_protocol;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const TOKENS: usize = 500;
const WARMUP: usize = 20;
const DEFAULT_REPLIES: usize = 200;
const PROMPT: &str = "Count to five hundred";
const PASSWORD: &str = "otter lantern quietly";
/// Far beyond any reply here: only a stuck arm ever waits this long.
const REPLY_LIMIT: Duration = Duration::from_secs(30);

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// One reply as the client saw it, every time from the POST.
#[derive(Clone, Copy, Default)]
struct Timing {
    first_token: Duration,
    last_token: Duration,
    total: Duration,
    /// Skald only: its `turn_started` event and its 202, where the time goes.
    turn_started: Duration,
    accepted: Duration,
}

fn main() {
    let replies = std::env::var("SKALD_BENCH_REPLIES").ok().map_or(DEFAULT_REPLIES, |v| {
        v.parse().ok().filter(|n| *n > 0).unwrap_or_else(|| panic!("SKALD_BENCH_REPLIES={v:?} is not a count"))
    });
    // As many workers as the machine has cores, the way skald itself runs.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    runtime.block_on(run(replies));
}

async fn run(replies: usize) {
    let model = ScriptedModel::start().await;
    let dir = tempfile::Builder::new().prefix("skald-bench-").tempdir().expect("temp dir");
    let server = Server::start(dir.path());
    // One client for every request, so connections are kept alive as a browser's are.
    let client = reqwest::Client::builder().tcp_nodelay(true).build().expect("client");
    let skald = Skald::connect(&client, &server, &model.openai_base()).await;
    let mut socket = skald.socket().await;

    // The direct arm sends exactly what Skald sends: prompt, message and tool catalogue.
    let first = skald.sessions(1).await;
    model.push(Reply { tokens: Some(TOKENS), ..Reply::default() });
    skald.reply(&mut socket, &first[0]).await;
    let body = model.requests().last().expect("skald asked the model").body.clone();
    assert_eq!(body["messages"].as_array().and_then(|m| m.last()), Some(&json!({ "role": "user", "content": PROMPT })));
    let direct = Direct { client: &client, url: format!("{}/chat/completions", model.openai_base()), body };

    measure(&model, &direct, &skald, &mut socket, &skald.sessions(WARMUP).await).await;
    // Created beforehand, so the CPU measured below is the replies' alone.
    let sessions = skald.sessions(replies).await;
    let ticks = cpu_ticks(server.pid());
    let started = Instant::now();
    let pairs = measure(&model, &direct, &skald, &mut socket, &sessions).await;
    let wall = started.elapsed();
    let cpu = Duration::from_secs_f64((cpu_ticks(server.pid()) - ticks) as f64 / ticks_per_second());

    report(&pairs, cpu / u32::try_from(replies).expect("a sane count"), wall);
    drop(socket);
    drop(server);
}

/// One direct and one Skald reply per conversation, interleaved.
async fn measure(
    model: &ScriptedModel,
    direct: &Direct<'_>,
    skald: &Skald<'_>,
    socket: &mut Socket,
    sessions: &[String],
) -> Vec<(Timing, Timing)> {
    let mut pairs = Vec::with_capacity(sessions.len());
    for (i, session) in sessions.iter().enumerate() {
        // Alternating which arm goes first cancels any edge of going first or second.
        let (d, s) = if i % 2 == 0 {
            model.push(Reply { tokens: Some(TOKENS), ..Reply::default() });
            let d = direct.reply().await;
            model.push(Reply { tokens: Some(TOKENS), ..Reply::default() });
            (d, skald.reply(socket, session).await)
        } else {
            model.push(Reply { tokens: Some(TOKENS), ..Reply::default() });
            let s = skald.reply(socket, session).await;
            model.push(Reply { tokens: Some(TOKENS), ..Reply::default() });
            (direct.reply().await, s)
        };
        pairs.push((d, s));
    }
    pairs
}

/// The model server, asked directly, as Skald's provider client would ask it.
struct Direct<'a> {
    client: &'a reqwest::Client,
    url: String,
    body: Value,
}

impl Direct<'_> {
    async fn reply(&self) -> Timing {
        tokio::time::timeout(REPLY_LIMIT, self.stream()).await.expect("the direct reply finished in time")
    }

    async fn stream(&self) -> Timing {
        let t0 = Instant::now();
        let response = self.client.post(&self.url).json(&self.body).send().await.expect("request to the model");
        assert_eq!(response.status().as_u16(), 200, "the scripted model refused: {:?}", response.text().await);
        let mut bytes = response.bytes_stream();
        let (mut buffer, mut first_token, mut last_token, mut tokens) = (Vec::<u8>::new(), None, t0.elapsed(), 0);
        while let Some(chunk) = bytes.next().await {
            buffer.extend_from_slice(&chunk.expect("the model's stream"));
            // An event ends at a blank line; a chunk may hold several, or part of one.
            while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = buffer.drain(..end + 2).collect();
                let event = std::str::from_utf8(&event).expect("UTF-8 events");
                let data: String = event
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(|data| data.strip_prefix(' ').unwrap_or(data).trim_end_matches('\r'))
                    .collect::<Vec<_>>()
                    .join("\n");
                if data.is_empty() {
                    continue;
                }
                if data == "[DONE]" {
                    assert_eq!(tokens, TOKENS, "every token arrived directly");
                    let first_token = first_token.expect("a token before the end");
                    return Timing { first_token, last_token, total: t0.elapsed(), ..Timing::default() };
                }
                let chunk: Value = serde_json::from_str(&data).expect("a JSON chunk");
                if chunk["choices"][0]["delta"]["content"].as_str().is_some_and(|text| !text.is_empty()) {
                    last_token = t0.elapsed();
                    first_token.get_or_insert(last_token);
                    tokens += 1;
                }
            }
        }
        panic!("the model's stream ended without [DONE]");
    }
}

/// A signed-in person on the running server, with the scripted model as their provider.
struct Skald<'a> {
    client: &'a reqwest::Client,
    port: u16,
    token: String,
}

impl<'a> Skald<'a> {
    async fn connect(client: &'a reqwest::Client, server: &Server, openai_base: &str) -> Skald<'a> {
        let launch = Skald { client, port: server.port, token: server.token.clone() };
        let setup = launch.post("/api/setup", json!({ "name": "Ada", "password": PASSWORD }), 201).await;
        let token = setup["token"].as_str().expect("a session token").to_owned();
        let person = Skald { token, ..launch };
        let provider = json!({ "name": "scripted", "kind": "openai", "base_url": openai_base });
        person.post("/api/providers", provider, 201).await;
        person
    }

    async fn post(&self, path: &str, body: Value, expected: u16) -> Value {
        let url = format!("http://127.0.0.1:{}{path}", self.port);
        let response = self.client.post(url).bearer_auth(&self.token).json(&body).send().await.expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("response body");
        assert_eq!(status, expected, "POST {path} answered {status}: {text}");
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("POST {path} answered with no JSON: {text}"))
    }

    /// Fresh conversations, one per reply, so every reply is sent the same context.
    async fn sessions(&self, count: usize) -> Vec<String> {
        let mut ids = Vec::with_capacity(count);
        for _ in 0..count {
            let created = self.post("/api/sessions", json!({}), 201).await;
            ids.push(created["id"].as_str().expect("a conversation id").to_owned());
        }
        ids
    }

    async fn socket(&self) -> Socket {
        let mut request = format!("ws://127.0.0.1:{}/api/ws", self.port).into_client_request().expect("ws request");
        let offered = format!("skald.v1, {}", ws_bearer_protocol(&self.token));
        request.headers_mut().insert("sec-websocket-protocol", offered.parse().expect("header"));
        let (mut socket, _) = tokio_tungstenite::connect_async(request).await.expect("the WebSocket opens");
        let hello = next_event(&mut socket).await;
        assert_eq!(hello["type"], "hello", "the socket's first event: {hello}");
        socket
    }

    async fn reply(&self, socket: &mut Socket, session: &str) -> Timing {
        tokio::time::timeout(REPLY_LIMIT, self.turn(socket, session)).await.expect("the Skald reply finished in time")
    }

    /// Sends the message and reads the socket at the same time: tokens may come before
    /// the 202.
    async fn turn(&self, socket: &mut Socket, session: &str) -> Timing {
        let t0 = Instant::now();
        let path = format!("/api/sessions/{session}/messages");
        let send = async {
            self.post(&path, json!({ "text": PROMPT }), 202).await;
            t0.elapsed()
        };
        let read = async {
            let (mut timing, mut first_token, mut tokens) = (Timing::default(), None, 0);
            loop {
                let event = next_event(socket).await;
                assert_ne!(event["type"], "lagged", "the socket fell behind the turn");
                if event["session"] != session {
                    continue;
                }
                match event["type"].as_str() {
                    Some("turn_started") => timing.turn_started = t0.elapsed(),
                    Some("token") => {
                        timing.last_token = t0.elapsed();
                        first_token.get_or_insert(timing.last_token);
                        tokens += 1;
                    }
                    Some("turn_ended") => {
                        timing.total = t0.elapsed();
                        assert_eq!(event["status"], "done", "the turn ended badly: {event}");
                        assert_eq!(tokens, TOKENS, "every token arrived through Skald");
                        timing.first_token = first_token.expect("a token before the end");
                        return timing;
                    }
                    _ => {}
                }
            }
        };
        let (accepted, timing) = tokio::join!(send, read);
        Timing { accepted, ..timing }
    }
}

/// The next event that is not a heartbeat.
async fn next_event(socket: &mut Socket) -> Value {
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

/// The real binary, `skald serve` on a free port, with its home in a temporary folder.
struct Server {
    child: Child,
    port: u16,
    token: String,
}

impl Server {
    fn start(dir: &Path) -> Server {
        let home = dir.join("home");
        let runtime = dir.join("run");
        std::fs::create_dir_all(&runtime).expect("runtime dir");
        std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700)).expect("0700");
        let mut child = Command::new(env!("CARGO_BIN_EXE_skald"))
            .args(["serve", "--port", "0", "--data-dir"])
            .arg(dir.join("data"))
            .env_remove("SKALD_DATA_DIR")
            // No session bus: the instance key falls back to a file in the data dir.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("DISPLAY")
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("XDG_RUNTIME_DIR", &runtime)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn skald serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (mut pipe, sink) = (child.stderr.take().expect("stderr"), Arc::clone(&stderr));
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                sink.lock().expect("stderr sink").push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let (stdout, (tx, rx)) = (child.stdout.take().expect("stdout"), mpsc::channel());
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Keep draining so a later write can never block the server.
            lines.for_each(drop);
        });
        let Ok(line) = rx.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            panic!("skald serve printed no ready line; stderr:\n{}", stderr.lock().expect("stderr sink"));
        };
        let ready =
            line.strip_prefix("skald listening on http://127.0.0.1:").and_then(|rest| rest.split_once(" token="));
        let Some((port, token)) = ready.and_then(|(port, token)| Some((port.parse().ok()?, token.to_owned()))) else {
            let _ = child.kill();
            panic!("a malformed ready line: {line:?}");
        };
        Server { child, port, token }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// utime + stime of a process, in clock ticks (fields 14 and 15 of `/proc/<pid>/stat`).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/<pid>/stat");
    // The command name (field 2) may hold spaces; the fields after it start with field 3.
    let after_name = stat.rsplit_once(')').expect("a parenthesized command name").1;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    fields[11..13].iter().map(|f| f.parse::<u64>().expect("a tick count")).sum()
}

fn ticks_per_second() -> f64 {
    let output = Command::new("getconf").arg("CLK_TCK").output().ok();
    output.and_then(|o| String::from_utf8(o.stdout).ok()).and_then(|s| s.trim().parse().ok()).unwrap_or(100.0)
}

fn report(pairs: &[(Timing, Timing)], cpu_per_reply: Duration, wall: Duration) {
    type Pick = fn(&Timing) -> Duration;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let skald = |pick: Pick| sorted(pairs.iter().map(|(_, s)| ms(pick(s))));
    let added = |pick: Pick| sorted(pairs.iter().map(|(d, s)| ms(pick(s)) - ms(pick(d))));
    println!(
        "chat_stream: {} replies of {TOKENS} tokens per arm (after {WARMUP} warm-up pairs), release build, {:.1} s",
        pairs.len(),
        wall.as_secs_f64()
    );
    println!(
        "{:<6} {:>14} {:>14} {:>14} {:>11}",
        "ms", "direct p50/p95", "skald p50/p95", "added p50/p95", "ratio p50"
    );
    let ttft: Pick = |t| t.first_token;
    let total: Pick = |t| t.total;
    for (name, pick, target) in [("ttft", ttft, 2.0), ("total", total, 3.0)] {
        let [d, s, a] = [sorted(pairs.iter().map(|(d, _)| ms(pick(d)))), skald(pick), added(pick)]
            .map(|v| (percentile(&v, 0.50), percentile(&v, 0.95)));
        let verdict = if a.0 <= target { "meets" } else { "misses" };
        println!(
            "{name:<6} {:>14} {:>14} {:>14} {:>10.2}x  ({verdict} the {target} ms target)",
            format!("{:.2}/{:.2}", d.0, d.1),
            format!("{:.2}/{:.2}", s.0, s.1),
            format!("{:.2}/{:.2}", a.0, a.1),
            s.0 / d.0,
        );
    }
    let p50 = |v: Vec<f64>| percentile(&v, 0.50);
    println!(
        "skald p50 from the POST: turn_started {:.2}, 202 {:.2}, first token {:.2}, last token {:.2}, turn_ended {:.2}",
        p50(skald(|t| t.turn_started)),
        p50(skald(|t| t.accepted)),
        p50(skald(|t| t.first_token)),
        p50(skald(|t| t.last_token)),
        p50(skald(|t| t.total)),
    );
    println!(
        "added p50: first to last token {:.2}, last token to the end {:.2}",
        p50(added(|t| t.last_token.saturating_sub(t.first_token))),
        p50(added(|t| t.total.saturating_sub(t.last_token))),
    );
    println!(
        "skald CPU per reply: {:.2} ms (utime+stime of the skald process over the measured loop)",
        ms(cpu_per_reply)
    );
}

fn sorted(samples: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut samples: Vec<f64> = samples.collect();
    samples.sort_by(f64::total_cmp);
    samples
}

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}
