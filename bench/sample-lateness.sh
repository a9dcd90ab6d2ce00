#!/usr/bin/env bash
# Where the sampling profile's busy time goes on a VM at QD 1: records, with
# ftrace (mono clock), every expiry of perf's sampling timer
# (perf_swevent_hrtimer: when it was due, from hrtimer_start, and when it
# ran, from hrtimer_expire_entry) and every cpu_idle entry and exit, during
# a `--profile=exact` run (4 KiB random reads, loop device over /dev/shm,
# direct). Each sample is then classed by the CPU's state when the timer
# was due and when it ran: a sample due in busy code that runs after the
# vCPU has halted is charged to idle (busy time lost), one due while halted
# that runs in the wake-up path is charged to busy code (busy time gained).
# Needs root and python3. Usage: ENGINE=psync QD=1 RUNTIME=3 bench/sample-lateness.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ENGINE=${ENGINE:-psync}
QD=${QD:-1}
RUNTIME=${RUNTIME:-3}
B=${SSDREADY:-target/fast/ssdready}
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
DEV=$("$B" ramdev create --kind=loop --size=512m 2>/dev/null)
OUT=$(mktemp -d)
cleanup() {
  echo 0 >$T/tracing_on
  echo 0 >$T/events/enable
  for e in timer/hrtimer_start timer/hrtimer_expire_entry; do echo 0 >$T/events/$e/filter; done
  echo local >$T/trace_clock
  "$B" ramdev remove "$DEV" >/dev/null 2>&1 || true
}
trap cleanup EXIT
FN=0x$(awk '$3=="perf_swevent_hrtimer"{print $1; exit}' /proc/kallsyms)
echo 0 >$T/tracing_on
echo >$T/trace
echo mono >$T/trace_clock
echo 65536 >$T/buffer_size_kb
for e in timer/hrtimer_start timer/hrtimer_expire_entry; do
  echo "function == $FN" >$T/events/$e/filter
  echo 1 >$T/events/$e/enable
done
echo 1 >$T/events/power/cpu_idle/enable
echo 1 >$T/tracing_on
"$B" run --output-format=native --quiet --name=t --filename="$DEV" --rw=randread --bs=4k \
  --direct=1 --ioengine="$ENGINE" --iodepth="$QD" --runtime="$RUNTIME" --time_based \
  --profile=exact >"$OUT/run.json"
echo 0 >$T/tracing_on
cat $T/trace >"$OUT/trace.txt"
python3 - "$OUT/run.json" "$OUT/trace.txt" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1])); ph = r["phases"][0]; p = ph["profile"]; e = p["exact"]
ios = ph["cpu"]["ios"]
due = {}          # (cpu, hrtimer) -> expires (ns)
idle = {}         # cpu -> [(t, entering)]
samples = []      # (cpu, due, ran)
for line in open(sys.argv[2]):
    m = re.search(r"\[(\d+)\].*?\s(\d+)\.(\d+): (\w+): (.*)", line)
    if not m: continue
    cpu = int(m.group(1)); t = int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0")[:9])
    ev, rest = m.group(4), m.group(5)
    if ev == "cpu_idle":
        st = int(re.search(r"state=(\d+)", rest).group(1))
        idle.setdefault(cpu, []).append((t, st != 4294967295))
    elif ev == "hrtimer_start":
        h = re.search(r"hrtimer=(\w+)", rest).group(1)
        due[(cpu, h)] = int(re.search(r"expires=(\d+)", rest).group(1))
    elif ev == "hrtimer_expire_entry":
        h = re.search(r"hrtimer=(\w+)", rest).group(1)
        now = int(re.search(r"now=(\d+)", rest).group(1))
        if (cpu, h) in due: samples.append((cpu, due.pop((cpu, h)), now))
import bisect
def halted(cpu, t):
    ev = idle.get(cpu, []); i = bisect.bisect_right(ev, (t, True)) - 1
    return i >= 0 and ev[i][1]
cls = {}
late = {True: [], False: []}
for cpu, d, ran in samples:
    a, b = halted(cpu, d), halted(cpu, ran - 1)
    cls[(a, b)] = cls.get((a, b), 0) + 1
    late[a].append(ran - d)
n = len(samples)
name = {(False, False): "due busy, ran busy", (False, True): "due busy, ran in idle (busy lost)",
        (True, False): "due halted, ran busy (busy gained)", (True, True): "due halted, ran in idle"}
print(f"{n} sampling-timer expiries; {ios} I/Os; exact busy {e['busy_ns_per_io']:.0f} ns/IO, "
      f"sampled {p['busy_ns_per_io']:.0f}, system {ph['cpu']['per_io']['system_ns']:.0f}")
for k, v in sorted(cls.items()):
    print(f"  {name[k]:<36} {v:6d} ({100*v/max(n,1):.1f}%)")
for a in (False, True):
    l = sorted(late[a])
    if l:
        print(f"  lateness when due {'halted' if a else 'busy'}: median {l[len(l)//2]/1e3:.1f} us, "
              f"p90 {l[int(len(l)*.9)]/1e3:.1f} us, max {l[-1]/1e3:.1f} us")
period = p["period_ns"]
net = (cls.get((False, True), 0) - cls.get((True, False), 0)) * period / max(ios, 1)
print(f"  net busy time the samples' placement loses: {net:.0f} ns/IO (sampled − exact = "
      f"{p['busy_ns_per_io'] - e['busy_ns_per_io']:.0f} ns/IO)")
for g in e["sampled_vs_exact"]:
    print(f"  {g['group']:<40} sampled {g['sampled_ns_per_io']:8.0f}  exact {g['exact_ns_per_io']:8.0f} ns/IO")
print("  exact states:", ", ".join(f"{s['state']} {s['ns_per_io']:.0f}" for s in e["states"] if s["cpu_ns"]))
PY
