//! The backup archive's format (docs/architecture.md §5.2). Blocking IO: callers run it on
//! a blocking thread.
//!
//! ```text
//! header   "SKB1" ‖ format ‖ argon2id m, t, p (u32 BE each) ‖ salt (16) ‖ nonce prefix (7)
//! chunks   last (u8) ‖ length (u32 BE) ‖ AES-256-GCM ciphertext of ≤ 1 MiB with its tag
//! ```
//!
//! The header is the associated data of every chunk, and a chunk's nonce holds its index
//! and whether it is the last ([`crate::crypto::ArchiveKey`]): an edited, moved, dropped
//! or foreign chunk fails its tag, an archive cut short lacks its last chunk, and bytes
//! after the last chunk are refused.
//!
//! The plaintext inside is a run of entries — `1 ‖ path length (u16 BE) ‖ path ‖ size (u64
//! BE) ‖ bytes` — ending with `0`. The last entry is `manifest.json`: every other entry's
//! path, size and SHA-256, which the reader checks.

use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::crypto::{ARCHIVE_PREFIX_LEN, ArchiveKey, CryptoError, KdfParams};

const MAGIC: &[u8; 4] = b"SKB1";
const FORMAT: u8 = 1;
const HEADER_LEN: usize = 4 + 1 + 12 + 16 + ARCHIVE_PREFIX_LEN;
/// Plaintext per chunk.
const CHUNK: usize = 1 << 20;
const TAG_LEN: usize = 16;
pub const MANIFEST: &str = "manifest.json";
/// The first chunk's whole plaintext: a chunk of its own, so a wrong passphrase (the only
/// thing that fails this tiny chunk but an edited header) is told apart from damage later.
const CHECK: &[u8] = b"skald backup";
/// The format of the manifest itself; a reader refuses a newer one it cannot read.
pub const MANIFEST_FORMAT: u32 = 1;

/// Why an archive could not be written or read. Never carries the passphrase or content.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("this is not a Skald backup archive")]
    NotAnArchive,
    #[error("the passphrase does not open this backup")]
    WrongPassphrase,
    #[error("the backup archive is damaged or incomplete: {0}")]
    Damaged(String),
    #[error("the backup archive is damaged: its part {0} does not open")]
    ChunkRefused(u32),
    #[error("the archive's key parameters are outside the allowed range; it may have been tampered with")]
    KdfOutOfRange,
}

/// One file in the archive, as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub path: String,
    pub size: u64,
    pub sha256: String,
}

/// A person whose private file the archive holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Person {
    pub id: String,
    pub name: String,
}

/// What the archive says about itself; written last, read and checked at restore.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub skald_version: String,
    pub created_at: String,
    pub instance_id: String,
    pub people: Vec<Person>,
    pub includes_models: bool,
    #[serde(default)]
    pub entries: Vec<Entry>,
}

fn encode_header(kdf: &KdfParams, salt: &[u8; 16], prefix: &[u8; ARCHIVE_PREFIX_LEN]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN);
    out.extend_from_slice(MAGIC);
    out.push(FORMAT);
    for n in [kdf.m_kib, kdf.t, kdf.p] {
        out.extend_from_slice(&n.to_be_bytes());
    }
    out.extend_from_slice(salt);
    out.extend_from_slice(prefix);
    out
}

/// Writes an archive to `out`, sealing as it goes: memory stays at one chunk whatever the
/// size of the files.
pub struct Writer<W: Write> {
    out: W,
    key: ArchiveKey,
    header: Vec<u8>,
    prefix: [u8; ARCHIVE_PREFIX_LEN],
    index: u32,
    plain: Zeroizing<Vec<u8>>,
    entries: Vec<Entry>,
    open: Option<OpenEntry>,
    written: u64,
}

struct OpenEntry {
    path: String,
    size: u64,
    written: u64,
    hash: Sha256,
}

impl<W: Write> Writer<W> {
    /// Derives the key (about a second of argon2id) and writes the header.
    pub fn new(mut out: W, passphrase: &[u8], kdf: KdfParams) -> Result<Self, ArchiveError> {
        let (salt, prefix) = ArchiveKey::fresh_salt_and_prefix();
        let key = ArchiveKey::derive(passphrase, &salt, &kdf).map_err(|_| ArchiveError::KdfOutOfRange)?;
        let header = encode_header(&kdf, &salt, &prefix);
        out.write_all(&header)?;
        let mut writer = Self {
            out,
            key,
            header,
            prefix,
            index: 0,
            plain: Zeroizing::new(Vec::with_capacity(CHUNK)),
            entries: Vec::new(),
            open: None,
            written: HEADER_LEN as u64,
        };
        writer.plain.extend_from_slice(CHECK);
        writer.seal(false)?;
        Ok(writer)
    }

    /// Bytes written so far, header and tags included.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Starts an entry of exactly `size` bytes.
    pub fn begin(&mut self, path: &str, size: u64) -> Result<(), ArchiveError> {
        assert!(self.open.is_none(), "an entry is still open");
        let name = path.as_bytes();
        let len = u16::try_from(name.len()).map_err(|_| ArchiveError::Damaged(format!("path too long: {path}")))?;
        self.push(&[1])?;
        self.push(&len.to_be_bytes())?;
        self.push(name)?;
        self.push(&size.to_be_bytes())?;
        self.open = Some(OpenEntry { path: path.to_owned(), size, written: 0, hash: Sha256::new() });
        Ok(())
    }

    /// Adds bytes to the open entry; more than it announced is refused.
    pub fn data(&mut self, bytes: &[u8]) -> Result<(), ArchiveError> {
        let entry = self.open.as_mut().expect("an open entry");
        entry.written += bytes.len() as u64;
        if entry.written > entry.size {
            return Err(ArchiveError::Damaged(format!("{} grew while it was copied", entry.path)));
        }
        entry.hash.update(bytes);
        self.push(bytes)
    }

    /// Closes the open entry; fewer bytes than it announced is refused.
    pub fn end(&mut self) -> Result<&Entry, ArchiveError> {
        let entry = self.open.take().expect("an open entry");
        if entry.written != entry.size {
            return Err(ArchiveError::Damaged(format!("{} shrank while it was copied", entry.path)));
        }
        self.entries.push(Entry { path: entry.path, size: entry.size, sha256: hex::encode(entry.hash.finalize()) });
        Ok(self.entries.last().expect("just pushed"))
    }

    /// One whole entry from memory.
    pub fn add(&mut self, path: &str, bytes: &[u8]) -> Result<(), ArchiveError> {
        self.begin(path, bytes.len() as u64)?;
        self.data(bytes)?;
        self.end().map(|_| ())
    }

    /// One whole entry of `size` bytes read from `from`, calling `step` with each piece's
    /// length as it goes.
    pub fn copy(
        &mut self,
        path: &str,
        size: u64,
        from: &mut impl Read,
        mut step: impl FnMut(u64),
    ) -> Result<(), ArchiveError> {
        self.begin(path, size)?;
        let mut buf = Zeroizing::new(vec![0u8; 256 * 1024]);
        let mut left = size;
        while left > 0 {
            let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            let n = from.read(&mut buf[..want])?;
            if n == 0 {
                return Err(ArchiveError::Damaged(format!("{path} shrank while it was copied")));
            }
            self.data(&buf[..n])?;
            left -= n as u64;
            step(n as u64);
        }
        self.end().map(|_| ())
    }

    /// Writes the manifest (with every entry's hash), the end mark and the last chunk,
    /// and hands back the output to be synced.
    pub fn finish(mut self, mut manifest: Manifest) -> Result<(W, Manifest), ArchiveError> {
        manifest.entries = std::mem::take(&mut self.entries);
        let json = serde_json::to_vec_pretty(&manifest).map_err(|err| ArchiveError::Damaged(err.to_string()))?;
        self.add(MANIFEST, &json)?;
        self.entries.pop();
        self.push(&[0])?;
        self.seal(true)?;
        self.out.flush()?;
        Ok((self.out, manifest))
    }

    fn push(&mut self, mut bytes: &[u8]) -> Result<(), ArchiveError> {
        while !bytes.is_empty() {
            if self.plain.len() == CHUNK {
                self.seal(false)?;
            }
            let take = (CHUNK - self.plain.len()).min(bytes.len());
            self.plain.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        Ok(())
    }

    fn seal(&mut self, last: bool) -> Result<(), ArchiveError> {
        let sealed = self.key.seal_chunk(&self.prefix, self.index, last, &self.header, &self.plain);
        self.plain.clear();
        self.index = self.index.checked_add(1).ok_or_else(|| ArchiveError::Damaged("archive too large".into()))?;
        self.out.write_all(&[u8::from(last)])?;
        self.out.write_all(&(sealed.len() as u32).to_be_bytes())?;
        self.out.write_all(&sealed)?;
        self.written += 5 + sealed.len() as u64;
        Ok(())
    }
}

/// Reads an archive entry by entry, opening chunks as it goes.
pub struct Reader<R: Read> {
    input: R,
    key: ArchiveKey,
    header: Vec<u8>,
    prefix: [u8; ARCHIVE_PREFIX_LEN],
    index: u32,
    plain: Zeroizing<Vec<u8>>,
    at: usize,
    seen_last: bool,
}

/// An entry the reader is positioned at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryHead {
    pub path: String,
    pub size: u64,
}

impl<R: Read> Reader<R> {
    /// Reads the header and derives the key; the first chunk tells whether the passphrase
    /// is right.
    pub fn open(mut input: R, passphrase: &[u8]) -> Result<Self, ArchiveError> {
        let mut header = vec![0u8; HEADER_LEN];
        input.read_exact(&mut header).map_err(|_| ArchiveError::NotAnArchive)?;
        if &header[..4] != MAGIC {
            return Err(ArchiveError::NotAnArchive);
        }
        if header[4] != FORMAT {
            return Err(ArchiveError::Damaged(format!(
                "archive format {} is not one this Skald reads; use a newer Skald",
                header[4]
            )));
        }
        let n = |at: usize| u32::from_be_bytes(header[at..at + 4].try_into().expect("4 bytes"));
        let kdf = KdfParams { m_kib: n(5), t: n(9), p: n(13) };
        if !kdf.in_range() {
            return Err(ArchiveError::KdfOutOfRange);
        }
        let salt: [u8; 16] = header[17..33].try_into().expect("16 bytes");
        let prefix: [u8; ARCHIVE_PREFIX_LEN] = header[33..HEADER_LEN].try_into().expect("7 bytes");
        let key = ArchiveKey::derive(passphrase, &salt, &kdf).map_err(|_| ArchiveError::KdfOutOfRange)?;
        let mut reader =
            Self { input, key, header, prefix, index: 0, plain: Zeroizing::new(Vec::new()), at: 0, seen_last: false };
        reader.next_chunk().map_err(|err| match err {
            ArchiveError::ChunkRefused(0) => ArchiveError::WrongPassphrase,
            other => other,
        })?;
        if reader.seen_last || &reader.plain[..] != CHECK {
            return Err(ArchiveError::Damaged("its first part is not Skald's".into()));
        }
        reader.at = reader.plain.len();
        Ok(reader)
    }

    /// The next entry's path and size, or `None` at the end mark (after which the input
    /// must end).
    pub fn next_entry(&mut self) -> Result<Option<EntryHead>, ArchiveError> {
        let mut tag = [0u8; 1];
        self.take(&mut tag)?;
        match tag[0] {
            0 => {
                if self.at != self.plain.len() || !self.seen_last {
                    return Err(ArchiveError::Damaged("data after the end mark".into()));
                }
                let mut extra = [0u8; 1];
                if self.input.read(&mut extra)? != 0 {
                    return Err(ArchiveError::Damaged("bytes after the last chunk".into()));
                }
                Ok(None)
            }
            1 => {
                let mut len = [0u8; 2];
                self.take(&mut len)?;
                let mut path = vec![0u8; u16::from_be_bytes(len) as usize];
                self.take(&mut path)?;
                let mut size = [0u8; 8];
                self.take(&mut size)?;
                let path = String::from_utf8(path).map_err(|_| ArchiveError::Damaged("an entry's path".into()))?;
                Ok(Some(EntryHead { path, size: u64::from_be_bytes(size) }))
            }
            _ => Err(ArchiveError::Damaged("unknown entry mark".into())),
        }
    }

    /// Copies the current entry's `size` bytes to `out`; returns their SHA-256 (hex).
    pub fn copy_to(&mut self, size: u64, out: &mut impl Write) -> Result<String, ArchiveError> {
        let mut hash = Sha256::new();
        let mut left = size;
        while left > 0 {
            if self.at == self.plain.len() {
                self.next_chunk()?;
            }
            let n = (self.plain.len() - self.at).min(usize::try_from(left).unwrap_or(usize::MAX));
            let piece = &self.plain[self.at..self.at + n];
            hash.update(piece);
            out.write_all(piece)?;
            self.at += n;
            left -= n as u64;
        }
        Ok(hex::encode(hash.finalize()))
    }

    /// The current entry read into memory (for small entries: the manifest, the shared
    /// database), refused above `limit` bytes.
    pub fn read_entry(&mut self, size: u64, limit: u64) -> Result<Zeroizing<Vec<u8>>, ArchiveError> {
        if size > limit {
            return Err(ArchiveError::Damaged(format!("an entry of {size} bytes is larger than expected")));
        }
        let mut out = Zeroizing::new(Vec::with_capacity(size as usize));
        self.copy_to(size, &mut *out)?;
        Ok(out)
    }

    fn take(&mut self, buf: &mut [u8]) -> Result<(), ArchiveError> {
        let mut filled = 0;
        while filled < buf.len() {
            if self.at == self.plain.len() {
                self.next_chunk()?;
            }
            let n = (self.plain.len() - self.at).min(buf.len() - filled);
            buf[filled..filled + n].copy_from_slice(&self.plain[self.at..self.at + n]);
            self.at += n;
            filled += n;
        }
        Ok(())
    }

    fn next_chunk(&mut self) -> Result<(), ArchiveError> {
        if self.seen_last {
            return Err(ArchiveError::Damaged("the archive ends in the middle of an entry".into()));
        }
        let mut frame = [0u8; 5];
        self.input.read_exact(&mut frame).map_err(|_| ArchiveError::Damaged("the archive is cut short".into()))?;
        let last = match frame[0] {
            0 => false,
            1 => true,
            _ => return Err(ArchiveError::Damaged("a chunk's mark".into())),
        };
        let len = u32::from_be_bytes(frame[1..].try_into().expect("4 bytes")) as usize;
        if !(TAG_LEN..=CHUNK + TAG_LEN).contains(&len) {
            return Err(ArchiveError::Damaged("a chunk's length".into()));
        }
        let mut sealed = vec![0u8; len];
        self.input.read_exact(&mut sealed).map_err(|_| ArchiveError::Damaged("the archive is cut short".into()))?;
        self.plain =
            self.key.open_chunk(&self.prefix, self.index, last, &self.header, &sealed).map_err(|err| match err {
                CryptoError::WrongSecret => ArchiveError::ChunkRefused(self.index),
                other => ArchiveError::Damaged(other.to_string()),
            })?;
        self.at = 0;
        self.index += 1;
        self.seen_last = last;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAST: KdfParams = KdfParams::FLOOR;

    fn manifest() -> Manifest {
        Manifest {
            format: MANIFEST_FORMAT,
            skald_version: "test".into(),
            created_at: "2026-12-05T00:00:00Z".into(),
            instance_id: "i1".into(),
            people: vec![],
            includes_models: false,
            entries: vec![],
        }
    }

    /// An archive with a small entry and one spanning several chunks.
    fn sample() -> (Vec<u8>, Vec<u8>) {
        let big: Vec<u8> = (0..(CHUNK * 2 + 123)).map(|i| (i % 251) as u8).collect();
        let mut writer = Writer::new(Vec::new(), b"a long passphrase", FAST).unwrap();
        writer.add("database/system.db", b"shared pages").unwrap();
        writer.copy("database/users/u1.db", big.len() as u64, &mut &big[..], |_| {}).unwrap();
        let (bytes, manifest) = writer.finish(manifest()).unwrap();
        assert_eq!(manifest.entries.len(), 2);
        (bytes, big)
    }

    fn read_all(bytes: &[u8], passphrase: &[u8]) -> Result<Vec<(String, Vec<u8>)>, ArchiveError> {
        let mut reader = Reader::open(bytes, passphrase)?;
        let mut out = Vec::new();
        while let Some(head) = reader.next_entry()? {
            let mut data = Vec::new();
            reader.copy_to(head.size, &mut data)?;
            out.push((head.path, data));
        }
        Ok(out)
    }

    #[test]
    fn what_is_written_reads_back_with_its_manifest_last() {
        let (bytes, big) = sample();
        let entries = read_all(&bytes, b"a long passphrase").unwrap();
        let paths: Vec<&str> = entries.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["database/system.db", "database/users/u1.db", MANIFEST]);
        assert_eq!(entries[1].1, big);
        let manifest: Manifest = serde_json::from_slice(&entries[2].1).unwrap();
        assert_eq!(manifest.entries[1].sha256, hex::encode(Sha256::digest(&big)));
    }

    #[test]
    fn a_wrong_passphrase_is_told_apart_from_damage() {
        let (bytes, _) = sample();
        assert!(matches!(Reader::open(&bytes[..], b"not the passphrase"), Err(ArchiveError::WrongPassphrase)));
        assert!(matches!(Reader::open(&b"PK\x03\x04 a zip"[..], b"x"), Err(ArchiveError::NotAnArchive)));
    }

    #[test]
    fn any_flipped_cut_or_appended_byte_is_refused() {
        let (bytes, _) = sample();
        for at in [HEADER_LEN + 10, bytes.len() / 2, bytes.len() - 1] {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x40;
            assert!(read_all(&flipped, b"a long passphrase").is_err(), "a flip at {at}");
        }
        // The header is bound to every chunk: its salt or prefix edited fails.
        let mut header_edit = bytes.clone();
        header_edit[HEADER_LEN - 1] ^= 1;
        assert!(read_all(&header_edit, b"a long passphrase").is_err());
        for cut in [HEADER_LEN + 3, bytes.len() / 2, bytes.len() - 1] {
            assert!(read_all(&bytes[..cut], b"a long passphrase").is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(read_all(&longer, b"a long passphrase").is_err());
    }

    #[test]
    fn damage_after_the_first_part_is_not_taken_for_a_wrong_passphrase() {
        let mut writer = Writer::new(Vec::new(), b"a long passphrase", FAST).unwrap();
        writer.add("database/system.db", b"a small archive, one chunk of data").unwrap();
        let (mut bytes, _) = writer.finish(manifest()).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert!(matches!(read_all(&bytes, b"a long passphrase"), Err(ArchiveError::ChunkRefused(1))));
    }

    #[test]
    fn an_entry_that_changes_size_while_copied_is_refused() {
        let mut writer = Writer::new(Vec::new(), b"p", FAST).unwrap();
        assert!(matches!(writer.copy("x", 10, &mut &b"short"[..], |_| {}), Err(ArchiveError::Damaged(_))));
        let mut writer = Writer::new(Vec::new(), b"p", FAST).unwrap();
        writer.begin("y", 2).unwrap();
        assert!(writer.data(b"three").is_err());
    }
}
