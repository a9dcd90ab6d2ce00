#!/usr/bin/env bash
# F8, interrupt coalescing on against off: 4 KiB random reads on the
# emulator (emu:dram-ssd, a DRAM SSD: ~8 µs per read) with interrupt
# completions (completion=interrupt: each reap sleeps until a completion
# event wakes it), without coalescing and with the device holding
# completions until COALESCE_N have gathered or COALESCE_US have passed
# (the emulator's coalesce_n / coalesce_us). The runs alternate within each
# round, so a change in the machine's load hits both alike. Prints, per
# queue depth, the median over the rounds of IOPS, p50 / mean / p99
# latency, CPU per I/O and completions per event, and the ratios of
# coalesced against plain interrupts.
#
# CPU per I/O: `process` is getrusage(RUSAGE_SELF) (every ssdready thread,
# the emulator's included); `system` is /proc/stat busy time of all CPUs
# (anything else running counts too: meaningful on a quiet machine only).
#
# Usage: ROUNDS=3 RUNTIME=2 QDS="1 4 16 32" COALESCE="8/100 32/100" bench/coalescing.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-2}
QDS=${QDS:-"1 4 16 32"}
COALESCE=${COALESCE:-"8/100 32/100"}
cargo build --release -q
B=$PWD/target/release/ssdready
# The interface unlimited: the preset takes one command at a time, so a
# completion held for coalescing holds the next command too (nothing to
# coalesce; TARGET=emu:dram-ssd,size=256m shows that case).
EMU=${TARGET:-"emu:dram-ssd,size=256m,iface_depth=0"}
# one RUN: prints "iops p50_ns mean_ns p99_ns process_ns system_ns per_event"
one() {
  local qd=$1
  shift
  timeout $((RUNTIME * 4 + 30)) "$B" run --quiet --output-format=native --name=c --filename="$EMU" \
    --rw=randread --bs=4k --iodepth="$qd" --runtime="$RUNTIME" --time_based \
    --completion=interrupt "$@" |
    python3 -c '
import json, sys
r = json.load(sys.stdin)
j = r["jobs"][0]; c = r["phases"][0]["cpu"]["per_io"]; lat = j["read"]["lat"]
p = dict((q, v) for q, v in lat["percentiles"])
s = j["strategy"]
print(j["read"]["iops"], p[50.0], lat["mean_ns"], p[99.0], c["process_ns"], c["system_ns"],
      s.get("completions_per_event") or 0)'
}
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r); target $EMU"
echo "CPU/IO process: getrusage(RUSAGE_SELF), every ssdready thread; system: /proc/stat busy time of all CPUs"
for qd in $QDS; do
  tmp=$(mktemp)
  for ((r = 0; r < ROUNDS; r++)); do
    echo "off $(one "$qd")" >>"$tmp"
    for c in $COALESCE; do
      echo "n=${c%/*},us=${c#*/} $(one "$qd" --coalesce_n="${c%/*}" --coalesce_us="${c#*/}")" >>"$tmp"
    done
  done
  python3 - "$qd" "$tmp" <<'PY'
import sys, statistics as st
qd, path = sys.argv[1], sys.argv[2]
rows = {}
for line in open(path):
    name, *v = line.split()
    rows.setdefault(name, []).append([float(x) for x in v])
n = len(rows["off"])
print(f"QD {qd}, 4 KiB random reads, completion=interrupt (median of {n} alternating rounds):")
print(f"  {'coalescing':<12} {'IOPS':>9} {'p50':>9} {'mean':>9} {'p99':>9} {'CPU/IO proc':>12} {'CPU/IO sys':>11} {'per event':>9}")
base = [st.median(x[i] for x in rows["off"]) for i in range(7)]
for name, v in rows.items():
    m = [st.median(x[i] for x in v) for i in range(7)]
    iops, p50, mean, p99, proc, system, ev = m
    line = (f"  {name:<12} {iops:>9.0f} {p50/1e3:>7.1f}µs {mean/1e3:>7.1f}µs {p99/1e3:>7.1f}µs"
            f" {proc:>10.0f}ns {system:>9.0f}ns {ev:>9.2f}")
    if name != "off":
        line += (f"   ×{iops/base[0]:.2f} IOPS, ×{proc/base[4]:.2f} CPU/IO (process),"
                 f" ×{system/base[5]:.2f} (system), ×{p50/base[1]:.2f} p50")
    print(line)
PY
  rm -f "$tmp"
done
