//! Crash safety of password changes (§4, §5.1): kill -9 at a random moment during a change,
//! and afterwards exactly one of the old and new passwords opens the space — never neither,
//! never both. CI runs 20 rounds; `SKALD_CRASH_ROUNDS` raises it for a soak.

use std::time::Duration;

use serde_json::json;

use crate::support::{Sandbox, Server};

const PASSWORDS: [&str; 2] = ["otter lantern quietly", "copper meadow whistle"];

fn random_below(limit: u64) -> u64 {
    let mut raw = [0u8; 8];
    getrandom::fill(&mut raw).unwrap();
    u64::from_le_bytes(raw) % limit.max(1)
}

async fn opens(server: &Server, password: &str) -> bool {
    let (status, body) = server.post("/api/login", None, json!({ "name": "Ada", "password": password })).await;
    assert!(status == 200 || status == 401, "login answered {status}: {body}");
    status == 200
}

#[tokio::test]
async fn a_crash_during_a_password_change_leaves_exactly_one_password_working() {
    let rounds: usize = std::env::var("SKALD_CRASH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(20);
    let server = Server::start();
    let (status, _) = server.post("/api/setup", None, json!({ "name": "Ada", "password": PASSWORDS[0] })).await;
    assert_eq!(status, 201);
    let (mut sandbox, mut current) = (server.stop("TERM"), 0usize);
    let (mut changed, mut kept) = (0, 0);
    for round in 0..rounds {
        let server = Server::start_in(sandbox);
        let (_, body) = server.post("/api/login", None, json!({ "name": "Ada", "password": PASSWORDS[current] })).await;
        let token = body["token"].as_str().unwrap_or_else(|| panic!("round {round}: login failed: {body}")).to_owned();
        let change = json!({ "current_password": PASSWORDS[current], "new_password": PASSWORDS[1 - current] });
        let url = server.url("/api/me/password");
        let request =
            tokio::spawn(async move { reqwest::Client::new().post(url).bearer_auth(token).json(&change).send().await });
        // A change takes two key derivations; strike anywhere from before to after it.
        tokio::time::sleep(Duration::from_millis(random_below(250))).await;
        let sandbox_back = server.stop("KILL");
        let _ = request.await;

        let server = Server::start_in(sandbox_back);
        let (old, new) = (opens(&server, PASSWORDS[current]).await, opens(&server, PASSWORDS[1 - current]).await);
        assert!(old ^ new, "round {round}: old opens = {old}, new opens = {new}");
        if new {
            current = 1 - current;
            changed += 1;
        } else {
            kept += 1;
        }
        sandbox = server.stop("TERM");
    }
    eprintln!("{rounds} crashes: {changed} after the commit, {kept} before it");
    let _keep: Sandbox = sandbox;
}
