#!/usr/bin/env bash
# Build the Debian package from the working tree: tests/package/build-deb.sh OUTDIR [REPO]
#
# Copies the files git tracks (as they are in the working tree, so uncommitted edits are included) plus the
# untracked files under the packaging directories (debian/ completions/ apparmor/ tests/package/) and any other
# untracked, not ignored file (new sources not yet committed) into a fresh temporary directory, runs
# `dpkg-buildpackage -us -uc -b` there with its output in a log (the log's tail is printed on failure), and copies
# the resulting .deb files (confine and confine-dbgsym) into OUTDIR. As root, it installs missing tools
# (debhelper dpkg-dev fakeroot lintian) and missing Build-Depends (apt-get build-dep) first.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 OUTDIR [REPO]" >&2
  exit 2
fi
out=$1
repo=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo "$@"
  else return 1
  fi
}
apt_install() {
  DEBIAN_FRONTEND=noninteractive as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@"
}

tools=(debhelper dpkg-dev fakeroot lintian)
missing=()
for p in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "build-deb: installing ${missing[*]}" >&2
  { as_root apt-get update -qq && apt_install "${missing[@]}" >/dev/null; } ||
    { echo "build-deb: missing ${missing[*]} (run as root to install them)" >&2; exit 1; }
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/confine-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$work/confine
mkdir -p "$src"

# The working tree's tracked files (deleted ones skipped) and its untracked, not ignored files.
(cd "$repo" &&
  git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [[ -e $f || -L $f ]] && printf '%s\0' "$f"; done |
  xargs -0 cp -a --parents -t "$src")
[[ -f $src/debian/control ]] || { echo "build-deb: $repo has no debian/control" >&2; exit 1; }

if ! (cd "$src" && dpkg-checkbuilddeps >/dev/null 2>&1); then
  echo "build-deb: installing the missing Build-Depends" >&2
  { as_root apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive as_root apt-get -o DPkg::Lock::Timeout=600 build-dep -y -qq \
      --no-install-recommends "$src" >/dev/null; } ||
    { (cd "$src" && dpkg-checkbuilddeps) || true; echo "build-deb: unmet Build-Depends (run as root)" >&2; exit 1; }
fi

log=$out/build-deb.log
start=$SECONDS
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "build-deb: dpkg-buildpackage failed (full log: $log)" >&2
  exit 1
fi

shopt -s nullglob
debs=("$work"/*.deb)
if ((${#debs[@]} == 0)); then
  echo "build-deb: dpkg-buildpackage produced no .deb (log: $log)" >&2
  exit 1
fi
cp "${debs[@]}" "$out"/
for d in "${debs[@]}"; do echo "$out/${d##*/}"; done
echo "build-deb: built in $((SECONDS - start)) s (log: $log)" >&2
