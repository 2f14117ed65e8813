//! Fetching a model file over HTTP(S) (§9): streamed to a partial file with progress,
//! resumed where an interrupted transfer stopped (an HTTP range request), and hashed as it
//! arrives, so the caller can check the whole file's SHA-256 before anything is offered.
//!
//! Never here: where the file goes next, or the catalogue; the caller decides both.

use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How far a transfer has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub received: u64,
    /// The whole file's size, when the server says.
    pub total: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("the model's source cannot be reached ({0}); check the connection, or import the file instead")]
    Unreachable(String),
    #[error("the model's source answered HTTP {0}; the file may have moved — import it from a file instead")]
    Refused(u16),
    #[error("the transfer stopped after {received} bytes ({why}); start it again to resume where it stopped")]
    Interrupted { received: u64, why: String },
    #[error("could not write the model file: {0}")]
    Io(#[from] std::io::Error),
}

/// The client downloads use: redirects followed (model hosts hand files to their CDN), a
/// bounded connect, no overall timeout (files are gigabytes), a stall limit per read.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(20))
        .read_timeout(Duration::from_secs(60))
        .redirect(reqwest::redirect::Policy::limited(10))
        .user_agent(concat!("skald/", env!("CARGO_PKG_VERSION")))
        .build()
        .expect("the download client builds with static settings")
}

/// How often progress is reported, at most.
const REPORT_EVERY: Duration = Duration::from_millis(200);

/// Downloads `url` into `partial`, continuing after the bytes it already holds, and calls
/// `progress` as bytes arrive. Returns the SHA-256 of the whole file. A server that
/// ignores the range request sends the whole file again, and the partial file starts over.
pub async fn fetch(
    client: &reqwest::Client,
    url: &str,
    partial: &Path,
    mut progress: impl FnMut(Progress),
) -> Result<String, DownloadError> {
    let mut hasher = Sha256::new();
    let mut have = hash_existing(partial, &mut hasher).await?;
    let mut request = client.get(url);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let response = request.send().await.map_err(|err| DownloadError::Unreachable(describe(&err)))?;
    let status = response.status();
    let total = match status.as_u16() {
        206 => content_range_total(response.headers()).or(response.content_length().map(|n| n + have)),
        200 => {
            if have > 0 {
                // No resuming here: start over.
                hasher = Sha256::new();
                have = 0;
            }
            response.content_length()
        }
        // The partial file already holds everything.
        416 if have > 0 => return Ok(hex::encode(hasher.finalize())),
        code => return Err(DownloadError::Refused(code)),
    };
    let mut options = tokio::fs::OpenOptions::new();
    if have > 0 {
        options.append(true);
    } else {
        options.create(true).write(true).truncate(true);
    }
    let mut file = options.open(partial).await?;
    let mut received = have;
    progress(Progress { received, total });
    let mut reported = Instant::now();
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(err) => {
                file.flush().await?;
                file.sync_all().await?;
                progress(Progress { received, total });
                return Err(DownloadError::Interrupted { received, why: describe(&err) });
            }
        };
        file.write_all(&chunk).await?;
        hasher.update(&chunk);
        received += chunk.len() as u64;
        if reported.elapsed() >= REPORT_EVERY {
            progress(Progress { received, total });
            reported = Instant::now();
        }
    }
    file.flush().await?;
    file.sync_all().await?;
    progress(Progress { received, total });
    if let Some(total) = total
        && received < total
    {
        return Err(DownloadError::Interrupted {
            received,
            why: format!("the server sent {received} of {total} bytes"),
        });
    }
    progress(Progress { received, total });
    Ok(hex::encode(hasher.finalize()))
}

/// Feeds the bytes already in `partial` to `hasher`; how many there were.
async fn hash_existing(partial: &Path, hasher: &mut Sha256) -> std::io::Result<u64> {
    let mut file = match tokio::fs::File::open(partial).await {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(err) => return Err(err),
    };
    let mut buffer = vec![0u8; 1 << 20];
    let mut total = 0;
    loop {
        let read = file.read(&mut buffer).await?;
        if read == 0 {
            return Ok(total);
        }
        hasher.update(&buffer[..read]);
        total += read as u64;
    }
}

/// The whole size from `Content-Range: bytes a-b/total`.
fn content_range_total(headers: &reqwest::header::HeaderMap) -> Option<u64> {
    let value = headers.get(reqwest::header::CONTENT_RANGE)?.to_str().ok()?;
    value.rsplit('/').next()?.trim().parse().ok()
}

fn describe(err: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    if err.is_timeout() { "it timed out".to_owned() } else { cause.to_string() }
}

/// A download as administrators see it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Status {
    pub id: String,
    /// The catalogue's id for the model, when it is one of the catalogue's.
    pub catalogue: Option<String>,
    pub name: String,
    pub url: String,
    pub received: u64,
    pub total: Option<u64>,
    /// `running`, `checking`, `done`, `interrupted` or `failed`.
    pub state: &'static str,
    pub error: Option<String>,
    /// The model it became, once done.
    pub model: Option<String>,
}

/// The downloads since Skald started, by id.
#[derive(Debug, Default)]
pub struct Downloads {
    all: std::sync::Mutex<Vec<Status>>,
}

impl Downloads {
    /// Registers a download, unless one with this id is under way.
    pub fn begin(&self, id: &str, name: &str, url: &str, catalogue: Option<&str>) -> bool {
        let mut all = self.all.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if all.iter().any(|d| d.id == id && matches!(d.state, "running" | "checking")) {
            return false;
        }
        all.retain(|d| d.id != id);
        all.push(Status {
            id: id.to_owned(),
            catalogue: catalogue.map(str::to_owned),
            name: name.to_owned(),
            url: url.to_owned(),
            received: 0,
            total: None,
            state: "running",
            error: None,
            model: None,
        });
        true
    }

    /// Changes the download `id` and returns it as it now is.
    pub fn update(&self, id: &str, change: impl FnOnce(&mut Status)) -> Option<Status> {
        let mut all = self.all.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let status = all.iter_mut().find(|d| d.id == id)?;
        change(status);
        Some(status.clone())
    }

    pub fn list(&self) -> Vec<Status> {
        self.all.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}
