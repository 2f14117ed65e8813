//! The `scripted-model` binary, for browser tests that need the server as a process:
//! start it, print the ready line, serve until SIGTERM or SIGINT.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use scripted_model::{Options, ScriptedModel};
use tokio::signal::unix::{SignalKind, signal};

#[derive(Parser)]
#[command(name = "scripted-model", about = "A scripted stand-in for a model service (OpenAI, Anthropic, Ollama)")]
struct Cli {
    /// The address to listen on. Anything but loopback is for tests inside a network
    /// namespace they made.
    #[arg(long, default_value = "127.0.0.1")]
    host: std::net::IpAddr,
    /// The port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Require `Authorization: Bearer <KEY>` on OpenAI's /v1/* and `x-api-key: <KEY>` on
    /// Anthropic's (Ollama's /api/* never ask).
    #[arg(long, value_name = "KEY")]
    api_key: Option<String>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match serve(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("scripted-model: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(cli: Cli) -> std::io::Result<()> {
    let model = ScriptedModel::start_with(Options {
        host: cli.host,
        port: cli.port,
        api_key: cli.api_key,
        ..Options::default()
    })
    .await?;
    // Handlers go in before the ready line: a script may signal the moment it reads it.
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    ready_line(&model)?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    model.shut_down();
    Ok(())
}

#[allow(clippy::print_stdout, reason = "the ready line is the binary's one line of output")]
fn ready_line(model: &ScriptedModel) -> std::io::Result<()> {
    println!("scripted-model listening on {}", model.url());
    std::io::stdout().flush()
}
