#!/usr/bin/env bash
# The README's test command: installs dependencies and peers, builds, runs every test.
# Under CI (CI=true) it also builds the whole tree, benchmarks included, with clang 14 and
# warnings as errors, so both compilers stay clean.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/peers.sh
scripts/build.sh
if [[ -n "${CI:-}" ]]; then
  CXX=clang++-14 UDON_BUILD_DIR=build-clang scripts/build.sh -DUDON_BUILD_BENCH=ON
fi
cd "${UDON_BUILD_DIR:-build}"
ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
