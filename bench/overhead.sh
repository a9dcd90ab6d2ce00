#!/usr/bin/env bash
# What ssdready's own measurements cost: IOPS plain, with --profile (10 kHz
# system-wide sampling) and with --decompose (eBPF on the block tracepoints)
# on a loop device over /dev/shm at QD 32, runs alternating. Needs root.
# (--decompose is on by default for root on block devices; "plain" turns it off.)
# Usage: ROUNDS=5 RUNTIME=5 bench/overhead.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-5}
cargo build --release -q
B=$PWD/target/release/ssdready
DEV=$("$B" ramdev create --kind=loop --size=1g 2>/dev/null)
trap '"$B" ramdev remove "$DEV" >/dev/null' EXIT
iops() {
  "$B" run --quiet --output-format=native --filename="$DEV" --rw=randread --bs=4k --ioengine=io_uring \
    --direct=1 --iodepth=32 --runtime="$RUNTIME" --time_based "$@" |
    python3 -c "import json,sys; print(json.load(sys.stdin)['jobs'][0]['read']['iops'])"
}
plain=() prof=() prof1=() deco=() empty=()
for ((r = 0; r < ROUNDS; r++)); do
  plain+=("$(iops --no-decompose)")
  prof+=("$(iops --profile --no-decompose)")
  # A call chain on every sample rather than one in 8.
  prof1+=("$(SSDREADY_PROFILE_CHAIN_EVERY=1 iops --profile --no-decompose)")
  deco+=("$(iops --decompose)")
  # The floor: the same tracepoints with programs that return at once.
  empty+=("$(SSDREADY_BPF_EMPTY=1 iops --decompose)")
done
python3 - "${plain[*]}" "${prof[*]}" "${deco[*]}" "${empty[*]}" "${prof1[*]}" <<'PY'
import sys, statistics as st
a, b, c, d, e = (list(map(float, x.split())) for x in sys.argv[1:6])
m = st.median
print(f"plain:       median {m(a):.0f} IOPS")
print(f"--profile:   median {m(b):.0f} IOPS, cost {100*(1-m(b)/m(a)):.1f}%")
print(f"  with a call chain on every sample: median {m(e):.0f} IOPS, cost {100*(1-m(e)/m(a)):.1f}%")
print(f"--decompose: median {m(c):.0f} IOPS, cost {100*(1-m(c)/m(a)):.1f}%")
print(f"  floor, empty eBPF programs on the same tracepoints: median {m(d):.0f} IOPS, cost {100*(1-m(d)/m(a)):.1f}%")
PY
