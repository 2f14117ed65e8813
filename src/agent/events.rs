//! Live events for the person's windows (§8.1): tokens, tool calls, cards, turn ends, and
//! the few that belong to no turn. [`LiveEvent`] is the one protocol the WebSocket speaks;
//! each person has a queue of their own, so one person's load never costs another their
//! events, and a socket forwards only its own person's. Never logged or stored: they
//! carry private words.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::broadcast;
use ts_rs::TS;

use super::inbox::CardView;
use crate::ids::{CallId, ConversationId, TurnId, UserId};
use crate::providers::local::download::Status as DownloadStatus;
use crate::store::chat::{MessageStatus, TurnState};

/// How many events one person's slowest window may fall behind before it is told it
/// lagged (and the page reads the turns again): room for many long replies at once.
const PER_PERSON: usize = 16_384;

/// Every event `/api/ws` sends, as the page reads it: `{"type": "snake_case_kind", ...}`.
/// The events of a turn carry [`TurnRef`]'s fields beside their own.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LiveEvent {
    /// A turn began, or went on after its cards (`resumed`).
    TurnStarted {
        #[serde(flatten)]
        of: TurnRef,
        model: String,
        agent: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        #[ts(optional, as = "Option<bool>")]
        resumed: bool,
    },
    /// A piece of the reply's text.
    Token {
        #[serde(flatten)]
        of: TurnRef,
        text: String,
    },
    /// The model asked for a tool; the call's result follows in `tool_call_finished`.
    ToolCallStarted {
        #[serde(flatten)]
        of: TurnRef,
        call: CallView,
    },
    /// A call's one result: `ok`, `error`, `denied` or `cancelled`.
    ToolCallFinished {
        #[serde(flatten)]
        of: TurnRef,
        call_id: String,
        name: String,
        status: MessageStatus,
        result: String,
    },
    /// How far a running tool call got, as its server reports it (MCP progress).
    ToolProgress {
        #[serde(flatten)]
        of: TurnRef,
        call_id: CallId,
        progress: f64,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        total: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        message: Option<String>,
    },
    /// A card the turn waits on (§8.5), as the inbox shows it.
    Card {
        #[serde(flatten)]
        of: TurnRef,
        card: CardView,
    },
    /// The turn waits on its cards.
    TurnParked {
        #[serde(flatten)]
        of: TurnRef,
        status: TurnState,
    },
    /// A model request failed before anything streamed and is tried again.
    Retrying {
        #[serde(flatten)]
        of: TurnRef,
        attempt: u32,
        wait_ms: u64,
        reason: String,
    },
    /// The turn moved to its fallback model on another provider.
    Fallback {
        #[serde(flatten)]
        of: TurnRef,
        from: String,
        to: String,
        reason: String,
    },
    /// Older history was summed up (§8.6), up to this row.
    Compacted {
        #[serde(flatten)]
        of: TurnRef,
        upto: i64,
    },
    /// Why the turn failed; its `turn_ended` follows.
    Error {
        #[serde(flatten)]
        of: TurnRef,
        error: Failure,
    },
    /// The turn's end, `done`, `stopped` or `error`; built by [`TurnEvents::ended`] only.
    TurnEnded {
        #[serde(flatten)]
        of: TurnRef,
        status: TurnState,
        error: Option<Failure>,
    },
    /// A sub-agent's frame opened inside the turn (§8.3).
    FrameStarted {
        #[serde(flatten)]
        of: TurnRef,
        agent: String,
        depth: i64,
        call_id: String,
    },
    /// A sub-agent's frame closed.
    FrameEnded {
        #[serde(flatten)]
        of: TurnRef,
        status: TurnState,
    },
    /// A card was decided or answered, in this window or another.
    CardDecided { card: CardView },
    /// A conversation's model named it (its title had come from the first message).
    Titled { session: ConversationId, title: String },
    /// The `notify` tool's message, for windows to show.
    Notify { title: String, body: String },
    /// A new notice waits in `GET /api/notices`.
    Notice,
    /// How far the backup this administrator started got (§5.2).
    Backup { progress: crate::backup::Progress },
    /// A model download this administrator can see moved on.
    LocalModelDownload { download: DownloadStatus },
    /// The socket fell behind its person's queue: the page reads the turns again.
    Lagged,
    /// The socket's first message.
    Hello { version: String, user: Option<UserId> },
    /// An idle socket's sign of life.
    Heartbeat,
}

/// Which turn an event belongs to, and where in its order: every turn event carries it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct TurnRef {
    pub session: ConversationId,
    pub turn: TurnId,
    /// 1, 2, 3, … within the turn's run, frames included; a gap tells the page it missed one.
    pub seq: u64,
    /// The sub-agent frame the event comes from; absent for the conversation's own turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub frame: Option<String>,
}

/// A tool call as the page shows it while it runs.
#[derive(Debug, Clone, Serialize, TS)]
pub struct CallView {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Why a turn failed: a stable code and words for the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(rename = "TurnFailure")]
pub struct Failure {
    pub code: String,
    pub message: String,
}

impl Failure {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self { code: code.to_owned(), message: message.into() }
    }
}

impl LiveEvent {
    /// The event as the socket sends it.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a live event serializes")
    }
}

/// One event, already serialized: every socket of its person sends the same bytes.
#[derive(Clone)]
pub struct Event {
    pub user: UserId,
    pub json: Arc<str>,
}

/// How a `token` event's JSON begins: its `type` is serialized first.
const TOKEN_START: &str = r#"{"type":"token","#;

impl Event {
    /// Whether this is a `token` event, the kind sent once per piece of every reply (a
    /// socket paces them, `http::ws`).
    pub fn is_token(&self) -> bool {
        self.json.starts_with(TOKEN_START)
    }
}

/// The bus between turns and sockets: a queue per person with an open window; cheap to
/// clone.
#[derive(Clone, Default)]
pub struct Events {
    people: Arc<Mutex<HashMap<UserId, broadcast::Sender<Event>>>>,
}

impl Events {
    /// A window's view of its person's events, from now on.
    pub fn subscribe(&self, user: &UserId) -> broadcast::Receiver<Event> {
        let mut people = self.people.lock().expect("event queues");
        people.entry(user.clone()).or_insert_with(|| broadcast::channel(PER_PERSON).0).subscribe()
    }

    /// Sends an event that belongs to no turn to one person's windows.
    pub fn to_person(&self, user: &UserId, event: &LiveEvent) {
        self.send(user, event.to_json());
    }

    /// Sends an event to everyone with a window open (a reminder shared with everyone).
    pub fn to_everyone(&self, event: &LiveEvent) {
        let json = event.to_json();
        let people: Vec<UserId> = self.people.lock().expect("event queues").keys().cloned().collect();
        for user in people {
            self.send(&user, json.clone());
        }
    }

    fn send(&self, user: &UserId, json: String) {
        let mut people = self.people.lock().expect("event queues");
        let Some(sender) = people.get(user) else { return };
        // No receiver left means no open window: the history has it all anyway, and the
        // queue goes until a window subscribes again.
        if sender.send(Event { user: user.clone(), json: json.into() }).is_err() {
            people.remove(user);
        }
    }
}

/// The events of one turn, numbered so a client can check their order. Sub-agent frames
/// share their turn's numbering and name their frame.
#[derive(Clone)]
pub struct TurnEvents {
    events: Events,
    user: UserId,
    session: ConversationId,
    turn: TurnId,
    seq: Arc<AtomicU64>,
    frame: Option<String>,
    /// A `token` event's JSON around its number, written once: everything before the
    /// `seq` value, and everything after it up to the text's value.
    token_head: Arc<str>,
    token_tail: Arc<str>,
}

impl TurnEvents {
    pub fn new(events: Events, user: UserId, session: ConversationId, turn: TurnId) -> Self {
        Self::continuing(events, user, session, turn, 0)
    }

    /// The events of a turn that already sent `sent` of them (one that parked): the next
    /// is numbered `sent + 1`, so the page sees no gap.
    pub fn continuing(events: Events, user: UserId, session: ConversationId, turn: TurnId, sent: u64) -> Self {
        let (token_head, token_tail) = token_frame(&session, &turn, None);
        Self { events, user, session, turn, seq: Arc::new(AtomicU64::new(sent)), frame: None, token_head, token_tail }
    }

    /// The events of a sub-agent frame of this turn: each carries `"frame": id`.
    pub fn for_frame(&self, frame: &str) -> Self {
        let (token_head, token_tail) = token_frame(&self.session, &self.turn, Some(frame));
        Self { frame: Some(frame.to_owned()), token_head, token_tail, ..self.clone() }
    }

    /// How many events the turn has sent so far.
    pub fn sent(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    /// The next event's place: this turn, this frame, the next number.
    fn stamp(&self) -> TurnRef {
        TurnRef {
            session: self.session.clone(),
            turn: self.turn.clone(),
            seq: self.seq.fetch_add(1, Ordering::Relaxed) + 1,
            frame: self.frame.clone(),
        }
    }

    /// Sends the event `make` builds with the next [`TurnRef`].
    pub fn emit(&self, make: impl FnOnce(TurnRef) -> LiveEvent) {
        self.events.send(&self.user, make(self.stamp()).to_json());
    }

    /// Sends a `token` event: the hottest path of a turn, once per piece of every reply.
    /// Written straight into its bytes around the frame made when the turn began — the
    /// same bytes [`LiveEvent::Token`] serializes to, without copying the ids or the text
    /// into an event first.
    pub fn token(&self, text: &str) {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let mut json = Vec::with_capacity(self.token_head.len() + self.token_tail.len() + text.len() + 24);
        json.extend_from_slice(self.token_head.as_bytes());
        write!(json, "{seq}").expect("a Vec takes every byte");
        json.extend_from_slice(self.token_tail.as_bytes());
        serde_json::to_writer(&mut json, text).expect("a string serializes");
        json.push(b'}');
        self.events.send(&self.user, String::from_utf8(json).expect("JSON is UTF-8"));
    }

    /// Sends the turn's end: the one way a `turn_ended` is made, so each carries its
    /// place in the turn's order.
    pub fn ended(&self, status: TurnState, error: Option<Failure>) {
        self.emit(|of| LiveEvent::TurnEnded { of, status, error });
    }
}

/// A `token` event's JSON in two parts, before and after its `seq` value, in the order
/// [`LiveEvent::Token`] serializes its fields.
fn token_frame(session: &ConversationId, turn: &TurnId, frame: Option<&str>) -> (Arc<str>, Arc<str>) {
    let string = |value: &str| serde_json::to_string(value).expect("a string serializes");
    let head =
        format!(r#"{TOKEN_START}"session":{},"turn":{},"seq":"#, string(session.as_str()), string(turn.as_str()));
    let frame = frame.map(|frame| format!(r#","frame":{}"#, string(frame))).unwrap_or_default();
    (head.into(), format!(r#"{frame},"text":"#).into())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::agent::inbox::{Asks, CallDetails};
    use crate::store::approvals::CardState;

    fn read(received: &mut broadcast::Receiver<Event>) -> Value {
        serde_json::from_str(&received.try_recv().unwrap().json).unwrap()
    }

    #[test]
    fn only_a_token_event_is_told_as_one() {
        let event = |json: String| Event { user: UserId::generate(), json: json.into() };
        let of = TurnRef { session: "s".into(), turn: "t".into(), seq: 7, frame: None };
        assert!(event(LiveEvent::Token { of: of.clone(), text: "x".into() }.to_json()).is_token());
        assert!(!event(LiveEvent::TurnEnded { of, status: TurnState::Done, error: None }.to_json()).is_token());
        assert!(!event(LiveEvent::Heartbeat.to_json()).is_token());
        assert!(!event(r#"{"type":"tokens","text":"x"}"#.to_owned()).is_token());
    }

    #[test]
    fn a_token_event_has_the_shape_emit_gives_every_event() {
        let events = Events::default();
        let user = UserId::generate();
        let mut received = events.subscribe(&user);
        let turn = TurnEvents::new(events, user, "chat_1".into(), "turn_1".into());
        turn.emit(|of| LiveEvent::TurnStarted { of, model: "m".into(), agent: "a".into(), resumed: false });
        turn.token("say \"hi\"\n");
        received.try_recv().unwrap();
        let token = read(&mut received);
        assert_eq!(
            token,
            json!({ "type": "token", "session": "chat_1", "turn": "turn_1", "seq": 2, "text": "say \"hi\"\n" })
        );
        // A frame's events share the turn's numbering and name the frame.
        let frame = turn.for_frame("frame_1");
        frame.token("x");
        frame.emit(|of| LiveEvent::FrameEnded { of, status: TurnState::Done });
        let token = read(&mut received);
        let ended = read(&mut received);
        assert_eq!((token["seq"].as_u64(), token["frame"].as_str()), (Some(3), Some("frame_1")));
        assert_eq!((ended["seq"].as_u64(), ended["frame"].as_str()), (Some(4), Some("frame_1")));
    }

    #[test]
    fn a_token_is_written_type_first_then_its_place_then_its_text() {
        let events = Events::default();
        let user = UserId::generate();
        let mut received = events.subscribe(&user);
        let turn = TurnEvents::new(events, user, "chat_1".into(), "turn_1".into()).for_frame("frame_1");
        turn.token("a\"b");
        assert_eq!(
            &*received.try_recv().unwrap().json,
            r#"{"type":"token","session":"chat_1","turn":"turn_1","seq":1,"frame":"frame_1","text":"a\"b"}"#
        );
    }

    #[test]
    fn a_token_is_the_same_bytes_as_the_event_it_stands_for() {
        let events = Events::default();
        let user = UserId::generate();
        let mut received = events.subscribe(&user);
        let turn = TurnEvents::new(events, user, "chat_\"1".into(), "turn_1".into());
        let frame = turn.for_frame("frame_\\1");
        for (events, frame_id) in [(&turn, None), (&frame, Some("frame_\\1"))] {
            for text in ["", "plain", "quote \" back \\ newline \n tab \t bell \u{7} ünï 🦀"] {
                events.token(text);
                let sent = received.try_recv().unwrap();
                assert!(sent.is_token(), "a token event is told as one: {}", sent.json);
                let sent = sent.json;
                let of = TurnRef {
                    session: "chat_\"1".into(),
                    turn: "turn_1".into(),
                    seq: events.sent(),
                    frame: frame_id.map(str::to_owned),
                };
                assert_eq!(&*sent, LiveEvent::Token { of, text: text.into() }.to_json());
            }
        }
    }

    #[test]
    fn every_event_kind_has_the_fields_the_page_reads() {
        let of = || TurnRef { session: "s".into(), turn: "t".into(), seq: 7, frame: None };
        let base = |kind: &str, extra: Value| {
            let mut value = json!({ "type": kind, "session": "s", "turn": "t", "seq": 7 });
            value.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            value
        };
        let failure = Failure::new("step_limit", "too many");
        let card = || CardView {
            id: "k".into(),
            asks: Asks::Approval(CallDetails {
                tool: "notify".into(),
                arguments: json!({}),
                arguments_hash: "h".into(),
                agent: "a".into(),
                why: "w".into(),
                reason: "r".into(),
                turn_id: "t".into(),
                call_id: "c".into(),
                for_person: None,
                memory: None,
                tool_server: None,
                schedule: None,
            }),
            state: CardState::Pending,
            summary: "notify".into(),
            session_id: "s".into(),
            created_at: "now".into(),
            decided_by: None,
        };
        // The card as it is, beside the event's own fields (`agent::inbox` tests its shape).
        let card_json = || serde_json::to_value(card()).unwrap();
        let cases = [
            (
                LiveEvent::TurnStarted { of: of(), model: "m".into(), agent: "a".into(), resumed: false },
                base("turn_started", json!({ "model": "m", "agent": "a" })),
            ),
            (
                LiveEvent::TurnStarted { of: of(), model: "m".into(), agent: "a".into(), resumed: true },
                base("turn_started", json!({ "model": "m", "agent": "a", "resumed": true })),
            ),
            (
                LiveEvent::ToolCallStarted {
                    of: of(),
                    call: CallView { id: "c".into(), name: "n".into(), arguments: "{}".into() },
                },
                base("tool_call_started", json!({ "call": { "id": "c", "name": "n", "arguments": "{}" } })),
            ),
            (
                LiveEvent::ToolCallFinished {
                    of: of(),
                    call_id: "c".into(),
                    name: "n".into(),
                    status: MessageStatus::Ok,
                    result: "r".into(),
                },
                base("tool_call_finished", json!({ "call_id": "c", "name": "n", "status": "ok", "result": "r" })),
            ),
            (LiveEvent::Card { of: of(), card: card() }, base("card", json!({ "card": card_json() }))),
            (
                LiveEvent::TurnParked { of: of(), status: TurnState::Parked },
                base("turn_parked", json!({ "status": "parked" })),
            ),
            (
                LiveEvent::Retrying { of: of(), attempt: 2, wait_ms: 5, reason: "overloaded".into() },
                base("retrying", json!({ "attempt": 2, "wait_ms": 5, "reason": "overloaded" })),
            ),
            (
                LiveEvent::Fallback { of: of(), from: "a".into(), to: "b".into(), reason: "down".into() },
                base("fallback", json!({ "from": "a", "to": "b", "reason": "down" })),
            ),
            (LiveEvent::Compacted { of: of(), upto: 9 }, base("compacted", json!({ "upto": 9 }))),
            (
                LiveEvent::Error { of: of(), error: failure.clone() },
                base("error", json!({ "error": { "code": "step_limit", "message": "too many" } })),
            ),
            (
                LiveEvent::TurnEnded { of: of(), status: TurnState::Error, error: Some(failure) },
                base(
                    "turn_ended",
                    json!({ "status": "error", "error": { "code": "step_limit", "message": "too many" } }),
                ),
            ),
            (
                LiveEvent::TurnEnded { of: of(), status: TurnState::Done, error: None },
                base("turn_ended", json!({ "status": "done", "error": null })),
            ),
            (
                LiveEvent::FrameStarted { of: of(), agent: "a".into(), depth: 2, call_id: "c".into() },
                base("frame_started", json!({ "agent": "a", "depth": 2, "call_id": "c" })),
            ),
            (
                LiveEvent::FrameEnded { of: of(), status: TurnState::Stopped },
                base("frame_ended", json!({ "status": "stopped" })),
            ),
            (LiveEvent::CardDecided { card: card() }, json!({ "type": "card_decided", "card": card_json() })),
            (
                LiveEvent::Notify { title: "t".into(), body: "b".into() },
                json!({ "type": "notify", "title": "t", "body": "b" }),
            ),
            (LiveEvent::Notice, json!({ "type": "notice" })),
            (LiveEvent::Lagged, json!({ "type": "lagged" })),
            (LiveEvent::Heartbeat, json!({ "type": "heartbeat" })),
            (
                LiveEvent::Hello { version: "1".into(), user: None },
                json!({ "type": "hello", "version": "1", "user": null }),
            ),
        ];
        for (event, expected) in cases {
            assert_eq!(serde_json::from_str::<Value>(&event.to_json()).unwrap(), expected);
        }
    }

    #[test]
    fn a_turn_that_goes_on_numbers_its_events_after_those_it_sent() {
        let events = Events::default();
        let user = UserId::generate();
        let mut received = events.subscribe(&user);
        let turn = TurnEvents::new(events.clone(), user.clone(), "chat_1".into(), "turn_1".into());
        turn.emit(|of| LiveEvent::TurnParked { of, status: TurnState::Parked });
        let later = TurnEvents::continuing(events, user, "chat_1".into(), "turn_1".into(), turn.sent());
        later.ended(TurnState::Stopped, None);
        received.try_recv().unwrap();
        let ended = read(&mut received);
        assert_eq!((ended["type"].as_str(), ended["seq"].as_u64()), (Some("turn_ended"), Some(2)));
    }

    #[test]
    fn one_persons_flood_leaves_anothers_events_whole() {
        let events = Events::default();
        let (busy, quiet) = (UserId::generate(), UserId::generate());
        let mut busy_window = events.subscribe(&busy);
        let mut quiet_window = events.subscribe(&quiet);
        let flooding = TurnEvents::new(events.clone(), busy.clone(), "chat_b".into(), "turn_b".into());
        let answering = TurnEvents::new(events.clone(), quiet.clone(), "chat_q".into(), "turn_q".into());
        answering.emit(|of| LiveEvent::TurnStarted { of, model: "m".into(), agent: "a".into(), resumed: false });
        for _ in 0..PER_PERSON * 2 {
            flooding.token("x");
        }
        answering.ended(TurnState::Done, None);
        let mut seen = Vec::new();
        while let Ok(event) = quiet_window.try_recv() {
            seen.push(serde_json::from_str::<Value>(&event.json).unwrap()["type"].as_str().unwrap().to_owned());
        }
        assert_eq!(seen, ["turn_started", "turn_ended"], "nothing of the other person's load reached or pushed out");
        // The flooding person's own slow window is told it lagged, so it reads the turn again.
        assert!(matches!(busy_window.try_recv(), Err(broadcast::error::TryRecvError::Lagged(_))));
    }

    #[test]
    fn a_person_with_no_window_is_sent_nothing_and_a_new_window_hears_what_follows() {
        let events = Events::default();
        let user = UserId::generate();
        events.to_person(&user, &LiveEvent::Notice);
        assert!(events.people.lock().unwrap().is_empty(), "no queue is kept for nobody");
        let window = events.subscribe(&user);
        drop(window);
        events.to_person(&user, &LiveEvent::Notice);
        assert!(events.people.lock().unwrap().is_empty(), "the last window gone, its queue goes");
        let mut window = events.subscribe(&user);
        events.to_person(&user, &LiveEvent::Notice);
        assert!(window.try_recv().is_ok());
    }
}
