#!/usr/bin/env bash
# Builds the Debian package from a configured build folder and checks what it installs:
# the files, that the packaged binary runs, that Depends names runtime packages covering
# every library the binary links, and (where the tools are installed) the desktop entry
# and AppStream metainfo validators. Registered with CTest as package_deb.
#   bash packaging/test-deb.sh BUILD_DIR
set -euo pipefail

die() { echo "test-deb: FAIL: $*" >&2; exit 1; }
failures=0
fail() { echo "test-deb: FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
[ -f "$1/CPackConfig.cmake" ] || die "$1/CPackConfig.cmake not found: configure the build folder first (cmake -S . -B $1)"
build="$(cd "$1" && pwd)"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
app_id=io.github.parrotscope.Parrotscope
sizes=(16 32 48 64 128 256)
cpack_var() { sed -n "s/^set($1 \"\(.*\)\")\$/\1/p" "$build/CPackConfig.cmake"; }
version="$(cpack_var CPACK_PACKAGE_VERSION)"
prefix="$(cpack_var CPACK_PACKAGING_INSTALL_PREFIX)"
[ -n "$version" ] || die "no CPACK_PACKAGE_VERSION in $build/CPackConfig.cmake"
[ -n "$prefix" ] || die "no CPACK_PACKAGING_INSTALL_PREFIX in $build/CPackConfig.cmake"

work="$(mktemp -d "${TMPDIR:-/tmp}/parrotscope-deb.XXXXXX")"
trap 'rm -rf "$work"' EXIT
root="$work/root"

# ---- Build the package ---------------------------------------------------------------
cmake --build "$build" --target parrotscope parrot_icons --parallel "$(nproc 2>/dev/null || echo 2)" \
    > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; die "building parrotscope and its icons failed"; }
# cpack's usual install step first builds the whole project ("preinstall" depends on
# "all": every test and benchmark); the package holds only the app and the icons built
# above, so have cpack run the install script instead, under the packaging prefix and
# stripped (CPACK_STRIP_FILES), as its usual step would.
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" \
    -D CPACK_INSTALL_CMAKE_PROJECTS= -D "CPACK_INSTALL_SCRIPTS=$build/cmake_install.cmake" \
    -D "CPACK_INSTALL_PREFIX=$prefix" -D CMAKE_INSTALL_DO_STRIP=1) > "$work/cpack.log" 2>&1 \
    || { cat "$work/cpack.log" >&2; die "cpack -G DEB failed"; }
arch="$(dpkg --print-architecture)"
deb="$work/out/parrotscope_${version}_${arch}.deb"
[ -f "$deb" ] || { ls -l "$work/out" >&2; die "cpack did not write $(basename "$deb")"; }
ok "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"

# ---- Control fields ------------------------------------------------------------------
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = parrotscope ] || fail "Package is '$(field Package)', expected parrotscope"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', expected $version"
[ "$(field Section)" = science ] || fail "Section is '$(field Section)', expected science"
[ -n "$(field Maintainer)" ] || fail "no Maintainer field"
[ -n "$(field Description)" ] || fail "no Description field"
depends="$(field Depends)"
[ -n "$depends" ] || die "the package has no Depends field"
echo "Depends: $depends"
# Every alternative of every dependency: a runtime package (no -dev), known to dpkg here
# (the build machine has the whole runtime installed, so a misspelt name shows up).
dep_names=()
while read -r name; do
    [ -n "$name" ] || continue
    dep_names+=("$name")
    case "$name" in
        *-dev) fail "Depends names the development package $name; the runtime package is needed" ;;
    esac
    [ "$(dpkg-query -W -f='${Status}' "$name" 2>/dev/null)" = "install ok installed" ] \
        || fail "Depends names $name, which is not an installed Debian package on this machine"
done < <(tr ',|' '\n' <<<"$depends" | sed 's/([^)]*)//; s/:any//; s/[[:space:]]//g')
ok "Depends: ${#dep_names[@]} runtime packages, none -dev, all installed here"

# ---- Contents ------------------------------------------------------------------------
dpkg -x "$deb" "$root" || die "dpkg -x $deb failed"
top="$(cd "$root" && ls -A)"
[ "$top" = usr ] || fail "the package installs outside /usr: $(tr '\n' ' ' <<<"$top")"
[ ! -e "$root/usr/local" ] || fail "the package installs into /usr/local"

expect_file() {
    if [ -f "$root/$1" ] && [ -s "$root/$1" ]; then ok "/$1"; else fail "/$1 is missing or empty"; fi
}
expect_file usr/bin/parrotscope
[ -x "$root/usr/bin/parrotscope" ] || fail "/usr/bin/parrotscope is not executable"
expect_file "usr/share/applications/$app_id.desktop"
expect_file "usr/share/metainfo/$app_id.metainfo.xml"
expect_file "usr/share/icons/hicolor/scalable/apps/$app_id.svg"
for s in "${sizes[@]}"; do
    png="usr/share/icons/hicolor/${s}x${s}/apps/$app_id.png"
    expect_file "$png"
    [ -f "$root/$png" ] || continue
    # PNG signature, then IHDR width and height (big-endian, bytes 16-23).
    magic="$(od -An -tx1 -N8 "$root/$png" | tr -d ' \n')"
    dims="$(od -An -tu1 -j16 -N8 "$root/$png" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}')"
    [ "$magic" = 89504e470d0a1a0a ] || fail "/$png is not a PNG file"
    [ "$dims" = "${s}x${s}" ] || fail "/$png is $dims pixels, expected ${s}x${s}"
done
for kind in presets:json checkpoints:safetensors; do
    dir="${kind%%:*}" ext="${kind#*:}" n=0
    for f in "$src/resources/$dir"/*."$ext"; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        dest="usr/share/parrotscope/$dir/$(basename "$f")"
        cmp -s "$f" "$root/$dest" || fail "/$dest is missing or differs from resources/$dir/$(basename "$f")"
    done
    [ "$n" -gt 0 ] || fail "no resources/$dir/*.$ext in the source tree to compare against"
    installed="$( { find "$root/usr/share/parrotscope/$dir" -type f 2>/dev/null || true; } | wc -l)"
    [ "$installed" -eq "$n" ] || fail "/usr/share/parrotscope/$dir holds $installed files, the source tree $n"
    ok "/usr/share/parrotscope/$dir: $n .$ext files, identical to resources/$dir"
done

# The desktop entry and metainfo must point at what the package installs.
desktop="$root/usr/share/applications/$app_id.desktop"
metainfo="$root/usr/share/metainfo/$app_id.metainfo.xml"
if [ -f "$desktop" ]; then
    grep -qx "Icon=$app_id" "$desktop" || fail "the desktop entry's Icon= is not $app_id"
    exec_bin="$(sed -n 's/^Exec=\([^ ]*\).*/\1/p' "$desktop")"
    [ -x "$root/usr/bin/$exec_bin" ] || fail "the desktop entry runs '$exec_bin', which is not in /usr/bin"
fi
if [ -f "$metainfo" ]; then
    grep -q "<id>$app_id</id>" "$metainfo" || fail "the metainfo's <id> is not $app_id"
    grep -q "<launchable type=\"desktop-id\">$app_id.desktop</launchable>" "$metainfo" \
        || fail "the metainfo does not launch $app_id.desktop"
    grep -q "<release version=\"$version\"" "$metainfo" || fail "the metainfo has no <release> for $version"
fi

# ---- The packaged binary -------------------------------------------------------------
bin="$root/usr/bin/parrotscope"
if [ -x "$bin" ]; then
    dynamic="$(readelf -d "$bin")" || die "readelf -d $bin failed"
    if grep -Eq '\((RPATH|RUNPATH)\)' <<<"$dynamic"; then
        fail "the packaged binary keeps a run path: $(grep -E 'RPATH|RUNPATH' <<<"$dynamic")"
    fi
    export QT_QPA_PLATFORM=offscreen
    out="$("$bin" --version 2>&1)" || fail "parrotscope --version exited with $?: $out"
    echo "\$ parrotscope --version"$'\n'"$out"
    [ "$out" = "parrotscope $version" ] || fail "parrotscope --version printed '$out', expected 'parrotscope $version'"
    out="$("$bin" --diagnostics 2>&1)" || fail "parrotscope --diagnostics exited with $?: $out"
    echo "\$ parrotscope --diagnostics"$'\n'"$out"
    grep -qx "Parrotscope $version" <<<"$out" || fail "--diagnostics does not start with 'Parrotscope $version'"
    for key in Qt LibTorch BLAS Threads Device; do
        grep -Eq "^$key: +[^ ]" <<<"$out" || fail "--diagnostics has no '$key:' line"
    done
    if grep -q "reference BLAS" <<<"$out"; then
        echo "note: this machine runs torch on the reference BLAS; the package's Depends pulls in libopenblas0-openmp"
    fi

    # Depends must cover every library the binary links directly: the package that owns
    # each one (merged /usr: dpkg may know it under /lib or /usr/lib).
    owner() {
        local p="$1" real candidate line
        real="$(readlink -f "$p")"
        for candidate in "$p" "$real" "/usr${p#/usr}" "${p#/usr}" "/usr${real#/usr}" "${real#/usr}"; do
            line="$(dpkg -S "$candidate" 2>/dev/null)" || true
            line="${line%%$'\n'*}"
            if [ -n "$line" ]; then echo "${line%%:*}"; return 0; fi
        done
        return 1
    }
    missing=()
    ldd_out="$(ldd "$bin")" || die "ldd $bin failed"
    while read -r soname; do
        # "soname => /path (address)", or "/path (address)" for the dynamic loader
        path="$(awk -v s="$soname" '
            !found && $1 == s && $2 == "=>" { print $3; found = 1 }
            !found && $2 != "=>" { n = split($1, part, "/"); if (n > 1 && part[n] == s) { print $1; found = 1 } }' <<<"$ldd_out")"
        if [ -z "$path" ] || [ "$path" = "not" ]; then fail "$soname, linked by parrotscope, is not found by ldd"; continue; fi
        pkg="$(owner "$path")" || { fail "no Debian package owns $path ($soname)"; continue; }
        printf '  %-28s %-55s %s\n' "$soname" "$path" "$pkg"
        [[ " ${dep_names[*]} " == *" $pkg "* ]] || missing+=("$pkg ($soname)")
    done < <(sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' <<<"$dynamic")
    if [ ${#missing[@]} -eq 0 ]; then
        ok "every directly linked library's package is in Depends"
    else
        fail "Depends lacks the packages of linked libraries: ${missing[*]}"
    fi
fi

# ---- Validators (skipped where not installed) ----------------------------------------
# As root, as setup.sh does for the build, install what is missing; never fatal.
need=()
command -v desktop-file-validate >/dev/null || need+=(desktop-file-utils)
command -v appstreamcli >/dev/null || need+=(appstream)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "Installing ${need[*]} for the validators ..."
    export DEBIAN_FRONTEND=noninteractive
    apt_install() { timeout 120 apt-get install -y -q --no-install-recommends "${need[@]}" >> "$work/apt.log" 2>&1; }
    if ! apt_install && ! { timeout 120 apt-get update -q >> "$work/apt.log" 2>&1 && apt_install; }; then
        echo "note: could not install ${need[*]}:"
        tail -n 3 "$work/apt.log"
    fi
fi
# Their findings are printed in full (hints and pedantic notes included); errors fail the test.
if command -v desktop-file-validate >/dev/null; then
    if out="$(desktop-file-validate "$desktop" 2>&1)"; then
        [ -z "$out" ] || echo "${out//$root/}"
        ok "desktop-file-validate"
    else
        fail "desktop-file-validate: ${out//$root/}"
    fi
else
    echo "skipped: desktop-file-validate not installed (Debian package desktop-file-utils)"
fi
if command -v appstreamcli >/dev/null; then
    # appstream 0.16 (Debian 12): --no-net skips the URL checks, --strict fails on any
    # issue above "pedantic", --pedantic shows those too.
    if out="$(appstreamcli validate --no-net --strict --pedantic "$metainfo" 2>&1)"; then
        echo "${out//$root/}"
        ok "appstreamcli validate"
    else
        fail "appstreamcli validate: ${out//$root/}"
    fi
    # The installed tree as a software centre sees it: metainfo, desktop entry and icons together.
    if out="$(appstreamcli validate-tree --no-net --pedantic "$root" 2>&1)"; then
        echo "${out//$root/}"
        ok "appstreamcli validate-tree"
    else
        fail "appstreamcli validate-tree: ${out//$root/}"
    fi
else
    echo "skipped: appstreamcli not installed (Debian package appstream)"
fi

if [ "$failures" -gt 0 ]; then
    echo "test-deb: $failures check(s) failed for $(basename "$deb")" >&2
    exit 1
fi
echo "test-deb: all checks passed for $(basename "$deb")"
