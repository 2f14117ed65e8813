//! Load (§8.1): ten people chatting at once against the scripted model, each reply
//! streamed a token every few milliseconds so the turns overlap, beside a WebSocket client
//! that floods the server with frames, one that reads slowly and one that never reads.
//! Every turn ends `done` with all its text on its person's socket — in order, none
//! missing, never `lagged` — no request is answered 5xx, the flood starves nobody, and the
//! server is alive at the end and exits cleanly.
//!
//! Memory: the skald process's PSS (`/proc/PID/smaps_rollup`) is read once the warm-up
//! (a fifth of the run, at least 5 s) is over and again at the end; the end must be at most
//! 1.5 × the warm PSS + 32 MiB. Generous on purpose: SQLite's page caches (one per private
//! file), the allocator's arenas and the per-turn buffers settle at a level that depends
//! on timing, so a tight bound would flake; a leak of a turn's text or of a socket's queue
//! grows with every one of the thousands of turns and lands far above it.
//!
//! `SKALD_LOAD_SECONDS` sets the length (CI 30 s; the soak 600 s).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use reqwest::Method;
use scripted_model::{Reply, ScriptedModel};
use serde_json::{Value, json};
use skald::http::auth::ws_bearer_protocol;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::crash::{Person, people_on};
use crate::support::Server;

const PEOPLE: usize = 10;
/// Tokens a reply, and the pause between them: a turn streams for about a quarter second.
const TOKENS: usize = 40;
const TOKEN_DELAY_MS: u64 = 5;
/// A new conversation every so many turns, so the context stays small.
const TURNS_A_CONVERSATION: usize = 10;
/// The longest wait for any one event of a person's own turn.
const EVENT_WAIT: Duration = Duration::from_secs(30);

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn socket(port: u16, token: &str) -> Ws {
    let mut request = format!("ws://127.0.0.1:{port}/api/ws").into_client_request().unwrap();
    let offered = format!("skald.v1, {}", ws_bearer_protocol(token));
    request.headers_mut().insert("sec-websocket-protocol", offered.parse().unwrap());
    tokio_tungstenite::connect_async(request).await.expect("a socket").0
}

/// The next event that is not a heartbeat.
async fn next_event(socket: &mut Ws, who: &str) -> Value {
    loop {
        let message = tokio::time::timeout(EVENT_WAIT, socket.next())
            .await
            .unwrap_or_else(|_| panic!("{who}: no event in {EVENT_WAIT:?}"))
            .unwrap_or_else(|| panic!("{who}: the socket closed"))
            .unwrap_or_else(|e| panic!("{who}: {e}"));
        if let Message::Text(text) = message {
            let event: Value = serde_json::from_str(&text).unwrap();
            if event["type"] != "heartbeat" {
                return event;
            }
        }
    }
}

/// The skald process's proportional set size in KiB.
fn pss_kib(pid: u32) -> u64 {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).expect("smaps_rollup");
    rollup
        .lines()
        .find_map(|line| line.strip_prefix("Pss:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a Pss line")
}

/// One person chatting until `until`: a message, then every event of its turn on their
/// own socket, checked; returns how many turns they completed.
async fn chat(server: &Server, model: &ScriptedModel, person: &Person, until: Instant) -> usize {
    let who = person.name.as_str();
    let token = Some(person.token.as_str());
    let mut own = socket(server.port, &person.token).await;
    assert_eq!(next_event(&mut own, who).await["type"], "hello");
    let expected: String = (0..TOKENS).map(|i| format!(" tok{i}")).collect();
    let (mut turns, mut session) = (0, String::new());
    while Instant::now() < until {
        if turns % TURNS_A_CONVERSATION == 0 {
            let (status, created) = server.post("/api/sessions", token, json!({})).await;
            assert_eq!(status, 201, "{who}: {created}");
            session = created["id"].as_str().unwrap().to_owned();
        }
        model.push(Reply { tokens: Some(TOKENS), delay_ms: TOKEN_DELAY_MS, ..Reply::default() });
        let path = format!("/api/sessions/{session}/messages");
        let (status, sent) = server.post(&path, token, json!({ "text": format!("turn {turns} of {who}") })).await;
        assert_eq!(status, 202, "{who}: {sent}");
        let turn = sent["turn"].as_str().unwrap().to_owned();
        let (mut text, mut seq) = (String::new(), 0);
        let ended = loop {
            let event = next_event(&mut own, who).await;
            assert_ne!(event["type"], "lagged", "{who}: their own socket fell behind");
            if event.get("turn").is_none() {
                continue;
            }
            assert_eq!(event["turn"], turn.as_str(), "{who}: an event of another turn: {event}");
            let now = event["seq"].as_u64().unwrap();
            assert_eq!(now, seq + 1, "{who}: the events of {turn} in order, none missing");
            seq = now;
            match event["type"].as_str() {
                Some("token") => text.push_str(event["text"].as_str().unwrap()),
                Some("turn_ended") => break event,
                _ => {}
            }
        };
        assert_eq!(ended["status"], "done", "{who}: {ended}");
        assert_eq!(text, expected, "{who}: every token of {turn} arrived");
        let (status, history) = server.call(Method::GET, &path, token, None).await;
        assert_eq!(status, 200, "{who}: {history}");
        let reply = history.as_array().unwrap().last().unwrap().clone();
        assert_eq!((reply["turn_id"].as_str(), reply["text"].as_str()), (Some(turn.as_str()), Some(text.as_str())));
        turns += 1;
    }
    turns
}

/// Sends frames as fast as the socket takes them — text the protocol ignores, JSON it
/// does not know, binary garbage, pings — while draining what comes back, until `stop`;
/// reconnects if the server closes it. Returns the frames sent.
async fn flood(port: u16, token: String, stop: Arc<AtomicBool>) -> usize {
    let sent = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::Acquire) {
        let (mut tx, mut rx) = socket(port, &token).await.split();
        let drain = tokio::spawn(async move { while let Some(Ok(_)) = rx.next().await {} });
        let mut n = 0usize;
        while !stop.load(Ordering::Acquire) {
            let frame = match n % 4 {
                0 => Message::Text("ping".into()),
                1 => Message::Text(r#"{"type":"subscribe","session":"chat_nope","seq":1}"#.into()),
                2 => Message::Binary(vec![0xff; 1 + n % 2048].into()),
                _ => Message::Ping(vec![7u8; 8].into()),
            };
            if tx.send(frame).await.is_err() {
                break;
            }
            n += 1;
            sent.fetch_add(1, Ordering::AcqRel);
            if n.is_multiple_of(64) {
                // Lets the other tasks of this test's runtime in; the socket stays full.
                tokio::task::yield_now().await;
            }
        }
        let _ = tx.close().await;
        drain.abort();
    }
    sent.load(Ordering::Acquire)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_people_chat_at_once_beside_a_flooding_socket_with_flat_memory() {
    let seconds = std::env::var("SKALD_LOAD_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(30u64);
    let model = ScriptedModel::start().await;
    let server = Server::start();
    let people = people_on(&server, &model, PEOPLE - 1).await;
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let warm = started + Duration::from_secs((seconds / 5).max(5));

    // Ada's session floods; Writer1 has a socket that reads a frame every 200 ms, Writer2
    // one that never reads. Both also chat on sockets of their own.
    let stop = Arc::new(AtomicBool::new(false));
    let flooding = tokio::spawn(flood(server.port, people[0].token.clone(), stop.clone()));
    let mut slow = socket(server.port, &people[1].token).await;
    let slow_stop = stop.clone();
    let slow_reader = tokio::spawn(async move {
        let mut read = 0usize;
        while !slow_stop.load(Ordering::Acquire) {
            tokio::time::sleep(Duration::from_millis(200)).await;
            match tokio::time::timeout(Duration::from_millis(50), slow.next()).await {
                Ok(Some(Ok(_))) | Err(_) => read += 1,
                Ok(_) => panic!("the slow reader's socket closed"),
            }
        }
        read
    });
    let _never_reads = socket(server.port, &people[2].token).await;

    let pid = server.pid();
    let chats = futures_util::future::join_all(people.iter().map(|p| chat(&server, &model, p, until)));
    let warm_pss = async {
        tokio::time::sleep_until(warm.into()).await;
        pss_kib(pid)
    };
    let (turns, warm_pss) = tokio::join!(chats, warm_pss);
    stop.store(true, Ordering::Release);
    let (frames, slow_reads) = (flooding.await.unwrap(), slow_reader.await.unwrap());
    let end_pss = pss_kib(pid);
    let elapsed = started.elapsed().as_secs_f64();

    let total: usize = turns.iter().sum();
    eprintln!(
        "{PEOPLE} people for {seconds} s: {total} turns ({:.1}/s), fewest by one person {}; flood sent {frames} \
         frames; slow reader read {slow_reads}; PSS {} MiB after warm-up, {} MiB at the end",
        total as f64 / elapsed,
        turns.iter().min().unwrap(),
        warm_pss / 1024,
        end_pss / 1024
    );
    assert!(frames > 1000, "the flood flooded: {frames} frames");
    // Starving would show as a person far behind the others: each turn streams for about a
    // quarter second, so even two busy cores leave everyone a turn every 10 s, and a
    // third of the mean.
    let floor = (total / PEOPLE / 3).max(seconds as usize / 10).max(1);
    assert!(turns.iter().all(|&t| t >= floor), "every person kept chatting (at least {floor} turns): {turns:?}");
    assert!(
        end_pss <= warm_pss * 3 / 2 + 32 * 1024,
        "memory grew: {warm_pss} KiB after warm-up, {end_pss} KiB at the end"
    );
    let (status, _) = server.call(Method::GET, "/api/health", None, None).await;
    assert_eq!(status, 200, "alive at the end");
    // A clean exit, with the socket that never read still open.
    let _ = server.stop("TERM");
}
