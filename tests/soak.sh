#!/usr/bin/env bash
# Soak runs of the crash tests (their names hold "crash"): 200 kill -9 rounds during password changes and key
# rotations (CI runs 20 of each), and a backup taken while people make 10,000 writes.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/skald/target}
export SKALD_CRASH_ROUNDS=${SKALD_CRASH_ROUNDS:-200}
cargo test --locked --test it crash -- --nocapture
SKALD_BACKUP_WRITES=${SKALD_BACKUP_WRITES:-10000} \
    cargo test --locked --test it a_backup_taken_while_people_write -- --nocapture
