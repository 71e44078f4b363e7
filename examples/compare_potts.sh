#!/bin/sh
# A categorical (Potts) RBM on scikit-learn's 8x8 digits (docs/results.md
# section 7; make compare-potts). Each pixel's grey level (0..16) is
# quantised to Q levels, round((Q - 1) v / 16), and one-hot coded: a site of
# Q units (--binarize levels --levels Q). Runs, all from the same seed with
# RBMs of 256 hidden units, batch 100, SGD lr 0.03 / sqrt(1 + 1e-3 t),
# 10,000 updates:
#   potts_pcd    Potts visible sites, Q = 4, PCD-1 (100 persistent chains);
#   binary_pcd   binary visible units on the same one-hot codes, PCD-1: a
#                model that also puts mass on codes that are not one-hot;
#   potts_ucd    Potts visible sites, Q = 4, UCD (Qiu et al.; the coupling of
#                the sites' softmaxes), no cap;
#   potts17_pcd  Q = 17: every grey level its own category (the data
#                unchanged), PCD-1.
# Each is evaluated on the 359 test images with AIS from the training data's
# frequencies (--ais-base data; 100 chains, 10^4 temperatures) and the AIS
# check (20 chains, 10^5), and beside it the base alone: independent sites
# (or units) with the training frequencies. A run whose summary.txt exists
# is not repeated. Usage: examples/compare_potts.sh [name ...]; environment:
# COMPARE_OUT, COMPARE_STEPS, COMPARE_THREADS.
set -eu
OUT=${COMPARE_OUT:-examples/out/compare_potts}
STEPS=${COMPARE_STEPS:-10000}
export OPENBLAS_NUM_THREADS="${COMPARE_THREADS:-2}"
BIN=./build/examples
mkdir -p "$OUT"
COMMON="--data digits --binarize levels --init gaussian --init-scale 0.01 --batch 100 \
        --lr 0.03 --schedule invsqrt --gamma 1e-3 --seed 1 --steps $STEPS --eval ais \
        --ais-base data --ais-chains 100 --ais-betas 10000 --ais-check 10 \
        --ais-check-chains 20 --log-every 100 --sample-every 0 --checkpoint-every 0"
# shellcheck source=examples/compare_common.sh
. "$(dirname "$0")/compare_common.sh"
SELECTED="$*"
run potts_pcd $BIN/train_pcd --units potts --levels 4 --layers 256,256 --chains 100
run binary_pcd $BIN/train_pcd --units binary --levels 4 --layers 256,256 --chains 100
run potts_ucd $BIN/train_ucd --units potts --levels 4 --layers 256,256
run potts17_pcd $BIN/train_pcd --units potts --levels 17 --layers 1088,256 --chains 100

# The table: one row per finished run, test log-likelihoods in nats per
# image: the base alone, the model with AIS log Z (10^4 temperatures), and
# with the check's log Z (10^5).
ll_table potts_pcd binary_pcd potts_ucd potts17_pcd
