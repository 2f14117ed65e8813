//! The canary test (§4): words planted in a person's space through the store API must not
//! appear anywhere on disk in the clear — not in the private file, its WAL, the shared
//! database, the logs, run/, or the temp directory — raw, as UTF-16 or as base64. Nor may
//! the password or the recovery code.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use serde_json::json;

use crate::support::Server;

const PASSWORD: &str = "otter lantern quietly";

fn random_hex(bytes: usize) -> String {
    let mut raw = vec![0u8; bytes];
    getrandom::fill(&mut raw).unwrap();
    hex::encode(raw)
}

/// The forms a secret could be written in: raw, UTF-16 (both orders) and base64 at each of
/// the three alignments (the middle of the encoding, which does not depend on neighbours).
fn forms(secret: &str) -> Vec<Vec<u8>> {
    let mut out = vec![secret.as_bytes().to_vec()];
    out.push(secret.encode_utf16().flat_map(u16::to_le_bytes).collect());
    out.push(secret.encode_utf16().flat_map(u16::to_be_bytes).collect());
    for shift in 0..3 {
        let mut shifted = vec![b'~'; shift];
        shifted.extend_from_slice(secret.as_bytes());
        let encoded = STANDARD.encode(&shifted);
        let stable = &encoded[4..encoded.len() - 4];
        out.push(stable.as_bytes().to_vec());
    }
    out
}

fn scan(dir: &Path, needles: &[(String, Vec<u8>)], hits: &mut Vec<String>, files: &mut usize) {
    // A directory gone between listing and reading (a scan while the server works) is skipped.
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            scan(&path, needles, hits, files);
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else { continue };
        *files += 1;
        for (name, needle) in needles {
            if bytes.windows(needle.len()).any(|w| w == needle.as_slice()) {
                hits.push(format!("{name} in {}", path.display()));
            }
        }
    }
}

#[tokio::test]
async fn no_canary_password_or_recovery_code_reaches_the_disk_in_the_clear() {
    let server = Server::start();
    let (status, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 201);
    let token = setup["token"].as_str().unwrap().to_owned();
    let recovery = setup["recovery_code"].as_str().unwrap().to_owned();
    let canaries: Vec<String> = (0..20).map(|_| format!("canary{}", random_hex(12))).collect();
    for (i, canary) in canaries.iter().enumerate() {
        let path = format!("/api/me/settings/c{i}");
        let (status, _) = server.call(Method::PUT, &path, Some(&token), Some(json!({ "value": canary }))).await;
        assert_eq!(status, 204);
    }
    // They are really there, readable through the API.
    let (_, stored) = server.call(Method::GET, "/api/me/settings", Some(&token), None).await;
    assert_eq!(stored["c7"], canaries[7]);

    let sandbox = server.stop("TERM");
    let mut needles = Vec::new();
    for canary in &canaries {
        needles.extend(forms(canary).into_iter().map(|f| (format!("canary {canary}"), f)));
    }
    needles.extend(forms(PASSWORD).into_iter().map(|f| ("the password".to_owned(), f)));
    let compact: String = recovery.chars().filter(char::is_ascii_alphanumeric).collect();
    for form in [recovery.clone(), compact] {
        needles.extend(forms(&form).into_iter().map(|f| ("the recovery code".to_owned(), f)));
    }
    let (mut hits, mut files) = (Vec::new(), 0);
    scan(sandbox.dir.path(), &needles, &mut hits, &mut files);
    assert!(files >= 4, "the scan saw the data directory ({files} files)");
    assert!(hits.is_empty(), "found in the clear:\n{}", hits.join("\n"));

    // The planted words are still in the private file, encrypted: a plain open fails.
    let users = sandbox.data_dir().join("database/users");
    let file =
        std::fs::read_dir(&users).unwrap().flatten().find(|e| e.path().extension().is_some_and(|x| x == "db")).unwrap();
    let header = std::fs::read(file.path()).unwrap();
    assert!(!header.starts_with(b"SQLite format 3"), "the private file is not plain SQLite");
}

/// Words said in chat, and the model's replies that repeat them, stay inside the owner's
/// encrypted file: not in the shared database, the logs, run/, the agents folder or temp.
#[tokio::test]
async fn canaries_said_in_chat_and_repeated_by_the_model_never_reach_the_disk_in_the_clear() {
    let model = scripted_model::ScriptedModel::start().await;
    let server = Server::start();
    let (_, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let token = setup["token"].as_str().unwrap().to_owned();
    let provider = json!({ "name": "scripted", "kind": "openai", "base_url": model.openai_base() });
    assert_eq!(server.post("/api/providers", Some(&token), provider).await.0, 201);
    let (_, session) = server.post("/api/sessions", Some(&token), json!({})).await;
    let path = format!("/api/sessions/{}/messages", session["id"].as_str().unwrap());

    // With nothing scripted, the model answers "You said: <the message>".
    let canaries: Vec<String> = (0..8).map(|_| format!("canary{}", random_hex(12))).collect();
    for canary in &canaries {
        assert_eq!(server.post(&path, Some(&token), json!({ "text": format!("remember {canary}") })).await.0, 202);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let (_, history) = server.call(Method::GET, &path, Some(&token), None).await;
            let last = history.as_array().unwrap().last().cloned().unwrap_or_default();
            if last["role"] == "assistant" && last["status"] == "done" {
                assert!(last["text"].as_str().unwrap().contains(canary.as_str()), "the model repeated it: {last}");
                break;
            }
            assert!(std::time::Instant::now() < deadline, "the turn did not end");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
    assert_eq!(model.request_count(), canaries.len());

    let sandbox = server.stop("TERM");
    let needles: Vec<(String, Vec<u8>)> =
        canaries.iter().flat_map(|c| forms(c).into_iter().map(move |f| (format!("canary {c}"), f))).collect();
    let (mut hits, mut files) = (Vec::new(), 0);
    scan(sandbox.dir.path(), &needles, &mut hits, &mut files);
    assert!(files >= 4, "the scan saw the data directory ({files} files)");
    assert!(hits.is_empty(), "found in the clear:\n{}", hits.join("\n"));
}

/// Words in a card's arguments and in notes — the note itself and its full-text index —
/// stay inside the owner's encrypted file too.
#[tokio::test]
async fn canaries_in_cards_and_notes_never_reach_the_disk_in_the_clear() {
    use scripted_model::{Reply, ScriptedCall};
    let model = scripted_model::ScriptedModel::start().await;
    let server = Server::start();
    let (_, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let token = setup["token"].as_str().unwrap().to_owned();
    let provider = json!({ "name": "scripted", "kind": "openai", "base_url": model.openai_base() });
    assert_eq!(server.post("/api/providers", Some(&token), provider).await.0, 201);
    let canaries: Vec<String> = (0..4).map(|_| format!("canary{}", random_hex(12))).collect();

    // Three notes allowed and written; a fourth card left waiting in the inbox.
    for (i, canary) in canaries.iter().enumerate() {
        let arguments = json!({ "title": format!("t{i} {canary}"), "text": format!("body {canary}") });
        model.push(Reply::tool_calls([ScriptedCall::new("note_write", arguments)]));
        let (_, session) = server.post("/api/sessions", Some(&token), json!({})).await;
        let path = format!("/api/sessions/{}/messages", session["id"].as_str().unwrap());
        assert_eq!(server.post(&path, Some(&token), json!({ "text": "note it" })).await.0, 202);
        let card = wait_for_card(&server, &token).await;
        if i < 3 {
            let decided = server
                .post(
                    &format!("/api/inbox/{}", card["id"].as_str().unwrap()),
                    Some(&token),
                    json!({ "decision": "allow" }),
                )
                .await;
            assert_eq!(decided.0, 200, "{}", decided.1);
            wait_until_no_turn_runs(&server, &token, &path).await;
        }
    }
    let (_, notes) = server.call(Method::GET, "/api/notes", Some(&token), None).await;
    assert_eq!(notes.as_array().unwrap().len(), 3, "{notes}");
    let (_, found) = server.call(Method::GET, &format!("/api/notes?q={}", canaries[1]), Some(&token), None).await;
    assert_eq!(found.as_array().unwrap().len(), 1, "the full-text index has it: {found}");

    let sandbox = server.stop("TERM");
    let needles: Vec<(String, Vec<u8>)> =
        canaries.iter().flat_map(|c| forms(c).into_iter().map(move |f| (format!("canary {c}"), f))).collect();
    let (mut hits, mut files) = (Vec::new(), 0);
    scan(sandbox.dir.path(), &needles, &mut hits, &mut files);
    assert!(files >= 4, "the scan saw the data directory ({files} files)");
    assert!(hits.is_empty(), "found in the clear:\n{}", hits.join("\n"));
}

async fn wait_for_card(server: &Server, token: &str) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (_, inbox) = server.call(Method::GET, "/api/inbox", Some(token), None).await;
        if let Some(card) = inbox.as_array().and_then(|cards| cards.first()) {
            return card.clone();
        }
        assert!(std::time::Instant::now() < deadline, "no card came");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

async fn wait_until_no_turn_runs(server: &Server, token: &str, messages: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (_, history) = server.call(Method::GET, messages, Some(token), None).await;
        let last = history.as_array().unwrap().last().cloned().unwrap_or_default();
        if last["role"] == "assistant" && last["status"] == "done" {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the turn did not end");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A document's original bytes, its text, its index and its passages stay inside the
/// owner's encrypted file, and reading it writes nothing anywhere: the data directory and
/// the temporary directory are scanned over and over while the reader works, then once
/// more after. The picture is told by a stretch of its own bytes (its words are pixels).
#[tokio::test]
async fn canaries_in_an_uploaded_pdf_and_picture_never_reach_the_disk_in_the_clear() {
    let server = Server::start();
    let (_, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let token = setup["token"].as_str().unwrap().to_owned();
    let canaries: Vec<String> = (0..2).map(|_| format!("canary{}", random_hex(12))).collect();
    let pdf = crate::extract::text_pdf(&[format!("Lease of {}", canaries[0]).as_bytes(), b"Second page"]);
    let picture = picture_of(&format!("Label {}", canaries[1]));
    let mut needles: Vec<(String, Vec<u8>)> =
        canaries.iter().flat_map(|c| forms(c).into_iter().map(move |f| (format!("canary {c}"), f))).collect();
    let middle = picture.len() / 2;
    needles.push(("the picture's bytes".into(), picture[middle..middle + 48].to_vec()));

    // Scanned again and again while the documents are uploaded and read.
    let root = server.data_dir().parent().unwrap().to_path_buf();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (done, needles, root) = (done.clone(), needles.clone(), root.clone());
        std::thread::spawn(move || {
            let (mut hits, mut rounds) = (Vec::new(), 0);
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                scan(&root, &needles, &mut hits, &mut 0);
                rounds += 1;
            }
            (hits, rounds)
        })
    };
    for (name, bytes) in [("lease.pdf", pdf), ("label.png", picture)] {
        let id = crate::documents::uploaded(&server, &token, name, "private", bytes).await;
        let document = crate::documents::read(&server, &token, &id).await;
        assert_ne!(document["status"], "failed", "{document}");
    }
    let (_, found) =
        server.call(Method::GET, &format!("/api/documents/search?q={}", canaries[0]), Some(&token), None).await;
    assert_eq!(found.as_array().unwrap().len(), 1, "the index has it: {found}");
    done.store(true, std::sync::atomic::Ordering::Release);
    let (mut hits, rounds) = watcher.join().unwrap();
    assert!(rounds >= 1);

    let sandbox = server.stop("TERM");
    let mut files = 0;
    scan(sandbox.dir.path(), &needles, &mut hits, &mut files);
    assert!(files >= 4, "the scan saw the data directory ({files} files)");
    hits.sort();
    hits.dedup();
    assert!(hits.is_empty(), "found in the clear:\n{}", hits.join("\n"));
}

/// A PNG of `words` in black on white, made by ImageMagick (`deps.sh test`).
pub(crate) fn picture_of(words: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("words.png");
    let made = std::process::Command::new("convert")
        .args(["-size", "1200x160", "xc:white", "-font", "DejaVu-Sans", "-pointsize", "48", "-fill", "black"])
        .args(["-annotate", "+20+100"])
        .arg(words)
        .arg(&path)
        .status()
        .expect("ImageMagick's convert (deps.sh test) makes the picture");
    assert!(made.success());
    std::fs::read(path).unwrap()
}
