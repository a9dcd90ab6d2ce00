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
#        BIN=target/fast/ssdready bench/vs-fio.sh   # that build, none made
#        ROUNDS=5 RUNTIME=10 CASES="null-qd1 uring-qd32" bench/vs-fio.sh
#        bench/vs-fio.sh JOBFILE...       # both tools run the job files as given
#                                         # (IOPS summed over jobs and directions)
# Cases: null-qd1 null-qd32 uring-qd1 uring-qd32 psync-qd1 aio-qd32
#        posixaio-qd8 mmap-randread (a 256 MiB file in $TMPDIR, buffered:
#        fio's POSIX AIO and mmap engines; not in the default set)
# The loop-device cases need root; they make /dev/loopN over a /dev/shm file
# with direct I/O on and remove it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-5}
CASES=${CASES:-"null-qd1 null-qd32 uring-qd1 uring-qd32 psync-qd1 aio-qd32"}
command -v fio >/dev/null || { echo "vs-fio: fio is not installed (apt-get install fio)" >&2; exit 2; }
# BIN=path/to/ssdready compares that build (none is made); by default the
# release build, made first.
if [ -n "${BIN:-}" ]; then
  SSDREADY=$(realpath "$BIN")
else
  cargo build --release -q
  SSDREADY=$PWD/target/release/ssdready
fi

LOOP="" IMG="" FILE=""
cleanup() { [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null; [ -n "$IMG" ] && rm -f "$IMG"; [ -n "$FILE" ] && rm -f "$FILE"; true; }
trap cleanup EXIT
need_loop() {
  [ -n "$LOOP" ] && return 0
  if [ "$(id -u)" != 0 ]; then echo "vs-fio: loop-device cases need root" >&2; return 1; fi
  IMG=/dev/shm/ssdready-vs-fio.img
  truncate -s 1G "$IMG"
  dd if=/dev/urandom of="$IMG" bs=1M count=1024 conv=notrunc status=none
  LOOP=$(losetup --direct-io=on -f --show "$IMG")
}

need_file() {
  [ -n "$FILE" ] && return 0
  FILE=$(mktemp "${TMPDIR:-/tmp}/ssdready-vs-fio.XXXXXX")
  dd if=/dev/urandom of="$FILE" bs=1M count=256 status=none
}

# case → the options both tools get
opts() {
  case "$1" in
    null-qd1)   echo "--ioengine=null --size=1g --rw=randread --bs=4k --iodepth=1" ;;
    null-qd32)  echo "--ioengine=null --size=1g --rw=randread --bs=4k --iodepth=32" ;;
    uring-qd1)  echo "--ioengine=io_uring --filename=$LOOP --direct=1 --rw=randread --bs=4k --iodepth=1" ;;
    uring-qd32) echo "--ioengine=io_uring --filename=$LOOP --direct=1 --rw=randread --bs=4k --iodepth=32" ;;
    psync-qd1)  echo "--ioengine=psync --filename=$LOOP --direct=1 --rw=randread --bs=4k --iodepth=1" ;;
    aio-qd32)   echo "--ioengine=libaio --filename=$LOOP --direct=1 --rw=randread --bs=4k --iodepth=32" ;;
    posixaio-qd8)  echo "--ioengine=posixaio --filename=$FILE --size=256m --rw=randread --bs=4k --iodepth=8" ;;
    mmap-randread) echo "--ioengine=mmap --filename=$FILE --size=256m --rw=randread --bs=4k" ;;
    *) echo "vs-fio: unknown case '$1'" >&2; exit 2 ;;
  esac
}

# measure TOOL ARGS… → prints "iops cpu_ns_per_io" (both tools write fio's JSON layout)
measure() {
  python3 - "$@" <<'PY'
import json, os, subprocess, sys
def busy():
    v = list(map(int, open('/proc/stat').readline().split()[1:9]))
    return v[0]+v[1]+v[2]+v[5]+v[6]+v[7]
hz = os.sysconf('SC_CLK_TCK')
b0 = busy()
out = subprocess.run(sys.argv[1:], capture_output=True, text=True)
b1 = busy()
if out.returncode != 0:
    sys.exit(f"{sys.argv[1]} failed: {out.stderr.strip()}")
j = json.loads(out.stdout[out.stdout.index('{'):])
ios = iops = 0
for job in j['jobs']:
    for d in ('read', 'write', 'trim'):
        ios += job[d]['total_ios']; iops += job[d]['iops']
print(iops, (b1 - b0) * 1e9 / hz / max(ios, 1))
PY
}

# compare LABEL FIO_ARGS -- SSDREADY_ARGS: alternate, print one row
compare() {
  local label=$1; shift
  local fa=() sa=() side=f
  for a in "$@"; do
    if [ "$a" = -- ]; then side=s; continue; fi
    if [ $side = f ]; then fa+=("$a"); else sa+=("$a"); fi
  done
  local fi=() fc=() si=() sc=() i cpu
  for ((r = 0; r < ROUNDS; r++)); do
    read -r i cpu < <(measure fio "${fa[@]}" --output-format=json); fi+=("$i"); fc+=("$cpu")
    read -r i cpu < <(measure "$SSDREADY" run --no-decompose "${sa[@]}" --output-format=json --quiet); si+=("$i"); sc+=("$cpu")
  done
  python3 - "$label" "${fi[*]}" "${si[*]}" "${fc[*]}" "${sc[*]}" <<'PY'
import sys, statistics as st
c = sys.argv[1]
fi, si, fc, sc = (list(map(float, a.split())) for a in sys.argv[2:6])
m = st.median
def ns(v): return f"{v/1000:.2f} us" if v >= 1000 else f"{v:.0f} ns"
print(f"{c:<11} {m(fi):12.0f} {m(si):12.0f} {m(si)/m(fi):8.2f} {ns(m(fc)):>14} {ns(m(sc)):>14} {m(sc)/m(fc):8.2f}")
PY
}

printf '%-11s %12s %12s %8s %14s %14s %8s\n' case fio_IOPS ssdr_IOPS ratio fio_cpu/io ssdr_cpu/io ratio
if [ $# -gt 0 ]; then
  for f in "$@"; do
    [ -f "$f" ] || { echo "vs-fio: no such job file: $f" >&2; exit 2; }
  done
  compare "$(basename "$1")" "$@" -- "$@"
else
  for c in $CASES; do
    case "$c" in uring-*|psync-*|aio-*) need_loop || continue ;; posixaio-*|mmap-*) need_file ;; esac
    o=$(opts "$c")
    # shellcheck disable=SC2086
    compare "$c" --name=bench $o --runtime="$RUNTIME" --time_based -- --name=bench $o --runtime="$RUNTIME" --time_based
  done
fi
echo "(medians of $ROUNDS alternating rounds; IOPS ratio > 1 and CPU ratio < 1 favour ssdready)"
