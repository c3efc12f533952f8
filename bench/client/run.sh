#!/usr/bin/env bash
# udon's MCP client vs the TypeScript SDK client against server-everything: one persistent
# connection doing BENCH_MCP_ITERATIONS (default 10000) x (tools/list + tools/call get-sum)
# over stdio and Streamable HTTP, and the cost of a fresh connection (spawn or connect,
# initialize, list, call, close; BENCH_MCP_FRESH times, default 20).
# Run through bench/run.sh, which sets BENCH_BIN, BENCH_DATA, NODE and BENCH_DIR.
set -euo pipefail

root=$(cd "$BENCH_DIR/.." && pwd)
peers=$root/tests/node_modules
entry=$peers/@modelcontextprotocol/server-everything/dist/index.js
sdk=$peers/@modelcontextprotocol/sdk
iterations=${BENCH_MCP_ITERATIONS:-10000}
fresh=${BENCH_MCP_FRESH:-20}
port=${BENCH_MCP_PORT:-39017}
url=http://127.0.0.1:$port/mcp

PORT=$port "$NODE" -r "$root/tests/peers/bind-loopback.cjs" "$entry" streamableHttp \
  >"$BENCH_DATA/everything-http.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  grep -q "listening" "$BENCH_DATA/everything-http.log" && break
  sleep 0.1
done

results=$(
  "$BENCH_BIN" loop stdio "$iterations" "$NODE" "$entry"
  "$NODE" --no-warnings "$BENCH_DIR/client/sdk_client.mjs" "$sdk" loop stdio "$iterations" "$NODE" "$entry"
  "$BENCH_BIN" loop http "$iterations" "$url"
  "$NODE" --no-warnings "$BENCH_DIR/client/sdk_client.mjs" "$sdk" loop http "$iterations" "$url"
  "$BENCH_BIN" fresh stdio "$fresh" "$NODE" "$entry"
  "$NODE" --no-warnings "$BENCH_DIR/client/sdk_client.mjs" "$sdk" fresh stdio "$fresh" "$NODE" "$entry"
  "$BENCH_BIN" fresh http "$fresh" "$url"
  "$NODE" --no-warnings "$BENCH_DIR/client/sdk_client.mjs" "$sdk" fresh http "$fresh" "$url"
)
echo "$results"
echo "$results" | "$NODE" "$BENCH_DIR/client/summary.mjs"
