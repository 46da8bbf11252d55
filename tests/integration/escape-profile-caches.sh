#!/bin/bash
# escape-profile-caches: under the build-tool profiles (cargo, npm, pip, go) the sandbox rewrites what the host's
# own builds would run from their caches — a crate's build.rs in ~/.cargo/registry and ~/.cargo/git, a package npx
# runs from ~/.npm, a wheel in ~/.cache/pip, a module in ~/go/pkg/mod and an entry of the go build cache — and
# deletes the rest. After the run the host's caches are exactly what they were: the sandbox only ever saw its own,
# kept by confine (created 0700 for the caller) and found again by the next run. A private cache that has been
# turned into a symlink to another directory is refused, not followed.
. "$(dirname "$0")/lib.sh"

# seed PATH...: a host cache file holding a harmless build script.
seed() {
    local f
    for f in "$@"; do
        mkdir -p "$(dirname "$f")"
        echo 'fn main() {}' >"$f"
    done
}

fingerprint() { tree_sum "$1"; }

# poison PROFILE HOST-FILE...: inside, under PROFILE, each host cache file must be absent (the cache is the
# sandbox's own); rewrite it with a payload and wipe the rest of its directory tree.
poison() {
    local profile=$1
    shift
    OPTS=(--profile "$profile")
    # shellcheck disable=SC2016
    sandbox /bin/sh -c '
        for f in "$@"; do
            if [ -e "$f" ]; then echo "visible: $f"; fi
            mkdir -p "$(dirname "$f")" && echo "fn main() { std::process::Command::new(\"sh\").arg(\"-c\").arg(\"id > /tmp/pwned\").status().unwrap(); }" >"$f" || echo "cannot write: $f"
        done' sh "$@"
    POISONED=$(last)
}

# The private cache of PROFILE for HOME-RELATIVE path, where the sandbox's writes went.
store() { echo "$XDG/confine/private/$1/$2"; }

check_profile() {
    local profile=$1 rel=$2 file=$3
    local before
    before=$(fingerprint "$H/$rel")
    poison "$profile" "$H/$rel/$file"
    expect_eq "$(fingerprint "$H/$rel")" "$before" "the host's ~/$rel after a run under --profile $profile"
    expect_eq "$POISONED" "rc=0 stdout='' stderr=''" \
        "under --profile $profile the host's cache is not visible inside, the sandbox's own is writable"
    local kept
    kept=$(store "$profile" "$rel")
    expect_eq "$(stat -c '%u %a' "$kept" 2>/dev/null)" "$VUID 700" "--profile $profile keeps its own ~/$rel, the user's, 0700"
    grep -q 'id > /tmp/pwned' "$kept/$file" || fail "the sandbox's write did not go to its own cache $kept"
    # The next run finds its own cache again: the cache works as one.
    sandbox /bin/sh -c 'grep -c pwned "$1"' sh "$H/$rel/$file"
    expect_eq "$RC:$OUT" 0:1 "a second run under --profile $profile sees its own cache ($(last))"
}

scenario() {
    seed "$H/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cc-1.0.0/build.rs" \
        "$H/.cargo/git/checkouts/dep-0123/abcdef/build.rs" \
        "$H/.npm/_npx/0123abcd/node_modules/tool/index.js" "$H/.npm/_cacache/index-v5/00/11/entry" \
        "$H/.cache/pip/wheels/ab/cd/pkg-1.0-py3-none-any.whl" \
        "$H/go/pkg/mod/example.com/mod@v1.0.0/gen.go" "$H/.cache/go-build/00/0011-d"
    mkdir -p "$H/.cargo/bin"
    echo '[build]' >"$H/.cargo/config.toml"
    [[ $SUITE_UID != 0 ]] || chown -R "$VUID:$VGID" "$H"

    check_profile cargo .cargo/registry src/index.crates.io-1949cf8c6b5b557f/cc-1.0.0/build.rs
    check_profile cargo .cargo/git checkouts/dep-0123/abcdef/build.rs
    check_profile npm .npm _npx/0123abcd/node_modules/tool/index.js
    check_profile pip .cache/pip wheels/ab/cd/pkg-1.0-py3-none-any.whl
    check_profile go go/pkg/mod example.com/mod@v1.0.0/gen.go
    check_profile go .cache/go-build 00/0011-d

    # cargo's configuration (it can name a rustc wrapper or a credential helper) is the host's, read-only.
    OPTS=(--profile cargo)
    sandbox /bin/sh -c 'cat "$HOME/.cargo/config.toml"; echo "rustc-wrapper = \"/tmp/x\"" >>"$HOME/.cargo/config.toml"'
    expect_eq "$OUT" '[build]' "cargo's config is visible but read-only inside ($(last))"
    expect_eq "$(cat "$H/.cargo/config.toml")" '[build]' "the host's cargo config after the run"

    # A private cache replaced by a symlink (to the user's ~/.ssh, say) is refused, never bound.
    local kept
    kept=$(store npm .npm)
    rm -rf "$kept"
    ln -s "$H/.ssh" "$kept"
    OPTS=(--profile npm)
    sandbox /bin/sh -c 'ls "$HOME/.npm"'
    expect_eq "$RC" 125 "a symlinked private cache is refused ($(last))"
    expect_match "$ERRS" "leads out of" "the error says why ($(last))"
    expect_no_match "$OUT" id_rsa "~/.ssh was not bound in ($(last))"
}
run_variants scenario
