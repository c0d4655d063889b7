#!/usr/bin/env bash
# Builds Parrotscope against a current LibTorch 2.x taken from the PyTorch wheel (CUDA included),
# the LibTorch a researcher with an NVIDIA GPU usually has already, instead of Debian's 1.13.1
# (CPU). Installs the Debian packages the default build needs plus python3-venv, creates a
# virtualenv with torch from PyPI (cached: the first set-up downloads about 3 GB and unpacks 5 GB,
# 5-10 minutes on a fast line), configures ./build-torch2 with that LibTorch and builds it.
#
# Usage: bash packaging/torch-from-pip.sh [--test] [--run [APP ARGUMENTS]]
#   --test   then run the whole test suite on that build
#   --run    then open the window (arguments after it go to the app)
# Environment: PARROT_TORCH_VENV (default ~/.cache/parrotscope/torch-venv), PARROT_TORCH_SPEC (the
# pip requirement, default "torch"), PARROT_TORCH_BUILD (default ./build-torch2),
# TORCH_CUDA_ARCH_LIST (the GPU architectures for Torch's CUDA flags, default 9.0; no GPU is
# needed to build).
set -euo pipefail
MODE=build
APP_ARGS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --test) MODE=test; shift ;;
        --run) MODE=run; shift; APP_ARGS=("$@"); break ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "torch-from-pip.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

export PARROT_BUILD="${PARROT_TORCH_BUILD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build-torch2}"
# shellcheck source=setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
PARROT_PACKAGES=(python3-venv python3-pip)
parrot_install_packages

VENV="${PARROT_TORCH_VENV:-$HOME/.cache/parrotscope/torch-venv}"
if [ ! -x "$VENV/bin/python" ]; then
    echo "Creating $VENV ..."
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
    echo "Installing ${PARROT_TORCH_SPEC:-torch} from PyPI into $VENV (about 3 GB the first time) ..."
    "$VENV/bin/pip" install --quiet "${PARROT_TORCH_SPEC:-torch}"
fi
TORCH_PREFIX="$("$VENV/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)"
echo "LibTorch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)' 2>/dev/null) from $TORCH_PREFIX"

# The wheel's CUDA libraries (nvidia/*/lib beside torch): libtorch_cuda finds them at run time
# through its own RPATH, but the linker would take an older copy the system may have (a CUDA
# toolkit's libnccl) unless told where they are.
NVIDIA_LIBS="$(ls -d "$TORCH_PREFIX"/../../../nvidia/*/lib "$TORCH_PREFIX"/../../../nvidia/cu*/lib 2>/dev/null | sort -u | paste -sd: -)"
# TORCH_CUDA_ARCH_LIST keeps Torch's CMake from probing for a GPU (its probe needs a newer CMake
# than Debian 12's to compile, and a GPU to answer).
# CMAKE_LIBRARY_PATH: Torch's config looks for libtorch and libc10 with its own folder searched
# last, so with Debian's libtorch-dev installed it would mix the two.
parrot_build -DPARROT_BUILD_TESTS=ON -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" -DCMAKE_LIBRARY_PATH="$TORCH_PREFIX/../../lib" \
             -DTORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}" \
             -DCMAKE_EXE_LINKER_FLAGS="${NVIDIA_LIBS:+-Wl,-rpath-link,$NVIDIA_LIBS}"
echo "Built $PARROT_BUILD/app/parrotscope against that LibTorch."
case "$MODE" in
    test)
        export QT_QPA_PLATFORM=offscreen
        cd "$PARROT_BUILD"
        ctest --output-on-failure ;;
    run)
        exec "$PARROT_BUILD/app/parrotscope" "${APP_ARGS[@]}" ;;
esac
