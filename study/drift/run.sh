#!/usr/bin/env bash
# The drift study: installs every release listed in servers.json from the npm registry
# (cached), captures each under udon-mcp's sandbox without network, twice, and writes
# data/<package>/<version>.tools.json, data/index.json and one index.json per package.
# Usage: study/drift/run.sh [--server NAME]... [--jobs N] [--retry-failed] [--timeout S]
# udon-mcp is taken from $UDON_MCP, else build/src/cli/udon-mcp, else PATH; the cache
# from $UDON_DRIFT_CACHE (default ~/.cache/udon-mcp-drift). See README.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
if [[ -z "${UDON_MCP:-}" ]]; then
  if [[ -x "$repo/build/src/cli/udon-mcp" ]]; then
    export UDON_MCP="$repo/build/src/cli/udon-mcp"
  else
    export UDON_MCP="udon-mcp"
  fi
fi
exec python3 "$here/capture.py" "$@"
