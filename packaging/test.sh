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
# The suite runs in a home of its own, new and empty: HOME and the XDG folders (config, data,
# cache, state, runtime). No setting, lock or file from earlier runs, or from the developer's own
# use of the app, can change an outcome. (Each test gets another of its own: tests/freshhome.sh.)
PARROT_TEST_HOME="$(mktemp -d "${TMPDIR:-/tmp}/parrot-suite-home.XXXXXX")"
trap 'rm -rf "$PARROT_TEST_HOME"' EXIT
mkdir -p "$PARROT_TEST_HOME/.config" "$PARROT_TEST_HOME/.local/share" "$PARROT_TEST_HOME/.cache" \
         "$PARROT_TEST_HOME/.local/state" "$PARROT_TEST_HOME/runtime"
chmod 700 "$PARROT_TEST_HOME/runtime"
export HOME="$PARROT_TEST_HOME" XDG_CONFIG_HOME="$PARROT_TEST_HOME/.config" XDG_DATA_HOME="$PARROT_TEST_HOME/.local/share" \
       XDG_CACHE_HOME="$PARROT_TEST_HOME/.cache" XDG_STATE_HOME="$PARROT_TEST_HOME/.local/state" \
       XDG_RUNTIME_DIR="$PARROT_TEST_HOME/runtime"
if [ $# -gt 0 ]; then
    cd "$PARROT_BUILD" && ctest --output-on-failure "$@"
    exit $?
fi
bash "$PARROT_ROOT/packaging/fuzz.sh" --build
status=0
# as many tests at a time as there are cores (tests/CMakeLists.txt keeps the timing ones alone)
(cd "$PARROT_BUILD" && ctest --output-on-failure --parallel "$(nproc)") || status=1
(cd "${PARROT_FUZZ_BUILD:-$PARROT_ROOT/build-fuzz}" && ctest --output-on-failure --parallel "$(nproc)") || status=1
exit $status
