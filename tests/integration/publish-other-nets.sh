#!/bin/bash
# publish-other-nets: --publish works the same with --net proxy and (run by root) --net veth: a server inside on
# 127.0.0.1:PORT is reached from the host through the published port, 1 MiB each way.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-publish.sh"

scenario() {
    cp "$TESTS_DIR/publish-peer.py" "$WS/peer.py"
    local nets=(proxy) net hp
    if [[ $VARIANT == root ]]; then nets+=(veth); fi
    for net in "${nets[@]}"; do
        rm -f "$WS/ready"
        hp=$(free_port)
        sb_bg -w "$WS" --net "$net" --publish "$hp:8000" -- /usr/bin/python3 "$WS/peer.py" serve 8000 "$WS/ready"
        wait_ready "$WS/ready"
        peer send 127.0.0.1 "$hp" $((1 << 20))
        expect_eq "$OUT" OK "--net $net: 1 MiB each way through 127.0.0.1:$hp ($(last))"
        wait "$BG_PID" && RC=0 || RC=$?
        expect_eq "$RC" 0 "--net $net: confine's exit code"
    done
}
run_variants scenario
