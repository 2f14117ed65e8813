//! The one `Clone` bundle of handles every handler receives.

use tokio_util::sync::CancellationToken;

use super::assets::WebFiles;
use super::boundary::Boundary;
use crate::agent::Runtime;
use crate::crypto::LaunchToken;
use crate::notify::Notifier;
use crate::secrets::InstanceSecrets;
use crate::store::SystemStore;
use crate::users::Accounts;

#[derive(Clone)]
pub struct AppState {
    pub launch_token: LaunchToken,
    pub system: SystemStore,
    pub accounts: Accounts,
    pub secrets: InstanceSecrets,
    pub boundary: Boundary,
    pub notifier: Notifier,
    pub agent: Runtime,
    /// Scheduled jobs and their scheduler (§11).
    pub jobs: crate::jobs::Jobs,
    /// Documents and the reader of their text (§12).
    pub documents: crate::agent::documents::Documents,
    /// Backups of the data directory (§5.2).
    pub backups: crate::backup::Backups,
    /// Speech written down on this machine (§15).
    pub voice: crate::voice::Voice,
    /// Cancelled when the process begins to shut down; long-lived tasks (WebSockets)
    /// watch it so they close cleanly instead of being cut off.
    pub shutdown: CancellationToken,
    /// The web UI's files, which the binary embeds.
    pub web: WebFiles,
}
