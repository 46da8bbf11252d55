#!/usr/bin/env bash
# confine inside a real container engine, as CI jobs run it: rootful podman (runc) with a Debian image made once
# with debootstrap (cached in $CONFINE_VM_CACHE), a checkout bound at /builds/proj, the job as root and as uid 1000,
# with the engine's defaults and with each setting confine's advice names. Each run attacks from inside confine
# (the home's keys, the workspace's .env, /etc/shadow, writes to /etc, /opt and a directory shared with the host,
# inherited tokens, the container's other processes, the container's own network) and is judged outside confine:
# in the container after confine exits, and on the host.
#
# Test-setup facts, not confine's: this machine's hybrid cgroups stop crun (so --runtime runc), and its root lacks
# CAP_SYS_RESOURCE (so explicit --ulimit values).
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || skip "needs root (rootful podman, debootstrap)"
command -v podman >/dev/null || skip "podman not installed (apt-get install podman runc)"
command -v runc >/dev/null || skip "runc not installed (apt-get install runc)"
command -v debootstrap >/dev/null || skip "debootstrap not installed"

cache=${CONFINE_VM_CACHE:-/tmp/confine-vm}
image=confine-test-container:bookworm-v1
rootfs=$cache/container-rootfs-bookworm-v1
mkdir -p "$cache"
if [[ ! -d $rootfs ]]; then
    rm -rf "$rootfs.tmp"
    debootstrap --variant=minbase --include=libssl3,procps,python3-minimal bookworm "$rootfs.tmp" \
        "$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || echo http://deb.debian.org/debian)" \
        >"$T/debootstrap.log" 2>&1 || { tail -5 "$T/debootstrap.log"; skip "debootstrap failed (no apt mirror?)"; }
    rm -rf "$rootfs.tmp"/usr/share/doc/* "$rootfs.tmp"/usr/share/man/* "$rootfs.tmp"/var/cache/apt/archives/*.deb
    mv "$rootfs.tmp" "$rootfs"
fi
podman image exists "$image" || tar -C "$rootfs" -c . | podman import -q - "$image" >/dev/null

# What the container gets from the host: confine, the checkout (with a secret file), a home for uid 1000, and a
# directory shared with the host that nothing inside confine may write.
# $BIN/confine: lib.sh copied it there
ws=$T/proj
mkdir -m 0777 "$ws" "$T/shared" "$T/home-u"
chown 1000:1000 "$T/home-u"
echo "WS_SECRET=env-canary-$$" >"$ws/.env"
chmod 0644 "$ws/.env"
cat >"$ws/attack.sh" <<'EOF'
# Run by confine inside the container: every way out it can think of. Prints what it got; the judge reads it.
echo "ssh: $(cat ~/.ssh/id_rsa 2>&1)"
echo "aws: $(cat ~/.aws/credentials 2>&1)"
echo "dotenv: $(cat .env 2>&1)"
echo "shadow: $(cat /etc/shadow 2>&1 | head -1)"
for f in /etc/confine-pwned /opt/confine-pwned /shared/confine-pwned; do echo pwned >"$f" 2>/dev/null && echo "wrote $f"; done
echo "env: $(env | grep -c TOKEN_CANARY)"
# confine's own command line (host paths, --env values), where the container's /proc shows its processes
echo "confine-args: $(for p in /proc/[0-9]*; do tr '\0' ' ' <"$p/cmdline" 2>/dev/null; echo; done | awk '$1 == "confine" && NF > 1' | wc -l)"
timeout 3 bash -c "echo hi >/dev/tcp/$SERVER_IP/8099" 2>/dev/null && echo "reached the container's network"
for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = $$ ] && continue  # a pid of the container's /proc may be this shell's own number inside
    grep -a -q victim-canary "$p/environ" 2>/dev/null && echo "read environ of $p"
    echo 900 >"$p/oom_score_adj" 2>/dev/null && [ "$(cat "$p/oom_score_adj")" = 900 ] && echo "set oom_score_adj of $p"
    kill -9 "${p#/proc/}" 2>/dev/null
done
echo "uid: $(id -u)"
EOF
cat >"$ws/job.sh" <<'EOF'
# The CI job inside the container: a victim with a secret, a server on the container's own address, the home's
# keys; then confine with the job's arguments; then the judge, outside confine.
set -u
mkdir -p ~/.ssh ~/.aws && echo ssh-canary >~/.ssh/id_rsa && echo aws-canary >~/.aws/credentials
env VICTIM=victim-canary sleep 300 & victim=$!
SERVER_IP=$(hostname -I | cut -d' ' -f1); export SERVER_IP
python3 -c 'import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 8099)); s.listen()
c,_=s.accept(); open("/tmp/server-reached","w").write("yes")' "$SERVER_IP" & server=$!
sleep 0.3
if [ "$1" = control ]; then  # the same attack without confine: shows each check of the judge can fail
    TOKEN_CANARY=token sh attack.sh >/tmp/out 2>/tmp/err; rc=$?
else
    TOKEN_CANARY=token confine "$@" -- sh attack.sh >/tmp/out 2>/tmp/err; rc=$?
fi
echo "rc=$rc"
echo "--- out"; cat /tmp/out
echo "--- err"; cat /tmp/err
echo "--- judge"
kill -0 "$victim" 2>/dev/null && echo "victim alive" || echo "victim killed"
echo "victim oom_score_adj: $(cat /proc/$victim/oom_score_adj 2>/dev/null) init: $(cat /proc/1/oom_score_adj)"
[ -e /tmp/server-reached ] && echo "server reached" || echo "server untouched"
for f in /etc/confine-pwned /opt/confine-pwned; do [ -e "$f" ] && echo "found $f"; done
kill "$victim" "$server" 2>/dev/null
exit 0
EOF

# container [PODMAN-OPTIONS...] -- [CONFINE-ARGS...]: the job in a fresh container; sets OUT (its whole report).
# PODMAN=(...) runs podman (rootless: as another user).
PODMAN=(podman)
container() {
    local opts=()
    while [[ $1 != -- ]]; do opts+=("$1"); shift; done
    shift
    rm -f "$T/shared/confine-pwned"
    try "${PODMAN[@]}" run --rm --runtime runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
        -v "$BIN/confine:/usr/bin/confine:ro" -v "$ws:/builds/proj" -v "$T/shared:/shared" -v "$T/home-u:/home/u" \
        -w /builds/proj "${opts[@]}" "$image" sh job.sh -w /builds/proj "$@"
    [[ $RC == 0 ]] || fail "podman run ${opts[*]}: exit $RC: $ERRS"
    [[ ! -e $T/shared/confine-pwned ]] || fail "${opts[*]}: the sandbox wrote a directory shared with the host"
}

# Every attack failed, judged from the job's report (and the shared directory, above).
expect_contained() {
    local what=$1
    expect_match "$OUT" "rc=0" "$what: the run"
    expect_no_match "$OUT" "ssh-canary|aws-canary|env-canary" "$what: secrets read"
    expect_match "$OUT" "dotenv: "$'\n' "$what: .env reads empty"
    expect_match "$OUT" "env: 0" "$what: inherited token"
    expect_match "$OUT" "confine-args: 0" "$what: confine's command line"
    expect_no_match "$OUT" "wrote /|found /" "$what: writes outside the workspace"
    expect_no_match "$OUT" "read environ" "$what: another process's environment"
    expect_match "$OUT" "victim alive" "$what: another process killed"
    expect_match "$OUT" "victim oom_score_adj: 0 init: 0" "$what: another process's OOM score"
    expect_match "$OUT" "server untouched" "$what: the container's network"
}

VARIANT=control
try podman run --rm --runtime runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 -v "$ws:/builds/proj" \
    -v "$T/shared:/shared" -w /builds/proj "$image" sh job.sh control
for got in ssh-canary aws-canary env-canary "env: 1" "wrote /etc/confine-pwned" "read environ" "set oom_score_adj" "victim killed" \
    "server reached" "shadow: root:"; do
    expect_match "$OUT" "$got" "the attack without confine"
done
[[ -e $T/shared/confine-pwned ]] || fail "the attack without confine did not write the shared directory"

VARIANT=uid-1000
user=(--user 1000:1000 -e HOME=/home/u)
# Defaults: the container masks /proc and filters sethostname. Refused without --best-effort, with the cause and
# the setting that restores it; with it, the run goes on with the container's /proc and says what that costs.
container "${user[@]}" --
expect_match "$OUT" "rc=125" "refused without --best-effort"
expect_match "$OUT" "podman container refuses a fresh /proc" "the cause"
expect_match "$OUT" "--security-opt unmask=ALL" "the setting"
container "${user[@]}" -- --best-effort
expect_contained "defaults, --best-effort"
expect_match "$OUT" "not enforced \(--best-effort\): host processes and their command lines are hidden" "the loss named"
expect_match "$OUT" "uid: 1000" "the sandbox's user"
# A refusal confine did not foresee (here: the test build told that a fresh /proc would mount): with --best-effort
# the run still goes on, in the weaker mode, and says which step was refused; without it, exit 125 saying the same.
container "${user[@]}" -e CONFINE_TEST_FEATURES=proc=1 -- --best-effort
expect_match "$OUT" "rc=0" "an unforeseen refusal, --best-effort"
expect_match "$OUT" "refused a step of the full sandbox \(cannot mount a fresh /proc: Operation not permitted\)" "the step named"
expect_no_match "$OUT" "ssh-canary|aws-canary" "an unforeseen refusal: the home"
# The weaker mode is a second attempt of the same run: its --checkpoint is saved once, by the first.
try podman run --rm --runtime runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 "${user[@]}" \
    -e CONFINE_TEST_FEATURES=proc=1 -v "$BIN/confine:/usr/bin/confine:ro" -v "$ws:/builds/proj" \
    -v "$T/home-u:/home/u" -w /builds/proj "$image" \
    sh -c 'confine --best-effort --checkpoint -w /builds/proj -- true; echo "rc=$?"'
expect_match "$OUT" "rc=0" "an unforeseen refusal, --best-effort --checkpoint"
expect_eq "$(grep -c "checkpoint [^ ]* saved" <<<"$ERRS")" 1 "one checkpoint said saved ($ERRS)"
saved=$(find "$T/home-u/.local/share/confine/checkpoints" -mindepth 2 -maxdepth 2 -type d ! -name '.*' | wc -l)
expect_eq "$saved" 1 "one checkpoint in the store, judged on the host"
rm -rf "$T/home-u/.local"
container "${user[@]}" -e CONFINE_TEST_FEATURES=proc=1 --
expect_match "$OUT" "rc=125" "an unforeseen refusal, without --best-effort"
expect_match "$OUT" "refused a step of the full sandbox \(cannot mount a fresh /proc" "the step named"
# explain tells the same: the refusal, then with --best-effort none.
try podman run --rm --runtime runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 "${user[@]}" \
    -v "$BIN/confine:/usr/bin/confine:ro" -v "$ws:/builds/proj" -w /builds/proj "$image" \
    sh -c 'confine explain -w /builds/proj -- true; echo "explain-rc=$?"; confine explain --best-effort -w /builds/proj -- true'
expect_match "$OUT" "A run would be refused: .*"$'\n'".*refuses a fresh /proc" "explain: the refusal"
expect_match "$OUT" "explain-rc=0" "explain's exit"
expect_match "$OUT" "/proc +the container's" "explain: the /proc the run gets"
# With the setting the advice names: every promise kept, without --best-effort (the hostname stays the
# container's: cosmetic).
container "${user[@]}" --security-opt unmask=ALL --
expect_contained "unmask=ALL"
expect_no_match "$OUT" "not enforced" "unmask=ALL: nothing lost"

VARIANT=root
container --
expect_match "$OUT" "rc=125" "refused without --best-effort"
expect_match "$OUT" "allows no idmapped mount" "the cause"
expect_match "$OUT" "--cap-add SYS_ADMIN" "the setting"
container -- --best-effort
expect_contained "defaults, --best-effort"
# As root without idmapped mounts the sandbox is the checkout's owner (root here): root's files visible inside
# are readable, and the run said so before it started.
expect_match "$OUT" "not enforced \(--best-effort\): files only host root may touch" "the loss named"
# The checkout owned by uid 1000, the job as root: the sandbox runs as 1000, and root's files stay out of reach.
chown 1000:1000 "$ws"
container --security-opt unmask=ALL -- --best-effort
chown root:root "$ws"
expect_contained "a checkout owned by 1000"
expect_match "$OUT" "uid: 1000" "the sandbox's user: the checkout's owner"
expect_match "$OUT" "shadow: cat: /etc/shadow: Permission denied" "/etc/shadow"
expect_no_match "$OUT" "not enforced" "a checkout owned by 1000: nothing lost"
# With the settings the advice names: full mode, every promise kept.
container --cap-add SYS_ADMIN --security-opt unmask=ALL --
expect_contained "SYS_ADMIN + unmask=ALL"
expect_match "$OUT" "shadow: cat: /etc/shadow: Permission denied" "/etc/shadow"

# Rootless podman: the container has a user namespace of its own, so its root can never make an idmapped mount.
# A user with subordinate ids runs it; its network is none here (slirp4netns needs /dev/net/tun, which this
# machine gives root only), so the network attack has no server to reach.
VARIANT=rootless
rootless_user=confine-podman-test
id "$rootless_user" >/dev/null 2>&1 || useradd -m -s /bin/sh "$rootless_user"
grep -q "^$rootless_user:" /etc/subuid || usermod --add-subuids 200000-265535 --add-subgids 200000-265535 "$rootless_user"
xdg=$T/xdg-rootless
mkdir -m 0700 "$xdg"
chown "$rootless_user" "$xdg" "$ws"
chmod 0755 "$T"
PODMAN=(runuser -u "$rootless_user" -- env XDG_RUNTIME_DIR="$xdg" HOME="$(getent passwd "$rootless_user" | cut -d: -f6)" podman)
"${PODMAN[@]}" image exists "$image" || tar -C "$rootfs" -c . | "${PODMAN[@]}" import -q - "$image" >/dev/null
container --network none "${user[@]}" -- --best-effort
expect_contained "rootless, uid 1000"
container --network none -- --best-effort
expect_contained "rootless, root"
expect_match "$OUT" "not enforced \(--best-effort\): files only host root may touch" "the loss named"
expect_match "$OUT" "rootless container's root cannot make idmapped mounts" "the advice fits rootless"
expect_no_match "$OUT" "--cap-add" "no setting that cannot help"
chown root "$ws"

echo "PASS [$TEST_NAME]"
