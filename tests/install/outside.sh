#!/usr/bin/env bash
# tests/install/outside.sh OUT LIBDIR [CMAKE_ARG...]: outside.c built into
# OUT against the libebm installed in LIBDIR, four ways, and run: through
# pkg-config (the ebm.pc that the caller's PKG_CONFIG_* variables find) and
# through CMake (tests/install/cmake, configured with the CMAKE_ARGs, which
# must find LIBDIR/cmake/ebm), each against the shared and the static
# library. The shared builds must load LIBDIR's libebm.so.0, the static ones
# no libebm.so. Used by run.sh (a DESTDIR install) and deb.sh (libebm-dev).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$1 lib=$2
shift 2
mkdir -p "$out"
fail() { echo "outside.sh: $*"; exit 1; }
# quietly LOG CMD...: CMD's output to LOG, shown if it fails
quietly() {
    local log=$1
    shift
    "$@" >"$log" 2>&1 || { cat "$log"; fail "failed: $*"; }
}
# run_loading EXE FILE: EXE loads libebm.so.0 from FILE ("": none; real paths
# compared, since a merged /usr finds /usr/lib's through /lib), then runs
run_loading() {
    local got
    got=$(ldd "$1" | awk '$1 == "libebm.so.0" { print $3 }')
    [ "${got:+$(realpath "$got")}" = "${2:+$(realpath "$2")}" ] ||
        fail "$1 loads libebm.so.0 from '$got', not '${2:-none}'"
    "$1"
}

echo "outside.c through pkg-config (ebm.pc of $(pkg-config --path ebm)), shared and static"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Werror tests/install/outside.c -o "$out/pc_shared" \
    $(pkg-config --cflags --libs ebm) -Wl,-rpath,"$lib" -lm
run_loading "$out/pc_shared" "$lib/libebm.so.0"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Werror tests/install/outside.c -o "$out/pc_static" \
    $(pkg-config --cflags ebm) "$lib/libebm.a" \
    $(pkg-config --libs-only-other --libs-only-l --static ebm | sed 's/-lebm//') -lm
run_loading "$out/pc_static" ""

echo "outside.c through CMake (ebm::ebm, ebm::ebm_static)"
quietly "$out/cmake.log" cmake -S tests/install/cmake -B "$out/cmake" -DCMAKE_BUILD_TYPE=Release "$@"
found=$(sed -n 's/^-- ebm [0-9.]* from //p' "$out/cmake.log")
[ "$found" = "$lib/cmake/ebm" ] || fail "CMake found ebm in '$found', not $lib/cmake/ebm"
quietly "$out/cmake-build.log" cmake --build "$out/cmake"
run_loading "$out/cmake/outside_shared" "$lib/libebm.so.0"
run_loading "$out/cmake/outside_static" ""
