#!/usr/bin/env bash
# bench/run.sh gate: gated versus bare calls against the demo server over HTTP, for
# catalogs of 10, 1,000 and 10,000 tools (page size 100). The anchor is the bare client.
set -euo pipefail
server=$(dirname "$BENCH_BIN")/../../src/demo_server/udon-mcp-demo-server
ninja -C "$(dirname "$BENCH_BIN")/../.." udon-mcp-demo-server >/dev/null
for tools in 10 1000 10000; do
  calls=200
  [[ $tools -eq 10000 ]] && calls=40
  "$BENCH_BIN" "$server" "$tools" "$calls"
done
