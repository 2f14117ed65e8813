#!/usr/bin/env bash
# The peer a group of people would otherwise install: Open WebUI (PyPI open-webui, pinned),
# in a venv kept outside the clone, once per machine.
#   bench/peers/openwebui.sh install   installs it if needed; prints the venv's directory
#   bench/peers/openwebui.sh size      prints the venv's size in bytes
# Installing downloads several GB (PyTorch and its CUDA wheels come with it) and takes
# minutes; the time and size are written next to the venv (install-seconds, install-bytes).
set -euo pipefail

version=${OPEN_WEBUI_VERSION:-0.12.4}
venv=${SKALD_BENCH_DIR:-$HOME/.cache/skald/bench}/openwebui-$version

installed() { [[ -f $venv/installed ]] && [[ -x $venv/bin/open-webui ]]; }

install() {
  if installed; then
    echo "$venv"
    return
  fi
  command -v python3 >/dev/null || { echo "bench/peers/openwebui.sh: python3 is missing" >&2; exit 1; }
  rm -rf "$venv"
  python3 -m venv "$venv"
  local start=$SECONDS
  echo "installing open-webui==$version into $venv (several GB, minutes)" >&2
  nice -n 10 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --prefer-binary \
    "open-webui==$version" >&2
  echo $((SECONDS - start)) >"$venv/install-seconds"
  du -sb "$venv" | cut -f1 >"$venv/install-bytes"
  echo "$version" >"$venv/version"
  touch "$venv/installed"
  echo "$venv"
}

case ${1:-} in
  install) install ;;
  size) installed && cat "$venv/install-bytes" ;;
  *) echo "usage: bench/peers/openwebui.sh install|size" >&2; exit 2 ;;
esac
