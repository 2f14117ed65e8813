//! The instance row: one per data directory, made by the first migration.

use super::{StoreError, SystemStore};

/// True until the first administrator has been created (§1).
pub async fn setup_required(store: &SystemStore) -> Result<bool, StoreError> {
    let completed: Option<String> = sqlx::query_scalar("SELECT setup_completed_at FROM instance WHERE id = 1")
        .fetch_one(store.pool())
        .await?;
    Ok(completed.is_none())
}
