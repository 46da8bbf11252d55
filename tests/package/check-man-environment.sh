#!/usr/bin/env bash
# confine(1) has ENVIRONMENT and FILES sections that stay true to the code: ENVIRONMENT names every variable
# confine reads (getenv in src/, but for the test builds' CONFINE_TEST_FEATURES, CONFINE_TEST_LOG_CAPS and
# CONFINE_TEST_PROGRESS_AFTER_MS), every
# one it sets inside, and every exact name and prefix the credential scrubbing drops (src/core/env_scrub.cc);
# FILES names the profile directories, the scan cache, the profiles' private directories and the checkpoint store.
# tests/package/check-man-environment.sh [SOURCE-DIR]
set -uo pipefail

src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
page=$src/man/confine.1
failed=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failed=1; }

# The text of section NAME: from `.SH NAME` to the next `.SH`, font escapes and hyphen escapes removed.
section() {
  awk -v name="$1" '/^\.SH / { on = ($0 == ".SH " name); next } on' "$page" | sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g'
}

environment=$(section ENVIRONMENT)
files=$(section FILES)
[[ -n $environment ]] && pass "confine.1 has an ENVIRONMENT section" || fail "confine.1 has no ENVIRONMENT section"
[[ -n $files ]] && pass "confine.1 has a FILES section" || fail "confine.1 has no FILES section"

# expect_in SECTION-NAME TEXT WORD WHY
expect_in() {
  if grep -qF -- "$3" <<<"$2"; then pass "$1 names $3 ($4)"; else fail "$1 does not name $3 ($4)"; fi
}

read_vars=$(grep -rhoE '(getenv\("|environment_value\([^,]+, ")[A-Z_]+"' "$src/src" | grep -oE '"[A-Z_]+"' | tr -d '"' | sort -u |
  grep -vx -e CONFINE_TEST_FEATURES -e CONFINE_TEST_LOG_CAPS -e CONFINE_TEST_PROGRESS_AFTER_MS)
[[ -n $read_vars ]] || fail "no variable read found in src/ (has the code moved?)"
for v in $read_vars; do expect_in ENVIRONMENT "$environment" "$v" "read by confine"; done

set_vars=$(grep -rhoE '"CONFINE[A-Z_]*=' "$src/src/core" | tr -d '"=' | sort -u)
[[ -n $set_vars ]] || fail "no CONFINE variable set found in src/core (has the code moved?)"
for v in $set_vars; do expect_in ENVIRONMENT "$environment" "$v" "set inside"; done
for v in HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY; do expect_in ENVIRONMENT "$environment" "$v" "set with --net proxy"; done

scrub=$src/src/core/env_scrub.cc
for table in kCredentialNames kCredentialPrefixes; do
  names=$(awk -v t="$table" '$0 ~ "constexpr std::array " t { on = 1 } on { print } on && /};/ { exit }' "$scrub" |
    grep -oE 'string_view\{"[^"]+"\}' | sed -E 's/string_view\{"([^"]+)"\}/\1/')
  [[ -n $names ]] || fail "no entries read from $table in env_scrub.cc (has the code moved?)"
  for n in $names; do
    [[ $table == kCredentialPrefixes ]] && n="$n*"
    expect_in ENVIRONMENT "$environment" "$n" "dropped from the command's environment"
  done
done

for f in /confine/profiles/ /etc/confine/profiles/ /confine/scan/ /confine/private/ /confine/checkpoints/; do
  expect_in FILES "$files" "$f" "a place confine reads or writes"
done
exit "$failed"
