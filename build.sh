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
# The speech engine, found beside skald (crates/voice), with ONNX Runtime for Piper's voices.
crates/voice/stage.sh bin
cp "$CARGO_TARGET_DIR/release/skald" bin/.skald.new
mv -f bin/.skald.new bin/skald
echo "build: installed bin/skald ($(bin/skald --version))"
