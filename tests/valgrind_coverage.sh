#!/usr/bin/env bash
# make check-valgrind-coverage: the lines of src/ that the whole suite runs
# and that make check-valgrind, without the test cases of VALGRIND_SKIP,
# does not (gcov line counts). It builds a copy of the working tree with
# --coverage in a temporary directory, runs the suite twice and prints the
# lines the shorter run misses, with their source. The set printed is the
# price of VALGRIND_SKIP; the Makefile's comment states it.
# Usage: tests/valgrind_coverage.sh "SKIP TAGS"   (a few minutes on 2 cores)
set -euo pipefail
skip=${1:?usage: $0 \"suite:test_case ...\"}
repo=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
    xargs -0 cp --parents -t "$T" 2>/dev/null) || true
cd "$T"
cov="-O1 -g --coverage"
make -s -j"$(nproc)" all build/tests/check_ebm CFLAGS="$cov" LDFLAGS=--coverage >/dev/null

# The executed lines of src/, as file:line (the SIMD kernels per build).
executed() {
    local f b k
    for f in src/*.c; do
        b=$(basename "$f" .c)
        gcov -t -o "build/$b.gcno" "$f" 2>/dev/null |
            awk -v F="$f" -F: '$1 ~ /[0-9]/ && $1 !~ /[#-]/ { gsub(/ /, "", $2); print F ":" $2 }'
    done
    for k in build/simd_*.gcno; do
        gcov -t -o "$k" src/simd/kernels.c 2>/dev/null |
            awk -v F="src/simd/kernels.c($(basename "$k" .gcno))" -F: \
                '$1 ~ /[0-9]/ && $1 !~ /[#-]/ { gsub(/ /, "", $2); print F ":" $2 }'
    done
}
run() {
    find build -name '*.gcda' -delete
    CK_EXCLUDE_TAGS="$1" OPENBLAS_NUM_THREADS=1 ./build/tests/check_ebm >/dev/null 2>&1 || {
        echo "the suite failed (CK_EXCLUDE_TAGS=$1)"
        exit 1
    }
    executed | sort -u
}
run "threads" >all.txt
run "threads $skip" >some.txt
comm -23 all.txt some.txt >lost.txt
echo "src/ lines run by the suite: $(wc -l <all.txt); without VALGRIND_SKIP: $(wc -l <some.txt);" \
    "missed: $(wc -l <lost.txt)"
while IFS= read -r at; do
    file=${at%:*} line=${at##*:}
    printf '  %s  %s\n' "$at" "$(sed -n "${line}p" "${file%%(*}" | sed 's/^ *//')"
done <lost.txt
