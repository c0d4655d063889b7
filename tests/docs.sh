#!/usr/bin/env bash
# The docs' pictures and command reference are made by the app: this runs docs/make.sh in its
# quick form (every run shrunk) into a scratch folder and checks that
#   - every image the README, the user guide, the other docs and the AppStream file show is in
#     docs/images and was made again by the script, as a PNG;
#   - every image the script makes is shown somewhere (none left behind under an old name);
#   - every committed image is the size of the one made again, and nearly the same picture
#     (tests/imagecompare.cpp): closely for the pictures no training run draws (the Explore tab on
#     the bundled models, the Pretrained tab), loosely for those the shrunk runs draw, so that a
#     missing panel, a blank view or another layout fails while a shorter curve does not;
#   - the command reference in docs/guide/command-line.md is the app's `--help --markdown`.
# A renamed option, figure or tab breaks this test rather than leaving a stale picture.
#   bash tests/docs.sh BUILD_DIR
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:?usage: tests/docs.sh BUILD_DIR}" && pwd)"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

PARROT_BUILD="$BUILD" bash "$ROOT/docs/make.sh" --quick "$SCRATCH/out"

cd "$ROOT"
DOCS=(README.md CHANGELOG.md docs/*.md docs/guide/*.md packaging/io.github.parrotscope.Parrotscope.metainfo.xml)
shown="$(grep -ohE 'docs/images/[A-Za-z0-9_.-]+\.png|\.\./images/[A-Za-z0-9_.-]+\.png|(^|[("/ ])images/[A-Za-z0-9_.-]+\.png' "${DOCS[@]}" \
         | sed -E 's|.*images/||' | sort -u)"
[ -n "$shown" ] || fail "the docs show no image from docs/images"
for name in $shown; do
    [ -f "docs/images/$name" ] || fail "docs show docs/images/$name, which is not there"
    [ -s "$SCRATCH/out/$name" ] || fail "docs/make.sh did not make $name, which the docs show"
    [ "$(head -c 8 "$SCRATCH/out/$name" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$name as made is not a PNG"
    [ "$(head -c 8 "docs/images/$name" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "docs/images/$name is not a PNG"
done
for made in "$SCRATCH"/out/*.png; do
    name="$(basename "$made")"
    grep -qx "$name" <<< "$shown" || fail "docs/make.sh makes $name, but no doc shows it"
done
for committed in docs/images/*.png; do
    name="$(basename "$committed")"
    grep -qx "$name" <<< "$shown" || fail "docs/images/$name is shown by no doc"
done
echo "images: $(wc -w <<< "$shown") shown, each made by docs/make.sh"

# The same pictures: the difference is 0-255 per grey cell (tests/imagecompare.cpp). Two different
# tabs of the window differ by about 60; a picture no run draws, made again, by under 1; the
# figures and tabs the shrunk runs draw by about 5.
COMPARE="$BUILD/tests/imagecompare"
[ -x "$COMPARE" ] || fail "$COMPARE is not built"
for name in $shown; do
    case "$name" in
        explore.png|explore-dark.png|pretrained.png) most=3 ;;   # no run draws them: the same picture
        *) most=15 ;;                                           # shrunk runs: the same figure, other curves
    esac
    result="$(QT_QPA_PLATFORM=offscreen "$COMPARE" "docs/images/$name" "$SCRATCH/out/$name" "$most" 2>/dev/null)" \
        || fail "docs/images/$name is not the picture docs/make.sh makes ($result; at most $most): run bash docs/make.sh (the pictures are made with DejaVu Sans as the default font, which packaging/setup.sh installs, as the tests that measure pixels assume)"
    echo "  $name: $result (at most $most)"
done

# The AppStream file lists the screenshots, the first the default one.
grep -q '<screenshot type="default">' packaging/io.github.parrotscope.Parrotscope.metainfo.xml || fail "the AppStream file lists no default screenshot"

diff -u docs/guide/command-line.md "$SCRATCH/out/command-line.md" \
    || fail "docs/guide/command-line.md's command reference is not the app's --help --markdown: run bash docs/make.sh"
echo "command reference: as the app prints it"
