#!/usr/bin/env bash
# fio's own test suite (t/run-fio-tests.py) against ssdready installed as
# `fio` and against a real fio, one after the other on this machine, then a
# per-test comparison and the pass counts. Fetches nothing: point it at a
# copy of fio's source (e.g. `git clone https://github.com/axboe/fio`) and
# the two binaries.
#
# Usage: bench/fio-suite.sh FIO_SOURCE_DIR [SSDREADY_BIN] [REAL_FIO]
#          [-- ARGS for run-fio-tests.py, e.g. -o 1 7 1003]
#   SSDREADY_BIN  default: target/release/ssdready
#   REAL_FIO      default: the fio on PATH (Debian's package: fio 3.33);
#                 "none" runs ssdready only
# Environment: ARTIFACTS (default: a new temporary directory) keeps every
#   test's command, output and stderr; PYTHON (default: the first python3
#   that has numpy, scipy, pandas and statsmodels, which fio's scripts use).
# Tests that need helper programs built from fio's source (t/axmap,
# t/ieee754, t/lfsr-test, t/stest) fail for both binaries unless fio was
# built there (`./configure && make` in FIO_SOURCE_DIR).
set -euo pipefail

src=${1:?usage: bench/fio-suite.sh FIO_SOURCE_DIR [SSDREADY_BIN] [REAL_FIO] [-- ARGS]}
shift
ssd=target/release/ssdready
real=$(command -v fio || echo none)
if [[ $# -gt 0 && $1 != -- ]]; then ssd=$1; shift; fi
if [[ $# -gt 0 && $1 != -- ]]; then real=$1; shift; fi
[[ $# -gt 0 && $1 == -- ]] && shift
extra=("$@")

[[ -f $src/t/run-fio-tests.py ]] || { echo "fio-suite: $src/t/run-fio-tests.py not found (allowed: a copy of fio's source)" >&2; exit 2; }
[[ -x $ssd ]] || { echo "fio-suite: $ssd is not an executable ssdready (build it: cargo build --release)" >&2; exit 2; }
src=$(cd "$src" && pwd)
ssd=$(cd "$(dirname "$ssd")" && pwd)/$(basename "$ssd")

py=${PYTHON:-}
if [[ -z $py ]]; then
    for c in python3 /usr/bin/python3; do
        if "$c" -c 'import numpy, scipy, pandas, statsmodels' 2>/dev/null; then py=$(command -v "$c"); break; fi
    done
fi
[[ -n $py ]] || { echo "fio-suite: no python3 with numpy, scipy, pandas and statsmodels (Debian: apt-get install python3-scipy python3-pandas python3-statsmodels)" >&2; exit 2; }

art=${ARTIFACTS:-$(mktemp -d /tmp/fio-suite.XXXXXX)}
mkdir -p "$art/bin"
ln -sf "$ssd" "$art/bin/fio"
# fio's scripts run other scripts as `python3`: the same interpreter.
ln -sf "$py" "$art/bin/python3"
export PATH="$art/bin:$PATH"

run() { # NAME BINARY
    echo "== $1: $2 (artifacts in $art/$1)" >&2
    (cd "$src" && "$py" t/run-fio-tests.py -f "$2" -a "$art/$1" "${extra[@]}") >"$art/$1.log" 2>&1 || true
}
run ssdready "$art/bin/fio"
[[ $real != none ]] && run fio "$real"

"$py" - "$art" "$real" <<'EOF'
import re, sys, os
art, real = sys.argv[1], sys.argv[2]
def results(name):
    out = {}
    path = os.path.join(art, name + ".log")
    if not os.path.exists(path):
        return out
    for line in open(path, errors="replace"):
        m = re.match(r"Test (\d+) (PASSED|FAILED|SKIPPED)\W*(.*)", line)
        if m:
            n = int(m.group(1))
            out[n] = (m.group(2), m.group(3).split()[-1] if m.group(3).split() else "")
    return out
s, f = results("ssdready"), results("fio") if real != "none" else {}
print(f"{'test':>5}  {'name':<34} {'fio':<8} {'ssdready':<8}")
for n in sorted(set(s) | set(f)):
    name = (s.get(n) or f.get(n))[1]
    fv = f.get(n, ("-", ""))[0]
    sv = s.get(n, ("-", ""))[0]
    mark = "  <-- differs" if f and fv == "PASSED" and sv != "PASSED" else ""
    print(f"{n:>5}  {name[:34]:<34} {fv:<8} {sv:<8}{mark}")
sp = {n for n, v in s.items() if v[0] == "PASSED"}
print(f"\nssdready passes {len(sp)} tests", end="")
if f:
    fp = {n for n, v in f.items() if v[0] == "PASSED"}
    print(f"; fio passes {len(fp)}; ssdready passes {len(sp & fp)} of the {len(fp)} fio passes; "
          f"{len(sp - fp)} pass on ssdready only")
else:
    print()
EOF
