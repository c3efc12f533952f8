#!/usr/bin/env bash
# Rebuilds some servers' captures from an empty install cache (the committed lock files
# pin every dependency) into a scratch data directory and compares each release's
# studySha256 with the committed data/index.json. Exit 0 when every release captured in
# both has the same digest and the same outcome.
# Usage: study/drift/rebuild_check.sh [--jobs N] SERVER...
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jobs=1
if [[ "${1:-}" == "--jobs" ]]; then jobs="$2"; shift 2; fi
[[ $# -gt 0 ]] || { echo "usage: study/drift/rebuild_check.sh [--jobs N] SERVER..." >&2; exit 2; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
args=()
for name in "$@"; do
  package="$(python3 -c 'import json,sys; print(next(s["package"] for s in json.load(open(sys.argv[1]))["servers"] if s["name"] == sys.argv[2]))' "$here/servers.json" "$name")"
  mkdir -p "$scratch/data/$package"
  cp "$here/data/$package/"*.lock.json "$scratch/data/$package/" 2>/dev/null || true
  args+=(--server "$name")
done
UDON_DRIFT_CACHE="$scratch/cache" "$here/run.sh" --jobs "$jobs" --data "$scratch/data" "${args[@]}"
python3 - "$here/data/index.json" "$scratch/data/index.json" <<'PY'
import json, sys
old = {(e["server"], e["version"]): e for e in json.load(open(sys.argv[1]))["releases"]}
new = json.load(open(sys.argv[2]))["releases"]
same = differ = 0
for e in new:
    o = old.get((e["server"], e["version"]))
    if o is None:
        continue
    if o["outcome"] == e["outcome"] and o.get("studySha256") == e.get("studySha256"):
        same += 1
    else:
        differ += 1
        print("differs: %s %s: %s %s -> %s %s" % (e["server"], e["version"], o["outcome"],
              o.get("studySha256", "")[:12], e["outcome"], e.get("studySha256", "")[:12]))
print("rebuild_check: %d release(s) the same, %d different" % (same, differ))
sys.exit(1 if differ else 0)
PY
