//! Serving the loopback port connection by connection, so that nobody who can reach it —
//! any local account, no token needed — can hold it shut (§7). A new connection must
//! finish its first request's headers within a deadline, a kept-alive one is closed when
//! no next request comes, and their number is capped below the open-file limit. At the
//! cap, the oldest connection that has not yet made an authenticated request is closed to
//! make room: idle sockets from elsewhere never lock out the real client, and a client
//! that has authenticated is never closed for one that has not.
//!
//! Never here: routes, tokens or who a caller is. The auth layer marks a connection
//! authenticated through the [`Connection`] it finds in the request's extensions.

use std::collections::BTreeMap;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower_service::Service;

/// Descriptors kept back from connections: the databases (each open person's file with
/// its journal), the model worker's pipes, model files being read, logs.
const RESERVED_FILES: u64 = 256;
/// Beyond this, more connections only cost memory: a few people's windows and scripts
/// use tens.
const MOST_CONNECTIONS: usize = 4096;
/// How long accepting pauses after an error that is not the peer's (out of descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(200);
/// The cap's warning is repeated at most this often while it holds.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// How long connections may take and how many may be open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long a new connection has to finish sending its first request's headers.
    pub header_timeout: Duration,
    /// How long a kept-alive connection may wait for its next request's headers.
    pub idle_timeout: Duration,
    /// The most connections open at once, WebSockets included.
    pub max_connections: usize,
}

impl Limits {
    /// The defaults for a process that may hold `open_files` descriptors: half of what the
    /// reserve leaves, so connections alone can never exhaust them.
    pub fn for_open_files(open_files: u64) -> Self {
        let spare = usize::try_from(open_files.saturating_sub(RESERVED_FILES) / 2).unwrap_or(usize::MAX);
        Self {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            max_connections: spare.clamp(16, MOST_CONNECTIONS),
        }
    }

    /// The defaults, with `SKALD_TEST_HEADER_TIMEOUT_MS`, `SKALD_TEST_IDLE_TIMEOUT_MS` and
    /// `SKALD_TEST_MAX_CONNECTIONS` honoured in debug builds only.
    pub fn from_env(open_files: u64) -> Self {
        let mut limits = Self::for_open_files(open_files);
        if cfg!(debug_assertions) {
            let read = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
            if let Some(ms) = read("SKALD_TEST_HEADER_TIMEOUT_MS") {
                limits.header_timeout = Duration::from_millis(ms);
            }
            if let Some(ms) = read("SKALD_TEST_IDLE_TIMEOUT_MS") {
                limits.idle_timeout = Duration::from_millis(ms);
            }
            if let Some(n) = read("SKALD_TEST_MAX_CONNECTIONS") {
                limits.max_connections = usize::try_from(n).unwrap_or(usize::MAX).max(1);
            }
        }
        limits
    }
}

/// The connection a request came on, as the auth layer sees it.
#[derive(Clone)]
pub struct Connection {
    authenticated: Arc<AtomicBool>,
}

impl Connection {
    /// A request on this connection passed the token or session check: from now on it is
    /// not closed to make room.
    pub fn mark_authenticated(&self) {
        self.authenticated.store(true, Ordering::Release);
    }
}

/// The open connections, oldest first.
#[derive(Clone, Default)]
struct Open(Arc<Mutex<Table>>);

#[derive(Default)]
struct Table {
    next: u64,
    all: BTreeMap<u64, Entry>,
}

struct Entry {
    authenticated: Arc<AtomicBool>,
    /// Cancelled to close the connection and make room.
    close: CancellationToken,
}

/// What admitting a connection brought about.
struct Admitted {
    connection: Connection,
    seat: Seat,
    close: CancellationToken,
    /// Whether the oldest unauthenticated connection was closed to make room.
    evicted: bool,
}

impl Open {
    /// Takes a place for a new connection, closing the oldest unauthenticated one when all
    /// `max` are taken; `None` when every open connection has authenticated.
    fn admit(&self, max: usize) -> Option<Admitted> {
        let mut table = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut evicted = false;
        if table.all.len() >= max {
            let oldest = table.all.iter().find(|(_, e)| !e.authenticated.load(Ordering::Acquire)).map(|(&id, _)| id)?;
            if let Some(entry) = table.all.remove(&oldest) {
                entry.close.cancel();
            }
            evicted = true;
        }
        let id = table.next;
        table.next += 1;
        let authenticated = Arc::new(AtomicBool::new(false));
        let close = CancellationToken::new();
        table.all.insert(id, Entry { authenticated: Arc::clone(&authenticated), close: close.clone() });
        Some(Admitted {
            connection: Connection { authenticated },
            seat: Seat { open: self.clone(), id },
            close,
            evicted,
        })
    }
}

/// A connection's place among the open ones, given back when the socket closes.
struct Seat {
    open: Open,
    id: u64,
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.open.0.lock().unwrap_or_else(PoisonError::into_inner).all.remove(&self.id);
    }
}

/// The socket holds its place until it closes — after an upgrade too, since a WebSocket
/// outlives the HTTP connection that opened it.
struct Seated {
    stream: TcpStream,
    _seat: Seat,
}

impl AsyncRead for Seated {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Seated {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// Accepts and serves connections until `shutdown`, then lets in-flight requests finish.
pub async fn serve(listener: TcpListener, router: Router, limits: Limits, shutdown: CancellationToken) {
    tracing::info!(
        max_connections = limits.max_connections,
        header_timeout_ms = limits.header_timeout.as_millis() as u64,
        idle_timeout_ms = limits.idle_timeout.as_millis() as u64,
        "connection limits"
    );
    let open = Open::default();
    let tracker = TaskTracker::new();
    let mut http = http1::Builder::new();
    // hyper's deadline runs from when a connection starts waiting for a request's headers
    // to when they are in: between requests, that is the idle timeout. The first
    // request's shorter deadline is `serve_one`'s.
    http.timer(TokioTimer::new()).header_read_timeout(limits.idle_timeout);
    let mut warned: Option<Instant> = None;
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(err) if is_peer_error(&err) => continue,
            Err(err) => {
                tracing::warn!(%err, "could not accept a connection");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Some(admitted) = open.admit(limits.max_connections) else {
            tracing::warn!(max = limits.max_connections, "every connection has authenticated; refusing a new one");
            continue;
        };
        if admitted.evicted && warned.is_none_or(|at| at.elapsed() >= WARN_EVERY) {
            tracing::warn!(
                max = limits.max_connections,
                "too many connections; closing the oldest that have not authenticated to make room"
            );
            warned = Some(Instant::now());
        }
        // Without TCP_NODELAY, Nagle's algorithm holds small streamed writes for ~40 ms.
        if let Err(err) = stream.set_nodelay(true) {
            tracing::warn!(%err, "could not set TCP_NODELAY");
        }
        let io = Seated { stream, _seat: admitted.seat };
        let one = One { connection: admitted.connection, close: admitted.close, shutdown: shutdown.clone() };
        tracker.spawn(one.serve(http.clone(), io, router.clone(), limits.header_timeout));
    }
    tracker.close();
    tracker.wait().await;
}

/// Errors that end one attempted connection, not the listener.
fn is_peer_error(err: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(err.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset)
}

/// One connection's handles.
struct One {
    connection: Connection,
    close: CancellationToken,
    shutdown: CancellationToken,
}

impl One {
    /// Serves the connection until it ends, its first headers are late, it is closed to
    /// make room, or the server shuts down. Returning drops the socket, which closes it.
    async fn serve(self, http: http1::Builder, io: Seated, router: Router, header_timeout: Duration) {
        let Self { connection, close, shutdown } = self;
        let first_request = CancellationToken::new();
        let service = {
            let first_request = first_request.clone();
            hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                first_request.cancel();
                req.extensions_mut().insert(connection.clone());
                let mut router = router.clone();
                router.call(req)
            })
        };
        let mut conn = pin!(http.serve_connection(TokioIo::new(io), service).with_upgrades());
        let mut header_deadline = pin!(tokio::time::sleep(header_timeout));
        let mut awaiting_headers = true;
        loop {
            tokio::select! {
                biased;
                _ = conn.as_mut() => return,
                () = first_request.cancelled(), if awaiting_headers => awaiting_headers = false,
                () = &mut header_deadline, if awaiting_headers => return,
                () = close.cancelled() => return,
                () = shutdown.cancelled() => break,
            }
        }
        conn.as_mut().graceful_shutdown();
        let _ = conn.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_the_reserve_and_half_the_rest_to_everything_else() {
        assert_eq!(Limits::for_open_files(1024).max_connections, 384);
        assert_eq!(Limits::for_open_files(1_048_576).max_connections, MOST_CONNECTIONS);
        assert_eq!(Limits::for_open_files(u64::MAX).max_connections, MOST_CONNECTIONS);
        assert_eq!(Limits::for_open_files(100).max_connections, 16);
    }

    #[test]
    fn at_the_cap_the_oldest_unauthenticated_connection_makes_room() {
        let open = Open::default();
        let first = open.admit(3).unwrap();
        first.connection.mark_authenticated();
        let second = open.admit(3).unwrap();
        let third = open.admit(3).unwrap();
        assert!(!(first.evicted || second.evicted || third.evicted));

        let fourth = open.admit(3).unwrap();
        assert!(fourth.evicted);
        assert!(!first.close.is_cancelled(), "an authenticated connection stays");
        assert!(second.close.is_cancelled(), "the oldest unauthenticated one goes");
        assert!(!third.close.is_cancelled());

        third.connection.mark_authenticated();
        fourth.connection.mark_authenticated();
        assert!(open.admit(3).is_none(), "no room is made by closing an authenticated connection");
    }

    #[test]
    fn a_closed_socket_gives_its_place_back() {
        let open = Open::default();
        let first = open.admit(1).unwrap();
        first.connection.mark_authenticated();
        assert!(open.admit(1).is_none());
        drop(first.seat);
        assert!(open.admit(1).is_some_and(|a| !a.evicted));
    }
}
