//! The approval gate's shared rules over the real API (§8.4): seeded presets, and only
//! administrators change them, each change audited.

use reqwest::Method;
use serde_json::json;

use crate::support::Server;

#[tokio::test]
async fn administrators_list_add_reorder_and_delete_rules_and_nobody_else_can() {
    let server = Server::start();
    let (_, setup) =
        server.post("/api/setup", None, json!({ "name": "Ada", "password": "otter lantern quietly" })).await;
    let admin = setup["token"].as_str().unwrap().to_owned();

    let (status, rules) = server.call(Method::GET, "/api/approval-rules", Some(&admin), None).await;
    assert_eq!(status, 200);
    let rules = rules.as_array().unwrap().clone();
    let effect_of = |tool: &str| rules.iter().find(|r| r["tool"] == tool).map(|r| r["effect"].clone());
    assert_eq!(effect_of("note_read"), Some(json!("allow")), "reads allow");
    assert_eq!(effect_of("note_write"), Some(json!("require")), "writes require");
    assert_eq!(effect_of("web_fetch"), Some(json!("require")));
    let last = rules.last().unwrap();
    assert_eq!((&last["tool"], &last["effect"]), (&json!("*"), &json!("require")), "the catch-all is weighed last");

    let rule = json!({ "tool": "note_write", "role": "member", "effect": "deny", "priority": 5 });
    let (status, added) = server.post("/api/approval-rules", Some(&admin), rule).await;
    assert_eq!(status, 201, "{added}");
    let id = added["id"].as_i64().unwrap();
    let moved = json!({ "tool": "note_write", "role": "member", "effect": "deny", "priority": 2000 });
    let path = format!("/api/approval-rules/{id}");
    assert_eq!(server.call(Method::PUT, &path, Some(&admin), Some(moved)).await.0, 204);
    let (_, rules) = server.call(Method::GET, "/api/approval-rules", Some(&admin), None).await;
    assert_eq!(rules.as_array().unwrap().last().unwrap()["id"], id, "a new priority reorders");

    for bad in [
        json!({ "tool": "", "effect": "allow", "priority": 1 }),
        json!({ "tool": "note_write", "effect": "maybe", "priority": 1 }),
        json!({ "tool": "note_write", "effect": "allow", "priority": -1 }),
        json!({ "tool": "note_write", "effect": "allow", "priority": 1, "role": "nobody" }),
        json!({ "tool": "note_write", "effect": "allow", "priority": 1, "extra": true }),
    ] {
        let (status, body) = server.post("/api/approval-rules", Some(&admin), bad.clone()).await;
        assert_eq!(status, 400, "{bad} → {body}");
    }

    // A member may not touch them.
    let (_, added) = server.post("/api/users", Some(&admin), json!({ "name": "Bo", "role": "member" })).await;
    let code = added["enrolment_code"].as_str().unwrap();
    let enrol = json!({ "name": "Bo", "enrolment_code": code, "password": "maple harbour seventeen" });
    let (_, enrolled) = server.post("/api/enrol", None, enrol).await;
    let bo = enrolled["token"].as_str().unwrap();
    assert_eq!(server.call(Method::GET, "/api/approval-rules", Some(bo), None).await.0, 403);
    assert_eq!(server.call(Method::DELETE, &path, Some(bo), None).await.0, 403);

    assert_eq!(server.call(Method::DELETE, &path, Some(&admin), None).await.0, 204);
    assert_eq!(server.call(Method::DELETE, &path, Some(&admin), None).await.0, 404);
    let (_, audit) = server.call(Method::GET, "/api/audit", Some(&admin), None).await;
    let actions: Vec<&str> = audit.as_array().unwrap().iter().filter_map(|e| e["action"].as_str()).collect();
    for action in ["approval_rule.added", "approval_rule.changed", "approval_rule.deleted"] {
        assert!(actions.contains(&action), "{action} in {actions:?}");
    }
}

#[tokio::test]
async fn presets_are_seeded_once_and_rules_an_administrator_deleted_stay_deleted() {
    let server = Server::start();
    let (_, setup) =
        server.post("/api/setup", None, json!({ "name": "Ada", "password": "otter lantern quietly" })).await;
    let admin = setup["token"].as_str().unwrap().to_owned();
    let (_, rules) = server.call(Method::GET, "/api/approval-rules", Some(&admin), None).await;
    for rule in rules.as_array().unwrap() {
        let path = format!("/api/approval-rules/{}", rule["id"]);
        assert_eq!(server.call(Method::DELETE, &path, Some(&admin), None).await.0, 204);
    }
    let server = Server::start_in(server.stop("TERM"));
    let (_, login) =
        server.post("/api/login", None, json!({ "name": "Ada", "password": "otter lantern quietly" })).await;
    let admin = login["token"].as_str().unwrap();
    let (_, rules) = server.call(Method::GET, "/api/approval-rules", Some(admin), None).await;
    assert_eq!(rules, json!([]), "no preset came back");
}
