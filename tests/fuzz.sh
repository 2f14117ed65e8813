#!/usr/bin/env bash
# Fuzzes Skald's parsers of outside input for a time budget per target, with libFuzzer
# through cargo-fuzz (fuzz/, entry points in src/fuzzing.rs), and the Markdown-to-speech
# cleaner of the web page with a mutation fuzzer in Node (fuzz/js/speakable.mjs).
#
#   tests/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 30 s, every target)
#
# Targets run side by side, one a core (SKALD_FUZZ_JOBS sets how many at once).
# Targets: key_wrap openai_sse anthropic_sse ollama_ndjson tool_calls gguf_header
# rule_matcher mcp_message pdf_text speakable.
#
# Each target starts from its seeds, checked in under fuzz/seeds/<target>/, and the
# working corpus under ~/.cache/skald/fuzz-corpus/<target>/, which grows from run to run.
# An input that crashes, trips an assertion, runs past 10 s, leaks or needs more than
# 2 GiB is kept under ~/.cache/skald/fuzz-artifacts/<target>/; the script prints its path
# and exits non-zero. A table of executions, exec/s, corpus size and result closes the run.
#
# cargo-fuzz is installed once per machine, pinned, under ~/.cache/skald/tools. libFuzzer
# and the sanitizer need nightly flags: RUSTC_BOOTSTRAP=1 lets the stable toolchain take
# them, for this build only. The fuzz build has its own target dir, outside the clone.
# SKALD_FUZZ_BUILT=1 runs the targets built last time, without building (a soak's rerun).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-30}
[[ $seconds =~ ^[0-9]+$ && $seconds -gt 0 ]] || {
  echo "usage: tests/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]" >&2
  exit 2
}
shift $(($# > 0 ? 1 : 0))
rust_targets=(key_wrap openai_sse anthropic_sse ollama_ndjson tool_calls gguf_header rule_matcher mcp_message pdf_text)
all=("${rust_targets[@]}" speakable)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")
for target in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $target "* ]] || {
    echo "fuzz: no target $target; the targets are: ${all[*]}" >&2
    exit 2
  }
done

cache=$HOME/.cache/skald
FUZZ_VERSION=0.13.1
tools=$cache/tools
cargo_fuzz=$tools/bin/cargo-fuzz
target_dir=$cache/fuzz-target
corpora=$cache/fuzz-corpus
artifacts=$cache/fuzz-artifacts
logs=$cache/fuzz-logs
mkdir -p "$corpora" "$artifacts" "$logs"

if [[ ! -x $cargo_fuzz || $("$cargo_fuzz" --version 2>/dev/null) != "cargo-fuzz $FUZZ_VERSION" ]]; then
  echo "installing cargo-fuzz $FUZZ_VERSION into $tools (once per machine)"
  env -u CARGO_TARGET_DIR CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install --locked --quiet --root "$tools" "cargo-fuzz@$FUZZ_VERSION"
fi

# The library's build script wants the web assets, and the cleaner's fuzzer bundles its
# TypeScript with the web's own esbuild.
if [[ ! -d web/node_modules ]]; then
  npm --prefix web ci --no-audit --no-fund
fi
if [[ ! -f web/dist/index.html ]]; then
  npm --prefix web run build
fi

wants_rust=false
for target in "${targets[@]}"; do
  [[ $target == speakable ]] || wants_rust=true
done
bins=$target_dir/x86_64-unknown-linux-gnu/release
if $wants_rust && [[ ${SKALD_FUZZ_BUILT:-} == 1 ]]; then
  echo "fuzz: SKALD_FUZZ_BUILT=1: running the targets already built in $bins"
elif $wants_rust; then
  # fuzz/Cargo.lock is checked in: a manifest that no longer matches it fails here.
  cargo metadata --locked --manifest-path fuzz/Cargo.toml --format-version 1 >/dev/null
  started=$(date +%s)
  # Every target at once, with debug assertions (overflow checks) and AddressSanitizer
  # (with its leak checker). No target-cpu: the build runs on any x86-64.
  RUSTC_BOOTSTRAP=1 "$cargo_fuzz" build --fuzz-dir fuzz -O --debug-assertions \
    --target x86_64-unknown-linux-gnu --target-dir "$target_dir"
  echo "fuzz: targets built in $(($(date +%s) - started)) s"
fi

# A line of the closing table.
row() { printf '%-14s %12s %9s %8s  %s\n' "$@"; }

# One target's run: its messages go to $results/<target>.out, its table row to .row, and
# a .failed file says it failed; printed in the targets' order once every run ended.
fuzz_one() {
  local target=$1 corpus=$corpora/$1 kept=$artifacts/$1 log=$logs/$1.log
  local before status=0 executions rate size fresh result file
  mkdir -p "$corpus" "$kept"
  before=$(ls "$kept")
  if [[ $target == speakable ]]; then
    node fuzz/js/speakable.mjs "$seconds" fuzz/seeds/speakable "$corpus" "$kept" >"$log" 2>&1 || status=$?
    last=$(grep '^speakable: [0-9]* executions' "$log" | tail -1 || true)
    executions=$(sed -n 's/^speakable: \([0-9]*\) executions.*/\1/p' <<<"$last")
    rate=$(sed -n 's/.* executions, \([0-9-]*\) exec\/s.*/\1/p' <<<"$last")
    size=$(sed -n 's/.* exec\/s, \([0-9-]*\) corpus.*/\1/p' <<<"$last")
  else
    # -close_fd_mask=1 keeps a library's prints to stdout out of the log; libFuzzer
    # reports on stderr.
    "$bins/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
      -detect_leaks=1 -print_final_stats=1 -close_fd_mask=1 -artifact_prefix="$kept/" \
      "$corpus" "fuzz/seeds/$target" >"$log" 2>&1 || status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1 || true)
    size=$(ls "$corpus" | wc -l)
  fi
  fresh=$(comm -13 <(sort <<<"$before") <(ls "$kept" | sort) | grep -v '^slow-unit-' || true)
  if ((status == 0)) && [[ -z $fresh ]]; then
    result=ok
  else
    if grep -q 'ERROR: libFuzzer: timeout\|speakable: TIMEOUT\|took .* ms (limit' "$log"; then
      result=timeout
    elif grep -q 'ERROR: libFuzzer: out-of-memory\|malloc(.*) exceeds limit' "$log"; then
      result=oom
    elif grep -q 'ERROR: LeakSanitizer' "$log"; then
      result=leak
    else
      result=crash
    fi
    touch "$results/$target.failed"
    echo "fuzz: $target: $result; the log is $log; its end:"
    grep -v '^#[0-9]' "$log" | tail -25 | sed 's/^/    /'
    for file in $fresh; do
      echo "fuzz: $target: input kept at $kept/$file"
    done
  fi >"$results/$target.out"
  row "$target" "${executions:--}" "${rate:--}" "${size:--}" "$result" >"$results/$target.row"
}

# As many targets at once as there are cores (SKALD_FUZZ_JOBS to choose): each runs on
# one core for its whole budget, so the soak's 20 minutes a target take half the time on
# two cores, and each target's exec/s is its own core's.
jobs=${SKALD_FUZZ_JOBS:-$(nproc)}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: SKALD_FUZZ_JOBS must be a positive count" >&2; exit 2; }
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
running=0
for target in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  echo "fuzz: $target for $seconds s"
  fuzz_one "$target" &
  running=$((running + 1))
done
wait || true

failed=()
rows=()
for target in "${targets[@]}"; do
  if [[ ! -e $results/$target.row ]]; then
    echo "fuzz: $target: its run ended before reporting; the log is $logs/$target.log"
    rows+=("$(row "$target" - - - error)")
    failed+=("$target")
    continue
  fi
  cat "$results/$target.out"
  rows+=("$(cat "$results/$target.row")")
  [[ ! -e $results/$target.failed ]] || failed+=("$target")
done

echo
row target executions exec/s corpus result
printf '%s\n' "${rows[@]}"
if ((${#failed[@]})); then
  echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${seconds} s each: 0 crashes, timeouts, leaks or OOMs"
