//! The agent (§8): turns that stream a model's answer, run the tools it calls and record
//! everything in the person's encrypted file. [`Runtime`] ([`runtime`]) holds what turns
//! share and each conversation's claim; [`lifecycle`] starts, resumes and stops turns; the
//! turn itself is in [`turn`] — its choices in `turn::decide`, pure, and one driver that
//! carries them out. What a turn may use comes from the role (shared database), the
//! agent's definition ([`definition`]), the model [`choice`] and the [`tools`] registry;
//! [`context`] is the one place history becomes what a model reads.
//!
//! A turn runs as work of the session that started it: locking cancels it, and the
//! person's space stays open until the turn has recorded how it ended.

pub mod choice;
pub mod compaction;
pub mod consent;
pub mod context;
pub mod definition;
pub mod documents;
pub mod events;
pub mod forms;
pub mod gate;
pub mod inbox;
pub mod lifecycle;
pub use lifecycle::Said;
pub mod meaning;
pub mod memory;
pub mod pictures;
pub mod prompts;
pub mod runtime;
pub mod scheduling;
pub mod speech;
pub mod standing;
pub mod tools;
mod turn;
pub mod usage;
pub mod versions;

use crate::secrets::SecretsError;
use crate::store::StoreError;
use definition::DefinitionError;

use choice::pick_model;
use choice::usable;
pub use context::{RENDER_VERSION, RebuildError, cache_key_of, calls_to_json, prompt_for, rebuild};
use lifecycle::STOPPED_UNDECIDED;
use runtime::ProviderCache;
pub use runtime::{Limits, Runtime, Started, key_purpose};
pub use turn::{MAX_DEPTH, MAX_FRAMES, MAX_PARALLEL_FRAMES};

/// Why a turn could not start.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("there is no such conversation")]
    NoSession,
    #[error("a reply is still being written in this conversation; wait for it or stop it first")]
    Busy,
    #[error("the last reply in this conversation did not fail, so there is nothing to try again")]
    NothingToRetry,
    #[error("there is no such turn in this conversation")]
    NoTurn,
    #[error("that turn is not in this conversation as it reads now; open the version that holds it first")]
    NotOnPath,
    #[error("a reply in this conversation waits for your answer on a card; answer it or stop it first")]
    Waiting,
    #[error("no model is available to you yet; an administrator can connect one in Administration → Models")]
    NoModel,
    #[error("your role does not allow the model {0}; pick another model for this conversation")]
    ModelNotAllowed(String),
    #[error("there is no model {0}")]
    UnknownModel(String),
    #[error(
        "your role keeps your words on this computer, and {model} is a remote service ({provider}); nothing was sent. Pick a local model"
    )]
    PrivacyTier { model: String, provider: String },
    #[error(
        "your role keeps your words on this computer, and no local model is connected; nothing was sent. An administrator can connect one in Administration → Models"
    )]
    NoLocalModel,
    #[error(transparent)]
    Agent(#[from] DefinitionError),
    #[error("the provider's key cannot be opened: {0}")]
    Secrets(#[from] SecretsError),
    #[error("this account no longer exists or is not active")]
    NoAccount,
    #[error("the session was locked")]
    Locked,
    #[error(
        "you have used {used} of the {cap} model tokens your role allows per day; the limit resets tomorrow, or an administrator can raise it"
    )]
    UsageCap { cap: i64, used: i64 },
    #[error(
        "something changed about where your words go or what may run without asking you, and it waits for your decision; nothing was sent. See the notice above the message box"
    )]
    Held(usize),
    #[error(
        "you declined the change to the agent {0}; accept it in your notices, or start a conversation with another agent"
    )]
    AgentDeclined(String),
    #[error(
        "you went on without the change that brought {0} to you; accept it in your notices to use it, or pick another model"
    )]
    Declined(String),
    #[error("there is no such notice waiting for your decision")]
    NoNotice,
    #[error("this change is no longer what the notice describes (it changed again); look at your notices again")]
    StaleNotice,
    #[error(transparent)]
    Store(#[from] StoreError),
}
