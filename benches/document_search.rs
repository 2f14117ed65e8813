//! What searching documents costs (§12.2): 200 searches over documents totalling 1,000
//! pages in a person's encrypted file, p50 and p95, against 10 pages in the same invocation
//! as baseline. The documents are Markdown made by a seeded generator (prose whose words
//! follow a Zipf law over a vocabulary of a few thousand, as a real text's do), of mixed
//! lengths (1 to 50 pages), imported through the product's own path: `Documents::upload`
//! as `POST /api/documents` calls it, read by the extraction helper (this build's `skald
//! extract-worker`, a process per document) and written as pages and passages.
//!
//! Each search is the one the documents page and `document_search` make:
//! `Meaning::fused` over the person's shelf and the shared one. By words when no embedding
//! model is at hand; by meaning and words together in a build with the built-in model and
//! the embedding model's wheel (`SKALD_TEST_EMBEDDING_WHEEL`, from
//! `tests/fetch-embedding-model.sh`): the query is embedded for real in the worker process
//! and compared with every stored passage vector. At 10 pages the passages are embedded for
//! real (`Documents::index`, timed); at 1,000 they are made up (unit vectors from a seeded
//! generator), as ranking costs the same whatever they hold.
//!
//! `cargo bench --bench document_search` (`--features local-model` for by meaning).
//! `SKALD_BENCH_QUERIES` (200) and `SKALD_BENCH_PAGES` (1000) make it smaller.

#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use skald::agent::documents::Documents;
use skald::agent::meaning::{By, DocumentCorpus, Meaning};
use skald::crypto::{self, Dek, KeyPair};
use skald::extract::{Extractor, Limits, PAGE_CHARS};
use skald::ids::UserId;
use skald::providers::local::{LocalModels, Settings};
use skald::store::documents::{Pool, Shelf, Status};
use skald::store::private::{self, PrivateStore};
use skald::store::system::SystemStore;
use skald::users::sessions::Session;

/// How many pages the documents page asks for (`GET /api/documents/search`).
const HITS: usize = 50;

/// Lengths of the documents, in pages, taken in turn until the pages add up: letters,
/// reports, manuals.
const LENGTHS: [usize; 10] = [2, 5, 12, 30, 1, 8, 20, 50, 3, 40];

/// The most frequent words of English prose, most frequent first; the vocabulary's tail
/// is made of syllables (names, places, terms) so that rare words are many, as in a real
/// collection of documents.
const COMMON: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "had",
    "they",
    "you",
    "were",
    "their",
    "one",
    "all",
    "we",
    "can",
    "her",
    "has",
    "there",
    "been",
    "if",
    "more",
    "when",
    "will",
    "would",
    "who",
    "so",
    "no",
    "she",
    "other",
    "its",
    "may",
    "these",
    "what",
    "them",
    "than",
    "some",
    "him",
    "time",
    "into",
    "only",
    "do",
    "year",
    "could",
    "new",
    "two",
    "first",
    "any",
    "people",
    "should",
    "each",
    "made",
    "after",
    "house",
    "payment",
    "rent",
    "lease",
    "deposit",
    "insurance",
    "policy",
    "claim",
    "contract",
    "notice",
    "month",
    "account",
    "bank",
    "interest",
    "loan",
    "tax",
    "return",
    "school",
    "term",
    "meeting",
    "report",
    "doctor",
    "appointment",
    "prescription",
    "dose",
    "warranty",
    "repair",
    "boiler",
    "heating",
    "water",
    "electricity",
    "meter",
    "reading",
    "invoice",
    "receipt",
    "refund",
    "order",
    "delivery",
    "address",
    "garden",
    "kitchen",
    "window",
    "roof",
    "council",
    "permit",
    "vehicle",
    "service",
    "engine",
    "tyre",
    "holiday",
    "flight",
    "booking",
    "passport",
    "visa",
    "hotel",
    "recipe",
    "flour",
    "butter",
    "oven",
    "minutes",
    "manual",
    "battery",
    "charger",
    "screen",
    "settings",
    "password",
    "router",
    "printer",
    "cable",
    "pension",
    "salary",
    "employer",
    "overtime",
    "leave",
    "sick",
    "vaccination",
    "allergy",
    "dentist",
    "clinic",
    "landlord",
    "tenant",
    "agreement",
    "clause",
    "period",
    "date",
    "signature",
    "witness",
];

/// Syllables the tail of the vocabulary is made of.
const SYLLABLES: [&str; 24] = [
    "ka", "lo", "mer", "tin", "sa", "vor", "an", "el", "dri", "bo", "qua", "ne", "ris", "tal", "mo", "gen", "hu", "pe",
    "zan", "ul", "fi", "cor", "da", "wen",
];

/// How many distinct words the prose is made of.
const VOCABULARY: usize = 6_000;
/// Words above this rank are too common to search for (articles, pronouns, "have").
const FUNCTION_WORDS: usize = 74;

/// A seeded xorshift generator: the same documents and queries every run.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The vocabulary, most frequent first, and its Zipf cumulative weights.
struct Words {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Words {
    fn new() -> Self {
        let mut words: Vec<String> = COMMON.iter().map(|w| (*w).to_owned()).collect();
        let mut seen: std::collections::HashSet<String> = words.iter().cloned().collect();
        let mut made = Seeded(0x5eed_0001);
        while words.len() < VOCABULARY {
            let syllables = 2 + made.below(3);
            let word: String = (0..syllables).map(|_| SYLLABLES[made.below(SYLLABLES.len())]).collect();
            if seen.insert(word.clone()) {
                words.push(word);
            }
        }
        let mut total = 0.0;
        let cumulative = (1..=words.len())
            .map(|rank| {
                total += 1.0 / (rank as f64).powf(1.07);
                total
            })
            .collect();
        Self { words, cumulative }
    }

    /// A word drawn by its frequency.
    fn draw(&self, random: &mut Seeded) -> &str {
        let target = random.unit() * self.cumulative.last().copied().unwrap_or(1.0);
        let rank = self.cumulative.partition_point(|c| *c < target).min(self.words.len() - 1);
        &self.words[rank]
    }

    /// A word worth searching for: drawn by frequency, never a function word.
    fn telling(&self, random: &mut Seeded) -> &str {
        loop {
            let word = self.draw(random);
            if self.words.iter().position(|w| w == word).is_some_and(|rank| rank >= FUNCTION_WORDS) {
                return word;
            }
        }
    }

    /// A sentence of 6 to 20 words, capitalised, ending in a full stop.
    fn sentence(&self, random: &mut Seeded) -> String {
        let count = 6 + random.below(15);
        let mut sentence = (0..count).map(|_| self.draw(random)).collect::<Vec<_>>().join(" ");
        if let Some(first) = sentence.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        sentence.push('.');
        sentence
    }

    /// A Markdown document of exactly `pages` pages as the reader cuts flowing text: a
    /// title, then sections of paragraphs, one paragraph a line.
    fn document(&self, number: usize, pages: usize, random: &mut Seeded) -> String {
        let mut lines = vec![format!("# Document {number}: {} {}\n", self.telling(random), self.telling(random))];
        // The reader's rule (`extract::read::flowing`): a page ends before the line that
        // would take it past PAGE_CHARS.
        let (mut page, mut cut) = (lines[0].len(), 1);
        loop {
            let line = if random.below(6) == 0 {
                format!("\n## {} {}\n\n", self.telling(random), self.telling(random))
            } else {
                let sentences: Vec<String> = (0..3 + random.below(5)).map(|_| self.sentence(random)).collect();
                format!("{}\n", sentences.join(" "))
            };
            if page + line.len() > PAGE_CHARS {
                if cut == pages {
                    break;
                }
                cut += 1;
                page = 0;
            }
            page += line.len();
            lines.push(line);
        }
        lines.concat()
    }
}

/// Page counts of documents totalling `total` pages.
fn lengths(total: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut left = total;
    for length in LENGTHS.iter().cycle() {
        if left == 0 {
            break;
        }
        out.push((*length).min(left));
        left -= (*length).min(left);
    }
    out
}

/// A person's encrypted file and the shared database, signed in, with the documents of
/// `total` pages imported through the product's path.
struct Collection {
    dir: tempfile::TempDir,
    session: Arc<Session>,
    system: SystemStore,
    documents: Documents,
    models: LocalModels,
    pages: usize,
    import: Duration,
}

impl Collection {
    async fn new(total: usize, words: &Words) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let (id, dek, salt, keys) = (UserId::generate(), Dek::generate(), crypto::file_salt(), KeyPair::generate());
        let space =
            PrivateStore::create(&private::path_for(dir.path(), &id), &dek, &salt, &id, &keys).await.expect("create");
        let system = SystemStore::open(&dir.path().join("system.db")).await.expect("system");
        let models_dir = dir.path().join("models");
        std::fs::create_dir_all(&models_dir).expect("models folder");
        let mut settings = Settings::from_env();
        settings.worker_program = skald_binary();
        let models = LocalModels::new(models_dir, settings);
        let meaning = Meaning::new(system.clone(), models.clone());
        let extractor = Extractor::new(skald_binary(), Limits::default());
        let documents = Documents::new(system.clone(), extractor, meaning);
        let session = Arc::new(Session::new(id, space, dek, Duration::from_secs(3600), false));

        let mut random = Seeded(0x5eed_0002);
        let files: Vec<(String, String, usize)> = lengths(total)
            .into_iter()
            .enumerate()
            .map(|(n, pages)| (format!("document-{n}.md"), words.document(n, pages, &mut random), pages))
            .collect();
        let started = Instant::now();
        let mut kept = Vec::with_capacity(files.len());
        for (name, text, pages) in &files {
            let document =
                documents.upload(&session, Pool::Private, name, text.as_bytes(), false).await.expect("the upload");
            kept.push((document.id, *pages));
        }
        let shelf = Shelf::Own(&session.space);
        for (id, pages) in &kept {
            let document = loop {
                let document = shelf.get(id).await.expect("lookup").expect("kept");
                if document.status != Status::Reading {
                    break document;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            };
            assert_eq!(document.status, Status::Ready, "{document:?}");
            assert_eq!(document.pages, Some(*pages as i64), "the reader cut {} as generated", document.name);
        }
        let import = started.elapsed();
        Self { dir, session, system, documents, models, pages: total, import }
    }

    fn corpus(&self) -> DocumentCorpus<'_> {
        DocumentCorpus {
            shelves: vec![
                self.documents.shelf(Pool::Private, &self.session.space),
                self.documents.shelf(Pool::Shared, &self.session.space),
            ],
        }
    }

    /// The searches, timed one by one, and this process's CPU time over all of them.
    async fn search(&self, queries: &[String], expect: By) -> Searches {
        let meaning = Meaning::new(self.system.clone(), self.models.clone());
        let corpus = self.corpus();
        // The first search starts the worker and loads the model when there is one.
        meaning.fused(&corpus, "warm up", HITS).await.expect("search");
        let (mut samples, mut found) = (Vec::with_capacity(queries.len()), 0);
        let cpu = cpu_ticks();
        for query in queries {
            let started = Instant::now();
            let (hits, by) = meaning.fused(&corpus, query, HITS).await.expect("search");
            samples.push(started.elapsed());
            assert_eq!(by, expect, "searched {by:?}, not {expect:?}");
            found += hits.len();
            std::hint::black_box(hits);
        }
        let cpu = Duration::from_secs_f64((cpu_ticks() - cpu) as f64 / ticks_per_second() / queries.len() as f64);
        samples.sort();
        Searches {
            p50: percentile(&samples, 50),
            p95: percentile(&samples, 95),
            cpu,
            hits: found as f64 / queries.len() as f64,
        }
    }

    /// The embedding model added (as an administrator's import does) and every passage
    /// given a vector: embedded for real when `real`, else made up. How long embedding
    /// took when real; `None` when this build or machine has no embedding model.
    async fn add_meaning(&self, real: bool) -> Option<Option<Duration>> {
        let wheel = std::env::var_os("SKALD_TEST_EMBEDDING_WHEEL").map(std::path::PathBuf::from)?;
        if !skald::providers::local::AVAILABLE {
            return None;
        }
        let gguf = self.dir.path().join("models/minilm.gguf");
        skald::providers::local::convert::from_archive(&wheel, &gguf).expect("the wheel converts");
        let sha256 = {
            use sha2::Digest;
            hex::encode(sha2::Sha256::digest(std::fs::read(&gguf).expect("converted")))
        };
        sqlx::query(
            "INSERT INTO local_models (id, name, file_size, sha256, architecture, context_length, kind, source,
                                       imported_by, imported_at)
             VALUES ('minilm', 'all-MiniLM-L6-v2', 1, ?, 'bert', 512, 'embedding', 'bench', 'bench',
                     '2026-01-01T00:00:00Z')",
        )
        .bind(&sha256)
        .execute(self.system.pool())
        .await
        .expect("model row");
        let shelf = Shelf::Own(&self.session.space);
        if real {
            let started = Instant::now();
            let made = self.documents.index(shelf).await.expect("index");
            assert!(made > 0, "the passages were embedded");
            return Some(Some(started.elapsed()));
        }
        let ids: Vec<i64> =
            sqlx::query_scalar("SELECT id FROM document_passages").fetch_all(self.session.space.pool()).await.ok()?;
        let mut tx = self.session.space.pool().begin().await.expect("begin");
        for id in ids {
            sqlx::query("UPDATE document_passages SET vector = ?, vector_model = ? WHERE id = ?")
                .bind(made_up_vector(id as u64))
                .bind(&sha256)
                .bind(id)
                .execute(&mut *tx)
                .await
                .expect("vector");
        }
        tx.commit().await.expect("commit");
        Some(None)
    }

    async fn passages(&self) -> i64 {
        sqlx::query_scalar("SELECT count(*) FROM document_passages")
            .fetch_one(self.session.space.pool())
            .await
            .expect("count")
    }

    async fn close(self) {
        self.session.ended().cancel();
        self.session.space.close().await;
        self.system.close().await;
    }
}

struct Searches {
    p50: Duration,
    p95: Duration,
    /// This process's CPU time per search (the embedding worker's is not in it).
    cpu: Duration,
    /// Pages found per search, on average.
    hits: f64,
}

/// A unit vector of 384 from a seeded generator, as stored.
fn made_up_vector(seed: u64) -> Vec<u8> {
    let mut random = Seeded(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut values: Vec<f32> = (0..384).map(|_| random.unit() as f32 - 0.5).collect();
    let norm = values.iter().map(|x| x * x).sum::<f32>().sqrt();
    values.iter_mut().for_each(|x| *x /= norm);
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

/// utime + stime of this process, in clock ticks.
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime are 14th and 15th.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    fields.get(11).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0)
        + fields.get(12).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0)
}

fn ticks_per_second() -> f64 {
    rustix::param::clock_ticks_per_second() as f64
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.trim().parse().ok().filter(|n| *n > 0)
}

fn main() {
    let queries_count = env_number("SKALD_BENCH_QUERIES").unwrap_or(200);
    let pages = env_number("SKALD_BENCH_PAGES").unwrap_or(1_000);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let words = Words::new();
    let mut random = Seeded(0x5eed_0003);
    let queries: Vec<String> = (0..queries_count)
        .map(|_| {
            let count = 1 + random.below(3);
            (0..count).map(|_| words.telling(&mut random)).collect::<Vec<_>>().join(" ")
        })
        .collect();

    let (rows, import) = runtime.block_on(async {
        eprintln!("document_search: importing 10 pages, then {pages}");
        let small = Collection::new(10, &words).await;
        let large = Collection::new(pages, &words).await;
        let passages = (small.passages().await, large.passages().await);
        let mut rows = Vec::new();
        eprintln!("document_search: {queries_count} searches by words at each size");
        let (base, big) = (small.search(&queries, By::Words).await, large.search(&queries, By::Words).await);
        rows.push(("by words", base, big));
        let mut embedding = None;
        match (small.add_meaning(true).await, large.add_meaning(false).await) {
            (Some(took), Some(_)) => {
                embedding = took;
                eprintln!("document_search: {queries_count} searches by meaning and words at each size");
                let (base, big) =
                    (small.search(&queries, By::Meaning).await, large.search(&queries, By::Meaning).await);
                rows.push(("by meaning and words", base, big));
            }
            _ => eprintln!(
                "document_search: by meaning skipped (needs --features local-model and SKALD_TEST_EMBEDDING_WHEEL)"
            ),
        }
        let import = (small.import, large.import, small.pages, large.pages, passages, embedding);
        small.close().await;
        large.close().await;
        (rows, import)
    });

    let (small_import, large_import, small_pages, large_pages, (small_passages, large_passages), embedding) = import;
    println!(
        "| search ({queries_count} queries, {HITS} pages asked) | p50 ms | p95 ms | CPU ms/search | pages found |"
    );
    println!("|---|---|---|---|---|");
    for (how, base, big) in &rows {
        for (pages, s) in [(small_pages, base), (large_pages, big)] {
            println!("| {how}, {pages} pages | {} | {} | {} | {:.1} |", ms(s.p50), ms(s.p95), ms(s.cpu), s.hits);
        }
        println!(
            "| {how}: {large_pages} pages ÷ {small_pages} | {:.1}× | {:.1}× | {:.1}× | |",
            big.p50.as_secs_f64() / base.p50.as_secs_f64(),
            big.p95.as_secs_f64() / base.p95.as_secs_f64(),
            big.cpu.as_secs_f64() / base.cpu.as_secs_f64().max(1e-9),
        );
    }
    if rows.len() == 1 {
        println!(
            "| by meaning and words | skipped: needs `--features local-model` and `SKALD_TEST_EMBEDDING_WHEEL` | | | |"
        );
    }
    println!();
    println!(
        "Import through the extraction helper: {small_pages} pages ({small_passages} passages) in {:.2} s, \
         {large_pages} pages ({large_passages} passages) in {:.2} s ({:.1} ms a page).",
        small_import.as_secs_f64(),
        large_import.as_secs_f64(),
        large_import.as_secs_f64() * 1000.0 / large_pages as f64
    );
    if let Some(took) = embedding {
        println!(
            "Embedding the {small_passages} passages of {small_pages} pages for real: {:.2} s ({:.0} ms a page).",
            took.as_secs_f64(),
            took.as_secs_f64() * 1000.0 / small_pages as f64
        );
    }
}

/// The `skald` to start: `SKALD_BENCH_SKALD` (bench/run.sh's copy, which another build in
/// the shared target dir cannot replace mid-run), else the one cargo built with this bench.
fn skald_binary() -> std::path::PathBuf {
    std::env::var_os("SKALD_BENCH_SKALD").map_or_else(|| env!("CARGO_BIN_EXE_skald").into(), Into::into)
}
