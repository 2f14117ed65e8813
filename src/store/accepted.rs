//! The record of what a person accepted (§3, `agent::consent`), in their encrypted file.

use super::private::PrivateStore;
use super::snapshots::Touched;
use super::{StoreError, timestamp};
use crate::agent::consent::Record;

/// The person's record; none before their first one is written.
pub async fn get(store: &PrivateStore) -> Result<Option<Record>, StoreError> {
    let text: Option<String> =
        sqlx::query_scalar("SELECT record FROM accepted WHERE id = 1").fetch_optional(store.pool()).await?;
    // A record this build cannot read accepted nothing: the person is asked again about
    // everything in force, which is the safe side.
    Ok(text.map(|text| serde_json::from_str(&text).unwrap_or_else(|_| Record::nothing_accepted())))
}

/// Replaces the person's record.
pub async fn put(store: &PrivateStore, record: &Record) -> Result<(), StoreError> {
    let _writing = store.writing(Touched::Nothing);
    let text = serde_json::to_string(record).expect("a record serialises");
    sqlx::query(
        "INSERT INTO accepted (id, record, updated_at) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at",
    )
    .bind(text)
    .bind(timestamp())
    .execute(store.pool())
    .await?;
    Ok(())
}
