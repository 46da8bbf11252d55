#!/usr/bin/env python3
"""Turn the output of startup-phases.bt (one bpftrace session over several confine runs) into per-phase times.

    startup-phases.py TRACE.txt [TOP=25]

Each run's processes are P (confine itself), I (the sandbox's pid 1, a clone of P) and C (the command, forked by I).
Phases are cut at marker events; times are medians over the runs. The tracer adds a few microseconds to each
marker syscall and ~1 us to every other one, so compare phases, not the total, with untraced timings.
"""
import collections
import re
import statistics as st
import sys

names = {}
try:
    for line in open("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"):
        m = re.match(r"#define __NR_(\w+)\s+(\d+)", line)
        if m:
            names[int(m.group(2))] = m.group(1)
except OSError:
    pass

ev, cnt, dur, gdf, gdl, wq = [], {}, {}, {}, {}, collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r"@(cnt|dur)\[(\d+), (\d+)\]: (\d+)", line)
    if m:
        (cnt if m.group(1) == "cnt" else dur)[(int(m.group(2)), int(m.group(3)))] = int(m.group(4))
        continue
    m = re.match(r"@gd_(first|last)\[(\d+)\]: (\d+)", line)
    if m:
        (gdf if m.group(1) == "first" else gdl)[int(m.group(2))] = int(m.group(3))
        continue
    p = line.split()
    if len(p) >= 3 and p[0].isdigit():
        if p[2] == "WQ":
            wq[p[3]].append(int(p[4]) / 1e6)
        else:
            ev.append(p)
ev.sort(key=lambda p: int(p[0]))

runs, role, run_of = [], {}, {}
for p in ev:
    pid = int(p[1])
    if p[2] == "EXEC" and pid not in role:
        role[pid] = "P"
        run_of[pid] = len(runs)
        runs.append({"ev": []})
    elif p[2] == "FORK" and pid in role:
        child = int(p[3])
        role[child] = {"P": "I", "I": "C"}.get(role[pid], "?")
        run_of[child] = run_of[pid]
for p in ev:
    pid = int(p[1])
    if p[2] == "SIGCHLD_TO":
        pid, p = int(p[3]), [p[0], p[3], "SIGCHLD_GOT"]
    if pid in run_of:
        runs[run_of[pid]]["ev"].append((int(p[0]), role[pid], p[2], p[3:]))

PHASES = [
    ("exec -> getcwd", "P: process start: loader, libraries, static init, CLI parse"),
    ("getcwd -> clone", "P: resolve, secret scan, discover, plan"),
    ("clone", "P: clone() creating the namespaces"),
    ("clone -> sendmsg", "P: uid/gid maps, idmapped workspace tree, send 'go'"),
    ("recvmsg -> pivot_root", "I: set ids, build the mount tree"),
    ("pivot_root -> fork", "I: pivot, seal, hostname, lo up, close fds, drop caps"),
    ("fork -> exec", "C: fork of the command until its execve completes"),
    ("exec -> exit", "C: the command itself runs"),
    ("cmd exit -> pid1 exit", "I: pid 1 reaps the command and exits"),
    ("pid1 exit -> SIGCHLD", "kernel: pid 1's exit incl. namespace teardown"),
    ("SIGCHLD -> exit_group", "P: wakes, collects status, exits (destructors)"),
    ("TOTAL", "exec of confine -> its exit"),
]
res = collections.defaultdict(list)
scan = []
for r in runs:
    E = r["ev"]

    def first(rl, kind, nr=None, after=0):
        for t, ro, k, a in E:
            if t >= after and ro == rl and k == kind and (nr is None or (a and int(a[0]) == nr)):
                return t, a
        raise LookupError

    try:
        t0, _ = first("P", "EXEC")
        tgc, _ = first("P", "SYS", 79)
        try:
            tcl, a = first("P", "SYS", 56)
        except LookupError:
            tcl, a = first("P", "SYS", 435)
        tcl_end = tcl + int(a[1])
        tsm, _ = first("P", "SYS", 46, tcl)
        trm, a = first("I", "SYS", 47)
        trm_end = trm + int(a[1])
        tpv, _ = first("I", "SYS", 155)
        tfk, _ = first("I", "FORK")
        tex, _ = first("C", "EXEC")
        tcx, _ = first("C", "EXIT_GROUP")
        tix, _ = first("I", "EXIT_GROUP")
        tsig, _ = first("P", "SIGCHLD_GOT", None, tix)
        tpx, _ = first("P", "EXIT_GROUP")
        tpe, _ = first("P", "PROC_EXIT")
    except LookupError:
        continue
    vals = [tgc - t0, tcl - tgc, tcl_end - tcl, tsm - tcl_end, tpv - trm_end, tfk - tpv, tex - tfk, tcx - tex,
            tix - tcx, tsig - tix, tpx - tsig, tpe - t0]
    for (key, _), v in zip(PHASES, vals):
        res[key].append(v / 1e6)
    pids = [pid for pid, i in run_of.items() if runs[i] is r and role[pid] == "P"]
    if pids and pids[0] in gdf:
        scan.append((gdl[pids[0]] - gdf[pids[0]]) / 1e6)

n = len(res["TOTAL"])
print("runs analysed: %d of %d" % (n, len(runs)))
if n:
    print("  %-22s %-56s %8s %8s %8s" % ("phase", "what", "median", "min", "max"))
    for key, what in PHASES:
        v = res[key]
        print("  %-22s %-56s %6.2fms %6.2fms %6.2fms" % (key, what, st.median(v), min(v), max(v)))
if scan:
    print("  %-22s %-56s %6.2fms" % ("scan span", "P: first..last getdents64", st.median(scan)))

top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
agg = collections.defaultdict(lambda: [0, 0])
for (tid, nr), c in cnt.items():
    if tid in role:
        k = (role[tid], names.get(nr, str(nr)))
        agg[k][0] += c
        agg[k][1] += dur.get((tid, nr), 0)
runs_n = max(1, len(runs))
print("non-marker syscalls per run (time inside the kernel, tracer overhead excluded):")
for (rl, nm), (c, d) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:top]:
    print("  %s %-18s %8.1f calls %8.3f ms" % (rl, nm, c / runs_n, d / runs_n / 1e6))
if wq:
    print("deferred kernel work seen while tracing (work items > 0.1 ms; asynchronous, not on confine's critical path):")
    for fn, v in sorted(wq.items(), key=lambda kv: -sum(kv[1])):
        print("  %-28s %5d items  median %7.2f ms  total %8.2f ms" % (fn, len(v), st.median(v), sum(v)))
