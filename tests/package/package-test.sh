#!/usr/bin/env bash
# The Debian package, as CI checks it: built from this tree with dpkg-buildpackage (tests/package/build-deb.sh),
# free of lintian errors, and working from a fresh `dpkg -x` tree (tests/package/check-deb.sh).
# tests/package/package-test.sh [REPO]. Skips (77) without root to install the build tools, unless CI=true.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=${1:-$(cd "$here/../.." && pwd)}
must_work() { [[ ${CI:-} == true || ${CONFINE_TESTS_MUST_WORK:-} == 1 ]]; }
if [[ $(id -u) -ne 0 ]] && ! command -v dpkg-buildpackage >/dev/null; then
  must_work && { echo "FAIL: dpkg-buildpackage missing and not root to install it" >&2; exit 1; }
  echo "SKIP: dpkg-buildpackage is not installed"; exit 77
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/confine-pkg.XXXXXX")
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
"$here/build-deb.sh" "$out" "$repo" || { echo "FAIL: the package did not build"; exit 1; }
echo "# built in $(($(date +%s) - start)) s"
deb=$(ls "$out"/confine_*_*.deb | grep -v dbgsym | head -n1)
lintian --fail-on error "$deb" && echo "PASS: lintian reports no error" || { echo "FAIL: lintian errors"; exit 1; }
"$here/check-deb.sh" "$deb"
