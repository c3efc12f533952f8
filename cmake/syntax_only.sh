#!/bin/sh
# Compiler launcher of the syntax-only test targets (UDON_UNIT_TESTS_ONLY): runs the compile
# with -fsyntax-only, so every warning is still checked but no code is generated, and leaves
# an empty object file so that the build tool sees the step done and does not repeat it.
set -e
out=""
previous=""
for arg in "$@"; do
  if [ "$previous" = "-o" ]; then out="$arg"; fi
  previous="$arg"
done
"$@" -fsyntax-only
if [ -n "$out" ]; then : >"$out"; fi
