#!/usr/bin/env bash
# Regenerates the bundled checkpoints the explorer opens on (resources/checkpoints/*.safetensors)
# with the project's own training code: the copy-tiny preset (strings of 1-8 letters, alphabet
# of 26), seed 1: a two-layer Hard-ALiBi Transformer as the preset has it (600 steps, under a
# minute on 2 cores) and a two-layer Mamba of width 96 (1200 steps at lr 0.003, a few minutes),
# which copies 8 letters and fails at 12 where the Transformer still copies 85%. Usage: resources/checkpoints/make-bundled.sh [PARROTSCOPE]
# where PARROTSCOPE is the built binary (default build/app/parrotscope). Rebuild afterwards:
# the checkpoints are compiled into the app as Qt resources.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exe="${1:-$here/../../build/app/parrotscope}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
train() {  # name, extra --set options...
    local name="$1"; shift
    "$exe" train --preset copy-tiny --out "$work/$name" --seed 1 "$@"
    cp "$work/$name/checkpoints/last.safetensors" "$here/$name.safetensors"
    echo "wrote $here/$name.safetensors"
}
train copy-hard-alibi
train copy-mamba --set model.kind=mamba --set model.d_model=96 --set train.steps=1200 --set train.lr=0.003
