#!/usr/bin/env bash
# The README's test command: installs dependencies and peers, builds, runs every test.
# Under CI (CI=true) it also builds the whole tree, benchmarks and fuzzers included, with
# clang 14, warnings as errors, AddressSanitizer and UndefinedBehaviorSanitizer, so both
# compilers stay clean; runs the unit tests again in that build (tests/sanitizers/run.sh
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

gcc_built=0 clang_built=0
stage "build" scripts/build.sh && gcc_built=1
if [[ -n "${CI:-}" ]]; then
  CXX=clang++-14 UDON_BUILD_DIR=build-clang stage "clang build (sanitizers, fuzzers)" \
    scripts/build.sh -DUDON_BUILD_BENCH=ON -DUDON_SANITIZE=ON -DUDON_FUZZ=ON && clang_built=1
fi
if ((gcc_built)); then
  stage "tests" ctest --test-dir "${UDON_BUILD_DIR:-build}" --output-on-failure --timeout 900 \
    -j "$jobs" "$@" || true
fi
if ((clang_built)); then
  # The unit label under ASan+UBSan: every in-process test, the fuzz replays, and the
  # transport and server tests with real sockets and child processes. The whole suite
  # under the sanitizers (scripts/sanitize.sh asan, docs/reliability.md) takes about 16
  # minutes on 2 cores, which with both builds would break the 30-minute budget of .ci/run.
  stage "unit tests under ASan+UBSan" ctest --test-dir build-clang --output-on-failure --timeout 900 \
    -j "$jobs" -L unit "$@" || true
  if [[ -x scripts/fuzz.sh ]]; then
    stage "fuzz smoke" scripts/fuzz.sh --smoke --build-dir build-clang || true
  fi
fi

if ((${#failed[@]} > 0)); then
  printf 'test.sh: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
