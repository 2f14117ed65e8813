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

    /// Every agent folder, each loaded or with the reason it cannot be, sorted by id. A
    /// malformed agent is reported here and skipped by everything that offers agents.
    pub fn list(&self) -> Vec<Result<Agent, DefinitionError>> {
        let Ok(entries) = std::fs::read_dir(&self.root) else { return Vec::new() };
        let mut ids: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|id| valid_id(id))
            .collect();
        ids.sort();
        ids.iter().map(|id| self.load(id)).collect()
    }

    /// Whether an agent's files are exactly the ones Skald ships.
    pub fn is_bundled(&self, agent: &Agent) -> bool {
        let file = |name: &str| Bundled::get(&format!("{}/{name}", agent.id)).map(|f| f.data.into_owned());
        match (file("meta.json"), file("AGENT.md")) {
            (Some(meta), Some(prompt)) => version(&meta, &prompt) == agent.version,
            _ => false,
        }
    }

    /// The agent two files' texts would make, without writing them.
    pub fn parse(&self, id: &str, meta: &str, prompt: &str) -> Result<Agent, DefinitionError> {
        check(id, meta, prompt)
    }

    /// Writes an agent's two files, each replaced whole (a reader sees the old file or the
    /// new one, never half of one). Both are checked first: a malformed agent is refused,
    /// not written. Returns the agent as it now loads.
    pub fn save(&self, id: &str, meta: &str, prompt: &str) -> Result<Agent, DefinitionError> {
        if !valid_id(id) {
            return Err(DefinitionError::Malformed {
                id: id.to_owned(),
                why: "an agent id is 1 to 40 lowercase letters, digits, - or _".into(),
            });
        }
        check(id, meta, prompt)?;
        let folder = self.root.join(id);
        let io =
            |e: std::io::Error| DefinitionError::Malformed { id: id.to_owned(), why: format!("could not save: {e}") };
        std::fs::create_dir_all(&folder).map_err(io)?;
        for (name, text) in [("meta.json", meta), ("AGENT.md", prompt)] {
            let partial = folder.join(format!(".{name}.partial"));
            std::fs::write(&partial, text).map_err(io)?;
            std::fs::rename(&partial, folder.join(name)).map_err(io)?;
        }
        self.load(id)
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
        check(id, &meta_text, &prompt)
    }
}

/// An agent from the text of its two files, or why they do not make one.
fn check(id: &str, meta_text: &str, prompt: &str) -> Result<Agent, DefinitionError> {
    let malformed = |why: String| DefinitionError::Malformed { id: id.to_owned(), why };
    let meta: Meta = serde_json::from_str(meta_text).map_err(|e| malformed(format!("meta.json: {e}")))?;
    if let Some(strength) = &meta.preferred_strength
        && !crate::providers::catalogue::STRENGTHS.contains(&strength.as_str())
    {
        return Err(malformed(format!("meta.json: preferred_strength {strength:?} is not fast, balanced or strong")));
    }
    if meta.name.trim().is_empty() {
        return Err(malformed("meta.json: the name is empty".into()));
    }
    if prompt.trim().is_empty() {
        return Err(malformed("AGENT.md is empty".into()));
    }
    let version = version(meta_text.as_bytes(), prompt.as_bytes());
    Ok(Agent { id: id.to_owned(), meta, prompt: prompt.to_owned(), version })
}

/// SHA-256 of both files: the version a stored request and the privacy page name.
fn version(meta: &[u8], prompt: &[u8]) -> String {
    let mut hash = Sha256::new();
    hash.update(meta);
    hash.update([0]);
    hash.update(prompt);
    hex::encode(hash.finalize())
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
        let listed: Vec<bool> = agents.list().iter().map(Result::is_ok).collect();
        assert_eq!(listed, [false], "listed, as a problem");
    }

    #[test]
    fn the_shipped_agents_are_recognised_until_edited_and_a_bad_save_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let agents = AgentDir::new(dir.path());
        agents.seed().unwrap();
        let ids: Vec<String> = agents.list().into_iter().map(|a| a.unwrap().id).collect();
        assert_eq!(ids, ["main", "planner", "researcher"]);
        let planner = agents.load("planner").unwrap();
        assert!(agents.is_bundled(&planner));
        let meta = r#"{"name":"Planner","tools":[]}"#;
        let saved = agents.save("planner", meta, "Plan briefly.").unwrap();
        assert!(!agents.is_bundled(&saved));
        assert!(matches!(agents.save("planner", "{", "x"), Err(DefinitionError::Malformed { .. })));
        assert_eq!(agents.load("planner").unwrap().prompt, "Plan briefly.", "the bad save wrote nothing");
        assert!(agents.save("../x", meta, "x").is_err());
    }
}
