#!/bin/sh
# Runs one test in a home of its own: HOME and the XDG folders (config, data, cache, state,
# runtime) in a new empty folder, removed afterwards. No setting, lock, recent-file list or cache
# left by an earlier run, by another test running beside it, or by the developer's own use of the
# app can change what the test sees.
set -u
home="$(mktemp -d "${TMPDIR:-/tmp}/parrot-test-home.XXXXXX")" || exit 1
mkdir -p "$home/.config" "$home/.local/share" "$home/.cache" "$home/.local/state" "$home/runtime"
chmod 700 "$home/runtime"
export HOME="$home"
export XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" XDG_CACHE_HOME="$home/.cache"
export XDG_STATE_HOME="$home/.local/state" XDG_RUNTIME_DIR="$home/runtime"
unset XDG_CONFIG_DIRS XDG_DATA_DIRS HF_HOME HF_HUB_CACHE HUGGINGFACE_HUB_CACHE TRANSFORMERS_CACHE
# OpenMP's short spin, which the app sets for itself (restartWithLibrarySettings, core/diagnostics.h):
# the suite runs two tests at a time, and with libgomp's default spin (300,000 rounds) each
# test's threads hold a core the other test needs between Torch's parallel regions; two tests
# that train in-process took twice as long side by side. A setting made outside stands.
[ -n "${OMP_WAIT_POLICY:-}${GOMP_SPINCOUNT:-}" ] || export GOMP_SPINCOUNT=20000
# the test as a child, so that the folder goes once it ends, however it is stopped
"$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' INT TERM
while :; do
    wait "$child"
    status=$?
    kill -0 "$child" 2>/dev/null || break
done
rm -rf "$home"
exit "$status"
