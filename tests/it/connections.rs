//! Connection limits (§7): whoever can reach the port — any local account, no token
//! needed — cannot hold it shut with idle or half-sent connections, and one session
//! cannot open live-event sockets without end.

use std::time::{Duration, Instant};

use skald::http::auth::ws_bearer_protocol;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Error;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::support::{Sandbox, Server};

const PASSWORD: &str = "otter lantern quietly";

fn server_with(env: &[(&str, &str)]) -> Server {
    let mut sandbox = Sandbox::new();
    sandbox.env.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    Server::start_in(sandbox)
}

/// Whether the server closed `stream` within `limit`: end of file, or a reset.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let mut buffer = [0u8; 1024];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            // A response (a 408, say) may come before the close.
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test]
async fn two_thousand_idle_connections_do_not_keep_the_real_client_out() {
    const IDLE: usize = 2000;
    // The test holds its own end of every connection; the server raises its own limit.
    rlimit::increase_nofile_limit(u64::MAX).unwrap();
    // A cap below the idle connections, and a header deadline longer than opening them
    // takes, so only closing the oldest to make room lets the real client in.
    let server = server_with(&[("SKALD_TEST_MAX_CONNECTIONS", "1000"), ("SKALD_TEST_HEADER_TIMEOUT_MS", "15000")]);
    let opening = Instant::now();
    let mut idle = Vec::with_capacity(IDLE);
    for _ in 0..IDLE {
        idle.push(TcpStream::connect(("127.0.0.1", server.port)).await.expect("connect"));
    }
    let opened = opening.elapsed();

    let asking = Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(10), server.get("/api/health")).await;
    let answered = asking.elapsed();
    let answer = answer.expect("the real client is answered within 10 s with 2,000 idle connections open");
    assert_eq!(answer.status(), 200);

    // Those closed to make room go at once, the rest when their first headers are late.
    let mut still_open = 0;
    for stream in &mut idle {
        let left = Duration::from_secs(30).saturating_sub(opening.elapsed());
        if !closed_within(stream, left).await {
            still_open += 1;
        }
    }
    let all_closed = opening.elapsed();
    assert_eq!(still_open, 0, "idle connections left open 30 s after the first was opened");
    eprintln!(
        "{IDLE} idle connections opened in {opened:?}; the real client answered in {answered:?}; all idle ones \
         closed {all_closed:?} after the first was opened"
    );
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_disconnected() {
    let server = server_with(&[("SKALD_TEST_HEADER_TIMEOUT_MS", "1000")]);
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
    let started = Instant::now();
    let head = format!("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n", server.port);
    stream.write_all(head.as_bytes()).await.unwrap();
    // A header line now and then does not buy more time.
    let (mut reading, mut writing) = stream.into_split();
    let trickle = tokio::spawn(async move {
        for n in 0.. {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if writing.write_all(format!("X-Slow-{n}: 1\r\n").as_bytes()).await.is_err() {
                return;
            }
        }
    });
    let mut buffer = [0u8; 1024];
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match reading.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    trickle.abort();
    let took = started.elapsed();
    assert!(closed.is_ok(), "a half-sent request head was still open after 10 s");
    assert!(took >= Duration::from_millis(900), "closed too soon: {took:?}");
    eprintln!("a half-sent request head was cut off after {took:?} (deadline 1 s)");
}

#[tokio::test]
async fn a_kept_alive_connection_with_no_next_request_is_closed() {
    let server = server_with(&[("SKALD_TEST_IDLE_TIMEOUT_MS", "1000")]);
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
    let request = format!(
        "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\r\n",
        server.port, server.token
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("\"status\":\"ok\"") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer)).await.unwrap().unwrap();
        assert!(n > 0, "closed before answering");
        answer.extend_from_slice(&buffer[..n]);
    }
    let started = Instant::now();
    assert!(closed_within(&mut stream, Duration::from_secs(10)).await, "an idle kept-alive connection stayed open");
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(900), "closed too soon: {took:?}");
    eprintln!("an idle kept-alive connection was closed after {took:?} (timeout 1 s)");
}

#[tokio::test]
async fn a_session_may_hold_eight_live_sockets_and_a_ninth_is_refused() {
    let server = Server::start();
    let (status, setup) =
        server.post("/api/setup", None, serde_json::json!({ "name": "Ada", "password": PASSWORD })).await;
    assert_eq!(status, 201, "{setup}");
    let token = setup["token"].as_str().unwrap().to_owned();
    let open = || {
        let mut req = format!("ws://127.0.0.1:{}/api/ws", server.port).into_client_request().unwrap();
        let offered = format!("skald.v1, {}", ws_bearer_protocol(&token));
        req.headers_mut().insert("sec-websocket-protocol", offered.parse().unwrap());
        tokio_tungstenite::connect_async(req)
    };
    let mut sockets = Vec::new();
    for n in 1..=8 {
        let (socket, _) = open().await.unwrap_or_else(|err| panic!("socket {n} refused: {err}"));
        sockets.push(socket);
    }
    match open().await {
        Err(Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), 429);
            let body: serde_json::Value = serde_json::from_slice(response.body().as_deref().unwrap()).unwrap();
            assert_eq!(body["error"]["code"], "too_many_sockets", "{body}");
        }
        Err(other) => panic!("expected a 429, got {other}"),
        Ok(_) => panic!("a ninth socket was accepted"),
    }

    // The launch token's socket (the window before login) is not the session's.
    let mut req = format!("ws://127.0.0.1:{}/api/ws", server.port).into_client_request().unwrap();
    let offered = format!("skald.v1, {}", ws_bearer_protocol(&server.token));
    req.headers_mut().insert("sec-websocket-protocol", offered.parse().unwrap());
    tokio_tungstenite::connect_async(req).await.expect("the launch token's socket");

    // A socket that closes gives its place back.
    let mut closing = sockets.pop().unwrap();
    closing.close(None).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match open().await {
            Ok((socket, _)) => {
                sockets.push(socket);
                break;
            }
            Err(_) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(err) => panic!("the closed socket's place was not given back: {err}"),
        }
    }
}
