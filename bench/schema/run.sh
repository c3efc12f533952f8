#!/usr/bin/env bash
# udon::schema against ajv 8 (ajv/dist/2020) on an MCP-like inputSchema (schema.json) over
# a pool of 1,000 varied instances (generate.mjs, fixed seed), 1,000,000 validations each,
# validate-only and parse+validate (udon: through a json::Value, and the text path). Three
# alternating rounds; summary.mjs prints the medians and the ratios. Run through bench/run.sh, which sets BENCH_BIN, BENCH_DATA, NODE and
# BENCH_DIR.
set -euo pipefail

pool=$BENCH_DATA/schema-pool.json
"$NODE" "$BENCH_DIR/schema/generate.mjs" "$pool"
schema=$BENCH_DIR/schema/schema.json
count=${SCHEMA_BENCH_VALIDATIONS:-1000000}

results=$(
  for round in 1 2 3; do
    "$BENCH_BIN" "$schema" "$pool" "$count"
    (cd "$BENCH_DIR" && "$NODE" schema/ajv.mjs "$schema" "$pool" "$count")
  done
)
echo "$results"
echo "$results" | "$NODE" "$BENCH_DIR/schema/summary.mjs"
