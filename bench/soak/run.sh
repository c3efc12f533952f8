#!/usr/bin/env bash
# bench/run.sh soak: SOAK_CALLS (100000) gated calls at SOAK_CONCURRENCY (8) against the demo
# server over HTTP (one server, a fresh session per call) and over stdio (a new server
# process per call), with the load run's checkpoints every 1,000 calls: fails on any
# unexpected outcome, on growth of descriptors, processes or threads, or on RSS growth
# beyond LOAD_RSS_TOLERANCE_KIB (2048) between the checkpoint after 10,000 calls (the warm-up
# left out: allocator arenas, the server's pools reaching their size) and the last. Not run
# in CI: it takes minutes over HTTP and tens of minutes over stdio. SOAK_TRANSPORTS picks
# the transports ("http stdio").
set -euo pipefail
server=$(dirname "$BENCH_BIN")/../../src/demo_server/udon-mcp-demo-server
ninja -C "$(dirname "$BENCH_BIN")/../.." udon-mcp-demo-server >/dev/null
calls=${SOAK_CALLS:-100000}
concurrency=${SOAK_CONCURRENCY:-8}
export LOAD_BASELINE_CALLS=${LOAD_BASELINE_CALLS:-10000}
status=0
for transport in ${SOAK_TRANSPORTS:-http stdio}; do
  echo "-- $transport"
  "$BENCH_BIN" "$server" "$transport" "$calls" "$concurrency" || status=1
done
exit $status
