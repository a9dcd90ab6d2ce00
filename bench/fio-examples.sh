#!/usr/bin/env bash
# How many of fio's own example job files ssdready parses, beside fio.
#
# Every job file of fio's examples/ directory goes through
# `fio --parse-only` (when fio is installed) and `ssdready run --parse-only`,
# and is classified:
#   both          both tools parse it
#   only-fio      fio parses it, ssdready does not (the reason is printed)
#   only-ssdready ssdready parses it, fio does not
#   neither       neither does (fio's own examples that need an engine or
#                 variables fio 3.33 lacks)
#   non-local     a job uses an engine that is not local storage (network,
#                 remote, CPU-only or external engines); counted apart
#   fio-lacks     fio parses it but cannot run it: a job names an engine
#                 this fio cannot load (`fio --enghelp=E` says "not
#                 loadable"; fio --parse-only does not load engines);
#                 counted apart, ssdready's verdict printed
# The figure is both / (fio parses ∧ local-storage engine ∧ fio has the
# engine), in percent.
#
# fio's files are found at run time, never copied into this repository:
#   FIO_EXAMPLES=DIR            a directory of example job files, or
#   FIO_SRC=DIR                 a fio checkout (its examples/), or
#   /usr/share/doc/fio/examples (Debian's fio package, when it has them), or
#   a shallow clone of https://github.com/axboe/fio into a temporary
#   directory (needs git and the network).
# SSDREADY=PATH picks the binary (default: target/release/ssdready, built
# when missing). FIO=PATH picks fio (default: fio on PATH).
#
# Usage: bench/fio-examples.sh [-v]     (-v: one line per job file)
set -euo pipefail

verbose=0
[[ "${1:-}" == "-v" ]] && verbose=1
root="$(cd "$(dirname "$0")/.." && pwd)"
ssdready="${SSDREADY:-$root/target/release/ssdready}"
fio="${FIO:-$(command -v fio || true)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if [[ ! -x "$ssdready" ]]; then
    (cd "$root" && cargo build --release --quiet)
fi

examples=""
if [[ -n "${FIO_EXAMPLES:-}" ]]; then
    examples="$FIO_EXAMPLES"
elif [[ -n "${FIO_SRC:-}" && -d "$FIO_SRC/examples" ]]; then
    examples="$FIO_SRC/examples"
elif compgen -G "/usr/share/doc/fio/examples/*.fio" >/dev/null; then
    examples="/usr/share/doc/fio/examples"
elif git clone --quiet --depth 1 https://github.com/axboe/fio "$tmp/fio" 2>/dev/null; then
    examples="$tmp/fio/examples"
else
    echo "fio-examples: no fio examples found: set FIO_EXAMPLES=DIR (fio's examples/) or FIO_SRC=DIR (a fio checkout)" >&2
    exit 2
fi
if [[ -z "$fio" ]]; then
    echo "fio-examples: fio is not installed: every file counts as parsed by fio (apt-get install fio for the real figure)" >&2
fi

# Engines that do not do I/O to local storage: network and remote storage,
# CPU-only, external (built outside fio) engines.
nonlocal_re='^(net|netsplice|rdma|rbd|rados|http|gfapi|gfapi_async|libhdfs|libiscsi|nbd|nfs|dfs|ime_psync|ime_psyncv|ime_aio|cpuio|exec|cpp_null|external.*|.*\.so)$'

declare -A count=([both]=0 [only-fio]=0 [only-ssdready]=0 [neither]=0 [non-local]=0 [fio-lacks]=0)
declare -a why=() lacks=()
cd "$tmp"
for f in "$examples"/*.fio; do
    name="$(basename "$f")"
    engines="$(sed -n 's/^[[:space:]]*ioengine[[:space:]]*=[[:space:]]*\([^;#[:space:]]*\).*/\1/p' "$f" | sort -u)"
    nonlocal=0
    for e in $engines; do
        [[ "$e" =~ $nonlocal_re ]] && nonlocal=1
    done
    fio_ok=1 fio_lacks=""
    if [[ -n "$fio" ]]; then
        timeout 20 "$fio" --parse-only "$f" >/dev/null 2>&1 || fio_ok=0
        for e in $engines; do
            help="$(timeout 20 "$fio" --enghelp="$e" 2>&1 || true)"
            if [[ "$help" == *"not loadable"* ]]; then
                fio_lacks="$e"
            fi
        done
    fi
    ours_ok=1
    err="$(timeout 20 "$ssdready" run --parse-only "$f" 2>&1 >/dev/null)" || ours_ok=0
    if (( nonlocal )); then
        class=non-local
    elif (( fio_ok )) && [[ -n "$fio_lacks" ]]; then
        class=fio-lacks
        verdict="parses"
        (( ours_ok )) || verdict="$(printf '%s' "$err" | grep -v '^ssdready: note:' | head -1)"
        lacks+=("$name ($fio_lacks): $verdict")
    elif (( fio_ok && ours_ok )); then
        class=both
    elif (( fio_ok )); then
        class=only-fio
        why+=("$name: $(printf '%s' "$err" | grep -v '^ssdready: note:' | head -1)")
    elif (( ours_ok )); then
        class=only-ssdready
    else
        class=neither
    fi
    count[$class]=$((count[$class] + 1))
    (( verbose )) && printf '%-14s %s\n' "$class" "$name"
done

total=$(( count[both] + count[only-fio] + count[only-ssdready] + count[neither] + count[non-local] + count[fio-lacks] ))
base=$(( count[both] + count[only-fio] ))
echo "fio's examples ($examples): $total job files; fio: ${fio:-not installed}"
for c in both only-fio only-ssdready neither non-local fio-lacks; do
    printf '  %-14s %3d\n' "$c" "${count[$c]}"
done
if (( ${#why[@]} )); then
    echo "ssdready refuses (fio parses):"
    printf '    %s\n' "${why[@]}"
fi
if (( ${#lacks[@]} )); then
    echo "fio parses but lacks the engine (not counted):"
    printf '    %s\n' "${lacks[@]}"
fi
if (( base > 0 )); then
    pct=$(awk -v a="${count[both]}" -v b="$base" 'BEGIN { printf "%.0f", 100 * a / b }')
    echo "parsed by ssdready: ${count[both]} of $base job files that fio parses and can run (its engines) and that use local storage: $pct %"
fi
