#!/usr/bin/env bash
# Peak resident memory of loading and running a pretrained-size model held as stored: a randomly
# initialised model of Pythia-1.4B's shape (or --shape pythia-410m|mamba-370m|mamba-1.4b) written
# as F16 safetensors by bench/python/write_random_hf.py (HuggingFace transformers, from PyPI in
# the bench's virtualenv; the suite never needs it), then `parrotscope generate` on it with each
# --dtype, its peak resident set read by GNU time. Prints per dtype the peak, the weights' bytes in
# that dtype (parameters x 2 or 4) and their ratio; the goal is at most 1.2 plus activations (a
# short prompt here, so activations are a few MB).
#
# Usage: bash bench/lm_memory.sh --python /path/to/venv/bin/python [--shape S] [--folder DIR] [--keep]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
APP="$ROOT/build/app/parrotscope"
PY=""
SHAPE=pythia-1.4b
FOLDER=""
KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --python) PY="$2"; shift 2 ;;
        --shape) SHAPE="$2"; shift 2 ;;
        --folder) FOLDER="$2"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "lm_memory.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$APP" ] || { echo "lm_memory.sh: $APP is missing; build it first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "lm_memory.sh: needs GNU time (apt install time)" >&2; exit 1; }
TMP="$(mktemp -d)"
if [ -z "$FOLDER" ]; then
    FOLDER="$TMP/$SHAPE"
    [ "$KEEP" = 1 ] || trap 'rm -rf "$TMP"' EXIT
else
    trap 'rm -f "$TMP/time" "$TMP/out"; rmdir "$TMP"' EXIT
fi
if [ ! -f "$FOLDER/config.json" ]; then
    [ -n "$PY" ] || { echo "lm_memory.sh: no model in $FOLDER; give --python (a virtualenv with torch and transformers) to write one" >&2; exit 1; }
    "$PY" "$ROOT/bench/python/write_random_hf.py" "$SHAPE" "$FOLDER" --dtype float16 >/dev/null
fi
PROMPT="The cat sat on the mat and the dog lay by the door"
baseline=$(/usr/bin/time -f %M "$APP" generate --model "$ROOT/tests/data/hf_tiny/neox" --prompt "$PROMPT" --max-new-tokens 8 2>&1 >/dev/null | tail -1)
echo "$SHAPE as F16 in $FOLDER; the process itself (a tiny model): $((baseline / 1024)) MiB"
printf '%-9s %-9s %12s %12s %7s %8s\n' dtype held "peak MiB" "weights MiB" ratio seconds
for dtype in auto float16 bfloat16 float32; do
    /usr/bin/time -o "$TMP/time" -f "%M %e" "$APP" generate --dtype "$dtype" --model "$FOLDER" --prompt "$PROMPT" --max-new-tokens 8 >"$TMP/out" 2>&1
    out=$(tail -1 "$TMP/time")
    held=$(grep -o 'weights [a-z0-9]*' "$TMP/out" | awk '{ print $2 }')
    params=$(grep -o '[0-9,]* parameters' "$TMP/out" | tr -d , | awk '{ print $1 }')
    bytes=4; [ "$held" = float32 ] || bytes=2
    set -- $out
    awk -v d="$dtype" -v h="$held" -v kb="$1" -v s="$2" -v p="$params" -v b="$bytes" \
        'BEGIN { w = p * b; printf "%-9s %-9s %12.0f %12.0f %7.2f %8.1f\n", d, h, kb / 1024, w / 1048576, kb * 1024 / w, s }'
done
