//! Skald's core: everything except the desktop window.
//!
//! A map of the crate, outermost first:
//! - [`app`] is the composition root: it binds the loopback port, opens the data
//!   directory and the shared database, and runs the HTTP server until shutdown.
//! - [`config`] resolves where the data lives and which port to take.
//! - [`http`] is the only door: the loopback boundary (§7), the declarative route
//!   table, the live-event WebSocket and the embedded web assets.
//! - [`store`] owns every file on disk: the locked data directory and the databases
//!   with their embedded migrations. SQL lives there and nowhere else.
//! - [`users`] is people and their keys: setup, enrolment, login, recovery, sessions.
//! - [`agent`] runs turns (§8): context, streaming, tools, stop; [`providers`] speaks
//!   to model services and picks a model.
//! - [`reach`] decides which addresses Skald may connect to by itself: public ones.
//! - [`crypto`] is the only module that touches key material.
//! - [`secrets`] keeps the instance key in the OS keyring (or a 0600 file).
//! - [`verify`] checks, from the files alone, who can open each private space.
//! - [`notify`] carries desktop notifications from features to the shell.
//! - [`supervise`] starts and watches helper processes (the built-in model's worker).
//! - [`logging`] writes diagnostics to stderr and a rotating file; never a secret.
//!
//! The core knows nothing of windows or Tauri; the shell in `src-tauri/` drives it.

pub mod agent;
pub mod app;
pub mod backup;
#[cfg(feature = "benchmarks")]
pub mod benching;
pub mod config;
pub mod crypto;
pub mod error;
pub mod export;
pub mod extract;
#[cfg(fuzzing)]
pub mod fuzzing;
pub mod half;
pub mod http;
pub mod ids;
pub mod jobs;
pub mod logging;
pub mod mcp;
pub mod notify;
pub mod patterns;
pub mod providers;
pub mod reach;
pub mod rules;
pub mod secrets;
pub mod store;
pub mod supervise;
pub mod untrusted;
pub mod users;
pub mod verify;
pub mod voice;

/// The version the binary reports on `--version` and `GET /api/health`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
