#!/usr/bin/env bash
# Installs the real MCP servers the integration tests talk to, at the versions pinned in
# tests/mcp: the npm ones (package-lock.json) into tests/mcp/node_modules, the PyPI ones
# (requirements.txt, every package pinned, none resolved) into a virtual environment
# outside the clone, made once per requirements file.
#   tests/fetch-mcp-servers.sh    prints the environment's python
set -euo pipefail
cd "$(dirname "$0")/mcp"

npm ci --no-audit --no-fund --loglevel=error >&2

pinned=$(sha256sum requirements.txt | cut -c1-12)
venv=${SKALD_TEST_MCP_VENV:-$HOME/.cache/skald/mcp-venv-$pinned}
if [[ ! -f $venv/complete ]]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r requirements.txt >&2
  "$venv/bin/pip" check --disable-pip-version-check >&2
  touch "$venv/complete"
fi
echo "$venv/bin/python"
