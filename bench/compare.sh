#!/bin/sh
# Before/after ratios (docs/performance.md):
#   bench/compare.sh BASE [bench ...]
# builds the library of git revision BASE in build/compare/base (a git
# worktree), links this tree's benchmark programs against it and against
# this tree's library, then runs each pair in turns (base, new, base, new)
# so that both see the same machine load, and prints every result's
# ms_per_step for both and their ratio. Benchmarks default to ucd_lmi_dbm,
# pcd_rbm, ucd_bas and grbm_gibbs_langevin (mh_one_row and the others by
# name). Variables: BENCH_THREADS (2), BENCH_BAS_ITERS (2000: the first
# iterations of the ucd_bas runs).
set -eu
[ $# -ge 1 ] || { echo "usage: bench/compare.sh BASE [bench ...]" >&2; exit 2; }
base=$1
shift
benches=${*:-"ucd_lmi_dbm pcd_rbm ucd_bas grbm_gibbs_langevin"}
threads=${BENCH_THREADS:-2}
bas_iters=${BENCH_BAS_ITERS:-2000}
dir=build/compare
rev=$(git rev-parse --short "$base")

make -s all
git worktree prune
if [ ! -d "$dir/base" ]; then
    mkdir -p "$dir"
    git worktree add --detach "$dir/base" "$rev" >/dev/null
else
    git -C "$dir/base" checkout -q --detach "$rev"
fi
make -s -C "$dir/base" lib/libebm.a
for b in $benches; do
    make -s "build/bench/$b" "$dir/$b.base"
done

ms() { sed -n 's/.*"bench": "\([^"]*\)".*"ms_per_step": \([0-9.]*\).*/\1 \2/p'; }
printf '%-22s %12s %12s %8s   (OPENBLAS_NUM_THREADS=%s, base %s)\n' bench base_ms new_ms ratio \
    "$threads" "$rev"
for b in $benches; do
    args=
    [ "$b" = ucd_bas ] && args=$bas_iters
    for turn in 1 2; do
        OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads EBM_NUM_THREADS=$threads "$dir/$b.base" $args | ms > "$dir/$b.base.$turn"
        OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads EBM_NUM_THREADS=$threads "build/bench/$b" $args | ms > "$dir/$b.new.$turn"
    done
    # Per result name: the better (smaller) of the two turns of each side.
    cat "$dir/$b.base.1" "$dir/$b.base.2" | sort -k1,1 -k2,2g | sort -s -u -k1,1 > "$dir/$b.base.best"
    cat "$dir/$b.new.1" "$dir/$b.new.2" | sort -k1,1 -k2,2g | sort -s -u -k1,1 > "$dir/$b.new.best"
    join "$dir/$b.base.best" "$dir/$b.new.best" |
        awk '{ printf "%-22s %12.3f %12.3f %7.2fx\n", $1, $2, $3, $2 / $3 }'
done
