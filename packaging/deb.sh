#!/usr/bin/env bash
# Installs what is missing, builds Parrotscope (Release, in ./build, like run.sh) and packs
# it as a Debian package with CPack; prints the path of the .deb. Arguments go to the
# configure step, e.g. -DPARROT_BUILD_TESTS=OFF to build only what the package holds.
#   bash packaging/deb.sh && sudo apt install ./build/parrotscope_*.deb
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
parrot_build "$@"
cd "$PARROT_BUILD"
rm -f parrotscope_*.deb
cpack -G DEB
deb="$(ls "$PARROT_BUILD"/parrotscope_*.deb)"
echo "$deb"
