//! Tasks kept readable while their owner is away (docs/architecture.md §11, §3). Such a
//! task's words, agent and model are in the shared database, labelled so; so is a copy of
//! the record of what its owner had accepted (their file's, renewed at each login).
//!
//! Due while its owner is locked, it runs as their turn in a space of its own: a new
//! encrypted file under the data directory's `away/`, with a random key that is never
//! written anywhere, holding only that record and the task's conversation. The turn goes
//! through `agent::Runtime` like any of theirs — role, privacy tier, usage cap, approval
//! gate — and its consent check compares the copied record with the shared database: a
//! change that widens where words go holds it, and the run waits for its owner. So does a
//! card: nothing is approved for them. What the turn said is sealed to its owner's public
//! key and the space is deleted; their next login opens it and adds it to the task's
//! conversation in their own file.
//!
//! Whoever owns the files could change the copied record too: the owner's file keeps the
//! digest of the copy it last handed out, and a login finding the copy changed says so
//! (the `job_record_changed` notice) before the copy is renewed.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Jobs, space_secret, turn_end};
use crate::crypto::{Dek, KeyPair, file_salt, open_sealed, seal_to};
use crate::ids::{ConversationId, JobId, TurnId, UserId};
use crate::store::chat::{self, MessageRole, MessageStatus, NewMessage, TurnEnd, TurnState};
use crate::store::jobs::{self as stored, AwayTerms, JobRow, PrivatePart, RunStatus};
use crate::store::private::PrivateStore;
use crate::store::{StoreError, accepted};
use crate::users::sessions::Session;

/// How long a run away may hold its space's session open, at most.
const SESSION_LIMIT: Duration = Duration::from_secs(3600);

/// The notice a person gets when the record a task ran with away was not their file's.
pub const RECORD_CHANGED: &str = "job_record_changed";

/// One row of what a run away said, as it is sealed and carried into its owner's file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Carried {
    role: MessageRole,
    text: String,
    status: MessageStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_calls: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
}

/// What a run away came to.
pub(super) enum Outcome {
    /// It answered; what it said is sealed, for the next login.
    Done,
    /// It needs its owner: a change they have not accepted, or a card.
    Waits(String),
    Failed(String),
}

/// The setting in a person's file that keeps the digest of the record last handed out.
const HANDED_OUT: &str = "jobs.record_handed_out";

fn digest(json: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(json.as_bytes()))
}

/// What a run away says, sealed: the job, the occurrence and its owner are bound to it.
fn result_context(job: &JobId, scheduled_for: &str, owner: &UserId) -> Vec<u8> {
    format!("skald task result v1 {job} {scheduled_for} {owner}").into_bytes()
}

impl Jobs {
    /// Keeps a readable task's agent and model where its runs away read them, and hands
    /// all the person's readable tasks their record as their file has it now.
    pub(super) async fn keep_away_terms(
        &self,
        session: &Session,
        job: &JobId,
        part: &PrivatePart,
    ) -> Result<(), StoreError> {
        let terms = AwayTerms {
            task_agent: Some(part.agent.clone().unwrap_or_else(|| "main".to_owned())),
            task_model: part.model.clone(),
            accepted: None,
        };
        stored::set_away(&self.inner.system, job, Some(&terms)).await?;
        self.hand_out_record(session).await
    }

    /// Copies the person's record onto each of their readable tasks, and keeps in their
    /// file the digest of the copy handed out.
    async fn hand_out_record(&self, session: &Session) -> Result<(), StoreError> {
        let Some(record) = accepted::get(&session.space).await? else { return Ok(()) };
        let json = serde_json::to_string(&record).expect("a record serializes");
        session.space.put_setting(HANDED_OUT, &digest(&json)).await?;
        stored::renew_accepted(&self.inner.system, &session.user_id, &json).await
    }

    /// Runs a readable task's occurrence for an owner who is locked; see the module.
    pub(super) async fn run_away(&self, job: JobRow, scheduled_for: String) {
        let outcome = match self.away_turn(&job, &scheduled_for).await {
            Ok(outcome) => outcome,
            Err(err) => Outcome::Failed(err),
        };
        let (status, error) = match &outcome {
            Outcome::Done => (RunStatus::Done, None),
            Outcome::Waits(_) => (RunStatus::WaitingForUnlock, None),
            Outcome::Failed(why) => (RunStatus::Error, Some(why.as_str())),
        };
        if let Err(err) = stored::finish(&self.inner.system, &job.id, &scheduled_for, status, error).await {
            tracing::error!(job = %job.id, %err, "could not record how a task run away ended");
        }
        let when = super::local_hour(&scheduled_for, &job.settings.zone);
        let (title, body) = match outcome {
            Outcome::Done => (
                "Task done".to_owned(),
                format!("Your {when} task ran while you were away: log in to read its answer."),
            ),
            Outcome::Waits(why) => {
                ("A task is waiting for you".to_owned(), format!("Your {when} task waits for you: {why}."))
            }
            Outcome::Failed(why) => {
                ("A task could not run".to_owned(), format!("Your {when} task could not run: {why}"))
            }
        };
        let from = crate::notify::FromJob { id: job.id.to_string(), snooze: false, conversation: None };
        self.inner.notifier.post(crate::notify::Notification { title, body, job: Some(from) });
    }

    async fn away_turn(&self, job: &JobRow, scheduled_for: &str) -> Result<Outcome, String> {
        let terms = stored::away(&self.inner.system, &job.id).await.map_err(|e| e.to_string())?;
        let (Some(terms), Some(text)) = (terms, job.settings.text.clone()) else {
            return Ok(Outcome::Waits("it is no longer kept readable while you are away".to_owned()));
        };
        let Some(record) = terms.accepted.as_deref().and_then(|r| serde_json::from_str::<accepted::Record>(r).ok())
        else {
            return Ok(Outcome::Waits("there is no record of what you accepted for it yet".to_owned()));
        };
        let public: [u8; 32] = crate::store::users::find(&self.inner.system, &job.owner_id)
            .await
            .map_err(|e| e.to_string())?
            .and_then(|owner| owner.public_key)
            .and_then(|key| key.try_into().ok())
            .ok_or_else(|| "its owner has no key to seal the answer to".to_owned())?;

        let space = Space::open(&self.inner.away_dir, &job.owner_id).await.map_err(|e| e.to_string())?;
        let outcome = self.turn_in(&space, job, &terms, &record, text).await;
        let rows = match &outcome {
            Ok(Outcome::Done) => Some(space.rows().await),
            _ => None,
        };
        space.remove().await;
        let outcome = outcome?;
        if let Some(rows) = rows {
            let rows = rows.map_err(|e| e.to_string())?;
            let plain = serde_json::to_vec(&rows).expect("rows serialize");
            let sealed = seal_to(&public, &plain, &result_context(&job.id, scheduled_for, &job.owner_id));
            stored::seal_result(&self.inner.system, &job.id, scheduled_for, &sealed)
                .await
                .map_err(|e| e.to_string())?;
        }
        Ok(outcome)
    }

    /// The task's turn in its own space, watched to its end.
    async fn turn_in(
        &self,
        space: &Space,
        job: &JobRow,
        terms: &AwayTerms,
        record: &accepted::Record,
        text: String,
    ) -> Result<Outcome, String> {
        let store = space.store.as_ref().expect("an open space");
        accepted::put(store, record).await.map_err(|e| e.to_string())?;
        let agent = terms.task_agent.as_deref().unwrap_or("main");
        chat::create_conversation(store, &space.conversation, agent, terms.task_model.as_deref())
            .await
            .map_err(|e| e.to_string())?;
        let session =
            Arc::new(Session::new(job.owner_id.clone(), store.clone(), Dek::generate(), SESSION_LIMIT, false));
        let mut events = self.inner.runtime.events().subscribe(&job.owner_id);
        let started = match self.inner.runtime.start_turn(session.clone(), &space.conversation, text).await {
            Ok(started) => started,
            Err(crate::agent::TurnError::Held(_)) => {
                return Ok(Outcome::Waits("something changed in where your words go, and you decide first".into()));
            }
            Err(err) => return Err(err.to_string()),
        };
        tracing::info!(job = %job.id, turn = %started.turn_id, "a task's turn started while its owner is away");
        let ended = tokio::time::timeout(super::LONGEST_TASK, turn_end(&mut events, &started.turn_id)).await;
        session.ended().cancel();
        match ended {
            Ok(Some(TurnState::Done)) => Ok(Outcome::Done),
            Ok(Some(TurnState::Parked)) => Ok(Outcome::Waits("it needs your decision, after you log in".into())),
            Ok(Some(_)) => Err("its turn ended in an error".to_owned()),
            Ok(None) => Err("its turn ended without an answer".to_owned()),
            Err(_) => Err("it ran longer than an hour".to_owned()),
        }
    }

    /// At login: adds what each run away said to its task's conversation in the person's
    /// file (made if it is not there), and renews the record their readable tasks carry.
    pub(super) async fn receive_results(&self, session: &Session) {
        if let Err(err) = self.renew_record(session).await {
            tracing::error!(user = %session.user_id, %err, "could not renew the record a readable task carries");
        }
        let results = match stored::sealed_results(&self.inner.system, &session.user_id).await {
            Ok(results) => results,
            Err(err) => {
                tracing::error!(user = %session.user_id, %err, "could not read what tasks said while a member was away");
                return;
            }
        };
        if results.is_empty() {
            return;
        }
        let Some(secret) = space_secret(session).await else { return };
        for (job, scheduled_for, sealed) in results {
            let context = result_context(&job, &scheduled_for, &session.user_id);
            let rows: Vec<Carried> = match open_sealed(&secret, &sealed, &context)
                .ok()
                .and_then(|plain| serde_json::from_slice(&plain).ok())
            {
                Some(rows) => rows,
                None => {
                    tracing::warn!(%job, %scheduled_for, "what a task said while its owner was away does not open");
                    continue;
                }
            };
            match self.carry_in(session, &job, &rows).await {
                Ok(()) => {
                    if let Err(err) = stored::clear_result(&self.inner.system, &job, &scheduled_for).await {
                        tracing::error!(%job, %err, "could not drop a task's sealed answer");
                    }
                }
                Err(err) => tracing::error!(%job, %err, "could not keep what a task said while its owner was away"),
            }
        }
    }

    /// Tells the person when the record a readable task carried is not the copy their file
    /// handed out (it was changed outside Skald), then hands out their record anew.
    async fn renew_record(&self, session: &Session) -> Result<(), StoreError> {
        let system = &self.inner.system;
        let handed_out = session.space.setting(HANDED_OUT).await?;
        let mut readable = false;
        for job in stored::of_owner(system, &session.user_id).await? {
            let Some(terms) = stored::away(system, &job.id).await? else { continue };
            readable = true;
            let carried = terms.accepted.as_deref().map(digest);
            if carried.is_some() && carried != handed_out {
                tracing::warn!(job = %job.id, "the record a readable task carried was changed outside Skald");
                let body = serde_json::json!({ "job": job.id });
                crate::store::notices::tell(system, &session.user_id, RECORD_CHANGED, &body).await?;
            }
        }
        // Nothing is written for a person with no readable task.
        if readable { self.hand_out_record(session).await } else { Ok(()) }
    }

    /// Adds a run's rows to the task's conversation as one turn.
    async fn carry_in(&self, session: &Session, job: &JobId, rows: &[Carried]) -> Result<(), StoreError> {
        let space = &session.space;
        let Some(first) = rows.first().filter(|row| row.role == MessageRole::User) else { return Ok(()) };
        let Some(last) = rows.last().filter(|row| rows.len() > 1 && row.role == MessageRole::Assistant) else {
            return Ok(());
        };
        let part = stored::private(space, job).await?.unwrap_or_default();
        let conversation = match &part.conversation_id {
            Some(id) if chat::conversation(space, id).await?.is_some() => id.clone(),
            _ => {
                let id = ConversationId::generate();
                chat::create_conversation(space, &id, part.agent.as_deref().unwrap_or("main"), part.model.as_deref())
                    .await?;
                if stored::private(space, job).await?.is_some() {
                    stored::set_conversation(space, job, &id).await?;
                }
                id
            }
        };
        let turn = TurnId::generate();
        chat::begin_turn(space, &conversation, &turn, &first.text, chat::Place::Next).await?;
        let middle: Vec<NewMessage<'_>> =
            rows[1..rows.len() - 1].iter().map(|row| new_message(row, &conversation, &turn)).collect();
        if !middle.is_empty() {
            chat::append(space, &middle).await?;
        }
        let end = TurnEnd { state: TurnState::Done, error_code: None, error_message: None };
        chat::end_turn(space, &new_message(last, &conversation, &turn), &end, "", None, TurnState::Running).await?;
        Ok(())
    }
}

fn new_message<'a>(row: &'a Carried, conversation: &'a ConversationId, turn: &'a TurnId) -> NewMessage<'a> {
    NewMessage {
        session_id: conversation,
        turn_id: turn,
        role: row.role,
        text: &row.text,
        status: row.status,
        tool_calls: row.tool_calls.clone(),
        tool_call_id: row.tool_call_id.as_deref(),
        tool_name: row.tool_name.as_deref(),
        model: row.model.as_deref(),
        ..NewMessage::default()
    }
}

/// A run's own space: a new encrypted file with a random key kept only in memory.
struct Space {
    path: PathBuf,
    store: Option<PrivateStore>,
    conversation: ConversationId,
}

impl Space {
    async fn open(dir: &std::path::Path, owner: &UserId) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir)
            .map_err(|_| StoreError::WrongFile("the folder for tasks run away cannot be made"))?;
        let path = dir.join(format!("{}.db", crate::ids::random_id("away")));
        let store = PrivateStore::create(&path, &Dek::generate(), &file_salt(), owner, &KeyPair::generate()).await?;
        Ok(Self { path, store: Some(store), conversation: ConversationId::generate() })
    }

    /// The conversation's rows, outside sub-agents' frames, oldest first.
    async fn rows(&self) -> Result<Vec<Carried>, StoreError> {
        let store = self.store.as_ref().expect("an open space");
        Ok(chat::history(store, &self.conversation)
            .await?
            .into_iter()
            .filter(|row| row.frame_id.is_none())
            .map(|row| Carried {
                role: row.role,
                text: row.text,
                status: row.status,
                tool_calls: row.tool_calls,
                tool_call_id: row.tool_call_id.map(|id| id.to_string()),
                tool_name: row.tool_name,
                model: row.model,
            })
            .collect())
    }

    /// Closes the space and deletes its files.
    async fn remove(mut self) {
        if let Some(store) = self.store.take() {
            store.close().await;
        }
        remove_space_files(&self.path);
    }
}

/// Deletes a run's space with its journal files.
fn remove_space_files(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(file));
    }
}

/// At start: the spaces of runs a crash cut short go (their key died with the process).
pub(super) fn sweep(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let _ = std::fs::remove_file(entry.path());
    }
}
