#!/bin/bash
# fallback-private-home: in fallback mode (no namespaces) the command gets a $HOME and a $TMPDIR of its own,
# made by confine under /tmp: 0700, owned by the user the command runs as, writable, and gone after the run.
# The removal never follows a link the command planted there: the host file and directory such links point at
# survive unchanged. git works in the workspace (as root, whose real home Landlock denies, it used to fail).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"
fallback_base
command -v git >/dev/null || skip "git is not installed"

scenario() {
    fallback_layout
    set_mode fallback
    local base=$FB_BASE/$VARIANT victims before dir i
    # What the planted links point at: host files the variant's user may change, outside the workspace.
    victims=$base/victims
    mkdir -m 0755 "$victims" "$victims/dir"
    echo keep >"$victims/file"
    echo keep >"$victims/dir/inner"
    chown -R "$VUID:$VGID" "$victims"
    before=$(tree_sum "$victims")

    # The command writes in both, plants links to the victims (and to /), makes a subdirectory unreadable, then
    # waits until the host has looked at its directories.
    local inside='set -e
        echo "$HOME" >"$WS/.home"; echo "$TMPDIR" >"$WS/.tmpdir"
        echo mine >"$HOME/f"; echo mine >"$TMPDIR/f"; mkdir "$HOME/.config"
        ln -s "$1/file" "$HOME/file-link"; ln -s "$1/dir" "$HOME/dir-link"; ln -s "$1/dir" "$TMPDIR/dir-link"
        mkdir -p "$HOME/a/b"; ln -s / "$HOME/a/b/root"; ln "$1/file" "$TMPDIR/hard" 2>/dev/null || true
        chmod 0 "$HOME/a"
        while [ ! -e "$WS/.go" ]; do sleep 0.05; done'
    rm -f "$WS/.home" "$WS/.tmpdir" "$WS/.go"
    sb_bg -w "$WS" "${OPTS[@]}" -- env WS="$WS" sh -c "$inside" sh "$victims"
    local pid=$BG_PID
    for ((i = 0; i < 400; i++)); do
        [[ -s $WS/.tmpdir ]] && break
        sleep 0.05
    done
    [[ -s $WS/.tmpdir ]] || fail "the command never wrote its \$TMPDIR"
    local home tmp
    home=$(<"$WS/.home")
    tmp=$(<"$WS/.tmpdir")
    dir=${home%/home}
    expect_match "$home" '^/tmp/confine-[A-Za-z0-9]{6}/home$' "\$HOME inside"
    expect_eq "$tmp" "$dir/tmp" "\$TMPDIR inside"
    # Judged on the host, during the run: new directories, the command's own user's, nobody else's.
    expect_eq "$(stat -c '%a %u' "$home" "$tmp")" "700 $VUID"$'\n'"700 $VUID" "mode and owner of \$HOME and \$TMPDIR"
    expect_eq "$(stat -c '%a %u' "$dir")" "700 $VUID" "mode and owner of the run's directory"
    expect_eq "$(cat "$home/f" "$tmp/f")" $'mine\nmine' "files the command wrote there"
    touch "$WS/.go"
    wait "$pid" && RC=0 || RC=$?
    expect_eq "$RC" 0 "the command's exit status"
    # After the run: gone, and nothing the links pointed at was touched.
    [[ ! -e $dir && ! -L $dir ]] || fail "the run's directory $dir is still there after the run: $(ls -laR "$dir" 2>&1)"
    expect_eq "$(tree_sum "$victims")" "$before" "the host files the planted links pointed at"

    # Root switching to --user's uid: the directories are that user's, and the run's directory only lets it pass.
    if [[ $VARIANT == root ]]; then
        local saved=("${OPTS[@]}")
        OPTS+=(--user "$UNPRIV_UID:$UNPRIV_GID")
        sandbox sh -c 'touch "$HOME/x" "$TMPDIR/x" && stat -c "%a %u" "${HOME%/home}" "$HOME" "$TMPDIR"'
        OPTS=("${saved[@]}")
        expect_eq "$RC:$OUT" "0:711 0"$'\n'"700 $UNPRIV_UID"$'\n'"700 $UNPRIV_UID" "with --user ($(last))"
    fi

    # Nothing else of the host's /tmp, /var/tmp or /dev/shm is writable (the variant's user may write there on
    # the host: the control).
    local name=confine-it-shared-$VARIANT-$$
    for dir in /tmp /var/tmp /dev/shm; do
        [[ -d $dir ]] || continue
        host_probe write "$dir/$name"
        expect_eq "$OUT" OK "host control: write $dir/$name ($(last))"
        rm -f "$dir/$name"
        expect_errno EACCES write "$dir/$name"
        [[ ! -e $dir/$name ]] || fail "$dir/$name was created from the sandbox"
    done

    # git: a repository in the workspace, status and commit, with no access to the real home.
    host git init -q "$WS"
    sandbox sh -c 'git status --short >/dev/null && echo x >tracked && git add tracked &&
        git -c user.name=t -c user.email=t@localhost commit -qm one && git log --format=%s'
    expect_eq "$RC:$OUT" "0:one" "git status and commit in fallback mode ($(last))"
    expect_eq "$(host git -C "$WS" log --format=%s)" one "the commit, seen on the host"
}
run_variants scenario
