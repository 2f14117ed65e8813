//! A person's own view and data (§3, §14): who can see their words, the notices a
//! provider change leaves, the export of their space, and deleting their own account.

use std::io::Read;

use reqwest::Method;
use scripted_model::{Reply, ScriptedCall};
use serde_json::{Value, json};

use super::{Chat, PASSWORD};

const BO_PASSWORD: &str = "maple harbour seventeen";

/// Adds Bo as a member and returns Bo's session token.
pub(super) async fn add_bo(chat: &Chat) -> String {
    let (_, added) = chat.server.post("/api/users", Some(&chat.token), json!({ "name": "Bo", "role": "member" })).await;
    let enrol = json!({ "name": "Bo", "enrolment_code": added["enrolment_code"], "password": BO_PASSWORD });
    let (status, enrolled) = chat.server.post("/api/enrol", None, enrol).await;
    assert_eq!(status, 201, "{enrolled}");
    enrolled["token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_privacy_page_names_the_provider_and_who_set_it_up_and_a_change_leaves_a_notice() {
    let chat = Chat::start().await;
    let bo = add_bo(&chat).await;
    let (status, page) = chat.server.call(Method::GET, "/api/me/privacy", Some(&bo), None).await;
    assert_eq!(status, 200, "{page}");
    let kinds: Vec<&str> = page["keys"].as_array().unwrap().iter().map(|k| k["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["password", "recovery"]);
    assert_eq!(page["supervisors"], json!([]));
    let provider = &page["providers"][0];
    assert_eq!((provider["name"].as_str(), provider["configured_by"].as_str()), (Some("scripted"), Some("Ada")));
    assert_eq!(provider["privacy"], "local", "a provider on this machine");
    assert!(page["agents"].as_array().unwrap().iter().any(|a| a["id"] == "main" && a["source"] == "bundled"));
    assert_eq!(page["administrators_see"]["name"], "Bo");
    assert_eq!(page["notices"], json!([]));

    // Ada moves the provider: Bo is told, by name; Ada, who did it, is not.
    let (_, providers) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
    let path = format!("/api/providers/{}", providers[0]["id"].as_str().unwrap());
    let patch = json!({ "name": "renamed" });
    assert_eq!(chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(patch)).await.0, 204);
    let (_, page) = chat.server.call(Method::GET, "/api/me/privacy", Some(&bo), None).await;
    let notices = page["notices"].as_array().unwrap();
    assert_eq!(notices.len(), 1, "{page}");
    assert_eq!(notices[0]["kind"], "provider_changed");
    assert_eq!(
        (notices[0]["body"]["changed_by"]["name"].as_str(), notices[0]["body"]["name"].as_str()),
        (Some("Ada"), Some("renamed"))
    );
    assert_eq!(page["providers"][0]["changed_by"], "Ada");
    let (_, adas) = chat.server.call(Method::GET, "/api/notices", Some(&chat.token), None).await;
    assert_eq!(adas, json!([]));
    let (_, listed) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
    assert_eq!(listed[0]["privacy"], "local");
    // A deleted provider's notice still names it; administrators see everyone, pending too.
    assert_eq!(chat.server.call(Method::DELETE, &path, Some(&chat.token), None).await.0, 204);
    let (_, notices) = chat.server.call(Method::GET, "/api/notices", Some(&bo), None).await;
    let deleted = notices.as_array().unwrap().last().unwrap();
    assert_eq!(
        (deleted["kind"].as_str(), deleted["body"]["provider_name"].as_str()),
        (Some("provider_deleted"), Some("renamed"))
    );
    assert_eq!(notices[0]["body"]["provider_name"], "renamed", "a change names the provider as it is now");
    chat.server.post("/api/users", Some(&chat.token), json!({ "name": "Cy", "role": "member" })).await;
    let (_, people) = chat.server.call(Method::GET, "/api/people", Some(&chat.token), None).await;
    let states: Vec<(&str, &str)> = people
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["status"].as_str().unwrap()))
        .collect();
    assert!(states.contains(&("Cy", "pending")) && states.contains(&("Bo", "active")), "{states:?}");
    assert_eq!(chat.server.call(Method::GET, "/api/people", Some(&bo), None).await.0, 403);
    // An agent's prompt is readable by anyone it answers.
    let (status, main) = chat.server.call(Method::GET, "/api/agents/main", Some(&bo), None).await;
    assert_eq!(status, 200);
    assert!(main["prompt"].as_str().unwrap().starts_with("You are Skald"), "{main}");
}

#[tokio::test]
async fn the_export_is_a_readable_archive_holding_a_planted_note_and_the_conversation() {
    let chat = Chat::start().await;
    chat.model.push(Reply::tool_calls([ScriptedCall::new(
        "note_write",
        json!({ "title": "Garden plan", "text": "tomatoes by the fence" }),
    )]));
    chat.model.push(Reply::text("Noted."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "note the garden plan").await;
    let card = chat.cards(1).await.remove(0);
    assert_eq!(chat.decide(&card, json!({ "decision": "allow" })).await.0, 200);
    chat.finished(&session).await;
    // A document of mine goes in as the file I uploaded; a shared one is not mine to export.
    let lease = "The lease runs to June; the deposit is returned in July.".as_bytes().to_vec();
    let mine = crate::documents::uploaded(&chat.server, &chat.token, "lease 2026.txt", "private", lease.clone()).await;
    crate::documents::uploaded(&chat.server, &chat.token, "bins.txt", "shared", b"Bins on Monday".to_vec()).await;

    let response =
        reqwest::Client::new().get(chat.server.url("/api/me/export")).bearer_auth(&chat.token).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/zip");
    assert!(response.headers()["content-disposition"].to_str().unwrap().contains("skald-export-"));
    let bytes = response.bytes().await.unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    let names: Vec<String> = archive.file_names().map(|name| name.unwrap().into_owned()).collect();
    let note =
        names.iter().find(|n| n.starts_with("notes/") && n.ends_with("garden-plan.md")).expect("the note's file");
    let mut text = String::new();
    archive.by_name(note).unwrap().read_to_string(&mut text).unwrap();
    assert_eq!(text, "# Garden plan\n\ntomatoes by the fence\n");
    let conversation = names.iter().find(|n| n.starts_with("conversations/")).expect("the conversation's file");
    let mut text = String::new();
    archive.by_name(conversation).unwrap().read_to_string(&mut text).unwrap();
    assert!(text.contains("note the garden plan") && text.contains("Noted."), "{text}");
    let mut json = String::new();
    archive.by_name("skald.json").unwrap().read_to_string(&mut json).unwrap();
    let everything: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(everything["notes"][0]["title"], "Garden plan");
    assert_eq!(everything["cards"][0]["state"], "allowed");
    let mut file = Vec::new();
    archive.by_name("documents/001-lease-2026.txt").unwrap().read_to_end(&mut file).unwrap();
    assert_eq!(file, lease, "the original's bytes, as uploaded");
    assert!(!names.iter().any(|n| n.contains("bins")), "{names:?}");
    assert_eq!(everything["documents"][0]["document"]["id"], mine.as_str());
    assert_eq!(everything["documents"][0]["file"], "documents/001-lease-2026.txt");
}

#[tokio::test]
async fn deleting_my_account_needs_my_password_and_name_and_destroys_my_file() {
    let chat = Chat::start().await;
    let bo = add_bo(&chat).await;
    let users = chat.server.data_dir().join("database/users");
    let files = || {
        std::fs::read_dir(&users).unwrap().flatten().filter(|e| e.path().extension().is_some_and(|x| x == "db")).count()
    };
    assert_eq!(files(), 2);
    let (status, body) = chat
        .server
        .call(Method::DELETE, "/api/me", Some(&bo), Some(json!({ "password": "wrong one here", "confirm": "Bo" })))
        .await;
    assert_eq!(status, 401, "{body}");
    let (status, body) = chat
        .server
        .call(Method::DELETE, "/api/me", Some(&bo), Some(json!({ "password": BO_PASSWORD, "confirm": "bo" })))
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("confirmation_mismatch")));
    let (status, _) = chat
        .server
        .call(Method::DELETE, "/api/me", Some(&bo), Some(json!({ "password": BO_PASSWORD, "confirm": "Bo" })))
        .await;
    assert_eq!(status, 204);
    assert_eq!(files(), 1, "Bo's file is gone");
    let (status, _) = chat.server.call(Method::GET, "/api/me", Some(&bo), None).await;
    assert_eq!(status, 401, "the session ended");
    let (status, _) = chat.server.post("/api/login", None, json!({ "name": "Bo", "password": BO_PASSWORD })).await;
    assert_eq!(status, 401);
    // The last administrator cannot leave the instance without one.
    let (status, body) = chat
        .server
        .call(Method::DELETE, "/api/me", Some(&chat.token), Some(json!({ "password": PASSWORD, "confirm": "Ada" })))
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("last_admin")), "{body}");
}

#[tokio::test]
async fn my_own_notes_can_be_written_edited_searched_and_deleted_and_bad_ones_are_refused() {
    let chat = Chat::start().await;
    let (status, note) =
        chat.server.post("/api/notes", Some(&chat.token), json!({ "title": " Recipes ", "body": "lentil soup" })).await;
    assert_eq!(status, 201, "{note}");
    assert_eq!((note["title"].as_str(), note["outside"].as_bool()), (Some("Recipes"), Some(false)));
    let path = format!("/api/notes/{}", note["id"]);
    let (status, edited) =
        chat.server.call(Method::PUT, &path, Some(&chat.token), Some(json!({ "body": "barley soup" }))).await;
    assert_eq!(
        (status, edited["body"].as_str(), edited["title"].as_str()),
        (200, Some("barley soup"), Some("Recipes"))
    );
    let (_, found) = chat.server.call(Method::GET, "/api/notes?q=barley", Some(&chat.token), None).await;
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    let (_, gone) = chat.server.call(Method::GET, "/api/notes?q=lentil", Some(&chat.token), None).await;
    assert_eq!(gone, json!([]), "the old words left the index");
    let (status, bad) = chat.server.post("/api/notes", Some(&chat.token), json!({ "title": "  ", "body": "x" })).await;
    assert_eq!((status, bad["error"]["code"].as_str()), (400, Some("invalid_note")));
    assert_eq!(chat.server.call(Method::DELETE, &path, Some(&chat.token), None).await.0, 204);
    let (status, missing) = chat.server.call(Method::DELETE, &path, Some(&chat.token), None).await;
    assert_eq!((status, missing["error"]["code"].as_str()), (404, Some("no_note")));
    let (_, after) = chat.server.call(Method::GET, "/api/notes?q=barley", Some(&chat.token), None).await;
    assert_eq!(after, json!([]));
}
