#!/usr/bin/env bash
# ssdready against fio, side by side, on the behaviours of fio's file and
# think-time options: each case runs both tools alternately ROUNDS times on
# one file in $DIR (default /tmp: a real file system, not tmpfs, whose page
# cache can be dropped) and prints the medians of IOPS, mean completion
# latency and the job thread's CPU (fio's usr_cpu + sys_cpu, both tools'
# fio JSON), and ssdready / fio for each. Needs fio.
#   think-psync:   psync QD 1 direct random reads, thinktime=10ms
#   think-libaio:  libaio QD 8 direct random reads, thinktime=10ms every 8 I/Os
# fio sleeps a think time less the granularity of nanosleep it measured at
# start-up (the worst of ten 1 us sleeps) and spins the rest; on a busy
# machine that probe can give milliseconds, and fio then spins whole think
# times. Rounds where fio used over 3x ssdready's CPU are summarised apart
# as "fio spun".
#   buf-randread:  buffered psync random reads of a 256 MiB file, time based
#   buf-seqread:   buffered psync sequential reads of a 64 MiB file, time based
#                  (several passes: fio drops the cache at each)
# Usage: ROUNDS=5 RUNTIME=5 CASES="think-psync buf-randread" bench/fio-io.sh
#        (BUILD=0 uses target/release/ssdready as it is)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-5}
DIR=${DIR:-/tmp}
CASES=${CASES:-"think-psync think-libaio buf-randread buf-seqread"}
command -v fio >/dev/null || { echo "fio-io: fio is not installed" >&2; exit 1; }
if [ "${BUILD:-1}" = 1 ]; then cargo build --release -q; fi
B=$PWD/target/release/ssdready
F=$(mktemp -p "$DIR" ssdready-fio-io.XXXXXX)
trap 'rm -f "$F"' EXIT
echo "fio-io: $(fio --version), file $F on $(df --output=fstype "$DIR" | tail -1)," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
args() {
  local common=(--name=c --filename="$F" --runtime="$RUNTIME" --time_based --bs=4k)
  case $1 in
  think-psync) echo "${common[@]} --size=256m --rw=randread --direct=1 --ioengine=psync --thinktime=10ms" ;;
  think-libaio) echo "${common[@]} --size=256m --rw=randread --direct=1 --ioengine=libaio --iodepth=8 --thinktime=10ms --thinktime_blocks=8" ;;
  buf-randread) echo "${common[@]} --size=256m --rw=randread --ioengine=psync" ;;
  buf-seqread) echo "${common[@]} --size=64m --rw=read --ioengine=psync" ;;
  esac
}
# one TOOL CASE: "iops clat_us cpu_pct" of one run.
one() {
  local tool=$1
  shift
  # shellcheck disable=SC2046
  if [ "$tool" = fio ]; then
    fio --output-format=json $(args "$1")
  else
    "$B" run --quiet --output-format=json $(args "$1")
  fi 2>/dev/null | python3 -c "
import json, sys
j = json.load(sys.stdin)['jobs'][0]
r = j['read']
print(r['iops'], r['clat_ns']['mean'] / 1e3, j['usr_cpu'] + j['sys_cpu'])"
}
# The file, written once (both tools then find it laid out).
fio --name=mk --filename="$F" --size=256m --rw=write --bs=1m --output-format=terse >/dev/null
for c in $CASES; do
  fs=() ss=()
  for ((r = 0; r < ROUNDS; r++)); do
    fs+=("$(one fio "$c")")
    ss+=("$(one ssdready "$c")")
  done
  python3 - "$c" "$(printf '%s;' "${fs[@]}")" "$(printf '%s;' "${ss[@]}")" <<'PY'
import sys, statistics as st
case = sys.argv[1]
def rows(s):
    return [[float(x) for x in r.split()] for r in s.split(';') if r.strip()]
f, s = rows(sys.argv[2]), rows(sys.argv[3])
spun = [i for i in range(len(f)) if f[i][2] > 3 * s[i][2] + 1]
groups = [('', list(range(len(f))))]
if case.startswith('think') and spun:
    slept = [i for i in range(len(f)) if i not in spun]
    groups = [('fio slept', slept), ('fio spun', spun)]
for label, idx in groups:
    if not idx:
        continue
    print(f'{case}{" (" + label + ")" if label else ""}: {len(idx)} round(s)')
    for k, n in enumerate(['IOPS', 'clat mean us', 'CPU %']):
        a = st.median(f[i][k] for i in idx)
        b = st.median(s[i][k] for i in idx)
        print(f'  {n:>12}: fio {a:10.2f}  ssdready {b:10.2f}  ratio {b / a if a else float("nan"):6.2f}')
PY
done
