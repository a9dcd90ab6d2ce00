#!/usr/bin/env bash
# Instructions per I/O of ssdready and fio on the null engine, counted with
# valgrind (repeatable to a few instructions on a noisy machine): each tool
# runs 4 KiB random reads twice, with 50,000 and 150,000 I/Os, and the
# difference divided by 100,000 is its own cost per I/O (start-up, teardown
# and reporting cancel out). fio runs with --thread so valgrind sees the
# job's thread.
#
# Usage: bench/instructions.sh            # QD 1 and QD 32
#        DEPTHS="1 8 32" bench/instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DEPTHS=${DEPTHS:-"1 32"}
command -v valgrind >/dev/null || { echo "instructions: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
cargo build --release -q
SSDREADY=$PWD/target/release/ssdready

irefs() { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 |
  sed -n 's/.*I *refs: *//p' | tr -d ,; }
ours() { irefs "$SSDREADY" run --name=t --ioengine=null --rw=randread --bs=4k --iodepth="$2" \
  --size=4g --number_ios="$1" --quiet --output-format=json --output=/dev/null; }
fios() { irefs fio --thread --name=t --ioengine=null --rw=randread --bs=4k --iodepth="$2" \
  --size=4g --number_ios="$1" --output-format=json --output=/dev/null; }
per_io() { echo $(( ($("$1" 150000 "$2") - $("$1" 50000 "$2")) / 100000 )); }

echo "# $(date -u +%F) $(uname -r) $(nproc) CPUs; $(valgrind --version); $(command -v fio >/dev/null && fio --version || echo 'fio: not installed')"
printf '%-6s %10s %10s %8s\n' depth ssdready fio ratio
for d in $DEPTHS; do
  s=$(per_io ours "$d")
  if command -v fio >/dev/null; then
    f=$(per_io fios "$d")
    printf '%-6s %10s %10s %7s×\n' "$d" "$s" "$f" "$(awk -v a="$f" -v b="$s" 'BEGIN{printf "%.1f", a/b}')"
  else
    printf '%-6s %10s %10s %8s\n' "$d" "$s" - -
  fi
done
