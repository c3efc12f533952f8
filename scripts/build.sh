#!/usr/bin/env bash
# Configures and builds udon-mcp into build/ (warnings are errors).
# Usage: scripts/build.sh [extra cmake -D options...]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${UDON_BUILD_DIR:-build}"
# Benchmarks build separately, optimized, through bench/run.sh. Components and test
# targets build in unity batches (UDON_UNITY_BUILD); pass -DUDON_UNITY_BUILD=OFF for the
# per-file build.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Check -DUDON_WERROR=ON -DUDON_BUILD_BENCH=OFF \
  -DUDON_UNITY_BUILD=ON "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
