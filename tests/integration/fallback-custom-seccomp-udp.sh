#!/bin/bash
# fallback-custom-seccomp-udp: in fallback mode UDP egress is stopped by the built-in policy's fallback-udp
# rule.  With --seccomp FILE (a policy without that rule) confine must not claim the "no network" promise
# while UDP leaves the sandbox: either UDP is still refused (EACCES), or the report lists the network promise
# as lost (and, without --best-effort, confine refuses to run).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-layers.sh"

scenario() {
    local policy=$V/policy.toml report
    mkdir -m 0755 "$V/out"
    chown "$VUID:$VGID" "$V/out"
    report=$V/out/report.json
    cat >"$policy" <<'POLICY'
format = "confine-seccomp/1"
default = "allow"

[[rule]]
group = "test-getcwd"
why = "a custom policy that says nothing about sockets"
action = "errno:EACCES"
syscalls = ["getcwd"]
POLICY
    start_servers --udp 127.0.0.1
    host_probe udp-roundtrip 127.0.0.1 "$UDP_0_PORT"
    expect_eq "$OUT" OK "host control: UDP round trip ($(last))"
    # Control: the built-in policy refuses UDP in fallback mode.
    set_mode fallback
    expect_errno EACCES udp-roundtrip 127.0.0.1 "$UDP_0_PORT"

    set_mode fallback --seccomp "$policy" --report "$report"
    probe udp-roundtrip 127.0.0.1 "$UDP_0_PORT"
    local udp=$OUT lost_network
    [[ -s $report ]] || fail "--report $report was not written ($(last))"
    lost_network=$(json_eval "$(head -n 1 "$report")" 'any("network" in l for l in d["lost"])')
    echo "custom policy, fallback mode: UDP round trip -> $udp; network promise listed as lost: $lost_network"
    if [[ $udp != EACCES && $lost_network != True ]]; then
        fail "with --seccomp $policy in fallback mode a UDP datagram reached the host (probe: $udp), yet the report keeps the \"no network\" promise: $(<"$report")"
    fi
}
run_variants scenario
