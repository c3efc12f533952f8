#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 14, ASan+UBSan) and runs each for a fixed time.
# Usage: scripts/fuzz.sh [--smoke] [--seconds N] [--empty-seconds N] [--build-dir DIR] [target...]
#   --smoke          10 seconds per target, then 4 from an empty corpus (the CI setting)
#   --seconds N      N seconds per target (default 60)
#   --empty-seconds N  also run each target N seconds from an empty corpus, without the
#                    seeds or what it learned (default 0: no such run), so an oracle that
#                    only the seeds kept from a trivial input (`{}`) still fails
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
empty_seconds=0
build_dir=build-fuzz
targets=()
while (($#)); do
  case "$1" in
    --smoke) seconds=10; empty_seconds=4 ;;
    --seconds) seconds="$2"; shift ;;
    --empty-seconds) empty_seconds="$2"; shift ;;
    --build-dir) build_dir="$2"; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
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
  # Ninja also lists phony helpers named after a target (cmake_object_order_depends_target_*).
  mapfile -t targets < <(cmake --build "$build_dir" --target help |
                         sed -n '/^cmake_/!s/^\([a-z0-9_]*\)_fuzzer: .*/\1/p' | sort)
fi
if ((${#targets[@]} == 0)); then
  echo "fuzz.sh: $build_dir defines no fuzz targets" >&2
  exit 2
fi
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]/%/_fuzzer}"
# Seeds come from the same test data as the tests: the project's own and the external
# suites, pinned and checked, in the build tree.
scripts/testdata.sh --out "$build_dir/testdata"
python3 fuzz/make_seeds.py --testdata-dir "$build_dir/testdata" \
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
# run_target TARGET LABEL SECONDS CORPUS... : one libFuzzer run; records its summary line
# and any failure with its artifacts.
run_target() {
  local target="$1" label="$2" run_seconds="$3"
  shift 3
  local fuzzer artifacts log status=0 execs rate cov
  fuzzer="$(find "$build_dir" -name "${target}_fuzzer" -type f -perm -u+x | head -n 1)"
  artifacts="$build_dir/fuzz/artifacts/$label"
  log="$build_dir/fuzz/logs/$label.log"
  mkdir -p "$artifacts" "$(dirname "$log")"
  rm -f "$artifacts"/*
  echo "== $label: ${run_seconds}s"
  # One process (the machine is shared); ASan aborts on the first error.
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    "$fuzzer" -max_total_time="$run_seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len="$(max_len "$target")" -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$@" >"$log" 2>&1 || status=$?
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")"
  cov="$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1)"
  summary+=("$(printf '%-22s %10s runs %8s exec/s  %s' "$label" "${execs:-?}" "${rate:-?}" "$cov")")
  local found=("$artifacts"/*)
  if ((status != 0)) || [[ -e "${found[0]}" ]]; then
    failed+=("$label")
    echo "!! $label FAILED (exit $status); log: $log" >&2
    grep -E 'ERROR:|fuzz oracle failed|runtime error|SUMMARY' "$log" | head -n 5 >&2 || true
    for artifact in "${found[@]}"; do
      [[ -e "$artifact" ]] || continue
      [[ "$artifact" = /* ]] || artifact="$root/$artifact"
      echo "!! artifact: $artifact" >&2
      echo "!!   reproduce: $fuzzer $artifact" >&2
      echo "!!   after the fix: cp $artifact fuzz/regressions/$target/" >&2
    done
  fi
}

for target in "${targets[@]}"; do
  corpus="$build_dir/fuzz/corpus/$target"
  mkdir -p "$corpus"
  inputs=("$corpus" "$build_dir/fuzz/seeds/$target")
  for committed in "fuzz/regressions/$target" "fuzz/seeds/$target"; do
    [[ -d "$committed" ]] && inputs+=("$committed")
  done
  run_target "$target" "$target" "$seconds" "${inputs[@]}"
  if ((empty_seconds > 0)); then
    # A fresh, empty corpus each time: what the seeds hide, the first inputs find.
    empty="$build_dir/fuzz/empty/$target"
    rm -rf "$empty"
    mkdir -p "$empty"
    run_target "$target" "$target.empty" "$empty_seconds" "$empty"
  fi
done

echo
echo "== summary (${seconds}s per target, ${empty_seconds}s more from an empty corpus, build $build_dir)"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
  echo "!! fuzzing FAILED: ${failed[*]}" >&2
  exit 1
fi
