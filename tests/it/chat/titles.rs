//! Automatic titles (issue 24): after a conversation's first reply its own model names it,
//! in a recorded request; a title the person gave is never replaced, and their setting
//! turns it off.

use reqwest::Method;
use scripted_model::{Reply, ScriptedModel};
use serde_json::{Value, json};

use super::Chat;
use crate::support::Sandbox;

async fn titled_chat() -> Chat {
    let mut sandbox = Sandbox::new();
    sandbox.env.push(("SKALD_AUTO_TITLES".into(), "on".into()));
    Chat::start_in(sandbox, ScriptedModel::start().await, None).await
}

impl Chat {
    async fn title_of(&self, session: &str) -> String {
        let (_, body) =
            self.server.call(Method::GET, &format!("/api/sessions/{session}"), Some(&self.token), None).await;
        body["title"].as_str().unwrap().to_owned()
    }

    async fn records(&self, session: &str) -> Vec<Value> {
        let path = format!("/api/sessions/{session}/requests");
        let (_, records) = self.server.call(Method::GET, &path, Some(&self.token), None).await;
        records.as_array().unwrap().clone()
    }
}

#[tokio::test]
async fn a_first_reply_has_its_conversation_named_by_the_same_model_on_record() {
    let chat = titled_chat().await;
    let mut socket = chat.socket().await;
    let session = chat.new_session(json!({})).await;
    chat.model.push_all([Reply::text("Knead it for ten minutes."), Reply::text("**\"Kneading bread dough.\"**")]);
    chat.send(&session, "how long do I knead bread dough").await;
    let titled = tokio::time::timeout(super::WAIT, async {
        loop {
            let event = socket.next_event().await;
            if event["type"] == "titled" {
                break event;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no title came: {}", chat.server.stderr()));
    assert_eq!(titled, json!({ "type": "titled", "session": session, "title": "Kneading bread dough" }));
    assert_eq!(chat.title_of(&session).await, "Kneading bread dough");
    let sent = chat.model.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1].body["model"], sent[0].body["model"], "the conversation's own model");
    let asked = sent[1].body["messages"][1]["content"].as_str().unwrap();
    assert!(asked.starts_with("Person: how long do I knead") && asked.contains("Knead it for ten minutes."), "{asked}");
    assert!(sent[1].body.get("tools").is_none(), "a title request offers no tools");
    let purposes: Vec<Value> = chat.records(&session).await.iter().map(|r| r["purpose"].clone()).collect();
    assert_eq!(purposes, [json!("turn"), json!("title")]);

    // Named once: the next reply asks for nothing more.
    chat.model.push(Reply::text("Then let it rise."));
    chat.send(&session, "and then?").await;
    chat.finished(&session).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(chat.model.request_count(), 3);
}

#[tokio::test]
async fn a_title_the_person_gave_stays_and_their_setting_turns_naming_off() {
    let chat = titled_chat().await;
    // Renamed before the first reply ended: the model's title does not replace it.
    let session = chat.new_session(json!({})).await;
    // Unscripted, a title request would be answered with an echo, and show.
    chat.model.push(Reply { first_delay_ms: 300, ..Reply::text("Two cups.") });
    chat.send(&session, "how much flour").await;
    let path = format!("/api/sessions/{session}");
    let (status, _) =
        chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(json!({ "title": "Baking" }))).await;
    assert_eq!(status, 204);
    chat.finished(&session).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(chat.title_of(&session).await, "Baking");
    assert_eq!(chat.model.request_count(), 1, "no title is asked for a conversation the person named");

    // Off: a new conversation keeps its first line, and no request is made for it.
    let setting = json!({ "value": "off" });
    let (status, body) =
        chat.server.call(Method::PUT, "/api/me/settings/auto_titles", Some(&chat.token), Some(setting)).await;
    assert_eq!(status, 204, "{body}");
    let other = chat.new_session(json!({})).await;
    chat.model.push(Reply::text("Yes."));
    chat.send(&other, "Is rye flour fine?").await;
    chat.finished(&other).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(chat.title_of(&other).await, "Is rye flour fine?");
    assert_eq!(chat.model.request_count(), 2);

    // A failed title leaves the first line, on record as failed.
    let (status, _) = chat.server.call(Method::DELETE, "/api/me/settings/auto_titles", Some(&chat.token), None).await;
    assert_eq!(status, 204);
    let third = chat.new_session(json!({})).await;
    chat.model.push_all([Reply::text("Sure."), Reply::status(500)]);
    chat.send(&third, "Can I freeze dough?").await;
    chat.finished(&third).await;
    let deadline = tokio::time::Instant::now() + super::WAIT;
    while chat.records(&third).await.len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "the title request was not recorded");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let title = &chat.records(&third).await[1];
    assert_eq!((title["purpose"].as_str(), title["outcome"].as_str()), (Some("title"), Some("error")), "{title}");
    assert_eq!(chat.title_of(&third).await, "Can I freeze dough?");
}
