#!/usr/bin/env bash
# Planted changes: plant a limit whose best change is known, run
# `ssdready study TARGET --quick --try-changes` under it, and judge the
# study's trials (study.json's `trials` section) against fio's own A/B of
# the same change at the trial's own point (rw, bs, depth, threads,
# engine, direct read back from study.json), run in turns: planted then
# changed, changed then planted, … (--pairs pairs of --secs seconds each). A
# queue setting is written for fio's changed runs and put back after
# each; for the cgroup lever fio runs inside the plant's group (planted)
# and outside it (changed).
#
# A grade passes when all of these hold:
#   - the expected lever was tried (the study's trials list holds it);
#   - its gain on its measure agrees with fio's: with s, sd_s the study's
#     mean per-pair change and its standard deviation (percent) and f,
#     sd_f fio's,  |s - f| <= 2*sqrt(sd_s^2 + sd_f^2) + max(5, 0.1*|f|)
#     (the floor: 5 points, or a tenth of fio's gain where that is more,
#     for what two different programs' runs differ by on the same point;
#     a throttle's +1000 % is not known to 1 point by either);
#   - it is first among the trials whose outcome is a real gain (`better`),
#     and is one of them, where fio's own A/B shows a gain (|f| > 2, and
#     |f| > 2*sd_f or every pair's change above 2 % the same way: a gain
#     of +100 % to +400 % in every pair is a gain, however its percents
#     spread); where fio shows none, the study must not call it better;
#   - every /sys/block/LOOP/queue/* file and every planted group's limit
#     files read the same after the study as before.
# The control (a RAM loop device, nothing planted) passes when no trial's
# outcome is `better`.
#
# usage: bench/planted-changes.sh [--bin PATH] [--plants LIST] [--pairs N]
#                                 [--secs S] [--out DIR]
#   plants (default: all that this machine can hold):
#     bfq            the RAM loop device under the bfq scheduler (lever:
#                    scheduler, tried against none)
#     nr-requests    its queue cut to 4 requests (lever: nr-requests)
#     iops-throttle  a read-IOPS limit of 5000 on the study's group
#                    (lever: io-throttle)
#     cpu-quota      a CPU quota of 20 % of one CPU on the study's group
#                    (lever: cpu-quota)
#     cpuset-one     a cpuset of one CPU (needs two; lever: cpuset)
#     max-sectors    max_sectors_kb cut to 4 under large reads (lever:
#                    max-sectors)
#     other-work     a busy loop per CPU at normal priority beside the
#                    study and fio, in this script's session: the study
#                    and fio's jobs measure in sessions of their own, so
#                    the loops weigh as another scheduling group and the
#                    I/O's threads at nice -10 buy nothing against them
#                    (graded as the control: no trial is better)
#     queue-and-quota  two limits at once: the queue cut to 4 requests and
#                    a CPU quota of 50 % of one CPU on the study's group
#                    (graded on the study's combination: the whole set of
#                    changes measured together, against fio's A/B of the
#                    same changes together at the combination's point:
#                    fio outside the group with every queue file at the
#                    set's value, against fio in the group as planted;
#                    each of nr-requests and cpu-quota must be tried;
#                    a quick study held to two minutes, whose trials
#                    have time for the set)
#     control        a RAM loop device, nothing planted: no change helps
#     drive-large    nothing planted: the built-in drive behind the kernel
#                    (`ssdready emu attach nvme-tlc,size=1g`, FUSE + loop),
#                    whose daemon holds large reads short of its model's
#                    bandwidth (lever: large-depth, four times as deep;
#                    fio's A/B adds the same --iodepth). A quick study
#                    tries the changes its first findings point at, which
#                    here come before the large reads', so this plant runs
#                    a full study of 0.5 s runs (about 5 minutes), which
#                    tries every change that applies.
#
# Needs root, fio, losetup, python3. Makes everything under /dev/shm and
# the cgroup hierarchies, and removes it on exit, however it exits; a
# queue setting it planted is written back before its loop device is
# detached (a loop device keeps it). cgroup v1 controllers are used where
# they are mounted, else cgroup v2 (io.max, cpu.max, cpuset.cpus).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=target/release/ssdready
plants=bfq,nr-requests,iops-throttle,cpu-quota,cpuset-one,max-sectors,queue-and-quota,other-work,control,drive-large
pairs=5
secs=2
out=${TMPDIR:-/tmp}/planted-changes-$(date -u +%Y%m%d-%H%M%S)
usage="allowed: --bin PATH, --plants LIST, --pairs N (at least 2), --secs S, --out DIR"
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=${2:?}; shift 2 ;;
    --plants) plants=${2:?}; shift 2 ;;
    --pairs) pairs=${2:?}; shift 2 ;;
    --secs) secs=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    *) echo "planted-changes.sh: unknown argument '$1' ($usage)" >&2; exit 2 ;;
  esac
done
case $pairs in ''|*[!0-9]*) echo "planted-changes.sh: --pairs '$pairs' is not a number ($usage)" >&2; exit 2 ;; esac
[ "$pairs" -ge 2 ] || { echo "planted-changes.sh: --pairs $pairs: at least 2 (a spread needs two)" >&2; exit 2; }
case $secs in ''|*[!0-9]*|0) echo "planted-changes.sh: --secs '$secs' is not a whole number of seconds above 0 ($usage)" >&2; exit 2 ;; esac
IFS=, read -r -a list <<<"$plants"
for p in "${list[@]}"; do
  case $p in bfq|nr-requests|iops-throttle|cpu-quota|cpuset-one|max-sectors|queue-and-quota|other-work|control|drive-large) ;;
    *) echo "planted-changes.sh: unknown plant '$p' (allowed: bfq, nr-requests, iops-throttle, cpu-quota, cpuset-one, max-sectors, queue-and-quota, other-work, control, drive-large)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "planted-changes.sh: needs root (cgroups, loop devices)" >&2; exit 2; }
for t in fio losetup python3; do
  command -v $t >/dev/null || { echo "planted-changes.sh: needs $t" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "planted-changes.sh: no ssdready binary at $bin (cargo build --release)" >&2; exit 2; }
bin=$(realpath "$bin")
# A directory of an earlier run would have its study.json graded again.
[ -e "$out" ] && { echo "planted-changes.sh: --out '$out' exists; name a new directory" >&2; exit 2; }
mkdir -p "$out"

# ---- what is made, and its removal -----------------------------------
# queue_back: "FILE VALUE" lines, written back (last first) before the
# loop devices are detached.
loops=() groups=() files=() queue_back=() hogs=() drives=()
cleanup() {
  local i
  # An attached drive detaches on SIGINT, as on Ctrl-C.
  for d in "${drives[@]}"; do kill -INT "$d" 2>/dev/null || true; done
  for d in "${drives[@]}"; do
    for i in $(seq 1 100); do kill -0 "$d" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$d" 2>/dev/null || true
  done
  for h in "${hogs[@]}"; do kill "$h" 2>/dev/null || true; done
  for ((i = ${#queue_back[@]} - 1; i >= 0; i--)); do
    echo "${queue_back[i]#* }" >"${queue_back[i]%% *}" 2>/dev/null || true
  done
  for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
  for g in "${groups[@]}"; do
    [ -f "$g/cgroup.procs" ] && while read -r p; do echo "$p" >"$(dirname "$g")/cgroup.procs" 2>/dev/null || true; done <"$g/cgroup.procs"
    rmdir "$g" 2>/dev/null || true
  done
  for f in "${files[@]}"; do rm -f "$f"; done
  hogs=() drives=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The makers set $made rather than print: a command substitution would
# run them in a subshell, and what they make would escape the cleanup.
ram_loop() { # a RAM loop device of 1 GiB, in $made
  local f=/dev/shm/planted-changes-$$-${#files[@]}
  truncate -s 1G "$f"; files+=("$f")
  local l; l=$(losetup --direct-io=on --show -f "$f"); loops+=("$l")
  dd if=/dev/zero of="$l" bs=1M count=1024 oflag=direct status=none
  made=$l
}

# drive_attach: the built-in drive behind the kernel, its device in $made;
# its daemon (`emu attach`, in the foreground) is stopped by the cleanup.
drive_attach() {
  local f=/dev/shm/planted-changes-$$-attach i
  files+=("$f" "$f.err")
  "$bin" emu attach nvme-tlc,size=1g >"$f" 2>"$f.err" & drives+=("$!")
  for i in $(seq 1 300); do [ -s "$f" ] && break; sleep 0.1; done
  made=$(head -1 "$f")
  [ -b "$made" ] || { echo "drive-large: emu attach gave no device ($(tail -1 "$f.err"))" >&2; made=""; }
}

v1=0; [ -f /sys/fs/cgroup/blkio/cgroup.procs ] && v1=1
group() { # group CONTROLLER NAME: make it, its directory in $made
  local base
  if [ $v1 = 1 ]; then base=/sys/fs/cgroup/$1; else base=/sys/fs/cgroup; fi
  local g=$base/planted-changes-$$-$2
  mkdir -p "$g"; groups+=("$g"); made=$g
}

# hogs_on: a busy loop per CPU at normal priority, killed by the cleanup.
hogs_on() {
  local i
  for i in $(seq 1 "$(nproc)"); do yes >/dev/null & hogs+=("$!"); done
}

# plant_queue DEV ATTR VALUE: write it, the value it had kept for cleanup.
plant_queue() {
  local f=/sys/block/$(basename "$1")/queue/$2 was
  was=$(cat "$f")
  [ "$2" = scheduler ] && was=$(sed 's/.*\[\(.*\)\].*/\1/' <<<"$was")
  queue_back+=("$f $was")
  echo "$3" >"$f"
}

# run_in GROUPS... -- CMD: run CMD with its process in every group given.
run_in() {
  local gs=()
  while [ "$1" != -- ]; do gs+=("$1"); shift; done; shift
  local enter=""
  for g in "${gs[@]}"; do enter+="echo \$\$ > $g/cgroup.procs; "; done
  sh -c "$enter exec \"\$@\"" sh "$@"
}

# snapshot DEV GROUPS...: every queue file's text and the groups' limits.
snapshot() {
  local d; d=$(basename "$1"); shift
  grep -H . /sys/block/"$d"/queue/* 2>/dev/null || true
  for g in "$@"; do
    for f in blkio.throttle.read_iops_device blkio.throttle.read_bps_device io.max \
             cpu.cfs_quota_us cpu.cfs_period_us cpu.max cpuset.cpus cpuset.mems; do
      if [ -f "$g/$f" ]; then printf '%s: ' "$g/$f"; tr '\n' ' ' <"$g/$f"; echo; fi
    done
  done
}

# ---- fio's own A/B at the trial's point ------------------------------
# fio_job DIR LEVER: fio's options for the trial of LEVER (or, with "-",
# the first trial) read from DIR/study.json; also its attr, from, to and
# measure, in DIR/trial.env.
fio_job() {
  python3 - "$1/study.json" "$2" >"$1/trial.env" <<'EOF'
import json, shlex, sys
doc = json.load(open(sys.argv[1]))
want = sys.argv[2]
ts = (doc.get("trials") or {}).get("trials") or []
t = next((t for t in ts if want in ("-", t["lever"])), None)
c = (doc.get("trials") or {}).get("combination")
if want == "combination":
    # The whole set, measured together at the combination's point.
    whole = next((s for s in (c or {}).get("sets", []) if not s.get("single")), None)
    if whole is None:
        print("found=0"); sys.exit()
    t = {"point": c["point"], "baseline_options": whole["baseline_options"],
         "lever": "combination", "kind": "combination", "from": "", "to": "",
         "measure": c["measure"]}
    sets = [f"{m['attr']}={m['value']}" for m in c["changes"] if m.get("attr")]
    cg = int(any(m["kind"] == "cgroup" for m in c["changes"]))
    print("queue_set=(" + " ".join(shlex.quote(x) for x in sets) + f") cgroup_member={cg}")
if t is None:
    print("found=0"); sys.exit()
p = t["point"]
opts = {}
for o in t.get("baseline_options", []):
    k, _, v = o.lstrip("-").partition("=")
    opts[k] = v
args = [f"--rw={p['rw']}", f"--bs={p['bs']}", f"--iodepth={p['qd']}",
        f"--numjobs={p['threads']}", f"--ioengine={p.get('engine') or 'io_uring'}",
        f"--direct={1 if p['direct'] else 0}", f"--size={opts.get('size', '512m')}"]
if opts.get("offset"):
    args.append(f"--offset={opts['offset']}")
attr = {"scheduler": "scheduler", "nr-requests": "nr_requests",
        "max-sectors": "max_sectors_kb"}.get(t["lever"], "")
print("found=1")
print(f"lever={shlex.quote(t['lever'])} kind={t['kind']} attr={attr}")
print(f"from={shlex.quote(t['from'])} to={shlex.quote(t['to'])} measure={t['measure']}")
print("fio_args=(" + " ".join(shlex.quote(a) for a in args) + ")")
EOF
}

# fio_once TARGET MEASURE [GROUPS...]: one run of the job in $fio_args,
# its figure on MEASURE. As a forked job, a session of its own, as
# ssdready measures (beside two busy loops in the shell's session, 2 vCPUs,
# 2026-11-29: fio 110-132K IOPS, ssdready 133-152K; in the shell's
# session ssdready gave 156-162K).
fio_once() {
  local t=$1 m=$2; shift 2
  local j
  j=$(run_in "$@" -- fio --name=ab --filename="$t" "${fio_args[@]}" --group_reporting \
    --runtime="$secs" --time_based --output-format=json 2>/dev/null) || { echo 0; return; }
  python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
m = sys.argv[1]
r, w = j["read"], j["write"]
v = {"iops": r["iops"] + w["iops"], "bandwidth": r["bw_bytes"] + w["bw_bytes"],
     "mean": (r if r["io_bytes"] else w)["lat_ns"]["mean"],
     "p99": (r if r["io_bytes"] else w)["clat_ns"].get("percentile", {}).get("99.000000", 0)}.get(m, r["iops"])
print(v)' "$m" <<<"$j"
}

# fio_ab DIR TARGET GROUP: the A/B in turns, one "planted changed" line a
# pair in DIR/fio-ab.txt, the order alternating pair by pair (planted
# first, then changed first), as the study's trials run. Queue levers:
# ATTR written to its trial's value for the changed run and put back; the
# cgroup lever: fio in GROUP, then outside it.
fio_ab() {
  local dir=$1 t=$2 g=${3:-} qf="" i a b
  [ -n "$attr" ] && qf=/sys/block/$(basename "$t")/queue/$attr
  if [ "$kind" != cgroup ] && [ "$kind" != combination ] && [ -z "$qf" ] &&
     ! { [ "$kind" = application ] && [[ $to == *=* ]]; }; then
    return 1
  fi
  : >"$dir/fio-ab.txt"
  for i in $(seq 1 "$pairs"); do
    if [ $((i % 2)) = 1 ]; then
      a=$(planted_run "$t" "$g"); b=$(changed_run "$t" "$qf")
    else
      b=$(changed_run "$t" "$qf"); a=$(planted_run "$t" "$g")
    fi
    echo "$a $b" >>"$dir/fio-ab.txt"
  done
}

# planted_run TARGET GROUP: fio as planted (in the group, for the cgroup
# lever).
planted_run() {
  if [ "$kind" = cgroup ] || { [ "$kind" = combination ] && [ "$cgroup_member" = 1 ]; }; then
    fio_once "$1" "$measure" "$2"
  else
    fio_once "$1" "$measure"
  fi
}

# combined_run TARGET: fio with every change of the set: each queue file
# at the set's value (put back after, the scheduler first as the study
# makes it), outside the group.
combined_run() {
  local q=/sys/block/$(basename "$1")/queue kv was=()
  for kv in "${queue_set[@]}"; do
    was+=("${kv%%=*}=$(sed 's/.*\[\(.*\)\].*/\1/' "$q/${kv%%=*}")")
    echo "${kv#*=}" >"$q/${kv%%=*}"
  done
  fio_once "$1" "$measure"
  for kv in "${was[@]}"; do echo "${kv#*=}" >"$q/${kv%%=*}"; done
}

# changed_run TARGET QUEUEFILE: fio with the trial's change: outside the
# group, with the queue file at its trial's value (put back after), or
# with the trial's job options (k=v …) added. Run in $(…): what it changes
# in fio_args stays in its subshell.
changed_run() {
  local o
  if [ "$kind" = combination ]; then
    combined_run "$1"
  elif [ "$kind" = cgroup ]; then
    fio_once "$1" "$measure"
  elif [ -n "$2" ]; then
    echo "$to" >"$2"
    fio_once "$1" "$measure"
    echo "$from" >"$2"
  else
    for o in $to; do fio_args+=("--$o"); done
    fio_once "$1" "$measure"
  fi
}

# ---- the grade ---------------------------------------------------------
grade() { # grade PLANT DIR LEVER SNAPSHOT-SAME
  python3 - "$@" <<'EOF'
import json, math, os, statistics as st, sys
plant, d, want, same = sys.argv[1:5]
row = lambda *c: print("\t".join(str(x) for x in c))
try:
    doc = json.load(open(d + "/study.json"))
except Exception as e:
    row(plant, want, "-", "-", "-", "-", f"FAIL: no study.json ({e})"); sys.exit()
ts = (doc.get("trials") or {}).get("trials") or []
better = [t for t in ts if t["outcome"] == "better"]
fio = []
if os.path.exists(d + "/fio-ab.txt"):
    for l in open(d + "/fio-ab.txt"):
        a, b = map(float, l.split())
        if a > 0 and b > 0:
            fio.append(100 * (b / a - 1))
f = st.mean(fio) if fio else None
sdf = st.stdev(fio) if len(fio) >= 2 else None
fio_s = f"{f:+.1f} ± {sdf:.1f} %" if f is not None and sdf is not None else "-"
fails = []
if same != "yes":
    fails.append("a queue or group setting differs after the study")
def gain(t):
    return next((g for g in t.get("gains", []) if g["metric"] == t["measure"]), None)
if want == "-":  # the control
    t = ts[0] if ts else None
    g = gain(t) if t else None
    if better:
        fails.append(f"{better[0]['lever']} called a gain")
    study_s = f"{g['change_pct']:+.1f} ± {g['spread_pct']:.1f} %" if g else "-"
    change = f"{t['from']} → {t['to']}" if t else "-"
    row(plant, t["lever"] if t else "(none tried)", change, study_s, fio_s,
        f"{len(better)} of {len(ts)}", "pass" if not fails else "FAIL: " + "; ".join(fails))
    sys.exit()
if want == "combination":
    c = (doc.get("trials") or {}).get("combination") or {}
    whole = next((s for s in c.get("sets", []) if not s.get("single")), None)
    tried = {t["lever"] for t in ts}
    for need in ("nr-requests", "cpu-quota"):
        if need not in tried:
            fails.append(f"{need} not tried")
    if whole is None:
        why = c.get("not_measured") or "no combination" if c else "no combination"
        row(plant, want, "-", "-", fio_s, "-", "FAIL: " + "; ".join(fails + [f"the set was not measured ({why})"]))
        sys.exit()
    t = dict(whole, lever="combination", measure=c["measure"], outcome=whole["outcome"],
             **{"from": "as planted", "to": " + ".join(whole["levers"])})
    ts = [t]
    better = [t] if t["outcome"] == "better" else []
else:
    t = next((t for t in ts if t["lever"] == want), None)
if t is None:
    un = [u["why"] for u in (doc.get("trials") or {}).get("untested", []) if u["lever"] == want]
    why = un[0] if un else "not among the levers tried: " + ", ".join(x["lever"] for x in ts)
    row(plant, want, "-", "-", fio_s, "-", f"FAIL: not tried ({why})"); sys.exit()
g = gain(t)
s, sds = (g["change_pct"], g["spread_pct"]) if g else (None, None)
study_s = f"{s:+.1f} ± {sds:.1f} % ({t['outcome']})" if g else f"- ({t['outcome']})"
rank = f"{better.index(t) + 1} of {len(better)}" if t in better else f"- of {len(better)}"
if g is None:
    fails.append("no gain measured")
if f is None or sdf is None:
    fails.append("no fio A/B")
if g is not None and f is not None and sdf is not None:
    allowed = 2 * math.sqrt(sds ** 2 + sdf ** 2) + max(5.0, 0.1 * abs(f))
    if abs(s - f) > allowed:
        fails.append(f"differs from fio's by {abs(s - f):.1f} points (allowed {allowed:.1f})")
    fio_gain = abs(f) > 2 and (abs(f) > 2 * sdf or all(x > 2 for x in fio) or all(x < -2 for x in fio))
    if fio_gain and f > 0:
        if t not in better:
            fails.append(f"fio sees a gain, the study says {t['outcome']}")
        elif better[0] is not t:
            fails.append(f"ranked after {better[0]['lever']}")
    elif not fio_gain and t in better:
        fails.append("fio sees no gain, the study calls it better")
row(plant, want, f"{t['from']} → {t['to']}", study_s, fio_s, rank,
    "pass" if not fails else "FAIL: " + "; ".join(fails))
EOF
}

printf 'plant\tlever\tchange\tstudy gain\tfio gain\trank among gains\tgrade\n' >"$out/grades.tsv"
plant() { # plant NAME: set it up, study it, A/B it with fio, grade it, tear it down
  local name=$1 dir="$out/$1"
  mkdir -p "$dir"
  local target="" gs=() want="" mm study_env=() study_opts=(--quick)
  if [ "$name" = drive-large ]; then drive_attach; else ram_loop; fi
  target=$made
  [ -n "$target" ] || { cleanup; loops=() groups=() files=() queue_back=(); return 0; }
  mm=$(lsblk -dno MAJ:MIN "$target" | tr -d ' ')
  case $name in
    bfq) plant_queue "$target" scheduler bfq; want=scheduler ;;
    # 4 is the least the block layer takes (BLKDEV_MIN_RQ).
    nr-requests) plant_queue "$target" nr_requests 4; want=nr-requests ;;
    max-sectors) plant_queue "$target" max_sectors_kb 4; want=max-sectors ;;
    iops-throttle)
      group blkio "$name"; gs=("$made")
      if [ $v1 = 1 ]; then echo "$mm 5000" >"${gs[0]}/blkio.throttle.read_iops_device"
      else echo "+io" >/sys/fs/cgroup/cgroup.subtree_control; echo "$mm riops=5000" >"${gs[0]}/io.max"; fi
      want=io-throttle ;;
    cpu-quota)
      group cpu "$name"; gs=("$made")
      if [ $v1 = 1 ]; then echo 100000 >"${gs[0]}/cpu.cfs_period_us"; echo 20000 >"${gs[0]}/cpu.cfs_quota_us"
      else echo "+cpu" >/sys/fs/cgroup/cgroup.subtree_control; echo "20000 100000" >"${gs[0]}/cpu.max"; fi
      want=cpu-quota ;;
    cpuset-one)
      [ "$(nproc)" -ge 2 ] || { echo "cpuset-one: needs two CPUs, skipped" >&2; cleanup; loops=() groups=() files=() queue_back=(); return 0; }
      group cpuset "$name"; gs=("$made")
      [ $v1 = 0 ] && echo "+cpuset" >/sys/fs/cgroup/cgroup.subtree_control
      [ -f "${gs[0]}/cpuset.mems" ] && cat "$(dirname "${gs[0]}")/cpuset.mems" >"${gs[0]}/cpuset.mems"
      echo 0 >"${gs[0]}/cpuset.cpus"
      want=cpuset ;;
    queue-and-quota)
      plant_queue "$target" nr_requests 4
      group cpu "$name"; gs=("$made")
      if [ $v1 = 1 ]; then echo 100000 >"${gs[0]}/cpu.cfs_period_us"; echo 50000 >"${gs[0]}/cpu.cfs_quota_us"
      else echo "+cpu" >/sys/fs/cgroup/cgroup.subtree_control; echo "50000 100000" >"${gs[0]}/cpu.max"; fi
      # A quick study's 75 s leave its trials no time for a set of two
      # behind three single trials: two minutes do.
      want=combination; study_opts=(--quick --budget 2m) ;;
    other-work) hogs_on; want=- ;;
    control) want=- ;;
    drive-large) want=large-depth; study_env=(SSDREADY_STUDY_RUNTIME=0.5); study_opts=(--budget 6m) ;;
  esac
  snapshot "$target" "${gs[@]}" >"$dir/before.txt"
  run_in "${gs[@]}" -- env "${study_env[@]}" "$bin" study "$target" "${study_opts[@]}" --try-changes --quiet --output "$dir" \
    >"$dir/study.txt" 2>"$dir/study.err" || true
  snapshot "$target" "${gs[@]}" >"$dir/after.txt"
  local same=no
  cmp -s "$dir/before.txt" "$dir/after.txt" && same=yes
  # fio's A/B of the same change at the trial's own point.
  local found=0 lever="" kind="" attr="" from="" to="" measure="" fio_args=() queue_set=() cgroup_member=0
  if [ -f "$dir/study.json" ]; then
    fio_job "$dir" "$want"
    # shellcheck disable=SC1091
    . "$dir/trial.env"
  fi
  if [ "$found" = 1 ]; then
    fio_ab "$dir" "$target" "${gs[0]:-}" || echo "$name: no fio A/B for lever $lever" >&2
  fi
  grade "$name" "$dir" "$want" "$same" | tee -a "$out/grades.tsv"
  # Each plant's device, groups and settings go before the next is made.
  cleanup; loops=() groups=() files=() queue_back=()
  return 0
}

for p in "${list[@]}"; do plant "$p"; done
echo
column -t -s $'\t' "$out/grades.tsv"
echo "results: $out"
