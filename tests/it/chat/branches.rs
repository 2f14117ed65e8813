//! Branches (issue 24): regenerating a reply and editing a message make new versions of a
//! turn, never rewrite one. The model reads only the active path, every version stays
//! readable, choosing one makes its path active again, and every stored request still
//! composes byte for byte after the path moved on.

use reqwest::Method;
use scripted_model::Reply;
use serde_json::{Value, json};

use super::{Chat, WAIT};

impl Chat {
    /// Polls until turn `turn` of `session` has its closing row; returns the history then.
    async fn ended(&self, session: &str, turn: &Value) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let history = self.finished(session).await;
            if history.last().unwrap()["turn_id"] == *turn {
                return history;
            }
            assert!(tokio::time::Instant::now() < deadline, "turn {turn} did not end: {history:?}");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    async fn post_ok(&self, path: &str, body: Value) -> Value {
        let (status, answer) = self.server.post(path, Some(&self.token), body).await;
        assert_eq!(status, 202, "{path}: {answer}");
        answer
    }

    async fn detail(&self, session: &str) -> Value {
        let (status, body) =
            self.server.call(Method::GET, &format!("/api/sessions/{session}"), Some(&self.token), None).await;
        assert_eq!(status, 200, "{body}");
        body
    }
}

/// What the person and the model said on the path shown, frames and tool rows aside.
fn said(history: &[Value]) -> Vec<&str> {
    history.iter().filter(|m| m["role"] != "tool" && m["text"] != "").map(|m| m["text"].as_str().unwrap()).collect()
}

/// The messages of the model's last request, system prompt aside.
fn last_context(chat: &Chat) -> Vec<String> {
    let request = chat.model.requests().last().unwrap().body.clone();
    request["messages"].as_array().unwrap()[1..].iter().map(|m| m["content"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_regenerated_reply_and_an_edited_message_are_versions_and_the_model_reads_only_the_path() {
    let chat = Chat::start().await;
    let session = chat.new_session(json!({})).await;
    for (asked, reply) in [("Hi", "Hello."), ("Plan a trip", "To Lyon?"), ("Yes", "Booked.")] {
        chat.model.push(Reply::text(reply));
        chat.send(&session, asked).await;
        chat.finished(&session).await;
    }
    let history = chat.finished(&session).await;
    let second = history[2]["turn_id"].clone();

    // Another reply to the second message: the model reads what came before it, and the
    // same message again; the third turn is no longer on the path.
    chat.model.push(Reply::text("To Rome?"));
    let again = chat.post_ok(&format!("/api/sessions/{session}/regenerate"), json!({ "turn": second })).await;
    let history = chat.ended(&session, &again["turn"]).await;
    assert_eq!(said(&history), ["Hi", "Hello.", "Plan a trip", "To Rome?"]);
    assert_eq!(last_context(&chat), ["Hi", "Hello.", "Plan a trip"]);
    assert_eq!(history[2]["id"], again["message"], "the message the new version answers");
    let detail = chat.detail(&session).await;
    assert_eq!(detail["versions"], json!([{ "turn": again["turn"], "versions": [second, again["turn"]] }]));
    assert_eq!(detail["active_turn"], again["turn"]);

    // The message edited and sent again: a third version, beside the other two.
    chat.model.push(Reply::text("Along the river?"));
    let edited = chat
        .post_ok(
            &format!("/api/sessions/{session}/messages"),
            json!({ "text": "Plan a walk", "replaces": again["turn"] }),
        )
        .await;
    let history = chat.ended(&session, &edited["turn"]).await;
    assert_eq!(said(&history), ["Hi", "Hello.", "Plan a walk", "Along the river?"]);
    assert_eq!(last_context(&chat), ["Hi", "Hello.", "Plan a walk"]);
    let versions = &chat.detail(&session).await["versions"][0]["versions"];
    assert_eq!(versions.as_array().unwrap().len(), 3);

    // The conversation goes on from the version shown.
    chat.model.push(Reply::text("At nine, then."));
    chat.send(&session, "Tomorrow morning").await;
    let history = chat.finished(&session).await;
    assert_eq!(said(&history).len(), 6);
    assert_eq!(last_context(&chat), ["Hi", "Hello.", "Plan a walk", "Along the river?", "Tomorrow morning"]);

    // Back to the first version: it is whole, with the turn that followed it, and the
    // next message continues it.
    let path = format!("/api/sessions/{session}/active");
    let (status, chosen) =
        chat.server.call(Method::PUT, &path, Some(&chat.token), Some(json!({ "turn": second }))).await;
    assert_eq!(status, 200, "{chosen}");
    let history = chat.history(&session).await;
    assert_eq!(said(&history), ["Hi", "Hello.", "Plan a trip", "To Lyon?", "Yes", "Booked."]);
    assert_eq!(chosen["active_turn"], history.last().unwrap()["turn_id"]);
    chat.model.push(Reply::text("Train at eight."));
    chat.send(&session, "And the train?").await;
    chat.finished(&session).await;
    assert_eq!(last_context(&chat), ["Hi", "Hello.", "Plan a trip", "To Lyon?", "Yes", "Booked.", "And the train?"]);

    // A turn of no version of this conversation, or not on the path shown, is refused.
    let (status, body) =
        chat.server.call(Method::PUT, &path, Some(&chat.token), Some(json!({ "turn": "turn_nowhere" }))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("no_turn")), "{body}");
    let (status, body) = chat
        .server
        .post(&format!("/api/sessions/{session}/regenerate"), Some(&chat.token), json!({ "turn": edited["turn"] }))
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("not_on_path")), "{body}");
}

#[tokio::test]
async fn every_request_still_composes_as_it_was_sent_after_the_path_moved_on() {
    let chat = Chat::start().await;
    let session = chat.new_session(json!({})).await;
    chat.model.push(Reply::text("Hello."));
    chat.send(&session, "Hi").await;
    let first = chat.finished(&session).await[0]["turn_id"].clone();
    chat.model.push(Reply::text("Blue."));
    chat.send(&session, "A colour?").await;
    let history = chat.finished(&session).await;
    let second = history[2]["turn_id"].clone();
    chat.model.push(Reply::text("Green."));
    let again = chat.post_ok(&format!("/api/sessions/{session}/regenerate"), json!({ "turn": second })).await;
    chat.ended(&session, &again["turn"]).await;
    chat.model.push(Reply::text("Hey."));
    let edited =
        chat.post_ok(&format!("/api/sessions/{session}/messages"), json!({ "text": "Hello", "replaces": first })).await;
    chat.ended(&session, &edited["turn"]).await;

    let sent: Vec<String> = chat.model.requests().iter().map(|r| r.raw.clone()).collect();
    let (_, records) =
        chat.server.call(Method::GET, &format!("/api/sessions/{session}/requests"), Some(&chat.token), None).await;
    let ids: Vec<i64> = records.as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), 4);
    for (id, original) in ids.iter().zip(&sent) {
        let path = format!("/api/sessions/{session}/requests/{id}/rebuild");
        let (status, rebuilt) = chat.server.call(Method::GET, &path, Some(&chat.token), None).await;
        assert_eq!(status, 200, "{rebuilt}");
        assert_eq!(rebuilt["raw"].as_str().unwrap(), original, "request {id} composed differently");
    }
}

/// `GET …/messages?turns=N[&before=TURN]`: whole turns of the path shown, read back from
/// its end, which put together are the history; the form without parameters is unchanged.
#[tokio::test]
async fn the_history_is_read_in_pages_of_whole_turns_on_the_path_shown() {
    let chat = Chat::start().await;
    let session = chat.new_session(json!({})).await;
    for i in 1..=7 {
        chat.model.push(Reply::text(format!("Answer {i}.")));
        chat.send(&session, &format!("Question {i}")).await;
        chat.finished(&session).await;
    }
    // The fifth turn answered again: the path shown holds that version, not the first.
    let whole = chat.history(&session).await;
    let fifth = whole[8]["turn_id"].clone();
    chat.model.push(Reply::text("Answer 5, again."));
    let again = chat.post_ok(&format!("/api/sessions/{session}/regenerate"), json!({ "turn": fifth })).await;
    let whole = chat.ended(&session, &again["turn"]).await;
    assert_eq!(said(&whole).last(), Some(&"Answer 5, again."));

    let page = |query: String| {
        let chat = &chat;
        let path = format!("/api/sessions/{session}/messages?{query}");
        async move { chat.server.call(Method::GET, &path, Some(&chat.token), None).await }
    };
    let rows = |body: &Value| body.as_array().unwrap().clone();
    let (status, latest) = page("turns=2".into()).await;
    assert_eq!(status, 200, "{latest}");
    assert_eq!(said(&rows(&latest)), ["Question 4", "Answer 4.", "Question 5", "Answer 5, again."]);
    let first_shown = latest[0]["turn_id"].as_str().unwrap().to_owned();
    let (_, earlier) = page(format!("turns=3&before={first_shown}")).await;
    assert_eq!(
        said(&rows(&earlier)),
        ["Question 1", "Answer 1.", "Question 2", "Answer 2.", "Question 3", "Answer 3."]
    );
    let (_, none) = page(format!("turns=3&before={}", earlier[0]["turn_id"].as_str().unwrap())).await;
    assert_eq!(none, json!([]), "nothing before the first turn");
    // The pages put together are the history as the page has always read it.
    assert_eq!([rows(&earlier), rows(&latest)].concat(), whole);
    // 50 turns unless asked; `turns` is kept between 1 and 500.
    let (_, all) = page(format!("before={}", again["turn"].as_str().unwrap())).await;
    assert_eq!(said(&rows(&all)).len(), 8);
    let (_, one) = page("turns=0".into()).await;
    assert_eq!(said(&rows(&one)), ["Question 5", "Answer 5, again."]);

    // A turn this conversation does not have; and another person's conversation.
    let (status, body) = page("turns=2&before=turn_nowhere".into()).await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("no_turn")), "{body}");
    let (status, body) =
        chat.server.call(Method::GET, "/api/sessions/chat_nowhere/messages?turns=2", Some(&chat.token), None).await;
    assert_eq!(status, 404, "{body}");
}
