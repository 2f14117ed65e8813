//! What the tempted administrator can do with the files (§2): copy a key wrap onto another
//! person's row, edit its KDF parameters, swap private files. Each is refused with a clear
//! error — never a panic, never a space opened with the wrong key.

use std::path::Path;

use serde_json::json;
use skald::crypto::WrappedKey;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};

use crate::support::{Sandbox, Server};

const ADMIN_PW: &str = "otter lantern quietly";
const MEMBER_PW: &str = "maple harbour seventeen";

async fn open(db: &Path) -> SqlitePool {
    SqlitePool::connect_with(SqliteConnectOptions::new().filename(db)).await.unwrap()
}

pub async fn kdf_target(db: &Path) -> (i64, i64, i64) {
    let pool = open(db).await;
    let row: (i64, i64, i64) =
        sqlx::query_as("SELECT kdf_m_kib, kdf_t, kdf_p FROM instance WHERE id = 1").fetch_one(&pool).await.unwrap();
    pool.close().await;
    row
}

/// An instance with Ada (administrator) and Bo (member), stopped; returns the sandbox.
async fn two_people() -> Sandbox {
    let server = Server::start();
    let (_, setup) = server.post("/api/setup", None, json!({ "name": "Ada", "password": ADMIN_PW })).await;
    let admin = setup["token"].as_str().unwrap();
    let (_, added) = server.post("/api/users", Some(admin), json!({ "name": "Bo", "role": "member" })).await;
    let code = added["enrolment_code"].as_str().unwrap();
    let (status, _) =
        server.post("/api/enrol", None, json!({ "name": "Bo", "enrolment_code": code, "password": MEMBER_PW })).await;
    assert_eq!(status, 201);
    server.stop("TERM")
}

async fn user_id(pool: &SqlitePool, name: &str) -> String {
    sqlx::query_scalar("SELECT id FROM users WHERE name = ?").bind(name).fetch_one(pool).await.unwrap()
}

async fn password_wrap(pool: &SqlitePool, id: &str) -> Vec<u8> {
    sqlx::query_scalar("SELECT wrapped FROM key_wraps WHERE user_id = ? AND purpose = 'password'")
        .bind(id)
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn set_password_wrap(pool: &SqlitePool, id: &str, wrapped: &[u8]) {
    sqlx::query("UPDATE key_wraps SET wrapped = ? WHERE user_id = ? AND purpose = 'password'")
        .bind(wrapped)
        .bind(id)
        .execute(pool)
        .await
        .unwrap();
}

/// Logs in on a restarted server; returns (status, error code) and checks the server lives.
async fn try_login(sandbox: Sandbox, name: &str, password: &str) -> (u16, String, Sandbox) {
    let server = Server::start_in(sandbox);
    let (status, body) = server.post("/api/login", None, json!({ "name": name, "password": password })).await;
    let code = body["error"]["code"].as_str().unwrap_or("").to_owned();
    assert_eq!(server.get("/api/health").await.status(), 200, "the server survives");
    (status, code, server.stop("TERM"))
}

#[tokio::test]
async fn a_wrap_copied_onto_another_persons_row_is_refused() {
    let sandbox = two_people().await;
    let db = sandbox.data_dir().join("database/system.db");
    let pool = open(&db).await;
    let (ada, bo) = (user_id(&pool, "Ada").await, user_id(&pool, "Bo").await);
    let bos_wrap = password_wrap(&pool, &bo).await;
    set_password_wrap(&pool, &ada, &bos_wrap).await;
    pool.close().await;
    let (passed, report) = crate::verify::verify(&sandbox);
    assert!(!passed && report.contains("Ada: the password key wrap names another account or purpose"), "{report}");
    // Neither Bo's password nor Ada's opens Ada's row now, and the reason is named.
    let (status, code, sandbox) = try_login(sandbox, "Ada", MEMBER_PW).await;
    assert_eq!((status, code.as_str()), (409, "key_record_invalid"));
    let (status, code, _) = try_login(sandbox, "Ada", ADMIN_PW).await;
    assert_eq!((status, code.as_str()), (409, "key_record_invalid"));
}

#[tokio::test]
async fn kdf_parameters_lowered_or_absurdly_raised_are_refused() {
    let sandbox = two_people().await;
    let db = sandbox.data_dir().join("database/system.db");
    let pool = open(&db).await;
    let ada = user_id(&pool, "Ada").await;
    let original = password_wrap(&pool, &ada).await;
    // Header: magic 4, format 1, id length 2, id 32, purpose length 2, "password" 8, then m, t, p.
    let m_at = 4 + 1 + 2 + 32 + 2 + 8;
    let mut sandbox = sandbox;
    for (offset, value, what) in [
        (m_at, 1024u32, "memory lowered"),
        (m_at, 4_000_000, "memory raised"),
        (m_at + 4, 0, "passes lowered"),
        (m_at + 4, 100_000, "passes raised"),
    ] {
        let mut edited = original.clone();
        edited[offset..offset + 4].copy_from_slice(&value.to_be_bytes());
        WrappedKey(edited.clone()).header().expect("still parses");
        let pool = open(&db).await;
        set_password_wrap(&pool, &ada, &edited).await;
        pool.close().await;
        let (passed, report) = crate::verify::verify(&sandbox);
        assert!(!passed && report.contains("KDF parameters outside the allowed range"), "{what}: {report}");
        let (status, code, back) = try_login(sandbox, "Ada", ADMIN_PW).await;
        assert_eq!((status, code.as_str()), (409, "key_record_invalid"), "{what}");
        sandbox = back;
    }
    // Restored, the record works again: nothing else was harmed.
    let pool = open(&db).await;
    set_password_wrap(&pool, &ada, &original).await;
    pool.close().await;
    assert!(crate::verify::verify(&sandbox).0, "verify passes again once restored");
    assert_eq!(try_login(sandbox, "Ada", ADMIN_PW).await.0, 200);
}

#[tokio::test]
async fn two_swapped_private_files_are_refused() {
    let sandbox = two_people().await;
    let db = sandbox.data_dir().join("database/system.db");
    let pool = open(&db).await;
    let (ada, bo) = (user_id(&pool, "Ada").await, user_id(&pool, "Bo").await);
    pool.close().await;
    let users = sandbox.data_dir().join("database/users");
    let (a, b, tmp) = (users.join(format!("{ada}.db")), users.join(format!("{bo}.db")), users.join("swap.tmp"));
    std::fs::rename(&a, &tmp).unwrap();
    std::fs::rename(&b, &a).unwrap();
    std::fs::rename(&tmp, &b).unwrap();
    let (passed, report) = crate::verify::verify(&sandbox);
    assert!(!passed, "{report}");
    for who in ["Ada", "Bo"] {
        assert!(
            report.contains(&format!("{who}: the private file is not the one recorded for this person")),
            "{report}"
        );
    }
    let (status, code, sandbox) = try_login(sandbox, "Ada", ADMIN_PW).await;
    assert_eq!((status, code.as_str()), (409, "private_file_invalid"));
    let (status, code, _) = try_login(sandbox, "Bo", MEMBER_PW).await;
    assert_eq!((status, code.as_str()), (409, "private_file_invalid"));
}
