#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 14, ASan+UBSan) and runs each for a fixed time.
# Usage: scripts/fuzz.sh [--smoke] [--seconds N] [--build-dir DIR] [target...]
#   --smoke          10 seconds per target (the CI setting)
#   --seconds N      N seconds per target (default 60)
#   --build-dir DIR  reuse DIR if it is configured (it must have -DUDON_FUZZ=ON), else
#                    configure a fuzz build there (default build-fuzz); only the fuzzer
#                    targets are built
#   target...        e.g. json_parse schema (default: every *_fuzzer the build defines)
# Seeds are generated from the test data into DIR/fuzz/seeds (fuzz/make_seeds.py); what
# the fuzzer learns accumulates in DIR/fuzz/corpus/<target>. A crash, timeout or OOM fails
# the run and prints the artifact: fix the bug, then commit the artifact to
# fuzz/regressions/<target>/ so the replay unit test keeps it fixed. Nothing is copied
# into the source tree automatically.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

seconds=60
build_dir=build-fuzz
targets=()
while (($#)); do
  case "$1" in
    --smoke) seconds=10 ;;
    --seconds) seconds="$2"; shift ;;
    --build-dir) build_dir="$2"; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done

if [[ -f "$build_dir/CMakeCache.txt" ]]; then
  if ! grep -q '^UDON_FUZZ:BOOL=ON$' "$build_dir/CMakeCache.txt"; then
    echo "fuzz.sh: $build_dir is configured without -DUDON_FUZZ=ON (needs clang)" >&2
    exit 2
  fi
else
  CXX="${CXX:-clang++-14}" cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Check \
    -DUDON_FUZZ=ON -DUDON_WERROR=ON -DUDON_BUILD_TESTS=OFF -DUDON_BUILD_BENCH=OFF >/dev/null
fi

if ((${#targets[@]} == 0)); then
  mapfile -t targets < <(cmake --build "$build_dir" --target help |
                         sed -n 's/^\([a-z0-9_]*\)_fuzzer: .*/\1/p' | sort)
fi
if ((${#targets[@]} == 0)); then
  echo "fuzz.sh: $build_dir defines no fuzz targets" >&2
  exit 2
fi
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]/%/_fuzzer}"
python3 fuzz/make_seeds.py --shared-dir "${UDON_SHARED_DIR:-../shared}" \
  --out "$build_dir/fuzz/seeds" "${targets[@]}"

# Keeps inputs small enough for thousands of runs a second; seeds are cut to this length.
max_len() {
  case "$1" in
    schema|manifest|mcp_connection) echo 16384 ;;
    *) echo 4096 ;;
  esac
}

failed=()
summary=()
for target in "${targets[@]}"; do
  fuzzer="$(find "$build_dir" -name "${target}_fuzzer" -type f -perm -u+x | head -n 1)"
  corpus="$build_dir/fuzz/corpus/$target"
  artifacts="$build_dir/fuzz/artifacts/$target"
  log="$build_dir/fuzz/logs/$target.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  rm -f "$artifacts"/*
  inputs=("$corpus" "$build_dir/fuzz/seeds/$target")
  for committed in "fuzz/regressions/$target" "fuzz/seeds/$target"; do
    [[ -d "$committed" ]] && inputs+=("$committed")
  done
  echo "== $target: ${seconds}s"
  status=0
  # One process (the machine is shared); ASan aborts on the first error.
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len="$(max_len "$target")" -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "${inputs[@]}" >"$log" 2>&1 || status=$?
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")"
  cov="$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)"
  summary+=("$(printf '%-16s %10s runs %8s exec/s  %s' "$target" "${execs:-?}" "${rate:-?}" "$cov")")
  found=("$artifacts"/*)
  if ((status != 0)) || [[ -e "${found[0]}" ]]; then
    failed+=("$target")
    echo "!! $target FAILED (exit $status); log: $log" >&2
    grep -E 'ERROR:|fuzz oracle failed|runtime error|SUMMARY' "$log" | head -n 5 >&2 || true
    for artifact in "${found[@]}"; do
      [[ -e "$artifact" ]] || continue
      [[ "$artifact" = /* ]] || artifact="$root/$artifact"
      echo "!! artifact: $artifact" >&2
      echo "!!   reproduce: $fuzzer $artifact" >&2
      echo "!!   after the fix: cp $artifact fuzz/regressions/$target/" >&2
    done
  fi
done

echo
echo "== summary (${seconds}s per target, build $build_dir)"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
  echo "!! fuzzing FAILED: ${failed[*]}" >&2
  exit 1
fi
