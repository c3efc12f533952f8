#!/usr/bin/env bash
# Builds the Debian package udon-mcp_<version>-<revision>_<arch>.deb from a Release build,
# then checks it: its dependencies are Debian's runtime library packages only, lintian
# reports no error and no warning, and the package passes tests/package/check_installed.py
# (modes, --version, man pages, completion, demo, serve). Contract section 7.22.
# Usage: scripts/package.sh [--build-dir DIR] [--no-build] [--out DIR] [--modes-only]
#   --build-dir DIR  the build tree (default: build/release, configured Release here; two
#                    levels deep like bench/run.sh's build/bench, so ccache shares objects)
#   --no-build       package DIR as it is built (the package_deb test packages build/)
#   --out DIR        where the .deb goes (default: the current directory)
#   --modes-only     check the Depends and the entries' modes and owners only, compressed
#                    with gzip: for a second package of the same build under another umask,
#                    whose files are those of a package checked in full (package_deb_umask_000)
set -euo pipefail
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="build/release" build=1 out_dir="$PWD" modes_only=0
while (($#)); do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --out) out_dir="$2"; shift 2 ;;
    --modes-only) modes_only=1; shift ;;
    *) echo "usage: scripts/package.sh [--build-dir DIR] [--no-build] [--out DIR] [--modes-only]" >&2; exit 2 ;;
  esac
done
build_dir="$(cd "$source_dir" && mkdir -p "$build_dir" && cd "$build_dir" && pwd)"
mkdir -p "$out_dir"
out_dir="$(cd "$out_dir" && pwd)"

if ((build)); then
  if [[ -n "$(git -C "$source_dir" status --porcelain --untracked-files=no 2>/dev/null)" ]]; then
    echo "package.sh: warning: the checkout has uncommitted changes; --version names only its commit" >&2
  fi
  # Without tests and benchmarks: the package carries the two binaries and their reference.
  if command -v ccache >/dev/null; then
    export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  fi
  # Only what the package holds is built (no fuzz replays), and installing builds nothing.
  cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DUDON_BUILD_TESTS=OFF -DUDON_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX=/usr \
    -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON >/dev/null
  cmake --build "$build_dir" -j "$(nproc)" --target udon-mcp udon-mcp-demo-server udon-mcp-reference \
    udon-mcp-demo-server-reference
fi

# CPack installs the tree under /usr, strips it and asks dpkg-shlibdeps for Depends.
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
# xz (the package's) takes most of cpack's time; the modes do not depend on it.
compression=()
((modes_only)) && compression=(-D CPACK_DEBIAN_COMPRESSION_TYPE=gzip)
cpack -G DEB --config "$build_dir/CPackConfig.cmake" -B "$staging" "${compression[@]}" >/dev/null
debs=("$staging"/udon-mcp_*.deb)
if ((${#debs[@]} != 1)) || [[ ! -f "${debs[0]}" ]]; then
  echo "package.sh: cpack made no single udon-mcp_*.deb" >&2
  exit 1
fi
deb="$out_dir/$(basename "${debs[0]}")"
mv "${debs[0]}" "$deb"

# Depends: Debian's runtime library packages, each one installed here (dpkg-shlibdeps found
# the libraries in them), none a development package.
depends="$(dpkg-deb -f "$deb" Depends)"
echo "package.sh: Depends: $depends"
status=0
for required in libc6 libcurl4 libssl3 libyaml-cpp0.7 libpq5; do
  if [[ ", $depends," != *", $required "* && ", $depends," != *", $required,"* ]]; then
    echo "package.sh: Depends lacks $required" >&2
    status=1
  fi
done
for package in $(echo "$depends" | tr ',' '\n' | sed 's/(.*)//; s/|.*//' | tr -d ' '); do
  if [[ "$package" == *-dev ]] || ! dpkg-query -W "$package" >/dev/null 2>&1; then
    echo "package.sh: Depends names $package, not an installed Debian runtime package" >&2
    status=1
  fi
done

# lintian, Debian's package checker: no error and no warning (see below); its notes (I:)
# are shown, not counted. Overrides, each with its reason, are in packaging/debian/.
if ((modes_only)); then
  :  # lintian's permission tags are what check_installed.py --modes-only checks exactly
elif ! command -v lintian >/dev/null; then
  echo "package.sh: lintian is not installed (scripts/install-deps.sh installs it)" >&2
  status=1
elif ! lintian --fail-on error,warning --display-info --tag-display-limit 0 "$deb"; then
  echo "package.sh: lintian reports errors or warnings" >&2
  status=1
fi

# On failure the unpacked tree stays in the output folder for a look.
checks=()
((modes_only)) && checks=(--modes-only)
python3 "$source_dir/tests/package/check_installed.py" --deb "$deb" --work "$out_dir" "${checks[@]}" || status=1
if ((status == 0)); then
  echo "package.sh: $deb"
fi
exit "$status"
