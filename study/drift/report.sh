#!/usr/bin/env bash
# The drift study's report: `udon-mcp evidence drift --json` on each server's committed
# captures, added up into study/drift/results.json, docs/drift-study.md,
# docs/drift-study/<server>.html (each written by udon-mcp evidence drift itself) and the
# figures docs/drift-study/*.svg (drawn by udon-mcp evidence chart). No registry, no
# clock: the same data and build give the same bytes.
# Usage: study/drift/report.sh            the whole study
#        study/drift/report.sh --slice    the offline slice CI checks (three servers), written
#                                         to study/drift/slice.json
#        study/drift/report.sh --slice --check   compare the slice with the committed file
#        study/drift/report.sh --charts-check    the committed docs/drift-study/*.svg are what
#                                                udon-mcp draws from results.json now
# udon-mcp is taken from $UDON_MCP, else build/src/cli/udon-mcp, else PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
if [[ -z "${UDON_MCP:-}" ]]; then
  if [[ -x "$repo/build/src/cli/udon-mcp" ]]; then UDON_MCP="$repo/build/src/cli/udon-mcp"; else UDON_MCP=udon-mcp; fi
fi
slice=(--server filesystem --server memory --server sequential-thinking)
case "${1:-}" in
  --slice)
    if [[ "${2:-}" == "--check" ]]; then
      exec python3 "$here/report.py" --udon "$UDON_MCP" "${slice[@]}" \
        --command "study/drift/report.sh --slice" --check "$here/slice.json"
    fi
    exec python3 "$here/report.py" --udon "$UDON_MCP" "${slice[@]}" \
      --command "study/drift/report.sh --slice" --json "$here/slice.json" ;;
  "")
    exec python3 "$here/report.py" --udon "$UDON_MCP" --command "study/drift/report.sh" \
      --json "$here/results.json" --md "$repo/docs/drift-study.md" --html-dir "$repo/docs/drift-study" \
      --chart-dir "$repo/docs/drift-study" ;;
  --charts-check)
    exec python3 "$here/report.py" --udon "$UDON_MCP" --charts-check "$here/results.json" "$repo/docs/drift-study" ;;
  *) echo "usage: study/drift/report.sh [--slice [--check] | --charts-check]" >&2; exit 2 ;;
esac
