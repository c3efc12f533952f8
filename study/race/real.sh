#!/usr/bin/env bash
# The notification race on real servers (study/race/README.md): sessions.py records what
# each study server's newest captured release declares and announces (sessions.json), then
# real.py probes read-only tools of the reference servers under load (real.json). Every
# release is installed from the drift study's committed lock file (cache: $UDON_DRIFT_CACHE)
# and runs in udon-mcp's capture sandbox with no network; servers run one at a time.
# Usage: study/race/real.sh [--allow-root]     (udon-mcp from $UDON_MCP, else build/src/cli/udon-mcp)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 "$here/sessions.py" "$@"
python3 "$here/real.py" "$@"
