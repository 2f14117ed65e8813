//! Live turn events for the person's windows (§8.1): tokens, tool calls, turn ends. Each
//! event names the person it belongs to, and a WebSocket forwards only its own person's.
//! Never logged or stored: they carry private words.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::ids::UserId;

/// One event, already serialized: every socket of its person sends the same bytes.
#[derive(Clone)]
pub struct Event {
    pub user: UserId,
    pub json: Arc<str>,
}

/// The bus between turns and sockets; cheap to clone.
#[derive(Clone)]
pub struct Events {
    sender: broadcast::Sender<Event>,
}

impl Default for Events {
    fn default() -> Self {
        // Room for a few long replies in flight; a socket that falls further behind is told
        // it lagged and reloads the history instead.
        Self { sender: broadcast::channel(4096).0 }
    }
}

impl Events {
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.sender.subscribe()
    }

    /// Sends an event that belongs to no turn to one person's windows.
    pub fn to_person(&self, user: &UserId, value: Value) {
        self.send(user, value.to_string());
    }

    fn send(&self, user: &UserId, json: String) {
        // No receiver means no open window: the history has it all anyway.
        let _ = self.sender.send(Event { user: user.clone(), json: json.into() });
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
        let mut received = events.subscribe();
        let user = UserId::generate();
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
}
