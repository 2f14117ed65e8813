//! The extraction helper itself (`skald extract-worker <kind>`, hidden): it limits itself
//! first — memory and CPU time as the server said, no file writes at all, no core dump —
//! then reads the document from stdin, reads its text and answers one JSON value on what
//! was stdout. Everything else that might print (a parser's debugging, a C library) goes
//! to /dev/null: neither the answer's pipe nor the server's log may carry a stray word.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;

use serde::{Deserialize, Serialize};

use super::{CPU_VAR, Extracted, Kind, MEMORY_VAR, read};

/// The helper's one answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Read(Extracted),
    /// Why the file could not be read, in words for its owner.
    Failed(String),
}

/// The most bytes read from stdin: the upload limit, with room.
const MAX_INPUT: u64 = 80 << 20;

/// Runs the helper for a document of kind `kind`.
pub fn run(kind: &str) -> ExitCode {
    let Some(kind) = Kind::parse(kind) else {
        return ExitCode::from(2);
    };
    let Ok(mut answer) = take_stdout() else {
        return ExitCode::from(70);
    };
    if let Err(limit) = limit_self() {
        let _ = send(&mut answer, &Answer::Failed(format!("the reader could not limit itself ({limit})")));
        return ExitCode::from(70);
    }
    let mut bytes = Vec::new();
    if std::io::stdin().lock().take(MAX_INPUT).read_to_end(&mut bytes).is_err() {
        return ExitCode::from(74);
    }
    // A panic's message may quote what it choked on; none is printed anywhere.
    std::panic::set_hook(Box::new(|_| {}));
    let read = std::panic::catch_unwind(|| read::read(kind, &bytes));
    let reply = match read {
        Ok(Ok(extracted)) => Answer::Read(extracted),
        Ok(Err(unreadable)) => Answer::Failed(unreadable.to_string()),
        Err(_) => Answer::Failed("the reader failed on something in it".to_owned()),
    };
    match send(&mut answer, &reply) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(74),
    }
}

fn send(out: &mut std::fs::File, answer: &Answer) -> std::io::Result<()> {
    let line = serde_json::to_vec(answer).map_err(std::io::Error::other)?;
    out.write_all(&line)?;
    out.flush()
}

/// The original stdout on a descriptor of its own; fds 1 and 2 now lead to /dev/null.
fn take_stdout() -> std::io::Result<std::fs::File> {
    let kept = rustix::io::dup(std::io::stdout().as_fd())?;
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
    rustix::stdio::dup2_stdout(null.as_fd())?;
    rustix::stdio::dup2_stderr(null.as_fd())?;
    Ok(std::fs::File::from(kept))
}

/// The limits the server passed, and the ones that always hold.
fn limit_self() -> Result<(), String> {
    let number = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    crate::supervise::harden().map_err(|err| err.to_string())?;
    // Not one byte to a file: text goes back on the pipe, so a temporary file holding a
    // page of someone's letter cannot exist.
    rlimit::setrlimit(rlimit::Resource::FSIZE, 0, 0).map_err(|err| format!("file size: {err}"))?;
    if let Some(memory) = number(MEMORY_VAR) {
        rlimit::setrlimit(rlimit::Resource::AS, memory, memory).map_err(|err| format!("memory: {err}"))?;
    }
    if let Some(cpu) = number(CPU_VAR) {
        // The soft limit sends SIGXCPU; the hard one, a second later, SIGKILL.
        rlimit::setrlimit(rlimit::Resource::CPU, cpu, cpu + 1).map_err(|err| format!("CPU time: {err}"))?;
    }
    Ok(())
}
