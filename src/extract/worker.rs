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

/// How the helper ends when it cannot answer on the pipe, so that the server can still
/// say why (sysexits' numbers where one fits).
pub mod exit {
    use crate::extract::Failure;

    /// The helper could not limit itself, or lost its answer pipe before starting.
    pub const SOFTWARE: u8 = 70;
    /// The document could not be read from the pipe.
    pub const INPUT: u8 = 74;
    /// The answer could not be written back.
    pub const OUTPUT: u8 = 75;
    /// Memory ran out where an allocation fails as an error rather than an abort.
    pub const NO_MEMORY: u8 = 76;

    /// What the helper's own exit `code` says went wrong, in the document's words; `None`
    /// for a code it does not give.
    pub fn failure(code: i32) -> Option<Failure> {
        let crashed = |why: &str| Failure::Crashed(why.to_owned());
        Some(match u8::try_from(code).ok()? {
            NO_MEMORY => Failure::TooBig,
            INPUT => crashed("the reader could not take the document from its pipe"),
            OUTPUT => crashed("the reader could not hand back the text"),
            SOFTWARE => crashed("the reader could not set its own limits"),
            _ => return None,
        })
    }
}

/// Runs the helper for a document of kind `kind`.
pub fn run(kind: &str) -> ExitCode {
    let Some(kind) = Kind::parse(kind) else {
        return ExitCode::from(2);
    };
    let Ok(mut answer) = take_stdout() else {
        return ExitCode::from(exit::SOFTWARE);
    };
    if let Err(limit) = limit_self() {
        let _ = send(&mut answer, &Answer::Failed(format!("the reader could not limit itself ({limit})")));
        return ExitCode::from(exit::SOFTWARE);
    }
    let mut bytes = Vec::new();
    if let Err(err) = std::io::stdin().lock().take(MAX_INPUT).read_to_end(&mut bytes) {
        return ExitCode::from(failed(&err, exit::INPUT));
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
        Err(err) => ExitCode::from(failed(&err, exit::OUTPUT)),
    }
}

/// The exit code for `err`, met while doing what `otherwise` stands for.
fn failed(err: &std::io::Error, otherwise: u8) -> u8 {
    if err.kind() == std::io::ErrorKind::OutOfMemory { exit::NO_MEMORY } else { otherwise }
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

/// The bytes of address space this process has mapped now (`/proc/self/statm`'s first
/// field, in pages).
fn mapped() -> std::io::Result<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm")?;
    let pages = statm.split_whitespace().next().and_then(|pages| pages.parse::<u64>().ok());
    let pages = pages.ok_or_else(|| std::io::Error::other("unreadable /proc/self/statm"))?;
    Ok(pages * rustix::param::page_size() as u64)
}

/// The limits the server passed, and the ones that always hold.
fn limit_self() -> Result<(), String> {
    let number = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    crate::supervise::harden().map_err(|err| err.to_string())?;
    // Not one byte to a file: text goes back on the pipe, so a temporary file holding a
    // page of someone's letter cannot exist.
    rlimit::setrlimit(rlimit::Resource::FSIZE, 0, 0).map_err(|err| format!("file size: {err}"))?;
    if let Some(memory) = number(MEMORY_VAR) {
        // On top of what is mapped already: the desktop build maps WebKit's libraries and
        // reserves regions for them, hundreds of MiB the reader never uses, and the budget
        // is what parsing may take whichever build runs.
        let limit = mapped().map_err(|err| format!("memory: {err}"))?.saturating_add(memory);
        rlimit::setrlimit(rlimit::Resource::AS, limit, limit).map_err(|err| format!("memory: {err}"))?;
    }
    if let Some(cpu) = number(CPU_VAR) {
        // The soft limit sends SIGXCPU; the hard one, a second later, SIGKILL.
        rlimit::setrlimit(rlimit::Resource::CPU, cpu, cpu + 1).map_err(|err| format!("CPU time: {err}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::exit;
    use crate::extract::Failure;

    #[test]
    fn the_helpers_own_exit_codes_say_why_and_others_are_left_to_the_caller() {
        assert!(matches!(exit::failure(i32::from(exit::NO_MEMORY)), Some(Failure::TooBig)));
        assert!(matches!(exit::failure(i32::from(exit::INPUT)), Some(Failure::Crashed(why)) if why.contains("pipe")));
        assert!(exit::failure(1).is_none());
        assert!(exit::failure(-1).is_none());
        assert!(exit::failure(256 + i32::from(exit::INPUT)).is_none());
    }
}
