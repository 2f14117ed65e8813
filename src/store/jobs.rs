//! Scheduled jobs (§11): their schedules and runs in the shared database, and what a job
//! says in its owner's encrypted file (unless they chose to keep it readable while away).
//! Instants are stored as `YYYY-MM-DDTHH:MM:SSZ`, whole seconds in UTC, so they compare as
//! text.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::private::PrivateStore;
use super::snapshots::Touched;
use super::{StoreError, SystemStore, timestamp};
use crate::ids::{ConversationId, JobId, UserId};

/// What a job does when due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum JobKind {
    /// A notification with the person's words; no model is asked.
    Reminder,
    /// A prompt run as an unattended turn of an agent.
    Task,
}

/// What an occurrence due while Skald was closed comes to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum MissedPolicy {
    /// Reported, not run.
    #[default]
    Skip,
    /// Reported, and run once now.
    RunOnce,
}

/// Where one occurrence of a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Done,
    /// Due while Skald was closed, and not run.
    Missed,
    /// Its owner's space is locked: it runs when they log in.
    WaitingForUnlock,
    /// A task's turn waits on a card.
    Parked,
    Error,
}

/// A job as the shared database holds it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct JobRow {
    pub id: JobId,
    pub owner_id: UserId,
    /// Who set it, when that was another member (a reminder set for its owner).
    pub set_by: Option<UserId>,
    /// Such a reminder's words, sealed to its owner's public key, until they log in.
    pub sealed_text: Option<Vec<u8>>,
    #[sqlx(flatten)]
    pub settings: JobSettings,
    pub created_at: String,
    pub updated_at: String,
}

/// A job's schedule and settings, as written (new, or changed) and read back.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct JobSettings {
    pub kind: JobKind,
    pub at: Option<String>,
    pub cron: Option<String>,
    pub zone: String,
    pub missed: MissedPolicy,
    pub readable_while_away: bool,
    /// The job's words, kept here only when readable while its owner is away.
    pub text: Option<String>,
    pub paused: bool,
    pub next_run: Option<String>,
    /// A reminder for everyone, its words readable by all.
    pub shared: bool,
}

/// One occurrence of a job, for its history.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, ts_rs::TS)]
#[ts(rename = "JobRun")]
pub struct RunRow {
    pub scheduled_for: String,
    pub status: RunStatus,
    pub claimed_at: String,
    pub finished_at: Option<String>,
    pub late_ms: Option<i64>,
    /// For a `missed` run: how many occurrences it stands for.
    pub missed_count: Option<i64>,
    pub error: Option<String>,
}

const COLUMNS: &str = "id, owner_id, set_by, sealed_text, kind, at, cron, zone, missed, readable_while_away, text, \
                       paused, next_run, shared, created_at, updated_at";

/// Who a new job is for and whom it comes from.
#[derive(Debug, Clone, Copy)]
pub struct Audience<'a> {
    pub owner: &'a UserId,
    /// Another member who set it for `owner`, with its words sealed to `owner`.
    pub set_by: Option<(&'a UserId, &'a [u8])>,
}

/// Writes a new job.
pub async fn create(system: &SystemStore, id: &JobId, to: Audience<'_>, job: &JobSettings) -> Result<(), StoreError> {
    let now = timestamp();
    sqlx::query(
        "INSERT INTO jobs (id, owner_id, set_by, sealed_text, kind, at, cron, zone, missed, readable_while_away, text,
                           paused, next_run, shared, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(id)
    .bind(to.owner)
    .bind(to.set_by.map(|(by, _)| by))
    .bind(to.set_by.map(|(_, sealed)| sealed))
    .bind(job.kind)
    .bind(&job.at)
    .bind(&job.cron)
    .bind(&job.zone)
    .bind(job.missed)
    .bind(job.readable_while_away)
    .bind(job.text.as_ref().filter(|_| job.readable_while_away))
    .bind(job.paused)
    .bind(&job.next_run)
    .bind(job.shared)
    .bind(&now)
    .bind(&now)
    .execute(system.pool())
    .await?;
    Ok(())
}

/// Changes a job of `owner`'s; false when they have no such job. Whether it is shared
/// does not change.
pub async fn update(system: &SystemStore, id: &JobId, owner: &UserId, job: &JobSettings) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE jobs SET kind = ?, at = ?, cron = ?, zone = ?, missed = ?, readable_while_away = ?, text = ?,
                         paused = ?, next_run = ?, updated_at = ?
         WHERE id = ? AND owner_id = ?",
    )
    .bind(job.kind)
    .bind(&job.at)
    .bind(&job.cron)
    .bind(&job.zone)
    .bind(job.missed)
    .bind(job.readable_while_away)
    .bind(job.text.as_ref().filter(|_| job.readable_while_away))
    .bind(job.paused)
    .bind(&job.next_run)
    .bind(timestamp())
    .bind(id)
    .bind(owner)
    .execute(system.pool())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Deletes a job of `owner`'s, with its runs; false when they have no such job.
pub async fn delete(system: &SystemStore, id: &JobId, owner: &UserId) -> Result<bool, StoreError> {
    let done = sqlx::query("DELETE FROM jobs WHERE id = ? AND owner_id = ?")
        .bind(id)
        .bind(owner)
        .execute(system.pool())
        .await?;
    Ok(done.rows_affected() == 1)
}

/// One job, whoever owns it.
pub async fn get(system: &SystemStore, id: &JobId) -> Result<Option<JobRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM jobs WHERE id = ?");
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(system.pool()).await?)
}

/// A person's jobs and everyone's shared ones, the next due first (those with none last).
pub async fn of_owner(system: &SystemStore, owner: &UserId) -> Result<Vec<JobRow>, StoreError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM jobs WHERE owner_id = ? OR shared = 1 ORDER BY next_run IS NULL, next_run, created_at"
    );
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(owner).fetch_all(system.pool()).await?)
}

/// The reminders others set for `owner` whose words still wait, sealed, in this database.
pub async fn sealed_for(system: &SystemStore, owner: &UserId) -> Result<Vec<JobRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM jobs WHERE owner_id = ? AND sealed_text IS NOT NULL");
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(owner).fetch_all(system.pool()).await?)
}

/// Drops a reminder's sealed words once its owner's file keeps them.
pub async fn clear_sealed(system: &SystemStore, id: &JobId) -> Result<(), StoreError> {
    sqlx::query("UPDATE jobs SET sealed_text = NULL WHERE id = ?").bind(id).execute(system.pool()).await?;
    Ok(())
}

/// Puts a job off to `next` (a snooze): its schedule stays; it is due again at `next`.
pub async fn put_off(system: &SystemStore, id: &JobId, next: &str) -> Result<bool, StoreError> {
    let done = sqlx::query("UPDATE jobs SET next_run = ?, paused = 0, updated_at = ? WHERE id = ?")
        .bind(next)
        .bind(timestamp())
        .bind(id)
        .execute(system.pool())
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Jobs that run: not paused, of people still active (a deactivated person's wait).
const RUNNABLE: &str =
    "next_run IS NOT NULL AND paused = 0 AND owner_id IN (SELECT id FROM users WHERE status = 'active')";

/// The jobs due at or before `now` that run, the earliest first.
pub async fn due(system: &SystemStore, now: &str) -> Result<Vec<JobRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM jobs WHERE {RUNNABLE} AND next_run <= ? ORDER BY next_run");
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(now).fetch_all(system.pool()).await?)
}

/// When the next job that runs is due.
pub async fn earliest(system: &SystemStore) -> Result<Option<String>, StoreError> {
    let sql = format!("SELECT min(next_run) FROM jobs WHERE {RUNNABLE}");
    Ok(sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(system.pool()).await?)
}

/// One claim on a job's due occurrence: the job must still be due at `due`; the run is
/// recorded for occurrence `run` (`due` itself, or — for occurrences missed while Skald was
/// closed — the last of them, standing for `missed` of them), and the job moves on to `next`.
#[derive(Debug, Clone)]
pub struct Claim<'a> {
    pub due: &'a str,
    pub run: &'a str,
    pub next: Option<&'a str>,
    pub status: RunStatus,
    pub late_ms: Option<i64>,
    pub missed: Option<i64>,
}

/// Claims a due occurrence of a job and moves its `next_run` on, in one transaction: true
/// for the one caller that claimed it, false for any other (the occurrence was claimed
/// already, or the job moved on meanwhile).
pub async fn claim(system: &SystemStore, id: &JobId, claim: &Claim<'_>) -> Result<bool, StoreError> {
    let mut tx = system.pool().begin_with("BEGIN IMMEDIATE").await?;
    let moved = sqlx::query("UPDATE jobs SET next_run = ? WHERE id = ? AND next_run IS ?")
        .bind(claim.next)
        .bind(id)
        .bind(claim.due)
        .execute(&mut *tx)
        .await?;
    if moved.rows_affected() != 1 {
        return Ok(false);
    }
    let now = timestamp();
    let finished = (claim.status != RunStatus::Running).then_some(now.as_str());
    let inserted = sqlx::query(
        "INSERT INTO job_runs (job_id, scheduled_for, status, claimed_at, finished_at, late_ms, missed_count)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, scheduled_for) DO NOTHING",
    )
    .bind(id)
    .bind(claim.run)
    .bind(claim.status)
    .bind(&now)
    .bind(finished)
    .bind(claim.late_ms)
    .bind(claim.missed)
    .execute(&mut *tx)
    .await?;
    if inserted.rows_affected() != 1 {
        return Ok(false); // rolled back: the job keeps its next_run
    }
    tx.commit().await?;
    Ok(true)
}

/// Ends a claimed run: its status, and why it failed where it did.
pub async fn finish(
    system: &SystemStore,
    id: &JobId,
    scheduled_for: &str,
    status: RunStatus,
    error: Option<&str>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE job_runs SET status = ?, finished_at = ?, error = ? WHERE job_id = ? AND scheduled_for = ?")
        .bind(status)
        .bind(timestamp())
        .bind(error)
        .bind(id)
        .bind(scheduled_for)
        .execute(system.pool())
        .await?;
    Ok(())
}

/// A job's runs, the latest first, at most `limit`.
pub async fn runs(system: &SystemStore, id: &JobId, limit: i64) -> Result<Vec<RunRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT scheduled_for, status, claimed_at, finished_at, late_ms, missed_count, error
         FROM job_runs WHERE job_id = ? ORDER BY scheduled_for DESC LIMIT ?",
    )
    .bind(id)
    .bind(limit)
    .fetch_all(system.pool())
    .await?)
}

/// What a job keeps in its owner's file: its words and, for a task, which agent (and
/// pinned model) runs it and the conversation its answers go to.
#[derive(Debug, Clone, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct PrivatePart {
    pub text: String,
    pub agent: Option<String>,
    pub model: Option<String>,
    pub conversation_id: Option<ConversationId>,
}

/// Keeps what a job says (and a task's agent and model) in its owner's file; the
/// conversation it already has stays.
pub async fn set_private(space: &PrivateStore, id: &JobId, part: &PrivatePart) -> Result<(), StoreError> {
    let _writing = space.writing(Touched::Nothing);
    sqlx::query(
        "INSERT INTO job_texts (job_id, text, agent, model, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (job_id) DO UPDATE SET text = excluded.text, agent = excluded.agent, model = excluded.model,
                                            updated_at = excluded.updated_at",
    )
    .bind(id)
    .bind(&part.text)
    .bind(&part.agent)
    .bind(&part.model)
    .bind(timestamp())
    .execute(space.pool())
    .await?;
    Ok(())
}

/// Notes the conversation a task's answers are kept in.
pub async fn set_conversation(
    space: &PrivateStore,
    id: &JobId,
    conversation: &ConversationId,
) -> Result<(), StoreError> {
    let _writing = space.writing(Touched::Nothing);
    sqlx::query("UPDATE job_texts SET conversation_id = ?, updated_at = ? WHERE job_id = ?")
        .bind(conversation)
        .bind(timestamp())
        .bind(id)
        .execute(space.pool())
        .await?;
    Ok(())
}

/// Forgets what a job kept in its owner's file (it was deleted, or its words are now kept
/// readable).
pub async fn delete_private(space: &PrivateStore, id: &JobId) -> Result<(), StoreError> {
    let _writing = space.writing(Touched::Nothing);
    sqlx::query("DELETE FROM job_texts WHERE job_id = ?").bind(id).execute(space.pool()).await?;
    Ok(())
}

/// What each of the person's jobs keeps in their file, by job.
pub async fn all_private(space: &PrivateStore) -> Result<HashMap<JobId, PrivatePart>, StoreError> {
    #[derive(sqlx::FromRow)]
    struct Keyed {
        job_id: JobId,
        #[sqlx(flatten)]
        part: PrivatePart,
    }
    let rows: Vec<Keyed> = sqlx::query_as("SELECT job_id, text, agent, model, conversation_id FROM job_texts")
        .fetch_all(space.pool())
        .await?;
    Ok(rows.into_iter().map(|row| (row.job_id, row.part)).collect())
}

/// What one job keeps in its owner's file, if it keeps anything there.
pub async fn private(space: &PrivateStore, id: &JobId) -> Result<Option<PrivatePart>, StoreError> {
    Ok(sqlx::query_as("SELECT text, agent, model, conversation_id FROM job_texts WHERE job_id = ?")
        .bind(id)
        .fetch_optional(space.pool())
        .await?)
}

/// The runs waiting for `owner` to log in, of their jobs, the oldest first.
pub async fn waiting_for(system: &SystemStore, owner: &UserId) -> Result<Vec<(JobRow, String)>, StoreError> {
    let sql = format!(
        "SELECT {}, r.scheduled_for FROM job_runs r JOIN jobs j ON j.id = r.job_id
         WHERE j.owner_id = ? AND r.status = 'waiting_for_unlock' ORDER BY r.scheduled_for",
        COLUMNS.split(", ").map(|c| format!("j.{c}")).collect::<Vec<_>>().join(", ")
    );
    let rows: Vec<(JobRow, String)> = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(owner)
        .try_map(|row: sqlx::sqlite::SqliteRow| {
            use sqlx::{FromRow, Row};
            Ok((JobRow::from_row(&row)?, row.try_get("scheduled_for")?))
        })
        .fetch_all(system.pool())
        .await?;
    Ok(rows)
}

/// What a task kept readable while its owner is away runs with while they are: its agent,
/// its pinned model, and the record of what they had accepted (JSON).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AwayTerms {
    pub task_agent: Option<String>,
    pub task_model: Option<String>,
    pub accepted: Option<String>,
}

/// Keeps (or, with `None`, drops) what a readable task runs with while its owner is away.
pub async fn set_away(system: &SystemStore, id: &JobId, terms: Option<&AwayTerms>) -> Result<(), StoreError> {
    sqlx::query("UPDATE jobs SET task_agent = ?, task_model = ?, accepted = ? WHERE id = ?")
        .bind(terms.and_then(|t| t.task_agent.as_deref()))
        .bind(terms.and_then(|t| t.task_model.as_deref()))
        .bind(terms.and_then(|t| t.accepted.as_deref()))
        .bind(id)
        .execute(system.pool())
        .await?;
    Ok(())
}

/// What a readable task runs with while its owner is away; none for any other job.
pub async fn away(system: &SystemStore, id: &JobId) -> Result<Option<AwayTerms>, StoreError> {
    Ok(sqlx::query_as("SELECT task_agent, task_model, accepted FROM jobs WHERE id = ? AND task_agent IS NOT NULL")
        .bind(id)
        .fetch_optional(system.pool())
        .await?)
}

/// Renews the record of what `owner` accepted on each of their readable tasks (at login:
/// their file's record is the one that counts).
pub async fn renew_accepted(system: &SystemStore, owner: &UserId, accepted: &str) -> Result<(), StoreError> {
    sqlx::query("UPDATE jobs SET accepted = ? WHERE owner_id = ? AND task_agent IS NOT NULL")
        .bind(accepted)
        .bind(owner)
        .execute(system.pool())
        .await?;
    Ok(())
}

/// Keeps what a run said while its owner was away, sealed to them.
pub async fn seal_result(
    system: &SystemStore,
    id: &JobId,
    scheduled_for: &str,
    sealed: &[u8],
) -> Result<(), StoreError> {
    sqlx::query("UPDATE job_runs SET sealed_result = ? WHERE job_id = ? AND scheduled_for = ?")
        .bind(sealed)
        .bind(id)
        .bind(scheduled_for)
        .execute(system.pool())
        .await?;
    Ok(())
}

/// The sealed results of `owner`'s runs while they were away, the oldest first.
pub async fn sealed_results(system: &SystemStore, owner: &UserId) -> Result<Vec<(JobId, String, Vec<u8>)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT r.job_id, r.scheduled_for, r.sealed_result FROM job_runs r JOIN jobs j ON j.id = r.job_id
         WHERE j.owner_id = ? AND r.sealed_result IS NOT NULL ORDER BY r.scheduled_for",
    )
    .bind(owner)
    .fetch_all(system.pool())
    .await?)
}

/// Drops a run's sealed result once its owner's file keeps it.
pub async fn clear_result(system: &SystemStore, id: &JobId, scheduled_for: &str) -> Result<(), StoreError> {
    sqlx::query("UPDATE job_runs SET sealed_result = NULL WHERE job_id = ? AND scheduled_for = ?")
        .bind(id)
        .bind(scheduled_for)
        .execute(system.pool())
        .await?;
    Ok(())
}

/// Moves a waiting run on: to `running` when it starts, or another end.
pub async fn restate(
    system: &SystemStore,
    id: &JobId,
    scheduled_for: &str,
    from: RunStatus,
    to: RunStatus,
) -> Result<bool, StoreError> {
    let done = sqlx::query("UPDATE job_runs SET status = ? WHERE job_id = ? AND scheduled_for = ? AND status = ?")
        .bind(to)
        .bind(id)
        .bind(scheduled_for)
        .bind(from)
        .execute(system.pool())
        .await?;
    Ok(done.rows_affected() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn system_with_a_job() -> (tempfile::TempDir, SystemStore, JobId) {
        let dir = tempfile::tempdir().unwrap();
        let system = SystemStore::open(&dir.path().join("system.db")).await.unwrap();
        for statement in [
            "INSERT INTO roles (id, label, created_at) VALUES ('member', 'Member', 'now') ON CONFLICT DO NOTHING",
            "INSERT INTO users (id, name, role_id, status, file_salt, public_key, created_at)
             VALUES ('a0a00000000000000000000000000000', 'Ada', 'member', 'active', zeroblob(16), zeroblob(32), 'now')",
        ] {
            sqlx::query(statement).execute(system.pool()).await.unwrap();
        }
        let id = JobId::generate();
        let settings = JobSettings {
            kind: JobKind::Reminder,
            at: None,
            cron: Some("* * * * *".into()),
            zone: "UTC".into(),
            missed: MissedPolicy::Skip,
            readable_while_away: false,
            text: Some("never stored".into()),
            paused: false,
            next_run: Some("2027-01-01T10:00:00Z".into()),
            shared: false,
        };
        let owner = UserId::parse("a0a00000000000000000000000000000").unwrap();
        create(&system, &id, Audience { owner: &owner, set_by: None }, &settings).await.unwrap();
        (dir, system, id)
    }

    #[tokio::test]
    async fn two_ticks_racing_for_an_occurrence_claim_it_once() {
        let (_dir, system, id) = system_with_a_job().await;
        let occurrence = "2027-01-01T10:00:00Z";
        let next = Some("2027-01-01T10:01:00Z");
        let first = Claim {
            due: occurrence,
            run: occurrence,
            next,
            status: RunStatus::Running,
            late_ms: Some(5),
            missed: None,
        };
        let second = Claim { late_ms: Some(7), ..first.clone() };
        let (a, b) = tokio::join!(claim(&system, &id, &first), claim(&system, &id, &second));
        assert_eq!([a.unwrap(), b.unwrap()].iter().filter(|won| **won).count(), 1, "one claim wins");
        assert_eq!(runs(&system, &id, 10).await.unwrap().len(), 1);
        assert_eq!(get(&system, &id).await.unwrap().unwrap().settings.next_run.as_deref(), next);
        // A late tick that still thinks the old occurrence is due claims nothing.
        assert!(!claim(&system, &id, &first).await.unwrap());
    }

    #[tokio::test]
    async fn a_jobs_words_are_not_in_the_shared_database_unless_kept_readable() {
        let (_dir, system, id) = system_with_a_job().await;
        assert_eq!(get(&system, &id).await.unwrap().unwrap().settings.text, None);
        assert_eq!(due(&system, "2027-01-01T09:59:59Z").await.unwrap().len(), 0);
        assert_eq!(due(&system, "2027-01-01T10:00:00Z").await.unwrap().len(), 1);
        assert_eq!(earliest(&system).await.unwrap().as_deref(), Some("2027-01-01T10:00:00Z"));
    }
}
