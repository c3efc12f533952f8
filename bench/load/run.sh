#!/usr/bin/env bash
# bench/run.sh load: LOAD_CALLS (10000) gated calls at LOAD_CONCURRENCY (8) against the demo
# server, over HTTP (one server, a fresh session per call) and over stdio (a new server
# process per call). Fails on any unexpected outcome, on growth of descriptors, processes or
# threads, or on RSS growth beyond LOAD_RSS_TOLERANCE_KIB (2048). LOAD_TRANSPORTS picks
# the transports ("http stdio"); LOAD_NO_GET_STREAM=1 leaves out the HTTP GET stream. No npm
# anchor: the figures are absolute.
set -euo pipefail
server=$(dirname "$BENCH_BIN")/../../src/demo_server/udon-mcp-demo-server
ninja -C "$(dirname "$BENCH_BIN")/../.." udon-mcp-demo-server >/dev/null
calls=${LOAD_CALLS:-10000}
concurrency=${LOAD_CONCURRENCY:-8}
status=0
for transport in ${LOAD_TRANSPORTS:-http stdio}; do
  echo "-- $transport"
  "$BENCH_BIN" "$server" "$transport" "$calls" "$concurrency" || status=1
done
exit $status
