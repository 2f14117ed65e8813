#!/usr/bin/env bash
# Desktop smoke test (§13): the real window under Xvfb with a private D-Bus session.
#   tests/desktop/smoke.sh BINARY [OUT_DIR]
# BINARY is a debug build with feature `desktop` (its test hooks exist in debug builds
# only). Writes the screenshot and measurements to OUT_DIR (default: a temp folder).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "$1")
out=${2:-$(mktemp -d)}
mkdir -p "$out"
work=$(mktemp -d)
trap '[[ -n ${KEEP_WORK:-} ]] || rm -rf "$work"' EXIT

# Everything the app writes stays in the sandbox.
export HOME=$work/home XDG_DATA_HOME=$work/home/.local/share XDG_CONFIG_HOME=$work/home/.config
export XDG_CACHE_HOME=$work/home/.cache XDG_RUNTIME_DIR=$work/runtime TMPDIR=$work/tmp
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" "$TMPDIR"
chmod 700 "$XDG_RUNTIME_DIR"

# A system opener that records what it was asked to open, instead of opening it.
mkdir -p "$work/bin"
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >> "%s/opened"\n' "$work" > "$work/bin/xdg-open"
chmod +x "$work/bin/xdg-open"
export PATH=$work/bin:$PATH

export SKALD_TEST_HOOKS=1 SKALD_INSECURE_FAST_KDF=1 SKALD_LOG=info,skald=debug
export SKALD_TEST_NAVIGATE_TO=https://example.invalid/elsewhere
# Without this WebKit renders a blank window under Xvfb.
export WEBKIT_DISABLE_COMPOSITING_MODE=1
unset DBUS_SESSION_BUS_ADDRESS SKALD_DATA_DIR

xvfb-run -a -s "-screen 0 1280x900x24" dbus-run-session -- bash "$here/inside.sh" "$bin" "$work" "$out"
