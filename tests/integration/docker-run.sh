#!/bin/bash
# docker-run: `confine run` takes a `docker run` command line. The seed line (docker's hardened dev-container
# invocation, `docker` replaced by `confine`) runs an unpacked image directory `myapp-dev` on a terminal: on a host
# whose cgroup v2 lacks the memory/pids controller it fails closed (125, naming the controller); with
# --best-effort it runs, and inside: the caller's ids, /workspace, no_new_privs, no capabilities, the image's /etc,
# no host home, a writable-but-thrown-away /usr (read-only with --read-only), masked workspace secrets. Then
# docker's environment, stdin, hostname, tmpfs and shm sizes, bind and network flags, the `host` image, the refusals (each
# exit 125 with one line naming the problem), any repeatable flag right before the image, and images docker runs
# that lack /var/tmp (with --read-only) or /usr.
. "$(dirname "$0")/lib.sh"

# Whether cgroup v2 offers the controllers the seed line's limits need (as limits-host.sh computes it).
v2_root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
v2_missing=()
for c in memory pids; do
    [[ -n $v2_root ]] && grep -qw "$c" "$v2_root/cgroup.controllers" 2>/dev/null || v2_missing+=("$c")
done

# The image: a tiny root filesystem with the host's bash (and the libraries it links, the loader at its path) and
# busybox applets. Built once; each variant copies it into its project directory.
IMAGE_SRC=$T/image-src
build_image() {
    local img=$IMAGE_SRC/myapp-dev lib a
    mkdir -p "$img"/{bin,usr/bin,etc,root,home/dev,tmp,var/tmp}
    cp /bin/bash "$img/usr/bin/bash"
    for lib in $(ldd /bin/bash | grep -o '/[^ )]*'); do
        mkdir -p "$img$(dirname "$lib")"
        cp -L "$lib" "$img$lib"
    done
    [[ -x /bin/busybox ]] || fail "busybox (static) is needed to build the test image"
    cp /bin/busybox "$img/bin/busybox"
    for a in id ls cat touch stat sh env hostname mkdir rm grep head dd wc tr; do ln -s busybox "$img/bin/$a"; done
    printf 'root:x:0:0:root:/root:/bin/sh\ndev:x:1000:1000:dev:/home/dev:/bin/sh\n' >"$img/etc/passwd"
    printf 'root:x:0:\ndev:x:1000:\n' >"$img/etc/group"
    echo "image-etc-marker" >"$img/etc/myapp-marker"
    chmod 1777 "$img/tmp" "$img/var/tmp"
    chmod -R a+rX "$IMAGE_SRC"
}
build_image

# drun ARGS...: `confine run ARGS` as the variant's user, from the project directory, clean environment (+ XENV).
drun() { (cd "$P" && sb run "$@"); }

# The seed line, verbatim but for `docker` -> `confine` (and EXTRA words right after `run`), as a script run from
# the directory that holds myapp-dev.
write_seed() {
    local file=$1 extra=$2
    cat >"$file" <<EOF
cd "$P" || exit 99
confine run $extra--rm -it \\
  -v "\$PWD:/workspace" -w /workspace \\
  --cap-drop=ALL --security-opt=no-new-privileges \\
  --memory=4g --pids-limit=512 \\
  --user "\$(id -u):\$(id -g)" \\
  myapp-dev bash
EOF
}

# run_seed FILE STDIN-FILE: the seed script on a terminal (script(1)), as the variant's user, `confine` on PATH.
run_seed() {
    local cmd
    mkdir -p "$V/path"
    ln -sfn "$(realpath "$CONF")" "$V/path/confine"
    cmd=$(printf '%q ' "${RUN_AS[@]}" env -i "${BASE_ENV[@]}" PATH="$V/path:$SANE_PATH" bash "$1")
    try timeout -k 5 60 script -qec "$cmd" /dev/null <"$2"
    OUT=${OUT//$'\r'/}
}

# The value the inside script printed as `R_NAME:value` (the last such line).
r() { grep -a "^R_$1:" <<<"$OUT" | tail -n1 | cut -d: -f2-; }

scenario() {
    P=$V/proj
    mkdir -m 0755 "$P" "$P/data" "$P/.t"
    cp -a "$IMAGE_SRC/myapp-dev" "$P/myapp-dev"
    echo "ENV-CANARY-$RANDOM" >"$P/.env"
    echo "data-file" >"$P/data/file"
    echo "ssh-marker-$RANDOM" >"$H/.ssh/id_test"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$P" "$H/.ssh"
    local image_before
    image_before=$(tree_sum "$P/myapp-dev")

    # What bash runs inside, on the terminal: one line of stdin sources it, so the output is not interleaved
    # with the terminal's echo of the commands.
    cat >"$P/.t/inside.sh" <<EOF
echo "R_UID:\$(id -u)"
echo "R_GID:\$(id -g)"
echo "R_CWD:\$(pwd)"
echo "R_HOME:\$HOME"
[ -t 0 ] && [ -t 1 ] && echo "R_TTY:yes"
touch /workspace/made-inside && echo "R_TOUCH:ok"
echo "R_NNP:\$(grep '^NoNewPrivs:' /proc/self/status | tr -d ' \t')"
echo "R_CAPEFF:\$(grep '^CapEff:' /proc/self/status | tr -d ' \t')"
echo "R_SSH:\$(cat '$H/.ssh/id_test' 2>&1)"
echo "R_HOMEDIR:\$(ls '$H' 2>&1)"
echo "R_ETC:\$(cat /etc/myapp-marker 2>&1)"
if echo written >/usr/confine-usr-write 2>/dev/null; then echo "R_USR:ok \$(cat /usr/confine-usr-write)"; else echo "R_USR:failed"; fi
echo "R_DOTENV:\$(wc -c </workspace/.env)"
echo "R_DONE:yes"
EOF
    echo '. /workspace/.t/inside.sh; exit 0' >"$V/stdin"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$P/.t"

    # 1. The seed line as is. Without the controllers it must fail closed, naming them; with them, run.
    write_seed "$V/seed.sh" ""
    run_seed "$V/seed.sh" "$V/stdin"
    if ((${#v2_missing[@]})); then
        expect_eq "$RC" 125 "the seed line without cgroup v2 ${v2_missing[*]} ($(last))"
        local joined
        joined=$(IFS=,; echo "${v2_missing[*]}")
        expect_match "$OUT" "cgroup v2 here has no ${joined//,/, } controller" "the refusal names the missing controller ($(last))"
        expect_match "$OUT" "--best-effort" "the refusal says how to run anyway ($(last))"
        [[ ! -e $P/made-inside ]] || fail "the refused run ran the command"
    else
        expect_eq "$RC" 0 "the seed line with cgroup v2 memory and pids ($(last))"
        expect_eq "$(r DONE)" yes "the inside script ran to its end ($(last))"
        rm -f "$P/made-inside"
    fi

    # 2. The same line with --best-effort right after `run`.
    write_seed "$V/seed-be.sh" "--best-effort "
    run_seed "$V/seed-be.sh" "$V/stdin"
    expect_eq "$RC" 0 "the seed line with --best-effort ($(last))"
    expect_eq "$(r DONE)" yes "the inside script ran to its end ($(last))"
    if ((${#v2_missing[@]})); then
        expect_match "$OUT" "not enforced \(--best-effort\): resource limits" "the run warns about the limits ($(last))"
    fi
    expect_eq "$(r UID)" "$VUID" "id -u inside (--user \$(id -u):\$(id -g))"
    expect_eq "$(r GID)" "$VGID" "id -g inside"
    expect_eq "$(r CWD)" /workspace "working directory inside"
    local want_home=/
    [[ $VUID != 0 ]] || want_home=/root
    expect_eq "$(r HOME)" "$want_home" "HOME inside (the image's /etc/passwd entry for uid $VUID)"
    expect_eq "$(r TTY)" yes "stdin and stdout are the terminal inside (-it)"
    expect_eq "$(r TOUCH)" ok "touch /workspace/made-inside"
    [[ -f $P/made-inside ]] || fail "the file made in /workspace is not on the host"
    expect_eq "$(stat -c %u:%g "$P/made-inside")" "$VUID:$VGID" "owner of the file made in /workspace, on the host"
    expect_eq "$(r NNP)" "NoNewPrivs:1" "no_new_privs inside"
    expect_eq "$(r CAPEFF)" "CapEff:0000000000000000" "effective capabilities inside"
    expect_match "$(r SSH)" "No such file or directory" "the host home's ~/.ssh/id_test inside"
    expect_no_match "$OUT" "ssh-marker-" "the host home's ssh marker leaked"
    expect_match "$(r HOMEDIR)" "No such file or directory" "the host home directory inside"
    expect_eq "$(r ETC)" image-etc-marker "/etc inside is the image's"
    expect_eq "$(r USR)" "ok written" "a write to /usr inside (a throwaway overlay)"
    expect_eq "$(r DOTENV)" 0 "size of the workspace's .env inside (masked)"
    expect_eq "$(tree_sum "$P/myapp-dev")" "$image_before" "the image directory on the host after the run"
    [[ ! -e $P/myapp-dev/usr/confine-usr-write ]] || fail "the write to /usr reached the image directory"
    expect_match "$(cat "$P/.env")" "^ENV-CANARY-" "the host's .env after the run"

    # --read-only: the image's directories are read-only binds.
    try drun --best-effort --read-only -v "$P:/workspace" -w /workspace myapp-dev sh -c 'echo x >/usr/confine-usr-write' </dev/null
    expect_eq "$RC" 1 "a write to /usr with --read-only ($(last))"
    expect_match "$ERRS" "Read-only file system" "the write to /usr with --read-only fails with EROFS ($(last))"
    try drun --read-only -v "$P:/workspace" -w /workspace myapp-dev sh -c 'echo ws >/workspace/ro-ws && cat /workspace/ro-ws' </dev/null
    expect_eq "$RC:$OUT" "0:ws" "the workspace stays writable with --read-only ($(last))"

    # 3. Refusals: exit 125 and one line that names the problem.
    local -a bad
    local want
    while IFS='|' read -r want line; do
        [[ -n $line ]] || continue
        eval "bad=($line)"
        try drun "${bad[@]}" </dev/null
        expect_eq "$RC" 125 "confine run ${bad[*]} ($(last))"
        expect_match "$ERRS" "$want" "the message for confine run ${bad[*]} ($(last))"
        expect_eq "$(wc -l <<<"$ERRS")" 1 "one line for confine run ${bad[*]} ($(last))"
        expect_eq "$OUT" "" "nothing on stdout for confine run ${bad[*]}"
    done <<'EOF'
docker export|--rm myapp-prod bash
umoci unpack|--rm myapp-prod bash
does not exist|--rm ./myapp-missing bash
-d: not supported.*foreground|-d myapp-dev true
-P: not supported.*-p HOSTPORT:PORT|-P myapp-dev true
--publish 1:2/udp: only TCP ports can be published|-p 1:2/udp myapp-dev true
--privileged: not supported|--privileged myapp-dev true
--cap-add: not supported.*never grants capabilities|--cap-add SYS_ADMIN myapp-dev true
--frobnicate: not a docker run flag|--frobnicate myapp-dev true
--name: not supported|--name box myapp-dev true
`data` is a named volume|-v data:/data --rm myapp-dev true
option `z` is not supported|-v "$PWD:/w:z" --rm myapp-dev true
--network bridge: confine has no docker networks|--network bridge myapp-dev true
seccomp=unconfined: confine always installs a seccomp filter|--security-opt seccomp=unconfined --rm myapp-dev true
--user alice: use numeric UID|--user alice myapp-dev true
the input device is not a TTY|-it myapp-dev bash
--workdir `rel`: must be an absolute path|--workdir rel myapp-dev true
--tmpfs `/x:exec`: option `exec` is not supported|--tmpfs /x:exec --rm myapp-dev true
no command given after the image|--rm myapp-dev
EOF

    # 4. Docker's environment: -e NAME=V, -e NAME (the host's value), --env-file; nothing else of the host's.
    printf '# comment\n\nFROM_FILE=file-value\r\nFILE_PASSED\n' >"$V/vars.env"
    [[ $SUITE_UID != 0 ]] || chown "$VUID:$VGID" "$V/vars.env"
    XENV=(BAR=bar-from-host FILE_PASSED=passed-by-file HOST_ONLY=not-passed)
    try drun -e FOO=1 -e BAR --env-file "$V/vars.env" --rm myapp-dev env </dev/null
    XENV=()
    expect_eq "$RC" 0 "confine run -e ... env ($(last))"
    local envs
    envs=$(sort <<<"$OUT")
    for want in FOO=1 BAR=bar-from-host FROM_FILE=file-value FILE_PASSED=passed-by-file CONFINE=1 HOME=/root \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; do
        grep -qx -- "$want" <<<"$envs" || fail "inside: $want missing from the environment ($(last))"
    done
    for want in HOST_ONLY USER LOGNAME LANG XDG_CACHE_HOME TERM; do
        ! grep -q "^$want=" <<<"$envs" || fail "inside: the host's $want is in the environment ($(last))"
    done

    # 5. stdin: empty without -i, passed with -i.
    try drun_stdin "" --rm myapp-dev cat
    expect_eq "$RC:$OUT" "0:" "cat without -i reads nothing ($(last))"
    try drun_stdin "-i" --rm myapp-dev cat
    expect_eq "$RC:$OUT" "0:piped-in" "cat with -i reads the pipe ($(last))"

    # 6. --hostname.
    try drun --hostname box myapp-dev sh -c 'hostname; echo "$HOSTNAME"' </dev/null
    expect_eq "$RC:$OUT" $'0:box\nbox' "hostname inside with --hostname box ($(last))"

    # 7. --tmpfs with a size: writing past it is ENOSPC.
    try drun --tmpfs /scratch:size=1m --rm myapp-dev dd if=/dev/zero of=/scratch/f bs=1024 count=2048 </dev/null
    expect_eq "$RC" 1 "writing 2 MiB to a 1 MiB --tmpfs ($(last))"
    expect_match "$ERRS" "No space left on device" "the write past the --tmpfs size fails with ENOSPC ($(last))"
    try drun --tmpfs /scratch:size=1m --rm myapp-dev dd if=/dev/zero of=/scratch/f bs=1024 count=512 </dev/null
    expect_eq "$RC" 0 "writing 512 KiB to a 1 MiB --tmpfs ($(last))"
    # --shm-size, as docker spells it: /dev/shm holds that much and no more.
    try drun --shm-size 1m --rm myapp-dev dd if=/dev/zero of=/dev/shm/f bs=1024 count=2048 </dev/null
    expect_eq "$RC" 1 "writing 2 MiB to a 1 MiB --shm-size /dev/shm ($(last))"
    expect_match "$ERRS" "No space left on device" "the write past --shm-size fails with ENOSPC ($(last))"
    try drun --shm-size 1m --rm myapp-dev dd if=/dev/zero of=/dev/shm/f bs=1024 count=512 </dev/null
    expect_eq "$RC" 0 "writing 512 KiB to a 1 MiB --shm-size /dev/shm ($(last))"

    # 8. --mount type=bind,...,readonly: reads work, writes are EROFS.
    try drun --mount "type=bind,source=$P/data,target=/data,readonly" --rm myapp-dev sh -c 'cat /data/file; echo x >/data/new' </dev/null
    expect_eq "$RC" 1 "a write to a readonly --mount ($(last))"
    expect_eq "$OUT" data-file "reading through a readonly --mount ($(last))"
    expect_match "$ERRS" "Read-only file system" "the write to a readonly --mount fails with EROFS ($(last))"
    [[ ! -e $P/data/new ]] || fail "the write through a readonly --mount reached the host"

    # 9. --network none: only the loopback interface (from /proc/net/dev: skip the two header lines).
    try drun --network none --rm myapp-dev cat /proc/net/dev </dev/null
    expect_eq "$RC" 0 "cat /proc/net/dev with --network none ($(last))"
    expect_eq "$(tail -n +3 <<<"$OUT" | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')" "lo " "interfaces with --network none"
    local host_ifs
    host_ifs=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ' ')
    try drun --network host --rm myapp-dev cat /proc/net/dev </dev/null
    expect_eq "$RC" 0 "cat /proc/net/dev with --network host ($(last))"
    expect_eq "$(tail -n +3 <<<"$OUT" | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ' ')" "$host_ifs" "interfaces with --network host"

    # 10. The `host` image: the host's system directories, homes hidden.
    try drun host /bin/true </dev/null
    expect_eq "$RC" 0 "confine run host /bin/true ($(last))"
    try drun --rm host /bin/sh -c "cat '$H/.ssh/id_test'" </dev/null
    expect_eq "$RC" 1 "reading the host home's ~/.ssh/id_test with the host image ($(last))"
    expect_no_match "$OUT" "ssh-marker-" "the ssh marker with the host image"

    # 11. docker takes one value per occurrence of a repeatable flag, so the last flag before the image may be any
    # of them (`-v A:B IMAGE CMD` is the usual docker line).
    local flag
    for flag in "-v $P:/workspace" "--volume=$P:/workspace" "-e FOO=1" "--env FOO=1" "--cap-drop=ALL" \
        "--cap-drop ALL" "--security-opt=no-new-privileges" "--tmpfs /scratch" "--mount type=tmpfs,target=/t" \
        "--env-file $V/vars.env"; do
        # shellcheck disable=SC2086 # split on purpose: flag and value
        try drun $flag myapp-dev sh -c 'echo ran' </dev/null
        expect_eq "$RC:$OUT" "0:ran" "confine run $flag myapp-dev sh -c 'echo ran' ($(last))"
    done

    # 12. --read-only with an image whose /var has no tmp/ (busybox's, for one): docker runs it; confine's own
    # tmpfs at /var/tmp needs a mount point it cannot create in the read-only /var.
    cp -a "$P/myapp-dev" "$P/myapp-novartmp"
    rmdir "$P/myapp-novartmp/var/tmp"
    try drun --read-only --rm myapp-novartmp sh -c 'echo ran' </dev/null
    expect_eq "$RC:$OUT" "0:ran" "confine run --read-only with an image without /var/tmp ($(last))"

    # 13. An image without /usr (a static binary in /bin, as `FROM scratch` images are): docker runs it.
    mkdir -p "$P/myapp-static/bin"
    cp /bin/busybox "$P/myapp-static/bin/busybox"
    ln -s busybox "$P/myapp-static/bin/sh"
    try drun --rm myapp-static sh -c 'echo ran' </dev/null
    expect_eq "$RC:$OUT" "0:ran" "confine run with an image without /usr ($(last))"

    # 14. An OCI bundle (umoci unpack): rootfs/ is the image, config.json's process gives the default command,
    # environment (which -e overrides), working directory and user; its hooks are never run.
    mkdir -p "$P/bundle"
    cp -a "$P/myapp-static" "$P/bundle/rootfs"
    mkdir -p "$P/bundle/rootfs/srv/app"
    cat >"$P/bundle/config.json" <<JSON
{"ociVersion": "1.0.2", "root": {"path": "rootfs"},
 "process": {"user": {"uid": 1000, "gid": 1001}, "cwd": "/srv/app",
             "args": ["sh", "-c", "echo \$(id -u):\$(id -g) \$(pwd) \$FOO \$BAR"],
             "env": ["PATH=/bin", "FOO=image-foo", "BAR=image-bar"]},
 "hooks": {"prestart": [{"path": "/bin/sh", "args": ["sh", "-c", "touch $P/bundle/hook-ran"]}]}}
JSON
    try drun -e BAR=cli-bar bundle </dev/null
    expect_eq "$RC:$OUT" "0:1000:1001 /srv/app image-foo cli-bar" "an OCI bundle's defaults, -e on top ($(last))"
    [[ ! -e $P/bundle/hook-ran ]] || fail "an OCI bundle's hook ran on the host"
    try drun --user 0:0 -w / bundle sh -c 'echo $(id -u) $(pwd)' </dev/null
    expect_eq "$RC:$OUT" "0:0 /" "--user and -w override the bundle's ($(last))"
    echo '{"process": {"env": ["=x"]}}' >"$P/bundle/config.json"
    try drun bundle true </dev/null
    expect_eq "$RC" 125 "a malformed bundle config is refused ($(last))"
    expect_match "$ERRS" 'config.json: process.env\[0\]: expected NAME=VALUE' "the error names the JSON location"
}

# drun_stdin FLAG ARGS...: `echo piped-in | confine run FLAG ARGS...`.
drun_stdin() {
    local flag=$1
    shift
    # shellcheck disable=SC2086 # FLAG is empty or one word
    echo piped-in | drun $flag "$@"
}

run_variants scenario
