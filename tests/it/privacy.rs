//! Privacy tiers (§16) over the real server. Loopback counts as local, so the remote
//! provider here is a scripted model server inside a network namespace this test makes
//! (`ip netns` + a veth pair on 10.213.x.0/30): a private address, untrusted and then
//! marked trusted. Nothing here reaches a real LAN or public address. Needs root (CI has it).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::Server;

const ADMIN_PW: &str = "otter lantern quietly";
const KIM_PW: &str = "maple harbour seventeen";

/// A network namespace joined to this one by a veth pair; removed when dropped.
struct Namespace {
    name: String,
    host_side: String,
    /// The namespace's address, reachable from here.
    inside: String,
}

fn ip(args: &[&str]) {
    let status = Command::new("ip").args(args).status().expect("run ip");
    assert!(status.success(), "ip {}", args.join(" "));
}

impl Namespace {
    fn create() -> Self {
        // Unique per namespace: tests in this process run side by side.
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let tag = std::process::id() % 10_000 * 10 + n % 10;
        let subnet = (std::process::id() + n * 37) % 250 + 1;
        let ns = Self {
            name: format!("skald-test-{tag}"),
            host_side: format!("skh{tag}"),
            inside: format!("10.213.{subnet}.2"),
        };
        let guest_side = format!("skg{tag}");
        ip(&["netns", "add", &ns.name]);
        ip(&["link", "add", &ns.host_side, "type", "veth", "peer", "name", &guest_side]);
        ip(&["link", "set", &guest_side, "netns", &ns.name]);
        ip(&["addr", "add", &format!("10.213.{subnet}.1/30"), "dev", &ns.host_side]);
        ip(&["link", "set", &ns.host_side, "up"]);
        let exec = |args: &[&str]| ip(&[&["netns", "exec", &ns.name, "ip"], args].concat());
        exec(&["addr", "add", &format!("{}/30", ns.inside), "dev", &guest_side]);
        exec(&["link", "set", &guest_side, "up"]);
        exec(&["link", "set", "lo", "up"]);
        ns
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.host_side]).status();
        let _ = Command::new("ip").args(["netns", "del", &self.name]).status();
    }
}

/// The scripted model binary, built on demand beside the skald binary under test.
fn scripted_binary() -> PathBuf {
    let path = std::path::Path::new(env!("CARGO_BIN_EXE_skald")).with_file_name("scripted-model");
    if !path.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "scripted-model", "--bin", "scripted-model"])
            .status()
            .expect("run cargo");
        assert!(status.success(), "building scripted-model failed");
    }
    path
}

/// The scripted model server running inside the namespace; killed when dropped.
struct RemoteModel {
    child: Child,
    url: String,
}

impl RemoteModel {
    fn start(ns: &Namespace) -> Self {
        let mut child = Command::new("ip")
            .args(["netns", "exec", &ns.name])
            .arg(scripted_binary())
            .args(["--host", &ns.inside, "--port", "0"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start scripted-model in the namespace");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().strip_prefix("scripted-model listening on ").expect("ready line").to_owned();
        Self { child, url }
    }

    async fn chat_requests(&self) -> usize {
        let received: Value =
            reqwest::get(format!("{}/_scripted/requests", self.url)).await.unwrap().json().await.unwrap();
        received.as_array().unwrap().len()
    }
}

impl Drop for RemoteModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server with Ada (administrator) and Kim, whose `restricted` role is `local_only`;
/// returns the server and their two tokens.
async fn with_kim() -> (Server, String, String) {
    let server = Server::start();
    let (_, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": ADMIN_PW })).await;
    let admin = setup["token"].as_str().unwrap().to_owned();
    let (_, added) = server.post("/api/users", Some(&admin), json!({ "name": "Kim", "role": "restricted" })).await;
    let code = added["enrolment_code"].as_str().unwrap();
    let (_, enrolled) =
        server.post("/api/enrol", None, json!({ "name": "Kim", "enrolment_code": code, "password": KIM_PW })).await;
    let kim = enrolled["token"].as_str().unwrap().to_owned();
    (server, admin, kim)
}

/// Waits for the turn whose messages are at `path` to end, answered.
async fn answered(server: &Server, token: &str, path: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (_, history) = server.call(Method::GET, path, Some(token), None).await;
        let last = history.as_array().unwrap().last().cloned().unwrap_or_default();
        if last["role"] == "assistant" && last["status"] != "tool_calls" {
            assert_eq!(last["status"], "done", "{last}");
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the turn did not end");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A network namespace with the scripted model server inside it (the remote provider) and
/// a server with Ada and Kim; none, said on stderr, where namespaces cannot be made.
async fn remote_and_kim() -> Option<(Namespace, RemoteModel, Server, String, String)> {
    if !is_root() {
        eprintln!("skipped: creating a network namespace needs root (CI runs as root)");
        return None;
    }
    let ns = Namespace::create();
    let remote = RemoteModel::start(&ns);
    let (server, admin, kim) = with_kim().await;
    Some((ns, remote, server, admin, kim))
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

#[tokio::test]
async fn a_local_only_person_never_reaches_an_untrusted_lan_provider_and_does_once_it_is_trusted() {
    let Some((_ns, remote, server, admin, kim)) = remote_and_kim().await else { return };
    let provider = json!({ "name": "lan", "kind": "openai", "base_url": format!("{}/v1", remote.url) });
    let (status, created) = server.post("/api/providers", Some(&admin), provider).await;
    assert_eq!(status, 201, "{created}");
    let provider_id = created["id"].as_str().unwrap().to_owned();

    // Untrusted: a private address is still remote. Kim sees no model and sends nothing.
    let (_, models) = server.call(Method::GET, "/api/models", Some(&kim), None).await;
    assert_eq!(models, json!([]));
    let (status, refused) = server.post("/api/sessions", Some(&kim), json!({ "model": "lan/scripted-fast" })).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("privacy_tier")), "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("remote"), "the refusal names the reason");
    let (_, session) = server.post("/api/sessions", Some(&kim), json!({})).await;
    let path = format!("/api/sessions/{}/messages", session["id"].as_str().unwrap());
    let (status, refused) = server.post(&path, Some(&kim), json!({ "text": "my private words" })).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("no_local_model")), "{refused}");
    assert_eq!(remote.chat_requests().await, 0, "not one request reached the remote provider");

    // The administrator vouches for the LAN address: now it is local, and Kim's turn runs.
    let trust = json!({ "trusted_lan": true });
    let (status, _) =
        server.call(Method::PATCH, &format!("/api/providers/{provider_id}"), Some(&admin), Some(trust)).await;
    assert_eq!(status, 204);
    let (_, models) = server.call(Method::GET, "/api/models", Some(&kim), None).await;
    assert_eq!(models[0]["privacy"], "local", "{models}");
    // A provider newly within Kim's reach holds her turn until she continues (§3).
    let (status, held) = server.post(&path, Some(&kim), json!({ "text": "hello over the LAN" })).await;
    assert_eq!((status, held["error"]["code"].as_str()), (409, Some("held")), "{held}");
    assert_eq!(remote.chat_requests().await, 0);
    assert_eq!(crate::support::accept_holds(&server, &kim).await, 1);
    let (status, _) = server.post(&path, Some(&kim), json!({ "text": "hello over the LAN" })).await;
    assert_eq!(status, 202);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let last = loop {
        let (_, history) = server.call(Method::GET, &path, Some(&kim), None).await;
        let last = history.as_array().unwrap().last().cloned().unwrap_or_default();
        if last["role"] == "assistant" {
            break last;
        }
        assert!(std::time::Instant::now() < deadline, "the turn did not end");
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    assert_eq!((last["status"].as_str(), last["text"].as_str()), (Some("done"), Some("You said: hello over the LAN")));
    assert_eq!(remote.chat_requests().await, 1);
}

/// A `local_only` person's long conversation is compacted by a local model: the summary,
/// which carries their words, never goes to the remote provider beside it (§8.6, §16).
#[tokio::test]
async fn a_local_only_persons_compaction_never_goes_to_a_remote_provider() {
    let Some((_ns, remote, server, admin, kim)) = remote_and_kim().await else { return };
    let local = scripted_model::ScriptedModel::start().await;
    // A remote provider with a fast model, and a local one with a small window.
    let lan = json!({ "name": "lan", "kind": "openai", "base_url": format!("{}/v1", remote.url) });
    assert_eq!(server.post("/api/providers", Some(&admin), lan).await.0, 201);
    let home = json!({ "name": "home", "kind": "openai", "base_url": local.openai_base(),
                       "models": [{ "id": "small", "context_window": 1200, "strength": "fast" }] });
    assert_eq!(server.post("/api/providers", Some(&admin), home).await.0, 201);
    assert_eq!(crate::support::accept_holds(&server, &kim).await, 1, "the one local provider is new to Kim");

    let (_, session) = server.post("/api/sessions", Some(&kim), json!({})).await;
    let path = format!("/api/sessions/{}/messages", session["id"].as_str().unwrap());
    let long = |marker: &str| format!("{marker} {}", "and so on ".repeat(60));
    for marker in ["alpha", "bravo", "charlie", "delta"] {
        assert_eq!(server.post(&path, Some(&kim), json!({ "text": long(marker) })).await.0, 202);
        answered(&server, &kim, &path).await;
    }
    let summaries = local
        .requests()
        .iter()
        .filter(|r| crate::support::unprefixed(&r.body["messages"][0]["content"]).starts_with("You summarise"))
        .count();
    assert!(summaries >= 1, "the conversation was compacted, locally");
    assert_eq!(remote.chat_requests().await, 0, "nothing of Kim's went to the remote provider");
}

/// Memories written by or about a `local_only` person are never recalled into a request to
/// a remote provider, also when another person's turn would recall them (§10, §16); a
/// shared memory that is not theirs is, so the test would see one that leaked.
#[tokio::test]
async fn a_local_only_persons_memories_never_reach_a_remote_provider_in_anyones_turn() {
    let Some((_ns, remote, server, admin, kim)) = remote_and_kim().await else { return };
    let (_, me) = server.call(Method::GET, "/api/me", Some(&kim), None).await;
    let kim_id = me["id"].as_str().or_else(|| me["user"]["id"].as_str()).expect("Kim's id").to_owned();
    let keep = |token: &str, text: &str, subject: Value| {
        let body = json!({ "text": text, "pool": "shared", "subject": subject });
        let (server, token) = (&server, token.to_owned());
        async move {
            let (status, kept) = server.post("/api/memories", Some(&token), body).await;
            assert_eq!(status, 201, "{kept}");
        }
    };
    // Kim's own, written by her; one Ada keeps about Kim; and one of Ada's own.
    keep(&kim, "Kim takes the number 14 tram to the museum on Tuesdays.", json!({ "kind": "self" })).await;
    keep(&admin, "Kim's tram pass for the museum trips renews in June.", json!({ "kind": "member", "id": kim_id }))
        .await;
    keep(&admin, "Ada takes the number 9 tram to the museum on Fridays.", json!({ "kind": "self" })).await;
    let (_, listed) = server.call(Method::GET, "/api/memories?pool=shared", Some(&admin), None).await;
    let marked: Vec<(String, bool)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["text"].as_str().unwrap().to_owned(), m["local_only"].as_bool().unwrap()))
        .collect();
    assert_eq!(marked.iter().filter(|(_, local)| *local).count(), 2, "both about Kim are marked: {marked:?}");

    let lan = json!({ "name": "lan", "kind": "openai", "base_url": format!("{}/v1", remote.url) });
    assert_eq!(server.post("/api/providers", Some(&admin), lan).await.0, 201);
    let client = reqwest::Client::new();
    let reply = json!({ "text": "The tram, as usual." });
    client.post(format!("{}/_scripted/replies", remote.url)).json(&reply).send().await.unwrap();
    let (_, session) = server.post("/api/sessions", Some(&admin), json!({})).await;
    let path = format!("/api/sessions/{}/messages", session["id"].as_str().unwrap());
    let (status, sent) = server.post(&path, Some(&admin), json!({ "text": "Which tram goes to the museum?" })).await;
    assert_eq!(status, 202, "{sent}");
    answered(&server, &admin, &path).await;
    let received: Value =
        client.get(format!("{}/_scripted/requests", remote.url)).send().await.unwrap().json().await.unwrap();
    assert_eq!(received.as_array().unwrap().len(), 1, "Ada's turn went to the remote provider");
    let sent = received[0]["body"]["messages"].to_string();
    assert!(sent.contains("Ada takes the number 9 tram"), "a memory that is not Kim's is recalled: {sent}");
    assert!(!sent.contains("number 14 tram") && !sent.contains("tram pass"), "nothing of Kim's memories: {sent}");
}

#[tokio::test]
async fn a_scheduled_task_of_a_local_only_person_whose_only_model_is_remote_sends_nothing() {
    let Some((_ns, remote, server, admin, _kim)) = remote_and_kim().await else { return };
    let lan = json!({ "name": "lan", "kind": "openai", "base_url": format!("{}/v1", remote.url) });
    assert_eq!(server.post("/api/providers", Some(&admin), lan).await.0, 201);
    // Lee's role keeps words here and may schedule; the only model is the remote one.
    let role = json!({ "id": "homebody", "label": "Homebody", "privacy_tier": "local_only", "may_schedule": true });
    let (status, body) = server.call(Method::POST, "/api/roles", Some(&admin), Some(role)).await;
    assert_eq!(status, 201, "{body}");
    let (_, added) = server.post("/api/users", Some(&admin), json!({ "name": "Lee", "role": "homebody" })).await;
    let enrol = json!({ "name": "Lee", "enrolment_code": added["enrolment_code"], "password": KIM_PW });
    let (status, enrolled) = server.post("/api/enrol", None, enrol).await;
    assert_eq!(status, 201, "{enrolled}");
    let lee = enrolled["token"].as_str().unwrap();

    let at = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::from_secs(2))
        .unwrap()
        .round(jiff::Unit::Second)
        .unwrap();
    let task = json!({ "kind": "task", "text": "Plan my private appointments", "at": at.to_string() });
    let (status, job) = server.post("/api/jobs", Some(lee), task).await;
    assert_eq!(status, 201, "{job}");
    let path = format!("/api/jobs/{}/runs", job["id"].as_str().unwrap());
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let run = loop {
        let (_, runs) = server.call(Method::GET, &path, Some(lee), None).await;
        let first = runs.as_array().and_then(|r| r.first().cloned());
        if let Some(run) = first.filter(|r| r["status"] != "running") {
            break run;
        }
        assert!(std::time::Instant::now() < deadline, "the task's run did not end");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(run["status"], "error", "{run}");
    assert!(run["error"].as_str().unwrap().contains("nothing was sent"), "the refusal says why: {run}");
    assert_eq!(remote.chat_requests().await, 0, "not one byte of the task reached the remote provider");
}

/// A WAV file of one second of a 220 Hz tone, as the page would send a recording; or of
/// silence.
fn recording(silent: bool) -> Vec<u8> {
    let samples: Vec<i16> =
        (0..16_000).map(|i| if silent { 0 } else { ((i as f32 * 0.0864).sin() * 8_000.0) as i16 }).collect();
    let mut out = b"RIFF".to_vec();
    out.extend_from_slice(&(36 + samples.len() as u32 * 2).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt \x10\0\0\0\x01\0\x01\0");
    out.extend_from_slice(&16_000u32.to_le_bytes());
    out.extend_from_slice(&32_000u32.to_le_bytes());
    out.extend_from_slice(b"\x02\0\x10\0data");
    out.extend_from_slice(&(samples.len() as u32 * 2).to_le_bytes());
    out.extend(samples.iter().flat_map(|s| s.to_le_bytes()));
    out
}

/// `POST /api/voice/transcriptions` with `audio`: the status and answer.
async fn transcribe(server: &Server, token: &str, audio: Vec<u8>) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(server.url("/api/voice/transcriptions?language=en"))
        .bearer_auth(token)
        .header("Content-Type", "audio/wav")
        .body(audio)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// `POST /api/voice/speech`: the status and the engine that read.
async fn read_aloud(server: &Server, token: &str, text: &str) -> (u16, String) {
    let response = reqwest::Client::new()
        .post(server.url("/api/voice/speech"))
        .bearer_auth(token)
        .json(&json!({ "text": text }))
        .send()
        .await
        .unwrap();
    let engine = response.headers().get("x-skald-speech-engine").map_or("", |v| v.to_str().unwrap()).to_owned();
    (response.status().as_u16(), engine)
}

/// The requests the remote provider received on `path`.
async fn received_on(remote: &RemoteModel, path: &str) -> Vec<Value> {
    let received: Value =
        reqwest::get(format!("{}/_scripted/requests", remote.url)).await.unwrap().json().await.unwrap();
    received.as_array().unwrap().iter().filter(|r| r["path"] == path).cloned().collect()
}

/// A speech provider (§15) is one more place words go: a `local_only` person's recordings
/// and the answers read to them never reach a remote one, whatever an administrator sets;
/// once it is trusted as home network, it is used only after they went on with it.
#[tokio::test]
async fn a_local_only_persons_voice_never_reaches_a_remote_speech_provider() {
    let Some((_ns, remote, server, admin, kim)) = remote_and_kim().await else { return };
    let provider = json!({ "name": "lan", "kind": "openai", "base_url": format!("{}/v1", remote.url) });
    let (status, created) = server.post("/api/providers", Some(&admin), provider).await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let speech = json!({ "transcription_model": "whisper-1", "speech_model": "tts-1", "speech_voice": "alloy" });
    let (status, body) = server.call(Method::PATCH, &format!("/api/providers/{id}"), Some(&admin), Some(speech)).await;
    assert_eq!(status, 204, "{body}");

    let (_, overview) = server.call(Method::GET, "/api/voice", Some(&kim), None).await;
    assert!(overview["transcription"]["provider"].is_null(), "{overview}");
    let why = overview["transcription"]["provider_why"].as_str().unwrap_or_default();
    assert!(why.contains("lan") && why.contains("keeps your words here"), "{overview}");
    let (status, answer) = transcribe(&server, &kim, recording(false)).await;
    assert_ne!(answer["model"], "lan/whisper-1", "{status} {answer}");
    let (_, engine) = read_aloud(&server, &kim, "The bakery closes before dinner.").await;
    assert_ne!(engine, "provider");
    assert_eq!(received_on(&remote, "/v1/audio/transcriptions").await.len(), 0, "no recording left the machine");
    assert_eq!(received_on(&remote, "/v1/audio/speech").await.len(), 0, "no answer left the machine");

    // Trusted as home network, it is within Kim's tier: used once she went on with it.
    let trust = json!({ "trusted_lan": true });
    let (status, _) = server.call(Method::PATCH, &format!("/api/providers/{id}"), Some(&admin), Some(trust)).await;
    assert_eq!(status, 204);
    let (_, answer) = transcribe(&server, &kim, recording(false)).await;
    assert_ne!(answer["model"], "lan/whisper-1", "held until Kim decides: {answer}");
    assert_eq!(received_on(&remote, "/v1/audio/transcriptions").await.len(), 0);
    let (_, overview) = server.call(Method::GET, "/api/voice", Some(&kim), None).await;
    assert!(overview["transcription"]["provider_why"].as_str().unwrap_or_default().contains("waits for your decision"));
    assert_eq!(crate::support::accept_holds(&server, &kim).await, 1);

    let (status, answer) = transcribe(&server, &kim, recording(false)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["model"], "lan/whisper-1", "{answer}");
    assert_eq!(answer["text"], "scripted transcript of 1.0 seconds", "the recording arrived whole");
    let sent = received_on(&remote, "/v1/audio/transcriptions").await;
    let form = &sent[0]["body"];
    assert_eq!((sent.len(), form["model"].as_str(), form["language"].as_str()), (1, Some("whisper-1"), Some("en")));
    // Silence is nothing, and is not sent for a provider to invent words for.
    let (status, answer) = transcribe(&server, &kim, recording(true)).await;
    assert_eq!((status, answer["text"].as_str()), (200, Some("")), "{answer}");
    assert_eq!(received_on(&remote, "/v1/audio/transcriptions").await.len(), 1);

    let (status, engine) = read_aloud(&server, &kim, "The bakery closes before dinner.").await;
    assert_eq!((status, engine.as_str()), (200, "provider"));
    let sent = received_on(&remote, "/v1/audio/speech").await;
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0]["body"]["input"].as_str(), sent[0]["body"]["voice"].as_str(), sent[0]["body"]["model"].as_str()),
        (Some("The bakery closes before dinner."), Some("alloy"), Some("tts-1"))
    );
}
