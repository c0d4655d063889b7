#!/usr/bin/env bash
# Installs what is missing, builds Parrotscope with its tests and runs the whole suite.
set -euo pipefail
PARROT_WITH_TESTS=1
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
parrot_build -DPARROT_BUILD_TESTS=ON
export QT_QPA_PLATFORM=offscreen
cd "$PARROT_BUILD"
ctest --output-on-failure "$@"
