#!/usr/bin/env bash
# Workers on one in-process emulated drive: 1 against 2 (real time, 4 KiB
# random reads, QD $QD each), on a zero-cost model (`null`) and on a flash
# preset (`nvme-tlc`, written whole first so that every read reaches a
# die). Prints per preset the IOPS of 1 and 2 workers and their ratio,
# the model's own ratio for the same jobs in virtual time (`emu simulate`:
# at QD 32 each, nvme-tlc's dies bind, and the model itself gives only
# 1.56x; at QD 8 it gives 1.88x; `null` has no model limit, 2x), the
# real ratio as a fraction of the model's (goal: 2 workers >= 1.8x one
# where the model does not bind, i.e. >= 0.9 of the model's ratio, with
# 2 CPUs free), and the workers' CPU per I/O (usr + sys, from the run's
# own figures): equal CPU per I/O at 1 and 2 workers means the workers do
# not serialise on the model, whatever the machine's load leaves them.
# The load average is printed with each figure: on a loaded machine the
# IOPS ratio is the load's, the CPU per I/O is not.
#
# `flash-fast` is nvme-tlc with fast timings and a wide link, so that its
# model limit never binds what the emulator's CPUs can do:
#   nvme-tlc,read_ns=2000,fw_cmd_ns=100,channel_mbps=16000,link_mbps=64000,cpl_ns=5000
# (2 µs array reads, 0.1 µs per command on each of 4 controller cores,
# 0.26 µs per page on a channel, 64 ns per 4 KiB on the link; 5 µs to post
# a completion, a latency that takes no resource): 4.16M IOPS at QD 32
# and 7.99M at QD 64 in virtual time (1.92x; the busiest resource at QD
# 64, the link, about half busy): five times what one worker's CPU can
# issue (about 0.8M reads a second at 1.2 µs each), so the workers are
# bound by their CPU alone.
#
# Usage: bench/emu-scaling.sh   (RUNTIME=3 REPEATS=3 QD=32
#        PRESETS="null nvme-tlc flash-fast"; BIN=path uses that binary
#        instead of building)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNTIME=${RUNTIME:-3}
REPEATS=${REPEATS:-3}
PRESETS=${PRESETS:-"null nvme-tlc flash-fast"}
FLASH_FAST="nvme-tlc,read_ns=2000,fw_cmd_ns=100,channel_mbps=16000,link_mbps=64000,cpl_ns=5000"
QD=${QD:-32}
if [[ -n ${BIN:-} ]]; then
  B=$BIN
else
  cargo build --profile fast -q
  B=${CARGO_TARGET_DIR:-$PWD/target}/fast/ssdready
fi
echo "== emulator scaling: $(lscpu | grep 'Model name' | sed 's/  */ /g'), $(nproc) CPUs, Linux $(uname -r), $(date -u '+%F %H:%M UTC')"
spec() { # a preset's name, or flash-fast's parameters
  if [[ $1 == flash-fast ]]; then echo "$FLASH_FAST"; else echo "$1"; fi
}
one() { # preset, workers[, run|emu simulate]: "IOPS CPU-ns-per-IO"
  "$B" ${3:-run} --output-format=json --filename="emu:$(spec "$1"),size=256m" \
    --name=fill --rw=write --bs=1m --iodepth=4 --size=256m \
    --name=r --stonewall --rw=randread --bs=4k --iodepth="$QD" --numjobs="$2" \
    --runtime="$RUNTIME" --time_based 2> /dev/null |
    python3 -c "
import json, sys
jobs = [j for j in json.load(sys.stdin)['jobs'] if j['jobname'] == 'r']
ios = sum(j['read']['total_ios'] for j in jobs)
cpu = sum((j['usr_cpu'] + j['sys_cpu']) / 100 * j['job_runtime'] / 1e3 for j in jobs)
print(sum(j['read']['iops'] for j in jobs), cpu * 1e9 / max(ios, 1))"
}
for p in $PRESETS; do
  if [[ $p == null ]]; then
    model=2 # no model limit
  else
    read -r m1 _ < <(RUNTIME=1 one "$p" 1 "emu simulate")
    read -r m2 _ < <(RUNTIME=1 one "$p" 2 "emu simulate")
    model=$(python3 -c "print($m2 / $m1)")
  fi
  for r in $(seq "$REPEATS"); do
    l0=$(cut -d' ' -f1 /proc/loadavg)
    read -r i1 c1 < <(one "$p" 1)
    read -r i2 c2 < <(one "$p" 2)
    l1=$(cut -d' ' -f1 /proc/loadavg)
    python3 -c "
i1, c1, i2, c2, m = map(float, '$i1 $c1 $i2 $c2 $model'.split())
print(f'   $p QD $QD round $r: 1 worker {i1/1e3:.0f}K IOPS ({c1:.0f} ns CPU per I/O), 2 workers {i2/1e3:.0f}K '
      f'({c2:.0f} ns); ratio {i2/i1:.2f} (the model {m:.2f}: {i2/i1/m:.2f} of it); '
      f'CPU per I/O 2 vs 1 {c2/c1:.2f}; load {\"$l0\"}→{\"$l1\"}')"
  done
done
