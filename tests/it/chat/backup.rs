//! Backup and restore (docs/architecture.md §5.2) against the real server and the real
//! command: a backup taken by `skald backup` from another process while several people
//! write, restored into an empty folder, opens with everyone's password and holds every
//! write acknowledged before it started; the archive and the restored folder hold no
//! plaintext of what people wrote; a wrong passphrase, a damaged archive and a non-empty
//! folder are refused without leaving anything behind.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use super::{Chat, PASSWORD, Socket};
use crate::support::{BIN, Sandbox, Server};

const BO_PASSWORD: &str = "copper meadow whistle";
const CY_PASSWORD: &str = "amber harbour pocket";
const PASSPHRASE: &str = "granite orchard lighthouse";

fn random_hex(bytes: usize) -> String {
    let mut raw = vec![0u8; bytes];
    getrandom::fill(&mut raw).unwrap();
    hex::encode(raw)
}

/// `skald <args>` with the test's environment, data directory first.
fn skald(data_dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .env_remove("SKALD_DATA_DIR")
        .env("SKALD_INSECURE_FAST_KDF", "1")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .stdin(std::process::Stdio::null());
    command
}

fn passphrase_file(dir: &Path, passphrase: &str) -> PathBuf {
    let file = dir.join("passphrase");
    std::fs::write(&file, format!("{passphrase}\n")).unwrap();
    file
}

pub(super) async fn enrol(chat: &Chat, name: &str, password: &str) -> String {
    let (status, added) =
        chat.server.post("/api/users", Some(&chat.token), json!({ "name": name, "role": "member" })).await;
    assert_eq!(status, 201, "{added}");
    let enrol = json!({ "name": name, "enrolment_code": added["enrolment_code"], "password": password });
    let (status, enrolled) = chat.server.post("/api/enrol", None, enrol).await;
    assert_eq!(status, 201, "{enrolled}");
    enrolled["token"].as_str().unwrap().to_owned()
}

/// What one person wrote, each with when its write was acknowledged.
#[derive(Default)]
struct Written {
    notes: Vec<(String, Instant)>,
    messages: Vec<(String, Instant)>,
}

/// Writes notes and messages as `token` until `stop`; each acknowledged write is recorded.
async fn keep_writing(
    server_url: String,
    token: String,
    tag: String,
    written: Arc<Mutex<Written>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    count: Arc<std::sync::atomic::AtomicUsize>,
) {
    let client = reqwest::Client::new();
    let mut n = 0;
    while !stop.load(std::sync::atomic::Ordering::Acquire) {
        n += 1;
        let words = format!("{tag}-{n}-{}", random_hex(6));
        if n % 2 == 0 {
            let sent = client
                .post(format!("{server_url}/api/notes"))
                .bearer_auth(&token)
                .json(&json!({ "title": words, "body": format!("body of {words}") }))
                .send()
                .await;
            if sent.is_ok_and(|r| r.status() == 201) {
                written.lock().unwrap().notes.push((words, Instant::now()));
                count.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
            }
        } else {
            let created =
                client.post(format!("{server_url}/api/sessions")).bearer_auth(&token).json(&json!({})).send().await;
            let Ok(created) = created else { continue };
            let Ok(session) = created.json::<Value>().await else { continue };
            let Some(id) = session["id"].as_str() else { continue };
            let sent = client
                .post(format!("{server_url}/api/sessions/{id}/messages"))
                .bearer_auth(&token)
                .json(&json!({ "text": words }))
                .send()
                .await;
            if sent.is_ok_and(|r| r.status() == 202) {
                written.lock().unwrap().messages.push((words, Instant::now()));
                count.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
            }
        }
    }
}

/// Every note title and user message of a person, as the restored server shows them.
async fn everything_of(server: &Server, token: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (status, notes) = server.call(Method::GET, "/api/notes", Some(token), None).await;
    assert_eq!(status, 200, "{notes}");
    let notes = notes.as_array().unwrap().iter().map(|n| n["title"].as_str().unwrap().to_owned()).collect();
    let (status, sessions) = server.call(Method::GET, "/api/sessions", Some(token), None).await;
    assert_eq!(status, 200, "{sessions}");
    let mut messages = BTreeSet::new();
    for session in sessions.as_array().unwrap() {
        let id = session["id"].as_str().unwrap();
        for row in super::history(server, token, id).await {
            if row["role"] == "user" {
                messages.insert(row["text"].as_str().unwrap_or_default().to_owned());
            }
        }
    }
    (notes, messages)
}

/// `PRAGMA integrity_check` of a restored private file, opened with the key the person's
/// password unwraps (read from the restored shared database).
async fn private_integrity(data_dir: &Path, name: &str, password: &str) -> String {
    let (id, key, _) = crate::support::key_of(data_dir, name, password).await;
    let mut private = crate::support::open_private(data_dir, &id, &key).await.expect("the password's key opens it");
    let said: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check").fetch_all(&mut private).await.unwrap();
    said.join("; ")
}

/// What every word the writers of a backup test write begins with.
const CANARY: &str = "canary";

/// Whether any file under `dir`, or the file `dir` itself, holds `needle`.
fn holds(dir: &Path, needle: &[u8]) -> Option<PathBuf> {
    let mut files = Vec::new();
    if dir.is_file() {
        files.push(dir.to_path_buf());
    } else {
        crate::support::files_under(dir, &[], &mut files);
    }
    files.into_iter().find(|file| std::fs::read(file).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle)))
}

#[tokio::test]
async fn a_backup_taken_while_people_write_restores_with_every_acknowledged_write() {
    let target: usize = std::env::var("SKALD_BACKUP_WRITES").ok().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let chat = Chat::start().await;
    let bo = enrol(&chat, "Bo", BO_PASSWORD).await;
    let cy = enrol(&chat, "Cy", CY_PASSWORD).await;
    let people = [("Ada", PASSWORD, chat.token.clone()), ("Bo", BO_PASSWORD, bo), ("Cy", CY_PASSWORD, cy)];

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut writers = Vec::new();
    let mut records = Vec::new();
    for (name, _, token) in &people {
        // Two writers a person: several people, each with more than one window.
        for window in 0..2 {
            let written = Arc::new(Mutex::new(Written::default()));
            records.push((name.to_string(), written.clone()));
            writers.push(tokio::spawn(keep_writing(
                format!("http://127.0.0.1:{}", chat.server.port),
                token.clone(),
                format!("{CANARY}{}{window}", name.to_lowercase()),
                written,
                stop.clone(),
                count.clone(),
            )));
        }
    }
    // The backup starts a third of the way in, from another process, and the writes go on.
    while count.load(std::sync::atomic::Ordering::Acquire) < target / 3 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let outside = tempfile::tempdir().unwrap();
    let secret = passphrase_file(outside.path(), PASSPHRASE);
    let archive = outside.path().join("during-writes.skb");
    let started = Instant::now();
    let mut command = skald(&chat.server.data_dir(), &["backup", "--to"]);
    command.arg(&archive).arg("--passphrase-file").arg(&secret);
    // On a blocking thread: the writers share this test's runtime and go on meanwhile.
    let backup = tokio::task::spawn_blocking(move || command.output()).await.unwrap().unwrap();
    let (out, err) = (String::from_utf8_lossy(&backup.stdout), String::from_utf8_lossy(&backup.stderr));
    assert!(backup.status.success(), "backup failed: {err}");
    assert_eq!(out.trim(), archive.display().to_string(), "the archive's path on stdout");
    assert!(err.contains("the running Skald is writing"), "the running server did the copy: {err}");
    let during = count.load(std::sync::atomic::Ordering::Acquire);
    while count.load(std::sync::atomic::Ordering::Acquire) < target {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Release);
    for writer in writers {
        writer.await.unwrap();
    }
    let total = count.load(std::sync::atomic::Ordering::Acquire);
    eprintln!("{total} writes acknowledged; the backup ran from write {} to {during}", target / 3);
    assert!(during > target / 3, "writes went on while the backup ran");

    // The administrator sees it recorded.
    let (status, listed) = chat.server.call(Method::GET, "/api/backups", Some(&chat.token), None).await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["backups"][0]["state"], "done", "{listed}");
    assert_eq!(listed["backups"][0]["kind"], "command_line");
    assert_eq!(listed["backups"][0]["people"], 3);

    // No plaintext of what anyone wrote in the archive: it is sealed as a whole. Every
    // word written begins with the canary tag, so a file without the tag holds none of
    // them: each file is read once, not once a write (10,000 of them in the soak).
    let canaries = records.iter().flat_map(|(_, w)| {
        let w = w.lock().unwrap();
        w.notes.iter().chain(w.messages.iter()).map(|(words, _)| words.clone()).collect::<Vec<_>>()
    });
    assert!(canaries.into_iter().all(|words| words.starts_with(CANARY)), "every write carries the tag");
    assert_eq!(holds(&archive, CANARY.as_bytes()), None, "a canary in the archive");
    assert_eq!(holds(&archive, b"SQLite format 3"), None, "the shared database is sealed too");

    let sandbox = chat.server.stop("TERM");
    let restored = outside.path().join("restored");
    let restore =
        skald(&restored, &["restore", "--from"]).arg(&archive).arg("--passphrase-file").arg(&secret).output().unwrap();
    let said = String::from_utf8_lossy(&restore.stdout);
    assert!(restore.status.success(), "restore failed: {said}\n{}", String::from_utf8_lossy(&restore.stderr));
    assert!(said.contains("people: Ada, Bo, Cy"), "{said}");
    assert!(
        said.contains("the API key of the provider scripted") || said.contains("no secrets need entering again"),
        "{said}"
    );
    let verify = skald(&restored, &["verify"]).output().unwrap();
    assert!(verify.status.success(), "verify after restore: {}", String::from_utf8_lossy(&verify.stdout));

    // Every database passes its integrity check; the private ones opened with the
    // passwords people had when the backup was made.
    for (name, password, _) in &people {
        assert_eq!(private_integrity(&restored, name, password).await, "ok", "{name}'s file");
    }
    // The restored folder holds no plaintext of what anyone wrote either.
    assert_eq!(holds(&restored, CANARY.as_bytes()), None, "a canary in the restored folder");

    // Each person logs in with the same password and finds every write acknowledged
    // before the backup started.
    let mut restored_sandbox = Sandbox::new();
    std::fs::remove_dir_all(restored_sandbox.data_dir()).ok();
    std::fs::rename(&restored, restored_sandbox.data_dir()).unwrap();
    restored_sandbox.fast_kdf = true;
    let server = Server::start_in(restored_sandbox);
    let mut checked = 0;
    for (name, password, _) in &people {
        let (status, login) = server.post("/api/login", None, json!({ "name": name, "password": password })).await;
        assert_eq!(status, 200, "{name}: {login}");
        let token = login["token"].as_str().unwrap();
        let (notes, messages) = everything_of(&server, token).await;
        for (owner, written) in &records {
            if owner != name {
                continue;
            }
            let written = written.lock().unwrap();
            for (words, at) in written.notes.iter().filter(|(_, at)| *at < started) {
                assert!(
                    notes.contains(words),
                    "{name}'s note {words} acknowledged {:?} before the backup",
                    started - *at
                );
                checked += 1;
            }
            for (words, _) in written.messages.iter().filter(|(_, at)| *at < started) {
                assert!(messages.contains(words), "{name}'s message {words} acknowledged before the backup");
                checked += 1;
            }
        }
    }
    assert!(checked >= target / 3, "checked {checked} writes");
    drop(server);
    drop(sandbox);
}

#[tokio::test]
async fn the_page_s_backup_runs_in_the_background_and_reports_to_its_administrator() {
    let chat = Chat::start().await;
    let bo = enrol(&chat, "Bo", BO_PASSWORD).await;
    let outside = tempfile::tempdir().unwrap();
    let body = json!({ "to": outside.path(), "passphrase": PASSPHRASE });
    let (status, refused) = chat.server.post("/api/backups", Some(&bo), body.clone()).await;
    assert_eq!(status, 403, "a member may not: {refused}");

    let weak = json!({ "to": outside.path(), "passphrase": "short" });
    let (status, refused) = chat.server.post("/api/backups", Some(&chat.token), weak).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("backup_refused")), "{refused}");
    let inside = json!({ "to": chat.server.data_dir(), "passphrase": PASSPHRASE });
    let (status, refused) = chat.server.post("/api/backups", Some(&chat.token), inside).await;
    assert_eq!(status, 400, "not into the data directory: {refused}");

    let mut socket = Socket::open(&chat.server, &chat.token).await;
    let (status, started) = chat.server.post("/api/backups", Some(&chat.token), body).await;
    assert_eq!(status, 202, "{started}");
    let path = started["path"].as_str().unwrap().to_owned();
    assert!(path.starts_with(&outside.path().canonicalize().unwrap().display().to_string()), "{path}");
    let mut stages = Vec::new();
    loop {
        let event = socket.next_event().await;
        if event["type"] != "backup" {
            continue;
        }
        let stage = event["progress"]["stage"].as_str().unwrap().to_owned();
        stages.push(stage.clone());
        if stage == "done" || stage == "failed" {
            break;
        }
    }
    assert_eq!(stages.last().map(String::as_str), Some("done"), "{stages:?}");
    assert!(stages.contains(&"people".to_owned()), "{stages:?}");
    let (_, listed) = chat.server.call(Method::GET, "/api/backups", Some(&chat.token), None).await;
    assert_eq!(
        (listed["backups"][0]["state"].as_str(), listed["backups"][0]["kind"].as_str()),
        (Some("done"), Some("manual"))
    );
    assert!(listed["current"].is_null(), "{listed}");
    assert!(Path::new(&path).is_file());
    assert_eq!(crate::support::mode(Path::new(&path)) & 0o777, 0o600, "the archive is its owner's alone");

    // The schedule: checked, shown without its passphrase, and removable.
    let schedule = json!({ "folder": outside.path(), "at_time": "03:30", "zone": "Europe/Oslo", "keep": 7 });
    let (status, refused) =
        chat.server.call(Method::PUT, "/api/backups/schedule", Some(&chat.token), Some(schedule.clone())).await;
    assert_eq!(status, 400, "the first schedule needs a passphrase: {refused}");
    let mut with_passphrase = schedule.clone();
    with_passphrase["passphrase"] = json!(PASSPHRASE);
    let (status, set) =
        chat.server.call(Method::PUT, "/api/backups/schedule", Some(&chat.token), Some(with_passphrase)).await;
    assert_eq!(status, 200, "{set}");
    assert_eq!((set["at_time"].as_str(), set["keep"].as_i64()), (Some("03:30"), Some(7)));
    assert!(set.get("passphrase").is_none());
    let mut bad_time = schedule.clone();
    bad_time["at_time"] = json!("27:00");
    let (status, _) = chat.server.call(Method::PUT, "/api/backups/schedule", Some(&chat.token), Some(bad_time)).await;
    assert_eq!(status, 400);
    let (status, _) = chat.server.call(Method::DELETE, "/api/backups/schedule", Some(&chat.token), None).await;
    assert_eq!(status, 204);
}

#[tokio::test]
async fn a_wrong_passphrase_a_damaged_archive_or_a_used_folder_restores_nothing() {
    // Backed up alone: no Skald runs, so the command takes the lock itself.
    let server = Server::start();
    let (status, _) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 201);
    let sandbox = server.stop("TERM");
    let outside = tempfile::tempdir().unwrap();
    let secret = passphrase_file(outside.path(), PASSPHRASE);
    let backup = skald(&sandbox.data_dir(), &["backup", "--to"])
        .arg(outside.path())
        .arg("--passphrase-file")
        .arg(&secret)
        .output()
        .unwrap();
    assert!(backup.status.success(), "{}", String::from_utf8_lossy(&backup.stderr));
    let archive = PathBuf::from(String::from_utf8_lossy(&backup.stdout).trim());
    assert!(archive.file_name().unwrap().to_str().unwrap().starts_with("skald-backup-"));

    // No terminal and no file: refused at once, never waiting.
    let asked = skald(&sandbox.data_dir(), &["backup", "--to"]).arg(outside.path()).output().unwrap();
    assert_eq!(asked.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&asked.stderr).contains("--passphrase-file"));

    let target = outside.path().join("restored");
    let elsewhere = outside.path().join("other");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let wrong = passphrase_file(&elsewhere, "not the passphrase at all");
    let restore =
        skald(&target, &["restore", "--from"]).arg(&archive).arg("--passphrase-file").arg(&wrong).output().unwrap();
    assert!(!restore.status.success());
    assert!(String::from_utf8_lossy(&restore.stderr).contains("the passphrase does not open this backup"));
    assert!(!target.exists(), "nothing left behind");

    let mut damaged = std::fs::read(&archive).unwrap();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x20;
    let damaged_path = outside.path().join("damaged.skb");
    std::fs::write(&damaged_path, damaged).unwrap();
    let restore = skald(&target, &["restore", "--from"])
        .arg(&damaged_path)
        .arg("--passphrase-file")
        .arg(&secret)
        .output()
        .unwrap();
    assert!(!restore.status.success());
    assert!(
        String::from_utf8_lossy(&restore.stderr).contains("damaged"),
        "{}",
        String::from_utf8_lossy(&restore.stderr)
    );
    assert!(!target.exists(), "nothing left behind");

    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("something.txt"), b"mine").unwrap();
    let restore =
        skald(&target, &["restore", "--from"]).arg(&archive).arg("--passphrase-file").arg(&secret).output().unwrap();
    assert!(!restore.status.success());
    assert!(String::from_utf8_lossy(&restore.stderr).contains("not empty"));
    assert_eq!(std::fs::read(target.join("something.txt")).unwrap(), b"mine");

    // The good one restores, and Ada logs in there.
    let fresh = outside.path().join("fresh");
    let restore =
        skald(&fresh, &["restore", "--from"]).arg(&archive).arg("--passphrase-file").arg(&secret).output().unwrap();
    assert!(restore.status.success(), "{}", String::from_utf8_lossy(&restore.stderr));
    let mut again = Sandbox::new();
    std::fs::rename(&fresh, again.data_dir()).unwrap();
    again.fast_kdf = true;
    let server = Server::start_in(again);
    let (status, _) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn one_person_restored_into_the_running_instance_opens_with_their_password_of_then() {
    let chat = Chat::start().await;
    let bo = enrol(&chat, "Bo", BO_PASSWORD).await;
    let (status, _) = chat.server.post("/api/notes", Some(&bo), json!({ "title": "before the backup" })).await;
    assert_eq!(status, 201);
    let outside = tempfile::tempdir().unwrap();
    let secret = passphrase_file(outside.path(), PASSPHRASE);
    let archive = outside.path().join("one-person.skb");
    let mut command = skald(&chat.server.data_dir(), &["backup", "--to"]);
    command.arg(&archive).arg("--passphrase-file").arg(&secret);
    let backup = tokio::task::spawn_blocking(move || command.output()).await.unwrap().unwrap();
    assert!(backup.status.success(), "{}", String::from_utf8_lossy(&backup.stderr));

    // After the backup Bo changes password and writes more.
    let change = json!({ "current_password": BO_PASSWORD, "new_password": CY_PASSWORD });
    let (status, _) = chat.server.post("/api/me/password", Some(&bo), change).await;
    assert_eq!(status, 204);
    let (status, _) = chat.server.post("/api/notes", Some(&bo), json!({ "title": "after the backup" })).await;
    assert_eq!(status, 201);
    let (_, me) = chat.server.call(Method::GET, "/api/me", Some(&bo), None).await;
    let bo_id = me["user"]["id"].as_str().unwrap().to_owned();

    let body = |passphrase: &str| json!({ "from": archive, "passphrase": passphrase, "user": bo_id });
    let (status, refused) = chat.server.post("/api/backups/restore-person", Some(&bo), body(PASSPHRASE)).await;
    assert_eq!(status, 403, "only an administrator: {refused}");
    let (status, refused) =
        chat.server.post("/api/backups/restore-person", Some(&chat.token), body("not the right passphrase")).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("backup_archive")), "{refused}");
    let (status, done) = chat.server.post("/api/backups/restore-person", Some(&chat.token), body(PASSPHRASE)).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["name"], "Bo");

    let (status, _) = chat.server.call(Method::GET, "/api/me", Some(&bo), None).await;
    assert_eq!(status, 401, "Bo's windows locked");
    let (status, _) = chat.server.post("/api/login", None, json!({ "name": "Bo", "password": CY_PASSWORD })).await;
    assert_eq!(status, 401, "the newer password belongs to the newer file");
    let (status, login) = chat.server.post("/api/login", None, json!({ "name": "Bo", "password": BO_PASSWORD })).await;
    assert_eq!(status, 200, "{login}");
    let token = login["token"].as_str().unwrap();
    let (_, notes) = chat.server.call(Method::GET, "/api/notes", Some(token), None).await;
    let titles: Vec<&str> = notes.as_array().unwrap().iter().map(|n| n["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["before the backup"]);
    let (_, audit) = chat.server.call(Method::GET, "/api/me/audit", Some(token), None).await;
    assert!(audit.to_string().contains("person.restored"), "Bo is told: {audit}");
    let verify = skald(&chat.server.data_dir(), &["verify"]).output().unwrap();
    assert!(verify.status.success(), "{}", String::from_utf8_lossy(&verify.stdout));
}

#[tokio::test]
async fn the_daily_backup_runs_when_due_with_nobody_logged_in_and_keeps_the_newest() {
    use sqlx::ConnectOptions;
    let mut sandbox = Sandbox::new();
    sandbox.env.push(("SKALD_TEST_BACKUP_TICK_MS".into(), "200".into()));
    let server = Server::start_in(sandbox);
    let (status, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 201);
    let token = setup["token"].as_str().unwrap().to_owned();
    let outside = tempfile::tempdir().unwrap();
    let schedule = json!({ "folder": outside.path(), "at_time": "03:30", "keep": 2, "passphrase": PASSPHRASE });
    let (status, set) = server.call(Method::PUT, "/api/backups/schedule", Some(&token), Some(schedule)).await;
    assert_eq!(status, 200, "{set}");
    let (status, _) = server.post("/api/lock", Some(&token), json!({})).await;
    assert_eq!(status, 204, "nobody is logged in from here");

    // Each time it comes due (the clock moved to a past time in the file), one backup.
    let system = server.data_dir().join("database/system.db");
    for round in 1..=3 {
        let mut db = sqlx::sqlite::SqliteConnectOptions::new().filename(&system).connect().await.unwrap();
        sqlx::query("UPDATE backup_schedule SET next_run = '2000-01-01T00:00:00Z'").execute(&mut db).await.unwrap();
        drop(db);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let mut db =
                sqlx::sqlite::SqliteConnectOptions::new().filename(&system).read_only(true).connect().await.unwrap();
            let done: i64 =
                sqlx::query_scalar("SELECT count(*) FROM backups WHERE kind = 'scheduled' AND state = 'done'")
                    .fetch_one(&mut db)
                    .await
                    .unwrap();
            if done == round {
                break;
            }
            assert!(Instant::now() < deadline, "round {round}: the scheduled backup did not run:\n{}", server.stderr());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Names carry the second they were made; the next one must not share it.
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }
    let archives: Vec<_> = std::fs::read_dir(outside.path()).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(archives.len(), 2, "the newest two are kept: {archives:?}");
    let elsewhere = tempfile::tempdir().unwrap();
    let secret = passphrase_file(elsewhere.path(), PASSPHRASE);
    let fresh = elsewhere.path().join("restored");
    let restore =
        skald(&fresh, &["restore", "--from"]).arg(&archives[0]).arg("--passphrase-file").arg(&secret).output().unwrap();
    assert!(restore.status.success(), "{}", String::from_utf8_lossy(&restore.stderr));
    let said = String::from_utf8_lossy(&restore.stdout);
    assert!(said.contains("the backup schedule (its passphrase)"), "the copy must be told to set it again: {said}");
}

/// `skald restore` of `archive` into a new folder succeeds and `skald verify` passes there.
fn restores(archive: &Path, secret: &Path, into: &Path) -> Result<(), String> {
    let out = skald(into, &["restore", "--from"]).arg(archive).arg("--passphrase-file").arg(secret).output().unwrap();
    if !out.status.success() {
        return Err(format!(
            "restore: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let verify = skald(into, &["verify"]).output().unwrap();
    verify.status.success().then_some(()).ok_or_else(|| format!("verify: {}", String::from_utf8_lossy(&verify.stdout)))
}

/// A backup killed with SIGKILL at a random moment while five people write: afterwards the
/// databases are whole and every acknowledged write is there (as in `crash.rs`); a backup
/// the command reported done is listed done and restores; a backup cut short is listed
/// failed, never done, and leaves no partial file; and the next backup works and
/// restores. Rounds and writes as in `crash.rs` (`SKALD_CRASH_WRITE_ROUNDS`, `SKALD_CRASH_WRITES`),
/// 3 rounds in CI.
#[tokio::test]
async fn a_crash_during_a_backup_while_people_write_never_leaves_a_half_backup_listed_good() {
    use crate::crash::{Tally, Writes, check_integrity, check_verify, people_on, random_below};
    let count = |name: &str, default: usize| std::env::var(name).ok().and_then(|n| n.parse().ok()).unwrap_or(default);
    let (rounds, writes) = (count("SKALD_CRASH_WRITE_ROUNDS", 3), count("SKALD_CRASH_WRITES", 200));
    let started = Instant::now();
    let model = Arc::new(scripted_model::ScriptedModel::start().await);
    let mut server = Server::start();
    let mut people = people_on(&server, &model, 4).await;
    let outside = tempfile::tempdir().unwrap();
    let secret = passphrase_file(outside.path(), PASSPHRASE);
    let backup = |data: &Path, archive: &Path| {
        let mut command = skald(data, &["backup", "--to"]);
        command.arg(archive).arg("--passphrase-file").arg(&secret);
        command
    };
    // How long a backup takes here, unloaded: the window to strike in is twice that.
    let timed = Instant::now();
    assert!(backup(&server.data_dir(), &outside.path().join("first.skb")).output().unwrap().status.success());
    let window = timed.elapsed().as_millis() as u64 * 2 + 100;

    let (mut tally, mut finished, mut cut) = (Tally::default(), 0, 0);
    for round in 0..rounds {
        let context = format!("round {round}");
        let load = Writes::start(&server, &model, &people, writes).await;
        load.until_acknowledged(writes / 4 + random_below(writes as u64 / 4) as usize).await;
        let archive = outside.path().join(format!("round-{round}.skb"));
        let mut command = backup(&server.data_dir(), &archive);
        let running = tokio::task::spawn_blocking(move || command.output());
        tokio::time::sleep(Duration::from_millis(random_below(window))).await;
        let sandbox = server.stop("KILL");
        let reported = running.await.unwrap().unwrap().status.success();
        let (attempted, acked) = load.collect().await;

        server = Server::start_in(sandbox);
        tally.recount(&server, &mut people, (attempted, &acked), writes, &context).await;
        tally.integrity_checks += check_integrity(&server.data_dir(), &people, &context).await;
        check_verify(&server.data_dir(), &context);

        let (status, listed) = server.call(Method::GET, "/api/backups", Some(&people[0].token), None).await;
        assert_eq!(status, 200, "{listed}");
        let rows = listed["backups"].as_array().unwrap();
        assert!(rows.iter().all(|b| b["state"] != "running"), "{context}: nothing is still running: {listed}");
        let row = rows.iter().find(|b| b["path"] == archive.display().to_string());
        let done = row.is_some_and(|b| b["state"] == "done");
        assert!(!reported || done, "{context}: the command said done, the list does not: {listed}");
        let mut partial = archive.clone().into_os_string();
        partial.push(".partial");
        assert!(!Path::new(&partial).exists(), "{context}: the partial file of a cut backup is gone");
        if done {
            let restored = outside.path().join(format!("restored-{round}"));
            restores(&archive, &secret, &restored).unwrap_or_else(|e| panic!("{context}: listed done: {e}"));
            std::fs::remove_dir_all(&restored).unwrap();
            finished += 1;
        } else {
            cut += 1;
        }
    }
    // The next backup works, from the restarted server, and restores.
    let next = outside.path().join("after.skb");
    let out = backup(&server.data_dir(), &next).output().unwrap();
    assert!(out.status.success(), "the next backup: {}", String::from_utf8_lossy(&out.stderr));
    let (_, listed) = server.call(Method::GET, "/api/backups", Some(&people[0].token), None).await;
    let row = listed["backups"].as_array().unwrap().iter().find(|b| b["path"] == next.display().to_string()).cloned();
    assert_eq!(row.map(|b| b["state"].clone()), Some(json!("done")), "{listed}");
    restores(&next, &secret, &outside.path().join("restored-after")).unwrap();
    let sandbox = server.stop("TERM");
    tally.integrity_checks += check_integrity(&sandbox.data_dir(), &people, "at the end").await;
    check_verify(&sandbox.data_dir(), "at the end");
    tally.report(&format!("{rounds} crashes during a backup ({finished} finished first, {cut} cut short)"), started);
}
