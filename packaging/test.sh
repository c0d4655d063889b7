#!/usr/bin/env bash
# Installs what is missing, builds Parrotscope with its tests and runs the whole suite: the main
# build's tests, then the fuzz build's (packaging/fuzz.sh: every reader's libFuzzer harness for
# 20 s, one a core, and the torch-free tests, all under AddressSanitizer + UBSan). Arguments go to the main
# build's ctest (for example -R tst_cli), and then the fuzz build is left out.
set -euo pipefail
PARROT_WITH_TESTS=1
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
parrot_build -DPARROT_BUILD_TESTS=ON
export QT_QPA_PLATFORM=offscreen
if [ $# -gt 0 ]; then
    cd "$PARROT_BUILD" && exec ctest --output-on-failure "$@"
fi
bash "$PARROT_ROOT/packaging/fuzz.sh" --build
status=0
# as many tests at a time as there are cores (tests/CMakeLists.txt keeps the timing ones alone)
(cd "$PARROT_BUILD" && ctest --output-on-failure --parallel "$(nproc)") || status=1
(cd "${PARROT_FUZZ_BUILD:-$PARROT_ROOT/build-fuzz}" && ctest --output-on-failure --parallel "$(nproc)") || status=1
exit $status
