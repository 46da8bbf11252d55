#!/usr/bin/env bash
# Render every man page in man/ (sections 1 and 5) with man-db and groff warnings on; any warning fails.
# tests/package/check-man.sh [FILE...]   (default: man/*.1 man/*.5 of this source tree)
set -uo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
if (($#)); then pages=("$@"); else
  shopt -s nullglob
  pages=("$src"/man/*.1 "$src"/man/*.5)
fi
if ((${#pages[@]} == 0)); then echo "FAIL: no man pages found"; exit 1; fi
command -v man >/dev/null || { echo "FAIL: man (man-db) is not installed"; exit 1; }

failed=0
for page in "${pages[@]}"; do
  err=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -eq 0 && -z $err ]]; then
    echo "PASS: ${page#"$src"/}"
  else
    echo "FAIL: ${page#"$src"/} (exit $rc)"
    printf '%s\n' "$err" | sed 's/^/    /'
    failed=1
  fi
done
exit "$failed"
