//! Recall by meaning (docs/architecture.md §10): memories ranked by how near their
//! sentence's vector lies to the query's, both made on this machine by the embedding model
//! an administrator added (a local model of kind `embedding`, run in the built-in model's
//! worker). Without one — none added, a build without the engine, a processor it cannot
//! run on, or the model failing — ranking falls back to full-text search, and every answer
//! says which it used ([`By`]), so the page can say so.
//!
//! Vectors are made when a memory is written and, for any still missing (written before
//! the model was added, by another model, or in another person's upkeep), before a search
//! and at each upkeep. A vector lives beside its memory in the same file and goes with it.

use serde::Serialize;

use crate::providers::local::LocalModels;
use crate::store::StoreError;
use crate::store::local_models::{self, LocalModel};
use crate::store::memories::{Memory, Pool, Pools, Unembedded};
use crate::store::system::SystemStore;

/// How memories were ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "RecallBy")]
pub enum By {
    /// By meaning: the embedding model's vectors.
    Meaning,
    /// By words: full-text search, with no embedding model to use.
    Words,
}

/// How many memories are embedded per request to the worker.
const BATCH: usize = 32;
/// The most memories embedded before one search: more wait for the next upkeep.
const BEFORE_SEARCH: usize = 256;

/// The embedding model, if there is one this build can run; cheap to clone.
#[derive(Clone)]
pub struct Meaning {
    system: SystemStore,
    local: LocalModels,
}

impl Meaning {
    pub fn new(system: SystemStore, local: LocalModels) -> Self {
        Self { system, local }
    }

    /// The embedding model in use, if one was added and can run here.
    async fn model(&self) -> Option<LocalModel> {
        if self.local.unavailable().is_some() {
            return None;
        }
        match local_models::embedder(&self.system).await {
            Ok(model) => model,
            Err(err) => {
                tracing::warn!(error = %err, "could not read which embedding model to use");
                None
            }
        }
    }

    /// The embedding model's name, while search goes by meaning.
    pub async fn model_name(&self) -> Option<String> {
        self.model().await.map(|model| model.name)
    }

    /// Vectors for `texts` from `model`; `None` (logged) when the model fails.
    async fn embed(&self, model: &LocalModel, texts: Vec<String>) -> Option<Vec<Vec<f32>>> {
        let count = texts.len();
        match self.local.embed(&model.id, texts).await {
            Ok(vectors) if vectors.len() == count => Some(vectors),
            Ok(vectors) => {
                tracing::warn!(model = %model.id, asked = count, got = vectors.len(), "the embedding model miscounted");
                None
            }
            Err(err) => {
                tracing::warn!(model = %model.id, error = %err, "the embedding model failed; ranking by words");
                None
            }
        }
    }

    /// Makes the missing vectors of up to `most` memories in these pools; how many were made.
    async fn fill(&self, pools: &Pools<'_>, model: &LocalModel, most: usize) -> Result<usize, StoreError> {
        let mut made = 0;
        while made < most {
            let missing: Vec<Unembedded> = pools.unembedded(&model.sha256, BATCH.min(most - made)).await?;
            if missing.is_empty() {
                break;
            }
            let Some(vectors) = self.embed(model, missing.iter().map(|m| m.text.clone()).collect()).await else {
                break;
            };
            for (memory, vector) in missing.iter().zip(&vectors) {
                pools.set_vector(memory, &model.sha256, vector).await?;
            }
            made += missing.len();
        }
        Ok(made)
    }

    /// Makes every missing vector in these pools (at unlock and hourly); how many.
    pub async fn index(&self, pools: &Pools<'_>) -> Result<usize, StoreError> {
        match self.model().await {
            Some(model) => self.fill(pools, &model, usize::MAX).await,
            None => Ok(0),
        }
    }

    /// The memories best matching `query`, best first, each with its score, and how they
    /// were ranked. By meaning the score is the cosine of the two vectors; by words, the
    /// share of the query's telling words the memory holds.
    pub async fn search(
        &self,
        pools: &Pools<'_>,
        query: &str,
        only: Option<Pool>,
        limit: usize,
    ) -> Result<(Vec<Memory>, By), StoreError> {
        if let Some(model) = self.model().await {
            self.fill(pools, &model, BEFORE_SEARCH).await?;
            if let Some(vector) = self.embed(&model, vec![query.to_owned()]).await.and_then(|mut v| v.pop()) {
                return Ok((pools.nearest(&model.sha256, &vector, only, limit).await?, By::Meaning));
            }
        }
        Ok((pools.search(query, only, limit).await?, By::Words))
    }
}
