#!/usr/bin/env bash
# cgroup v2 limits, planted in the lab VM and lifted by the study's trial.
# This project's machines hold their controllers in cgroup v1, so the v2
# path of `--try-changes` (measuring from a group of ssdready's own at the
# v2 root) is run where v2 is the only hierarchy: Debian's kernel under
# QEMU (bench/lab-vm.sh), a null_blk device, cgroup2 mounted alone.
#
# For each plant (an `io.max` read-IOPS limit of 2000; a `cpu.max` quota of
# 20 % of one CPU) on a group `planted` that the study runs in:
#   1. fio's own A/B in turns (--pairs pairs of 1 s runs, 4 KiB random
#      reads, io_uring, QD 8): inside the group, then from the v2 root;
#   2. `ssdready study /dev/nullb0 --quick --try-changes` inside the group;
#   3. every file of the group and the root's list of groups read before
#      and after.
# A plant passes when fio sees the limit hold (its rate outside the group
# at least twice its rate inside, in every pair), the study names the
# limit (io_throttle / cpu_quota), its own lever's trial (`io-throttle`,
# `cpu-quota`: that limit lifted alone) is `better`
# with its gain beyond noise, and nothing read differs afterwards. The
# study's gain and fio's are printed side by side; they are not held to
# one another (under software emulation the two engines' CPU per I/O
# differs several times, and outside the group the CPU is the limit).
#
# usage: bench/lab-cgroup-v2.sh [--bin PATH] [--pairs N] [--out DIR]
# Needs what bench/lab-vm.sh needs (QEMU, the cached Debian kernel) and
# fio on this machine (copied into the guest).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/ssdready pairs=3
out=${TMPDIR:-/tmp}/lab-cgroup-v2-$(date -u +%Y%m%d-%H%M%S)
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=${2:?}; shift 2 ;;
    --pairs) pairs=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    *) echo "lab-cgroup-v2: unknown option '$1' (allowed: --bin, --pairs, --out)" >&2; exit 2 ;;
  esac
done
[[ $pairs =~ ^[1-9][0-9]*$ ]] || { echo "lab-cgroup-v2: --pairs '$pairs': a whole number above 0" >&2; exit 2; }
[ -x "$bin" ] || { echo "lab-cgroup-v2: --bin '$bin': no such executable (cargo build --release)" >&2; exit 2; }
[ -e "$out" ] && { echo "lab-cgroup-v2: --out '$out' exists; name a new directory" >&2; exit 2; }
mkdir -p "$out"
script=$out/guest.sh
cat >"$script" <<EOF
pairs=$pairs
EOF
cat >>"$script" <<'EOF'
mount -t cgroup2 none /sys/fs/cgroup
echo "+io +cpu" >/sys/fs/cgroup/cgroup.subtree_control
mm=$(cat /sys/block/nullb0/dev)
ab() {
  i=1
  while [ $i -le "$pairs" ]; do
    for side in in out; do
      sh -c "[ $side = out ] && echo \$\$ >/sys/fs/cgroup/cgroup.procs
        exec fio --name=ab --filename=/dev/nullb0 --rw=randread --bs=4k --iodepth=8 \
          --ioengine=io_uring --direct=1 --runtime=1 --time_based \
          --output-format=json --output=$1/fio-$side-$i.json"
    done
    i=$((i + 1))
  done
}
snap() { (cd /sys/fs/cgroup/planted && for f in io.max cpu.max cgroup.subtree_control; do echo "$f: $(cat $f)"; done; ls /sys/fs/cgroup) >"$1"; }
for plant in io-max cpu-max; do
  lab_step "$plant"
  mkdir -p "$plant" /sys/fs/cgroup/planted
  case $plant in
    io-max) echo "$mm riops=2000" >/sys/fs/cgroup/planted/io.max ;;
    cpu-max) echo "20000 100000" >/sys/fs/cgroup/planted/cpu.max ;;
  esac
  snap "$plant/before"
  echo $$ >/sys/fs/cgroup/planted/cgroup.procs
  ab "$plant"
  SSDREADY_STUDY_RUNTIME=0.5 ssdready study /dev/nullb0 --quick --try-changes --quiet \
    --output "$plant/study" || echo $? >"$plant/study-exit"
  echo $$ >/sys/fs/cgroup/cgroup.procs
  snap "$plant/after"
  ls /run/ssdready/settings >"$plant/journal-after" 2>&1 || true
  rmdir /sys/fs/cgroup/planted
done
lab_step done
EOF
code=0
bench/lab-vm.sh --device null_blk --with-fio --ssdready "$bin" --script "$script" \
  --out "$out" --limit 900 || code=$?
[ $code = 0 ] || { echo "lab-cgroup-v2: the lab VM exited $code (see $out/lab-console.log)" >&2; exit "$code"; }
python3 - "$out" "$pairs" <<'PY'
import json, os, sys
out, pairs = sys.argv[1], int(sys.argv[2])
want = {"io-max": "io_throttle", "cpu-max": "cpu_quota"}
fails_all = 0
for plant, cause in want.items():
    d = os.path.join(out, plant)
    fails = []
    iops = lambda side, i: json.load(open(f"{d}/fio-{side}-{i}.json"))["jobs"][0]["read"]["iops"]
    fin = [iops("in", i) for i in range(1, pairs + 1)]
    fout = [iops("out", i) for i in range(1, pairs + 1)]
    if not all(o >= 2 * i for i, o in zip(fin, fout)):
        fails.append("fio saw no cap")
    fio_gain = 100 * (sum(o / i for i, o in zip(fin, fout)) / pairs - 1)
    if os.path.exists(f"{d}/study-exit"):
        fails.append(f"the study exited {open(d + '/study-exit').read().strip()}")
        s = {}
    else:
        s = json.load(open(f"{d}/study/study.json"))
    sat = s.get("figures", {}).get("saturation", {})
    if sat.get("limit") != cause:
        fails.append(f"the study named {sat.get('limit')}, not {cause}")
    lever = {"io_throttle": "io-throttle", "cpu_quota": "cpu-quota"}[cause]
    t = next((t for t in s.get("trials", {}).get("trials", []) if t["lever"] == lever), None)
    g = t and next((g for g in t["gains"] if g["metric"] == t["measure"]), None)
    if not g:
        fails.append(f"no {lever} trial")
    elif not (t["outcome"] == "better" and g["beyond_noise"]):
        fails.append(f"the trial was {t['outcome']}")
    if open(f"{d}/before").read() != open(f"{d}/after").read():
        fails.append("a cgroup file or the list of groups changed")
    study = f"{g['baseline']/1e3:.1f}K → {g['change']/1e3:.1f}K IOPS, {g['change_pct']:+.0f} % ± {g['spread_pct']:.0f} %" if g else "-"
    print(f"{plant}: fio inside {min(fin)/1e3:.1f}–{max(fin)/1e3:.1f}K, outside {min(fout)/1e3:.1f}–{max(fout)/1e3:.1f}K ({fio_gain:+.0f} %);"
          f" study {sat.get('limit')}, trial {study}: {'pass' if not fails else 'FAIL: ' + '; '.join(fails)}")
    fails_all += bool(fails)
sys.exit(1 if fails_all else 0)
PY
