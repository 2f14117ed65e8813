//! The live-event WebSocket: bearer in the subprotocol list, `skald.v1` in the answer.

use futures_util::StreamExt;
use skald::http::auth::ws_bearer_protocol;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{Error, Message};

use crate::support::Server;

fn request(server: &Server, path: &str, protocols: &str) -> tokio_tungstenite::tungstenite::handshake::client::Request {
    let mut req = format!("ws://127.0.0.1:{}{path}", server.port).into_client_request().unwrap();
    if !protocols.is_empty() {
        req.headers_mut().insert("sec-websocket-protocol", protocols.parse().unwrap());
    }
    req
}

fn refused_status(result: Result<impl Sized, Error>) -> u16 {
    match result {
        Err(Error::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("expected an HTTP refusal, got {other}"),
        Ok(_) => panic!("the handshake was accepted"),
    }
}

#[tokio::test]
async fn the_right_bearer_is_answered_with_skald_v1_and_a_hello() {
    let server = Server::start();
    let offered = format!("skald.v1, {}", ws_bearer_protocol(&server.token));
    let (mut socket, response) = tokio_tungstenite::connect_async(request(&server, "/api/ws", &offered)).await.unwrap();
    assert_eq!(response.headers()["sec-websocket-protocol"], "skald.v1");
    let first =
        tokio::time::timeout(std::time::Duration::from_secs(10), socket.next()).await.unwrap().unwrap().unwrap();
    let Message::Text(text) = first else { panic!("expected text, got {first:?}") };
    let hello: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(hello["type"], "hello");
}

#[tokio::test]
async fn a_wrong_or_missing_bearer_gets_401() {
    let server = Server::start();
    for offered in ["skald.v1, skald.bearer.d3Jvbmc", "skald.v1", &format!("skald.v1, skald.bearer.{}", server.token)] {
        let result = tokio_tungstenite::connect_async(request(&server, "/api/ws", offered)).await;
        assert_eq!(refused_status(result), 401, "{offered}");
    }
}

#[tokio::test]
async fn a_token_in_the_query_string_is_refused() {
    let server = Server::start();
    for query in [format!("?token={}", server.token), format!("?access_token={}", server.token)] {
        let result = tokio_tungstenite::connect_async(request(&server, &format!("/api/ws{query}"), "skald.v1")).await;
        assert_eq!(refused_status(result), 401, "{query}");
    }
}

#[tokio::test]
async fn a_bearer_without_the_skald_v1_protocol_is_a_bad_request() {
    let server = Server::start();
    let result =
        tokio_tungstenite::connect_async(request(&server, "/api/ws", &ws_bearer_protocol(&server.token))).await;
    assert_eq!(refused_status(result), 400);
}

#[tokio::test]
async fn shutdown_closes_live_sockets_with_going_away() {
    let mut server = Server::start();
    let offered = format!("skald.v1, {}", ws_bearer_protocol(&server.token));
    let (mut socket, _) = tokio_tungstenite::connect_async(request(&server, "/api/ws", &offered)).await.unwrap();
    let _hello = socket.next().await;
    let pid = server.pid().to_string();
    std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let close = tokio::time::timeout(std::time::Duration::from_secs(10), socket.next()).await.unwrap();
    match close {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(u16::from(frame.code), 1001),
        other => panic!("expected a close frame, got {other:?}"),
    }
    assert_eq!(server.wait(std::time::Duration::from_secs(20)).code(), Some(0));
}
