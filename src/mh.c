/* The Metropolis-Hastings kernel (mh.h). */
#include "conditional.h"
#include "energy.h"
#include "error.h"
#include "mh.h"
#include "model.h"
#include "rng.h"
#include "scratch.h"

#include <math.h>
#include <string.h>

/* Energies of a chunk's rows: float GEMMs when every layer is binary or
 * spin (t != NULL), else the double path. */
static void mh_energies(const ebm_model_t *m, int64_t rows, const float *x, int64_t ldx, double *e,
                        float *t, double *work)
{
    if (t != NULL) {
        ebm__energy_fast(m, rows, x, ldx, e, t);
    } else {
        ebm__free_energy_chunk(m, 0, rows, x, ldx, e, work);
    }
}

/* log u < E(a) - E(b), decided from the float energies when they are
 * further than the sum of their error bounds from the threshold (then the
 * exact and the double-precision decisions agree with it), else recomputed
 * in double for this row, as the plain path does. A bound < 0: the
 * energies are the double path's. */
static int mh_accepts(const ebm_model_t *m, int64_t *rechecks, double log_u, const float *a, const float *b,
                      double e_a, double e_b, double bound_a, double bound_b, double *work)
{
    double margin = e_a - e_b - log_u;
    if (bound_a < 0.0 || fabs(margin) > bound_a + bound_b) {
        return log_u < e_a - e_b;
    }
    (*rechecks)++;
    double ed[2];
    ebm__free_energy_chunk(m, 0, 1, a, 0, &ed[0], work);
    ebm__free_energy_chunk(m, 0, 1, b, 0, &ed[1], work);
    return log_u < ed[0] - ed[1];
}

/* A chunk's scratch: proposals of x and y, one row of uniform draws, the
 * float-GEMM scratch of the fast energies, and energies in double. */
typedef struct mh_work {
    const ebm_model_t *m;
    int64_t chunk;
    int fast;
    float *xp, *yp, *draw, *t;
    double *e_x, *e_y, *e_p, *e_yp, *work;
} mh_work;

static void mh_layout(ebm__arena *arena, void *ctx)
{
    mh_work *wk = ctx;
    const int64_t chunk = wk->chunk, w = wk->m->width;
    wk->xp = ebm__arena_take(arena, (size_t)(chunk * w), sizeof(float));
    wk->yp = ebm__arena_take(arena, (size_t)(chunk * w), sizeof(float));
    wk->draw = ebm__arena_take(arena, (size_t)w, sizeof(float));
    wk->t = wk->fast ? ebm__arena_take(arena, (size_t)(chunk * wk->m->max_size), sizeof(float)) : NULL;
    wk->e_x = ebm__arena_take(arena, (size_t)chunk, sizeof(double));
    wk->e_y = ebm__arena_take(arena, (size_t)chunk, sizeof(double));
    wk->e_p = ebm__arena_take(arena, (size_t)chunk, sizeof(double));
    wk->e_yp = ebm__arena_take(arena, (size_t)chunk, sizeof(double));
    wk->work = ebm__arena_take(arena, (size_t)ebm__free_energy_scratch(wk->m, chunk), sizeof(double));
}

/*
 * The MH kernel with a uniform independent proposal (Taniguchi eq. 14), for
 * one chain (y NULL) or two coupled by a common proposal and a common
 * uniform (Taniguchi Algs. 3 and 4): x accepts iff log u < E(x) - E(x'), y
 * iff log u < E(y) - E(x'). Energies in double, or (binary and spin
 * models) from float GEMMs with a certified error bound and the double
 * energies where the bound leaves a decision open: the same decisions
 * either way. Rows in chunks; stream rows are the caller's row numbers, so
 * chunking changes nothing.
 */
static int mh_run(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg, ebm_rng_t *rng,
                  const int64_t *ids, int64_t n, float *x, int64_t ldx, float *y, int64_t ldy,
                  uint8_t *met)
{
    const ebm_model_t *m = k->m;
    const int64_t w = m->width, chunk = n < EBM__CHUNK ? n : EBM__CHUNK;
    const int fast = !k->settings->plain_energies && ebm__energy_fast_ok(m);
    /* E(x) from the input of layer 1 that the caller's Gibbs step left */
    const float *entry = fast && m->n_layers <= 3 ? k->entry_input : NULL;
    mh_work wk = {.m = m, .chunk = chunk, .fast = fast};
    if (ebm__arena_layout(k->scratch, mh_layout, &wk) != 0) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for MH scratch");
    }
    double *e_x = wk.e_x, *e_y = wk.e_y, *e_p = wk.e_p, *e_yp = wk.e_yp, *work = wk.work;
    float *xp = wk.xp, *yp = wk.yp, *draw = wk.draw, *t = wk.t;
    double bound = -1.0, bound_input = -1.0;
    if (fast) {
        ebm__energy_bounds(m, &bound, entry != NULL ? &bound_input : NULL);
    }
    const double bound_x = entry != NULL ? bound_input : bound;
    ebm__stream streams[2];
    ebm__rng_take_streams(rng, 2, streams); /* proposal, acceptance */
    uint32_t layers = ebm__unclamped_layers(m, k->settings->clamp_layers, 0) |
                      ebm__unclamped_layers(m, k->settings->clamp_layers, 1);
    int64_t accepted = 0, decisions = 0, n_met = 0, rechecks = 0;
    for (int64_t r0 = 0; r0 < n; r0 += chunk) {
        int64_t rows = n - r0 < chunk ? n - r0 : chunk;
        float *xc = x + r0 * ldx, *yc = y == NULL ? NULL : y + r0 * ldy;
        for (int64_t r = 0; r < rows; r++) {
            int64_t id = ebm__row_id(ids, r0 + r);
            memcpy(xp + r * w, xc + r * ldx, (size_t)w * sizeof *xp);
            ebm__random_units(m, &streams[0], &id, 1, xp + r * w, w, layers, NULL, 0, draw);
        }
        if (entry != NULL) {
            ebm__energy_from_input(m, rows, xc, ldx, entry + r0 * m->size[1], e_x);
        } else {
            mh_energies(m, rows, xc, ldx, e_x, t, work);
        }
        mh_energies(m, rows, xp, w, e_p, t, work);
        if (yc != NULL) {
            /* y's proposal: the common free units, y's own clamped units (the
             * same as x's proposal when the clamps agree, as in UCD-LMI). */
            int clamps_differ = 0;
            for (int64_t r = 0; r < rows; r++) {
                float *q = yp + r * w;
                memcpy(q, xp + r * w, (size_t)w * sizeof *q);
                for (int64_t l = 0; l < m->n_layers; l++) {
                    if (!(layers >> l & 1u)) {
                        memcpy(q + m->column[l], yc + r * ldy + m->column[l],
                               (size_t)m->size[l] * sizeof *q);
                    }
                }
                clamps_differ |= !ebm__rows_equal(q, xp + r * w, w);
            }
            mh_energies(m, rows, yc, ldy, e_y, t, work);
            if (clamps_differ) {
                mh_energies(m, rows, yp, w, e_yp, t, work);
            } else {
                memcpy(e_yp, e_p, (size_t)rows * sizeof *e_yp);
            }
        }
        for (int64_t r = 0; r < rows; r++) {
            float u;
            ebm__stream_uniform(&streams[1], ebm__row_id(ids, r0 + r), 0, 1, &u);
            double log_u = log((double)u); /* -inf for u = 0: always accepts */
            float *xr = xc + r * ldx, *yr = yc == NULL ? NULL : yc + r * ldy;
            int together = yr != NULL && ebm__rows_equal(xr, yr, w);
            if (mh_accepts(m, &rechecks, log_u, xr, xp + r * w, e_x[r], e_p[r], bound_x, bound, work)) {
                memcpy(xr, xp + r * w, (size_t)w * sizeof *xr);
                accepted++;
            }
            decisions++;
            if (yr == NULL) {
                continue;
            }
            if (together) {
                /* Met rows move together and stay equal. */
                memcpy(yr, xr, (size_t)w * sizeof *yr);
            } else {
                if (mh_accepts(m, &rechecks, log_u, yr, yp + r * w, e_y[r], e_yp[r], bound, bound, work)) {
                    memcpy(yr, yp + r * w, (size_t)w * sizeof *yr);
                    accepted++;
                }
                decisions++;
            }
            int equal = ebm__rows_equal(xr, yr, w);
            n_met += equal;
            if (met != NULL) {
                met[r0 + r] = (uint8_t)equal;
            }
        }
    }
    out->accept_rate = decisions > 0 ? (double)accepted / (double)decisions : 1.0;
    out->accepted = accepted;
    out->energy_rechecks = rechecks;
    if (y != NULL) {
        out->met_fraction = n > 0 ? (double)n_met / (double)n : 1.0;
    }
    return EBM_OK;
}

int ebm__mh_step(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg, ebm_rng_t *rng,
                 const int64_t *ids, int64_t n, float *x, int64_t ldx)
{
    return mh_run(k, out, msg, rng, ids, n, x, ldx, NULL, 0, NULL);
}

int ebm__coupled_mh_step(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg,
                         ebm_rng_t *rng, const int64_t *ids, int64_t n, float *x, int64_t ldx,
                         float *y, int64_t ldy, uint8_t *met)
{
    return mh_run(k, out, msg, rng, ids, n, x, ldx, y, ldy, met);
}
