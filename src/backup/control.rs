//! The running server's control socket, `<data dir>/run/control.sock`: how `skald backup`
//! asks a running Skald to write a backup, since only the server can hold its open files
//! still. The socket is a Unix socket in the 0700 `run/` folder, made 0600, and a peer
//! whose user id is not the server's own is refused — only Skald and whoever owns the
//! data directory reach it, never anything over the network.
//!
//! One request per connection, one JSON line: `{"backup": {"to", "passphrase",
//! "include_models"}}`. The server answers with JSON lines: `{"started": {"id", "path"}}`,
//! then `{"progress": …}` as it goes, and last `{"done": …}` or `{"error": "…"}`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;
use zeroize::Zeroizing;

use super::{Backups, Done, Kind, Progress, Request};

const SOCKET: &str = "control.sock";
/// A request line is small; a peer sending more is not a Skald client.
const MAX_REQUEST: usize = 64 * 1024;

pub fn socket_path(root: &Path) -> PathBuf {
    root.join("run").join(SOCKET)
}

#[derive(Serialize, Deserialize)]
struct BackupAsk {
    to: PathBuf,
    // Plain for serde; moved into a zeroizing buffer as soon as it is read.
    passphrase: String,
    #[serde(default)]
    include_models: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Ask {
    Backup(BackupAsk),
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Started { id: String, path: String },
    Progress(Progress),
    Done(Done),
    Error(String),
}

/// Serves the control socket until `shutdown`; removes it then. A socket that cannot be
/// made (a path too long for a Unix socket) is logged, and `skald backup` says the
/// server did not answer.
pub async fn serve(root: PathBuf, backups: Backups, shutdown: CancellationToken) {
    let path = socket_path(&root);
    // A socket left by a process that was killed; the data directory's lock says no
    // other Skald is running.
    let _ = std::fs::remove_file(&path);
    let listener = match UnixListener::bind(&path) {
        Ok(listener) => listener,
        Err(err) => {
            tracing::warn!(error = %err, path = %path.display(), "control socket not available: `skald backup` cannot reach this server");
            return;
        }
    };
    // A socket is made with the umask's 0700; like every file here it is 0600.
    if let Err(err) = std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)) {
        tracing::warn!(error = %err, "could not make the control socket 0600");
    }
    let own = rustix::process::getuid().as_raw();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                match stream.peer_cred() {
                    Ok(cred) if cred.uid() == own => {
                        tokio::spawn(answer(stream, backups.clone()));
                    }
                    _ => tracing::warn!("a process of another user tried the control socket; refused"),
                }
            }
        }
    }
    let _ = std::fs::remove_file(&path);
}

async fn answer(stream: UnixStream, backups: Backups) {
    let (read, mut write) = stream.into_split();
    let mut line = Vec::new();
    let mut reader = BufReader::new(read).take(MAX_REQUEST as u64);
    if reader.read_until(b'\n', &mut line).await.is_err() {
        return;
    }
    let line = Zeroizing::new(line);
    let ask: Ask = match serde_json::from_slice(&line) {
        Ok(ask) => ask,
        Err(err) => {
            let _ = send(&mut write, &Answer::Error(format!("not a request this server reads: {err}"))).await;
            return;
        }
    };
    let Ask::Backup(ask) = ask;
    let request =
        Request { to: ask.to, passphrase: Zeroizing::new(ask.passphrase), include_models: ask.include_models };
    let started = match backups.start(request, Kind::CommandLine, None).await {
        Ok(started) => started,
        Err(err) => {
            let _ = send(&mut write, &Answer::Error(err.to_string())).await;
            return;
        }
    };
    let started_line = Answer::Started { id: started.id().to_owned(), path: started.path().display().to_string() };
    if send(&mut write, &started_line).await.is_err() {
        return;
    }
    // Progress goes out through a channel: the report is called from copying threads.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
    let report = backups.tracking(Arc::new(move |progress: &Progress| {
        let _ = tx.send(progress.clone());
    }));
    let run = tokio::spawn(started.run(report));
    while let Some(progress) = rx.recv().await {
        // The client going away does not stop the backup.
        let _ = send(&mut write, &Answer::Progress(progress)).await;
    }
    let last = match run.await {
        Ok(Ok(done)) => Answer::Done(done),
        Ok(Err(err)) => Answer::Error(err.to_string()),
        Err(err) => Answer::Error(format!("the backup stopped: {err}")),
    };
    let _ = send(&mut write, &last).await;
}

async fn send(write: &mut (impl AsyncWriteExt + Unpin), answer: &Answer) -> io::Result<()> {
    let mut line = serde_json::to_vec(answer).map_err(io::Error::other)?;
    line.push(b'\n');
    write.write_all(&line).await?;
    write.flush().await
}

/// Asks a running Skald for a backup; `Ok(None)` when none listens at `root`. Each
/// answer line is handed to `seen` as it comes.
pub async fn ask_backup(
    root: &Path,
    to: &Path,
    passphrase: &str,
    include_models: bool,
    mut seen: impl FnMut(&Answer),
) -> io::Result<Option<Result<Done, String>>> {
    let stream = match UnixStream::connect(socket_path(root)).await {
        Ok(stream) => stream,
        Err(err) if matches!(err.kind(), io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused) => {
            return Ok(None);
        }
        Err(err) => return Err(err),
    };
    let (read, mut write) = stream.into_split();
    let ask = Ask::Backup(BackupAsk { to: to.to_path_buf(), passphrase: passphrase.to_owned(), include_models });
    let mut line = Zeroizing::new(serde_json::to_vec(&ask).map_err(io::Error::other)?);
    let Ask::Backup(mut ask) = ask;
    zeroize::Zeroize::zeroize(&mut ask.passphrase);
    line.push(b'\n');
    write.write_all(&line).await?;
    write.flush().await?;
    let mut lines = BufReader::new(read).lines();
    while let Some(line) = lines.next_line().await? {
        let answer: Answer = serde_json::from_str(&line).map_err(io::Error::other)?;
        seen(&answer);
        match answer {
            Answer::Done(done) => return Ok(Some(Ok(done))),
            Answer::Error(message) => return Ok(Some(Err(message))),
            Answer::Started { .. } | Answer::Progress(_) => {}
        }
    }
    Ok(Some(Err("the running Skald stopped answering before the backup finished".into())))
}
