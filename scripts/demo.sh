#!/usr/bin/env bash
# The README's main-job command: installs dependencies, builds, runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec "${UDON_BUILD_DIR:-build}/src/cli/udon-mcp" demo --dir "${UDON_DEMO_DIR:-build/demo}"
