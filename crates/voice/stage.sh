#!/usr/bin/env bash
# Builds the speech engine (release) and puts it in DIR with ONNX Runtime's library, as
# Skald expects them beside itself: ./build.sh stages them in bin/, and `cargo tauri
# build` (its beforeBundleCommand) stages them there for the .deb, which installs them
# as /usr/bin/skald-voice and /usr/lib/skald/libonnxruntime.so. Without ONNX Runtime
# Skald reads aloud with espeak-ng.
#   crates/voice/stage.sh DIR
set -euo pipefail
dir=${1:?usage: crates/voice/stage.sh DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/skald/target}
cargo build --release --locked --manifest-path "$root/Cargo.toml" -p skald-voice
mkdir -p "$dir"
cp "$CARGO_TARGET_DIR/release/skald-voice" "$dir/.skald-voice.new"
mv -f "$dir/.skald-voice.new" "$dir/skald-voice"
"$root/crates/voice/install-runtime.sh" "$dir" ||
  echo "stage: ONNX Runtime was not installed; answers are read aloud with espeak-ng" >&2
