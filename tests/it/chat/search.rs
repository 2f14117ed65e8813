//! Search inside conversations (issue 24): `GET /api/sessions/search` finds the words of a
//! person's messages and replies in their own file, and only there.

use reqwest::Method;
use scripted_model::Reply;
use serde_json::{Value, json};

use super::mine::add_bo;
use super::{Chat, WAIT, finished};

/// The hits for `q` as `token` sees them.
async fn search(chat: &Chat, token: &str, q: &str) -> Vec<Value> {
    let path = format!("/api/sessions/search?q={}", urlencode(q));
    let (status, body) = chat.server.call(Method::GET, &path, Some(token), None).await;
    assert_eq!(status, 200, "{body}");
    body["hits"].as_array().unwrap().clone()
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

#[tokio::test]
async fn a_word_of_a_reply_finds_its_own_conversation_and_never_another_persons() {
    let chat = Chat::start().await;
    let walk = chat.new_session(json!({})).await;
    chat.model.push(Reply::text("The path past the old mill follows the river."));
    chat.send(&walk, "Where can we walk?").await;
    chat.finished(&walk).await;
    let dinner = chat.new_session(json!({})).await;
    chat.model.push(Reply::text("A leek soup, then pears."));
    chat.send(&dinner, "What is for dinner?").await;
    chat.finished(&dinner).await;

    let hits = search(&chat, &chat.token, "mill").await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(
        (hits[0]["session_id"].as_str(), hits[0]["title"].as_str()),
        (Some(walk.as_str()), Some("Where can we walk?"))
    );
    assert!(hits[0]["snippet"].as_str().unwrap().contains("**mill**"), "{}", hits[0]);
    assert!(hits[0]["message_id"].as_i64().is_some() && hits[0]["created_at"].is_string());
    assert_eq!(search(&chat, &chat.token, "dinner").await[0]["session_id"], dinner, "the person's own words too");

    // Bo has a file of their own: Ada's words are not in it, nor Bo's in Ada's.
    let bo = add_bo(&chat).await;
    let (status, created) = chat.server.post("/api/sessions", Some(&bo), json!({})).await;
    assert_eq!(status, 201, "{created}");
    let bos = created["id"].as_str().unwrap();
    chat.model.push(Reply::text("The harbour ferry leaves at noon."));
    let sent =
        chat.server.post(&format!("/api/sessions/{bos}/messages"), Some(&bo), json!({ "text": "Ferry times?" })).await;
    assert_eq!(sent.0, 202, "{}", sent.1);
    finished(&chat.server, &bo, bos, WAIT).await;
    assert!(search(&chat, &bo, "mill").await.is_empty());
    assert_eq!(search(&chat, &bo, "ferry").await.len(), 2, "Bo's question and its reply");
    assert!(search(&chat, &chat.token, "ferry").await.is_empty());
}

#[tokio::test]
async fn a_deleted_conversation_is_no_longer_found_and_a_query_needs_a_word() {
    let chat = Chat::start().await;
    let session = chat.new_session(json!({})).await;
    chat.model.push(Reply::text("Lighthouses are kept by volunteers now."));
    chat.send(&session, "Tell me about lighthouses").await;
    chat.finished(&session).await;
    assert_eq!(search(&chat, &chat.token, "volunteer").await.len(), 1);
    // Operators and quotes are words to look for, never syntax.
    assert!(search(&chat, &chat.token, "\"kept\" OR NOT (").await.is_empty());
    let (status, _) =
        chat.server.call(Method::DELETE, &format!("/api/sessions/{session}"), Some(&chat.token), None).await;
    assert_eq!(status, 204);
    assert!(search(&chat, &chat.token, "volunteer").await.is_empty());

    for path in ["/api/sessions/search?q=", "/api/sessions/search?q=%20%09", "/api/sessions/search"] {
        let (status, body) = chat.server.call(Method::GET, path, Some(&chat.token), None).await;
        assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_query")), "{path}: {body}");
    }
    let (status, _) = chat.server.call(Method::GET, "/api/sessions/search?q=x", None, None).await;
    assert_eq!(status, 401, "a search needs a session");
}
