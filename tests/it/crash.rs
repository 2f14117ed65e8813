//! Crash safety (§4, §5.1): kill -9 at a random moment during a password change leaves
//! exactly one of the old and new passwords opening the space; kill -9 while several people
//! write at once loses no write that was acknowledged to them, and leaves every database
//! whole, every private file opening with its password and `skald verify` passing.
//! `SKALD_CRASH_ROUNDS` sets the password changes (CI 20), `SKALD_CRASH_WRITE_ROUNDS` the
//! crashes among writes (CI 5; 3 for those during a rotation or a backup) and
//! `SKALD_CRASH_WRITES` the writes a round (CI 200; the soak runs 100 × 1,000).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use reqwest::Method;
use scripted_model::{Reply, ScriptedCall, ScriptedModel};
use serde_json::{Value, json};
use skald::http::auth::ws_bearer_protocol;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::support::{BIN, Sandbox, Server};

const PASSWORDS: [&str; 2] = ["otter lantern quietly", "copper meadow whistle"];

pub(crate) fn random_below(limit: u64) -> u64 {
    let mut raw = [0u8; 8];
    getrandom::fill(&mut raw).unwrap();
    u64::from_le_bytes(raw) % limit.max(1)
}

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|r| r.parse().ok()).unwrap_or(default)
}

async fn opens(server: &Server, password: &str) -> bool {
    let (status, body) = server.post("/api/login", None, json!({ "name": "Ada", "password": password })).await;
    assert!(status == 200 || status == 401, "login answered {status}: {body}");
    status == 200
}

#[tokio::test]
async fn a_crash_during_a_password_change_leaves_exactly_one_password_working() {
    let rounds: usize = std::env::var("SKALD_CRASH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(20);
    let server = Server::start();
    let (status, _) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORDS[0] })).await;
    assert_eq!(status, 201);
    let (mut sandbox, mut current) = (server.stop("TERM"), 0usize);
    let (mut changed, mut kept) = (0, 0);
    for round in 0..rounds {
        let server = Server::start_in(sandbox);
        let (_, body) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORDS[current] })).await;
        let token = body["token"].as_str().unwrap_or_else(|| panic!("round {round}: login failed: {body}")).to_owned();
        let change = json!({ "current_password": PASSWORDS[current], "new_password": PASSWORDS[1 - current] });
        let url = server.url("/api/me/password");
        let request =
            tokio::spawn(async move { reqwest::Client::new().post(url).bearer_auth(token).json(&change).send().await });
        // A change takes two key derivations; strike anywhere from before to after it.
        tokio::time::sleep(Duration::from_millis(random_below(250))).await;
        let sandbox_back = server.stop("KILL");
        let _ = request.await;

        let server = Server::start_in(sandbox_back);
        let (old, new) = (opens(&server, PASSWORDS[current]).await, opens(&server, PASSWORDS[1 - current]).await);
        assert!(old ^ new, "round {round}: old opens = {old}, new opens = {new}");
        if new {
            current = 1 - current;
            changed += 1;
        } else {
            kept += 1;
        }
        sandbox = server.stop("TERM");
    }
    eprintln!("{rounds} crashes: {changed} after the commit, {kept} before it");
    let _keep: Sandbox = sandbox;
}

/// One person of a crash test: who they are and their session on the running server.
pub(crate) struct Person {
    pub name: String,
    pub password: String,
    pub id: String,
    pub token: String,
}

impl Person {
    /// Logs in again on a restarted server: their private file opens with their password.
    pub async fn log_in(&mut self, server: &Server, context: &str) {
        let (status, body) =
            server.post("/api/login", None, json!({ "name": self.name, "password": self.password })).await;
        assert_eq!(status, 200, "{context}: {}'s password opens their file: {body}", self.name);
        self.token = body["token"].as_str().unwrap().to_owned();
    }
}

/// What the server acknowledged to one person: a 2xx response received whole, or (for a
/// reply) its `turn_ended` with `done` on their socket.
#[derive(Default)]
pub(crate) struct Acked {
    /// Note id and title.
    notes: Vec<(i64, String)>,
    /// Memory id and text.
    memories: Vec<(String, String)>,
    /// Conversation and the message's text.
    messages: Vec<(String, String)>,
    /// Conversation and turn of each reply that ended `done`.
    replies: Vec<(String, String)>,
    /// Cards decided.
    cards: Vec<String>,
    /// Anything but 2xx the server answered before it was killed.
    refused: Vec<String>,
    /// Their session ended while they wrote (401): their writers stopped there.
    pub ended: bool,
}

impl Acked {
    pub fn count(&self) -> usize {
        self.kinds().iter().sum()
    }

    /// Notes, memories, messages, replies and decisions.
    pub fn kinds(&self) -> [usize; 5] {
        [self.notes.len(), self.memories.len(), self.messages.len(), self.replies.len(), self.cards.len()]
    }
}

/// Figures over a whole test.
#[derive(Default)]
pub(crate) struct Tally {
    pub attempted: usize,
    pub acknowledged: usize,
    pub found: usize,
    pub integrity_checks: usize,
    /// Acknowledged notes, memories, messages, replies and decisions.
    pub kinds: [usize; 5],
}

impl Tally {
    pub fn add(&mut self, acked: &Acked) {
        self.acknowledged += acked.count();
        for (sum, n) in self.kinds.iter_mut().zip(acked.kinds()) {
            *sum += n;
        }
    }

    /// After a restart: each person logs in again, every write acknowledged to them before
    /// the kill is read back, and the round's figures join the tally.
    pub async fn recount(
        &mut self,
        server: &Server,
        people: &mut [Person],
        (attempted, acked): (usize, &[Acked]),
        writes: usize,
        context: &str,
    ) {
        for (person, acked) in people.iter_mut().zip(acked) {
            person.log_in(server, context).await;
            self.found += check_present(server, person, acked, context).await;
            self.add(acked);
        }
        self.attempted += attempted.min(writes);
    }

    pub fn report(&self, what: &str, started: Instant) {
        let [notes, memories, messages, replies, cards] = self.kinds;
        eprintln!(
            "{what}: {} writes attempted, {} acknowledged ({notes} notes, {memories} memories, {messages} messages, \
             {replies} replies, {cards} cards decided), {} found after the restarts; {} integrity checks ok; \
             verify passed; {:.1} s",
            self.attempted,
            self.acknowledged,
            self.found,
            self.integrity_checks,
            started.elapsed().as_secs_f64()
        );
    }
}

/// Several people writing at once through the real API: notes, memories of their own,
/// messages whose turns the scripted model answers, and cards (a turn parked on a
/// `remember` or `note_write` call) decided.
pub(crate) struct Writes {
    attempted: Arc<AtomicUsize>,
    acked: Arc<AtomicUsize>,
    records: Vec<Arc<Mutex<Acked>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    sockets: Vec<tokio::task::JoinHandle<()>>,
}

/// Windows a person writes from at once.
const WINDOWS: usize = 4;

impl Writes {
    /// Starts `limit` writes spread over `people`, `WINDOWS` at a time each; `model` is the
    /// scripted provider, which the card writes queue tool calls on.
    pub async fn start(server: &Server, model: &Arc<ScriptedModel>, people: &[Person], limit: usize) -> Self {
        let (attempted, acked) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let client = reqwest::Client::new();
        let base = server.url("");
        let (mut records, mut tasks, mut sockets) = (Vec::new(), Vec::new(), Vec::new());
        for person in people {
            let record = Arc::new(Mutex::new(Acked::default()));
            records.push(record.clone());
            sockets.push(tokio::spawn(watch_replies(server.port, person.token.clone(), record.clone(), acked.clone())));
            let claimed = Arc::new(Mutex::new(HashSet::<String>::new()));
            for window in 0..WINDOWS {
                let writer = Writer {
                    client: client.clone(),
                    base: base.clone(),
                    token: person.token.clone(),
                    tag: format!("{}{window}", person.name.to_lowercase()),
                    model: model.clone(),
                    record: record.clone(),
                    claimed: claimed.clone(),
                    attempted: attempted.clone(),
                    acked: acked.clone(),
                    limit,
                };
                tasks.push(tokio::spawn(writer.run()));
            }
        }
        // The sockets are open before the first write.
        tokio::time::sleep(Duration::from_millis(50)).await;
        Self { attempted, acked, records, tasks, sockets }
    }

    pub fn acknowledged(&self) -> usize {
        self.acked.load(Ordering::Acquire)
    }

    /// Whether every writer is done (only then can the acknowledged count stop growing).
    pub fn finished(&self) -> bool {
        self.tasks.iter().all(|t| t.is_finished())
    }

    /// Waits until `n` writes were acknowledged (or every writer ended).
    pub async fn until_acknowledged(&self, n: usize) {
        while self.acknowledged() < n && !self.finished() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// After the server is gone: waits for every writer and hands back what each person had
    /// acknowledged, and how many writes were attempted.
    pub async fn collect(self) -> (usize, Vec<Acked>) {
        for task in self.tasks {
            task.await.unwrap();
        }
        for socket in self.sockets {
            socket.abort();
            let _ = socket.await;
        }
        let records = self.records.into_iter().map(|r| std::mem::take(&mut *r.lock().unwrap())).collect();
        (self.attempted.load(Ordering::Acquire), records)
    }
}

struct Writer {
    client: reqwest::Client,
    base: String,
    token: String,
    tag: String,
    model: Arc<ScriptedModel>,
    record: Arc<Mutex<Acked>>,
    claimed: Arc<Mutex<HashSet<String>>>,
    attempted: Arc<AtomicUsize>,
    acked: Arc<AtomicUsize>,
    limit: usize,
}

/// The end of a writer: the server went away (a kill) or the session ended, and nothing
/// more can be written.
struct Gone;

impl Writer {
    async fn run(self) {
        let mut n = 0;
        while self.attempted.fetch_add(1, Ordering::AcqRel) < self.limit {
            n += 1;
            let words = format!("{}-{n}-{}", self.tag, hex::encode(random_below(u64::MAX).to_le_bytes()));
            let outcome = match random_below(10) {
                0..=2 => self.note(&words).await,
                3..=4 => self.memory(&words).await,
                5..=6 => self.message(&words).await,
                7 => self.card(&words).await,
                _ => self.decide(&words).await,
            };
            if outcome.is_err() {
                return;
            }
        }
    }

    /// Sends a request; `Ok` with the status and the body read whole, `Err` when the
    /// connection failed (the server is gone).
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Result<(u16, Value), Gone> {
        let mut request = self.client.request(method, format!("{}{path}", self.base)).bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.map_err(|_| Gone)?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|_| Gone)?;
        if status == 401 {
            self.record.lock().unwrap().ended = true;
            return Err(Gone);
        }
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    /// Records an acknowledgement, or a refusal when the status is not `expected`.
    fn acknowledge(&self, status: u16, expected: u16, what: &str, body: &Value, keep: impl FnOnce(&mut Acked)) -> bool {
        let mut record = self.record.lock().unwrap();
        if status == expected {
            keep(&mut record);
            self.acked.fetch_add(1, Ordering::AcqRel);
            true
        } else {
            record.refused.push(format!("{what}: {status} {body}"));
            false
        }
    }

    async fn note(&self, words: &str) -> Result<(), Gone> {
        let body = json!({ "title": words, "body": format!("body of {words}") });
        let (status, note) = self.call(Method::POST, "/api/notes", Some(body)).await?;
        let id = note["id"].as_i64().unwrap_or_default();
        self.acknowledge(status, 201, "note", &note, |r| r.notes.push((id, words.to_owned())));
        Ok(())
    }

    async fn memory(&self, words: &str) -> Result<(), Gone> {
        let text = format!("{words} likes quiet mornings.");
        let body = json!({ "text": text, "pool": "private", "subject": { "kind": "self" } });
        let (status, kept) = self.call(Method::POST, "/api/memories", Some(body)).await?;
        let id = kept["id"].as_str().unwrap_or_default().to_owned();
        self.acknowledge(status, 201, "memory", &kept, |r| r.memories.push((id, text)));
        Ok(())
    }

    /// A new conversation and a message in it; the scripted model answers (an echo, or a
    /// tool call a card write queued).
    async fn message(&self, words: &str) -> Result<(), Gone> {
        let (status, created) = self.call(Method::POST, "/api/sessions", Some(json!({}))).await?;
        if !self.acknowledge(status, 201, "conversation", &created, |_| {}) {
            return Ok(());
        }
        let session = created["id"].as_str().unwrap().to_owned();
        let path = format!("/api/sessions/{session}/messages");
        let (status, sent) = self.call(Method::POST, &path, Some(json!({ "text": words }))).await?;
        self.acknowledge(status, 202, "message", &sent, |r| r.messages.push((session, words.to_owned())));
        Ok(())
    }

    /// Queues a call that needs the person's decision, then a message for some turn to
    /// make it.
    async fn card(&self, words: &str) -> Result<(), Gone> {
        let call = if random_below(2) == 0 {
            let text = format!("{words} keeps a spare key with a friend.");
            ScriptedCall::new("remember", json!({ "text": text, "pool": "private", "subject": { "kind": "self" } }))
        } else {
            ScriptedCall::new("note_write", json!({ "title": words, "text": "written by the assistant" }))
        };
        self.model.push(Reply::tool_calls([call]));
        self.message(words).await
    }

    /// Decides one of the person's pending cards, allowing or denying at random; a note
    /// when none is waiting.
    async fn decide(&self, words: &str) -> Result<(), Gone> {
        let (status, inbox) = self.call(Method::GET, "/api/inbox", None).await?;
        if !self.acknowledge(status, 200, "inbox", &inbox, |_| {}) {
            return Ok(());
        }
        let pending = inbox.as_array().cloned().unwrap_or_default();
        let card = pending
            .iter()
            .filter_map(|c| c["id"].as_str())
            .find(|id| self.claimed.lock().unwrap().insert(id.to_string()));
        let Some(card) = card else { return self.note(words).await };
        let decision = if random_below(3) == 0 { "deny" } else { "allow" };
        let (status, decided) =
            self.call(Method::POST, &format!("/api/inbox/{card}"), Some(json!({ "decision": decision }))).await?;
        self.acknowledge(status, 200, "decision", &decided, |r| r.cards.push(card.to_owned()));
        Ok(())
    }
}

/// A person's socket: each turn of theirs that ends `done` is an acknowledged reply.
async fn watch_replies(port: u16, token: String, record: Arc<Mutex<Acked>>, acked: Arc<AtomicUsize>) {
    let mut request = format!("ws://127.0.0.1:{port}/api/ws").into_client_request().unwrap();
    let offered = format!("skald.v1, {}", ws_bearer_protocol(&token));
    request.headers_mut().insert("sec-websocket-protocol", offered.parse().unwrap());
    let Ok((mut socket, _)) = tokio_tungstenite::connect_async(request).await else { return };
    while let Some(Ok(message)) = socket.next().await {
        let Message::Text(text) = message else { continue };
        let Ok(event) = serde_json::from_str::<Value>(&text) else { continue };
        if event["type"] == "turn_ended" && event["status"] == "done" && event.get("frame").is_none() {
            let (session, turn) = (event["session"].as_str(), event["turn"].as_str());
            record.lock().unwrap().replies.push((session.unwrap().to_owned(), turn.unwrap().to_owned()));
            acked.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// Reads back, as `person`, every write they had acknowledged; returns how many were found
/// (all of them, or the test fails naming the first missing one).
pub(crate) async fn check_present(server: &Server, person: &Person, acked: &Acked, context: &str) -> usize {
    let token = Some(person.token.as_str());
    let who = format!("{context}: {}", person.name);
    assert!(acked.refused.is_empty(), "{who}: refused before the kill: {:?}", acked.refused);
    assert!(!acked.ended, "{who}: their session ended while they wrote");
    for (id, title) in &acked.notes {
        let (status, note) = server.call(Method::GET, &format!("/api/notes/{id}"), token, None).await;
        assert_eq!((status, note["title"].as_str()), (200, Some(title.as_str())), "{who}: acknowledged note {id} lost");
    }
    for (id, text) in &acked.memories {
        let (status, memory) = server.call(Method::GET, &format!("/api/memories/{id}"), token, None).await;
        let found = (status, memory["text"].as_str());
        assert_eq!(found, (200, Some(text.as_str())), "{who}: acknowledged memory {id} lost: {memory}");
    }
    let mut histories: HashMap<&str, Vec<Value>> = HashMap::new();
    for session in acked.messages.iter().map(|m| m.0.as_str()).chain(acked.replies.iter().map(|r| r.0.as_str())) {
        if !histories.contains_key(session) {
            let path = format!("/api/sessions/{session}/messages");
            let (status, history) = server.call(Method::GET, &path, token, None).await;
            assert_eq!(status, 200, "{who}: conversation {session} lost: {history}");
            histories.insert(session, history.as_array().unwrap().clone());
        }
    }
    for (session, text) in &acked.messages {
        let said = histories[session.as_str()].iter().any(|m| m["role"] == "user" && m["text"] == text.as_str());
        assert!(said, "{who}: acknowledged message {text:?} lost from {session}");
    }
    for (session, turn) in &acked.replies {
        let replied = histories[session.as_str()].iter().any(|m| {
            m["role"] == "assistant"
                && m["turn_id"] == turn.as_str()
                && m["status"] == "done"
                && m.get("frame_id").is_none()
        });
        assert!(replied, "{who}: the reply of {turn} ended done on the socket but is not in {session}");
    }
    let (status, inbox) = server.call(Method::GET, "/api/inbox", token, None).await;
    assert_eq!(status, 200, "{inbox}");
    let pending: HashSet<&str> = inbox.as_array().unwrap().iter().filter_map(|c| c["id"].as_str()).collect();
    for card in &acked.cards {
        assert!(!pending.contains(card.as_str()), "{who}: the decision on card {card} was lost: it is pending again");
    }
    acked.count()
}

/// `PRAGMA integrity_check` of the shared database and of each person's private file
/// (opened read-only with the key their password unwraps): how many said `ok`; the test
/// fails on any other answer.
pub(crate) async fn check_integrity(data_dir: &Path, people: &[Person], context: &str) -> usize {
    use sqlx::ConnectOptions;
    let mut system = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(data_dir.join("database/system.db"))
        .read_only(true)
        .connect()
        .await
        .unwrap();
    assert_eq!(integrity(&mut system).await, ["ok"], "{context}: the shared database");
    for person in people {
        let (id, key, _) = crate::support::key_of(data_dir, &person.name, &person.password).await;
        assert_eq!(id, person.id);
        let mut private = crate::support::open_private(data_dir, &id, &key)
            .await
            .unwrap_or_else(|| panic!("{context}: {}'s password does not open their file", person.name));
        assert_eq!(integrity(&mut private).await, ["ok"], "{context}: {}'s private file", person.name);
    }
    1 + people.len()
}

/// What `PRAGMA integrity_check` says; a page that no longer decrypts fails the query
/// itself, and its error is the answer then.
async fn integrity(db: &mut sqlx::SqliteConnection) -> Vec<String> {
    sqlx::query_scalar("PRAGMA integrity_check").fetch_all(db).await.unwrap_or_else(|err| vec![err.to_string()])
}

/// `skald verify` on the data directory passes.
pub(crate) fn check_verify(data_dir: &Path, context: &str) {
    let out = std::process::Command::new(BIN).arg("verify").arg("--data-dir").arg(data_dir).output().unwrap();
    assert!(
        out.status.success(),
        "{context}: skald verify failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A server with Ada (administrator) and the scripted provider, and `more` members
/// enrolled through the API.
pub(crate) async fn people_on(server: &Server, model: &ScriptedModel, more: usize) -> Vec<Person> {
    let password = PASSWORDS[0].to_owned();
    let (status, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": password })).await;
    assert_eq!(status, 201, "{setup}");
    let admin = setup["token"].as_str().unwrap().to_owned();
    let provider = json!({ "name": "scripted", "kind": "openai", "base_url": model.openai_base() });
    let (status, added) = server.post("/api/providers", Some(&admin), provider).await;
    assert_eq!(status, 201, "{added}");
    let (_, me) = server.call(Method::GET, "/api/me", Some(&admin), None).await;
    let ada = me["user"]["id"].as_str().unwrap().to_owned();
    let mut people = vec![Person { name: "Ada".into(), password, id: ada, token: admin.clone() }];
    for n in 1..=more {
        let (name, password) = (format!("Writer{n}"), format!("{} {n}", PASSWORDS[1]));
        let (status, added) = server.post("/api/users", Some(&admin), json!({ "name": name, "role": "member" })).await;
        assert_eq!(status, 201, "{added}");
        let enrol = json!({ "name": name, "enrolment_code": added["enrolment_code"], "password": password });
        let (status, enrolled) = server.post("/api/enrol", None, enrol).await;
        assert_eq!(status, 201, "{enrolled}");
        let (id, token) =
            (added["user"]["id"].as_str().unwrap().to_owned(), enrolled["token"].as_str().unwrap().to_owned());
        people.push(Person { name, password, id, token });
    }
    people
}

/// Five people write at once (notes, memories, messages and their replies, cards
/// decided); the server is killed with SIGKILL once a random number of writes were
/// acknowledged. After each restart every acknowledged write is there, read back through
/// the API as its writer, every database passes `PRAGMA integrity_check`, every private
/// file opens with its password, and `skald verify` passes.
#[tokio::test]
async fn a_crash_while_people_write_loses_no_acknowledged_write() {
    let rounds = env_count("SKALD_CRASH_WRITE_ROUNDS", 5);
    let writes = env_count("SKALD_CRASH_WRITES", 200);
    let started = Instant::now();
    let model = Arc::new(ScriptedModel::start().await);
    let mut server = Server::start();
    let mut people = people_on(&server, &model, 4).await;
    let mut tally = Tally::default();
    for round in 0..rounds {
        let context = format!("round {round}");
        let load = Writes::start(&server, &model, &people, writes).await;
        // Past the first quarter, so the turns and cards have begun too.
        load.until_acknowledged(writes / 4 + random_below(writes as u64 * 3 / 4) as usize).await;
        let sandbox = server.stop("KILL");
        let (attempted, acked) = load.collect().await;

        server = Server::start_in(sandbox);
        tally.recount(&server, &mut people, (attempted, &acked), writes, &context).await;
        tally.integrity_checks += check_integrity(&server.data_dir(), &people, &context).await;
        check_verify(&server.data_dir(), &context);
    }
    let sandbox = server.stop("TERM");
    tally.integrity_checks += check_integrity(&sandbox.data_dir(), &people, "at the end").await;
    check_verify(&sandbox.data_dir(), "at the end");
    tally.report(&format!("{rounds} crashes, up to {writes} writes each, {} people", people.len()), started);
}
