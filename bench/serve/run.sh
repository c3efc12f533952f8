#!/usr/bin/env bash
# bench/run.sh serve: `udon-mcp serve` measured against what a host would use instead, in
# one run (docs/benchmarks.md, "serve"):
#   1. serve_bench: per forwarded call on persistent stdio connections, udon's client
#      through serve versus the same gated call in-process, at 10 tools (the gateway's own
#      cost); it writes the manifest, pin and configuration the rest uses;
#   2. gateways.mjs: the TypeScript SDK client through serve versus straight to the demo
#      server (stdio, and HTTP in front of the demo server over HTTP), then serve,
#      mcp-proxy and supergateway (stateful) over HTTP in front of the same stdio demo
#      server: sequential latency, closed-loop throughput at 1, 8, 64 and 256 sessions each
#      with its GET stream open, failed calls, the gateway's CPU per call and its memory;
#      the stdio row also through stdio_relay (the floor: lines moved, the gate's upstream
#      exchanges made, nothing checked; and with the threads the gate's rules keep), the http
#      row also through http_relay (the floor: the gate's two exchanges, nothing checked).
# BENCH_SERVE_CALLS (2000) sequential calls per row, BENCH_SERVE_SECONDS (20) per level,
# BENCH_SERVE_LEVELS ("1 8 64 256"), BENCH_SERVE_GATEWAYS, BENCH_SERVE_ROWS, BENCH_SERVE_JSON (a file for
# the figures). A smoke run: BENCH_SERVE_SECONDS=2 BENCH_SERVE_CALLS=200 bench/run.sh serve
set -euo pipefail
build=$(dirname "$BENCH_BIN")/../..
ninja -C "$build" udon-mcp udon-mcp-demo-server stdio_relay http_relay >/dev/null
udon=$build/src/cli/udon-mcp
demo=$build/src/demo_server/udon-mcp-demo-server
root=$(cd "$BENCH_DIR/.." && pwd)
sdk=$root/tests/node_modules/@modelcontextprotocol/sdk
"$BENCH_BIN" "$udon" "$demo" 10 "${BENCH_SERVE_CALLS:-2000}" "$BENCH_DATA"
relay=$build/bench/serve/stdio_relay
"$NODE" --no-warnings "$BENCH_DIR/serve/gateways.mjs" "$sdk" "$BENCH_DIR" "$udon" "$demo" "$BENCH_DATA" "$relay" \
  "$build/bench/serve/http_relay"
