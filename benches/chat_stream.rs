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

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use scripted_model::{Reply, ScriptedModel};
use serde_json::{Value, json};

#[path = "support/mod.rs"]
#[allow(dead_code, reason = "each benchmark uses its own part of it")]
mod support;
use support::{Serve, Socket, next_event};

const TOKENS: usize = 500;
const WARMUP: usize = 20;
const DEFAULT_REPLIES: usize = 200;
const PROMPT: &str = "Count to five hundred";
const PASSWORD: &str = "otter lantern quietly";
/// Far beyond any reply here: only a stuck arm ever waits this long.
const REPLY_LIMIT: Duration = Duration::from_secs(30);

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
    let data = dir.path().join("data");
    let server = Serve::start(Path::new(env!("CARGO_BIN_EXE_skald")), &data, dir.path(), &[]);
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
    let ticks = cpu_ticks(server.child.id());
    let started = Instant::now();
    let pairs = measure(&model, &direct, &skald, &mut socket, &sessions).await;
    let wall = started.elapsed();
    let cpu = Duration::from_secs_f64((cpu_ticks(server.child.id()) - ticks) as f64 / ticks_per_second());

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
    async fn connect(client: &'a reqwest::Client, server: &Serve, openai_base: &str) -> Skald<'a> {
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
        support::socket(self.port, &self.token).await
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
