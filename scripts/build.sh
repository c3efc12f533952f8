#!/usr/bin/env bash
# Configures and builds udon-mcp into build/ (warnings are errors).
# Usage: scripts/build.sh [extra cmake -D options...]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${UDON_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUDON_WERROR=ON "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
