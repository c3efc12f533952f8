#!/usr/bin/env bash
# The notification race, measured against the demo server's fault injector: one reviewed
# read-only tool (analyze_text) probed N times, sequentially and K at a time, with the
# server sending notifications/tools/list_changed at each place the gate must catch it.
# Writes study/race/results.json: per fault and concurrency, the calls' final codes.
# The outcome depends on when a notice lands (during the listing it is absorbed by a re-list;
# after the comparison it invalidates), so every setting runs ROUNDS times, each recorded.
# Usage: study/race/run.sh [--repeat N] [--rounds R]     (udon-mcp and udon-mcp-demo-server from
# $UDON_MCP / $UDON_DEMO_SERVER, else build/src/...). Nothing leaves the machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
udon="${UDON_MCP:-$repo/build/src/cli/udon-mcp}"
demo="${UDON_DEMO_SERVER:-$repo/build/src/demo_server/udon-mcp-demo-server}"
repeat=20
rounds=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --repeat) repeat="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    *) echo "usage: study/race/run.sh [--repeat N] [--rounds R]" >&2; exit 2 ;;
  esac
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
config() {  # config FILE [FAULT]
  python3 - "$1" "$demo" "${2:-}" <<'PY'
import json, sys
path, demo, fault = sys.argv[1:4]
args = ["--transport", "stdio"] + (["--fault", fault] if fault else [])
json.dump({"mcpServers": {"demo": {"command": demo, "args": args}}}, open(path, "w"))
PY
}
config "$work/clean.json"
"$udon" capture --config "$work/clean.json" --server demo --state-dir "$work/state" -o "$work/tools.json" >/dev/null
"$udon" review "$work/tools.json" --server demo --tool analyze_text --reviewer study@example.invalid \
  --headless --independent-calls --reference-based-io --model-backed false --no-side-effects \
  --concurrency safe >/dev/null
sha="$("$udon" digest "$work/tools.json" | cut -c1-64)"
results="$work/runs.jsonl"
: >"$results"
for round in $(seq 1 "$rounds"); do
for fault in "" list-changed-after-list=1 list-changed-during-call=analyze_text list-changed-after-initialized; do
  config "$work/run.json" "$fault"
  for k in 1 4; do
    out="$("$udon" probe --config "$work/run.json" --manifest "$work/tools.json" --sha256 "$sha" --server demo \
      --tool analyze_text --args '{"text":"One fixed sentence."}' --repeat "$repeat" --concurrency "$k" \
      --state-dir "$work/state-$round-$k-${fault%%=*}" --json || true)"
    python3 - "$fault" "$k" "$repeat" "$out" "$round" >>"$results" <<'PY'
import json, sys
fault, k, repeat, out, round_ = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
try:
    r = json.loads(out)
except ValueError:
    r = {"ok": False, "code": "probe_output_unreadable"}
row = {"fault": fault or "none", "concurrency": k, "repeat": repeat, "round": round_,
       "outcomes": r.get("outcomes", {}), "notRun": r.get("stopped", {}).get("notRun", 0),
       "verdict": r.get("verdict", r.get("code"))}
print(json.dumps(row, sort_keys=True))
PY
  done
done
done
python3 - "$results" "$here/results.json" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
doc = {"profile": "udon-mcp.race-study.0.1", "tool": "analyze_text", "runs": rows}
tmp = sys.argv[2] + ".tmp"
with open(tmp, "w") as f:
    json.dump(doc, f, indent=2, sort_keys=True)
    f.write("\n")
import os
os.replace(tmp, sys.argv[2])
print(json.dumps(doc, indent=1))
PY
