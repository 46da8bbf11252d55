#!/usr/bin/env bash
# Check a built package: tests/package/check-deb.sh path/to/confine_VERSION_ARCH.deb
#
# Lists the package (dpkg -c) for the files it must ship, extracts it (dpkg -x) into a fresh temporary directory,
# and runs the extracted binary: --version, and one command in a sandbox (rootless where user namespaces are
# allowed; as root it always can). One PASS/FAIL line per check; exits 1 if any check failed.
set -uo pipefail

if [[ $# -ne 1 || ! -f $1 ]]; then
  echo "usage: $0 DEB" >&2
  exit 2
fi
deb=$1
failed=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failed=1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/confine-check-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The contents.
if ! dpkg -c "$deb" >"$tmp/contents" 2>"$tmp/err"; then
  fail "dpkg -c $deb: $(cat "$tmp/err")"
  exit 1
fi
awk '{ p = $6; sub(/^\.\//, "/", p); print p }' "$tmp/contents" >"$tmp/paths"
expected=(
  /usr/bin/confine
  /usr/libexec/confine/confine-tls
  /usr/share/man/man1/confine.1.gz
  /usr/share/man/man5/confine-seccomp.5.gz
  /usr/share/man/man5/confine-landlock.5.gz
  /usr/share/confine/seccomp/default.toml
  /usr/share/confine/landlock/default.toml
  /usr/share/bash-completion/completions/confine
  /usr/share/zsh/vendor-completions/_confine
  /usr/share/fish/vendor_completions.d/confine.fish
  /etc/apparmor.d/confine
  /usr/share/doc/confine/copyright
)
# Every man page and profile in the source tree, if this script runs from one.
src=$(cd "$(dirname "$0")/../.." && pwd)
for f in "$src"/man/*.[1-8]; do
  [[ -e $f ]] && expected+=("/usr/share/man/man${f##*.}/${f##*/}.gz")
done
for f in "$src"/profiles/*.toml; do
  [[ -e $f ]] && expected+=("/usr/share/confine/profiles/${f##*/}")
done
for p in $(printf '%s\n' "${expected[@]}" | sort -u); do
  if grep -qxF "$p" "$tmp/paths"; then pass "package contains $p"; else fail "package lacks $p"; fi
done
if dpkg-deb -f "$deb" Recommends | grep -q libsystemd0 && dpkg-deb -f "$deb" Recommends | grep -q libidn2-0; then
  pass "Recommends: $(dpkg-deb -f "$deb" Recommends)"
else
  fail "Recommends lacks libsystemd0 or libidn2-0: $(dpkg-deb -f "$deb" Recommends)"
fi
# The static copies (the default build) are declared, and the loader is not asked for them.
static=$(dpkg-deb -f "$deb" Static-Built-Using)
depends=$(dpkg-deb -f "$deb" Depends)
if [[ $static == *libseccomp* && $static == *libcap2* && $static == *libnl3* && $depends != *libseccomp* && $depends != *libnl* ]]; then
  pass "Static-Built-Using: $static"
else
  fail "Static-Built-Using does not declare the static copies: \`$static\` (Depends: $depends)"
fi
if grep -qxF /usr/share/doc/confine/README.Debian "$tmp/paths"; then pass "package explains its static copies (README.Debian)"
else fail "package lacks /usr/share/doc/confine/README.Debian"; fi
# The contact is the project's placeholder (a reserved .invalid domain lintian accepts), naming nothing else.
maintainer=$(dpkg-deb -f "$deb" Maintainer)
if [[ $maintainer == "The confine authors <authors@confine.invalid>" ]]; then
  pass "Maintainer: $maintainer"
else
  fail "Maintainer is not the project's placeholder: $maintainer"
fi
dpkg-deb -e "$deb" "$tmp/control"
if grep -qx /etc/apparmor.d/confine "$tmp/control/conffiles" 2>/dev/null; then
  pass "/etc/apparmor.d/confine is a conffile"
else
  fail "/etc/apparmor.d/confine is not a conffile"
fi
for s in postinst postrm; do
  [[ -f $tmp/control/$s ]] || continue
  if sh -n "$tmp/control/$s" 2>"$tmp/err"; then pass "$s parses (sh -n)"; else fail "$s: $(cat "$tmp/err")"; fi
done

# The extracted binary.
root=$tmp/root
mkdir "$root"
if ! dpkg -x "$deb" "$root" 2>"$tmp/err"; then
  fail "dpkg -x: $(cat "$tmp/err")"
  exit 1
fi
confine=$root/usr/bin/confine
# TLS is the brokers' alone, in confine-tls: confine itself maps no OpenSSL on any run.
if readelf -d "$confine" | grep -q 'NEEDED.*lib\(ssl\|crypto\)'; then
  fail "/usr/bin/confine links OpenSSL: $(readelf -d "$confine" | grep NEEDED | tr -s ' ' | tr '\n' ' ')"
else
  pass "/usr/bin/confine links no OpenSSL (the brokers' TLS is /usr/libexec/confine/confine-tls)"
fi
upstream=$(dpkg-deb -f "$deb" Version)
upstream=${upstream#*:}
upstream=${upstream%-*}
if version=$("$confine" --version 2>&1) && [[ $version == "confine $upstream" ]]; then
  pass "confine --version: $version"
else
  fail "confine --version: expected 'confine $upstream', got: $version"
fi

ws=$tmp/workspace
mkdir "$ws"
# As root the sandbox runs as uid 65534, which must be able to reach the workspace.
chmod 755 "$tmp"
out=$("$confine" --workspace "$ws" --net none -- /bin/sh -c 'echo ok' 2>"$tmp/err")
rc=$?
if [[ $rc -eq 0 && $out == ok ]]; then
  pass "confine --workspace WS --net none -- /bin/sh -c 'echo ok'"
else
  fail "sandboxed command: exit $rc, stdout '$out', stderr: $(cat "$tmp/err")"
fi

# The test suite's hook that pins kernel features can switch Landlock off: the installed binary ignores it.
out=$(CONFINE_TEST_FEATURES=landlock=0,seccomp=0 "$confine" explain --workspace "$ws" -- true 2>&1)
if grep -q 'disabled for this test' <<<"$out" || ! grep -q 'kept  writes outside' <<<"$out"; then
  fail "the installed confine obeys CONFINE_TEST_FEATURES: $out"
else
  pass "the installed confine ignores CONFINE_TEST_FEATURES"
fi

# The AppArmor profile, where an AppArmor 4 parser is at hand to check it (without loading it).
if command -v apparmor_parser >/dev/null && [[ -e /etc/apparmor.d/abi/4.0 ]]; then
  if apparmor_parser -Q -K "$root/etc/apparmor.d/confine" 2>"$tmp/err"; then
    pass "the AppArmor profile parses (apparmor_parser -Q)"
  else
    fail "apparmor_parser -Q: $(cat "$tmp/err")"
  fi
else
  echo "SKIP: no AppArmor 4 parser here to check the profile"
fi

if ((failed)); then echo "check-deb: FAILED"; exit 1; fi
echo "check-deb: all passed"
