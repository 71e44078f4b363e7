#!/bin/sh
# Writes debian/libebm0.symbols (dpkg-gensymbols' format) from the exported
# symbols of tests/abi/symbols.txt (name@@NODE, one a line) to stdout:
#   sh debian/symbols.sh > debian/libebm0.symbols.new &&
#     mv debian/libebm0.symbols.new debian/libebm0.symbols
# A symbol the current file lists keeps its version (the release that added
# it); a new one gets include/ebm.h's version, the release that adds it.
# Every version node (EBM_0) is listed as NODE@NODE, as dpkg-gensymbols does.
# tests/install/deb.sh checks that the file is current, and the package
# build (dh_makeshlibs -c4) that it is exactly the library's exports.
set -eu
cd "$(dirname "$0")/.."
version=$(sed -n 's/^#define EBM_VERSION_STRING "\(.*\)"/\1/p' include/ebm.h)
abi=$(sed -n 's/^#define EBM_ABI_VERSION \([0-9]*\)/\1/p' include/ebm.h)
current=debian/libebm$abi.symbols
[ -f "$current" ] || current=/dev/null
printf 'libebm.so.%s libebm%s #MINVER#\n' "$abi" "$abi"
printf '* Build-Depends-Package: libebm-dev\n'
sed 's/@@/ /' tests/abi/symbols.txt |
    awk '{ print $1 "@" $2; print $2 "@" $2 }' | LC_ALL=C sort -u |
    awk -v version="$version" '
        FILENAME == ARGV[1] { if ($0 ~ /^ /) known[$1] = $2; next }
        { print " " $1 " " ($1 in known ? known[$1] : version) }' "$current" -
