//! Documents reaching the model (issue 29, docs/architecture.md §12.2): `document_search`
//! and `document_read` bring a document's pages to the scripted model as outside content,
//! and a document attached to a message follows its words — whole when it fits the
//! model's window, otherwise named for the model to read by pages.

use reqwest::Method;
use scripted_model::{Reply, ScriptedCall};
use serde_json::{Value, json};

use super::Chat;
use crate::documents::{read, uploaded};
use crate::extract::text_pdf;

/// The content of the last message of request `n` the model received.
fn last_message(chat: &Chat, n: usize) -> String {
    let requests = chat.model.requests();
    let body = &requests.get(n).unwrap_or_else(|| panic!("request {n} of {}", requests.len())).body;
    let message = body["messages"].as_array().unwrap().last().unwrap();
    match &message["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn a_scripted_search_and_read_bring_a_documents_pages_to_the_model_as_outside_content() {
    let chat = Chat::start().await;
    let menu = uploaded(
        &chat.server,
        &chat.token,
        "menu.pdf",
        "private",
        text_pdf(&[b"Soup of the day", b"Caf\xe9 with quince tart"]),
    )
    .await;
    let notice =
        uploaded(&chat.server, &chat.token, "notice.txt", "shared", b"The quince tree is pruned in March.".to_vec())
            .await;
    read(&chat.server, &chat.token, &menu).await;
    read(&chat.server, &chat.token, &notice).await;

    chat.model.push(Reply::tool_calls([ScriptedCall::new("document_search", json!({ "query": "quince" }))]));
    chat.model.push(Reply::tool_calls([ScriptedCall::new("document_read", json!({ "document": menu, "pages": "2" }))]));
    chat.model.push(Reply::text(format!("A quince tart ([menu.pdf, p. 2](#/files/{menu}?page=2)).")));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "What is the tart made of?").await;
    let history = chat.finished(&session).await;
    assert_eq!(history.last().unwrap()["status"], "done", "{history:?}");

    // Both pools were searched; each page names its document and page, inside the wrapper.
    let found = last_message(&chat, 1);
    assert!(found.contains(&format!("document {menu} (own) \"menu.pdf\", page 2")), "{found}");
    assert!(found.contains(&format!("document {notice} (shared) \"notice.txt\", page 1")), "{found}");
    assert!(found.contains("**quince**"), "{found}");
    assert!(found.contains("<untrusted_content source=\"documents\">"), "{found}");
    assert!(!found.contains("Soup of the day"), "only the matching page: {found}");

    // The read brings the page asked for, and only it, with how to cite it.
    let page = last_message(&chat, 2);
    assert!(page.contains(&format!("<untrusted_content source=\"document:{menu}\">")), "{page}");
    assert!(page.contains("[page 2]\nCafé with quince tart"), "{page}");
    assert!(!page.contains("Soup of the day"), "{page}");
    assert!(page.contains(&format!("#/files/{menu}?page=N")), "{page}");

    // Document text is outside content: the conversation is marked, like a fetched page's.
    assert_eq!(chat.session_state(&session).await["outside_content"], true);
}

#[tokio::test]
async fn a_document_attached_to_a_message_goes_in_whole_when_it_fits_and_by_name_when_not() {
    let chat = Chat::start().await;
    let recipe =
        uploaded(&chat.server, &chat.token, "recipe.md", "private", b"# Bread\n\nKnead for ten minutes.".to_vec())
            .await;
    // The scripted provider's models have a window of 8,192 tokens: this book is too long.
    let book: String = (1..=3000).map(|n| format!("line {n} of the long book\n")).collect();
    let long = uploaded(&chat.server, &chat.token, "book.txt", "private", book.into_bytes()).await;
    read(&chat.server, &chat.token, &recipe).await;
    read(&chat.server, &chat.token, &long).await;

    let session = chat.new_session(json!({})).await;
    assert_eq!(chat.session_state(&session).await["outside_content"], false);
    chat.model.push(Reply::text("Ten minutes."));
    let path = format!("/api/sessions/{session}/messages");
    let message = json!({ "text": "How long do I knead?", "documents": [recipe, long] });
    let (status, body) = chat.server.post(&path, Some(&chat.token), message).await;
    assert_eq!(status, 202, "{body}");
    chat.finished(&session).await;

    let sent = last_message(&chat, 0);
    assert!(sent.starts_with("How long do I knead?\n\n"), "{sent}");
    assert!(sent.contains(&format!("<untrusted_content source=\"document:{recipe}\">")), "{sent}");
    assert!(sent.contains("[page 1]\n# Bread\n\nKnead for ten minutes."), "{sent}");
    assert!(sent.contains(&format!("Document {long} (the person's own) is attached to this message")), "{sent}");
    assert!(sent.contains("too long to include whole"), "{sent}");
    assert!(!sent.contains("line 2999 of the long book"), "the long one is named, not included: {sent}");
    assert_eq!(chat.session_state(&session).await["outside_content"], true);

    // A document nobody here has, or too many, is refused and nothing is sent.
    let (status, body) = chat
        .server
        .post(&path, Some(&chat.token), json!({ "text": "And this?", "documents": ["document_nope"] }))
        .await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("no_document")), "{body}");
    let five = json!({ "text": "All of them", "documents": [recipe, recipe, recipe, recipe, recipe] });
    let (status, body) = chat.server.post(&path, Some(&chat.token), five).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("too_many_documents")), "{body}");
    assert_eq!(chat.model.requests().len(), 1, "a refused message reaches no model");

    // Someone else's private document cannot be attached by its id.
    let bo = add_member(&chat).await;
    let theirs = uploaded(&chat.server, &bo, "diary.txt", "private", b"Dear diary".to_vec()).await;
    let (status, body) =
        chat.server.post(&path, Some(&chat.token), json!({ "text": "Read it", "documents": [theirs] })).await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("no_document")), "{body}");
    let (status, _) = chat.server.call(Method::GET, &format!("/api/documents/{theirs}"), Some(&chat.token), None).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn the_same_file_picked_again_is_the_document_kept_with_existing_use() {
    let chat = Chat::start().await;
    let bytes = b"Bins go out on Monday night.".to_vec();
    let kept = uploaded(&chat.server, &chat.token, "bins.txt", "private", bytes.clone()).await;
    let again = |existing: Option<&'static str>| {
        let mut query = vec![("name", "bins-again.txt"), ("pool", "private")];
        query.extend(existing.map(|e| ("existing", e)));
        reqwest::Client::new()
            .post(chat.server.url("/api/documents"))
            .query(&query)
            .bearer_auth(&chat.token)
            .body(bytes.clone())
            .send()
    };
    let refused = again(None).await.unwrap();
    assert_eq!(refused.status(), 409);
    let used = again(Some("use")).await.unwrap();
    assert_eq!(used.status(), 200);
    let document: Value = used.json().await.unwrap();
    assert_eq!((document["id"].as_str(), document["name"].as_str()), (Some(kept.as_str()), Some("bins.txt")));
}

/// Adds and enrols a member, Bo: their session token.
async fn add_member(chat: &Chat) -> String {
    let (_, added) = chat.server.post("/api/users", Some(&chat.token), json!({ "name": "Bo", "role": "member" })).await;
    let enrol = json!({ "name": "Bo", "enrolment_code": added["enrolment_code"], "password": "copper meadow whistle" });
    let (status, enrolled) = chat.server.post("/api/enrol", None, enrol).await;
    assert_eq!(status, 201, "{enrolled}");
    enrolled["token"].as_str().unwrap().to_owned()
}
