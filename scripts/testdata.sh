#!/usr/bin/env bash
# Provides the external test suites in the build tree (the test command runs it through
# CTest's fixture `testdata`; tests/data/README.md lists what the project writes itself):
#   OUT/json-schema-test-suite/  tests/draft2020-12, tests/draft7, remotes, LICENSE of the
#                                JSON-Schema-Test-Suite at commit JSTS_COMMIT
#   OUT/jcs/                     input, output, outhex, LICENSE (RFC 8785 vectors of
#                                cyberphone/json-canonicalization, folder testdata/) at JCS_COMMIT
# Each comes from the first of: a configured copy (--from DIR or UDON_TESTDATA_DIR: DIR/jcs
# and DIR/json-schema-test-suite in the layout above); the reference folder that machines
# without internet access keep beside the checkout (../shared/testdata); the archive of the
# pinned commit downloaded from GitHub. Whatever the source, the content used is checked
# against a pinned SHA-256 before use (the SHA-256 of the sorted lines
# "<sha256 of file>  <relative path>" over the files above) and a copy that does not match
# is refused. A copy already in OUT that matches is kept.
# Usage: scripts/testdata.sh --out DIR [--from DIR]
# Environment: UDON_TESTDATA_DIR (a configured copy), UDON_TESTDATA_URL (instead of
# https://github.com, for tests), UDON_TESTDATA_ADJACENT (instead of ../shared/testdata).
# Exit status 0 when every suite is in place; 1 with one line on stderr naming what is
# missing or wrong otherwise; 2 on a usage error.
set -euo pipefail
checkout="$(cd "$(dirname "$0")/.." && pwd)"

JSTS_REPO=json-schema-org/JSON-Schema-Test-Suite
JSTS_COMMIT=44401e0c046704b476ec9d2e2fccdaee618f259d
JSTS_CONTENT_SHA256=b6a92bedbc20c52d148d53da43de75c1d1d677e093dd5d13a2516d2501658e8d
JCS_REPO=cyberphone/json-canonicalization
JCS_COMMIT=19d51d7fe467d4706a3ff08adf8a748f29fc21e0
JCS_CONTENT_SHA256=84cfa63da62e45e2fda4589ebb15beab8010a4cc91f488497a4e2f92f0d07d29

out="" from="${UDON_TESTDATA_DIR:-}"
while (($#)); do
  case "$1" in
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --from) from="${2:?--from needs a directory}"; shift 2 ;;
    *) echo "usage: scripts/testdata.sh --out DIR [--from DIR]" >&2; exit 2 ;;
  esac
done
[[ -n "$out" ]] || { echo "usage: scripts/testdata.sh --out DIR [--from DIR]" >&2; exit 2; }
url_base="${UDON_TESTDATA_URL:-https://github.com}"
adjacent="${UDON_TESTDATA_ADJACENT:-${checkout}/../shared/testdata}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

fail() {
  echo "scripts/testdata.sh: $*" >&2
  exit 1
}

# content_sha256 DIR: the pinned form of DIR's content (see the header).
content_sha256() {
  (cd "$1" && find . -type f ! -name .verified -printf '%P\0' | LC_ALL=C sort -z |
    xargs -0 -r sha256sum | sha256sum | cut -d' ' -f1)
}

# copy_subset SRC DEST PATH...: SRC's PATHs (files or folders) into DEST; 1 if one is absent.
copy_subset() {
  local src="$1" dest="$2" path
  shift 2
  for path in "$@"; do
    [[ -e "${src}/${path}" ]] || return 1
    mkdir -p "${dest}/$(dirname "$path")"
    cp -R "${src}/${path}" "${dest}/${path}"
  done
}

# download REPO COMMIT DEST: the archive of REPO at COMMIT, unpacked into DEST (its top
# folder stripped). Prints the URL it used; 1 if it could not get it.
download() {
  local url="${url_base}/$1/archive/$2.tar.gz"
  echo "$url"
  mkdir -p "$3"
  curl -fsL --retry 2 --connect-timeout 20 --max-time 600 "$url" |
    tar -xz -C "$3" --strip-components=1 2>/dev/null
}

# provide NAME REPO COMMIT SHA256 RESHAPE PATH...: OUT/NAME from a configured copy, the
# adjacent folder or the archive (which the command RESHAPE DIR first brings to the copies'
# layout).
provide() {
  local name="$1" repo="$2" commit="$3" pinned="$4" reshape="$5"
  shift 5
  local dest="${out}/${name}" staging="${out}/.staging-${name}"
  if [[ -f "${dest}/.verified" && "$(content_sha256 "$dest")" == "$pinned" ]]; then return 0; fi
  rm -rf "$staging" "${staging}.archive"
  local source=""
  if [[ -n "$from" ]]; then
    source="${from}/${name}"
    copy_subset "$source" "$staging" "$@" || fail "the configured copy ${source} lacks part of ${name} (${*})"
  elif [[ -d "${adjacent}/${name}" ]]; then
    source="${adjacent}/${name}"
    copy_subset "$source" "$staging" "$@" || fail "${source} lacks part of ${name} (${*})"
  else
    local url
    if ! url="$(download "$repo" "$commit" "${staging}.archive")"; then
      rm -rf "${staging}.archive"
      fail "cannot download ${name} from ${url_base}/${repo}/archive/${commit}.tar.gz; give a copy with -DUDON_TESTDATA_DIR=DIR (or UDON_TESTDATA_DIR)"
    fi
    source="$url"
    "$reshape" "${staging}.archive"
    copy_subset "${staging}.archive" "$staging" "$@" ||
      fail "the archive ${url} lacks part of ${name} (${*})"
    rm -rf "${staging}.archive"
  fi
  local actual
  actual="$(content_sha256 "$staging")"
  if [[ "$actual" != "$pinned" ]]; then
    rm -rf "$staging"
    fail "${name} from ${source} does not match the pinned SHA-256 ${pinned} (it has ${actual}); refused"
  fi
  echo "$pinned" >"${staging}/.verified"
  rm -rf "$dest"
  mv "$staging" "$dest"
}

# The cyberphone archive keeps the vectors under testdata/ and its LICENSE at the top; the
# copies keep both at the top.
jcs_archive_layout() {
  local folder
  for folder in input output outhex; do
    if [[ -d "$1/testdata/${folder}" ]]; then mv "$1/testdata/${folder}" "$1/${folder}"; fi
  done
}

provide json-schema-test-suite "$JSTS_REPO" "$JSTS_COMMIT" "$JSTS_CONTENT_SHA256" true \
  LICENSE remotes tests/draft2020-12 tests/draft7
provide jcs "$JCS_REPO" "$JCS_COMMIT" "$JCS_CONTENT_SHA256" jcs_archive_layout \
  LICENSE input output outhex
