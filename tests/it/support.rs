//! Spawning the real `skald serve` and talking to it over a real socket.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const BIN: &str = env!("CARGO_BIN_EXE_skald");
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// A home for one test: HOME and the XDG folders point inside it, so the spawned process
/// never touches the real user's files.
pub struct Sandbox {
    pub dir: TempDir,
    /// New keys use the argon2id floor (a debug-only setting) so tests stay fast.
    pub fast_kdf: bool,
    /// Run inside a private D-Bus session with an unlocked GNOME Keyring.
    pub keyring: bool,
    /// Extra environment for the spawned process (debug-only test settings).
    pub env: Vec<(String, String)>,
    /// Run under `qemu-x86_64 -cpu <model>`, so Skald sees that CPU's features.
    pub emulated_cpu: Option<&'static str>,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new().prefix("skald-test-").tempdir().expect("temp dir");
        Self { dir, fast_kdf: true, keyring: false, env: Vec::new(), emulated_cpu: None }
    }

    /// The machine's real calibration, as people get it.
    pub fn calibrated() -> Self {
        Self { fast_kdf: false, ..Self::new() }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A `skald` command with the sandboxed environment and no inherited data dir.
    pub fn command(&self) -> Command {
        let home = self.dir.path().join("home");
        let runtime = self.dir.path().join("run");
        std::fs::create_dir_all(&runtime).unwrap();
        std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        let mut cmd = if self.keyring {
            // A bus of its own and an unlocked login keyring, then exec skald in it.
            let mut cmd = Command::new("dbus-run-session");
            cmd.args([
                "--",
                "sh",
                "-c",
                "printf skald-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec \"$0\" \"$@\"",
                BIN,
            ]);
            cmd
        } else if let Some(cpu) = self.emulated_cpu {
            let mut cmd = Command::new("qemu-x86_64");
            cmd.args(["-cpu", cpu, BIN]);
            cmd
        } else {
            Command::new(BIN)
        };
        cmd.env_remove("SKALD_DATA_DIR")
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("TMPDIR", self.dir.path().join("tmp"))
            .env_remove("SKALD_INSECURE_FAST_KDF")
            // Scripted replies are counted: no title request unless a test asks for one.
            .env("SKALD_AUTO_TITLES", "off")
            // Never the developer's own keyring; the keyring tests bring their own bus.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("DISPLAY")
            .stdin(Stdio::null());
        if self.fast_kdf {
            cmd.env("SKALD_INSECURE_FAST_KDF", "1");
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        std::fs::create_dir_all(self.dir.path().join("tmp")).unwrap();
        cmd
    }

    /// Runs `skald args…` to completion and returns (status, stdout, stderr).
    pub fn run(&self, args: &[&str]) -> (ExitStatus, String, String) {
        let out = self.command().args(args).output().expect("run skald");
        (out.status, String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
    }
}

/// A running `skald serve`, killed when dropped.
pub struct Server {
    pub sandbox: Sandbox,
    child: Child,
    pub port: u16,
    pub token: String,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    pub fn start() -> Self {
        Self::start_in(Sandbox::new())
    }

    pub fn start_in(sandbox: Sandbox) -> Self {
        let data = sandbox.data_dir();
        let mut child = sandbox
            .command()
            .args(["serve", "--port", "0", "--data-dir"])
            .arg(&data)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn skald serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err_pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(line)) = lines.next() {
                let _ = tx.send(line);
            }
            // Keep draining so a later write can never block the server.
            for _ in lines {}
        });
        let line = match rx.recv_timeout(READY_TIMEOUT) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                panic!("no ready line; stderr:\n{}", stderr.lock().unwrap());
            }
        };
        let (port, token) = parse_ready_line(&line).unwrap_or_else(|| panic!("malformed ready line: {line:?}"));
        Self { sandbox, child, port, token, stderr }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.sandbox.data_dir()
    }

    /// The skald process itself (under a D-Bus session, the child of `dbus-run-session`,
    /// which records its pid in the lock file).
    pub fn pid(&self) -> u32 {
        if self.sandbox.keyring {
            let lock = std::fs::read_to_string(self.data_dir().join("skald.lock")).unwrap();
            return lock.trim().parse().unwrap();
        }
        self.child.id()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// GET with the launch token.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        reqwest::Client::new().get(self.url(path)).bearer_auth(&self.token).send().await.expect("request")
    }

    /// A call with `bearer` (the launch token when `None`) and an optional JSON body;
    /// returns the status and the body as JSON (`Null` when empty).
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        bearer: Option<&str>,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let mut request =
            reqwest::Client::new().request(method, self.url(path)).bearer_auth(bearer.unwrap_or(&self.token));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let json = if text.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
        };
        (status, json)
    }

    pub async fn post(&self, path: &str, bearer: Option<&str>, body: serde_json::Value) -> (u16, serde_json::Value) {
        self.call(reqwest::Method::POST, path, bearer, Some(body)).await
    }

    /// Stops the server with `signal` (`KILL` for a crash) and hands back its sandbox.
    pub fn stop(mut self, signal: &str) -> Sandbox {
        if signal == "KILL" {
            let _ = self.child.kill();
            let _ = self.child.wait();
        } else {
            let status = self.signal(signal);
            assert!(status.success(), "clean exit; stderr:\n{}", self.stderr());
        }
        std::mem::replace(&mut self.sandbox, Sandbox::new())
    }

    /// Sends a signal and waits for the exit.
    pub fn signal(&mut self, name: &str) -> ExitStatus {
        let ok = Command::new("kill").arg(format!("-{name}")).arg(self.pid().to_string()).status().unwrap();
        assert!(ok.success(), "kill -{name} failed");
        self.wait(Duration::from_secs(20))
    }

    pub fn wait(&mut self, limit: Duration) -> ExitStatus {
        let deadline = std::time::Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("skald did not exit in {limit:?}; stderr:\n{}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `skald listening on http://127.0.0.1:PORT token=TOKEN` → (PORT, TOKEN)
pub fn parse_ready_line(line: &str) -> Option<(u16, String)> {
    let rest = line.strip_prefix("skald listening on http://127.0.0.1:")?;
    let (port, token) = rest.split_once(" token=")?;
    let token_ok = token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit());
    token_ok.then(|| (port.parse().ok()).map(|p| (p, token.to_owned())))?
}

/// A response read off a raw socket: for requests a normal client would not send.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Writes `request_head` (request line and headers, without the blank line) verbatim.
pub async fn raw(port: u16, request_head: &str) -> RawResponse {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
    let request = format!("{}\r\nConnection: close\r\n\r\n", request_head.trim_end());
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut bytes))
        .await
        .expect("response in time")
        .unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).expect("status line");
    let headers =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())).collect();
    RawResponse { status, headers, body: body.to_owned() }
}

/// The Unix permission bits of a path.
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Continues past every change that holds this person's turns (§3), as the page's
/// "Continue" does; returns how many there were.
pub async fn accept_holds(server: &Server, token: &str) -> usize {
    let (status, notices) = server.call(reqwest::Method::GET, "/api/notices", Some(token), None).await;
    assert_eq!(status, 200, "{notices}");
    let held: Vec<&serde_json::Value> = notices.as_array().unwrap().iter().filter(|n| n["holds"] == true).collect();
    for notice in &held {
        let path = format!("/api/notices/{}/accept", notice["id"]);
        let (status, body) = server.post(&path, Some(token), serde_json::json!({ "decision": "accept" })).await;
        assert_eq!(status, 200, "{body}");
    }
    held.len()
}

/// A system prompt as the model received it, without the person's own first line (issue
/// 22 #13), which every prompt Skald sends must start with.
pub fn unprefixed(prompt: &serde_json::Value) -> &str {
    let prompt = prompt.as_str().expect("a system prompt");
    let (line, rest) = prompt.split_once('\n').expect("a prompt line");
    assert!(line.starts_with("<!-- ") && line.ends_with(" -->") && line.len() == 41, "no prefix line: {prompt:?}");
    rest
}

/// Every file under `dir`, not entering folders named in `skipping`; nothing from a folder
/// that cannot be read. The source scans (neutrality, citations, layers) share it.
pub fn files_under(dir: &Path, skipping: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            out.push(path);
        } else if !skipping.iter().any(|skip| entry.file_name() == *skip) {
            files_under(&path, skipping, out);
        }
    }
}

/// The key a person's password unwraps, with their id and recorded file salt, read from a
/// data directory's shared database as Skald reads it: for tests that check files by hand.
pub async fn key_of(data_dir: &Path, name: &str, password: &str) -> (String, Vec<u8>, [u8; 16]) {
    use sqlx::ConnectOptions;
    let mut system = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(data_dir.join("database/system.db"))
        .read_only(true)
        .connect()
        .await
        .unwrap();
    let (id, salt): (String, Vec<u8>) = sqlx::query_as("SELECT id, file_salt FROM users WHERE name = ?")
        .bind(name)
        .fetch_one(&mut system)
        .await
        .unwrap();
    let wrap: Vec<u8> = sqlx::query_scalar("SELECT wrapped FROM key_wraps WHERE user_id = ? AND purpose = 'password'")
        .bind(&id)
        .fetch_one(&mut system)
        .await
        .unwrap();
    let purpose = skald::crypto::Purpose::Password;
    let dek = skald::crypto::unwrap(&skald::crypto::WrappedKey(wrap), password.as_bytes(), &id, purpose).unwrap();
    (id, dek.as_bytes().to_vec(), salt.try_into().unwrap())
}

/// A read-only connection to the private file of `id`, keyed with `key` and the salt the
/// file carries; `None` when the key does not open it.
pub async fn open_private(data_dir: &Path, id: &str, key: &[u8]) -> Option<sqlx::SqliteConnection> {
    use sqlx::ConnectOptions;
    let file = data_dir.join(format!("database/users/{id}.db"));
    let salt = skald::store::private::read_salt(&file).ok()?;
    let dek = skald::crypto::Dek::from_slice(key)?;
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&file)
        .pragma("key", dek.sqlcipher_key(&salt).to_string())
        .pragma("cipher_log_level", "NONE")
        .read_only(true);
    let mut conn = options.connect().await.ok()?;
    sqlx::query_scalar::<_, String>("SELECT user_id FROM space").fetch_one(&mut conn).await.ok()?;
    Some(conn)
}

/// A file server on 127.0.0.1 for download tests: serves one file at `/model.gguf`,
/// honouring `Range: bytes=N-`; while `cut_at` is set, a response stops after that many
/// bytes of the file, as a dropped connection would.
// Only the built-in model's download tests cut or hold a transfer.
#[cfg_attr(not(feature = "local-model"), allow(dead_code))]
pub struct FileServer {
    pub url: String,
    /// Each request's `Range` header, if it had one.
    pub ranges: std::sync::Arc<std::sync::Mutex<Vec<Option<String>>>>,
    pub cut_at: std::sync::Arc<std::sync::Mutex<Option<usize>>>,
    /// While set, a response pauses after that many bytes of the file until `release`.
    pub hold_at: std::sync::Arc<std::sync::Mutex<Option<usize>>>,
    pub release: std::sync::Arc<tokio::sync::Notify>,
}

impl FileServer {
    pub async fn start(file: Vec<u8>) -> Self {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/model.gguf", listener.local_addr().unwrap());
        let ranges = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let cut_at = std::sync::Arc::new(std::sync::Mutex::new(None));
        let hold_at = std::sync::Arc::new(std::sync::Mutex::new(None));
        let release = std::sync::Arc::new(tokio::sync::Notify::new());
        let file = std::sync::Arc::new(file);
        let (seen, cut, hold, go) = (ranges.clone(), cut_at.clone(), hold_at.clone(), release.clone());
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (file, seen, cut, hold, go) = (file.clone(), seen.clone(), cut.clone(), hold.clone(), go.clone());
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).await.unwrap_or(0) == 1 {
                        head.push(byte[0]);
                    }
                    let head = String::from_utf8_lossy(&head).to_string();
                    let range = head
                        .lines()
                        .find_map(|line| line.strip_prefix("range: ").or_else(|| line.strip_prefix("Range: ")))
                        .map(str::to_owned);
                    seen.lock().unwrap().push(range.clone());
                    let from: usize = range
                        .as_deref()
                        .and_then(|r| r.strip_prefix("bytes=")?.strip_suffix('-')?.parse().ok())
                        .unwrap_or(0);
                    let status = if range.is_some() {
                        format!("206 Partial Content\r\nContent-Range: bytes {from}-{}/{}", file.len() - 1, file.len())
                    } else {
                        "200 OK".to_owned()
                    };
                    let body = &file[from..];
                    let head =
                        format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                    let _ = stream.write_all(head.as_bytes()).await;
                    let limit =
                        cut.lock().unwrap().map_or(body.len(), |at: usize| at.saturating_sub(from).min(body.len()));
                    let pause = hold.lock().unwrap().map(|at: usize| at.saturating_sub(from).min(limit));
                    if let Some(pause) = pause {
                        let _ = stream.write_all(&body[..pause]).await;
                        let _ = stream.flush().await;
                        go.notified().await;
                        let _ = stream.write_all(&body[pause..limit]).await;
                    } else {
                        let _ = stream.write_all(&body[..limit]).await;
                    }
                    let _ = stream.shutdown().await;
                });
            }
        });
        Self { url, ranges, cut_at, hold_at, release }
    }
}

/// A server nobody here wrote (a Python package from PyPI, run from its environment),
/// started on 127.0.0.1 and killed when dropped. What it prints is kept in memory only,
/// for the failure message; its HOME and XDG folders are a temporary folder, and nothing
/// is fetched (the models it serves are files here).
pub struct PeerServer {
    process: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    output: Arc<Mutex<String>>,
    _home: TempDir,
}

impl PeerServer {
    /// How long a peer may take to start: Python imports and a model load, on a busy
    /// machine.
    const STARTUP: Duration = Duration::from_secs(60);

    /// Starts `program` with `args` and `--host 127.0.0.1 --port P` on a free port, until
    /// `health` answers 200.
    pub async fn start(program: &Path, args: &[&str], env: &[(&str, &Path)], health: &str) -> Self {
        let mut tries = 0;
        loop {
            tries += 1;
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            match Self::start_on(port, program, args, env, health).await {
                Ok(peer) => return peer,
                // The port went to another between the look and the bind: another port.
                Err(said) if said.contains("address already in use") && tries < 3 => {}
                Err(said) => panic!("{} did not start: {said}", program.display()),
            }
        }
    }

    /// As [`Self::start`], on `port`; else what the server said when it stopped, or when
    /// it had not answered in time.
    pub async fn start_on(
        port: u16,
        program: &Path,
        args: &[&str],
        env: &[(&str, &Path)],
        health: &str,
    ) -> Result<Self, String> {
        let home = tempfile::tempdir().unwrap();
        let mut process = Command::new(program)
            .args(args)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .envs(env.iter().map(|(k, v)| (*k, *v)))
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env("XDG_CACHE_HOME", home.path().join("cache"))
            .env("HF_HUB_OFFLINE", "1")
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|err| panic!("{} cannot start: {err}", program.display()));
        let output = Arc::new(Mutex::new(String::new()));
        let pipes: [Box<dyn Read + Send>; 2] =
            [Box::new(process.stdout.take().unwrap()), Box::new(process.stderr.take().unwrap())];
        for mut pipe in pipes {
            let sink = output.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
        }
        let mut peer = Self { process, url: format!("http://127.0.0.1:{port}"), output, _home: home };
        let deadline = std::time::Instant::now() + Self::STARTUP;
        let client = reqwest::Client::new();
        loop {
            let answer = client.get(format!("{}{health}", peer.url)).timeout(Duration::from_secs(5)).send().await;
            if answer.is_ok_and(|a| a.status() == 200) {
                return Ok(peer);
            }
            let stopped = peer.process.try_wait().unwrap().is_some();
            tokio::time::sleep(Duration::from_millis(100)).await;
            if stopped || std::time::Instant::now() > deadline {
                peer.kill();
                return Err(peer.said());
            }
        }
    }

    /// All the server has printed so far.
    pub fn said(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// Waits until the server's output holds `text`, for up to 30 s: a server may close a
    /// stream before its own account of why reaches its log.
    pub async fn says(&self, text: &str) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !self.said().contains(text) {
            if std::time::Instant::now() > deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }

    /// How many `POST path` requests the server logged (uvicorn's access log).
    pub fn posts(&self, path: &str) -> usize {
        self.said().matches(&format!("\"POST {path} HTTP/1.1\"")).count()
    }

    /// Kills the server, as a crash or an unplugged machine would stop it.
    pub fn kill(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

impl Drop for PeerServer {
    fn drop(&mut self) {
        self.kill();
    }
}
