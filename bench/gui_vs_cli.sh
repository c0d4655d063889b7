#!/usr/bin/env bash
# The window's training speed against the command line's: the same experiment trained
# by `parrotscope train` and by the window (live loss plot, progress bar, status bar, evaluations
# drawn as they come), alternately, A B A B ...; both read their time per step from the run
# folder's metrics.csv (train_time_s: training steps only, from step `skip` to the last), and the
# window's peak resident memory is read by /usr/bin/time. The window runs offscreen (Qt's
# offscreen platform renders the same pixels as a display) with a fresh home folder, so no saved
# settings or layout of the user's are touched.
#
# Usage: bash bench/gui_vs_cli.sh [--repeats N] [--steps N] [--threads N] [--app PATH]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
APP="$ROOT/build/app/parrotscope"
REPEATS=3
STEPS=150
SKIP=10
THREADS=2
PRESET=copy-hard-alibi
while [ $# -gt 0 ]; do
    case "$1" in
        --repeats) REPEATS="$2"; shift 2 ;;
        --steps) STEPS="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --app) APP="$2"; shift 2 ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "gui_vs_cli.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$APP" ] || { echo "gui_vs_cli.sh: $APP is missing; build it first (bash packaging/run.sh, or the README's test command)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "gui_vs_cli.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# Periodic evaluations as in the default experiment, so the window draws accuracy curves too.
SETS=(--set "train.steps=$STEPS" --set train.eval_every=50 --set train.checkpoint_every=0 --set task.eval_samples=32)

msPerStep() {  # metrics.csv -> milliseconds per step from step SKIP to the last logged step
    awk -F, -v skip="$SKIP" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "train_time_s") c = i; next }
        $1 == skip { a = $c } { last = $1; b = $c } END { if (c && last > skip) printf "%.2f", (b - a) / (last - skip) * 1000 }' "$1"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

cli=() gui=() rss=()
for r in $(seq 1 "$REPEATS"); do
    run="$WORK/cli$r"
    "$APP" train --threads "$THREADS" --preset "$PRESET" --out "$run" "${SETS[@]}" >/dev/null
    cli+=("$(msPerStep "$run/metrics.csv")")

    home="$WORK/home$r"
    mkdir -p "$home"
    HOME="$home" XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" QT_QPA_PLATFORM=offscreen \
        /usr/bin/time -f "%M" -o "$WORK/rss$r" "$APP" --threads "$THREADS" --preset "$PRESET" "${SETS[@]}" --tab train --train \
        --screenshot-at-step "$STEPS" --screenshot "$WORK/gui$r.png" >/dev/null 2>"$WORK/gui$r.err" || { cat "$WORK/gui$r.err" >&2; exit 1; }
    metrics="$(find "$home/data" -name metrics.csv | head -1)"
    [ -n "$metrics" ] || { echo "gui_vs_cli.sh: the window wrote no run folder" >&2; exit 1; }
    gui+=("$(msPerStep "$metrics")")
    rss+=("$(tail -1 "$WORK/rss$r")")
    printf '  [%d/%d] command line %7.1f ms/step   window %7.1f ms/step   window peak %d MB\n' "$r" "$REPEATS" \
        "${cli[-1]}" "${gui[-1]}" "$(( ${rss[-1]} / 1024 ))"
done
"$APP" --diagnostics | grep '^BLAS'
c="$(printf '%s\n' "${cli[@]}" | median)"
g="$(printf '%s\n' "${gui[@]}" | median)"
m="$(printf '%s\n' "${rss[@]}" | median)"
awk -v c="$c" -v g="$g" -v m="$m" -v t="$THREADS" -v s="$STEPS" 'BEGIN {
    printf "window / command line, training step (medians, %d steps, %d threads): %.3f  (command line %.1f ms, window %.1f ms; target <= 1.05)\n", s, t, g / c, c, g
    printf "window peak resident memory: %.0f MB\n", m / 1024 }'
