#!/usr/bin/env bash
# Builds llama.cpp's own benchmark tool, llama-bench, the yardstick of the local_model
# benchmark: from the llama.cpp that llama-cpp-python vendors (PyPI is reachable where
# GitHub is not; pip fetches the source), statically linked. Kept outside the clone;
# prints the tool's path.
#   benches/llama-bench.sh baseline   built the way Skald's ggml is: GGML_NATIVE off, so
#                                     ggml's portable baseline (AVX2, FMA, F16C, BMI2)
#   benches/llama-bench.sh native     built for this very CPU (AVX-512, AMX if it has them)
set -euo pipefail

flavour=${1:-baseline}
case $flavour in
  baseline) native=OFF ;;
  native) native=ON ;;
  *) echo "usage: benches/llama-bench.sh [baseline|native]" >&2; exit 2 ;;
esac
version=${LLAMA_CPP_PYTHON_VERSION:-0.3.36}
dir=${SKALD_LLAMA_BENCH_DIR:-$HOME/.cache/skald/llama-bench-$version-$flavour}
tool=$dir/llama-bench
if [[ -x $tool ]]; then
  echo "$tool"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --no-binary llama-cpp-python --disable-pip-version-check \
  "llama-cpp-python==$version" -d "$work" >&2
tar -xzf "$work"/llama_cpp_python-"$version".tar.gz -C "$work"
src=$(ls -d "$work"/llama_cpp_python-*/vendor/llama.cpp)
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=$native -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
  -DLLAMA_BUILD_TOOLS=ON >&2
cmake --build "$work/build" --target llama-bench -j "$(nproc)" >&2
mkdir -p "$dir"
cp "$work/build/bin/llama-bench" "$tool.new"
mv "$tool.new" "$tool"
echo "$tool"
