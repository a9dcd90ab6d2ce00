#!/usr/bin/env bash
# Planted bottlenecks: plant one limit whose cause nobody disputes, check it
# with fio (the rate with and without it), run `ssdready study` under it,
# and grade the study from its JSON (figures.saturation.limit and .layer),
# never from its wording. Each plant is graded over several runs; with
# --load, one of every two runs has other work on the machine (a `yes`
# loop per CPU, niced, so the plant still holds).
#
# usage: bench/planted.sh [--bin PATH] [--plants LIST] [--runs N] [--load]
#                         [--out DIR] [--quick]
#   plants (default: all that this machine can hold):
#     iops-throttle   blkio/io.max read IOPS limit on a RAM loop device
#     bps-throttle    blkio/io.max read bandwidth limit on the same
#     cpu-quota       CPU quota of 20 % of one CPU on the study's group
#     cpuset-one      a cpuset of one CPU
#     nr-requests     the RAM loop device's queue cut to 4 requests
#     fs-amplify      ext4 of 1 KiB blocks, the file fragmented: 4 device
#                     reads per 4 KiB read
#     other-work      every CPU kept busy by other processes (two `yes`
#                     loops per CPU at the normal priority)
#     idle-work       the same at the lowest priority: one `yes` loop per
#                     CPU at SCHED_IDLE and nice 19
#     shared-iops-throttle  a read IOPS limit of 20,000 on the study's
#                     group, which a neighbour (fio reading the same
#                     device all the time) shares
#     shared-cpu-quota  a CPU quota of half a CPU on the study's group,
#                     which a neighbour (a `yes` loop) shares
#     emu-controller  the built-in drive whose controller is its limit
#     bfq             the RAM loop device under the bfq I/O scheduler
#     disk-backed     a loop device over a file on the root file system's
#                     disk. fio reads the file directly and through the
#                     loop device, in turns: where the loop device gives
#                     70 % of the file or more, the disk (or its
#                     hypervisor) below the host must be named (below_host,
#                     or the stack's member ceiling first); below that,
#                     the loop device's own layer first (the stack's
#                     ceiling, or its slow layer)
#     sparse-file     a file of 256 MiB that was never written (ext4 on a
#                     RAM loop device): refused, with how to lay it out
#     page-cache      a file whose data the page cache holds, on an ext4
#                     mounted data=journal (its direct I/O falls back to
#                     the page cache): "the device was almost never asked"
#     root-default    the README's main command as root (no target: the
#                     built-in drive behind the kernel): a headline about
#                     this platform, never the drive's own transport
#
# Needs root, fio, losetup, mkfs.ext4, python3. Makes everything under
# /dev/shm and the cgroup hierarchies, and removes it on exit, however it
# exits. cgroup v1 controllers are used where they are mounted (this
# project's machines), else cgroup v2 (io.max, cpu.max, cpuset.cpus).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=target/release/ssdready
plants=iops-throttle,bps-throttle,cpu-quota,cpuset-one,nr-requests,fs-amplify,other-work,emu-controller,bfq,disk-backed,idle-work,shared-iops-throttle,shared-cpu-quota,sparse-file,page-cache,root-default
runs=2
load=0
quick=--quick
out=${TMPDIR:-/tmp}/planted-$(date -u +%Y%m%d-%H%M%S)
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --plants) plants=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --load) load=1; shift ;;
    --out) out=$2; shift 2 ;;
    --full) quick=; shift ;;
    *) echo "planted.sh: unknown argument '$1' (allowed: --bin PATH, --plants LIST, --runs N, --load, --out DIR, --full)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "planted.sh: needs root (cgroups, loop devices)" >&2; exit 2; }
for t in fio losetup mkfs.ext4 python3; do
  command -v $t >/dev/null || { echo "planted.sh: needs $t" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "planted.sh: no ssdready binary at $bin (cargo build --release)" >&2; exit 2; }
bin=$(realpath "$bin")
# A directory of an earlier run would have its study.json graded again.
[ -e "$out" ] && { echo "planted.sh: --out '$out' exists; name a new directory" >&2; exit 2; }
mkdir -p "$out"

# ---- what is made, and its removal -----------------------------------
loops=() groups=() mounts=() files=() hogs=()
# A loop device keeps its queue's settings after it is detached: the next
# plant (or user) to attach it would inherit a planted scheduler or queue
# size. Each loop device made here has them read when made and written
# back (the scheduler first: switching it resets nr_requests) before it
# is detached.
declare -A queue_was=()
QUEUE_FILES="scheduler nr_requests max_sectors_kb read_ahead_kb nomerges rq_affinity"
made_loop() { # made_loop DEV: record it and its queue's settings
  local q=/sys/block/$(basename "$1")/queue f
  for f in $QUEUE_FILES; do
    [ -f "$q/$f" ] || continue
    if [ "$f" = scheduler ]; then queue_was[$1/$f]=$(sed 's/.*\[\(.*\)\].*/\1/' "$q/$f");
    else queue_was[$1/$f]=$(cat "$q/$f"); fi
  done
  loops+=("$1")
}
queue_back() { # queue_back DEV: its queue's settings as they were when made
  local q=/sys/block/$(basename "$1")/queue f
  for f in $QUEUE_FILES; do
    [ -n "${queue_was[$1/$f]:-}" ] && echo "${queue_was[$1/$f]}" >"$q/$f" 2>/dev/null || true
  done
}
cleanup() {
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || true; rmdir "$m" 2>/dev/null || true; done
  for l in "${loops[@]}"; do queue_back "$l"; losetup -d "$l" 2>/dev/null || true; done
  for g in "${groups[@]}"; do
    # Move anything left back to the root group, then remove the group.
    [ -f "$g/cgroup.procs" ] && while read -r p; do echo "$p" >"$(dirname "$g")/cgroup.procs" 2>/dev/null || true; done <"$g/cgroup.procs"
    rmdir "$g" 2>/dev/null || true
  done
  for f in "${files[@]}"; do rm -f "$f"; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The two makers below set a variable rather than print: a command
# substitution would run them in a subshell, and what they make would
# escape the cleanup's lists.
ram_loop() { # a RAM loop device of 1 GiB, in $made
  local f=/dev/shm/planted-$$-${#files[@]}
  truncate -s 1G "$f"; files+=("$f")
  local l; l=$(losetup --direct-io=on --show -f "$f"); made_loop "$l"
  dd if=/dev/zero of="$l" bs=1M count=1024 oflag=direct status=none
  made=$l
}

v1=0; [ -f /sys/fs/cgroup/blkio/cgroup.procs ] && v1=1
group() { # group CONTROLLER NAME: make it, its directory in $made
  local base
  if [ $v1 = 1 ]; then base=/sys/fs/cgroup/$1; else base=/sys/fs/cgroup; fi
  local g=$base/planted-$$-$2
  mkdir -p "$g"; groups+=("$g"); made=$g
}

# run_in GROUPS... -- CMD: run CMD with its process in every group given.
run_in() {
  local gs=()
  while [ "$1" != -- ]; do gs+=("$1"); shift; done; shift
  local enter=""
  for g in "${gs[@]}"; do enter+="echo \$\$ > $g/cgroup.procs; "; done
  sh -c "$enter exec \"\$@\"" sh "$@"
}

fio_iops() { # fio_iops TARGET [GROUPS...]: 4 KiB random reads at QD 32, 3 s
  local t=$1; shift
  local j size=512m
  # A file is read whole, as it is: fio must not try to extend it.
  [ -f "$t" ] && size=$(stat -c %s "$t")
  j=$(run_in "$@" -- fio --name=p --filename="$t" --rw=randread --bs=4k --direct=1 \
    --ioengine=io_uring --iodepth=32 --runtime=3 --time_based --size="$size" \
    --output-format=json 2>/dev/null)
  python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["iops"]))' <<<"$j"
}

hogs_on() { # hogs_on PER-CPU NICE: other work, yes loops
  local n; n=$(( $(nproc) * $1 ))
  for _ in $(seq 1 "$n"); do nice -n "$2" yes >/dev/null & hogs+=("$!"); done
}
idle_hogs_on() { # idle_hogs_on PER-CPU: yes loops at SCHED_IDLE, nice 19
  local n; n=$(( $(nproc) * $1 ))
  for _ in $(seq 1 "$n"); do nice -n 19 chrt -i 0 yes >/dev/null & hogs+=("$!"); done
}
neighbour() { # neighbour GROUPS... -- CMD: CMD in the groups, running until the plant ends
  # Started here, not through run_in: its id must be CMD's own (sh execs
  # it), for the cleanup to stop it (fio with --thread, so no forked job outlives it).
  local gs=() enter=""
  while [ "$1" != -- ]; do gs+=("$1"); shift; done; shift
  for g in "${gs[@]}"; do enter+="echo \$\$ > $g/cgroup.procs; "; done
  sh -c "$enter exec \"\$@\"" sh "$@" >/dev/null 2>&1 & hogs+=("$!")
  sleep 1
}
hogs_off() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done; hogs=(); }

study() { # study DIR TARGET [GROUPS...] [-- EXTRA ARGS]
  local dir=$1 t=$2; shift 2
  local gs=() extra=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do gs+=("$1"); shift; done
  [ "${1:-}" = -- ] && { shift; extra=("$@"); }
  # No target: the README's main command, the built-in drive.
  local ts=(); [ -n "$t" ] && ts=("$t")
  run_in "${gs[@]}" -- "$bin" study "${ts[@]}" $quick --quiet --output "$dir" "${extra[@]}" \
    >"$dir.txt" 2>"$dir.err" || true
}

grade() { # grade PLANT RUN DIR EXPECTED-CAUSE EXPECTED-LAYER HELD [NAMED]
  # NAMED: words the verdict's part or evidence must hold for a right
  # grade (the neighbour that shares a group, the other work's policy).
  python3 - "$@" <<'EOF'
import json, os, sys
plant, run, d, want, layer, held = sys.argv[1:7]
named = sys.argv[7] if len(sys.argv) > 7 else ""
err = open(d + ".err", errors="replace").read() if os.path.exists(d + ".err") else ""
if want == "refused":
    # Refused: one line on stderr saying how to lay the file out, exit 2
    # (the study's own), nothing written.
    ok = not os.path.exists(d + "/study.json") and "is sparse" in err and "dd if=" in err and len(err.strip().splitlines()) == 1
    print(f"{plant}\t{run}\trefused\t-\t-\t-\t{'right' if ok else 'wrong: ' + err.strip()[:120]}"); sys.exit()
try:
    doc = json.load(open(d + "/study.json"))
except Exception as e:
    print(f"{plant}\t{run}\tno study.json ({e})\t-\t-\t-\twrong"); sys.exit()
firsts = [v for v in doc["verdicts"] if v["rule"] not in ("noisy-machine", "unstable-point")]
if want.startswith("first:") or want == "platform-headline":
    # Graded by the verdict said first: the one named, or (the root
    # default) any verdict about this platform, never the drive's own
    # transport nor a limit below the host.
    v = firsts[0] if firsts else {}
    rule, conf = v.get("rule", "-"), v.get("confidence", "-")
    if want == "platform-headline":
        apparatus = ("below-host-limit", "device-limits-reads", "apparatus-transport-ceiling", "limit-not-identified")
        ok = rule != "-" and not rule.startswith("drive-daemon-limit") and rule not in apparatus
    else:
        ok = rule == want[len("first:"):]
    print(f"{plant}\t{run}\t{rule}\t-\t-\t{conf}\t{'right' if ok else 'wrong'}"); sys.exit()
s = doc["figures"]["saturation"]
got, got_layer = s.get("limit"), s.get("layer")
if want == "loop-layer":
    # The loop device's own layer, said first: its ceiling against its
    # file, or its time per I/O against the disk under it.
    v = firsts[0] if firsts else {}
    ok = v.get("rule") in ("stack-ceiling", "stack-slow-layer")
    print(f"{plant}\t{run}\t{got} / {v.get('rule', '-')}\t{got_layer}\t-\t{v.get('confidence', '-')}\t{'right' if ok else 'wrong'}"); sys.exit()
if want == "disk-below":
    # The disk under a loop device: named as the limit below the host, or
    # as the stack's member ceiling said first.
    v = firsts[0] if firsts else {}
    ok = got == "below_host" or v.get("rule") == "stack-member-ceiling"
    print(f"{plant}\t{run}\t{got} / {v.get('rule', '-')}\t{got_layer}\t-\t{v.get('confidence', '-')}\t{'right' if ok else 'wrong'}"); sys.exit()
v = firsts[0] if firsts else {}
conf = v.get("confidence", "-")
ok = "right" if got == want else ("right layer" if got_layer == layer else "wrong")
said = " ".join([s.get("part", "")] + s.get("evidence", []))
if ok == "right" and named and named not in said:
    ok = f"right, but '{named}' not named"
if held != "yes":
    ok = "ungraded: fio saw no cap"
setting = (s.get("setting") or {}).get("name", "-")
print(f"{plant}\t{run}\t{got}\t{got_layer}\t{setting}\t{conf}\t{ok}")
EOF
}

printf 'plant\trun\tcause\tlayer\tsetting\tconfidence\tgrade\n' >"$out/grades.tsv"
plant() { # plant NAME: set it up, check it with fio, study it, grade it, tear it down
  local name=$1 dir="$out/$1"
  mkdir -p "$dir"
  local target="" gs=() want="" layer="" extra=() fio_plain="" fio_planted="" named=""
  case $name in
    iops-throttle|bps-throttle)
      ram_loop; target=$made
      local mm; mm=$(lsblk -dno MAJ:MIN "$target" | tr -d ' ')
      group blkio "$name"; local g=$made
      fio_plain=$(fio_iops "$target")
      if [ $name = iops-throttle ]; then
        [ $v1 = 1 ] && echo "$mm 5000" >"$g/blkio.throttle.read_iops_device" \
          || { echo "+io" >/sys/fs/cgroup/cgroup.subtree_control; echo "$mm riops=5000" >"$g/io.max"; }
      else
        [ $v1 = 1 ] && echo "$mm 52428800" >"$g/blkio.throttle.read_bps_device" \
          || { echo "+io" >/sys/fs/cgroup/cgroup.subtree_control; echo "$mm rbps=52428800" >"$g/io.max"; }
      fi
      gs=("$g"); want=io_throttle; layer=cgroup ;;
    cpu-quota)
      ram_loop; target=$made
      group cpu "$name"; local g=$made
      fio_plain=$(fio_iops "$target")
      if [ $v1 = 1 ]; then echo 100000 >"$g/cpu.cfs_period_us"; echo 20000 >"$g/cpu.cfs_quota_us";
      else echo "+cpu" >/sys/fs/cgroup/cgroup.subtree_control; echo "20000 100000" >"$g/cpu.max"; fi
      gs=("$g"); want=cpu_quota; layer=cgroup ;;
    cpuset-one)
      [ "$(nproc)" -ge 2 ] || { echo "cpuset-one: needs two CPUs" >&2; return; }
      ram_loop; target=$made
      group cpuset "$name"; local g=$made
      fio_plain=$(fio_iops "$target")
      [ -f "$g/cpuset.mems" ] && cat "$(dirname "$g")/cpuset.mems" >"$g/cpuset.mems"
      echo 0 >"$g/cpuset.cpus"
      gs=("$g"); want=cpus_allowed; layer=cpus ;;
    nr-requests)
      ram_loop; target=$made
      fio_plain=$(fio_iops "$target")
      # 4 is the least the block layer takes (BLKDEV_MIN_RQ).
      echo 4 >"/sys/block/$(basename "$target")/queue/nr_requests"
      want=device_queue; layer=block_queue ;;
    fs-amplify)
      # An ext4 of 1 KiB blocks filled with 1 KiB files, every other one
      # then removed: the file written next lands in 1 KiB holes, so each
      # 4 KiB of it lies in four blocks apart (filefrag shows it).
      truncate -s 96M "/dev/shm/planted-$$-fs"; files+=("/dev/shm/planted-$$-fs")
      local l; l=$(losetup --direct-io=on --show -f "/dev/shm/planted-$$-fs"); made_loop "$l"
      mkfs.ext4 -q -F -b 1024 -N 100000 -O ^has_journal "$l"
      local m=/dev/shm/planted-$$-mnt; mkdir -p "$m"; mount "$l" "$m"; mounts+=("$m")
      python3 - "$m" <<'EOF'
import os, sys
m = sys.argv[1]
os.mkdir(m + "/fill")
blk, n = b"x" * 1024, 0
try:
    while True:
        fd = os.open(f"{m}/fill/{n}", os.O_WRONLY | os.O_CREAT)
        os.write(fd, blk); os.close(fd); n += 1
except OSError:
    pass
for i in range(0, n, 2):
    os.unlink(f"{m}/fill/{i}")
os.sync()
fd = os.open(m + "/data", os.O_WRONLY | os.O_CREAT)
try:
    for _ in range(32 * 1024):
        os.write(fd, blk)
except OSError:
    pass
os.fsync(fd); os.close(fd)
EOF
      target=$m/data
      local d; d=$(basename "$l")
      local a; a=$(awk '{print $1}' "/sys/block/$d/stat")
      fio_planted=$(fio_iops "$target")
      local b; b=$(awk '{print $1}' "/sys/block/$d/stat")
      fio_plain="$(filefrag "$target" | sed 's/.*: //'); $((b - a)) device reads under fio's 4 KiB reads at"
      want=file_system; layer=file_system ;;
    other-work)
      ram_loop; target=$made
      fio_plain=$(fio_iops "$target")
      hogs_on 2 0
      want=other_work; layer=cpus ;;
    idle-work)
      ram_loop; target=$made
      fio_plain=$(fio_iops "$target")
      idle_hogs_on 1
      want=other_work; layer=cpus; named=SCHED_IDLE ;;
    shared-iops-throttle)
      ram_loop; target=$made
      local mm; mm=$(lsblk -dno MAJ:MIN "$target" | tr -d ' ')
      group blkio "$name"; local g=$made
      fio_plain=$(fio_iops "$target")
      [ $v1 = 1 ] && echo "$mm 20000" >"$g/blkio.throttle.read_iops_device" \
        || { echo "+io" >/sys/fs/cgroup/cgroup.subtree_control; echo "$mm riops=20000" >"$g/io.max"; }
      neighbour "$g" -- fio --name=neighbour --thread --filename="$target" --rw=randread --bs=4k --direct=1 \
        --ioengine=io_uring --iodepth=32 --time_based --runtime=7200 --size=512m
      gs=("$g"); want=io_throttle; layer=cgroup; named="fio (pid" ;;
    shared-cpu-quota)
      ram_loop; target=$made
      group cpu "$name"; local g=$made
      gs=("$g")
      # Where cpuacct is a hierarchy of its own, the same group there too:
      # the group's CPU use is read from it.
      [ $v1 = 1 ] && [ -f /sys/fs/cgroup/cpuacct/cpuacct.usage ] && [ ! -f "$g/cpuacct.usage" ] \
        && { group cpuacct "$name"; gs+=("$made"); }
      fio_plain=$(fio_iops "$target")
      if [ $v1 = 1 ]; then echo 100000 >"$g/cpu.cfs_period_us"; echo 50000 >"$g/cpu.cfs_quota_us";
      else echo "+cpu" >/sys/fs/cgroup/cgroup.subtree_control; echo "50000 100000" >"$g/cpu.max"; fi
      neighbour "${gs[@]}" -- yes
      want=cpu_quota; layer=cgroup; named="yes (pid" ;;
    bfq)
      ram_loop; target=$made
      fio_plain=$(fio_iops "$target")
      echo bfq >"/sys/block/$(basename "$target")/queue/scheduler"
      want=scheduler; layer=scheduler ;;
    disk-backed)
      # Direct I/O to a file on the root file system's disk (never the
      # disk itself): what the disk and the host below it allow.
      local f=/var/tmp/planted-$$-disk
      truncate -s 1G "$f"; files+=("$f")
      dd if=/dev/zero of="$f" bs=1M count=1024 oflag=direct status=none
      local l; l=$(losetup --direct-io=on --show -f "$f"); made_loop "$l"
      # fio's own A/B: the file read directly, then through the loop
      # device, twice in turns; the better of each.
      local a1 b1 a2 b2
      a1=$(fio_iops "$f"); b1=$(fio_iops "$l"); b2=$(fio_iops "$l"); a2=$(fio_iops "$f")
      fio_plain="$(( a1 > a2 ? a1 : a2 )) (the file read directly),"
      fio_planted="$(( b1 > b2 ? b1 : b2 )) (through $l)"
      target=$l
      if [ $(( 10 * ${fio_planted%% *} )) -ge $(( 7 * ${fio_plain%% *} )) ] 2>/dev/null; then
        want=disk-below; layer=below_host
      else
        want=loop-layer; layer=-
      fi ;;
    emu-controller)
      target="emu:nvme-tlc,size=256m"
      fio_plain="(emulated)"
      want=device; layer=device ;;
    sparse-file|page-cache)
      ram_loop; local l=$made
      mkfs.ext4 -q -F "$l"
      local m=/dev/shm/planted-$$-mnt; mkdir -p "$m"; mounts+=("$m")
      if [ $name = sparse-file ]; then
        mount "$l" "$m"; truncate -s 256M "$m/data"
        fio_plain="(no data: every read is of a hole)"; want=refused
      else
        # data=journal: ext4 serves O_DIRECT through the page cache.
        mount -o data=journal "$l" "$m"
        dd if=/dev/urandom of="$m/data" bs=1M count=256 status=none; sync
        cat "$m/data" >/dev/null
        want=first:device-not-reached
      fi
      target=$m/data
      local d; d=$(basename "$l")
      local a; a=$(awk '{print $1}' "/sys/block/$d/stat")
      fio_planted=$(fio_iops "$target")
      local b; b=$(awk '{print $1}' "/sys/block/$d/stat")
      [ $name = page-cache ] && fio_plain="$((b - a)) device reads under fio's direct 4 KiB reads at"
      layer=- ;;
    root-default)
      target=""
      fio_plain="(the built-in drive behind the kernel)"
      want=platform-headline; layer=- ;;
    *) echo "planted.sh: unknown plant '$name'" >&2; exit 2 ;;
  esac
  case $name in
    fs-amplify|sparse-file|page-cache) ;;
    emu-controller|root-default) fio_planted="-" ;;
    disk-backed) ;;
    *) fio_planted=$(fio_iops "$target" "${gs[@]}") ;;
  esac
  # The quota's own evidence: the periods it stopped fio's group in.
  if [ $name = cpu-quota ] && [ -f "${gs[0]}/cpu.stat" ]; then
    fio_planted+=" ($(awk '$1=="nr_throttled"{t=$2} $1=="nr_periods"{p=$2} END{print "stopped in " t " of " p " periods"}' "${gs[0]}/cpu.stat"))"
  fi
  echo "$name: fio 4 KiB random reads at QD 32: $fio_plain IOPS plain, $fio_planted IOPS planted" | tee "$dir/fio.txt"
  # A plant that caps the rate is graded only where fio saw it hold (the
  # planted rate under 0.8 of the plain one): on a machine busy enough,
  # a small queue or a scheduler costs nothing that fio can see, and the
  # study is then right not to name it.
  local held=yes
  case $name in
    iops-throttle|bps-throttle|cpu-quota|cpuset-one|nr-requests|bfq|other-work|idle-work|shared-*)
      held=$(python3 -c 'import sys; a, b = (float(x.split()[0]) for x in sys.argv[1:3]); print("yes" if b < 0.8 * a else "no")' \
        "$fio_plain" "$fio_planted" 2>/dev/null || echo yes) ;;
  esac
  for r in $(seq 1 "$runs"); do
    local withload=0
    if [ $load = 1 ] && [ $((r % 2)) = 0 ] && [ $name != other-work ] && [ $name != idle-work ]; then withload=1; hogs_on 1 5; fi
    study "$dir/run$r" "$target" "${gs[@]}" -- "${extra[@]}"
    [ $withload = 1 ] && hogs_off
    grade "$name" "$r$([ $withload = 1 ] && echo ' (loaded)')" "$dir/run$r" "$want" "$layer" "$held" "$named" | tee -a "$out/grades.tsv"
  done
  hogs_off
  # Each plant's devices, mounts and groups go before the next is made.
  cleanup; loops=() groups=() mounts=() files=() hogs=()
  return 0
}

IFS=, read -r -a list <<<"$plants"
for p in "${list[@]}"; do plant "$p"; done
echo
column -t -s $'\t' "$out/grades.tsv"
echo "results: $out"
