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

const BO_PASSWORD: &str = "maple harbour seventeen";

impl Chat {
    /// Adds a member, enrolled; their token.
    async fn member(&self, name: &str, role: &str) -> String {
        let (_, added) = self.server.post("/api/users", Some(&self.token), json!({ "name": name, "role": role })).await;
        let enrol = json!({ "name": name, "enrolment_code": added["enrolment_code"], "password": BO_PASSWORD });
        let (status, enrolled) = self.server.post("/api/enrol", None, enrol).await;
        assert_eq!(status, 201, "{enrolled}");
        enrolled["token"].as_str().unwrap().to_owned()
    }

    async fn jobs_of(&self, token: &str) -> Vec<Value> {
        let (status, jobs) = self.server.call(Method::GET, "/api/jobs", Some(token), None).await;
        assert_eq!(status, 200, "{jobs}");
        jobs.as_array().unwrap().clone()
    }
}

/// The tool results of a conversation's history, oldest first.
fn tool_results(history: &[Value]) -> Vec<&Value> {
    history.iter().filter(|m| m["role"] == "tool").collect()
}

/// Whether any file under the data directory but the named folders holds `words`.
fn on_disk(chat: &Chat, skipping: &[&str], words: &str) -> Option<std::path::PathBuf> {
    let mut files = Vec::new();
    crate::support::files_under(&chat.server.data_dir(), skipping, &mut files);
    files.into_iter().find(|file| {
        let bytes = std::fs::read(file).unwrap_or_default();
        bytes.windows(words.len()).any(|w| w == words.as_bytes())
    })
}

#[tokio::test]
async fn the_schedule_tool_proposes_a_job_on_a_card_with_its_next_three_times_and_makes_it_once_allowed() {
    use scripted_model::{Reply, ScriptedCall};
    let chat = Chat::start().await;
    let proposed =
        json!({ "kind": "reminder", "text": "Water the tomatoes", "cron": "0 7 * * 1-5", "zone": "Europe/Oslo" });
    chat.model.push(Reply::tool_calls([ScriptedCall::new("schedule", proposed.clone())]));
    chat.model.push(Reply::text("Set for weekdays at seven."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "remind me every weekday at 7 to water the tomatoes").await;

    let card = chat.cards(1).await.remove(0);
    assert_eq!(card["details"]["arguments"], proposed, "the card binds the exact arguments");
    let shown = &card["details"]["schedule"];
    assert_eq!((shown["kind"].as_str(), shown["repeat"].as_str()), (Some("reminder"), Some("0 7 * * 1-5")), "{card}");
    let upcoming: Vec<&str> = shown["upcoming"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(upcoming.len(), 3, "{shown}");
    for time in &upcoming {
        assert!(time.contains("T07:00:00+0"), "seven in Oslo's time: {time}");
        let day = time[..19].parse::<jiff::civil::DateTime>().unwrap().weekday();
        assert!(day.to_monday_one_offset() <= 5, "weekdays only: {time} is a {day:?}");
    }
    assert!(chat.jobs_of(&chat.token).await.is_empty(), "nothing is made before the person allows it");

    let (status, decided) = chat.decide(&card, json!({ "decision": "allow" })).await;
    assert_eq!(status, 200, "{decided}");
    let history = chat.finished(&session).await;
    let results = tool_results(&history);
    assert!(results[0]["text"].as_str().unwrap().starts_with("scheduled "), "{results:?}");
    let jobs = chat.jobs_of(&chat.token).await;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!((jobs[0]["cron"].as_str(), jobs[0]["text"].as_str()), (Some("0 7 * * 1-5"), Some("Water the tomatoes")));
    assert_eq!(jobs[0]["upcoming"].as_array().unwrap().len(), 3);
    let id = jobs[0]["id"].as_str().unwrap().to_owned();

    // A pattern of 6 fields is no job: the model reads why, and no one is asked.
    let six = json!({ "kind": "reminder", "text": "Stretch", "cron": "0 0 7 * * *" });
    chat.model.push(Reply::tool_calls([ScriptedCall::new("schedule", six)]));
    chat.model.push(Reply::text("Let me fix that."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "remind me to stretch").await;
    let history = chat.finished(&session).await;
    let results = tool_results(&history);
    assert_eq!(results[0]["status"], "error", "{results:?}");
    assert!(results[0]["text"].as_str().unwrap().contains("5 fields"), "{results:?}");
    assert!(chat.inbox().await.is_empty(), "no card for a job that cannot be");
    assert_eq!(chat.jobs_of(&chat.token).await.len(), 1);

    // Listing asks no one; cancelling is confirmed, then the job is gone.
    chat.model.push(Reply::tool_calls([ScriptedCall::new("list_schedules", json!({}))]));
    chat.model.push(Reply::tool_calls([ScriptedCall::new("cancel_schedule", json!({ "id": id }))]));
    chat.model.push(Reply::text("Cancelled."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "stop the tomato reminder").await;
    let card = chat.cards(1).await.remove(0);
    assert_eq!(card["details"]["tool"], "cancel_schedule", "{card}");
    let (status, _) = chat.decide(&card, json!({ "decision": "allow" })).await;
    assert_eq!(status, 200);
    let history = chat.finished(&session).await;
    let results = tool_results(&history);
    let listed = results[0]["text"].as_str().unwrap();
    assert!(listed.contains(&id) && listed.contains("Water the tomatoes"), "{listed}");
    assert_eq!(results[1]["text"], format!("cancelled {id}").as_str(), "{results:?}");
    assert!(chat.jobs_of(&chat.token).await.is_empty());
}

#[tokio::test]
async fn a_role_that_may_not_schedule_is_not_offered_the_scheduling_tools() {
    let chat = Chat::start().await;
    let kim = chat.member("Kim", "restricted").await;
    chat.model.push(scripted_model::Reply::text("Hi Kim"));
    let (_, session) = chat.server.post("/api/sessions", Some(&kim), json!({})).await;
    let id = session["id"].as_str().unwrap();
    let (status, _) =
        chat.server.post(&format!("/api/sessions/{id}/messages"), Some(&kim), json!({ "text": "hi" })).await;
    assert_eq!(status, 202);
    super::finished(&chat.server, &kim, id, super::WAIT).await;
    let request = chat.model.requests().into_iter().find(|r| r.body["tools"].is_array()).expect("a turn's request");
    let offered: Vec<&str> =
        request.body["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(!offered.is_empty(), "tools are offered");
    for tool in ["schedule", "list_schedules", "cancel_schedule"] {
        assert!(!offered.contains(&tool), "{tool} offered: {offered:?}");
    }
    let (status, refused) = chat
        .server
        .post("/api/jobs", Some(&kim), json!({ "kind": "reminder", "text": "x", "cron": "0 7 * * *" }))
        .await;
    assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("may_not_schedule")), "{refused}");
}

#[tokio::test]
async fn a_reminder_set_for_another_member_is_sealed_to_them_until_they_log_in_and_then_is_theirs() {
    const WORDS: &str = "Dentist at four 9917, bring the card";
    let chat = Chat::start().await;
    let bo = chat.member("Bo", "member").await;
    let (status, _) = chat.server.post("/api/logout", Some(&bo), json!({})).await;
    assert!(status < 300);
    let (_, me) = chat.server.call(Method::GET, "/api/me", Some(&chat.token), None).await;
    assert_eq!(me["members"], json!(["Bo"]), "whom Ada can set a reminder for: {me}");

    let job = chat.add_job(json!({ "kind": "reminder", "text": WORDS, "cron": "0 9 * * *", "for": "Bo" })).await;
    assert_eq!(job["set_by"], "Ada", "{job}");
    assert!(chat.jobs_of(&chat.token).await.is_empty(), "once made it is Bo's, not Ada's");
    let id = job["id"].as_str().unwrap().to_owned();
    let (status, _) = chat.server.call(Method::DELETE, &format!("/api/jobs/{id}"), Some(&chat.token), None).await;
    assert_eq!(status, 404, "Ada cannot delete it either");
    // Sealed to Bo while he is away: in no file in plain text.
    assert_eq!(on_disk(&chat, &[], WORDS), None);

    let (status, login) = chat.server.post("/api/login", None, json!({ "name": "Bo", "password": BO_PASSWORD })).await;
    assert_eq!(status, 200, "{login}");
    let bo = login["token"].as_str().unwrap().to_owned();
    let jobs = chat.jobs_of(&bo).await;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!((jobs[0]["text"].as_str(), jobs[0]["set_by"].as_str()), (Some(WORDS), Some("Ada")));
    assert_eq!(jobs[0]["may_change"], true);
    assert_eq!(on_disk(&chat, &[], WORDS), None, "opened into Bo's encrypted file only");
    let db = chat.server.data_dir().join("database/system.db");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display())).await.unwrap();
    let sealed: Option<Vec<u8>> =
        sqlx::query_scalar("SELECT sealed_text FROM jobs WHERE id = ?").bind(&id).fetch_one(&pool).await.unwrap();
    assert_eq!(sealed, None, "the sealed copy is dropped once Bo's file keeps the words");
    pool.close().await;

    // Bo may snooze it and delete it.
    let (status, snoozed) =
        chat.server.post(&format!("/api/jobs/{id}/snooze"), Some(&bo), json!({ "for": "1h" })).await;
    assert_eq!(status, 200, "{snoozed}");
    let next: jiff::Timestamp = snoozed["next_run"].as_str().unwrap().parse().unwrap();
    let from_now = next.duration_since(jiff::Timestamp::now()).as_secs();
    assert!((3500..=3601).contains(&from_now), "an hour from now: {from_now} s");
    let (status, _) = chat.server.call(Method::DELETE, &format!("/api/jobs/{id}"), Some(&bo), None).await;
    assert_eq!(status, 204);

    // A task cannot be set for another, nor a reminder for someone who is not there.
    for (body, code) in [
        (json!({ "kind": "task", "text": "x", "cron": "0 9 * * *", "for": "Bo" }), "reminder_only"),
        (json!({ "kind": "reminder", "text": "x", "cron": "0 9 * * *", "for": "Nobody" }), "no_member"),
        (
            json!({ "kind": "reminder", "text": "x", "cron": "0 9 * * *", "for": "Bo", "shared": true }),
            "shared_and_for",
        ),
    ] {
        let (status, refused) = chat.server.post("/api/jobs", Some(&chat.token), body).await;
        assert_eq!((status, refused["error"]["code"].as_str()), (400, Some(code)), "{refused}");
    }
}

#[tokio::test]
async fn a_shared_reminder_is_seen_by_everyone_comes_to_everyone_and_only_its_owner_or_an_administrator_changes_it() {
    let chat = Chat::start().await;
    let bo = chat.member("Bo", "member").await;
    let mut ada_socket = chat.socket().await;
    let mut bo_socket = super::Socket::open(&chat.server, &bo).await;
    let (at, _) = in_seconds(3);
    let job = chat.add_job(json!({ "kind": "reminder", "text": "Bins out tonight", "at": at, "shared": true })).await;
    assert_eq!((job["shared"].as_bool(), job["readable_while_away"].as_bool()), (Some(true), Some(true)), "{job}");
    let seen = chat.jobs_of(&bo).await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!((seen[0]["text"].as_str(), seen[0]["may_change"].as_bool()), (Some("Bins out tonight"), Some(false)));
    let path = format!("/api/jobs/{}", job["id"].as_str().unwrap());
    let (status, refused) = chat.server.call(Method::DELETE, &path, Some(&bo), None).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("shared_not_yours")), "{refused}");

    for socket in [&mut ada_socket, &mut bo_socket] {
        let event = socket.notify_within(Duration::from_secs(15)).await.expect("the shared reminder came");
        assert_eq!(event["body"], "Bins out tonight", "{event}");
    }

    // Bo's own shared reminder: the administrator may change it.
    let (status, bos) = chat
        .server
        .post(
            "/api/jobs",
            Some(&bo),
            json!({ "kind": "reminder", "text": "Recycling", "cron": "0 20 * * 1", "shared": true }),
        )
        .await;
    assert_eq!(status, 201, "{bos}");
    let path = format!("/api/jobs/{}", bos["id"].as_str().unwrap());
    let (status, changed) =
        chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(json!({ "text": "Recycling and glass" }))).await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(chat.jobs_of(&bo).await.iter().filter(|j| j["text"] == "Recycling and glass").count(), 1);
    // Each one's privacy page names the reminders of theirs the administrator can read.
    let (_, privacy) = chat.server.call(Method::GET, "/api/me/privacy", Some(&bo), None).await;
    let readable = &privacy["administrators_see"]["readable_jobs"];
    assert_eq!(readable.as_array().map(Vec::len), Some(1), "{privacy}");
    assert_eq!(
        (readable[0]["text"].as_str(), readable[0]["shared"].as_bool()),
        (Some("Recycling and glass"), Some(true))
    );
    chat.add_job(json!({ "kind": "reminder", "text": "Call the bank", "cron": "0 9 * * 1" })).await;
    let (_, privacy) = chat.server.call(Method::GET, "/api/me/privacy", Some(&chat.token), None).await;
    let texts: Vec<&str> = privacy["administrators_see"]["readable_jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| job["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["Bins out tonight"], "a reminder kept in Ada's file is not listed: {privacy}");

    // A task is never shared.
    let (status, refused) = chat
        .server
        .post("/api/jobs", Some(&bo), json!({ "kind": "task", "text": "x", "cron": "0 20 * * 1", "shared": true }))
        .await;
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("reminder_only")), "{refused}");
}

#[tokio::test]
async fn a_snoozed_reminder_comes_again_after_the_snooze_and_tomorrow_keeps_its_time_of_day() {
    let chat = Chat::start().await;
    let job = chat
        .add_job(json!({ "kind": "reminder", "text": "Stretch", "cron": "0 12 * * *", "zone": "America/New_York" }))
        .await;
    let path = format!("/api/jobs/{}/snooze", job["id"].as_str().unwrap());
    let before = jiff::Timestamp::now();
    let (status, snoozed) = chat.server.post(&path, Some(&chat.token), json!({ "for": "10m" })).await;
    assert_eq!(status, 200, "{snoozed}");
    let next: jiff::Timestamp = snoozed["next_run"].as_str().unwrap().parse().unwrap();
    let minutes = next.duration_since(before).as_secs();
    assert!((599..=662).contains(&minutes), "ten minutes from now: {minutes} s");

    let (status, snoozed) = chat.server.post(&path, Some(&chat.token), json!({ "for": "tomorrow" })).await;
    assert_eq!(status, 200, "{snoozed}");
    let next: jiff::Timestamp = snoozed["next_run"].as_str().unwrap().parse().unwrap();
    let zone = jiff::tz::TimeZone::get("America/New_York").unwrap();
    let expected = jiff::Timestamp::now().to_zoned(zone.clone()).tomorrow().unwrap();
    let drift = expected.timestamp().duration_since(next).as_secs().abs();
    assert!(drift <= 60, "this time tomorrow in the job's zone: {} vs {expected}", next.to_zoned(zone));

    let (status, refused) = chat.server.post(&path, Some(&chat.token), json!({ "for": "forever" })).await;
    assert_eq!(status, 400, "{refused}");
}

/// Waits until the model server has received `count` requests.
async fn requests_reach(model: &scripted_model::ScriptedModel, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while model.requests().len() < count {
        assert!(Instant::now() < deadline, "the model was asked {} times, not {count}", model.requests().len());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_task_kept_readable_runs_while_its_owner_is_away_and_its_answer_is_theirs_at_login() {
    const ANSWER: &str = "A quiet day in the garden 7730.";
    let chat = Chat::start().await;
    let (at, _) = in_seconds(2);
    let task = json!({ "kind": "task", "text": "Sum up my day 5521", "at": at, "readable_while_away": true });
    let job = chat.add_job(task).await;
    assert_eq!(job["readable_while_away"], true, "{job}");
    let id = job["id"].as_str().unwrap().to_owned();
    let (status, _) = chat.server.post("/api/logout", Some(&chat.token), json!({})).await;
    assert!(status < 300);

    chat.model.push(scripted_model::Reply::text(ANSWER));
    requests_reach(&chat.model, 1).await;
    assert!(chat.model.requests()[0].body.to_string().contains("Sum up my day 5521"));
    // What it said is sealed to Ada until she logs in: in no file in plain text, and its
    // space is gone once the run ends.
    let away = chat.server.data_dir().join("away");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_dir(&away).map(|d| d.count()).unwrap_or(0) > 0 {
        assert!(Instant::now() < deadline, "the run's space stayed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(on_disk(&chat, &[], ANSWER), None);

    let (status, login) = chat.server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 200, "{login}");
    let token = login["token"].as_str().unwrap().to_owned();
    let runs = settled_runs(&chat.server, &token, &id).await;
    assert_eq!((runs.len(), runs[0]["status"].as_str()), (1, Some("done")), "{runs:?}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let conversation = loop {
        let jobs = chat.jobs_of(&token).await;
        if let Some(conversation) = jobs[0]["conversation_id"].as_str() {
            break conversation.to_owned();
        }
        assert!(Instant::now() < deadline, "the answer never reached Ada's file: {jobs:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let history = super::history(&chat.server, &token, &conversation).await;
    let texts: Vec<&str> = history.iter().map(|row| row["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["Sum up my day 5521", ANSWER], "{history:?}");
    assert_eq!(chat.model.requests().len(), 1, "the login carried the answer in; it did not ask again");
    let (_, notices) = chat.server.call(Method::GET, "/api/notices", Some(&token), None).await;
    assert!(!notices.to_string().contains("job_record_changed"), "the record it carried was Ada's: {notices}");
}

#[tokio::test]
async fn a_task_kept_readable_waits_for_its_owner_when_where_their_words_go_widened_while_they_were_away() {
    let chat = Chat::start().await;
    let bo = chat.member("Bo", "member").await;
    let (at, due) = in_seconds(3);
    let task = json!({ "kind": "task", "text": "Plan my week", "at": at, "readable_while_away": true });
    let (status, job) = chat.server.post("/api/jobs", Some(&bo), task).await;
    assert_eq!(status, 201, "{job}");
    let (status, _) = chat.server.post("/api/logout", Some(&bo), json!({})).await;
    assert!(status < 300);
    // While Bo is away, the administrator connects another provider: his words could go there.
    let capture = scripted_model::ScriptedModel::start().await;
    let provider = json!({ "name": "elsewhere", "kind": "openai", "base_url": capture.openai_base() });
    let (status, added) = chat.server.post("/api/providers", Some(&chat.token), provider).await;
    assert_eq!(status, 201, "{added}");
    let requests_before = chat.model.requests().len();

    while std::time::SystemTime::now() < due + Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let db = chat.server.data_dir().join("database/system.db");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display())).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        let status: Option<String> = sqlx::query_scalar("SELECT status FROM job_runs WHERE job_id = ?")
            .bind(job["id"].as_str().unwrap())
            .fetch_optional(&pool)
            .await
            .unwrap();
        if status.as_deref().is_some_and(|s| s != "running") {
            break status.unwrap();
        }
        assert!(Instant::now() < deadline, "the run never settled");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let carried: Option<String> = sqlx::query_scalar("SELECT accepted FROM jobs WHERE id = ?")
        .bind(job["id"].as_str().unwrap())
        .fetch_one(&pool)
        .await
        .unwrap();
    pool.close().await;
    assert!(carried.is_some_and(|r| r.contains("scripted")), "the task carried Bo's record of what he accepted");
    assert_eq!(status, "waiting_for_unlock", "it waits for Bo to decide");
    assert_eq!(capture.request_count(), 0, "nothing went to the new provider");
    assert_eq!(chat.model.requests().len(), requests_before, "nor anywhere else");
}

#[tokio::test]
async fn a_record_a_readable_task_carries_changed_outside_skald_is_named_at_the_next_login() {
    let chat = Chat::start().await;
    let task = json!({ "kind": "task", "text": "Tidy my inbox", "cron": "0 6 * * *", "readable_while_away": true });
    let job = chat.add_job(task).await;
    let (status, _) = chat.server.post("/api/logout", Some(&chat.token), json!({})).await;
    assert!(status < 300);
    // Whoever owns the files widens the copy the task carries, so it would run elsewhere.
    let db = chat.server.data_dir().join("database/system.db");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display())).await.unwrap();
    sqlx::query("UPDATE jobs SET accepted = replace(accepted, '\"local_only\"', '\"any\"') || ' ' WHERE id = ?")
        .bind(job["id"].as_str().unwrap())
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let (status, login) = chat.server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 200, "{login}");
    let token = login["token"].as_str().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, notices) = chat.server.call(Method::GET, "/api/notices", Some(token), None).await;
        let changed: Vec<&Value> =
            notices.as_array().unwrap().iter().filter(|n| n["kind"] == "job_record_changed").collect();
        if let Some(notice) = changed.first() {
            assert_eq!(notice["body"]["job"], job["id"], "{notice}");
            break;
        }
        assert!(Instant::now() < deadline, "no notice of the changed record: {notices}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
