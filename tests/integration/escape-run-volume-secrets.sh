#!/bin/bash
# escape-run-volume-secrets: every directory bound from the command line is scanned for secret files and they are
# masked, as the workspace's are, not only the volume that becomes the workspace: `confine run -v DIR:/src:ro`
# with no -w, with -w outside every volume, a second read-write volume, and plain confine's --ro and --rw. Inside,
# .env, an id_rsa key and a secrets/ directory read as empty while the project's other files stay readable; on
# the host they are unchanged.
. "$(dirname "$0")/lib.sh"

IMAGE_SRC=$T/image-src
mkdir -p "$IMAGE_SRC"/{bin,etc,root,tmp}
cp /bin/busybox "$IMAGE_SRC/bin/busybox"
for a in sh cat ls; do ln -s busybox "$IMAGE_SRC/bin/$a"; done
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$IMAGE_SRC/etc/passwd"
chmod -R a+rX "$IMAGE_SRC"

# The project at $1 (made, owned by the variant's user): its secrets hold CANARY-<where>-<random>.
make_project() {
    local p=$1
    mkdir -m 0755 -p "$p/secrets" "$p/src"
    echo "ENV=CANARY-env-$RANDOM" >"$p/.env"
    echo "CANARY-key-$RANDOM" >"$p/src/id_rsa"
    echo "CANARY-dir-$RANDOM" >"$p/secrets/token"
    echo "plain-source" >"$p/src/main.c"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$p"
}

# inside_reads DIR: what the last run's script printed for DIR (inside), one `NAME:bytes` per file.
READ_ALL='for f in "$0/.env" "$0/src/id_rsa" "$0/src/main.c"; do printf "%s:%s\n" "${f#$0/}" "$(cat "$f")"; done; ls "$0/secrets"'

# masked WHAT: the last run printed the project's files as masked (empty secrets, source intact).
masked() {
    expect_eq "$RC" 0 "$1: exit status ($(last))"
    expect_eq "$OUT" $'.env:\nsrc/id_rsa:\nsrc/main.c:plain-source' "$1: what the sandbox read"
    expect_no_match "$OUT$ERRS" "CANARY-" "$1: a secret's contents came out"
}

scenario() {
    P=$V/proj
    Q=$V/other
    make_project "$P"
    make_project "$Q"
    local before
    before=$(tree_sum "$P")
    # Control: the host reads the secrets.
    expect_match "$(host cat "$P/.env")" "^ENV=CANARY-env-" "the host's .env"

    try sb run -v "$P:/src:ro" "$IMAGE_SRC" sh -c "$READ_ALL" /src
    masked "confine run -v DIR:/src:ro (no -w)"
    try sb run -v "$P:/src:ro" -w /tmp "$IMAGE_SRC" sh -c "$READ_ALL" /src
    masked "confine run -v DIR:/src:ro -w /tmp (the workdir outside every volume)"
    try sb run -v "$Q:/work" -v "$P:/src" -w /work "$IMAGE_SRC" sh -c "$READ_ALL" /src
    masked "confine run, a second read-write volume"
    try sb run -v "$Q:/work" -v "$P:/src" -w /work "$IMAGE_SRC" sh -c "$READ_ALL" /work
    masked "confine run, the workspace volume"

    try sb -w "$WS" --ro "$P:/mnt/src" -- sh -c "$READ_ALL" /mnt/src
    masked "confine --ro DIR"
    try sb -w "$WS" --rw "$P" -- sh -c "$READ_ALL" "$P"
    masked "confine --rw DIR"

    expect_eq "$(tree_sum "$P")" "$before" "the project on the host after the runs"
}
run_variants scenario
