//! What a person accepted (§3): an administrator's change that widens where a member's
//! words go or what runs without asking holds the member's next turn behind a notice —
//! made through the API or in the files while Skald was stopped — and nothing reaches a
//! provider until the member decides.

use reqwest::Method;
use scripted_model::{Reply, ScriptedModel};
use serde_json::{Value, json};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};

use super::{Chat, PASSWORD};
use crate::support::Server;

const BO_PASSWORD: &str = "maple harbour seventeen";

async fn add(chat: &Chat, name: &str, role: &str) -> String {
    let (_, added) = chat.server.post("/api/users", Some(&chat.token), json!({ "name": name, "role": role })).await;
    let enrol = json!({ "name": name, "enrolment_code": added["enrolment_code"], "password": BO_PASSWORD });
    let (status, enrolled) = chat.server.post("/api/enrol", None, enrol).await;
    assert_eq!(status, 201, "{enrolled}");
    enrolled["token"].as_str().unwrap().to_owned()
}

/// Sends a message in a new conversation; the status and body.
async fn try_send(server: &Server, token: &str, text: &str) -> (u16, Value, String) {
    let (status, session) = server.post("/api/sessions", Some(token), json!({})).await;
    assert_eq!(status, 201, "{session}");
    let id = session["id"].as_str().unwrap().to_owned();
    let (status, body) =
        server.post(&format!("/api/sessions/{id}/messages"), Some(token), json!({ "text": text })).await;
    (status, body, id)
}

async fn notices(server: &Server, token: &str) -> Vec<Value> {
    let (status, body) = server.call(Method::GET, "/api/notices", Some(token), None).await;
    assert_eq!(status, 200, "{body}");
    body.as_array().unwrap().clone()
}

fn holding(notices: &[Value]) -> Vec<&Value> {
    notices.iter().filter(|n| n["holds"] == true).collect()
}

async fn decide(server: &Server, token: &str, id: &Value, decision: &str) -> (u16, Value) {
    server.post(&format!("/api/notices/{id}/accept"), Some(token), json!({ "decision": decision })).await
}

async fn provider_id(chat: &Chat, name: &str) -> String {
    let (_, providers) = chat.server.call(Method::GET, "/api/providers", Some(&chat.token), None).await;
    let provider = providers.as_array().unwrap().iter().find(|p| p["name"] == name).unwrap();
    provider["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_moved_provider_holds_the_next_turn_until_the_member_continues() {
    let chat = Chat::start().await;
    let bo = add(&chat, "Bo", "member").await;
    let capture = ScriptedModel::start().await;
    let id = provider_id(&chat, "scripted").await;
    let moved = json!({ "base_url": capture.openai_base() });
    let (status, body) =
        chat.server.call(Method::PATCH, &format!("/api/providers/{id}"), Some(&chat.token), Some(moved)).await;
    assert_eq!(status, 204, "{body}");

    let (status, refused, _) = try_send(&chat.server, &bo, "my words").await;
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("held")), "{refused}");
    assert_eq!(capture.request_count(), 0, "nothing reaches the moved address before Bo decides");
    let all = notices(&chat.server, &bo).await;
    let held = holding(&all);
    assert_eq!(held.len(), 1, "{all:?}");
    let body = &held[0]["body"];
    assert!(body["what"].as_str().unwrap().contains(&capture.openai_base()), "{body}");
    assert_eq!((body["changed_by"]["name"].as_str(), body["outside_skald"].as_bool()), (Some("Ada"), Some(false)));
    // Marking everything seen does not release a hold.
    let upto = all.last().unwrap()["id"].clone();
    chat.server.post("/api/notices/seen", Some(&bo), json!({ "upto": upto })).await;
    assert_eq!(holding(&notices(&chat.server, &bo).await).len(), 1);
    // Ada, who made the change, is not held.
    capture.push(Reply::text("Hello Ada"));
    let (status, _, session) = try_send(&chat.server, &chat.token, "Ada's words").await;
    assert_eq!(status, 202);
    super::finished(&chat.server, &chat.token, &session, super::WAIT).await;

    capture.push(Reply::text("Hello Bo"));
    let (status, decided) = decide(&chat.server, &bo, &held[0]["id"], "accept").await;
    assert_eq!((status, decided["holds_remaining"].as_u64()), (200, Some(0)), "{decided}");
    let before = capture.request_count();
    let (status, body, session) = try_send(&chat.server, &bo, "my words").await;
    assert_eq!(status, 202, "{body}");
    super::finished(&chat.server, &bo, &session, super::WAIT).await;
    assert_eq!(capture.request_count(), before + 1);
    assert!(holding(&notices(&chat.server, &bo).await).is_empty());
}

#[tokio::test]
async fn a_role_edit_and_a_new_allow_rule_hold_and_a_decline_keeps_them_out_of_force() {
    let chat = Chat::start().await;
    let capture = ScriptedModel::start().await;
    let only_scripted = json!({ "allowed_models": ["scripted/*"] });
    chat.server.call(Method::PATCH, "/api/roles/member", Some(&chat.token), Some(only_scripted)).await;
    let other = json!({ "name": "elsewhere", "kind": "openai", "base_url": capture.openai_base() });
    let (status, body) = chat.server.post("/api/providers", Some(&chat.token), other).await;
    assert_eq!(status, 201, "{body}");
    let bo = add(&chat, "Bo", "member").await;

    // Ada widens Bo's role to every model, and lets every tool run without a card.
    let everything = json!({ "allowed_models": ["*"] });
    let (status, body) =
        chat.server.call(Method::PATCH, "/api/roles/member", Some(&chat.token), Some(everything)).await;
    assert_eq!(status, 200, "{body}");
    let rule = json!({ "tool": "*", "effect": "allow", "priority": 1 });
    let (status, body) = chat.server.post("/api/approval-rules", Some(&chat.token), rule).await;
    assert_eq!(status, 201, "{body}");

    let (status, refused, _) = try_send(&chat.server, &bo, "hello").await;
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("held")), "{refused}");
    assert_eq!(capture.request_count() + chat.model.request_count(), 0);
    let all = notices(&chat.server, &bo).await;
    let held = holding(&all);
    let keys: Vec<&str> = held.iter().map(|n| n["body"]["key"].as_str().unwrap()).collect();
    assert!(keys.contains(&"role.allowed_models"), "{keys:?}");
    assert!(keys.iter().any(|k| k.starts_with("provider.")), "the newly allowed provider: {keys:?}");
    assert!(keys.iter().any(|k| k.starts_with("rule.")), "the new allow rule: {keys:?}");
    assert!(held.iter().all(|n| n["body"]["changed_by"]["name"] == "Ada"), "{held:?}");

    // Bo's audit names the role change, with what changed.
    let (_, audit) = chat.server.call(Method::GET, "/api/me/audit", Some(&bo), None).await;
    let entry = audit.as_array().unwrap().iter().find(|e| e["action"] == "role.updated").expect("role.updated");
    assert_eq!(entry["subject_name"], "Bo");
    assert_eq!(entry["detail"]["changed"]["allowed_models"]["to"], json!(["*"]), "{entry}");
    assert!(audit.as_array().unwrap().iter().any(|e| e["action"] == "approval_rule.added"), "{audit}");

    // Bo declines all three: turns go on, as before the changes.
    for notice in &held {
        let (status, body) = decide(&chat.server, &bo, &notice["id"], "decline").await;
        assert_eq!(status, 200, "{body}");
    }
    chat.model.push(Reply::text("Still here"));
    let (status, body, session) = try_send(&chat.server, &bo, "hello").await;
    assert_eq!(status, 202, "{body}");
    super::finished(&chat.server, &bo, &session, super::WAIT).await;
    assert_eq!(capture.request_count(), 0, "the declined provider is not used");
    assert!(holding(&notices(&chat.server, &bo).await).is_empty(), "a declined change is not asked again");
    // The declined provider's models are not offered, nor named as the next turn's, and
    // cannot be pinned.
    let (_, models) = chat.server.call(Method::GET, "/api/models", Some(&bo), None).await;
    assert!(models.as_array().unwrap().iter().all(|m| m["provider"] == "scripted"), "{models}");
    let (_, fresh) = chat.server.post("/api/sessions", Some(&bo), json!({})).await;
    let (_, shown) = chat
        .server
        .call(Method::GET, &format!("/api/sessions/{}", fresh["id"].as_str().unwrap()), Some(&bo), None)
        .await;
    assert_eq!(shown["next_model"]["provider"], "scripted", "{shown}");
    let pin = json!({ "model": "elsewhere/scripted-fast" });
    let (status, refused) = chat.server.post("/api/sessions", Some(&bo), pin.clone()).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("declined")), "{refused}");
    let (_, session) = chat.server.post("/api/sessions", Some(&bo), json!({})).await;
    let path = format!("/api/sessions/{}/messages", session["id"].as_str().unwrap());
    let session_path = format!("/api/sessions/{}", session["id"].as_str().unwrap());
    let (status, _) = chat.server.call(Method::PATCH, &session_path, Some(&bo), Some(pin.clone())).await;
    assert_eq!(status, 403);
    assert_eq!(capture.request_count(), 0);

    // Declined changes stay listed, not holding, and can still be accepted.
    let all = notices(&chat.server, &bo).await;
    let declined: Vec<&Value> = all.iter().filter(|n| n["kind"] == "declined_change").collect();
    assert_eq!(declined.len(), 3, "{all:?}");
    let provider = declined.iter().find(|n| n["body"]["key"].as_str().unwrap().starts_with("provider.")).unwrap();
    assert_eq!(decide(&chat.server, &bo, &provider["id"], "accept").await.0, 200);
    let models = declined.iter().find(|n| n["body"]["key"] == "role.allowed_models").unwrap();
    assert_eq!(decide(&chat.server, &bo, &models["id"], "accept").await.0, 200);
    capture.push(Reply::text("From elsewhere"));
    let (status, body) = chat.server.call(Method::PATCH, &session_path, Some(&bo), Some(pin)).await;
    assert_eq!(status, 204, "{body}");
    let (status, body) = chat.server.post(&path, Some(&bo), json!({ "text": "hello" })).await;
    assert_eq!(status, 202, "{body}");
    super::finished(&chat.server, &bo, session["id"].as_str().unwrap(), super::WAIT).await;
    assert_eq!(capture.request_count(), 1, "accepted at last, the provider is used");
}

#[tokio::test]
async fn changes_made_in_the_files_while_skald_is_stopped_hold_and_are_named_outside_skald() {
    let chat = Chat::start().await;
    let kim = add(&chat, "Kim", "restricted").await;
    chat.model.push(Reply::text("Hi Kim"));
    let (status, _, session) = try_send(&chat.server, &kim, "before").await;
    assert_eq!(status, 202);
    super::finished(&chat.server, &kim, &session, super::WAIT).await;
    let capture = ScriptedModel::start().await;
    let Chat { server, model, .. } = chat;
    let sandbox = server.stop("TERM");

    // The tempted administrator edits the shared database directly.
    let db = sandbox.data_dir().join("database/system.db");
    let pool = SqlitePool::connect_with(SqliteConnectOptions::new().filename(&db)).await.unwrap();
    for edit in [
        format!("UPDATE providers SET base_url = '{}', trusted_lan = 1", capture.openai_base()),
        "UPDATE roles SET privacy_tier = 'any' WHERE id = 'restricted'".to_owned(),
        "INSERT INTO approval_rules (tool, args, role_id, effect, priority, created_by, created_at)
         VALUES ('*', NULL, NULL, 'allow', 1, 'Skald (preset)', '2026-01-01T00:00:00Z')"
            .to_owned(),
        "DELETE FROM audit".to_owned(),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(edit)).execute(&pool).await.unwrap();
    }
    pool.close().await;
    let (passed, report) = crate::verify::verify(&sandbox);
    assert!(!passed, "{report}");
    assert!(report.contains("audit trail was altered outside Skald"), "{report}");
    assert!(report.contains("Not checked without a person's key"), "{report}");

    let server = Server::start_in(sandbox);
    let (status, login) = server.post("/api/login", None, json!({ "name": "Kim", "password": BO_PASSWORD })).await;
    assert_eq!(status, 200, "{login}");
    let kim = login["token"].as_str().unwrap();
    let (status, refused, _) = try_send(&server, kim, "after").await;
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("held")), "{refused}");
    assert_eq!(capture.request_count(), 0);
    let all = notices(&server, kim).await;
    let held = holding(&all);
    let keys: Vec<&str> = held.iter().map(|n| n["body"]["key"].as_str().unwrap()).collect();
    assert!(keys.contains(&"role.privacy_tier"), "{keys:?}");
    assert!(keys.iter().any(|k| k.starts_with("provider.")), "{keys:?}");
    assert!(keys.iter().any(|k| k.starts_with("rule.")), "{keys:?}");
    for notice in &held {
        assert_eq!(notice["body"]["outside_skald"], true, "{notice}");
        assert!(notice["body"]["changed_by"].is_null(), "{notice}");
    }
    // The administrator is held as well: nothing in the audit says they made these.
    let (_, login) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORD })).await;
    let ada = login["token"].as_str().unwrap();
    let (status, _, _) = try_send(&server, ada, "mine").await;
    assert_eq!(status, 409);
    assert_eq!((capture.request_count(), model.request_count()), (0, 1));
}

#[tokio::test]
async fn a_narrowing_change_applies_at_once_and_is_shown() {
    let chat = Chat::start().await;
    let bo = add(&chat, "Bo", "member").await;
    let narrower = json!({ "privacy_tier": "local_only" });
    let (status, _) = chat.server.call(Method::PATCH, "/api/roles/member", Some(&chat.token), Some(narrower)).await;
    assert_eq!(status, 200);
    chat.model.push(Reply::text("ok"));
    let (status, body, session) = try_send(&chat.server, &bo, "hello").await;
    assert_eq!(status, 202, "{body}");
    super::finished(&chat.server, &bo, &session, super::WAIT).await;
    let all = notices(&chat.server, &bo).await;
    assert!(holding(&all).is_empty(), "{all:?}");
    let applied: Vec<&Value> = all.iter().filter(|n| n["kind"] == "change_applied").collect();
    assert_eq!(applied.len(), 1, "{all:?}");
    assert_eq!(applied[0]["body"]["key"], "role.privacy_tier");
    assert_eq!(applied[0]["body"]["changed_by"]["name"], "Ada");
}
