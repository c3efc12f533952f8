#!/usr/bin/env bash
# udon's MCP client vs the TypeScript SDK client against server-everything: one persistent
# connection doing BENCH_MCP_ITERATIONS (default 10000) x (tools/list + tools/call get-sum)
# over stdio and Streamable HTTP, and the cost of a fresh connection (spawn or connect,
# initialize, list, call, close; BENCH_MCP_FRESH times, default 20).
#
# Then client CPU per request against udon's C++ demo server (so the peer is not the
# bottleneck): the same persistent loop, BENCH_MCP_CPU_ITERATIONS (default 2000) x
# (tools/list + tools/call convert_units) over stdio and Streamable HTTP, BENCH_MCP_CPU_RUNS
# (default 5) runs of udon, the SDK and the SDK without output validation, interleaved; the
# summary prints the medians of the client process's CPU time and wall time per request.
# Run through bench/run.sh, which sets BENCH_BIN, BENCH_DATA, NODE and BENCH_DIR.
set -euo pipefail

root=$(cd "$BENCH_DIR/.." && pwd)
peers=$root/tests/node_modules
entry=$peers/@modelcontextprotocol/server-everything/dist/index.js
sdk=$peers/@modelcontextprotocol/sdk
demo=$(dirname "$BENCH_BIN")/../../src/demo_server/udon-mcp-demo-server
iterations=${BENCH_MCP_ITERATIONS:-10000}
cpu_iterations=${BENCH_MCP_CPU_ITERATIONS:-2000}
cpu_runs=${BENCH_MCP_CPU_RUNS:-5}
fresh=${BENCH_MCP_FRESH:-20}
port=${BENCH_MCP_PORT:-39017}
url=http://127.0.0.1:$port/mcp

PORT=$port "$NODE" -r "$root/tests/peers/bind-loopback.cjs" "$entry" streamableHttp \
  >"$BENCH_DATA/everything-http.log" 2>&1 &
server=$!
ninja -C "$(dirname "$BENCH_BIN")/../.." udon-mcp-demo-server >/dev/null
"$demo" --transport http --host 127.0.0.1 --port 0 >"$BENCH_DATA/demo-http.log" 2>/dev/null &
demo_server=$!
trap 'kill $server $demo_server 2>/dev/null; wait $server $demo_server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  grep -q "listening" "$BENCH_DATA/everything-http.log" && grep -q "listening" "$BENCH_DATA/demo-http.log" && break
  sleep 0.1
done
demo_url=$(sed -n '1s/.*"url":"\([^"]*\)".*/\1/p' "$BENCH_DATA/demo-http.log")
echo "load before: $(uptime)"

results=$(
  "$BENCH_BIN" loop stdio "$iterations" get-sum "$NODE" "$entry" stdio
  "$NODE" --no-warnings "$BENCH_DIR/client/sdk_client.mjs" "$sdk" loop stdio "$iterations" get-sum "$NODE" "$entry" stdio
  "$BENCH_BIN" loop http "$iterations" get-sum "$url"
  "$NODE" --no-warnings "$BENCH_DIR/client/sdk_client.mjs" "$sdk" loop http "$iterations" get-sum "$url"
  "$BENCH_BIN" fresh stdio "$fresh" get-sum "$NODE" "$entry" stdio
  "$NODE" --no-warnings "$BENCH_DIR/client/sdk_client.mjs" "$sdk" fresh stdio "$fresh" get-sum "$NODE" "$entry" stdio
  "$BENCH_BIN" fresh http "$fresh" get-sum "$url"
  "$NODE" --no-warnings "$BENCH_DIR/client/sdk_client.mjs" "$sdk" fresh http "$fresh" get-sum "$url"
  for _ in $(seq 1 "$cpu_runs"); do
    for transport in stdio http; do
      if [[ $transport == stdio ]]; then peer=("$demo"); else peer=("$demo_url"); fi
      "$BENCH_BIN" loop "$transport" "$cpu_iterations" convert_units "${peer[@]}"
      "$NODE" --no-warnings "$BENCH_DIR/client/sdk_client.mjs" "$sdk" loop "$transport" "$cpu_iterations" \
        convert_units "${peer[@]}"
      SDK_OUTPUT_VALIDATION=off "$NODE" --no-warnings "$BENCH_DIR/client/sdk_client.mjs" "$sdk" loop \
        "$transport" "$cpu_iterations" convert_units "${peer[@]}"
    done
  done
)
echo "load after: $(uptime)"
echo "$results"
echo "$results" | "$NODE" "$BENCH_DIR/client/summary.mjs"
