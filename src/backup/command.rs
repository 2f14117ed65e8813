//! `skald backup` and `skald restore` as the command line runs them: where the
//! passphrase comes from, whether a running Skald does the copy, and what is said.
//! The binary prints; this module decides.

use std::io::{self, BufRead, Write};
use std::path::Path;
use std::sync::Arc;

use zeroize::Zeroizing;

use super::control::{self, Answer};
use super::{BackupError, Done, Kind, Progress, Request, Restored, Source};
use crate::error::StartError;
use crate::store::{DataDir, SystemStore};

/// The passphrase: the first line of `file`, or typed at the terminal without echo
/// (twice when `confirm`). Never waits on a terminal that is not there.
pub fn passphrase(file: Option<&Path>, confirm: bool) -> Result<Zeroizing<String>, String> {
    if let Some(file) = file {
        let text = Zeroizing::new(
            std::fs::read_to_string(file).map_err(|err| format!("cannot read {}: {err}", file.display()))?,
        );
        let line = text.lines().next().unwrap_or("");
        if line.is_empty() {
            return Err(format!("{} holds no passphrase on its first line", file.display()));
        }
        return Ok(Zeroizing::new(line.to_owned()));
    }
    let stdin = io::stdin();
    if !rustix::termios::isatty(&stdin) {
        return Err("no terminal to ask for the backup passphrase on; give it with --passphrase-file".into());
    }
    let first = hidden_line(&stdin, "Backup passphrase: ")?;
    if confirm {
        let again = hidden_line(&stdin, "The same passphrase again: ")?;
        if *again != *first {
            return Err("the two passphrases differ; nothing was written".into());
        }
    }
    Ok(first)
}

fn hidden_line(stdin: &io::Stdin, prompt: &str) -> Result<Zeroizing<String>, String> {
    let mut err = io::stderr();
    let _ = write!(err, "{prompt}");
    let _ = err.flush();
    let before = rustix::termios::tcgetattr(stdin).map_err(|e| format!("cannot set up the terminal: {e}"))?;
    let mut quiet = before.clone();
    quiet.local_modes.remove(rustix::termios::LocalModes::ECHO);
    rustix::termios::tcsetattr(stdin, rustix::termios::OptionalActions::Now, &quiet)
        .map_err(|e| format!("cannot set up the terminal: {e}"))?;
    let mut line = Zeroizing::new(String::new());
    let read = stdin.lock().read_line(&mut line);
    let _ = rustix::termios::tcsetattr(stdin, rustix::termios::OptionalActions::Now, &before);
    let _ = writeln!(err);
    read.map_err(|e| format!("cannot read the passphrase: {e}"))?;
    let trimmed = Zeroizing::new(line.trim_end_matches(['\n', '\r']).to_owned());
    if trimmed.is_empty() {
        return Err("no passphrase was typed".into());
    }
    Ok(trimmed)
}

/// Progress as one short line.
pub fn describe(progress: &Progress) -> String {
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let stage = match progress.stage {
        super::Stage::Shared => "shared database",
        super::Stage::People => "private files",
        super::Stage::Agents => "agents",
        super::Stage::Models => "model files",
        super::Stage::Finishing => "finishing",
        super::Stage::Done => "done",
        super::Stage::Failed => "failed",
    };
    format!("{stage}: {:.1} of {:.1} MiB", mib(progress.done), mib(progress.total.max(progress.done)))
}

/// Writes a backup of `root`: through the running Skald when one answers on its
/// control socket, else alone under the data directory's lock.
pub async fn backup(
    root: &Path,
    to: &Path,
    passphrase: Zeroizing<String>,
    include_models: bool,
    say: impl Fn(&str) + Send + Sync + 'static,
) -> Result<Done, String> {
    let say = Arc::new(say);
    let to = std::path::absolute(to).map_err(|err| format!("cannot use {}: {err}", to.display()))?;
    let heard = say.clone();
    let asked = control::ask_backup(root, &to, &passphrase, include_models, move |answer| match answer {
        Answer::Started { path, .. } => heard(&format!("the running Skald is writing {path}")),
        Answer::Progress(progress) => heard(&describe(progress)),
        Answer::Done(_) | Answer::Error(_) => {}
    })
    .await;
    match asked {
        Ok(Some(outcome)) => return outcome,
        Ok(None) => {}
        Err(err) => return Err(format!("the running Skald's control socket failed: {err}")),
    }
    let data_dir = match DataDir::open_locked(root) {
        Ok(data_dir) => data_dir,
        Err(StartError::DataDirLocked { holder, .. }) => {
            return Err(format!(
                "Skald is running{holder} but did not answer on {}; back up from its administration page, or \
                 stop it and run this again",
                control::socket_path(root).display()
            ));
        }
        Err(err) => return Err(err.to_string()),
    };
    if !data_dir.system_db().exists() {
        return Err(format!("no Skald data at {}", root.display()));
    }
    let system = SystemStore::open(&data_dir.system_db()).await.map_err(|err| err.to_string())?;
    let source = Source::alone(data_dir.root(), system.clone());
    let running = Arc::new(tokio::sync::Mutex::new(()));
    let request = Request { to, passphrase, include_models };
    let outcome = async {
        let started = super::start(&source, &running, request, Kind::CommandLine, None).await?;
        say(&format!("writing {}", started.path().display()));
        let said = say.clone();
        started.run(Arc::new(move |progress: &Progress| said(&describe(progress)))).await
    }
    .await
    .map_err(|err: BackupError| err.to_string());
    system.close().await;
    outcome
}

/// Restores `from` into the empty folder `dir`.
pub async fn restore(
    from: &Path,
    dir: &Path,
    passphrase: Zeroizing<String>,
    say: impl Fn(&str) + Send + Sync + 'static,
) -> Result<Restored, String> {
    let said = Arc::new(say);
    let report = said.clone();
    super::restore_into(
        from,
        dir,
        passphrase.as_bytes(),
        Arc::new(move |progress: &Progress| report(&format!("restoring: {}", describe(progress)))),
    )
    .await
    .map_err(|err| err.to_string())
}
