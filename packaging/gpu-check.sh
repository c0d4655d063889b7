#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU, PyTorch (pip's wheel, with CUDA), CMake and a C++
# compiler, but no Qt, builds Parrotscope's core (Qt Core only, -DPARROT_GUI=OFF), its torch-level
# tests and bench_gpu against that PyTorch's LibTorch, runs the tests there (models are built on
# the GPU: the device choice is auto) and prints the GPU's ratios in one run:
#   - the CUDA selective scan against the reference scan (forward + backward, on the GPU);
#   - a training step on the GPU against the same step on that machine's CPU, for the default
#     Transformer, for Mamba at about 1M and 50M parameters and for Mamba-2 and Gated DeltaNet at
#     about 1M, and bf16 autocast against float32;
#   - the paper scale of training-efficiency and length-generalisation (sweep --scale paper, run by
#     bench/paper_scale in one process): the copy paper's efficiency gap, examples to 90% of Mamba
#     and the LSTM against the Transformer's, and how far each model copies past its training lengths.
#
# Usage:
#   bash packaging/gpu-check.sh --prepare   on a Debian 12 machine with apt (this project's): puts
#                                           the Debian packages of Qt 6 Core and Qt Test (about
#                                           15 MB) in .gpu-carry/, which git ignores, to carry over
#   bash packaging/gpu-check.sh             on the GPU machine: unpacks .gpu-carry/ (unless the
#                                           machine has Qt 6 itself), builds ./build-gpu, runs
#                                           the tests and bench_gpu; exits non-zero when a test
#                                           fails or when there is no GPU (said at once)
# Options: --build-anyway (build and test even without a GPU: to check the script elsewhere),
#          --quick (bench_gpu without the 50M model), --no-paper (leave the paper scale out)
# Environment: PARROT_PYTHON (the Python whose torch to build against; default python3),
#              PARROT_GPU_BUILD (default ./build-gpu), OUT (a folder for gpu-check.log, if set),
#              PARROT_GPU_QT=carried (use .gpu-carry/'s Qt even where the machine has its own),
#              TORCH_CUDA_ARCH_LIST (default 9.0, Hopper: H100/H200), CMAKE_CUDA_ARCHITECTURES (90).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARRY="$ROOT/.gpu-carry"
MODE=check
ANYWAY=0
QUICK=()
PAPER=1
for a in "$@"; do
    case "$a" in
        --prepare) MODE=prepare ;;
        --build-anyway) ANYWAY=1 ;;
        --quick) QUICK=(--quick) ;;
        --no-paper) PAPER=0 ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "gpu-check.sh: unknown option $a (see --help)" >&2; exit 2 ;;
    esac
done

# Qt 6.4's Core and Test as Debian 12 ships them, with the libraries they need that a bare CUDA
# image may lack (ICU, double-conversion, libb2, PCRE2-16, GLib); the C and C++ runtimes, zlib,
# zstd and systemd's library are the machine's own.
QT_DEBS=(libqt6core6 libqt6test6 qt6-base-dev qt6-base-dev-tools qmake6 qmake6-bin libicu72 libdouble-conversion3 libb2-1 libpcre2-16-0 libglib2.0-0)

if [ "$MODE" = prepare ]; then
    command -v apt-get >/dev/null || { echo "gpu-check.sh --prepare: needs apt-get (a Debian 12 machine)" >&2; exit 1; }
    mkdir -p "$CARRY"
    grep -qx '/.gpu-carry/' "$ROOT/.gitignore" 2>/dev/null || echo "note: .gpu-carry/ is not in .gitignore" >&2
    (cd "$CARRY" && rm -f ./*.deb && apt-get download "${QT_DEBS[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed') || {
        echo "gpu-check.sh --prepare: apt-get download failed (run 'apt-get update' first?)" >&2; exit 1; }
    echo "Prepared $(ls "$CARRY"/*.deb | wc -l) packages, $(du -sh "$CARRY" | cut -f1), in .gpu-carry/."
    echo "On the GPU machine, from the repository root (carrying .gpu-carry): bash packaging/gpu-check.sh"
    exit 0
fi

BUILD="${PARROT_GPU_BUILD:-$ROOT/build-gpu}"
LOG=/dev/null
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT" && LOG="$OUT/gpu-check.log"; fi
exec > >(tee -a "$LOG") 2>&1
say() { echo "== $*"; }
fail() { echo "gpu-check: FAILED: $*"; exit 1; }
started=$(date +%s)

# 1. PyTorch and the GPU, before anything is built.
PY="${PARROT_PYTHON:-python3}"
command -v "$PY" >/dev/null || fail "no $PY: set PARROT_PYTHON to a Python that has torch"
# (torch's own warnings, e.g. about numpy, go to stderr and are left out of what is read here)
TORCH_INFO="$("$PY" - <<'PY' 2>/tmp/parrot-torch-info.err
import torch
print(torch.utils.cmake_prefix_path)
print(torch.__version__, "CUDA", torch.version.cuda)
print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
PY
)" || fail "$PY cannot import torch: $(tail -3 /tmp/parrot-torch-info.err)"
TORCH_PREFIX="$(sed -n 1p <<<"$TORCH_INFO")"
say "torch $(sed -n 2p <<<"$TORCH_INFO") at $TORCH_PREFIX"
GPU_NAME="$(sed -n 3p <<<"$TORCH_INFO")"
if [ -z "$GPU_NAME" ]; then
    why="torch.cuda.is_available() is False"
    [ "$(sed -n 2p <<<"$TORCH_INFO" | awk '{print $3}')" = None ] && why="this torch was built without CUDA"
    command -v nvidia-smi >/dev/null || why="$why; nvidia-smi is not here (no NVIDIA driver)"
    if [ "$ANYWAY" -eq 0 ]; then fail "no GPU: $why. Run this on a machine with an NVIDIA GPU (or --build-anyway to check the build)"; fi
    say "no GPU ($why): building and testing anyway (--build-anyway); the GPU parts will say they cannot run"
else
    say "GPU: $GPU_NAME"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/   /'
fi
command -v cmake >/dev/null || fail "no cmake on this machine"
command -v c++ >/dev/null || command -v g++ >/dev/null || fail "no C++ compiler (c++ or g++) on this machine"

# 2. Qt 6 Core: the machine's own, else the carried Debian packages unpacked into a folder of their own.
QT_PREFIX=""
if [ "${PARROT_GPU_QT:-}" = carried ] || { ! ls /usr/lib/x86_64-linux-gnu/cmake/Qt6Core/Qt6CoreConfig.cmake >/dev/null 2>&1 \
   && ! ls /usr/lib/cmake/Qt6Core/Qt6CoreConfig.cmake >/dev/null 2>&1; }; then
    ls "$CARRY"/*.deb >/dev/null 2>&1 || fail "this machine has no Qt 6 and .gpu-carry/ holds no packages: run 'bash packaging/gpu-check.sh --prepare' on a Debian 12 machine and carry .gpu-carry"
    command -v dpkg >/dev/null || fail "no dpkg here to unpack .gpu-carry/'s packages"
    QT_ROOT=/tmp/parrot-qt
    rm -rf "$QT_ROOT" && mkdir -p "$QT_ROOT"
    for f in "$CARRY"/*.deb; do dpkg -x "$f" "$QT_ROOT" || fail "cannot unpack $f"; done
    QT_PREFIX="$QT_ROOT/usr"
    export LD_LIBRARY_PATH="$QT_ROOT/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    say "Qt 6 from .gpu-carry/ ($(ls "$CARRY"/*.deb | wc -l) packages) in $QT_ROOT"
fi

# 3. Configure and build the core, its torch tests and bench_gpu.
# The wheel's CUDA libraries (nvidia/*/lib beside torch): found at run time through libtorch_cuda's
# RPATH, but the linker needs telling, or it takes an older copy the CUDA toolkit may have (libnccl).
NVIDIA_LIBS="$(ls -d "$TORCH_PREFIX"/../../../nvidia/*/lib "$TORCH_PREFIX"/../../../nvidia/cu*/lib 2>/dev/null | sort -u | paste -sd: -)"
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
[ -f "$BUILD/CMakeCache.txt" ] && ! grep -q "^CMAKE_GENERATOR:INTERNAL=${GEN[1]:-Unix Makefiles}$" "$BUILD/CMakeCache.txt" && rm -rf "$BUILD"
mkdir -p "$BUILD"
say "configuring $BUILD"
cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DPARROT_GUI=OFF -DPARROT_BUILD_TESTS=ON \
      -DTorch_DIR="$TORCH_PREFIX/Torch" -DCaffe2_DIR="$TORCH_PREFIX/Caffe2" \
      -DCMAKE_PREFIX_PATH="$TORCH_PREFIX${QT_PREFIX:+;$QT_PREFIX}" -DCMAKE_LIBRARY_PATH="$TORCH_PREFIX/../../lib" \
      -DTORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}" -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" \
      -DCMAKE_EXE_LINKER_FLAGS="${NVIDIA_LIBS:+-Wl,-rpath-link,$NVIDIA_LIBS}" \
      > "$BUILD/configure.log" 2>&1 || { tail -40 "$BUILD/configure.log"; fail "cmake could not configure (log above)"; }
grep -E "Parrotscope: (CUDA|no CUDA)" "$BUILD/configure.log" | sed 's/^-- /   /'
grep -Eq "^Torch_DIR:[A-Z]+=$TORCH_PREFIX/Torch\$" "$BUILD/CMakeCache.txt" || fail "cmake took another LibTorch: $(grep ^Torch_DIR "$BUILD/CMakeCache.txt")"
TARGETS=(tst_selectivescan tst_models tst_training tst_mamba2 tst_gated_deltanet bench_gpu paper_scale)
say "building ${TARGETS[*]} with $(nproc) jobs"
cmake --build "$BUILD" --parallel "$(nproc)" --target "${TARGETS[@]}" > "$BUILD/build.log" 2>&1 \
    || { grep -E "error|Error" "$BUILD/build.log" | head -30; fail "the build failed (first errors above; $BUILD/build.log)"; }
say "built in $(( $(date +%s) - started )) s"

# 4. The tests, on the GPU (auto), and the GPU scan test must have run, not skipped.
status=0
export QT_QPA_PLATFORM=offscreen
for t in tst_selectivescan tst_models tst_training tst_mamba2 tst_gated_deltanet; do
    say "$t"
    "$BUILD/tests/$t" -maxwarnings 0 > "$BUILD/$t.log" 2>&1
    rc=$?
    grep -E "^(FAIL!|SKIP|Totals)" "$BUILD/$t.log" | sed 's/^/   /'
    grep -A3 "^FAIL!" "$BUILD/$t.log" | grep -E "Loc:|Actual|Expected|Compared" | head -12 | sed 's/^/     /'
    [ $rc -eq 0 ] || status=1
done
if ! grep -q "^PASS   : .*cudaKernelMatchesReferenceOnGpu" "$BUILD/tst_selectivescan.log"; then
    echo "   the CUDA scan's test against the reference did not pass on a GPU: $(grep -A1 cudaKernelMatchesReferenceOnGpu "$BUILD/tst_selectivescan.log" | tr -s ' ' | head -2 | tr '\n' ' ')"
    status=1
fi

# 5. The ratios.
say "bench_gpu"
"$BUILD/bench/bench_gpu" 10 "${QUICK[@]}"
rc=$?
[ $rc -eq 0 ] || { echo "   bench_gpu exited with $rc"; status=1; }

# 6. The paper scale (only on a GPU: on a CPU it takes hours; paper_scale --estimate says how many).
if [ "$PAPER" -eq 1 ] && [ -n "$GPU_NAME" ]; then
    for sweep in training-efficiency length-generalisation; do
        say "paper scale: $sweep"
        rm -rf "$BUILD/paper/$sweep"
        "$BUILD/bench/paper_scale" "$sweep" "$BUILD/paper/$sweep" || { echo "   paper_scale $sweep failed"; status=1; }
    done
fi
say "done in $(( $(date +%s) - started )) s: $([ $status -eq 0 ] && echo "every test passed" || echo "FAILED (see above)")"
exit $status
