//! The record of what a person accepted (§3), in their encrypted file: the terms their
//! words were handled under when they last accepted them. `agent::consent` compares it
//! with the shared database.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::private::PrivateStore;
use super::providers::ProviderKind;
use super::roles::{PrivacyTier, Role};
use super::snapshots::Touched;
use super::{StoreError, timestamp};
use crate::rules::Rule;

/// The terms a person's words are handled under, as the shared database states them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Terms {
    pub role: RoleTerms,
    /// The providers their role lets them use, by id.
    pub providers: BTreeMap<String, ProviderTerms>,
    /// The shared approval rules that apply to their role.
    pub rules: Vec<Rule>,
    /// Agents by id, as far as they have been seen (an agent counts once it is used).
    pub agents: BTreeMap<String, AgentTerms>,
    /// The approved MCP servers whose tools their role may be offered, by id: a call's
    /// arguments leave Skald for them (§12). Records made before MCP have none.
    #[serde(default)]
    pub mcp: BTreeMap<String, McpTerms>,
}

/// Where an MCP server takes a call's arguments, and what was approved of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpTerms {
    pub name: String,
    /// The command it runs or the address it is reached at.
    pub reaches: String,
    /// One instance serves everyone.
    pub shared: bool,
    /// It takes words off this machine and the home network.
    pub remote: bool,
    /// The approved launch spec's digest.
    pub spec: String,
    /// Each approved tool their role may be offered, with its pin.
    pub tools: BTreeMap<String, String>,
}

/// A role's attributes that decide where words go and what acts without asking.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoleTerms {
    pub id: String,
    pub privacy_tier: PrivacyTier,
    pub allowed_models: Vec<String>,
    pub tools: Vec<String>,
    pub may_schedule: bool,
    pub may_use_subagents: bool,
    pub memory_retention_days: i64,
}

impl From<&Role> for RoleTerms {
    fn from(role: &Role) -> Self {
        Self {
            id: role.id.to_string(),
            privacy_tier: role.privacy_tier,
            allowed_models: role.allowed_models.clone(),
            tools: role.tools.clone(),
            may_schedule: role.may_schedule,
            may_use_subagents: role.may_use_subagents,
            memory_retention_days: role.memory_retention_days,
        }
    }
}

/// Where a provider sends words: what changes here changes who reads them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderTerms {
    /// Pinned conversations and agents' preferred models name a provider by its name.
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub trusted_lan: bool,
    /// A digest of the sealed key: another key can be another account.
    #[serde(default)]
    pub key: Option<String>,
    /// The model it writes the person's speech down with, when it does (§15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcription: Option<String>,
    /// The model (and voice) it reads answers aloud with, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speech: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentTerms {
    pub version: String,
    /// This version is the one shipped inside this binary — read from the binary, not
    /// from the shared database's label, so relabelling an edit proves nothing.
    pub bundled: bool,
}

/// The audit entry a record was last brought up to date with: entries after it explain
/// the changes found since, if the chain from it is intact.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AuditHead {
    pub id: i64,
    pub hash: String,
}

/// What the person last saw and accepted, as stored in their file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub terms: Terms,
    pub audit: AuditHead,
    /// Widening changes the person declined, by item: the fingerprint of the value they
    /// declined. The same value is not asked about again; a different one is.
    #[serde(default)]
    pub declined: BTreeMap<String, String>,
}

impl Record {
    /// What stands for a record that cannot be read: nothing accepted, so everything in
    /// force is asked about again — the safe side.
    pub fn nothing_accepted() -> Self {
        let role = RoleTerms { privacy_tier: PrivacyTier::LocalOnly, ..RoleTerms::default() };
        Self { terms: Terms { role, ..Terms::default() }, audit: AuditHead::default(), declined: BTreeMap::new() }
    }
}

/// The person's record; none before their first one is written.
pub async fn get(store: &PrivateStore) -> Result<Option<Record>, StoreError> {
    let text: Option<String> =
        sqlx::query_scalar("SELECT record FROM accepted WHERE id = 1").fetch_optional(store.pool()).await?;
    // A record this build cannot read accepted nothing: the person is asked again about
    // everything in force, which is the safe side.
    Ok(text.map(|text| serde_json::from_str(&text).unwrap_or_else(|_| Record::nothing_accepted())))
}

/// Replaces the person's record.
pub async fn put(store: &PrivateStore, record: &Record) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::Nothing);
    let text = serde_json::to_string(record).expect("a record serialises");
    sqlx::query(
        "INSERT INTO accepted (id, record, updated_at) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at",
    )
    .bind(text)
    .bind(timestamp())
    .execute(store.pool())
    .await?;
    Ok(())
}
