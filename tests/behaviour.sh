#!/usr/bin/env bash
# The command line's observable behaviour, recorded so that a restructuring can show it changed
# nothing.  `snapshot` runs a fixed script of commands with fixed seeds and one thread and keeps
# every output, with timing fields blanked; `diff` compares two snapshots.
#
#   tests/behaviour.sh snapshot BINARY OUT_DIR     e.g. build/app/parrotscope /tmp/before
#   tests/behaviour.sh diff BEFORE_DIR AFTER_DIR   exit 1 and print the differences if any
#
# Rule: a field is timing when its name says so (wall_s, seconds, elapsed, ..._per_s, ms); those
# are blanked, everything else must match byte for byte.
set -euo pipefail

usage() { sed -n '2,9p' "$0" >&2; exit 2; }

# Blank the values of timing fields in JSON, CSV and text so that two runs compare equal.
mask() {
    local f=$1
    case "$f" in
        *.csv)
            # Blank every column whose header names a time.
            awk -F, 'BEGIN { OFS = "," }
                NR == 1 { for (i = 1; i <= NF; ++i) if ($i ~ /(wall|seconds|elapsed|time_s|_ms|per_s)/) t[i] = 1; print; next }
                { for (i in t) if (i + 0 <= NF) $(i + 0) = "T"; print }' "$f" > "$f.m" && mv "$f.m" "$f" ;;
        *)
            sed -E -i \
                -e 's/("[A-Za-z_]*(wall|seconds|elapsed|time_s|_ms|per_s|started|finished_at|created)[A-Za-z_]*" *: *)[^,}]+/\1T/g' \
                -e 's/(in |after |took |ETA )[0-9]+(\.[0-9]+)? ?(s|ms|min)\b/\1T/g' \
                -e 's/[0-9]+(\.[0-9]+)? ?(steps|examples|tokens|tok)\/s/T \2\/s/g' \
                -e 's/(elapsed|ETA) [0-9]+(\.[0-9]+)?(s|ms|min)/\1 T/g' \
                -e '/^QStandardPaths: XDG_RUNTIME_DIR/d' \
                -e '/^step [0-9]+\/[0-9]+ .*tok\/s/d' \
                "$f" ;;
    esac
}

snapshot() {
    local bin out
    bin=$(realpath "$1")
    out=$2
    [ -x "$bin" ] || { echo "behaviour: $bin is not an executable" >&2; exit 2; }
    rm -rf "$out"
    mkdir -p "$out/work"
    out=$(realpath "$out")
    local w=$out/work
    local n=0
    # run NAME ARGS...: the command's stdout, stderr and exit code, each in its own file
    run() {
        local name=$1; shift
        n=$((n + 1))
        local stem
        stem=$(printf '%s/%02d-%s' "$out" "$n" "$name")
        set +e
        (cd "$w" && "$bin" --threads 1 "$@") > "$stem.out" 2> "$stem.err"
        echo $? > "$stem.rc"
        set -e
        mask "$stem.out"
        mask "$stem.err"
    }
    run models models --json
    run tasks tasks --json
    run presets presets
    run sample-copy sample --task copy --count 4 --length 8 --seed 3 --json
    run sample-mqar sample --task mqar --count 2 --length 6 --seed 3 --json
    run config config --preset copy-tiny --set model.d_model=32
    run config-bad config --preset copy-tiny --set model.d_model=0
    run train-transformer train --preset copy-tiny --out t --steps 60 --seed 5 \
        --set train.eval_every=30 --set train.checkpoint_every=60
    run train-mamba train --preset copy-tiny --out m --steps 60 --seed 5 \
        --set model.kind=mamba --set model.d_model=32 --set train.eval_every=30 --set train.checkpoint_every=60
    run train-mqar train --preset copy-tiny --out q --steps 40 --seed 2 \
        --set task.kind=mqar --set task.vocab_size=32 --set task.min_len=2 --set task.max_len=4 \
        --set task.context_len=32 --set 'task.eval_lengths=[2,4]' --set train.eval_every=20 --set train.mechanism_every=10
    for r in t m q; do
        for f in config.json curves.json metrics.csv mechanisms.csv result.json; do
            [ -f "$w/$r/$f" ] && cp "$w/$r/$f" "$out/run-$r-$f" && mask "$out/run-$r-$f"
        done
    done
    local tck=$w/t/checkpoints/last.safetensors mck=$w/m/checkpoints/last.safetensors
    run eval-transformer eval --checkpoint "$tck" --lengths 4,8 --samples 16 --seed 1 --json
    run eval-mamba eval --checkpoint "$mck" --lengths 4,8 --samples 16 --seed 1 --json
    run info info "$tck" --json
    run inspect-transformer inspect --checkpoint "$tck" --length 8 --seed 4 --json
    run inspect-mamba inspect --checkpoint "$mck" --length 8 --seed 4 --json
    run inspect-construction inspect --construction 3 --input abcabd --json
    run inspect-bundled inspect --bundled hard-alibi --length 10 --seed 1 --json
    run runs runs --dir . --json
    run runs-table runs --dir . --table
    run export-loss export --run t --figure loss --out loss.csv
    run export-accuracy export --run t --figure accuracy --out accuracy.csv
    run export-mechanisms export --run q --figure mechanisms --out mechanisms.csv
    run compare-length compare --runs t m --figure length --out length.csv
    run compare-efficiency compare --runs t m --figure efficiency --out efficiency.csv
    run inspect-attention-csv inspect --checkpoint "$tck" --length 8 --seed 4 --figure attention --out attention.csv
    for f in loss accuracy mechanisms length efficiency attention; do
        [ -f "$w/$f.csv" ] && cp "$w/$f.csv" "$out/figure-$f.csv" && mask "$out/figure-$f.csv"
    done
    # Paths differ between snapshots: name the work folder the same in every file.
    grep -rlF "$w" "$out" --exclude-dir=work | xargs -r sed -i "s|$w|WORK|g"
    rm -rf "$w"
    echo "behaviour: $n commands recorded in $out"
}

case "${1:-}" in
    snapshot) [ $# -eq 3 ] || usage; snapshot "$2" "$3" ;;
    diff)
        [ $# -eq 3 ] || usage
        if diff -ru "$2" "$3"; then echo "behaviour: no difference"; else echo "behaviour: the snapshots differ" >&2; exit 1; fi ;;
    *) usage ;;
esac
