//! People and keys over the real API: setup, enrolment, login, recovery, password change,
//! locking, and the promises around them — the administrator never receives anything
//! that opens another person's space, and nothing private reaches the disk in the clear.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Sandbox, Server};

const ADMIN_PW: &str = "otter lantern quietly";
const MEMBER_PW: &str = "maple harbour seventeen";

/// A server with an administrator; returns (server, admin token, admin recovery code).
async fn with_admin() -> (Server, String, String) {
    let server = Server::start();
    let (status, body) = server.post("/api/setup", None, json!({ "name": "Ada", "password": ADMIN_PW })).await;
    assert_eq!(status, 201, "{body}");
    let token = body["token"].as_str().unwrap().to_owned();
    let recovery = body["recovery_code"].as_str().unwrap().to_owned();
    (server, token, recovery)
}

/// The administrator adds Bo; Bo enrols. Returns (Bo's token, Bo's recovery code).
async fn with_member(server: &Server, admin: &str) -> (String, String) {
    let (status, added) = server.post("/api/users", Some(admin), json!({ "name": "Bo", "role": "member" })).await;
    assert_eq!(status, 201, "{added}");
    let code = added["enrolment_code"].as_str().unwrap();
    let (status, enrolled) =
        server.post("/api/enrol", None, json!({ "name": "Bo", "enrolment_code": code, "password": MEMBER_PW })).await;
    assert_eq!(status, 201, "{enrolled}");
    (enrolled["token"].as_str().unwrap().to_owned(), enrolled["recovery_code"].as_str().unwrap().to_owned())
}

async fn login(server: &Server, name: &str, password: &str) -> (u16, Value) {
    server.post("/api/login", None, json!({ "name": name, "password": password })).await
}

async fn put_setting(server: &Server, token: &str, key: &str, value: &str) {
    let (status, body) = server
        .call(Method::PUT, &format!("/api/me/settings/{key}"), Some(token), Some(json!({ "value": value })))
        .await;
    assert_eq!(status, 204, "{body}");
}

async fn settings(server: &Server, token: &str) -> Value {
    let (status, body) = server.call(Method::GET, "/api/me/settings", Some(token), None).await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn setup_makes_the_first_administrator_once() {
    let (server, token, recovery) = with_admin().await;
    assert_eq!(recovery.chars().filter(|c| c.is_ascii_alphanumeric()).count(), 32, "160-bit recovery code");
    let (_, instance) = server.call(Method::GET, "/api/instance", None, None).await;
    assert_eq!(instance["setup_required"], false);
    let (status, body) =
        server.post("/api/setup", None, json!({ "name": "Eve", "password": "another long phrase" })).await;
    assert_eq!(status, 409);
    assert_eq!(body["error"]["code"], "already_set_up");
    let (_, me) = server.call(Method::GET, "/api/me", Some(&token), None).await;
    assert_eq!(me["user"]["name"], "Ada");
    assert_eq!(me["role"]["manage_instance"], true);
    let (_, picker) = server.call(Method::GET, "/api/users", None, None).await;
    assert_eq!(picker, json!([{ "id": me["user"]["id"], "name": "Ada", "role": "admin", "status": "active" }]));
}

#[tokio::test]
async fn a_weak_password_is_refused_with_the_reason() {
    let server = Server::start();
    let (status, body) = server.post("/api/setup", None, json!({ "name": "Ada", "password": "short" })).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], "weak_password");
    assert!(body["error"]["message"].as_str().unwrap().contains("at least 12 characters"));
}

#[tokio::test]
async fn bad_json_gets_a_json_error() {
    let server = Server::start();
    let response = reqwest::Client::new()
        .post(server.url("/api/login"))
        .bearer_auth(&server.token)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "bad_json");
}

#[tokio::test]
async fn an_enrolment_code_opens_nothing_and_is_spent_once() {
    let (server, admin, _) = with_admin().await;
    let (_, added) = server.post("/api/users", Some(&admin), json!({ "name": "Bo", "role": "member" })).await;
    assert_eq!(added["user"]["status"], "pending");
    let code = added["enrolment_code"].as_str().unwrap();
    // The code is no password and no recovery code.
    assert_eq!(login(&server, "Bo", code).await.0, 401);
    let (status, _) = server
        .post("/api/recover", None, json!({ "name": "Bo", "recovery_code": code, "new_password": MEMBER_PW }))
        .await;
    assert_eq!(status, 401);
    let enrol = json!({ "name": "Bo", "enrolment_code": code, "password": MEMBER_PW });
    assert_eq!(server.post("/api/enrol", None, enrol.clone()).await.0, 201);
    let (status, body) = server.post("/api/enrol", None, enrol).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], "invalid_enrolment");
    assert_eq!(login(&server, "Bo", MEMBER_PW).await.0, 200);
}

#[tokio::test]
async fn only_administrators_add_people() {
    let (server, admin, _) = with_admin().await;
    let (member, _) = with_member(&server, &admin).await;
    let (status, body) = server.post("/api/users", Some(&member), json!({ "name": "Cy", "role": "member" })).await;
    assert_eq!(status, 403);
    assert_eq!(body["error"]["code"], "admin_only");
    let (status, _) = server.post("/api/users", Some(&admin), json!({ "name": "Cy", "role": "no-such-role" })).await;
    assert_eq!(status, 400);
    let (status, _) = server.post("/api/users", Some(&admin), json!({ "name": "bo", "role": "member" })).await;
    assert_eq!(status, 409, "names are unique regardless of case");
}

#[tokio::test]
async fn the_administrators_answers_never_carry_what_opens_another_space() {
    let (server, admin, _) = with_admin().await;
    let mut seen_by_admin: Vec<String> = Vec::new();
    let (_, added) = server.post("/api/users", Some(&admin), json!({ "name": "Bo", "role": "member" })).await;
    seen_by_admin.push(added.to_string());
    let code = added["enrolment_code"].as_str().unwrap().to_owned();
    let (status, enrolled) =
        server.post("/api/enrol", None, json!({ "name": "Bo", "enrolment_code": code, "password": MEMBER_PW })).await;
    assert_eq!(status, 201);
    let bo_token = enrolled["token"].as_str().unwrap();
    let bo_recovery = enrolled["recovery_code"].as_str().unwrap();
    put_setting(&server, bo_token, "note", "Bo's private words").await;
    // Everything the administrator can ask for afterwards.
    for (method, path, body) in [
        (Method::GET, "/api/users", None),
        (Method::GET, "/api/me", None),
        (Method::GET, "/api/me/settings", None),
        (Method::GET, "/api/instance", None),
        (Method::POST, "/api/users", Some(json!({ "name": "Cy", "role": "restricted" }))),
    ] {
        let (_, answer) = server.call(method, path, Some(&admin), body).await;
        seen_by_admin.push(answer.to_string());
    }
    for answer in &seen_by_admin {
        for secret in [MEMBER_PW, bo_token, bo_recovery, "Bo's private words"] {
            assert!(!answer.contains(secret), "an administrator's answer carries a secret of Bo's: {answer}");
        }
    }
    // The admin's own settings are theirs alone.
    assert_eq!(settings(&server, &admin).await, json!({}));
}

#[tokio::test]
async fn a_wrong_password_and_an_unknown_person_get_the_same_401() {
    let (server, _, _) = with_admin().await;
    let (s1, wrong) = login(&server, "Ada", "not the password at all").await;
    let (s2, unknown) = login(&server, "Nobody", "not the password at all").await;
    assert_eq!((s1, s2), (401, 401));
    assert_eq!(wrong, unknown);
}

#[tokio::test]
async fn repeated_failures_are_rate_limited_with_retry_after() {
    let (server, _, _) = with_admin().await;
    for _ in 0..5 {
        assert_eq!(login(&server, "Ada", "wrong wrong wrong").await.0, 401);
    }
    let response = reqwest::Client::new()
        .post(server.url("/api/login"))
        .bearer_auth(&server.token)
        .json(&json!({ "name": "Ada", "password": ADMIN_PW }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429, "even the right password waits");
    let retry: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(retry >= 1);
    // Unknown names are limited the same way, and recovery codes too.
    for _ in 0..5 {
        login(&server, "Nobody", "wrong wrong wrong").await;
    }
    assert_eq!(login(&server, "Nobody", "wrong wrong wrong").await.0, 429);
    for _ in 0..5 {
        let (status, _) = server
            .post("/api/recover", None, json!({ "name": "Ada", "recovery_code": "AAAA", "new_password": MEMBER_PW }))
            .await;
        assert_eq!(status, 401);
    }
    let (status, _) = server
        .post("/api/recover", None, json!({ "name": "Ada", "recovery_code": "AAAA", "new_password": MEMBER_PW }))
        .await;
    assert_eq!(status, 429);
}

#[tokio::test]
async fn a_password_change_swaps_which_password_opens_the_space_and_keeps_the_data() {
    let (server, admin, _) = with_admin().await;
    put_setting(&server, &admin, "theme", "dark").await;
    let new_pw = "copper meadow whistle";
    let change = json!({ "current_password": "wrong wrong wrong", "new_password": new_pw });
    assert_eq!(server.post("/api/me/password", Some(&admin), change).await.0, 401, "the current password is checked");
    let change = json!({ "current_password": ADMIN_PW, "new_password": new_pw });
    assert_eq!(server.post("/api/me/password", Some(&admin), change).await.0, 204);
    assert_eq!(login(&server, "Ada", ADMIN_PW).await.0, 401);
    let (status, body) = login(&server, "Ada", new_pw).await;
    assert_eq!(status, 200);
    assert_eq!(settings(&server, body["token"].as_str().unwrap()).await, json!({ "theme": "dark" }));
}

#[tokio::test]
async fn the_recovery_code_resets_the_password_keeps_the_data_and_is_replaced() {
    let (server, admin, recovery) = with_admin().await;
    put_setting(&server, &admin, "theme", "dark").await;
    let new_pw = "copper meadow whistle";
    // Typed loosely: lower case, spaces for dashes.
    let typed = recovery.to_lowercase().replace('-', " ");
    let (status, body) = server
        .post("/api/recover", None, json!({ "name": "Ada", "recovery_code": typed, "new_password": new_pw }))
        .await;
    assert_eq!(status, 200, "{body}");
    let fresh_code = body["recovery_code"].as_str().unwrap();
    assert_ne!(fresh_code, recovery);
    assert_eq!(settings(&server, body["token"].as_str().unwrap()).await, json!({ "theme": "dark" }));
    assert_eq!(login(&server, "Ada", ADMIN_PW).await.0, 401);
    assert_eq!(login(&server, "Ada", new_pw).await.0, 200);
    let (status, _) = server
        .post("/api/recover", None, json!({ "name": "Ada", "recovery_code": recovery, "new_password": ADMIN_PW }))
        .await;
    assert_eq!(status, 401, "the spent code no longer works");
}

#[tokio::test]
async fn logout_lock_and_lock_all_make_old_tokens_fail() {
    let (server, admin, _) = with_admin().await;
    let me = |token: String| {
        let server = &server;
        async move { server.call(Method::GET, "/api/me", Some(&token), None).await.0 }
    };
    // Logout ends this session only.
    let second = login(&server, "Ada", ADMIN_PW).await.1["token"].as_str().unwrap().to_owned();
    assert_eq!(server.call(Method::POST, "/api/logout", Some(&second), None).await.0, 204);
    assert_eq!(me(second).await, 401);
    assert_eq!(me(admin.clone()).await, 200);
    // Lock ends every window of the caller.
    let other = login(&server, "Ada", ADMIN_PW).await.1["token"].as_str().unwrap().to_owned();
    assert_eq!(server.call(Method::POST, "/api/lock", Some(&admin), None).await.0, 204);
    assert_eq!(me(admin).await, 401);
    assert_eq!(me(other).await, 401);
    // Lock-all (the tray's Lock) ends everyone's.
    let (_, again) = login(&server, "Ada", ADMIN_PW).await;
    let (bo, _) = with_member(&server, again["token"].as_str().unwrap()).await;
    let (status, body) = server.call(Method::POST, "/api/lock-all", None, None).await;
    assert_eq!(status, 200);
    assert!(body["locked"].as_u64().unwrap() >= 2);
    assert_eq!(me(bo).await, 401);
}

#[tokio::test]
async fn a_real_calibration_makes_keys_within_the_range_and_logs_in() {
    let server = Server::start_in(Sandbox::calibrated());
    let (status, _) = server.post("/api/setup", None, json!({ "name": "Ada", "password": ADMIN_PW })).await;
    assert_eq!(status, 201);
    let started = std::time::Instant::now();
    let (status, _) = login(&server, "Ada", ADMIN_PW).await;
    assert_eq!(status, 200);
    eprintln!("calibrated unlock took {:?}", started.elapsed());
    let sandbox = server.stop("TERM");
    let db = sandbox.data_dir().join("database/system.db");
    let (m, t, p) = crate::tamper::kdf_target(&db).await;
    assert!((47_104..=1_048_576).contains(&m) && (1..=16).contains(&t) && (1..=16).contains(&p), "{m} {t} {p}");
}

#[tokio::test]
async fn a_password_change_or_a_recovery_locks_every_other_window_of_that_person() {
    let (server, admin, recovery) = with_admin().await;
    let other_window = login(&server, "Ada", ADMIN_PW).await.1["token"].as_str().unwrap().to_owned();
    let (member, _) = with_member(&server, &admin).await;
    let new_pw = "copper meadow whistle";
    let change = json!({ "current_password": ADMIN_PW, "new_password": new_pw });
    assert_eq!(server.post("/api/me/password", Some(&admin), change).await.0, 204);
    assert_eq!(settings_status(&server, &other_window).await, 401, "the window opened with the old password is shut");
    assert_eq!(settings_status(&server, &admin).await, 200, "the window that changed it goes on");
    assert_eq!(settings_status(&server, &member).await, 200, "nobody else is touched");

    // A recovery, from the picker, shuts every window that was open.
    let (status, body) = server
        .post("/api/recover", None, json!({ "name": "Ada", "recovery_code": recovery, "new_password": ADMIN_PW }))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(settings_status(&server, &admin).await, 401);
    assert_eq!(settings_status(&server, body["token"].as_str().unwrap()).await, 200);
    assert_eq!(settings_status(&server, &member).await, 200);
}

async fn settings_status(server: &Server, token: &str) -> u16 {
    server.call(Method::GET, "/api/me/settings", Some(token), None).await.0
}

#[tokio::test]
async fn forty_guesses_sent_at_once_cost_forty_attempts() {
    let (server, _, _) = with_admin().await;
    let guesses = (0..40).map(|n| {
        let server = &server;
        async move { login(server, "Ada", &format!("wrong guess number {n}")).await.0 }
    });
    let statuses = futures_util::future::join_all(guesses).await;
    let evaluated = statuses.iter().filter(|status| **status == 401).count();
    let refused = statuses.iter().filter(|status| **status == 429).count();
    assert!(evaluated <= 5, "{evaluated} guesses were tried: {statuses:?}");
    assert_eq!(evaluated + refused, 40, "{statuses:?}");
    // The right password waits its turn too.
    assert_eq!(login(&server, "Ada", ADMIN_PW).await.0, 429);
}
