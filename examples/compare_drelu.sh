#!/bin/sh
# dReLU hidden units against binary ones on MNIST digits (docs/results.md
# section 8; make compare-drelu): RBMs 784-500 on the 1-bit digits (8,000
# training, 2,000 test images) trained by PCD-1 from the same initial
# weights (Gaussian, sd 0.01; same seed) and batches, 10,000 updates of
# batch 100, 100 persistent chains, SGD lr 0.002 / sqrt(1 + 1e-3 t): the
# protocol of docs/results.md section 6 (compare_pt.sh) but for the step
# size, the largest of 0.05, 0.01, 0.005 and 0.002 at which the dReLU run
# stayed finite. Runs:
#   binary_lr002  binary hidden units;
#   drelu_lr002   dReLU hidden units (--hidden drelu; shapes start at
#                 gamma+- = 1, delta = 0).
# Each evaluated on the test images by AIS from the training digits' pixel
# means (100 chains, 10^4 temperatures) and its check (20 chains, 10^5). A
# run whose summary.txt exists is not repeated. Usage:
# examples/compare_drelu.sh [name ...]; environment: COMPARE_OUT,
# COMPARE_STEPS, COMPARE_LR, COMPARE_THREADS.
set -eu
OUT=${COMPARE_OUT:-examples/out/compare_drelu}
STEPS=${COMPARE_STEPS:-10000}
LR=${COMPARE_LR:-0.002}
export OPENBLAS_NUM_THREADS="${COMPARE_THREADS:-1}"
BIN=./build/examples
mkdir -p "$OUT"
COMMON="--data mnist --layers 784,500 --units binary --binarize threshold --init gaussian \
        --init-scale 0.01 --batch 100 --chains 100 --lr $LR --schedule invsqrt --gamma 1e-3 \
        --seed 1 --steps $STEPS --eval ais --ais-base data --ais-chains 100 --ais-betas 10000 \
        --ais-check 10 --ais-check-chains 20 --eval-every 2500 --eval-rows 1000 \
        --eval-betas 3000 --log-every 100 --sample-every 0 --checkpoint-every 0"
# shellcheck source=examples/compare_common.sh
. "$(dirname "$0")/compare_common.sh"
SELECTED="$*"
run binary_lr002 $BIN/train_pcd --k 1
run drelu_lr002 $BIN/train_pcd --k 1 --hidden drelu

# The table: test log-likelihoods in nats per image (AIS log Z with 10^4
# temperatures; the check's with 10^5), and the base alone.
ll_table binary_lr002 drelu_lr002
