#!/usr/bin/env bash
# The README's test command: installs dependencies and peers, builds, runs every test.
# Under CI (CI=true) it also builds the tree, benchmarks and fuzzers included, with clang 14,
# warnings as errors, AddressSanitizer and UndefinedBehaviorSanitizer, so both compilers stay
# clean (the test targets it does not run, those without the unit label, only syntax-checked:
# UDON_UNIT_TESTS_ONLY); runs the unit tests again in that build (tests/sanitizers/run.sh
# fails a test on any sanitizer report, also one from a process the test started), then the
# fuzzers' smoke run. Every stage runs; the exit status is non-zero if any stage failed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/peers.sh

failed=()
# stage NAME COMMAND...: runs one stage and remembers a failure.
stage() {
  local name="$1"
  shift
  if "$@"; then return 0; fi
  echo "test.sh: stage '${name}' failed" >&2
  failed+=("$name")
  return 1
}
jobs="$(nproc)"
# run_tests DIR [CTEST ARGS...]: every test of DIR's build, its output kept in
# DIR/ctest-output.log. A test that fails is run once more and the stage passes if that run
# does; such a test is named at the end (a flaky test is a bug to fix, not to hide), and a
# test that fails twice fails the stage.
run_tests() {
  local dir="$1"
  shift
  ctest --test-dir "$dir" --output-on-failure --timeout 900 --repeat until-pass:2 -j "$jobs" "$@" \
    2>&1 | tee "${dir}/ctest-output.log"
}

gcc_built=0 clang_built=0
for dir in "${UDON_BUILD_DIR:-build}" build-clang; do
  rm -f "${dir}/Testing/Temporary/LastTestsFailed.log" "${dir}/ctest-output.log"
done
stage "build" scripts/build.sh && gcc_built=1
# Under CI the clang build runs beside the g++ tests, at the lowest CPU priority: the tests
# spend most of their time waiting for the peers they start, and the build takes the cores
# they leave idle (the tests keep the CPU whenever they want it). Its output is kept in
# build-clang/build.log and shown when it fails.
clang_build=""
if [[ -n "${CI:-}" ]]; then
  mkdir -p build-clang
  clang_log="${PWD}/build-clang/build.log"
  CXX=clang++-14 UDON_BUILD_DIR=build-clang nice -n 19 \
    scripts/build.sh -DUDON_BUILD_BENCH=ON -DUDON_SANITIZE=ON -DUDON_FUZZ=ON -DUDON_UNIT_TESTS_ONLY=ON \
    >"$clang_log" 2>&1 &
  clang_build=$!
fi
if ((gcc_built)); then
  stage "tests" run_tests "${UDON_BUILD_DIR:-build}" "$@" || true
fi
if [[ -n "$clang_build" ]]; then
  if stage "clang build (sanitizers, fuzzers)" wait "$clang_build"; then
    clang_built=1
  else
    tail -n 60 "$clang_log" >&2
  fi
fi
if ((clang_built)); then
  # The unit label under ASan+UBSan: every in-process test, the fuzz replays, and the
  # transport and server tests with real sockets and child processes. The whole suite
  # under the sanitizers (scripts/sanitize.sh asan, docs/reliability.md) takes about 16
  # minutes on 2 cores, which with both builds would break the 45-minute goal of .ci/run.
  stage "unit tests under ASan+UBSan" run_tests build-clang -L unit "$@" || true
  if [[ -x scripts/fuzz.sh ]]; then
    stage "fuzz smoke" scripts/fuzz.sh --smoke --build-dir build-clang || true
  fi
fi

# CI keeps only the end of the output: say last which tests failed, and run each once more
# for the record (its output, and whether it fails again); the stage stays failed.
for dir in "${UDON_BUILD_DIR:-build}" build-clang; do
  list="${dir}/Testing/Temporary/LastTestsFailed.log"
  if [[ -s "$list" ]]; then
    names="$(cat "$list")"
    ctest --test-dir "$dir" --rerun-failed --output-on-failure --timeout 900 2>&1 | tail -n 80 >&2 || true
    echo "test.sh: tests that failed in ${dir} (before the re-run above):" >&2
    sed 's/^/  /' <<<"$names" >&2
  fi
done
for dir in "${UDON_BUILD_DIR:-build}" build-clang; do
  log="${dir}/ctest-output.log"
  [[ -f "$log" ]] || continue
  retried="$(grep -E 'Test +#[0-9]+: .*\*\*\*(Failed|Timeout|Exception)' "$log" | sed -E 's/.*Test +#[0-9]+: ([^ ]+).*/\1/' | sort -u || true)"
  if [[ -n "$retried" ]]; then
    echo "test.sh: tests in ${dir} that failed a first attempt:" >&2
    sed 's/^/  /' <<<"$retried" >&2
  fi
done
if ((${#failed[@]} > 0)); then
  printf 'test.sh: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
