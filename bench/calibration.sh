#!/usr/bin/env bash
# The calibrated emulator presets against their sources: every published
# figure (datasheets, reviews) in crates/run/src/calibration.rs, measured on
# its preset in virtual time at the source's condition, as the README's
# error table (markdown). The figures are deterministic (virtual time, fixed
# seeds); crates/run/tests/calibration.rs holds each within 15 %.
# Usage: bench/calibration.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release -q -p ssdready-run --example calibration
