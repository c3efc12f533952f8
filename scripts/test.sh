#!/usr/bin/env bash
# The README's test command: installs dependencies and peers, builds, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/peers.sh
scripts/build.sh
cd "${UDON_BUILD_DIR:-build}"
ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
