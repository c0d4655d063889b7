#!/usr/bin/env bash
# Installs what is missing, builds Parrotscope (Release) and opens its window on the
# default experiment. Arguments are passed to the app, e.g. --preset copy-tiny.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
parrot_build
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
    echo "Built $PARROT_BUILD/app/parrotscope, but there is no display to open its window on." >&2
    echo "Run it under a desktop session, or headless with: xvfb-run -a $0  (or see: $PARROT_BUILD/app/parrotscope --help)" >&2
    exit 1
fi
exec "$PARROT_BUILD/app/parrotscope" "$@"
