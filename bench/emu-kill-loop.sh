#!/usr/bin/env bash
# `emu attach` killed with SIGKILL at random moments, N times: each time the
# daemon is started, killed after a random 0-500 ms (during its setup or
# while it serves), and must be gone within a second; `emu list` must then
# leave nothing of it (no loop device over its file, no FUSE mount).
# A daemon still there after a second is counted as hung: its state and
# kernel stack are printed, then it is freed by aborting its FUSE
# connection through fusectl (mounted on a temporary directory when
# /sys/fs/fuse/connections is not).
#
# Usage (root): bench/emu-kill-loop.sh N [BINARY] [SPEC] [TRANSPORT]
#   BINARY defaults to target/fast/ssdready, SPEC to dram-ssd,size=64m,
#   TRANSPORT (emu attach --transport) to auto.
# Prints one line per iteration that went wrong and a summary:
#   killed N: hung H, left behind L
# Exit 0 when nothing hung and nothing was left, 1 otherwise.
set -u
[ $# -ge 1 ] && [ "$1" -gt 0 ] 2>/dev/null || {
  echo "usage: $0 N [BINARY] [SPEC] [TRANSPORT]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "$0: needs root (FUSE mounts, loop devices)" >&2; exit 2; }
N=$1
B=$(realpath "${2:-target/fast/ssdready}")
SPEC=${3:-dram-ssd,size=64m}
TRANSPORT=${4:-auto}
[ -x "$B" ] || { echo "$0: no binary at $B" >&2; exit 2; }
RUN=/run/ssdready/emu
LOG=$(mktemp -d /dev/shm/emu-kill-loop.XXXXXX)
CTL=""; pid=""
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null \
    && "$B" emu list > /dev/null 2>&1
  [ -n "$CTL" ] && umount "$CTL" && rmdir "$CTL"
  rm -rf "$LOG"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# fusectl's directory (CTLDIR): the system's, or one mounted for this run.
if grep -q ' /sys/fs/fuse/connections .* - fusectl ' /proc/self/mountinfo; then
  CTLDIR=/sys/fs/fuse/connections
else
  CTL=$(mktemp -d /dev/shm/fusectl.XXXXXX)
  mount -t fusectl none "$CTL" || { rmdir "$CTL"; echo "$0: cannot mount fusectl" >&2; exit 2; }
  CTLDIR=$CTL
fi

# state PID: its threads' state letters (R, S, D, Z...), empty once reaped.
state() {
  local t; for t in /proc/"$1"/task/*/stat; do
    sed -n 's/^.*) \(.\).*/\1/p' "$t" 2>/dev/null; done | tr -d '\n'
}

# free PID: abort the FUSE connection of the daemon's mount.
free() {
  local mnt="$RUN/emu-$1.mnt" dev
  dev=$(awk -v m="$mnt" '$5 == m { print $3 }' /proc/self/mountinfo | head -1)
  [ -n "$dev" ] || { echo "  no mount at $mnt to abort"; return; }
  echo "  aborting FUSE connection ${dev#0:} ($mnt)"
  echo 1 > "$CTLDIR/${dev#0:}/abort"
}

hung=0; left=0
# The shell's own "Killed" notices go to the stderr dropped at the loop's end.
for i in $(seq 1 "$N"); do
  "$B" emu attach "$SPEC" --transport="$TRANSPORT" > "$LOG/out" 2> "$LOG/err" < /dev/null &
  pid=$!
  sleep "0.$(printf '%03d' $((RANDOM % 500)))"
  kill -KILL "$pid" 2>/dev/null
  gone=0
  for _ in $(seq 1 50); do
    s=$(state "$pid")
    # Gone: reaped, or a zombie left for this shell's wait.
    case "$s" in *[!ZX]*) ;; *) gone=1; break ;; esac
    sleep 0.02
  done
  if [ "$gone" = 0 ]; then
    hung=$((hung + 1))
    echo "iteration $i: pid $pid still there 1 s after SIGKILL (threads' states $(state "$pid"))"
    for t in /proc/"$pid"/task/*; do
      [ "$(sed -n 's/^.*) \(.\).*/\1/p' "$t/stat" 2>/dev/null)" = D ] || continue
      sed 's/^/  /' "$t/stack" 2>/dev/null
    done
    free "$pid"
  fi
  wait "$pid" 2>/dev/null
  "$B" emu list > /dev/null 2> "$LOG/list"
  mnt="$RUN/emu-$pid.mnt"
  what=""
  awk -v m="$mnt" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo \
    && what="$what mount"
  grep -qs "^$mnt/" /sys/block/loop*/loop/backing_file && what="$what loop"
  [ -e "$mnt" ] && what="$what directory"
  [ -e "$RUN/emu-$pid.json" ] && what="$what record"
  if [ -n "$what" ]; then
    left=$((left + 1))
    echo "iteration $i: after emu list, pid $pid left:$what"
    sed 's/^/  /' "$LOG/list"
  fi
done 2>/dev/null
echo "killed $N: hung $hung, left behind $left"
[ "$hung" = 0 ] && [ "$left" = 0 ]
