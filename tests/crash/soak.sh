#!/usr/bin/env bash
# make check-crash: crash-resume soak of the trainers. Each run below is
# killed with SIGKILL KILLS times and started again each time, with
# --resume from its checkpoint when one exists (a run killed before its
# first checkpoint starts afresh), then finished; its model.ebm must be the
# bytes of the same run never interrupted, and its train.csv the same lines
# but for the seconds column. Checkpoints are written every step, so that
# many kills land in a write.
#
# The kills: two in three come after a random delay (the start-up, a step,
# a checkpoint write, anything); every third lands inside a checkpoint
# write by tests/crash/kill_at.so (LD_PRELOAD), which kills the process in
# the middle of writing the temporary file, before its fsync, or before the
# rename that replaces the old checkpoint, in the first, second or third
# write of that start. The MPI trainer runs on 2 ranks, and each kill
# picks one rank (the shim: rank 0, which writes the checkpoints).
# train_grbm (run grbm; Fashion-MNIST's first 64 images, skipped when the
# data set is missing) writes train_grbm.ckpt and train_grbm.csv, whose
# seconds column is the third, with pictures after every step, and trains
# for STEPS_PER_RUN / 64 epochs of 4 steps (a sixteenth of the steps: each
# also writes two pictures, and a start reads the data set's 60,000 images).
#
# Usage: tests/crash/soak.sh [BUILD_DIR]   (default build/examples; make
# check-crash builds what it needs). Environment: KILLS (default 50) kills
# per run, KILLS_MPI (default KILLS) for the MPI run, KILLS_GRBM (default
# KILLS, at most 20) for train_grbm, STEPS_PER_RUN
# (default 1500), RUNS (the names below, default all), SOAK_SEED (default:
# the time; it is printed, and the same seed replays the same delays and
# shim moments, not the same timing). Prints one line per run and
# "N passed, N failed"; exits 1 if any failed.
set -uo pipefail

B=${1:-build/examples}
SHIM=${SHIM:-build/tests/crash/kill_at.so}
KILLS=${KILLS:-50}
KILLS_MPI=${KILLS_MPI:-$KILLS}
KILLS_GRBM=${KILLS_GRBM:-$((KILLS < 20 ? KILLS : 20))}
SOAK_SEED=${SOAK_SEED:-$(date +%s)}
RUNS=${RUNS:-ucd ucd_lmi pcd pt mpi grbm}
STEPS_PER_RUN=${STEPS_PER_RUN:-1500}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
export OMPI_MCA_rmaps_base_oversubscribe=1
for p in train_ucd train_ucd_lmi train_pcd; do
    [ -x "$B/$p" ] || { echo "crash: $B/$p is not built (make check-crash builds it)" >&2; exit 2; }
done
[ -f "$SHIM" ] || { echo "crash: $SHIM is not built (make check-crash builds it)" >&2; exit 2; }
SHIM=$(realpath "$SHIM")
T=$(mktemp -d)
trap 'pkill -KILL -f -- "--out $T/" 2>/dev/null; rm -rf "$T"' EXIT
RANDOM=$SOAK_SEED
echo "crash: SOAK_SEED=$SOAK_SEED KILLS=$KILLS KILLS_MPI=$KILLS_MPI KILLS_GRBM=$KILLS_GRBM" \
     "STEPS_PER_RUN=$STEPS_PER_RUN"

passed=0
failed=0
total_kills=0
total_in_write=0

TINY=(--data bas --batch 32 --sample-every 0 --samples 4 --completions 2 --eval none
      --log-every 1 --checkpoint-every 1 --seed 5)
# The runs: NAME -> program and arguments.
declare -A PROG ARGS
PROG[ucd]=train_ucd;         ARGS[ucd]="--layers 16,16"
PROG[ucd_lmi]=train_ucd_lmi; ARGS[ucd_lmi]="--layers 16,16,8"
PROG[pcd]=train_pcd;         ARGS[pcd]="--layers 16,16,8"
PROG[pt]=train_pcd;          ARGS[pt]="--layers 16,16 --ladder 0.5,0.8,1 --chains 8"
PROG[mpi]=train_mpi;         ARGS[mpi]="--estimator ucd --layers 16,16 --shards 4"
PROG[grbm]=train_grbm
ARGS[grbm]="--hidden 8 --batch 16 --limit 64 --gibbs-steps 2 --langevin-steps 2 --samples 1
            --sample-every 1e-12 --log-every 1 --seed 5"
# Each run's checkpoint and CSV, and the CSV's columns but seconds.
declare -A CKPT CSV COLUMNS
for name in ucd ucd_lmi pcd pt mpi; do
    CKPT[$name]=checkpoint.ckpt; CSV[$name]=train.csv; COLUMNS[$name]=1,3-
done
CKPT[grbm]=train_grbm.ckpt; CSV[grbm]=train_grbm.csv; COLUMNS[grbm]=1,2,4-
FASHION=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz

# length NAME STEPS: the arguments that make NAME's run STEPS long (and,
# but for grbm, its other shared arguments).
length() {
    if [ "$1" = grbm ]; then
        local epochs=$(($2 / 64))
        echo --epochs $((epochs > 0 ? epochs : 1))
    else
        echo "${TINY[@]}" --steps "$2"
    fi
}

# start NAME DIR KILL_AT: run NAME into DIR in the background (resuming
# from its checkpoint in DIR when it exists), the shim set to KILL_AT
# (empty: no kill); sets pid.
start() {
    local name=$1 dir=$2 kill_at=$3 resume=()
    [ -e "$dir/${CKPT[$name]}" ] && resume=(--resume "$dir/${CKPT[$name]}")
    local cmd=("$B/${PROG[$name]}") rank=()
    if [ "$name" = mpi ]; then
        cmd=(mpirun --allow-run-as-root --oversubscribe -np 2
             -x EBM_KILL_AT -x EBM_KILL_RANK -x LD_PRELOAD "${cmd[@]}")
        rank=(EBM_KILL_RANK=0)
    fi
    # shellcheck disable=SC2206
    local args=(${ARGS[$name]}) steps=($(length "$name" "${STEPS[$name]}"))
    env EBM_KILL_AT="$kill_at" "${rank[@]}" LD_PRELOAD="$SHIM" \
        "${cmd[@]}" "${steps[@]}" "${args[@]}" "${resume[@]}" \
        --out "$dir" >>"$dir.out" 2>>"$dir.err" &
    pid=$!
}

# workers NAME DIR: the processes training into DIR (the trainer, or the
# ranks, whose command starts with the program's path; not mpirun).
workers() { pgrep -f -- "^$B/${PROG[$1]} .*--out $2\$" || true; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# tmp_state DIR CKPT: the state of the temporary checkpoint file: empty
# when there is none.
tmp_state() { stat -c '%i %.9Y %s' "$1/$2.tmp" 2>/dev/null || true; }

# run_to_end NAME DIR: start NAME in DIR and wait; sets rc and ms (its
# wall time).
run_to_end() {
    local t0
    t0=$(now_ms)
    start "$1" "$2" ""
    rc=0
    { wait "$pid"; } 2>/dev/null || rc=$?
    ms=$(($(now_ms) - t0))
}

# soak NAME: the uninterrupted run (timed, and a run of one step for the
# start-up), then rounds of kills in fresh directories until KILLS kills;
# one check line. A random kill comes after the start-up and a delay of
# 0 to SPAN ms, SPAN = 1.5 times the run's training time over KILLS: the
# random starts (two thirds of them) then train about half of the run in
# all, so the kills fall all over it; when a round ends before its KILLS
# kills, the next starts afresh, and its results are checked too.
soak() {
    local name=$1 ref=$T/$1.ref one=$T/$1.one
    mkdir -p "$ref" "$one"
    local steps=${STEPS[$name]}
    STEPS[$name]=1
    run_to_end "$name" "$one"
    local t_one=$ms rc_one=$rc
    STEPS[$name]=$steps
    run_to_end "$name" "$ref"
    local t_ref=$ms
    if [ "$rc_one" != 0 ] || [ "$rc" != 0 ]; then
        bad "$name: an uninterrupted run failed (exit $rc_one, $rc): $(tail -3 "$ref.err")"
        return
    fi
    local kills=0 in_write=0 starts=0 rounds=0 t_soak kills_wanted=$KILLS
    [ "$name" = mpi ] && kills_wanted=$KILLS_MPI
    [ "$name" = grbm ] && kills_wanted=$KILLS_GRBM
    local span=$((15 * (t_ref - t_one) / (10 * kills_wanted)))
    [ "$span" -ge 5 ] || span=5
    t_soak=$(now_ms)
    while [ "$kills" -lt "$kills_wanted" ]; do
        rounds=$((rounds + 1))
        local dir=$T/$name.$rounds finished=0 last_tmp=""
        mkdir -p "$dir"
        while [ "$kills" -lt "$kills_wanted" ]; do
            starts=$((starts + 1))
            local kill_at=""
            if [ $((starts % 3)) = 0 ]; then
                local calls=(fwrite fsync rename)
                kill_at="${calls[RANDOM % 3]}:$((RANDOM % 3 + 1)):${CKPT[$name]}"
            fi
            echo "== start $starts, kill at: ${kill_at:-random}" >>"$dir.err"
            start "$name" "$dir" "$kill_at"
            if [ -z "$kill_at" ]; then
                local ms=$((t_one + (RANDOM * 32768 + RANDOM) % (span + 1)))
                sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
                local victims
                victims=($(workers "$name" "$dir"))
                if [ "${#victims[@]}" -gt 0 ]; then
                    kill -KILL "${victims[RANDOM % ${#victims[@]}]}" 2>/dev/null
                fi
            fi
            rc=0
            { wait "$pid"; } 2>/dev/null || rc=$?
            if [ "$rc" = 0 ]; then
                finished=1
                break
            fi
            # 137: killed (mpirun gives its killed rank's status)
            if [ "$rc" != 137 ]; then
                bad "$name: start $starts exited $rc, not by a kill: $(tail -3 "$dir.err")"
                return
            fi
            kills=$((kills + 1))
            # a temporary file other than the one seen after the last kill:
            # this kill stopped a write
            local now_tmp
            now_tmp=$(tmp_state "$dir" "${CKPT[$name]}")
            if [ -n "$now_tmp" ] && [ "$now_tmp" != "$last_tmp" ]; then
                in_write=$((in_write + 1))
            fi
            last_tmp=$now_tmp
        done
        if [ "$finished" = 0 ]; then
            run_to_end "$name" "$dir"
            if [ "$rc" != 0 ]; then
                bad "$name: the last resume exited $rc: $(tail -3 "$dir.err")"
                return
            fi
        fi
        if ! cmp -s "$ref/model.ebm" "$dir/model.ebm"; then
            bad "$name: round $rounds: model.ebm differs from the uninterrupted run's"
            return
        fi
        local csv=${CSV[$name]} cols=${COLUMNS[$name]}
        if [ "$(cut -d, -f"$cols" "$ref/$csv")" != "$(cut -d, -f"$cols" "$dir/$csv")" ]; then
            bad "$name: round $rounds: $csv differs from the uninterrupted run's (but seconds):"
            diff <(cut -d, -f"$cols" "$ref/$csv") <(cut -d, -f"$cols" "$dir/$csv") | head -6
            return
        fi
    done
    total_kills=$((total_kills + kills))
    total_in_write=$((total_in_write + in_write))
    ok "$name: $kills kills ($in_write in a checkpoint write) over $starts starts in $rounds round(s), $((($(now_ms) - t_soak) / 1000)) s: model.ebm and ${CSV[$name]} the uninterrupted run's"
}
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }

declare -A STEPS
for name in $RUNS; do
    [ -n "${PROG[$name]:-}" ] || { echo "crash: no run named $name" >&2; exit 2; }
    if [ "$name" = mpi ] && ! { [ -x "$B/train_mpi" ] && command -v mpirun >/dev/null; }; then
        echo "crash: $name needs $B/train_mpi and mpirun (make examples-mpi)" >&2
        exit 2
    fi
    if [ "$name" = grbm ] && ! { [ -x "$B/train_grbm" ] && [ -f "$FASHION" ]; }; then
        echo "skip $name: it needs $B/train_grbm and $FASHION (apt-get install dataset-fashion-mnist)"
        continue
    fi
    STEPS[$name]=$STEPS_PER_RUN
    soak "$name"
done
echo "crash: $total_kills kills, $total_in_write of them left a checkpoint write unfinished"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
