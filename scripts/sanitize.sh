#!/usr/bin/env bash
# Builds udon-mcp with sanitizers (clang 14) and runs the tests under them.
# Usage: scripts/sanitize.sh asan|tsan [ctest args...]
#   asan: AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer), every test,
#         in build-asan/.
#   tsan: ThreadSanitizer, the tests of the concurrent parts (TSAN_TESTS below), in
#         build-tsan/.
# Every test runs through tests/sanitizers/run.sh, which also checks every process the
# test starts. Extra arguments go to ctest (e.g. -R ClientTest, -L unit, -j 1).
# Environment: CXX (default clang++-14), UDON_SANITIZE_BUILD_DIR (default build-asan or
# build-tsan), JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

# The concurrent parts: parallel UWS workflows, serialize locks and the gate, the client
# engine and its event log, the stdio and HTTP transports, the server framework and the
# HTTP server, the determinism probe's concurrent calls, the gateway (serve) and its hosts. The targets are the test binaries
# that hold these tests (the integration tests pull in udon-mcp and the demo server).
TSAN_TESTS='^(Gate[A-Za-z]*Test|UwsRunner|UwsRunTest|ConnectionTest|Client[A-Za-z]*Test|McpClientIntegrationTest|ListenTest|StdioTransportTest|Http[A-Za-z]*Test|Server[A-Za-z]*Test|DemoServerHttp|ProbeTest|ProbeCliTest|GatewayTest|ServeTest)\.'
TSAN_TARGETS=(mcp_client_test mcp_server_test gate_test uws_test evidence_test mcp_client_integration_test
  gate_cli_integration_test gate_faults_integration_test uws_run_integration_test
  probe_integration_test demo_server_integration_test gateway_test serve_integration_test)

kind="${1:-}"
case "$kind" in
  asan) option=-DUDON_SANITIZE=ON targets=() filter=() ;;
  tsan) option=-DUDON_TSAN=ON targets=(--target "${TSAN_TARGETS[@]}") filter=(-R "$TSAN_TESTS") ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan [ctest args...]" >&2
    exit 2
    ;;
esac
shift
build_dir="${UDON_SANITIZE_BUILD_DIR:-build-$kind}"
jobs="${JOBS:-$(nproc)}"

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
CXX="${CXX:-clang++-14}" cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Check \
  -DUDON_WERROR=ON -DUDON_BUILD_BENCH=OFF "$option" "${launcher[@]}" >/dev/null
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
cd "$build_dir"
ctest --output-on-failure --timeout 900 -j "$jobs" "${filter[@]}" "$@"
