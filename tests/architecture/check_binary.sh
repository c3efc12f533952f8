#!/usr/bin/env bash
# Checks what a linked binary contains, so that the seams between components show in what
# ships and not only in the build files (docs/architecture.md).
#
# Usage: check_binary.sh BINARY [--has-symbol ERE | --no-symbol ERE | --no-needed ERE]...
#   --has-symbol ERE  some symbol (nm -C) matches: the binary carries symbols at all, so
#                     that the --no-symbol checks cannot pass on a stripped file
#   --no-symbol ERE   no symbol, defined or referenced (a shared library's), matches
#   --no-needed ERE   no DT_NEEDED entry (readelf -d) matches
# Exits 1 naming every check that failed (with up to five offending lines), 2 on misuse.
set -uo pipefail

if [[ $# -lt 3 ]]; then
  echo "usage: $0 BINARY [--has-symbol|--no-symbol|--no-needed ERE]..." >&2
  exit 2
fi
binary="$1"
shift
if [[ ! -f $binary ]]; then
  echo "check_binary: $binary does not exist (build it first)" >&2
  exit 2
fi
# The symbol table of a test binary runs to tens of megabytes: read it once, into a file.
symbols="$(mktemp "${TMPDIR:-/tmp}/check_binary.XXXXXX")"
trap 'rm -f "$symbols"' EXIT
nm -C "$binary" >"$symbols" 2>/dev/null || { echo "check_binary: nm failed on $binary" >&2; exit 2; }
needed="$(readelf -d "$binary" | grep '(NEEDED)')"

failed=0
while [[ $# -gt 0 ]]; do
  check="$1"
  pattern="${2:-}"
  shift 2 || { echo "check_binary: $check needs a pattern" >&2; exit 2; }
  case "$check" in
    --has-symbol)
      if ! grep -Eq -- "$pattern" "$symbols"; then
        echo "FAIL $(basename "$binary"): no symbol matches '$pattern'"
        failed=1
      fi
      ;;
    --no-symbol)
      if hits="$(grep -E -- "$pattern" "$symbols")"; then
        echo "FAIL $(basename "$binary"): $(wc -l <<<"$hits") symbol(s) match '$pattern', e.g.:"
        head -n 5 <<<"$hits" | sed 's/^/  /'
        failed=1
      fi
      ;;
    --no-needed)
      if hits="$(grep -E -- "$pattern" <<<"$needed")"; then
        echo "FAIL $(basename "$binary"): needs a library matching '$pattern':"
        sed 's/^/  /' <<<"$hits"
        failed=1
      fi
      ;;
    *)
      echo "check_binary: unknown check $check" >&2
      exit 2
      ;;
  esac
done
if [[ $failed -eq 0 ]]; then echo "ok $(basename "$binary")"; fi
exit "$failed"
