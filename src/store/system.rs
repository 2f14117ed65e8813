//! The shared database `system.db`: plain SQLite (nothing private lives here, §4),
//! WAL, full fsync, foreign keys on, migrated from `database/migrations/system/` at start.

use std::path::Path;

use sqlx::sqlite::{SqlitePool, SqlitePoolOptions};

use crate::error::StartError;

static MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("database/migrations/system");

/// A handle to the shared database; cheap to clone.
#[derive(Debug, Clone)]
pub struct SystemStore {
    pool: SqlitePool,
}

impl SystemStore {
    /// Opens (creating if needed) and migrates the shared database.
    pub async fn open(path: &Path) -> Result<Self, StartError> {
        let fail = |source| StartError::Database { path: path.to_path_buf(), source };
        let options = super::connect_options(path, true).map_err(fail)?;
        let pool = SqlitePoolOptions::new().max_connections(4).connect_with(options).await.map_err(fail)?;
        MIGRATIONS.run(&pool).await.map_err(|source| StartError::Migrate { path: path.to_path_buf(), source })?;
        Ok(Self { pool })
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Waits for in-flight statements, then closes every connection (checkpointing the WAL).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}
