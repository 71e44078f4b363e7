/* The gradient call (ebm_estimator_gradient): it checks its arguments,
 * lays out its scratch, runs the estimate (estimate.c) and commits the
 * result (the gradient, statistics, persistent chains, PT's swap tally)
 * only if every part succeeded; a failed call puts back what it moved. */
#include "conditional.h"
#include "error.h"
#include "estimator.h"
#include "kernels.h"
#include "model.h"
#include "rng.h"
#include "sampler.h"
#include "scratch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_STATS EBM_ESTIMATOR_STAT_COUNT
#define N_SAMPLERS EBM__ESTIMATOR_SAMPLERS

/* A gradient call's scratch: the chains x and y of the phases, the next
 * persistent chains (rows = max(n, chains) each, of the state width), one
 * row of draws, and with offsets the stream rows of the n data rows and
 * of the chains. */
typedef struct gradient_work {
    int64_t rows, width, n, chains, row_offset, chain_offset;
    float *x, *y, *next, *draw;
    int64_t *row_ids, *chain_ids;
} gradient_work;

static void gradient_layout(ebm__arena *arena, void *ctx)
{
    gradient_work *wk = ctx;
    const size_t block = (size_t)(wk->rows * wk->width);
    wk->x = ebm__arena_take(arena, block, sizeof(float));
    wk->y = ebm__arena_take(arena, block, sizeof(float));
    wk->next = ebm__arena_take(arena, block, sizeof(float));
    wk->draw = ebm__arena_take(arena, (size_t)wk->width, sizeof(float));
    /* Without an offset, no numbers: NULL (ebm__arena_take gives a piece
     * even for 0 elements). */
    wk->row_ids = wk->row_offset != 0 ? ebm__arena_take(arena, (size_t)wk->n, sizeof(int64_t))
                                      : NULL;
    wk->chain_ids = wk->chain_offset != 0
                        ? ebm__arena_take(arena, (size_t)wk->chains, sizeof(int64_t))
                        : NULL;
}

/* ids[r] = row_offset + r for r < n (the stream rows), if ids is not NULL. */
static const int64_t *number_rows(int64_t *ids, int64_t row_offset, int64_t n)
{
    for (int64_t r = 0; ids != NULL && r < n; r++) {
        ids[r] = row_offset + r;
    }
    return ids;
}

/* The arguments of a gradient call and the estimator's state for it,
 * checked before anything moves. */
static int check_gradient_call(const ebm_estimator_t *e, ebm__msg *msg, const ebm_rng_t *rng,
                               int64_t n, const float *data, int64_t ldd, const float *grad)
{
    const ebm_model_t *m = e->m;
    int rc = rng == NULL ? ebm__fail(msg, EBM_ENULL, "rng is NULL") : EBM_OK;
    if (rc == EBM_OK && grad == NULL) {
        rc = ebm__fail(msg, EBM_ENULL, "grad is NULL");
    }
    if (rc == EBM_OK && n < 1) {
        rc = ebm__fail(msg, EBM_ESHAPE, "n is %lld; a gradient needs at least one data row",
                       (long long)n);
    }
    if (rc == EBM_OK) {
        rc = ebm__check_layer_values(m, msg, "data", 0, n, data, ldd);
    }
    if (rc == EBM_OK && e->kind == EBM_ESTIMATOR_GRBM_CD && e->burn_in >= e->k) {
        rc = ebm__fail(msg, EBM_EVALUE,
                       "EBM_ESTIMATOR_BURN_IN is %lld but EBM_ESTIMATOR_K is %lld: no step would "
                       "be used; the burn-in must be smaller than K",
                       (long long)e->burn_in, (long long)e->k);
    }
    if (rc == EBM_OK && e->kind == EBM_ESTIMATOR_PT &&
        ebm__sampler_ladder_size(e->tempering) == 0) {
        rc = ebm__fail(msg, EBM_EVALUE,
                       "EBM_ESTIMATOR_PT has no ladder: call ebm_estimator_set_ladder first");
    }
    if (rc == EBM_OK && e->kind == EBM_ESTIMATOR_GRBM_CD &&
        e->sampler_kind != EBM_SAMPLER_GIBBS) {
        rc = ebm__sampler_check_options(
            e->sampler_kind == EBM_SAMPLER_LANGEVIN ? e->langevin : e->gibbs_langevin, msg);
    }
    return rc;
}

/* PCD and PT keep their chains between calls. */
static int is_persistent(const ebm_estimator_t *e)
{
    return e->kind == EBM_ESTIMATOR_PCD || e->kind == EBM_ESTIMATOR_PT;
}

/* The rows of the chains of the estimator's own (PCD and PT: persistent,
 * new ones from uniform noise the first time; GRBM_CD: new from N(0, I)
 * each call; 0 for the other kinds): EBM_ESTIMATOR_CHAINS, else n, of R
 * rows each for PT, or as many as the persistent chains have. */
static int64_t chain_rows(const ebm_estimator_t *e, int64_t n)
{
    const int own_chains = is_persistent(e) || e->kind == EBM_ESTIMATOR_GRBM_CD;
    const int64_t replicas =
        e->kind == EBM_ESTIMATOR_PT ? ebm__sampler_ladder_size(e->tempering) : 1;
    int64_t n_chains = own_chains ? (e->chains_opt > 0 ? e->chains_opt : n) : 0;
    n_chains *= replicas;
    if (is_persistent(e) && e->n_chains > 0) {
        n_chains = e->n_chains;
    }
    return n_chains;
}

/* EBM_ESHAPE if the data rows or the chains would reach past stream row
 * 2^32 - 1 from their offsets. */
static int check_stream_rows(const ebm_estimator_t *e, ebm__msg *msg, int64_t n, int64_t n_chains)
{
    if (n <= (int64_t)UINT32_MAX + 1 - e->row_offset &&
        n_chains <= (int64_t)UINT32_MAX + 1 - e->chain_offset) {
        return EBM_OK;
    }
    const int rows = n > (int64_t)UINT32_MAX + 1 - e->row_offset;
    return ebm__fail(msg, EBM_ESHAPE, "%lld %s from %s %lld would reach past stream row 2^32 - 1",
                     (long long)(rows ? n : n_chains), rows ? "data rows" : "chains",
                     rows ? "EBM_ESTIMATOR_ROW_OFFSET" : "EBM_ESTIMATOR_CHAIN_OFFSET",
                     (long long)(rows ? e->row_offset : e->chain_offset));
}

/* What a failed call puts back: the statistics and the samplers' step
 * counters. */
typedef struct saved_state {
    double stat[N_STATS];
    ebm_sampler_t *samplers[N_SAMPLERS];
    int64_t iteration[N_SAMPLERS];
    int n_samplers;
} saved_state;

static void save_state(ebm_estimator_t *e, saved_state *sv)
{
    memcpy(sv->stat, e->stat, sizeof sv->stat);
    sv->n_samplers = ebm__estimator_samplers(e, sv->samplers);
    for (int i = 0; i < sv->n_samplers; i++) {
        sv->iteration[i] = (int64_t)ebm_sampler_stat(sv->samplers[i], EBM_STAT_ITERATION);
    }
}

static void restore_state(ebm_estimator_t *e, const saved_state *sv)
{
    memcpy(e->stat, sv->stat, sizeof sv->stat);
    for (int i = 0; i < sv->n_samplers; i++) {
        ebm_sampler_set_int(sv->samplers[i], EBM_SAMPLER_ITERATION, sv->iteration[i]);
    }
}

/* The estimate into e->g and e->stat (estimate.c): the phases, each from
 * a child generator of its own (so that row r's draws depend only on rng
 * and r, never on how long other rows' chains ran in an earlier phase),
 * then the telescoping sums, one energy_grad per f term over all their
 * rows. next: the persistent chains, started here the first time (from
 * the negative phase's generator); PT's swaps are one tally of the
 * tempering sampler. */
static int estimate(ebm_estimator_t *e, ebm__msg *msg, const ebm_rng_t *rng, int64_t n,
                    const float *data, int64_t ldd, const gradient_work *wk)
{
    const ebm_model_t *m = e->m;
    ebm_rng_t pos_rng, neg_rng;
    ebm__rng_child(rng, 0, &pos_rng);
    ebm__rng_child(rng, 1, &neg_rng);
    if (is_persistent(e) && e->n_chains == wk->chains) {
        memcpy(wk->next, e->chains, (size_t)(wk->chains * m->width) * sizeof *wk->next);
    } else if (is_persistent(e)) {
        ebm__stream st = ebm__rng_take_stream(&neg_rng);
        ebm__random_units(m, &st, e->chain_ids, wk->chains, wk->next, m->width,
                          ebm__all_layers(m), NULL, 0, wk->draw);
    }
    memset(e->g, 0, (size_t)m->n_params * sizeof *e->g);
    memset(e->stat, 0, sizeof e->stat);
    e->accept_sum = e->accept_rows = e->searches = 0.0;
    e->pos.rows = e->neg.rows = 0;
    if (e->kind == EBM_ESTIMATOR_PT) {
        ebm__sampler_tally_begin(e->tempering);
    }
    int rc = ebm__positive_phase(e, msg, &pos_rng, n, data, ldd, wk->x, wk->y, wk->draw);
    if (rc == EBM_OK) {
        rc = ebm__negative_phase(e, msg, &neg_rng, n, data, ldd, wk->x, wk->y, wk->draw,
                                 wk->next, wk->chains);
    }
    if (rc == EBM_OK) {
        rc = ebm__add_weighted_rows(e, msg, 1u, &e->pos);
    }
    if (rc == EBM_OK) {
        rc = ebm__add_weighted_rows(e, msg, 0, &e->neg);
    }
    return rc;
}

/* EBM_EVALUE at the first parameter whose estimate is not finite. */
static int check_finite(const ebm_estimator_t *e, ebm__msg *msg)
{
    const int64_t np = e->m->n_params;
    if (ebm__kern()->values_ok(np, e->g, EBM_UNITS_GAUSSIAN)) {
        return EBM_OK;
    }
    for (int64_t i = 0; i < np; i++) {
        if (!isfinite(e->g[i])) {
            return ebm__fail(msg, EBM_EVALUE,
                             "the gradient estimate is not finite at parameter %lld (%g); grad, "
                             "chains and rng are unchanged",
                             (long long)i, (double)e->g[i]);
        }
    }
    return EBM_OK;
}

/* Room for n_chains persistent chains (the last step that can fail). */
static int fit_chains(ebm_estimator_t *e, ebm__msg *msg, int64_t n_chains)
{
    if (e->n_chains == n_chains) {
        return EBM_OK;
    }
    float *c = realloc(e->chains, (size_t)(n_chains * e->m->width) * sizeof *c);
    if (c == NULL) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for the chains");
    }
    e->chains = c;
    e->n_chains = n_chains;
    return EBM_OK;
}

/* A call that succeeded: its chains, statistics and gradient. */
static void commit(ebm_estimator_t *e, const gradient_work *wk, float *grad)
{
    if (is_persistent(e)) {
        memcpy(e->chains, wk->next, (size_t)(wk->chains * wk->width) * sizeof *wk->next);
    }
    e->stat[EBM_ESTIMATOR_STAT_SWAP_RATE] = NAN;
    if (e->kind == EBM_ESTIMATOR_PT) {
        ebm__sampler_tally_commit(e->tempering);
        e->stat[EBM_ESTIMATOR_STAT_SWAP_RATE] = ebm_sampler_stat(e->tempering, EBM_STAT_SWAP_RATE);
    }
    if (e->searches > 0) {
        e->stat[EBM_ESTIMATOR_STAT_SWEEPS_MEAN] /= e->searches;
    }
    e->stat[EBM_ESTIMATOR_STAT_ACCEPT_RATE] =
        e->accept_rows > 0 ? e->accept_sum / e->accept_rows : 1.0;
    memcpy(grad, e->g, (size_t)e->m->n_params * sizeof *grad);
}

int ebm_estimator_gradient(ebm_estimator_t *e, ebm_rng_t *rng, int64_t n, const float *data,
                           int64_t ldd, float *grad)
{
    if (e == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = check_gradient_call(e, &msg, rng, n, data, ldd, grad);
    const int64_t n_chains = rc == EBM_OK ? chain_rows(e, n) : 0;
    if (rc == EBM_OK) {
        rc = check_stream_rows(e, &msg, n, n_chains);
    }
    gradient_work wk = {.rows = n > n_chains ? n : n_chains, .width = e->m->width, .n = n,
                        .chains = n_chains, .row_offset = e->row_offset,
                        .chain_offset = e->chain_offset};
    if (rc == EBM_OK && ebm__arena_layout(&e->scratch, gradient_layout, &wk) != 0) {
        rc = ebm__fail(&msg, EBM_ENOMEM, "out of memory for %lld rows", (long long)wk.rows);
    }
    if (rc != EBM_OK) {
        return ebm__set_message(e->errmsg, rc, &msg);
    }
    e->row_ids = number_rows(wk.row_ids, e->row_offset, n);
    e->chain_ids = number_rows(wk.chain_ids, e->chain_offset, n_chains);
    saved_state saved;
    save_state(e, &saved);
    rc = estimate(e, &msg, rng, n, data, ldd, &wk);
    e->row_ids = e->chain_ids = NULL;
    if (rc == EBM_OK) {
        rc = check_finite(e, &msg);
    }
    if (rc == EBM_OK && is_persistent(e)) {
        rc = fit_chains(e, &msg, n_chains); /* nothing fails after this */
    }
    if (rc != EBM_OK) {
        restore_state(e, &saved);
        return ebm__set_message(e->errmsg, rc, &msg);
    }
    commit(e, &wk, grad);
    (void)ebm__rng_take_stream(rng); /* the next call derives other children */
    return EBM_OK;
}
