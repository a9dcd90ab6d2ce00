#!/usr/bin/env bash
# Completion strategies side by side: 4 KiB random reads at QD 1 and QD 32
# on the emulator (emu:dram-ssd, a DRAM SSD: ~8 µs per read) and, as root,
# on a loop device over /dev/shm with direct I/O (io_uring). Within each
# round the strategies alternate, so a change in the machine's load hits
# them alike. Prints, per strategy, the median IOPS, mean latency and CPU
# per I/O over the rounds, and the strategy each run reported it ran.
#
# CPU per I/O is the process's (getrusage(RUSAGE_SELF): every thread of
# ssdready, the SQPOLL thread included) and the whole system's (/proc/stat
# busy time: also softirqs, the loop device's kernel workers and anything
# else running, so it is only meaningful on a quiet machine).
#
# Usage: ROUNDS=3 RUNTIME=3 QDS="1 32" bench/strategies.sh   (LOOP=0: emulator only)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-3}
QDS=${QDS:-"1 32"}
cargo build --release -q
B=$PWD/target/release/ssdready
EMU="emu:dram-ssd,size=256m"
# name|options (the emulator's strategies; coalesced: 8 completions or 100 µs)
EMU_STRATEGIES=(
  "interrupt|--completion=interrupt"
  "spin|--completion=spin"
  "hybrid|--completion=hybrid"
  "coalesced|--completion=interrupt --coalesce_n=8 --coalesce_us=100"
)
# the loop device's (poll falls back to spin there, and says so)
DEV_STRATEGIES=(
  "interrupt|--completion=interrupt"
  "poll|--completion=poll"
  "spin|--completion=spin"
  "hybrid|--completion=hybrid"
  "sqpoll|--completion=interrupt --sqthread_poll=1"
)
# one RUN: prints "iops mean_lat_ns process_ns_per_io system_ns_per_io ran"
one() {
  local target=$1 qd=$2
  shift 2
  local extra=()
  [[ $target == emu:* ]] || extra=(--ioengine=io_uring --direct=1)
  "$B" run --quiet --output-format=native --name=s --filename="$target" "${extra[@]}" \
    --rw=randread --bs=4k --iodepth="$qd" --runtime="$RUNTIME" --time_based "$@" |
    python3 -c '
import json, sys
r = json.load(sys.stdin)
j = r["jobs"][0]; c = r["phases"][0]["cpu"]["per_io"]; s = j["strategy"]
ran = s["ran"] + ("(" + s["requested"] + ")" if s["requested"] and s["requested"] != s["ran"] else "")
print(j["read"]["iops"], j["read"]["lat"]["mean_ns"], c["process_ns"], c["system_ns"], ran)'
}
# bench TARGET LABEL STRATEGY...: alternate the strategies ROUNDS times per QD
bench() {
  local target=$1 label=$2
  shift 2
  local strategies=("$@")
  for qd in $QDS; do
    local tmp
    tmp=$(mktemp)
    for ((r = 0; r < ROUNDS; r++)); do
      for s in "${strategies[@]}"; do
        local name=${s%%|*} opts=${s#*|}
        # shellcheck disable=SC2086
        echo "$name $(one "$target" "$qd" $opts)" >>"$tmp"
      done
    done
    python3 - "$label" "$qd" "$tmp" <<'PY'
import sys, statistics as st
label, qd, path = sys.argv[1], sys.argv[2], sys.argv[3]
rows = {}
for line in open(path):
    name, iops, lat, proc, system, ran = line.split()
    rows.setdefault(name, []).append((float(iops), float(lat), float(proc), float(system), ran))
print(f"{label}, 4 KiB random reads, QD {qd} (median of {len(next(iter(rows.values())))} alternating rounds):")
print(f"  {'strategy':<10} {'ran':<12} {'IOPS':>10} {'mean lat':>10} {'CPU/IO process':>15} {'CPU/IO system':>14}")
base = None
for name, v in rows.items():
    iops, lat, proc, system = (st.median(x[i] for x in v) for i in range(4))
    base = base or (iops, proc)
    print(f"  {name:<10} {v[0][4]:<12} {iops:>10.0f} {lat/1e3:>8.1f}µs {proc:>13.0f}ns {system:>12.0f}ns"
          f"   ×{iops/base[0]:.2f} IOPS, ×{proc/base[1]:.2f} CPU/IO vs {next(iter(rows))}")
PY
    rm -f "$tmp"
  done
}
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
echo "CPU/IO process: getrusage(RUSAGE_SELF), every ssdready thread incl. SQPOLL; system: /proc/stat busy time of all CPUs"
bench "$EMU" "emulator ($EMU)" "${EMU_STRATEGIES[@]}"
if [ "${LOOP:-1}" = 1 ] && [ "$(id -u)" = 0 ]; then
  DEV=$("$B" ramdev create --kind=loop --size=1g 2>/dev/null)
  trap '"$B" ramdev remove "$DEV" >/dev/null' EXIT
  bench "$DEV" "loop device over /dev/shm ($DEV, direct I/O, io_uring)" "${DEV_STRATEGIES[@]}"
else
  echo "loop device: skipped (needs root; LOOP=0 skips it)"
fi
