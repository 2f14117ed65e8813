//! Double-click → first streamed word (issue 32's moonshot: ≤ 3 s on a 2-core laptop), for
//! the backend: from exec of `skald serve` on an existing data directory, whose one person
//! talks to the built-in model, to the first `token` event of their first message after
//! signing in, with the model file in the page cache (read once before each round). Each
//! round is a fresh process, split into:
//!
//! - exec → ready: spawning `skald serve --port 0` to its ready line;
//! - sign-in: `POST /api/login` (the calibrated argon2id unwrap and opening the person's
//!   encrypted file);
//! - new conversation: the live-event socket opened and `POST /api/sessions`;
//! - send → first word: `POST /api/sessions/{id}/messages` to the first `token` event, and
//!   within it what the engine reports (`GET /api/local-models`): the worker's model load
//!   and the prompt's evaluation; the rest is the worker's start, composing the context and
//!   the first token's generation and delivery.
//!
//! The window would add the webview's start and the page's first paint (WebKit's processes
//! under the desktop feature), which this headless measure leaves out.
//!
//! With llama-cpp-python's server at hand (`tests/fetch-llama-server.sh`, found through
//! `SKALD_LLAMA_SERVER_BIN` or its `--cached` folder), each round also runs it on the same
//! file, threads and window: exec → ready (it loads the model before it listens) and its
//! first streamed token of the same message, interleaved with Skald's rounds.
//!
//! The model: the catalogue's default (`qwen2.5-1.5b-instruct`) when its file is in the
//! models cache, else `SKALD_BENCH_GGUF`, else the test model (`tests/fetch-test-model.sh`).
//! `cargo bench --features local-model --bench first_word` (`SKALD_BENCH_ROUNDS`, 5).

#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};

#[path = "support/mod.rs"]
#[allow(dead_code, reason = "each benchmark uses its own part of it")]
mod support;
use support::{Serve, next_event, socket, terminate};

const NAME: &str = "Ada";
const PASSWORD: &str = "otter lantern quietly";
const MESSAGE: &str = "Hello! In one sentence, what can you help me with?";
/// The catalogue's default model's file name, as its download is kept.
const DEFAULT_MODEL_FILE: &str = "qwen2.5-1.5b-instruct-q4_k_m.gguf";
const TEST_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// Loading a model and a first word on a busy machine: generous, never hit on a good run.
const LIMIT: Duration = Duration::from_secs(300);

fn main() {
    let rounds = env_number("SKALD_BENCH_ROUNDS").unwrap_or(5);
    let (model, which) = model();
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get()).min(8);
    let skald = skald_binary();
    let peer = llama_server_python();
    let work = tempfile::tempdir().expect("temp dir");
    let data = work.path().join("data");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");

    eprintln!("first_word: setting up {} with {}", data.display(), model.display());
    runtime.block_on(set_up(&skald, &data, work.path(), &model));

    let (mut skald_rounds, mut peer_rounds) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        warm(&model);
        let measured = runtime.block_on(skald_round(&skald, &data, work.path(), &model));
        eprintln!("first_word: round {}: Skald {:.0} ms to the first word", round + 1, measured.total_ms());
        skald_rounds.push(measured);
        if let Some(python) = &peer {
            warm(&model);
            let measured = runtime.block_on(peer_round(python, &model, threads, work.path()));
            eprintln!("first_word: round {}: llama-cpp-python {:.0} ms to the first word", round + 1, measured.1);
            peer_rounds.push(measured);
        }
    }

    let pick = |f: fn(&Round) -> f64| median(skald_rounds.iter().map(f).collect());
    let evaluated = median(skald_rounds.iter().map(|r| r.evaluated_tokens as f64).collect());
    println!(
        "model: {which} ({}, {:.0} MiB), {threads} threads, page cache warm; median of {rounds} rounds",
        model.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        std::fs::metadata(&model).map_or(0.0, |m| m.len() as f64 / (1 << 20) as f64)
    );
    println!();
    println!("| double-click → first word (headless `skald serve`) | ms (median) |");
    println!("|---|---|");
    println!("| exec → ready line | {:.0} |", pick(|r| r.ready_ms));
    println!("| sign-in (`POST /api/login`: argon2id + opening the encrypted file) | {:.0} |", pick(|r| r.login_ms));
    println!("| live-event socket + new conversation | {:.0} |", pick(|r| r.conversation_ms));
    println!("| send → first `token` event | {:.0} |", pick(|r| r.first_word_ms));
    println!("| · of which the worker loading the model | {:.0} |", pick(|r| r.load_ms));
    println!("| · of which evaluating the prompt ({evaluated:.0} tokens) | {:.0} |", pick(|r| r.prompt_ms));
    println!(
        "| · the rest (worker start, context, first token, delivery) | {:.0} |",
        pick(|r| r.first_word_ms - r.load_ms - r.prompt_ms)
    );
    println!("| **exec → first word** (moonshot ≤ 3,000 on a 2-core laptop) | **{:.0}** |", pick(Round::total_ms));
    println!(
        "| CPU time, exec → first word: `skald` + its model worker | {:.0} + {:.0} |",
        pick(|r| r.cpu_skald_ms),
        pick(|r| r.cpu_worker_ms)
    );
    if peer_rounds.is_empty() {
        println!(
            "| llama-cpp-python's server, same model | not at hand (tests/fetch-llama-server.sh, or \
             SKALD_LLAMA_SERVER_BIN) |"
        );
    } else {
        let ready = median(peer_rounds.iter().map(|r| r.0).collect());
        let total = median(peer_rounds.iter().map(|r| r.1).collect());
        println!("| llama-cpp-python's server, same model: exec → ready (model loaded) | {ready:.0} |");
        println!("| llama-cpp-python's server: exec → first streamed token (message alone) | {total:.0} |");
        let cpu = median(peer_rounds.iter().map(|r| r.2).collect());
        println!("| llama-cpp-python's server: CPU time, exec → first token | {cpu:.0} |");
        println!("| Skald's exec → first word ÷ llama-cpp-python's | {:.2}× |", pick(Round::total_ms) / total);
        println!(
            "| Skald's CPU time to the first word ÷ llama-cpp-python's | {:.2}× |",
            pick(|r| r.cpu_skald_ms + r.cpu_worker_ms) / cpu
        );
    }
}

/// One round of Skald, in milliseconds.
struct Round {
    ready_ms: f64,
    login_ms: f64,
    conversation_ms: f64,
    first_word_ms: f64,
    load_ms: f64,
    prompt_ms: f64,
    evaluated_tokens: u64,
    /// CPU time (utime + stime) from exec to the first word: `skald`, and its worker processes.
    cpu_skald_ms: f64,
    cpu_worker_ms: f64,
}

impl Round {
    fn total_ms(&self) -> f64 {
        self.ready_ms + self.login_ms + self.conversation_ms + self.first_word_ms
    }
}

/// The model to measure and how it was chosen.
fn model() -> (PathBuf, &'static str) {
    let cache = home(".cache/skald/models");
    let default = cache.join(DEFAULT_MODEL_FILE);
    if default.is_file() {
        return (default, "the catalogue's default, Qwen2.5 1.5B Instruct Q4_K_M");
    }
    if let Some(path) = std::env::var_os("SKALD_BENCH_GGUF") {
        return (PathBuf::from(path), "SKALD_BENCH_GGUF");
    }
    let test = std::env::var_os("SKALD_TEST_GGUF").map_or_else(|| cache.join(TEST_MODEL_FILE), PathBuf::from);
    if !test.is_file() {
        eprintln!(
            "first_word: no model: neither {} (the catalogue's default) nor the test model {} (tests/fetch-test-model.sh)",
            default.display(),
            test.display()
        );
        std::process::exit(1);
    }
    (test, "the test model, SmolLM2 135M Instruct Q4_1 (the catalogue's tiny one; its default is not in the cache)")
}

/// The model file read whole, so it is in the page cache as after any earlier use.
fn warm(model: &Path) {
    let mut file = std::fs::File::open(model).expect("the model file");
    let mut buffer = vec![0u8; 1 << 20];
    while file.read(&mut buffer).expect("reading the model") > 0 {}
}

/// The data directory: the administrator, and the model imported (the only model, so the
/// one their conversations use).
async fn set_up(skald: &Path, data: &Path, work: &Path, model: &Path) {
    let server = Serve::start(skald, data, work, &[("SKALD_IMPORT_DIRS", import_dir(model))]);
    let client = reqwest::Client::new();
    let setup = post(&client, server.port, &server.token, "/api/setup", json!({ "name": NAME, "password": PASSWORD }))
        .await
        .expect("setup");
    let token = setup["token"].as_str().expect("a session token").to_owned();
    let path = model.to_str().expect("a UTF-8 path");
    post(&client, server.port, &token, "/api/local-models", json!({ "path": path })).await.expect("the model imports");
    server.stop();
}

async fn skald_round(skald: &Path, data: &Path, work: &Path, model: &Path) -> Round {
    let server = Serve::start(skald, data, work, &[("SKALD_IMPORT_DIRS", import_dir(model))]);
    let pid = server.child.id();
    let ready_ms = ms(server.ready);
    let client = reqwest::Client::new();

    let started = Instant::now();
    let login = post(&client, server.port, &server.token, "/api/login", json!({ "name": NAME, "password": PASSWORD }))
        .await
        .expect("sign-in");
    let login_ms = ms(started.elapsed());
    let token = login["token"].as_str().expect("a session token").to_owned();

    let started = Instant::now();
    let mut socket = socket(server.port, &token).await;
    let created = post(&client, server.port, &token, "/api/sessions", json!({})).await.expect("a conversation");
    let session = created["id"].as_str().expect("a conversation id").to_owned();
    let conversation_ms = ms(started.elapsed());

    let started = Instant::now();
    let path = format!("/api/sessions/{session}/messages");
    let send = post(&client, server.port, &token, &path, json!({ "text": MESSAGE }));
    let read = async {
        let mut first = None;
        loop {
            let event = next_event(&mut socket).await;
            if event["session"] != session.as_str() {
                continue;
            }
            match event["type"].as_str() {
                Some("token") => {
                    first.get_or_insert_with(|| (started.elapsed(), cpu_ms(&process_tree(pid))));
                }
                Some("turn_ended") => {
                    assert_eq!(event["status"], "done", "the turn ended badly: {event}");
                    return first.expect("a token before the turn ended");
                }
                _ => {}
            }
        }
    };
    let (sent, (first, cpu)) =
        tokio::time::timeout(LIMIT, async { tokio::join!(send, read) }).await.expect("a reply in time");
    sent.expect("the message is taken");
    let first_word_ms = ms(first);

    let overview = get(&client, server.port, &token, "/api/local-models").await;
    let engine = &overview["engine"];
    let model_id = engine["loaded"]["model"].as_str().unwrap_or_default();
    assert!(!model_id.is_empty(), "the built-in model answered: {overview}");
    let last = &engine["last_request"];
    assert_eq!(last["number"], 1, "the first request since start: {last}");
    let round = Round {
        ready_ms,
        login_ms,
        conversation_ms,
        first_word_ms,
        cpu_skald_ms: cpu.0,
        cpu_worker_ms: cpu.1,
        load_ms: engine["loaded"]["load_ms"].as_f64().unwrap_or(0.0),
        prompt_ms: last["prompt_ms"].as_f64().unwrap_or(0.0),
        evaluated_tokens: last["evaluated_tokens"].as_u64().unwrap_or(0),
    };
    server.stop();
    round
}

/// llama-cpp-python's server on the same file: exec → ready, exec → first streamed token
/// of the same message, and its CPU time to then, in milliseconds.
async fn peer_round(python: &Path, model: &Path, threads: usize, work: &Path) -> (f64, f64, f64) {
    let port = free_port();
    let log = std::fs::File::create(work.join("llama-cpp-python.log")).expect("log");
    let exec = Instant::now();
    let mut child = Command::new(python)
        .args(["-m", "llama_cpp.server", "--model"])
        .arg(model)
        .args(["--n_ctx", "8192", "--n_threads", &threads.to_string()])
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("llama_cpp.server starts");
    let client = reqwest::Client::new();
    let models = format!("http://127.0.0.1:{port}/v1/models");
    let ready = loop {
        if client.get(&models).send().await.is_ok_and(|r| r.status().is_success()) {
            break exec.elapsed();
        }
        assert!(exec.elapsed() < LIMIT, "llama_cpp.server did not start; see {}", work.display());
        assert!(child.try_wait().ok().flatten().is_none(), "llama_cpp.server exited; see {}", work.display());
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let body = json!({ "messages": [{ "role": "user", "content": MESSAGE }], "stream": true, "max_tokens": 64 });
    let response = client
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .json(&body)
        .send()
        .await
        .expect("the request");
    assert!(response.status().is_success(), "llama_cpp.server answered {}", response.status());
    let mut stream = response.bytes_stream();
    let mut pending = String::new();
    let first = 'read: loop {
        let chunk = stream.next().await.expect("a token before the stream ends").expect("the stream");
        pending.push_str(&String::from_utf8_lossy(&chunk));
        // Whole lines only; the first `data:` event whose delta has text is the first word.
        while let Some(end) = pending.find('\n') {
            let line: String = pending.drain(..=end).collect();
            let Some(data) = line.trim().strip_prefix("data:") else { continue };
            let Ok(event) = serde_json::from_str::<Value>(data.trim()) else { continue };
            if event["choices"][0]["delta"]["content"].as_str().is_some_and(|text| !text.is_empty()) {
                break 'read (exec.elapsed(), cpu_ms(&[child.id()]).0);
            }
        }
    };
    terminate(&mut child);
    (ms(ready), ms(first.0), first.1)
}

/// The folder the model is imported from, which the server must be told it may read.
fn import_dir(model: &Path) -> &OsStr {
    model.parent().expect("the model's folder").as_os_str()
}

/// `python` of llama-cpp-python's environment, when it is built.
fn llama_server_python() -> Option<PathBuf> {
    let bin = std::env::var_os("SKALD_LLAMA_SERVER_BIN").map(PathBuf::from).or_else(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fetch-llama-server.sh");
        let output = Command::new(script).arg("--cached").output().ok()?;
        let printed = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        (!printed.is_empty()).then(|| PathBuf::from(printed))
    })?;
    let python = bin.join("python");
    python.is_file().then_some(python)
}

async fn post(client: &reqwest::Client, port: u16, token: &str, path: &str, body: Value) -> Result<Value, String> {
    let url = format!("http://127.0.0.1:{port}{path}");
    let response = client.post(url).bearer_auth(token).json(&body).send().await.map_err(|err| err.to_string())?;
    let status = response.status();
    let text = response.text().await.map_err(|err| err.to_string())?;
    if !status.is_success() {
        return Err(format!("POST {path} answered {status}: {text}"));
    }
    serde_json::from_str(&text).map_err(|_| format!("POST {path} answered with no JSON: {text}"))
}

async fn get(client: &reqwest::Client, port: u16, token: &str, path: &str) -> Value {
    let url = format!("http://127.0.0.1:{port}{path}");
    let response = client.get(url).bearer_auth(token).send().await.expect("request");
    assert!(response.status().is_success(), "GET {path} answered {}", response.status());
    response.json().await.expect("JSON")
}

/// `root` and every process under it.
fn process_tree(root: u32) -> Vec<u32> {
    let mut tree = vec![root];
    let mut at = 0;
    while at < tree.len() {
        // A child is listed under the thread that started it.
        let tasks = std::fs::read_dir(format!("/proc/{}/task", tree[at])).into_iter().flatten().flatten();
        for task in tasks {
            let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            tree.extend(children.split_whitespace().filter_map(|pid| pid.parse::<u32>().ok()));
        }
        at += 1;
    }
    tree
}

/// CPU time (utime + stime) of the first process in `pids` and of the others together, in
/// milliseconds.
fn cpu_ms(pids: &[u32]) -> (f64, f64) {
    let per_tick = 1000.0 / rustix::param::clock_ticks_per_second() as f64;
    let ticks = |pid: &u32| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
        [11, 12].iter().filter_map(|i| fields.get(*i)?.parse::<u64>().ok()).sum::<u64>() as f64 * per_tick
    };
    let first = pids.first().map_or(0.0, ticks);
    (first, pids.iter().skip(1).map(ticks).fold(0.0, |sum, ms| sum + ms))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("its address").port()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.trim().parse().ok().filter(|n| *n > 0)
}

fn home(path: &str) -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(path)
}

/// The `skald` to start: `SKALD_BENCH_SKALD` (bench/run.sh's copy, which another build in
/// the shared target dir cannot replace mid-run), else the one cargo built with this bench.
fn skald_binary() -> std::path::PathBuf {
    std::env::var_os("SKALD_BENCH_SKALD").map_or_else(|| env!("CARGO_BIN_EXE_skald").into(), Into::into)
}
