#!/bin/sh
# make bench: run each benchmark program with BENCH_THREADS threads, then
# with 1 (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and EBM_NUM_THREADS); where
# the environment sets OPENBLAS_CORETYPE, a third time with BENCH_THREADS
# threads and the variable unset (the CPU's own kernels).
#
# With BENCH_PEERS=1 (the default), a program with a peer (bench/peers/)
# first has the peer timed by bench/peers/run.sh with BENCH_THREADS threads;
# the peer's time and peak memory are handed to the program's runs
# (BENCH_PEER_MS, BENCH_PEER_RSS_MIB), which print the ratio to this run's
# peer. A peer that is skipped or fails leaves the programs with issue 25's
# figures, and says so on its line.
#
# usage: bench/bench.sh PROGRAM... (the paths of the built programs)
set -u
BENCH_THREADS=${BENCH_THREADS:-2}
BENCH_BAS_ITERS=${BENCH_BAS_ITERS:-10000}
BENCH_PEERS=${BENCH_PEERS:-1}
export BENCH_THREADS BENCH_BAS_ITERS

# The figure `key` of the JSON line of bench `name` in file f, or nothing.
json_field() { # f name key
    sed -n "s/^{\"bench\": \"$2\".*\"$3\": \([0-9][0-9.e+-]*\).*/\1/p" "$1" | head -n 1
}

run() { # threads program args...
    t=$1
    shift
    OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t EBM_NUM_THREADS=$t "$@"
}

peer_out=$(mktemp) || exit 1
trap 'rm -f "$peer_out"' EXIT
for b in "$@"; do
    name=${b##*/}
    case $name in
    ucd_bas) args=$BENCH_BAS_ITERS peer=peer_ucd_bas_cap100 ;;
    pcd_rbm | ucd_lmi_dbm | grbm_gibbs_langevin) args='' peer=peer_$name ;;
    *) args='' peer='' ;;
    esac
    BENCH_PEER_MS=
    BENCH_PEER_RSS_MIB=
    if [ "$BENCH_PEERS" = 1 ] && [ -n "$peer" ]; then
        echo "== $peer (bench/peers/run.sh $name, BENCH_THREADS=$BENCH_THREADS)"
        sh "$(dirname "$0")/peers/run.sh" "$name" >"$peer_out" 2>&1
        cat "$peer_out"
        BENCH_PEER_MS=$(json_field "$peer_out" "$peer" ms_per_step)
        BENCH_PEER_RSS_MIB=$(json_field "$peer_out" "$peer" peak_rss_mib)
    fi
    export BENCH_PEER_MS BENCH_PEER_RSS_MIB
    counts=$BENCH_THREADS
    [ "$BENCH_THREADS" = 1 ] || counts="$counts 1"
    for t in $counts; do
        echo "== $name${args:+ $args} (OPENBLAS_NUM_THREADS=$t)"
        run "$t" "$b" ${args:+"$args"} || exit 1
    done
    if [ -n "${OPENBLAS_CORETYPE:-}" ]; then
        echo "== $name${args:+ $args} (OPENBLAS_NUM_THREADS=$BENCH_THREADS, the CPU's own kernels: OPENBLAS_CORETYPE unset)"
        (unset OPENBLAS_CORETYPE && run "$BENCH_THREADS" "$b" ${args:+"$args"}) || exit 1
    fi
done
