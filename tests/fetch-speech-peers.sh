#!/usr/bin/env bash
# Installs the real speech servers Skald's speech providers are tested against
# (tests/it/chat/voice_peers.rs), servers nobody here wrote, into a virtual environment
# outside the clone, made once per machine and again only when a pin below changes:
#   faster-whisper-server  /v1/audio/transcriptions over faster-whisper and CTranslate2;
#   local-tts-studio       /v1/audio/speech over Piper (piper-tts, ONNX Runtime).
# Every package is pinned, none resolved (--no-deps), then checked with `pip check`.
#   tests/fetch-speech-peers.sh    prints the environment's bin folder
set -euo pipefail

pins='
faster-whisper-server==0.0.3
faster-whisper==1.2.1
ctranslate2==4.8.5
local-tts-studio==1.0.0
piper-tts==1.8.0
onnxruntime==1.32.0
annotated-doc==0.0.7
annotated-types==0.8.0
anyio==4.16.0
av==18.1.0
click==8.5.1
fastapi==0.165.0
filelock==4.3.2
flatbuffers==25.12.19
fsspec==2026.9.0
h11==0.16.0
hf-xet==1.8.0
httpcore2==2.17.0
httptools==0.9.0
httpx2==2.17.0
huggingface_hub==2.4.0
idna==3.21
numpy==2.4.6
opentelemetry-api==1.45.3
packaging==26.4
pathvalidate==3.3.1
protobuf==7.36.2
psutil==7.2.2
pydantic==2.14.4
pydantic_core==2.50.5
python-dotenv==1.2.4
python-multipart==0.0.34
PyYAML==6.0.4
starlette==1.10.0
tokenizers==0.23.3
tqdm==4.70.1
truststore==0.10.5
typing-inspection==0.4.5
typing_extensions==4.16.0
uvicorn==0.55.0
uvloop==0.23.0
watchfiles==1.3.0
websockets==17.4
'

venv=${SKALD_TEST_SPEECH_PEERS_VENV:-$HOME/.cache/skald/speech-peers}
# The environment keeps the digest of the pins it was made with: the same, and it is used
# as it is.
pinned=$(printf '%s' "$pins" | sha256sum | cut -d' ' -f1)
if [[ ! -f $venv/complete ]] || [[ $(cat "$venv/complete") != "$pinned" ]]; then
  if ! python3 -m venv --help >/dev/null 2>&1; then
    echo "fetch-speech-peers: python3's venv module is missing; install python3-venv" >&2
    exit 1
  fi
  rm -rf "$venv"
  python3 -m venv "$venv"
  requirements=$(mktemp)
  trap 'rm -f "$requirements"' EXIT
  printf '%s' "$pins" >"$requirements"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$requirements" >&2
  "$venv/bin/pip" check --disable-pip-version-check >&2
  for tool in faster-whisper-server local-tts; do
    [[ -x $venv/bin/$tool ]] || { echo "fetch-speech-peers: $tool was not installed" >&2; exit 1; }
  done
  echo "$pinned" >"$venv/complete"
fi
echo "$venv/bin"
