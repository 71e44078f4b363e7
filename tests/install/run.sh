#!/usr/bin/env bash
# make check-install: libebm as installed, used from outside the tree.
#  1. make install into a temporary DESTDIR (PREFIX=/usr/local); outside.c
#     built through pkg-config and through CMake (find_package(ebm 0.1),
#     tests/install/cmake), each against the shared and the static library,
#     and run (outside.sh); make uninstall leaves no file
#  2. make install with PREFIX=/usr: ebm.pc's contents, the man pages render
#     without warnings, the installed trainers run; make uninstall
# Needs cc, pkg-config, cmake, man (man-db, groff-base) and gfortran
# (OpenBLAS's static flags name -lgfortran); the trainers built (make
# check-install builds them).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=build/install-check
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
rm -rf "$out"
mkdir -p "$out"
for tool in cc pkg-config cmake man; do
    command -v "$tool" >/dev/null || { echo "check-install: $tool is missing"; exit 1; }
done
# quietly LOG CMD...: CMD's output to LOG, shown if it fails
quietly() {
    local log=$1
    shift
    "$@" >"$log" 2>&1 || { cat "$log"; echo "failed: $*"; return 1; }
}
uninstall_leaves_nothing() {
    make -s uninstall DESTDIR="$dest" PREFIX="$1"
    local left
    left=$(find "$dest" -type f)
    [ -z "$left" ] || { echo "make uninstall PREFIX=$1 left:"; echo "$left"; exit 1; }
}

echo "== make install DESTDIR=$dest PREFIX=/usr/local"
quietly "$out/install.log" make install DESTDIR="$dest" PREFIX=/usr/local
lib=$dest/usr/local/lib

echo "== outside.c against it (tests/install/outside.sh)"
PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" \
    bash tests/install/outside.sh "$out" "$lib" -DCMAKE_PREFIX_PATH="$dest/usr/local"
uninstall_leaves_nothing /usr/local

echo "== make install DESTDIR=$dest PREFIX=/usr: ebm.pc, man pages, trainers"
# After the /usr/local install: ebm.pc must follow PREFIX. The default BLAS,
# OpenBLAS, has a pkg-config module, so it is a Requires.private.
quietly "$out/install-usr.log" make install DESTDIR="$dest" PREFIX=/usr
pc=$dest/usr/lib/pkgconfig/ebm.pc
pc_has() { grep -qx "$1" "$pc" || { echo "ebm.pc has no line '$1':"; cat "$pc"; exit 1; }; }
pc_has 'prefix=/usr'
pc_has 'Requires.private: openblas'
pc_has 'Libs.private: -lpthread -lm'
libdir=$(PKG_CONFIG_PATH=${pc%/*} pkg-config --variable=libdir ebm)
[ "$libdir" = /usr/lib ] || { echo "ebm.pc: libdir is $libdir, not /usr/lib"; exit 1; }
grep -q '"/usr/lib/cmake/ebm" REALPATH' "$dest/usr/lib/cmake/ebm/ebmConfig.cmake" ||
    { echo "ebmConfig.cmake does not name /usr/lib/cmake/ebm as its install directory"; exit 1; }
man=$dest/usr/share/man
for page in "$man"/man3/ebm.3 "$man"/man1/ebm-train-{ucd,ucd-lmi,pcd,grbm}.1; do
    if ! warnings=$(man --warnings -l -Tutf8 "$page" 2>&1 >/dev/null) || [ -n "$warnings" ]; then
        echo "$page: ${warnings:-man failed}"
        exit 1
    fi
done
for t in ucd ucd-lmi pcd grbm; do
    "$dest/usr/bin/ebm-train-$t" --help >/dev/null
done
echo "ebm.pc and ebmConfig.cmake for /usr, $(find "$man" -type f | wc -l) man pages, 4 trainers"
uninstall_leaves_nothing /usr
echo "check-install: passed"
