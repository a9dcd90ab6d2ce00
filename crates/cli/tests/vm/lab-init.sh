#!/bin/busybox sh
# The init of the lab VM (bench/lab-vm.sh, tests/common/labvm.rs): a
# distribution kernel under QEMU's software emulation, with the devices this
# machine's kernel lacks. It mounts the usual file systems and the host's
# output directory (9p, at /host), makes the devices /lab/setup asks for
# (one `lab_KIND ARGS` line each), runs /lab/script with `sh -e`, and
# powers off. The script's standard error (with its `set -x` trace) goes to
# lab-script.err on the host. It prints on the serial console, for the host:
#   @@ lab-ready SECONDS            booted (modules for 9p loaded, /host mounted)
#   @@ lab-step NAME SECONDS        a step begins (setup lines and lab_step)
#   @@ lab-exit RC SECONDS          the script ended with RC
#   @@ lab-error WHAT               the lab itself failed (then powers off)
# SECONDS is the guest's uptime. Everything measured in here is emulated:
# SSDREADY_LAB=emulated-vm is in the script's environment.
/bin/busybox --install -s /bin
export PATH=/lab/bin:/bin:/sbin:/usr/bin:/usr/sbin
mkdir -p /proc /sys /dev /run /tmp /host
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mkdir -p /run/mdadm /dev/mapper

. /lab/lib.sh
echo "@@ lab-kernel $(uname -r) cpus $(nproc)"
lab_load 9p
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host0 /host ||
  lab_fail "the host's directory (9p, tag host0) did not mount"
echo "@@ lab-ready $(up)"
. /lab/setup
export SSDREADY_LAB=emulated-vm
cd /host
lab_step script
sh -e -c '. /lab/lib.sh; set -x; . /lab/script' 2>/tmp/lab-trace
rc=$?
cp /tmp/lab-trace /host/lab-script.err 2>/dev/null
if [ $rc != 0 ]; then
  echo "@@ lab-trace-begin"; grep '^+' /tmp/lab-trace | tail -n 15; echo "@@ lab-trace-end"
  echo "@@ lab-stderr-begin"; grep -v '^+' /tmp/lab-trace | tail -n 25; echo "@@ lab-stderr-end"
fi
cd /
echo "@@ lab-exit $rc $(up)"
sync
umount /host
poweroff -f
