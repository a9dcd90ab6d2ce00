#!/usr/bin/env bash
# The drive behind the kernel against the platform it measures (root).
#
# Attaches `ssdready emu attach $SPEC` (FUSE + loop) and, beside it, a loop
# device over a /dev/shm file of the same size (the same kernel path less
# FUSE and the daemon: the cheapest block device this kernel has). Both are
# written whole first; then real fio (4 KiB random reads, io_uring, direct)
# at each queue depth in $QDS on each, in one run, and prints per depth:
#
#   * IOPS and latency (mean, min) on the drive, on the shm loop, and the
#     model's own (`emu simulate`, virtual time, same fill): the drive's
#     IOPS over the model's, and whether any read beat the model's minimum;
#   * the daemon's CPU per I/O, from /proc/PID/stat (utime + stime, every
#     thread) and from its own statistics (its serving threads' schedstat);
#   * the daemon's lateness behind the model, per I/O and as a share of the
#     device time (goal ≤ 3 %), and its reply's system call;
#   * fio's own CPU per I/O on each device, and the whole machine's busy
#     CPU per I/O (/proc/stat; other work on the machine counts in it);
#   * the ratio of the daemon's CPU to fio's on the shm loop.
#
# Before the depths, a verified write pass (crc32c) on the drive; after
# them, the detach. Then the transport alone: a zero-time drive
# (`emu attach null`, the model answers at once) over the same FUSE + loop
# path at QD 1 and 32, its latency and the daemon's CPU per I/O beside the
# shm loop's: what the transport itself costs. Last, a check that no loop
# device, FUSE mount or record is left, and what one bare 100 µs sleep
# costs this machine in CPU (the floor of a daemon that sleeps per I/O).
#
# Each transport in $TRANSPORTS (fuse: /dev/fuse reads and writes;
# fuse-uring: FUSE over io_uring, where the kernel has it) is measured in
# turn on the same spec, $ROUNDS times alternating, so that a change in the
# machine's load falls on both; each section names its transport. Over
# fuse-uring each arrival-hold share in $HOLDS (per cent of the mean device
# time, SSDREADY_EMU_HOLD; 0 wakes the daemon for each arrival) is measured
# in turn as well, and each depth prints the hold per I/O (part of the
# lateness) and the load average at its end.
#
# Usage: sudo bench/kernel-drive.sh   (SPEC=x25e,size=256m QDS="1 16 32"
#        RUNTIME=5 TRANSPORTS="fuse fuse-uring" HOLDS="0 2" ROUNDS=1 by default (the
#        transports the kernel lacks are left out, saying so); BIN=path
#        uses that binary instead of building; SSDREADY_EMU_THREADS=N
#        serves with N daemon threads)
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC=${SPEC:-x25e,size=256m}
QDS=${QDS:-"1 16 32"}
RUNTIME=${RUNTIME:-5}
ROUNDS=${ROUNDS:-1}
TRANSPORTS=${TRANSPORTS:-"fuse fuse-uring"}
HOLDS=${HOLDS:-"0 2"}
hold=
uring_was=$(cat /sys/module/fuse/parameters/enable_uring 2> /dev/null || echo absent)
if [[ $TRANSPORTS == *fuse-uring* && ! -e /sys/module/fuse/parameters/enable_uring ]]; then
  echo "bench/kernel-drive.sh: this kernel has no FUSE over io_uring (CONFIG_FUSE_IO_URING): fuse-uring left out" >&2
  TRANSPORTS=${TRANSPORTS//fuse-uring/}
fi
if [[ $(id -u) != 0 ]]; then
  echo "bench/kernel-drive.sh: needs root (emu attach mounts FUSE and binds loop devices)" >&2
  exit 2
fi
command -v fio > /dev/null || {
  echo "bench/kernel-drive.sh: needs fio (apt-get install fio)" >&2
  exit 2
}
if [[ -n ${BIN:-} ]]; then
  B=$BIN
else
  cargo build --profile fast -q
  B=${CARGO_TARGET_DIR:-$PWD/target}/fast/ssdready
fi
size=$(python3 -c "import sys,re; m=re.search(r'size=(\d+)([kmg]?)', sys.argv[1]); \
print(int(m.group(1)) * {'':1,'k':1<<10,'m':1<<20,'g':1<<30}[m.group(2)] if m else 1<<30)" "$SPEC")
tmp=$(mktemp -d)
shm=/dev/shm/ssdready-kernel-drive-bench.$$
pid= ldev=
cleanup() {
  [[ -n $pid ]] && kill -INT "$pid" 2> /dev/null && wait "$pid" 2> /dev/null || true
  [[ -n $ldev ]] && losetup -d "$ldev" 2> /dev/null || true
  rm -f "$shm"
  rm -rf "$tmp"
}
trap cleanup EXIT

pids=()
attach() { # start `emu attach $1 --transport=$2`: sets pid, dev, stats
  rm -f "$tmp/dev"
  env ${hold:+SSDREADY_EMU_HOLD=$hold} "$B" emu attach "$1" --transport="$2" > "$tmp/dev" 2> "$tmp/attach" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do [[ -s $tmp/dev ]] && break; sleep 0.1; done
  dev=$(head -1 "$tmp/dev")
  [[ -b $dev ]] || { cat "$tmp/attach" >&2; exit 1; }
  stats=/run/ssdready/emu/emu-$pid.stats.json
}
detach() {
  kill -INT "$pid"
  wait "$pid" || true
  pid=
  tail -1 "$tmp/attach" | sed 's/^ssdready: /   /'
}
truncate -s "$size" "$shm"
ldev=$(losetup -f --show --direct-io=on "$shm" 2> /dev/null || losetup -f --show "$shm")
shm_filled=
measure() { # the drive over transport $tr beside the shm loop
attach "$SPEC" "$tr"

echo "== kernel drive bench ($tr${hold:+, arrival hold $hold %}): $SPEC at $dev (daemon pid $pid) against loop over $shm at $ldev"
echo "   $(lscpu | grep 'Model name' | sed 's/  */ /g'), $(nproc) CPUs, Linux $(uname -r), $(date -u '+%F %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "   $(sed -n 1p "$tmp/attach" | sed 's/^ssdready: //')"

fio_json() { fio --output-format=json "$@" 2> /dev/null; }
base=(--ioengine=io_uring --direct=1)
fio_json --name=fill --filename="$dev" --rw=write --bs=1m --iodepth=4 "${base[@]}" --size="$size" > /dev/null
if [[ -z $shm_filled ]]; then
  fio_json --name=fill --filename="$ldev" --rw=write --bs=1m --iodepth=4 "${base[@]}" --size="$size" > /dev/null
  shm_filled=1
fi
fio_json --name=verify --filename="$dev" --rw=randwrite --bs=4k --iodepth=16 "${base[@]}" \
  --size=$((size < 67108864 ? size : 67108864)) --verify=crc32c --do_verify=1 > "$tmp/verify"
python3 - "$tmp/verify" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))['jobs'][0]
print(f"   verified write pass (crc32c, 4 KiB random, QD 16): {j['write']['total_ios']} writes, "
      f"{j['read']['total_ios']} verified reads, error {j['error']}")
PY

snap() { # what is counted around a run: system CPU ticks, daemon ticks, daemon stats
  echo "$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat) $(awk '{print $14+$15}' "/proc/$pid/stat")"
  sleep 0.25
  cat "$stats"
  echo
}
model() { # IOPS and mean/min latency of the model alone at QD $1 (virtual time)
  "$B" emu simulate --quiet --output-format=native --filename="emu:$SPEC" \
    --name=fill --rw=write --bs=1m --iodepth=4 \
    --name=r --stonewall --startdelay=1 --rw=randread --bs=4k --iodepth="$1" --number_ios=20000 |
    python3 -c "import json,sys; r=json.load(sys.stdin)['jobs'][1]['read']; \
print(r['iops'], r['lat']['mean_ns'], r['lat']['min_ns'])"
}
for qd in $QDS; do
  job=(--name=r --rw=randread --bs=4k --iodepth="$qd" "${base[@]}" --runtime="$RUNTIME" --time_based)
  snap > "$tmp/a"
  fio_json --filename="$dev" "${job[@]}" > "$tmp/drive"
  snap > "$tmp/b"
  s0=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat)
  fio_json --filename="$ldev" "${job[@]}" > "$tmp/loop"
  s1=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat)
  python3 - "$qd" "$tmp" "$s0" "$s1" "$(getconf CLK_TCK)" $(model "$qd") "$tr${hold:+, hold $hold %}" <<'PY'
import json, sys
qd, tmp, s0, s1, hz = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
m_iops, m_lat, m_min = map(float, sys.argv[6:9])
def load(name):
    lines = open(f"{tmp}/{name}").read().split('\n', 1)
    sys_t, d_t = map(int, lines[0].split())
    return sys_t, d_t, json.loads(lines[1])
(sa, da, a), (sb, db, b) = load('a'), load('b')
def fio(name):
    j = json.load(open(f"{tmp}/{name}"))['jobs'][0]
    r = j['read']
    secs = j['job_runtime'] / 1e3
    cpu = (j['usr_cpu'] + j['sys_cpu']) / 100 * secs
    return r['iops'], r['lat_ns']['mean'], r['lat_ns']['min'], cpu * 1e9 / max(r['total_ios'], 1), r['total_ios']
di, dl, dmin, dcpu, dn = fio('drive')
li, ll, lmin, lcpu, ln = fio('loop')
n = b['ios'] - a['ios']
mean = lambda k: (b[k] * b['ios'] - a[k] * a['ios']) / n
dev_t, late, reply = mean('device_ns_mean'), mean('late_ns_mean'), mean('reply_ns_mean')
held = mean('hold_ns_mean') if 'hold_ns_mean' in b else 0.0
loadavg = open('/proc/loadavg').read().split()[0]
proc = (db - da) * 1e9 / hz / n
own = (b['daemon_cpu_ns'] - a['daemon_cpu_ns']) / n
sys_d = (sb - sa) * 1e9 / hz / dn
sys_l = (s1 - s0) * 1e9 / hz / ln
us = lambda ns: f"{ns / 1e3:.1f}"
print(f"-- {sys.argv[9]}, QD {qd} (load {loadavg})")
print(f"   drive: {di/1e3:7.1f}K IOPS, mean {us(dl)} µs, min {us(dmin)} µs  | model: {m_iops/1e3:.1f}K IOPS, "
      f"mean {us(m_lat)} µs, min {us(m_min)} µs  | drive/model IOPS {di/m_iops:.3f}"
      f"{'  (a read beat the model minimum!)' if dmin < m_min else ''}")
print(f"   loop over /dev/shm: {li/1e3:.1f}K IOPS, mean {us(ll)} µs, min {us(lmin)} µs")
print(f"   daemon CPU per I/O: {us(proc)} µs (/proc/PID/stat), {us(own)} µs (its serving threads); "
      f"lateness {us(late)} µs (arrival hold {us(held)}) = {late / dev_t:.1%} of device time {us(dev_t)} µs; reply {us(reply)} µs")
print(f"   fio's CPU per I/O: {us(dcpu)} µs on the drive, {us(lcpu)} µs on the shm loop; "
      f"whole machine busy per I/O: {us(sys_d)} µs on the drive, {us(sys_l)} µs on the shm loop")
print(f"   ratios: daemon CPU / fio's CPU on the shm loop {proc / lcpu:.2f}; lateness / device time {late / dev_t:.3f}")
PY
done
detach

}
transport_alone() { # a zero-time drive over transport $tr
echo "-- the transport alone ($tr): a zero-time drive (emu attach null,size=$size) over the same path"
attach "null,size=$size" "$tr"
fio_json --name=fill --filename="$dev" --rw=write --bs=1m --iodepth=4 "${base[@]}" --size="$size" > /dev/null
for qd in 1 32; do
  job=(--name=r --rw=randread --bs=4k --iodepth="$qd" "${base[@]}" --runtime="$RUNTIME" --time_based)
  snap > "$tmp/a"
  fio_json --filename="$dev" "${job[@]}" > "$tmp/drive"
  snap > "$tmp/b"
  fio_json --filename="$ldev" "${job[@]}" > "$tmp/loop"
  python3 - "$qd" "$tmp" "$(getconf CLK_TCK)" "$tr" <<'PY'
import json, sys
qd, tmp, hz = sys.argv[1], sys.argv[2], int(sys.argv[3])
def load(name):
    lines = open(f"{tmp}/{name}").read().split('\n', 1)
    return int(lines[0].split()[1]), json.loads(lines[1])
(da, a), (db, b) = load('a'), load('b')
def fio(name):
    r = json.load(open(f"{tmp}/{name}"))['jobs'][0]['read']
    return r['iops'], r['lat_ns']['mean'], r['lat_ns']['min']
zi, zl, zmin = fio('drive')
li, ll, lmin = fio('loop')
n = b['ios'] - a['ios']
late = (b['late_ns_mean'] * b['ios'] - a['late_ns_mean'] * a['ios']) / n
us = lambda ns: f"{ns / 1e3:.1f}"
print(f"   {sys.argv[4]}, QD {qd}: zero-time drive {zi/1e3:.1f}K IOPS, mean {us(zl)} µs, min {us(zmin)} µs; shm loop {li/1e3:.1f}K IOPS, "
      f"mean {us(ll)} µs, min {us(lmin)} µs; the transport adds {us(zl - ll)} µs mean, {us(zmin - lmin)} µs min; "
      f"daemon CPU {us((db - da) * 1e9 / hz / n)} µs per I/O, lateness {us(late)} µs")
PY
done
detach
}
for round in $(seq "$ROUNDS"); do
  for tr in $TRANSPORTS; do
    for hold in $([[ $tr == fuse-uring ]] && echo "$HOLDS" || echo ""); do
      [[ $ROUNDS -gt 1 ]] && echo "== round $round"
      measure
    done
    if [[ $tr != fuse-uring ]]; then
      hold=
      [[ $ROUNDS -gt 1 ]] && echo "== round $round"
      measure
    fi
  done
done
hold=
for tr in $TRANSPORTS; do
  transport_alone
done
losetup -d "$ldev"
ldev=
left=0
for p in "${pids[@]}"; do # what this bench's drives left: loop bindings, mounts, records
  n=$( (losetup -a | grep "emu-$p\." || true; mount | grep "emu-$p\." || true;
    ls /run/ssdready/emu 2> /dev/null | grep "^emu-$p\." || true) | wc -l)
  left=$((left + n))
done
echo "   left after detach: $left loop devices, mounts or records of this bench's drives (0 expected)"
[[ -e /sys/module/fuse/parameters/enable_uring ]] &&
  echo "   enable_uring after the detach: $(cat /sys/module/fuse/parameters/enable_uring) (as it was before the bench: $uring_was)"
python3 - <<'PY'
import time
n, t0, c0 = 2000, time.monotonic(), time.thread_time()
for _ in range(n):
    time.sleep(100e-6)
wall, cpu = (time.monotonic() - t0) / n, (time.thread_time() - c0) / n
print(f"   one bare 100 µs sleep here: {cpu * 1e6:.1f} µs of CPU, {wall * 1e6 - 100:.1f} µs late (Python's time.sleep)")
PY
