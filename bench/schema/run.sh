#!/usr/bin/env bash
# udon::schema against ajv 8 (ajv/dist/2020) on an MCP-like inputSchema (schema.json) over
# a pool of 1,000 varied instances (generate.mjs, fixed seed), 1,000,000 validations each,
# validate-only and parse+validate (udon: through a json::Value, and the text path). Three
# alternating rounds; summary.mjs prints the medians and the ratios. Then `udon-mcp
# schema-check` over 1,500 instance files against ajv reading the same files, whole processes. Run through bench/run.sh, which sets BENCH_BIN, BENCH_DATA, NODE and
# BENCH_DIR.
set -euo pipefail

pool=$BENCH_DATA/schema-pool.json
"$NODE" "$BENCH_DIR/schema/generate.mjs" "$pool"
schema=$BENCH_DIR/schema/schema.json
count=${SCHEMA_BENCH_VALIDATIONS:-1000000}

if [[ -z ${SCHEMA_CHECK_ONLY:-} ]]; then  # SCHEMA_CHECK_ONLY=1: the files part alone
results=$(
  for round in 1 2 3; do
    "$BENCH_BIN" "$schema" "$pool" "$count"
    (cd "$BENCH_DIR" && "$NODE" schema/ajv.mjs "$schema" "$pool" "$count")
  done
)
echo "$results"
echo "$results" | "$NODE" "$BENCH_DIR/schema/summary.mjs"
fi

# schema-check over SCHEMA_CHECK_FILES (1500) instance files in one process, against ajv
# reading, parsing and validating the same files in one Node process; whole processes,
# SCHEMA_CHECK_ROUNDS (15) alternating rounds.
build=$(cd "$(dirname "$BENCH_BIN")/../.." && pwd)
ninja -C "$build" udon-mcp >/dev/null
files=$BENCH_DATA/schema-files
"$NODE" "$BENCH_DIR/schema/files.mjs" "$pool" "$files" "${SCHEMA_CHECK_FILES:-1500}"
instances=("$files"/*.json)
echo "== schema-check: ${#instances[@]} instance files, one process (ratio: ajv time / udon time)"
(cd "$BENCH_DIR" && python3 support/time_processes.py "${SCHEMA_CHECK_ROUNDS:-15}" \
  -- "udon-mcp schema-check" "$build/src/cli/udon-mcp" schema-check --schema "$schema" "${instances[@]}" \
  -- "ajv 8.20.0 (node ajv_files.mjs)" "$NODE" schema/ajv_files.mjs "$schema" "${instances[@]}")
# ajv's work alone, without Node's start: udon's whole process against it.
for _ in $(seq "${SCHEMA_CHECK_ROUNDS:-15}"); do
  (cd "$BENCH_DIR" && "$NODE" schema/ajv_files.mjs --time "$schema" "${instances[@]}")
done | python3 -c '
import json, statistics, sys
runs = [json.loads(line) for line in sys.stdin]
print("ajv in-process (compile + read + parse + validate, no Node start): wall %.2f ms  cpu %.2f ms  (%d runs, medians)"
      % (statistics.median(r["wall_ms"] for r in runs), statistics.median(r["cpu_ms"] for r in runs), len(runs)))'

