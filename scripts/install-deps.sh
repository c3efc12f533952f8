#!/usr/bin/env bash
# Installs what udon-mcp builds and tests with, from Debian 12 packages. Idempotent: when
# everything is present it changes nothing. Needs root (uses sudo otherwise).
set -euo pipefail

packages=(
  cmake ninja-build g++ clang-14 libclang-rt-14-dev lld pkg-config ca-certificates python3 curl
  nlohmann-json3-dev libyaml-cpp-dev libcurl4-openssl-dev libssl-dev libcli11-dev
  libcpp-httplib-dev libpcre2-dev nettle-dev googletest libgtest-dev libgmock-dev libbenchmark-dev
  bubblewrap postgresql-15 libpq-dev strace chromium dpkg-dev lintian
  prometheus  # promtool and a real Prometheus for the metrics tests (contract 7.25)
  haproxy  # the load balancer the replica tests start (docs/operations.md)
)
# npm is only needed for test peers and benchmark anchors; keep a Node that is already
# there (machines often carry a newer one than Debian's), else take Debian's.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
