//! The instance key (§4): in the OS keyring when one works (GNOME Keyring on a private
//! D-Bus session here), in a 0600 file when none does — and the administrator is told
//! which — and, once recorded in the keyring, never silently replaced when it vanishes.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Sandbox, Server, mode};

const PW: &str = "otter lantern quietly";

async fn admin_token(server: &Server, first: bool) -> String {
    let (status, body) = if first {
        server.post("/api/setup", None, json!({ "name": "Ada", "password": PW })).await
    } else {
        server.post("/api/login", None, json!({ "name": "Ada", "password": PW })).await
    };
    assert!(status == 200 || status == 201, "{body}");
    body["token"].as_str().unwrap().to_owned()
}

async fn secrets(server: &Server, token: &str) -> Value {
    let (status, body) = server.call(Method::GET, "/api/instance/secrets", Some(token), None).await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn without_a_keyring_the_key_file_is_used_and_the_administrator_is_told() {
    let server = Server::start();
    let token = admin_token(&server, true).await;
    let status = secrets(&server, &token).await;
    assert_eq!((status["backend"].as_str(), status["available"].as_bool()), (Some("file"), Some(true)));
    assert!(status["message"].as_str().unwrap().contains("no usable OS keyring"), "{status}");
    let key_file = server.data_dir().join("instance.key");
    assert_eq!(mode(&key_file), 0o600);
    assert_eq!(std::fs::read(&key_file).unwrap().len(), 32);
    let before = std::fs::read(&key_file).unwrap();
    // A restart reuses the same key.
    let server = Server::start_in(server.stop("TERM"));
    let token = admin_token(&server, false).await;
    assert_eq!(secrets(&server, &token).await["available"], true);
    assert_eq!(std::fs::read(&key_file).unwrap(), before);
}

#[tokio::test]
async fn the_keyring_holds_the_key_and_its_loss_fails_closed_without_a_new_key() {
    let mut sandbox = Sandbox::new();
    sandbox.keyring = true;
    let server = Server::start_in(sandbox);
    let token = admin_token(&server, true).await;
    let status = secrets(&server, &token).await;
    assert_eq!((status["backend"].as_str(), status["available"].as_bool()), (Some("keyring"), Some(true)), "{status}");
    let key_file = server.data_dir().join("instance.key");
    assert!(!key_file.exists(), "no key file when the keyring works");

    // The same keyring, unlocked again: the key is still there.
    let server = Server::start_in(server.stop("TERM"));
    let token = admin_token(&server, false).await;
    assert_eq!(secrets(&server, &token).await["available"], true);

    // The keyring gone (no D-Bus at all): fail closed, say how to recover, write nothing.
    let mut sandbox = server.stop("TERM");
    sandbox.keyring = false;
    let server = Server::start_in(sandbox);
    let token = admin_token(&server, false).await;
    let status = secrets(&server, &token).await;
    assert_eq!((status["backend"].as_str(), status["available"].as_bool()), (Some("keyring"), Some(false)), "{status}");
    let message = status["message"].as_str().unwrap();
    assert!(message.contains("cannot be reached") && message.contains("will not make a new key"), "{message}");
    assert!(!key_file.exists(), "no silent switch to a new key file");
    // People still reach their own spaces: only instance-wide secrets wait.
    assert_eq!(server.call(Method::GET, "/api/me/settings", Some(&token), None).await.0, 200);
}
