#!/bin/sh
# The fair comparison of issue 22 (docs/results.md, work in progress):
# UCD-LMI (spin units, the paper's; binary units, the released code's) and
# PCD-1 with a mean-field positive phase, on MNIST digits and Fashion-MNIST,
# from the same initial parameters (same seed), for the SAME number of
# updates, with the paper's optimiser (SGD, lr / sqrt(1 + 1e-3 t)), batch
# 100, evaluated every EVAL_EVERY steps on 500 test images (AIS bound) and
# at the end by AIS (10,000 betas) + the mean-field bound + the IS estimate
# (--is-samples) on all test images, with samples and completions by the
# same protocol. Budget: about 90 minutes of 2 cores at STEPS = 8000
# (UCD-LMI about 10 steps/s, PCD about 20; docs/results.md), that is 8e5
# images per run against the paper's 1e8 (100,000 steps at batch 1000).
# Usage: examples/compare_dbm.sh [name ...]; COMPARE_OUT, COMPARE_STEPS,
# COMPARE_EVAL_EVERY, COMPARE_THREADS.
set -eu
OUT=${COMPARE_OUT:-examples/out/compare}
STEPS=${COMPARE_STEPS:-8000}
EVAL_EVERY=${COMPARE_EVAL_EVERY:-2000}
# UCD-LMI's coupling cap, as in the demo: without one, a row whose chains an
# accepted MH move has parted never meets again in 784 dimensions (both
# chains reject every uniform proposal), and the call runs until
# EBM_ESTIMATOR_STEP_LIMIT (10^6 steps, about 17 minutes on this machine).
CAP=${COMPARE_CAP:-20}
export OPENBLAS_NUM_THREADS=${COMPARE_THREADS:-2}
BIN=./build/examples
mkdir -p "$OUT"
COMMON="--layers 784,784,784 --binarize threshold --init orthogonal --batch 100 --lr 0.001 \
        --schedule invsqrt --gamma 1e-3 --seed 1 --steps $STEPS --eval-every $EVAL_EVERY \
        --eval-rows 500 --eval-betas 1000 --ais-chains 100 --ais-betas 10000 --is-samples 100 \
        --sample-every $EVAL_EVERY --checkpoint-every $EVAL_EVERY"
run() {
    name=$1
    shift
    echo "== $name: $*"
    mkdir -p "$OUT/$name"
    "$@" --out "$OUT/$name" > "$OUT/$name.log" 2>&1 || echo "== $name stopped on an error"
    tail -8 "$OUT/$name.log"
}
want() {
    [ -z "$SELECTED" ] && return 0
    for s in $SELECTED; do [ "$s" = "$1" ] && return 0; done
    return 1
}
SELECTED="$*"
for data in fashion mnist; do
    want "${data}_lmi_spin" && run "${data}_lmi_spin" $BIN/train_ucd_lmi --data $data $COMMON \
        --units spin --cap "$CAP"
    want "${data}_lmi_binary" && run "${data}_lmi_binary" $BIN/train_ucd_lmi --data $data $COMMON \
        --units binary --cap "$CAP"
    want "${data}_pcd" && run "${data}_pcd" $BIN/train_pcd --data $data $COMMON --units spin
done
exit 0
