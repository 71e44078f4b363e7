#!/usr/bin/env bash
# make check-deb: the Debian packages (debian/) built, checked, installed,
# used from outside and removed. Root on Debian only: it installs and purges
# libebm0, libebm-dev, ebm-tools, python3-ebm (and their -dbgsym) with apt-get.
#  1. debian/libebm0.symbols is current with tests/abi/symbols.txt
#     (debian/symbols.sh)
#  2. make deb: dpkg-buildpackage -us -uc -b into build/deb/; the build runs
#     the C suite with Debian's flags and checks that the library exports
#     exactly the symbols file (dh_makeshlibs -c4)
#  3. lintian on the .changes and its packages: no error (the rest printed)
#  4. apt-get install ./build/deb/*.deb
#  5. outside.c built against the installed libebm-dev through pkg-config
#     and through CMake, shared and static, and run; the shared builds load
#     /usr/lib/<multiarch>/libebm.so.0, the static ones no libebm.so
#  6. /usr/bin/python3: import ebm loads libebm0's library, and log Z of a
#     small RBM equals numpy's sum over its visible states
#  7. the trainers run (ebm-train-* --help) and have man pages
#  8. apt-get purge: dpkg knows none of the packages and none of their files
#     is left
# Needs the Build-Depends of debian/control, dpkg-dev, debhelper, dh-python,
# lintian, cmake and gfortran (OpenBLAS's static flags name -lgfortran).
# DEB_BUILD_OPTIONS=nocheck skips the C suite in the package build.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=build/deb-check
debs=build/deb

stages=() stage_start=$SECONDS stage_name=
step() {
    [ -z "$stage_name" ] || stages+=("$(printf '%5d s  %s' $((SECONDS - stage_start)) "$stage_name")")
    stage_name=$*
    stage_start=$SECONDS
    printf '\n== deb: %s\n' "$*"
}
installed=()
finish() {
    local rc=$?
    if [ "${#installed[@]}" -gt 0 ]; then
        echo "deb: removing the packages (apt-get purge) after a failure"
        apt-get purge -y -qq "${installed[@]}" >/dev/null || true
    fi
    step end
    printf '\n== deb: stage seconds (%s)\n' "$([ "$rc" = 0 ] && echo passed || echo "FAILED, exit $rc")"
    printf '%s\n' "${stages[@]}"
}
trap finish EXIT
fail() { echo "deb: $*"; exit 1; }

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    fail "installs packages with apt-get: run it as root on Debian"
fi
for tool in dpkg-buildpackage dh lintian cmake pkg-config cc; do
    command -v "$tool" >/dev/null || fail "$tool is missing"
done
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=/usr/lib/$ma
for p in libebm0 libebm-dev ebm-tools python3-ebm; do
    if dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then
        fail "$p is installed already; this check installs and purges it: apt-get purge $p"
    fi
done
rm -rf "$out"
mkdir -p "$out"

step "debian/libebm0.symbols from tests/abi/symbols.txt"
sh debian/symbols.sh | diff -u debian/libebm0.symbols - ||
    fail "debian/libebm0.symbols is stale: sh debian/symbols.sh > new && mv new debian/libebm0.symbols"
echo "$(grep -c '^ ' debian/libebm0.symbols) symbols"

step "make deb (dpkg-buildpackage -us -uc -b)"
make -s deb >"$out/build.log" 2>&1 || { tail -n 80 "$out/build.log"; fail "make deb failed ($out/build.log)"; }
grep -E '^100%: Checks|^python3: ebm' "$out/build.log" || true
ls -1 "$debs"

step "lintian (no error; warnings listed)"
rc=0
lintian --fail-on error "$debs"/*.changes >"$out/lintian.log" 2>&1 || rc=$?
grep -v 'running with root privileges' "$out/lintian.log" || echo "(no tag)"
[ "$rc" = 0 ] || fail "lintian found errors (exit $rc)"

step "apt-get install ./$debs/*.deb"
mapfile -t installed < <(for f in "$debs"/*.deb; do dpkg-deb -f "$f" Package; done)
apt-get install -y -qq "./$debs"/*.deb >"$out/install.log" 2>&1 ||
    { cat "$out/install.log"; fail "apt-get install failed"; }
for p in "${installed[@]}"; do
    printf '%-18s %s\n' "$p" "$(dpkg-query -W -f '${Version} ${db:Status-Status}' "$p")"
done

step "outside.c against libebm-dev: pkg-config and CMake, shared and static"
# Only the system's directories: a /usr/local install must not stand in.
export PKG_CONFIG_LIBDIR=$libdir/pkgconfig:/usr/lib/pkgconfig:/usr/share/pkgconfig
[ "$(pkg-config --path ebm)" = "$libdir/pkgconfig/ebm.pc" ] || fail "pkg-config's ebm is not libebm-dev's"
bash tests/install/outside.sh "$out" "$libdir"
unset PKG_CONFIG_LIBDIR

step "python3-ebm: import ebm from /usr/bin/python3, log Z of an RBM"
(cd / && /usr/bin/python3 - "$libdir/libebm.so.0" <<'PY'
import itertools
import os
import sys

import numpy as np

import ebm

# libebm0's library, by its SONAME: no copy inside the package.
assert ebm.library_path == "libebm.so.0", ebm.library_path
with open("/proc/self/maps") as maps:
    mapped = {line.split()[-1] for line in maps if "libebm" in line}
assert mapped == {os.path.realpath(sys.argv[1])}, mapped
assert os.path.dirname(ebm.__file__) == "/usr/lib/python3/dist-packages/ebm", ebm.__file__

m = ebm.RBM(5, 3).init(ebm.Generator(1), scheme="gaussian", scale=1.0)
v = np.array(list(itertools.product([0, 1], repeat=5)), dtype=np.float64)
w, a, b = m.weight(1), m.bias(0), m.bias(1)
reference = np.logaddexp.reduce(v @ a + np.logaddexp(0, v @ w + b).sum(axis=1))
log_z = m.log_partition()
assert abs(log_z - reference) <= 1e-9 * abs(reference), (log_z, reference)
print("ebm %s (%s): log Z %.6f, numpy's enumeration %.6f" % (ebm.version(), mapped.pop(), log_z, reference))
PY
)

step "ebm-tools: the trainers and their man pages"
for t in pcd ucd ucd-lmi grbm; do
    "/usr/bin/ebm-train-$t" --help >/dev/null || fail "ebm-train-$t --help failed"
    [ -f "/usr/share/man/man1/ebm-train-$t.1.gz" ] || fail "no man page ebm-train-$t(1)"
done
ebm-train-pcd --help >"$out/help.txt"
head -n 2 "$out/help.txt"

step "apt-get purge: nothing left"
files=$(dpkg -L "${installed[@]}" | sort -u)
apt-get purge -y -qq "${installed[@]}" >"$out/purge.log" 2>&1 ||
    { cat "$out/purge.log"; fail "apt-get purge failed"; }
purged=("${installed[@]}")
installed=()
for p in "${purged[@]}"; do
    if dpkg -L "$p" >/dev/null 2>&1; then fail "dpkg still lists files of $p"; fi
done
# Their files (not the directories they shared with others: /usr, /usr/lib,
# ...), and whatever else bears their names (Python's byte code, say).
mapfile -t listed <<<"$files"
left=()
for f in "${listed[@]}" /usr/lib/*/libebm* /usr/lib/*/cmake/ebm /usr/lib/*/pkgconfig/ebm.pc \
    /usr/include/ebm.h /usr/lib/python3/dist-packages/ebm* /usr/bin/ebm-train-* \
    /usr/share/doc/libebm* /usr/share/doc/ebm-tools* /usr/share/doc/python3-ebm \
    /usr/share/man/man3/ebm.3.gz /usr/share/man/man1/ebm-train-*; do
    if [ -e "$f" ] && { ! [ -d "$f" ] || [[ $f == *ebm* ]]; }; then left+=("$f"); fi
done
[ "${#left[@]}" = 0 ] || fail "left after the purge: ${left[*]}"
echo "purged ${purged[*]}; none of their $(wc -l <<<"$files") paths is left"
