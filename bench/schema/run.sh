#!/usr/bin/env bash
# udon::schema against ajv 8 (ajv/dist/2020) on an MCP-like inputSchema (schema.json) over
# a pool of 1,000 varied instances (generate.mjs, fixed seed), 1,000,000 validations each,
# validate-only and parse+validate (udon: through a json::Value, and the text path). Three
# alternating rounds; summary.mjs prints the medians and the ratios. Then `udon-mcp
# schema-check` over 1,500 instance files against ajv reading the same files (whole
# processes, ajv's work alone, ajv warm), and the same on the drift study's real schemas
# with instances generated from them (drift.mjs). Run through bench/run.sh, which sets
# BENCH_BIN, BENCH_DATA, NODE and BENCH_DIR.
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

# schema-check over SCHEMA_CHECK_FILES (1500) instance files of one pool, three ways, in
# SCHEMA_CHECK_ROUNDS (15) alternating rounds of whole processes: udon-mcp schema-check
# over every file, the same over one file (its start and the schema's compilation), and
# ajv reading, parsing and validating the same files in one Node process. Then ajv's work
# alone without Node's start (--time), and ajv warm (--warm: compiled, its JIT warm, the
# median pass over every file), against which udon's whole process less its start (the
# first command less the second) is the per-file work of both.
build=$(cd "$(dirname "$BENCH_BIN")/../.." && pwd)
ninja -C "$build" udon-mcp >/dev/null
files_section() {
  local label=$1 schema=$2 pool=$3 files=$4
  "$NODE" "$BENCH_DIR/schema/files.mjs" "$pool" "$files" "${SCHEMA_CHECK_FILES:-1500}"
  local instances=("$files"/*.json)
  echo "== schema-check, $label: ${#instances[@]} instance files, one process (ratio: other time / udon time)"
  (cd "$BENCH_DIR" && python3 support/time_processes.py "${SCHEMA_CHECK_ROUNDS:-15}" \
    -- "udon-mcp schema-check" "$build/src/cli/udon-mcp" schema-check --schema "$schema" "${instances[@]}" \
    -- "udon-mcp schema-check, one file" "$build/src/cli/udon-mcp" schema-check --schema "$schema" "${instances[0]}" \
    -- "ajv 8.20.0 (node ajv_files.mjs)" "$NODE" schema/ajv_files.mjs "$schema" "${instances[@]}")
  for _ in $(seq "${SCHEMA_CHECK_ROUNDS:-15}"); do
    (cd "$BENCH_DIR" && "$NODE" schema/ajv_files.mjs --time "$schema" "${instances[@]}")
  done | python3 -c '
import json, statistics, sys
runs = [json.loads(line) for line in sys.stdin]
print("ajv in-process (compile + read + parse + validate, no Node start): wall %.2f ms  cpu %.2f ms  (%d runs, medians)"
      % (statistics.median(r["wall_ms"] for r in runs), statistics.median(r["cpu_ms"] for r in runs), len(runs)))'
  (cd "$BENCH_DIR" && "$NODE" schema/ajv_files.mjs --warm "$schema" "${instances[@]}") | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("ajv warm (one pass over every file: read + parse + validate, median of %d): wall %.2f ms  cpu %.2f ms"
      % (r["passes"], r["warm_wall_ms"], r["warm_cpu_ms"]))'
}
files_section "the bench pool" "$schema" "$pool" "$BENCH_DATA/schema-files"

# The drift study's schemas: its SCHEMA_DRIFT_SCHEMAS (10) largest distinct inputSchemas,
# each with 1,000 instances generated from it (drift.mjs): the in-process rates above, one
# round each, udon's text path against ajv's JSON.parse + validate, and both must agree on
# which instances are valid; then the files part with the largest of them.
drift=$BENCH_DATA/schema-drift
"$NODE" "$BENCH_DIR/schema/drift.mjs" "$BENCH_DIR/../study/drift/data" "$drift" \
  "${SCHEMA_DRIFT_SCHEMAS:-10}" 1000
echo "== the drift study's schemas, in process (${SCHEMA_DRIFT_VALIDATIONS:-200000} validations each)"
for drift_schema in "$drift"/*.schema.json; do
  drift_pool=${drift_schema%.schema.json}.pool.json
  {
    "$BENCH_BIN" "$drift_schema" "$drift_pool" "${SCHEMA_DRIFT_VALIDATIONS:-200000}"
    (cd "$BENCH_DIR" && "$NODE" schema/ajv.mjs "$drift_schema" "$drift_pool" "${SCHEMA_DRIFT_VALIDATIONS:-200000}")
  } | "$NODE" "$BENCH_DIR/schema/summary.mjs" | "$NODE" -e '
const s = JSON.parse(require("fs").readFileSync(0, "utf8"));
const [u, a] = [s["udon::schema"], s["ajv 8.20.0 (dist/2020)"]];
console.log(`${process.argv[1]}: valid ${u.valid_in_pool}/${a.valid_in_pool}; parse+validate/cpu s udon text ${u.parse_validate_text_per_cpu_s}, ajv ${a.parse_validate_per_cpu_s}: ${s.ratio_udon_over_ajv.parse_validate_text_per_cpu_s}x; validate only ${s.ratio_udon_over_ajv.validate_per_cpu_s}x`);
' "$(basename "$drift_schema")"
done
files_section "the largest drift schema" "$drift/00.schema.json" "$drift/00.pool.json" \
  "$BENCH_DATA/schema-drift-files"
