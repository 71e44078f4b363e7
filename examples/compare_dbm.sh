#!/bin/sh
# The DBM comparison of docs/results.md section 5 (make compare-dbm):
# UCD-LMI (spin units, the paper's; binary units, the released code's;
# binary units centred on the data's layer means, --centre data) and PCD-1
# with a mean-field positive phase, on MNIST digits and Fashion-MNIST,
# from the same initial parameters (same seed), for the SAME number of
# updates, with the paper's optimiser (SGD, lr / sqrt(1 + 1e-3 t)), batch
# 100, evaluated every EVAL_EVERY steps on 500 test images (AIS log Z with
# 1,000 betas, the mean-field bound, the IS estimate) and at the end on all
# test images by AIS (100 chains, 10,000 betas) + the mean-field bound + the
# IS estimate (100 samples per image), with samples and completions by the
# same protocol, and the AIS check: a second AIS with 10 times the betas
# (100,000; 20 chains). A run whose summary.txt exists is not repeated, so
# the script resumes where it stopped; a finished run without the check is
# evaluated again, with it, from its checkpoint (in <name>_check/; the
# table then takes the evaluation from there). Usage: examples/compare_dbm.sh [name ...] (names:
# {fashion,mnist}_{lmi_spin,lmi_binary,lmi_centred,pcd}); environment: COMPARE_OUT,
# COMPARE_STEPS, COMPARE_EVAL_EVERY, COMPARE_CAP, COMPARE_THREADS.
set -eu
OUT=${COMPARE_OUT:-examples/out/compare}
STEPS=${COMPARE_STEPS:-10000}
EVAL_EVERY=${COMPARE_EVAL_EVERY:-2500}
# UCD-LMI's coupling cap, as in the demo: without one, a row whose chains an
# accepted MH move has parted never meets again in 784 dimensions (both
# chains reject every uniform proposal), and the call runs until
# EBM_ESTIMATOR_STEP_LIMIT (10^6 steps, about 17 minutes on this machine).
CAP=${COMPARE_CAP:-20}
export OPENBLAS_NUM_THREADS="${COMPARE_THREADS:-2}"
BIN=./build/examples
mkdir -p "$OUT"
COMMON="--layers 784,784,784 --binarize threshold --init orthogonal --batch 100 --lr 0.001 \
        --schedule invsqrt --gamma 1e-3 --seed 1 --steps $STEPS"
EVAL="--ais-chains 100 --ais-betas 10000 --ais-check 10 --ais-check-chains 20"
FIRST="$EVAL --eval-every $EVAL_EVERY --eval-rows 500 --eval-betas 1000 --is-samples 100 \
       --sample-every $EVAL_EVERY --checkpoint-every $EVAL_EVERY"
CHECK="$EVAL --is-samples 100 --sample-every 0 --checkpoint-every 0"
# shellcheck source=examples/compare_common.sh
. "$(dirname "$0")/compare_common.sh"
# run_checked NAME PROGRAM ARGS...: PROGRAM ARGS $FIRST into $OUT/NAME unless
# NAME is not selected or already has a summary.txt; then, if that run has no
# AIS check, the check from its checkpoint into $OUT/NAME_check. (Not the
# shared run: the options go in this order and the check is a second run.)
run_checked() {
    name=$1
    shift
    want "$name" || return 0
    if [ ! -f "$OUT/$name/summary.txt" ]; then
        echo "== $name: $*"
        mkdir -p "$OUT/$name"
        # shellcheck disable=SC2086 # FIRST holds several options
        "$@" $FIRST --out "$OUT/$name" > "$OUT/$name.log" 2>&1 || echo "== $name stopped on an error"
        tail -n 6 "$OUT/$name.log"
    fi
    if [ -f "$OUT/$name/checkpoint.ckpt" ] && ! grep -q ais_check_log_z "$OUT/$name/summary.txt" &&
        [ ! -f "$OUT/${name}_check/summary.txt" ]; then
        echo "== $name: the AIS check from its checkpoint"
        # shellcheck disable=SC2086
        "$@" $CHECK --resume "$OUT/$name/checkpoint.ckpt" --out "$OUT/${name}_check" \
            > "$OUT/${name}_check.log" 2>&1 || echo "== ${name}_check stopped on an error"
    fi
}
SELECTED="$*"
# shellcheck disable=SC2086 # COMMON holds several options
for data in fashion mnist; do
    run_checked "${data}_lmi_spin" $BIN/train_ucd_lmi --data $data $COMMON --units spin --cap "$CAP"
    run_checked "${data}_lmi_binary" $BIN/train_ucd_lmi --data $data $COMMON --units binary \
        --cap "$CAP"
    run_checked "${data}_lmi_centred" $BIN/train_ucd_lmi --data $data $COMMON --units binary \
        --centre data --cap "$CAP"
    run_checked "${data}_pcd" $BIN/train_pcd --data $data $COMMON --units spin
done

# The table: one row per finished run.
printf '\n%-18s %6s %8s %5s %6s %22s %9s %9s %20s\n' run steps steps/s MH capped \
    "AIS log Z (10^4 betas)" bound IS "check (10^5 betas)"
for name in fashion_lmi_spin fashion_lmi_binary fashion_lmi_centred fashion_pcd mnist_lmi_spin \
    mnist_lmi_binary mnist_lmi_centred mnist_pcd; do
    s=$OUT/$name/summary.txt
    [ -f "$s" ] || continue
    x=$s
    grep -q ais_check_log_z "$s" || x=$OUT/${name}_check/summary.txt
    printf '%-18s %6s %8.1f %5s %6s %13.2f +- %5.2f %9.2f %9.2f %11.2f +- %5.2f\n' "$name" \
        "$(value steps "$s")" "$(echo "$(value steps "$s") $(value train_seconds "$s")" |
        awk '{print $1 / $2}')" "$(value mh_accepted "$s")" "$(value capped_rows "$s")" \
        "$(value ais_log_z "$x")" "$(value ais_log_z_se "$x")" "$(value test_ll_mean "$x")" \
        "$(value is_ll_mean "$x")" "$(value ais_check_log_z "$x")" "$(value ais_check_log_z_se "$x")"
done
exit 0
