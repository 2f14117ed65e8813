//! The instance row: one per data directory, made by the first migration.

use super::{StoreError, SystemStore};

/// True until the first administrator has been created (§1).
pub async fn setup_required(store: &SystemStore) -> Result<bool, StoreError> {
    let completed: Option<String> =
        sqlx::query_scalar("SELECT setup_completed_at FROM instance WHERE id = 1").fetch_one(store.pool()).await?;
    Ok(completed.is_none())
}

/// This instance's random id, made by the first migration.
pub async fn instance_id(store: &SystemStore) -> Result<String, StoreError> {
    Ok(sqlx::query_scalar("SELECT instance_id FROM instance WHERE id = 1").fetch_one(store.pool()).await?)
}

/// Where the instance key was put, and the value sealed under it; `None` before the
/// first key was made.
pub async fn secret_backend(store: &SystemStore) -> Result<Option<(String, Vec<u8>)>, StoreError> {
    let row: (Option<String>, Option<Vec<u8>>) =
        sqlx::query_as("SELECT secret_backend, secret_check FROM instance WHERE id = 1")
            .fetch_one(store.pool())
            .await?;
    Ok(match row {
        (Some(backend), Some(check)) => Some((backend, check)),
        _ => None,
    })
}

/// Records the backend once; a later call cannot replace it.
pub async fn record_secret_backend(store: &SystemStore, backend: &str, check: &[u8]) -> Result<(), StoreError> {
    sqlx::query("UPDATE instance SET secret_backend = ?, secret_check = ? WHERE id = 1 AND secret_backend IS NULL")
        .bind(backend)
        .bind(check)
        .execute(store.pool())
        .await?;
    Ok(())
}
