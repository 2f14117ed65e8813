//! The shared database `system.db`: plain SQLite (nothing private lives here, §4),
//! WAL, full fsync, foreign keys on, migrated from `database/migrations/system/` at start.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::sqlite::SqlitePool;

use crate::error::StartError;

static MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("database/migrations/system");

/// A handle to the shared database; cheap to clone.
#[derive(Debug, Clone)]
pub struct SystemStore {
    pool: SqlitePool,
    /// Counts committed changes to people and roles, so a cache of what someone's role
    /// allows can tell it is stale without a query.
    people_generation: Arc<AtomicU64>,
    /// The shared pool's memory vectors as last read (recall by meaning).
    vectors: Arc<super::memories::VectorCache>,
}

impl SystemStore {
    /// Opens (creating if needed) and migrates the shared database.
    pub async fn open(path: &Path) -> Result<Self, StartError> {
        let fail = |source| StartError::Database { path: path.to_path_buf(), source };
        // secure_delete: an erased shared memory's pages are zeroed, not left for a later write.
        let options = super::connect_options(path, true).map_err(fail)?.pragma("secure_delete", "ON");
        let pool = super::pool_options().max_connections(4).connect_with(options).await.map_err(fail)?;
        MIGRATIONS.run(&pool).await.map_err(|source| StartError::Migrate { path: path.to_path_buf(), source })?;
        Ok(Self { pool, people_generation: Arc::default(), vectors: Arc::default() })
    }

    /// How many changes to people and roles have been committed since start.
    pub fn people_generation(&self) -> u64 {
        self.people_generation.load(Ordering::Acquire)
    }

    /// Called by every function that changes people or roles, once its change committed.
    pub(crate) fn people_changed(&self) {
        self.people_generation.fetch_add(1, Ordering::AcqRel);
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The shared pool's memory vectors as last read (recall by meaning).
    pub fn vectors(&self) -> &super::memories::VectorCache {
        &self.vectors
    }

    /// Waits for in-flight statements, then closes every connection (checkpointing the WAL).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}
