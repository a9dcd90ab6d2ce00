#!/usr/bin/env bash
# The one-line answers a binary gives to bad input: ~120 bad option values,
# units, ranges, expressions, job files and subcommand switches, each run
# with `run --parse-only` (or the subcommand's own checks), its stderr and
# exit code recorded, to show a change of error types leaves every message
# byte for byte the same.
#
# Usage: bench/bad-input.sh BINARY OUTDIR
#        (run it with the binary before and after, then
#        `diff -r OUTDIR_BEFORE OUTDIR_AFTER`; OUTDIR must be new or empty)
set -u
[ $# -eq 2 ] || { echo "usage: $0 BINARY OUTDIR" >&2; exit 2; }
B=$(realpath "$1"); OUT=$(realpath -m "$2")
if [ -d "$OUT" ] && [ -n "$(ls -A "$OUT")" ]; then
  echo "$0: '$OUT' is not empty; give a new directory" >&2; exit 2
fi
mkdir -p "$OUT"
T=$(mktemp -d /dev/shm/bad-input.XXXXXX); trap 'rm -rf "$T"' EXIT
cd "$T" || exit 2
F="--filename=$T/f"
n=0
# case ARGS...: one run of the binary; stdout is dropped (only a refusal's
# text and status matter), stderr and the exit code kept.
case_() {
  n=$((n + 1))
  local f; f=$(printf '%s/%03d.txt' "$OUT" "$n")
  # The temporary directory's name varies: written as TMP.
  printf '%s\n' "$*" | sed "s|$T|TMP|g" > "$f"
  timeout 20 "$B" "$@" 2>&1 > /dev/null < /dev/null | sed "s|$T|TMP|g" >> "$f"
  echo "rc=${PIPESTATUS[0]}" >> "$f"
}
# po OPTION=VALUE...: a one-job `run --parse-only` with those options.
po() { case_ run --parse-only --name=j "$F" "$@"; }
# sizes and units
po --bs=4q; po --bs=; po --bs=-4k; po --bs=99999999999999999999k; po --size=1x
po --size=abc; po --bs=4k,8k,16k,32k; po --io_size=0x; po --offset=12qq
po --blocksize_range=8k-4k; po --bsrange=4k-; po --bs_unaligned=maybe
po --runtime=10x; po --runtime=-1; po --runtime=999999999d; po --ramp_time=abc
po --startdelay=1q; po --thinktime=1yy; po --time_based=2
# expressions
po '--size=(2*'; po '--size=(1/0)'; po '--size=(1%0.5)'; po '--size=(2*1g'
po '--size=2*1g'; po '--runtime=(1m+)'; po '--size=($$)'; po '--size=(9^99999)'
po '--size=(a)'
# ranges and numbers
po --iodepth=0; po --iodepth=abc; po --iodepth=99999999999; po --numjobs=0
po --numjobs=-1; po --rwmixread=101; po --rwmixread=x; po --rwmixwrite=200
po --percentage_random=150; po --nrfiles=0; po --loops=x; po --number_ios=x
po --iodepth_batch=x; po --iodepth_low=x; po --kb_base=1001
# rw and patterns
po --rw=sideways; po --rw=randread:x; po --rw=read:4q; po --readwrite=foo
po --rw=randrw:0
# bssplit and distributions
po --bssplit=4k/50:8k/60; po --bssplit=; po --bssplit=4q/100; po --bssplit=4k/x
po --bssplit=4k/50,8k/50,4k/10,1k/1; po --random_distribution=zipf:1
po --random_distribution=zipf:0; po --random_distribution=pareto:2
po --random_distribution=normal:x; po --random_distribution=bogus
po --random_distribution=zoned:50/50:60/50; po --random_distribution=zoned_abs:10/1g:95/1g
po --random_distribution=gauss:-1; po --file_service_type=bogus
po --file_service_type=random:x; po --random_generator=nope
# rates
po --rate=1q; po --rate_iops=x; po --rate_iops=1,2,3,4; po --rate_min=x
po --rate_process=other; po --rate_cycle=x; po --ratemin=1q
# scheduling
po --cpus_allowed=x-y; po --cpus_allowed=; po --cpumask=zz; po --cpus_allowed_policy=odd
po --numa_mem_policy=prefer:0,1; po --numa_mem_policy=bind; po --numa_mem_policy=local:1
po --numa_mem_policy=weird; po --numa_cpu_nodes=x; po --prio=9; po --prio=x
po --prioclass=9; po --cmdprio_percentage=101; po --cmdprio=1,2,3
po --cmdprio_bssplit=4k/x; po --nice=99; po --cpuload=x
# errors, verify, patterns
po --continue_on_error=sometimes; po --ignore_error=EBOGUS; po --ignore_error=1,2,3,4,5
po --ignore_error=read:x; po --error_dump=x; po --verify=bogus
po --verify_pattern=; po '--verify_pattern="'; po --verify_pattern=0xZZ
po '--verify_pattern=%x'; po --buffer_pattern=0xq; po --verify_pattern=1234567890123456789012345
po --verify_backlog=x; po --verify_interval=x; po --verify_offset=1q
po --dedupe_percentage=200; po --buffer_compress_percentage=101
# io options
po --sync=sometimes; po --fallocate=bogus; po --fadvise_hint=bogus; po --direct=x
po --ioengine=nope; po --ioengine=libaio --iodepth=x; po --fsync=x; po --fdatasync=-1
po --unified_rw_reporting=maybe; po --zonemode=bogus; po --zonesize=1q
po --max_open_zones=x; po --zone_reset_threshold=2; po --zone_reset_frequency=x
po --ioscheduler=''
# passthru, strategies, replay, logs
po --ioengine=sg --sg_write_mode=nope; po --ioengine=io_uring_cmd --pi_chk=FOO
po --ioengine=io_uring_cmd --pi_act=x; po --ioengine=io_uring_cmd --apptag=x
po --fdp_pli=x; po --dataplacement=x; po --plids=1,x
po --hipri=x; po --completion=bogus; po --strategy=bogus; po --sqthread_poll=x
po --read_iolog=; po --replay_skip=bogus; po --replay_time_scale=x
po --write_bw_log=; po --log_avg_msec=x; po --log_hist_msec=x; po --log_offset=x
po --steadystate=iops:x; po --steadystate=bogus:1; po --steadystate_duration=x
po --ss_ramp=x; po --exitall=x; po --exit_what=bogus; po --wait_for=nosuch
po --flow=x; po --stonewall=x; po --unknown_option=1; po --bogus
po --sync_file_range=flush:2; po --sync_file_range=write:0; po --mem=cudamalloc
po --mem=heap; po --mem=shm:/x; po --mem=mmap:; po --steadystate=iops
po --steadystate=iops:-1; po --steadystate=bw:1q; po --write_hint=x
po --unified_rw_reporting=x; po --replay_skip=x; po --fallocate=yes
po --continue_on_error=x; po --write_mode=x; po --write_mode=write/50:write/50
po --write_mode=write/50:zeroes/x; po --write_mode=write/30:zeroes/30
po --numa_mem_policy=default:1; po --cmdprio_class=0; po --cmdprio_class=1,2,3
po --cmdprio_bssplit=4k/60:4k/50; po --cmdprio_bssplit=4k/60/1; po --cmdprio_bssplit=a,b,c
po --offset=101%; po --size=x%; po --offset_increment=1q; po --ba=0
po --random_distribution=sequence; po --random_distribution=sequence:x
po --random_distribution=zoned; po --random_distribution=zoned:x/10
po --random_distribution=zipf:1.2:2; po --rw=read:99999999999999999999
# job files
printf '[global]\nbs=4q\n[a]\nfilename=%s/f\n' "$T" > bad1.fio; case_ run --parse-only bad1.fio
printf '[a]\nrw=sideways\nfilename=%s/f\n' "$T" > bad2.fio; case_ run --parse-only bad2.fio
printf '[a\nrw=read\n' > bad3.fio; case_ run --parse-only bad3.fio
printf 'rw=read\n' > bad4.fio; case_ run --parse-only bad4.fio
printf '[a]\ninclude nosuch.fio\n' > bad5.fio; case_ run --parse-only bad5.fio
printf '[a]\nsize=(1+\nfilename=%s/f\n' "$T" > bad6.fio; case_ run --parse-only bad6.fio
printf '[a]\nnosuchoption=3\nfilename=%s/f\n' "$T" > bad7.fio; case_ run --parse-only bad7.fio
case_ run --parse-only nosuchfile.fio
# subcommands
case_ study --quick --bogus; case_ emu simulate --name=a --filename=emu:x25e,size=1q --rw=read
case_ emu simulate --name=a --filename=emu:nosuch --rw=read
case_ emu simulate --name=a --filename=emu:x25e,size=64m,fault_read_error_at=1q --rw=read
case_ emu simulate --name=a --filename=emu:x25e,size=64m,zoned=maybe --rw=read
case_ emu simulate --name=a --filename=emu:x25e,size=64m,zone_size=1q --rw=read
case_ emu simulate --name=a --filename=emu:x25e,size=64m,dram_per_4k_ns=1q --rw=read
case_ characterize --bogus; case_ strategies --bogus; case_ compare
case_ report /nonexistent-dir; case_ history --bogus
case_ run --name=a --filename=/dev/vda --rw=write --bs=4k --size=4k --parse-only
case_ run --output-format=bogus --name=a "$F" --parse-only
case_ run --output=/dev/null/x --name=a "$F" --rw=read --size=4k
case_ run --name=a "$F" --rw=read --size=4k --write_lat_log=/dev/null/x/y
# results' destinations (refused before any I/O)
R="--name=a $F --rw=read --size=4k"
case_ run $R --output=/dev/full; case_ run $R --output=; case_ run $R --output=/tmp/
case_ run $R --output="$T"; case_ run $R --output="$T/no/such/file"
case_ run $R --write_bw_log="$T/no/such/x"; case_ run $R --write_iolog="$T/no/x"
case_ run $R --bandwidth-log="$T/no/x"
case_ study --quick --output="$T/no/such/dir"; case_ strategies --output=/dev/null
case_ characterize emu:x25e --quick --virtual --output="$T/no/such/dir"
case_ report "$T" --output=/dev/null
# checks of the targets (before anything is written)
case_ run $R --directory="$T/nodir" --filename=
case_ run --name=a --directory="$T/nodir" --rw=read --size=4k
case_ run $R --atomic=1 --rw=write --ioengine=io_uring; case_ run $R --numa_cpu_nodes=63
case_ run $R --numa_mem_policy=bind:63; case_ run --name=a --ioengine=null --rw=randwrite --size=64k --bs=4k --sprandom=1 --spr_num_regions=100
case_ run $R --ioengine=mmap --bs=512; case_ run $R --ioengine=e4defrag --donorname="$T/d" --rw=write
case_ run $R --ioengine=io_uring --hipri=1; case_ run $R --ioengine=sync --rw=randtrim --size=64k
# checks across jobs, and a saved verify state
case_ run --parse-only --name=a "$F" --wait_for=a; case_ run --parse-only --name=a "$F" --name=b "$F" --wait_for=c
case_ run --parse-only --name=a "$F" --name=a "$F" --name=b "$F" --wait_for=a
case_ run --parse-only --name=a "$F" --group_reporting --steadystate=iops:5% --name=b "$F" --steadystate=iops:9%
printf 'junk' > "$T/local-a-0-verify.state"
case_ run --name=a "$F" --rw=read --size=64k --verify=crc32c --verify_state_load=1 --verify_only=1
# what the passthrough engines do not implement
U="--name=a $F --ioengine=io_uring_cmd --size=64k"
case_ run $U --rw=read --cmd_type=bsg; case_ run $U --rw=write --pi_chk=GUARD
case_ run $U --rw=write --fdp=1; case_ run $U --rw=randtrim --num_range=8
case_ run $U --rw=write --write_mode=zone_append; case_ run $U --rw=write --zonemode=zbd
case_ run --name=a "$F" --ioengine=sg --size=64k --rw=write --zonemode=zbd
echo "$n cases in $OUT" >&2
