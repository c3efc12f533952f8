#!/usr/bin/env bash
# bench/run.sh close: Client::Close() of a stdio connection to the demo server, after
# initialize + list + call, with and without a subscriptions/listen stream open (the gate
# opens one), CLOSE_BENCH_CLOSES times each (default 200); medians and tails in ms.
set -euo pipefail
server=$(dirname "$BENCH_BIN")/../../src/demo_server/udon-mcp-demo-server
ninja -C "$(dirname "$BENCH_BIN")/../.." udon-mcp-demo-server >/dev/null
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BENCH_BIN" "$server" "${CLOSE_BENCH_CLOSES:-200}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
