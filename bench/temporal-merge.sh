#!/usr/bin/env bash
# Shin's table on the emulated DRAM SSD: Async+Intr, Sync+Poll, STM+Poll
# and ATM+Poll for sequential and random 4 KiB reads and writes, as % of the
# device's peak (its DRAM unit's rate, 4 KiB per dram_per_4k_ns: 731 MB/s),
# beside the paper's figures.
#
# Virtual time (ssdready emu simulate): deterministic, and the host is a
# model — its costs are the HOST parameters below, Shin's own figures
# (shared/notes/ssd-models.md): about 5 µs of software per request on the
# polled path and 20 µs with interrupts, i.e. 5 µs to issue a command
# (host_cmd_ns, paid once per command, merged or not), 15 µs more from an
# interrupt to the thread (irq_ns), and a sleeping thread's wake-up (wake_ns,
# an assumption: 5 µs). What the emulator adds is everything else: the
# device (one command at a time, 2 µs + 5.6 µs per 4 KiB), how many requests
# each layer gathers, and what that does to throughput and latency.
#
#   async+intr  completion=irq,  one command per request
#   sync+poll   completion=poll, one command per request
#   stm+poll    temporal_merge=stm (winner polls, losers sleep)
#   atm+poll    temporal_merge=atm, merge_max=THREADS (the dispatcher sends
#               a command as soon as every thread's request is queued, like
#               Shin's tuned unplug threshold), dispatcher and requesters poll
#
# Then: merge count, % of peak and added latency against the thread count
# (STM and ATM, random reads; atm64+poll is ATM with the default merge_max of
# 64, so that every command waits out its 20 µs window); and sequential reads
# in 128 KiB requests (what Linux readahead made of Shin's sequential Iozone
# reads).
#
# REAL=1 also runs the matrix in real time (ssdready run: this machine's own
# host costs, not the model's; needs a free CPU per thread to mean anything).
# Usage: bench/temporal-merge.sh   (THREADS=16 RUNTIME=1 HOST=... REAL=0)
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-16}
RUNTIME=${RUNTIME:-1}
HOST=${HOST:-host_cmd_ns=5us,irq_ns=15us,wake_ns=5us}
REAL=${REAL:-0}
# SSDREADY=PATH runs that binary as it is (a machine without cargo).
if [ -n "${SSDREADY:-}" ]; then B=$SSDREADY; else
  cargo build --release -q
  B=$PWD/target/release/ssdready
fi
DEV="emu:dram-ssd,size=1g"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# One run: CMD (simulate|run) PATTERN STRATEGY THREADS BS -> "pct merge added_us lat_us"
one() {
  local cmd=$1 pattern=$2 strategy=$3 threads=$4 bs=${5:-4k}
  local rw completion merge extra=()
  case $pattern in
    seqread) rw=read ;; seqwrite) rw=write ;; randread) rw=randread ;; randwrite) rw=randwrite ;;
  esac
  case $strategy in
    async+intr) completion=irq merge=off ;;
    sync+poll) completion=poll merge=off ;;
    stm+poll) completion=poll merge=stm ;;
    atm+poll) completion=poll merge=atm extra=(--merge_max="$threads") ;;
    atm64+poll) completion=poll merge=atm ;; # merge_max 64: every command waits its window
  esac
  local host=",$HOST"
  local sub=(emu simulate)
  if [[ $cmd == run ]]; then sub=(run); host=",nocopy=1"; fi
  "$B" "${sub[@]}" --quiet --output-format=native --name=j --filename="$DEV,completion=$completion$host" \
    --rw="$rw" --bs="$bs" --numjobs="$threads" --runtime="$RUNTIME" --time_based \
    --temporal_merge="$merge" "${extra[@]}" > "$TMP/r.json"
  python3 - "$TMP/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
j = r['jobs'][0]
d = j['read'] or j['write']
p = dict(r['emulator']['params'])
peak = 4096 / (int(p['dram_per_4k_ns']) * 1e-9)   # the DRAM unit's rate, B/s
m = j.get('temporal_merge')
merge = m['mean_extents'] if m else 1.0
added = (m['window_wait']['mean_ns'] + m['issue_wait']['mean_ns']) / 1e3 if m else 0.0
print(f"{100 * d['bw_bytes_per_s'] / peak:.0f} {merge:.1f} {added:.1f} {d['lat']['mean_ns'] / 1e3:.1f}")
PY
}

matrix() {
  local cmd=$1
  printf '  %-11s %8s %8s %8s %8s   | Shin: %s\n' strategy seq-read seq-write rand-read rand-write "Seq.R Seq.W Rand.R Rand.W"
  local -A seed=(
    [async+intr]="82% 68% 22% 28%" [sync+poll]="93% 44% 46% 45%"
    [stm+poll]="100% 85% 88% 92%" [atm+poll]="95% 100% 43% 96%"
  )
  for s in async+intr sync+poll stm+poll atm+poll; do
    printf '  %-11s' "$s"
    for p in seqread seqwrite randread randwrite; do
      read -r pct merge _ _ < <(one "$cmd" "$p" "$s" "$THREADS")
      printf ' %7s%%' "$pct"
    done
    printf '   | %s\n' "${seed[$s]}"
  done
}

echo "== Shin's table, virtual time: $DEV, $THREADS threads, 4 KiB, host $HOST (% of the device's peak)"
matrix simulate

echo "== merge count and added latency against threads (random 4 KiB reads, virtual time)"
printf '  %-8s %-10s %6s %7s %10s %10s\n' threads strategy peak merge "added µs" "lat µs"
for t in 1 2 4 8 16 32; do
  for s in sync+poll stm+poll atm+poll atm64+poll; do
    read -r pct merge added lat < <(one simulate randread "$s" "$t")
    printf '  %-8s %-10s %5s%% %7s %10s %10s\n' "$t" "$s" "$pct" "$merge" "$added" "$lat"
  done
done

echo "== sequential reads in 128 KiB requests (readahead-sized), virtual time"
for s in async+intr sync+poll; do
  read -r pct _ _ lat < <(one simulate seqread "$s" "$THREADS" 128k)
  printf '  %-11s %5s%% of peak, mean latency %s µs\n' "$s" "$pct" "$lat"
done

if [[ $REAL == 1 ]]; then
  echo "== Shin's table, real time on this machine ($(nproc) CPUs; the host costs are this machine's)"
  matrix run
fi
