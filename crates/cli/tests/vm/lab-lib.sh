# The lab VM's helpers (sourced by lab-init.sh and by the script it runs):
# load a module after what it needs, make devices, mark steps. A helper that
# cannot do its part prints `@@ lab-error WHAT` with the kernel's last
# messages and powers the machine off.
up() { cut -d' ' -f1 /proc/uptime; }
# On the console even inside $(…), whose output is captured.
lab_fail() {
  {
    echo "@@ lab-error $*"
    [ -s /tmp/lab-trace ] && { echo "@@ lab-trace-begin"; tail -n 15 /tmp/lab-trace; echo "@@ lab-trace-end"; }
    echo "@@ lab-dmesg-begin"; dmesg | tail -n 25; echo "@@ lab-dmesg-end"
  } >/dev/console 2>&1
  sync; umount /host 2>/dev/null; poweroff -f
}
lab_step() { echo "@@ lab-step $1 $(up)"; }

# Load module $1 (with parameters $2…) after what it needs (modules/deps).
lab_load() {
  local m=$1
  shift
  grep -q "^$m " /proc/modules && return 0
  [ -f "/lib/lab/$m.ko" ] || lab_fail "no module $m in the lab (see .ci/vm-kernel.sh)"
  local d
  for d in $(sed -n "s/^$m: //p" /lib/lab/deps); do lab_load "$d"; done
  insmod "/lib/lab/$m.ko" "$@" 2>/tmp/insmod.err || lab_fail "insmod $m $*: $(cat /tmp/insmod.err)"
}

# Wait up to 10 s for a block device node.
lab_wait_dev() {
  local i=0
  while [ ! -b "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  [ -b "$1" ] || lab_fail "$1 did not appear"
}

# A device's path from its short name (nullb0, md0, a /dev/mapper name…).
lab_dev() {
  case "$1" in
    /dev/*) echo "$1" ;;
    *) if [ -b "/dev/$1" ]; then echo "/dev/$1"; elif [ -b "/dev/mapper/$1" ]; then
      echo "/dev/mapper/$1"; else lab_fail "no block device $1"; fi ;;
  esac
}

# lab_null_blk KEY=VALUE…: one more null_blk device (nullbN, N from 0),
# made through configfs; the keys are its configfs attributes (size in MiB,
# memory_backed, irqmode, completion_nsec, blocksize, submit_queues,
# hw_queue_depth, poll_queues…). The size is 256 MiB unless given (the
# driver's own default, 250 GiB, would let a memory-backed device's writes
# take all the guest's memory).
lab_null_blk() {
  lab_load null_blk nr_devices=0
  grep -q ' configfs ' /proc/mounts || mount -t configfs none /sys/kernel/config
  local n=0 kv
  while [ -d "/sys/kernel/config/nullb/nullb$n" ]; do n=$((n + 1)); done
  local d=/sys/kernel/config/nullb/nullb$n
  mkdir "$d" || lab_fail "null_blk: cannot make $d"
  echo 256 >"$d/size"
  for kv in "$@"; do
    [ -f "$d/${kv%%=*}" ] || lab_fail "null_blk: no attribute '${kv%%=*}' (there are: $(ls "$d" | tr '\n' ' '))"
    echo "${kv#*=}" >"$d/${kv%%=*}" || lab_fail "null_blk: ${kv%%=*}=${kv#*=} refused"
  done
  echo 1 >"$d/power" || lab_fail "null_blk: nullb$n did not power on"
  lab_wait_dev "/dev/nullb$n"
}

# lab_nvme COUNT [poll_queues=N] [write_queues=N]: the nvme driver bound to
# QEMU's COUNT emulated controllers (nvme0n1…).
lab_nvme() {
  local count=$1 i=0
  shift
  lab_load nvme "$@"
  while [ $i -lt "$count" ]; do lab_wait_dev "/dev/nvme${i}n1"; i=$((i + 1)); done
}

# lab_md NAME LEVEL [chunk=KIB] DEVICE…: an md array, created clean.
lab_md() {
  local name=$1 level=$2 chunk="" devs="" d
  shift 2
  case "$level" in
    raid0 | raid1 | raid10) lab_load "$level" ;;
    raid4 | raid5 | raid6) lab_load raid456 ;;
    *) lab_fail "md: level $level (allowed: raid0, raid1, raid10, raid4, raid5, raid6)" ;;
  esac
  for d in "$@"; do
    case "$d" in
      chunk=*) chunk="--chunk=${d#chunk=}" ;;
      *) devs="$devs $(lab_dev "$d")" ;;
    esac
  done
  set -- $devs
  mdadm --create "/dev/$name" --quiet --run --assume-clean --metadata=1.2 --level="$level" \
    --raid-devices=$# $chunk "$@" </dev/null >/tmp/mdadm.out 2>&1 ||
    lab_fail "mdadm --create /dev/$name: $(cat /tmp/mdadm.out)"
  lab_wait_dev "/dev/$name"
}

# The kernel's name of a device (nullb0, md0; dm-N for a /dev/mapper name).
lab_kname() {
  local d
  [ -d "/sys/block/$1" ] && { echo "$1"; return; }
  for d in /sys/block/dm-*; do
    [ "$(cat "$d/dm/name" 2>/dev/null)" = "$1" ] && { basename "$d"; return; }
  done
  lab_fail "no block device $1"
}

lab_sectors() { blockdev --getsz "$(lab_dev "$1")"; }
lab_dmsetup() { # NAME TABLE
  lab_load dm_mod
  dmsetup create "$1" --noudevsync --table "$2" >/tmp/dmsetup.out 2>&1 ||
    lab_fail "dmsetup create $1 '$2': $(cat /tmp/dmsetup.out)"
  # No udev here: dmsetup makes the /dev/mapper node itself.
  dmsetup mknodes "$1"
  lab_wait_dev "/dev/mapper/$1"
}
# lab_dm_linear NAME DEVICE: all of DEVICE, mapped linearly.
lab_dm_linear() { lab_dmsetup "$1" "0 $(lab_sectors "$2") linear $(lab_dev "$2") 0"; }
# lab_dm_delay NAME DEVICE MS [WRITE_MS]: DEVICE with every I/O held MS.
lab_dm_delay() {
  lab_load dm_delay
  local dev
  dev=$(lab_dev "$2")
  if [ -n "${4:-}" ]; then
    lab_dmsetup "$1" "0 $(lab_sectors "$2") delay $dev 0 $3 $dev 0 $4"
  else
    lab_dmsetup "$1" "0 $(lab_sectors "$2") delay $dev 0 $3"
  fi
}
# lab_dm_crypt NAME DEVICE: DEVICE encrypted with aes-xts-plain64 under a
# fixed lab key (no cryptsetup: the key is in the table).
lab_dm_crypt() {
  lab_load dm_crypt
  local key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
  lab_dmsetup "$1" "0 $(lab_sectors "$2") crypt aes-xts-plain64 $key$key 0 $(lab_dev "$2") 0"
}
# lab_dm_striped NAME CHUNK_KIB DEVICE…: a striped table over the devices
# (as LVM's striped volume), each used for the smallest's whole chunks.
lab_dm_striped() {
  local name=$1 chunk=$(($2 * 2)) min="" d s devs="" n=0
  shift 2
  for d in "$@"; do
    s=$(lab_sectors "$d")
    if [ -z "$min" ] || [ "$s" -lt "$min" ]; then min=$s; fi
    devs="$devs $(lab_dev "$d") 0"
    n=$((n + 1))
  done
  lab_dmsetup "$name" "0 $((min / chunk * chunk * n)) striped $n $chunk$devs"
}
# lab_dm_concat NAME DEVICE…: the devices one after another, all of each
# (a table of linear targets, as LVM's volume over several PVs).
lab_dm_concat() {
  local name=$1 start=0 d s
  shift
  lab_load dm_mod
  : >/tmp/concat.table
  for d in "$@"; do
    s=$(lab_sectors "$d")
    echo "$start $s linear $(lab_dev "$d") 0" >>/tmp/concat.table
    start=$((start + s))
  done
  dmsetup create "$name" --noudevsync </tmp/concat.table >/tmp/dmsetup.out 2>&1 ||
    lab_fail "dmsetup create $name '$(cat /tmp/concat.table)': $(cat /tmp/dmsetup.out)"
  dmsetup mknodes "$name"
  lab_wait_dev "/dev/mapper/$name"
}
# lab_scsi_debug KEY=VALUE…: scsi_debug with these module parameters
# (dev_size_mb, delay, ndelay, num_tgts…); its disk is sda.
lab_scsi_debug() {
  lab_load scsi_debug "$@"
  lab_wait_dev /dev/sda
}
# lab_brd KEY=VALUE…: RAM disks (rd_nr, rd_size in KiB); ram0….
lab_brd() {
  lab_load brd "$@"
  lab_wait_dev /dev/ram0
}

