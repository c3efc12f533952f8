#!/usr/bin/env bash
# Runs one test command under the sanitizers and fails it on any sanitizer report, also a
# report from a process it started (udon-mcp, the demo server, the victim, a second
# udon-mcp started by a peer...). CMake sets this script as the tests' launcher
# (CROSSCOMPILING_EMULATOR) when UDON_SANITIZE or UDON_TSAN is on.
#
# Usage: run.sh address|thread COMMAND [ARGS...]
#
# Every process inherits the options below and writes its report to its own file in a
# fresh directory (log_path), so a report cannot hide in a child's captured stderr or in a
# background server whose exit status nobody reads. Options already in the environment
# come last and win, so ASAN_OPTIONS=... ctest still tunes a run.
set -uo pipefail

kind="$1"
shift
here="$(cd "$(dirname "$0")" && pwd)"
reports="$(mktemp -d "${TMPDIR:-/tmp}/udon-sanitizer.XXXXXX")"
common="halt_on_error=1:print_stacktrace=1:log_path=${reports}/report"
# suppressions_of NAME: the option naming tests/sanitizers/NAME.supp, if there is one.
suppressions_of() {
  if [[ -f "${here}/$1.supp" ]]; then echo ":suppressions=${here}/$1.supp:print_suppressions=0"; fi
}

case "$kind" in
  address)
    # ASan's stack redzones make frames two to three times larger. The deepest recursion
    # the tests drive on purpose (the schema evaluator and compiler at their 1024-level
    # limit) needs 3-5 MB of stack uninstrumented and more than 8 MB under ASan, so
    # instrumented processes (and their threads, which glibc sizes from the same limit)
    # get 64 MB.
    ulimit -s 65536 2>/dev/null || true
    export ASAN_OPTIONS="${common}:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    UBSAN_OPTIONS="${common}:report_error_type=1$(suppressions_of ubsan)${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    export UBSAN_OPTIONS
    LSAN_OPTIONS="report_objects=1$(suppressions_of lsan)${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
    export LSAN_OPTIONS
    ;;
  thread)
    TSAN_OPTIONS="${common}:second_deadlock_stack=1$(suppressions_of tsan)${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    export TSAN_OPTIONS
    ;;
  *)
    echo "usage: $0 address|thread COMMAND [ARGS...]" >&2
    exit 2
    ;;
esac

# A timeout (ctest kills this script) must not leave the test and its children behind.
child=0
forward() {
  if ((child > 0)); then kill -TERM "$child" 2>/dev/null; fi
}
trap forward TERM INT

"$@" <&0 &
child=$!
wait "$child"
status=$?
# wait returns early when a trapped signal arrives; then wait for the real exit.
while kill -0 "$child" 2>/dev/null; do
  wait "$child"
  status=$?
done

shopt -s nullglob
found=("$reports"/report.*)
if ((${#found[@]} > 0)); then
  for report in "${found[@]}"; do
    echo "==== sanitizer report ${report##*/} (the number is the process id) ====" >&2
    cat "$report" >&2
  done
  ((status == 0)) && status=1
fi
rm -rf "$reports"
exit "$status"
