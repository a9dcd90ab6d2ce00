#!/usr/bin/env bash
# The lab VM: boot Debian's distribution kernel under QEMU's software
# emulation with the block devices this machine's kernel lacks (null_blk,
# NVMe with poll queues, md RAID, device-mapper, scsi_debug, brd), run this
# build's ssdready and a script inside, and bring files out. For people, for
# the planted-bottleneck bench, and for the tests (tests/common/labvm.rs runs
# this script). See docs/lab-vm.md.
#
#   bench/lab-vm.sh [--device SPEC]... [--run CMD]... [--script FILE] [--out DIR]
#                   [--ssdready BIN] [--kernel DIR] [--cache DIR] [--with-fio]
#                   [--boot-limit S] [--limit S] [--mem MIB] [--cpus N] [--console]
#
# Devices, made in the order given (SPEC is KIND[:ARG,ARG…]):
#   null_blk[:KEY=VAL,…]        nullbN via configfs; keys are its attributes
#                               (size MiB, default 256; memory_backed, irqmode,
#                               completion_nsec…)
#   nvme[:size=64M,poll_queues=N,write_queues=N]   a QEMU NVMe controller (nvmeNn1)
#   md:NAME,LEVEL,DEV,DEV…[,chunk=KIB]             mdadm --create (raid0/1/10/4/5/6)
#   dm-linear:NAME,DEV  dm-delay:NAME,DEV,MS[,WRITE_MS] (MS 0: writes only)  dm-crypt:NAME,DEV
#   dm-striped:NAME,CHUNK_KIB,DEV,DEV…  dm-concat:NAME,DEV,DEV…   (LVM's striped, linear over PVs)
#   scsi_debug[:KEY=VAL,…]      module parameters (dev_size_mb, delay…); sda
#   brd[:KEY=VAL,…]             module parameters (rd_nr, rd_size KiB); ram0…
# The script (--run lines, then --script's) runs in the guest with `sh -e` in
# /host, which is --out shared over 9p; `ssdready` is on its PATH, the lab's
# helpers (crates/cli/tests/vm/lab-lib.sh: lab_step NAME, lab_null_blk, lab_md…)
# are defined, and SSDREADY_LAB=emulated-vm is set. --out also gets
# lab-console.log (the serial console), lab-script.err (the script's trace
# and standard error) and LAB-VM-EMULATED.
#
# Exit: 0 the script succeeded; 1 the guest failed (the console's tail is
# printed); 2 bad input (nothing written); 77 something this needs is
# missing here (said on standard error).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
vm=$here/crates/cli/tests/vm
die() { echo "lab-vm: $*" >&2; exit 2; }
missing() { echo "lab-vm: needs $*" >&2; exit 77; }

specs=() runs=() scriptfile="" out="" bin="" with_fio=0 console=0
kernel=${SSDREADY_VM_KERNEL:-/var/cache/ssdready/vm-kernel}
cache=${SSDREADY_LAB_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/ssdready/lab-vm}
boot_limit=120 limit=600 mem=2048 cpus=2
int() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 '$2': a whole number above 0"; }
while [ $# -gt 0 ]; do
  opt=$1
  case "$opt" in
    --with-fio) with_fio=1; shift; continue ;;
    --console) console=1; shift; continue ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  esac
  [ $# -ge 2 ] || die "$opt: needs a value (see --help)"
  case "$opt" in
    --device) specs+=("$2") ;;
    --run) runs+=("$2") ;;
    --script) [ -f "$2" ] || die "--script '$2': no such file"; scriptfile=$2 ;;
    --out) out=$2 ;;
    --ssdready) bin=$2 ;;
    --kernel) kernel=$2 ;;
    --cache) cache=$2 ;;
    --boot-limit) int "$opt" "$2"; boot_limit=$2 ;;
    --limit) int "$opt" "$2"; limit=$2 ;;
    --mem) int "$opt" "$2"; mem=$2 ;;
    --cpus) int "$opt" "$2"; cpus=$2 ;;
    *) die "unknown option '$opt' (see --help)" ;;
  esac
  shift 2
done

# The devices: QEMU's NVMe drives here, a `lab_KIND ARGS` line for the guest.
setup="" nvme_sizes=() nvme_params="" nvme_at="" nullbs=0
for spec in "${specs[@]}"; do
  kind=${spec%%:*} args=""
  [ "$kind" = "$spec" ] || args=${spec#*:}
  IFS=, read -r -a a <<<"$args"
  for w in "${a[@]}"; do [[ $w =~ ^[A-Za-z0-9_./=-]+$ ]] || die "--device '$spec': '$w' (letters, digits, _ . / = - only)"; done
  case "$kind" in
    null_blk | scsi_debug | brd)
      for w in "${a[@]}"; do [[ $w == *=* ]] || die "--device '$spec': '$w' is not KEY=VALUE"; done ;;
    nvme)
      size=64M
      for w in "${a[@]}"; do
        case "$w" in
          size=*) size=${w#size=}; [[ $size =~ ^[1-9][0-9]*[KMG]$ ]] || die "--device '$spec': size '$size' (like 64M)" ;;
          poll_queues=* | write_queues=*) int "--device '$spec' ${w%%=*}" "${w#*=}"; nvme_params="$nvme_params $w" ;;
          *) die "--device '$spec': '$w' (allowed: size, poll_queues, write_queues)" ;;
        esac
      done
      nvme_sizes+=("$size")
      [ -n "$nvme_at" ] || { nvme_at=1; setup+="lab_step device-nvme"$'\n'"@NVME@"$'\n'; }
      continue ;;
    md)
      [ ${#a[@]} -ge 3 ] || die "--device '$spec': md:NAME,LEVEL,DEVICE… (like md:md0,raid5,nullb0,nullb1,nullb2)"
      [[ ${a[1]} =~ ^raid(0|1|10|4|5|6)$ ]] || die "--device '$spec': level '${a[1]}' (allowed: raid0, raid1, raid10, raid4, raid5, raid6)" ;;
    dm-linear | dm-crypt) [ ${#a[@]} -eq 2 ] || die "--device '$spec': $kind:NAME,DEVICE" ;;
    dm-delay)
      [ ${#a[@]} -ge 3 ] && [ ${#a[@]} -le 4 ] || die "--device '$spec': dm-delay:NAME,DEVICE,MS[,WRITE_MS]"
      if [ ${#a[@]} = 3 ]; then
        int "--device '$spec' delay" "${a[2]}"
      else # a read delay of 0 with a write delay: only writes held
        [[ ${a[2]} =~ ^(0|[1-9][0-9]*)$ ]] || die "--device '$spec' delay '${a[2]}': a whole number above 0 (or 0 with a write delay)"
        int "--device '$spec' write delay" "${a[3]}"
      fi ;;
    dm-striped)
      [ ${#a[@]} -ge 4 ] || die "--device '$spec': dm-striped:NAME,CHUNK_KIB,DEVICE,DEVICE… (like dm-striped:vol,64,nullb0,nullb1)"
      int "--device '$spec' chunk" "${a[1]}" ;;
    dm-concat) [ ${#a[@]} -ge 3 ] || die "--device '$spec': dm-concat:NAME,DEVICE,DEVICE… (like dm-concat:vol,nullb0,nullb1)" ;;
    *) die "--device '$spec': unknown kind '$kind' (allowed: null_blk, nvme, md, dm-linear, dm-delay, dm-crypt, dm-striped, dm-concat, scsi_debug, brd)" ;;
  esac
  # The step's name: the device's (nullbN, md0, a dm name) or its kind's.
  case "$kind" in
    null_blk) step=nullb$((nullbs++)) ;;
    md | dm-*) step=$kind-${a[0]} ;;
    *) step=$kind ;;
  esac
  setup+="lab_step device-$step"$'\n'"lab_${kind//-/_} ${a[*]}"$'\n'
done
setup=${setup/@NVME@/lab_nvme ${#nvme_sizes[@]}$nvme_params}
[ -n "${runs[*]}${scriptfile}" ] || die "nothing to run: give --run CMD or --script FILE"
if [ -z "$bin" ]; then
  bin=$here/target/release/ssdready
  [ -x "$bin" ] || die "no $bin: build it (cargo build --release) or give --ssdready BIN"
fi
[ -x "$bin" ] || die "--ssdready '$bin': not an executable file"

command -v qemu-system-x86_64 >/dev/null || missing "qemu-system-x86_64 (Debian: qemu-system-x86)"
[ -x /bin/busybox ] || missing "/bin/busybox (Debian: busybox-static)"
for f in vmlinuz modules/order modules/deps; do
  [ -f "$kernel/$f" ] || missing "$kernel/$f (made by .ci/vm-kernel.sh)"
done
tools=(mdadm dmsetup)
[ $with_fio = 0 ] || tools+=(fio)
for t in "${tools[@]}"; do command -v "$t" >/dev/null || missing "$t (Debian package $t)"; done
for t in setpriv sha256sum ldd; do command -v "$t" >/dev/null || missing "$t"; done

# Copy FILE to STAGE/DEST with the shared libraries it loads (by ldd).
stage_exe() { # STAGE DEST FILE
  install -D -m 755 "$3" "$1/$2"
  local lib
  for lib in $(ldd "$3" 2>/dev/null | grep -o '/[^ ]*' || true); do
    [ -e "$1${lib}" ] || install -D -m 755 "$lib" "$1${lib}"
  done
}

# A newc archive of directory $1 on standard output.
cpio_of() { (cd "$1" && find . -mindepth 1 | sed 's|^\./||' | sort | busybox cpio -o -H newc -R 0:0 2>/dev/null); }

# The archive that changes only with its inputs (busybox, the tools and their
# libraries, the modules, the init), built once and kept in CACHE under a
# name made of its inputs' hashes; prints its path.
lab_initramfs() { # CACHE KERNEL TOOL…
  local cache=$1 kernel=$2 t m key stage f
  shift 2
  local inputs=("init=$vm/lab-init.sh" "lab/lib.sh=$vm/lab-lib.sh" "bin/busybox=/bin/busybox"
    "lib/lab/deps=$kernel/modules/deps")
  for m in $(cat "$kernel/modules/order"); do inputs+=("lib/lab/$m.ko=$kernel/modules/$m.ko"); done
  for t in "$@"; do
    f=$(command -v "$t")
    inputs+=("sbin/$t=$f")
    for m in $(ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true); do inputs+=("${m#/}=$m"); done
  done
  key=$(for f in "${inputs[@]}"; do echo "${f%%=*} $(sha256sum <"${f#*=}" | cut -c1-64)"; done |
    sha256sum | cut -c1-16)
  mkdir -p "$cache"
  if [ -f "$cache/initramfs-$key.cpio" ]; then
    touch "$cache/initramfs-$key.cpio"
  else
    stage=$(mktemp -d "$cache/.stage.XXXXXX")
    for f in "${inputs[@]}"; do [ -e "$stage/${f%%=*}" ] || install -D -m 755 "${f#*=}" "$stage/${f%%=*}"; done
    mkdir -p "$stage"/{dev,proc,sys,tmp,run,host,etc}
    cpio_of "$stage" >"$stage.cpio"
    rm -rf "$stage"
    mv "$stage.cpio" "$cache/initramfs-$key.cpio"
    # Archives of other inputs not used for two days go, and what a killed
    # build left.
    find "$cache" -maxdepth 1 -name 'initramfs-*.cpio' -mtime +2 -delete 2>/dev/null || true
    find "$cache" -maxdepth 1 -name '.stage.*' -mmin +60 -exec rm -rf {} + 2>/dev/null || true
  fi
  echo "$cache/initramfs-$key.cpio"
}

# Wait for QEMU ($1) to power off, reading its console ($2); kill it when it
# has not booted within $3 s or not finished within $4 s (then `why` says so).
why=""
lab_wait() {
  local pid=$1 log=$2 t0=$SECONDS ready=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ $ready = 0 ] && grep -q '^@@ lab-ready' "$log"; then ready=1; fi
    if [ $ready = 0 ] && [ $((SECONDS - t0)) -ge "$3" ]; then
      why="the guest did not boot within $3 s"
    elif [ $((SECONDS - t0)) -ge "$4" ]; then
      why="the guest did not finish within $4 s"
    fi
    if [ -n "$why" ]; then kill -KILL "$pid" 2>/dev/null; return; fi
    sleep 0.1
  done
}

# What the console says: the boot time, each step's time, the script's exit;
# on failure, why with the console's tail. Returns the script's exit (0 or 1).
lab_summary() { # LOG WALL_MS QEMU_ERR
  local log=$1 wall=$2 marks
  marks=$(tr -d '\r' <"$log" | grep -a '^@@ lab-' || true)
  echo "$marks" | awk -v wall="$wall" '
    $2 == "lab-kernel" { printf "lab-vm: kernel %s, %s CPUs, software emulation (TCG)\n", $3, $5 }
    $2 == "lab-ready" { printf "lab-vm: booted in %.1f s\n", $3 }
    $2 == "lab-step" { if (name != "") printf "lab-vm: %-24s %6.1f s\n", name, $4 - t; name = $3; t = $4 }
    $2 == "lab-exit" { if (name != "") printf "lab-vm: %-24s %6.1f s\n", name, $4 - t
      printf "lab-vm: script exit %s; %.1f s in all (QEMU included)\n", $3, wall / 1000 }' >&2
  local fail=$why
  [ -n "$fail" ] || fail=$(echo "$marks" | sed -n 's/^@@ lab-error /the lab failed: /p' | head -1)
  if [ -z "$fail" ] && ! grep -q "^@@ lab-exit" <<<"$marks"; then
    fail="the guest stopped before its script ended"
    [ -s "$3" ] && fail="$fail; QEMU said: $(tail -c 400 "$3")"
  fi
  if [ -z "$fail" ] && ! grep -q "^@@ lab-exit 0 " <<<"$marks"; then
    fail="the script failed (its trace and standard error: $out/lab-script.err)"
  fi
  [ -n "$fail" ] || return 0
  echo "lab-vm: $fail; the console's last lines ($log):" >&2
  tr -d '\r' <"$log" | tail -n 40 | sed 's/^/  | /' >&2
  return 1
}

if [ -z "$out" ]; then out=$PWD/lab-vm-$(date +%Y%m%d-%H%M%S); fi
mkdir -p "$out" || die "--out '$out': cannot make it"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/lab-vm.XXXXXX")
qpid="" tailpid=""
cleanup() {
  [ -z "$qpid" ] || kill -KILL "$qpid" 2>/dev/null || true
  [ -z "$qpid" ] || wait "$qpid" 2>/dev/null || true
  [ -z "$tailpid" ] || kill "$tailpid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "lab-vm: stopped by a signal" >&2; exit 130' INT TERM HUP

cached=$(lab_initramfs "$cache" "$kernel" "${tools[@]}")
# This run's archive: the binary, the device lines and the script.
stage_exe "$work/run" lab/bin/ssdready "$bin"
printf '%s' "$setup" >"$work/run/lab/setup"
{ [ ${#runs[@]} = 0 ] || printf '%s\n' "${runs[@]}"; [ -z "$scriptfile" ] || cat "$scriptfile"; } >"$work/run/lab/script"
cpio_of "$work/run" >"$work/run.cpio"
cat "$cached" "$work/run.cpio" >"$work/initrd"
# The uncompressed kernel where .ci/vm-kernel.sh could extract it (PVH
# entry: no decompression under emulation).
image=$kernel/vmlinux
[ -f "$image" ] || image=$kernel/vmlinuz
qemu=(qemu-system-x86_64 -accel tcg -cpu max -smp "$cpus" -m "$mem" -kernel "$image"
  -initrd "$work/initrd" -append "console=ttyS0 quiet panic=-1"
  -display none -no-reboot -nodefaults -serial "file:$out/lab-console.log"
  -virtfs "local,path=$out,mount_tag=host0,security_model=none")
i=0
for size in "${nvme_sizes[@]}"; do
  truncate -s "$size" "$work/nvme$i.img"
  qemu+=(-drive "file=$work/nvme$i.img,if=none,id=nvm$i,format=raw" -device "nvme,serial=lab$i,drive=nvm$i")
  i=$((i + 1))
done
cat >"$out/LAB-VM-EMULATED" <<EOF
Everything in this directory was measured inside a virtual machine under
QEMU's software emulation (TCG): the lab VM of ssdready (docs/lab-vm.md).
Its devices top out near 10-13K IOPS whatever they are: it shows function,
never a platform's or a device's speed.
EOF
: >"$out/lab-console.log"
start=$(date +%s%N)
# A QEMU left behind by a killed script dies with it (parent-death signal).
setpriv --pdeathsig KILL -- "${qemu[@]}" </dev/null >"$work/qemu.err" 2>&1 &
qpid=$!
[ $console = 0 ] || { tail -n +1 -f --pid="$qpid" "$out/lab-console.log" >&2 & tailpid=$!; }
lab_wait "$qpid" "$out/lab-console.log" "$boot_limit" "$limit"
wait "$qpid" 2>/dev/null || true
qpid=""
[ -z "$tailpid" ] || { wait "$tailpid" 2>/dev/null || true; tailpid=""; }
wall=$((($(date +%s%N) - start) / 1000000))
lab_summary "$out/lab-console.log" "$wall" "$work/qemu.err" || exit 1
