#!/bin/bash
# root-workspace-owner: when root runs confine, the workspace stays writable and files created inside are
# owned on the host by the workspace's owner (idmapped mount), for a root-owned and a user-owned workspace;
# inside, the command runs as the workspace owner's uid by default.
. "$(dirname "$0")/lib.sh"

scenario() {
    # Root-owned workspace (the variant's default).
    expect_ok write "$WS/made-inside" hello
    expect_eq "$(stat -c '%u:%g' "$WS/made-inside")" "0:0" "owner on the host of a file made in a root-owned workspace"
    expect_ok mkdir "$WS/dir-inside"
    expect_eq "$(stat -c '%u:%g' "$WS/dir-inside")" "0:0" "owner on the host of a dir made in a root-owned workspace"

    # A workspace owned by an ordinary user (uid 1000).
    WS=$V/ws-alice
    mkdir -m 0755 "$WS"
    mkdir -m 0755 "$WS/.probe"
    cp "$PROBE" "$WS/.probe/confine-test-probe"
    PIN=$WS/.probe/confine-test-probe
    echo "pre-existing" >"$WS/existing"
    chown -R 1000:1000 "$WS"
    probe id
    expect_eq "$OUT" "OK uid=1000 gid=1000 euid=1000 egid=1000" "ids inside a workspace owned by 1000 ($(last))"
    probe stat "$WS/existing"
    expect_match "$OUT" '^OK uid=1000 gid=1000 ' "owner of a workspace file as seen inside ($(last))"
    expect_ok write "$WS/existing" changed
    expect_eq "$(cat "$WS/existing")" changed "host content of a file changed inside"
    expect_ok write "$WS/made-inside" hello
    expect_eq "$(stat -c '%u:%g' "$WS/made-inside")" "1000:1000" "owner on the host of a file made inside"
    sandbox /bin/sh -c 'mkdir -p a/b && echo x >a/b/c && ln -s c a/b/l'
    expect_eq "$RC" 0 "mkdir/write/ln inside ($(last))"
    expect_eq "$(stat -c '%u:%g' "$WS/a" "$WS/a/b" "$WS/a/b/c" | sort -u)" "1000:1000" "owner on the host of a tree made inside"
    expect_eq "$(stat -c '%u:%g' "$WS/a/b/l")" "1000:1000" "owner on the host of a symlink made inside"
}
run_variants scenario root
