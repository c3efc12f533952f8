#!/usr/bin/env bash
# Configures and builds udon-mcp into build/ (warnings are errors).
# Usage: scripts/build.sh [extra cmake -D options...]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${UDON_BUILD_DIR:-build}"
# Benchmarks build separately, optimized, through bench/run.sh.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Check -DUDON_WERROR=ON -DUDON_BUILD_BENCH=OFF "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
