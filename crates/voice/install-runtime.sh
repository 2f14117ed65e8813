#!/usr/bin/env bash
# Puts ONNX Runtime's library, which skald-voice loads for Piper's voices, in DIR as
# libonnxruntime.so (Skald looks for it beside itself). It comes from PyPI's onnxruntime
# wheel, fetched once per machine and checked against its SHA-256
# (tests/fetch-voice-models.sh runtime). Without it Skald reads aloud with espeak-ng.
#   crates/voice/install-runtime.sh DIR
set -euo pipefail
dir=${1:?usage: crates/voice/install-runtime.sh DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
wheel=$("$root/tests/fetch-voice-models.sh" runtime)
mkdir -p "$dir"
python3 - "$wheel" "$dir/.libonnxruntime.so.new" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    [member] = [n for n in wheel.namelist() if n.startswith("onnxruntime/capi/libonnxruntime.so.")]
    with wheel.open(member) as src, open(sys.argv[2], "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
mv -f "$dir/.libonnxruntime.so.new" "$dir/libonnxruntime.so"
