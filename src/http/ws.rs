//! The live-event WebSocket at `/api/ws`. The route table has already checked the bearer
//! carried in the subprotocol list and the boundary has checked `Origin`, so this module
//! only completes the handshake — answering `skald.v1`, never echoing the bearer entry —
//! and runs the socket: a hello, a heartbeat, and — when the bearer is a session — that
//! person's live events (tokens, tool calls, turn ends). A socket never carries another
//! person's events, and it closes when its session locks.

use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use futures_util::SinkExt;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use super::AppState;
use super::auth::{Caller, WS_PROTOCOL, offered_protocols};
use super::error::ApiError;
use crate::agent::events::LiveEvent;

/// How often an idle socket hears from the server, so the page can tell a quiet server
/// from a dead one.
const HEARTBEAT: Duration = Duration::from_secs(15);

/// `GET /api/ws`
pub async fn upgrade(
    State(state): State<AppState>,
    caller: Option<Caller>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    if !offered_protocols(&headers).any(|p| p == WS_PROTOCOL) {
        return ApiError::BadRequest {
            code: "subprotocol_required",
            message: format!("offer the subprotocol {WS_PROTOCOL} with the bearer entry"),
        }
        .into_response();
    }
    // Held for the socket's life; the launch token's sockets (before login) are the
    // window's own and not counted.
    let seat = match &caller {
        Some(caller) => match caller.session.seat_socket(MAX_SOCKETS_PER_SESSION) {
            Some(seat) => Some(seat),
            None => {
                return ApiError::TooMany {
                    code: "too_many_sockets",
                    message: format!(
                        "this session already has {MAX_SOCKETS_PER_SESSION} live connections open; close a window \
                         or tab of Skald first"
                    ),
                }
                .into_response();
            }
        },
        None => None,
    };
    // The page sends almost nothing; a small read buffer keeps each poll cheap.
    upgrade.protocols([WS_PROTOCOL]).read_buffer_size(4 * 1024).max_message_size(64 * 1024).on_upgrade(
        move |socket| async move {
            let _seat = seat;
            run(socket, state, caller).await;
        },
    )
}

/// The most live-event sockets one session may hold open: a window or two per person,
/// with room for reconnects, but not a socket per descriptor the process has.
pub const MAX_SOCKETS_PER_SESSION: usize = 8;

/// The most events sent in one flush.
const MAX_BATCH: usize = 256;

/// The close code a socket gets when its session ends (lock, logout, idle).
const CLOSE_LOCKED: u16 = 4001;

async fn run(mut socket: WebSocket, state: AppState, caller: Option<Caller>) {
    // Subscribed before the hello, so nothing sent after the client hears it is missed.
    // Only a session's socket listens to the bus at all.
    let mut events = caller.as_ref().map(|c| state.agent.events().subscribe(&c.session.user_id));
    let user = caller.as_ref().map(|c| c.session.user_id.clone());
    let locked = caller.map(|c| c.session.ended().clone()).unwrap_or_default();
    let hello = LiveEvent::Hello { version: crate::VERSION.to_owned(), user: user.clone() }.to_json();
    if socket.send(Message::Text(hello.into())).await.is_err() {
        return;
    }
    let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
    // Waited on across the whole loop, which turns once per event of every reply: made
    // once, rather than registered and dropped again at each turn.
    let shutdown = state.shutdown.cancelled();
    let ended = locked.cancelled();
    tokio::pin!(shutdown, ended);
    loop {
        tokio::select! {
            () = &mut shutdown => {
                let frame = CloseFrame { code: close_code::AWAY, reason: "server shutting down".into() };
                let _ = socket.send(Message::Close(Some(frame))).await;
                return;
            }
            () = &mut ended, if user.is_some() => {
                let frame = CloseFrame { code: CLOSE_LOCKED, reason: "locked".into() };
                let _ = socket.send(Message::Close(Some(frame))).await;
                return;
            }
            event = async { events.as_mut().expect("guarded").recv().await }, if events.is_some() => {
                let Some(receiver) = events.as_mut() else { return };
                // Everything already waiting goes out with the first, in one flush.
                let mut next = Some(event);
                // At most a batch at a time, so a steady stream still lets a lock be noticed.
                let mut batch = 0;
                while let Some(event) = next.take() {
                    batch += 1;
                    let text = match event {
                        // The person's own queue; the check stays as a second lock on the door.
                        Ok(event) if Some(&event.user) == user.as_ref() => Some(event.json.to_string()),
                        Ok(_) => None,
                        // Too slow to keep up: the page reloads the history instead.
                        Err(RecvError::Lagged(_)) => Some(LiveEvent::Lagged.to_json()),
                        Err(RecvError::Closed) => return,
                    };
                    if let Some(text) = text
                        && socket.feed(Message::Text(text.into())).await.is_err()
                    {
                        return;
                    }
                    if batch >= MAX_BATCH {
                        break;
                    }
                    next = match receiver.try_recv() {
                        Ok(event) => Some(Ok(event)),
                        Err(TryRecvError::Lagged(n)) => Some(Err(RecvError::Lagged(n))),
                        Err(TryRecvError::Empty | TryRecvError::Closed) => None,
                    };
                }
                if socket.flush().await.is_err() {
                    return;
                }
            }
            _ = heartbeat.tick() => {
                let beat = LiveEvent::Heartbeat.to_json();
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
