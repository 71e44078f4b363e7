/* Data-parallel gradients independent of the number of ranks (dist.h). */
#include "dist.h"

#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t dist_first(int64_t total, int64_t shards, int64_t s)
{
    return s * total / shards;
}

int64_t dist_count(int64_t total, int64_t shards, int64_t s)
{
    return dist_first(total, shards, s + 1) - dist_first(total, shards, s);
}

int dist_init(dist_shards *d, const dist_comm *comm, int64_t n_shards, int64_t batch,
              int64_t chains, int64_t replicas, int64_t n_params, int64_t width, char *err,
              size_t errsize)
{
    memset(d, 0, sizeof *d);
    if (n_shards < comm->size || n_shards > batch || (chains > 0 && n_shards > chains)) {
        char also[64] = "";
        if (chains > 0) {
            snprintf(also, sizeof also, " and the chains (%lld)", (long long)chains);
        }
        snprintf(err, errsize,
                 "--shards %lld must be at least the number of ranks (%d) and at most the "
                 "batch (%lld)%s",
                 (long long)n_shards, comm->size, (long long)batch, also);
        return -1;
    }
    /* A PCD shard averages its negative phase over its own chains: the
     * shards' weights n_s / B give the whole batch's gradient only if each
     * holds the same share of the chains as of the rows. */
    for (int64_t s = 0; chains > 0 && s < n_shards; s++) {
        if (dist_count(chains, n_shards, s) * batch != dist_count(batch, n_shards, s) * chains) {
            snprintf(err, errsize,
                     "--chains %lld and --batch %lld do not split alike into %lld shards (shard "
                     "%lld: %lld chains for %lld rows): give as many chains as rows, or make both "
                     "multiples of --shards",
                     (long long)chains, (long long)batch, (long long)n_shards, (long long)s,
                     (long long)dist_count(chains, n_shards, s),
                     (long long)dist_count(batch, n_shards, s));
            return -1;
        }
    }
    d->comm = comm;
    d->n_shards = n_shards;
    d->lo = dist_first(n_shards, comm->size, comm->rank);
    d->hi = dist_first(n_shards, comm->size, comm->rank + 1);
    d->batch = batch;
    d->chains = chains;
    d->replicas = replicas;
    d->n_params = n_params;
    d->width = width;
    d->e = calloc((size_t)(d->hi - d->lo), sizeof *d->e);
    d->g = malloc((size_t)((d->hi - d->lo) * n_params) * sizeof *d->g);
    d->q = malloc((size_t)(n_params + DIST_STATS + 2 * replicas) * sizeof *d->q);
    d->chain_buf = malloc((size_t)(chains > 0 ? chains * replicas * width : 1) *
                          sizeof *d->chain_buf);
    d->swap_accepted = calloc((size_t)replicas, sizeof *d->swap_accepted);
    d->swap_proposed = calloc((size_t)replicas, sizeof *d->swap_proposed);
    if (d->e == NULL || d->g == NULL || d->q == NULL || d->chain_buf == NULL ||
        d->swap_accepted == NULL || d->swap_proposed == NULL) {
        dist_free(d);
        snprintf(err, errsize, "out of memory for %lld shards", (long long)n_shards);
        return -1;
    }
    return 0;
}

int dist_configure(const dist_shards *d, int64_t i, ebm_estimator_t *e)
{
    const int64_t s = d->lo + i;
    int rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_ROW_OFFSET,
                                   dist_first(d->batch, d->n_shards, s));
    if (rc == EBM_OK && d->chains > 0) { /* PT: the offset counts rows */
        rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_CHAIN_OFFSET,
                                   dist_first(d->chains, d->n_shards, s) * d->replicas);
        if (rc == EBM_OK) {
            rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_CHAINS,
                                       dist_count(d->chains, d->n_shards, s));
        }
    }
    return rc;
}

void dist_free(dist_shards *d)
{
    if (d->e != NULL) {
        for (int64_t i = 0; i < d->hi - d->lo; i++) {
            ebm_estimator_destroy(d->e[i]);
        }
    }
    free(d->e);
    free(d->g);
    free(d->q);
    free(d->chain_buf);
    free(d->swap_accepted);
    free(d->swap_proposed);
    memset(d, 0, sizeof *d);
}

int dist_agree(const dist_comm *comm, int failed, char *err, size_t errsize)
{
    double who = failed ? (double)(comm->size - comm->rank) : 0.0;
    if (comm->max_f64(comm->ctx, &who, 1) != 0) {
        snprintf(err, errsize, "the transport failed while the ranks agreed on an error");
        return comm->rank;
    }
    if (who == 0.0) {
        return -1;
    }
    const int root = comm->size - (int)who;
    if (comm->bcast(comm->ctx, err, (int64_t)errsize, root) != 0) {
        snprintf(err, errsize, "rank %d failed, and the transport failed too", root);
    }
    err[errsize - 1] = '\0';
    return root;
}

/* How the shards' statistics combine, all exactly: a mean over rows of an
 * integer (n_s times it is the integer sum), a count, a mean of fractions
 * (weighted by n_s, in fixed point), a maximum. */
enum { FRACTION_BITS = 30 };
static const int MEANS[] = {EBM_ESTIMATOR_STAT_TAU_MEAN, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN};
static const int COUNTS[] = {EBM_ESTIMATOR_STAT_CAPPED, EBM_ESTIMATOR_STAT_SEARCH_CAPPED,
                             EBM_ESTIMATOR_STAT_MEAN_FIELD_MISSED,
                             EBM_ESTIMATOR_STAT_MH_ACCEPTED};
static const int WEIGHTED[] = {EBM_ESTIMATOR_STAT_SWEEPS_MEAN, EBM_ESTIMATOR_STAT_ACCEPT_RATE};
/* PT's swap rate is the sum of the exchanges over that of the proposals,
 * pair by pair (d->q past the statistics). */
static const int MAXED[] = {EBM_ESTIMATOR_STAT_TAU_MAX, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX};
enum { N_MEANS = 2, N_COUNTS = 4, N_WEIGHTED = 2, N_MAXED = 2 };

int dist_gradient(dist_shards *d, ebm_rng_t *rng, const float *data, int64_t ldd, float *grad,
                  int failed, char *err, size_t errsize)
{
    const dist_comm *cm = d->comm;
    const int64_t np = d->n_params, B = d->batch, S = d->n_shards;
    uint64_t start[EBM_RNG_STATE_WORDS];
    ebm_rng_get_state(rng, start);
    /* Pass 1: each shard's gradient, and the largest term. */
    double top[1 + N_MAXED] = {0.0};
    if (!failed) {
        err[0] = '\0';
    }
    const int64_t pairs = d->replicas - 1;
    memset(d->q, 0, (size_t)(np + DIST_STATS + 2 * pairs) * sizeof *d->q);
    const int64_t mine = d->hi - d->lo;
    int64_t *tail = d->q + np;
    const double t0 = cli_now();
    double taus = 0.0;
    for (int64_t i = 0; i < mine && !failed; i++) {
        const int64_t s = d->lo + i, n = dist_count(B, S, s);
        float *g = d->g + i * np;
        ebm_rng_set_state(rng, start);
        int rc = ebm_estimator_gradient(d->e[i], rng, n, data + dist_first(B, S, s) * ldd, ldd, g);
        if (rc != EBM_OK) {
            snprintf(err, errsize, "rank %d, shard %lld (rows %lld to %lld): %s", cm->rank,
                     (long long)s, (long long)dist_first(B, S, s),
                     (long long)(dist_first(B, S, s) + n - 1), ebm_estimator_errmsg(d->e[i]));
            failed = 1;
            break;
        }
        const double w = (double)n / (double)B;
        for (int64_t j = 0; j < np; j++) {
            const double t = fabs(w * (double)g[j]);
            top[0] = t > top[0] ? t : top[0];
        }
        for (int k = 0; k < N_MEANS; k++) {
            tail[k] += llround((double)n * ebm_estimator_stat(d->e[i], MEANS[k]));
        }
        for (int k = 0; k < N_COUNTS; k++) {
            tail[N_MEANS + k] += llround(ebm_estimator_stat(d->e[i], COUNTS[k]));
        }
        for (int k = 0; k < N_WEIGHTED; k++) {
            tail[N_MEANS + N_COUNTS + k] +=
                llround(ldexp((double)n * ebm_estimator_stat(d->e[i], WEIGHTED[k]), FRACTION_BITS));
        }
        for (int k = 0; k < N_MAXED; k++) {
            const double v = ebm_estimator_stat(d->e[i], MAXED[k]);
            top[1 + k] = v > top[1 + k] ? v : top[1 + k];
        }
        int64_t *swaps = d->q + np + DIST_STATS;
        if (pairs > 0 && ebm_estimator_swap_counts(d->e[i], pairs, d->swap_accepted,
                                                   d->swap_proposed) == EBM_OK) {
            for (int64_t k = 0; k < pairs; k++) {
                swaps[k] += d->swap_accepted[k];
                swaps[pairs + k] += d->swap_proposed[k];
            }
        }
        taus += (double)n * (ebm_estimator_stat(d->e[i], EBM_ESTIMATOR_STAT_TAU_MEAN) +
                             ebm_estimator_stat(d->e[i], EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN));
    }
    const double compute = cli_now() - t0;
    if (dist_agree(cm, failed, err, errsize) >= 0) {
        return -1;
    }
    double spread[3] = {compute, -compute, taus};
    if (cm->max_f64(cm->ctx, top, 1 + N_MAXED) != 0 || cm->max_f64(cm->ctx, spread, 3) != 0) {
        snprintf(err, errsize, "rank %d: the transport failed", cm->rank);
        return -1;
    }
    /* Pass 2: every term scaled by 2^e with |term| 2^e < 2^62 / S, so that
     * the sum of the S shards' terms fits an int64. */
    int log2_s = 0;
    while ((INT64_C(1) << log2_s) < S) {
        log2_s++;
    }
    const int e = top[0] > 0.0 ? 61 - ilogb(top[0]) - log2_s : 0;
    for (int64_t i = 0; i < mine; i++) {
        const int64_t n = dist_count(B, S, d->lo + i);
        const float *g = d->g + i * np;
        const double w = (double)n / (double)B;
        for (int64_t j = 0; j < np; j++) {
            d->q[j] += llrint(ldexp(w * (double)g[j], e));
        }
    }
    if (cm->sum_i64(cm->ctx, d->q, np + DIST_STATS + 2 * pairs) != 0) {
        snprintf(err, errsize, "rank %d: the transport failed", cm->rank);
        return -1;
    }
    for (int64_t j = 0; j < np; j++) {
        grad[j] = (float)ldexp((double)d->q[j], -e);
    }
    memset(d->stat, 0, sizeof d->stat);
    for (int k = 0; k < N_MEANS; k++) {
        d->stat[MEANS[k]] = (double)tail[k] / (double)B;
    }
    for (int k = 0; k < N_COUNTS; k++) {
        d->stat[COUNTS[k]] = (double)tail[N_MEANS + k];
    }
    for (int k = 0; k < N_WEIGHTED; k++) {
        d->stat[WEIGHTED[k]] =
            ldexp((double)tail[N_MEANS + N_COUNTS + k], -FRACTION_BITS) / (double)B;
    }
    for (int k = 0; k < N_MAXED; k++) {
        d->stat[MAXED[k]] = top[1 + k];
    }
    d->stat[EBM_ESTIMATOR_STAT_SWAP_RATE] = NAN;
    if (pairs > 0) {
        double accepted = 0.0, proposed = 0.0;
        for (int64_t k = 0; k < pairs; k++) {
            d->swap_accepted[k] = d->q[np + DIST_STATS + k];
            d->swap_proposed[k] = d->q[np + DIST_STATS + pairs + k];
            accepted += (double)d->swap_accepted[k];
            proposed += (double)d->swap_proposed[k];
        }
        d->stat[EBM_ESTIMATOR_STAT_SWAP_RATE] = proposed > 0 ? accepted / proposed : 1.0;
    }
    d->steps++;
    d->slowest_s += spread[0];
    d->fastest_s += -spread[1];
    d->busiest_taus += spread[2];
    d->all_taus += (double)B * (d->stat[EBM_ESTIMATOR_STAT_TAU_MEAN] +
                                d->stat[EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN]);
    return 0;
}

int dist_gather_chains(dist_shards *d, ebm_estimator_t *all, char *err, size_t errsize)
{
    const dist_comm *cm = d->comm;
    /* w: the floats of one chain (R rows of the state width, contiguous) */
    const int64_t R = d->replicas, w = d->width * R, C = d->chains;
    if (C == 0 || ebm_estimator_num_chains(d->e[0]) == 0) {
        return 0; /* no chains yet (every shard is alike) */
    }
    for (int64_t k = 0; k < C * w; k++) {
        d->chain_buf[k] = -INFINITY; /* the max over the ranks keeps the owner's value */
    }
    float *f = malloc((size_t)(C * w) * sizeof *f);
    int failed = f == NULL;
    for (int64_t i = 0; i < d->hi - d->lo && !failed; i++) {
        const int64_t s = d->lo + i, c0 = dist_first(C, d->n_shards, s);
        failed = ebm_estimator_get_chains(d->e[i], f + c0 * w, d->width) != EBM_OK;
        for (int64_t k = c0 * w; !failed && k < (c0 + dist_count(C, d->n_shards, s)) * w; k++) {
            d->chain_buf[k] = f[k];
        }
    }
    if (failed) {
        snprintf(err, errsize, "rank %d: cannot read its shards' chains", cm->rank);
    }
    if (dist_agree(cm, failed, err, errsize) >= 0) {
        free(f);
        return -1;
    }
    if (cm->max_f64(cm->ctx, d->chain_buf, C * w) != 0) {
        free(f);
        snprintf(err, errsize, "rank %d: the transport failed", cm->rank);
        return -1;
    }
    for (int64_t k = 0; k < C * w; k++) {
        f[k] = (float)d->chain_buf[k];
    }
    const int rc = ebm_estimator_set_chains(all, C * R, f, d->width);
    free(f);
    if (rc != EBM_OK) {
        snprintf(err, errsize, "the gathered chains: %s", ebm_estimator_errmsg(all));
        return -1;
    }
    return 0;
}

int dist_scatter_chains(dist_shards *d, const ebm_estimator_t *all, char *err, size_t errsize)
{
    const int64_t R = d->replicas, w = d->width * R, C = d->chains;
    if (C == 0 || ebm_estimator_num_chains(all) == 0) {
        return 0;
    }
    float *f = malloc((size_t)(C * w) * sizeof *f);
    if (f == NULL || ebm_estimator_get_chains(all, f, d->width) != EBM_OK) {
        free(f);
        snprintf(err, errsize, "cannot read the checkpoint's chains");
        return -1;
    }
    for (int64_t i = 0; i < d->hi - d->lo; i++) {
        const int64_t s = d->lo + i, c0 = dist_first(C, d->n_shards, s);
        if (ebm_estimator_set_chains(d->e[i], dist_count(C, d->n_shards, s) * R, f + c0 * w,
                                     d->width) != EBM_OK) {
            snprintf(err, errsize, "shard %lld's chains: %s", (long long)s,
                     ebm_estimator_errmsg(d->e[i]));
            free(f);
            return -1;
        }
    }
    free(f);
    return 0;
}
