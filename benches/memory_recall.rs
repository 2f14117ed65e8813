//! What reading memories into a turn costs (§10): `agent::memory::for_turn` — full-text
//! search of both pools and ranking — over 10,000 memories in a person's encrypted file,
//! p50 and p95 of 200 queries, against 100 memories in the same invocation as baseline.
//!
//! It also runs the recall evaluation set (`tests/data/recall_eval.json`): the share of
//! paraphrased queries whose memory is in the top 3, and of unrelated queries that recall
//! nothing, at several relevance cut-offs, to tune `agent::memory`'s.
//!
//! `cargo bench --bench memory_recall`

#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::time::{Duration, Instant};

use skald::agent::memory::for_turn;
use skald::crypto::{self, Dek, KeyPair};
use skald::ids::UserId;
use skald::store::memories::Pools;
use skald::store::private::{self, PrivateStore};
use skald::store::system::SystemStore;

const QUERIES: usize = 200;

/// Words memories are made of: enough variety that a query matches a few dozen rows.
const WORDS: [&str; 40] = [
    "tea",
    "coffee",
    "morning",
    "evening",
    "allergic",
    "peanuts",
    "school",
    "dentist",
    "bins",
    "monday",
    "garden",
    "piano",
    "lesson",
    "birthday",
    "gift",
    "train",
    "office",
    "bread",
    "bakery",
    "football",
    "swimming",
    "doctor",
    "holiday",
    "beach",
    "mountain",
    "cousin",
    "library",
    "book",
    "vegetarian",
    "spicy",
    "quiet",
    "music",
    "guitar",
    "heating",
    "boiler",
    "router",
    "password",
    "bicycle",
    "bus",
    "market",
];

fn sentence(n: usize) -> String {
    let pick = |k: usize| WORDS[(n * 7 + k * 13 + n / 40) % WORDS.len()];
    format!("Memory {n}: the {} and the {} matter on {} {}.", pick(1), pick(2), pick(3), pick(4))
}

fn percentile(samples: &mut [Duration], p: usize) -> Duration {
    samples.sort();
    samples[(samples.len() * p / 100).min(samples.len() - 1)]
}

/// Puts `texts` in the person's private pool, in one transaction.
async fn fill(space: &PrivateStore, texts: impl Iterator<Item = String>) {
    let mut tx = space.pool().begin().await.expect("begin");
    for (n, text) in texts.enumerate() {
        sqlx::query(
            "INSERT INTO memories (id, text, subject_kind, author_kind, author_id, created_at, updated_at, expires_at)
             VALUES (?, ?, 'self', 'person', 'bench', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', '2099-01-01T00:00:00Z')",
        )
        .bind(format!("mem_{n:024}"))
        .bind(text)
        .execute(&mut *tx)
        .await
        .expect("insert");
    }
    tx.commit().await.expect("commit");
}

async fn measure(count: usize) -> (Duration, Duration) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (id, dek, salt, keys) = (UserId::generate(), Dek::generate(), crypto::file_salt(), KeyPair::generate());
    let space =
        PrivateStore::create(&private::path_for(dir.path(), &id), &dek, &salt, &id, &keys).await.expect("create");
    let system = SystemStore::open(&dir.path().join("system.db")).await.expect("system");
    fill(&space, (0..count).map(sentence)).await;
    let pools = Pools { owner: &id, space: &space, system: &system };
    let mut samples = Vec::with_capacity(QUERIES);
    for q in 0..QUERIES {
        let message =
            format!("What about the {} and the {} again?", WORDS[q % WORDS.len()], WORDS[(q * 3 + 1) % WORDS.len()]);
        let started = Instant::now();
        let found = for_turn(&pools, &message).await.expect("recall");
        samples.push(started.elapsed());
        std::hint::black_box(found);
    }
    space.close().await;
    (percentile(&mut samples, 50), percentile(&mut samples, 95))
}

/// The evaluation set: top-3 hits of the paraphrases, and at each cut-off how many
/// paraphrases still recall their memory and how many unrelated queries recall nothing.
async fn evaluate() {
    let set: serde_json::Value =
        serde_json::from_str(include_str!("../tests/data/recall_eval.json")).expect("the evaluation set is JSON");
    let texts: Vec<&str> = set["memories"].as_array().expect("memories").iter().filter_map(|m| m.as_str()).collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let (id, dek, salt, keys) = (UserId::generate(), Dek::generate(), crypto::file_salt(), KeyPair::generate());
    let space =
        PrivateStore::create(&private::path_for(dir.path(), &id), &dek, &salt, &id, &keys).await.expect("create");
    let system = SystemStore::open(&dir.path().join("system.db")).await.expect("system");
    fill(&space, texts.iter().map(|t| (*t).to_owned())).await;
    let pools = Pools { owner: &id, space: &space, system: &system };
    let queries = set["queries"].as_array().expect("queries");
    let nothing: Vec<&str> = set["nothing"].as_array().expect("nothing").iter().filter_map(|q| q.as_str()).collect();
    // The expected memory's score for each paraphrase (0 when not in the top 3), and the
    // best score each unrelated query reaches.
    let mut expected_scores = Vec::new();
    for query in queries {
        let want = format!("mem_{:024}", query["expect"].as_u64().expect("expect"));
        let found = pools.search(query["text"].as_str().expect("text"), None, 3).await.expect("search");
        expected_scores.push(found.iter().find(|m| m.id.as_str() == want).and_then(|m| m.score).unwrap_or(0.0));
    }
    let mut best_unrelated = Vec::new();
    for query in &nothing {
        let found = pools.search(query, None, 3).await.expect("search");
        best_unrelated.push(found.first().and_then(|m| m.score).unwrap_or(0.0));
    }
    let top3 = expected_scores.iter().filter(|s| **s > 0.0).count();
    println!(
        "evaluation set, full-text search: right memory in the top 3 for {top3} of {} paraphrases ({:.0}%)",
        queries.len(),
        100.0 * top3 as f64 / queries.len() as f64
    );
    for cut in [0.2, 0.25, 0.34, 0.4, 0.5] {
        let kept = expected_scores.iter().filter(|s| **s >= cut).count();
        let empty = best_unrelated.iter().filter(|s| **s < cut).count();
        println!(
            "  cut-off {cut:.2}: recalled for {kept}/{} paraphrases ({:.0}%), nothing for {empty}/{} unrelated ({:.0}%)",
            queries.len(),
            100.0 * kept as f64 / queries.len() as f64,
            nothing.len(),
            100.0 * empty as f64 / nothing.len() as f64
        );
    }
    space.close().await;
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(evaluate());
    let (base50, base95) = runtime.block_on(measure(100));
    let (p50, p95) = runtime.block_on(measure(10_000));
    println!("recall over 100 memories (baseline): p50 {base50:?}, p95 {base95:?}");
    println!(
        "recall over 10,000 memories: p50 {p50:?} ({:.1}x baseline), p95 {p95:?}",
        p50.as_secs_f64() / base50.as_secs_f64()
    );
}
