//! Fetching a model file over HTTP(S) (§9): streamed to a partial file with progress,
//! resumed where an interrupted transfer stopped (an HTTP range request), and hashed as it
//! arrives, so the caller can check the whole file's SHA-256 before anything is offered.
//! It reaches public addresses only ([`crate::reach`]), the first and every redirect's: an
//! address copied from a page, or a server's redirect, cannot aim Skald's requests at this
//! computer or the networks around it.
//!
//! Never here: where the file goes next, or the catalogue; the caller decides both.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
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
    #[error("{0}")]
    NotPublic(NotPublic),
    #[error("the model's source answered HTTP {0}; the file may have moved — import it from a file instead")]
    Refused(u16),
    #[error("the transfer stopped after {received} bytes ({why}); start it again to resume where it stopped")]
    Interrupted { received: u64, why: String },
    #[error("could not write the model file: {0}")]
    Io(#[from] std::io::Error),
}

/// Where downloads may connect besides public addresses: nowhere, but a debug build's
/// tests serve files on 127.0.0.1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reach {
    pub loopback: bool,
}

impl Reach {
    /// Public addresses only; in debug builds `SKALD_TEST_DOWNLOAD_ALLOW_LOOPBACK=1` adds
    /// loopback. A release build ignores it.
    pub fn from_env() -> Self {
        let loopback =
            cfg!(debug_assertions) && std::env::var("SKALD_TEST_DOWNLOAD_ALLOW_LOOPBACK").is_ok_and(|v| v == "1");
        if loopback {
            tracing::warn!("model downloads may reach 127.0.0.1 (SKALD_TEST_DOWNLOAD_ALLOW_LOOPBACK, a test setting)");
        }
        Self { loopback }
    }

    /// Refuses `addrs` unless each is public, or loopback where that is allowed.
    fn check(self, host: &str, addrs: &[SocketAddr]) -> Result<(), NotPublic> {
        let allowed = |addr: &SocketAddr| self.loopback && addr.ip().is_loopback();
        let judged: Vec<SocketAddr> = addrs.iter().filter(|addr| !allowed(addr)).copied().collect();
        match crate::reach::first_non_public(&judged) {
            Some((ip, kind)) => Err(NotPublic { host: host.to_owned(), ip, kind }),
            None => Ok(()),
        }
    }

    /// Checks a URL whose host is an IP literal, which the client connects to without
    /// asking the resolver; names are checked by [`PublicOnly`] as they are resolved.
    fn check_literal(self, url: &url::Url) -> Result<(), NotPublic> {
        let port = url.port_or_known_default().unwrap_or(80);
        let ip: std::net::IpAddr = match url.host() {
            Some(url::Host::Ipv4(ip)) => ip.into(),
            Some(url::Host::Ipv6(ip)) => ip.into(),
            _ => return Ok(()),
        };
        self.check(&ip.to_string(), &[SocketAddr::new(ip, port)])
    }
}

/// A download refused because its address, or a redirect's, leads somewhere not public.
#[derive(Debug, Clone, thiserror::Error)]
#[error("refused: {host} resolves to {ip}, {kind}; models are downloaded only from public addresses")]
pub struct NotPublic {
    host: String,
    ip: std::net::IpAddr,
    kind: &'static str,
}

/// The client's resolver: every name is resolved and checked here, and the connection
/// goes to exactly the addresses checked, so a name cannot resolve to a public address
/// for the check and a private one for the connection.
struct PublicOnly(Reach);

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let reach = self.0;
        Box::pin(async move {
            let host = url::Host::Domain(name.as_str());
            let addrs = crate::reach::resolve(&host, 0).await?;
            reach.check(name.as_str(), &addrs)?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// The most redirects followed: model hosts hand files to their CDN.
const MAX_REDIRECTS: usize = 10;

/// The client downloads use: redirects followed, each checked like the first address; a
/// bounded connect, no overall timeout (files are gigabytes), a stall limit per read.
pub fn client(reach: Reach) -> reqwest::Client {
    let redirects = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        match reach.check_literal(attempt.url()) {
            Ok(()) => attempt.follow(),
            Err(refused) => attempt.error(refused),
        }
    });
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(20))
        .read_timeout(Duration::from_secs(60))
        .redirect(redirects)
        .dns_resolver(std::sync::Arc::new(PublicOnly(reach)))
        .no_proxy()
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
    reach: Reach,
    url: &str,
    partial: &Path,
    mut progress: impl FnMut(Progress),
) -> Result<String, DownloadError> {
    let parsed = url::Url::parse(url).map_err(|err| DownloadError::Unreachable(err.to_string()))?;
    reach.check_literal(&parsed).map_err(DownloadError::NotPublic)?;
    let mut hasher = Sha256::new();
    let mut have = hash_existing(partial, &mut hasher).await?;
    let mut request = client.get(parsed);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let response = request.send().await.map_err(|err| match refusal(&err) {
        Some(refused) => DownloadError::NotPublic(refused),
        None => DownloadError::Unreachable(describe(&err)),
    })?;
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

/// The refusal inside a failed request, if the resolver or a redirect refused it.
fn refusal(err: &reqwest::Error) -> Option<NotPublic> {
    let mut cause: Option<&dyn std::error::Error> = Some(err);
    while let Some(err) = cause {
        if let Some(refused) = err.downcast_ref::<NotPublic>() {
            return Some(refused.clone());
        }
        cause = err.source();
    }
    None
}

fn describe(err: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    if err.is_timeout() { "it timed out".to_owned() } else { cause.to_string() }
}

/// Why a downloaded file was deleted: its checksum is not the one expected.
pub fn mismatch(actual: &str, expected: &str) -> String {
    format!(
        "the file's checksum is {actual}, not the expected {expected}: it was damaged or replaced on the way, so it \
         was deleted. Try again, or import a copy you trust."
    )
}

/// A download as administrators see it.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
#[ts(rename = "DownloadStatus")]
pub struct Status {
    pub id: String,
    /// The catalogue's id for the model, when it is one of the catalogue's.
    pub catalogue: Option<String>,
    pub name: String,
    pub url: String,
    pub received: u64,
    pub total: Option<u64>,
    /// `running`, `checking`, `done`, `interrupted` or `failed`.
    #[ts(type = "'running' | 'checking' | 'done' | 'interrupted' | 'failed'")]
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
