#!/usr/bin/env bash
# Workers on one in-process emulated drive: how the emulator's real-time
# front scales with its workers, against what the device model itself
# allows them. Real time, 4 KiB random reads, QD $QD each, after the
# drive is written whole (so that every read reaches a die).
#
# Usage: bench/emu-scaling.sh [WORKERS...]      (default: 1 2)
#   e.g. bench/emu-scaling.sh 1 2 4 8 16
# Settings (environment): RUNTIME=3 (s per run), REPEATS=3 (rounds),
#   QD=32, PRESETS="flash-poll" (names below, or any emu: spec),
#   BIN=path/to/ssdready (default: target/release/ssdready, else
#   target/fast/ssdready; built with `cargo build --release` only when
#   neither exists). Needs the binary and python3 only: no fio, no cargo
#   when a binary is there.
#
# Each round runs every worker count once, in the order given, so that a
# change in the machine's load falls on all counts alike (the rounds
# alternate the counts). Per run it prints the IOPS, the ratio to one
# worker's IOPS in the same round (when 1 is among the counts), the
# model's own IOPS for the same jobs in virtual time (`emu simulate`, as
# long as a run, RUNTIME: what the device model allows, its limit where a
# resource binds; a shorter window would read the fill's program work
# still draining from the dies, 200 ms giving 14.71M at 16 workers where
# 2 s gives 15.32M)
# and the run's fraction of it, the workers' CPU per I/O (usr + sys, from
# the run's own figures: equal CPU per I/O at 1 and N workers means they
# do not serialise on shared state), and the load average before and
# after. Every command line it runs is printed first.
#
# Presets:
#   flash-poll  nvme-tlc with fast timings, the emulator's own speed
#               test: read_ns=2000,fw_cmd_ns=200,link_mbps=64000,
#               channel_mbps=64000,nocopy=1,completion=poll (2 µs array
#               reads, 0.2 µs per command on each of 4 controller cores,
#               64 ns per 4 KiB on the link and a channel; nothing
#               copied; completions polled). The model gives one worker
#               at QD 32 about 10.9M IOPS and 16 workers 15.3M over 2 s
#               (the link binds at 15.6M).
#   flash-fast  nvme-tlc,read_ns=2000,fw_cmd_ns=100,channel_mbps=16000,
#               link_mbps=64000,cpl_ns=5000 (data copied, hybrid
#               completions).
#   null, nvme-tlc, or any emu: parameters.
#
# INSTR=1 counts instead the instructions per read of the emulator's
# front at each worker count with valgrind (repeatable on a loaded
# machine, where timings are not): crates/emu's `front_reads` example
# (EXAMPLE=path, else target/fast/examples/front_reads, built when
# missing) reads 20,000 and 60,000 times per worker after the fill, and
# the difference over the extra reads is the cost of one. Equal counts at
# 1 and N workers mean no worker waits on another's state (valgrind runs
# one thread at a time, so what it shows is work, not contention). Each
# count also says how often a worker's lanes wrote the device's ledgers,
# natively and under valgrind (which runs about 20 times slower while the
# ledgers' frames pass in real time, so its figure, and the instructions
# of those writes, are higher than in a native run).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNTIME=${RUNTIME:-3}
REPEATS=${REPEATS:-3}
QD=${QD:-32}
PRESETS=${PRESETS:-flash-poll}
WORKERS=("$@")
[[ ${#WORKERS[@]} -gt 0 ]] || WORKERS=(1 2)
for w in "${WORKERS[@]}"; do
  [[ $w =~ ^[1-9][0-9]*$ ]] || { echo "emu-scaling: '$w' is not a worker count" >&2; exit 2; }
done
command -v python3 > /dev/null || { echo "emu-scaling: needs python3 (to read the runs' JSON)" >&2; exit 2; }
if [[ -n ${INSTR:-} ]]; then
  B= # not run: the example instead (below)
elif [[ -n ${BIN:-} ]]; then
  B=$BIN
elif [[ -x target/release/ssdready ]]; then
  B=target/release/ssdready
elif [[ -x target/fast/ssdready ]]; then
  B=target/fast/ssdready
else
  cargo build --release -q
  B=target/release/ssdready
fi
spec() { # a preset's name, or the parameters it stands for
  case $1 in
    flash-poll) echo "nvme-tlc,read_ns=2000,fw_cmd_ns=200,link_mbps=64000,channel_mbps=64000,nocopy=1,completion=poll" ;;
    flash-fast) echo "nvme-tlc,read_ns=2000,fw_cmd_ns=100,channel_mbps=16000,link_mbps=64000,cpl_ns=5000" ;;
    *) echo "$1" ;;
  esac
}
if [[ -n ${INSTR:-} ]]; then
  command -v valgrind > /dev/null || { echo "emu-scaling: INSTR=1 needs valgrind" >&2; exit 2; }
  X=${EXAMPLE:-target/fast/examples/front_reads}
  [[ -x $X || -n ${EXAMPLE:-} ]] || cargo build --profile fast -q -p ssdready-emu --example front_reads
  [[ -x $X ]] || { echo "emu-scaling: no example binary at $X" >&2; exit 2; }
  irefs() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 |
    sed -n 's/.*I *refs: *//p' | tr -d ,; }
  visits() { "$@" | sed -n 's/.*; \([0-9.]*\) ledger writes a read/\1/p'; }
  echo "== emulator instructions per read: $(nproc) CPUs, $(valgrind --version), $(date -u '+%F %H:%M UTC'), $X"
  for p in $PRESETS; do
    for w in "${WORKERS[@]}"; do
      a=$(irefs "$X" 20000 "$w" "$(spec "$p"),size=256m")
      b=$(irefs "$X" 60000 "$w" "$(spec "$p"),size=256m")
      native=$(visits "$X" 1000000 "$w" "$(spec "$p"),size=256m")
      slow=$(valgrind --tool=none "$X" 20000 "$w" "$(spec "$p"),size=256m" 2> /dev/null |
        sed -n 's/.*; \([0-9.]*\) ledger writes a read/\1/p')
      echo "   $p QD 32: $w workers $(((b - a) / (40000 * w))) instructions a read;" \
        "ledger writes a read $native native, $slow under valgrind"
    done
  done
  exit 0
fi
[[ -x $B ]] || { echo "emu-scaling: no binary at $B" >&2; exit 2; }
args() { # preset, workers, seconds: the job's options
  echo "--output-format=json --filename=emu:$(spec "$1"),size=256m" \
    "--name=fill --rw=write --bs=1m --iodepth=4 --size=256m" \
    "--name=r --stonewall --rw=randread --bs=4k --iodepth=$QD --numjobs=$2" \
    "--runtime=$3 --time_based"
}
one() { # preset, workers[, run|emu simulate[, seconds]]: "IOPS CPU-ns-per-IO"
  # shellcheck disable=SC2046 # the options are words without spaces
  "$B" ${3:-run} $(args "$1" "$2" "${4:-$RUNTIME}") 2> /dev/null |
    python3 -c "
import json, sys
jobs = [j for j in json.load(sys.stdin)['jobs'] if j['jobname'] == 'r']
ios = sum(j['read']['total_ios'] for j in jobs)
cpu = sum((j['usr_cpu'] + j['sys_cpu']) / 100 * j['job_runtime'] / 1e3 for j in jobs)
print(sum(j['read']['iops'] for j in jobs), cpu * 1e9 / max(ios, 1))"
}
echo "== emulator scaling: $(lscpu | grep 'Model name' | sed 's/  */ /g'), $(nproc) CPUs, Linux $(uname -r), $(date -u '+%F %H:%M UTC'), $B"
echo "   runs:     $B run $(args "PRESET" "WORKERS" "$RUNTIME")"
echo "   model:    $B emu simulate $(args "PRESET" "WORKERS" "$RUNTIME")"
for p in $PRESETS; do
  declare -A model=()
  for w in "${WORKERS[@]}"; do
    read -r m _ < <(one "$p" "$w" "emu simulate" "$RUNTIME")
    model[$w]=$m
  done
  for r in $(seq "$REPEATS"); do
    base=
    for w in "${WORKERS[@]}"; do
      l0=$(cut -d' ' -f1 /proc/loadavg)
      read -r iops cpu < <(one "$p" "$w")
      l1=$(cut -d' ' -f1 /proc/loadavg)
      [[ $w == 1 ]] && base=$iops
      python3 -c "
iops, cpu, m, w = $iops, $cpu, ${model[$w]}, $w
base = '$base'
ratio = f'{iops / float(base):5.2f}x one worker' if base else '(no 1-worker run yet)'
print(f'   $p QD $QD round $r: {w:3d} workers {iops / 1e6:7.2f}M IOPS, {ratio}; '
      f'model {m / 1e6:6.2f}M ({iops / m:.2f} of it); {cpu:5.0f} ns CPU per I/O; load $l0→$l1')"
    done
  done
  unset model
done
