#!/bin/sh
# Parallel tempering against PCD on MNIST digits (docs/results.md section 6;
# make compare-pt): a binary RBM 784-500 trained from the same initial
# parameters (same seed) for the same number of updates by
#   pcd1   PCD-1: one Gibbs sweep of 100 persistent chains per update;
#   pcd10  PCD-10: ten sweeps per update;
#   pt10   PT with 10 replicas per chain (ladder 0.55, 0.6, ..., 1), one
#          tempering step per update: ten sweeps, as PCD-10 (equal compute
#          in Gibbs sweeps; PT also computes the replicas' energies);
# batch 100, SGD with lr 0.05 / sqrt(1 + 1e-3 t). Every EVAL_EVERY steps the
# held-out log-likelihood of 1000 test images (AIS, 3000 betas); at the end
# on all the test images with AIS (100 chains, 10,000 betas) and the AIS
# check (10 times the betas, 20 chains). Every AIS starts from the training
# digits' pixel means (--ais-base data): from uniform units AIS does not
# settle at 10^5 temperatures on the PT- and PCD-10-trained models
# (docs/results.md section 6). A run whose summary.txt exists is not
# repeated. Usage: examples/compare_pt.sh [name ...]; environment:
# COMPARE_OUT, COMPARE_STEPS, COMPARE_EVAL_EVERY, COMPARE_THREADS.
set -eu
OUT=${COMPARE_OUT:-examples/out/compare_pt}
STEPS=${COMPARE_STEPS:-10000}
EVAL_EVERY=${COMPARE_EVAL_EVERY:-2500}
export OPENBLAS_NUM_THREADS="${COMPARE_THREADS:-2}"
BIN=./build/examples
mkdir -p "$OUT"
COMMON="--data mnist --layers 784,500 --units binary --binarize threshold --init gaussian \
        --init-scale 0.01 --batch 100 --chains 100 --lr 0.05 --schedule invsqrt --gamma 1e-3 \
        --seed 1 --steps $STEPS --eval ais --ais-base data --ais-chains 100 --ais-betas 10000 \
        --ais-check 10 --ais-check-chains 20 \
        --eval-every $EVAL_EVERY --eval-rows 1000 --eval-betas 3000 --log-every 100 \
        --sample-every 0 --checkpoint-every 0"
LADDER=0.55,0.6,0.65,0.7,0.75,0.8,0.85,0.9,0.95,1
# shellcheck source=examples/compare_common.sh
. "$(dirname "$0")/compare_common.sh"
SELECTED="$*"
run pcd1 $BIN/train_pcd --k 1
run pcd10 $BIN/train_pcd --k 10
run pt10 $BIN/train_pcd --k 1 --ladder "$LADDER"

# The table: one row per finished run, held-out log-likelihoods in nats per
# image (AIS log Z with 10^4 betas, and with 10^5 for the check; both from
# the data's pixel means).
printf '\n%-6s %6s %8s %9s %10s %12s %12s %10s\n' run steps seconds swaps "log Z" "test ll" \
    "check log Z" "check ll"
for name in pcd1 pcd10 pt10; do
    s=$OUT/$name/summary.txt
    [ -f "$s" ] || continue
    swaps=$(value swap_rate "$s")
    cz=$(value ais_check_log_z "$s")
    printf '%-6s %6s %8.0f %9s %10.2f %12.2f %12.2f %10.2f\n' "$name" "$(value steps "$s")" \
        "$(value train_seconds "$s")" "${swaps:--}" "$(value ais_log_z "$s")" \
        "$(value test_ll_mean "$s")" "${cz:-nan}" "$(check_ll "$s")"
done
