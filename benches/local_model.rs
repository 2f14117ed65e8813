//! How fast the built-in model runs: Skald's local provider, through its worker process,
//! against llama.cpp's own `llama-bench` on the same GGUF and thread count, round by round
//! in one invocation so a noisy, shared machine slows both alike. Each round measures
//! prompt processing (a fresh prompt of about 512 tokens) and generation (128 tokens past
//! end-of-text, after that prompt) through `LocalModels::start`, the path every turn takes,
//! and runs llama-bench's pp512 and its tg128 at a depth of 512 tokens — generation after
//! the same length of context, since attention over it is much of a small model's cost.
//!
//! llama-bench runs twice a round: built the way Skald's ggml is (its portable baseline,
//! `benches/llama-bench.sh baseline`) and, when that build is at hand, for this very CPU
//! (`native`; left out otherwise). Reports medians,
//! both ratios (target ≥ 0.9× of the baseline build for generation), what the pipe from
//! the worker costs per token (the reply's pace as the caller reads it against the pace
//! the worker measured), the load time and the worker's peak RSS.
//!
//! The model is the test model (`tests/fetch-test-model.sh`).
//! `cargo bench --features local-model --bench local_model` (`SKALD_BENCH_ROUNDS`,
//! `SKALD_BENCH_THREADS`, `SKALD_TEST_GGUF`, `LLAMA_BENCH`, `LLAMA_BENCH_NATIVE`,
//! `SKALD_BENCH_SKALD`: the `skald` whose worker runs the model).

#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;
use skald::ids::UserId;
use skald::providers::local::{LocalModels, RequestStats, Settings};
use skald::providers::{ChatRequest, ContextMessage, Delta};

const PROMPT_TOKENS: usize = 512;
const GENERATED: u32 = 128;

fn main() {
    let rounds: usize = env_number("SKALD_BENCH_ROUNDS").unwrap_or(5);
    let threads: u32 = env_number("SKALD_BENCH_THREADS").unwrap_or(2);
    let model = std::env::var_os("SKALD_TEST_GGUF")
        .map_or_else(|| home(".cache/skald/models/SmolLM2-135M-Instruct.Q4_1.gguf"), PathBuf::from);
    let llama_bench = std::env::var_os("LLAMA_BENCH")
        .map_or_else(|| home(".cache/skald/llama-bench-0.3.36-baseline/llama-bench"), PathBuf::from);
    let llama_bench_native = std::env::var_os("LLAMA_BENCH_NATIVE")
        .map_or_else(|| home(".cache/skald/llama-bench-0.3.36-native/llama-bench"), PathBuf::from);
    for (what, path, how) in [
        ("model", &model, "tests/fetch-test-model.sh"),
        ("llama-bench", &llama_bench, "benches/llama-bench.sh baseline"),
    ] {
        if !path.exists() {
            eprintln!("local_model: the {what} {} is missing; run {how}", path.display());
            std::process::exit(1);
        }
    }
    let llama_bench_native = llama_bench_native.exists().then_some(llama_bench_native);

    let dir = tempfile::tempdir().expect("temp dir");
    let models_dir = dir.path().join("models");
    std::fs::create_dir_all(&models_dir).unwrap();
    if std::fs::hard_link(&model, models_dir.join("bench.gguf")).is_err() {
        std::fs::copy(&model, models_dir.join("bench.gguf")).unwrap();
    }
    let settings = Settings {
        threads,
        context: 2048,
        idle: Duration::from_secs(3600),
        max_output: GENERATED,
        ignore_eos: true,
        worker_program: std::env::var_os("SKALD_BENCH_SKALD")
            .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_skald")), PathBuf::from),
        download_reach: Default::default(),
        import_dirs: Default::default(),
    };
    let local = LocalModels::new(models_dir, settings);
    let person = UserId::generate();
    let runtime = tokio::runtime::Runtime::new().unwrap();

    eprintln!("local_model: {} · {threads} threads · {rounds} rounds", model.display());
    // The first request starts the worker and loads the model; its time is the load time.
    runtime.block_on(answer(&local, &person, "warm-up"));
    let status = local.status(&person);
    let loaded = status.engine.loaded.expect("the model is loaded");
    let worker = status.engine.worker_pid.expect("the worker runs");

    let (mut ours_pp, mut ours_tg, mut base_pp, mut base_tg) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut native_pp, mut native_tg, mut pipe_us) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (pp, tg) = llama_bench_round(&llama_bench, &model, threads);
        base_pp.push(pp);
        base_tg.push(tg);
        let (npp, ntg) = match &llama_bench_native {
            Some(native) => llama_bench_round(native, &model, threads),
            None => (f64::NAN, f64::NAN),
        };
        native_pp.push(npp);
        native_tg.push(ntg);
        // A prompt that starts differently each round, so nothing of it is cached.
        let (stats, read_ms) = runtime.block_on(answer_timed(&local, &person, &format!("Round {round}.")));
        // Tokens after the first, read by the caller against generated by the worker.
        let tokens = stats.generated_tokens.saturating_sub(1).max(1) as f64;
        let worker_ms = (stats.generated_tokens - 1) as f64 * 1000.0 / stats.tokens_per_second.max(f64::MIN_POSITIVE);
        pipe_us.push((read_ms - worker_ms) * 1000.0 / tokens);
        // Only the template's opening (its default system prompt) is shared between rounds.
        assert!(stats.evaluated_tokens >= PROMPT_TOKENS as u64 * 9 / 10, "the prompt was evaluated afresh: {stats:?}");
        assert_eq!(stats.generated_tokens, u64::from(GENERATED));
        let prompt_speed = stats.evaluated_tokens as f64 * 1000.0 / stats.prompt_ms.max(1) as f64;
        ours_pp.push(prompt_speed);
        ours_tg.push(stats.tokens_per_second);
        eprintln!(
            "local_model: round {}: prompt {:.0} tok/s (llama-bench {pp:.0}, native {npp:.0}), generation {:.1} tok/s \
             (llama-bench {tg:.1}, native {ntg:.1})",
            round + 1,
            prompt_speed,
            stats.tokens_per_second
        );
    }

    let (ours_pp, ours_tg, base_pp, base_tg) = (median(ours_pp), median(ours_tg), median(base_pp), median(base_tg));
    let (native_pp, native_tg, pipe_us) = (median(native_pp), median(native_tg), median(pipe_us));
    let native = |ours: f64, theirs: f64, digits: usize| {
        if theirs.is_nan() {
            "not built (`benches/llama-bench.sh native`) | ".to_owned()
        } else {
            format!("{theirs:.digits$} | {:.2}×", ours / theirs)
        }
    };
    println!(
        "Model {} · {threads} threads · median of {rounds} rounds.",
        model.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    );
    println!();
    println!(
        "| tokens/s | Skald (its worker) | llama-bench as Skald builds it | Skald ÷ it | llama-bench for this CPU | \
         Skald ÷ it |"
    );
    println!("|---|---|---|---|---|---|");
    println!(
        "| prompt (≈{PROMPT_TOKENS} tokens; pp{PROMPT_TOKENS}) | {ours_pp:.0} | {base_pp:.0} | {:.2}× | {} |",
        ours_pp / base_pp,
        native(ours_pp, native_pp, 0)
    );
    println!(
        "| generation ({GENERATED} tokens after {PROMPT_TOKENS}; tg{GENERATED}, target ≥ 0.90×) | {ours_tg:.1} | \
         {base_tg:.1} | {:.2}× | {} |",
        ours_tg / base_tg,
        native(ours_tg, native_tg, 1)
    );
    println!();
    println!(
        "The worker's pipe: {pipe_us:+.0} µs a token as the caller reads the reply. Load: {} ms. Peak RSS of the \
         worker: {} MiB; of this process: {} MiB.",
        loaded.load_ms,
        peak_rss_kib(&format!("/proc/{worker}/status")) / 1024,
        peak_rss_kib("/proc/self/status") / 1024
    );
}

/// One request through the provider, read to its end; the engine's report of it.
async fn answer(local: &LocalModels, person: &UserId, opening: &str) -> RequestStats {
    answer_timed(local, person, opening).await.0
}

/// The same, with how long the caller took to read the reply from its first token to its
/// last, in milliseconds.
async fn answer_timed(local: &LocalModels, person: &UserId, opening: &str) -> (RequestStats, f64) {
    let filler = "The quick brown fox jumps over the lazy dog. ".repeat(PROMPT_TOKENS / 10);
    let request = ChatRequest {
        model: "bench".into(),
        messages: vec![ContextMessage::User(format!("{opening} {filler}"))],
        tools: Vec::new(),
        cache_key: None,
        max_tokens: None,
        images: false,
    };
    let before = local.status(person).engine.last_request.map_or(0, |last| last.number);
    let mut stream = local.start(&request, person).await.expect("the model answers");
    let (mut first, mut last) = (None, Instant::now());
    while let Some(item) = stream.next().await {
        let deltas = item.expect("no failure mid-reply");
        if deltas.iter().any(|delta| matches!(delta, Delta::Text(_))) {
            last = Instant::now();
            first.get_or_insert(last);
        }
    }
    let read_ms = first.map_or(0.0, |first| last.duration_since(first).as_secs_f64() * 1000.0);
    // The report is written as the reply's last delta goes out.
    for _ in 0..200 {
        if let Some(stats) = local.status(person).engine.last_request.filter(|last| last.number > before) {
            return (stats, read_ms);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("no report of the request");
}

/// llama-bench's pp512, and its tg128 after 512 tokens of context: tokens per second.
fn llama_bench_round(tool: &PathBuf, model: &PathBuf, threads: u32) -> (f64, f64) {
    let run = |args: &[&str]| {
        let output = Command::new(tool)
            .arg("-m")
            .arg(model)
            .args(args)
            .args(["-r", "1", "-o", "json", "-t", &threads.to_string()])
            .output()
            .expect("llama-bench runs");
        assert!(output.status.success(), "llama-bench failed: {}", String::from_utf8_lossy(&output.stderr));
        let results: Vec<Value> = serde_json::from_slice(&output.stdout).expect("llama-bench's JSON");
        results.first().and_then(|r| r["avg_ts"].as_f64()).expect("a result")
    };
    let prompt = PROMPT_TOKENS.to_string();
    let generated = GENERATED.to_string();
    let pp = run(&["-p", &prompt, "-n", "0"]);
    let tg = run(&["-p", "0", "-n", &generated, "-d", &prompt]);
    (pp, tg)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// `VmHWM` of a process's `/proc/<pid>/status`.
fn peak_rss_kib(status: &str) -> u64 {
    let status = std::fs::read_to_string(status).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn env_number<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok()?.parse().ok()
}

fn home(path: &str) -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(path)
}
