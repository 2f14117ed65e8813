//! Scheduled backups: every day at a time of day in a zone, to a folder the administrator
//! chose, keeping the newest few. The passphrase is sealed under the instance key, as
//! provider keys are, so the schedule runs with nobody logged in.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;
use zeroize::Zeroizing;

use super::{BackupError, Backups, Kind, Request, prune};
use crate::ids::UserId;
use crate::store::backup::{self as rows, ScheduleRow};

/// What the schedule's passphrase is sealed for.
const PASSPHRASE_PURPOSE: &str = "backup_schedule:passphrase";
/// How often the clock looks whether the schedule is due.
const TICK: Duration = Duration::from_secs(30);

/// The schedule as an administrator sets it.
pub struct ScheduleInput {
    pub folder: PathBuf,
    /// `HH:MM`, 24-hour.
    pub at_time: String,
    /// An IANA zone; the computer's own when `None`.
    pub zone: Option<String>,
    pub keep: u32,
    pub include_models: bool,
    /// Needed when no schedule is stored yet; kept as it was when `None`.
    pub passphrase: Option<Zeroizing<String>>,
}

/// The schedule as shown (never the passphrase).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(rename = "BackupSchedule")]
pub struct ScheduleView {
    pub folder: String,
    pub at_time: String,
    pub zone: String,
    #[ts(type = "number")]
    pub keep: i64,
    pub include_models: bool,
    pub next_run: String,
    pub updated_by: String,
    pub updated_at: String,
}

impl From<ScheduleRow> for ScheduleView {
    fn from(row: ScheduleRow) -> Self {
        Self {
            folder: row.folder,
            at_time: row.at_time,
            zone: row.zone,
            keep: row.keep,
            include_models: row.include_models,
            next_run: row.next_run,
            updated_by: row.updated_by,
            updated_at: row.updated_at,
        }
    }
}

fn refused(message: impl Into<String>) -> BackupError {
    BackupError::Refused(message.into())
}

/// The first `at_time` in `zone` strictly after `after`. A time that a clock change skips
/// runs at the same wall time shifted by the gap; a repeated one runs once, the first time.
fn next_after(at_time: &str, zone: &str, after: jiff::Timestamp) -> Result<jiff::Timestamp, BackupError> {
    let time: jiff::civil::Time =
        at_time.parse().map_err(|_| refused(format!("{at_time:?} is not a time of day like 03:30")))?;
    let tz = jiff::tz::TimeZone::get(zone).map_err(|_| refused(format!("{zone:?} is not a known time zone")))?;
    let today = after.to_zoned(tz.clone()).date();
    for days in 0..3 {
        let date = today.checked_add(jiff::Span::new().days(days)).map_err(|err| refused(err.to_string()))?;
        let at = date.to_datetime(time).to_zoned(tz.clone()).map_err(|err| refused(err.to_string()))?;
        if at.timestamp() > after {
            return Ok(at.timestamp());
        }
    }
    Err(refused("no next time for this schedule"))
}

fn system_zone() -> String {
    jiff::tz::TimeZone::system().iana_name().unwrap_or("UTC").to_owned()
}

impl Backups {
    pub async fn schedule(&self) -> Result<Option<ScheduleView>, BackupError> {
        Ok(rows::schedule(self.system()).await?.map(ScheduleView::from))
    }

    /// Sets (or changes) the schedule; checked as a backup to that folder would be.
    pub async fn set_schedule(&self, by: &UserId, input: ScheduleInput) -> Result<ScheduleView, BackupError> {
        if !(1..=100).contains(&input.keep) {
            return Err(refused("keep between 1 and 100 backups"));
        }
        if !input.folder.is_absolute() {
            return Err(refused(format!("give the folder as an absolute path, not {}", input.folder.display())));
        }
        let folder = super::checked_folder(&self.inner.source.root, &input.folder)?;
        let zone = input.zone.clone().unwrap_or_else(system_zone);
        let at_time = input.at_time.trim().to_owned();
        if at_time.len() != 5 {
            return Err(refused(format!("{at_time:?} is not a time of day like 03:30")));
        }
        let next = next_after(&at_time, &zone, jiff::Timestamp::now())?;
        let stored = rows::schedule(self.system()).await?;
        let passphrase = match (&input.passphrase, stored) {
            (Some(passphrase), _) => {
                if let Some(why) = crate::users::password::weakness(passphrase, "") {
                    return Err(refused(format!("the backup passphrase is too weak. {why}")));
                }
                self.secrets()
                    .seal(passphrase.as_bytes(), PASSPHRASE_PURPOSE)
                    .map_err(|err| refused(format!("the passphrase cannot be kept: {err}")))?
            }
            (None, Some(row)) => row.passphrase,
            (None, None) => return Err(refused("choose a passphrase for the scheduled backups")),
        };
        let row = ScheduleRow {
            folder: folder.display().to_string(),
            at_time,
            zone,
            keep: i64::from(input.keep),
            include_models: input.include_models,
            passphrase,
            next_run: next.to_string(),
            updated_by: by.to_string(),
            updated_at: jiff::Timestamp::now().to_string(),
        };
        rows::put_schedule(self.system(), &row).await?;
        tracing::info!(next = %row.next_run, keep = row.keep, "backup schedule set");
        Ok(row.into())
    }

    pub async fn clear_schedule(&self) -> Result<bool, BackupError> {
        Ok(rows::delete_schedule(self.system()).await?)
    }

    /// The clock: runs the schedule when it is due, until `shutdown`. A time missed while
    /// Skald was closed runs once at the next start, not once per missed day.
    pub async fn run_schedule(self, shutdown: CancellationToken) {
        // Tests look sooner (a debug-only setting).
        let every = std::env::var("SKALD_TEST_BACKUP_TICK_MS")
            .ok()
            .filter(|_| cfg!(debug_assertions))
            .and_then(|ms| ms.parse().ok())
            .map_or(TICK, Duration::from_millis);
        let mut tick = tokio::time::interval(every);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = tick.tick() => {
                    if let Err(err) = self.run_if_due().await {
                        tracing::warn!(error = %err, "the scheduled backup did not run");
                    }
                }
            }
        }
    }

    async fn run_if_due(&self) -> Result<(), BackupError> {
        let Some(row) = rows::schedule(self.system()).await? else { return Ok(()) };
        let now = jiff::Timestamp::now();
        let due = row.next_run.parse::<jiff::Timestamp>().map(|at| at <= now).unwrap_or(true);
        if !due {
            return Ok(());
        }
        // The next time is set first, so a backup that fails is not retried every tick.
        let next = next_after(&row.at_time, &row.zone, now)?;
        rows::set_schedule_next(self.system(), &next.to_string()).await?;
        let passphrase = self
            .secrets()
            .open(&row.passphrase, PASSPHRASE_PURPOSE)
            .map_err(|err| refused(format!("the schedule's passphrase cannot be opened: {err}")))?;
        let passphrase = Zeroizing::new(
            String::from_utf8(passphrase.to_vec()).map_err(|_| refused("the schedule's passphrase is damaged"))?,
        );
        let folder = PathBuf::from(&row.folder);
        let request = Request { to: folder.clone(), passphrase, include_models: row.include_models };
        let started = self.start(request, Kind::Scheduled, None).await?;
        started.run(self.tracking(std::sync::Arc::new(|_| {}))).await?;
        let removed = prune(&folder, usize::try_from(row.keep).unwrap_or(1))
            .map_err(super::BackupError::io(format!("cannot tidy {}", folder.display())))?;
        if removed > 0 {
            tracing::info!(removed, "older scheduled backups removed");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> jiff::Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn the_next_run_is_the_next_wall_time_in_the_zone() {
        assert_eq!(next_after("03:30", "Europe/Oslo", at("2026-12-05T10:00:00Z")).unwrap(), at("2026-12-06T02:30:00Z"));
        assert_eq!(next_after("12:00", "Europe/Oslo", at("2026-12-05T10:00:00Z")).unwrap(), at("2026-12-05T11:00:00Z"));
        // Exactly at the time: the next day, never the same instant twice.
        assert_eq!(next_after("11:00", "UTC", at("2026-12-05T11:00:00Z")).unwrap(), at("2026-12-06T11:00:00Z"));
    }

    #[test]
    fn a_time_a_clock_change_skips_still_runs_that_day() {
        // 02:30 does not exist in Oslo on 28 March 2027; it runs an hour later, once.
        let next = next_after("02:30", "Europe/Oslo", at("2027-03-27T12:00:00Z")).unwrap();
        assert_eq!(next, at("2027-03-28T01:30:00Z"));
        // 02:30 happens twice on 31 October 2027; it runs the first time only.
        let first = next_after("02:30", "Europe/Oslo", at("2027-10-30T12:00:00Z")).unwrap();
        assert_eq!(first, at("2027-10-31T00:30:00Z"));
        assert_eq!(next_after("02:30", "Europe/Oslo", first).unwrap(), at("2027-11-01T01:30:00Z"));
    }

    #[test]
    fn bad_times_and_zones_are_refused_in_words() {
        assert!(matches!(next_after("25:00", "UTC", jiff::Timestamp::now()), Err(BackupError::Refused(_))));
        assert!(matches!(next_after("03:00", "Mars/Olympus", jiff::Timestamp::now()), Err(BackupError::Refused(_))));
    }
}
