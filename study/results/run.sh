#!/usr/bin/env bash
# The result-mapping study: calls the read-only tools of tools.json through udon-mcp (capture,
# review, pin, `udon-mcp call` under the sandbox without network), one server at a time, and
# writes records.json (value-free records and the figures). Usage: study/results/run.sh
# [--server NAME]... [--series newest|firstOutputSchema]...  udon-mcp from $UDON_MCP, else
# the build's; the install cache from $UDON_DRIFT_CACHE (the drift study's installer). README.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export UDON_MCP="${UDON_MCP:-$here/../../build/src/cli/udon-mcp}"
exec python3 "$here/measure.py" "$@"
