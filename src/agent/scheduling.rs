//! What the scheduling tools reach (docs/architecture.md §11). The jobs service sits above
//! the agent — it runs tasks as turns — so the agent names only this port, and `app` plugs
//! the service in once both exist. Until then (and in a runtime without it) the tools
//! answer that scheduling is not available.

use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::jobs::{JobKind, MissedPolicy};
use crate::users::sessions::Session;

/// The tool that proposes a job; a confirmed write (`gate::CONFIRMED_WRITES`).
pub const SCHEDULE: &str = "schedule";

/// The scheduling tools, offered only to a role that may schedule.
pub const SCHEDULING_TOOLS: [&str; 3] = [SCHEDULE, "list_schedules", "cancel_schedule"];

/// What a tool's call comes to: text the model reads, or why not, in words it can act on.
pub type Answer = Result<String, String>;

/// The jobs service, as the scheduling tools see it.
pub trait Scheduling: Send + Sync {
    /// What a `schedule` call's arguments would make, as its card shows it — checked as
    /// the job itself would be — or why it cannot be made.
    fn preview<'a>(&'a self, session: &'a Session, arguments: &'a Value)
    -> BoxFuture<'a, Result<ScheduleCard, String>>;
    /// Makes the job the person approved.
    fn schedule<'a>(&'a self, session: &'a Session, arguments: &'a Value) -> BoxFuture<'a, Answer>;
    /// The person's jobs, one line each.
    fn list<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Answer>;
    /// Deletes one of the person's jobs.
    fn cancel<'a>(&'a self, session: &'a Session, id: &'a str) -> BoxFuture<'a, Answer>;
}

/// Where the jobs service is plugged in; cheap to clone, set once.
#[derive(Clone, Default)]
pub struct SchedulingPort(Arc<OnceLock<Arc<dyn Scheduling>>>);

impl SchedulingPort {
    /// Plugs the service in; a second call changes nothing.
    pub fn plug(&self, service: Arc<dyn Scheduling>) {
        let _ = self.0.set(service);
    }

    /// The service, or why the tools cannot reach it.
    pub fn get(&self) -> Result<&Arc<dyn Scheduling>, String> {
        self.0.get().ok_or_else(|| "scheduling is not available here".to_owned())
    }
}

/// What a `schedule` card shows beside the call's arguments: the job as it would be made,
/// with its next occurrences in the person's local time (§11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ScheduleCard {
    pub kind: JobKind,
    /// What the reminder says, or what the task asks.
    pub text: String,
    /// The IANA zone its times are read in.
    pub zone: String,
    /// The next occurrences (at most 3), RFC 3339 with the zone's offset.
    pub upcoming: Vec<String>,
    /// The repeating pattern; none for a one-off.
    pub repeat: Option<String>,
    pub missed: MissedPolicy,
    pub readable_while_away: bool,
    /// For a task: the agent that runs it, and the model pinned for it if any.
    pub agent: Option<String>,
    pub model: Option<String>,
    /// Whom a reminder is for, when it is for another member.
    #[serde(rename = "for")]
    pub for_name: Option<String>,
    /// Shared with everyone, its words readable by all.
    pub shared: bool,
}
