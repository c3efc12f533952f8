#!/usr/bin/env bash
# bench/run.sh close: Client::Close() of a stdio connection to the demo server, after
# list + call, in the legacy era (initialize, no stream) and in the modern era with the
# subscriptions/listen stream the gate opens, CLOSE_BENCH_CLOSES times each (default 200).
set -euo pipefail
server=$(dirname "$BENCH_BIN")/../../src/demo_server/udon-mcp-demo-server
ninja -C "$(dirname "$BENCH_BIN")/../.." udon-mcp-demo-server >/dev/null
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BENCH_BIN" "$server" "${CLOSE_BENCH_CLOSES:-200}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
