#!/usr/bin/env bash
# parse + RFC 8785 canonicalization + SHA-256 of a ~20 MB tool catalog: udon's text fast
# path (digest only, and with the canonical string), udon through a nlohmann Value, and
# JSON.parse + canonicalize@5.1.0 + crypto.
# Run through bench/run.sh, which sets BENCH_BIN, BENCH_DATA, NODE and BENCH_DIR.
set -euo pipefail

input=$BENCH_DATA/catalog-20mb.json
if [[ ! -f $input ]]; then
  "$NODE" "$BENCH_DIR/canonical/generate.mjs" "$input" 20
fi

results=$(
  "$BENCH_BIN" text "$input"
  "$BENCH_BIN" string "$input"
  "$BENCH_BIN" dom "$input"
  (cd "$BENCH_DIR" && "$NODE" canonical/canonicalize.mjs "$input")
)
echo "$results"
echo "$results" | "$NODE" "$BENCH_DIR/canonical/summary.mjs"
