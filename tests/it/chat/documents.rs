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

/// The provider `scripted`'s id and its first model's id.
async fn scripted_model(chat: &Chat) -> (String, String) {
    let (_, providers) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
    let provider = providers.as_array().unwrap().iter().find(|p| p["name"] == "scripted").unwrap().clone();
    let model = provider["models"][0]["model_id"].as_str().unwrap().to_owned();
    (provider["id"].as_str().unwrap().to_owned(), model)
}

/// Marks the scripted provider's model as reading pictures, or not.
async fn reads_pictures(chat: &Chat, images: bool) {
    let (provider, model) = scripted_model(chat).await;
    let patch = json!({ "models": [{ "id": model, "images": images }] });
    let (status, body) =
        chat.server.call(Method::PATCH, &format!("/api/providers/{provider}"), Some(&chat.token), Some(patch)).await;
    assert_eq!(status, 204, "{body}");
    let (_, models) = chat.server.call(Method::GET, "/api/models", Some(&chat.token), None).await;
    assert_eq!(models[0]["images"], images, "the model list says which read pictures: {models}");
}

/// Sends `text` with `documents` in a new conversation and waits for the reply: the
/// conversation's id.
async fn send_with(chat: &Chat, text: &str, documents: &[&str]) -> String {
    let session = chat.new_session(json!({})).await;
    chat.model.push(Reply::text("I see it."));
    let path = format!("/api/sessions/{session}/messages");
    let (status, body) =
        chat.server.post(&path, Some(&chat.token), json!({ "text": text, "documents": documents })).await;
    assert_eq!(status, 202, "{body}");
    chat.finished(&session).await;
    session
}

/// The last request's body and the conversation's first request composed again.
async fn sent_and_rebuilt(chat: &Chat, session: &str) -> (Value, Value) {
    let sent = chat.model.requests().last().unwrap().body.clone();
    let (_, requests) =
        chat.server.call(Method::GET, &format!("/api/sessions/{session}/requests"), Some(&chat.token), None).await;
    let id = requests[0]["id"].as_i64().unwrap();
    let path = format!("/api/sessions/{session}/requests/{id}/rebuild");
    let (status, rebuilt) = chat.server.call(Method::GET, &path, Some(&chat.token), None).await;
    assert_eq!(status, 200, "{rebuilt}");
    (sent, rebuilt)
}

#[tokio::test]
async fn a_picture_reaches_an_openai_compatible_model_that_reads_pictures_as_an_image_part() {
    use base64::Engine;
    let chat = Chat::start().await;
    let png = crate::canary::picture_of("Invoice total 42 euros");
    let picture = uploaded(&chat.server, &chat.token, "invoice.png", "private", png.clone()).await;
    read(&chat.server, &chat.token, &picture).await;
    reads_pictures(&chat, true).await;

    let session = send_with(&chat, "What is the total?", &[&picture]).await;
    let (sent, rebuilt) = sent_and_rebuilt(&chat, &session).await;
    let message = sent["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(message["role"], "user");
    let parts = message["content"].as_array().expect("the words and the picture as parts");
    assert_eq!(parts.len(), 2, "{message}");
    let words = parts[0]["text"].as_str().unwrap();
    assert!(words.starts_with("What is the total?\n\n"), "{words}");
    assert!(words.contains(&format!("Document {picture} (the person's own) is attached to this message as a picture")));
    let encoded = base64::engine::general_purpose::STANDARD.encode(&png);
    assert_eq!(
        parts[1],
        json!({ "type": "image_url", "image_url": { "url": format!("data:image/png;base64,{encoded}") } })
    );
    // The record composes the request again, picture and all, exactly as sent.
    assert_eq!((&rebuilt["body"], rebuilt["redacted"].as_bool()), (&sent, Some(false)));
    let (_, history) =
        chat.server.call(Method::GET, &format!("/api/sessions/{session}/messages"), Some(&chat.token), None).await;
    assert_eq!(history[0]["images"], json!([{ "document": picture, "media_type": "image/png" }]));

    // Deleted, the picture is gone from what a rebuild can show, and the record says so.
    let (status, _) =
        chat.server.call(Method::DELETE, &format!("/api/documents/{picture}"), Some(&chat.token), None).await;
    assert_eq!(status, 204);
    let (_, rebuilt) = sent_and_rebuilt(&chat, &session).await;
    assert_eq!(rebuilt["redacted"], true);
    let content = rebuilt["body"]["messages"].as_array().unwrap().last().unwrap()["content"].clone();
    assert!(content.as_str().unwrap().ends_with("it has since been deleted]"), "{content}");

    // A model that does not read pictures gets the words read from it instead.
    reads_pictures(&chat, false).await;
    let again = uploaded(&chat.server, &chat.token, "invoice.png", "private", png).await;
    read(&chat.server, &chat.token, &again).await;
    send_with(&chat, "And now?", &[&again]).await;
    let sent = chat.model.requests().last().unwrap().body.clone();
    let message = sent["messages"].as_array().unwrap().last().unwrap().clone();
    let text = message["content"].as_str().expect("words only");
    assert!(text.contains("Invoice") && text.contains("[page 1]"), "{text}");
    assert!(!text.contains("base64"), "{text}");
}

#[tokio::test]
async fn a_picture_reaches_an_anthropic_model_as_an_image_block_and_a_wordless_one_is_refused_to_others() {
    use base64::Engine;
    let model = scripted_model::ScriptedModel::start().await;
    let chat = Chat::start_kind("anthropic", crate::support::Sandbox::new(), model, Some("sk-ant-test")).await;
    let png = crate::canary::picture_of("Shelf label aisle 7");
    let picture = uploaded(&chat.server, &chat.token, "label.png", "private", png.clone()).await;
    read(&chat.server, &chat.token, &picture).await;
    let (_, models) = chat.server.call(Method::GET, "/api/models", Some(&chat.token), None).await;
    assert_eq!(models[0]["images"], true, "Claude models read pictures: {models}");

    let session = send_with(&chat, "Which aisle?", &[&picture]).await;
    let (sent, rebuilt) = sent_and_rebuilt(&chat, &session).await;
    let message = sent["messages"].as_array().unwrap().last().unwrap().clone();
    let blocks = message["content"].as_array().unwrap();
    let encoded = base64::engine::general_purpose::STANDARD.encode(&png);
    assert_eq!(
        blocks.last().unwrap(),
        &json!({ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": encoded } })
    );
    assert!(blocks[0]["text"].as_str().unwrap().starts_with("Which aisle?"), "{message}");
    assert_eq!(rebuilt["body"], sent);

    // A picture with no words in it, for a model that does not read pictures: refused.
    reads_pictures(&chat, false).await;
    let blank = crate::canary::picture_of(" ");
    let wordless = uploaded(&chat.server, &chat.token, "blank.png", "private", blank).await;
    assert_eq!(read(&chat.server, &chat.token, &wordless).await["status"], "no_text");
    let session = chat.new_session(json!({})).await;
    let path = format!("/api/sessions/{session}/messages");
    let (status, body) =
        chat.server.post(&path, Some(&chat.token), json!({ "text": "This?", "documents": [wordless] })).await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("picture_not_read")), "{body}");
}

#[tokio::test]
async fn image_generate_asks_first_then_keeps_the_scripted_servers_picture_among_the_documents() {
    let chat = Chat::start().await;
    // Without a model for pictures, the call says why and nothing is asked of anyone.
    chat.model.push(Reply::tool_calls([ScriptedCall::new("image_generate", json!({ "prompt": "a red fox" }))]));
    chat.model.push(Reply::text("No picture today."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "Draw a fox").await;
    let cards = chat.cards(1).await;
    assert_eq!(cards[0]["details"]["tool"], "image_generate", "it sends words out and may cost: asked first");
    assert_eq!(chat.decide(&cards[0], json!({ "decision": "allow" })).await.0, 200);
    chat.finished(&session).await;
    let said = last_message(&chat, 1);
    assert!(said.contains("no provider makes pictures"), "{said}");

    let (provider, _) = scripted_model(&chat).await;
    let patch = json!({ "image_model": "picture-model" });
    let (status, body) =
        chat.server.call(Method::PATCH, &format!("/api/providers/{provider}"), Some(&chat.token), Some(patch)).await;
    assert_eq!(status, 204, "{body}");
    let (_, providers) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
    assert_eq!(providers[0]["image_model"], "picture-model", "{providers}");

    chat.model.push(Reply::tool_calls([ScriptedCall::new(
        "image_generate",
        json!({ "prompt": "a red fox in the snow", "size": "512x512" }),
    )]));
    chat.model.push(Reply::text("Here it is."));
    chat.send(&session, "Now draw a fox").await;
    let card = chat.cards(1).await.remove(0);
    assert_eq!(card["details"]["arguments"]["prompt"], "a red fox in the snow", "the card binds the words: {card}");
    assert_eq!(chat.decide(&card, json!({ "decision": "allow" })).await.0, 200);
    chat.finished(&session).await;

    let asked = chat.model.requests().into_iter().find(|r| r.path == "/v1/images/generations").expect("asked");
    assert_eq!(
        asked.body,
        json!({ "model": "picture-model", "prompt": "a red fox in the snow", "n": 1, "size": "512x512",
                "response_format": "b64_json" })
    );
    let (_, documents) = chat.server.call(Method::GET, "/api/documents", Some(&chat.token), None).await;
    let picture = documents.as_array().unwrap().iter().find(|d| d["kind"] == "png").expect("kept").clone();
    assert_eq!((picture["pool"].as_str(), picture["status"].as_str()), (Some("private"), Some("no_text")));
    let detail = picture["status_detail"].as_str().unwrap();
    assert_eq!(detail, "Made by scripted/picture-model from: a red fox in the snow");
    let id = picture["id"].as_str().unwrap();
    let result = last_message(&chat, chat.model.requests().len() - 1);
    assert!(result.contains(&format!("#/files/{id}")), "{result}");
    // The bytes are the picture the server made.
    let content = reqwest::Client::new()
        .get(chat.server.url(&format!("/api/documents/{id}/content")))
        .bearer_auth(&chat.token)
        .send()
        .await
        .unwrap();
    assert_eq!(content.headers()["content-type"], "image/png");
    assert!(content.bytes().await.unwrap().starts_with(b"\x89PNG"));
}
