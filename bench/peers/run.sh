#!/bin/sh
# Time the peers of shared/BENCHMARKS.md on the workloads of bench/*.c, each
# peer's own code doing the work, BENCH_THREADS (2) threads each; one human
# line and one JSON line per peer. A peer whose code or tools are missing is
# "skipped: <reason>" (exit 0); a peer that fails is an error (exit 1).
#
# usage: bench/peers/run.sh [pcd_rbm] [ucd_lmi_dbm] [grbm_gibbs_langevin] [ucd_bas]
#   (default: all four, one after another, never two at once)
# environment:
#   BENCH_THREADS      threads of every peer (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS,
#                      torch.set_num_threads, cdtau's nthread); default 2
#   BENCH_BAS_ITERS    length of cdtau's training run; default 10000
#   PEER_UNBIASED_DBM, PEER_GRBM, PEER_CDTAU
#                      the peers' checkouts; default bench/peers/src/<name> (fetch.sh)
#   PEERS_BUILD        where cdtau is built and installed (an R library);
#                      default bench/peers/build
#   PYTHON             default /usr/bin/python3 (Debian's torch and scikit-learn)
#   DATA_FASHION_MNIST_DIR  default /usr/share/datasets/fashion-mnist
set -u
here=$(cd "$(dirname "$0")" && pwd)
BENCH_THREADS=${BENCH_THREADS:-2}
OMP_NUM_THREADS=$BENCH_THREADS
OPENBLAS_NUM_THREADS=$BENCH_THREADS
MKL_NUM_THREADS=$BENCH_THREADS
export BENCH_THREADS OMP_NUM_THREADS OPENBLAS_NUM_THREADS MKL_NUM_THREADS
PYTHON=${PYTHON:-/usr/bin/python3}
PEER_UNBIASED_DBM=${PEER_UNBIASED_DBM:-$here/src/unbiased_dbm}
PEER_GRBM=${PEER_GRBM:-$here/src/GRBM}
PEER_CDTAU=${PEER_CDTAU:-$here/src/cdtau}
PEERS_BUILD=${PEERS_BUILD:-$here/build}
export PEER_UNBIASED_DBM PEER_GRBM PEER_CDTAU
failed=0

skip() { # bench reason
    echo "$1: skipped: $2"
}

has_python() { # module...
    for mod in "$@"; do
        "$PYTHON" -c "import $mod" >/dev/null 2>&1 || return 1
    done
}

run_python() { # bench driver
    (cd "$here" && "$PYTHON" "$2") || { echo "$1: FAILED (exit $?)"; failed=1; }
}

commit_of() {
    git -C "$1" rev-parse HEAD 2>/dev/null || echo unknown
}

peer_pcd_rbm() {
    if ! has_python numpy sklearn; then
        skip peer_pcd_rbm "$PYTHON cannot import sklearn (apt-get install -y python3-sklearn)"
        return
    fi
    run_python peer_pcd_rbm peer_pcd_rbm.py
}

# A PyTorch peer: its checkout must hold `file`.
peer_torch() { # bench variable checkout file driver
    if [ ! -f "$3/$4" ]; then
        skip "$1" "no checkout at $3 (set $2 or run bench/peers/fetch.sh)"
    elif ! has_python numpy torch; then
        skip "$1" "$PYTHON cannot import torch (apt-get install -y python3-torch)"
    else
        run_python "$1" "$5"
    fi
}

# cdtau is an R package; it links RcppXsimd (xsimd 7), which Debian lacks:
# it is built against cdtau/RcppXsimd, a stand-in over Debian's xsimd 8.
# The build (about a minute) is redone when the commit or the stand-in change.
peer_ucd_bas() {
    if [ ! -f "$PEER_CDTAU/src/rbm.cpp" ]; then
        skip peer_ucd_bas_cap100 "no cdtau checkout at $PEER_CDTAU (set PEER_CDTAU or run bench/peers/fetch.sh)"
        return
    fi
    if ! command -v Rscript >/dev/null 2>&1; then
        skip peer_ucd_bas_cap100 "no R (apt-get install -y r-base-core r-cran-rcpp r-cran-rcppeigen libxsimd-dev)"
        return
    fi
    if ! Rscript -e 'for (p in c("Rcpp", "RcppEigen")) if (!requireNamespace(p, quietly = TRUE)) quit(status = 1)' >/dev/null 2>&1; then
        skip peer_ucd_bas_cap100 "R lacks Rcpp or RcppEigen (apt-get install -y r-cran-rcpp r-cran-rcppeigen)"
        return
    fi
    if [ ! -f /usr/include/xsimd/xsimd.hpp ]; then
        skip peer_ucd_bas_cap100 "no xsimd headers (apt-get install -y libxsimd-dev)"
        return
    fi
    commit=$(commit_of "$PEER_CDTAU")
    lib=$PEERS_BUILD/lib
    stamp="$commit $(cat "$here/cdtau/RcppXsimd/DESCRIPTION" "$here/cdtau/RcppXsimd/inst/include/xsimd/xsimd.hpp" | cksum)"
    if [ ! -f "$PEERS_BUILD/cdtau.stamp" ] || [ "$(cat "$PEERS_BUILD/cdtau.stamp")" != "$stamp" ] ||
       [ ! -d "$lib/cdtau" ]; then
        echo "peer_ucd_bas_cap100: building cdtau $commit into $lib (log: $PEERS_BUILD/cdtau_build.log)"
        rm -rf "$lib" "$PEERS_BUILD/cdtau-src" "$PEERS_BUILD/cdtau.stamp"
        mkdir -p "$lib" || { failed=1; return; }
        cp -R "$PEER_CDTAU" "$PEERS_BUILD/cdtau-src" && rm -rf "$PEERS_BUILD/cdtau-src/.git"
        if ! (cd "$PEERS_BUILD" &&
              R_LIBS=$lib R CMD INSTALL --no-docs -l "$lib" "$here/cdtau/RcppXsimd" &&
              R_LIBS=$lib R CMD INSTALL --no-docs -l "$lib" cdtau-src) >"$PEERS_BUILD/cdtau_build.log" 2>&1; then
            tail -n 20 "$PEERS_BUILD/cdtau_build.log"
            echo "peer_ucd_bas_cap100: FAILED: cdtau did not build (log: $PEERS_BUILD/cdtau_build.log)"
            failed=1
            return
        fi
        echo "$stamp" >"$PEERS_BUILD/cdtau.stamp"
    fi
    R_LIBS=$lib PEER_CDTAU_COMMIT=$commit Rscript "$here/cdtau/peer_ucd_bas.R" ||
        { echo "peer_ucd_bas_cap100: FAILED (exit $?)"; failed=1; }
}

[ $# -gt 0 ] || set -- pcd_rbm ucd_lmi_dbm grbm_gibbs_langevin ucd_bas
for bench in "$@"; do
    case $bench in
    pcd_rbm) peer_pcd_rbm ;;
    ucd_lmi_dbm)
        peer_torch peer_ucd_lmi_dbm PEER_UNBIASED_DBM "$PEER_UNBIASED_DBM" model.py \
            peer_ucd_lmi_dbm.py ;;
    grbm_gibbs_langevin)
        peer_torch peer_grbm_gibbs_langevin PEER_GRBM "$PEER_GRBM" grbm.py \
            peer_grbm_gibbs_langevin.py ;;
    ucd_bas) peer_ucd_bas ;;
    *) echo "run.sh: unknown benchmark $bench (pcd_rbm, ucd_lmi_dbm, grbm_gibbs_langevin, ucd_bas)" >&2
       exit 2 ;;
    esac
done
exit $failed
