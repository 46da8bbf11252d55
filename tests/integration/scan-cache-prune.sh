#!/usr/bin/env bash
# scan-cache-prune: the workspace scan cache stays bounded. Runs on many temporary workspaces (a CI runner's day)
# leave one cache file each; when a run writes its own, files older than 30 days go, then the least recently
# written beyond 64 files, and at once those of directories that are gone. Nothing else in the directory is touched (a pending git check's record, a file that
# is not a cache's, a link), and the file of the run itself stays.
source "$(dirname "$0")/lib.sh"

scenario() {
    local dir=$XDG/confine/scan i
    sandbox /bin/true
    expect_eq "$RC" 0 "a first run makes the cache ($(last))"
    # 100 caches of workspaces gone: 20 written 40 days ago, 80 over the last hour.
    for ((i = 0; i < 100; i++)); do
        printf 'old\n' >"$dir/$(printf '%016x' $((0xabc0000 + i)))"
    done
    for ((i = 0; i < 20; i++)); do touch -d '40 days ago' "$dir/$(printf '%016x' $((0xabc0000 + i)))"; done
    for ((i = 20; i < 100; i++)); do touch -d "$((100 - i)) minutes ago" "$dir/$(printf '%016x' $((0xabc0000 + i)))"; done
    echo keep >"$dir/pending-git-check.keep"
    echo keep >"$dir/notes.txt"
    ln -s /etc/passwd "$dir/00000000000000ff"
    touch -d '2 hours ago' "$dir/00000000000000aa.tmp.99999"
    chown -h "$VUID:$VGID" "$dir"/*
    # A run on another workspace writes its cache, and prunes.
    local ws2=$V/ws2
    mkdir -m 0755 "$ws2"
    chown "$VUID:$VGID" "$ws2"
    local first=$WS
    WS=$ws2 sandbox /bin/true
    expect_eq "$RC" 0 "the pruning run ($(last))"
    local caches
    caches=$(find "$dir" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{16}' | wc -l)
    expect_eq "$caches" 64 "cache files after pruning (64 at most)"
    for ((i = 0; i < 20; i++)); do
        [[ ! -e $dir/$(printf '%016x' $((0xabc0000 + i))) ]] || fail "a cache 40 days old stayed"
    done
    [[ -e $dir/$(printf '%016x' $((0xabc0000 + 99))) ]] || fail "the newest old cache went"
    [[ ! -e $dir/00000000000000aa.tmp.99999 ]] || fail "a killed run's temporary file stayed"
    expect_eq "$(cat "$dir/pending-git-check.keep" "$dir/notes.txt")" "keep"$'\n'"keep" "other files untouched"
    [[ -L $dir/00000000000000ff ]] || fail "a link in the cache directory was removed"
    expect_eq "$(head -c 4 /etc/passwd)" "root" "the link's target untouched"
    # The first workspace still runs (its cache among the newest, or made again).
    WS=$first
    sandbox /bin/true
    expect_eq "$RC" 0 "a run on the first workspace again ($(last))"
    # A workspace that is gone (a CI job's temporary one) takes its cache with it at the next prune, however
    # recent; the cache of one that still exists stays.
    local gone=$V/gone-ws fresh=$V/ws3 gone_cache first_cache
    mkdir -m 0755 "$gone" "$fresh"
    chown "$VUID:$VGID" "$gone" "$fresh"
    WS=$gone sandbox /bin/true
    expect_eq "$RC" 0 "a run on a workspace about to go ($(last))"
    # A cache's header names its directory with the path's length first: "LEN PATH" names no other.
    gone_cache=$(grep -l -a -F -- "${#gone} $gone" "$dir"/[0-9a-f]* | head -1)
    first_cache=$(grep -l -a -F -- "${#first} $first" "$dir"/[0-9a-f]* | head -1)
    [[ -n $gone_cache && -n $first_cache ]] || fail "the caches of the two workspaces were not found"
    rm -rf "$gone"
    WS=$fresh sandbox /bin/true
    expect_eq "$RC" 0 "a run that writes its cache, and prunes ($(last))"
    [[ ! -e $gone_cache ]] || fail "the cache of a workspace that is gone stayed ($gone_cache)"
    [[ -e $first_cache ]] || fail "the cache of a workspace that exists went ($first_cache)"
}

run_variants scenario
