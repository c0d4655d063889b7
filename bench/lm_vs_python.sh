#!/usr/bin/env bash
# Pretrained-size language models, the app against plain Python PyTorch: randomly
# initialised models of Pythia-160m's and mamba-130m's shapes (bench/bench_lm.cpp and
# bench/python/lm_ref.py build the same ones), each measurement run by the two sides
# alternately, A B A B ..., one process each time, and the medians compared:
#   forward    one pass over a 1,000-token prompt, logits at every position
#   generate   a 100-token prompt continued greedily by 64 tokens (KV cache / recurrent step)
# Prints C++ / Python per measurement (below 1: the app is faster; the goal is <= 1).
#
# Usage: bash bench/lm_vs_python.sh [--repeats N] [--threads N] [--tokens T] [--only pythia|mamba]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY=/usr/bin/python3   # Debian's interpreter: its python3-torch is the LibTorch the app links
BENCH="$ROOT/build/bench/bench_lm"
REPEATS=3
THREADS=2
TOKENS=1000
ONLY=all
while [ $# -gt 0 ]; do
    case "$1" in
        --repeats) REPEATS="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --tokens) TOKENS="$2"; shift 2 ;;
        --only) ONLY="$2"; shift 2 ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "lm_vs_python.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$BENCH" ] || { echo "lm_vs_python.sh: $BENCH is missing; build it first (cmake --build build --target bench_lm)" >&2; exit 1; }
if ! "$PY" -c 'import torch' 2>/dev/null; then
    echo "installing Debian's python3-torch (the reference side)" >&2
    sudo apt-get install -y python3-torch >&2
fi
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "threads $THREADS, $REPEATS alternating runs per side; forward over $TOKENS tokens, generate 100 + 64 tokens"
"$ROOT/build/app/parrotscope" --diagnostics 2>/dev/null | grep '^BLAS' || true
for which in pythia mamba; do
    [ "$ONLY" = all ] || [ "$ONLY" = "$which" ] || continue
    for what in forward generate; do
        cpp=() py=()
        for r in $(seq 1 "$REPEATS"); do
            cpp+=("$("$BENCH" "$which" "$what" --repeats 1 --threads "$THREADS" --tokens "$TOKENS" | awk '{ print $3 }')")
            py+=("$("$PY" "$ROOT/bench/python/lm_ref.py" "$which" "$what" --repeats 1 --threads "$THREADS" --tokens "$TOKENS" | awk '{ print $3 }')")
        done
        c="$(printf '%s\n' "${cpp[@]}" | median)"
        p="$(printf '%s\n' "${py[@]}" | median)"
        awk -v w="$which" -v x="$what" -v c="$c" -v p="$p" 'BEGIN {
            printf "  %-7s %-9s C++ %8.3f s   Python %8.3f s   C++ / Python %.2f (goal <= 1)\n", w, x, c, p, c / p }'
    done
done
