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
password=udon-bench-pw
echo "$password" >"$work/pwfile"
[[ ${#as_pg[@]} -eq 0 ]] || chown nobody:nogroup "$work/pwfile"
(cd "$work" && "${as_pg[@]}" "$bindir/initdb" -D "$work/data" -U udon --auth-local=trust \
  --auth-host=scram-sha-256 --pwfile="$work/pwfile" -E UTF8 --no-instructions >/dev/null)
# TLS for the remote-store row: a throwaway certificate for "localhost", the root the
# client verifies it against (sslmode=verify-full, the default for a store not local).
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost \
  -keyout "$work/server.key" -out "$work/server.crt" 2>/dev/null
chmod 600 "$work/server.key"
[[ ${#as_pg[@]} -eq 0 ]] || chown nobody:nogroup "$work/server.key" "$work/server.crt"
(cd "$work" && exec "${as_pg[@]}" "$bindir/postgres" -D "$work/data" -k "$work" -p "$port" \
  -c listen_addresses=127.0.0.1 -c ssl=on -c ssl_cert_file="$work/server.crt" \
  -c ssl_key_file="$work/server.key" >"$work/postgres.log" 2>&1) &
pg_pid=$!
for _ in $(seq 100); do
  "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" && break
  sleep 0.1
done

# TCP on the loopback without TLS (as before this server had TLS: libpq's default would now
# negotiate it), the same over the Unix socket, and TCP with TLS verified as for a remote
# store (host name "localhost" with sslmode=verify-full).
url="postgresql://udon:$password@127.0.0.1:$port/postgres?sslmode=disable"
unix_url="postgresql://udon@/postgres?host=$work&port=$port"
tls_url="postgresql://udon:$password@localhost:$port/postgres?sslmode=verify-full&sslrootcert=$work/server.crt"
# Interleaved: STATE_CONNECT_ROUNDS (5) rounds, each of STATE_CONNECTS (50) set-ups per way.
connect_rows() {
  for round in $(seq "${STATE_CONNECT_ROUNDS:-5}"); do
    echo "-- round $round: TCP 127.0.0.1, no TLS"
    "$BENCH_BIN" connect "$url" "${STATE_CONNECTS:-50}"
    echo "-- round $round: Unix socket"
    "$BENCH_BIN" connect "$unix_url" "${STATE_CONNECTS:-50}"
    echo "-- round $round: TCP localhost, TLS verify-full"
    "$BENCH_BIN" connect "$tls_url" "${STATE_CONNECTS:-50}"
  done
}

# STATE_CONNECT_ONLY=1: only the connection set-ups over each way to the store (TCP, Unix
# socket, TCP + TLS verify-full), in process; no runners, no fresh calls (nor their build).
if [[ -n ${STATE_CONNECT_ONLY:-} ]]; then
  connect_rows
  exit 0
fi

mkdir -p "$BENCH_DATA/state-file"
rm -rf "$BENCH_DATA/state-file"/*
"$BENCH_BIN" "$BENCH_DATA/state-file" "$runners" "$calls" own
if [[ -z ${STATE_FRESH_ONLY:-} ]]; then  # STATE_FRESH_ONLY=1: the fresh calls alone
  "$BENCH_BIN" "$url" "$runners" "$calls" own
  # One runner alone: the same figures without 8 processes sharing the machine's cores.
  "$BENCH_BIN" "$url" 1 "$calls" own
fi

# Fresh `udon-mcp call` processes against the stdio demo server.
build=$(cd "$(dirname "$BENCH_BIN")/../.." && pwd)
ninja -C "$build" udon-mcp udon-mcp-demo-server spawn_initialize >/dev/null
udon=$build/src/cli/udon-mcp
demo=$build/src/demo_server/udon-mcp-demo-server
dir=$BENCH_DATA/state-calls
rm -rf "$dir"
mkdir -p "$dir"
printf '{"mcpServers":{"demo":{"command":"%s","args":[]}}}\n' "$demo" >"$dir/mcp.json"
gate=(--config "$dir/mcp.json" --state-dir "$dir/state")
"$udon" capture --server demo -o "$dir/tools.json" "${gate[@]}" >/dev/null
review() {
  "$udon" review "$dir/tools.json" --server demo --tool "$1" --reviewer bench@example.test --headless \
    --independent-calls --model-backed false --reference-based-io "${@:2}" "${gate[@]}" >/dev/null
}
review render_turntable --no-side-effects --concurrency safe --channel /source=data --channel /angles=data \
  --channel /resolution=data
review append_ledger --side-effect appends_ledger_entry --concurrency serialize --channel /entry=data
sha=$("$udon" digest "$dir/tools.json" | cut -c1-64)
call() {  # TOOL ARGS STORE [UDON]
  echo "${4:-$udon}" call --manifest "$dir/tools.json" --sha256 "$sha" --server demo --tool "$1" --args "$2" \
    --config "$dir/mcp.json" --state "$3"
}
safe_args='{"source":"https://assets.example.test/a.blend","angles":4,"resolution":1024}'
ledger_args='{"entry":"x"}'
# STATE_BEFORE=path of another udon-mcp (an earlier tree's Release build): its PostgreSQL
# calls are timed in the same rounds, for a before/after of one run.
before=()
if [[ -n ${STATE_BEFORE:-} ]]; then
  before=(-- "before: call, safe tool, PostgreSQL" $(call render_turntable "$safe_args" "$url" "$STATE_BEFORE")
          -- "before: call, serialize tool, PostgreSQL" $(call append_ledger "$ledger_args" "$url" "$STATE_BEFORE"))
fi
connect_rows
# time_processes.py counts exit 1 as a finished run: each store must first serve a call.
for store in "$dir/state" "$url" "$unix_url" "$tls_url"; do
  $(call render_turntable "$safe_args" "$store") >/dev/null || { echo "a call with a store failed" >&2; exit 1; }
done
echo "== fresh call processes (wall, medians; vs first = the anchor)"
python3 "$BENCH_DIR/support/time_processes.py" "${STATE_FRESH_ROUNDS:-30}" \
  -- "anchor: spawn server, read initialize answer" "$build/bench/state/spawn_initialize" "$demo" \
  -- "process: nothing (/bin/true: the cost of any process)" /bin/true \
  -- "process: libpq loaded, no connection" "$BENCH_BIN" connect "$url" 0 \
  -- "process: one connection set-up" "$BENCH_BIN" connect "$url" 1 \
  -- "call, safe tool, file store" $(call render_turntable "$safe_args" "$dir/state") \
  -- "process: one connection set-up, Unix socket" "$BENCH_BIN" connect "$unix_url" 1 \
  -- "process: one connection set-up, TCP + TLS verify-full" "$BENCH_BIN" connect "$tls_url" 1 \
  -- "call, safe tool, file store" $(call render_turntable "$safe_args" "$dir/state") \
  -- "call, safe tool, PostgreSQL" $(call render_turntable "$safe_args" "$url") \
  -- "call, safe tool, PostgreSQL, Unix socket" $(call render_turntable "$safe_args" "$unix_url") \
  -- "call, safe tool, PostgreSQL, TCP + TLS verify-full" $(call render_turntable "$safe_args" "$tls_url") \
  -- "call, serialize tool, file store" $(call append_ledger "$ledger_args" "$dir/state") \
  -- "call, serialize tool, PostgreSQL" $(call append_ledger "$ledger_args" "$url") \
  -- "call, serialize tool, PostgreSQL, Unix socket" $(call append_ledger "$ledger_args" "$unix_url") \
  -- "call, serialize tool, PostgreSQL, TCP + TLS verify-full" $(call append_ledger "$ledger_args" "$tls_url") \
  "${before[@]}"
