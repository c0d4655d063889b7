#!/usr/bin/env bash
# Pretrained-size language models, the app against plain Python PyTorch: randomly
# initialised models of Pythia-160m's and mamba-130m's shapes (bench/bench_lm.cpp and
# bench/python/lm_ref.py build the same ones), each measurement run by the two sides
# alternately, A B A B ..., one process each time, and the medians compared:
#   forward    one pass over a 1,000-token prompt, logits at every position
#   generate   a 100-token prompt continued greedily by 64 tokens (KV cache / recurrent step)
# Prints C++ / Python per measurement (below 1: the app is faster; the goal is <= 1).
#
# With --transformers PYTHON (a virtualenv's interpreter with torch and transformers from PyPI;
# the suite never needs it), the reference is HuggingFace transformers itself
# (bench/python/lm_hf_ref.py) on the copy paper's workloads, at --size 410m (Pythia-410m's and
# mamba-370m's shapes) by default:
#   phonebook   an 80-entry phone book's prompt (about 900 tokens) answered with 8 new tokens
#   qa          a 600-token question-answering prompt, 32 new tokens
#   perplexity  the loss of every token of 2,000 tokens
# and prints C++ / transformers per workload (the goal is <= 0.5), for the app holding the weights
# as float32 (what transformers holds by default) and as float16 (what --dtype auto holds for
# Pythia's F16 files on a CPU with F16C; the arithmetic is float32 in both).
#
# Usage: bash bench/lm_vs_python.sh [--repeats N] [--threads N] [--tokens T] [--only pythia|mamba]
#        bash bench/lm_vs_python.sh --transformers /path/to/venv/bin/python [--size 160m|410m] [--repeats N]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY=/usr/bin/python3   # Debian's interpreter: its python3-torch is the LibTorch the app links
BENCH="$ROOT/build/bench/bench_lm"
REPEATS=3
THREADS=2
TOKENS=1000
ONLY=all
HF=""
SIZE=410m
while [ $# -gt 0 ]; do
    case "$1" in
        --transformers) HF="$2"; shift 2 ;;
        --size) SIZE="$2"; shift 2 ;;
        --repeats) REPEATS="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --tokens) TOKENS="$2"; shift 2 ;;
        --only) ONLY="$2"; shift 2 ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "lm_vs_python.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$BENCH" ] || { echo "lm_vs_python.sh: $BENCH is missing; build it first (cmake --build build --target bench_lm)" >&2; exit 1; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

if [ -n "$HF" ]; then
    "$HF" -c 'import torch, transformers' 2>/dev/null \
        || { echo "lm_vs_python.sh: $HF cannot import torch and transformers (pip install torch transformers in its virtualenv)" >&2; exit 1; }
    echo "threads $THREADS, $REPEATS alternating runs per side, $SIZE shapes; the app against transformers $("$HF" -c 'import transformers; print(transformers.__version__)') (float32)"
    echo "  (in brackets: C++ / transformers, the goal is <= 0.5)"
    for which in pythia mamba; do
        [ "$ONLY" = all ] || [ "$ONLY" = "$which" ] || continue
        for work in phonebook qa perplexity; do
            case "$work" in
                phonebook) args=(generate --prompt-tokens 900 --new 8) ;;
                qa) args=(generate --prompt-tokens 600 --new 32) ;;
                perplexity) args=(perplexity --tokens 2000) ;;
            esac
            cpp=() half=() py=()
            for r in $(seq 1 "$REPEATS"); do
                cpp+=("$("$BENCH" "$which" "${args[@]}" --repeats 1 --threads "$THREADS" --size "$SIZE" | awk '{ print $3 }')")
                half+=("$("$BENCH" "$which" "${args[@]}" --repeats 1 --threads "$THREADS" --size "$SIZE" --dtype float16 | awk '{ print $3 }')")
                py+=("$("$HF" "$ROOT/bench/python/lm_hf_ref.py" "$which" "${args[@]}" --repeats 1 --threads "$THREADS" --size "$SIZE" 2>/dev/null | awk '{ print $3 }')")
            done
            c="$(printf '%s\n' "${cpp[@]}" | median)"
            h="$(printf '%s\n' "${half[@]}" | median)"
            p="$(printf '%s\n' "${py[@]}" | median)"
            awk -v w="$which" -v x="$work" -v c="$c" -v h="$h" -v p="$p" 'BEGIN {
                printf "  %-7s %-10s transformers %7.3f s   C++ float32 %7.3f s (%.2f)   C++ float16 %7.3f s (%.2f)\n", w, x, p, c, c / p, h, h / p }'
        done
    done
    exit 0
fi

if ! "$PY" -c 'import torch' 2>/dev/null; then
    echo "installing Debian's python3-torch (the reference side)" >&2
    $( [ "$(id -u)" = 0 ] || echo sudo ) apt-get install -y python3-torch >&2
fi

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
