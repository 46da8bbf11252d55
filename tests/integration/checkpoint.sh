#!/bin/bash
# checkpoint: --checkpoint saves the whole workspace outside it before the run, and `confine checkpoints restore
# latest` is a real undo. The run deletes everything it can (`rm -rf .git ./* ./.[!.]*`); the restore, with no
# --force (the changes are the run's own), brings back, judged on the host: every file under .git byte for byte
# (hooks, config, index, objects, packed refs), a nested repository with its own .git, an ignored file and an
# ignored directory, untracked files, a secret, a symbolic link, an empty directory, modes and file times; `git
# status` and `git log` give what they gave before. The checkpoint alone does not touch the repository (HEAD,
# index), and is listed by `confine checkpoints list`.
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null || skip "git is not installed"

# git as the variant's user (the workspace is theirs: git refuses a repository owned by someone else).
g() { host git -C "$1" -c user.name=t -c user.email=t@t -c init.defaultBranch=main "${@:2}"; }

# Every name below DIR: kind, mode, owner; a file's size, time and content hash; a link's target.
ws_state() {
    (cd "$1" && find . \( -type d -printf '%p d %m %U\n' \) -o \( -type l -printf '%p l %l %U\n' \) \
        -o \( -type f -printf '%p f %m %U %s %T@\n' \) | sort && find . -type f -exec sha256sum {} + | sort)
}
git_sum() { (cd "$1" && find .git -type f -exec sha256sum {} + | sort); }

scenario() {
    g "$WS" init -q
    echo one >"$WS/tracked.txt"
    printf '#!/bin/sh\nexit 0\n' >"$WS/run.sh"
    chmod 0755 "$WS/run.sh"
    printf 'build/\n*.log\n' >"$WS/.gitignore"
    g "$WS" add tracked.txt run.sh .gitignore
    g "$WS" commit -qm init
    echo two >>"$WS/tracked.txt"
    g "$WS" commit -qam second
    g "$WS" tag v1
    g "$WS" pack-refs --all
    printf '#!/bin/sh\necho my hook\n' >"$WS/.git/hooks/pre-commit"
    chmod 0755 "$WS/.git/hooks/pre-commit"
    g "$WS" config my.setting kept
    echo modified >>"$WS/tracked.txt"
    echo fresh >"$WS/untracked.txt"
    mkdir -p "$WS/build/obj" "$WS/empty" "$WS/src/deep"
    echo object >"$WS/build/obj/a.o"
    echo noise >"$WS/debug.log"
    head -c 65536 /dev/urandom >"$WS/src/deep/blob.bin"
    echo "API_KEY=x" >"$WS/.env"
    ln -s src/deep/blob.bin "$WS/link-to-blob"
    mkdir -p "$WS/vendor/lib"
    [[ $SUITE_UID != 0 ]] || chown -hR "$VUID:$VGID" "$WS"
    g "$WS/vendor/lib" init -q
    echo nested >"$WS/vendor/lib/n.txt"
    g "$WS/vendor/lib" add n.txt
    g "$WS/vendor/lib" commit -qm nested
    echo dirty >>"$WS/vendor/lib/n.txt"
    [[ $SUITE_UID != 0 ]] || chown -hR "$VUID:$VGID" "$WS"

    local before git_before nested_before status_before log_before head_before index_before
    # git status may rewrite the index (fresher stat data): before the fingerprints are taken.
    status_before=$(g "$WS" status --porcelain --ignored)
    log_before=$(g "$WS" log --format='%H %s' --all)
    before=$(ws_state "$WS")
    git_before=$(git_sum "$WS")
    nested_before=$(git_sum "$WS/vendor/lib")

    OPTS=(--checkpoint)
    sandbox /bin/sh -c 'rm -rf .git ./* ./.[!.]* 2>/dev/null; echo junk > new-file; true'
    expect_eq "$RC" 0 "the destructive run ($(last))"
    expect_match "$ERRS" "confine: checkpoint [0-9]{8}T[0-9]{6}Z saved \\([0-9]+ files" "the start-up line names the checkpoint"
    expect_match "$ERRS" "to undo the run: confine checkpoints restore -w $WS [0-9]{8}T[0-9]{6}Z" "the start-up line says how to restore"
    [[ ! -e $WS/.git/HEAD && ! -e $WS/untracked.txt && ! -e $WS/vendor/lib/n.txt && ! -e $WS/debug.log ]] ||
        fail "the run did not delete the files (the test proves nothing)"
    try host git -C "$WS" status
    [[ $RC != 0 ]] || fail "git status works after the run deleted .git (the test proves nothing)"

    try sb checkpoints restore latest -w "$WS"
    expect_eq "$RC" 0 "confine checkpoints restore latest ($(last))"
    expect_match "$ERRS" "^confine: restored checkpoint [0-9]{8}T[0-9]{6}Z into $WS\$" "what restore says"
    expect_eq "$(git_sum "$WS")" "$git_before" "every file under .git, byte for byte"
    expect_eq "$(git_sum "$WS/vendor/lib")" "$nested_before" "the nested repository's .git"
    expect_eq "$(ws_state "$WS")" "$before" "every name in the workspace (kind, mode, owner, size, time, content)"
    [[ ! -e $WS/new-file ]] || fail "a file the run made is still there after the restore"
    expect_eq "$(g "$WS" status --porcelain --ignored)" "$status_before" "git status after the restore"
    expect_eq "$(g "$WS" log --format='%H %s' --all)" "$log_before" "git log after the restore"

    try sb checkpoints list -w "$WS"
    expect_eq "$RC" 0 "confine checkpoints list ($(last))"
    expect_match "$OUT" $'\n  [0-9]{8}T[0-9]{6}Z  [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC  [0-9.]+ [KMG]?i?B in [0-9]+ files, ' "the checkpoint is listed, with its time and size"
    try sb checkpoints -w "$WS"
    expect_match "$OUT" $'\n  [0-9]{8}T[0-9]{6}Z  [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC  [0-9.]+ [KMG]?i?B in [0-9]+ files, ' "plain \`confine checkpoints\` lists them too"

    # The checkpoint alone does not move HEAD or change the index.
    head_before=$(g "$WS" rev-parse HEAD)
    index_before=$(sha256sum <"$WS/.git/index")
    sandbox /bin/true
    expect_eq "$RC" 0 "a run with --checkpoint ($(last))"
    expect_eq "$(g "$WS" rev-parse HEAD)" "$head_before" "HEAD after a checkpoint"
    expect_eq "$(sha256sum <"$WS/.git/index")" "$index_before" "the index after a checkpoint"
}
run_variants scenario
