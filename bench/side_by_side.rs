//! The side-by-side harness of `bench/run.sh` (issue 32): Skald against the model server
//! called directly and, with `--openwebui VENV`, against Open WebUI fronting the same
//! scripted model server, every arm measured in this one invocation and interleaved, so a
//! busy, shared machine slows all arms alike and the ratios stay comparable.
//!
//! Figures: exec → ready (median), idle PSS on a fresh and an existing data directory;
//! streaming 500-token replies one at a time (TTFT and total, p50/p95, what each front adds
//! over direct, CPU per reply); 10 people at once (TTFT, replies/s, added TTFT, CPU per
//! reply, and every reply checked whole). bench/README.md says what each one means.
//!
//! The client is Rust on tokio, as Skald's own provider client is, so no interpreter's
//! overhead lands in a time-to-first-token of a few milliseconds.
//!
//! `harness_side_by_side --skald BIN --scripted BIN [--openwebui VENV] [--quick] [--check]
//! [--budgets FILE]`; `--check` exits 1 when a measured figure misses its budget.

#![allow(clippy::print_stdout, reason = "the harness reports its table on stdout")]

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use scripted_model::{Reply, ScriptedModel};
use serde_json::{Value, json};

#[path = "../benches/support/mod.rs"]
#[allow(dead_code, reason = "each benchmark uses its own part of it")]
mod support;
use support::{Serve as SkaldServer, Socket, first_line, next_event, sandboxed, terminate};

const TOKENS: usize = 500;
const PROMPT: &str = "Count to five hundred";
const PASSWORD: &str = "otter lantern quietly";
/// The model id both fronts are pointed at (the scripted server's first model).
const MODEL: &str = "scripted-fast";
/// After the ready line (or the first healthy answer), how long a server is left alone
/// before its memory is read: start-up work that runs just after readiness counts.
const SETTLE: Duration = Duration::from_secs(3);
/// Far beyond any reply here: only a stuck arm ever waits this long.
const REPLY_LIMIT: Duration = Duration::from_secs(60);
/// Open WebUI takes seconds to start on these machines; this is only the give-up point.
const PEER_START_LIMIT: Duration = Duration::from_secs(300);

struct Args {
    skald: PathBuf,
    scripted: PathBuf,
    openwebui: Option<PathBuf>,
    openwebui_env: Option<PathBuf>,
    /// A `skald` built with the `desktop` feature, run under Xvfb for its memory.
    desktop: Option<PathBuf>,
    quick: bool,
    check: bool,
    budgets: Option<PathBuf>,
}

/// How much of each measurement to run.
#[derive(Clone, Copy)]
struct Counts {
    starts: usize,
    warmup: usize,
    replies: usize,
    people: usize,
    messages: usize,
    rounds: usize,
    /// Messages in the long conversation (a person's message and its reply are two).
    history: usize,
    /// Rounds of opening and of a turn's start, long against short.
    long_rounds: usize,
    /// Logins, each followed by a first reply.
    logins: usize,
}

impl Counts {
    fn new(quick: bool) -> Counts {
        if quick {
            Counts {
                starts: 1,
                warmup: 3,
                replies: 20,
                people: 10,
                messages: 3,
                rounds: 1,
                history: 1_000,
                long_rounds: 5,
                logins: 3,
            }
        } else {
            Counts {
                starts: 5,
                warmup: 20,
                replies: 200,
                people: 10,
                messages: 20,
                rounds: 2,
                history: 10_000,
                long_rounds: 30,
                logins: 10,
            }
        }
    }
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(err) => {
            eprintln!("side_by_side: {err}");
            return ExitCode::from(2);
        }
    };
    let budgets = match args.budgets.as_deref().map(Budgets::read).transpose() {
        Ok(budgets) => budgets,
        Err(err) => {
            eprintln!("side_by_side: {err}");
            return ExitCode::from(2);
        }
    };
    // As many workers as the machine has cores, the way skald itself runs.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let table = runtime.block_on(run(&args));
    let missed = table.print(budgets.as_ref());
    if args.check && budgets.is_some() && missed > 0 {
        eprintln!("side_by_side: {missed} budget(s) missed");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut skald, mut scripted, mut openwebui, mut openwebui_env, mut budgets) = (None, None, None, None, None);
    let mut desktop = None;
    let (mut quick, mut check) = (false, false);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().map(PathBuf::from).ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--skald" => skald = Some(value("--skald")?),
            "--scripted" => scripted = Some(value("--scripted")?),
            "--openwebui" => openwebui = Some(value("--openwebui")?),
            "--openwebui-env" => openwebui_env = Some(value("--openwebui-env")?),
            "--budgets" => budgets = Some(value("--budgets")?),
            "--desktop" => desktop = Some(value("--desktop")?),
            "--quick" => quick = true,
            "--check" => check = true,
            // `cargo bench` passes this to every bench target.
            "--bench" => {}
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let skald = skald.ok_or("--skald BIN is required")?;
    let scripted = scripted.ok_or("--scripted BIN is required")?;
    if check && budgets.is_none() {
        return Err("--check needs --budgets FILE".into());
    }
    if desktop.is_some() {
        for tool in ["Xvfb", "dbus-run-session"] {
            if !on_path(tool) {
                return Err(format!("--desktop needs {tool} on the PATH"));
            }
        }
    }
    Ok(Args { skald, scripted, openwebui, openwebui_env, desktop, quick, check, budgets })
}

async fn run(args: &Args) -> Table {
    let counts = Counts::new(args.quick);
    let work = tempfile::Builder::new().prefix("skald-side-by-side-").tempdir().expect("temp dir");
    let model = Scripted::start(&args.scripted);
    model.script().await;
    let client = reqwest::Client::builder().tcp_nodelay(true).build().expect("client");
    let mut table = Table::default();
    let peer = args.openwebui.as_deref().map(|venv| Peer {
        venv: venv.to_owned(),
        env: args
            .openwebui_env
            .clone()
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/peers/openwebui.env")),
        log: work.path().join("openwebui.log"),
    });

    eprintln!("preparing an existing data directory for each front");
    let skald_data = work.path().join("skald-existing");
    {
        let server = SkaldServer::start_headless(&args.skald, &skald_data, work.path());
        let admin = SkaldPerson::set_up(&client, &server, &model.openai_base()).await;
        admin.add_people(counts.people).await;
        server.stop();
    }
    let peer_data = work.path().join("openwebui-existing");
    if let Some(peer) = &peer {
        let server = peer.start(&peer_data, &model.openai_base()).await;
        server.sign_up(&client, counts.people + 1).await;
        server.stop();
    }

    eprintln!("start and idle memory: {} start(s) of each, fresh and existing", counts.starts);
    let mut starts = Starts::default();
    for i in 0..counts.starts {
        let fresh = work.path().join(format!("skald-fresh-{i}"));
        starts.skald_fresh.push(SkaldServer::measure_start(&args.skald, &fresh, work.path()));
        starts.skald_existing.push(SkaldServer::measure_start(&args.skald, &skald_data, work.path()));
        if let Some(peer) = &peer {
            let fresh = work.path().join(format!("openwebui-fresh-{i}"));
            starts.peer_fresh.push(peer.measure_start(&fresh, &model.openai_base()).await);
            starts.peer_existing.push(peer.measure_start(&peer_data, &model.openai_base()).await);
            // A fresh Open WebUI directory holds hundreds of megabytes of caches.
            let _ = std::fs::remove_dir_all(&fresh);
        }
    }
    table.starts(&starts);

    eprintln!("streaming: {} warm-up and {} measured replies per arm, interleaved", counts.warmup, counts.replies);
    let server = SkaldServer::start_headless(&args.skald, &skald_data, work.path());
    let people = SkaldPerson::log_in_all(&client, &server, counts.people + 1).await;
    let peer_server = match &peer {
        Some(peer) => Some(peer.start(&peer_data, &model.openai_base()).await),
        None => None,
    };
    let peer_people = match &peer_server {
        Some(s) => s.log_in_all(&client, counts.people + 1).await,
        None => Vec::new(),
    };
    let direct = Direct::capture(&client, &model, &people[0]).await;
    let arms = Arms { direct: &direct, skald: &people[0], peer: peer_people.first() };
    let streaming = arms.streaming(&server, peer_server.as_ref(), counts).await;
    table.streaming(&streaming);

    eprintln!(
        "{} people at once, {} message(s) each, {} round(s) of the three arms",
        counts.people, counts.messages, counts.rounds
    );
    let load = load(&direct, &server, &people[1..], peer_server.as_ref(), peer_people.get(1..), counts).await;
    table.load(&load);

    eprintln!("unlock: {} login(s), each on to its first token", counts.logins);
    let unlock = unlock(&client, &server, counts).await;
    table.unlock(&unlock);

    server.stop();
    if let Some(s) = peer_server {
        s.stop();
    }

    let long = long_conversation(&client, &args.skald, work.path(), counts).await;
    table.long(&long, counts);

    if let Some(bin) = &args.desktop {
        eprintln!("the desktop app under Xvfb: its memory once the page has rendered");
        let desktop = desktop_memory(bin, &skald_data, work.path());
        table.desktop(&desktop);
    }
    if let Some(peer) = &peer {
        table.note(format!("Open WebUI {}", peer.version()));
    }
    table.note(format!(
        "counts: {} start(s), {} streamed replies per arm, {} people x {} messages x {} round(s), \
         {} login(s); {TOKENS}-token replies from the scripted model server",
        counts.starts, counts.replies, counts.people, counts.messages, counts.rounds, counts.logins
    ));
    model.stop();
    table
}

// ---------------------------------------------------------------------------------------
// The scripted model server, as a process.

struct Scripted {
    child: Child,
    url: String,
}

impl Scripted {
    fn start(bin: &Path) -> Scripted {
        let mut child = Command::new(bin)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|err| panic!("starting {}: {err}", bin.display()));
        let (line, _) = first_line(&mut child, Duration::from_secs(30)).expect("the scripted model's ready line");
        let url = line.strip_prefix("scripted-model listening on ").expect("a scripted-model ready line").to_owned();
        Scripted { child, url }
    }

    fn openai_base(&self) -> String {
        format!("{}/v1", self.url)
    }

    /// Every chat request from now on gets the same 500-token reply, as fast as it can go.
    async fn script(&self) {
        let client = reqwest::Client::new();
        client.post(format!("{}/_scripted/reset", self.url)).send().await.expect("reset the scripted model");
        let reply = json!({ "tokens": TOKENS, "times": usize::MAX / 2 });
        let response =
            client.post(format!("{}/_scripted/replies", self.url)).json(&reply).send().await.expect("script");
        assert_eq!(response.status().as_u16(), 204, "the scripted model took the reply");
    }

    /// The body of the latest chat request that asked for a reply to the prompt (skald
    /// also asks the model things of its own after a turn, such as a title).
    async fn turn_request(&self) -> Value {
        let requests: Value = reqwest::get(format!("{}/_scripted/requests", self.url))
            .await
            .expect("the scripted model's requests")
            .json()
            .await
            .expect("JSON requests");
        let asked = json!({ "role": "user", "content": PROMPT });
        let turn = requests.as_array().and_then(|all| {
            all.iter().rev().find(|r| r["body"]["messages"].as_array().and_then(|m| m.last()) == Some(&asked))
        });
        turn.expect("skald asked the model for the reply")["body"].clone()
    }

    fn stop(self) {}
}

/// A panic mid-run still stops every server the harness started.
impl Drop for Scripted {
    fn drop(&mut self) {
        terminate(&mut self.child);
    }
}

// ---------------------------------------------------------------------------------------
// Skald.

impl SkaldServer {
    /// `skald serve` on `data`. Open WebUI runs with its title generation off
    /// (bench/peers/openwebui.env): so does Skald, or its title request would count against
    /// its CPU per reply.
    fn start_headless(bin: &Path, data: &Path, work: &Path) -> SkaldServer {
        SkaldServer::start(bin, data, work, &[("SKALD_AUTO_TITLES", OsStr::new("off"))])
    }

    /// Exec → ready line, then idle PSS after [`SETTLE`].
    fn measure_start(bin: &Path, data: &Path, work: &Path) -> Start {
        let server = SkaldServer::start_headless(bin, data, work);
        std::thread::sleep(SETTLE);
        let pid = server.child.id();
        let start = Start { ready: server.ready, pss_tree: pss(pid), pss_main: pss(pid) };
        server.stop();
        start
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// A signed-in person on a running skald (or, before sign-in, the launch token's holder).
struct SkaldPerson {
    client: reqwest::Client,
    port: u16,
    token: String,
    /// The launch token, for the routes marked L (login, enrolment).
    launch: String,
}

impl SkaldPerson {
    fn launch(client: &reqwest::Client, server: &SkaldServer) -> SkaldPerson {
        let token = server.token.clone();
        SkaldPerson { client: client.clone(), port: server.port, launch: token.clone(), token }
    }

    fn with_token(&self, token: &str) -> SkaldPerson {
        SkaldPerson {
            client: self.client.clone(),
            port: self.port,
            token: token.to_owned(),
            launch: self.launch.clone(),
        }
    }

    async fn set_up(client: &reqwest::Client, server: &SkaldServer, openai_base: &str) -> SkaldPerson {
        let launch = SkaldPerson::launch(client, server);
        launch.post("/api/setup", json!({ "name": person_name(0), "password": PASSWORD }), 201).await;
        let admin = launch.log_in(0).await;
        let provider = json!({ "name": "scripted", "kind": "openai", "base_url": openai_base });
        admin.post("/api/providers", provider, 201).await;
        admin
    }

    /// People 1..=count, each enrolled with their own password.
    async fn add_people(&self, count: usize) {
        let launch = self.with_token(&self.launch);
        for i in 1..=count {
            let created = self.post("/api/users", json!({ "name": person_name(i), "role": "member" }), 201).await;
            let code = created["enrolment_code"].as_str().expect("an enrolment code");
            let enrol = json!({ "name": person_name(i), "enrolment_code": code, "password": PASSWORD });
            launch.post("/api/enrol", enrol, 201).await;
        }
    }

    async fn log_in(&self, i: usize) -> SkaldPerson {
        let launch = self.with_token(&self.launch);
        let answer = launch.post("/api/login", json!({ "name": person_name(i), "password": PASSWORD }), 200).await;
        self.with_token(answer["token"].as_str().expect("a session token"))
    }

    async fn log_in_all(client: &reqwest::Client, server: &SkaldServer, count: usize) -> Vec<SkaldPerson> {
        let launch = SkaldPerson::launch(client, server);
        let mut people = Vec::with_capacity(count);
        for i in 0..count {
            people.push(launch.log_in(i).await);
        }
        people
    }

    async fn post(&self, path: &str, body: Value, expected: u16) -> Value {
        let url = format!("http://127.0.0.1:{}{path}", self.port);
        let response = self.client.post(url).bearer_auth(&self.token).json(&body).send().await.expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("response body");
        assert_eq!(status, expected, "POST {path} answered {status}: {text}");
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("POST {path} answered with no JSON: {text}"))
    }

    async fn get(&self, path: &str) -> Value {
        let url = format!("http://127.0.0.1:{}{path}", self.port);
        let response = self.client.get(url).bearer_auth(&self.token).send().await.expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("response body");
        assert_eq!(status, 200, "GET {path} answered {status}: {text}");
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("GET {path} answered with no JSON: {text}"))
    }

    /// Opens a conversation as the web UI does (skald-chat): the conversation and the
    /// latest page of its history ([`OPEN_TURNS`] turns), asked at once. How long until
    /// both answered, and the page's rows.
    async fn open(&self, session: &str) -> (Duration, usize) {
        let t0 = Instant::now();
        let conversation = format!("/api/sessions/{session}");
        let history = format!("/api/sessions/{session}/messages?turns={OPEN_TURNS}");
        let (_, history) = tokio::join!(self.get(&conversation), self.get(&history));
        (t0.elapsed(), history.as_array().map_or(0, Vec::len))
    }

    /// `POST /api/logout`: the session ends and its key is forgotten.
    async fn log_out(&self) {
        let url = format!("http://127.0.0.1:{}/api/logout", self.port);
        let response = self.client.post(url).bearer_auth(&self.token).send().await.expect("request");
        assert_eq!(response.status().as_u16(), 204, "POST /api/logout answered {}", response.status());
    }

    /// Fresh conversations, one per reply, so every reply is sent the same context.
    async fn sessions(&self, count: usize) -> Vec<String> {
        self.sessions_with(count, json!({})).await
    }

    /// Fresh conversations made with `body` (a model to pin, say).
    async fn sessions_with(&self, count: usize, body: Value) -> Vec<String> {
        let mut ids = Vec::with_capacity(count);
        for _ in 0..count {
            let created = self.post("/api/sessions", body.clone(), 201).await;
            ids.push(created["id"].as_str().expect("a conversation id").to_owned());
        }
        ids
    }

    async fn socket(&self) -> Socket {
        support::socket(self.port, &self.token).await
    }

    async fn reply(&self, socket: &mut Socket, session: &str) -> Timing {
        self.exchange(socket, session, PROMPT, expected_text()).await
    }

    /// One turn of `text`, whose reply should be `expected`, within [`REPLY_LIMIT`].
    async fn exchange(&self, socket: &mut Socket, session: &str, text: &str, expected: &str) -> Timing {
        let turn = self.turn(socket, session, text, expected);
        tokio::time::timeout(REPLY_LIMIT, turn).await.expect("the Skald reply finished in time")
    }

    /// Sends the message and reads the socket at the same time: tokens may come before
    /// the 202. Both clocks start at the POST, as the direct arm's does.
    async fn turn(&self, socket: &mut Socket, session: &str, said: &str, expected: &str) -> Timing {
        let t0 = Instant::now();
        let path = format!("/api/sessions/{session}/messages");
        let send = self.post(&path, json!({ "text": said }), 202);
        let read = async {
            let (mut first_token, mut text, mut seq, mut lost) = (None, String::new(), None::<u64>, 0);
            loop {
                let event = next_event(socket).await;
                if event["type"] == "lagged" {
                    lost += 1;
                    continue;
                }
                if event["session"] != session {
                    continue;
                }
                if let (Some(now), Some(before)) = (event["seq"].as_u64(), seq)
                    && now != before + 1
                {
                    lost += 1;
                }
                seq = event["seq"].as_u64().or(seq);
                match event["type"].as_str() {
                    Some("token") => {
                        first_token.get_or_insert(t0.elapsed());
                        text.push_str(event["text"].as_str().unwrap_or_default());
                    }
                    Some("turn_ended") => {
                        let total = t0.elapsed();
                        let whole = event["status"] == "done" && text == expected;
                        return Timing { first_token: first_token.unwrap_or(total), total, whole, lost };
                    }
                    _ => {}
                }
            }
        };
        let (_, timing) = tokio::join!(send, read);
        timing
    }
}

fn person_name(i: usize) -> String {
    format!("Person {i}")
}

// ---------------------------------------------------------------------------------------
// The model server called directly, and SSE reading (shared with Open WebUI's stream).

/// Exactly what Skald sends the model (prompt, message and tool catalogue), sent directly.
struct Direct {
    client: reqwest::Client,
    url: String,
    body: Value,
}

impl Direct {
    async fn capture(client: &reqwest::Client, model: &Scripted, skald: &SkaldPerson) -> Direct {
        let session = skald.sessions(1).await;
        let mut socket = skald.socket().await;
        let timing = skald.reply(&mut socket, &session[0]).await;
        assert!(timing.whole, "the first Skald reply came whole");
        let body = model.turn_request().await;
        Direct { client: client.clone(), url: format!("{}/chat/completions", model.openai_base()), body }
    }

    async fn reply(&self) -> Timing {
        let request = self.client.post(&self.url).json(&self.body);
        tokio::time::timeout(REPLY_LIMIT, read_sse(request)).await.expect("the direct reply finished in time")
    }
}

/// Posts an OpenAI streaming request and reads its `data:` events to `[DONE]`.
async fn read_sse(request: reqwest::RequestBuilder) -> Timing {
    let t0 = Instant::now();
    let response = request.send().await.expect("a streaming request");
    let status = response.status().as_u16();
    if status != 200 {
        panic!("a streaming request answered {status}: {:?}", response.text().await);
    }
    let mut bytes = response.bytes_stream();
    let (mut buffer, mut first_token, mut text) = (Vec::<u8>::new(), None, String::new());
    while let Some(chunk) = bytes.next().await {
        buffer.extend_from_slice(&chunk.expect("the stream"));
        // An event ends at a blank line; a chunk may hold several, or part of one.
        while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
            let event: Vec<u8> = buffer.drain(..end + 2).collect();
            let event = String::from_utf8_lossy(&event);
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
                let total = t0.elapsed();
                let whole = text == expected_text();
                return Timing { first_token: first_token.unwrap_or(total), total, whole, lost: 0 };
            }
            let Ok(chunk) = serde_json::from_str::<Value>(&data) else { continue };
            if let Some(piece) = chunk["choices"][0]["delta"]["content"].as_str().filter(|t| !t.is_empty()) {
                first_token.get_or_insert(t0.elapsed());
                text.push_str(piece);
            }
        }
    }
    let total = t0.elapsed();
    Timing { first_token: first_token.unwrap_or(total), total, whole: false, lost: 0 }
}

/// The reply the scripted model streams for `tokens: 500`.
fn expected_text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| (0..TOKENS).map(|i| format!(" tok{i}")).collect())
}

// ---------------------------------------------------------------------------------------
// Open WebUI.

struct Peer {
    venv: PathBuf,
    /// bench/peers/openwebui.env
    env: PathBuf,
    log: PathBuf,
}

struct PeerServer {
    child: Child,
    port: u16,
    ready: Duration,
}

impl Peer {
    fn version(&self) -> String {
        std::fs::read_to_string(self.venv.join("version")).map(|v| v.trim().to_owned()).unwrap_or_else(|_| "?".into())
    }

    /// Runs `open-webui serve` offline against the scripted model: the settings are
    /// bench/peers/openwebui.env (its comments say where each comes from).
    async fn start(&self, data: &Path, openai_base: &str) -> PeerServer {
        std::fs::create_dir_all(data).expect("the peer's data dir");
        let port = free_port();
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).expect("the peer's log");
        let mut command = Command::new(self.venv.join("bin/open-webui"));
        command.args(["serve", "--host", "127.0.0.1", "--port", &port.to_string()]);
        for (key, value) in peer_env(&self.env) {
            command.env(key, value);
        }
        let started = Instant::now();
        let mut child = command
            .env("DATA_DIR", data)
            .env("OPENAI_API_BASE_URL", openai_base)
            .env("OPENAI_API_BASE_URLS", openai_base)
            .env("WEBUI_SECRET_KEY", "side-by-side-bench")
            .env("HOME", data)
            .current_dir(data)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|err| panic!("starting Open WebUI from {}: {err}", self.venv.display()));
        let client = reqwest::Client::new();
        let health = format!("http://127.0.0.1:{port}/health");
        loop {
            if let Ok(response) = client.get(&health).send().await
                && response.status().is_success()
            {
                break;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("Open WebUI exited with {status} before it answered; see {}", self.log.display());
            }
            if started.elapsed() > PEER_START_LIMIT {
                terminate_tree(&mut child);
                panic!("Open WebUI did not answer /health within {PEER_START_LIMIT:?}; see {}", self.log.display());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        PeerServer { child, port, ready: started.elapsed() }
    }

    async fn measure_start(&self, data: &Path, openai_base: &str) -> Start {
        let server = self.start(data, openai_base).await;
        tokio::time::sleep(SETTLE).await;
        let pid = server.child.id();
        let tree = process_tree(pid);
        let start = Start { ready: server.ready, pss_tree: tree.iter().map(|p| pss(*p)).sum(), pss_main: pss(pid) };
        server.stop();
        start
    }
}

/// `KEY=value` lines; `#` starts a comment line.
fn peer_env(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|err| panic!("reading {}: {err}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (key, value) =
                line.split_once('=').unwrap_or_else(|| panic!("{}: not KEY=value: {line}", path.display()));
            (key.trim().to_owned(), value.trim().to_owned())
        })
        .collect()
}

/// A signed-in Open WebUI account.
struct PeerPerson {
    client: reqwest::Client,
    port: u16,
    token: String,
}

impl PeerServer {
    /// Accounts 0..count: the first by the public signup (it becomes the admin, and
    /// Open WebUI then turns signup off by itself), the others added by that admin.
    async fn sign_up(&self, client: &reqwest::Client, count: usize) {
        let body = json!({ "name": person_name(0), "email": peer_email(0), "password": PASSWORD });
        let admin = self.post_auth(client, "/api/v1/auths/signup", body, None).await;
        let token = admin["token"].as_str().expect("the admin's token");
        for i in 1..count {
            let body = json!({ "name": person_name(i), "email": peer_email(i), "password": PASSWORD, "role": "user" });
            self.post_auth(client, "/api/v1/auths/add", body, Some(token)).await;
        }
    }

    async fn log_in_all(&self, client: &reqwest::Client, count: usize) -> Vec<PeerPerson> {
        let mut people = Vec::with_capacity(count);
        for i in 0..count {
            let body = json!({ "email": peer_email(i), "password": PASSWORD });
            let answer = self.post_auth(client, "/api/v1/auths/signin", body, None).await;
            let token = answer["token"].as_str().expect("an Open WebUI token").to_owned();
            people.push(PeerPerson { client: client.clone(), port: self.port, token });
        }
        people
    }

    async fn post_auth(&self, client: &reqwest::Client, path: &str, body: Value, token: Option<&str>) -> Value {
        let mut request = client.post(format!("http://127.0.0.1:{}{path}", self.port)).json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        assert_eq!(status, 200, "Open WebUI's {path} answered {status}: {text}");
        serde_json::from_str(&text).expect("JSON")
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn stop(self) {}
}

impl Drop for PeerServer {
    fn drop(&mut self) {
        terminate_tree(&mut self.child);
    }
}

fn peer_email(i: usize) -> String {
    format!("person{i}@example.com")
}

impl PeerPerson {
    /// One reply through `/api/chat/completions`, streamed, as a script would ask it.
    async fn reply(&self) -> Timing {
        let body = json!({
            "model": MODEL,
            "stream": true,
            "messages": [{ "role": "user", "content": PROMPT }],
        });
        let request = self
            .client
            .post(format!("http://127.0.0.1:{}/api/chat/completions", self.port))
            .bearer_auth(&self.token)
            .json(&body);
        tokio::time::timeout(REPLY_LIMIT, read_sse(request)).await.expect("the Open WebUI reply finished in time")
    }
}

// ---------------------------------------------------------------------------------------
// Streaming, one reply at a time.

#[derive(Clone, Copy, Default)]
struct Timing {
    first_token: Duration,
    total: Duration,
    /// Every token arrived, in order, and the reply ended well.
    whole: bool,
    /// Events missed: a gap in a turn's sequence numbers, or a `lagged` notice.
    lost: usize,
}

struct Arms<'a> {
    direct: &'a Direct,
    skald: &'a SkaldPerson,
    peer: Option<&'a PeerPerson>,
}

#[derive(Default)]
struct Streaming {
    direct: Vec<Timing>,
    skald: Vec<Timing>,
    peer: Vec<Timing>,
    skald_cpu: Duration,
    peer_cpu: Duration,
}

impl Arms<'_> {
    async fn streaming(&self, skald: &SkaldServer, peer: Option<&PeerServer>, counts: Counts) -> Streaming {
        let mut socket = self.skald.socket().await;
        let warmup = self.skald.sessions(counts.warmup).await;
        let mut ignored = Streaming::default();
        for (i, session) in warmup.iter().enumerate() {
            self.round(i, session, &mut socket, &mut ignored).await;
        }
        // Created beforehand, so the CPU measured below is the replies' alone.
        let sessions = self.skald.sessions(counts.replies).await;
        let mut measured = Streaming::default();
        let skald_ticks = cpu_ticks(&[skald.pid()]);
        let peer_ticks = peer.map(|p| cpu_ticks(&process_tree(p.pid())));
        for (i, session) in sessions.iter().enumerate() {
            self.round(i, session, &mut socket, &mut measured).await;
        }
        measured.skald_cpu = per_reply(cpu_ticks(&[skald.pid()]) - skald_ticks, counts.replies);
        if let (Some(p), Some(before)) = (peer, peer_ticks) {
            measured.peer_cpu = per_reply(cpu_ticks(&process_tree(p.pid())) - before, counts.replies);
        }
        measured
    }

    /// One reply of each arm, the order rotating so no arm always goes first.
    async fn round(&self, i: usize, session: &str, socket: &mut Socket, into: &mut Streaming) {
        let arms = if self.peer.is_some() { 3 } else { 2 };
        for k in 0..arms {
            match (i + k) % arms {
                0 => into.direct.push(self.direct.reply().await),
                1 => into.skald.push(self.skald.reply(socket, session).await),
                _ => into.peer.push(self.peer.expect("a peer arm").reply().await),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Many people at once.

#[derive(Default)]
struct Phase {
    replies: Vec<Timing>,
    wall: Duration,
    cpu: Duration,
}

#[derive(Default)]
struct Load {
    direct: Phase,
    skald: Phase,
    peer: Phase,
}

impl Phase {
    fn add(&mut self, other: Phase) {
        self.replies.extend(other.replies);
        self.wall += other.wall;
        self.cpu += other.cpu;
    }
}

async fn load(
    direct: &Direct,
    skald: &SkaldServer,
    people: &[SkaldPerson],
    peer: Option<&PeerServer>,
    peer_people: Option<&[PeerPerson]>,
    counts: Counts,
) -> Load {
    let mut load = Load::default();
    let arms = if peer.is_some() { 3 } else { 2 };
    for round in 0..counts.rounds {
        for k in 0..arms {
            match (round + k) % arms {
                0 => load.direct.add(direct_phase(direct, counts).await),
                1 => load.skald.add(skald_phase(skald, people, counts).await),
                _ => load.peer.add(peer_phase(peer.expect("peer"), peer_people.expect("peer accounts"), counts).await),
            }
        }
    }
    load
}

async fn direct_phase(direct: &Direct, counts: Counts) -> Phase {
    let started = Instant::now();
    let clients = (0..counts.people).map(|_| async move {
        let mut replies = Vec::with_capacity(counts.messages);
        for _ in 0..counts.messages {
            replies.push(direct.reply().await);
        }
        replies
    });
    let replies = futures_util::future::join_all(clients).await.into_iter().flatten().collect();
    Phase { replies, wall: started.elapsed(), cpu: Duration::ZERO }
}

async fn skald_phase(server: &SkaldServer, people: &[SkaldPerson], counts: Counts) -> Phase {
    let mut prepared = Vec::with_capacity(people.len());
    for person in people.iter().take(counts.people) {
        prepared.push((person, person.socket().await, person.sessions(counts.messages).await));
    }
    let ticks = cpu_ticks(&[server.pid()]);
    let started = Instant::now();
    let clients = prepared.into_iter().map(|(person, mut socket, sessions)| async move {
        let mut replies = Vec::with_capacity(sessions.len());
        for session in &sessions {
            replies.push(person.reply(&mut socket, session).await);
        }
        replies
    });
    let replies: Vec<Timing> = futures_util::future::join_all(clients).await.into_iter().flatten().collect();
    let wall = started.elapsed();
    let cpu = per_reply(cpu_ticks(&[server.pid()]) - ticks, 1);
    Phase { replies, wall, cpu }
}

async fn peer_phase(server: &PeerServer, people: &[PeerPerson], counts: Counts) -> Phase {
    let tree = process_tree(server.pid());
    let ticks = cpu_ticks(&tree);
    let started = Instant::now();
    let clients = people.iter().take(counts.people).map(|person| async move {
        let mut replies = Vec::with_capacity(counts.messages);
        for _ in 0..counts.messages {
            replies.push(person.reply().await);
        }
        replies
    });
    let replies: Vec<Timing> = futures_util::future::join_all(clients).await.into_iter().flatten().collect();
    let wall = started.elapsed();
    let cpu = per_reply(cpu_ticks(&process_tree(server.pid())) - ticks, 1);
    Phase { replies, wall, cpu }
}

// ---------------------------------------------------------------------------------------
// Unlock: a login through the server, and on to the first token.

/// One person's logins, each on to the first token of a reply.
#[derive(Default)]
struct Unlock {
    /// `POST /api/login`: argon2id with the calibrated parameters, and opening the private
    /// SQLCipher file. Milliseconds.
    login: Vec<f64>,
    /// From the login's POST through the WebSocket, a new conversation and the message's
    /// POST to the first `token` event. Milliseconds.
    first_token: Vec<f64>,
}

/// Logs the last person in again and again, each time on to a reply, then out, so every
/// login derives the key and opens the file anew.
async fn unlock(client: &reqwest::Client, server: &SkaldServer, counts: Counts) -> Unlock {
    let launch = SkaldPerson::launch(client, server);
    let mut unlock = Unlock::default();
    for _ in 0..counts.logins {
        let t0 = Instant::now();
        let person = launch.log_in(counts.people).await;
        let login = t0.elapsed();
        let mut socket = person.socket().await;
        let session = person.sessions(1).await;
        let sent = t0.elapsed();
        let timing = person.reply(&mut socket, &session[0]).await;
        assert!(timing.whole, "the reply after a login came whole");
        unlock.login.push(ms(login));
        unlock.first_token.push(ms(sent + timing.first_token));
        person.log_out().await;
    }
    unlock
}

// ---------------------------------------------------------------------------------------
// A long conversation against short ones of the same person.

/// The turns the web UI reads when it opens a conversation (`PAGE_TURNS` in
/// web/src/components/skald-chat/skald-chat.ts); earlier ones are read as the person scrolls.
const OPEN_TURNS: usize = 40;

/// The model both the long and the short conversations are pinned to: the scripted
/// server's smallest window.
const LONG_MODEL: &str = "scripted/scripted-fast";

/// The messages of each short conversation.
const SHORT_HISTORY: usize = 10;
/// The reply to every message here: one token, so the fill goes as fast as skald takes it.
const ONE_TOKEN: &str = " tok0";

/// When a request reached the model server, by the text of the person's message it ends
/// with (the first time only).
type Arrivals = Arc<Mutex<HashMap<String, Instant>>>;

/// Milliseconds per round, the short conversation's and the long one's.
#[derive(Default)]
struct Long {
    open_short: Vec<f64>,
    open_long: Vec<f64>,
    start_short: Vec<f64>,
    start_long: Vec<f64>,
    token_short: Vec<f64>,
    token_long: Vec<f64>,
    /// The rows of each history page as it was last opened.
    rows_short: usize,
    rows_long: usize,
    /// How long putting the long conversation in took.
    fill: Duration,
}

/// A person with one conversation of `counts.history` messages and `counts.long_rounds`
/// of [`SHORT_HISTORY`] messages, all put in through the API on a fresh data directory;
/// then opening and a turn's start, long against short, interleaved.
///
/// The model server here runs in this process, so it can tell the moment a request
/// arrived: its responder notes the time and answers one token.
async fn long_conversation(client: &reqwest::Client, bin: &Path, work: &Path, counts: Counts) -> Long {
    let model = ScriptedModel::start().await;
    let arrivals: Arrivals = Arc::default();
    let seen = Arc::clone(&arrivals);
    model.respond_with(move |body| {
        let now = Instant::now();
        if let Some(text) = last_user_text(body) {
            lock(&seen).entry(text.to_owned()).or_insert(now);
        }
        Some(Reply { tokens: Some(1), ..Reply::default() })
    });
    let server = SkaldServer::start_headless(bin, &work.join("skald-long"), work);
    let person = SkaldPerson::set_up(client, &server, &model.openai_base()).await;
    let mut socket = person.socket().await;
    let mut long = Long::default();

    eprintln!("a {}-message conversation, put in through the API", thousands(counts.history));
    // Pinned to the model with the smallest window (8,192 tokens): the 10,000 messages
    // then run far past it, so what a turn sends is a summary and the latest turns, as it
    // is in any conversation longer than its model's window. On the default model
    // (128,000 tokens) nearly all of them fit, and every request carries them all.
    let pinned = json!({ "model": LONG_MODEL });
    let long_id = person.sessions_with(1, pinned.clone()).await.remove(0);
    let started = Instant::now();
    for i in 0..counts.history / 2 {
        let said = format!("Note {i}: the bins go out on Thursday and the ferns want water");
        let timing = person.exchange(&mut socket, &long_id, &said, ONE_TOKEN).await;
        assert!(timing.whole, "turn {i} of the long conversation came whole");
        if (i + 1).is_multiple_of(1000) {
            eprintln!("  {} messages in {:.0} s", thousands(2 * (i + 1)), started.elapsed().as_secs_f64());
        }
    }
    long.fill = started.elapsed();
    // A short conversation per round: a turn adds two messages, so none is measured twice.
    let shorts = person.sessions_with(counts.long_rounds, pinned).await;
    for (r, short) in shorts.iter().enumerate() {
        for i in 0..SHORT_HISTORY / 2 {
            let timing = person.exchange(&mut socket, short, &format!("Short {r}, note {i}"), ONE_TOKEN).await;
            assert!(timing.whole, "turn {i} of short conversation {r} came whole");
        }
    }

    eprintln!("opening and a turn's start: {} round(s), long and short interleaved", counts.long_rounds);
    // Once each first, unmeasured: the first read of the file warms its pages for both.
    person.open(&long_id).await;
    person.open(&shorts[0]).await;
    for (r, short) in shorts.iter().enumerate() {
        for k in 0..2 {
            if (r + k) % 2 == 0 {
                let (took, rows) = person.open(&long_id).await;
                long.open_long.push(ms(took));
                long.rows_long = rows;
            } else {
                let (took, rows) = person.open(short).await;
                long.open_short.push(ms(took));
                long.rows_short = rows;
            }
        }
    }
    for (r, short) in shorts.iter().enumerate() {
        for k in 0..2 {
            let is_long = (r + k) % 2 == 0;
            let (session, said) = if is_long {
                (&long_id, format!("Probe {r} of the long conversation"))
            } else {
                (short, format!("Probe {r} of a short conversation"))
            };
            let t0 = Instant::now();
            let timing = person.exchange(&mut socket, session, &said, ONE_TOKEN).await;
            assert!(timing.whole, "probe {r} came whole");
            let arrived = lock(&arrivals).get(&said).copied().expect("the model server received the turn's request");
            let start = ms(arrived.saturating_duration_since(t0));
            let (starts, tokens) = if is_long {
                (&mut long.start_long, &mut long.token_long)
            } else {
                (&mut long.start_short, &mut long.token_short)
            };
            starts.push(start);
            tokens.push(ms(timing.first_token));
        }
    }
    server.stop();
    model.shut_down();
    long
}

/// The text of a chat request's last message when a person wrote it (OpenAI's shape).
fn last_user_text(body: &Value) -> Option<&str> {
    let last = body["messages"].as_array()?.last()?;
    if last["role"] != "user" {
        return None;
    }
    last["content"].as_str()
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// 10000 as "10,000".
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------------------
// The desktop app under Xvfb.

/// Far beyond the smoke test's start on this machine: only a stuck window waits this long.
const DESKTOP_LIMIT: Duration = Duration::from_secs(180);
/// skald's own default log filter, set so the page's report reaches stderr whatever the
/// caller's `SKALD_LOG` says.
const LOG_FILTER: &str = "info,sqlx=warn,hyper=warn,tower=warn,llama_cpp_2=warn";

struct DesktopMemory {
    /// Exec → the page's `rendered` report in the log.
    rendered: Duration,
    /// KiB, the `skald` process.
    app: u64,
    /// Each process skald started (WebKit's), by name, with its PSS in KiB.
    helpers: Vec<(String, u64)>,
}

/// A process stopped with all it started when this goes, on every path out.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        terminate_tree(&mut self.0);
    }
}

/// Runs the desktop app on `data` under an Xvfb display of its own and a private D-Bus
/// session (as tests/desktop/smoke.sh does), waits for the page to report it rendered,
/// leaves it [`SETTLE`], and reads the PSS of `skald` and of every process under it.
fn desktop_memory(bin: &Path, data: &Path, work: &Path) -> Result<DesktopMemory, String> {
    let mut xvfb = Reaped(
        Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "1280x900x24", "-nolisten", "tcp"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| format!("starting Xvfb: {err}"))?,
    );
    let display = first_line(&mut xvfb.0, Duration::from_secs(30))
        .map(|(line, _)| line.trim().to_owned())
        .filter(|n| n.parse::<u32>().is_ok())
        .ok_or("Xvfb named no display")?;
    let log_path = work.join("desktop.log");
    let mut log = std::fs::File::create(&log_path).map_err(|err| format!("{}: {err}", log_path.display()))?;
    let started = Instant::now();
    let mut app = Reaped(
        sandboxed(
            Command::new("dbus-run-session").arg("--").arg(bin).arg("--data-dir").arg(data),
            &work.join("desktop"),
        )
        .env("DISPLAY", format!(":{display}"))
        .env_remove("WAYLAND_DISPLAY")
        // As the smoke test: without it WebKit draws a blank window under Xvfb.
        .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
        .env("SKALD_LOG", LOG_FILTER)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("starting dbus-run-session {}: {err}", bin.display()))?,
    );
    // The page posts `rendered` once its first screen (here the login picker) is on screen.
    let stderr = app.0.stderr.take().expect("piped stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("page reported") && line.contains("Rendered") {
                let _ = tx.send(Instant::now());
            }
            let _ = std::io::Write::write_all(&mut log, format!("{line}\n").as_bytes());
        }
    });
    let rendered = rx
        .recv_timeout(DESKTOP_LIMIT)
        .map_err(|_| format!("the page reported no render within {DESKTOP_LIMIT:?}; see {}", log_path.display()))?;
    std::thread::sleep(SETTLE);
    let exe = std::fs::canonicalize(bin).map_err(|err| format!("{}: {err}", bin.display()))?;
    let skald = process_tree(app.0.id())
        .into_iter()
        .find(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|path| path == exe))
        .ok_or("no skald process under dbus-run-session")?;
    let helpers =
        process_tree(skald).into_iter().filter(|pid| *pid != skald).map(|pid| (program(pid), pss(pid))).collect();
    let memory = DesktopMemory { rendered: rendered - started, app: pss(skald), helpers };
    // Quit as the tray would (SIGTERM); then anything of the tree still there is killed,
    // WebKit's processes included, which skald's exit would otherwise leave to init.
    let tree = process_tree(app.0.id());
    let _ = Command::new("kill").args(["-TERM", &skald.to_string()]).status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{skald}")).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    for pid in tree.into_iter().filter(|pid| *pid != app.0.id()) {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).stderr(Stdio::null()).status();
    }
    drop(app);
    drop(xvfb);
    Ok(memory)
}

/// The process's program name, whole (`/proc/PID/comm` cuts it at 15 bytes).
fn program(pid: u32) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let first = cmdline.split(|b| *b == 0).next().unwrap_or_default();
    let name = Path::new(std::str::from_utf8(first).unwrap_or_default()).file_name();
    name.and_then(|n| n.to_str()).filter(|n| !n.is_empty()).unwrap_or("?").to_owned()
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
}

// ---------------------------------------------------------------------------------------
// Processes: start, stop, memory, CPU.

#[derive(Clone, Copy)]
struct Start {
    ready: Duration,
    /// KiB, summed over the process tree.
    pss_tree: u64,
    /// KiB, the main process alone.
    pss_main: u64,
}

#[derive(Default)]
struct Starts {
    skald_fresh: Vec<Start>,
    skald_existing: Vec<Start>,
    peer_fresh: Vec<Start>,
    peer_existing: Vec<Start>,
}

/// Stops a process and every process it started.
fn terminate_tree(child: &mut Child) {
    let others: Vec<u32> = process_tree(child.id()).into_iter().filter(|p| *p != child.id()).collect();
    terminate(child);
    for pid in others {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).stderr(Stdio::null()).status();
    }
}

/// The process and all its descendants, from `/proc/*/stat`'s parent ids.
fn process_tree(root: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        if let Some(ppid) = stat_fields(&stat).get(1).and_then(|f| f.parse::<u32>().ok()) {
            parents.push((pid, ppid));
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(parents.iter().filter(|(_, ppid)| *ppid == parent).map(|(pid, _)| *pid));
        i += 1;
    }
    tree
}

/// The fields of `/proc/<pid>/stat` after the command name (field 3 onwards), which may
/// itself hold spaces.
fn stat_fields(stat: &str) -> Vec<&str> {
    stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default()
}

/// Proportional set size in KiB, from `/proc/<pid>/smaps_rollup`; 0 for a process gone.
fn pss(pid: u32) -> u64 {
    let Ok(rollup) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) else { return 0 };
    rollup
        .lines()
        .find_map(|line| line.strip_prefix("Pss:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// utime + stime summed over these processes, in clock ticks (fields 14 and 15).
fn cpu_ticks(pids: &[u32]) -> u64 {
    pids.iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .map(|stat| stat_fields(&stat)[11..13].iter().map(|f| f.parse::<u64>().unwrap_or(0)).sum::<u64>())
        .sum()
}

fn per_reply(ticks: u64, replies: usize) -> Duration {
    let seconds = ticks as f64 / ticks_per_second() / replies.max(1) as f64;
    Duration::from_secs_f64(seconds)
}

fn ticks_per_second() -> f64 {
    let output = Command::new("getconf").arg("CLK_TCK").output().ok();
    output.and_then(|o| String::from_utf8(o.stdout).ok()).and_then(|s| s.trim().parse().ok()).unwrap_or(100.0)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}

// ---------------------------------------------------------------------------------------
// Budgets and the table.

/// bench/budgets.toml: `[section]` headers and `key = number` lines, `#` comments.
struct Budgets(BTreeMap<String, f64>);

impl Budgets {
    fn read(path: &Path) -> Result<Budgets, String> {
        let text = std::fs::read_to_string(path).map_err(|err| format!("reading {}: {err}", path.display()))?;
        let (mut section, mut budgets) = (String::new(), BTreeMap::new());
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = name.trim().to_owned();
                continue;
            }
            let bad = || format!("{}:{}: expected `key = number`, found {line:?}", path.display(), n + 1);
            let (key, value) = line.split_once('=').ok_or_else(bad)?;
            let value: f64 = value.trim().parse().map_err(|_| bad())?;
            let key = format!("{section}.{}", key.trim());
            if !KNOWN_BUDGETS.contains(&key.as_str()) {
                return Err(format!("{}:{}: unknown budget {key:?}", path.display(), n + 1));
            }
            budgets.insert(key, value);
        }
        Ok(Budgets(budgets))
    }
}

const KNOWN_BUDGETS: [&str; 11] = [
    "within.long_turn_start",
    "mib.desktop_pss",
    "ratio.idle_pss",
    "ratio.ready",
    "ratio.cpu_per_reply",
    "ratio.load_added_ttft",
    "ratio.load_cpu_per_reply",
    "added_ms.ttft_p50",
    "added_ms.total_p50",
    "count.load_incomplete",
    "count.lost_events",
];

/// One line of a table: its cells after the figure's name. `checked` is the figure
/// compared with the budget `key` (at most).
struct Row {
    name: String,
    cells: Vec<String>,
    checked: Option<(&'static str, f64)>,
}

/// A table of its own after the main one, for figures whose arms are not direct, Skald
/// and Open WebUI (the long conversation's are two conversations of one person).
struct Section {
    columns: Vec<String>,
    rows: Vec<Row>,
}

#[derive(Default)]
struct Table {
    /// The main table: direct, Skald, Open WebUI, Skald / Open WebUI.
    rows: Vec<Row>,
    sections: Vec<Section>,
    notes: Vec<String>,
    peer: bool,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn sorted(samples: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut samples: Vec<f64> = samples.collect();
    samples.sort_by(f64::total_cmp);
    samples
}

/// Nearest-rank percentile of sorted samples; NaN when there are none.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn p50_p95(samples: &[f64]) -> (f64, f64) {
    (percentile(samples, 0.5), percentile(samples, 0.95))
}

fn pair(p: (f64, f64)) -> String {
    if p.0.is_nan() { String::new() } else { format!("{:.2} / {:.2}", p.0, p.1) }
}

fn one(v: f64, digits: usize) -> String {
    if v.is_nan() { String::new() } else { format!("{v:.digits$}") }
}

fn ratio(skald: f64, peer: f64) -> f64 {
    if peer > 0.0 { skald / peer } else { f64::NAN }
}

impl Table {
    fn row(&mut self, name: &str, direct: String, skald: String, peer: String, ratio: f64) -> &mut Row {
        self.rows.push(Row {
            name: name.to_owned(),
            cells: vec![direct, skald, peer, ratio_text(ratio)],
            checked: None,
        });
        self.rows.last_mut().expect("just pushed")
    }

    fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    fn starts(&mut self, starts: &Starts) {
        self.peer = !starts.peer_fresh.is_empty();
        let ready: fn(&Start) -> f64 = |s| ms(s.ready);
        let tree: fn(&Start) -> f64 = |s| s.pss_tree as f64 / 1024.0;
        let main: fn(&Start) -> f64 = |s| s.pss_main as f64 / 1024.0;
        for (label, skald, peer) in [
            ("fresh", &starts.skald_fresh, &starts.peer_fresh),
            ("existing", &starts.skald_existing, &starts.peer_existing),
        ] {
            let (s, p) = (median(skald, ready), median(peer, ready));
            let r = ratio(s, p);
            let row = self.row(
                &format!("exec → ready, {label} data dir (ms, median)"),
                String::new(),
                one(s, 1),
                one(p, 0),
                r,
            );
            if !r.is_nan() {
                row.checked = Some(("ratio.ready", r));
            }
            let (s, p, pm) = (median(skald, tree), median(peer, tree), median(peer, main));
            let r = ratio(s, p);
            let peer_text = if p.is_nan() { String::new() } else { format!("{p:.1} (main {pm:.1})") };
            let row = self.row(&format!("idle PSS, {label} data dir (MiB)"), String::new(), one(s, 1), peer_text, r);
            if !r.is_nan() {
                row.checked = Some(("ratio.idle_pss", r));
            }
        }
    }

    fn streaming(&mut self, st: &Streaming) {
        type Pick = fn(&Timing) -> Duration;
        let ttft: Pick = |t| t.first_token;
        let total: Pick = |t| t.total;
        let dist = |v: &[Timing], pick: Pick| sorted(v.iter().map(|t| ms(pick(t))));
        // What a front adds: the per-round difference from the direct reply of that round.
        let added = |v: &[Timing], pick: Pick| {
            sorted(v.iter().zip(&st.direct).map(|(front, direct)| ms(pick(front)) - ms(pick(direct))))
        };
        for (label, pick, key) in [("TTFT", ttft, "added_ms.ttft_p50"), ("total", total, "added_ms.total_p50")] {
            let (d, s, p) = (dist(&st.direct, pick), dist(&st.skald, pick), dist(&st.peer, pick));
            self.row(
                &format!("streaming {label} (ms, p50 / p95)"),
                pair(p50_p95(&d)),
                pair(p50_p95(&s)),
                pair(p50_p95(&p)),
                f64::NAN,
            );
            let (sa, pa) = (p50_p95(&added(&st.skald, pick)), p50_p95(&added(&st.peer, pick)));
            let row = self.row(
                &format!("  added {label} over direct (ms, p50 / p95)"),
                String::new(),
                pair(sa),
                pair(pa),
                ratio(sa.0, pa.0),
            );
            row.checked = Some((key, sa.0));
        }
        let (s, p) = (ms(st.skald_cpu), ms(st.peer_cpu));
        let r = if self.peer { ratio(s, p) } else { f64::NAN };
        let peer_text = if self.peer { one(p, 2) } else { String::new() };
        let row = self.row("CPU per streamed reply (ms)", String::new(), one(s, 2), peer_text, r);
        if !r.is_nan() {
            row.checked = Some(("ratio.cpu_per_reply", r));
        }
        let lost: usize = st.skald.iter().map(|t| t.lost).sum();
        let broken = st.direct.iter().chain(&st.skald).chain(&st.peer).filter(|t| !t.whole).count();
        let row = self.row(
            "streaming: replies incomplete / events lost",
            count_of(&st.direct, false),
            format!("{} / {lost}", count_of(&st.skald, false)),
            if self.peer { count_of(&st.peer, false) } else { String::new() },
            f64::NAN,
        );
        row.checked = Some(("count.lost_events", (broken + lost) as f64));
    }

    fn load(&mut self, load: &Load) {
        let ttft = |phase: &Phase| sorted(phase.replies.iter().map(|t| ms(t.first_token)));
        let (d, s, p) = (ttft(&load.direct), ttft(&load.skald), ttft(&load.peer));
        self.row("10 people: TTFT (ms, p50 / p95)", pair(p50_p95(&d)), pair(p50_p95(&s)), pair(p50_p95(&p)), f64::NAN);
        let (sa, pa) = (percentile(&s, 0.5) - percentile(&d, 0.5), percentile(&p, 0.5) - percentile(&d, 0.5));
        let r = if self.peer { ratio(sa, pa) } else { f64::NAN };
        let row = self.row("  added TTFT over direct under load (ms, p50)", String::new(), one(sa, 2), one(pa, 2), r);
        if !r.is_nan() {
            row.checked = Some(("ratio.load_added_ttft", r));
        }
        let rate = |phase: &Phase| phase.replies.len() as f64 / phase.wall.as_secs_f64();
        let (dr, sr, pr) = (rate(&load.direct), rate(&load.skald), rate(&load.peer));
        let peer_rate = if self.peer { one(pr, 1) } else { String::new() };
        self.row("10 people: replies/s (reported, no budget)", one(dr, 1), one(sr, 1), peer_rate, ratio(sr, pr));
        let cpu = |phase: &Phase| ms(phase.cpu) / phase.replies.len().max(1) as f64;
        let (sc, pc) = (cpu(&load.skald), cpu(&load.peer));
        let r = if self.peer { ratio(sc, pc) } else { f64::NAN };
        let row = self.row(
            "10 people: CPU per reply (ms)",
            String::new(),
            one(sc, 2),
            if self.peer { one(pc, 2) } else { String::new() },
            r,
        );
        if !r.is_nan() {
            row.checked = Some(("ratio.load_cpu_per_reply", r));
        }
        let lost: usize = load.skald.replies.iter().map(|t| t.lost).sum();
        let broken = [&load.direct, &load.skald, &load.peer]
            .iter()
            .flat_map(|phase| &phase.replies)
            .filter(|t| !t.whole)
            .count();
        let row = self.row(
            "10 people: replies incomplete / events lost",
            count_of(&load.direct.replies, false),
            format!("{} / {lost}", count_of(&load.skald.replies, false)),
            if self.peer { count_of(&load.peer.replies, false) } else { String::new() },
            f64::NAN,
        );
        row.checked = Some(("count.load_incomplete", (broken + lost) as f64));
    }

    fn unlock(&mut self, unlock: &Unlock) {
        let dist = |v: &[f64]| pair(p50_p95(&sorted(v.iter().copied())));
        self.row(
            "unlock: POST /api/login, argon2id as calibrated + the private file (ms, p50 / p95)",
            String::new(),
            dist(&unlock.login),
            String::new(),
            f64::NAN,
        );
        self.row(
            "login → first token: login, WebSocket, new conversation, message (ms, p50 / p95)",
            String::new(),
            dist(&unlock.first_token),
            String::new(),
            f64::NAN,
        );
    }

    /// The long conversation's own table: short, long, long / short (of the p50s).
    fn long(&mut self, long: &Long, counts: Counts) {
        let many = thousands(counts.history);
        let columns =
            vec![format!("{SHORT_HISTORY} messages"), format!("{many} messages"), format!("{many} / {SHORT_HISTORY}")];
        let mut rows = Vec::new();
        let mut row = |name: &str, short: &[f64], long: &[f64], key: Option<&'static str>| {
            let (s, l) = (p50_p95(&sorted(short.iter().copied())), p50_p95(&sorted(long.iter().copied())));
            let r = ratio(l.0, s.0);
            let checked = key.filter(|_| !r.is_nan()).map(|key| (key, r));
            rows.push(Row { name: name.to_owned(), cells: vec![pair(s), pair(l), ratio_text(r)], checked });
        };
        row(
            "open a conversation: it and its history, as the web UI asks (ms, p50 / p95)",
            &long.open_short,
            &long.open_long,
            None,
        );
        row(
            "a turn's start: POST of the message → the model server has the request (ms, p50 / p95)",
            &long.start_short,
            &long.start_long,
            Some("within.long_turn_start"),
        );
        row("  POST → first token, 1-token replies (ms, p50 / p95)", &long.token_short, &long.token_long, None);
        self.sections.push(Section { columns, rows });
        let turns = counts.history / 2;
        self.note(format!(
            "the long conversation: {many} messages put in through the API in {:.0} s ({:.0} turns/s); \
             its history page held {} rows, a short one's {}; {} round(s); both pinned to {LONG_MODEL} \
             (a window of 8,192 tokens)",
            long.fill.as_secs_f64(),
            turns as f64 / long.fill.as_secs_f64(),
            thousands(long.rows_long),
            long.rows_short,
            counts.long_rounds,
        ));
    }

    fn desktop(&mut self, desktop: &Result<DesktopMemory, String>) {
        let memory = match desktop {
            Ok(memory) => memory,
            Err(why) => {
                let row = self.row(
                    "desktop app under Xvfb: PSS (MiB)",
                    String::new(),
                    "failed".into(),
                    String::new(),
                    f64::NAN,
                );
                row.checked = Some(("mib.desktop_pss", f64::INFINITY));
                self.note(format!("the desktop app: {why}"));
                return;
            }
        };
        let mib = |kib: u64| kib as f64 / 1024.0;
        let helpers: u64 = memory.helpers.iter().map(|(_, kib)| kib).sum();
        let total = mib(memory.app + helpers);
        let row = self.row(
            "desktop app under Xvfb: PSS of skald and the processes it started (MiB)",
            String::new(),
            one(total, 1),
            String::new(),
            f64::NAN,
        );
        row.checked = Some(("mib.desktop_pss", total));
        self.row("  the skald process (MiB)", String::new(), one(mib(memory.app), 1), String::new(), f64::NAN);
        let mut names: Vec<&str> = memory.helpers.iter().map(|(name, _)| name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        self.row(
            &format!("  its {} processes: {} (MiB)", memory.helpers.len(), names.join(", ")),
            String::new(),
            one(mib(helpers), 1),
            String::new(),
            f64::NAN,
        );
        self.row(
            "desktop app: exec → the page reports it rendered (ms)",
            String::new(),
            one(ms(memory.rendered), 0),
            String::new(),
            f64::NAN,
        );
    }

    /// Prints the tables (Markdown) and returns how many budgets were missed.
    fn print(&self, budgets: Option<&Budgets>) -> usize {
        let mut missed = 0;
        let main = ["direct", "Skald", "Open WebUI", "Skald / Open WebUI"].map(String::from);
        missed += print_table(&main, &self.rows, budgets);
        for section in &self.sections {
            println!();
            missed += print_table(&section.columns, &section.rows, budgets);
        }
        println!();
        for note in &self.notes {
            println!("- {note}");
        }
        missed
    }
}

/// One Markdown table: the figure, `columns`, and the budget's verdict; returns how many
/// budgets its rows missed.
fn print_table(columns: &[String], rows: &[Row], budgets: Option<&Budgets>) -> usize {
    let mut missed = 0;
    println!("| figure | {} | budget |", columns.join(" | "));
    println!("|---|{}---|", "---:|".repeat(columns.len()));
    for row in rows {
        let verdict = match (row.checked, budgets) {
            (Some((key, value)), Some(budgets)) => match budgets.0.get(key) {
                Some(limit) if value <= *limit => format!("≤ {limit} ({key}): holds"),
                Some(limit) => {
                    missed += 1;
                    format!("≤ {limit} ({key}): **misses**")
                }
                None => String::new(),
            },
            _ => String::new(),
        };
        println!("| {} | {} | {verdict} |", row.name, row.cells.join(" | "));
    }
    missed
}

fn ratio_text(ratio: f64) -> String {
    if ratio.is_nan() { String::new() } else { format!("{ratio:.3}") }
}

fn median(starts: &[Start], pick: fn(&Start) -> f64) -> f64 {
    percentile(&sorted(starts.iter().map(pick)), 0.5)
}

/// How many replies did not come whole, as text.
fn count_of(replies: &[Timing], whole: bool) -> String {
    if replies.is_empty() {
        return String::new();
    }
    replies.iter().filter(|t| t.whole == whole).count().to_string()
}
