//! Live turn events for the person's windows (§8.1): tokens, tool calls, turn ends. Each
//! person has a queue of their own, so one person's load never costs another their events;
//! a socket forwards only its own person's. Never logged or stored: they carry private
//! words.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::ids::UserId;

/// How many events one person's slowest window may fall behind before it is told it
/// lagged (and the page reads the turns again): room for many long replies at once.
const PER_PERSON: usize = 16_384;

/// One event, already serialized: every socket of its person sends the same bytes.
#[derive(Clone)]
pub struct Event {
    pub user: UserId,
    pub json: Arc<str>,
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
    pub fn to_person(&self, user: &UserId, value: Value) {
        self.send(user, value.to_string());
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
    session: String,
    turn: String,
    seq: Arc<AtomicU64>,
    frame: Option<String>,
}

impl TurnEvents {
    pub fn new(events: Events, user: UserId, session: String, turn: String) -> Self {
        Self { events, user, session, turn, seq: Arc::default(), frame: None }
    }

    /// The events of a sub-agent frame of this turn: each carries `"frame": id`.
    pub fn for_frame(&self, frame: &str) -> Self {
        Self { frame: Some(frame.to_owned()), ..self.clone() }
    }

    fn next(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Sends `{"type": kind, "session", "turn", "seq", ["frame",] ...fields}`.
    pub fn emit(&self, kind: &str, fields: Value) {
        let mut value = json!({ "type": kind, "session": self.session, "turn": self.turn, "seq": self.next() });
        if let (Some(target), Some(frame)) = (value.as_object_mut(), &self.frame) {
            target.insert("frame".into(), Value::String(frame.clone()));
        }
        if let (Some(target), Value::Object(extra)) = (value.as_object_mut(), fields) {
            target.extend(extra);
        }
        self.events.send(&self.user, value.to_string());
    }

    /// Sends a `token` event: the hottest path of a turn, so written without building a
    /// JSON tree; the same shape as [`TurnEvents::emit`] makes.
    pub fn token(&self, text: &str) {
        let quoted = |s: &str| serde_json::to_string(s).expect("a string serializes");
        let (session, turn, text) = (quoted(&self.session), quoted(&self.turn), quoted(text));
        let frame = self.frame.as_deref().map(|f| format!(r#","frame":{}"#, quoted(f))).unwrap_or_default();
        let seq = self.next();
        let json = format!(r#"{{"type":"token","session":{session},"turn":{turn},"seq":{seq}{frame},"text":{text}}}"#);
        self.events.send(&self.user, json);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_event_has_the_shape_emit_gives_every_event() {
        let events = Events::default();
        let user = UserId::generate();
        let mut received = events.subscribe(&user);
        let turn = TurnEvents::new(events, user, "chat_1".into(), "turn_1".into());
        turn.emit("turn_started", json!({}));
        turn.token("say \"hi\"\n");
        received.try_recv().unwrap();
        let token: Value = serde_json::from_str(&received.try_recv().unwrap().json).unwrap();
        assert_eq!(
            token,
            json!({ "type": "token", "session": "chat_1", "turn": "turn_1", "seq": 2, "text": "say \"hi\"\n" })
        );
        // A frame's events share the turn's numbering and name the frame.
        let frame = turn.for_frame("frame_1");
        frame.token("x");
        frame.emit("frame_ended", json!({ "status": "done" }));
        let token: Value = serde_json::from_str(&received.try_recv().unwrap().json).unwrap();
        let ended: Value = serde_json::from_str(&received.try_recv().unwrap().json).unwrap();
        assert_eq!((token["seq"].as_u64(), token["frame"].as_str()), (Some(3), Some("frame_1")));
        assert_eq!((ended["seq"].as_u64(), ended["frame"].as_str()), (Some(4), Some("frame_1")));
    }

    #[test]
    fn one_persons_flood_leaves_anothers_events_whole() {
        let events = Events::default();
        let (busy, quiet) = (UserId::generate(), UserId::generate());
        let mut busy_window = events.subscribe(&busy);
        let mut quiet_window = events.subscribe(&quiet);
        let flooding = TurnEvents::new(events.clone(), busy.clone(), "chat_b".into(), "turn_b".into());
        let answering = TurnEvents::new(events.clone(), quiet.clone(), "chat_q".into(), "turn_q".into());
        answering.emit("turn_started", json!({}));
        for _ in 0..PER_PERSON * 2 {
            flooding.token("x");
        }
        answering.emit("turn_ended", json!({ "status": "done" }));
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
        events.to_person(&user, json!({ "type": "notice" }));
        assert!(events.people.lock().unwrap().is_empty(), "no queue is kept for nobody");
        let window = events.subscribe(&user);
        drop(window);
        events.to_person(&user, json!({ "type": "notice" }));
        assert!(events.people.lock().unwrap().is_empty(), "the last window gone, its queue goes");
        let mut window = events.subscribe(&user);
        events.to_person(&user, json!({ "type": "notice" }));
        assert!(window.try_recv().is_ok());
    }
}
