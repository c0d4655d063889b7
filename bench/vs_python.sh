#!/usr/bin/env bash
# The app against plain Python PyTorch on the same experiment: the same model, built
# from the app's own resolved config (bench/python/parrot_ref.py reads it), the same data, the
# same optimiser and schedule, the same threads; the two sides run alternately, A B A B ...
#
#   transformer step  seconds per training step of the default experiment, from step `skip` to
#                     the last (the app: metrics.csv's training-time column, evaluations excluded;
#                     Python: the same clock around batch, forward, backward, clip and AdamW)
#   mamba step        the same for Mamba at the Transformer's parameter count (--match-params);
#                     fewer steps: the reference's selective scan is a Python loop over time
#   time to 95% @20   wall seconds from the start of training (evaluations included) to the first
#                     periodic evaluation (every --eval-every steps, 256 strings of length 20,
#                     teacher-forced) with string accuracy >= 0.95; seeds 1, 2, 3, ...
#
# Usage (from anywhere; run folders go to a temporary directory, deleted at exit):
#   bash bench/vs_python.sh [--repeats N] [--result-repeats N] [--only step|mamba|result]
#        [--threads N] [--eval-every E] [--steps N] [--mamba-steps N] [--target P]
#        [--result-steps N] [--app PATH]
# --result-steps caps the time-to-result runs (default: the preset's train.steps).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY=/usr/bin/python3   # Debian's interpreter: its python3-torch is the LibTorch the app links
REF="$ROOT/bench/python/train_ref.py"
APP="$ROOT/build/app/parrotscope"
PRESET=copy-hard-alibi
REPEATS=3
RESULT_REPEATS=
ONLY=all
THREADS=2
EVAL_EVERY=100
STEPS=150
SKIP=10
MAMBA_STEPS=15
MAMBA_SKIP=3
TARGET=0.95
EVAL_SAMPLES=256
RESULT_STEPS=
STEP_TARGET=0.70   # the goal for the Transformer step: C++ at most 70% of Python's time

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; }
while [ $# -gt 0 ]; do
    case "$1" in
        --repeats) REPEATS="$2"; shift 2 ;;
        --result-repeats) RESULT_REPEATS="$2"; shift 2 ;;
        --only) ONLY="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --eval-every) EVAL_EVERY="$2"; shift 2 ;;
        --steps) STEPS="$2"; shift 2 ;;
        --mamba-steps) MAMBA_STEPS="$2"; shift 2 ;;
        --target) TARGET="$2"; shift 2 ;;
        --result-steps) RESULT_STEPS="$2"; shift 2 ;;
        --app) APP="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "vs_python.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
RESULT_REPEATS="${RESULT_REPEATS:-$REPEATS}"
case "$ONLY" in all|step|mamba|result) ;; *) echo "--only: expected step, mamba or result, got '$ONLY'" >&2; exit 2 ;; esac
for v in REPEATS RESULT_REPEATS THREADS EVAL_EVERY STEPS MAMBA_STEPS; do
    case "${!v}" in ''|*[!0-9]*) echo "vs_python.sh: ${v,,} must be a positive integer, got '${!v}'" >&2; exit 2 ;; esac
done
[ "$STEPS" -gt "$SKIP" ] || { echo "--steps must exceed $SKIP" >&2; exit 2; }
[ "$MAMBA_STEPS" -gt "$MAMBA_SKIP" ] || { echo "--mamba-steps must exceed $MAMBA_SKIP" >&2; exit 2; }

# ---- (a) Python with torch: Debian's python3-torch ----------------------------------------------
if ! "$PY" -c 'import torch' 2>/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "The Python side needs Debian's PyTorch for $PY. Install it with:" >&2
        echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends python3-torch" >&2
        exit 1
    fi
    echo "Installing python3-torch ..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends python3-torch \
        || { apt-get update -q && apt-get install -y -q --no-install-recommends python3-torch; }
fi

# ---- (b) the app ---------------------------------------------------------------------------------
if [ ! -x "$APP" ]; then
    echo "Building $APP (Release) ..."
    # shellcheck source=../packaging/setup.sh
    source "$ROOT/packaging/setup.sh"   # installs the missing Debian packages, or says how
    cmake -S "$PARROT_ROOT" -B "$PARROT_BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$PARROT_BUILD" --target parrotscope --parallel "$(nproc 2>/dev/null || echo 2)"
    APP="$PARROT_BUILD/app/parrotscope"
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/vs_python.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

fail() { echo "vs_python.sh: $*" >&2; exit 1; }
app() { "$APP" "$@" --threads "$THREADS"; }
# A field of the one JSON line train_ref.py prints.
field() { "$PY" -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print(v if not isinstance(v, bool) else str(v).lower())' "$1" "$2"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
ms() { awk -v s="$1" 'BEGIN {printf "%.1f", 1000 * s}'; }

# Seconds per step from a run's metrics.csv: (training time at step N - at step K) / (N - K).
# The training-time column has been called elapsed_s, train_time_s and (before wall_s) wall_time_s.
app_step_seconds() {
    awk -F, -v n="$2" -v k="$3" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i
                  c = ("elapsed_s" in col) ? col["elapsed_s"] : ("train_time_s" in col) ? col["train_time_s"] : col["wall_time_s"]
                  next }
        c && $1 == k { a = $c }
        c && $1 == n { b = $c }
        END { if (!c || a == "" || b == "") exit 1; printf "%.6f\n", (b - a) / (n - k) }' "$1/metrics.csv" \
        || fail "$1/metrics.csv: no training-time column or no rows at steps $3 and $2"
}

# "reached STEP WALL ACC" at the first row whose string_acc_L >= target, else "not_reached STEP WALL ACC"
# (the last row: the whole run).
app_time_to_target() {
    awk -F, -v L="$2" -v t="$TARGET" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; w = col["wall_s"]; a = col["string_acc_" L]; next }
        !w || !a { exit 1 }
        { step = $1; wall = $w; if ($a != "") acc = $a }
        $a != "" && $a + 0 >= t { printf "reached %s %s %s\n", $1, $w, $a; found = 1; exit }
        END { if (!w || !a) exit 1; if (!found) printf "not_reached %s %s %s\n", step, wall, acc }' "$1/metrics.csv" \
        || fail "$1/metrics.csv: no wall_s or string_acc_$2 column (this parrotscope predates train.target_accuracy; rebuild it)"
}

echo "vs_python: $("$APP" --version), Python $("$PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'),"\
     "$THREADS threads; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

declare -a SUMMARY

# ---- training steps --------------------------------------------------------------------------------
# step_bench LABEL CONFIG STEPS SKIP
step_bench() {
    local label="$1" cfg="$2" n="$3" k="$4" i run cpp py line
    local -a cpps=() pys=()
    echo "$label: $n steps, time from step $k, $REPEATS repeats (C++ then Python, seeds 1..$REPEATS)"
    for i in $(seq 1 "$REPEATS"); do
        run="$TMP/${label// /-}-cpp-$i"
        app train --config "$cfg" --out "$run" --steps "$n" --seed "$i" --set train.eval_every=0 \
            --set train.log_every=1 --set train.checkpoint_every=0 --set task.eval_lengths=20 \
            --set task.eval_samples=16 >"$run.log" 2>&1 || fail "app training failed, see:
$(tail -5 "$run.log")"
        cpp="$(app_step_seconds "$run" "$n" "$k")"
        line="$("$PY" "$REF" --config "$cfg" --threads "$THREADS" --seed "$i" --steps "$n" --skip "$k")" \
            || fail "train_ref.py failed"
        py="$(field "$line" seconds_per_step)"
        cpps+=("$cpp"); pys+=("$py")
        printf '  [%d/%d] C++ %7s ms/step   Python %7s ms/step   (final loss Python %.3f)\n' "$i" "$REPEATS" \
            "$(ms "$cpp")" "$(ms "$py")" "$(field "$line" final_loss)"
    done
    cpp="$(median "${cpps[@]}")"; py="$(median "${pys[@]}")"
    local goal=""
    [ "$label" = "transformer step" ] && goal="  (target <= $STEP_TARGET)"
    SUMMARY+=("$(printf '%-17s C++ %8s ms   Python %8s ms   ratio %s%s' "$label" "$(ms "$cpp")" "$(ms "$py")" "$(ratio "$cpp" "$py")" "$goal")")
}

if [ "$ONLY" = all ] || [ "$ONLY" = step ]; then
    app config --preset "$PRESET" --set train.eval_every=0 >"$TMP/transformer.json"
    step_bench "transformer step" "$TMP/transformer.json" "$STEPS" "$SKIP"
fi
if [ "$ONLY" = all ] || [ "$ONLY" = mamba ]; then
    app config --preset "$PRESET" --set model.kind=mamba --set train.eval_every=0 --match-params transformer \
        >"$TMP/mamba.json" 2>"$TMP/mamba.match" || fail "$(cat "$TMP/mamba.match")"
    echo "mamba: $(cat "$TMP/mamba.match")"
    step_bench "mamba step" "$TMP/mamba.json" "$MAMBA_STEPS" "$MAMBA_SKIP"
fi

# ---- time to the target accuracy -------------------------------------------------------------------
if [ "$ONLY" = all ] || [ "$ONLY" = result ]; then
    app config --preset "$PRESET" ${RESULT_STEPS:+--set train.steps="$RESULT_STEPS"} >"$TMP/result.json"
    grep -q '"target_accuracy"' "$TMP/result.json" \
        || fail "this parrotscope has no train.target_accuracy; rebuild it (cmake --build build --target parrotscope)"
    L="$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["task"]["max_len"])' "$TMP/result.json")"
    label="time to $(awk -v t="$TARGET" 'BEGIN {printf "%d%%", 100 * t}') @$L"
    echo "$label: evaluations every $EVAL_EVERY steps on $EVAL_SAMPLES strings of length $L, $RESULT_REPEATS repeats (seeds 1..$RESULT_REPEATS)"
    cpps=(); pys=(); notes=""
    for i in $(seq 1 "$RESULT_REPEATS"); do
        run="$TMP/result-cpp-$i"
        app train --config "$TMP/result.json" --out "$run" --seed "$i" --set train.eval_every="$EVAL_EVERY" \
            --set train.eval_samples="$EVAL_SAMPLES" --set task.eval_lengths="$L" --set task.eval_samples="$EVAL_SAMPLES" \
            --set train.target_accuracy="$TARGET" >"$run.log" 2>&1 || fail "app training failed, see:
$(tail -5 "$run.log")"
        read -r cstatus cstep cwall cacc <<<"$(app_time_to_target "$run" "$L")"
        line="$("$PY" "$REF" --config "$TMP/result.json" --threads "$THREADS" --seed "$i" --target-accuracy "$TARGET" \
            --eval-every "$EVAL_EVERY" --eval-samples "$EVAL_SAMPLES" --eval-length "$L")" || fail "train_ref.py failed"
        pstep="$(field "$line" step)"; pwall="$(field "$line" wall_s)"; pacc="$(field "$line" accuracy)"
        [ "$(field "$line" reached)" = true ] && pstatus=reached || pstatus=not_reached
        cpps+=("$cwall"); pys+=("$pwall")
        [ "$cstatus" = reached ] || notes+=" C++ seed $i not reached in $cstep steps (counted as its full $cwall s);"
        [ "$pstatus" = reached ] || notes+=" Python seed $i not reached in $pstep steps (counted as its full $pwall s);"
        printf '  [%d/%d] C++ %7.1f s (step %s, %s %.3f)   Python %7.1f s (step %s, %s %.3f)\n' "$i" "$RESULT_REPEATS" \
            "$cwall" "$cstep" "${cstatus/_/ }" "$cacc" "$pwall" "$pstep" "${pstatus/_/ }" "$pacc"
    done
    cpp="$(median "${cpps[@]}")"; py="$(median "${pys[@]}")"
    SUMMARY+=("$(printf '%-17s C++ %8.1f s    Python %8.1f s    ratio %s%s' "$label" "$cpp" "$py" "$(ratio "$cpp" "$py")" \
        "${notes:+  (not reached:${notes%;})}")")
fi

echo
echo "C++ (parrotscope) against plain PyTorch, medians, $THREADS threads; load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
# Both sides load the same OpenBLAS, which picks its kernels by CPU unless OPENBLAS_CORETYPE names them.
echo "$("$APP" --diagnostics | grep '^BLAS')${OPENBLAS_CORETYPE:+ (OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE set for both sides)}"
printf '%s\n' "${SUMMARY[@]}"
