//! The agent's side of memory (§10, docs/architecture.md "Memory"): what a `remember` card
//! shows beside the call's arguments, and whom a memory may be about. The pools themselves
//! are `store::memories`; the tools are `tools::{remember, recall, forget}`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::meaning::MemoryCorpus;
pub use crate::agent::meaning::{By, Meaning};
use crate::ids::UserId;
use crate::store::StoreError;
use crate::store::approvals::NewCard;
use crate::store::memories::{self, Author, Memory, MemoryId, NewMemory, Pool, Pools, Subject};
use crate::store::private::PrivateStore;
use crate::store::roles::{self, PrivacyTier, Role};
use crate::store::system::SystemStore;
use crate::store::users;

/// The tool that proposes a memory: always a confirmed write (the gate's `CONFIRMED_WRITES`).
pub const REMEMBER: &str = "remember";

/// How similar an existing memory must be for a `remember` card to offer replacing it: by
/// words, the share of the new sentence's telling words it holds; by meaning, the cosine
/// of the two sentences. A contradiction of the same fact scores 0.68–0.83 ("Ada now drinks
/// coffee every morning" against "Ada prefers green tea in the morning, never coffee"),
/// another fact about the same person 0.47–0.74: a false offer costs a "Keep both", a
/// missed one a stale memory, so the line is drawn low.
const SIMILAR: f64 = 0.5;
const SIMILAR_MEANING: f64 = 0.65;

/// A `remember` card's lines, fixed when the card is made: the person decides on these.
#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct MemoryCard {
    /// The sentence, as it would be kept.
    pub text: String,
    pub pool: Pool,
    pub subject: Subject,
    /// The person it is about, by name; none when it is about this instance.
    pub about: Option<String>,
    /// About a member other than the person deciding: personal data about them.
    pub about_another: bool,
    /// The agent that would be recorded as its author.
    pub agent: String,
    /// When it would be deleted (RFC 3339).
    pub kept_until: String,
    /// Kept on this machine only: never sent to a remote model.
    pub local_only: bool,
    /// Memories already kept that say nearly the same (or the opposite): the person may
    /// replace one of them.
    pub similar: Vec<SimilarMemory>,
    /// Why the call would fail as it stands (a sentence too long, an unknown member): the
    /// card says so, and allowing it gives the model that error.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub problem: Option<String>,
}

/// A memory already kept that a new one may replace.
#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct SimilarMemory {
    pub id: MemoryId,
    pub text: String,
    pub pool: Pool,
}

/// The arguments `remember` takes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proposal {
    pub text: String,
    pub pool: Pool,
    pub subject: Subject,
}

/// A proposal read and checked: what would be written.
pub struct Checked {
    pub text: String,
    pub pool: Pool,
    pub subject: Subject,
    pub about: Option<String>,
    pub about_another: bool,
    pub local_only: bool,
}

impl Checked {
    /// Keeps the checked memory, written by `author`; `source`: the conversation a model's
    /// memory came from, and whether outside content was in it; `keep_days: None` pins it.
    pub async fn keep(
        &self,
        pools: &Pools<'_>,
        author: &Author,
        source: Option<(&crate::ids::ConversationId, bool)>,
        keep_days: Option<i64>,
    ) -> Result<Memory, StoreError> {
        pools
            .create(&NewMemory {
                text: &self.text,
                pool: self.pool,
                subject: &self.subject,
                author,
                source_session: source.map(|(id, _)| id),
                outside: source.is_some_and(|(_, outside)| outside),
                local_only: self.local_only,
                keep_days,
            })
            .await
    }
}

/// Reads `remember`'s arguments and checks them against the people here; the error is
/// text the model can act on.
pub async fn check(
    system: &SystemStore,
    owner: &UserId,
    role: &Role,
    arguments: &Value,
) -> Result<Result<Checked, String>, StoreError> {
    let proposal: Proposal = match serde_json::from_value(arguments.clone()) {
        Ok(proposal) => proposal,
        Err(err) => {
            return Ok(Err(format!(
                "remember takes \"text\" (one sentence), \"pool\" (\"private\" or \"shared\") and \"subject\" \
                 ({{\"kind\": \"self\"}}, {{\"kind\": \"member\", \"id\": \"<user id>\"}} or {{\"kind\": \"instance\"}}): {err}"
            )));
        }
    };
    let text = match memories::check(&proposal.text) {
        Ok(text) => text.to_owned(),
        Err(why) => return Ok(Err(why)),
    };
    let subject = match proposal.subject {
        Subject::Member { id } if id == *owner => Subject::Own,
        other => other,
    };
    let mut local_only = role.privacy_tier == PrivacyTier::LocalOnly;
    let (about, about_another) = match &subject {
        Subject::Own => (users::find(system, owner).await?.map(|u| u.name), false),
        Subject::Instance => (None, false),
        Subject::Member { id } => {
            let Some(person) = users::find(system, id).await?.filter(|u| u.status == "active") else {
                return Ok(Err(format!(
                    "there is no member with the id {id:?}; use {{\"kind\": \"self\"}} for the person you are talking with"
                )));
            };
            let theirs = roles::of_active_user(system, id).await?;
            local_only |= theirs.is_some_and(|r| r.privacy_tier == PrivacyTier::LocalOnly);
            (Some(person.name), true)
        }
    };
    Ok(Ok(Checked { text, pool: proposal.pool, subject, about, about_another, local_only }))
}

/// What a card shows beside the arguments; none for a card not about a memory.
pub async fn card_shows(
    space: &PrivateStore,
    system: &SystemStore,
    meaning: &Meaning,
    owner: &UserId,
    role: &Role,
    card: &NewCard,
) -> Result<Option<String>, StoreError> {
    if card.tool != REMEMBER {
        return Ok(None);
    }
    let arguments = crate::agent::tools::parse_arguments(&card.arguments).unwrap_or_default();
    let kept_until = memories::days_from_now(role.memory_retention_days);
    let lines = match check(system, owner, role, &arguments).await? {
        Ok(checked) => {
            let pools = Pools { owner, space, system };
            let (found, by) = meaning.search(&MemoryCorpus { pools: &pools, only: None }, &checked.text, 3).await?;
            let enough = if by == By::Meaning { SIMILAR_MEANING } else { SIMILAR };
            let similar = found
                .into_iter()
                .filter(|m| m.score.is_some_and(|s| s >= enough) && may_edit(m, owner, false))
                .map(|m: Memory| SimilarMemory { id: m.id, text: m.text, pool: m.pool })
                .collect();
            MemoryCard {
                text: checked.text,
                pool: checked.pool,
                subject: checked.subject,
                about: checked.about,
                about_another: checked.about_another,
                agent: card.agent.clone(),
                kept_until,
                local_only: checked.local_only,
                similar,
                problem: None,
            }
        }
        Err(problem) => MemoryCard {
            text: arguments["text"].as_str().unwrap_or_default().to_owned(),
            pool: if arguments["pool"] == "shared" { Pool::Shared } else { Pool::Private },
            subject: Subject::Own,
            about: None,
            about_another: false,
            agent: card.agent.clone(),
            kept_until,
            local_only: false,
            similar: Vec::new(),
            problem: Some(problem),
        },
    };
    Ok(Some(serde_json::to_string(&lines).expect("memory card lines serialise")))
}

/// Whether `person` may change or erase a memory: a private one is its owner's (and a
/// person reads only their own private pool); a shared one its owner's, its subject's (to
/// erase) or an administrator's.
pub fn may_edit(memory: &Memory, person: &UserId, administrator: bool) -> bool {
    match memory.pool {
        Pool::Private => true,
        Pool::Shared => administrator || memory.owner == *person,
    }
}

/// Whether `person` may erase a memory: as [`may_edit`], and a shared memory about them.
pub fn may_erase(memory: &Memory, person: &UserId, administrator: bool) -> bool {
    may_edit(memory, person, administrator) || memory.subject.is_about(person, &memory.owner)
}

/// The person's setting that turns memory off (`"off"`): nothing is recalled and the
/// memory tools are not offered.
pub const SETTING: &str = "memory";

/// Whether the person has memory on (the default).
pub async fn enabled(space: &PrivateStore) -> Result<bool, StoreError> {
    Ok(space.setting(SETTING).await?.is_none_or(|v| v != "off"))
}

/// The most memories read into a turn's context.
pub const RECALLED: usize = 3;

/// How well a memory must match a message to be read into its turn, tuned on
/// `tests/data/recall_eval.json` (`tests/it/chat/meaning.rs` reports the figures). By
/// words (the share of the message's telling words it holds): at 0.25, 80% of paraphrases
/// recall their memory and 90% of unrelated messages recall nothing. By meaning (cosine):
/// the paraphrases' memories score 0.46–0.90 and the unrelated messages' best 0.13–0.41,
/// so 0.44 recalls for all of both; 0.5 would miss 3% of paraphrases, 0.4 recall for 10%
/// of the unrelated.
pub const RECALL_CUTOFF_WORDS: f64 = 0.25;
pub const RECALL_CUTOFF_MEANING: f64 = 0.44;

/// How near a memory must lie to a search to be listed at all (the page's search, the
/// `recall` tool): any shared telling word, or by meaning more than this cosine.
const SEARCH_FLOOR_MEANING: f64 = 0.2;

/// Whether a memory found by a search is worth listing.
pub fn relevant(by: By, memory: &Memory) -> bool {
    by == By::Words || memory.score.is_some_and(|s| s >= SEARCH_FLOOR_MEANING)
}

/// The cut-off for memories ranked `by`.
pub fn cutoff(by: By) -> f64 {
    match by {
        By::Meaning => RECALL_CUTOFF_MEANING,
        By::Words => RECALL_CUTOFF_WORDS,
    }
}

/// What a turn whose message is `message` reads into its context: the best matches above
/// the cut-off, at most [`RECALLED`]. `remote`: the context may reach a remote provider,
/// so memories kept on this machine are left out (before the best are taken, so they
/// leave room for others).
pub async fn for_turn(
    pools: &Pools<'_>,
    meaning: &Meaning,
    message: &str,
    remote: bool,
) -> Result<(Vec<Memory>, By), StoreError> {
    Ok(candidates(pools, meaning, message).await?.for_context(remote))
}

/// The memories that bear on a message before it is known where the turn's context may
/// go: a turn's start looks for them while it reads the rest.
pub async fn candidates(pools: &Pools<'_>, meaning: &Meaning, message: &str) -> Result<Candidates, StoreError> {
    let (mut found, by) = meaning.search(&MemoryCorpus { pools, only: None }, message, RECALLED * 4).await?;
    found.retain(|m| m.score.is_some_and(|s| s >= cutoff(by)));
    Ok(Candidates { found, by })
}

/// What [`candidates`] found, best first.
pub struct Candidates {
    found: Vec<Memory>,
    by: By,
}

impl Candidates {
    /// The memories read into a context that may reach a remote provider when `remote`
    /// (then those kept on this machine are left out), and how they were found.
    pub fn for_context(mut self, remote: bool) -> (Vec<Memory>, By) {
        self.found.retain(|m| !(remote && m.local_only));
        self.found.truncate(RECALLED);
        (self.found, self.by)
    }
}

/// A recall made for a turn before its first request, as the history records it.
pub struct Recall {
    pub call: crate::providers::ToolCall,
    pub result: String,
    /// A recalled memory is outside content for this person ([`outside_for`], §8.4).
    pub outside: bool,
}

/// The memories bearing on a person's message, of those [`candidates`] found for it, as a
/// `recall` call and its result; none when nothing is relevant. `remote`: the context may
/// reach a remote provider, so memories kept on this machine are left out.
pub fn recall_call(candidates: Candidates, owner: &UserId, message: &str, remote: bool) -> Option<Recall> {
    let (found, _) = candidates.for_context(remote);
    if found.is_empty() {
        return None;
    }
    let call = crate::providers::ToolCall {
        id: crate::ids::CallId::generate().to_string(),
        name: "recall".into(),
        arguments: serde_json::json!({ "query": message }).to_string(),
    };
    let outside = found.iter().any(|m| outside_for(m, owner));
    Some(Recall { call, result: recall_lines(&found), outside })
}

/// Whether a memory read by `reader` is outside content for them (§8.4): it came from a
/// conversation that held some, or someone else put it in the shared pool — another
/// person's words steer this person's model no more than a web page's may.
pub fn outside_for(memory: &Memory, reader: &UserId) -> bool {
    memory.outside || memory.owner != *reader
}

/// What `recall` returns: one memory a line, with its id, pool and sentence.
pub fn recall_lines(found: &[Memory]) -> String {
    found
        .iter()
        .map(|m| {
            let pool = if m.pool == Pool::Shared { "shared" } else { "private" };
            format!("{} ({pool}): {}", m.id, m.text)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Appends a turn's recall to its history after the person's message; the last row's id.
pub async fn record_recall(
    space: &PrivateStore,
    chat_id: &crate::ids::ConversationId,
    turn_id: &crate::ids::TurnId,
    recall: &Recall,
) -> Result<i64, StoreError> {
    use crate::store::chat::{self, MessageRole, MessageStatus, NewMessage};
    let asked = NewMessage {
        session_id: chat_id,
        turn_id,
        role: MessageRole::Assistant,
        text: "",
        status: MessageStatus::ToolCalls,
        tool_calls: Some(crate::agent::context::calls_to_json(std::slice::from_ref(&recall.call))),
        ..NewMessage::default()
    };
    let answered = NewMessage {
        session_id: chat_id,
        turn_id,
        role: MessageRole::Tool,
        text: &recall.result,
        status: MessageStatus::Ok,
        tool_call_id: Some(&recall.call.id),
        tool_name: Some("recall"),
        ..NewMessage::default()
    };
    let ids = chat::append(space, &[asked, answered]).await?;
    if recall.outside {
        chat::mark_outside_content(space, chat_id).await?;
    }
    Ok(ids.last().copied().unwrap_or_default())
}

/// How often an unlocked person's memories are swept for expired ones.
pub const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// At unlock and hourly after: erasures queued while the file was locked are applied (a
/// memory's sentence redacted, everything about a removed person erased), then expired
/// memories are deleted from both pools. Returns how many memories went.
pub async fn upkeep(system: &SystemStore, owner: &UserId, space: &PrivateStore) -> Result<u64, StoreError> {
    let pools = Pools { owner, space, system };
    let mut gone = 0;
    for what in memories::queue::waiting(system, owner).await? {
        if let Some(about) = what.strip_prefix("member:") {
            let Some(id) = UserId::parse(about) else { continue };
            let subject = Subject::Member { id };
            let erased = pools.erase_about(&subject, false).await?;
            let sentences: Vec<String> = erased.iter().map(|m| m.text.clone()).collect();
            memories::redact(space, &sentences).await?;
            gone += erased.len() as u64;
        } else if let Some(sentence) = memories::written_here(space, &MemoryId::new(what.clone())).await? {
            memories::redact(space, &[sentence]).await?;
        }
        memories::queue::done(system, owner, &what).await?;
    }
    Ok(gone + pools.sweep().await?)
}

/// Erases everything about `subject` that `person` may erase (their private pool, and
/// shared memories they own, are about, or as an administrator any), redacts the
/// sentences in their own file, and queues the redaction for each other owner's file.
/// Returns how many memories were erased and how many redactions were queued.
pub async fn erase_about(
    system: &SystemStore,
    person: &UserId,
    space: &PrivateStore,
    subject: &Subject,
    administrator: bool,
) -> Result<(usize, usize), StoreError> {
    let pools = Pools { owner: person, space, system };
    let erased = pools.erase_about(subject, administrator).await?;
    let sentences: Vec<String> = erased.iter().map(|m| m.text.clone()).collect();
    memories::redact(space, &sentences).await?;
    let mut queued = 0;
    for memory in erased.iter().filter(|m| m.pool == Pool::Shared && m.owner != *person) {
        memories::queue::redaction(system, &memory.owner, &memory.id).await?;
        queued += 1;
    }
    Ok((erased.len(), queued))
}

/// Erases one memory this person may erase and redacts it where it was written; the
/// redaction is queued for another owner's file.
pub async fn erase_one(
    system: &SystemStore,
    person: &UserId,
    space: &PrivateStore,
    memory: &Memory,
) -> Result<(), StoreError> {
    let pools = Pools { owner: person, space, system };
    pools.delete(&memory.id).await?;
    memories::redact(space, std::slice::from_ref(&memory.text)).await?;
    if memory.pool == Pool::Shared && memory.owner != *person {
        memories::queue::redaction(system, &memory.owner, &memory.id).await?;
    }
    Ok(())
}
