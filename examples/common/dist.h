/* Data-parallel gradients whose results do not depend on the number of
 * processes (examples/mpi/train_mpi.c, docs/distributed.md).
 *
 * The global batch of B rows is cut into S shards, fixed by --shards and
 * not by the number of ranks: shard s holds rows [s B / S, (s + 1) B / S)
 * and, for PCD, chains [s C / S, (s + 1) C / S) of the C global chains
 * (for PT, chains of R replicas, R rows each, split whole).
 * Each shard is an estimator of its own whose EBM_ESTIMATOR_ROW_OFFSET and
 * EBM_ESTIMATOR_CHAIN_OFFSET are its first row and chain, and every shard
 * starts from the same generator state, so shard s draws exactly what its
 * rows draw in one call on the whole batch, whichever rank computes it.
 * Rank k computes shards [k S / P, (k + 1) S / P) of P ranks.
 *
 * The shards' gradients are summed in fixed point: each weighted gradient
 * n_s / B g_s is scaled by one power of two agreed by all ranks (from the
 * largest |n_s / B g_s| over all shards), rounded to int64 and summed as
 * integers, which is exact and so independent of the order of the sum.
 * The gradient every rank applies is therefore the same bits for any
 * number of ranks from 1 to S, and so are the parameters, the chains and
 * the meeting times of every later step.
 *
 * The transport is the caller's (dist_comm: MPI in train_mpi.c), so that
 * this code and libebm never link MPI.
 */
#ifndef EXAMPLES_COMMON_DIST_H
#define EXAMPLES_COMMON_DIST_H

#include <ebm.h>
#include <stddef.h>
#include <stdint.h>

/* The ranks of a run. Every rank calls the collectives in the same order;
 * each returns 0, or nonzero when the transport failed. */
typedef struct dist_comm {
    int rank, size;
    void *ctx;
    /* x[0..n) summed over the ranks, in place, on every rank */
    int (*sum_i64)(void *ctx, int64_t *x, int64_t n);
    /* x[0..n) maximised over the ranks, in place, on every rank */
    int (*max_f64)(void *ctx, double *x, int64_t n);
    /* root's bytes[0..n) to every rank */
    int (*bcast)(void *ctx, void *bytes, int64_t n, int root);
} dist_comm;

/* The statistics of a step that dist_gradient combines over the shards. */
enum { DIST_STATS = EBM_ESTIMATOR_STAT_COUNT };

typedef struct dist_shards {
    const dist_comm *comm;
    int64_t n_shards, lo, hi;  /* this rank computes shards [lo, hi) */
    int64_t batch, chains;     /* global rows and PCD / PT chains (0: none) */
    int64_t replicas;          /* rows per chain: PT's R, else 1 */
    int64_t n_params, width;
    ebm_estimator_t **e;       /* [hi - lo], the caller's, configured alike */
    float *g;                  /* a shard's gradient */
    int64_t *q;                /* the fixed-point sum, then the statistics */
    double *chain_buf;         /* the gathered chains (chains x width) */
    double stat[DIST_STATS];   /* the last step's statistics, all shards */
    /* PT: the last step's exchanges per adjacent pair, all shards [R - 1] */
    int64_t *swap_accepted, *swap_proposed;
    /* Stragglers, summed over the steps: the compute seconds of the
     * slowest and of the fastest rank, and the coupled steps (the sum of
     * the meeting times of both phases over a rank's rows) of the busiest
     * rank and of all ranks. */
    int64_t steps;
    double slowest_s, fastest_s, busiest_taus, all_taus;
} dist_shards;

/* Shard s's first row and its number of rows (first chain and chains with
 * total = C). */
int64_t dist_first(int64_t total, int64_t shards, int64_t s);
int64_t dist_count(int64_t total, int64_t shards, int64_t s);

/* Lay out n_shards shards of batch rows (and chains, 0 for none) over the
 * comm's ranks; the caller then creates d->e[0 .. hi - lo) and gives each
 * dist_offsets. Returns 0, or -1 with a message in err (too few shards for
 * the ranks or rows, out of memory). */
int dist_init(dist_shards *d, const dist_comm *comm, int64_t n_shards, int64_t batch,
              int64_t chains, int64_t replicas, int64_t n_params, int64_t width, char *err,
              size_t errsize);
/* Give shard lo + i's estimator its offsets (and its chain count). */
int dist_configure(const dist_shards *d, int64_t i, ebm_estimator_t *e);
void dist_free(dist_shards *d);

/* One step: every shard of this rank from the same generator state (rng
 * ends where one gradient call leaves it), the sum over all shards into
 * grad (n_params floats, the same bits on every rank), the statistics into
 * d->stat. data: the global batch (batch rows, stride ldd). failed: this
 * rank failed before the step (its message in err): it computes nothing,
 * and every rank returns -1. Returns 0, or -1 on every rank when a rank
 * failed or a shard failed on any rank (err: the first failing rank's
 * message, with its rank and shard) or the transport failed. */
int dist_gradient(dist_shards *d, ebm_rng_t *rng, const float *data, int64_t ldd, float *grad,
                  int failed, char *err, size_t errsize);

/* Agree on a failure: each rank says whether it failed (with its message
 * in err); returns -1 if none did, else the lowest failing rank, whose
 * message is then in err on every rank. */
int dist_agree(const dist_comm *comm, int failed, char *err, size_t errsize);

/* PCD, PT: the global chains from all ranks' shards into `all` (an
 * estimator of d->chains chains, on every rank; collective), or back from `all` into
 * the shards (after a resume). Nothing to do before the first step. */
int dist_gather_chains(dist_shards *d, ebm_estimator_t *all, char *err, size_t errsize);
int dist_scatter_chains(dist_shards *d, const ebm_estimator_t *all, char *err, size_t errsize);

#endif
