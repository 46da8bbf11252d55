#!/bin/bash
# The scripts run inside the sandbox expand their own variables ($HOME there): single quotes on purpose.
# shellcheck disable=SC2016
# learn: `confine learn -- CMD` runs CMD in a sandbox that records instead of refusing and prints a profile. For
# `npm install` from a registry, `pip download` from a simple index and a script that writes ~/.cache/x and fetches
# from a test host, the printed profile applied with --profile makes the strict run succeed, while the strict
# run without it fails (so the profile is what made it pass). The learn run leaves the host's home as it was
# (checksum before and after), nothing it wrote stays on the host, and a name that resolves to the loopback is
# refused and named in a comment, never allowed (learn-reads.sh: the loopback by address). Bad input is one line
# and exit 125.
#
# The test's servers have public-looking names and an address (203.0.113.7, TEST-NET-3, on the loopback device)
# that confine does not treat as internal: it runs in a network and mount namespace of its own, as root, with a
# private /etc/hosts naming them.
if [[ $(id -u) == 0 && -z ${LEARN_NS:-} ]]; then
    exec unshare --net --mount --propagation private env LEARN_NS=1 "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

[[ -n ${LEARN_NS:-} ]] || skip "needs root: the test hosts' names live in a private mount namespace"
ip link set lo up
ip addr add 203.0.113.7/32 dev lo
printf '127.0.0.1 localhost\n203.0.113.7 registry.confine.test pypi.confine.test api.confine.test\n127.0.0.1 db.confine.test\n' >"$T/hosts"
mount --bind "$T/hosts" /etc/hosts
command -v npm >/dev/null || skip "npm is not installed"
/usr/bin/pip3 --version >/dev/null 2>&1 || skip "pip3 is not installed"

# What the servers serve: an npm packument and its tarball, a PEP 503 simple index and its wheel, a text file.
SITE=$T/site
mkdir -p "$SITE/tarballs" "$SITE/simple/tinypkg" "$SITE/files" "$T/pkg/package"
echo '{"name":"tiny-pkg","version":"1.0.0","main":"index.js"}' >"$T/pkg/package/package.json"
echo 'module.exports = "tiny";' >"$T/pkg/package/index.js"
tar -C "$T/pkg" -czf "$SITE/tarballs/tiny-pkg-1.0.0.tgz" package
/usr/bin/python3 - "$SITE" <<'EOF'
import base64, hashlib, json, sys, zipfile
site = sys.argv[1]
tgz = open(f"{site}/tarballs/tiny-pkg-1.0.0.tgz", "rb").read()
integrity = "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()
version = {"name": "tiny-pkg", "version": "1.0.0",
           "dist": {"tarball": "http://registry.confine.test/tarballs/tiny-pkg-1.0.0.tgz",
                    "integrity": integrity, "shasum": hashlib.sha1(tgz).hexdigest()}}
json.dump({"name": "tiny-pkg", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": version}},
          open(f"{site}/tiny-pkg", "w"))
wheel = f"{site}/files/tinypkg-1.0-py3-none-any.whl"
with zipfile.ZipFile(wheel, "w") as z:
    z.writestr("tinypkg/__init__.py", "")
    z.writestr("tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n")
    z.writestr("tinypkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("tinypkg-1.0.dist-info/RECORD", "")
digest = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
open(f"{site}/simple/tinypkg/index.html", "w").write(
    f'<html><body><a href="/files/tinypkg-1.0-py3-none-any.whl#sha256={digest}">tinypkg-1.0-py3-none-any.whl</a></body></html>\n')
EOF
HELLO="hello from the test host"
echo "$HELLO" >"$SITE/hello.txt"
chmod -R a+rX "$SITE"

# The script: keeps something in ~/.cache, fetches from a test host by name (through the proxy variables) and
# tries a loopback address, which learn must refuse and only name.
SCRIPT='set -e
mkdir -p "$HOME/.cache"
echo "$1" >"$HOME/.cache/x"
python3 -c "
import socket, urllib.request
print(urllib.request.urlopen(\"http://api.confine.test/hello.txt\", timeout=10).read().decode().strip())
try:
    socket.create_connection((\"db.confine.test\", 80), timeout=5).recv(1) or 1/0
    print(\"db reached\")
except (OSError, ZeroDivisionError):
    pass
"'
NPM=(npm install tiny-pkg --registry http://registry.confine.test/ --no-audit --no-fund --no-update-notifier)
PIP=(pip3 download tinypkg --no-deps -d dl --index-url http://pypi.confine.test/simple/ --trusted-host pypi.confine.test
     --disable-pip-version-check)

# The host's home and confine's private directories for sandboxes (which a strict run with a profile fills).
host_state() {
    tree_sum "$H"
    if [[ -d $XDG/confine/private ]]; then tree_sum "$XDG/confine/private"; fi
}

# learn ARGS...: confine learn as the variant's user; the profile (stdout) is saved to $V/learned-$RANDOM.toml,
# path in PROFILE. Checks that the host's home is unchanged and that learn's own throw-away directory is gone.
learn() {
    local before after layer
    before=$(host_state)
    try sb learn -w "$WS" "$@"
    after=$(host_state)
    [[ $before == "$after" ]] || fail "the learn run changed the host's home: $(diff <(echo "$before") <(echo "$after"))"
    layer=$(grep -o '(/tmp/confine-[A-Za-z0-9]*/home)' <<<"$ERRS" | tr -d '()')
    [[ -n $layer ]] || fail "learn did not name its throw-away home ($(last))"
    [[ ! -e ${layer%/home} ]] || fail "learn left its throw-away directory ${layer%/home} on the host"
    PROFILE=$V/learned-$RANDOM.toml
    printf '%s\n' "$OUT" >"$PROFILE"
    chmod 0644 "$PROFILE"
}

scenario() {
    bg /usr/bin/python3 -m http.server --bind 203.0.113.7 80 --directory "$SITE"
    local i
    for ((i = 0; i < 100; i++)); do
        /usr/bin/python3 -c 'import socket; socket.create_connection(("203.0.113.7", 80), timeout=1)' 2>/dev/null && break
        sleep 0.05
    done

    # --- a script: ~/.cache/x and a test host -------------------------------------------------------------------
    local marker=learned-marker-$RANDOM$RANDOM
    learn -- sh -c "$SCRIPT" sh "$marker"
    expect_eq "$RC" 0 "learn, the script ($(last))"
    grep -q "^$HELLO\$" "$T/.err" || fail "the script's output did not reach stderr: $(last)"
    if grep -rq "$marker" "$H" "$XDG" 2>/dev/null; then fail "what the learn run wrote is on the host"; fi
    expect_match "$OUT" '# This is a record of a run you trusted' "the header says what the profile is"
    expect_match "$OUT" '# Base: the `default` profile, copied' "the header names the base"
    expect_match "$OUT" $'# reached api.confine.test:80 \xc3\x971\n    [\'"]api.confine.test:80[\'"],' "the host reached, with its count"
    expect_match "$OUT" $'\nprivate = \\[\n    # wrote 1 file there \\(~/.cache/x\\)[^\n]*\n    [\'"]~/.cache[\'"],' "~/.cache/x is kept private"
    expect_match "$OUT" '# refused during the run: db.confine.test:80 ×1 \(resolves to an internal address \(127\.0\.0\.1\).*--allow 127\.0\.0\.1:80 allows it' \
        "the loopback destination is named as refused, with the flag that would allow it"
    expect_no_match "$OUT" $'\n    [\'"]db.confine.test' "a refused destination is never an entry"
    # The strict run: fails without the profile (no network), succeeds with it, and keeps ~/.cache/x there.
    OPTS=()
    sandbox sh -c "$SCRIPT" sh "$marker"
    [[ $RC != 0 ]] || fail "the strict run without the learned profile succeeded: $(last)"
    OPTS=(--profile "$PROFILE")
    sandbox sh -c "$SCRIPT" sh "$marker"
    expect_eq "$RC:$OUT" "0:$HELLO" "the strict run with the learned profile ($(last))"
    sandbox cat "$H/.cache/x"
    expect_eq "$RC:$OUT" "0:$marker" "the learned private ~/.cache keeps what the run wrote ($(last))"

    # --- names the sandbox chose: links to the host's home, quotes, newlines, `]` -------------------------------
    # $H is the sandbox's $HOME too, so a link to "$H/.ssh" made inside names the host's real ~/.ssh on the host:
    # the walk of what was written and the removal after it must take it as a name and never follow it.
    learn -- sh -c 'set -e
        ln -s "$HOME/.ssh" "$HOME/.ssh-link"
        mkdir -p "$HOME/.cache/tool" "$HOME/.local/share/we\"ird
name]"
        ln -s "$HOME/.ssh" "$HOME/.cache/tool/ssh-link"
        ln -s "$HOME" "$HOME/.local/share/home-link"
        echo x >"$HOME/.local/share/we\"ird
name]/f"'
    expect_eq "$RC" 0 "learn, hostile names ($(last))"
    expect_no_match "$OUT" 'id_rsa|credentials' "the walk followed a link to the host's home"
    /usr/bin/python3 -c '
import sys, tomllib
profile = tomllib.load(open(sys.argv[1], "rb"))
got = profile["filesystem"]["private"]
want = ["~/.cache/tool", "~/.local/share", "~/.local/share/we\"ird\nname]"]
assert sorted(got) == sorted(want), f"private = {got!r}, expected {want!r}"
assert set(profile) <= {"format", "description", "extends", "filesystem", "environment", "network"}, profile.keys()
' "$PROFILE" || fail "the profile does not read back as the names the sandbox wrote: $OUT"
    expect_match "$OUT" 'wrote ~/.ssh-link directly in \$HOME' "a link in \$HOME is named as written"
    [[ -s $H/.ssh/id_rsa ]] || fail "the host's ~/.ssh/id_rsa is gone"

    # --- what outlives the run stays as strict: a secret in the workspace is masked, git hooks are read-only ------
    local canary=CANARY-env-$RANDOM$RANDOM
    host git init -q "$WS"
    echo "TOKEN=$canary" >"$WS/.env"
    learn -- sh -c 'cat .env; echo "#!/bin/sh" >.git/hooks/post-checkout'
    [[ $RC != 0 ]] || fail "learn let the command write .git/hooks: $(last)"
    expect_no_match "$OUT$ERRS" "$canary" "the workspace's .env read through learn"
    [[ ! -e $WS/.git/hooks/post-checkout ]] || fail "a hook planted during learn is on the host"
    rm -rf "${WS:?}/.git" "$WS/.env"

    # --- npm install from a registry ----------------------------------------------------------------------------
    rm -rf "${WS:?}/node_modules" "$WS/package.json" "$WS/package-lock.json"
    learn -- "${NPM[@]}"
    expect_eq "$RC" 0 "learn, npm install ($(last))"
    expect_match "$OUT" $'\nextends = [\'"]npm[\'"]\n' "npm is learned from the npm profile"
    expect_match "$OUT" $'[\'"]registry.confine.test:80[\'"],' "the registry is allowed"
    expect_match "$OUT" 'under private ~/.npm .*: kept by the base profile' "npm's cache is the base's"
    rm -rf "${WS:?}/node_modules" "$WS/package.json" "$WS/package-lock.json"
    OPTS=(--profile npm)
    sandbox "${NPM[@]}"
    [[ $RC != 0 ]] || fail "npm install under the npm profile alone succeeded: $(last)"
    [[ ! -e $WS/node_modules/tiny-pkg/index.js ]] || fail "npm installed the package without the learned profile"
    OPTS=(--profile "$PROFILE")
    sandbox "${NPM[@]}"
    expect_eq "$RC" 0 "npm install with the learned profile ($(last))"
    [[ -s $WS/node_modules/tiny-pkg/index.js ]] || fail "npm did not install the package: $(last)"

    # --- pip download from a simple index -----------------------------------------------------------------------
    rm -rf "${WS:?}/dl"
    learn -- "${PIP[@]}"
    expect_eq "$RC" 0 "learn, pip download ($(last))"
    expect_match "$OUT" $'\nextends = [\'"]pip[\'"]\n' "pip3 is learned from the pip profile"
    expect_match "$OUT" $'[\'"]pypi.confine.test:80[\'"],' "the index is allowed"
    rm -rf "${WS:?}/dl"
    OPTS=(--profile pip)
    sandbox "${PIP[@]}"
    [[ $RC != 0 ]] || fail "pip download under the pip profile alone succeeded: $(last)"
    OPTS=(--profile "$PROFILE")
    sandbox "${PIP[@]}"
    expect_eq "$RC" 0 "pip download with the learned profile ($(last))"
    [[ -s $WS/dl/tinypkg-1.0-py3-none-any.whl ]] || fail "pip did not download the wheel: $(last)"

    # --- bad input ----------------------------------------------------------------------------------------------
    expect_refused "learn without a command" 'learn: give the command to learn from after `--`' learn -w "$WS"
    expect_refused "learn from an unknown profile" 'no profile named `no-such-profile`' learn -w "$WS" --profile no-such-profile -- touch "$V/ran"
    expect_refused "learn with --net none" 'learn: --net none: learn records the network through' learn -w "$WS" --net none -- touch "$V/ran"
    expect_refused "learn with --rw" 'learn: --rw is not taken' learn -w "$WS" --rw "$V" -- touch "$V/ran"
}
run_variants scenario
