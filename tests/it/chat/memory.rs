//! Memory over the real server (§10): `remember` is always a card naming what would be
//! kept, about whom, by which agent, until when and who can read it; allowing keeps it as
//! the model's, denying keeps nothing, no rule skips the card; erase by subject reaches
//! both pools, leaves no copy in the shared database and is applied to a locked owner's
//! file at their next unlock; the sweep deletes what has expired.

use reqwest::Method;
use scripted_model::{Reply, ScriptedCall};
use serde_json::{Value, json};

use super::{Chat, PASSWORD, history};
use crate::support::Server;

const BO_PASSWORD: &str = "maple harbour seventeen";

/// Adds Bo as a member; his id and token.
async fn add_bo(chat: &Chat) -> (String, String) {
    let (_, added) = chat.server.post("/api/users", Some(&chat.token), json!({ "name": "Bo", "role": "member" })).await;
    let enrol = json!({ "name": "Bo", "enrolment_code": added["enrolment_code"], "password": BO_PASSWORD });
    let (status, enrolled) = chat.server.post("/api/enrol", None, enrol).await;
    assert_eq!(status, 201, "{enrolled}");
    (added["user"]["id"].as_str().unwrap().to_owned(), enrolled["token"].as_str().unwrap().to_owned())
}

async fn memories(server: &Server, token: &str, query: &str) -> Vec<Value> {
    let (status, body) = server.call(Method::GET, &format!("/api/memories{query}"), Some(token), None).await;
    assert_eq!(status, 200, "{body}");
    body.as_array().unwrap().clone()
}

fn remember(text: &str, pool: &str, subject: Value) -> Reply {
    Reply::tool_calls([ScriptedCall::new("remember", json!({ "text": text, "pool": pool, "subject": subject }))])
}

/// Days from now until an RFC 3339 instant.
fn days_until(at: &str) -> f64 {
    let at = time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339).unwrap();
    (at - time::OffsetDateTime::now_utc()).as_seconds_f64() / 86_400.0
}

#[tokio::test]
async fn remember_always_asks_and_keeps_what_was_allowed_as_the_models() {
    let chat = Chat::start().await;
    let (bo, _) = add_bo(&chat).await;
    // An administrator's allow-everything rule does not skip a remember card.
    let rule = json!({ "tool": "*", "effect": "allow", "priority": 1 });
    let (status, added) = chat.server.post("/api/approval-rules", Some(&chat.token), rule).await;
    assert_eq!(status, 201, "{added}");

    let sentence = "Ada prefers green tea in the morning.";
    chat.model.push(remember(sentence, "private", json!({ "kind": "self" })));
    chat.model.push(Reply::text("Noted."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "I always have green tea in the morning, remember that").await;
    let card = chat.cards(1).await.remove(0);
    let lines = &card["details"]["memory"];
    assert_eq!(lines["text"], sentence, "{card}");
    assert_eq!(lines["about"], "Ada");
    assert_eq!(lines["about_another"], false);
    assert_eq!(lines["agent"], card["details"]["agent"]);
    assert_eq!(lines["pool"], "private");
    let kept = days_until(lines["kept_until"].as_str().unwrap());
    assert!((89.9..=90.1).contains(&kept), "kept for the role's 90 days: {kept}");
    assert!(memories(&chat.server, &chat.token, "").await.is_empty(), "nothing is kept before the person decides");
    let (status, always) = chat.decide(&card, json!({ "decision": "allow", "always": true })).await;
    assert_eq!(status, 403, "remember cannot be always allowed: {always}");
    let (status, decided) = chat.decide(&card, json!({ "decision": "allow" })).await;
    assert_eq!(status, 200, "{decided}");
    chat.finished(&session).await;
    let kept = memories(&chat.server, &chat.token, "").await;
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0]["text"], sentence);
    assert_eq!(kept[0]["author"]["kind"], "model", "the model wrote it, not the person");
    assert_eq!(kept[0]["source_session"], session);
    assert_eq!(kept[0]["pool"], "private");
    assert!(days_until(kept[0]["expires_at"].as_str().unwrap()) > 89.0);

    // About another member, in the shared pool: the card says so; denying keeps nothing.
    chat.model.push(remember("Bo is allergic to hazelnuts.", "shared", json!({ "kind": "member", "id": bo })));
    chat.model.push(Reply::text("All right."));
    chat.send(&session, "Bo can't have hazelnuts").await;
    let card = chat.cards(1).await.remove(0);
    let lines = &card["details"]["memory"];
    assert_eq!(
        (&lines["about"], &lines["about_another"], &lines["pool"]),
        (&json!("Bo"), &json!(true), &json!("shared"))
    );
    let (status, _) = chat.decide(&card, json!({ "decision": "deny" })).await;
    assert_eq!(status, 200);
    chat.finished(&session).await;
    assert_eq!(memories(&chat.server, &chat.token, "").await.len(), 1, "a denied memory is not kept");

    // Nearly the same again: the card offers to replace the one kept, and replacing erases it.
    chat.model.push(remember(
        "Ada prefers green tea in the morning, never coffee.",
        "private",
        json!({ "kind": "self" }),
    ));
    chat.model.push(Reply::text("Updated."));
    chat.send(&session, "and never coffee").await;
    let card = chat.cards(1).await.remove(0);
    let similar = card["details"]["memory"]["similar"].as_array().unwrap();
    assert_eq!(similar.len(), 1, "{card}");
    assert_eq!(similar[0]["id"], kept[0]["id"]);
    let (status, refused) = chat.decide(&card, json!({ "decision": "allow", "replace": "mem_unknown" })).await;
    assert_eq!(status, 400, "only a memory the card offered can be replaced: {refused}");
    let (status, _) = chat.decide(&card, json!({ "decision": "allow", "replace": kept[0]["id"] })).await;
    assert_eq!(status, 200);
    chat.finished(&session).await;
    let now = memories(&chat.server, &chat.token, "").await;
    assert_eq!(now.len(), 1, "{now:?}");
    assert_eq!(now[0]["text"], "Ada prefers green tea in the morning, never coffee.");
}

#[tokio::test]
async fn a_memory_the_model_cannot_keep_says_why_on_its_card_and_to_the_model() {
    let chat = Chat::start().await;
    chat.model.push(remember("Ada likes tea. She hates coffee.", "private", json!({ "kind": "self" })));
    chat.model.push(Reply::text("I'll try again."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "tea yes, coffee no").await;
    let card = chat.cards(1).await.remove(0);
    assert!(card["details"]["memory"]["problem"].as_str().unwrap().contains("one sentence"), "{card}");
    chat.decide(&card, json!({ "decision": "allow" })).await;
    let history = chat.finished(&session).await;
    let result = history.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(result["status"], "error");
    assert!(result["text"].as_str().unwrap().contains("one sentence"), "{result}");
    assert!(memories(&chat.server, &chat.token, "").await.is_empty());
}

#[tokio::test]
async fn erase_by_subject_reaches_both_pools_and_a_locked_owners_file_at_their_unlock() {
    let chat = Chat::start().await;
    let (bo, bo_token) = add_bo(&chat).await;
    let canary = |n: u8| format!("canary{n}{}", hex::encode(rand_bytes()));
    let (by_model, by_ada, gift, own) = (canary(1), canary(2), canary(3), canary(4));

    // Bo's assistant keeps a shared memory about him, through a card in his own file.
    let bo_sentence = format!("Bo is allergic to hazelnuts {by_model}.");
    chat.model.push(remember(&bo_sentence, "shared", json!({ "kind": "self" })));
    chat.model.push(Reply::text("Kept."));
    let (_, session) = chat.server.post("/api/sessions", Some(&bo_token), json!({})).await;
    let bo_session = session["id"].as_str().unwrap().to_owned();
    let path = format!("/api/sessions/{bo_session}/messages");
    chat.server.post(&path, Some(&bo_token), json!({ "text": "remember my allergy" })).await;
    let card = loop {
        let (_, inbox) = chat.server.call(Method::GET, "/api/inbox", Some(&bo_token), None).await;
        if let Some(card) = inbox.as_array().unwrap().first() {
            break card.clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    };
    let (status, _) = chat
        .server
        .post(&format!("/api/inbox/{}", card["id"].as_str().unwrap()), Some(&bo_token), json!({ "decision": "allow" }))
        .await;
    assert_eq!(status, 200);
    super::finished(&chat.server, &bo_token, &bo_session, super::WAIT).await;

    // Ada keeps one shared memory about Bo by hand, and a private gift idea about him.
    let about_bo = json!({ "kind": "member", "id": bo });
    for (text, pool) in
        [(format!("Bo walks the dog at {by_ada}."), "shared"), (format!("A gift idea for Bo: {gift}."), "private")]
    {
        let (status, body) = chat
            .server
            .post("/api/memories", Some(&chat.token), json!({ "text": text, "pool": pool, "subject": about_bo }))
            .await;
        assert_eq!(status, 201, "{body}");
    }
    assert_eq!(memories(&chat.server, &chat.token, "?pool=shared").await.len(), 2);
    assert_eq!(memories(&chat.server, &bo_token, "").await.len(), 2, "Bo reads the shared pool, not Ada's gift idea");

    // Bo erases what is about him: the shared pool, never Ada's private memory.
    let (_, bo_own) = chat
        .server
        .post(
            "/api/memories",
            Some(&bo_token),
            json!({ "text": format!("Bo sleeps late {own}."), "pool": "private", "subject": { "kind": "self" } }),
        )
        .await;
    assert!(bo_own["id"].is_string());
    let (status, erased) =
        chat.server.post("/api/memories/erase", Some(&bo_token), json!({ "subject": { "kind": "self" } })).await;
    assert_eq!(status, 200, "{erased}");
    assert_eq!(
        erased,
        json!({ "erased": 3, "queued": 1 }),
        "his own, the two shared; Ada's file gets a redaction queued"
    );
    let left = memories(&chat.server, &chat.token, "").await;
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0]["text"].as_str().unwrap().contains(&gift), "a private memory about Bo stays Ada's");

    // Bo's file already reads "[erased memory]" where his assistant's call wrote the sentence.
    let bo_history = history(&chat.server, &bo_token, &bo_session).await;
    let text = serde_json::to_string(&bo_history).unwrap();
    assert!(!text.contains(&by_model) && text.contains("[erased memory]"), "{text}");
    let (_, records) =
        chat.server.call(Method::GET, &format!("/api/sessions/{bo_session}/requests"), Some(&bo_token), None).await;
    let last = records.as_array().unwrap().last().unwrap()["id"].clone();
    let path = format!("/api/sessions/{bo_session}/requests/{last}/rebuild");
    let (status, rebuilt) = chat.server.call(Method::GET, &path, Some(&bo_token), None).await;
    assert_eq!(status, 200, "a request whose inputs were redacted still rebuilds: {rebuilt}");
    assert_eq!(rebuilt["redacted"], true, "and says so");
    assert!(!rebuilt["raw"].as_str().unwrap().contains(&by_model));

    // A locked owner: Ada erases her own memories about Bo while... she is the one asking,
    // so lock Bo, and have Ada (an administrator) erase a shared memory Bo kept.
    let (_, again) = chat.server.post("/api/sessions", Some(&bo_token), json!({})).await;
    let again = again["id"].as_str().unwrap().to_owned();
    let second = format!("Bo plays chess on Sundays {by_model}x.");
    chat.model.push(remember(&second, "shared", json!({ "kind": "self" })));
    chat.model.push(Reply::text("Kept."));
    chat.server.post(&format!("/api/sessions/{again}/messages"), Some(&bo_token), json!({ "text": "chess" })).await;
    let card = loop {
        let (_, inbox) = chat.server.call(Method::GET, "/api/inbox", Some(&bo_token), None).await;
        if let Some(card) = inbox.as_array().unwrap().first() {
            break card.clone();
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    };
    chat.server
        .post(&format!("/api/inbox/{}", card["id"].as_str().unwrap()), Some(&bo_token), json!({ "decision": "allow" }))
        .await;
    super::finished(&chat.server, &bo_token, &again, super::WAIT).await;
    let (status, _) = chat.server.post("/api/lock", Some(&bo_token), json!({})).await;
    assert_eq!(status, 204);
    let (status, erased) =
        chat.server.post("/api/memories/erase", Some(&chat.token), json!({ "subject": about_bo })).await;
    assert_eq!(status, 200, "{erased}");
    assert_eq!(erased, json!({ "erased": 2, "queued": 1 }), "the shared one and Ada's gift idea; Bo's file is locked");

    // No copy of an erased sentence is left in the shared database, its WAL or the logs.
    let sandbox = chat.server.stop("TERM");
    let mut files = Vec::new();
    crate::support::files_under(&sandbox.data_dir(), &[], &mut files);
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_default();
        for erased in [&by_model, &by_ada, &gift, &own] {
            assert!(!bytes.windows(erased.len()).any(|w| w == erased.as_bytes()), "{erased} in {}", file.display());
        }
    }

    // At Bo's next unlock the queued redaction is applied in his file.
    let server = Server::start_in(sandbox);
    let (status, login) = server.post("/api/login", None, json!({ "name": "Bo", "password": BO_PASSWORD })).await;
    assert_eq!(status, 200, "{login}");
    let bo_token = login["token"].as_str().unwrap();
    let text = serde_json::to_string(&history(&server, bo_token, &again).await).unwrap();
    assert!(!text.contains(&second) && text.contains("[erased memory]"), "{text}");
    let (_, ada) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert!(memories(&server, ada["token"].as_str().unwrap(), "").await.is_empty());
}

#[tokio::test]
async fn the_sweep_deletes_an_expired_memory_but_not_a_pinned_one() {
    let chat = Chat::start().await;
    for (text, pinned) in [("The boiler is serviced every October.", false), ("The spare key is with Kim.", true)] {
        let body = json!({ "text": text, "pool": "shared", "subject": { "kind": "instance" }, "pinned": pinned });
        let (status, created) = chat.server.post("/api/memories", Some(&chat.token), body).await;
        assert_eq!(status, 201, "{created}");
    }
    let private =
        json!({ "text": "Ada's library card expires in May.", "pool": "private", "subject": { "kind": "self" } });
    chat.server.post("/api/memories", Some(&chat.token), private).await;
    assert_eq!(memories(&chat.server, &chat.token, "").await.len(), 3);

    let mut sandbox = chat.server.stop("TERM");
    let later = time::OffsetDateTime::now_utc() + time::Duration::days(91);
    let later = later.format(&time::format_description::well_known::Rfc3339).unwrap();
    sandbox.env.push(("SKALD_DEBUG_NOW".into(), later));
    let server = Server::start_in(sandbox);
    let (_, login) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let left = memories(&server, login["token"].as_str().unwrap(), "").await;
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["text"], "The spare key is with Kim.");
    assert_eq!(left[0]["pinned"], true);
    assert!(left[0]["expires_at"].is_null());
}

#[tokio::test]
async fn the_memory_routes_check_their_input_and_who_may_change_what() {
    let chat = Chat::start().await;
    let (_, bo_token) = add_bo(&chat).await;
    let bad = [
        json!({ "text": "One. Two words here.", "pool": "private", "subject": { "kind": "self" } }),
        json!({ "text": "x", "pool": "elsewhere", "subject": { "kind": "self" } }),
        json!({ "text": "x", "pool": "private", "subject": { "kind": "member", "id": "nobody" } }),
    ];
    for body in bad {
        let (status, refused) = chat.server.post("/api/memories", Some(&chat.token), body.clone()).await;
        assert_eq!(status, 400, "{body} → {refused}");
        assert!(refused["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{refused}");
    }
    let body = json!({ "text": "The router restarts at 4 am.", "pool": "shared", "subject": { "kind": "instance" } });
    let (_, created) = chat.server.post("/api/memories", Some(&chat.token), body).await;
    let path = format!("/api/memories/{}", created["id"].as_str().unwrap());
    let (status, _) =
        chat.server.call(Method::PATCH, &path, Some(&bo_token), Some(json!({ "text": "Bo was here." }))).await;
    assert_eq!(status, 403, "Bo may not edit a shared memory Ada kept");
    let (status, _) = chat.server.call(Method::DELETE, &path, Some(&bo_token), None).await;
    assert_eq!(status, 403, "nor erase one not about him");
    let (status, pinned) =
        chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(json!({ "pinned": true }))).await;
    assert_eq!(status, 200, "{pinned}");
    assert!(pinned["expires_at"].is_null());
    let found = memories(&chat.server, &bo_token, "?q=router").await;
    assert_eq!(found.len(), 1);
    let (status, _) = chat.server.call(Method::DELETE, &path, Some(&chat.token), None).await;
    assert_eq!(status, 204);
    assert!(memories(&chat.server, &bo_token, "?q=router").await.is_empty());
    let (status, _) = chat.server.call(Method::DELETE, &path, Some(&chat.token), None).await;
    assert_eq!(status, 404);

    // A private memory is shared by its owner's choice, and never goes back.
    let body = json!({ "text": "Ada plays the cello.", "pool": "private", "subject": { "kind": "self" } });
    let (_, created) = chat.server.post("/api/memories", Some(&chat.token), body).await;
    let path = format!("/api/memories/{}", created["id"].as_str().unwrap());
    assert!(memories(&chat.server, &bo_token, "?q=cello").await.is_empty(), "private until shared");
    let (status, shared) =
        chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(json!({ "pool": "shared" }))).await;
    assert_eq!(status, 200, "{shared}");
    assert_eq!(shared["pool"], "shared");
    let seen = memories(&chat.server, &bo_token, "?q=cello").await;
    assert_eq!(seen.len(), 1, "Bo now reads it");
    assert_eq!(seen[0]["subject"]["id"], shared["owner"], "about Ada, by id");
    assert_eq!(memories(&chat.server, &chat.token, "?pool=private").await.len(), 0, "no copy stays private");
    let (status, _) =
        chat.server.call(Method::PATCH, &path, Some(&chat.token), Some(json!({ "pool": "private" }))).await;
    assert_eq!(status, 400);
}

fn rand_bytes() -> [u8; 8] {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).unwrap();
    bytes
}

#[tokio::test]
async fn with_memory_off_the_memory_tools_are_not_offered() {
    let chat = Chat::start().await;
    let offered = |body: &Value| -> Vec<String> {
        body["tools"].as_array().map_or_else(Vec::new, |tools| {
            tools.iter().map(|t| t["function"]["name"].as_str().unwrap_or_default().to_owned()).collect()
        })
    };
    chat.model.push(Reply::text("Hello."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "hi").await;
    chat.finished(&session).await;
    let on = offered(&chat.model.requests().last().unwrap().body);
    for tool in ["remember", "recall", "forget"] {
        assert!(on.iter().any(|t| t == tool), "{tool} is offered while memory is on: {on:?}");
    }

    let (status, _) = chat
        .server
        .call(Method::PUT, "/api/me/settings/memory", Some(&chat.token), Some(json!({ "value": "off" })))
        .await;
    assert_eq!(status, 204);
    chat.model.push(Reply::text("Hello again."));
    chat.send(&session, "hi again").await;
    chat.finished(&session).await;
    let off = offered(&chat.model.requests().last().unwrap().body);
    assert!(!off.is_empty(), "other tools are still offered");
    assert!(!off.iter().any(|t| ["remember", "recall", "forget"].contains(&t.as_str())), "{off:?}");
}

#[tokio::test]
async fn a_temporary_chat_neither_reads_nor_writes_memories_and_goes_when_left() {
    let chat = Chat::start().await;
    let body =
        json!({ "text": "Ada drinks green tea every morning.", "pool": "private", "subject": { "kind": "self" } });
    let (status, _) = chat.server.post("/api/memories", Some(&chat.token), body).await;
    assert_eq!(status, 201);
    let kept = chat.new_session(json!({})).await;

    let (status, temporary) = chat.server.post("/api/sessions", Some(&chat.token), json!({ "temporary": true })).await;
    assert_eq!((status, &temporary["temporary"]), (201, &json!(true)), "{temporary}");
    let id = temporary["id"].as_str().unwrap().to_owned();
    chat.model.push(Reply::text("Any tea you like."));
    chat.send(&id, "Which tea should I make this morning?").await;
    let history = chat.finished(&id).await;
    assert_eq!(history.len(), 2, "no recall is read in: {history:?}");
    let request = chat.model.requests().pop().unwrap();
    assert!(!request.raw.contains("green tea every morning"), "{}", request.raw);
    let tools: Vec<&str> = request.body["tools"]
        .as_array()
        .map_or_else(Vec::new, |tools| tools.iter().filter_map(|t| t["function"]["name"].as_str()).collect());
    assert!(!tools.iter().any(|t| ["remember", "recall", "forget"].contains(t)), "{tools:?}");
    let (_, listed) = chat.server.call(Method::GET, "/api/sessions", Some(&chat.token), None).await;
    let listed: Vec<&str> = listed.as_array().unwrap().iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(listed, [kept.as_str()], "a temporary chat is not listed");

    // Locking deletes it; the kept conversation stays.
    let (status, _) = chat.server.call(Method::POST, "/api/lock", Some(&chat.token), None).await;
    assert_eq!(status, 204);
    let (status, login) = chat.server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 200, "{login}");
    let token = login["token"].as_str().unwrap();
    let (status, _) = chat.server.call(Method::GET, &format!("/api/sessions/{id}"), Some(token), None).await;
    assert_eq!(status, 404, "the temporary chat is gone");
    let (status, _) = chat.server.call(Method::GET, &format!("/api/sessions/{kept}"), Some(token), None).await;
    assert_eq!(status, 200);

    // Left mid-reply (the page closing), it is deleted all the same: its turn is stopped.
    let (_, busy) = chat.server.post("/api/sessions", Some(token), json!({ "temporary": true })).await;
    let busy = busy["id"].as_str().unwrap().to_owned();
    chat.model.push(Reply { tokens: Some(400), delay_ms: 15, ..Reply::default() });
    let path = format!("/api/sessions/{busy}/messages");
    assert_eq!(chat.server.post(&path, Some(token), json!({ "text": "Tell me a long story." })).await.0, 202);
    let (status, deleted) = chat.server.call(Method::DELETE, &format!("/api/sessions/{busy}"), Some(token), None).await;
    assert_eq!(status, 204, "{deleted}");
    let (status, _) = chat.server.call(Method::GET, &format!("/api/sessions/{busy}"), Some(token), None).await;
    assert_eq!(status, 404);

    // One a window left open when the server stopped goes at the next unlock.
    let (_, left) = chat.server.post("/api/sessions", Some(token), json!({ "temporary": true })).await;
    let left = left["id"].as_str().unwrap().to_owned();
    let (status, _) = chat.server.call(Method::POST, "/api/logout", Some(token), None).await;
    assert_eq!(status, 204);
    let (_, login) = chat.server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let token = login["token"].as_str().unwrap();
    let (status, _) = chat.server.call(Method::GET, &format!("/api/sessions/{left}"), Some(token), None).await;
    assert_eq!(status, 404, "the temporary chat left behind is gone");
}

#[tokio::test]
async fn what_bears_on_a_message_is_read_in_as_a_recorded_recall_and_the_request_rebuilds() {
    let chat = Chat::start().await;
    let body =
        json!({ "text": "Ada drinks green tea every morning.", "pool": "private", "subject": { "kind": "self" } });
    let (status, kept) = chat.server.post("/api/memories", Some(&chat.token), body).await;
    assert_eq!(status, 201, "{kept}");
    let id = kept["id"].as_str().unwrap();
    let (_, recall) = chat
        .server
        .call(Method::GET, "/api/memories/recall?q=which%20tea%20for%20the%20morning", Some(&chat.token), None)
        .await;
    assert_eq!(recall.as_array().unwrap().len(), 1, "{recall}");
    assert!(recall[0]["score"].as_f64().unwrap() > 0.5);

    chat.model.push(Reply::text("Green tea, as always."));
    chat.model.push(Reply::text("Paris."));
    let session = chat.new_session(json!({})).await;
    chat.send(&session, "Which tea should I make this morning?").await;
    chat.finished(&session).await;
    chat.send(&session, "What is the capital of France?").await;
    let history = chat.finished(&session).await;

    let roles: Vec<&str> = history.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user", "assistant"], "{history:?}");
    assert_eq!(history[1]["tool_calls"][0]["name"], "recall");
    assert!(history[2]["text"].as_str().unwrap().contains(id), "{}", history[2]);
    let first = &chat.model.requests()[0].body;
    let messages = first["messages"].as_array().unwrap();
    let system_prompt = &messages[0];
    assert!(!system_prompt.to_string().contains("green tea"), "the system prompt stays the same bytes");
    assert!(messages.last().unwrap()["content"].as_str().unwrap().contains("Ada drinks green tea"), "{messages:?}");
    let second = &chat.model.requests()[1].body;
    assert_eq!(&second["messages"][0], system_prompt);
    assert_eq!(second["messages"].as_array().unwrap().len(), messages.len() + 2, "nothing recalled for Paris");

    let sent: Vec<String> = chat.model.requests().iter().map(|r| r.raw.clone()).collect();
    let (_, records) =
        chat.server.call(Method::GET, &format!("/api/sessions/{session}/requests"), Some(&chat.token), None).await;
    for (record, original) in records.as_array().unwrap().iter().zip(&sent) {
        let path = format!("/api/sessions/{session}/requests/{}/rebuild", record["id"]);
        let (status, rebuilt) = chat.server.call(Method::GET, &path, Some(&chat.token), None).await;
        assert_eq!(status, 200, "{rebuilt}");
        assert_eq!(rebuilt["raw"].as_str().unwrap(), original, "request {} rebuilt differently", record["id"]);
        assert_eq!(rebuilt["redacted"], false);
    }
}

#[tokio::test]
async fn removing_a_person_erases_what_is_remembered_about_them_in_every_pool() {
    let chat = Chat::start().await;
    let (bo, _) = add_bo(&chat).await;
    let about_bo = json!({ "kind": "member", "id": bo });
    for pool in ["private", "shared"] {
        let body = json!({ "text": format!("Bo likes {pool} jokes."), "pool": pool, "subject": about_bo });
        assert_eq!(chat.server.post("/api/memories", Some(&chat.token), body).await.0, 201);
    }
    let body = json!({ "text": "The heating comes on at six.", "pool": "shared", "subject": { "kind": "instance" } });
    chat.server.post("/api/memories", Some(&chat.token), body).await;
    let (status, _) = chat
        .server
        .call(Method::DELETE, &format!("/api/users/{bo}"), Some(&chat.token), Some(json!({ "confirm": "Bo" })))
        .await;
    assert_eq!(status, 204);
    let left = memories(&chat.server, &chat.token, "").await;
    assert_eq!(left.len(), 2, "the shared memory about Bo went at once: {left:?}");

    // Ada's own file is cleared of him at her next unlock.
    let (_, login) = chat.server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let left = memories(&chat.server, login["token"].as_str().unwrap(), "").await;
    let texts: Vec<&str> = left.iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["The heating comes on at six."]);
}
