#!/usr/bin/env bash
# Soak runs of the crash tests: 200 kill -9 rounds during password changes (CI runs 20).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/skald/target}
SKALD_CRASH_ROUNDS=${SKALD_CRASH_ROUNDS:-200} cargo test --locked --test it crash -- --nocapture
