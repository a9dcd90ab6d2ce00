#!/usr/bin/env bash
# The deterministic outputs of a binary, normalised and hashed, to show a
# refactoring changes none of them: virtual-time runs (`emu simulate`, text
# and native JSON, over plan, flow and loop shapes and the job files under
# examples/ and crates/cli/tests/jobs), `run --parse-only` of every job file,
# `characterize --quick --virtual`, and the I/O counts of bounded null-engine
# runs. Wall-clock, platform and start-time fields are dropped.
#
# Usage: bench/deterministic-hashes.sh BINARY OUTDIR
#        (run it with the binary before and after, then diff the two
#        OUTDIR/SHA256SUMS; OUTDIR must be new, empty, or an earlier
#        OUTDIR of this script, whose files are replaced)
set -u
[ $# -eq 2 ] || { echo "usage: $0 BINARY OUTDIR" >&2; exit 2; }
B=$(realpath "$1"); OUT=$(realpath -m "$2")
if [ -d "$OUT" ] && [ -n "$(ls -A "$OUT")" ] && [ ! -f "$OUT/SHA256SUMS" ]; then
  echo "$0: '$OUT' holds files this script did not write; give a new directory" >&2; exit 2
fi
mkdir -p "$OUT" && find "$OUT" -maxdepth 1 -type f \( -name '*.json' -o -name '*.txt' -o -name '*.err' -o -name '*.cnt' -o -name SHA256SUMS \) -delete
R=$(cd "$(dirname "$0")/.." && pwd)
export SSDREADY_TEST_TARGET=emu:x25e,size=256m
norm() { python3 -c '
import json,sys
d=json.load(sys.stdin)
def strip(o):
    if isinstance(o,dict):
        for k in ("started_unix_ms","platform","wall_ns","tool","started","finished","duration_s","wall_s","host","date","timestamp","timestamp_ms","time","build","version"):
            o.pop(k,None)
        for v in o.values(): strip(v)
    elif isinstance(o,list):
        for v in o: strip(v)
strip(d); print(json.dumps(d,sort_keys=True))'; }
sim() { local name=$1; shift
  "$B" emu simulate --quiet --output-format=native "$@" > "$OUT/$name.raw" 2> "$OUT/$name.err"; echo "rc=$?" >> "$OUT/$name.err"
  norm < "$OUT/$name.raw" > "$OUT/$name.json" 2>/dev/null || cp "$OUT/$name.raw" "$OUT/$name.json"
  rm -f "$OUT/$name.raw"
  "$B" emu simulate --quiet "$@" > "$OUT/$name.txt" 2>&1; echo "rc=$?" >> "$OUT/$name.txt"
}
X='--filename=emu:x25e,size=256m'
sim randread_qd1  --name=a $X --rw=randread --bs=4k --iodepth=1 --runtime=1 --time_based
sim randread_qd32 --name=a $X --rw=randread --bs=4k --iodepth=32 --runtime=1 --time_based --numjobs=2
sim randwrite_qd32 --name=a $X --rw=randwrite --bs=4k --iodepth=32 --runtime=2 --time_based
sim mixed --name=a $X --rw=randrw --rwmixread=70 --bs=4k --iodepth=8 --runtime=1 --time_based
sim mixed_bssplit --name=a $X --rw=randrw --bssplit=4k/50:64k/50 --iodepth=4 --io_size=64m
sim fill_then_read --name=fill $X --rw=write --bs=1m --iodepth=8 --name=read --stonewall $X --rw=randread --bs=4k --iodepth=16 --runtime=1 --time_based --ramp_time=100ms
sim rate_limited --name=a $X --rw=randread --bs=4k --iodepth=4 --rate_iops=2000 --runtime=1 --time_based
sim rate_bw --name=a $X --rw=randwrite --bs=4k --iodepth=4 --rate=10m,5m --runtime=1 --time_based
sim openloop --name=md1 '--filename=emu:null,size=64m,dram_per_4k_ns=10us' --rw=randread --bs=4k --iodepth=4096 --norandommap --rate_iops=90000 --rate_process=poisson --lat_from=schedule --time_based --runtime=1
sim two_jobs_one_dev --name=r $X --rw=randread --bs=4k --iodepth=4 --runtime=500ms --time_based --name=w $X --rw=randwrite --bs=4k --iodepth=4 --runtime=500ms --time_based --offset=128m
sim startdelay --name=a $X --rw=randread --bs=4k --iodepth=2 --startdelay=3 --runtime=200ms --time_based
sim offset_inc --name=a $X --rw=randwrite --bs=4k --iodepth=2 --numjobs=3 --offset_increment=32m --size=32m
sim trim --name=a '--filename=emu:x25e,size=128m' --rw=randtrim --bs=64k --iodepth=4 --io_size=32m
sim trimwrite --name=a '--filename=emu:x25e,size=128m' --rw=trimwrite --bs=64k --iodepth=4 --size=16m
sim zoned --name=a '--filename=emu:x25e,size=256m,zoned=1' --rw=write --bs=64k --iodepth=1 --zonemode=zbd --io_size=32m
# plan and flow shapes
sim holes --name=a $X --rw=read:8k --bs=4k --iodepth=2 --size=16m --loops=2
sim seqnr --name=a $X --rw=randread:4 --bs=4k --iodepth=2 --size=16m
sim bsrange --name=a $X --rw=randwrite --bsrange=4k-64k --iodepth=4 --size=32m
sim norandmap --name=a $X --rw=randread --bs=4k --norandommap --iodepth=4 --number_ios=5000
sim zipf --name=a $X --rw=randread --bs=4k --random_distribution=zipf:1.2 --iodepth=4 --number_ios=5000
sim zonedist --name=a $X --rw=randread --bs=4k --random_distribution=zoned:50/10:50/90 --iodepth=4 --number_ios=5000
sim percrand --name=a $X --rw=randread --bs=4k --percentage_random=40 --iodepth=4 --number_ios=5000
sim blockalign --name=a $X --rw=randread --bs=4k --blockalign=8k --iodepth=4 --number_ios=5000
sim strided --name=a $X --rw=read --bs=4k --zonesize=1m --zoneskip=3m --iodepth=1 --io_size=8m
sim verify --name=a $X --rw=randwrite --bs=4k --verify=crc32c --iodepth=4 --size=8m
sim verify_backlog --name=a $X --rw=write --bs=4k --verify=md5 --verify_backlog=64 --iodepth=4 --size=8m
sim fsync --name=a $X --rw=randwrite --bs=4k --fsync=16 --end_fsync=1 --iodepth=4 --size=8m
sim think --name=a $X --rw=randread --bs=4k --thinktime=100 --thinktime_blocks=8 --iodepth=8 --number_ios=4000
sim loops --name=a $X --rw=write --bs=64k --loops=3 --size=8m --iodepth=2
sim lowmark --name=a $X --rw=randread --bs=4k --iodepth=32 --iodepth_low=8 --iodepth_batch_submit=4 --iodepth_batch_complete_min=2 --runtime=300ms --time_based
sim numios --name=a $X --rw=randrw --bs=4k --iodepth=8 --number_ios=3000 --loops=2 --size=4m
# refusals (text and code)
sim refuse_null --name=a '--filename=emu:null,size=64m' --rw=randread --bs=4k --runtime=1 --time_based
sim refuse_region --name=a $X --rw=randread --bs=4k --offset=300m --size=4m
# job files in virtual time
for f in $R/examples/*.fio $R/crates/cli/tests/jobs/*.fio; do (cd $(dirname $f) && sim job_$(basename $f .fio) "$f" --filename=emu:x25e,size=256m --runtime=300ms); done
# --parse-only of every job file
for f in $R/examples/*.fio $R/crates/cli/tests/jobs/*.fio $R/crates/cli/tests/public_jobs/*.fio; do
  n=parse_$(basename $(dirname $f))_$(basename $f .fio)
  (cd $(dirname $f) && "$B" run --parse-only "$f" > "$OUT/$n.txt" 2>&1; echo "rc=$?" >> "$OUT/$n.txt")
done
# characterize in virtual time
"$B" characterize emu:x25e,size=256m --quick --virtual --output "$OUT/char" > "$OUT/characterize.txt" 2>&1; echo "rc=$?" >> "$OUT/characterize.txt"
for f in "$OUT"/char/*.json; do norm < "$f" > "$OUT/characterize_$(basename $f)" ; done
rm -rf "$OUT/char"
# bounded real runs on the null engine: counts only
cnt() { local name=$1; shift
  "$B" run --output-format=json "$@" 2>"$OUT/$name.err" | python3 -c '
import json,sys
d=json.load(sys.stdin)
for j in d.get("jobs",[]):
    print(j.get("jobname"), [(k, j[k].get("io_bytes"), j[k].get("total_ios")) for k in ("read","write","trim") if k in j], j.get("error"))' > "$OUT/$name.cnt" 2>&1; echo "rc=$?" >> "$OUT/$name.cnt"; }
cnt null_rand --name=a --ioengine=null --size=64m --rw=randrw --bs=4k --iodepth=16 --iodepth_low=4 --iodepth_batch_submit=4 --iodepth_batch_complete_min=2
cnt null_psync --name=a --ioengine=null --size=16m --rw=write --bs=4k --iodepth=8 --loops=2 --number_ios=1000
cnt null_bssplit --name=a --ioengine=null --size=64m --rw=randread --bssplit=4k/50:64k/50 --iodepth=4
cnt null_holes --name=a --ioengine=null --size=16m --rw=read:8k --bs=4k --iodepth=4
for t in "$OUT"/*.txt; do sed -E -e "s/in [0-9.]+ (s|ms|µs) of wall-clock time//" -e "s/^\[ *[0-9.]+ (s|min)\] //" "$t" | grep -v -E "^platform:|^  clocksource|^  lab|wall|ssdready: wrote" > "$t.norm"; mv "$t.norm" "$t"; done
( cd "$OUT" && sha256sum *.json *.txt *.err *.cnt | sort -k2 > SHA256SUMS )
