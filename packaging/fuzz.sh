#!/usr/bin/env bash
# The readers' coverage-guided fuzzing under AddressSanitizer + UBSan, and the torch-free tests
# under the same sanitizers: a build of its own in ./build-fuzz (clang; no Torch, no window).
#
#   bash packaging/fuzz.sh              build, then every harness for 20 s (one a core) and the sanitised tests
#   bash packaging/fuzz.sh --build      build only
#   bash packaging/fuzz.sh NAME [ARGS]  build, then run one harness (safetensors, torchzip, tokenizer,
#                                       bpe, config, hfconfig, squad) with libFuzzer's own ARGS on its
#                                       corpus, for example: bash packaging/fuzz.sh torchzip -max_total_time=1800
#
# New inputs go to build-fuzz/fuzz-corpus/NAME, a crash's input to build-fuzz/fuzz-artifacts/.
# docs/CONTRIBUTING.md, "Fuzzing", says how to turn a crash into a regression case.
set -euo pipefail
PARROT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZ_BUILD="${PARROT_FUZZ_BUILD:-$PARROT_ROOT/build-fuzz}"
if ! command -v clang++ >/dev/null; then
    echo "fuzz.sh: clang++ is not installed (Debian: sudo apt-get install clang libclang-rt-dev)" >&2
    exit 1
fi
cmake -S "$PARROT_ROOT" -B "$FUZZ_BUILD" -DPARROT_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$FUZZ_BUILD" --parallel "$(nproc 2>/dev/null || echo 2)"
case "${1:-}" in
    --build) exit 0 ;;
    "") cd "$FUZZ_BUILD" && exec ctest --output-on-failure --parallel "$(nproc 2>/dev/null || echo 2)" ;;
esac
name="$1"; shift
exe="$FUZZ_BUILD/fuzz_$name"
if [ ! -x "$exe" ]; then
    echo "fuzz.sh: no harness called $name (see tests/fuzz/fuzz_*.cpp)" >&2
    exit 1
fi
mkdir -p "$FUZZ_BUILD/fuzz-corpus/$name" "$FUZZ_BUILD/fuzz-artifacts"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
exec "$exe" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
     -dict="$PARROT_ROOT/tests/fuzz/$name.dict" -artifact_prefix="$FUZZ_BUILD/fuzz-artifacts/$name-" \
     "$@" "$FUZZ_BUILD/fuzz-corpus/$name" "$PARROT_ROOT/tests/fuzz/corpus/$name"
