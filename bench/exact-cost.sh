#!/usr/bin/env bash
# What --profile=exact's bracketing costs in CPU, measured in a way a loaded
# machine does not drown (its IOPS do: bench/overhead.sh with EXACT=1 is the
# IOPS measure, for a quiet machine). Alternating runs of --profile and
# --profile=exact (psync QD 1, io_uring QD 1 and QD 32; 4 KiB random reads,
# loop device over /dev/shm, direct), each printing: IOPS; ssdready's own CPU
# per I/O (getrusage: its system calls pay for the programs on
# sys_enter/sys_exit and the slow system-call path they force); and, from
# the sampled profile, the CPU per I/O in the "tracing" layer (the BPF
# programs and the tracepoints' dispatch) and the "syscall" layer. The
# bracketing's cost per I/O is the exact run's tracing + syscall minus the
# sampled run's, against the I/O path's CPU (this process, kernel threads,
# interrupts and the block states: what one I/O costs the machine).
# Needs root and python3.
# Usage: ROUNDS=3 RUNTIME=2 bench/exact-cost.sh   (SSDREADY=PATH: that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-2}
if [ -n "${SSDREADY:-}" ]; then B=$SSDREADY; else
  cargo build --release -q
  B=$PWD/target/release/ssdready
fi
DEV=$("$B" ramdev create --kind=loop --size=1g 2>/dev/null)
trap '"$B" ramdev remove "$DEV" >/dev/null' EXIT
printf '%-12s %-8s %6s %9s %10s %9s %9s %10s\n' case mode load IOPS process tracing syscall "I/O path"
for ((r = 0; r < ROUNDS; r++)); do
  for c in "psync 1" "io_uring 1" "io_uring 32"; do
    set -- $c
    for mode in sampled exact; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      "$B" run --output-format=native --quiet --name=t --filename="$DEV" --rw=randread --bs=4k \
        --direct=1 --ioengine="$1" --iodepth="$2" --runtime="$RUNTIME" --time_based \
        --profile="$mode" | python3 -c "
import json, sys
r = json.load(sys.stdin); ph = r['phases'][0]; p = ph['profile']
lay = {l['layer']: l['ns_per_io'] for l in p['layers']}
iops = sum(d['iops'] for j in r['jobs'] for d in [j.get('read') or {}] if d)
proc = ph['cpu']['per_io']['process_ns']
path = float('nan')
e = p.get('exact')
if e:
    st = {s['state']: s['ns_per_io'] for s in e['states']}
    path = sum(st.get(k, 0) for k in ('user, this process', 'system calls, this process',
        'kernel threads', 'hardirq', 'softirq', 'block layer submission',
        'driver submission and return', 'block completion'))
print(f\"{'$1 QD $2':<12} {'$mode':<8} {'$load':>6} {iops:9.0f} {proc:10.0f} {lay.get('tracing', 0):9.0f} {lay.get('syscall', 0):9.0f} {path:10.0f}\")
"
    done
  done
done
