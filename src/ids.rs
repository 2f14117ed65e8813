//! Identifiers as types, so a person's id is never confused with a role's or a token.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A person: 128 random bits as 32 hex characters, also the name of their private file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(transparent)]
#[sqlx(transparent)]
pub struct UserId(String);

impl UserId {
    pub fn generate() -> Self {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the OS random source is unavailable");
        Self(hex::encode(bytes))
    }

    /// Accepts only the shape `generate` makes, so an id can be used in a file name.
    pub fn parse(s: &str) -> Option<Self> {
        (s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))).then(|| Self(s.to_owned()))
    }

    /// An id read back from a row Skald wrote, where it was checked when it came in.
    pub(crate) fn stored(id: String) -> Self {
        Self(id)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for UserId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A role: a row of the `roles` table (§6.1), never a Rust enum.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(transparent)]
#[sqlx(transparent)]
pub struct RoleId(String);

impl RoleId {
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RoleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A random id with a readable prefix, like `turn_3f9c…`: 96 random bits.
pub fn random_id(prefix: &str) -> String {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes).expect("the OS random source is unavailable");
    format!("{prefix}_{}", hex::encode(bytes))
}

/// An id made by [`random_id`] with its own prefix, as its own type: a turn's id cannot be
/// passed where a conversation's is wanted. Stored and sent as the plain text, and read
/// as text (`Deref<Target = str>`) wherever text will do.
macro_rules! prefixed_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, sqlx::Type, ts_rs::TS)]
        #[serde(transparent)]
        #[sqlx(transparent)]
        pub struct $name(String);

        impl $name {
            /// A new random one.
            pub fn generate() -> Self {
                Self(random_id($prefix))
            }

            /// One that was made before: read back, or named by a client or a model.
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        /// Read as the text it is (an id goes wherever text does; text becomes an id
        /// only through [`Self::new`]).
        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                Self::new(id)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

prefixed_id!(
    /// A conversation (what the API's `/api/sessions` routes name): `chat_…`.
    ConversationId,
    "chat"
);
prefixed_id!(
    /// One turn of a conversation: `turn_…`.
    TurnId,
    "turn"
);
prefixed_id!(
    /// A sub-agent's frame inside a turn: `frame_…`.
    FrameId,
    "frame"
);
prefixed_id!(
    /// A card waiting on a person's decision or answer: `card_…`.
    CardId,
    "card"
);
prefixed_id!(
    /// A configured model provider: `provider_…`.
    ProviderId,
    "provider"
);
prefixed_id!(
    /// An MCP server an administrator configured (§12): `mcp_…`.
    McpServerId,
    "mcp"
);
prefixed_id!(
    /// A memory, in either pool (`store::memories`): `mem_…`.
    MemoryId,
    "mem"
);
prefixed_id!(
    /// A tool call: the id the model gave it, or `call_…` where Skald names one.
    CallId,
    "call"
);
prefixed_id!(
    /// A scheduled job, a reminder or a task (§11): `job_…`.
    JobId,
    "job"
);
prefixed_id!(
    /// A document in a person's space or the shared pool (§12): `doc_…`.
    DocumentId,
    "doc"
);
