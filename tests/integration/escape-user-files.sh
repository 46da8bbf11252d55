#!/bin/bash
# escape-user-files: the files confine reads from places a user names (an OCI bundle's config.json, an image's
# etc/passwd, --env-file, --profile, --seccomp) are read as that user would: never through a symbolic link at the
# file's name, never from a FIFO (refused at once, no hang), and, when root runs confine on a directory another
# user owns, with that user's permissions (a link to a root-only directory on the way gives them nothing). The
# attacker's files belong to uid 65534 in both variants; in the root variant confine is run by root (an admin's
# `sudo confine run ~alice/bundle`). Each refusal is exit 125 with one line naming the file, and the root-only
# secret appears nowhere: not in the sandbox's output, not on stderr.
. "$(dirname "$0")/lib.sh"

# A tiny image: busybox and a passwd whose entry for root has the home /image-home.
IMAGE_SRC=$T/image-src
mkdir -p "$IMAGE_SRC"/{bin,etc,root,tmp}
cp /bin/busybox "$IMAGE_SRC/bin/busybox"
for a in sh env cat true; do ln -s busybox "$IMAGE_SRC/bin/$a"; done
printf 'root:x:0:0:root:/image-home:/bin/sh\n' >"$IMAGE_SRC/etc/passwd"
chmod -R a+rX "$IMAGE_SRC"

# What an attacker would like confine to read for them: root-only, in a root-only directory.
SECRET="ROOTSECRET-$RANDOM$RANDOM"
VAULT=$T/vault
mkdir -m 0700 "$VAULT"
printf '{"ociVersion":"1.0.2","process":{"args":["/bin/env"],"env":["LEAK=%s"],"cwd":"/"}}\n' "$SECRET" >"$VAULT/config.json"
printf 'root:x:0:0:root:/%s:/bin/sh\n' "$SECRET" >"$VAULT/passwd"
printf 'LEAK=%s\n' "$SECRET" >"$VAULT/shadow"
printf 'format = "confine-profile/1"\n[environment]\nset = ["LEAK=%s"]\n' "$SECRET" >"$VAULT/profile.toml"
mkdir -m 0700 "$VAULT/bundle"
cp -a "$IMAGE_SRC" "$VAULT/bundle/rootfs"
cp "$VAULT/config.json" "$VAULT/bundle/config.json"
chmod 0600 "$VAULT"/*.json "$VAULT"/passwd "$VAULT"/shadow "$VAULT"/profile.toml

# refused WHAT REGEX: the last run was refused (125) promptly, with one line matching REGEX, and no secret.
refused() {
    expect_eq "$RC" 125 "$1: exit status ($(last))"
    expect_match "$ERRS" "$2" "$1: the message ($(last))"
    expect_eq "$(grep -c . <<<"$ERRS")" 1 "$1: one line on stderr ($(last))"
    expect_no_match "$OUT$ERRS" "$SECRET" "$1: the root-only secret leaked"
}

scenario() {
    [[ $SUITE_UID == 0 ]] || skip "the attacker's files must belong to uid $UNPRIV_UID, which only root can arrange"
    # The attacker's directory: everything in it is theirs.
    A=$V/attacker
    mkdir -m 0755 "$A"
    local b
    for b in link-config fifo-config; do
        mkdir "$A/$b"
        cp -a "$IMAGE_SRC" "$A/$b/rootfs"
    done
    ln -s "$VAULT/config.json" "$A/link-config/config.json"
    mkfifo "$A/fifo-config/config.json"
    ln -s "$VAULT/bundle" "$A/vault-bundle"
    cp -a "$IMAGE_SRC" "$A/link-passwd"
    ln -sf "$VAULT/passwd" "$A/link-passwd/etc/passwd"
    cp -a "$IMAGE_SRC" "$A/fifo-passwd"
    rm "$A/fifo-passwd/etc/passwd"
    mkfifo "$A/fifo-passwd/etc/passwd"
    cp -a "$IMAGE_SRC" "$A/image"
    ln -s "$VAULT/shadow" "$A/env.list"
    mkfifo "$A/env.fifo"
    ln -s "$VAULT/profile.toml" "$A/profile.toml"
    mkfifo "$A/profile.fifo"
    ln -s "$VAULT/shadow" "$A/seccomp.json"
    printf 'SAFE=1\n' >"$A/ok.list"
    chown -hR "$UNPRIV_UID:$UNPRIV_GID" "$A"

    # Controls: the attacker's own files work, and the vault is root's alone.
    try sb run --env-file "$A/ok.list" "$A/image" env
    expect_eq "$RC" 0 "confine run with the attacker's own image and env file ($(last))"
    expect_match "$OUT" "SAFE=1" "the env file's variable inside ($(last))"
    expect_match "$OUT" "HOME=/image-home" "HOME from the image's passwd ($(last))"
    try setpriv --reuid="$UNPRIV_UID" --regid="$UNPRIV_GID" --clear-groups -- cat "$VAULT/config.json"
    [[ $RC != 0 ]] || fail "uid $UNPRIV_UID can read the vault: the test proves nothing"

    SB_TIMEOUT=20
    local start
    start=$SECONDS
    try sb run "$A/link-config"
    refused "a bundle whose config.json is a link to a root-only file" \
        "bundle config \`$A/link-config/config.json\` is a symbolic link"
    try sb run "$A/fifo-config"
    refused "a bundle whose config.json is a FIFO" "bundle config \`$A/fifo-config/config.json\` is a FIFO, not a regular file"
    try sb run "$A/vault-bundle"
    if [[ $VARIANT == root ]]; then
        refused "a link to a root-only bundle in a directory uid $UNPRIV_UID owns" \
            "Permission denied \(read with the permissions of uid $UNPRIV_UID, who can change \`$A\`\)"
    else
        refused "a link to a root-only bundle" "Permission denied|does not exist"
    fi
    try sb run "$A/link-passwd" env
    refused "an image whose etc/passwd is a link to a root-only file" "the image's passwd .* is a symbolic link"
    try sb run "$A/fifo-passwd" env
    refused "an image whose etc/passwd is a FIFO" "the image's passwd .* is a FIFO, not a regular file"
    try sb run --env-file "$A/env.list" "$A/image" env
    refused "--env-file, a link to a root-only file" "--env-file \`$A/env.list\` is a symbolic link"
    try sb run --env-file "$A/env.fifo" "$A/image" env
    refused "--env-file, a FIFO" "--env-file \`$A/env.fifo\` is a FIFO"
    try sb -w "$WS" --profile "$A/profile.toml" -- env
    refused "--profile, a link to a root-only file" "profile \`$A/profile.toml\` is a symbolic link"
    try sb -w "$WS" --profile "$A/profile.fifo" -- env
    refused "--profile, a FIFO" "profile \`$A/profile.fifo\` is a FIFO"
    try sb -w "$WS" --seccomp "$A/seccomp.json" -- env
    refused "--seccomp, a link to a root-only file" "--seccomp \`$A/seccomp.json\` is a symbolic link"
    # Ten refusals, none of which may wait on a FIFO: far below one SB_TIMEOUT each.
    ((SECONDS - start < 30)) || fail "the refusals took $((SECONDS - start)) s: something waited on a FIFO"
}
run_variants scenario
