#!/usr/bin/env bash
# Two of Foong et al.'s figures ("Towards SSD-Ready Enterprise Platforms",
# ADMS 2010), reproduced on the kernel-visible emulated drive with the x25e
# preset's timing (root; docs/kernel-drive.md):
#
#   1. What ext4 adds to a 4 KiB direct read at QD 1: the reading thread's
#      CPU per I/O (getrusage: exact, whatever else runs) and the latency,
#      on a file in ext4 on the drive against the raw drive. They found
#      3,400 clocks, under 15 % of the read.
#   2. The buffered path's copy cost per byte: buffered sequential reads of
#      a file already in the page cache at 4, 16, 64 and 256 KiB; the slope
#      of CPU per read against its size. They found about 2.1 clocks a
#      byte, linear in the size.
#
# ROUNDS alternating rounds; prints each round and the medians.
# Usage: ROUNDS=3 RUNTIME=3 bench/foong.sh   (SSDREADY=PATH: that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-3}
if [ -n "${SSDREADY:-}" ]; then B=$SSDREADY; else
  cargo build --release -q
  B=$PWD/target/release/ssdready
fi
work=$(mktemp -d)
mnt=$work/mnt
mkdir "$mnt"
"$B" emu attach x25e,size=1g >"$work/dev" 2>"$work/attach.log" &
pid=$!
cleanup() {
  umount "$mnt" 2>/dev/null || true
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 100); do [ -s "$work/dev" ] && break; sleep 0.1; done
DEV=$(cat "$work/dev")
[ -n "$DEV" ] || { cat "$work/attach.log" >&2; exit 1; }
echo "drive: $DEV ($(head -1 "$work/attach.log" | sed 's/^ssdready: //'))"
run() { # NAME FILE ARGS… → JSON in $work/NAME.json
  local name=$1 file=$2
  shift 2
  "$B" run --quiet --name="$name" --filename="$file" --output-format=json \
    --output="$work/$name.json" "$@"
}
# The raw region read below, written first (an emulated flash page never
# written reads without a flash read).
run fill "$DEV" --rw=write --bs=512k --size=256m --direct=1
mkfs.ext4 -q -F -b 4096 -E nodiscard "$DEV"
mount "$DEV" "$mnt"
run layout "$mnt/f" --rw=write --bs=512k --size=256m --direct=1
cat "$mnt/f" >/dev/null # the page cache holds the file for the buffered reads
for ((r = 0; r < ROUNDS; r++)); do
  # ext4 first on even rounds, raw first on odd ones.
  order=("raw $DEV" "ext4 $mnt/f")
  ((r % 2)) && order=("ext4 $mnt/f" "raw $DEV")
  for o in "${order[@]}"; do
    set -- $o
    run "$1-$r" "$2" --rw=randread --bs=4k --size=256m --direct=1 --runtime="$RUNTIME" --time_based
  done
  for bs in 4k 16k 64k 256k; do
    run "buf$bs-$r" "$mnt/f" --rw=read --bs="$bs" --size=256m --direct=0 --invalidate=0 \
      --runtime="$RUNTIME" --time_based
  done
done
ROUNDS=$ROUNDS WORK=$work python3 - <<'EOF'
import json, os, statistics as st
work, rounds = os.environ["WORK"], int(os.environ["ROUNDS"])
def job(name):
    j = json.load(open(f"{work}/{name}.json"))["jobs"][0]
    c = j["ssdready"]["cpu"]["per_io"]
    return c["process_clocks"], c["process_ns"], j["read"]["lat_ns"]["mean"]
med = lambda xs: st.median(xs)
raw = [job(f"raw-{r}") for r in range(rounds)]
ext = [job(f"ext4-{r}") for r in range(rounds)]
print("\n1. ext4 on a 4 KiB direct read, QD 1 (round by round: clocks per read, latency µs)")
for r in range(rounds):
    print(f"   round {r}: raw {raw[r][0]:8.0f} clk {raw[r][2]/1e3:7.1f} µs | ext4 {ext[r][0]:8.0f} clk {ext[r][2]/1e3:7.1f} µs")
dclk = med([e[0] - w[0] for e, w in zip(ext, raw)])
dlat = med([e[2] - w[2] for e, w in zip(ext, raw)])
share = dlat / med([e[2] for e in ext])
print(f"   ext4 adds {dclk:.0f} clocks of the reading thread's CPU per read (median of {rounds}), "
      f"{dlat/1e3:.1f} µs of latency ({share*100:.1f} % of the read)")
print(f"   Foong et al.: 3,400 clocks, under 15 % of the read; here {dclk/3400:.2f}× their clocks")
sizes = [4096, 16384, 65536, 262144]
print("\n2. The buffered path's copy cost (page-cache hits; clocks per read by size)")
slopes = []
for r in range(rounds):
    pts = [(s, job(f"buf{s//1024}k-{r}")[0]) for s in sizes]
    n = len(pts); mx = sum(s for s, _ in pts) / n; my = sum(c for _, c in pts) / n
    slope = sum((s - mx) * (c - my) for s, c in pts) / sum((s - mx) ** 2 for s, _ in pts)
    resid = max(abs(c - (my + slope * (s - mx))) / c for s, c in pts)
    slopes.append(slope)
    print("   round %d: " % r + ", ".join(f"{s//1024} KiB {c:.0f}" for s, c in pts)
          + f"  → {slope:.3f} clocks/byte (largest deviation from the line {resid*100:.0f} %)")
m = med(slopes)
print(f"   copy cost {m:.3f} clocks per byte (median); Foong et al.: about 2.1, so {2.1/m:.1f}× less today")
EOF
