//! A turn's life from outside it (§8.1, §8.2): starting one with the person's message or
//! as a retry, resuming a parked one after its cards, stopping one, withdrawing the cards
//! of one the person moved on from, and closing those a restart cut off. Each holds the
//! conversation's claim while it changes the turn's state.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::choice::{declined_pin, pick_model};
use super::context::{Rows, compose_context, frame_count, prompt_for, unsettled_calls};
use super::events::TurnEvents;
use super::runtime::{Claim, Started};
use super::turn::{self, Opening, Setup};
use super::{Runtime, TurnError, memory, tools, usage};
use crate::ids::{ConversationId, TurnId};
use crate::providers::ContextMessage;
use crate::store::chat::{self, Message, MessageRole, Place, TurnEnd, TurnState};
use crate::store::memories::Pools;
use crate::store::private::PrivateStore;
use crate::store::{StoreError, approvals};
use crate::users::sessions::Session;

impl Runtime {
    /// Starts a turn in `chat_id` with the person's message. Returns once the message is
    /// committed; the model request was sent concurrently, so durability costs the reply
    /// no time to its first token.
    pub async fn start_turn(
        &self,
        session: Arc<Session>,
        chat_id: &ConversationId,
        said: impl Into<Said>,
    ) -> Result<Started, TurnError> {
        self.begin(session, chat_id, Start::Message, Some(said.into())).await
    }

    /// Tries a conversation's failed last turn again, from the person's last message: no
    /// new message, no copy of the old one. Only a turn that ended in `error` is retried.
    pub async fn retry_turn(&self, session: Arc<Session>, chat_id: &ConversationId) -> Result<Started, TurnError> {
        self.begin(session, chat_id, Start::Retry, None).await
    }

    /// Starts another version of `turn`, a turn on the conversation's active path, beside
    /// it (see `store::chat::branches`): with `text`, the person's message edited and sent
    /// again; without, the same message answered again. Nothing of `turn` is changed; the
    /// new version ends the active path, and the model reads only what came before `turn`.
    pub async fn version_turn(
        &self,
        session: Arc<Session>,
        chat_id: &ConversationId,
        turn: &TurnId,
        said: Option<Said>,
    ) -> Result<Started, TurnError> {
        self.begin(session, chat_id, Start::Version(turn), said).await
    }

    /// Starts a turn with the person's new message, or a retry without one, or another
    /// version of a turn.
    async fn begin(
        &self,
        session: Arc<Session>,
        chat_id: &ConversationId,
        start: Start<'_>,
        said: Option<Said>,
    ) -> Result<Started, TurnError> {
        // Claimed before the history is read, so the context includes the previous turn's end.
        let turn_id = TurnId::generate();
        let stop = session.ended().child_token();
        let claim = match self.claim(&session.user_id, chat_id, &turn_id, &stop) {
            Ok(claim) => claim,
            // The turn before is only writing its end: the message waits for it, briefly.
            Err(Some(ending)) => {
                let _ = tokio::time::timeout(Duration::from_secs(5), ending.cancelled()).await;
                self.claim(&session.user_id, chat_id, &turn_id, &stop).map_err(|_| TurnError::Busy)?
            }
            Err(None) => return Err(TurnError::Busy),
        };
        // A version that answers the same message again says it once more: the words of
        // the turn it stands beside (none when that turn was itself a retry).
        let said = match (start, said) {
            (Start::Version(of), None) => repeated_message(&session, chat_id, of).await?,
            (_, said) => said,
        };
        let words = said.as_ref().map(|said| said.text.as_str());
        let (mut turn, candidates) = self.set_up(&session, chat_id, turn_id.clone(), stop, start, words).await?;
        if let Some(said) = &said {
            let mut added = vec![ContextMessage::User(said.text.clone())];
            added.extend(said.pictures.iter().map(super::context::picture_of));
            super::documents::load_pictures(&session.space, &self.inner.system, &mut added).await?;
            turn.context.extend(added);
        }
        let text = said.as_ref().map(|said| said.text.clone());
        let pictures = said.map(|said| said.pictures).unwrap_or_default();
        // What is remembered that bears on the message goes in as a recorded recall (§10):
        // the system prompt stays the same bytes, and the request rebuilds from history.
        let recall = match (&text, candidates, turn.recalls()) {
            (Some(words), Some(candidates), Some(remote)) => {
                memory::recall_call(candidates, &session.user_id, words, remote)
            }
            _ => None,
        };
        if let Some(recall) = &recall {
            turn.recalled(recall.call.clone(), recall.result.clone(), recall.outside);
        }
        turn.started(false);
        let (committed_tx, committed_rx) = tokio::sync::oneshot::channel::<Option<i64>>();
        spawn_turn(&session, claim, turn, committed_rx)?;
        // Its own task, so a client that hangs up mid-commit cannot leave the turn unsure
        // whether its message was saved.
        let beside = match start {
            Start::Version(of) => Some(of.clone()),
            Start::Message | Start::Retry | Start::Resume => None,
        };
        let (space, chat, turn) = (session.space.clone(), chat_id.to_owned(), turn_id.clone());
        let commit = tokio::spawn(async move {
            let place = beside.as_deref().map_or(Place::Next, Place::InPlaceOf);
            let result = match text {
                Some(words) => chat::begin_turn_with(&space, &chat, &turn, &words, &pictures, place).await,
                None => chat::begin_retry(&space, &chat, &turn, place).await,
            };
            let result = match (result, recall) {
                (Ok(message), Some(recall)) => {
                    memory::record_recall(&space, &chat, &turn, &recall).await.map(|last| (message, last))
                }
                (Ok(message), None) => Ok((message, message)),
                (Err(err), _) => Err(err),
            };
            let _ = committed_tx.send(result.as_ref().ok().map(|(_, last)| *last));
            result.map(|(message, _)| message)
        });
        let message_id = commit.await.map_err(|_| TurnError::Locked)??;
        Ok(Started { turn_id, message_id })
    }

    /// Reads what a turn starts from — the conversation, its history and summary, the
    /// role, the providers — and sets the turn up, its context ending with the history.
    /// The private file and the shared database are read at once: every lookup here stands
    /// between the person's message and the model's first token. With the person's new
    /// `words`, the memories that bear on them are looked for meanwhile, where memory is on
    /// (§10): whether the turn reads them in is known only once it is set up.
    async fn set_up(
        &self,
        session: &Arc<Session>,
        chat_id: &ConversationId,
        turn_id: TurnId,
        stop: CancellationToken,
        start: Start<'_>,
        words: Option<&str>,
    ) -> Result<(turn::Turn, Option<memory::Candidates>), TurnError> {
        let with_message = words.is_some();
        let space = &session.space;
        // Kept in memory between turns when nothing was written to it since (see
        // `store::snapshots`): then no read of the file at all.
        let private = async {
            let snapshot = chat::turn_start(space, chat_id).await?.ok_or(TurnError::NoSession)?;
            Ok::<_, TurnError>((snapshot, memory::enabled(space).await?))
        };
        let shared = async {
            let role = self.role_of(&session.user_id).await?;
            if let Some((cap, used)) = usage::over_cap(&self.inner.system, &role, &session.user_id).await? {
                return Err(TurnError::UsageCap { cap, used });
            }
            Ok((role, self.provider_cache().await?))
        };
        // One snapshot of the providers serves the whole start: the model, its fallback
        // and the key belong to the same moment.
        let ((snapshot, memory_on), (mut role, providers)) = tokio::try_join!(private, shared)?;
        let (conversation, mut summary) = (&snapshot.conversation, snapshot.summary.clone());
        // Rows in order of id: what the turn reads of them is a slice of the kept copy.
        // The rows after the summary: those before it are read only for a version of a
        // turn it stands in for.
        let mut history: &[Message] = &snapshot.history;
        let (reread, whole);
        let agent = self.inner.agents.load(&conversation.agent)?;
        self.observe(&agent);
        // A temporary chat neither reads nor writes memories: the tools are not offered, so
        // nothing is recalled into it either.
        let memory_on = memory_on && !conversation.temporary;
        let looking = async {
            let Some(words) = words.filter(|_| memory_on) else { return Ok(None) };
            let pools = Pools { owner: &session.user_id, space, system: &self.inner.system };
            Ok::<_, TurnError>(Some(memory::candidates(&pools, &self.meaning(), words).await?))
        };
        // What the person accepted against what is in force now (§3): a widening change
        // they have not decided on holds the turn before anything is sent.
        let (standing, candidates) =
            tokio::try_join!(self.standing_with(session, &role, Some(&agent), &providers), looking)?;
        if !standing.holds.is_empty() {
            return Err(TurnError::Held(standing.holds.len()));
        }
        if standing.withheld.agents.contains(&agent.id) {
            return Err(TurnError::AgentDeclined(agent.id.clone()));
        }
        standing.withheld.narrow_role(&mut role);
        let models = standing.withheld.models(&providers.models);
        if let Some(pinned) = conversation.model.as_deref() {
            declined_pin(&providers.models, &models, pinned)?;
        }
        let (model, fallback) = pick_model(&models, &role, &agent, conversation.model.as_deref())?;
        let endpoint = providers.endpoint(&self.inner.secrets, &model, &session.user_id)?;
        // A person who writes on while a turn waits on cards has moved on: that turn is
        // withdrawn, once nothing can refuse the new message any more. The caller holds
        // the conversation's claim.
        if start == Start::Retry && conversation.turn_state != Some(TurnState::Error) {
            return Err(TurnError::NothingToRetry);
        }
        if matches!(start, Start::Message | Start::Version(_)) && conversation.turn_state == Some(TurnState::Parked) {
            self.withdraw_parked(session, chat_id, MOVED_ON).await?;
            reread = chat::history_after(space, chat_id, summary.as_ref()).await?;
            history = &reread;
        }
        if let Start::Version(of) = start {
            // Another version reads what came before the turn it stands beside, and a
            // summary only if it stands in for rows before it too.
            whole = path_holding(space, chat_id, history, summary.as_ref(), of).await?;
            history = &whole[..];
            let at = history.iter().position(|m| m.turn_id == *of).ok_or(TurnError::NotOnPath)?;
            if summary.as_ref().is_some_and(|s| s.upto >= history[at].id) {
                summary = None;
            }
            history = &history[..at];
        }
        if !with_message && start != Start::Resume {
            // The context ends with the person's last message, as it did for the failed try.
            let end = history
                .iter()
                .rposition(|m| m.role == MessageRole::User && m.frame_id.is_none())
                .map_or(0, |at| at + 1);
            history = &history[..end];
        }
        let unsettled = match start {
            Start::Resume => unsettled_calls(history, &turn_id, None),
            Start::Message | Start::Retry | Start::Version(_) => None,
        };
        // A resumed turn counts the frames it opened before it parked against its cap.
        let frames_before = match start {
            Start::Resume => frame_count(history, &turn_id),
            Start::Message | Start::Retry | Start::Version(_) => 0,
        };
        if let Some(summary) = &summary {
            history = &history[history.partition_point(|m| m.id <= summary.upto)..];
        }
        let mut offered = self.inner.tools.offered_with_mcp(
            &role,
            &agent.meta.tools,
            &standing.withheld.mcp,
            standing.catalogue.as_ref(),
        );
        offered.retain(|tool| role.may_use_subagents || tool.name != tools::CALL_AGENT);
        offered.retain(|tool| memory_on || !tools::MEMORY_TOOLS.contains(&tool.name.as_str()));
        let prompt = prompt_for(space.prompt_prefix(), &agent.prompt);
        let mut context =
            compose_context(&prompt, summary.as_ref().map(|s| s.text.as_str()), history, Rows::Conversation);
        super::documents::load_pictures(&session.space, &self.inner.system, &mut context).await?;
        let setup = Setup {
            agent: agent.id.clone(),
            model,
            fallback,
            endpoint,
            offered,
            withheld: Arc::new(standing.withheld),
            prompt,
            context,
        };
        let opening = Opening {
            runtime: self.clone(),
            session: session.clone(),
            chat_id: chat_id.to_owned(),
            turn_id,
            stop,
            role,
            last_row: history.last().map_or(0, |m| m.id),
            summary,
            outside_content: conversation.outside_content,
            unsettled,
            frames_before,
        };
        Ok((turn::Turn::conversation(opening, setup), candidates))
    }

    /// Resumes a parked turn once no card holds it (§8.1): from the stored history, also
    /// after a restart. Returns false when there was nothing to resume (another window's
    /// decision resumed it first, or it was stopped or withdrawn meanwhile).
    pub async fn resume(
        &self,
        session: Arc<Session>,
        chat_id: &ConversationId,
        turn_id: &TurnId,
    ) -> Result<bool, TurnError> {
        let stop = session.ended().child_token();
        let claim = match self.claim(&session.user_id, chat_id, turn_id, &stop) {
            Ok(claim) => claim,
            // The task that parked this turn may still be finishing up, or a stop may be
            // withdrawing it: either is over in moments.
            Err(_) => {
                if let Some(current) = self.finished_of(&session.user_id, chat_id) {
                    let _ = tokio::time::timeout(Duration::from_secs(5), current.cancelled()).await;
                }
                match self.claim(&session.user_id, chat_id, turn_id, &stop) {
                    Ok(claim) => claim,
                    Err(_) => return Err(TurnError::Busy),
                }
            }
        };
        if !approvals::unpark(&session.space, turn_id).await? {
            return Ok(false);
        }
        self.parked_events(turn_id);
        // From here the turn is `running` on disk: whatever fails ends it, with the reason.
        let started = async {
            let (turn, _) = self.set_up(&session, chat_id, turn_id.to_owned(), stop, Start::Resume, None).await?;
            let (committed_tx, committed_rx) = tokio::sync::oneshot::channel::<Option<i64>>();
            let _ = committed_tx.send(Some(turn.last_row)); // nothing new to commit
            turn.started(true);
            spawn_turn(&session, claim, turn, committed_rx)
        };
        if let Err(err) = started.await {
            let message = err.to_string();
            let code = if matches!(err, TurnError::Held(_)) { "held" } else { "resume_failed" };
            let end = TurnEnd { state: TurnState::Error, error_code: Some(code), error_message: Some(&message) };
            chat::close_turn(
                &session.space,
                chat_id,
                turn_id,
                &end,
                "Error: the turn could not go on.",
                TurnState::Running,
            )
            .await?;
            return Err(err);
        }
        Ok(true)
    }

    /// At unlock: parked turns whose cards were all decided but that never went on (the
    /// decision's resume was cut off by a crash) go on now. One that cannot is logged and
    /// the others still go on.
    pub async fn resume_ready(&self, session: Arc<Session>) -> Result<usize, StoreError> {
        let mut resumed = 0;
        for (turn_id, chat_id) in approvals::ready_to_resume(&session.space).await? {
            match self.resume(session.clone(), &chat_id, &turn_id).await {
                Ok(true) => resumed += 1,
                Ok(false) => {}
                Err(err) => tracing::warn!(user = %session.user_id, %err, "a decided turn could not go on"),
            }
        }
        Ok(resumed)
    }

    /// Ends the turns of a conversation that wait on cards: each ends `stopped`, its calls
    /// get a result saying why, and its cards are withdrawn. The caller holds the
    /// conversation's claim, so no decision can resume one meanwhile.
    pub(super) async fn withdraw_parked(
        &self,
        session: &Session,
        chat_id: &ConversationId,
        why: &str,
    ) -> Result<usize, StoreError> {
        let space = &session.space;
        let mut ended = 0;
        for turn_id in approvals::parked_in(space, chat_id).await? {
            let end = TurnEnd { state: TurnState::Stopped, error_code: None, error_message: None };
            if !chat::close_turn(space, chat_id, &turn_id, &end, why, TurnState::Parked).await? {
                continue;
            }
            approvals::withdraw(space, &turn_id).await?;
            // A turn parked before a restart sent nothing the page still counts.
            let sent = self.parked_events(&turn_id).unwrap_or(0);
            let (events, user) = (self.inner.events.clone(), session.user_id.clone());
            TurnEvents::continuing(events, user, chat_id.clone(), turn_id, sent).ended(TurnState::Stopped, None);
            ended += 1;
        }
        Ok(ended)
    }

    /// Makes the path through `turn` the conversation's active one (see
    /// `store::chat::branches`): what the page shows and the next turn continues. Refused
    /// while a reply is written or waits on cards, whose turn ends the path now. Returns
    /// the turn that ends the path.
    pub async fn choose_version(
        &self,
        session: &Session,
        chat_id: &ConversationId,
        turn: &TurnId,
    ) -> Result<TurnId, TurnError> {
        let choosing = CancellationToken::new();
        let _claim = self.claim(&session.user_id, chat_id, "choosing", &choosing).map_err(|_| TurnError::Busy)?;
        let conversation = chat::conversation(&session.space, chat_id).await?.ok_or(TurnError::NoSession)?;
        match conversation.turn_state {
            Some(TurnState::Parked) => return Err(TurnError::Waiting),
            Some(TurnState::Running) => return Err(TurnError::Busy),
            Some(TurnState::Done | TurnState::Stopped | TurnState::Error) | None => {}
        }
        chat::choose_version(&session.space, chat_id, turn).await.map_err(|err| match err {
            StoreError::NotFound => TurnError::NoTurn,
            other => other.into(),
        })
    }

    /// Stops the running turn of a conversation, waiting until it has recorded its end.
    /// A turn parked on cards is ended too, its cards withdrawn. Returns whether a turn
    /// was running or waiting.
    pub async fn stop(&self, session: &Session, chat_id: &ConversationId) -> Result<bool, StoreError> {
        if self.cancel_running(&session.user_id, chat_id).await {
            return Ok(true);
        }
        // Nothing runs, but a turn may wait on cards: withdrawn under the conversation's
        // claim, so a decision cannot resume it halfway through.
        let withdrawing = CancellationToken::new();
        match self.claim(&session.user_id, chat_id, "withdrawing", &withdrawing) {
            Ok(_claim) => Ok(self.withdraw_parked(session, chat_id, STOPPED_UNDECIDED).await? > 0),
            // A decision resumed it a moment ago: that running turn is stopped instead.
            Err(_) => Ok(self.cancel_running(&session.user_id, chat_id).await),
        }
    }

    /// At unlock: turns recorded as running that no task is running were cut off by a
    /// restart or crash. Each becomes `error`, and any call left without a result gets one,
    /// so the history stays whole (§8.1).
    pub async fn close_interrupted(&self, session: &Session) -> Result<usize, StoreError> {
        let space = &session.space;
        // The rows first, then the live set: a turn enters the set before its row is
        // written and leaves it after its end is, so no live turn is mistaken for a dead one.
        let recorded = chat::running_turns(space).await?;
        let live: Vec<String> =
            self.inner.running.lock().expect("running turns").values().map(|r| r.turn_id.clone()).collect();
        let mut closed = 0;
        for (turn_id, chat_id) in recorded {
            if live.iter().any(|running| turn_id == running.as_str()) {
                continue;
            }
            let why = "Skald closed while this reply was being written. Send your message again.";
            let end = TurnEnd { state: TurnState::Error, error_code: Some("interrupted"), error_message: Some(why) };
            let orphan = "Error: Skald stopped before this call finished.";
            if !chat::close_turn(space, &chat_id, &turn_id, &end, orphan, TurnState::Running).await? {
                continue;
            }
            closed += 1;
        }
        if closed > 0 {
            tracing::info!(user = %session.user_id, closed, "interrupted turns closed at unlock");
        }
        Ok(closed)
    }
}

/// How a turn starts: with the person's new message, as a retry of a failed one, as
/// another version of a turn, or resumed after its cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start<'a> {
    Message,
    Retry,
    /// Beside this turn of the active path.
    Version(&'a TurnId),
    Resume,
}

/// The person's message of `turn`, which a version answering it again repeats: none when
/// `turn` was a retry, which had no message of its own. [`TurnError::NotOnPath`] when the
/// conversation as it reads now has no such turn.
async fn repeated_message(
    session: &Session,
    chat_id: &ConversationId,
    turn: &TurnId,
) -> Result<Option<Said>, TurnError> {
    let snapshot = chat::turn_start(&session.space, chat_id).await?.ok_or(TurnError::NoSession)?;
    let history = path_holding(&session.space, chat_id, &snapshot.history, snapshot.summary.as_ref(), turn).await?;
    let mut rows = history.iter().filter(|m| m.turn_id == *turn && m.frame_id.is_none()).peekable();
    if rows.peek().is_none() {
        return Err(TurnError::NotOnPath);
    }
    Ok(rows
        .find(|m| m.role == MessageRole::User)
        .map(|m| Said { text: m.text.clone(), pictures: m.images.clone().unwrap_or_default() }))
}

/// `history`, the rows after `summary`, when they hold `turn`; else the whole active path,
/// read now: `turn` is one the summary stands in for (a version of it is asked for).
async fn path_holding<'a>(
    space: &PrivateStore,
    chat_id: &ConversationId,
    history: &'a [Message],
    summary: Option<&chat::Summary>,
    turn: &TurnId,
) -> Result<Cow<'a, [Message]>, StoreError> {
    if summary.is_none() || history.iter().any(|m| m.turn_id == *turn) {
        return Ok(Cow::Borrowed(history));
    }
    Ok(Cow::Owned(chat::history(space, chat_id).await?))
}

/// What a person says in a message: the words, and the pictures it carries to a model that
/// reads pictures (§12.2).
#[derive(Debug, Clone, Default)]
pub struct Said {
    pub text: String,
    pub pictures: Vec<chat::AttachedPicture>,
}

impl From<String> for Said {
    fn from(text: String) -> Self {
        Self { text, pictures: Vec::new() }
    }
}

/// Runs a set-up turn as work of its session, holding the conversation's claim until the
/// task ends; refused once the session has ended (locked).
fn spawn_turn(
    session: &Arc<Session>,
    claim: Claim,
    turn: turn::Turn,
    committed: tokio::sync::oneshot::Receiver<Option<i64>>,
) -> Result<(), TurnError> {
    let claim = claim.handed_to_task(session.clone());
    let closing = claim.closing.clone();
    let (space, chat_id) = (session.space.clone(), turn.chat_id.clone());
    let spawned = session.spawn(async move {
        let done = {
            let _claim = claim;
            turn.run(committed, closing).await
        };
        // What the next message starts from, read now that nobody waits on it.
        if let Err(err) = chat::turn_start(&space, &chat_id).await {
            tracing::debug!(error = %err, "the conversation could not be read back after its turn");
        }
        // Named once the conversation is free again: the person's next message never waits on it.
        if let Some(turn) = done {
            turn.name_conversation().await;
        }
    });
    if spawned { Ok(()) } else { Err(TurnError::Locked) }
}

/// The result a call waiting on a card gets when the person writes on instead.
const MOVED_ON: &str = "Not run: the person sent a new message instead of deciding on this call.";

/// The result a call waiting on a card gets when the person stops its turn.
pub(super) const STOPPED_UNDECIDED: &str = "Not run: the person stopped the turn before deciding on this call.";
