#!/bin/sh
# bench.sh VARIANT: what cgroup limits add to confine's start-up, inside the VM (bench/cgroup-vm runs it).
# Interleaved whole-process runs (bench/spawnbench.c): bare /bin/true, confine, confine with --pids/--memory/--cpus
# (leaf made, limited, joined with CLONE_INTO_CGROUP, killed and removed). Prints "# bench:" lines and one ok line.
VARIANT=${1:?usage: bench.sh root|user}
ITERS=${BENCH_ITERS:-40}
if [ "$VARIANT" = root ]; then WS=/mnt/ext4/ws; else WS=/home/tester/ws; fi
T=$(mktemp -d)
/opt/tests/spawnbench "$ITERS" 5 "$T/runs.tsv" -- \
    bare /bin/true :: \
    confine /usr/bin/confine -w "$WS" -- /bin/true :: \
    limits /usr/bin/confine --pids 64 --memory 256m --cpus 1 -w "$WS" -- /bin/true
rc=$?
median() { awk -v l="$1" '$2 == l { print $3 }' "$T/runs.tsv" | sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] / 1e6 }'; }
bare=$(median bare)
plain=$(median confine)
limited=$(median limits)
added=$(awk -v a="$limited" -v b="$plain" 'BEGIN { printf "%.2f", a - b }')
ratio=$(awk -v a="$limited" -v b="$plain" 'BEGIN { printf "%.3f", a / b }')
echo "# bench: $VARIANT, $ITERS interleaved runs, medians (ms): bare /bin/true $bare, confine $plain, confine with limits $limited"
echo "# bench: $VARIANT: cgroup setup + teardown adds $added ms ($ratio x the plain start-up), under qemu TCG"
if [ $rc = 0 ]; then
    echo "ok - $VARIANT/bench: limits add $added ms to a $plain ms start-up (TCG-emulated)"
else
    echo "not ok - $VARIANT/bench: some runs failed (spawnbench exit $rc)"
fi
echo "# checks done: $VARIANT/bench"
