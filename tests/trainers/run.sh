#!/usr/bin/env bash
# Tests of the example trainers as a user runs them (build/examples): the
# command line (unknown options, stray arguments, --help with ranges and
# defaults, bad values), SIGINT and SIGTERM (exit status, checkpoint and
# model written and reported, and a resume that ends with the same model,
# byte for byte, as a run never interrupted, also with --average-from),
# --eval-every's held-out columns, --average-from (the averaged model, its
# columns and summary), --data digits, picture sizes, and plot_curves'
# errors; first, the unit tests of examples/common (check_common).
#
# Usage: tests/trainers/run.sh [BUILD_DIR]   (default build/examples; run
# `make examples` first). Tiny models on bars-and-stripes: about 20-30 s on
# 2 cores. Prints one line per check and "N passed, N failed" at the end;
# exits 1 if any check failed.
set -euo pipefail

B=${1:-build/examples}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
for p in train_ucd train_ucd_lmi train_pcd train_grbm plot_curves bas_ucd coupling_times grbm_gmm \
    meeting_times check_common; do
    [ -x "$B/$p" ] || { echo "$B/$p is missing: make examples first" >&2; exit 2; }
done
T=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$T"
}
trap cleanup EXIT

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
# check DESCRIPTION COMMAND...: the command's exit status decides.
check() {
    local what=$1
    shift
    if "$@"; then ok "$what"; else bad "$what"; fi
}

# run PROG ARGS...: runs $B/PROG; sets rc, and out / err to the files of its
# stdout and stderr.
n_run=0
run() {
    n_run=$((n_run + 1))
    out=$T/out.$n_run
    err=$T/err.$n_run
    rc=0
    "$B/$1" "${@:2}" >"$out" 2>"$err" || rc=$?
}
has() { grep -qF -- "$1" "$2"; }

# PNG width and height (big-endian at bytes 16..23).
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{print $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}'; }

# shellcheck disable=SC2054 # 16,16,8 is one argument
TINY_MODEL=(--data bas --layers 16,16,8 --batch 32 --sample-every 0 --samples 4 --completions 2)
# The evaluation's defaults (AIS with 10,000 betas and its check with 10
# times as many) take seconds even on these models: the checks where they
# are not the point ask for less ("the evaluation's defaults" tests them).
TINY=("${TINY_MODEL[@]}" --ais-betas 200 --ais-check 0 --eval-betas 50)

echo "== examples/common: optim_average and its checkpoint section (check_common)"
if "$B/check_common" "$T" >"$T/check_common.out" 2>&1; then
    ok "check_common: $(grep -c '^ok' "$T/check_common.out") checks"
else
    sed 's/^/     /' "$T/check_common.out"
    bad "check_common"
fi

echo "== command line"
for p in train_ucd train_ucd_lmi train_pcd train_grbm bas_ucd coupling_times grbm_gmm plot_curves \
    meeting_times; do
    run "$p" --frobnicate
    check "$p --frobnicate (last): exit 2, 'unknown option --frobnicate'" \
        test "$rc" = 2 -a -n "$(grep -F 'unknown option --frobnicate' "$err")"
    run "$p" --frobnicate 3
    check "$p --frobnicate 3: 'unknown option --frobnicate'" \
        test "$rc" = 2 -a -n "$(grep -F 'unknown option --frobnicate' "$err")"
    run "$p" --help
    # plot_curves has no numeric option: no range to state.
    range='(range '
    [ "$p" != plot_curves ] || range='default '
    check "$p --help: exit 0, ranges and defaults" \
        test "$rc" = 0 -a -n "$(grep -F "$range" "$out")" -a -n "$(grep -F 'default ' "$out")"
done
for p in train_ucd train_ucd_lmi train_pcd train_grbm bas_ucd coupling_times grbm_gmm \
    meeting_times; do
    run "$p" stray
    check "$p stray: exit 2, 'unknown option stray'" \
        test "$rc" = 2 -a -n "$(grep -F 'unknown option stray' "$err")"
    run "$p" --seed 1 stray --seed 2
    check "$p with a stray argument between options: 'unknown option stray'" \
        test "$rc" = 2 -a -n "$(grep -F 'unknown option stray' "$err")"
done
run plot_curves --out "$T/x.png" stray
check "plot_curves stray: exit 2, expected LABEL=FILE.csv" \
    test "$rc" = 2 -a -n "$(grep -F 'expected LABEL=FILE.csv' "$err")"

# A bad value's message names the range, and --help states the same range.
bad_value() {
    local p=$1 opt=$2 val=$3 range=$4
    run "$p" --help
    local help=$out
    run "$p" "$opt" "$val"
    check "$p $opt $val: exit 2, 'bad value '$val' for $opt: expected ... $range'" \
        test "$rc" = 2 -a -n "$(grep -F "bad value '$val' for $opt: expected" "$err" | grep -F -- "$range")"
    check "$p --help gives $opt the range $range" \
        test -n "$(grep -A3 -F -- "  $opt " "$help" | tr '\n' ' ' | grep -F -- "range $range")"
}
bad_value train_ucd_lmi --batch 0 1..16777216
bad_value train_pcd --lr 0 "0 < X <= 1e+06"
bad_value train_ucd --bas-side 13 1..12
bad_value train_grbm --hidden 0 1..16777216
bad_value bas_ucd --iters x ">= 1"
bad_value train_ucd --average-from x "N >= 0 or off"
bad_value train_ucd_lmi --average-from -1 "N >= 0 or off"
bad_value train_grbm --average-from 1.5 "N >= 0 or off"
bad_value bas_ucd --average-from 10x "N >= 0 or off"
run bas_ucd --coupling nosuch
check "bas_ucd --coupling nosuch: the choices" \
    test "$rc" = 2 -a -n "$(grep -F 'expected one of maximal, crn, blockwise' "$err")"
run train_ucd --data nosuch
check "train_ucd --data nosuch: the choices" \
    test "$rc" = 2 -a -n "$(grep -F 'expected one of fashion, mnist, bas, digits' "$err")"
run train_ucd --batch
check "train_ucd --batch (no value): 'needs a value'" \
    test "$rc" = 2 -a -n "$(grep -F -- '--batch needs a value' "$err")"

echo "== SIGINT and SIGTERM: checkpoint, model.ebm, exact resume"
# interrupt SIGNAL PROG DIR ARGS...: start a run, wait for its third step's
# progress line, send the signal; sets rc and err.
interrupt() {
    local sig=$1 p=$2 dir=$3
    shift 3
    err=$T/err.int.$p.$sig
    # A stale file from an earlier run of the same program and signal would
    # let the wait below end before the new run's redirection truncates it,
    # and the signal reach the forked shell itself (which runs this script's
    # EXIT trap): the file is removed here, before the fork.
    rm -f "$err"
    "$B/$p" "$@" --out "$dir" >/dev/null 2>"$err" &
    local pid=$! waited=0
    pids+=("$pid")
    until grep -qE "$WAIT_FOR" "$err" 2>/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null || [ "$waited" -ge 3000 ]; then
            break
        fi
        sleep 0.01
        waited=$((waited + 1))
    done
    kill -"$sig" "$pid" 2>/dev/null || true
    rc=0
    wait "$pid" || rc=$?
}
# resume_test SIGNAL STATUS PROG CKPT_NAME ARGS...
resume_test() {
    local sig=$1 status=$2 p=$3 ck=$4
    shift 4
    local ref=$T/$p.ref dir=$T/$p.$sig
    rm -rf "$ref" "$dir"
    "$B/$p" "$@" --out "$ref" >/dev/null 2>&1 || bad "$p: the uninterrupted run failed"
    interrupt "$sig" "$p" "$dir" "$@"
    local line
    line=$(grep -F "$sig: stopped after step" "$err" || true)
    check "$p: $sig ends with exit $status (got $rc)" test "$rc" = "$status"
    check "$p: $sig reports $dir/$ck and $dir/model.ebm" \
        test -n "$(echo "$line" | grep -F "$dir/$ck" | grep -F "$dir/model.ebm")"
    check "$p: $sig left $ck and model.ebm" test -s "$dir/$ck" -a -s "$dir/model.ebm"
    local step
    step=$(echo "$line" | sed -n 's/.*stopped after step \([0-9]*\).*/\1/p')
    echo "     (stopped after step ${step:-?})"
    run "$p" "$@" --out "$dir" --resume "$dir/$ck"
    check "$p: --resume $ck exits 0" test "$rc" = 0
    check "$p: the resumed model.ebm is byte-identical to the uninterrupted run's" \
        cmp -s "$ref/model.ebm" "$dir/model.ebm"
    if [ -e "$ref/model_raw.ebm" ]; then
        check "$p: so is model_raw.ebm (the last iterate; model.ebm is the average)" \
            cmp -s "$ref/model_raw.ebm" "$dir/model_raw.ebm"
    fi
}
WAIT_FOR='step 3/'
resume_test INT 130 train_ucd_lmi checkpoint.ckpt "${TINY[@]}" --steps 20000 --checkpoint-every 0 --eval none
check "train_ucd_lmi: the resumed train.csv equals the uninterrupted one (but seconds)" \
    cmp -s <(cut -d, -f1,3- "$T/train_ucd_lmi.ref/train.csv") <(cut -d, -f1,3- "$T/train_ucd_lmi.INT/train.csv")
resume_test TERM 143 train_pcd checkpoint.ckpt "${TINY[@]}" --steps 40000 --checkpoint-every 0 --eval none
resume_test INT 130 train_ucd checkpoint.ckpt "${TINY[@]}" --layers 16,16 --steps 8000 --checkpoint-every 0 --eval none
# The average of the iterates after step 2 holds a few when the signal comes.
resume_test TERM 143 train_ucd checkpoint.ckpt "${TINY[@]}" --layers 16,16 --steps 8000 --checkpoint-every 0 --eval none --average-from 2
# A run killed after its last checkpoint left rows of later steps in
# train.csv, the last perhaps cut (tests/crash/soak.sh kills runs for
# real): the resumed run cuts them before it writes those steps again.
CSV_RUN=("${TINY[@]}" --layers 16,16 --checkpoint-every 10 --log-every 1 --eval none)
run train_pcd "${CSV_RUN[@]}" --steps 30 --out "$T/csv-ref"
run train_pcd "${CSV_RUN[@]}" --steps 20 --out "$T/csv-cut"
sed -n '22,24p' "$T/csv-ref/train.csv" >>"$T/csv-cut/train.csv"
printf '24,0.01,0.1' >>"$T/csv-cut/train.csv"
run train_pcd "${CSV_RUN[@]}" --steps 30 --out "$T/csv-cut" --resume "$T/csv-cut/checkpoint.ckpt"
check "train_pcd: a resume cuts train.csv's rows after the checkpoint (and a half row): the uninterrupted run's lines" \
    test "$rc" = 0 -a "$(cut -d, -f1,3- "$T/csv-ref/train.csv")" = "$(cut -d, -f1,3- "$T/csv-cut/train.csv")"
run train_ucd "${TINY[@]}" --layers 16,16 --steps 8000 --checkpoint-every 0 --eval none \
    --out "$T/refused" --resume "$T/train_ucd.TERM/checkpoint.ckpt"
check "train_ucd: resuming an averaged checkpoint without --average-from: exit 1, names --average-from 2" \
    test "$rc" = 1 -a -n "$(grep -F -- '--average-from 2' "$err")"
run train_ucd "${TINY[@]}" --layers 16,16 --steps 8000 --checkpoint-every 0 --eval none \
    --out "$T/refused" --resume "$T/train_ucd.INT/checkpoint.ckpt" --average-from 2
check "train_ucd: --average-from 2 from a checkpoint past step 2 without an average: exit 1" \
    test "$rc" = 1 -a -n "$(grep -F 'holds no average' "$err")"
# A checkpoint's training time is a finite time >= 0: resumed from one of NaN
# seconds, a run with --minutes never reached its budget. The seconds follow
# MODL (its length at bytes 20-27), RNG (48 bytes) and ITER's iteration; the
# CRC is gzip's (its trailer's first 4 bytes).
nan_ck=$T/refused/nan_seconds.ckpt
cp "$T/train_pcd.TERM/checkpoint.ckpt" "$nan_ck"
modl=$(od -An -tu8 -j20 -N8 "$nan_ck" | tr -d ' ')
printf '\0\0\0\0\0\0\370\177' |
    dd of="$nan_ck" bs=1 seek=$((16 + 12 + modl + 12 + 48 + 12 + 8)) conv=notrunc status=none
size=$(wc -c <"$nan_ck")
head -c $((size - 4)) "$nan_ck" | gzip -c | tail -c 8 | head -c 4 |
    dd of="$nan_ck" bs=1 seek=$((size - 4)) conv=notrunc status=none
n_run=$((n_run + 1))
rc=0
timeout 20 "$B/train_pcd" "${TINY[@]}" --steps 0 --minutes 0.01 --checkpoint-every 0 --eval none \
    --out "$T/refused" --resume "$nan_ck" >"$T/out.$n_run" 2>"$T/err.$n_run" || rc=$?
check "train_pcd: --resume a checkpoint of NaN seconds: exit 1 at once (rc $rc), 'section ITER'" \
    test "$rc" = 1 -a -n "$(grep -F "$nan_ck: section ITER: iteration" "$T/err.$n_run" |
        grep -F 'seconds nan')"
FASHION=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz
if [ -f "$FASHION" ]; then
    WAIT_FOR='^step +20 '
    resume_test INT 130 train_grbm train_grbm.ckpt --hidden 16 --batch 16 --gibbs-steps 1 \
        --langevin-steps 2 --limit 64 --epochs 1000 --samples 4 --sample-every 100 --lr 0.001 \
        --standardize global --log-every 20
    resume_test TERM 143 train_grbm train_grbm.ckpt --hidden 16 --batch 16 --gibbs-steps 1 \
        --langevin-steps 2 --limit 64 --epochs 1000 --samples 4 --sample-every 100 --lr 0.001 \
        --standardize global --log-every 20 --average-from 5
else
    echo "skip train_grbm's SIGINT test: $FASHION is missing (apt-get install dataset-fashion-mnist)"
fi

echo "== --eval-every: held-out columns"
OLD_COLUMNS=step,seconds,lr,grad_norm,tau_mean,tau_max,positive_tau_mean,positive_tau_max,capped,sweeps_mean,search_capped,accept_rate,mean_field_missed
# finite_column CSV COLUMN: the column exists and has a finite value on every
# line whose step is a multiple of N ($3), and "nan" elsewhere.
finite_column() {
    awk -F, -v col="$2" -v every="$3" '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; if (!c) exit 1; next }
        $1 % every == 0 { n++; if ($c !~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/) exit 1; next }
        $c != "nan" { exit 1 }
        END { if (!c || n < 1) exit 1 }' "$1"
}
run train_ucd_lmi "${TINY[@]}" --steps 200 --eval-every 50 --out "$T/ev"
check "train_ucd_lmi --eval-every 50 (16-16-8): exit 0" test "$rc" = 0
check "train.csv keeps its columns first, then heldout_loglik_exact,heldout_log_z,heldout_seconds" \
    test "$(head -1 "$T/ev/train.csv")" = "$OLD_COLUMNS,heldout_loglik_exact,heldout_log_z,heldout_seconds"
check "heldout_loglik_exact is finite every 50 steps, nan elsewhere" \
    finite_column "$T/ev/train.csv" heldout_loglik_exact 50
run train_ucd_lmi "${TINY[@]}" --steps 200 --out "$T/ev0"
check "without --eval-every train.csv has only the old columns" \
    test "$(head -1 "$T/ev0/train.csv")" = "$OLD_COLUMNS"
check "--eval-every does not change training (same model.ebm)" \
    cmp -s "$T/ev/model.ebm" "$T/ev0/model.ebm"
run train_pcd "${TINY[@]}" --steps 100 --eval ais --eval-every 50 --eval-betas 20 --out "$T/ev-dbm"
check "DBM with --eval ais: heldout_loglik_ais_bound finite" \
    finite_column "$T/ev-dbm/train.csv" heldout_loglik_ais_bound 50
check "DBM with --eval ais: heldout_loglik_is after heldout_seconds, finite every 50 steps" \
    test -n "$(head -1 "$T/ev-dbm/train.csv" | grep -F ',heldout_seconds,heldout_loglik_is')" \
    -a -n "$(finite_column "$T/ev-dbm/train.csv" heldout_loglik_is 50 && echo yes)"
check "DBM --eval-every: the progress line states the IS estimate and K" \
    has "IS estimate (K = 100)" "$err"
# The final evaluation: the IS estimate with K = 100 beside the bound, from the
# same AIS log Z. On a 16-16-8 DBM it is nearly exact, so it is at least the
# mean-field bound (which is below log p(v) for every image) up to its small
# downward bias.
summary_value() { sed -n "s/^$1=//p" "$2"; }
check "DBM summary.txt: is_samples=100, is_ll_mean >= test_ll_mean - 0.05, test_ll_is_bound=1" \
    awk -v is="$(summary_value is_ll_mean "$T/ev-dbm/summary.txt")" \
    -v b="$(summary_value test_ll_mean "$T/ev-dbm/summary.txt")" \
    -v k="$(summary_value is_samples "$T/ev-dbm/summary.txt")" \
    -v isb="$(summary_value test_ll_is_bound "$T/ev-dbm/summary.txt")" \
    'BEGIN { exit !(k == 100 && isb == 1 && is != "" && is + 0 >= b - 0.05) }'
check "DBM stdout: the importance-sampled line with its K" \
    has "importance-sampled (100 samples per image, AIS log Z)" "$out"
run train_pcd "${TINY[@]}" --steps 100 --eval ais --eval-every 50 --eval-betas 20 --is-samples 0 \
    --out "$T/ev-dbm-nois"
check "--is-samples 0: no heldout_loglik_is column, no is_ lines in summary.txt" \
    test "$rc" = 0 -a -z "$(head -1 "$T/ev-dbm-nois/train.csv" | grep -F heldout_loglik_is)" \
    -a -z "$(grep -F is_ll_mean "$T/ev-dbm-nois/summary.txt")"
check "--is-samples does not change training (same model.ebm)" \
    cmp -s "$T/ev-dbm/model.ebm" "$T/ev-dbm-nois/model.ebm"
run train_pcd "${TINY[@]}" --steps 100 --eval ais --eval-every 50 --eval-betas 20 \
    --average-from 25 --out "$T/ev-dbm-avg"
check "DBM --average-from: heldout_loglik_is_avg last, finite every 50 steps" \
    test -n "$(head -1 "$T/ev-dbm-avg/train.csv" | grep -E ',heldout_seconds_avg,heldout_loglik_is_avg$')" \
    -a -n "$(finite_column "$T/ev-dbm-avg/train.csv" heldout_loglik_is_avg 50 && echo yes)"
run train_pcd "${TINY[@]}" --steps 100 --eval ais --eval-every 50 --eval-betas 20 \
    --ais-betas 300 --ais-check 10 --ais-check-chains 20 --out "$T/ev-dbm-check"
check "--ais-check 10 --ais-check-chains 20: summary.txt has the check's 20 chains, 3000 betas, log Z" \
    test "$rc" = 0 -a "$(summary_value ais_check_chains "$T/ev-dbm-check/summary.txt")" = 20 \
    -a "$(summary_value ais_check_betas "$T/ev-dbm-check/summary.txt")" = 3000 \
    -a -n "$(summary_value ais_check_log_z "$T/ev-dbm-check/summary.txt" | grep -E '^[0-9]+\.[0-9]+$')"
check "--ais-check: stdout states the check's chains, betas and its distance from the first AIS" \
    has "AIS check (20 chains, 3000 betas): log Z = " "$out"
run train_pcd "${TINY[@]}" --steps 100 --eval ais --eval-every 50 --eval-betas 20 \
    --ais-betas 300 --out "$T/ev-dbm-nocheck"
check "--ais-check leaves the first AIS and the model as they are; --ais-check 0 turns it off" \
    test "$(summary_value ais_log_z "$T/ev-dbm-check/summary.txt")" = \
    "$(summary_value ais_log_z "$T/ev-dbm-nocheck/summary.txt")" \
    -a -z "$(grep -F ais_check "$T/ev-dbm-nocheck/summary.txt")" \
    -a -n "$(cmp "$T/ev-dbm-check/model.ebm" "$T/ev-dbm-nocheck/model.ebm" && echo same)"
run train_pcd "${TINY[@]}" --steps 10 --ais-check-chains 1
check "--ais-check-chains 1 is refused (exit 2, names the option)" \
    test "$rc" = 2 -a -n "$(grep -F -- '--ais-check-chains 1' "$err")"
run train_pcd "${TINY[@]}" --steps 10 --ais-check 1000 --ais-betas 2000000
check "--ais-check x --ais-betas above 2^30 is refused (exit 2)" \
    test "$rc" = 2 -a -n "$(grep -F 'more than 2^30 temperatures' "$err")"
run train_pcd "${TINY[@]}" --steps 10 --is-samples -1
check "--is-samples -1 is refused (exit 2, names the option)" \
    test "$rc" = 2 -a -n "$(grep -F -- --is-samples "$err")"
run train_ucd "${TINY[@]}" --layers 16,40 --steps 100 --eval ais --eval-every 25 --eval-betas 20 \
    --out "$T/ev-rbm"
check "RBM with --eval ais: heldout_loglik_ais finite" \
    finite_column "$T/ev-rbm/train.csv" heldout_loglik_ais 25
same_width() { awk -F, 'NR == 1 { n = NF } NF != n { exit 1 }' "$1"; }
for d in ev ev-dbm ev-dbm-nois ev-dbm-avg ev-dbm-check ev-rbm; do
    check "$d/train.csv: every line has as many fields as the header" same_width "$T/$d/train.csv"
done
run train_ucd "${TINY[@]}" --steps 10 --eval none --eval-every 5
check "--eval-every with --eval none is refused (exit 2)" test "$rc" = 2
run plot_curves --out "$T/ev.png" --x step --y grad_norm,heldout_loglik_exact "run=$T/ev/train.csv"
check "plot_curves draws the held-out column" test "$rc" = 0 -a -s "$T/ev.png"

echo "== --average-from: the average of the iterates, evaluated and saved"
AVG_COLUMNS=heldout_loglik_exact_avg,heldout_log_z_avg,heldout_seconds_avg
run train_ucd "${TINY[@]}" --layers 16,16 --steps 60 --eval-every 20 --average-from 20 --out "$T/avg"
check "train_ucd --average-from 20: exit 0" test "$rc" = 0
check "summary.txt: average_from=20, average_count=40, evaluated=averaged" \
    test -n "$(grep -x average_from=20 "$T/avg/summary.txt")" \
    -a -n "$(grep -x average_count=40 "$T/avg/summary.txt")" \
    -a -n "$(grep -x evaluated=averaged "$T/avg/summary.txt")"
check "stdout says the average of 40 iterates after step 20 was evaluated and saved" \
    test -n "$(grep -F 'evaluated and saved (model.ebm): the average of the 40 iterates after step 20' "$out")"
check "train.csv: the old columns, the held-out ones, then $AVG_COLUMNS" \
    test "$(head -1 "$T/avg/train.csv")" = "$OLD_COLUMNS,heldout_loglik_exact,heldout_log_z,heldout_seconds,$AVG_COLUMNS"
# averaged_column CSV: heldout_loglik_exact_avg is nan at step 20, finite at 40 and 60.
averaged_column() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "heldout_loglik_exact_avg") c = i; next }
             $1 == 20 { n++; if ($c != "nan") exit 1 }
             $1 == 40 || $1 == 60 { n++; if ($c !~ /^-?[0-9]+\.[0-9]+$/) exit 1 }
             END { if (!c || n != 3) exit 1 }' "$1"
}
check "heldout_loglik_exact_avg: nan at step 20 (no iterate yet), finite at 40 and 60" \
    averaged_column "$T/avg/train.csv"
run train_ucd "${TINY[@]}" --layers 16,16 --steps 60 --eval-every 20 --out "$T/avg0"
check "--average-from does not change training: model_raw.ebm equals the plain run's model.ebm" \
    cmp -s "$T/avg/model_raw.ebm" "$T/avg0/model.ebm"
check "model.ebm (the average) differs from model_raw.ebm (the last iterate)" \
    test -s "$T/avg/model.ebm" -a -n "$(cmp "$T/avg/model.ebm" "$T/avg/model_raw.ebm" 2>&1)"
run train_ucd "${TINY[@]}" --layers 16,16 --steps 60 --eval-every 20 --average-from off --out "$T/avg-off"
check "--average-from off: the plain run's outputs, no model_raw.ebm" \
    test "$rc" = 0 -a ! -e "$T/avg-off/model_raw.ebm" -a -z "$(grep -F average_ "$T/avg-off/summary.txt")"
same_outputs() { cmp -s "$1/model.ebm" "$2/model.ebm" && [ "$(head -1 "$1/train.csv")" = "$(head -1 "$2/train.csv")" ]; }
check "--average-from off: the same model.ebm and train.csv header as without the option" \
    same_outputs "$T/avg-off" "$T/avg0"
run train_ucd "${TINY[@]}" --layers 16,16 --steps 60 --average-from 60 --out "$T/avg-late"
check "--average-from 60 of 60 steps: evaluated=last_iterate, model.ebm is the last iterate" \
    test "$rc" = 0 -a -n "$(grep -x evaluated=last_iterate "$T/avg-late/summary.txt")" \
    -a -n "$(cmp "$T/avg-late/model.ebm" "$T/avg0/model.ebm" >/dev/null && echo same)"
if [ -f "$FASHION" ]; then
    run train_grbm --hidden 8 --batch 16 --gibbs-steps 1 --langevin-steps 2 --limit 64 --epochs 5 \
        --samples 4 --standardize global --log-every 5 --average-from 10 --eval-every 10 \
        --eval-rows 20 --out "$T/grbm-avg"
    check "train_grbm --average-from 10: exit 0, model_raw.ebm, says the average of 10 iterates" \
        test "$rc" = 0 -a -s "$T/grbm-avg/model_raw.ebm" \
        -a -n "$(grep -F 'the average of the 10 iterates after step 10' "$err")"
    check "train_grbm.csv ends with the average's held-out columns" \
        test -n "$(head -1 "$T/grbm-avg/train_grbm.csv" | grep -F ",heldout_seconds,$AVG_COLUMNS")"
    GRBM_TINY=(--hidden 8 --batch 16 --gibbs-steps 1 --langevin-steps 2 --limit 64 --epochs 1
               --samples 4)
    run train_grbm "${GRBM_TINY[@]}" --out "$T/grbm-default"
    check "train_grbm by default: exit 0, per-pixel standardisation" \
        test "$rc" = 0 -a -n "$(grep -F '(standardised per pixel)' "$err")"
    check "train_grbm by default: the step is preconditioned" \
        has "(step size 1 x each pixel's variance," "$err"
    # var_ratio, the last column, is var_mean / var_min (columns 6 and 7).
    ratio_column() {
        head -1 "$1" | grep -q ',var_ratio$' &&
            awk -F, 'NR > 1 { if ($7 <= 0 || ($6 / $7 - $12) ^ 2 > 1e-6) bad = 1 } END { exit bad }' "$1"
    }
    check "train_grbm.csv: var_ratio is var_mean / var_min" ratio_column "$T/grbm-default/train_grbm.csv"
    run train_grbm "${GRBM_TINY[@]}" --preset paper --out "$T/grbm-paper"
    check "train_grbm --preset paper: global standardisation, 20/512 x the mean variance" \
        test "$rc" = 0 -a -n "$(grep -F '(standardised globally)' "$err" |
            grep -F '(step size 0.0390625 x mean variance,')"
    run train_grbm --step-size 0.5 --precondition on "${GRBM_TINY[@]}" --preset paper \
        --out "$T/grbm-paper2"
    check "train_grbm: options given before --preset paper override it" \
        test "$rc" = 0 -a -n "$(grep -F "(step size 0.5 x each pixel's variance," "$err")"
    run train_grbm "${GRBM_TINY[@]}" --preset paper --standardize pixel --out "$T/grbm-paper3"
    check "train_grbm: an option given after --preset paper overrides it" \
        test "$rc" = 0 -a -n "$(grep -F '(standardised per pixel)' "$err" |
            grep -F '(step size 0.0390625 x mean variance,')"
    # Steps of 50 x the mean variance diverge within 30 Gibbs-Langevin steps.
    run train_grbm "${GRBM_TINY[@]}" --gibbs-steps 30 --precondition off --step-size 50 \
        --out "$T/grbm-diverge"
    check "train_grbm diverging: exit 1, names the smallest variance's pixel, the ratio, the cure" \
        test "$rc" = 1 -a -n "$(grep -F 'the smallest variance is pixel' "$err" | grep -F '(ratio' |
            grep -F -- '--precondition on')"
fi
run train_grbm --preset nosuch
check "train_grbm --preset nosuch: exit 2, the choices" \
    test "$rc" = 2 -a -n "$(grep -F 'expected one of libebm, paper' "$err")"
run bas_ucd --methods ucd-cap --iters 40 --every 10 --chains 100 --average-from 20 \
    --coupling crn --out "$T/bas" --save "$T/bas"
check "bas_ucd --average-from 20: exit 0, an averaged row, bas_ucd_cap_avg.ebm" \
    test "$rc" = 0 -a -n "$(grep -E '^  averaged .*the mean of 20 iterates' "$out")" \
    -a -s "$T/bas/bas_ucd_cap_avg.ebm" -a -s "$T/bas/bas_loglik.png"
check "bas_ucd_cap.csv ends with loglik_sum_avg,loglik_mean_avg (nan, then finite)" \
    test "$(head -1 "$T/bas/bas_ucd_cap.csv" | sed 's/.*seconds,//')" = loglik_sum_avg,loglik_mean_avg \
    -a "$(sed -n 3p "$T/bas/bas_ucd_cap.csv" | cut -d, -f8)" = nan \
    -a "$(tail -1 "$T/bas/bas_ucd_cap.csv" | cut -d, -f8)" != nan
run meeting_times --model "$T/bas/bas_ucd_cap.ebm" --chains 50 --batches 2 \
    --couplings maximal,crn,blockwise --csv "$T/tau.csv"
check "meeting_times: exit 0, a line per coupling, 100 pairs of each in the CSV" \
    test "$rc" = 0 -a "$(grep -cE '^(maximal|crn|blockwise) ' "$out")" = 3 \
    -a "$(grep -c ',blockwise,\|^blockwise,' "$T/tau.csv")" = 100
run meeting_times --model "$T/bas/bas_ucd_cap.ebm" --couplings crn,nosuch
check "meeting_times --couplings crn,nosuch: exit 2, names the entry" \
    test "$rc" = 2 -a -n "$(grep -F "bad --couplings entry 'nosuch'" "$err")"

echo "== --data digits"
DIGITS=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
if [ -f "$DIGITS" ]; then
    run train_ucd --data digits --layers 64,16 --steps 40 --batch 32 --sample-every 0 \
        --eval-every 20 --out "$T/digits"
    check "train_ucd --data digits: exit 0, 1438 train and 359 test images" \
        test "$rc" = 0 -a -n "$(grep -F 'data digits (1438 train, 359 test images)' "$out")"
    check "--data digits --eval-every 20: heldout_loglik_exact finite" \
        finite_column "$T/digits/train.csv" heldout_loglik_exact 20
    read -r w h < <(png_size "$T/digits/completion.png")
    check "digits pictures: 8x8 images drawn at least 28 px (completion.png ${w}x$h)" \
        test "$h" -ge $((3 * 28))
else
    echo "skip the digits run: $DIGITS is missing"
fi
run train_ucd --data digits --data-dir "$T/nowhere" --steps 10 --out "$T/nodigits"
check "--data digits without the file: exit 1, names python3-sklearn" \
    test "$rc" = 1 -a -n "$(grep -F 'python3-sklearn' "$err")"

echo "== --data fashion: an IDX header that declares more images than its file holds"
# 2^28 images of 28 x 28 declared (842 GB as floats), one there: a truncated
# file, at once, and no allocation for the count.
mkdir -p "$T/badidx"
{ printf '\0\0\10\3\20\0\0\0\0\0\0\34\0\0\0\34'; head -c 784 /dev/zero; } | gzip -n \
    >"$T/badidx/train-images-idx3-ubyte.gz"
printf '\0\0\10\1\20\0\0\0\0' | gzip -n >"$T/badidx/train-labels-idx1-ubyte.gz"
cp "$T/badidx/train-images-idx3-ubyte.gz" "$T/badidx/t10k-images-idx3-ubyte.gz"
cp "$T/badidx/train-labels-idx1-ubyte.gz" "$T/badidx/t10k-labels-idx1-ubyte.gz"
run train_pcd --data fashion --data-dir "$T/badidx" --steps 2 --out "$T/badidx/o"
check "--data fashion, 2^28 images declared and 1 there: exit 1, 'truncated: ... image 1'" \
    test "$rc" = 1 -a -n "$(grep -F 'train-images-idx3-ubyte.gz: truncated' "$err" |
        grep -F 'image 1')"

echo "== files that are not regular files: refused at once, by path"
# A FIFO with no writer would block a plain open: every file the trainers
# read goes through cli_open_file (non-blocking open, fstat).
mkdir -p "$T/special/dir" "$T/special/fifodata" "$T/special/dirdata/digits.csv.gz"
mkfifo "$T/special/fifo" "$T/special/fifodata/digits.csv.gz"
for target in "$T/special/fifo" "$T/special/dir" /dev/zero; do
    n_run=$((n_run + 1))
    rc=0
    timeout 20 "$B/train_pcd" --data bas --steps 2 --resume "$target" --out "$T/special/o" \
        >"$T/out.$n_run" 2>"$T/err.$n_run" || rc=$?
    check "--resume $(basename "$target"): exit 1 at once (rc $rc), naming the path and why" \
        test "$rc" = 1 -a -n "$(grep -F -- "$target: cannot read: " "$T/err.$n_run")"
done
for d in fifodata dirdata; do
    n_run=$((n_run + 1))
    rc=0
    timeout 20 "$B/train_ucd" --data digits --data-dir "$T/special/$d" --steps 2 \
        --out "$T/special/o" >"$T/out.$n_run" 2>"$T/err.$n_run" || rc=$?
    check "--data digits from a $d: exit 1 at once (rc $rc), naming the path" \
        test "$rc" = 1 -a -n "$(grep -F -- "$T/special/$d/digits.csv.gz: cannot read: " \
            "$T/err.$n_run")"
done

echo "== pictures"
run train_ucd_lmi "${TINY[@]}" --steps 10 --samples 64 --out "$T/pics"
read -r w h < <(png_size "$T/pics/samples.png")
check "bas samples.png: 8 x 8 images of 4x4 drawn at least 28 px each (${w}x$h)" \
    test "$w" -ge $((8 * 28)) -a "$h" -ge $((8 * 28))

echo "== train_pcd --ladder: parallel tempering"
run train_pcd "${TINY[@]}" --layers 16,16 --ladder 0.25,0.5,0.75,1 --chains 8 --steps 200 \
    --log-every 50 --out "$T/pt"
check "train_pcd --ladder (4 replicas): exit 0" test "$rc" = 0
check "train.csv: the old columns, then swap_rate" \
    test "$(head -1 "$T/pt/train.csv")" = "$OLD_COLUMNS,swap_rate"
check "swap_rate is a rate in [0, 1] on every line" \
    awk -F, 'NR > 1 { n++; if (!($14 >= 0 && $14 <= 1) || NF != 14) exit 1 } END { exit n < 4 }' \
    "$T/pt/train.csv"
check "the report gives the swap rate of each of the 3 pairs" \
    test -n "$(grep -E 'parallel tempering, 4 replicas per chain: swap rate [0-9.]+ over 200 steps; per pair \(beta_k, beta_k\+1\): [0-9.]+ [0-9.]+ [0-9.]+$' "$out")"
check "summary.txt: method=PT and swap_rate" \
    test -n "$(grep -Fx method=PT "$T/pt/summary.txt")" -a -n "$(grep -E '^swap_rate=0\.[0-9]+$' "$T/pt/summary.txt")"
run train_pcd "${TINY[@]}" --layers 16,16 --chains 8 --steps 200 --log-every 50 --out "$T/pt0"
check "without --ladder: PCD, no swap_rate column" \
    test "$(head -1 "$T/pt0/train.csv")" = "$OLD_COLUMNS" -a -n "$(grep -Fx method=PCD "$T/pt0/summary.txt")"
run train_pcd "${TINY[@]}" --ladder 0.5,0.4,1 --steps 10
check "--ladder 0.5,0.4,1: exit 1, the library's message names the betas" \
    test "$rc" = 1 -a -n "$(grep -F -- '--ladder: betas[1] is 0.4' "$err")"
run train_pcd "${TINY[@]}" --ladder 1 --steps 10
check "--ladder 1 (one temperature): exit 2, the range" \
    test "$rc" = 2 -a -n "$(grep -F "bad value '1' for --ladder" "$err")"
run train_pcd "${TINY[@]}" --ladder 0.5,2 --steps 10
check "--ladder 0.5,2: exit 2" test "$rc" = 2
WAIT_FOR='step 3/'
resume_test INT 130 train_pcd checkpoint.ckpt "${TINY[@]}" --layers 16,16 --ladder 0.5,1 --chains 8 \
    --steps 40000 --checkpoint-every 0 --eval none

echo "== the evaluation's defaults: AIS from the data's pixel means, its bias check"
# The defaults themselves, from --help (a run with 10,000 betas and the
# check's 100,000 takes seconds); the runs below ask for fewer betas and
# leave the rest to the defaults.
# opt_help OPTION FILE: OPTION's entry in a --help text, on one line.
opt_help() { awk -v o="  $1 " 'index($0, o) == 1 { p = 1; print; next } /^  --/ { p = 0 } p' "$2" | tr -s '\n ' '  '; }
run train_pcd --help
check "--help: --ais-base data, --ais-betas 10000, --ais-check 10 on 20 chains, --eval-betas 3000" \
    test -n "$(opt_help --ais-base "$out" | grep -F '(default data)')" \
    -a -n "$(opt_help --ais-betas "$out" | grep -F 'default 10000)')" \
    -a -n "$(opt_help --ais-check "$out" | grep -F 'default 10)')" \
    -a -n "$(opt_help --ais-check-chains "$out" | grep -F 'default 20)')" \
    -a -n "$(opt_help --eval-betas "$out" | grep -F 'default 3000)')"
run train_pcd "${TINY_MODEL[@]}" --layers 16,16 --steps 100 --eval ais --ais-betas 200 --out "$T/aisd"
check "by default: the AIS line names the data base and the check's verdict beside the figure" \
    test "$rc" = 0 -a -n "$(grep -E "^AIS \(100 chains, 200 betas, from the data's pixel means\): log Z = .*; bias check: (agrees|biased|unclear) \([-+][0-9.]+ nats at 10x the betas\)$" "$out")"
check "by default: summary.txt has ais_base=data, the check's 20 chains and 2000 betas, its verdict" \
    test -n "$(grep -Fx ais_base=data "$T/aisd/summary.txt")" \
    -a "$(summary_value ais_check_chains "$T/aisd/summary.txt")" = 20 \
    -a "$(summary_value ais_check_betas "$T/aisd/summary.txt")" = 2000 \
    -a -n "$(summary_value ais_check_verdict "$T/aisd/summary.txt" | grep -Ex 'agrees|biased|unclear')"
check "by default: table_row.txt (make demo's table) shows the check's verdict and difference" \
    test -n "$(grep -E ' (agrees|biased|unclear) [-+][0-9]+\.[0-9]{2} ' "$T/aisd/table_row.txt")"
run train_pcd "${TINY_MODEL[@]}" --layers 16,16 --steps 100 --eval ais --ais-betas 200 \
    --ais-base uniform --ais-check 0 --out "$T/aisu"
check "--ais-base uniform --ais-check 0: the AIS line says uniform units, no check, summary ais_base=uniform" \
    test "$rc" = 0 -a -n "$(grep -Fx ais_base=uniform "$T/aisu/summary.txt")" \
    -a -n "$(grep -F "AIS (100 chains, 200 betas, from uniform units): log Z = " "$out")" \
    -a -n "$(grep -F "AIS check: none (--ais-check 0)" "$out")" \
    -a -z "$(grep -F ais_check "$T/aisu/summary.txt")" \
    -a -n "$(grep -E ' - +[0-9.]+ s$' "$T/aisu/table_row.txt")"
check "the AIS base and the check do not change training (same model.ebm)" \
    cmp -s "$T/aisd/model.ebm" "$T/aisu/model.ebm"
run train_pcd "${TINY_MODEL[@]}" --layers 16,16 --steps 10 --eval none --out "$T/aisn"
check "--eval none: summary.txt says ais_base=none" \
    test "$rc" = 0 -a -n "$(grep -Fx ais_base=none "$T/aisn/summary.txt")"
# --eval-every's AIS (--eval-betas) against the final evaluation's AIS of
# the same model at the final step: its verdict on stdout and in summary.txt.
run train_pcd "${TINY_MODEL[@]}" --steps 100 --eval ais --eval-every 50 --eval-betas 20 \
    --ais-betas 200 --ais-check 0 --out "$T/aish"
check "--eval-every with AIS: heldout_check and heldout_check_diff in summary.txt, the verdict on stdout" \
    test "$rc" = 0 \
    -a -n "$(summary_value heldout_check "$T/aish/summary.txt" | grep -Ex 'agrees|biased|unclear')" \
    -a -n "$(summary_value heldout_check_diff "$T/aish/summary.txt" | grep -E '^-?[0-9]+\.[0-9]+$')" \
    -a -n "$(grep -E '^held-out curves \(train.csv, AIS with 20 betas\): their log Z at step 100 is [-+][0-9.]+ nats' "$out")"
run train_pcd "${TINY_MODEL[@]}" --steps 120 --eval ais --eval-every 50 --eval-betas 20 \
    --ais-betas 200 --ais-check 0 --out "$T/aish2"
check "--eval-every off the final step: heldout_check=not_shown, and stdout says why" \
    test "$rc" = 0 -a "$(summary_value heldout_check "$T/aish2/summary.txt")" = not_shown \
    -a -n "$(grep -F 'bias not checked: no held-out evaluation at the final step' "$out")"
run train_pcd "${TINY[@]}" --ais-base nosuch --steps 10
check "--ais-base nosuch: exit 2, the choices" \
    test "$rc" = 2 -a -n "$(grep -F 'expected one of uniform, data' "$err")"

echo "== --centre data"
run train_ucd_lmi "${TINY[@]}" --units binary --centre data --offset-rate 0.05 --steps 200 \
    --out "$T/cen"
check "train_ucd_lmi --centre data: exit 0, summary centre=data, a version-2 model.ebm" \
    test "$rc" = 0 -a -n "$(grep -Fx centre=data "$T/cen/summary.txt")" \
    -a "$(od -An -tu1 -j8 -N1 "$T/cen/model.ebm" | tr -d ' ')" = 2
run train_ucd_lmi "${TINY[@]}" --units binary --steps 200 --out "$T/cen0"
check "without --centre: a version-1 model.ebm" \
    test "$(od -An -tu1 -j8 -N1 "$T/cen0/model.ebm" | tr -d ' ')" = 1
run train_ucd_lmi "${TINY[@]}" --units binary --centre data --steps 200 \
    --resume "$T/cen/checkpoint.ckpt" --out "$T/cen1"
check "a --centre data checkpoint resumed without --offset-rate 0.05: exit 1, names the setting" \
    test "$rc" = 1 -a -n "$(grep -F offset_rate "$err")"
run train_ucd "${TINY[@]}" --layers 16,16 --centre data --average-from 2 --steps 10
check "--centre data --average-from 2: exit 2, names both" \
    test "$rc" = 2 -a -n "$(grep -F -- '--centre data with --average-from' "$err")"
WAIT_FOR='step 3/'
resume_test TERM 143 train_ucd_lmi checkpoint.ckpt "${TINY[@]}" --units binary --centre data \
    --offset-rate 0.05 --steps 20000 --checkpoint-every 0 --eval none

echo "== --units potts"
# Bars-and-stripes pixels are 0 or 1: with --levels 2 each is a site of two
# one-hot units (32 visible units, 2^16 visible states: exact evaluation).
# shellcheck disable=SC2054 # 32,8 is one argument
POTTS=(--data bas --layers 32,8 --batch 32 --samples 4 --completions 2 --units potts
    --binarize levels --levels 2)
run train_ucd "${POTTS[@]}" --steps 200 --out "$T/potts"
check "train_ucd --units potts --binarize levels --levels 2: exit 0, 'potts units', 'levels (2)'" \
    test "$rc" = 0 -a -n "$(grep -F 'potts units; data bas' "$out" | grep -F 'levels (2)')"
check "... exact log p finite, Gibbs sample pictures, samples.png and completion.png" \
    test -n "$(summary_value exact_ll_mean "$T/potts/summary.txt" | grep -E '^-[0-9]+\.[0-9]+$')" \
    -a -n "$(grep -F '1000 Gibbs sweeps from uniform states' "$out")" \
    -a -s "$T/potts/samples.png" -a -s "$T/potts/completion.png"
check "... a version-2 model.ebm (Potts units)" \
    test "$(od -An -tu1 -j8 -N1 "$T/potts/model.ebm" | tr -d ' ')" = 2
run train_ucd "${POTTS[@]}" --steps 200 --eval ais --ais-betas 3000 --ais-base data \
    --out "$T/potts-ais"
# Every bars-and-stripes pixel is 1 in 15 of the 30 images: smoothed
# frequency 16/32, so the base alone gives 16 log(1/2) per image.
for u in "binary 16,8 threshold" "spin 16,8 threshold" "potts 32,8 levels"; do
    read -r kind layers enc <<<"$u"
    run train_ucd --data bas --batch 32 --units "$kind" --layers "$layers" --binarize "$enc" \
        --levels 2 --steps 1 --eval ais --ais-base data --out "$T/base-$kind"
    check "--units $kind --ais-base data: the base alone gives 16 log(1/2) = -11.0904 per image" \
        awk -v b="$(summary_value base_ll_mean "$T/base-$kind/summary.txt")" \
        'BEGIN { exit !(b != "" && b + 16 * log(2) < 1e-5 && b + 16 * log(2) > -1e-5) }'
done
check "--units potts --eval ais --ais-base data: test log p within 0.1 of the exact one" \
    awk -v a="$(summary_value test_ll_mean "$T/potts-ais/summary.txt")" \
    -v e="$(summary_value exact_ll_mean "$T/potts/summary.txt")" \
    'BEGIN { d = a - e; exit !(a != "" && d < 0.1 && d > -0.1) }'
run train_ucd --data bas --layers 16,8 --units potts --steps 10
check "--units potts without --binarize levels: exit 2, names both" \
    test "$rc" = 2 -a -n "$(grep -F -- '--units potts needs --binarize levels' "$err")"
run train_ucd_lmi "${POTTS[@]}" --layers 32,8,8 --steps 10
check "train_ucd_lmi --units potts: exit 1, the library's refusal (use EBM_ESTIMATOR_UCD)" \
    test "$rc" = 1 -a -n "$(grep -F 'a Potts site moves between categories' "$err")"
run train_ucd "${POTTS[@]}" --levels 3 --steps 10
check "--levels 3 makes 48 visible units: --layers 32,8 is refused (exit 1), naming both" \
    test "$rc" = 1 -a -n "$(grep -F 'starts with 32, but the bas images have 48 visible units' "$err")"
WAIT_FOR='step 3/'
resume_test TERM 143 train_pcd checkpoint.ckpt "${POTTS[@]}" --steps 40000 --checkpoint-every 0 \
    --eval none
run train_pcd "${POTTS[@]}" --levels 3 --layers 48,8 --steps 40000 --checkpoint-every 0 --eval none \
    --resume "$T/train_pcd.TERM/checkpoint.ckpt" --out "$T/potts-l3"
check "a --levels 2 checkpoint resumed with --levels 3: exit 1, names the setting" \
    test "$rc" = 1 -a -n "$(grep -F levels "$err")"

echo "== --hidden drelu"
run train_pcd --data bas --layers 16,8 --batch 32 --samples 4 --completions 2 --units binary \
    --hidden drelu --steps 300 --out "$T/drelu"
check "train_pcd --hidden drelu: exit 0, 'over dReLU hidden units', exact log p finite" \
    test "$rc" = 0 -a -n "$(grep -F 'binary units over dReLU hidden units' "$out")" \
    -a -n "$(summary_value exact_ll_mean "$T/drelu/summary.txt" | grep -E '^-[0-9]+\.[0-9]+$')"
check "... Gibbs sample pictures, samples.png, completion.png, a version-2 model.ebm" \
    test -n "$(grep -F '1000 Gibbs sweeps from uniform states' "$out")" \
    -a -s "$T/drelu/samples.png" -a -s "$T/drelu/completion.png" \
    -a "$(od -An -tu1 -j8 -N1 "$T/drelu/model.ebm" | tr -d ' ')" = 2
run train_ucd --data bas --layers 16,8 --hidden drelu --steps 10
check "train_ucd --hidden drelu: exit 1, the library's refusal names UCD and CD/PCD" \
    test "$rc" = 1 -a -n "$(grep -F 'not supported for dReLU hidden units' "$err")"
run train_pcd --data bas --layers 16,8,8 --hidden drelu --steps 10
check "train_pcd --hidden drelu with 3 layers: exit 1, the library names the RBM" \
    test "$rc" = 1 -a -n "$(grep -F 'dReLU units are the hidden layer of an RBM' "$err")"
run train_pcd --data bas --layers 16,8 --hidden drelu --centre data --steps 10
check "--hidden drelu --centre data: exit 2, names both" \
    test "$rc" = 2 -a -n "$(grep -F -- '--centre data with --hidden drelu' "$err")"
WAIT_FOR='step 3/'
# (dReLU draws cost more: 4000 steps take about as long as 40000 above)
resume_test INT 130 train_pcd checkpoint.ckpt --data bas --layers 16,8 --batch 32 --samples 4 \
    --completions 2 --hidden drelu --lr 0.001 --steps 4000 --checkpoint-every 0 --eval none
run train_pcd --data bas --layers 16,8 --batch 32 --lr 0.001 --steps 4000 --checkpoint-every 0 \
    --eval none --resume "$T/train_pcd.INT/checkpoint.ckpt" --out "$T/drelu-plain"
check "a --hidden drelu checkpoint resumed without it: exit 1, names the setting" \
    test "$rc" = 1 -a -n "$(grep -F 'hidden=drelu' "$err")"

echo "== plot_curves"
run plot_curves --out "$T/c.png" --x step --y grad_norm,nosuch "run=$T/ev0/train.csv"
check "a missing column: exit 1, names it" \
    test "$rc" = 1 -a -n "$(grep -F 'no column nosuch' "$err")" -a ! -e "$T/c.png"
run plot_curves --out "$T/c.png" --x nosuch_x "run=$T/ev0/train.csv"
check "a missing --x column: exit 1, names it" \
    test "$rc" = 1 -a -n "$(grep -F 'no column nosuch_x' "$err")"
printf 'step,seconds,grad_norm\n1,0.1,abc\n' >"$T/garbage.csv"
run plot_curves --out "$T/c.png" --x step "g=$T/garbage.csv"
check "a field that is not a number: exit 1, names file, line and column" \
    test "$rc" = 1 -a -n "$(grep -F "$T/garbage.csv:2: column grad_norm" "$err")"
printf 'step,seconds,grad_norm\n1,0.1,nan\n' >"$T/nan.csv"
run plot_curves --out "$T/c.png" --x step "g=$T/nan.csv"
check "nothing finite to draw: exit 1" \
    test "$rc" = 1 -a -n "$(grep -F 'nothing to draw for grad_norm' "$err")"
run plot_curves --out "$T/c.png" --x step "g=$T/nowhere.csv"
check "a file that cannot be read: exit 1, names it" \
    test "$rc" = 1 -a -n "$(grep -F "$T/nowhere.csv" "$err")"
run plot_curves --x step "g=$T/ev0/train.csv"
check "no --out: exit 2" test "$rc" = 2
run plot_curves --out "$T/c.png" --x step "g=$T/ev0/train.csv"
check "a good file: exit 0 and a PNG" test "$rc" = 0 -a -s "$T/c.png"

echo
echo "trainers: $passed passed, $failed failed"
[ "$failed" = 0 ]
