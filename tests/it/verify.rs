//! `skald verify` (§3): passes on a healthy directory while Skald runs, and names the
//! problem — exit 1 — when a key is left where it should not be.

use serde_json::json;
use skald::crypto::{self, Dek, KdfParams, KeyPair, Purpose};
use skald::ids::UserId;
use skald::store::private::{self, PrivateStore};
use skald::store::{DataDir, SystemStore, roles};

use crate::support::{Sandbox, Server};

/// Runs `skald verify` on a data directory: (passed, stdout).
pub fn verify(sandbox: &Sandbox) -> (bool, String) {
    let (status, stdout, stderr) = sandbox.run(&["verify", "--data-dir", sandbox.data_dir().to_str().unwrap()]);
    assert!(status.code() == Some(0) || status.code() == Some(1), "exit {status:?}; stderr: {stderr}");
    (status.success(), stdout)
}

#[tokio::test]
async fn verify_passes_on_a_healthy_directory_while_skald_runs() {
    let server = Server::start();
    let (_, setup) =
        server.post("/api/setup", None, json!({ "name": "Ada", "password": "otter lantern quietly" })).await;
    let admin = setup["token"].as_str().unwrap();
    let (_, added) = server.post("/api/users", Some(admin), json!({ "name": "Bo", "role": "member" })).await;
    let code = added["enrolment_code"].as_str().unwrap();
    let enrol = json!({ "name": "Bo", "enrolment_code": code, "password": "maple harbour seventeen" });
    assert_eq!(server.post("/api/enrol", None, enrol).await.0, 201);
    server.post("/api/users", Some(admin), json!({ "name": "Cy", "role": "restricted" })).await;

    let (passed, report) = verify(&server.sandbox);
    assert!(passed, "{report}");
    for expected in [
        "Ada (Administrator, active)",
        "Bo (Member, active)",
        "Bo's password (argon2id",
        "Bo's recovery code",
        "Cy (Restricted, pending)",
        "no private file yet",
        "Audit trail: 2 entries, each chained",
        "Not checked without a person's key",
        "Result: OK",
    ] {
        assert!(report.contains(expected), "missing {expected:?} in:\n{report}");
    }
    for secret in [admin, code] {
        assert!(!report.contains(secret), "the report prints no secret");
    }
    // Still serving: verify took no lock.
    assert_eq!(server.get("/api/health").await.status(), 200);
}

#[tokio::test]
async fn a_key_stored_anywhere_in_the_shared_database_is_found() {
    let sandbox = Sandbox::new();
    let data = DataDir::open_locked(&sandbox.data_dir()).unwrap();
    let system = SystemStore::open(&data.system_db()).await.unwrap();
    roles::seed_presets(&system).await.unwrap();
    // An account made the way Skald makes one, with its DEK in our hands.
    let (id, dek, salt, keys) = (UserId::generate(), Dek::generate(), crypto::file_salt(), KeyPair::generate());
    let space =
        PrivateStore::create(&private::path_for(&data.users_dir(), &id), &dek, &salt, &id, &keys).await.unwrap();
    space.close().await;
    sqlx::query("INSERT INTO users (id, name, role_id, status, file_salt, public_key, created_at) VALUES (?, 'Ada', 'member', 'active', ?, ?, '2026-01-01T00:00:00Z')")
        .bind(&id)
        .bind(&salt[..])
        .bind(&keys.public[..])
        .execute(system.pool())
        .await
        .unwrap();
    for (purpose, secret) in [(Purpose::Password, "otter lantern quietly"), (Purpose::Recovery, "AAAABBBBCCCC")] {
        let wrapped = crypto::wrap(&dek, secret.as_bytes(), id.as_str(), purpose, KdfParams::FLOOR, 1).unwrap();
        sqlx::query(
            "INSERT INTO key_wraps (user_id, purpose, wrapped, updated_at) VALUES (?, ?, ?, '2026-01-01T00:00:00Z')",
        )
        .bind(&id)
        .bind(purpose.as_str())
        .bind(&wrapped.0)
        .execute(system.pool())
        .await
        .unwrap();
    }
    let (passed, report) = verify(&sandbox);
    assert!(passed, "{report}");

    // The DEK as hex text in a role's description.
    sqlx::query("UPDATE roles SET description = ? WHERE id = 'restricted'")
        .bind(format!("note to self: {}", hex::encode(dek.as_bytes())))
        .execute(system.pool())
        .await
        .unwrap();
    let (passed, report) = verify(&sandbox);
    assert!(!passed);
    assert!(report.contains("roles.description in the shared database opens Ada's private file"), "{report}");

    // Or as a raw 32-byte blob anywhere else.
    sqlx::query("UPDATE roles SET description = '' WHERE id = 'restricted'").execute(system.pool()).await.unwrap();
    sqlx::query("UPDATE instance SET secret_check = ?").bind(&dek.as_bytes()[..]).execute(system.pool()).await.unwrap();
    let (passed, report) = verify(&sandbox);
    assert!(!passed);
    assert!(report.contains("instance.secret_check in the shared database opens Ada's private file"), "{report}");
    system.close().await;
}

#[tokio::test]
async fn an_unencrypted_private_file_or_a_stray_table_fails_verify() {
    let server = Server::start();
    let (_, setup) =
        server.post("/api/setup", None, json!({ "name": "Ada", "password": "otter lantern quietly" })).await;
    let id = setup["user"]["id"].as_str().unwrap().to_owned();
    let sandbox = server.stop("TERM");
    let system = SystemStore::open(&sandbox.data_dir().join("database/system.db")).await.unwrap();
    sqlx::query("CREATE TABLE copies (blob BLOB)").execute(system.pool()).await.unwrap();
    system.close().await;
    let file = sandbox.data_dir().join(format!("database/users/{id}.db"));
    let plain = SystemStore::open(&file.with_extension("plain")).await.unwrap();
    plain.close().await;
    std::fs::rename(file.with_extension("plain"), &file).unwrap();
    let (passed, report) = verify(&sandbox);
    assert!(!passed);
    assert!(report.contains("table verify does not know: copies"), "{report}");
    assert!(report.contains("Ada: the private file is NOT encrypted"), "{report}");
}

/// The audit trail is a hash chain (§3): an entry edited or deleted in the files, or the
/// newest ones removed, fails verify; the report says which.
#[tokio::test]
async fn an_audit_entry_edited_or_deleted_in_the_files_fails_verify() {
    let server = Server::start();
    let (_, setup) =
        server.post("/api/setup", None, json!({ "name": "Ada", "password": "otter lantern quietly" })).await;
    let admin = setup["token"].as_str().unwrap();
    for name in ["Bo", "Cy", "Di", "Ed"] {
        server.post("/api/users", Some(admin), json!({ "name": name, "role": "member" })).await;
    }
    let sandbox = server.stop("TERM");
    let (passed, report) = verify(&sandbox);
    assert!(passed && report.contains("Audit trail: 4 entries"), "{report}");

    let db = sandbox.data_dir().join("database/system.db");
    let pool = sqlx::SqlitePool::connect_with(sqlx::sqlite::SqliteConnectOptions::new().filename(&db)).await.unwrap();
    let run = |sql: &'static str| {
        let pool = pool.clone();
        async move { sqlx::query(sql).execute(&pool).await.unwrap() }
    };
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM audit ORDER BY id").fetch_all(&pool).await.unwrap();
    // Edited: who was added.
    run("UPDATE audit SET subject_name = 'Someone else' WHERE id = (SELECT min(id) + 1 FROM audit)").await;
    let (passed, report) = verify(&sandbox);
    assert!(!passed, "{report}");
    assert!(report.contains(&format!("audit entry {} was edited", ids[1])), "{report}");
    // Deleted from the middle instead.
    run("UPDATE audit SET subject_name = 'Cy' WHERE id = (SELECT min(id) + 1 FROM audit)").await;
    assert!(verify(&sandbox).0, "the edit undone, the chain holds again");
    run("DELETE FROM audit WHERE id = (SELECT min(id) + 1 FROM audit)").await;
    let (passed, report) = verify(&sandbox);
    assert!(!passed && report.contains(&format!("audit entries before entry {} were deleted", ids[2])), "{report}");
    // Everything deleted: the instance row still names the newest entry.
    run("DELETE FROM audit").await;
    let (passed, report) = verify(&sandbox);
    assert!(!passed && report.contains("the newest audit entries"), "{report}");
    pool.close().await;
}
