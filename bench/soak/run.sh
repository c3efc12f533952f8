#!/usr/bin/env bash
# bench/run.sh soak: SOAK_CALLS (100000) gated calls at SOAK_CONCURRENCY (8) against the demo
# server over HTTP (one server, a fresh session per call) and over stdio (a new server
# process per call): the load run (bench/load/run.sh) with the soak's numbers and its
# checkpoints every 1,000 calls. Fails on any unexpected outcome, on growth of descriptors,
# processes or threads, or on RSS growth beyond LOAD_RSS_TOLERANCE_KIB (2048) between the
# checkpoint after 10,000 calls (the warm-up left out: allocator arenas, the server's pools
# reaching their size) and the last. Not run in CI: it takes minutes over HTTP and tens of
# minutes over stdio. SOAK_TRANSPORTS picks the transports ("http stdio").
set -euo pipefail
export LOAD_CALLS=${SOAK_CALLS:-100000}
export LOAD_CONCURRENCY=${SOAK_CONCURRENCY:-8}
export LOAD_TRANSPORTS=${SOAK_TRANSPORTS:-http stdio}
export LOAD_BASELINE_CALLS=${LOAD_BASELINE_CALLS:-10000}
exec bash "$(dirname "${BASH_SOURCE[0]}")/../load/run.sh"
