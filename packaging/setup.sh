#!/usr/bin/env bash
# Shared set-up for run.sh and test.sh: install the missing Debian packages (the list and
# its traps: docs/CONTRIBUTING.md), configure a Release build in ./build and build it with all cores.
# Sourced, not run: it leaves PARROT_ROOT and PARROT_BUILD set.
set -euo pipefail

PARROT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PARROT_BUILD="${PARROT_BUILD:-$PARROT_ROOT/build}"

# Build tools first, then the stack. libopenblas0-openmp matters: without it Debian's
# torch runs on the reference BLAS, about 10x slower (docs/CONTRIBUTING.md trap 1).
# fonts-dejavu-core: the window's font, and the one the tests that measure pixels assume.
PARROT_PACKAGES=(cmake g++ make qt6-base-dev qt6-svg-dev libtorch-dev libopenblas0-openmp
                 libqcustomplot-dev libqcustomplot2.1-qt6 xvfb xauth fonts-dejavu-core)
# With the tests: a single-node Slurm for tst_slurm (tests/slurm/cluster.sh starts it), and clang
# with libFuzzer for the readers' fuzzing under the sanitizers (packaging/fuzz.sh).
if [ "${PARROT_WITH_TESTS:-0}" = 1 ]; then
    PARROT_PACKAGES+=(slurmctld slurmd slurm-client munge clang libclang-rt-dev)
fi

parrot_missing_packages() {
    local p missing=()
    for p in "${PARROT_PACKAGES[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$p")
        fi
    done
    echo "${missing[@]:-}"
}

parrot_install_packages() {
    local missing
    missing="$(parrot_missing_packages)"
    if [ -z "$missing" ]; then
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "Parrotscope needs these Debian packages: $missing" >&2
        echo "Install them with:" >&2
        echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $missing" >&2
        echo "then run this command again." >&2
        exit 1
    fi
    echo "Installing $missing ..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $missing
}

parrot_build() {
    local jobs
    jobs="$(nproc 2>/dev/null || echo 2)"
    cmake -S "$PARROT_ROOT" -B "$PARROT_BUILD" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
    cmake --build "$PARROT_BUILD" --parallel "$jobs"
}

parrot_install_packages
