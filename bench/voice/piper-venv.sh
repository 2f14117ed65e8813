#!/usr/bin/env bash
# Makes the yardstick of the speech benchmark: Piper's own Python package and CLI
# (PyPI piper-tts, the engine Skald's Piper voices come from), with ONNX Runtime from
# PyPI at the very version Skald loads (tests/fetch-voice-models.sh runtime), in a venv
# kept outside the clone, once per machine. Prints the venv's python.
#   bench/voice/piper-venv.sh
set -euo pipefail

version=${PIPER_TTS_VERSION:-1.8.0}
runtime=${ONNXRUNTIME_VERSION:-1.31.1}
venv=${SKALD_BENCH_DIR:-$HOME/.cache/skald/bench}/piper-tts-$version-ort-$runtime
if [[ -x $venv/bin/python ]] && "$venv/bin/python" -c 'import piper, onnxruntime' 2>/dev/null; then
  echo "$venv/bin/python"
  exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary :all: \
  "piper-tts==$version" "onnxruntime==$runtime" >&2
echo "$venv/bin/python"
