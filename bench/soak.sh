#!/usr/bin/env bash
# Soak: 100 short training runs back to back through the window's worker and 100 through a sweep
# (the sweep's runs are `train` processes; this process runs the sweep as the window does),
# printing resident memory every 10 runs, the peak, and the growth per run over the second half:
# a leak shows as steady growth. Not part of the test suite (it takes a few minutes).
#
# Usage: bash bench/soak.sh [--runs N] [--steps N]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/build/bench/bench_soak"
case "${1:-}" in
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
esac
[ -x "$BIN" ] || { echo "soak.sh: $BIN is missing; build it first: cmake --build build --target bench_soak" >&2; exit 1; }
export QT_QPA_PLATFORM=offscreen
exec "$BIN" --app "$ROOT/build/app/parrotscope" "$@"
