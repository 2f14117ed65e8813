//! How fast the built-in model runs: Skald's local provider against llama.cpp's own
//! `llama-bench` on the same GGUF and thread count, round by round in one invocation so a
//! noisy, shared machine slows both alike. Each round measures prompt processing (a fresh
//! prompt of about 512 tokens) and generation (128 tokens past end-of-text, after that
//! prompt) through `LocalModels::start`, the path every turn takes, and runs llama-bench's
//! pp512 and its tg128 at a depth of 512 tokens — generation after the same length of
//! context, since attention over it is much of a small model's cost. Reports medians, the
//! ratio (target ≥ 0.9× for generation), the load time and the peak RSS of this process,
//! which holds the model.
//!
//! `benches/llama-bench.sh` builds the baseline tool; the model is the test model
//! (`tests/fetch-test-model.sh`). `cargo bench --features local-model --bench local_model`
//! (`SKALD_BENCH_ROUNDS`, `SKALD_BENCH_THREADS`, `SKALD_TEST_GGUF`, `LLAMA_BENCH`).

#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use skald::providers::local::{LocalModels, RequestStats, Settings};
use skald::providers::{ChatRequest, ContextMessage};

const PROMPT_TOKENS: usize = 512;
const GENERATED: u32 = 128;

fn main() {
    let rounds: usize = env_number("SKALD_BENCH_ROUNDS").unwrap_or(5);
    let threads: u32 = env_number("SKALD_BENCH_THREADS").unwrap_or(2);
    let model = std::env::var_os("SKALD_TEST_GGUF")
        .map_or_else(|| home(".cache/skald/models/SmolLM2-135M-Instruct.Q4_1.gguf"), PathBuf::from);
    let llama_bench = std::env::var_os("LLAMA_BENCH")
        .map_or_else(|| home(".cache/skald/llama-bench-0.3.36/llama-bench"), PathBuf::from);
    for (what, path, how) in
        [("model", &model, "tests/fetch-test-model.sh"), ("llama-bench", &llama_bench, "benches/llama-bench.sh")]
    {
        if !path.exists() {
            eprintln!("local_model: the {what} {} is missing; run {how}", path.display());
            std::process::exit(1);
        }
    }

    let dir = tempfile::tempdir().expect("temp dir");
    let models_dir = dir.path().join("models");
    std::fs::create_dir_all(&models_dir).unwrap();
    if std::fs::hard_link(&model, models_dir.join("bench.gguf")).is_err() {
        std::fs::copy(&model, models_dir.join("bench.gguf")).unwrap();
    }
    let settings =
        Settings { threads, context: 2048, idle: Duration::from_secs(3600), max_output: GENERATED, ignore_eos: true };
    let local = LocalModels::new(models_dir, settings);
    let runtime = tokio::runtime::Runtime::new().unwrap();

    println!("model {} · {threads} threads · {rounds} rounds", model.display());
    // The first request loads the model; its time is the load time.
    runtime.block_on(answer(&local, "warm-up"));
    let loaded = local.status().loaded.expect("the model is loaded");

    let (mut ours_pp, mut ours_tg, mut base_pp, mut base_tg) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (pp, tg) = llama_bench_round(&llama_bench, &model, threads);
        base_pp.push(pp);
        base_tg.push(tg);
        // A prompt that starts differently each round, so nothing of it is cached.
        let stats = runtime.block_on(answer(&local, &format!("Round {round}.")));
        // Only the template's opening (its default system prompt) is shared between rounds.
        assert!(stats.evaluated_tokens >= PROMPT_TOKENS as u64 * 9 / 10, "the prompt was evaluated afresh: {stats:?}");
        assert_eq!(stats.generated_tokens, u64::from(GENERATED));
        let prompt_speed = stats.evaluated_tokens as f64 * 1000.0 / stats.prompt_ms.max(1) as f64;
        ours_pp.push(prompt_speed);
        ours_tg.push(stats.tokens_per_second);
        println!(
            "round {}: prompt {:.0} tok/s (llama-bench {pp:.0}), generation {:.1} tok/s (llama-bench {tg:.1})",
            round + 1,
            prompt_speed,
            stats.tokens_per_second
        );
    }

    let (ours_pp, ours_tg, base_pp, base_tg) = (median(ours_pp), median(ours_tg), median(base_pp), median(base_tg));
    println!();
    println!(
        "prompt processing (≈{PROMPT_TOKENS} tokens): Skald {ours_pp:.0} tok/s, llama-bench pp512 {base_pp:.0} tok/s → {:.2}×",
        ours_pp / base_pp
    );
    println!(
        "generation ({GENERATED} tokens): Skald {ours_tg:.1} tok/s, llama-bench tg128 {base_tg:.1} tok/s → {:.2}× (target ≥ 0.90×)",
        ours_tg / base_tg
    );
    println!("load: {} ms · peak RSS of this process: {} MiB", loaded.load_ms, peak_rss_kib() / 1024);
}

/// One request through the provider, read to its end; the engine's report of it.
async fn answer(local: &LocalModels, opening: &str) -> RequestStats {
    let filler = "The quick brown fox jumps over the lazy dog. ".repeat(PROMPT_TOKENS / 10);
    let request = ChatRequest {
        model: "bench".into(),
        messages: vec![ContextMessage::User(format!("{opening} {filler}"))],
        tools: Vec::new(),
    };
    let before = local.status().last_request.map_or(0, |last| last.number);
    let mut stream = local.start(&request).await.expect("the model answers");
    while let Some(item) = stream.next().await {
        item.expect("no failure mid-reply");
    }
    // The report is written as the reply's last delta goes out.
    for _ in 0..200 {
        if let Some(stats) = local.status().last_request.filter(|last| last.number > before) {
            return stats;
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

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
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
