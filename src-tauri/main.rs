//! The `skald` binary: parse the command line, start the core, then open the window
//! (feature `desktop`) or wait for a signal. Thin on purpose — everything it does is a
//! call into the `skald` library.

#[cfg(feature = "desktop")]
mod shell;
mod web;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use skald::app::{self, App, StartOptions};
use skald::config::{self, DATA_DIR_ENV};
use skald::error::StartError;
use skald::store::DataDir;

#[derive(Parser)]
#[command(name = "skald", version, about = "A private AI assistant for the few people who share one computer")]
struct Cli {
    /// Where Skald keeps its data (default: the OS's per-user data directory).
    #[arg(long, global = true, env = DATA_DIR_ENV, value_name = "DIR")]
    data_dir: Option<PathBuf>,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the backend headless on 127.0.0.1 and print its address and launch token.
    Serve {
        /// Port on 127.0.0.1; 0 takes any free port.
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// Check who can open each private space; exit 1 if anything is off. Read-only: runs
    /// beside a running Skald.
    Verify,
    /// Write one archive of the whole data directory, sealed with a passphrase: the shared
    /// database, every private file as its encrypted bytes, the agents. Works while Skald
    /// runs (the running server holds open files still while they are copied).
    Backup {
        /// A folder (the archive gets a dated name in it) or the archive's path.
        #[arg(long, value_name = "PATH")]
        to: PathBuf,
        /// Read the passphrase from the first line of this file instead of the terminal.
        #[arg(long, value_name = "FILE")]
        passphrase_file: Option<PathBuf>,
        /// Include the built-in model's files (large; they can be downloaded again).
        #[arg(long)]
        with_models: bool,
    },
    /// Restore an archive into an empty data directory (give it with --data-dir); then
    /// check it as `skald verify` does.
    Restore {
        #[arg(long, value_name = "PATH")]
        from: PathBuf,
        /// Read the passphrase from the first line of this file instead of the terminal.
        #[arg(long, value_name = "FILE")]
        passphrase_file: Option<PathBuf>,
    },
    /// The document reader (docs/architecture.md §12.2), which Skald starts itself for each
    /// document, under limits, with the file on stdin; not for people.
    #[command(hide = true)]
    ExtractWorker { kind: String },
    /// The built-in model's worker process, which Skald starts itself and speaks to over
    /// stdin and stdout; not for people.
    #[cfg(feature = "local-model")]
    #[command(hide = true)]
    ModelWorker {
        /// Read this model file's header, print what was found and exit.
        #[arg(long, value_name = "PATH")]
        inspect: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if !err.use_stderr() => {
            // --help and --version: clap prints them to stdout and they are not errors.
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err) => {
            // One line, not clap's usage block: the contract promises a one-line error.
            let rendered = err.render().to_string();
            let first = rendered.lines().next().unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("skald: {first} (see skald --help)");
            return ExitCode::from(2);
        }
    };
    let port = match cli.command {
        Some(Command::Serve { port }) => port,
        Some(Command::Verify) => return verify(cli.data_dir),
        Some(Command::Backup { to, passphrase_file, with_models }) => {
            return backup(cli.data_dir, &to, passphrase_file.as_deref(), with_models);
        }
        Some(Command::Restore { from, passphrase_file }) => {
            return restore(cli.data_dir, &from, passphrase_file.as_deref());
        }
        Some(Command::ExtractWorker { kind }) => return skald::extract::worker::run(&kind),
        #[cfg(feature = "local-model")]
        Some(Command::ModelWorker { inspect }) => return skald::providers::local::worker::run(inspect.as_deref()),
        #[cfg(feature = "desktop")]
        None => return shell::run(cli.data_dir),
        #[cfg(not(feature = "desktop"))]
        None => 0,
    };
    match serve(cli.data_dir, port) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("skald: {err}");
            ExitCode::FAILURE
        }
    }
}

/// What every way of running the core does first: bind the port (before touching the
/// data directory, so a port in use writes nothing), lock the data directory, start the
/// log, harden the process.
struct Prepared {
    listener: std::net::TcpListener,
    data_dir: DataDir,
    _log: skald::logging::LogGuard,
}

fn prepare(data_dir: Option<PathBuf>, port: u16) -> Result<Prepared, StartError> {
    let listener = app::bind(port)?;
    let root = config::resolve_data_dir(data_dir).ok_or(StartError::NoDataDir)?;
    let data_dir = DataDir::open_locked(&root)?;
    let _log = skald::logging::init(&data_dir.logs_dir())
        .map_err(|source| StartError::DataDir { path: data_dir.logs_dir(), source })?;
    app::harden_process();
    let (files, dirs) = data_dir.tightened();
    if files + dirs > 0 {
        tracing::warn!(files, dirs, "files and folders in the data directory were open to others: now 0600 and 0700");
    }
    Ok(Prepared { listener, data_dir, _log })
}

fn serve(data_dir: Option<PathBuf>, port: u16) -> Result<(), StartError> {
    let Prepared { listener, data_dir, _log } = prepare(data_dir, port)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("skald")
        .build()
        .map_err(StartError::Serve)?;
    runtime.block_on(async {
        let app = App::start(listener, data_dir, StartOptions { write_token_file: true, web: web::file }).await?;
        // Handlers go in before the ready line: a script may signal the moment it reads it.
        let stop = termination().map_err(StartError::Serve)?;
        ready_line(&app);
        app.run(stop).await
    })
}

/// `skald verify`: the report on stdout; exit 1 when anything is off or unreadable.
#[allow(clippy::print_stdout, reason = "the report is the command's output")]
fn verify(data_dir: Option<PathBuf>) -> ExitCode {
    let Some(root) = config::resolve_data_dir(data_dir) else {
        eprintln!("skald: {}", StartError::NoDataDir);
        return ExitCode::FAILURE;
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("skald: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(skald::verify::verify(&root)) {
        Ok(report) => {
            print!("{}", report.render());
            if report.ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
        Err(err) => {
            eprintln!("skald: {err}");
            ExitCode::FAILURE
        }
    }
}

/// The passphrase (never waiting on a missing terminal) and a small runtime for the
/// backup commands; an exit code already said when either fails.
fn passphrase_and_runtime(
    file: Option<&std::path::Path>,
    confirm: bool,
) -> Result<(zeroize::Zeroizing<String>, tokio::runtime::Runtime), ExitCode> {
    let passphrase = skald::backup::command::passphrase(file, confirm).map_err(|err| {
        eprintln!("skald: {err}");
        ExitCode::from(2)
    })?;
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(|err| {
            eprintln!("skald: {err}");
            ExitCode::FAILURE
        })?;
    Ok((passphrase, runtime))
}

/// `skald backup`: progress on stderr, the archive's path on stdout.
#[allow(clippy::print_stdout, reason = "the archive's path is the command's output")]
fn backup(data_dir: Option<PathBuf>, to: &std::path::Path, file: Option<&std::path::Path>, models: bool) -> ExitCode {
    let Some(root) = config::resolve_data_dir(data_dir) else {
        eprintln!("skald: {}", StartError::NoDataDir);
        return ExitCode::FAILURE;
    };
    let (passphrase, runtime) = match passphrase_and_runtime(file, true) {
        Ok(both) => both,
        Err(code) => return code,
    };
    let said = |line: &str| eprintln!("skald backup: {line}");
    match runtime.block_on(skald::backup::command::backup(&root, to, passphrase, models, said)) {
        Ok(done) => {
            println!("{}", done.path);
            eprintln!(
                "skald backup: written: {} people, {} files, {} bytes. Keep the passphrase: without it the archive \
                 cannot be opened. Old backups open with the passwords people had when they were made.",
                done.people, done.entries, done.bytes
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("skald: backup failed: {err}");
            ExitCode::FAILURE
        }
    }
}

/// `skald restore`: into the empty folder `--data-dir` names, never a default one.
#[allow(clippy::print_stdout, reason = "the restore's report is the command's output")]
fn restore(data_dir: Option<PathBuf>, from: &std::path::Path, file: Option<&std::path::Path>) -> ExitCode {
    let Some(dir) = data_dir else {
        eprintln!("skald: say where to restore with --data-dir DIR (an empty folder)");
        return ExitCode::from(2);
    };
    let (passphrase, runtime) = match passphrase_and_runtime(file, false) {
        Ok(both) => both,
        Err(code) => return code,
    };
    let said = |line: &str| eprintln!("skald restore: {line}");
    match runtime.block_on(skald::backup::command::restore(from, &dir, passphrase, said)) {
        Ok(restored) => {
            println!("restored the backup of {} into {}", restored.created_at, dir.display());
            let names: Vec<&str> = restored.people.iter().map(|p| p.name.as_str()).collect();
            println!("people: {}", if names.is_empty() { "(none)".to_owned() } else { names.join(", ") });
            println!("each person logs in with the password they had when the backup was made");
            if restored.enter_again.is_empty() {
                println!("no secrets need entering again");
            } else {
                println!("enter these again as an administrator (they were sealed with the old instance key):");
                for what in &restored.enter_again {
                    println!("  - {what}");
                }
            }
            print!("{}", restored.verify_report);
            if restored.verified { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
        Err(err) => {
            eprintln!("skald: restore failed: {err}");
            ExitCode::FAILURE
        }
    }
}

/// The contract's one line on stdout; scripts wait for it.
#[allow(clippy::print_stdout, reason = "the ready line is the contract's stdout")]
fn ready_line(app: &App) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "skald listening on {} token={}", app.url(), app.launch_token().expose());
    let _ = out.flush();
}

/// Installs the SIGTERM and SIGINT handlers now; the future resolves on the first of them.
fn termination() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM received"),
            _ = int.recv() => tracing::info!("SIGINT received"),
        }
    })
}
