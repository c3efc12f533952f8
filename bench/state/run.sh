#!/usr/bin/env bash
# bench/run.sh state: the state store's added latency per gated call (invalidation check +
# serialize lock + release), file store vs PostgreSQL over TCP on 127.0.0.1, STATE_RUNNERS
# (8) runner processes x STATE_CALLS (1000) calls each, medians. Starts a throwaway
# PostgreSQL 15 cluster (as "nobody" when run as root: initdb refuses root) and removes it
# on exit. No npm anchor: the figures are absolute.
set -euo pipefail
runners=${STATE_RUNNERS:-8}
calls=${STATE_CALLS:-1000}
bindir=$(pg_config --bindir 2>/dev/null || true)
[[ -x $bindir/initdb ]] || bindir=/usr/lib/postgresql/15/bin

work=$(mktemp -d /tmp/udon-state-bench-XXXXXX)
as_pg=()
if [[ $(id -u) -eq 0 ]]; then
  chown nobody:nogroup "$work"
  as_pg=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi
pg_pid=""
cleanup() {
  if [[ -n $pg_pid ]]; then
    kill -INT "$pg_pid" 2>/dev/null || true
    wait "$pg_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work" && "${as_pg[@]}" "$bindir/initdb" -D "$work/data" -U udon -A trust -E UTF8 --no-instructions >/dev/null)
(cd "$work" && exec "${as_pg[@]}" "$bindir/postgres" -D "$work/data" -k "$work" -p "$port" \
  -c listen_addresses=127.0.0.1 >"$work/postgres.log" 2>&1) &
pg_pid=$!
for _ in $(seq 100); do
  "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" && break
  sleep 0.1
done

mkdir -p "$BENCH_DATA/state-file"
rm -rf "$BENCH_DATA/state-file"/*
"$BENCH_BIN" "$BENCH_DATA/state-file" "$runners" "$calls" own
"$BENCH_BIN" "postgresql://udon@127.0.0.1:$port/postgres" "$runners" "$calls" own
# One runner alone: the same figures without 8 processes sharing the machine's cores.
"$BENCH_BIN" "postgresql://udon@127.0.0.1:$port/postgres" 1 "$calls" own
