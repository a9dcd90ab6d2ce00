#!/usr/bin/env bash
# The sampled profile, the tracepoint-bracketed one (--profile=exact) and the
# whole-system figure from /proc/stat, busy CPU per I/O, side by side: psync
# QD 1, io_uring QD 1 and io_uring QD 32 (4 KiB random reads, loop device
# over /dev/shm, direct), ROUNDS runs each, with the load average of each run.
# Take it on a quiet machine (load < 0.5): that is where the sampler falls
# short on an AMD KVM guest. Needs root and python3.
# Usage: ROUNDS=3 RUNTIME=3 bench/exact-vs-sampled.sh   (SSDREADY=PATH: that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-3}
if [ -n "${SSDREADY:-}" ]; then B=$SSDREADY; else
  cargo build --release -q
  B=$PWD/target/release/ssdready
fi
DEV=$("$B" ramdev create --kind=loop --size=1g 2>/dev/null)
trap '"$B" ramdev remove "$DEV" >/dev/null' EXIT
printf '%-14s %6s %10s %10s %10s %8s %8s %s\n' case load system sampled exact s/sys e/sys "exact states (ns/IO)"
for ((r = 0; r < ROUNDS; r++)); do
  for c in "psync 1" "io_uring 1" "io_uring 32"; do
    set -- $c
    load=$(cut -d' ' -f1 /proc/loadavg)
    "$B" run --output-format=native --quiet --name=t --filename="$DEV" --rw=randread --bs=4k \
      --direct=1 --ioengine="$1" --iodepth="$2" --runtime="$RUNTIME" --time_based \
      --profile=exact | python3 -c "
import json, sys
r = json.load(sys.stdin); ph = r['phases'][0]; p = ph['profile']; e = p.get('exact') or {}
s = ph['cpu']['per_io']['system_ns']; sp = p['busy_ns_per_io']; ex = e.get('busy_ns_per_io', float('nan'))
st = ', '.join(f\"{x['state']} {x['ns_per_io']:.0f}\" for x in e.get('states', []) if x['cpu_ns'])
print(f'{\"$1 QD $2\":<14} {\"$load\":>6} {s:10.0f} {sp:10.0f} {ex:10.0f} {sp/s:8.3f} {ex/s:8.3f} {st}')
"
  done
done
