//! Administration over the real API: the role check on every administrator route, people
//! management with the last-administrator guard, roles as editable data, and the audit
//! trail each person can read about themselves.

use reqwest::Method;
use serde_json::{Value, json};
use skald::http::auth::Access;
use skald::http::routes;

use crate::support::Server;

const ADMIN_PW: &str = "otter lantern quietly";
const MEMBER_PW: &str = "maple harbour seventeen";

struct Instance {
    server: Server,
    admin: String,
    admin_id: String,
    member: String,
    member_id: String,
}

async fn instance() -> Instance {
    let server = Server::start();
    let (_, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": ADMIN_PW })).await;
    let admin = setup["token"].as_str().unwrap().to_owned();
    let admin_id = setup["user"]["id"].as_str().unwrap().to_owned();
    let (_, added) = server.post("/api/users", Some(&admin), json!({ "name": "Bo", "role": "member" })).await;
    let code = added["enrolment_code"].as_str().unwrap();
    let (status, enrolled) =
        server.post("/api/enrol", None, json!({ "name": "Bo", "enrolment_code": code, "password": MEMBER_PW })).await;
    assert_eq!(status, 201);
    let member = enrolled["token"].as_str().unwrap().to_owned();
    let member_id = enrolled["user"]["id"].as_str().unwrap().to_owned();
    Instance { server, admin, admin_id, member, member_id }
}

#[tokio::test]
async fn a_non_administrator_gets_403_on_every_administrator_route() {
    let it = instance().await;
    let admin_routes: Vec<_> = routes::table().into_iter().filter(|r| r.access == Access::Admin).collect();
    assert!(admin_routes.len() >= 10, "the table marks the administrator routes");
    for route in admin_routes {
        let path = route.path.replace("{id}", &it.admin_id);
        let (status, body) = it.server.call(route.method.clone(), &path, Some(&it.member), Some(json!({}))).await;
        assert_eq!(status, 403, "{} {path}: {body}", route.method);
        assert_eq!(body["error"]["code"], "admin_only");
    }
    // And nothing changed: Ada is still the administrator.
    let (_, me) = it.server.call(Method::GET, "/api/me", Some(&it.admin), None).await;
    assert_eq!(me["user"]["role"], "admin");
}

#[tokio::test]
async fn deactivating_a_logged_in_person_ends_their_session_at_once() {
    let it = instance().await;
    let (status, _) = it.server.call(Method::GET, "/api/me", Some(&it.member), None).await;
    assert_eq!(status, 200);
    let path = format!("/api/users/{}/deactivate", it.member_id);
    let (status, body) = it.server.call(Method::POST, &path, Some(&it.admin), None).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("deactivated")));
    assert_eq!(it.server.call(Method::GET, "/api/me", Some(&it.member), None).await.0, 401);
    let (status, _) = it.server.post("/api/login", None, json!({ "name": "Bo", "password": MEMBER_PW })).await;
    assert_eq!(status, 401, "a deactivated person cannot log in");
    let (_, picker) = it.server.call(Method::GET, "/api/users", None, None).await;
    assert!(!picker.to_string().contains("\"Bo\""), "and is not on the picker");
    let path = format!("/api/users/{}/reactivate", it.member_id);
    assert_eq!(it.server.call(Method::POST, &path, Some(&it.admin), None).await.0, 200);
    let (status, _) = it.server.post("/api/login", None, json!({ "name": "Bo", "password": MEMBER_PW })).await;
    assert_eq!(status, 200, "their space opens again, unchanged");
}

#[tokio::test]
async fn the_last_administrator_cannot_be_removed_or_demoted() {
    let it = instance().await;
    let me = format!("/api/users/{}", it.admin_id);
    let attempts = [
        (Method::PATCH, me.clone(), json!({ "role": "member" })),
        (Method::POST, format!("{me}/deactivate"), json!({})),
        (Method::DELETE, me.clone(), json!({ "confirm": "Ada" })),
        (Method::PATCH, "/api/roles/admin".to_owned(), json!({ "manage_instance": false })),
    ];
    for (method, path, body) in &attempts {
        let (status, answer) = it.server.call(method.clone(), path, Some(&it.admin), Some(body.clone())).await;
        assert_eq!((status, answer["error"]["code"].as_str()), (409, Some("last_admin")), "{method} {path}");
    }
    // With a second administrator, the first may step down.
    let bo = format!("/api/users/{}", it.member_id);
    assert_eq!(it.server.call(Method::PATCH, &bo, Some(&it.admin), Some(json!({ "role": "admin" }))).await.0, 200);
    let (status, body) = it.server.call(Method::PATCH, &me, Some(&it.admin), Some(json!({ "role": "member" }))).await;
    assert_eq!((status, body["role"].as_str()), (200, Some("member")));
    // The demotion takes effect on the very next request.
    assert_eq!(it.server.call(Method::GET, "/api/roles", Some(&it.admin), None).await.0, 403);
}

#[tokio::test]
async fn a_person_sees_the_audit_entries_about_them() {
    let it = instance().await;
    let bo = format!("/api/users/{}", it.member_id);
    assert_eq!(it.server.call(Method::PATCH, &bo, Some(&it.admin), Some(json!({ "name": "Bodil" }))).await.0, 200);
    assert_eq!(it.server.call(Method::PATCH, &bo, Some(&it.admin), Some(json!({ "role": "restricted" }))).await.0, 200);
    let (status, entries) = it.server.call(Method::GET, "/api/me/audit", Some(&it.member), None).await;
    assert_eq!(status, 200);
    let actions: Vec<&str> = entries.as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["person.role_changed", "person.renamed", "person.added"], "newest first");
    let newest = &entries[0];
    assert_eq!(newest["actor_name"], "Ada");
    assert_eq!(newest["detail"], json!({ "from": "member", "to": "restricted" }));
    assert!(newest["at"].as_str().unwrap().starts_with("20"));
    // Ada's own trail holds nothing about Bo.
    let (_, mine) = it.server.call(Method::GET, "/api/me/audit", Some(&it.admin), None).await;
    assert!(mine.as_array().unwrap().iter().all(|e| e["subject_id"] == it.admin_id.as_str()));
    // The administrator sees the whole trail.
    let (_, all) = it.server.call(Method::GET, "/api/audit", Some(&it.admin), None).await;
    assert!(all.as_array().unwrap().len() >= 3);
}

#[tokio::test]
async fn presets_load_and_role_attributes_round_trip() {
    let it = instance().await;
    let (status, roles) = it.server.call(Method::GET, "/api/roles", Some(&it.admin), None).await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = roles.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["admin", "member", "restricted"]);
    assert_eq!(roles[2]["privacy_tier"], "local_only");
    assert_eq!(roles[0]["manage_instance"], true);

    let edit = json!({
        "label": "Guest", "tools": ["note_*", "current_time"], "max_turns": 7, "idle_timeout_minutes": 5,
        "allowed_models": ["local/*"], "preferred_strength": "fast", "usage_cap_tokens": 20000,
        "privacy_tier": "local_only", "memory_retention_days": 14, "may_schedule": false, "lock_on_close": true
    });
    let (status, edited) =
        it.server.call(Method::PATCH, "/api/roles/restricted", Some(&it.admin), Some(edit.clone())).await;
    assert_eq!(status, 200, "{edited}");
    let (_, roles) = it.server.call(Method::GET, "/api/roles", Some(&it.admin), None).await;
    let stored = roles.as_array().unwrap().iter().find(|r| r["id"] == "restricted").unwrap().clone();
    for (field, value) in edit.as_object().unwrap() {
        assert_eq!(&stored[field], value, "{field} round-trips");
    }
    let (status, _) = it
        .server
        .call(Method::PATCH, "/api/roles/restricted", Some(&it.admin), Some(json!({ "usage_cap_tokens": null })))
        .await;
    assert_eq!(status, 200);

    // Bad values are refused with the field named; unknown fields are not silently dropped.
    let (status, body) =
        it.server.call(Method::PATCH, "/api/roles/member", Some(&it.admin), Some(json!({ "max_turns": 0 }))).await;
    assert_eq!(status, 400);
    assert!(body["error"]["message"].as_str().unwrap().contains("max_turns"));
    let (status, _) =
        it.server.call(Method::PATCH, "/api/roles/member", Some(&it.admin), Some(json!({ "max_turn": 3 }))).await;
    assert_eq!(status, 400);

    // New roles are data too: create, assign, and refuse to delete while in use.
    let (status, created) = it
        .server
        .call(
            Method::POST,
            "/api/roles",
            Some(&it.admin),
            Some(json!({ "id": "lodger", "label": "Lodger", "may_approve": false })),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["may_approve"], false);
    let bo = format!("/api/users/{}", it.member_id);
    assert_eq!(it.server.call(Method::PATCH, &bo, Some(&it.admin), Some(json!({ "role": "lodger" }))).await.0, 200);
    let (status, body) = it.server.call(Method::DELETE, "/api/roles/lodger", Some(&it.admin), None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("role_in_use")));
    let (_, me) = it.server.call(Method::GET, "/api/me", Some(&it.member), None).await;
    assert_eq!(me["role"]["label"], "Lodger");
}

#[tokio::test]
async fn deleting_a_person_needs_their_name_and_destroys_their_private_file() {
    let it = instance().await;
    let file = it.server.data_dir().join(format!("database/users/{}.db", it.member_id));
    assert!(file.exists());
    let bo = format!("/api/users/{}", it.member_id);
    let (status, body) = it.server.call(Method::DELETE, &bo, Some(&it.admin), Some(json!({ "confirm": "bo" }))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("confirmation_mismatch")));
    assert!(file.exists());
    let (status, _) = it.server.call(Method::DELETE, &bo, Some(&it.admin), Some(json!({ "confirm": "Bo" }))).await;
    assert_eq!(status, 204);
    assert!(!file.exists(), "the private file is gone");
    assert_eq!(it.server.call(Method::GET, "/api/me", Some(&it.member), None).await.0, 401);
    let (_, picker) = it.server.call(Method::GET, "/api/users", None, None).await;
    assert_eq!(picker.as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn a_pending_person_can_get_a_new_enrolment_code_and_the_old_one_dies() {
    let it = instance().await;
    let (_, added) = it.server.post("/api/users", Some(&it.admin), json!({ "name": "Cy", "role": "member" })).await;
    let (old, id) = (added["enrolment_code"].as_str().unwrap(), added["user"]["id"].as_str().unwrap());
    let (status, fresh) =
        it.server.call(Method::POST, &format!("/api/users/{id}/enrolment-code"), Some(&it.admin), None).await;
    assert_eq!(status, 200);
    let new = fresh["enrolment_code"].as_str().unwrap();
    let enrol = |code: &str| json!({ "name": "Cy", "enrolment_code": code, "password": MEMBER_PW });
    assert_eq!(it.server.post("/api/enrol", None, enrol(old)).await.0, 401);
    assert_eq!(it.server.post("/api/enrol", None, enrol(new)).await.0, 201);
    let _: Value = fresh;
}

#[tokio::test]
async fn a_person_is_told_who_manages_skald_and_who_may_approve() {
    let it = instance().await;
    let (status, me) = it.server.call(Method::GET, "/api/me", Some(&it.member), None).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["administrators"], json!(["Ada"]), "whom to ask about the model");
    assert_eq!(me["approvers"], json!(["Ada", "Bo"]), "the seeded roles let both approve");
    // Someone who stops being active is no longer named.
    let path = format!("/api/users/{}/deactivate", it.member_id);
    assert_eq!(it.server.call(Method::POST, &path, Some(&it.admin), None).await.0, 200);
    let (_, me) = it.server.call(Method::GET, "/api/me", Some(&it.admin), None).await;
    assert_eq!(me["approvers"], json!(["Ada"]));
}
