#!/usr/bin/env bash
# The side-by-side benchmark (issue 32): Skald against the model server called directly
# and, with --peer openwebui, against Open WebUI fronting the same scripted model server,
# every arm measured in this one invocation and interleaved (this machine is shared, so the
# ratios are the figures to read). bench/README.md says what each figure means.
#   bench/run.sh [--peer openwebui] [--check] [--quick]
# --check exits 1 when a figure measured misses its budget in bench/budgets.toml.
# --quick runs small counts (a minute or two without the peer): it proves the harness, it
# measures little. The first --peer openwebui installs Open WebUI (several GB) once.
# Prints a Markdown table on stdout, progress on stderr.
# SKALD_BENCH_NO_BUILD=1 uses the release binaries already built.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/skald/target}
peer= harness_args=()
while (($#)); do
  case $1 in
    --peer)
      [[ ${2:-} == openwebui ]] || { echo "bench/run.sh: --peer takes openwebui" >&2; exit 2; }
      peer=openwebui
      shift 2
      ;;
    --check) harness_args+=(--check); shift ;;
    --quick) harness_args+=(--quick); shift ;;
    *) echo "bench/run.sh: unknown argument $1 (usage: bench/run.sh [--peer openwebui] [--check] [--quick])" >&2; exit 2 ;;
  esac
done

release=$CARGO_TARGET_DIR/release
if [[ ${SKALD_BENCH_NO_BUILD:-} != 1 ]]; then
  echo "building skald, scripted-model and the harness (release)" >&2
  (cd "$root" \
    && cargo build --release --locked --bin skald >&2 \
    && cargo build --release --locked -p scripted-model --bin scripted-model >&2)
fi
# The harness's path, from cargo's own account of the build.
harness=$(cd "$root" && cargo bench --locked --no-run --bench side_by_side --message-format=json \
  | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-message":
        print(m["message"]["rendered"], file=sys.stderr, end="")
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "side_by_side" and m.get("executable"):
        print(m["executable"])')
[[ -x $harness ]] || { echo "bench/run.sh: building the harness failed (cargo bench --no-run --bench side_by_side)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The binaries as built now: another build in the same target dir cannot swap them mid-run.
cp "$release/skald" "$release/scripted-model" "$harness" "$work/"

if [[ $peer == openwebui ]]; then
  venv=$("$root/bench/peers/openwebui.sh" install)
  harness_args+=(--openwebui "$venv" --openwebui-env "$root/bench/peers/openwebui.env")
fi

"$work/$(basename "$harness")" --skald "$work/skald" --scripted "$work/scripted-model" \
  --budgets "$root/bench/budgets.toml" "${harness_args[@]}"
