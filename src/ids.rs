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
