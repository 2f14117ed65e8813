//! Supervision the supervised person can see (docs/architecture.md §6.2), over the real
//! server: an edge made at enrolment, read-only reads logged in the supervised person's
//! own file and shown to them, 403 and no log without an edge, removal that destroys the
//! key copy, and a key rotation after which the old copy opens nothing — also when the
//! process is killed in the middle of it.

use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use sqlx::ConnectOptions;

use super::{Chat, PASSWORD};
use crate::support::{BIN, Server};

const CY_PASSWORD: &str = "amber harbour pocket";
const BO_PASSWORD: &str = "copper meadow whistle";

/// Ada (administrator, with the scripted provider) and Cy, made restricted with Ada as
/// supervisor; Cy enrols after the enrolment screen says so.
struct Supervised {
    chat: Chat,
    ada: String,
    cy: String,
    cy_token: String,
    recovery: String,
}

async fn me(server: &Server, token: &str) -> Value {
    let (status, me) = server.call(Method::GET, "/api/me", Some(token), None).await;
    assert_eq!(status, 200, "{me}");
    me
}

async fn set_up() -> Supervised {
    let chat = Chat::start().await;
    let ada = me(&chat.server, &chat.token).await["user"]["id"].as_str().unwrap().to_owned();
    let (status, added) = chat
        .server
        .post("/api/users", Some(&chat.token), json!({ "name": "Cy", "role": "restricted", "supervisor": ada }))
        .await;
    assert_eq!(status, 201, "{added}");
    let code = added["enrolment_code"].as_str().unwrap().to_owned();
    // Looking more often than the attempts allowed does not hold the enrolment back.
    for _ in 0..7 {
        let (status, check) =
            chat.server.post("/api/enrol/check", None, json!({ "name": "Cy", "enrolment_code": code })).await;
        assert_eq!(status, 200, "{check}");
    }
    let (status, wrong) =
        chat.server.post("/api/enrol/check", None, json!({ "name": "Cy", "enrolment_code": "WRONG-CODE" })).await;
    assert_eq!(status, 401, "{wrong}");
    let (status, check) =
        chat.server.post("/api/enrol/check", None, json!({ "name": "Cy", "enrolment_code": code })).await;
    assert_eq!(status, 200, "{check}");
    assert_eq!(check["supervisors"], json!(["Ada"]), "the enrolment screen can say who will open the space");
    let (status, enrolled) = chat
        .server
        .post("/api/enrol", None, json!({ "name": "Cy", "enrolment_code": code, "password": CY_PASSWORD }))
        .await;
    assert_eq!(status, 201, "{enrolled}");
    let cy_token = enrolled["token"].as_str().unwrap().to_owned();
    let recovery = enrolled["recovery_code"].as_str().unwrap().to_owned();
    let cy = enrolled["user"]["id"].as_str().unwrap().to_owned();
    Supervised { chat, ada, cy, cy_token, recovery }
}

/// Cy's conversation with `words` in it, its turn finished, and a note.
async fn cy_writes(s: &Supervised, words: &str) -> (String, i64) {
    let server = &s.chat.server;
    let (status, created) = server.post("/api/sessions", Some(&s.cy_token), json!({})).await;
    assert_eq!(status, 201, "{created}");
    let session = created["id"].as_str().unwrap().to_owned();
    let (status, sent) =
        server.post(&format!("/api/sessions/{session}/messages"), Some(&s.cy_token), json!({ "text": words })).await;
    assert_eq!(status, 202, "{sent}");
    super::finished(server, &s.cy_token, &session, super::WAIT).await;
    let (status, note) = server.post("/api/notes", Some(&s.cy_token), json!({ "title": "diary", "body": words })).await;
    assert_eq!(status, 201, "{note}");
    (session, note["id"].as_i64().unwrap())
}

async fn get(server: &Server, token: &str, path: &str) -> (u16, Value) {
    server.call(Method::GET, path, Some(token), None).await
}

use crate::support::key_of;

/// Whether `key` (with the salt the file carries) opens the private file of `id`.
async fn opens(data_dir: &Path, id: &str, key: &[u8]) -> bool {
    crate::support::open_private(data_dir, id, key).await.is_some()
}

/// What Ada's sealed copy of Cy's key opens to, through Ada's own secret.
async fn ada_copy(data_dir: &Path, ada: &str, cy: &str) -> Vec<u8> {
    let (_, ada_key, _) = key_of(data_dir, "Ada", PASSWORD).await;
    let mut mine = crate::support::open_private(data_dir, ada, &ada_key).await.unwrap();
    let secret: Vec<u8> =
        sqlx::query_scalar("SELECT secret FROM space_keys WHERE name = 'x25519'").fetch_one(&mut mine).await.unwrap();
    let mut system = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(data_dir.join("database/system.db"))
        .read_only(true)
        .connect()
        .await
        .unwrap();
    let (sealed, version): (Vec<u8>, i64) =
        sqlx::query_as("SELECT sealed_key, key_version FROM supervision WHERE supervisor_id = ? AND supervised_id = ?")
            .bind(ada)
            .bind(cy)
            .fetch_one(&mut system)
            .await
            .unwrap();
    let context = skald::users::supervision::seal_context(
        &skald::ids::UserId::parse(ada).unwrap(),
        &skald::ids::UserId::parse(cy).unwrap(),
        version,
    );
    skald::crypto::open_sealed(&secret.try_into().unwrap(), &sealed, &context).unwrap().to_vec()
}

fn verify(data_dir: &Path) -> (bool, String) {
    let out = std::process::Command::new(BIN).arg("verify").arg("--data-dir").arg(data_dir).output().unwrap();
    let report = format!(
        "{}\n{:?}; stderr: {}",
        String::from_utf8_lossy(&out.stdout),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), report)
}

#[tokio::test]
async fn a_supervisor_reads_read_only_and_the_supervised_person_sees_each_access() {
    let s = set_up().await;
    let server = &s.chat.server;
    let (session, note) = cy_writes(&s, "my secret plan for the weekend").await;

    // Someone nobody supervises: the same routes are 403, and nothing is logged.
    let (status, added) =
        server.post("/api/users", Some(&s.chat.token), json!({ "name": "Bo", "role": "member" })).await;
    assert_eq!(status, 201);
    let (_, bo_enrolled) = server
        .post(
            "/api/enrol",
            None,
            json!({ "name": "Bo", "enrolment_code": added["enrolment_code"], "password": BO_PASSWORD }),
        )
        .await;
    let (bo, bo_token) = (bo_enrolled["user"]["id"].as_str().unwrap(), bo_enrolled["token"].as_str().unwrap());
    for path in [format!("/api/supervised/{bo}/sessions"), format!("/api/supervised/{bo}/notes")] {
        let (status, refused) = get(server, &s.chat.token, &path).await;
        assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("not_supervisor")), "{path}: {refused}");
    }
    let (_, bo_log) = get(server, bo_token, "/api/me/access-log").await;
    assert_eq!(bo_log, json!([]), "nothing logged as read without an edge");
    // A member's role may not be supervised; a member may not ask for edges at all.
    let ask = json!({ "supervisor": s.ada, "supervised": bo });
    let (status, refused) = server.post("/api/supervision", Some(&s.chat.token), ask.clone()).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("supervision_refused")), "{refused}");
    let (status, _) = server.post("/api/supervision", Some(bo_token), ask).await;
    assert_eq!(status, 403);

    // Ada reads Cy's space.
    let cy = &s.cy;
    let (status, sessions) = get(server, &s.chat.token, &format!("/api/supervised/{cy}/sessions")).await;
    assert_eq!(status, 200, "{sessions}");
    assert!(sessions.as_array().unwrap().iter().any(|c| c["id"] == session.as_str()));
    let (status, messages) =
        get(server, &s.chat.token, &format!("/api/supervised/{cy}/sessions/{session}/messages")).await;
    assert_eq!(status, 200, "{messages}");
    assert!(messages.as_array().unwrap().iter().any(|m| m["text"] == "my secret plan for the weekend"));
    let (status, _) = get(server, &s.chat.token, &format!("/api/supervised/{cy}/notes")).await;
    assert_eq!(status, 200);
    let (status, read) = get(server, &s.chat.token, &format!("/api/supervised/{cy}/notes/{note}")).await;
    assert_eq!((status, read["body"].as_str()), (200, Some("my secret plan for the weekend")));
    let (status, _) = get(server, &s.chat.token, &format!("/api/supervised/{cy}/memories")).await;
    assert_eq!(status, 200);

    // Cy sees every access, by name, in their own log; and Ada on their privacy page.
    let (status, log) = get(server, &s.cy_token, "/api/me/access-log").await;
    assert_eq!(status, 200, "{log}");
    let seen: Vec<(String, String, Option<String>)> = log
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|e| {
            assert_eq!(e["supervisor_name"], "Ada");
            (
                e["action"].as_str().unwrap().into(),
                e["what"].as_str().unwrap().into(),
                e["item"].as_str().map(Into::into),
            )
        })
        .collect();
    let expected: Vec<(String, String, Option<String>)> = vec![
        ("opened".into(), "conversations".into(), None),
        ("read".into(), "conversation".into(), Some(session.clone())),
        ("opened".into(), "notes".into(), None),
        ("read".into(), "note".into(), Some(note.to_string())),
        ("read".into(), "memories".into(), None),
    ];
    assert_eq!(seen, expected);
    let (_, privacy) = get(server, &s.cy_token, "/api/me/privacy").await;
    assert_eq!(privacy["supervisors"][0]["name"], "Ada", "{privacy}");
    let (_, mine) = get(server, &s.cy_token, "/api/me/supervision").await;
    let edge = &mine["supervised_by"][0];
    assert_eq!(
        (edge["state"].as_str(), edge["opens"].as_i64(), edge["reads"].as_i64()),
        (Some("active"), Some(2), Some(3))
    );

    // verify lists Ada's copy among the keys that open Cy's space.
    let (ok, report) = verify(&server.data_dir());
    assert!(ok, "{report}");
    assert!(report.contains("Ada's copy, as their supervisor"), "{report}");

    // A restricted role may not end the edge alone.
    let edge_id = edge["id"].as_str().unwrap();
    let (status, refused) =
        server.call(Method::DELETE, &format!("/api/supervision/{edge_id}"), Some(&s.cy_token), None).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("supervision_refused")), "{refused}");
}

#[tokio::test]
async fn after_removal_and_rotation_the_old_copy_opens_nothing_and_the_old_code_no_longer_works() {
    let s = set_up().await;
    let server = &s.chat.server;
    cy_writes(&s, "before the rotation").await;
    let data = server.data_dir();
    let copy = ada_copy(&data, &s.ada, &s.cy).await;
    assert!(opens(&data, &s.cy, &copy).await, "the copy opens Cy's file while the edge stands");

    let (_, mine) = get(server, &s.cy_token, "/api/me/supervision").await;
    let edge_id = mine["supervised_by"][0]["id"].as_str().unwrap().to_owned();
    let (status, ended) =
        server.call(Method::DELETE, &format!("/api/supervision/{edge_id}"), Some(&s.chat.token), None).await;
    assert_eq!(status, 200, "{ended}");
    let (_, notices) = get(server, &s.cy_token, "/api/notices").await;
    assert!(notices.to_string().contains("supervision_ended"), "Cy is told: {notices}");
    let (status, _) = get(server, &s.chat.token, &format!("/api/supervised/{}/sessions", s.cy)).await;
    assert_eq!(status, 403);

    let (status, refused) =
        server.post("/api/me/rotate-key", Some(&s.cy_token), json!({ "password": "wrong words here" })).await;
    assert_eq!(status, 401, "{refused}");
    let (status, rotated) =
        server.post("/api/me/rotate-key", Some(&s.cy_token), json!({ "password": CY_PASSWORD })).await;
    assert_eq!(status, 200, "{rotated}\n{}", server.stderr());
    let new_code = rotated["recovery_code"].as_str().unwrap().to_owned();
    let new_token = rotated["token"].as_str().unwrap().to_owned();
    let (status, _) = get(server, &s.cy_token, "/api/me").await;
    assert_eq!(status, 401, "the old session ended");
    let (status, _) = get(server, &new_token, "/api/me").await;
    assert_eq!(status, 200);

    assert!(!opens(&data, &s.cy, &copy).await, "the old copy opens nothing");
    let (_, key, _) = key_of(&data, "Cy", CY_PASSWORD).await;
    assert!(opens(&data, &s.cy, &key).await, "the password's key opens the file");
    let (ok, report) = verify(&data);
    assert!(ok, "{report}");
    let cy_part = report.split("\nCy ").nth(1).unwrap();
    assert!(cy_part.contains("no supervisors") && !cy_part.contains("copy"), "{report}");

    // Cy's words survived the rotation.
    let (_, notes) = get(server, &new_token, "/api/notes").await;
    assert_eq!(notes[0]["title"], "diary");
    // The old recovery code stops working; the new one works.
    let old = json!({ "name": "Cy", "recovery_code": s.recovery, "new_password": "silver lantern meadow" });
    let (status, _) = server.post("/api/recover", None, old).await;
    assert_eq!(status, 401);
    let new = json!({ "name": "Cy", "recovery_code": new_code, "new_password": "silver lantern meadow" });
    let (status, recovered) = server.post("/api/recover", None, new).await;
    assert_eq!(status, 200, "{recovered}");
}

fn random_below(limit: u64) -> u64 {
    let mut raw = [0u8; 8];
    getrandom::fill(&mut raw).unwrap();
    u64::from_le_bytes(raw) % limit.max(1)
}

#[tokio::test]
async fn a_crash_during_a_key_rotation_leaves_exactly_one_key_opening_the_file() {
    let rounds: usize = std::env::var("SKALD_CRASH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(20);
    let s = set_up().await;
    cy_writes(&s, "kept through every crash").await;
    let cy = s.cy.clone();
    let mut sandbox = s.chat.server.stop("TERM");
    let (mut rotated, mut kept) = (0, 0);
    for round in 0..rounds {
        let data = sandbox.data_dir();
        let (_, before, salt_before) = key_of(&data, "Cy", CY_PASSWORD).await;
        let server = Server::start_in(sandbox);
        let (_, login) = server.post("/api/login", None, json!({ "name": "Cy", "password": CY_PASSWORD })).await;
        let token = login["token"].as_str().unwrap_or_else(|| panic!("round {round}: {login}")).to_owned();
        let url = server.url("/api/me/rotate-key");
        let request = tokio::spawn(async move {
            reqwest::Client::new().post(url).bearer_auth(token).json(&json!({ "password": CY_PASSWORD })).send().await
        });
        // A rotation is two derivations, an export and a commit: strike anywhere in it.
        tokio::time::sleep(Duration::from_millis(random_below(400))).await;
        let back = server.stop("KILL");
        let _ = request.await;

        let server = Server::start_in(back);
        let (status, login) = server.post("/api/login", None, json!({ "name": "Cy", "password": CY_PASSWORD })).await;
        assert_eq!(status, 200, "round {round}: the password opens the space: {login}");
        let data = server.data_dir();
        let (_, now, salt_now) = key_of(&data, "Cy", CY_PASSWORD).await;
        assert!(opens(&data, &cy, &now).await, "round {round}: the recorded key opens the file");
        if salt_now == salt_before {
            assert_eq!(now, before, "round {round}");
            kept += 1;
        } else {
            assert!(!opens(&data, &cy, &before).await, "round {round}: the old key opens nothing");
            rotated += 1;
        }
        assert!(!data.join(format!("database/users/{cy}.db.next")).exists(), "round {round}: no copy left beside it");
        let token = login["token"].as_str().unwrap();
        let (_, notes) = server.call(Method::GET, "/api/notes", Some(token), None).await;
        assert_eq!(notes[0]["title"], "diary", "round {round}: Cy's words are there");
        sandbox = server.stop("TERM");
    }
    eprintln!("{rounds} crashes during rotation: {rotated} after the commit, {kept} before it");
    let (ok, report) = verify(&sandbox.data_dir());
    assert!(ok, "{report}");
}

#[tokio::test]
async fn a_card_cy_may_not_approve_goes_to_ada_and_cy_sees_who_decided() {
    use scripted_model::{Reply, ScriptedCall};
    let s = set_up().await;
    let server = &s.chat.server;
    s.chat.model.push(Reply::tool_calls([ScriptedCall::new("note_write", json!({ "title": "Cy's", "text": "c" }))]));
    s.chat.model.push(Reply::text("Written."));
    let (_, created) = server.post("/api/sessions", Some(&s.cy_token), json!({})).await;
    let session = created["id"].as_str().unwrap().to_owned();
    let (status, _) =
        server.post(&format!("/api/sessions/{session}/messages"), Some(&s.cy_token), json!({ "text": "note" })).await;
    assert_eq!(status, 202);

    // The card waits in Cy's file; Cy may deny it but not allow it.
    let deadline = tokio::time::Instant::now() + super::WAIT;
    let card = loop {
        let (_, inbox) = get(server, &s.cy_token, "/api/inbox").await;
        if let Some(card) = inbox.as_array().unwrap().first() {
            break card.clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "no card came");
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    assert!(card["details"]["reason"].as_str().unwrap().contains("your supervisor decides"), "{card}");
    let card_id = card["id"].as_str().unwrap();
    let (status, refused) =
        server.post(&format!("/api/inbox/{card_id}"), Some(&s.cy_token), json!({ "decision": "allow" })).await;
    assert_eq!(status, 403, "{refused}");

    // Ada sees it and allows exactly what it shows.
    let (status, waiting) = get(server, &s.chat.token, &format!("/api/supervised/{}/cards", s.cy)).await;
    assert_eq!(status, 200, "{waiting}");
    assert_eq!(waiting[0]["id"], card["id"]);
    let path = format!("/api/supervised/{}/cards/{card_id}", s.cy);
    let (status, stale) =
        server.post(&path, Some(&s.chat.token), json!({ "allow": true, "arguments_hash": "0".repeat(64) })).await;
    assert_eq!(status, 409, "a decision never covers what was not shown: {stale}");
    let hash = card["details"]["arguments_hash"].clone();
    let (status, decided) =
        server.post(&path, Some(&s.chat.token), json!({ "allow": true, "arguments_hash": hash })).await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!((decided["state"].as_str(), decided["decided_by"].as_str()), (Some("allowed"), Some("Ada")));

    // Cy's turn went on: the note is written, and Cy's log says Ada decided.
    let history = super::finished(server, &s.cy_token, &session, super::WAIT).await;
    assert_eq!(history.last().unwrap()["status"], "done");
    let (_, notes) = get(server, &s.cy_token, "/api/notes").await;
    assert_eq!(notes[0]["title"], "Cy's");
    let (_, log) = get(server, &s.cy_token, "/api/me/access-log").await;
    assert_eq!((log[0]["action"].as_str(), log[0]["what"].as_str()), (Some("allowed"), Some("card")), "{log}");
    assert_eq!(log[0]["item"], card["id"]);
}

/// A key rotation killed at a random moment while five people write (one of them rotating):
/// after the restart every write acknowledged before the kill is there — the rotating
/// person's too, whichever key won — exactly the recorded key opens their file, every
/// database passes its integrity check and `skald verify` passes. Rounds and writes as in
/// `crash.rs` (`SKALD_CRASH_WRITE_ROUNDS`, `SKALD_CRASH_WRITES`).
#[tokio::test]
async fn a_crash_during_a_key_rotation_while_people_write_loses_no_acknowledged_write() {
    use crate::crash::{Tally, Writes, check_integrity, check_verify, people_on};
    let count = |name: &str, default: usize| std::env::var(name).ok().and_then(|n| n.parse().ok()).unwrap_or(default);
    let (rounds, writes) = (count("SKALD_CRASH_WRITE_ROUNDS", 3), count("SKALD_CRASH_WRITES", 200));
    let started = std::time::Instant::now();
    let model = std::sync::Arc::new(scripted_model::ScriptedModel::start().await);
    let mut server = Server::start();
    let mut people = people_on(&server, &model, 4).await;
    let (mut tally, mut rotated, mut kept) = (Tally::default(), 0, 0);
    for round in 0..rounds {
        let context = format!("round {round}");
        let rotating = &people[1];
        let (_, before, salt_before) = key_of(&server.data_dir(), &rotating.name, &rotating.password).await;
        let load = Writes::start(&server, &model, &people, writes).await;
        load.until_acknowledged(writes / 4 + random_below(writes as u64 / 4) as usize).await;
        let (url, token, password) =
            (server.url("/api/me/rotate-key"), rotating.token.clone(), rotating.password.clone());
        let rotation = tokio::spawn(async move {
            reqwest::Client::new().post(url).bearer_auth(token).json(&json!({ "password": password })).send().await
        });
        // Under load a rotation takes longer than alone: strike anywhere from before it to
        // after it.
        tokio::time::sleep(Duration::from_millis(random_below(3000))).await;
        let sandbox = server.stop("KILL");
        let _ = rotation.await;
        let (attempted, mut acked) = load.collect().await;
        // The rotation ends the rotating person's sessions: their writers stop there.
        acked[1].ended = false;

        server = Server::start_in(sandbox);
        tally.recount(&server, &mut people, (attempted, &acked), writes, &context).await;
        let (data, rotating) = (server.data_dir(), &people[1]);
        let (_, now, salt_now) = key_of(&data, &rotating.name, &rotating.password).await;
        if salt_now == salt_before {
            assert_eq!(now, before, "{context}");
            kept += 1;
        } else {
            assert!(!opens(&data, &rotating.id, &before).await, "{context}: the old key opens nothing");
            rotated += 1;
        }
        let copy = data.join(format!("database/users/{}.db.next", rotating.id));
        assert!(!copy.exists(), "{context}: no copy left beside the file");
        tally.integrity_checks += check_integrity(&data, &people, &context).await;
        check_verify(&data, &context);
    }
    let sandbox = server.stop("TERM");
    tally.integrity_checks += check_integrity(&sandbox.data_dir(), &people, "at the end").await;
    check_verify(&sandbox.data_dir(), "at the end");
    let what = format!("{rounds} crashes during a rotation ({rotated} after its commit, {kept} before)");
    tally.report(&what, started);
}
