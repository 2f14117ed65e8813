//! Scheduled jobs (§11): reminders that come on time, once, and are never silently missed.
//! [`schedule`] decides when (pure, the clock an argument); [`Jobs`] keeps people's jobs
//! and runs the one scheduler of this data directory (the directory's lock makes it the
//! only one), which claims each occurrence before it runs it (`store::jobs::claim`), so a
//! run happens once however ticks race.
//!
//! What a job says lives in its owner's encrypted file; only a job its owner chose to keep
//! readable while they are away has its words in the shared database (§3). A reminder whose
//! owner is locked when it comes says only whose it is.
//!
//! A task is a prompt run as an unattended turn of an agent, in a conversation of its own,
//! through `agent::Runtime` like any turn of its owner's: their role, privacy tier, usage
//! cap and approval gate all hold, and a card parks it until they decide — nothing is ever
//! approved for them. A turn needs its owner's space open: a task due while they are
//! locked waits (`waiting_for_unlock`) and runs when they log in.
//!
//! At start, what came due while Skald was closed is reported, one notice per job, and run
//! once only where the job asks for it; never a flood.
//!
//! Never here: turns, cards or rules (the agent's), SQL (the store's).

mod away;
pub mod schedule;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use jiff::{SignedDuration, Timestamp, Unit};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use self::schedule::{Schedule, ScheduleError};
use crate::agent::Runtime;
use crate::agent::events::LiveEvent;
use crate::agent::scheduling::{Answer, ScheduleCard, Scheduling};
use crate::ids::{ConversationId, JobId, TurnId, UserId};
use crate::notify::{FromJob, Notification, Notifier};
use crate::store::chat::TurnState;
use crate::store::jobs::{
    self as stored, Claim, JobKind, JobRow, JobSettings, MissedPolicy, PrivatePart, RunRow, RunStatus,
};
use crate::store::{StoreError, SystemStore, notices, roles};
use crate::users::sessions::{Session, Sessions};

/// The longest a job's words may be.
const MAX_TEXT_CHARS: usize = 4000;

/// The longest the scheduler sleeps without looking again (a clock that jumped, a
/// suspended machine).
const LONGEST_SLEEP: Duration = Duration::from_secs(30);

/// How late a reminder may come before it says how late.
const ON_TIME: SignedDuration = SignedDuration::from_secs(60);

/// The longest a task's turn is watched for its end.
const LONGEST_TASK: Duration = Duration::from_secs(3600);

/// How many occurrences a job's preview shows.
const PREVIEWED: usize = 3;

/// The notice a person gets for what a job missed while Skald was closed.
pub const MISSED_NOTICE: &str = "job_missed";

/// Why a job could not be made, changed or found.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error("a reminder says something: 1 to {MAX_TEXT_CHARS} characters")]
    Text,
    #[error("there is no such job")]
    NotFound,
    #[error("your role does not let you schedule jobs; an administrator can change that")]
    MayNotSchedule,
    #[error(
        "only a reminder can be shared with everyone or set for another member; a task runs as its owner's own turn"
    )]
    ReminderOnly,
    #[error("a reminder is either for everyone or for one member, not both")]
    SharedAndFor,
    #[error(
        "a reminder for another member is sealed to them until they read it, so it cannot be kept readable while they are away; they can choose that once it is theirs"
    )]
    ForReadable,
    #[error("there is no active member called {0:?}")]
    NoMember(String),
    #[error("only its owner or an administrator can change a reminder shared with everyone")]
    SharedNotYours,
    #[error(transparent)]
    Turn(#[from] crate::agent::TurnError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A new job, as a person asks for it (`POST /api/jobs`).
#[derive(Debug, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct NewJob {
    pub kind: JobKind,
    pub text: String,
    /// A one-off: an instant with its offset, or a date and time read in `zone`.
    #[ts(optional)]
    pub at: Option<String>,
    /// A repeating job: a 5-field cron pattern read in `zone`.
    #[ts(optional)]
    pub cron: Option<String>,
    /// An IANA time zone; this computer's when absent.
    #[ts(optional)]
    pub zone: Option<String>,
    #[ts(optional)]
    pub missed: Option<MissedPolicy>,
    /// Keep the words readable while the owner is away: the notification shows them even
    /// when they are locked, and the administrator can read them too (§3).
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub readable_while_away: bool,
    /// A task's agent; `main` when absent.
    #[ts(optional)]
    pub agent: Option<String>,
    /// A task's model (`provider/model`), pinned for its conversation; the agent's or
    /// role's choice when absent.
    #[ts(optional)]
    pub model: Option<String>,
    /// Another member this reminder is for, by id or name: once made it is theirs (to see,
    /// snooze or delete), its words sealed to them until they log in.
    #[serde(default, rename = "for")]
    #[ts(optional, rename = "for")]
    pub for_member: Option<String>,
    /// A reminder for everyone: all see it and are reminded, its words readable by all.
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub shared: bool,
}

/// A change to a job (`PATCH /api/jobs/{id}`): what is given changes. A new `at` or `cron`
/// replaces the schedule (the other is dropped).
#[derive(Debug, Default, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct JobChange {
    #[ts(optional)]
    pub text: Option<String>,
    #[ts(optional)]
    pub at: Option<String>,
    #[ts(optional)]
    pub cron: Option<String>,
    #[ts(optional)]
    pub zone: Option<String>,
    #[ts(optional)]
    pub missed: Option<MissedPolicy>,
    #[ts(optional)]
    pub readable_while_away: Option<bool>,
    #[ts(optional)]
    pub paused: Option<bool>,
}

/// A job as its owner sees it.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "Job")]
pub struct JobView {
    pub id: JobId,
    pub kind: JobKind,
    /// What it says; none where the owner's file no longer has it.
    pub text: Option<String>,
    pub at: Option<String>,
    pub cron: Option<String>,
    pub zone: String,
    pub missed: MissedPolicy,
    pub readable_while_away: bool,
    pub paused: bool,
    /// The next occurrence, a UTC instant; none once a one-off is over.
    pub next_run: Option<String>,
    /// The next occurrences in the job's zone (RFC 3339 with the zone's offset), the first
    /// being `next_run`.
    pub upcoming: Vec<String>,
    /// A task's agent and pinned model, and the conversation its answers are kept in once
    /// it ran.
    pub agent: Option<String>,
    pub model: Option<String>,
    pub conversation_id: Option<ConversationId>,
    /// A reminder for everyone, its words readable by all.
    pub shared: bool,
    /// The member who set it for its owner, by name, when it came from another.
    pub set_by: Option<String>,
    /// The caller may change, snooze and delete it: theirs, or — for an administrator —
    /// shared with everyone.
    pub may_change: bool,
    pub created_at: String,
}

/// What a schedule would come to (`POST /api/jobs/preview`).
#[derive(Debug, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct PreviewRequest {
    #[ts(optional)]
    pub at: Option<String>,
    #[ts(optional)]
    pub cron: Option<String>,
    #[ts(optional)]
    pub zone: Option<String>,
}

/// The next occurrences of a schedule, in its zone.
#[derive(Debug, Serialize, ts_rs::TS)]
pub struct Preview {
    pub zone: String,
    pub upcoming: Vec<String>,
}

/// How long a reminder is put off (`POST /api/jobs/{id}/snooze`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ts_rs::TS)]
pub enum Snooze {
    #[serde(rename = "10m")]
    TenMinutes,
    #[serde(rename = "1h")]
    Hour,
    /// The same time tomorrow, in the job's zone.
    #[serde(rename = "tomorrow")]
    Tomorrow,
}

impl Snooze {
    /// Every length, with the identifier a notification's action carries.
    pub const ALL: [(Snooze, &'static str); 3] =
        [(Snooze::TenMinutes, "10m"), (Snooze::Hour, "1h"), (Snooze::Tomorrow, "tomorrow")];

    /// When a job snoozed at `now` comes again; tomorrow is the same time of day in `zone`.
    pub fn after(self, now: Timestamp, zone: &jiff::tz::TimeZone) -> Timestamp {
        match self {
            Snooze::TenMinutes => now + SignedDuration::from_mins(10),
            Snooze::Hour => now + SignedDuration::from_hours(1),
            Snooze::Tomorrow => now
                .to_zoned(zone.clone())
                .tomorrow()
                .map(|z| z.timestamp())
                .unwrap_or(now + SignedDuration::from_hours(24)),
        }
    }

    /// The length an action's identifier names (`10m`, `1h`, `tomorrow`).
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(_, id)| *id == name).map(|(length, _)| *length)
    }
}

/// A snooze request.
#[derive(Debug, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct SnoozeRequest {
    #[serde(rename = "for")]
    #[ts(rename = "for")]
    pub length: Snooze,
}

/// A job checked and ready to be made, with what its card shows.
struct Prepared {
    settings: JobSettings,
    part: PrivatePart,
    /// Another member it is for.
    recipient: Option<crate::store::users::UserRow>,
    card: ScheduleCard,
}

/// People's jobs and the scheduler that runs them; cheap to clone.
#[derive(Clone)]
pub struct Jobs {
    inner: Arc<Inner>,
}

struct Inner {
    system: SystemStore,
    sessions: Sessions,
    /// Turns for tasks, and the events of people's windows.
    runtime: Runtime,
    notifier: Notifier,
    /// Told when a job was made, changed or deleted: the scheduler looks again.
    changed: tokio::sync::Notify,
    /// Where a readable task's run away keeps its space while it runs (see `away`).
    away_dir: std::path::PathBuf,
}

impl Jobs {
    pub fn new(
        system: SystemStore,
        sessions: Sessions,
        runtime: Runtime,
        notifier: Notifier,
        away_dir: std::path::PathBuf,
    ) -> Self {
        let changed = tokio::sync::Notify::new();
        Self { inner: Arc::new(Inner { system, sessions, runtime, notifier, changed, away_dir }) }
    }

    /// Makes a job: the session's person's own (its words in their file unless they keep
    /// them readable while away), one shared with everyone, or a reminder for another
    /// member (its words sealed to them until they log in).
    pub async fn create(&self, session: &Session, job: NewJob) -> Result<JobView, JobError> {
        let Prepared { settings, part, recipient, .. } = self.prepare(session, job).await?;
        let id = JobId::generate();
        let owner = recipient.as_ref().map_or(&session.user_id, |r| &r.id);
        let sealed = match &recipient {
            Some(recipient) => {
                let public: [u8; 32] = recipient
                    .public_key
                    .as_deref()
                    .and_then(|key| key.try_into().ok())
                    .ok_or_else(|| JobError::NoMember(recipient.name.clone()))?;
                Some(crate::crypto::seal_to(&public, part.text.as_bytes(), &sealing_context(&id, &recipient.id)))
            }
            // The words first: a job whose words could not be kept is not made. A task keeps
            // its part in its owner's file even when readable: its conversation is noted there.
            None if !settings.readable_while_away || settings.kind == JobKind::Task => {
                stored::set_private(&session.space, &id, &part).await?;
                None
            }
            None => None,
        };
        let set_by = sealed.as_deref().map(|sealed| (&session.user_id, sealed));
        stored::create(&self.inner.system, &id, stored::Audience { owner, set_by }, &settings).await?;
        if settings.kind == JobKind::Task && settings.readable_while_away {
            self.keep_away_terms(session, &id, &part).await?;
        }
        self.inner.changed.notify_one();
        if let Some(recipient) = &recipient {
            tracing::info!(job = %id, to = %recipient.id, "a reminder was set for another member");
            if let Some(theirs) = self.inner.sessions.of_user(&recipient.id) {
                self.receive(&theirs).await;
            }
            self.inner.runtime.events().to_person(&recipient.id, &LiveEvent::Notice);
        }
        let row = stored::get(&self.inner.system, &id).await?.ok_or(JobError::NotFound)?;
        let setter = if recipient.is_some() { name_of(&self.inner.system, &session.user_id).await } else { None };
        Ok(view(row, Some(part), Viewer { id: &session.user_id, admin: false }, setter))
    }

    /// Checks a new job as it would be made, and what its card shows.
    async fn prepare(&self, session: &Session, job: NewJob) -> Result<Prepared, JobError> {
        self.may_schedule(&session.user_id).await?;
        let text = checked_text(&job.text)?;
        let recipient = self.recipient(session, &job).await?;
        let (agent, model) = self.task_runner(session, &job).await?;
        let zone = job.zone.clone().unwrap_or_else(local_zone);
        let schedule = Schedule::parse(job.at.as_deref(), job.cron.as_deref(), &zone)?;
        let shown = job.at.as_deref().or(job.cron.as_deref()).unwrap_or_default();
        let next = schedule.first(Timestamp::now(), shown)?;
        // A shared reminder is readable by everyone, by what it is.
        let readable = job.readable_while_away || job.shared;
        let cron = job.cron.map(|c| c.trim().to_owned());
        let upcoming = std::iter::once(next.to_zoned(schedule.zone.clone()))
            .chain(schedule.upcoming(next, PREVIEWED - 1))
            .map(|z| local(&z))
            .collect();
        let missed = job.missed.unwrap_or_default();
        let card = ScheduleCard {
            kind: job.kind,
            text: text.clone(),
            zone: zone.clone(),
            upcoming,
            repeat: cron.clone(),
            missed,
            readable_while_away: readable,
            agent: agent.clone(),
            model: model.clone(),
            for_name: recipient.as_ref().map(|r| r.name.clone()),
            shared: job.shared,
        };
        let settings = JobSettings {
            kind: job.kind,
            at: once_at(&schedule),
            cron,
            zone,
            missed,
            readable_while_away: readable,
            text: readable.then(|| text.clone()),
            paused: false,
            next_run: Some(utc(next)),
            shared: job.shared,
        };
        let part = PrivatePart { text, agent, model, conversation_id: None };
        Ok(Prepared { settings, part, recipient, card })
    }

    /// The other member a reminder is for, checked: by id or name, active, and a reminder
    /// neither shared nor kept readable. The person themselves is no other member.
    async fn recipient(
        &self,
        session: &Session,
        job: &NewJob,
    ) -> Result<Option<crate::store::users::UserRow>, JobError> {
        if job.shared && job.kind != JobKind::Reminder {
            return Err(JobError::ReminderOnly);
        }
        let Some(named) = job.for_member.as_deref().map(str::trim).filter(|n| !n.is_empty()) else {
            return Ok(None);
        };
        let system = &self.inner.system;
        let found = match crate::ids::UserId::parse(named) {
            Some(id) => crate::store::users::find(system, &id).await?,
            None => None,
        };
        let found = match found {
            Some(found) => Some(found),
            None => crate::store::users::find_by_name(system, named).await?,
        };
        let member = found.filter(|m| m.status == "active").ok_or_else(|| JobError::NoMember(named.to_owned()))?;
        if member.id == session.user_id {
            return Ok(None);
        }
        if job.kind != JobKind::Reminder {
            return Err(JobError::ReminderOnly);
        }
        if job.shared {
            return Err(JobError::SharedAndFor);
        }
        if job.readable_while_away {
            return Err(JobError::ForReadable);
        }
        Ok(Some(member))
    }

    /// Moves the reminders others set for this person into their file: each one's words
    /// opened with the key only their file holds, then dropped from the shared database.
    /// Runs when they log in, and at once when one is set while they are.
    pub async fn receive(&self, session: &Session) {
        let waiting = match stored::sealed_for(&self.inner.system, &session.user_id).await {
            Ok(waiting) if waiting.is_empty() => return,
            Ok(waiting) => waiting,
            Err(err) => {
                tracing::error!(user = %session.user_id, %err, "could not read the reminders set for a member");
                return;
            }
        };
        let Some(secret) = space_secret(session).await else { return };
        for job in waiting {
            let Some(sealed) = &job.sealed_text else { continue };
            let context = sealing_context(&job.id, &session.user_id);
            let text = match crate::crypto::open_sealed(&secret, sealed, &context) {
                Ok(plain) => String::from_utf8_lossy(&plain).into_owned(),
                Err(err) => {
                    tracing::warn!(job = %job.id, %err, "a reminder set for a member does not open; it stays sealed");
                    continue;
                }
            };
            let part = PrivatePart { text, ..PrivatePart::default() };
            if let Err(err) = stored::set_private(&session.space, &job.id, &part).await {
                tracing::error!(job = %job.id, %err, "could not keep a reminder set for a member");
                continue;
            }
            if let Err(err) = stored::clear_sealed(&self.inner.system, &job.id).await {
                tracing::error!(job = %job.id, %err, "could not drop a reminder's sealed words");
            }
        }
    }

    /// A task's agent and model, checked as a conversation's would be; none for a reminder.
    async fn task_runner(&self, session: &Session, job: &NewJob) -> Result<(Option<String>, Option<String>), JobError> {
        if job.kind != JobKind::Task {
            return Ok((None, None));
        }
        let agent = job.agent.clone().unwrap_or_else(|| "main".to_owned());
        self.inner.runtime.agents().load(&agent).map_err(crate::agent::TurnError::Agent)?;
        if let Some(model) = &job.model {
            self.inner.runtime.check_pin_of(session, model).await?;
        }
        Ok((Some(agent), job.model.clone()))
    }

    /// The session's person's jobs, the next due first.
    pub async fn list(&self, session: &Session) -> Result<Vec<JobView>, JobError> {
        let rows = stored::of_owner(&self.inner.system, &session.user_id).await?;
        let mut parts = stored::all_private(&session.space).await?;
        let names: std::collections::HashMap<UserId, String> =
            crate::store::users::list(&self.inner.system).await?.into_iter().map(|u| (u.id, u.name)).collect();
        let viewer = Viewer { id: &session.user_id, admin: self.is_admin(&session.user_id).await? };
        Ok(rows
            .into_iter()
            .map(|row| {
                let readable = row.settings.text.clone().map(|text| PrivatePart { text, ..PrivatePart::default() });
                let part = parts.remove(&row.id).or(readable);
                let set_by = row.set_by.as_ref().and_then(|by| names.get(by).cloned());
                view(row, part, viewer, set_by)
            })
            .collect())
    }

    /// One of the person's jobs' runs, the latest first.
    pub async fn runs(&self, session: &Session, id: &JobId) -> Result<Vec<RunRow>, JobError> {
        self.own(session, id).await?;
        Ok(stored::runs(&self.inner.system, id, 200).await?)
    }

    /// Changes one of the person's jobs.
    pub async fn update(&self, session: &Session, id: &JobId, change: JobChange) -> Result<JobView, JobError> {
        let row = self.own(session, id).await?;
        let kept = stored::private(&session.space, id).await?;
        let text = match (change.text.as_deref(), &row.settings.text, &kept) {
            (Some(text), _, _) => checked_text(text)?,
            (None, Some(text), _) => text.clone(),
            (None, None, Some(kept)) => kept.text.clone(),
            (None, None, None) => return Err(JobError::Text),
        };
        let zone = change.zone.clone().unwrap_or_else(|| row.settings.zone.clone());
        let (at, cron) = match (&change.at, &change.cron) {
            (None, None) => (row.settings.at.clone(), row.settings.cron.clone()),
            (at, cron) => (at.clone(), cron.clone()),
        };
        let schedule = Schedule::parse(at.as_deref(), cron.as_deref(), &zone)?;
        let paused = change.paused.unwrap_or(row.settings.paused);
        let rescheduled = change.at.is_some() || change.cron.is_some() || change.zone.is_some();
        // A new schedule starts from now; an unchanged one keeps its place, and a job taken
        // out of pause goes on from now, not from what it missed meanwhile.
        let next_run = if rescheduled || (row.settings.paused && !paused) {
            let shown = at.as_deref().or(cron.as_deref()).unwrap_or_default();
            Some(utc(schedule.first(Timestamp::now(), shown)?))
        } else {
            row.settings.next_run.clone()
        };
        // A shared reminder stays readable by everyone.
        let readable = row.settings.shared || change.readable_while_away.unwrap_or(row.settings.readable_while_away);
        let settings = JobSettings {
            kind: row.settings.kind,
            at: once_at(&schedule),
            cron: cron.map(|c| c.trim().to_owned()),
            zone,
            missed: change.missed.unwrap_or(row.settings.missed),
            readable_while_away: readable,
            text: readable.then(|| text.clone()),
            paused,
            next_run,
            shared: row.settings.shared,
        };
        let part = PrivatePart { text, ..kept.unwrap_or_default() };
        let task = row.settings.kind == JobKind::Task;
        if readable && !task {
            stored::delete_private(&session.space, id).await?;
        } else {
            stored::set_private(&session.space, id, &part).await?;
        }
        if task && !readable {
            stored::set_away(&self.inner.system, id, None).await?;
        }
        if !stored::update(&self.inner.system, id, &row.owner_id, &settings).await? {
            return Err(JobError::NotFound);
        }
        if task && readable {
            self.keep_away_terms(session, id, &part).await?;
        }
        self.inner.changed.notify_one();
        self.touched(&row);
        let set_by = match &row.set_by {
            Some(by) => name_of(&self.inner.system, by).await,
            None => None,
        };
        let row = stored::get(&self.inner.system, id).await?.ok_or(JobError::NotFound)?;
        let viewer = Viewer { id: &session.user_id, admin: self.is_admin(&session.user_id).await? };
        Ok(view(row, Some(part), viewer, set_by))
    }

    /// Deletes one of the person's jobs, its runs and its words.
    pub async fn delete(&self, session: &Session, id: &JobId) -> Result<(), JobError> {
        let row = self.own(session, id).await?;
        if !stored::delete(&self.inner.system, id, &row.owner_id).await? {
            return Err(JobError::NotFound);
        }
        stored::delete_private(&session.space, id).await?;
        self.inner.changed.notify_one();
        self.touched(&row);
        Ok(())
    }

    /// Puts one of the person's jobs off: it comes again after `length`; a repeating one
    /// then goes on with its pattern.
    pub async fn snooze(&self, session: &Session, id: &JobId, length: Snooze) -> Result<JobView, JobError> {
        let row = self.own(session, id).await?;
        self.put_off(&row, length).await?;
        let list = self.list(session).await?;
        list.into_iter().find(|job| &job.id == id).ok_or(JobError::NotFound)
    }

    /// Snooze from a reminder's desktop notification: whoever sits at this computer's
    /// desktop session saw it there, logged in or not. Only a job's time moves; nothing of
    /// it is read or shown.
    pub async fn snooze_from_desktop(&self, id: &JobId, length: Snooze) -> Result<(), JobError> {
        let row = stored::get(&self.inner.system, id).await?.ok_or(JobError::NotFound)?;
        if row.settings.kind != JobKind::Reminder {
            return Err(JobError::ReminderOnly);
        }
        self.put_off(&row, length).await?;
        tracing::info!(job = %id, ?length, "a reminder was snoozed from its notification");
        self.inner.runtime.events().to_person(&row.owner_id, &LiveEvent::Notice);
        Ok(())
    }

    async fn put_off(&self, row: &JobRow, length: Snooze) -> Result<(), JobError> {
        let zone = jiff::tz::TimeZone::get(&row.settings.zone).unwrap_or(jiff::tz::TimeZone::UTC);
        let next = length.after(Timestamp::now(), &zone);
        if !stored::put_off(&self.inner.system, &row.id, &utc(next)).await? {
            return Err(JobError::NotFound);
        }
        self.inner.changed.notify_one();
        self.touched(row);
        Ok(())
    }

    /// Tells the people who see a job that it changed: a shared one's, everyone.
    fn touched(&self, row: &JobRow) {
        if row.settings.shared {
            self.inner.runtime.events().to_everyone(&LiveEvent::Notice);
        }
    }

    /// The next occurrences a schedule would have, from now.
    pub fn preview(request: &PreviewRequest) -> Result<Preview, JobError> {
        let zone = request.zone.clone().unwrap_or_else(local_zone);
        let schedule = Schedule::parse(request.at.as_deref(), request.cron.as_deref(), &zone)?;
        let shown = request.at.as_deref().or(request.cron.as_deref()).unwrap_or_default();
        let first = schedule.first(Timestamp::now(), shown)?;
        let upcoming = std::iter::once(first.to_zoned(schedule.zone.clone()))
            .chain(schedule.upcoming(first, PREVIEWED - 1))
            .map(|z| local(&z))
            .collect();
        Ok(Preview { zone, upcoming })
    }

    /// Runs the scheduler until `shutdown`: first reports what came due while Skald was
    /// closed, then runs each occurrence as it comes.
    pub async fn run(self, shutdown: CancellationToken) {
        away::sweep(&self.inner.away_dir);
        if let Err(err) = self.catch_up(Timestamp::now()).await {
            tracing::error!(%err, "could not look for jobs missed while Skald was closed");
        }
        loop {
            let wait = match stored::earliest(&self.inner.system).await {
                Ok(Some(next)) => until(&next, Timestamp::now()),
                Ok(None) => LONGEST_SLEEP,
                Err(err) => {
                    tracing::error!(%err, "could not read when the next job is due");
                    LONGEST_SLEEP
                }
            };
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = self.inner.changed.notified() => continue,
                () = tokio::time::sleep(wait) => {}
            }
            if let Err(err) = self.tick(Timestamp::now()).await {
                tracing::error!(%err, "could not run the jobs that came due");
            }
        }
    }

    /// Reports, one notice per job, what came due while Skald was closed; runs it once
    /// where the job asks for that.
    async fn catch_up(&self, now: Timestamp) -> Result<(), StoreError> {
        for job in stored::due(&self.inner.system, &now_utc(now)).await? {
            self.settle(job, now, true).await?;
        }
        Ok(())
    }

    /// Runs every occurrence now due.
    async fn tick(&self, now: Timestamp) -> Result<(), StoreError> {
        for job in stored::due(&self.inner.system, &now_utc(now)).await? {
            self.settle(job, now, false).await?;
        }
        Ok(())
    }

    /// One due job: run on time (or late, saying so), or — when Skald was closed at its
    /// time, or more than one occurrence has passed (a suspended machine) — reported as
    /// missed and run once only where the job asks for it.
    async fn settle(&self, job: JobRow, now: Timestamp, at_start: bool) -> Result<(), StoreError> {
        let Some(due) = job.settings.next_run.clone() else { return Ok(()) };
        let (Ok(due_at), Ok(schedule)) = (
            due.parse::<Timestamp>(),
            Schedule::parse(job.settings.at.as_deref(), job.settings.cron.as_deref(), &job.settings.zone),
        ) else {
            // A schedule that no longer reads (a zone the system dropped): stop it, say so.
            tracing::warn!(job = %job.id, "a job's schedule can no longer be read; it is paused");
            let mut settings = job.settings.clone();
            settings.paused = true;
            stored::update(&self.inner.system, &job.id, &job.owner_id, &settings).await?;
            return Ok(());
        };
        let missed = schedule.missed(due_at, now);
        let next = missed.next.map(utc);
        if !at_start && missed.count == 1 {
            let late = now.duration_since(due_at);
            let late_ms = i64::try_from(late.as_millis()).ok();
            let status = RunStatus::Running;
            let claim = Claim { due: &due, run: &due, next: next.as_deref(), status, late_ms, missed: None };
            if stored::claim(&self.inner.system, &job.id, &claim).await? {
                self.carry_out(job, due, late).await?;
            }
            return Ok(());
        }
        let last = utc(missed.last);
        let count = i64::try_from(missed.count).unwrap_or(i64::MAX);
        let run_once = job.settings.missed == MissedPolicy::RunOnce;
        let status = if run_once { RunStatus::Running } else { RunStatus::Missed };
        let late_ms = i64::try_from(now.duration_since(missed.last).as_millis()).ok();
        // The missed occurrences are one run, the last of them, and the job moves on past them.
        let claim = Claim { due: &due, run: &last, next: next.as_deref(), status, late_ms, missed: Some(count) };
        if !stored::claim(&self.inner.system, &job.id, &claim).await? {
            return Ok(());
        }
        let body = json!({
            "job": job.id, "kind": job.settings.kind, "count": missed.count, "more": missed.more,
            "last": last, "zone": job.settings.zone, "ran": run_once,
        });
        notices::tell(&self.inner.system, &job.owner_id, MISSED_NOTICE, &body).await?;
        self.inner.runtime.events().to_person(&job.owner_id, &LiveEvent::Notice);
        if run_once {
            self.carry_out(job, last, now.duration_since(missed.last)).await?;
        }
        Ok(())
    }

    /// Runs a claimed occurrence: a reminder is shown; a task's turn starts in its owner's
    /// session (watched to its end off the scheduler's path), or waits for them to log in.
    async fn carry_out(&self, job: JobRow, scheduled_for: String, late: SignedDuration) -> Result<(), StoreError> {
        match job.settings.kind {
            JobKind::Reminder => {
                self.remind(&job, late).await;
                stored::finish(&self.inner.system, &job.id, &scheduled_for, RunStatus::Done, None).await
            }
            JobKind::Task => match self.inner.sessions.of_user(&job.owner_id) {
                Some(session) => {
                    let jobs = self.clone();
                    tokio::spawn(async move { jobs.run_task(job, scheduled_for, session).await });
                    Ok(())
                }
                // Kept readable while its owner is away: it runs in a space of its own.
                None if job.settings.readable_while_away => {
                    let jobs = self.clone();
                    tokio::spawn(async move { jobs.run_away(job, scheduled_for).await });
                    Ok(())
                }
                None => {
                    let (from, to) = (RunStatus::Running, RunStatus::WaitingForUnlock);
                    stored::restate(&self.inner.system, &job.id, &scheduled_for, from, to).await.map(drop)
                }
            },
        }
    }

    /// Takes in what others set for this person, and runs the tasks that waited for them to
    /// log in: each job's latest waiting
    /// occurrence once, its earlier ones reported missed.
    pub async fn unlocked(&self, session: Arc<Session>) {
        self.receive(&session).await;
        self.receive_results(&session).await;
        let waiting = match stored::waiting_for(&self.inner.system, &session.user_id).await {
            Ok(waiting) => waiting,
            Err(err) => {
                tracing::error!(user = %session.user_id, %err, "could not read the tasks waiting for a login");
                return;
            }
        };
        let latest: std::collections::HashMap<JobId, String> =
            waiting.iter().map(|(job, at)| (job.id.clone(), at.clone())).collect();
        for (job, scheduled_for) in waiting {
            let run = latest.get(&job.id) == Some(&scheduled_for);
            let to = if run { RunStatus::Running } else { RunStatus::Missed };
            match stored::restate(&self.inner.system, &job.id, &scheduled_for, RunStatus::WaitingForUnlock, to).await {
                Ok(true) if run => {
                    let jobs = self.clone();
                    let session = session.clone();
                    tokio::spawn(async move { jobs.run_task(job, scheduled_for, session).await });
                }
                Ok(_) => {}
                Err(err) => tracing::error!(job = %job.id, %err, "could not start a task that waited for a login"),
            }
        }
    }

    /// A task's turn, in its conversation, as its owner's: how it ended goes on the run's
    /// record and to its owner as a notification. Nothing is approved for them: a card
    /// parks the turn and the notification says it waits.
    async fn run_task(&self, job: JobRow, scheduled_for: String, session: Arc<Session>) {
        let (status, error) = match self.task_turn(&job, &scheduled_for, &session).await {
            Ok(status) => (status, None),
            Err(why) => (RunStatus::Error, Some(why)),
        };
        if let Err(err) = stored::finish(&self.inner.system, &job.id, &scheduled_for, status, error.as_deref()).await {
            tracing::error!(job = %job.id, %err, "could not record how a task's run ended");
        }
        let when = local_hour(&scheduled_for, &job.settings.zone);
        let (title, body) = match (status, error) {
            (RunStatus::Parked, _) => (
                "A task is waiting for you".to_owned(),
                format!("Your {when} task is waiting for your decision: see the inbox."),
            ),
            (RunStatus::Done, _) => {
                ("Task done".to_owned(), format!("Your {when} task is done: its answer is in its conversation."))
            }
            (_, why) => (
                "A task could not run".to_owned(),
                format!("Your {when} task could not run: {}", why.unwrap_or_else(|| "it did not finish".to_owned())),
            ),
        };
        self.inner
            .runtime
            .events()
            .to_person(&job.owner_id, &LiveEvent::Notify { title: title.clone(), body: body.clone() });
        // A click opens the task's conversation, which the turn made if it was not there.
        let conversation = match stored::private(&session.space, &job.id).await {
            Ok(part) => part.and_then(|part| part.conversation_id),
            Err(_) => None,
        };
        let from = FromJob { id: job.id.to_string(), snooze: false, conversation: conversation.map(|c| c.to_string()) };
        self.inner.notifier.post(Notification { title, body, job: Some(from) });
    }

    /// Starts the task's turn and waits for how it ends: done, parked on a card, or why not.
    async fn task_turn(&self, job: &JobRow, scheduled_for: &str, session: &Arc<Session>) -> Result<RunStatus, String> {
        let space = &session.space;
        let part = stored::private(space, &job.id)
            .await
            .map_err(|err| err.to_string())?
            .ok_or_else(|| "what the task asks is not in your space any more".to_owned())?;
        let conversation = match &part.conversation_id {
            Some(id) if crate::store::chat::conversation(space, id).await.ok().flatten().is_some() => id.clone(),
            _ => {
                let id = ConversationId::generate();
                let agent = part.agent.as_deref().unwrap_or("main");
                crate::store::chat::create_conversation(space, &id, agent, part.model.as_deref())
                    .await
                    .map_err(|err| err.to_string())?;
                stored::set_conversation(space, &job.id, &id).await.map_err(|err| err.to_string())?;
                id
            }
        };
        // Listening before the turn starts, so its end cannot pass unheard.
        let mut events = self.inner.runtime.events().subscribe(&job.owner_id);
        let started = self
            .inner
            .runtime
            .start_turn(session.clone(), &conversation, part.text.clone())
            .await
            .map_err(|err| err.to_string())?;
        tracing::info!(job = %job.id, %scheduled_for, turn = %started.turn_id, "a task's turn started");
        let ended = tokio::time::timeout(LONGEST_TASK, turn_end(&mut events, &started.turn_id)).await;
        match ended {
            Ok(Some(TurnState::Done)) => Ok(RunStatus::Done),
            Ok(Some(TurnState::Parked)) => Ok(RunStatus::Parked),
            Ok(Some(TurnState::Stopped)) => Err("it was stopped".to_owned()),
            Ok(Some(_)) => Err("its turn ended in an error; see its conversation".to_owned()),
            Ok(None) => Err("its turn ended with the session".to_owned()),
            Err(_) => Err("it ran longer than an hour".to_owned()),
        }
    }

    /// Shows a reminder: in its owner's windows and as a desktop notification. Its words
    /// show where they are readable — the owner is logged in, or chose to keep them
    /// readable while away; otherwise only whose reminder it is.
    async fn remind(&self, job: &JobRow, late: SignedDuration) {
        let words = match &job.settings.text {
            Some(text) => Some(text.clone()),
            None => self.private_text(job).await,
        };
        let owner = if words.is_some() {
            None
        } else {
            crate::store::users::find(&self.inner.system, &job.owner_id).await.ok().flatten().map(|row| row.name)
        };
        let (title, body) = reminder(words, owner.as_deref(), late);
        let shown = LiveEvent::Notify { title: title.clone(), body: body.clone() };
        if job.settings.shared {
            self.inner.runtime.events().to_everyone(&shown);
        } else {
            self.inner.runtime.events().to_person(&job.owner_id, &shown);
        }
        // One desktop notification on this computer, however many people it is for.
        let from = FromJob { id: job.id.to_string(), snooze: true, conversation: None };
        self.inner.notifier.post(Notification { title, body, job: Some(from) });
    }

    /// A job's words from its owner's file, while one of their sessions has it open.
    async fn private_text(&self, job: &JobRow) -> Option<String> {
        let session = self.inner.sessions.of_user(&job.owner_id)?;
        match stored::private(&session.space, &job.id).await {
            Ok(part) => part.map(|p| p.text),
            Err(err) => {
                tracing::warn!(job = %job.id, %err, "could not read a reminder's words");
                None
            }
        }
    }

    /// A job the session's person may change: theirs, or — for an administrator — one
    /// shared with everyone. Another's own job is not found; a shared one they may only
    /// see says so.
    async fn own(&self, session: &Session, id: &JobId) -> Result<JobRow, JobError> {
        let row = stored::get(&self.inner.system, id).await?.ok_or(JobError::NotFound)?;
        if row.owner_id == session.user_id {
            return Ok(row);
        }
        if !row.settings.shared {
            return Err(JobError::NotFound);
        }
        if self.is_admin(&session.user_id).await? { Ok(row) } else { Err(JobError::SharedNotYours) }
    }

    async fn is_admin(&self, user: &UserId) -> Result<bool, StoreError> {
        let Some(row) = crate::store::users::find(&self.inner.system, user).await? else { return Ok(false) };
        Ok(roles::get(&self.inner.system, &row.role_id).await?.is_some_and(|role| role.manage_instance))
    }

    async fn may_schedule(&self, user: &UserId) -> Result<(), JobError> {
        let row = crate::store::users::find(&self.inner.system, user).await?.ok_or(JobError::MayNotSchedule)?;
        let role = roles::get(&self.inner.system, &row.role_id).await?;
        if role.is_some_and(|r| r.may_schedule) { Ok(()) } else { Err(JobError::MayNotSchedule) }
    }
}

/// Who is looking at a job.
#[derive(Clone, Copy)]
struct Viewer<'a> {
    id: &'a UserId,
    admin: bool,
}

/// The scheduling tools' reach into jobs: what the model proposes is checked and previewed
/// exactly as the job would be made (its card shows that), and made only once approved.
impl Scheduling for Jobs {
    fn preview<'a>(
        &'a self,
        session: &'a Session,
        arguments: &'a Value,
    ) -> BoxFuture<'a, Result<ScheduleCard, String>> {
        Box::pin(async move {
            let job = proposed(arguments)?;
            self.prepare(session, job).await.map(|prepared| prepared.card).map_err(|err| err.to_string())
        })
    }

    fn schedule<'a>(&'a self, session: &'a Session, arguments: &'a Value) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            let job = proposed(arguments)?;
            let made = self.create(session, job).await.map_err(|err| err.to_string())?;
            let when = made.upcoming.first().cloned().unwrap_or_else(|| "never".to_owned());
            let repeat =
                made.cron.as_deref().map(|c| format!(", repeating {c:?} in {}", made.zone)).unwrap_or_default();
            Ok(format!("scheduled {} ({}): next {when}{repeat}", made.id, kind_word(made.kind)))
        })
    }

    fn list<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            let jobs = Jobs::list(self, session).await.map_err(|err| err.to_string())?;
            if jobs.is_empty() {
                return Ok("no reminders or tasks are scheduled".to_owned());
            }
            Ok(jobs.iter().map(listed).collect::<Vec<_>>().join("\n"))
        })
    }

    fn cancel<'a>(&'a self, session: &'a Session, id: &'a str) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            let id = JobId::new(id.trim().to_owned());
            self.delete(session, &id).await.map_err(|err| err.to_string())?;
            Ok(format!("cancelled {id}"))
        })
    }
}

/// A `schedule` call's arguments as a new job, or what is wrong with them, for the model.
fn proposed(arguments: &Value) -> Result<NewJob, String> {
    serde_json::from_value(arguments.clone()).map_err(|err| format!("the arguments do not describe a job: {err}"))
}

fn kind_word(kind: JobKind) -> &'static str {
    match kind {
        JobKind::Reminder => "reminder",
        JobKind::Task => "task",
    }
}

/// One job as `list_schedules` tells it: id, kind, words, when next, how it repeats, whose.
fn listed(job: &JobView) -> String {
    let next =
        if job.paused { "paused".to_owned() } else { job.upcoming.first().cloned().unwrap_or_else(|| "done".into()) };
    let mut line =
        format!("{} {} {:?} next {next}", job.id, kind_word(job.kind), job.text.as_deref().unwrap_or("(locked)"));
    if let Some(cron) = &job.cron {
        line.push_str(&format!(" repeats {cron:?} in {}", job.zone));
    }
    if job.shared {
        line.push_str(" shared with everyone");
    }
    if let Some(by) = &job.set_by {
        line.push_str(&format!(" set by {by}"));
    }
    line
}

fn view(row: JobRow, part: Option<PrivatePart>, viewer: Viewer<'_>, set_by: Option<String>) -> JobView {
    let may_change = row.owner_id == *viewer.id || (row.settings.shared && viewer.admin);
    let upcoming = match (
        &row.settings.next_run,
        Schedule::parse(row.settings.at.as_deref(), row.settings.cron.as_deref(), &row.settings.zone),
    ) {
        (Some(next), Ok(schedule)) if !row.settings.paused => match next.parse::<Timestamp>() {
            Ok(next) => std::iter::once(next.to_zoned(schedule.zone.clone()))
                .chain(schedule.upcoming(next, PREVIEWED - 1))
                .map(|z| local(&z))
                .collect(),
            Err(_) => Vec::new(),
        },
        _ => Vec::new(),
    };
    JobView {
        id: row.id,
        kind: row.settings.kind,
        text: part.as_ref().map(|p| p.text.clone()),
        at: row.settings.at,
        cron: row.settings.cron,
        zone: row.settings.zone,
        missed: row.settings.missed,
        readable_while_away: row.settings.readable_while_away,
        paused: row.settings.paused,
        next_run: row.settings.next_run,
        upcoming,
        agent: part.as_ref().and_then(|p| p.agent.clone()),
        model: part.as_ref().and_then(|p| p.model.clone()),
        conversation_id: part.and_then(|p| p.conversation_id),
        shared: row.settings.shared,
        set_by,
        may_change,
        created_at: row.created_at,
    }
}

/// What a reminder's sealed words are bound to: the job and the member they are for.
fn sealing_context(job: &JobId, owner: &UserId) -> Vec<u8> {
    format!("skald job text v1 {job} {owner}").into_bytes()
}

/// A member's name, for labels; none where they are gone.
async fn name_of(system: &SystemStore, id: &UserId) -> Option<String> {
    crate::store::users::find(system, id).await.ok().flatten().map(|row| row.name)
}

fn checked_text(text: &str) -> Result<String, JobError> {
    let text = text.trim();
    if text.is_empty() || text.chars().count() > MAX_TEXT_CHARS {
        return Err(JobError::Text);
    }
    Ok(text.to_owned())
}

/// A one-off's instant as stored.
fn once_at(schedule: &Schedule) -> Option<String> {
    match schedule.when {
        schedule::When::Once(at) => Some(utc(at)),
        schedule::When::Repeat(_) => None,
    }
}

/// An occurrence as stored: whole seconds, UTC, `Z`, rounded up, so nothing runs before
/// the time it was asked for.
pub fn utc(at: Timestamp) -> String {
    let up = jiff::TimestampRound::new().smallest(Unit::Second).mode(jiff::RoundMode::Ceil);
    at.round(up).unwrap_or(at).strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Now, as compared with stored occurrences: whole seconds rounded down, so an occurrence
/// is due once its second has begun.
fn now_utc(now: Timestamp) -> String {
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// An instant in its zone, RFC 3339 with the zone's offset.
fn local(zoned: &jiff::Zoned) -> String {
    zoned.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

/// The secret that opens what was sealed to a person, from their open space; none (and
/// logged) where it cannot be read.
async fn space_secret(session: &Session) -> Option<zeroize::Zeroizing<[u8; 32]>> {
    match session.space.key_secret().await {
        Ok(secret) => Some(secret),
        Err(err) => {
            tracing::error!(user = %session.user_id, %err, "could not read a space's key pair");
            None
        }
    }
}

/// An occurrence's time of day in its job's zone (`08:00`), for a notification.
fn local_hour(scheduled_for: &str, zone: &str) -> String {
    scheduled_for
        .parse::<Timestamp>()
        .ok()
        .and_then(|at| jiff::tz::TimeZone::get(zone).ok().map(|zone| at.to_zoned(zone)))
        .map(|at| at.strftime("%H:%M").to_string())
        .unwrap_or_default()
}

/// This computer's time zone, by its IANA name; UTC where it has none.
fn local_zone() -> String {
    jiff::tz::TimeZone::system().iana_name().unwrap_or("UTC").to_owned()
}

/// How long from `now` until a stored instant, within the scheduler's longest sleep.
fn until(next: &str, now: Timestamp) -> Duration {
    let Ok(next) = next.parse::<Timestamp>() else { return LONGEST_SLEEP };
    let wait = next.duration_since(now);
    if wait.is_negative() {
        return Duration::ZERO;
    }
    Duration::try_from(wait).unwrap_or(LONGEST_SLEEP).min(LONGEST_SLEEP)
}

/// How a turn ended, read from its owner's events: `None` when they closed first.
async fn turn_end(
    events: &mut tokio::sync::broadcast::Receiver<crate::agent::events::Event>,
    turn: &TurnId,
) -> Option<TurnState> {
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
        };
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&event.json) else { continue };
        let ends = matches!(value["type"].as_str(), Some("turn_ended" | "turn_parked"));
        if ends && value["turn"] == turn.as_str() && value.get("frame").is_none() {
            return serde_json::from_value(value["status"].clone()).ok();
        }
    }
}

/// A reminder's notification: its words where they are readable, else whose it is; a late
/// one says how late.
fn reminder(words: Option<String>, owner: Option<&str>, late: SignedDuration) -> (String, String) {
    let title = if late > ON_TIME { format!("Reminder ({} late)", how_late(late)) } else { "Reminder".to_owned() };
    let body = words.unwrap_or_else(|| format!("A reminder for {}: log in to read it.", owner.unwrap_or("someone")));
    (title, body)
}

/// "3 minutes", "2 hours", "1 day": how late, roughly.
fn how_late(late: SignedDuration) -> String {
    let minutes = late.as_secs() / 60;
    let (n, unit) = match minutes {
        m if m < 120 => (m, "minute"),
        m if m < 48 * 60 => (m / 60, "hour"),
        m => (m / (24 * 60), "day"),
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_are_stored_as_whole_utc_seconds_that_compare_as_text() {
        let at: Timestamp = "2027-03-28T05:30:00.200+02:00".parse().unwrap();
        assert_eq!(utc(at), "2027-03-28T03:30:01Z", "an occurrence never runs early");
        assert_eq!(now_utc(at), "2027-03-28T03:30:00Z", "nor is it due before its second");
        assert!(utc("2027-03-28T03:30:00Z".parse().unwrap()) < utc("2027-03-28T03:30:01Z".parse().unwrap()));
    }

    #[test]
    fn the_scheduler_sleeps_until_the_next_job_within_its_longest_sleep() {
        let now: Timestamp = "2027-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(until("2027-01-01T00:00:05Z", now), Duration::from_secs(5));
        assert_eq!(until("2026-12-31T23:00:00Z", now), Duration::ZERO, "overdue: at once");
        assert_eq!(until("2027-02-01T00:00:00Z", now), LONGEST_SLEEP);
    }

    #[test]
    fn a_reminder_whose_words_are_locked_away_says_only_whose_it_is() {
        let on_time = SignedDuration::from_secs(2);
        assert_eq!(reminder(Some("Bins out".into()), None, on_time), ("Reminder".into(), "Bins out".into()));
        let (title, body) = reminder(None, Some("Ada"), SignedDuration::from_secs(600));
        assert_eq!(
            (title.as_str(), body.as_str()),
            ("Reminder (10 minutes late)", "A reminder for Ada: log in to read it.")
        );
    }

    #[test]
    fn snoozed_until_tomorrow_keeps_the_time_of_day_across_a_clock_change() {
        let oslo = jiff::tz::TimeZone::get("Europe/Oslo").unwrap();
        // 21:30 the evening before summer time begins: tomorrow is 23 hours away.
        let now: Timestamp = "2027-03-27T20:30:00Z".parse().unwrap();
        let next = Snooze::Tomorrow.after(now, &oslo);
        assert_eq!(next.to_zoned(oslo.clone()).strftime("%F %H:%M").to_string(), "2027-03-28 21:30");
        assert_eq!(next.duration_since(now), SignedDuration::from_hours(23));
        assert_eq!(Snooze::TenMinutes.after(now, &oslo).duration_since(now), SignedDuration::from_mins(10));
        assert_eq!(Snooze::named("1h"), Some(Snooze::Hour));
        assert_eq!(Snooze::named("forever"), None);
    }

    #[test]
    fn a_late_reminder_says_roughly_how_late() {
        assert_eq!(how_late(SignedDuration::from_secs(61)), "1 minute");
        assert_eq!(how_late(SignedDuration::from_secs(45 * 60)), "45 minutes");
        assert_eq!(how_late(SignedDuration::from_secs(5 * 3600)), "5 hours");
        assert_eq!(how_late(SignedDuration::from_secs(3 * 86400)), "3 days");
    }
}
