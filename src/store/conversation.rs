//! What a conversation is made of, as stored in a person's file (§8.1): the session, the
//! rows of its history, its turns' states and its summaries. Types only, no SQL:
//! `store::chat` reads and writes them, `store::snapshots` keeps them in memory between
//! turns, and neither needs the other's code to say what they are.

use serde::Serialize;
use serde_json::Value;

use crate::ids::{CallId, ConversationId, FrameId, TurnId};

#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
pub struct Conversation {
    pub id: ConversationId,
    pub agent: String,
    pub model: Option<String>,
    pub title: String,
    pub created_at: String,
    pub updated_at: String,
    /// The state of the turn that ends its active path, if it has one.
    pub turn_state: Option<TurnState>,
    /// The turn that ends its active path: the conversation as it reads now (see
    /// `store::chat::branches`).
    pub active_turn: Option<TurnId>,
    /// Content from outside Skald (a fetched page) has entered this conversation.
    pub outside_content: bool,
    /// Kept at the top of the person's list.
    pub pinned: bool,
    /// Put away: left out of the list unless the person asks for it.
    pub archived: bool,
    /// Neither reads nor writes memories, is left out of the list, and is deleted when the
    /// person leaves it or locks.
    pub temporary: bool,
}

/// Who a row of history is from: the `messages.role` column, and the words the API shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum MessageRole {
    /// The person.
    #[default]
    User,
    /// The model: its words, its calls, and the turn's closing row.
    Assistant,
    /// A tool call's result.
    Tool,
}

/// What became of a row of history: the `messages.status` column, and the words the API
/// shows. A person's message is `sent`; an assistant row with calls is `tool_calls`; a
/// call's result is `ok`, `denied`, `cancelled` or `error`; a closing row carries the
/// state its turn or frame ended in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum MessageStatus {
    /// The person's message, or the task a frame was given.
    #[default]
    Sent,
    /// The model's calls, to be run.
    ToolCalls,
    /// A call that ran, or a question the person answered.
    Ok,
    /// A call the gate or the person refused.
    Denied,
    /// A call whose turn stopped before it had a result.
    Cancelled,
    /// A call that failed, or the closing row of a turn that failed.
    Error,
    /// The closing row of a turn that finished.
    Done,
    /// The closing row of a turn the person stopped.
    Stopped,
    /// The closing row of a turn that waits on cards.
    Parked,
    /// The closing row of a turn still recorded as running.
    Running,
}

impl MessageStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sent => "sent",
            Self::ToolCalls => "tool_calls",
            Self::Ok => "ok",
            Self::Denied => "denied",
            Self::Cancelled => "cancelled",
            Self::Error => "error",
            Self::Done => "done",
            Self::Stopped => "stopped",
            Self::Parked => "parked",
            Self::Running => "running",
        }
    }

    /// The state a closing row says its turn or frame ended in; none for other rows.
    pub fn ended_as(self) -> Option<TurnState> {
        match self {
            Self::Done => Some(TurnState::Done),
            Self::Stopped => Some(TurnState::Stopped),
            Self::Error => Some(TurnState::Error),
            Self::Parked => Some(TurnState::Parked),
            Self::Running => Some(TurnState::Running),
            Self::Sent | Self::ToolCalls | Self::Ok | Self::Denied | Self::Cancelled => None,
        }
    }
}

impl From<TurnState> for MessageStatus {
    /// A closing row's status: the state its turn or frame ended in.
    fn from(state: TurnState) -> Self {
        match state {
            TurnState::Running => Self::Running,
            TurnState::Parked => Self::Parked,
            TurnState::Done => Self::Done,
            TurnState::Stopped => Self::Stopped,
            TurnState::Error => Self::Error,
        }
    }
}

/// One row of history, as the API returns it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
#[ts(rename = "HistoryRow")]
pub struct Message {
    pub id: i64,
    pub turn_id: TurnId,
    pub role: MessageRole,
    pub text: String,
    pub status: MessageStatus,
    /// The calls an assistant row asked for, as stored (see [`StoredCall`]).
    #[sqlx(json(nullable))]
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, as = "Option<Vec<StoredCall>>")]
    pub tool_calls: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_call_id: Option<CallId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error_message: Option<String>,
    pub created_at: String,
    /// The sub-agent frame the row belongs to; none for the conversation itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub frame_id: Option<FrameId>,
    /// An erased memory's sentence was redacted from this row (§10).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[ts(optional, as = "Option<bool>")]
    pub redacted: bool,
    /// The pictures a person's message carries to a model that reads pictures (§12.2).
    #[sqlx(json(nullable))]
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub images: Option<Vec<AttachedPicture>>,
}

/// A picture a person's message carries: the document it is, and the type of its bytes.
/// The bytes stay with the document and are read when a request is composed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ts_rs::TS)]
#[ts(rename = "MessagePicture")]
pub struct AttachedPicture {
    pub document: crate::ids::DocumentId,
    pub media_type: String,
}

/// A tool call as an assistant row keeps it in `tool_calls`: what the model asked for,
/// its arguments as the model sent them (usually JSON text).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "ToolCallRecord")]
pub struct StoredCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Where a turn is: the `turns.state` column, and the words the API shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum TurnState {
    Running,
    /// Waiting on cards (§8.5).
    Parked,
    Done,
    Stopped,
    Error,
}

impl TurnState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Parked => "parked",
            Self::Done => "done",
            Self::Stopped => "stopped",
            Self::Error => "error",
        }
    }
}

/// A summary of a conversation's rows up to `upto` (§8.6).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Summary {
    pub id: i64,
    pub upto: i64,
    pub text: String,
}
