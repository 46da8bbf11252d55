#!/bin/bash
# Golden tests for `confine explain`: the output for fixed inputs, with the machine's paths and ids replaced by
# placeholders, must equal tests/golden/<case>.txt. The kernel features are pinned with CONFINE_TEST_FEATURES so
# the files do not depend on this machine's kernel. Regenerate after an intended change with:
#   UPDATE_GOLDEN=1 meson test -C build --suite golden
set -euo pipefail
confine=$1
# The files are made as root (as CI runs), since run-by-root changes the identity promise.
if [[ $(id -u) -ne 0 ]]; then
  [[ ${CI:-} == true || ${CONFINE_TESTS_MUST_WORK:-} == 1 ]] && { echo "golden tests must run as root" >&2; exit 1; }
  echo "SKIP: golden files are recorded as root"; exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d /tmp/confine-golden.XXXXXX)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/ws/secrets" "$t/home"
touch "$t/ws/.env" "$t/ws/key.pem"
git init -q "$t/ws"

normalize() {
  sed -e "s#$t/ws#<WORKSPACE>#g" -e "s#$t/home#<HOME>#g" \
      -e 's#^\(identity *\).*#\1<IDENTITY>#' -e 's#^\(read-only *\).*#\1<SYSTEM PATHS>#' \
      -e 's#"workspace":"[^"]*"#"workspace":"<WORKSPACE>"#'
}

run_case() {  # name features args...
  local name=$1 features=$2
  shift 2
  local out
  out=$(cd "$t/ws" && env -i PATH=/usr/bin:/bin HOME="$t/home" GITHUB_TOKEN=x CONFINE_TEST_FEATURES="$features" \
        CONFINE_CDI_SPEC_DIRS="$t/cdi" "$confine" explain "$@" | normalize)
  if [[ ${UPDATE_GOLDEN:-} == 1 ]]; then
    printf '%s\n' "$out" >"$here/$name.txt"
  elif ! diff -u "$here/$name.txt" <(printf '%s\n' "$out"); then
    echo "golden mismatch: $name (UPDATE_GOLDEN=1 regenerates it after an intended change)" >&2
    fail=1
  fi
}

fail=0
run_case explain-default "landlock=7,seccomp=1,userns=1" -- codex --full-auto
run_case explain-net-host "landlock=7,seccomp=1,userns=1" --net host --allow-git-config -- make
run_case explain-fallback-abi6 "landlock=6,seccomp=1,userns=1" --no-namespaces --best-effort -- true
run_case explain-fallback-abi10 "landlock=10,seccomp=1,userns=1" --no-namespaces --best-effort -- true
run_case explain-old-kernel-abi2 "landlock=2,seccomp=1,userns=0" -- true
run_case explain-json "landlock=7,seccomp=1,userns=1" --json -- true
# Every shipped profile, with the state directories the agent profiles bind back present in the fake home.
mkdir -p "$t/home/.codex" "$t/home/.claude" "$t/home/.gemini" "$t/home/.npm" "$t/home/.cache/pip" \
         "$t/home/.cargo/registry" "$t/home/.cargo/git" "$t/home/go/pkg/mod"
touch "$t/home/.claude.json"
# The gpu profile's GPUs: a CDI spec naming the kernel's null device as one.
mkdir -m 0755 "$t/cdi"
echo '{"cdiVersion": "0.6.0", "kind": "nvidia.com/gpu", "devices": [{"name": "all", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0", "hostPath": "/dev/null"}]}}]}' >"$t/cdi/nvidia.json"
for profile in default read-only workspace-write full-network codex claude aider gemini npm pip cargo go gpu; do
  run_case "profile-$profile" "landlock=7,seccomp=1,userns=1" --profile "$profile" -- true
done
exit $fail
