//! Agent definitions (§8.7): `agents/<id>/meta.json` and `agents/<id>/AGENT.md` in the data
//! directory, read when a turn starts, so an edit applies to the next turn without a
//! restart. The agents that ship with Skald are copied there on start when missing; an
//! edited copy is never overwritten.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rust_embed::Embed;
use serde::Deserialize;
use sha2::{Digest, Sha256};

#[derive(Embed)]
#[folder = "agents/"]
struct Bundled;

/// An agent as a turn uses it.
#[derive(Debug, Clone)]
pub struct Agent {
    pub id: String,
    pub meta: Meta,
    /// The system prompt, `AGENT.md` as written.
    pub prompt: String,
    /// SHA-256 of `meta.json` and `AGENT.md`, so a stored request names the version it used.
    pub version: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub preferred_model: Option<String>,
    pub preferred_strength: Option<String>,
    /// Tool name patterns this agent may use.
    #[serde(default)]
    pub tools: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum DefinitionError {
    #[error("there is no agent {0:?}")]
    Unknown(String),
    #[error("the agent {id:?} cannot be used: {why}")]
    Malformed { id: String, why: String },
}

/// The `agents` folder of the data directory. Definitions are cached with the size and
/// modification time of their two files, so a turn costs two `stat`s, and an edit is read
/// by the next turn.
#[derive(Debug, Clone)]
pub struct AgentDir {
    root: PathBuf,
    cache: Arc<Mutex<HashMap<String, (Stamp, Agent)>>>,
}

/// What identifies a version of an agent's two files without reading them.
/// Size, modify and change times, and the inode: a replaced file is a new inode, and
/// `cp -p` keeps the modify time but not the change time.
type Stamp = [(Option<SystemTime>, u64, i64, i64, u64); 2];

fn stamp(folder: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    ["meta.json", "AGENT.md"].map(|name| {
        std::fs::metadata(folder.join(name))
            .map_or((None, 0, 0, 0, 0), |m| (m.modified().ok(), m.len(), m.ctime(), m.ctime_nsec(), m.ino()))
    })
}

impl AgentDir {
    pub fn new(data_dir: &Path) -> Self {
        Self { root: data_dir.join("agents"), cache: Arc::default() }
    }

    /// Copies each bundled agent file that is missing. Existing files, edited or not, stay.
    pub fn seed(&self) -> std::io::Result<()> {
        for name in Bundled::iter() {
            let target = self.root.join(name.as_ref());
            if target.exists() {
                continue;
            }
            if let Some(folder) = target.parent() {
                std::fs::create_dir_all(folder)?;
            }
            let file = Bundled::get(&name).expect("an embedded file lists itself");
            std::fs::write(&target, file.data)?;
        }
        Ok(())
    }

    /// One agent as its files are now.
    pub fn load(&self, id: &str) -> Result<Agent, DefinitionError> {
        if !valid_id(id) {
            return Err(DefinitionError::Unknown(id.to_owned()));
        }
        let folder = self.root.join(id);
        if !folder.is_dir() {
            return Err(DefinitionError::Unknown(id.to_owned()));
        }
        let now = stamp(&folder);
        if let Some((seen, agent)) = self.cache.lock().expect("agent cache").get(id)
            && *seen == now
        {
            return Ok(agent.clone());
        }
        let agent = Self::read(id, &folder)?;
        self.cache.lock().expect("agent cache").insert(id.to_owned(), (now, agent.clone()));
        Ok(agent)
    }

    fn read(id: &str, folder: &Path) -> Result<Agent, DefinitionError> {
        let malformed = |why: String| DefinitionError::Malformed { id: id.to_owned(), why };
        let meta_text =
            std::fs::read_to_string(folder.join("meta.json")).map_err(|e| malformed(format!("meta.json: {e}")))?;
        let prompt =
            std::fs::read_to_string(folder.join("AGENT.md")).map_err(|e| malformed(format!("AGENT.md: {e}")))?;
        let meta: Meta = serde_json::from_str(&meta_text).map_err(|e| malformed(format!("meta.json: {e}")))?;
        if let Some(strength) = &meta.preferred_strength
            && !crate::providers::catalogue::STRENGTHS.contains(&strength.as_str())
        {
            return Err(malformed(format!(
                "meta.json: preferred_strength {strength:?} is not fast, balanced or strong"
            )));
        }
        if prompt.trim().is_empty() {
            return Err(malformed("AGENT.md is empty".into()));
        }
        let mut hash = Sha256::new();
        hash.update(meta_text.as_bytes());
        hash.update([0]);
        hash.update(prompt.as_bytes());
        Ok(Agent { id: id.to_owned(), meta, prompt, version: hex::encode(hash.finalize()) })
    }
}

/// Agent ids are folder names: lowercase letters, digits, `-` and `_`.
pub fn valid_id(id: &str) -> bool {
    (1..=40).contains(&id.len()) && id.bytes().all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_main_agent_seeds_and_loads_and_an_edit_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let agents = AgentDir::new(dir.path());
        agents.seed().unwrap();
        let main = agents.load("main").unwrap();
        assert_eq!(main.meta.name, "Skald");
        std::fs::write(dir.path().join("agents/main/AGENT.md"), "Be brief.").unwrap();
        agents.seed().unwrap();
        let edited = agents.load("main").unwrap();
        assert_eq!(edited.prompt, "Be brief.");
        assert_ne!(edited.version, main.version);
    }

    #[test]
    fn a_malformed_or_unknown_agent_is_reported_not_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let agents = AgentDir::new(dir.path());
        std::fs::create_dir_all(dir.path().join("agents/broken")).unwrap();
        std::fs::write(dir.path().join("agents/broken/meta.json"), "{").unwrap();
        std::fs::write(dir.path().join("agents/broken/AGENT.md"), "x").unwrap();
        assert!(matches!(agents.load("broken"), Err(DefinitionError::Malformed { .. })));
        assert!(matches!(agents.load("nobody"), Err(DefinitionError::Unknown(_))));
        assert!(matches!(agents.load("../etc"), Err(DefinitionError::Unknown(_))));
    }
}
