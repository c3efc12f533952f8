#!/usr/bin/env bash
# bench/run.sh serve: per forwarded call on persistent stdio connections, through
# `udon-mcp serve` versus the same gated call in-process, at 10 tools; the anchor is the
# TypeScript SDK client calling the demo server directly (and through serve), same run.
set -euo pipefail
build=$(dirname "$BENCH_BIN")/../..
ninja -C "$build" udon-mcp udon-mcp-demo-server >/dev/null
udon=$build/src/cli/udon-mcp
demo=$build/src/demo_server/udon-mcp-demo-server
root=$(cd "$BENCH_DIR/.." && pwd)
sdk=$root/tests/node_modules/@modelcontextprotocol/sdk
calls=${BENCH_SERVE_CALLS:-2000}
"$BENCH_BIN" "$udon" "$demo" 10 "$calls" "$BENCH_DATA"
dir=$BENCH_DATA/serve
"$NODE" --no-warnings "$BENCH_DIR/serve/sdk_calls.mjs" "$sdk" "sdk -> demo server" "$calls" \
  "$demo" --synthetic-tools 10
"$NODE" --no-warnings "$BENCH_DIR/serve/sdk_calls.mjs" "$sdk" "sdk -> serve -> demo server" "$calls" \
  "$udon" serve --manifest "$dir/tools.json" --pin-file "$dir/pin" --config "$dir/mcp.json" \
  --state-dir "$dir/state-sdk"
