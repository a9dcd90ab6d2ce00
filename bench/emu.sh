#!/usr/bin/env bash
# The SSD emulator's own speed — it must never be the bottleneck it measures —
# and the queue-depth curves of its presets (Polte et al. Figure 1's shape).
#
# 1. Real time, zero-latency preset (emu:null, nocopy, polled completions),
#    one worker pinned to one CPU, QD 32: IOPS through the whole engine
#    (goal ≥ 2M on one core), and the CPU per I/O.
# 1b. Worker scaling (multi-queue): the same run with 1, 2 and as
#    many workers as CPUs, each pinned to its own CPU (cpus_allowed,
#    cpus_allowed_policy=split), each on its own queue pair; the counts
#    alternate round by round, medians and their ratio to one worker
#    (goal: 2 workers ≥ 1.8×). A busy machine makes the ratio meaningless:
#    the load average is printed with it.
# 1c. The same on a flash preset (emu:nvme-tlc: reads hold the model
#    shared, locking only their die, its channel, the controller cores and
#    the link), on unwritten pages and after a 1 GiB fill, each against
#    what the model itself allows: the same job in virtual time (one
#    worker, QD 32 and QD 64 = 2 workers' depth). 2 workers can reach
#    1.8× one only where the model's QD 64 figure is ≥ 1.8× the
#    real-time one-worker figure; otherwise the goal is the QD 64 figure.
# 2. Virtual time: simulated I/Os per CPU-second for a GC-heavy random-write
#    run (x25e, 256 MiB written over and over), a read run, and reads right
#    after a fill (goal ≥ 5M).
# 3. 4 KiB random-read IOPS against queue depth for every preset (virtual
#    time, after a sequential fill and 2 s of idle time so write buffers
#    have drained).
# Usage: bench/emu.sh            (ROUNDS=3 RUNTIME=5 by default;
#        BIN=path uses that binary instead of building one;
#        ONLY=scaling runs the worker-scaling sections alone;
#        ONLY=flash-scaling the nvme-tlc one alone)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-5}
if [[ -n ${BIN:-} ]]; then
  B=$BIN
else
  cargo build --release -q
  B=$PWD/target/release/ssdready
fi

# IOPS and CPU per I/O of emu:null with N workers on CPUs 0..N-1.
null_run() {
  local n=$1
  "$B" run --quiet --output-format=native --name=rt --filename=emu:null,size=1g,nocopy=1,completion=poll \
    --rw=randread --bs=4k --iodepth=32 --numjobs="$n" --cpus_allowed=0-$((n - 1)) --cpus_allowed_policy=split \
    --runtime="$RUNTIME" --time_based |
    python3 -c "import json,sys; r=json.load(sys.stdin); c=r['phases'][0]['cpu']['per_io'];
print(sum(j['read']['iops'] for j in r['jobs']), c['process_ns'])"
}

# 4 KiB random-read IOPS of emu:$1 with $2 workers (QD 32 each) on CPUs
# 0..$2-1, after a 1 GiB fill when $3 is "fill"; "sim" as $4 runs it in
# virtual time, one worker at QD 32 × $2.
flash_run() {
  local preset=$1 n=$2 fill=$3 how=${4:-run} pre=() idx=0 job
  if [[ $fill == fill ]]; then
    pre=(--name=fill --rw=write --bs=1m --iodepth=8 --numjobs=1)
    idx=1
  fi
  if [[ $how == sim ]]; then
    job=(--rw=randread --bs=4k --iodepth=$((32 * n)) --number_ios=400000 --norandommap)
    "$B" emu simulate --quiet --output-format=native --filename=emu:$preset,size=1g "${pre[@]}" \
      --name=r --stonewall --startdelay=2 "${job[@]}"
  else
    job=(--rw=randread --bs=4k --iodepth=32 --numjobs="$n" --cpus_allowed=0-$((n - 1))
      --cpus_allowed_policy=split --runtime="$RUNTIME" --time_based)
    "$B" run --quiet --output-format=native --filename=emu:$preset,size=1g,nocopy=1,completion=poll \
      "${pre[@]}" --name=r --stonewall --startdelay=$((idx * 2)) "${job[@]}"
  fi | python3 -c "import json,sys; r=json.load(sys.stdin); print(sum(j['read']['iops'] for j in r['jobs'][$idx:]))"
}

flash_scaling() {
  local fill out=/tmp/emu-bench-flash.$$
  for fill in fresh fill; do
    echo "== worker scaling: emu:nvme-tlc, $fill, QD 32 per worker, ${RUNTIME}s × $ROUNDS alternating (load $(cut -d' ' -f1-3 /proc/loadavg))"
    : > "$out"
    for ((r = 0; r < ROUNDS; r++)); do
      for n in 1 2; do
        echo "$n $(flash_run nvme-tlc "$n" "$fill")" >> "$out"
      done
    done
    python3 - "$out" "$(flash_run nvme-tlc 1 "$fill" sim)" "$(flash_run nvme-tlc 2 "$fill" sim)" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for n, iops in rows:
    by.setdefault(int(n), []).append(float(iops))
model = {1: float(sys.argv[2]), 2: float(sys.argv[3])}
one = statistics.median(by[1])
for n, v in sorted(by.items()):
    m = statistics.median(v)
    runs = ' '.join(f'{i/1e3:.0f}K' for i in v)
    print(f"  {n} worker(s): {m/1e3:6.0f}K IOPS median (runs {runs}), {m/one:.2f}x one worker; "
          f"model at QD {32*n}: {model[n]/1e3:.0f}K ({m/model[n]:.0%} of it)")
# What 2 workers can reach: twice one worker, or the model's own figure.
cap = min(2 * one, model[2])
two = statistics.median(by[2])
print(f"  2 workers can reach {cap/one:.2f}x one worker ({'the model' if cap < 2 * one else 'twice one worker'}); "
      f"they reached {two/cap:.0%} of that")
PY
  done
  rm -f "$out"
}

worker_scaling() {
  local cpus counts
  cpus=$(nproc)
  counts="1 2"
  ((cpus > 2)) && counts="1 2 $cpus"
  echo "== worker scaling: emu:null, QD 32 per worker, one worker per CPU, ${RUNTIME}s × $ROUNDS alternating ($cpus CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
  local out=/tmp/emu-bench-scaling.$$
  : > "$out"
  for ((r = 0; r < ROUNDS; r++)); do
    for n in $counts; do
      echo "$n $(null_run "$n")" >> "$out"
    done
  done
  python3 - "$out" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for n, iops, ns in rows:
    by.setdefault(int(n), []).append((float(iops), float(ns)))
one = statistics.median(i for i, _ in by[1])
for n, v in sorted(by.items()):
    m = statistics.median(i for i, _ in v)
    cpu = statistics.median(c for _, c in v)
    runs = ' '.join(f'{i/1e6:.2f}' for i, _ in v)
    print(f"  {n:3d} workers: {m/1e6:6.2f}M IOPS median (runs {runs}), "
          f"{cpu:.0f} ns process CPU per I/O, {m/one:.2f}x one worker")
PY
  rm -f "$out"
}

if [[ ${ONLY:-} == scaling ]]; then
  worker_scaling
  flash_scaling
  exit 0
fi
if [[ ${ONLY:-} == flash-scaling ]]; then
  flash_scaling
  exit 0
fi

echo "== real time: emu:null, one worker on CPU 0, QD 32, ${RUNTIME}s × $ROUNDS"
for ((r = 0; r < ROUNDS; r++)); do
  "$B" run --quiet --output-format=native --name=rt --filename=emu:null,size=1g,nocopy=1,completion=poll \
    --rw=randread --bs=4k --iodepth=32 --cpus_allowed=0 --runtime="$RUNTIME" --time_based |
    python3 -c "import json,sys; r=json.load(sys.stdin); j=r['jobs'][0]; c=r['phases'][0]['cpu']['per_io'];
print(f\"  {j['read']['iops']/1e6:.2f}M IOPS, process CPU {c['process_ns']:.0f} ns per I/O\")"
done

worker_scaling
flash_scaling

echo "== virtual time: simulated I/Os per CPU-second"
sim() {
  local label=$1; shift
  /usr/bin/time -f "%U %S" -o /tmp/emu-bench-time "$B" emu simulate --quiet --output-format=native "$@" > /tmp/emu-bench.json
  python3 - "$label" <<'PY'
import json, sys
r = json.load(open('/tmp/emu-bench.json'))
u, s = map(float, open('/tmp/emu-bench-time').read().split()[-2:])
ios = sum(d['ios'] for j in r['jobs'] for d in (j['read'], j['write'], j['trim']) if d)
e = r['emulator']
print(f"  {sys.argv[1]}: {ios/1e6:.2f}M I/Os, {e['simulated_ns']/1e9:.1f} s simulated, "
      f"{ios/max(u+s,1e-9)/1e6:.2f}M I/Os per CPU-second (WA {e['write_amplification']:.2f})")
PY
}
sim "x25e random writes (GC)" --filename=emu:x25e,size=256m --rw=randwrite --bs=4k --iodepth=32 --runtime=300 --time_based
sim "nvme-tlc random reads  " --filename=emu:nvme-tlc,size=1g --rw=randread --bs=4k --iodepth=64 --runtime=20 --time_based
# Reads right after a fill: every read meets queued programs (read priority,
# program suspension: the die scheduler's busiest path).
sim "nvme-tlc reads after fill" --filename=emu:nvme-tlc,size=1g --name=f --rw=write --bs=1m --iodepth=8 \
  --name=r --stonewall --rw=randread --bs=4k --iodepth=64 --runtime=3 --time_based

echo "== 4 KiB random-read IOPS by queue depth (virtual time, after a fill)"
printf '  %-10s' preset; for qd in 1 2 4 8 16 32 64 128; do printf '%9s' "QD$qd"; done; echo
for p in x25e iodrive nvme-tlc dram-ssd nvm-lowlat; do
  printf '  %-10s' "$p"
  for qd in 1 2 4 8 16 32 64 128; do
    "$B" emu simulate --quiet --output-format=native --filename=emu:$p,size=256m \
      --name=fill --rw=write --bs=1m --iodepth=8 \
      --name=r --stonewall --startdelay=2 --rw=randread --bs=4k --iodepth=$qd --number_ios=$((20000 + 500 * qd)) --norandommap |
      python3 -c "import json,sys; r=json.load(sys.stdin); print(f\"{r['jobs'][1]['read']['iops']/1e3:8.1f}K\", end='')"
  done
  echo
done
