#!/bin/sh
# The fingerprint of libebm's results: hashes that must not change when the
# library is changed without changing its behaviour (a refactoring).
#   bench/fingerprint.sh         (or make fingerprint)
# prints, one "name  hash" line each:
#  1. the output of build/bench/fingerprint (bench/fingerprint.c): 64-bit
#     FNV-1a hashes of fixed-seed computations over the whole public API;
#  2. sha256 hashes of what short runs of example programs write, less what
#     holds timings:
#     - bas_ucd, 2000 iterations x 5 methods: the saved models (bas_*.ebm), the
#       curves (bas_*.csv without their seconds column) and their figure;
#     - train_ucd_lmi on bars-and-stripes, 200 steps: the final model, the
#       checkpoint (FNV, with its training-time field zeroed: fingerprint
#       --checkpoint), the log (train.csv without seconds), summary.txt
#       without its *_seconds lines, and the sample and completion pictures
#       (table_row.txt and stdout, which hold times, are left out); its
#       evaluation flags are the trainers' defaults before issue 41 (AIS
#       from uniform units with 1000 betas, no check), so that fingerprints
#       from before and after that change compare;
#     - grbm_gmm, 1 epoch of 5 CD steps: the models, the logs and the table
#       CSV without their seconds columns, and the figures.
# Compare two outputs with diff: the first differing line names the
# computation. Everything runs with OPENBLAS_NUM_THREADS=1: OpenBLAS's GEMM
# results at the benchmark shapes depend on its thread count. The SIMD build
# the library picks (EBM_SIMD) must not matter: every build gives the same
# bits. bas_ucd runs in the background beside the rest (2 cores).
# FINGERPRINT_BUILT=1 skips the build (the Makefile's target has built the
# programs); MAKE names the make to build with.
set -eu
cd "$(dirname "$0")/.."
export LC_ALL=C OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

if [ -z "${FINGERPRINT_BUILT:-}" ]; then
    ${MAKE:-make} -s build/bench/fingerprint build/examples/bas_ucd \
        build/examples/train_ucd_lmi build/examples/grbm_gmm >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ebm-fingerprint.XXXXXX")
bas_pid=
cleanup() {
    [ -n "$bas_pid" ] && kill "$bas_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
    echo "fingerprint.sh: $1 failed; its stderr:" >&2
    tail -n 20 "$2" >&2
    exit 1
}

# "name  hash" in the program's format
line() { printf '%-56s %s\n' "$1" "$2"; }
sha() { sha256sum | cut -d' ' -f1; }
# a CSV without the columns named seconds
csv_no_seconds() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) drop[i] = ($i == "seconds") }
             { out = ""; sep = "";
               for (i = 1; i <= NF; i++) if (!drop[i]) { out = out sep $i; sep = "," }
               print out }' "$1"
}
# the hash of one output file, by kind
hash_file() { # name path
    [ -f "$2" ] || { echo "fingerprint.sh: $1 was not written" >&2; exit 1; }
    case $2 in
    *.csv) h=$(csv_no_seconds "$2" | sha) ;;
    *summary.txt) h=$(grep -v '_seconds=' "$2" | sha) ;;
    *.ckpt) h=$(build/bench/fingerprint --checkpoint "$2") ;;
    *) h=$(sha < "$2") ;;
    esac
    line "$1" "$h"
}

mkdir -p "$tmp/bas"
build/examples/bas_ucd --iters 2000 --every 500 --chains 1000 --seed 1 \
    --methods cd,pcd,ucd,ucd-cap,ucd-lmi --out "$tmp/bas" --save "$tmp/bas" \
    > "$tmp/bas.out" 2> "$tmp/bas.err" &
bas_pid=$!

build/bench/fingerprint > "$tmp/fingerprint.out" 2> "$tmp/fingerprint.err" ||
    fail build/bench/fingerprint "$tmp/fingerprint.err"
build/examples/train_ucd_lmi --data bas --layers 16,16,8 --steps 200 --batch 32 \
    --sample-every 0 --checkpoint-every 100 --ais-base uniform --ais-betas 1000 --ais-check 0 \
    --out "$tmp/lmi" \
    > "$tmp/lmi.out" 2> "$tmp/lmi.err" || fail train_ucd_lmi "$tmp/lmi.err"
build/examples/grbm_gmm --epochs 1 --cd-steps 5 --data 200 --samples 200 --out "$tmp/gmm" \
    > "$tmp/gmm.out" 2> "$tmp/gmm.err" || fail grbm_gmm "$tmp/gmm.err"
rc=0
wait "$bas_pid" || rc=$?
bas_pid=
[ "$rc" = 0 ] || fail bas_ucd "$tmp/bas.err"

cat "$tmp/fingerprint.out"
for f in "$tmp"/bas/bas_*.ebm "$tmp"/bas/bas_*.csv "$tmp"/bas/bas_loglik.png; do
    hash_file "bas_ucd/${f##*/}" "$f"
done
for f in model.ebm checkpoint.ckpt train.csv summary.txt samples.png completion.png; do
    hash_file "train_ucd_lmi/$f" "$tmp/lmi/$f"
done
for f in "$tmp"/gmm/*.ebm "$tmp"/gmm/*.csv "$tmp"/gmm/*.png; do
    hash_file "grbm_gmm/${f##*/}" "$f"
done
