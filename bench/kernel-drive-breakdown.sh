#!/usr/bin/env bash
# Where the kernel drive's daemon spends its CPU per I/O (root; fio, perf,
# strace).
#
# For each transport in $TRANSPORTS (fuse: /dev/fuse reads and writes;
# fuse-uring: FUSE over io_uring) attaches `ssdready emu attach $SPEC
# --transport=T`, fills it, and at each queue depth in $QDS runs real fio
# (4 KiB random reads, io_uring, direct) for $RUNTIME s while counting, for
# the daemon's threads alone and per I/O the daemon served:
#
#   * CPU (each thread's /proc/PID/task/TID/schedstat, field 1) and
#     wake-ups (field 3: times the thread was put on a CPU);
#   * system calls (perf stat -e raw_syscalls:sys_enter -p PID) and context
#     switches (perf's software counter);
#   * then, in a second run of $RUNTIME s under strace -c -f (which slows
#     the daemon: counts per I/O hold, times do not), the system calls by
#     name per I/O.
#
# Usage: sudo bench/kernel-drive-breakdown.sh  (SPEC=x25e,size=256m
#        QDS="1 32" RUNTIME=3 TRANSPORTS="fuse fuse-uring"; BIN=path)
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC=${SPEC:-x25e,size=256m}
QDS=${QDS:-"1 32"}
RUNTIME=${RUNTIME:-3}
TRANSPORTS=${TRANSPORTS:-"fuse fuse-uring"}
if [[ $(id -u) != 0 ]]; then
  echo "bench/kernel-drive-breakdown.sh: needs root" >&2
  exit 2
fi
for t in fio perf strace; do
  command -v $t > /dev/null || {
    echo "bench/kernel-drive-breakdown.sh: needs $t" >&2
    exit 2
  }
done
if [[ -n ${BIN:-} ]]; then
  B=$BIN
else
  cargo build --profile fast -q
  B=${CARGO_TARGET_DIR:-$PWD/target}/fast/ssdready
fi
tmp=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill -INT "$pid" 2> /dev/null && wait "$pid" 2> /dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
echo "== daemon cost breakdown: $SPEC; $(lscpu | grep 'Model name' | sed 's/  */ /g'), $(nproc) CPUs, Linux $(uname -r), $(date -u '+%F %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
threads() { # per thread of $pid: name cpu_ns runs
  for t in /proc/$pid/task/*; do
    echo "$(cat "$t/comm") $(cat "$t/schedstat")"
  done
}
ios() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['ios'])" "/run/ssdready/emu/emu-$pid.stats.json"; }
for tr in $TRANSPORTS; do
  rm -f "$tmp/dev"
  "$B" emu attach "$SPEC" --transport="$tr" > "$tmp/dev" 2> "$tmp/attach" &
  pid=$!
  for _ in $(seq 100); do [[ -s $tmp/dev ]] && break; sleep 0.1; done
  dev=$(head -1 "$tmp/dev")
  [[ -b $dev ]] || { cat "$tmp/attach" >&2; exit 1; }
  fio --name=fill --filename="$dev" --rw=write --bs=1m --iodepth=4 --ioengine=io_uring --direct=1 > /dev/null 2>&1
  for qd in $QDS; do
    job=(--name=r --filename="$dev" --rw=randread --bs=4k --iodepth="$qd" --ioengine=io_uring --direct=1
      --runtime="$RUNTIME" --time_based --output-format=json)
    sleep 0.3
    threads > "$tmp/t0"
    i0=$(ios)
    perf stat -x, -e raw_syscalls:sys_enter,context-switches -p "$pid" -o "$tmp/perf" -- \
      fio "${job[@]}" > "$tmp/fio" 2> /dev/null
    sleep 0.3
    threads > "$tmp/t1"
    i1=$(ios)
    strace -c -f -q -p "$pid" -o "$tmp/strace" &
    spid=$!
    sleep 0.5
    i2=$(ios)
    fio "${job[@]}" > /dev/null 2>&1
    i3=$(ios)
    kill -INT $spid
    wait $spid 2> /dev/null || true
    python3 - "$tr" "$qd" "$tmp" "$i0" "$i1" "$i2" "$i3" <<'PY'
import json, sys
tr, qd, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
i0, i1, i2, i3 = map(int, sys.argv[4:8])
n = max(i1 - i0, 1)
def threads(f):
    d = {}
    for line in open(f"{tmp}/{f}"):
        name, cpu, _wait, runs = line.split()
        d.setdefault(name, [0, 0])
        d[name][0] += int(cpu); d[name][1] += int(runs)
    return d
a, b = threads('t0'), threads('t1')
per = {k: ((b[k][0] - a.get(k, [0, 0])[0]) / n / 1e3, (b[k][1] - a.get(k, [0, 0])[1]) / n) for k in b}
perf = {}
for line in open(f"{tmp}/perf"):
    parts = line.strip().split(',')
    if len(parts) > 2 and parts[0].replace('.', '').isdigit():
        perf[parts[2]] = float(parts[0])
r = json.load(open(f"{tmp}/fio"))['jobs'][0]['read']
cpu = sum(v[0] for v in per.values())
wakes = sum(v[1] for v in per.values())
print(f"-- {tr}, QD {qd}: {n} I/Os, {r['iops']/1e3:.1f}K IOPS, mean {r['lat_ns']['mean']/1e3:.1f} µs")
print(f"   daemon CPU {cpu:.1f} µs per I/O, wake-ups {wakes:.2f} per I/O; "
      f"system calls {perf.get('raw_syscalls:sys_enter', 0) / n:.2f} per I/O, "
      f"context switches {perf.get('context-switches', 0) / n:.2f} per I/O")
for k, (c, w) in sorted(per.items(), key=lambda kv: -kv[1][0]):
    if c > 0.05:
        print(f"     thread {k}: {c:.1f} µs, {w:.2f} wake-ups per I/O")
m = max(i3 - i2, 1)
calls = []
for line in open(f"{tmp}/strace"):
    p = line.split()
    if len(p) >= 5 and p[0][0].isdigit() and p[-1] not in ('total',):
        calls.append((p[-1], int(p[3])))
print("   under strace: " + ", ".join(f"{name} {c / m:.2f}" for name, c in
      sorted(calls, key=lambda x: -x[1])[:6]) + " per I/O")
PY
  done
  kill -INT "$pid"
  wait "$pid" || true
  pid=
done
echo "   enable_uring after the detach: $(cat /sys/module/fuse/parameters/enable_uring 2> /dev/null || echo absent)"
