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
use tokio::time::Instant;

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

/// Tokens that follow one another closely go out together: once a write has carried a
/// token, the tokens behind it wait until this long after that write and go out in one
/// write then. A quarter of a 60 Hz screen's frame, so nobody sees it; a fast model's
/// reply then takes a few writes instead of one per token (each a system call and a trip
/// through the loopback's TCP on this side, a wake-up of the page on the other). Any
/// other event (a turn's start or end, a card) goes out at once, with the tokens held
/// before it, so neither the first token after it nor the end waits.
const PACE: Duration = Duration::from_millis(4);

/// When the events fed to a socket are written (see [`PACE`]).
#[derive(Debug, Default)]
struct Pacer {
    /// Until when tokens are held, set by a write that carried one.
    until: Option<Instant>,
    /// Whether tokens were fed and not yet written.
    holding: bool,
}

impl Pacer {
    /// Events were fed at `now`: `tokens` whether any was a token, `urgent` whether any was
    /// not (or the batch was full). Whether to write them now; if not, [`Pacer::due`] says when.
    fn fed(&mut self, tokens: bool, urgent: bool, now: Instant) -> bool {
        self.holding |= tokens;
        let paced = self.until.is_some_and(|until| now < until);
        urgent || (self.holding && !paced)
    }

    /// Everything fed was written at `now`.
    fn written(&mut self, now: Instant) {
        self.until = self.holding.then_some(now + PACE);
        self.holding = false;
    }

    /// When the held tokens are to be written, if any are held.
    fn due(&self) -> Option<Instant> {
        self.holding.then_some(self.until).flatten()
    }
}

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
    let mut pacer = Pacer::default();
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
                let (mut batch, mut tokens, mut others) = (0, false, false);
                while let Some(event) = next.take() {
                    batch += 1;
                    // Each with whether it is a token, the only kind paced.
                    let text = match event {
                        // The person's own queue; the check stays as a second lock on the door.
                        Ok(event) if Some(&event.user) == user.as_ref() => Some((event.json.to_string(), event.is_token())),
                        Ok(_) => None,
                        // Too slow to keep up: the page reloads the history instead.
                        Err(RecvError::Lagged(_)) => Some((LiveEvent::Lagged.to_json(), false)),
                        Err(RecvError::Closed) => return,
                    };
                    if let Some((text, token)) = text {
                        tokens |= token;
                        others |= !token;
                        if socket.feed(Message::Text(text.into())).await.is_err() {
                            return;
                        }
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
                if pacer.fed(tokens, others || batch >= MAX_BATCH, Instant::now()) {
                    if socket.flush().await.is_err() {
                        return;
                    }
                    pacer.written(Instant::now());
                }
            }
            () = tokio::time::sleep_until(pacer.due().unwrap_or_else(Instant::now)), if pacer.due().is_some() => {
                if socket.flush().await.is_err() {
                    return;
                }
                pacer.written(Instant::now());
            }
            _ = heartbeat.tick() => {
                let beat = LiveEvent::Heartbeat.to_json();
                if socket.send(Message::Text(beat.into())).await.is_err() {
                    return;
                }
                pacer.written(Instant::now());
            }
            incoming = socket.recv() => match incoming {
                // Pings are answered by the library; the page sends nothing we act on yet.
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_token_goes_at_once_and_those_right_behind_it_share_a_later_write() {
        let start = Instant::now();
        let mut pacer = Pacer::default();
        assert!(pacer.fed(true, false, start), "a token after quiet is written at once");
        pacer.written(start);
        let soon = start + Duration::from_millis(1);
        assert!(!pacer.fed(true, false, soon), "the next, right behind it, is held");
        assert!(!pacer.fed(true, false, soon + Duration::from_millis(1)), "and so is the one after");
        assert_eq!(pacer.due(), Some(start + PACE), "until a pace after the first write");
        pacer.written(start + PACE);
        assert_eq!(pacer.due(), None, "nothing is held once written");
        let later = start + PACE * 3;
        assert!(pacer.fed(true, false, later), "a token long after the last write goes at once");
    }

    #[test]
    fn any_other_event_goes_at_once_and_takes_the_held_tokens_with_it() {
        let start = Instant::now();
        let mut pacer = Pacer::default();
        assert!(pacer.fed(true, false, start));
        pacer.written(start);
        assert!(!pacer.fed(true, false, start + Duration::from_millis(1)), "a token is held");
        assert!(pacer.fed(false, true, start + Duration::from_millis(2)), "the turn's end is not, nor what was held");
        pacer.written(start + Duration::from_millis(2));
        assert_eq!(pacer.due(), None);
        // Both in one batch: written at once, and tokens after it are paced.
        assert!(pacer.fed(true, true, start + Duration::from_millis(3)));
        pacer.written(start + Duration::from_millis(3));
        assert!(!pacer.fed(true, false, start + Duration::from_millis(4)));
        // A write without a token sets no pace: the first token after a turn starts goes at once.
        let mut fresh = Pacer::default();
        assert!(fresh.fed(false, true, start));
        fresh.written(start);
        assert!(fresh.fed(true, false, start + Duration::from_micros(10)));
    }
}
