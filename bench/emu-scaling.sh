#!/usr/bin/env bash
# Workers on one in-process emulated drive: 1 against 2 (real time, 4 KiB
# random reads, QD 32 each), on a zero-cost model (`null`) and on a flash
# preset whose model limit does not bind (`nvme-tlc`, 1.00M IOPS, written
# whole first so that every read reaches a die). Prints per preset the
# IOPS of 1 and 2 workers, their ratio (goal ≥ 1.8 where 2 CPUs are free),
# and the workers' CPU per I/O (usr + sys, from the run's own figures):
# equal CPU per I/O at 1 and 2 workers means the workers do not serialise
# on the model, whatever the machine's load leaves them. The load average
# is printed with each figure: on a loaded machine the IOPS ratio is the
# load's, the CPU per I/O is not.
#
# Usage: bench/emu-scaling.sh   (RUNTIME=3 REPEATS=3 PRESETS="null nvme-tlc";
#        BIN=path uses that binary instead of building)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNTIME=${RUNTIME:-3}
REPEATS=${REPEATS:-3}
PRESETS=${PRESETS:-"null nvme-tlc"}
if [[ -n ${BIN:-} ]]; then
  B=$BIN
else
  cargo build --profile fast -q
  B=${CARGO_TARGET_DIR:-$PWD/target}/fast/ssdready
fi
echo "== emulator scaling: $(lscpu | grep 'Model name' | sed 's/  */ /g'), $(nproc) CPUs, Linux $(uname -r), $(date -u '+%F %H:%M UTC')"
one() { # preset, workers: "IOPS CPU-ns-per-IO"
  "$B" run --output-format=json --filename="emu:$1,size=256m" \
    --name=fill --rw=write --bs=1m --iodepth=4 --size=256m \
    --name=r --stonewall --rw=randread --bs=4k --iodepth=32 --numjobs="$2" \
    --runtime="$RUNTIME" --time_based 2> /dev/null |
    python3 -c "
import json, sys
jobs = [j for j in json.load(sys.stdin)['jobs'] if j['jobname'] == 'r']
ios = sum(j['read']['total_ios'] for j in jobs)
cpu = sum((j['usr_cpu'] + j['sys_cpu']) / 100 * j['job_runtime'] / 1e3 for j in jobs)
print(sum(j['read']['iops'] for j in jobs), cpu * 1e9 / max(ios, 1))"
}
for p in $PRESETS; do
  for r in $(seq "$REPEATS"); do
    l0=$(cut -d' ' -f1 /proc/loadavg)
    read -r i1 c1 < <(one "$p" 1)
    read -r i2 c2 < <(one "$p" 2)
    l1=$(cut -d' ' -f1 /proc/loadavg)
    python3 -c "
i1, c1, i2, c2 = map(float, '$i1 $c1 $i2 $c2'.split())
print(f'   $p round $r: 1 worker {i1/1e3:.0f}K IOPS ({c1:.0f} ns CPU per I/O), 2 workers {i2/1e3:.0f}K '
      f'({c2:.0f} ns); ratio {i2/i1:.2f}; CPU per I/O 2 vs 1 {c2/c1:.2f}; load {\"$l0\"}→{\"$l1\"}')"
  done
done
