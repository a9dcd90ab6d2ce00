#!/usr/bin/env bash
# Side-by-side benchmark of ssdready against fio: same target, same options,
# runs alternating (fio, ssdready, fio, ssdready, …) so that a noisy shared
# machine hurts both alike. Prints, per case, the median IOPS and whole-system
# CPU per I/O of each tool and the ratios ssdready/fio.
#
# Whole-system CPU is measured the same way for both tools, outside them:
# /proc/stat busy ticks (user+nice+system+irq+softirq+steal) over the run,
# divided by the I/Os the tool reports. (ssdready also reports it itself.)
#
# Usage: sudo bench/vs-fio.sh            # all cases, 3 rounds of 5 s
#        ROUNDS=5 RUNTIME=10 CASES="null-qd1 uring-qd32" bench/vs-fio.sh
# Cases: null-qd1 null-qd32 uring-qd1 uring-qd32 psync-qd1
# The loop-device cases need root; they make /dev/loopN over a /dev/shm file
# with direct I/O on and remove it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-5}
CASES=${CASES:-"null-qd1 null-qd32 uring-qd1 uring-qd32 psync-qd1"}
command -v fio >/dev/null || { echo "vs-fio: fio is not installed (apt-get install fio)" >&2; exit 2; }
cargo build --release -q
SSDREADY=$PWD/target/release/ssdready

LOOP="" IMG=""
cleanup() { [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null; [ -n "$IMG" ] && rm -f "$IMG"; true; }
trap cleanup EXIT
need_loop() {
  [ -n "$LOOP" ] && return 0
  if [ "$(id -u)" != 0 ]; then echo "vs-fio: loop-device cases need root" >&2; return 1; fi
  IMG=/dev/shm/ssdready-vs-fio.img
  truncate -s 1G "$IMG"
  dd if=/dev/urandom of="$IMG" bs=1M count=1024 conv=notrunc status=none
  LOOP=$(losetup --direct-io=on -f --show "$IMG")
}

# case → the options both tools get
opts() {
  case "$1" in
    null-qd1)   echo "--ioengine=null --size=1g --rw=randread --bs=4k --iodepth=1" ;;
    null-qd32)  echo "--ioengine=null --size=1g --rw=randread --bs=4k --iodepth=32" ;;
    uring-qd1)  echo "--ioengine=io_uring --filename=$LOOP --direct=1 --rw=randread --bs=4k --iodepth=1" ;;
    uring-qd32) echo "--ioengine=io_uring --filename=$LOOP --direct=1 --rw=randread --bs=4k --iodepth=32" ;;
    psync-qd1)  echo "--ioengine=psync --filename=$LOOP --direct=1 --rw=randread --bs=4k --iodepth=1" ;;
    *) echo "vs-fio: unknown case '$1'" >&2; exit 2 ;;
  esac
}

# measure TOOL OPTS… → prints "iops cpu_ns_per_io"
measure() {
  python3 - "$@" <<'PY'
import json, subprocess, sys
def busy():
    f = open('/proc/stat').readline().split()[1:9]
    v = list(map(int, f))
    return v[0]+v[1]+v[2]+v[5]+v[6]+v[7]
import os
hz = os.sysconf('SC_CLK_TCK')
tool, args = sys.argv[1], sys.argv[2:]
b0 = busy()
out = subprocess.run([tool] + args, capture_output=True, text=True)
b1 = busy()
if out.returncode != 0:
    sys.exit(f"{tool} failed: {out.stderr.strip()}")
j = json.loads(out.stdout[out.stdout.index('{'):])
job = j['jobs'][0]
if 'spec' in job:   # ssdready's native JSON
    ios = job['read']['ios']; iops = job['read']['iops']
else:               # fio
    ios = job['read']['total_ios']; iops = job['read']['iops']
print(iops, (b1 - b0) * 1e9 / hz / max(ios, 1))
PY
}

printf '%-11s %12s %12s %8s %14s %14s %8s\n' case fio_IOPS ssdr_IOPS ratio fio_cpu/io ssdr_cpu/io ratio
for c in $CASES; do
  case "$c" in uring-*|psync-*) need_loop || continue ;; esac
  o=$(opts "$c")
  common="--name=bench $o --runtime=$RUNTIME --time_based"
  fi=() fc=() si=() sc=()
  for ((r = 0; r < ROUNDS; r++)); do
    read -r i cpu < <(measure fio $common --output-format=json); fi+=("$i"); fc+=("$cpu")
    read -r i cpu < <(measure "$SSDREADY" run $common --output-format=native --quiet); si+=("$i"); sc+=("$cpu")
  done
  python3 - "$c" "${fi[*]}" "${si[*]}" "${fc[*]}" "${sc[*]}" <<'PY'
import sys, statistics as st
c = sys.argv[1]
fi, si, fc, sc = (list(map(float, a.split())) for a in sys.argv[2:6])
m = st.median
def ns(v): return f"{v/1000:.2f} us" if v >= 1000 else f"{v:.0f} ns"
print(f"{c:<11} {m(fi):12.0f} {m(si):12.0f} {m(si)/m(fi):8.2f} {ns(m(fc)):>14} {ns(m(sc)):>14} {m(sc)/m(fc):8.2f}")
PY
done
echo "(medians of $ROUNDS alternating rounds of ${RUNTIME}s; IOPS ratio > 1 and CPU ratio < 1 favour ssdready)"
