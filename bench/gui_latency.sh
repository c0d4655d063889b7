#!/usr/bin/env bash
# How long the window's GUI thread stalls: runs the built bench_gui_latency, which drives
# the window offscreen through training the default experiment (shrunk to --steps), an evaluation,
# opening the biggest bundled checkpoint, the Explore tab, a shrunken sweep and exporting the whole
# Explore tab, with a 5 ms timer on the GUI thread recording how late it fires. It prints each
# phase's longest and 99th-percentile stall; the goal is none over 50 ms. It builds nothing: build
# the bench_gui_latency target first. Run it on a quiet machine: another build on the same cores
# shows up as scheduling jitter. The window gets a fresh home folder; nothing of the user's is touched.
#
# Usage: bash bench/gui_latency.sh [--steps N] [--threads N] [--build DIR] [--keep DIR] [--trace MS]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
ARGS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --steps|--threads|--keep|--trace) ARGS+=("$1" "$2"); shift 2 ;;
        --build) BUILD="$2"; shift 2 ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "gui_latency.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
BENCH="$BUILD/bench/bench_gui_latency"
APP="$BUILD/app/parrotscope"
[ -x "$BENCH" ] || { echo "gui_latency.sh: $BENCH is missing; build it first: cmake --build $BUILD --target bench_gui_latency" >&2; exit 1; }
[ -x "$APP" ] || { echo "gui_latency.sh: $APP is missing; build it first: cmake --build $BUILD --target parrotscope" >&2; exit 1; }
exec "$BENCH" --app "$APP" "${ARGS[@]}"
