#!/usr/bin/env bash
# parse + RFC 8785 canonicalization + SHA-256, on three inputs: a generated ~20 MB tool
# catalog shaped like a captured one, a generated ~20 MB catalog made of RFC 8785's slow
# paths (generate_hard.mjs: non-ASCII member names in UTF-16 order, escapes, numbers that
# need the shortest round trip), and the drift study's 329 real manifests
# (study/drift/data, one JSON array of their bytes as committed). Per input: udon's text
# fast path (digest only, and with the canonical string), udon through a nlohmann Value
# (first input only), and JSON.parse + canonicalize@5.1.0 + crypto.
# Run through bench/run.sh, which sets BENCH_BIN, BENCH_DATA, NODE and BENCH_DIR.
set -euo pipefail

generated=$BENCH_DATA/catalog-20mb.json
if [[ ! -f $generated ]]; then
  "$NODE" "$BENCH_DIR/canonical/generate.mjs" "$generated" 20
fi

hard=$BENCH_DATA/catalog-hard-20mb.json
if [[ ! -f $hard ]]; then
  "$NODE" "$BENCH_DIR/canonical/generate_hard.mjs" "$hard" 20
fi

# The real manifests, unchanged, as the elements of one array (rebuilt every run: cheap).
real=$BENCH_DATA/drift-manifests.json
{
  printf '['
  separator=''
  while IFS= read -r -d '' manifest; do
    printf '%s' "$separator"
    cat "$manifest"
    separator=','
  done < <(find "$BENCH_DIR/../study/drift/data" -name '*.tools.json' -print0 | LC_ALL=C sort -z)
  printf ']'
} > "$real"

run() {
  local input=$1
  shift
  local results
  results=$(
    for pipeline in "$@"; do "$BENCH_BIN" "$pipeline" "$input"; done
    (cd "$BENCH_DIR" && "$NODE" canonical/canonicalize.mjs "$input")
  )
  echo "$results"
  echo "$results" | "$NODE" "$BENCH_DIR/canonical/summary.mjs"
}

echo "-- generated catalog"
run "$generated" text string dom
echo "-- generated slow-path catalog"
run "$hard" text string
echo "-- the drift study's manifests"
run "$real" text string
