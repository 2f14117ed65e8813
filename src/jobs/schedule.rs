//! When a job is due (§11): once, at an instant, or again and again by a 5-field cron
//! pattern read in an IANA time zone (`croner` on `jiff`). Also what a scheduler that was
//! closed for a while missed. Pure: the clock is an argument, so tests inject it; nothing
//! here sleeps, stores or sends.
//!
//! Time-zone changes follow the crate: a time that a spring-forward skips runs at the
//! first real instant after the gap; a time that a fall-back repeats runs once, in its
//! first half; a pattern of every few minutes runs in both halves, as the clock shows them.

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};

/// How many missed occurrences are counted, at most, for one job: beyond that the notice
/// says "more than".
pub const MAX_COUNTED_MISSES: usize = 1000;

/// Why a schedule cannot be used, in words a person — or the model proposing it — can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("give either a time (`at`) or a repeating pattern (`cron`), not both and not neither")]
    OneOfAtOrCron,
    #[error("{0:?} is not a time zone Skald knows; use an IANA name such as Europe/Oslo")]
    Zone(String),
    #[error(
        "a repeating pattern has exactly 5 fields (minute hour day-of-month month day-of-week), such as \"0 7 * * 1-5\"; this one has {0}"
    )]
    Fields(usize),
    #[error("the pattern {pattern:?} cannot be read: {why}")]
    Pattern { pattern: String, why: String },
    #[error("the pattern {0:?} never comes (no date matches it)")]
    Never(String),
    #[error(
        "{0:?} is not a date and time; give one such as 2027-03-28T07:30 (in the job's time zone) or 2027-03-28T05:30:00Z"
    )]
    At(String),
    #[error("{0} has passed; give a time still to come")]
    Past(String),
}

/// When a job is due.
#[derive(Debug, Clone)]
pub enum When {
    Once(Timestamp),
    Repeat(Box<Cron>),
}

/// A job's schedule: when, read in which zone.
#[derive(Debug, Clone)]
pub struct Schedule {
    pub when: When,
    pub zone: TimeZone,
}

impl Schedule {
    /// Reads a schedule as a request states it: `at` (an instant with its offset, or a
    /// date and time read in `zone`) or `cron`, and the zone's IANA name.
    pub fn parse(at: Option<&str>, cron: Option<&str>, zone: &str) -> Result<Self, ScheduleError> {
        let zone = TimeZone::get(zone).map_err(|_| ScheduleError::Zone(zone.to_owned()))?;
        let when = match (at.map(str::trim), cron.map(str::trim)) {
            (Some(at), None) => When::Once(instant(at, &zone)?),
            (None, Some(cron)) => When::Repeat(Box::new(pattern(cron)?)),
            _ => return Err(ScheduleError::OneOfAtOrCron),
        };
        Ok(Self { when, zone })
    }

    /// The first occurrence strictly after `after`; none for a one-off that has passed, or
    /// a pattern with no further date.
    pub fn next_after(&self, after: Timestamp) -> Option<Timestamp> {
        match &self.when {
            When::Once(at) => (*at > after).then_some(*at),
            When::Repeat(cron) => {
                let from = after.to_zoned(self.zone.clone());
                cron.find_next_occurrence(&from, false).ok().map(|next| next.timestamp())
            }
        }
    }

    /// The first `count` occurrences after `after`, in the job's zone (a card's preview).
    pub fn upcoming(&self, after: Timestamp, count: usize) -> Vec<Zoned> {
        let mut out = Vec::with_capacity(count);
        let mut from = after;
        while out.len() < count {
            let Some(next) = self.next_after(from) else { break };
            out.push(next.to_zoned(self.zone.clone()));
            from = next;
        }
        out
    }

    /// A new job's first occurrence from `now`; an error for a one-off that has passed or
    /// a pattern that never comes.
    pub fn first(&self, now: Timestamp, shown: &str) -> Result<Timestamp, ScheduleError> {
        match (&self.when, self.next_after(now)) {
            (_, Some(next)) => Ok(next),
            (When::Once(_), None) => Err(ScheduleError::Past(shown.to_owned())),
            (When::Repeat(_), None) => Err(ScheduleError::Never(shown.to_owned())),
        }
    }

    /// The occurrences from `due` (one that was due, not yet run) up to `now`: how many
    /// (bounded), the last one, and the next one after `now`.
    pub fn missed(&self, due: Timestamp, now: Timestamp) -> Missed {
        let mut count = 1;
        let mut last = due;
        let mut more = false;
        let next = loop {
            match self.next_after(last) {
                Some(after) if after <= now => {
                    if count == MAX_COUNTED_MISSES {
                        more = true;
                        last = self.last_before(now).unwrap_or(after);
                        break self.next_after(now);
                    }
                    count += 1;
                    last = after;
                }
                other => break other,
            }
        };
        Missed { count, more, last, next }
    }

    /// The last occurrence at or before `instant`.
    fn last_before(&self, instant: Timestamp) -> Option<Timestamp> {
        match &self.when {
            When::Once(at) => (*at <= instant).then_some(*at),
            When::Repeat(cron) => {
                let from = instant.to_zoned(self.zone.clone());
                cron.find_previous_occurrence(&from, true).ok().map(|previous| previous.timestamp())
            }
        }
    }
}

/// What a closed scheduler missed of one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missed {
    /// At least 1; at most [`MAX_COUNTED_MISSES`].
    pub count: usize,
    /// There were more than `count`.
    pub more: bool,
    pub last: Timestamp,
    /// The next occurrence still to come; none when there is none.
    pub next: Option<Timestamp>,
}

/// A 5-field pattern; 6 or 7 fields (seconds, years) are refused, as are patterns croner
/// cannot read. `@daily` and its kind are 5-field patterns by another name.
fn pattern(text: &str) -> Result<Cron, ScheduleError> {
    let fields = text.split_whitespace().count();
    if !text.starts_with('@') && fields != 5 {
        return Err(ScheduleError::Fields(fields));
    }
    let parser = CronParser::builder().seconds(Seconds::Disallowed).year(Year::Disallowed).build();
    parser.parse(text).map_err(|err| ScheduleError::Pattern { pattern: text.to_owned(), why: err.to_string() })
}

/// An instant: RFC 3339 with its offset, or a civil date and time read in `zone` (a time a
/// spring-forward skips moves forward past the gap; a repeated one is its first half).
fn instant(text: &str, zone: &TimeZone) -> Result<Timestamp, ScheduleError> {
    if let Ok(at) = text.parse::<Timestamp>() {
        return Ok(at);
    }
    let civil: jiff::civil::DateTime = text.parse().map_err(|_| ScheduleError::At(text.to_owned()))?;
    zone.to_ambiguous_zoned(civil).compatible().map(|z| z.timestamp()).map_err(|_| ScheduleError::At(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn oslo(cron: &str) -> Schedule {
        Schedule::parse(None, Some(cron), "Europe/Oslo").unwrap()
    }

    fn instants(zoned: &[Zoned]) -> Vec<String> {
        zoned.iter().map(|z| z.timestamp().to_string()).collect()
    }

    #[test]
    fn a_daily_time_that_spring_forward_skips_runs_once_just_after_the_gap() {
        // Oslo, 2027-03-28: 02:00 becomes 03:00 (UTC+1 → UTC+2); 02:30 does not exist.
        let days = oslo("30 2 * * *").upcoming(at("2027-03-27T12:00:00Z"), 2);
        assert_eq!(instants(&days), ["2027-03-28T01:00:00Z", "2027-03-29T00:30:00Z"]);
        assert_eq!(days[0].offset(), jiff::tz::offset(2), "shown in summer time, 03:00");
    }

    #[test]
    fn a_daily_time_that_fall_back_repeats_runs_once() {
        // Oslo, 2027-10-31: 03:00 becomes 02:00 (UTC+2 → UTC+1); 02:30 happens twice.
        let days = oslo("30 2 * * *").upcoming(at("2027-10-30T12:00:00Z"), 2);
        assert_eq!(instants(&days), ["2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"]);
    }

    #[test]
    fn an_every_half_hour_pattern_runs_in_both_halves_of_a_repeated_hour() {
        let runs = oslo("*/30 * * * *").upcoming(at("2027-10-30T23:50:00Z"), 4);
        // From 01:50 local: 02:00 and 02:30 in summer time (UTC+2), then again in winter time (UTC+1).
        assert_eq!(
            instants(&runs),
            ["2027-10-31T00:00:00Z", "2027-10-31T00:30:00Z", "2027-10-31T01:00:00Z", "2027-10-31T01:30:00Z"]
        );
    }

    #[test]
    fn six_and_seven_field_patterns_unreadable_ones_and_impossible_dates_are_refused() {
        let refused = |cron: &str| Schedule::parse(None, Some(cron), "UTC").unwrap_err();
        assert_eq!(refused("0 0 7 * * *"), ScheduleError::Fields(6));
        assert_eq!(refused("0 0 7 * * * 2027"), ScheduleError::Fields(7));
        assert!(matches!(refused("61 * * * *"), ScheduleError::Pattern { .. }));
        let never = Schedule::parse(None, Some("0 0 30 2 *"), "UTC").unwrap();
        assert_eq!(
            never.first(at("2027-01-01T00:00:00Z"), "0 0 30 2 *"),
            Err(ScheduleError::Never("0 0 30 2 *".into()))
        );
        assert!(Schedule::parse(None, Some("@daily"), "UTC").is_ok());
        assert_eq!(
            Schedule::parse(Some("2027-02-30T07:00"), None, "UTC").unwrap_err(),
            ScheduleError::At("2027-02-30T07:00".into())
        );
        assert_eq!(
            Schedule::parse(None, Some("* * * * *"), "Mars/Olympus").unwrap_err(),
            ScheduleError::Zone("Mars/Olympus".into())
        );
        assert_eq!(Schedule::parse(None, None, "UTC").unwrap_err(), ScheduleError::OneOfAtOrCron);
        assert_eq!(
            Schedule::parse(Some("2027-01-01T00:00Z"), Some("* * * * *"), "UTC").unwrap_err(),
            ScheduleError::OneOfAtOrCron
        );
    }

    #[test]
    fn a_one_off_is_read_in_its_zone_and_refused_once_past() {
        let once = Schedule::parse(Some("2027-03-28T07:30"), None, "Europe/Oslo").unwrap();
        assert_eq!(once.first(at("2027-03-01T00:00:00Z"), "x").unwrap(), at("2027-03-28T05:30:00Z"));
        assert_eq!(once.first(at("2027-04-01T00:00:00Z"), "then"), Err(ScheduleError::Past("then".into())));
        let exact = Schedule::parse(Some("2027-03-28T05:30:00Z"), None, "Europe/Oslo").unwrap();
        assert_eq!(exact.next_after(at("2027-03-28T05:29:59Z")), Some(at("2027-03-28T05:30:00Z")));
        assert_eq!(exact.next_after(at("2027-03-28T05:30:00Z")), None, "a one-off comes once");
    }

    #[test]
    fn what_a_closed_scheduler_missed_is_counted_once_and_bounded() {
        let hourly = Schedule::parse(None, Some("0 * * * *"), "UTC").unwrap();
        let missed = hourly.missed(at("2027-01-01T10:00:00Z"), at("2027-01-01T13:30:00Z"));
        assert_eq!(
            missed,
            Missed { count: 4, more: false, last: at("2027-01-01T13:00:00Z"), next: Some(at("2027-01-01T14:00:00Z")) }
        );
        let every_minute = Schedule::parse(None, Some("* * * * *"), "UTC").unwrap();
        let missed = every_minute.missed(at("2027-01-01T00:00:00Z"), at("2027-01-03T00:00:30Z"));
        assert_eq!((missed.count, missed.more), (MAX_COUNTED_MISSES, true));
        assert_eq!(missed.last, at("2027-01-03T00:00:00Z"), "the last one is the real last, not the thousandth");
        assert_eq!(missed.next, Some(at("2027-01-03T00:01:00Z")));
        let once = Schedule::parse(Some("2027-01-01T09:00:00Z"), None, "UTC").unwrap();
        assert_eq!(once.missed(at("2027-01-01T09:00:00Z"), at("2027-01-02T00:00:00Z")).next, None);
    }
}
