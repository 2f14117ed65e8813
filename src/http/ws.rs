//! The live-event WebSocket at `/api/ws`. The route table has already checked the bearer
//! carried in the subprotocol list and the boundary has checked `Origin`, so this module
//! only completes the handshake — answering `skald.v1`, never echoing the bearer entry —
//! and runs the socket. For now it carries a hello and a heartbeat; turns, tool calls
//! and cards will ride on it.

use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::AppState;
use super::auth::{WS_PROTOCOL, offered_protocols};
use super::error::ApiError;

/// How often an idle socket hears from the server, so the page can tell a quiet server
/// from a dead one.
const HEARTBEAT: Duration = Duration::from_secs(15);

/// `GET /api/ws`
pub async fn upgrade(State(state): State<AppState>, headers: HeaderMap, upgrade: WebSocketUpgrade) -> Response {
    if !offered_protocols(&headers).any(|p| p == WS_PROTOCOL) {
        return ApiError::BadRequest {
            code: "subprotocol_required",
            message: format!("offer the subprotocol {WS_PROTOCOL} with the bearer entry"),
        }
        .into_response();
    }
    upgrade.protocols([WS_PROTOCOL]).on_upgrade(move |socket| run(socket, state))
}

async fn run(mut socket: WebSocket, state: AppState) {
    let hello = json!({ "type": "hello", "version": crate::VERSION }).to_string();
    if socket.send(Message::Text(hello.into())).await.is_err() {
        return;
    }
    let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => {
                let frame = CloseFrame { code: close_code::AWAY, reason: "server shutting down".into() };
                let _ = socket.send(Message::Close(Some(frame))).await;
                return;
            }
            _ = heartbeat.tick() => {
                let beat = json!({ "type": "heartbeat" }).to_string();
                if socket.send(Message::Text(beat.into())).await.is_err() {
                    return;
                }
            }
            incoming = socket.recv() => match incoming {
                // Pings are answered by the library; the page sends nothing we act on yet.
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
        }
    }
}
