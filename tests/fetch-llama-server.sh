#!/usr/bin/env bash
# Installs llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`), a real
# model server nobody here wrote, which the OpenAI-compatible provider is tested against
# (tests/it/chat/llama_server.rs). It compiles llama.cpp from the sdist once, into a virtual
# environment outside the clone named by a digest of the pins and build flags below, so it is
# made once per machine and again only when one of them changes.
# Every package is pinned, none resolved (--no-deps), then checked with `pip check`.
#   tests/fetch-llama-server.sh             builds the environment if needed, prints its bin folder
#   tests/fetch-llama-server.sh --cached    prints the bin folder only when it is already built,
#                                           nothing otherwise (CI: no compile on a fresh machine)
set -euo pipefail

cached=false
case ${1:-} in
  '') ;;
  --cached) cached=true ;;
  *) echo "usage: tests/fetch-llama-server.sh [--cached]" >&2; exit 2 ;;
esac

# What compiles llama.cpp: scikit-build-core, used without build isolation so it is pinned too.
build_pins='
scikit_build_core==1.1.2
packaging==26.4
pathspec==1.1.1
'
pins='
llama_cpp_python==0.3.36
diskcache==5.6.3
Jinja2==3.1.6
MarkupSafe==3.0.4
numpy==2.4.6
typing_extensions==4.16.0
fastapi==0.165.0
pydantic-settings==2.16.3
PyYAML==6.0.4
sse-starlette==3.7.1
starlette-context==0.3.6
uvicorn==0.55.0
annotated-doc==0.0.7
annotated-types==0.8.0
anyio==4.16.0
click==8.5.1
h11==0.16.0
idna==3.21
opentelemetry-api==1.45.3
pydantic==2.14.4
pydantic_core==2.50.5
python-dotenv==1.2.4
starlette==1.10.0
typing-inspection==0.4.5
'
# The build never targets the builder's CPU, so the environment runs on any x86-64 machine
# with AVX2 (x86-64-v3) and no fault from an instruction the runner lacks: no -march=native,
# and none of the AVX-512, AVX-VNNI or AMX kernels (llama.cpp's defaults for them are off
# today; spelled out so a later pin cannot turn them on). One CPU backend linked in, not
# loaded per CPU at run time, and no multimodal library (the tests send text only).
cmake_args='-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DLLAVA_BUILD=OFF'

pinned=$(printf '%s\n%s\n%s' "$build_pins" "$pins" "$cmake_args" | sha256sum | cut -c1-12)
venv=${SKALD_TEST_LLAMA_SERVER_VENV:-$HOME/.cache/skald/llama-server-$pinned}

if [[ -f $venv/complete ]]; then
  echo "$venv/bin"
  exit 0
fi
if $cached; then
  exit 0
fi

if ! python3 -m venv --help >/dev/null 2>&1; then
  echo "fetch-llama-server: python3's venv module is missing; install python3-venv" >&2
  exit 1
fi
if ! command -v cmake >/dev/null; then
  echo "fetch-llama-server: cmake is missing; run ./deps.sh" >&2
  exit 1
fi
rm -rf "$venv"
python3 -m venv "$venv"
requirements=$(mktemp -d)
trap 'rm -rf "$requirements"' EXIT
printf '%s' "$build_pins" >"$requirements/build.txt"
printf '%s' "$pins" >"$requirements/server.txt"
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps)
"${pip[@]}" -r "$requirements/build.txt" >&2
started=$(date +%s)
echo "fetch-llama-server: compiling llama.cpp (llama_cpp_python from source, 2 jobs); this takes a while once" >&2
# No wheel cache: a wheel built earlier with other flags must not stand in for this build.
CMAKE_ARGS=$cmake_args CMAKE_BUILD_PARALLEL_LEVEL=2 nice -n 10 \
  "${pip[@]}" --no-cache-dir --no-build-isolation --no-binary llama_cpp_python \
  -r "$requirements/server.txt" >&2
echo "fetch-llama-server: built in $(($(date +%s) - started)) s" >&2
"$venv/bin/pip" check --disable-pip-version-check >&2
"$venv/bin/python" -c 'import llama_cpp.server.app' >&2
echo "$pinned" >"$venv/complete"
echo "$venv/bin"
