#!/bin/busybox sh
# The init of the throwaway virtual machine that tests the ublk transport
# (tests/ublk_vm.rs): load ublk_drv, attach the emulated drive over ublk,
# run a verified write/read job on it through the kernel's block layer,
# compare the daemon's counts with the kernel's, detach, then kill a
# daemon with SIGKILL and check that `emu list` removes what it left.
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /run /tmp
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
echo "@@ kernel $(uname -r) cpus $(nproc)"
insmod /ublk_drv.ko || echo "@@ insmod failed"
ls /dev/ublk-control >/dev/null 2>&1 && echo "@@ control present"

attach() {
  /ssdready emu attach "$1" --transport ublk >/tmp/dev 2>/tmp/attach.log &
  PID=$!
  i=0
  while [ ! -s /tmp/dev ] && [ $i -lt 600 ] && kill -0 $PID 2>/dev/null; do sleep 0.1; i=$((i+1)); done
  DEV=$(cat /tmp/dev)
  echo "@@ attached $DEV pid $PID"
  [ -n "$DEV" ] || { echo "@@ attach-log-begin"; cat /tmp/attach.log; echo "@@ attach-log-end"; }
}

attach x25e,size=256m
if [ -n "$DEV" ]; then
  N=$(basename "$DEV")
  /ssdready run --name=verify --filename="$DEV" --rw=randwrite --bs=4k --size=8m \
    --verify=crc32c --direct=1 --ioengine=io_uring --iodepth=8 \
    --output-format=json --output=/tmp/verify.json 2>/tmp/verify.err
  rc=$?; echo "@@ verify rc $rc"; [ $rc = 0 ] || { tail -c 600 /tmp/verify.err; echo; }
  /ssdready run --name=trim --filename="$DEV" --rw=randtrim --bs=64k --size=8m \
    --direct=1 --output-format=json --output=/tmp/trim.json 2>/tmp/trim.err
  rc=$?; echo "@@ trim rc $rc"; [ $rc = 0 ] || { tail -c 600 /tmp/trim.err; echo; }
  echo "@@ kstat $(cat /sys/block/$N/stat)"
  echo "@@ queue $(cat /sys/block/$N/queue/logical_block_size) $(cat /sys/block/$N/queue/write_cache) $(cat /sys/block/$N/queue/discard_max_bytes)"
  echo "@@ list $(/ssdready emu list | head -1)"
  /ssdready emu detach "$DEV" >/dev/null
  echo "@@ detach rc $?"
  wait $PID
  echo "@@ daemon rc $?"
  echo "@@ log-begin"; cat /tmp/attach.log; echo "@@ log-end"
  echo "@@ json-begin"; cat /tmp/verify.json; echo "@@ json-end"
  echo "@@ left $(ls /dev | grep -c '^ublk[bc]')"
  # A daemon killed outright: the next `emu list` removes its device.
  rm -f /tmp/dev
  attach x25e,size=256m
  kill -9 $PID; wait $PID 2>/dev/null
  sleep 1
  echo "@@ stale $(/ssdready emu list 2>&1 | tr '\n' ' ')"
  sleep 1
  echo "@@ left-after-kill $(ls /dev | grep -c '^ublk[bc]')"
fi
echo "@@ dmesg-begin"; dmesg | tail -30; echo "@@ dmesg-end"
echo "@@ done"
poweroff -f
