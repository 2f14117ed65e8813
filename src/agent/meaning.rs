//! Search by meaning (docs/architecture.md §10, §12.2): memories, and passages of
//! documents, ranked by how near their vectors lie to the query's, both made on this
//! machine by the embedding model an administrator added (a local model of kind
//! `embedding`, run in the built-in model's worker). Without one — none added, a build
//! without the engine, a processor it cannot run on, or the model failing — ranking falls
//! back to full-text search, and every answer says which it used ([`By`]), so the page can
//! say so.
//!
//! One embedder and one ranking code for every body of text: a [`Corpus`] says how its
//! texts wait for vectors, take them, and are found by vector or by words; [`Meaning`] makes
//! the vectors and ranks. [`Meaning::fused`] puts the two rankings together, which
//! documents use: what lies near by meaning first, then what only the words found (a rare
//! name, a code, a word the model reads past). The evaluation in
//! `tests/it/chat/document_meaning.rs` measures it against either alone; reciprocal rank
//! fusion, tried first, ranked below meaning alone there (mean reciprocal rank 0.893
//! against 0.917): a page sharing one common word with a question rose over the answer.
//!
//! Vectors are made when a text is written and, for any still missing (written before
//! the model was added, by another model, or in another person's upkeep), before a search
//! and at each upkeep. A vector lives beside its text in the same file and goes with it.

use std::future::Future;

use serde::Serialize;

use crate::providers::local::LocalModels;
use crate::store::StoreError;
use crate::store::documents::{Hit, Passage, Shelf};
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

/// How many texts are embedded per request to the worker.
const BATCH: usize = 32;
/// The most texts embedded before one search: more wait for the next upkeep.
const BEFORE_SEARCH: usize = 256;

/// A body of texts search can rank by meaning and by words.
pub trait Corpus: Sync {
    /// A text waiting for its vector.
    type Pending: Send + Sync;
    /// What a search finds.
    type Found: Send;

    fn pending_text(pending: &Self::Pending) -> &str;
    /// How near by meaning (a cosine) a text must lie to be found at all when words may
    /// find it too.
    const FLOOR: f64;

    /// What makes two found things one, when two rankings are merged.
    fn key(found: &Self::Found) -> String;
    fn score(found: &Self::Found) -> f64;
    /// Gives a found thing its score in the merged ranking.
    fn rescore(found: &mut Self::Found, score: f64);

    /// Up to `limit` texts with no vector from `model` (the embedding model's checksum).
    fn unembedded(
        &self,
        model: &str,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<Self::Pending>, StoreError>> + Send;
    fn set_vector(
        &self,
        pending: &Self::Pending,
        model: &str,
        vector: &[f32],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// The nearest to `query`, a unit vector from `model`, best first.
    fn nearest(
        &self,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> impl Future<Output = Result<Vec<Self::Found>, StoreError>> + Send;
    /// The best matches of `query` by its words, best first.
    fn by_words(&self, query: &str, limit: usize) -> impl Future<Output = Result<Vec<Self::Found>, StoreError>> + Send;
}

/// The memories of a person's pools, or of one of them.
pub struct MemoryCorpus<'a> {
    pub pools: &'a Pools<'a>,
    pub only: Option<Pool>,
}

impl Corpus for MemoryCorpus<'_> {
    type Pending = Unembedded;
    type Found = Memory;

    fn pending_text(pending: &Unembedded) -> &str {
        &pending.text
    }

    const FLOOR: f64 = 0.2;

    fn key(found: &Memory) -> String {
        found.id.to_string()
    }

    fn score(found: &Memory) -> f64 {
        found.score.unwrap_or(0.0)
    }

    fn rescore(found: &mut Memory, score: f64) {
        found.score = Some(score);
    }

    async fn unembedded(&self, model: &str, limit: usize) -> Result<Vec<Unembedded>, StoreError> {
        self.pools.unembedded(model, limit).await
    }

    async fn set_vector(&self, pending: &Unembedded, model: &str, vector: &[f32]) -> Result<(), StoreError> {
        self.pools.set_vector(pending, model, vector).await
    }

    async fn nearest(&self, model: &str, query: &[f32], limit: usize) -> Result<Vec<Memory>, StoreError> {
        self.pools.nearest(model, query, self.only, limit).await
    }

    async fn by_words(&self, query: &str, limit: usize) -> Result<Vec<Memory>, StoreError> {
        self.pools.search(query, self.only, limit).await
    }
}

/// The pages of documents on some shelves (a person's own, the shared pool's), found by
/// their passages' vectors and by their words.
pub struct DocumentCorpus<'a> {
    pub shelves: Vec<Shelf<'a>>,
}

impl Corpus for DocumentCorpus<'_> {
    type Pending = (usize, Passage);
    type Found = Hit;

    fn pending_text(pending: &(usize, Passage)) -> &str {
        &pending.1.text
    }

    /// Measured on the evaluation set: the right page's passage lies at 0.34 or more from
    /// a question it answers, the nearest page to an unrelated question at 0.25 or less.
    const FLOOR: f64 = 0.3;

    fn key(found: &Hit) -> String {
        format!("{}#{}", found.document, found.page)
    }

    fn score(found: &Hit) -> f64 {
        found.score
    }

    fn rescore(found: &mut Hit, score: f64) {
        found.score = score;
    }

    async fn unembedded(&self, model: &str, limit: usize) -> Result<Vec<(usize, Passage)>, StoreError> {
        let mut found = Vec::new();
        for (index, shelf) in self.shelves.iter().enumerate() {
            let left = limit.saturating_sub(found.len());
            if left == 0 {
                break;
            }
            found.extend(shelf.unembedded(model, left).await?.into_iter().map(|p| (index, p)));
        }
        Ok(found)
    }

    async fn set_vector(&self, pending: &(usize, Passage), model: &str, vector: &[f32]) -> Result<(), StoreError> {
        self.shelves[pending.0].set_vector(&pending.1, model, vector).await
    }

    async fn nearest(&self, model: &str, query: &[f32], limit: usize) -> Result<Vec<Hit>, StoreError> {
        let mut hits = Vec::new();
        for shelf in &self.shelves {
            hits.extend(shelf.nearest(model, query, limit).await?);
        }
        // Cosines of one model compare across shelves.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        hits.truncate(limit);
        Ok(hits)
    }

    async fn by_words(&self, query: &str, limit: usize) -> Result<Vec<Hit>, StoreError> {
        let mut lists = Vec::with_capacity(self.shelves.len());
        for shelf in &self.shelves {
            lists.push(shelf.search_any(query, u32::try_from(limit).unwrap_or(u32::MAX)).await?);
        }
        Ok(merge_by_best(lists, limit))
    }
}

/// Hits of separate full-text indexes as one list, best first. Two indexes' scores are not
/// on one scale, so each list's are taken relative to its best.
pub fn merge_by_best(lists: Vec<Vec<Hit>>, limit: usize) -> Vec<Hit> {
    let mut all: Vec<(f64, Hit)> = Vec::new();
    for hits in lists {
        let best = hits.iter().map(|h| h.score).fold(f64::MIN_POSITIVE, f64::max);
        all.extend(hits.into_iter().map(|hit| (hit.score / best, hit)));
    }
    all.sort_by(|a, b| b.0.total_cmp(&a.0));
    all.into_iter().take(limit).map(|(_, hit)| hit).collect()
}

/// The two rankings of one corpus as one: what lies near by meaning (no nearer than the
/// corpus's floor), best first, then what only the words found, in their order, scored
/// below the floor. Something both found keeps the words' copy (its snippet marks the
/// words) with the meaning's score.
fn layered<C: Corpus>(near: Vec<C::Found>, worded: Vec<C::Found>, limit: usize) -> Vec<C::Found> {
    let best = worded.iter().map(C::score).fold(f64::MIN_POSITIVE, f64::max);
    let mut worded: Vec<Option<C::Found>> = worded.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(limit);
    for found in near.into_iter().filter(|f| C::score(f) >= C::FLOOR) {
        let key = C::key(&found);
        let copy = worded.iter_mut().find(|w| w.as_ref().is_some_and(|w| C::key(w) == key)).and_then(Option::take);
        out.push(match copy {
            Some(mut copy) => {
                C::rescore(&mut copy, C::score(&found));
                copy
            }
            None => found,
        });
    }
    for mut found in worded.into_iter().flatten() {
        let relative = C::score(&found) / best;
        C::rescore(&mut found, C::FLOOR * relative.clamp(0.0, 1.0) * 0.999);
        out.push(found);
    }
    out.truncate(limit);
    out
}

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

    /// Makes the missing vectors of up to `most` texts of `corpus`; how many were made.
    async fn fill<C: Corpus>(&self, corpus: &C, model: &LocalModel, most: usize) -> Result<usize, StoreError> {
        let mut made = 0;
        while made < most {
            let missing = corpus.unembedded(&model.sha256, BATCH.min(most - made)).await?;
            if missing.is_empty() {
                break;
            }
            let texts = missing.iter().map(|m| C::pending_text(m).to_owned()).collect();
            let Some(vectors) = self.embed(model, texts).await else { break };
            for (pending, vector) in missing.iter().zip(&vectors) {
                corpus.set_vector(pending, &model.sha256, vector).await?;
            }
            made += missing.len();
        }
        Ok(made)
    }

    /// Makes every missing vector of `corpus` (at unlock, hourly, after a document is
    /// read); how many.
    pub async fn index<C: Corpus>(&self, corpus: &C) -> Result<usize, StoreError> {
        match self.model().await {
            Some(model) => self.fill(corpus, &model, usize::MAX).await,
            None => Ok(0),
        }
    }

    /// The query's vector, once what is missing of `corpus` has been embedded; `None` with
    /// no embedding model to use.
    async fn query_vector<C: Corpus>(
        &self,
        corpus: &C,
        query: &str,
    ) -> Result<Option<(LocalModel, Vec<f32>)>, StoreError> {
        let Some(model) = self.model().await else { return Ok(None) };
        self.fill(corpus, &model, BEFORE_SEARCH).await?;
        let vector = self.embed(&model, vec![query.to_owned()]).await.and_then(|mut v| v.pop());
        Ok(vector.map(|vector| (model, vector)))
    }

    /// What best matches `query` in `corpus`, best first, each with its score, and how it
    /// was ranked. By meaning the score is the cosine of the two vectors; by words, what
    /// the corpus's full-text ranking gives (for memories, the share of the query's telling
    /// words the memory holds).
    pub async fn search<C: Corpus>(
        &self,
        corpus: &C,
        query: &str,
        limit: usize,
    ) -> Result<(Vec<C::Found>, By), StoreError> {
        if let Some((model, vector)) = self.query_vector(corpus, query).await? {
            return Ok((corpus.nearest(&model.sha256, &vector, limit).await?, By::Meaning));
        }
        Ok((corpus.by_words(query, limit).await?, By::Words))
    }

    /// The same, by meaning and by words together ([`layered`]); by words alone without an
    /// embedding model.
    pub async fn fused<C: Corpus>(
        &self,
        corpus: &C,
        query: &str,
        limit: usize,
    ) -> Result<(Vec<C::Found>, By), StoreError> {
        let Some((model, vector)) = self.query_vector(corpus, query).await? else {
            return Ok((corpus.by_words(query, limit).await?, By::Words));
        };
        let (near, worded) =
            tokio::try_join!(corpus.nearest(&model.sha256, &vector, limit), corpus.by_words(query, limit))?;
        Ok((layered::<C>(near, worded, limit), By::Meaning))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::DocumentId;
    use crate::store::memories::Pool;

    fn hit(document: &str, page: i64, score: f64) -> Hit {
        Hit {
            document: DocumentId::new(document),
            name: document.into(),
            pool: Pool::Private,
            page,
            snippet: format!("{document} {page}"),
            score,
            local_only: false,
        }
    }

    #[test]
    fn meaning_comes_first_above_its_floor_then_what_only_words_found() {
        let near = vec![hit("letter", 1, 0.62), hit("lease", 2, 0.41), hit("menu", 3, 0.29)];
        let mut words = vec![hit("lease", 2, 9.0), hit("manual", 4, 6.0), hit("bill", 1, 3.0)];
        words[0].snippet = "**marked** lease".into();
        let found = layered::<DocumentCorpus>(near, words, 4);
        let order: Vec<String> = found.iter().map(DocumentCorpus::key).collect();
        // menu#3 lies below the floor; manual and bill follow in the words' order.
        assert_eq!(order, ["letter#1", "lease#2", "manual#4", "bill#1"]);
        assert_eq!((found[1].snippet.as_str(), found[1].score), ("**marked** lease", 0.41));
        assert!(found[2].score < DocumentCorpus::FLOOR && found[3].score < found[2].score, "{found:?}");
    }

    #[test]
    fn two_indexes_merge_by_their_own_best_and_keep_the_limit() {
        let own = vec![hit("lease", 1, 9.0), hit("letter", 1, 3.0)];
        let shared = vec![hit("manual", 1, 0.5), hit("menu", 1, 0.4)];
        let names: Vec<String> = merge_by_best(vec![own, shared], 3).into_iter().map(|h| h.name).collect();
        assert_eq!(names, ["lease", "manual", "menu"]);
    }
}
