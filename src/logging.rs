//! Diagnostics: tracing to stderr and to a daily-rotated file under `<data dir>/logs`.
//! What is logged is operational only — never a password, token, key, SQL with bound
//! values, or anything a person said. `SKALD_LOG` takes an `EnvFilter` directive.

use std::io::IsTerminal;
use std::path::Path;

use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_appender::rolling::{Builder, Rotation};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, fmt};

/// Log files kept before the oldest is deleted.
const KEPT_FILES: usize = 7;
/// Lines waiting for the file writer's thread; past them a line is dropped rather than
/// the caller blocked, as before. The library's default, 128,000, preallocates and touches
/// 4 MB — a fifth of an idle server's memory — for a burst no server here produces.
const BUFFERED_LINES: usize = 4096;
/// llama.cpp narrates every model load at info; its warnings are what matter.
const DEFAULT_FILTER: &str = "info,sqlx=warn,hyper=warn,tower=warn,llama_cpp_2=warn";

/// Flushes the file writer when dropped; keep it alive for the life of the process.
pub struct LogGuard(#[allow(dead_code, reason = "held for its Drop, which flushes the file")] WorkerGuard);

/// Installs the process-wide subscriber. Call once, after the data directory is locked,
/// so a refused second process writes nothing into the first one's directory.
pub fn init(logs_dir: &Path) -> std::io::Result<LogGuard> {
    let appender = Builder::new()
        .rotation(Rotation::DAILY)
        .filename_prefix("skald")
        .filename_suffix("log")
        .max_log_files(KEPT_FILES)
        .build(logs_dir)
        .map_err(std::io::Error::other)?;
    let (file_writer, guard) = NonBlockingBuilder::default().buffered_lines_limit(BUFFERED_LINES).finish(appender);
    let filter = || EnvFilter::try_from_env("SKALD_LOG").unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    tracing_subscriber::registry()
        .with(
            fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal())
                .with_target(false)
                .with_filter(filter()),
        )
        .with(fmt::layer().with_writer(file_writer).with_ansi(false).with_filter(filter()))
        .try_init()
        .map_err(std::io::Error::other)?;
    Ok(LogGuard(guard))
}
