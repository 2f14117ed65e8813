//! Reading documents (docs/architecture.md §12.2): what a file is ([`sniff`]) and the text
//! on each of its pages. Parsers of files from anywhere are where crashes, endless loops and
//! memory bombs live, so the reading itself never runs in the server: [`Extractor`] starts
//! a helper — this same binary's hidden `extract-worker` command, under `supervise` — with
//! limits on its memory, CPU time and file writes set by `setrlimit`, gives it the bytes on
//! a pipe, takes the pages back on another, and kills it at a time limit. A PDF bomb or a
//! parser panic costs that one document and is told to the person in words.
//!
//! Nothing here touches a person's store: the caller keeps the bytes and the text.

pub mod html;
pub(crate) mod read;
mod sniff;
pub mod worker;

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub use read::{MAX_PAGES, PAGE_CHARS};
pub use sniff::{Kind, Refused, sniff};

/// The hidden command the helper runs as.
pub const WORKER_COMMAND: &str = "extract-worker";

/// The text of a document, by page (pages counted from 1 by the API, from 0 here).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extracted {
    pub pages: Vec<String>,
    /// Some pages hold no text and OCR is not installed to read them.
    pub ocr_missing: bool,
    /// Some text was read by OCR.
    pub ocr_used: bool,
}

impl Extracted {
    pub fn new(pages: Vec<String>) -> Self {
        Self { pages, ..Self::default() }
    }

    /// Whether any page holds a word.
    pub fn has_text(&self) -> bool {
        self.pages.iter().any(|p| p.chars().any(char::is_alphanumeric))
    }
}

/// Why the reader gave up on a file, in words for its owner.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("this is {0}")]
    Damaged(&'static str),
    #[error("it has {0} pages; Skald reads documents of up to 2000")]
    TooManyPages(usize),
    #[error("the program {0} failed on it")]
    Program(String),
}

/// Why reading a document failed, as its status says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    #[error("Skald could not read this file: {0}.")]
    Unreadable(String),
    #[error(
        "Reading this file took longer than {0} seconds, so Skald stopped; it may be damaged or built to stall readers."
    )]
    TooLong(u64),
    #[error("Reading this file needed more memory than Skald allows; it may be damaged or built to exhaust readers.")]
    TooBig,
    #[error("The reader stopped on this file ({0}); it may be damaged.")]
    Crashed(String),
    #[error("Skald could not start its document reader ({0}).")]
    Start(String),
}

/// What the helper may use.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall-clock time, after which the helper is killed.
    pub time: Duration,
    /// Address space the reading may take, in bytes, on top of what the helper has mapped
    /// when it starts (`RLIMIT_AS`).
    pub memory: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self { time: Duration::from_secs(120), memory: 2 << 30 }
    }
}

/// Starts extraction helpers; cheap to clone.
#[derive(Debug, Clone)]
pub struct Extractor {
    program: PathBuf,
    limits: Limits,
}

/// The environment variables that carry the limits to the helper.
const MEMORY_VAR: &str = "SKALD_EXTRACT_MEMORY";
const CPU_VAR: &str = "SKALD_EXTRACT_CPU";

impl Extractor {
    /// Helpers started from `program` (this binary) with `limits`.
    pub fn new(program: PathBuf, limits: Limits) -> Self {
        Self { program, limits }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Reads `bytes` of kind `kind` in a helper.
    pub async fn extract(&self, kind: Kind, bytes: &[u8]) -> Result<Extracted, Failure> {
        let cpu = self.limits.time.as_secs().max(1);
        let spec = crate::supervise::Spec {
            name: "extract-worker".to_owned(),
            program: self.program.clone(),
            args: vec![WORKER_COMMAND.into(), kind.as_str().into()],
            env: vec![
                (MEMORY_VAR.into(), self.limits.memory.to_string().into()),
                (CPU_VAR.into(), cpu.to_string().into()),
                // tesseract's OpenMP would start a thread per core, each with its stack.
                ("OMP_THREAD_LIMIT".into(), "1".into()),
            ],
            // Nowhere a stray relative write could land.
            cwd: Some(PathBuf::from("/")),
        };
        let mut helper = crate::supervise::spawn(&spec).map_err(|err| Failure::Start(err.to_string()))?;
        let mut stdin = helper.stdin.take().expect("supervise pipes stdin");
        let mut stdout = helper.stdout.take().expect("supervise pipes stdout");
        let exited = helper.exited();
        let work = async {
            // Written while the answer is read: a helper that fails early stops reading.
            let write = async {
                let _ = stdin.write_all(bytes).await;
                drop(stdin);
            };
            let mut answer = Vec::new();
            // The answer is text, bounded by the pages a document may have.
            let mut bounded = (&mut stdout).take(256 << 20);
            let read = bounded.read_to_end(&mut answer);
            let ((), read) = tokio::join!(write, read);
            read.map(|_| answer)
        };
        let answer = match tokio::time::timeout(self.limits.time, work).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(err)) => return Err(Failure::Crashed(err.to_string())),
            Err(_) => {
                helper.kill();
                return Err(Failure::TooLong(self.limits.time.as_secs()));
            }
        };
        let exit = match tokio::time::timeout(Duration::from_secs(5), exited).await {
            Ok(exit) => exit,
            Err(_) => {
                helper.kill();
                return Err(Failure::TooLong(self.limits.time.as_secs()));
            }
        };
        match serde_json::from_slice::<worker::Answer>(&answer) {
            Ok(worker::Answer::Read(extracted)) if exit.is_clean() => Ok(extracted),
            Ok(worker::Answer::Failed(reason)) => Err(Failure::Unreadable(reason)),
            _ => Err(match exit.signal.as_deref() {
                Some("SIGXCPU") | Some("SIGKILL") => Failure::TooLong(self.limits.time.as_secs()),
                // An allocation refused under RLIMIT_AS aborts a Rust program, or, where
                // the allocation was a fallible one, ends the helper in so many words.
                Some("SIGABRT") => Failure::TooBig,
                None => exit.code.and_then(worker::exit::failure).unwrap_or_else(|| Failure::Crashed(exit.describe())),
                _ => Failure::Crashed(exit.describe()),
            }),
        }
    }
}
