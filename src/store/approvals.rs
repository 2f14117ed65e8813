//! The approval gate's records in a person's encrypted file (§8.4, §8.5): the cards that
//! wait on them, with the exact arguments each one binds, and their own "always allow
//! this for me" rules. Nothing here reaches the shared database.

use crate::ids::{CallId, CardId, ConversationId, TurnId};
use serde::Serialize;

use super::private::PrivateStore;
use super::snapshots::Touched;
use super::{StoreError, timestamp};
use crate::rules::{ArgsPattern, Effect, Rule};

/// Where a card is: the `cards.state` column, and the words the API shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, sqlx::Type, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum CardState {
    /// Waiting for the person.
    Pending,
    Allowed,
    Denied,
    /// A question card the person answered.
    Answered,
    /// Its turn ended before anyone decided (stopped, or moved on from).
    Withdrawn,
}

/// What a card asks of the person: the `cards.kind` column, and the words the API shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, sqlx::Type)]
#[serde(rename_all = "snake_case")]
#[sqlx(rename_all = "snake_case")]
pub enum CardKind {
    /// Whether a tool call may run: allowed or denied.
    Approval,
    /// A question the assistant asked (`clarify`): answered.
    Question,
}

/// A card as stored.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct Card {
    pub id: CardId,
    pub kind: CardKind,
    pub session_id: ConversationId,
    pub turn_id: TurnId,
    pub call_id: CallId,
    pub tool: String,
    /// The arguments exactly as the model sent them (JSON text).
    pub arguments: String,
    pub arguments_hash: String,
    pub agent: String,
    pub why: String,
    pub reason: String,
    pub state: CardState,
    /// The person's answer to a question card.
    pub answer: Option<String>,
    pub created_at: String,
    pub decided_at: Option<String>,
    /// What the card showed beyond the arguments (JSON), fixed when it was made.
    pub shows: Option<String>,
    /// Who decided it when not the person themselves: their supervisor, by name (§6.2).
    pub decided_by: Option<String>,
}

/// A card about to be created.
#[derive(Debug, Clone)]
pub struct NewCard {
    pub id: CardId,
    pub kind: CardKind,
    pub session_id: ConversationId,
    pub turn_id: TurnId,
    pub call_id: CallId,
    pub tool: String,
    pub arguments: String,
    pub arguments_hash: String,
    pub agent: String,
    pub why: String,
    pub reason: String,
    /// What the card shows beyond the arguments (JSON): a `remember` card's lines.
    pub shows: Option<String>,
}

const CARD_SELECT: &str = "SELECT id, kind, session_id, turn_id, call_id, tool, arguments, arguments_hash, agent, \
     why, reason, state, answer, created_at, decided_at, shows, decided_by FROM cards";

/// Creates approval cards and parks their turn, in one transaction: once this returns the
/// cards survive a crash, and the turn waits for them (§8.1).
pub async fn park(store: &PrivateStore, turn_id: &str, cards: &[NewCard]) -> Result<(), StoreError> {
    // A park with no cards still moves its turn's state: which conversation's is unknown.
    let _writing = store.writing(match Touched::conversations(cards.iter().map(|c| c.session_id.as_str())) {
        Touched::Nothing => Touched::Unknown,
        touched => touched,
    });
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    for card in cards {
        sqlx::query(
            "INSERT INTO cards (id, kind, session_id, turn_id, call_id, tool, arguments, arguments_hash, agent, why,
                                reason, state, created_at, shows)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)
             ON CONFLICT (call_id) DO NOTHING",
        )
        .bind(&card.id)
        .bind(card.kind)
        .bind(&card.session_id)
        .bind(&card.turn_id)
        .bind(&card.call_id)
        .bind(&card.tool)
        .bind(&card.arguments)
        .bind(&card.arguments_hash)
        .bind(&card.agent)
        .bind(&card.why)
        .bind(&card.reason)
        .bind(&now)
        .bind(&card.shows)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query("UPDATE turns SET state = 'parked' WHERE id = ? AND state = 'running'")
        .bind(turn_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// The cards waiting on the person, oldest first: pending cards of parked turns (a turn
/// ended by a stop is ended before its cards are withdrawn).
pub async fn pending(store: &PrivateStore) -> Result<Vec<Card>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!(
        "{CARD_SELECT} WHERE state = 'pending' AND turn_id IN (SELECT id FROM turns WHERE state = 'parked')
         ORDER BY created_at, rowid"
    ));
    Ok(sqlx::query_as(sql).fetch_all(store.pool()).await?)
}

/// Every card, decided or not, oldest first: for the person's export.
pub async fn all(store: &PrivateStore) -> Result<Vec<Card>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{CARD_SELECT} ORDER BY created_at, rowid"));
    Ok(sqlx::query_as(sql).fetch_all(store.pool()).await?)
}

pub async fn get(store: &PrivateStore, id: &str) -> Result<Option<Card>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{CARD_SELECT} WHERE id = ?"));
    Ok(sqlx::query_as(sql).bind(id).fetch_optional(store.pool()).await?)
}

/// The cards of one turn, by the call they are about.
pub async fn of_turn(store: &PrivateStore, turn_id: &str) -> Result<Vec<Card>, StoreError> {
    let sql = sqlx::AssertSqlSafe(format!("{CARD_SELECT} WHERE turn_id = ? ORDER BY created_at, rowid"));
    Ok(sqlx::query_as(sql).bind(turn_id).fetch_all(store.pool()).await?)
}

/// Records a person's decision on a pending card, with the personal rule it adds if any,
/// in one transaction. Returns how many cards of the same turn still wait.
pub async fn decide(
    store: &PrivateStore,
    id: &str,
    allowed: bool,
    always: Option<&Rule>,
    decided_by: Option<&str>,
) -> Result<i64, StoreError> {
    let _writing = store.writing(Touched::Nothing);
    let now = timestamp();
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let state = if allowed { CardState::Allowed } else { CardState::Denied };
    let turn: Option<String> = sqlx::query_scalar(
        "UPDATE cards SET state = ?, decided_at = ?, decided_by = ?
         WHERE id = ? AND kind = 'approval' AND state = 'pending' RETURNING turn_id",
    )
    .bind(state)
    .bind(&now)
    .bind(decided_by)
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(turn) = turn else { return Err(StoreError::WrongState("this card was already decided")) };
    if let Some(rule) = always {
        insert_rule(&mut tx, rule, &now).await?;
    }
    let waiting = still_waiting(&mut tx, &turn).await?;
    tx.commit().await?;
    Ok(waiting)
}

/// Records a person's answer to a pending question card. Returns how many cards of the
/// same turn still wait.
pub async fn answer(store: &PrivateStore, id: &str, text: &str) -> Result<i64, StoreError> {
    let _writing = store.writing(Touched::Nothing);
    let mut tx = store.pool().begin_with("BEGIN IMMEDIATE").await?;
    let turn: Option<String> = sqlx::query_scalar(
        "UPDATE cards SET state = 'answered', answer = ?, decided_at = ?
         WHERE id = ? AND kind = 'question' AND state = 'pending' RETURNING turn_id",
    )
    .bind(text)
    .bind(timestamp())
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(turn) = turn else { return Err(StoreError::WrongState("this question was already answered")) };
    let waiting = still_waiting(&mut tx, &turn).await?;
    tx.commit().await?;
    Ok(waiting)
}

/// How many cards of a turn still wait on the person.
async fn still_waiting(tx: &mut sqlx::SqliteConnection, turn_id: &str) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM cards WHERE turn_id = ? AND state = 'pending'")
        .bind(turn_id)
        .fetch_one(tx)
        .await?)
}

/// Withdraws the pending cards of a turn that will not go on (the person stopped it or
/// moved on); returns how many were withdrawn.
pub async fn withdraw(store: &PrivateStore, turn_id: &str) -> Result<u64, StoreError> {
    let _writing = store.writing(Touched::Nothing);
    Ok(sqlx::query("UPDATE cards SET state = 'withdrawn', decided_at = ? WHERE turn_id = ? AND state = 'pending'")
        .bind(timestamp())
        .bind(turn_id)
        .execute(store.pool())
        .await?
        .rows_affected())
}

/// Turns of a conversation parked on cards.
pub async fn parked_in(store: &PrivateStore, session_id: &str) -> Result<Vec<TurnId>, StoreError> {
    Ok(sqlx::query_scalar("SELECT id FROM turns WHERE session_id = ? AND state = 'parked' ORDER BY started_at")
        .bind(session_id)
        .fetch_all(store.pool())
        .await?)
}

/// Parked turns no card holds any more, with their conversation: a decision whose resume
/// was cut off by a crash. They go on at the owner's next unlock.
pub async fn ready_to_resume(store: &PrivateStore) -> Result<Vec<(TurnId, ConversationId)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT t.id, t.session_id FROM turns t
         WHERE t.state = 'parked'
           AND NOT EXISTS (SELECT 1 FROM cards c WHERE c.turn_id = t.id AND c.state = 'pending')",
    )
    .fetch_all(store.pool())
    .await?)
}

/// Moves a parked turn back to running; false when it was not parked (another window's
/// decision resumed it first).
pub async fn unpark(store: &PrivateStore, turn_id: &str) -> Result<bool, StoreError> {
    let mut writing = store.writing(Touched::Unknown);
    let moved: Option<String> =
        sqlx::query_scalar("UPDATE turns SET state = 'running' WHERE id = ? AND state = 'parked' RETURNING session_id")
            .bind(turn_id)
            .fetch_optional(store.pool())
            .await?;
    writing.touched(moved.as_deref().map_or(Touched::Nothing, Touched::conversation));
    Ok(moved.is_some())
}

/// The person's own rules.
pub async fn personal_rules(store: &PrivateStore) -> Result<Vec<Rule>, StoreError> {
    let rows: Vec<(String, Option<String>, String, i64)> =
        sqlx::query_as("SELECT tool, args, effect, priority FROM personal_rules ORDER BY id")
            .fetch_all(store.pool())
            .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(tool, args, effect, priority)| {
            let effect = serde_json::from_value(serde_json::Value::String(effect)).ok()?;
            Some(Rule { tool, args: args.map(ArgsPattern::from_stored), role: None, effect, priority })
        })
        .collect())
}

/// One of a person's own "always allow" rules, as their My data page lists it.
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow, ts_rs::TS)]
pub struct PersonalRule {
    pub id: i64,
    pub tool: String,
    pub effect: String,
    pub created_at: String,
}

/// The person's own rules, oldest first.
pub async fn list_personal_rules(store: &PrivateStore) -> Result<Vec<PersonalRule>, StoreError> {
    Ok(sqlx::query_as("SELECT id, tool, effect, created_at FROM personal_rules ORDER BY id")
        .fetch_all(store.pool())
        .await?)
}

/// Takes one of the person's own rules back; whether there was one with that id.
pub async fn delete_personal_rule(store: &PrivateStore, id: i64) -> Result<bool, StoreError> {
    let done = sqlx::query("DELETE FROM personal_rules WHERE id = ?").bind(id).execute(store.pool()).await?;
    Ok(done.rows_affected() == 1)
}

async fn insert_rule(tx: &mut sqlx::SqliteConnection, rule: &Rule, now: &str) -> Result<(), StoreError> {
    let effect = match rule.effect {
        Effect::Allow => "allow",
        Effect::Deny => "deny",
        Effect::Require => "require",
    };
    // The same rule twice would change nothing: kept once.
    sqlx::query(
        "INSERT INTO personal_rules (tool, args, effect, priority, created_at)
         SELECT ?1, ?2, ?3, ?4, ?5
         WHERE NOT EXISTS (SELECT 1 FROM personal_rules WHERE tool = ?1 AND args IS ?2 AND effect = ?3)",
    )
    .bind(&rule.tool)
    .bind(rule.args.as_ref().map(ArgsPattern::to_stored))
    .bind(effect)
    .bind(rule.priority)
    .bind(now)
    .execute(tx)
    .await?;
    Ok(())
}
