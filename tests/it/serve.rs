//! `skald serve` as the contract describes it: the ready line, the token file, the data
//! directory, the lock, signals, and the one-line errors.

use std::net::TcpListener;

use crate::support::{Sandbox, Server, mode};

#[tokio::test]
async fn serve_prints_the_ready_line_and_writes_a_private_token_file() {
    let server = Server::start();
    let token_file = server.data_dir().join("run/api-token");
    assert_eq!(std::fs::read_to_string(&token_file).unwrap(), server.token);
    assert_eq!(mode(&token_file), 0o600);
    assert_eq!(mode(&server.data_dir()), 0o700);
    assert_eq!(mode(&server.data_dir().join("database")), 0o700);
    assert!(server.data_dir().join("database/system.db").exists());

    let health: serde_json::Value = server.get("/api/health").await.json().await.unwrap();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
}

#[tokio::test]
async fn a_new_instance_requires_setup() {
    let server = Server::start();
    let response = server.get("/api/instance").await;
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body, serde_json::json!({ "setup_required": true }));
}

#[tokio::test]
async fn each_start_makes_a_fresh_token() {
    let mut first = Server::start();
    let old = first.token.clone();
    assert!(first.signal("TERM").success());
    let second = Server::start_in(std::mem::replace(&mut first.sandbox, Sandbox::new()));
    assert_ne!(second.token, old);
    let stale = reqwest::Client::new().get(second.url("/api/health")).bearer_auth(&old).send().await.unwrap();
    assert_eq!(stale.status(), 401);
}

#[test]
fn the_listener_is_bound_to_127_0_0_1_only() {
    let server = Server::start();
    let port_hex = format!("{:04X}", server.port);
    let listening = |table: &str| -> Vec<String> {
        std::fs::read_to_string(table)
            .unwrap_or_default()
            .lines()
            .skip(1)
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let (addr, port) = fields.get(1)?.split_once(':')?;
                (port == port_hex && fields.get(3) == Some(&"0A")).then(|| addr.to_owned())
            })
            .collect()
    };
    // 0100007F is 127.0.0.1 in the kernel's little-endian hex.
    assert_eq!(listening("/proc/net/tcp"), vec!["0100007F".to_owned()]);
    assert!(listening("/proc/net/tcp6").is_empty(), "no IPv6 listener on the port");
}

#[test]
fn a_second_serve_on_the_same_directory_is_refused() {
    let server = Server::start();
    let (status, stdout, stderr) =
        server.sandbox.run(&["serve", "--port", "0", "--data-dir", server.data_dir().to_str().unwrap()]);
    assert!(!status.success());
    assert!(stdout.is_empty(), "no ready line: {stdout}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("in use by another Skald process"), "{stderr}");
    assert!(stderr.contains(&format!("pid {}", server.pid())), "names the holder: {stderr}");
    // The first server's token file is untouched.
    assert_eq!(std::fs::read_to_string(server.data_dir().join("run/api-token")).unwrap(), server.token);
}

#[test]
fn sigterm_and_sigint_exit_zero_and_remove_the_token_file() {
    for signal in ["TERM", "INT"] {
        let mut server = Server::start();
        let status = server.signal(signal);
        assert_eq!(status.code(), Some(0), "SIG{signal}; stderr:\n{}", server.stderr());
        assert!(!server.data_dir().join("run/api-token").exists());
    }
}

#[test]
fn the_lock_is_released_at_exit_so_the_next_start_succeeds() {
    let mut first = Server::start();
    assert!(first.signal("TERM").success());
    let sandbox = std::mem::replace(&mut first.sandbox, Sandbox::new());
    let second = Server::start_in(sandbox);
    assert!(second.port > 0);
}

#[test]
fn skald_data_dir_is_used_when_the_flag_is_absent() {
    let sandbox = Sandbox::new();
    let dir = sandbox.dir.path().join("from-env");
    let mut child = sandbox
        .command()
        .env("SKALD_DATA_DIR", &dir)
        .args(["serve", "--port", "0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
    assert!(line.starts_with("skald listening on http://127.0.0.1:"), "{line}");
    assert!(dir.join("run/api-token").exists());
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn version_prints_the_package_version() {
    let (status, stdout, _) = Sandbox::new().run(&["--version"]);
    assert!(status.success());
    assert_eq!(stdout.trim(), format!("skald {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn a_bad_flag_is_one_line_on_stderr_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let data = sandbox.data_dir();
    let (status, stdout, stderr) = sandbox.run(&["serve", "--no-such-flag", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(status.code(), Some(2));
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--no-such-flag"), "{stderr}");
    assert!(!data.exists(), "nothing written");
}

#[test]
fn a_port_in_use_is_one_line_on_stderr_and_writes_nothing() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let sandbox = Sandbox::new();
    let data = sandbox.data_dir();
    let (status, stdout, stderr) = sandbox.run(&["serve", "--port", &port, "--data-dir", data.to_str().unwrap()]);
    assert!(!status.success());
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&format!("127.0.0.1:{port}")) && stderr.contains("in use"), "{stderr}");
    assert!(!data.exists(), "nothing written");
}

#[test]
fn an_unusable_data_directory_is_one_line_on_stderr() {
    let sandbox = Sandbox::new();
    let file = sandbox.dir.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let under_file = file.join("data");
    let (status, stdout, stderr) = sandbox.run(&["serve", "--port", "0", "--data-dir", under_file.to_str().unwrap()]);
    assert!(!status.success());
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("cannot use data directory"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a directory");
}

#[test]
fn an_existing_loose_data_directory_is_tightened_to_0700() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.data_dir()).unwrap();
    std::fs::set_permissions(sandbox.data_dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = Server::start_in(sandbox);
    assert_eq!(mode(&server.data_dir()), 0o700);
}

#[cfg(feature = "desktop")]
#[test]
fn the_desktop_build_without_a_display_says_so_in_one_line_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let data = sandbox.data_dir();
    let (status, stdout, stderr) = sandbox.run(&["--data-dir", data.to_str().unwrap()]);
    assert!(!status.success());
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no display") && stderr.contains("skald serve"), "{stderr}");
    assert!(!data.exists(), "nothing written");
}

/// Every file and folder under `dir`, with its permission bits.
fn modes(dir: &std::path::Path) -> Vec<(std::path::PathBuf, bool, u32)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let is_dir = path.is_dir();
        found.push((path.clone(), is_dir, mode(&path)));
        if is_dir {
            found.extend(modes(&path));
        }
    }
    found
}

#[tokio::test]
async fn every_file_skald_writes_is_its_own_accounts_alone() {
    let sandbox = Sandbox::new();
    // What an older version or a copy by hand left readable by others is tightened at start.
    let loose = sandbox.data_dir().join("logs/left-over.log");
    std::fs::create_dir_all(loose.parent().unwrap()).unwrap();
    std::fs::write(&loose, "old").unwrap();
    std::fs::set_permissions(&loose, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let server = Server::start_in(sandbox);
    let (status, setup) = server
        .post("/api/setup", None, serde_json::json!({ "name": "Ada", "password": "otter lantern quietly" }))
        .await;
    assert_eq!(status, 201, "{setup}");
    let token = setup["token"].as_str().unwrap();
    let (status, _) =
        server.post("/api/notes", Some(token), serde_json::json!({ "title": "Hives", "body": "Sunday" })).await;
    assert_eq!(status, 201);
    let found = modes(&server.data_dir());
    assert!(found.iter().any(|(path, _, _)| path.extension().is_some_and(|e| e == "db")), "{found:?}");
    assert!(found.iter().any(|(path, _, _)| path.to_string_lossy().ends_with("-wal")), "{found:?}");
    for (path, is_dir, mode) in &found {
        let wanted = if *is_dir { 0o700 } else { 0o600 };
        assert_eq!(*mode, wanted, "{} is {mode:o}", path.display());
    }
    assert!(server.stderr().contains("were open to others"), "{}", server.stderr());
}
