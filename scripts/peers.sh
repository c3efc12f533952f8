#!/usr/bin/env bash
# Installs the pinned npm test peers (tests/package-lock.json) when they are missing or
# stale: MCP server-everything, the official conformance suite, the TypeScript SDK and
# Node 22 (the conformance suite needs it).
set -euo pipefail
cd "$(dirname "$0")/../tests"
stamp=node_modules/.udon-lock-sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
echo "$want" > "$stamp"
