#!/usr/bin/env bash
# Runs bin/skald and supervises it: exit 0 stops, exit 255 restarts (an update or a
# requested restart), any other code is passed on. Builds first only when there is no
# binary at all; warns when the sources are newer than the binary.
set -uo pipefail
cd "$(dirname "$0")"

if [[ ! -x bin/skald ]]; then
  ./build.sh || exit $?
elif [[ -n $(find src src-tauri web/src database Cargo.toml Cargo.lock -newer bin/skald -print -quit 2>/dev/null) ]]; then
  echo "run: the sources are newer than bin/skald; run ./build.sh to rebuild" >&2
fi

child=0
forward() { ((child)) && kill -s "$1" "$child" 2>/dev/null; }
trap 'forward TERM' TERM
trap 'forward INT' INT

while true; do
  bin/skald "$@" &
  child=$!
  # `wait` returns early when a trapped signal arrives; wait again for the real exit.
  while true; do
    wait "$child"
    rc=$?
    kill -0 "$child" 2>/dev/null || break
  done
  child=0
  case $rc in
    0) exit 0 ;;
    255) echo "run: skald asked to restart" >&2; sleep 1 ;;
    *) exit "$rc" ;;
  esac
done
