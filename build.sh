#!/usr/bin/env bash
# Builds the web assets and the release binary, then installs it atomically to bin/skald:
# a running ./run.sh picks up the new binary at its next restart, never a half-copied one.
set -euo pipefail
cd "$(dirname "$0")"

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/skald/target}

./deps.sh build
npm --prefix web ci --no-audit --no-fund --loglevel=error
npm --prefix web run build --silent
cargo build --release --locked --features desktop,local-model
# The speech engine, found beside skald (crates/voice).
cargo build --release --locked -p skald-voice

mkdir -p bin
cp "$CARGO_TARGET_DIR/release/skald-voice" bin/.skald-voice.new
mv -f bin/.skald-voice.new bin/skald-voice
# ONNX Runtime for Piper's voices, beside the engine; without it Skald reads with espeak-ng.
crates/voice/install-runtime.sh bin || echo "build: ONNX Runtime was not installed; answers are read aloud with espeak-ng" >&2
cp "$CARGO_TARGET_DIR/release/skald" bin/.skald.new
mv -f bin/.skald.new bin/skald
echo "build: installed bin/skald ($(bin/skald --version))"
