//! Scheduled reminders over the real server (§11), with real time and short delays: one
//! comes once, at its time, to its owner's windows; one due while Skald was stopped is
//! reported once after the restart and not run; schedules that cannot be are refused in
//! words; and what a reminder says never reaches the shared database in plain text.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use reqwest::Method;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::{Chat, PASSWORD, Socket};
use crate::support::Server;

impl Chat {
    async fn add_job(&self, body: Value) -> Value {
        let (status, job) = self.server.post("/api/jobs", Some(&self.token), body).await;
        assert_eq!(status, 201, "{job}");
        job
    }

    async fn job_runs(&self, id: &str) -> Vec<Value> {
        let path = format!("/api/jobs/{id}/runs");
        let (status, runs) = self.server.call(Method::GET, &path, Some(&self.token), None).await;
        assert_eq!(status, 200, "{runs}");
        runs.as_array().unwrap().clone()
    }
}

impl Socket {
    /// The next `notify` event within `limit`, if one comes.
    async fn notify_within(&mut self, limit: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let message = tokio::time::timeout_at(deadline, self.0.next()).await.ok()??.ok()?;
            if let Message::Text(text) = message {
                let event: Value = serde_json::from_str(&text).unwrap();
                if event["type"] == "notify" {
                    return Some(event);
                }
            }
        }
    }
}

/// An instant `seconds` from now, as RFC 3339 in UTC.
fn in_seconds(seconds: u64) -> (String, std::time::SystemTime) {
    let when = std::time::SystemTime::now() + Duration::from_secs(seconds);
    let at = jiff::Timestamp::try_from(when).unwrap().round(jiff::Unit::Second).unwrap();
    (at.to_string(), std::time::SystemTime::from(at))
}

#[tokio::test]
async fn a_reminder_comes_once_at_its_time_and_not_again() {
    const WORDS: &str = "Take the cake out of the oven 4471";
    let chat = Chat::start().await;
    let mut socket = chat.socket().await;
    let (at, due) = in_seconds(3);
    let job = chat.add_job(json!({ "kind": "reminder", "text": WORDS, "at": at, "zone": "Europe/Oslo" })).await;
    assert_eq!(job["next_run"], at.as_str(), "{job}");
    assert_eq!(job["text"], WORDS);
    assert!(job["upcoming"][0].as_str().unwrap().ends_with("+01:00"), "shown in its zone: {job}");

    let event = socket.notify_within(Duration::from_secs(15)).await.expect("the reminder came");
    let came = std::time::SystemTime::now();
    assert_eq!((event["title"].as_str(), event["body"].as_str()), (Some("Reminder"), Some(WORDS)), "{event}");
    assert!(came >= due, "not before its time");
    let late = came.duration_since(due).unwrap();
    assert!(late < Duration::from_secs(3), "on time: {late:?} late");
    assert!(socket.notify_within(Duration::from_secs(10)).await.is_none(), "once, and not again");

    let id = job["id"].as_str().unwrap();
    let runs = chat.job_runs(id).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!((runs[0]["status"].as_str(), runs[0]["scheduled_for"].as_str()), (Some("done"), Some(at.as_str())));
    let (_, jobs) = chat.server.call(Method::GET, "/api/jobs", Some(&chat.token), None).await;
    assert_eq!(jobs[0]["next_run"], Value::Null, "a one-off is over once it ran: {jobs}");

    // What it says is in Ada's encrypted file only, never in the shared database's files.
    let mut files = Vec::new();
    crate::support::files_under(&chat.server.data_dir(), &["users"], &mut files);
    for file in files {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(!bytes.windows(WORDS.len()).any(|w| w == WORDS.as_bytes()), "the words are in {}", file.display());
    }
}

#[tokio::test]
async fn a_reminder_due_while_skald_was_stopped_is_reported_once_after_the_restart_and_not_run() {
    let chat = Chat::start().await;
    let (at, due) = in_seconds(4);
    let job = chat.add_job(json!({ "kind": "reminder", "text": "Call the plumber", "at": at })).await;
    let id = job["id"].as_str().unwrap().to_owned();
    let Chat { server, .. } = chat;
    let sandbox = server.stop("TERM");
    while std::time::SystemTime::now() < due + Duration::from_secs(1) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let server = Server::start_in(sandbox);
    let (status, login) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 200, "{login}");
    let token = login["token"].as_str().unwrap();
    let started = Instant::now();
    let missed = loop {
        let (_, notices) = server.call(Method::GET, "/api/notices", Some(token), None).await;
        let found: Vec<Value> =
            notices.as_array().unwrap().iter().filter(|n| n["kind"] == "job_missed").cloned().collect();
        if !found.is_empty() || started.elapsed() > Duration::from_secs(10) {
            break found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(missed.len(), 1, "one notice for the job: {missed:?}");
    let body = &missed[0]["body"];
    assert_eq!(
        (body["job"].as_str(), body["count"].as_u64(), body["ran"].as_bool()),
        (Some(id.as_str()), Some(1), Some(false))
    );
    assert_eq!(body["last"], at.as_str());
    assert!(!missed[0]["body"].to_string().contains("plumber"), "a notice carries no words");
    let (_, runs) = server.call(Method::GET, &format!("/api/jobs/{id}/runs"), Some(token), None).await;
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!((runs[0]["status"].as_str(), runs[0]["missed_count"].as_i64()), (Some("missed"), Some(1)));

    // A second restart reports nothing again.
    let sandbox = server.stop("TERM");
    let server = Server::start_in(sandbox);
    let (_, login) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let token = login["token"].as_str().unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, notices) = server.call(Method::GET, "/api/notices", Some(token), None).await;
    let again = notices.as_array().unwrap().iter().filter(|n| n["kind"] == "job_missed").count();
    assert_eq!(again, 1, "the same notice, no second one: {notices}");
}

#[tokio::test]
async fn schedules_that_cannot_be_are_refused_in_words_and_a_preview_shows_the_next_three() {
    let chat = Chat::start().await;
    let refused = |body: Value| {
        let chat = &chat;
        async move {
            let (status, error) = chat.server.post("/api/jobs", Some(&chat.token), body).await;
            assert_eq!(status, 400, "{error}");
            error["error"]["message"].as_str().unwrap().to_owned()
        }
    };
    let six = refused(json!({ "kind": "reminder", "text": "x", "cron": "0 0 7 * * *" })).await;
    assert!(six.contains("5 fields") && six.contains("has 6"), "{six}");
    let past = refused(json!({ "kind": "reminder", "text": "x", "at": "2020-01-01T07:00:00Z" })).await;
    assert!(past.contains("has passed"), "{past}");
    let impossible = refused(json!({ "kind": "reminder", "text": "x", "at": "2031-02-30T07:00" })).await;
    assert!(impossible.contains("not a date"), "{impossible}");
    let never = refused(json!({ "kind": "reminder", "text": "x", "cron": "0 0 30 2 *" })).await;
    assert!(never.contains("never comes"), "{never}");
    let zone = refused(json!({ "kind": "reminder", "text": "x", "cron": "0 7 * * *", "zone": "Mars/Olympus" })).await;
    assert!(zone.contains("time zone"), "{zone}");
    let empty = refused(json!({ "kind": "reminder", "text": "  ", "cron": "0 7 * * *" })).await;
    assert!(empty.contains("1 to 4000"), "{empty}");

    let (status, preview) = chat
        .server
        .post("/api/jobs/preview", Some(&chat.token), json!({ "cron": "30 2 * * *", "zone": "Europe/Oslo" }))
        .await;
    assert_eq!(status, 200, "{preview}");
    let upcoming: Vec<&str> = preview["upcoming"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(upcoming.len(), 3, "{preview}");
    assert!(upcoming.iter().all(|t| t.contains("T02:30:00+0") || t.contains("T03:00:00+02:00")), "{upcoming:?}");

    // Paused, a job has no next occurrence; taken out of pause, it goes on from now.
    let job =
        chat.add_job(json!({ "kind": "reminder", "text": "Stretch", "cron": "*/5 * * * *", "zone": "UTC" })).await;
    let path = format!("/api/jobs/{}", job["id"].as_str().unwrap());
    let (status, paused) =
        chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(json!({ "paused": true }))).await;
    assert_eq!(
        (status, paused["paused"].as_bool(), paused["upcoming"].as_array().map(Vec::len)),
        (200, Some(true), Some(0))
    );
    let (status, _) = chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(json!({ "paused": false }))).await;
    assert_eq!(status, 200);
    let (status, _) = chat.server.call(Method::DELETE, &path, Some(&chat.token), None).await;
    assert_eq!(status, 204);
    let (status, gone) = chat.server.call(Method::GET, &format!("{path}/runs"), Some(&chat.token), None).await;
    assert_eq!((status, gone["error"]["code"].as_str()), (404, Some("no_job")));
}

/// The runs of a job once the latest has left `running`/`waiting_for_unlock`.
async fn settled_runs(server: &Server, token: &str, id: &str) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, runs) = server.call(Method::GET, &format!("/api/jobs/{id}/runs"), Some(token), None).await;
        let runs = runs.as_array().cloned().unwrap_or_default();
        let settled =
            runs.first().is_some_and(|r| !["running", "waiting_for_unlock"].contains(&r["status"].as_str().unwrap()));
        if settled {
            return runs;
        }
        assert!(Instant::now() < deadline, "the run did not end: {runs:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_task_due_while_its_owner_is_locked_waits_and_runs_when_they_log_in() {
    let chat = Chat::start().await;
    let (at, due) = in_seconds(2);
    let task = json!({ "kind": "task", "text": "Sum up my week in one line", "at": at });
    let job = chat.add_job(task).await;
    let id = job["id"].as_str().unwrap().to_owned();
    assert_eq!(job["agent"], "main");
    let (status, _) = chat.server.post("/api/logout", Some(&chat.token), json!({})).await;
    assert!(status < 300, "{status}");
    while std::time::SystemTime::now() < due + Duration::from_millis(1500) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(chat.model.requests().is_empty(), "nothing ran while Ada was locked");

    chat.model.push(scripted_model::Reply::text("A calm week of gardening."));
    let (status, login) = chat.server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 200, "{login}");
    let token = login["token"].as_str().unwrap();
    let runs = settled_runs(&chat.server, token, &id).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!((runs[0]["status"].as_str(), runs[0]["scheduled_for"].as_str()), (Some("done"), Some(at.as_str())));
    let requests = chat.model.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].body.to_string().contains("Sum up my week in one line"), "the task's words were the turn's");
    let (_, jobs) = chat.server.call(Method::GET, "/api/jobs", Some(token), None).await;
    let conversation = jobs[0]["conversation_id"].as_str().expect("the task has its conversation").to_owned();
    let history = super::history(&chat.server, token, &conversation).await;
    assert_eq!(history.last().unwrap()["text"], "A calm week of gardening.", "{history:?}");
}

#[tokio::test]
async fn a_task_whose_turn_needs_a_decision_parks_on_a_card_and_says_it_waits() {
    let chat = Chat::start().await;
    let mut socket = chat.socket().await;
    let write = json!({ "title": "Shopping", "body": "eggs, flour" });
    chat.model.push(scripted_model::Reply::tool_calls([scripted_model::ScriptedCall::new("note_write", write)]));
    let (at, _) = in_seconds(2);
    let job = chat.add_job(json!({ "kind": "task", "text": "Write my shopping list", "at": at })).await;
    let event = socket.notify_within(Duration::from_secs(20)).await.expect("a notification");
    assert_eq!(event["title"], "A task is waiting for you", "{event}");
    assert!(event["body"].as_str().unwrap().contains("inbox"), "{event}");
    let runs = settled_runs(&chat.server, &chat.token, job["id"].as_str().unwrap()).await;
    assert_eq!(runs[0]["status"], "parked");
    let inbox = chat.inbox().await;
    assert_eq!(inbox.len(), 1, "{inbox:?}");
    assert_eq!(
        (inbox[0]["kind"].as_str(), inbox[0]["details"]["tool"].as_str()),
        (Some("approval"), Some("note_write"))
    );
    let (_, notes) = chat.server.call(Method::GET, "/api/notes", Some(&chat.token), None).await;
    assert_eq!(notes, json!([]), "nothing was written without the person");
}
