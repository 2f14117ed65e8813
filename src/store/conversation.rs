//! What a conversation is made of, as stored in a person's file (§8.1): the session, the
//! rows of its history, its turns' states and its summaries. Types only, no SQL:
//! `store::chat` reads and writes them, `store::snapshots` keeps them in memory between
//! turns, and neither needs the other's code to say what they are.

use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct ChatSession {
    pub id: String,
    pub agent: String,
    pub model: Option<String>,
    pub title: String,
    pub created_at: String,
    pub updated_at: String,
    /// The state of the session's latest turn, if it has one.
    pub turn_state: Option<TurnState>,
    /// Content from outside Skald (a fetched page) has entered this conversation.
    pub outside_content: bool,
}

/// Who a row of history is from: the `messages.role` column, and the words the API shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, sqlx::Type)]
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

/// One row of history, as the API returns it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct Message {
    pub id: i64,
    pub turn_id: String,
    pub role: MessageRole,
    pub text: String,
    pub status: String,
    #[sqlx(json(nullable))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    pub created_at: String,
    /// The sub-agent frame the row belongs to; none for the conversation itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<String>,
}

/// Where a turn is: the `turns.state` column, and the words the API shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, sqlx::Type)]
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
