#!/usr/bin/env bash
# What ssdready's measurements cost, at QD 1 and QD 32 (4 KiB random reads,
# io_uring, loop device over /dev/shm with direct I/O; needs root). Runs
# alternate within each round: fio (the reference a user compares with, when
# installed), ssdready's default run, --profile (1 kHz system-wide
# sampling; PROFILE_HZ_ALT=HZ adds a column at another rate, e.g. 2000, to
# weigh a rate's cost), --decompose (eBPF on the block tracepoints) and its floor (the
# same tracepoints with programs that return at once). Prints medians and
# each one's cost against the default run, and the default run against fio.
# Usage: ROUNDS=5 RUNTIME=5 bench/overhead.sh      (QDS="1 32" by default;
#        LAB=0 leaves guest halt polling as it is; EXACT=1 adds a column for
#        --profile=exact, the tracepoint-bracketed CPU states, with its
#        per-round ratios to the default run and to --profile; EXACT_ONLY=1
#        runs only those three)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
RUNTIME=${RUNTIME:-5}
QDS=${QDS:-"1 32"}
# SSDREADY=PATH runs that binary as it is (a machine without cargo).
if [ -n "${SSDREADY:-}" ]; then B=$SSDREADY; else
  cargo build --release -q
  B=$PWD/target/release/ssdready
fi
DEV=$("$B" ramdev create --kind=loop --size=1g 2>/dev/null)
# Lab conditions: a KVM guest with halt polling off halts an idle vCPU into
# the hypervisor and single QD 1 runs then vary 3x; poll 200 us for the
# bench (LAB=0 keeps the machine as it is) and put the old value back.
HP=/sys/module/haltpoll/parameters/guest_halt_poll_ns
HP_OLD=""
if [ "${LAB:-1}" = 1 ] && [ -w "$HP" ] && [ "$(cat "$HP")" = 0 ]; then
  HP_OLD=0
  echo 200000 >"$HP"
  echo "overhead: guest halt polling set to 200 us for the bench (LAB=0 to keep it off)" >&2
fi
restore() {
  "$B" ramdev remove "$DEV" >/dev/null
  if [ -n "$HP_OLD" ]; then echo "$HP_OLD" >"$HP"; fi
}
trap restore EXIT
HAVE_FIO=$(command -v fio >/dev/null && echo 1 || echo 0)
# iops TOOL QD [args…]: one run's read IOPS (both tools write fio's JSON).
iops() {
  local tool=$1 qd=$2
  shift 2
  local common=(--name=o --filename="$DEV" --rw=randread --bs=4k --ioengine=io_uring --direct=1
    --iodepth="$qd" --runtime="$RUNTIME" --time_based --output-format=json)
  if [ "$tool" = fio ]; then
    fio "${common[@]}" "$@"
  else
    "$B" run --quiet "${common[@]}" "$@"
  fi | python3 -c "import json,sys; print(json.load(sys.stdin)['jobs'][0]['read']['iops'])"
}
for qd in $QDS; do
  fio_=() plain=() prof=() deco=() empty=() alt=() exact=()
  for ((r = 0; r < ROUNDS; r++)); do
    if [ "$HAVE_FIO" = 1 ] && [ "${EXACT_ONLY:-0}" != 1 ]; then fio_+=("$(iops fio "$qd")"); fi
    plain+=("$(iops ssdready "$qd")")
    prof+=("$(iops ssdready "$qd" --profile)")
    if [ -n "${PROFILE_HZ_ALT:-}" ]; then
      alt+=("$(SSDREADY_PROFILE_HZ=$PROFILE_HZ_ALT iops ssdready "$qd" --profile)")
    fi
    if [ "${EXACT:-0}" = 1 ]; then exact+=("$(iops ssdready "$qd" --profile=exact)"); fi
    # EXACT_ONLY=1: only the default run, --profile and --profile=exact.
    if [ "${EXACT_ONLY:-0}" = 1 ]; then continue; fi
    deco+=("$(iops ssdready "$qd" --decompose)")
    empty+=("$(SSDREADY_BPF_EMPTY=1 iops ssdready "$qd" --decompose)")
  done
  python3 - "$qd" "${fio_[*]:-}" "${plain[*]}" "${prof[*]}" "${deco[*]}" "${empty[*]}" "${alt[*]:-}" "${PROFILE_HZ_ALT:-}" "${exact[*]:-}" <<'PY'
import sys, statistics as st
qd = sys.argv[1]
f, a, b, c, d, e = ([float(v) for v in x.split()] for x in sys.argv[2:8])
m = st.median
print(f"QD {qd}:")
if f:
    print(f"  fio:         median {m(f):.0f} IOPS")
    print(f"  default:     median {m(a):.0f} IOPS, {m(a)/m(f):.3f}× fio (cost {100*(1-m(a)/m(f)):.1f}%)")
else:
    print(f"  default:     median {m(a):.0f} IOPS (fio not installed: no reference)")
print(f"  --profile:   median {m(b):.0f} IOPS, cost {100*(1-m(b)/m(a)):.1f}% of the default run")
if e:
    print(f"  --profile at {sys.argv[8]} Hz: median {m(e):.0f} IOPS, cost {100*(1-m(e)/m(a)):.1f}%")
x = [float(v) for v in sys.argv[9].split()]
if x:
    # Paired: each round's runs are neighbours in time, so their ratio
    # cancels the machine's drift between rounds.
    pr = lambda u, v: sorted(p / q for p, q in zip(u, v))
    r_def, r_prof = pr(x, a), pr(x, b)
    print(f"  --profile=exact: median {m(x):.0f} IOPS, cost {100*(1-m(x)/m(a)):.1f}%; "
          f"per round exact/default {', '.join(f'{v:.3f}' for v in r_def)} (median {m(r_def):.3f}), "
          f"exact/--profile {', '.join(f'{v:.3f}' for v in r_prof)} (median {m(r_prof):.3f}: the bracketing alone)")
if c:
    print(f"  --decompose: median {m(c):.0f} IOPS, cost {100*(1-m(c)/m(a)):.1f}%")
    print(f"    floor, empty eBPF programs on the same tracepoints: {m(d):.0f} IOPS, cost {100*(1-m(d)/m(a)):.1f}%")
PY
done
