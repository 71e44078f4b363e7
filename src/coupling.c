/* Coupled Gibbs steps: maximal couplings of two Gibbs transitions
 * (Qiu et al. 2020, Algs. 1, 3 and 4), generalised from (v, h) to the even
 * and odd blocks of layers, with the reflection-maximal coupling for a
 * Gaussian block.
 *
 * A sweep draws block B1 (the even free layers, or the odd ones if no even
 * layer is free) given the other block, then B2 given the new B1. The
 * transition density factorises as T(x'|x) = T1(x'_B1 | x_B2) T2(x'_B2 |
 * x'_B1), and T2 is the same for both chains once B1 agrees, so the ratio of
 * the two chains' transition densities at any x' is the ratio of their B1
 * conditionals (Qiu remark 1): coupling B1 maximally and drawing B2 so that
 * equal B1 gives equal B2 is a maximal coupling of the whole transitions.
 * MAXIMAL and CRN draw B2 from (common) random numbers; BLOCKWISE couples B2
 * maximally too, as a second half-step, given each chain's new B1.
 */
#include "conditional.h"
#include "coupling.h"
#include "energy.h"
#include "error.h"
#include "gibbs.h"
#include "kernels.h"
#include "model.h"
#include "numerics.h"
#include "rng.h"
#include "scratch.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Streams a coupled step takes up front, always the same number, so that row
 * r's draws depend on the generator and r only. */
enum {
    ST_FIRST = 0,                  /* x's first draw of B1 */
    ST_MEET = 1,                   /* the meeting uniform */
    ST_RESIDUAL = 2,               /* base of the residual tries */
    ST_B2 = 3,                     /* B2 layers: ST_B2 + l */
    ST_B2_Y = ST_B2 + EBM_MAX_LAYERS,        /* y's B2 under EBM_COUPLING_MAXIMAL */
    ST_TOGETHER = ST_B2_Y + EBM_MAX_LAYERS,  /* rows already met: one sweep */
    ST_COUNT = ST_TOGETHER + EBM_MAX_LAYERS,
    /* EBM_COUPLING_BLOCKWISE draws B2 as it draws B1, from streams that
     * MAXIMAL alone uses otherwise: */
    ST_B2_FIRST = ST_B2_Y,         /* x's first draw of B2 */
    ST_B2_MEET = ST_B2_Y + 1,      /* B2's meeting uniform */
    ST_B2_RESIDUAL = ST_B2_Y + 2   /* base of B2's residual tries */
};

/* Why a coupled sweep stopped. */
enum { FAIL_NONE = 0, FAIL_INPUT, FAIL_DRAW, FAIL_TRIES };

/* Work of one coupled step over the rows that have not met (na of them),
 * gathered into contiguous matrices of stride w. A maximal coupling of one
 * block's conditionals (`blk`: B1, then B2 under BLOCKWISE) works on the
 * fields from x_input to met. */
typedef struct couple {
    const ebm__kernel_in *k;
    const ebm_model_t *m;
    int64_t w;
    uint32_t b1, b2;   /* layers of the two blocks */
    uint32_t blk;      /* the block being coupled */
    int64_t na;
    const int64_t *id; /* stream row of each gathered row */
    float *x_rows, *y_rows; /* na x w states */
    float *x_input, *y_input; /* na x w: blk's inputs from x_rows and y_rows, at its columns */
    float *x_prob, *y_prob;   /* na x w: its discrete units' probabilities of the upper value */
    double *lz;        /* [na]: sum over blk's discrete units of LZ(a2) - LZ(a1) */
    float *tmp;        /* two rows of proposals per thread */
    int threads;       /* the threads tmp is sized for (ebm__for_rows) */
    float *u;          /* [na]: the meeting uniforms */
    double *log_u;     /* [2 na]: logs of the meeting or a try's acceptance uniforms */
    float *try_u, *try_accept; /* na x w and na x 2: a try's uniforms (proposals, acceptances) */
    int64_t *list;     /* [na]: rows that need tries */
    int64_t *lid;      /* [na]: their stream rows */
    int64_t *trying;   /* [na]: their chains still trying (1: x, 2: y) */
    int64_t *met;      /* [na]: 1 where blk met */
    int64_t tries_sum, tries_max, loops; /* residual loops: tries, longest, loops */
    int fail;          /* FAIL_*: why the sweep stopped */
    int64_t stuck;     /* the stream row that reached the try limit */
} couple;

/*
 * Per row, what the log-ratios of all its proposals share: the sum over
 * blk's discrete units of LZ(a2) - LZ(a1), LZ(a) the log partition sum of a
 * unit at input a (softplus(a) for 0/1 units, log(2 cosh a) for spins, so
 * that log p(x | a) = x a - LZ(a)), and the probabilities the draws compare
 * against (the same float expressions ebm__sample_from_input uses). Once per
 * step, so a try costs no transcendental function; the kernel
 * coupling_setup does one layer of all rows (vectorised, no libm).
 */
static void ratio_setup(couple *c)
{
    const ebm_model_t *m = c->m;
    memset(c->lz, 0, (size_t)c->na * sizeof *c->lz);
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (!(c->blk >> l & 1u) || ebm__is_gaussian(m, l)) {
            continue;
        }
        const int64_t off = m->column[l];
        if (ebm__is_potts(m, l)) {
            /* log p(z | a) = sum over sites of a(site, z) - lse(a_site); the
             * sites' probabilities as ebm__potts_draw makes them */
            const int64_t q = m->categories[l];
            for (int64_t r = 0; r < c->na; r++) {
                const int64_t o = r * c->w + off;
                for (int64_t i = 0; i < m->size[l]; i += q) {
                    c->lz[r] += ebm__site_lse(q, c->y_input + o + i) -
                                ebm__site_lse(q, c->x_input + o + i);
                    ebm__site_softmax(q, c->x_input + o + i, c->x_prob + o + i);
                    ebm__site_softmax(q, c->y_input + o + i, c->y_prob + o + i);
                }
            }
            continue;
        }
        ebm__kern()->coupling_setup(c->na, m->size[l], m->units[l] == EBM_UNITS_SPIN,
                                    c->x_input + off, c->y_input + off, c->w, c->x_prob + off, c->y_prob + off,
                                    c->lz);
    }
}

/* The uniforms of blk's discrete layers for n rows with stream rows id, at
 * the layers' columns of u (stride ldu). Each layer starts at its own
 * words. */
static void block_uniforms(const couple *c, const ebm__stream *st, int64_t n, const int64_t *id,
                           float *u, int64_t ldu)
{
    const ebm_model_t *m = c->m;
    for (int64_t l = 0; l < m->n_layers; l++) {
        if ((c->blk >> l & 1u) && !ebm__is_gaussian(m, l)) {
            ebm__stream_uniform_rows(st, n, id, (uint64_t)m->column[l], m->size[l],
                                     u + m->column[l], ldu);
        }
    }
}

/* Draw row r's blk into the row dst, from chain 1's conditional (chain 1)
 * or chain 2's, and return log p2(z) - log p1(z) of the draw z. Discrete
 * units compare the row u of block_uniforms with the precomputed
 * probabilities, exactly as ebm__sample_from_input would (u may be dst),
 * and add their linear terms (draw_ratio; the rest of the ratio is
 * -lz[r]); a Gaussian layer is drawn by ebm__sample_from_input and adds
 * ((z - a1)^2 - (z - a2)^2) / (2 s^2) per unit of variance s^2, computed
 * as (a2 - a1) ((z - a1) + (z - a2)) / (2 s^2) so that large values do
 * not cancel. */
static double draw(const couple *c, const ebm__stream *st, int64_t r, int chain, const float *u,
                   float *dst)
{
    const ebm_model_t *m = c->m;
    const float *a1 = c->x_input + r * c->w, *a2 = c->y_input + r * c->w;
    const float *p = (chain == 1 ? c->x_prob : c->y_prob) + r * c->w;
    double s = -c->lz[r];
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (!(c->blk >> l & 1u)) {
            continue;
        }
        const int64_t off = m->column[l], nl = m->size[l];
        float *z = dst + off;
        if (ebm__is_potts(m, l)) {
            const int64_t q = m->categories[l];
            for (int64_t i = 0; i < nl; i += q) {
                const int64_t k = ebm__site_pick(q, p + off + i, (double)u[off + i]);
                for (int64_t t = 0; t < q; t++) {
                    z[i + t] = t == k ? 1.0f : 0.0f;
                }
                s += (double)a2[off + i + k] - (double)a1[off + i + k];
            }
            continue;
        }
        if (!ebm__is_gaussian(m, l)) {
            const float lo = m->units[l] == EBM_UNITS_SPIN ? -1.0f : 0.0f;
            s += ebm__kern()->draw_ratio(nl, lo, u + off, p + off, a1 + off, a2 + off, z);
            continue;
        }
        ebm__sample_from_input(m, l, st, c->id + r, (uint64_t)off, 1,
                               (chain == 1 ? a1 : a2) + off, c->w, z, c->w);
        for (int64_t i = 0; i < nl; i++) {
            double d1 = (double)z[i] - a1[off + i], d2 = (double)z[i] - a2[off + i];
            s += 0.5 * (((double)a2[off + i] - a1[off + i]) * (d1 + d2)) * m->inv_var_d[i];
        }
    }
    return s;
}

/* 1 if every layer of blk is binary or spin, so that draw_pair can draw it. */
static int pairable(const couple *c)
{
    for (int64_t l = 0; l < c->m->n_layers; l++) {
        if ((c->blk >> l & 1u) && (ebm__is_potts(c->m, l) || ebm__is_gaussian(c->m, l))) {
            return 0;
        }
    }
    return 1;
}

/* draw(c, st, r, 1, u, z1) and draw(c, st, r, 2, u, z2) at once, into s[0]
 * and s[1] (the same bits), for a blk of binary and spin layers only
 * (pairable): a CRN try of a row whose two chains both still try. u is
 * neither z1 nor z2. */
static void draw_pair(const couple *c, int64_t r, const float *u, float *z1, float *z2,
                      double s[2])
{
    const ebm_model_t *m = c->m;
    const int64_t o = r * c->w;
    s[0] = s[1] = -c->lz[r];
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (!(c->blk >> l & 1u)) {
            continue;
        }
        const int64_t off = m->column[l];
        const float lo = m->units[l] == EBM_UNITS_SPIN ? -1.0f : 0.0f;
        double d[2];
        ebm__kern()->draw_ratio_pair(m->size[l], lo, u + off, c->x_prob + o + off,
                                     c->y_prob + o + off, c->x_input + o + off,
                                     c->y_input + o + off, z1 + off, z2 + off, d);
        s[0] += d[0];
        s[1] += d[1];
    }
}

/* The layers in mask of the row src into the row dst. */
static void copy_layers(const ebm_model_t *m, uint32_t mask, const float *src, float *dst)
{
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (mask >> l & 1u) {
            memcpy(dst + m->column[l], src + m->column[l], (size_t)m->size[l] * sizeof *dst);
        }
    }
}

/* One residual try of the rows list[begin..end) (residuals). */
typedef struct try_job {
    couple *c;
    const int64_t *list;
    int64_t *trying;
    const ebm__stream *proposal;
    int pair;
} try_job;

static void try_rows(void *ctx, int64_t begin, int64_t end, int thread)
{
    const try_job *t = ctx;
    couple *c = t->c;
    const int64_t w = c->w, *list = t->list;
    int64_t *trying = t->trying;
    const int pair = t->pair;
    for (int64_t i = begin; i < end; i++) {
        const int64_t r = list[i];
        const float *ui = c->try_u + i * w;
        const double *log_ua = c->log_u + 2 * i; /* -inf for 0: always accepts */
        float *tmp = c->tmp + 2 * (int64_t)thread * w;
        if (trying[i] == 3 && pair) { /* CRN, both chains: one pass */
            double s[2];
            draw_pair(c, r, ui, tmp, tmp + w, s);
            if (log_ua[0] > s[0]) {
                copy_layers(c->m, c->blk, tmp, c->x_rows + r * w);
                trying[i] &= ~INT64_C(1);
            }
            if (log_ua[1] > -s[1]) {
                copy_layers(c->m, c->blk, tmp + w, c->y_rows + r * w);
                trying[i] &= ~INT64_C(2);
            }
        } else {
            if (trying[i] & 1) {
                if (log_ua[0] > draw(c, t->proposal, r, 1, ui, tmp)) {
                    copy_layers(c->m, c->blk, tmp, c->x_rows + r * w);
                    trying[i] &= ~INT64_C(1);
                }
            }
            if (trying[i] & 2) {
                if (log_ua[1] > -draw(c, t->proposal, r, 2, ui, tmp)) {
                    copy_layers(c->m, c->blk, tmp, c->y_rows + r * w);
                    trying[i] &= ~INT64_C(2);
                }
            }
        }
    }
}

/*
 * Off the meeting event, draw from the residuals (p1 - min(p1,p2)) and
 * (p2 - min(p1,p2)) by rejection, trying until both accept: never truncated,
 * but a row that has not accepted after the kernel's residual_try_limit tries
 * fails the step (returns 0; the caller undoes it). A try of chain y
 * accepts with probability TV(p1, p2), so in exact arithmetic a row is
 * stopped with probability TV (1 - TV)^limit <= 1 / (e limit) per step;
 * in floating point the limit also ends the loop where rounding would
 * leave a residual no uniform can accept.
 * MAXIMAL (Qiu Alg. 1 / Jacob et al.'s Alg. 4): x keeps its first draw; y
 * proposes from p2 and accepts iff U' > p1/p2. CRN (Qiu Alg. 3): x is drawn
 * again too; both propose from common uniforms Z2 in each try, x accepts iff
 * U2 > p2/p1, y iff U2' > p1/p2. Try k of every row uses the streams of try
 * k (rows differ by their stream rows), so the rows list[0..count) that
 * need tries make try k together: its uniforms come for all of them at
 * once. list is reordered.
 */
static int residuals(couple *c, const ebm__stream *base, int64_t *list, int64_t count)
{
    const int64_t w = c->w;
    int64_t *trying = c->trying;
    for (int64_t i = 0; i < count; i++) {
        trying[i] = c->k->settings->coupling == EBM_COUPLING_MAXIMAL ? 2 : 3;
    }
    int64_t tries_sum = 0, tries_max = 0;
    const int pair = pairable(c);
    c->loops += count;
    for (uint64_t k = 1; count > 0; k++) {
        if (k > (uint64_t)c->k->residual_try_limit) {
            c->stuck = c->id[list[0]];
            c->fail = FAIL_TRIES;
            return 0;
        }
        ebm__stream proposal = ebm__stream_for_try(base, 2 * k);
        ebm__stream accept = ebm__stream_for_try(base, 2 * k + 1);
        for (int64_t i = 0; i < count; i++) {
            c->lid[i] = c->id[list[i]];
        }
        block_uniforms(c, &proposal, count, c->lid, c->try_u, w); /* both chains' proposals */
        ebm__stream_uniform_rows(&accept, count, c->lid, 0, 2, c->try_accept, 2);
        ebm__kern()->log_uniform(2 * count, c->try_accept, c->log_u);
        try_job t = {c, list, trying, &proposal, pair};
        ebm__for_rows(count, count * w * 4, c->threads, try_rows, &t);
        for (int64_t i = count - 1; i >= 0; i--) {
            if (trying[i] == 0) { /* done after k tries: the last listed row moves here */
                tries_sum += (int64_t)k;
                tries_max = (int64_t)k > tries_max ? (int64_t)k : tries_max;
                count--;
                list[i] = list[count];
                trying[i] = trying[count];
            }
        }
    }
    c->tries_sum += tries_sum;
    c->tries_max = tries_max > c->tries_max ? tries_max : c->tries_max;
    return 1;
}

/*
 * Reflection-maximal coupling of N(m1, diag(sigma^2)) and N(m2, same) for a
 * block that is the Gaussian layer 0: with z = (m1 - m2)/sigma and xi ~
 * N(0, I), x' = m1 + sigma xi; y' = x' with probability min(1, phi(xi + z) /
 * phi(xi)), else y' = m2 + sigma (xi - 2 (e.xi) e), e = z/|z|. Exact, and
 * maximal for equal covariances (no rejection loop).
 */
static void reflect(const couple *c, const ebm__stream *first, const ebm__stream *meet, int64_t r,
                    float *tmp)
{
    const ebm_model_t *m = c->m;
    const int64_t n0 = m->size[0];
    const float *m1 = c->x_input + r * c->w, *m2 = c->y_input + r * c->w;
    const float *logvar = m->params + m->logvar_off;
    float *xi = tmp, *xr = c->x_rows + r * c->w, *yr = c->y_rows + r * c->w;
    ebm__stream_normal(first, (uint32_t)c->id[r], 0, n0, xi);
    double zz = 0.0, xz = 0.0;
    for (int64_t i = 0; i < n0; i++) {
        double sigma = exp(0.5 * (double)logvar[i]);
        double z = ((double)m1[i] - (double)m2[i]) / sigma;
        zz += z * z;
        xz += (double)xi[i] * z;
        xr[i] = (float)((double)m1[i] + sigma * (double)xi[i]);
    }
    float u;
    ebm__stream_uniform(meet, (uint32_t)c->id[r], 0, 1, &u);
    /* log phi(xi + z) - log phi(xi) = -xi.z - |z|^2 / 2 */
    if (log((double)u) <= -xz - 0.5 * zz) {
        memcpy(yr, xr, (size_t)n0 * sizeof *yr);
        c->met[r] = 1;
        return;
    }
    for (int64_t i = 0; i < n0; i++) {
        double sigma = exp(0.5 * (double)logvar[i]);
        double z = ((double)m1[i] - (double)m2[i]) / sigma;
        double xi_y = (double)xi[i] - 2.0 * (xz / zz) * z;
        yr[i] = (float)((double)m2[i] + sigma * xi_y);
    }
}

/* blk's inputs in both chains, and what the log-ratios share; 0 if an
 * input overflowed, which makes every probability meaningless. After
 * ratio_setup a discrete layer's non-finite input has left its row's lz
 * non-finite; a Gaussian layer's inputs are checked here. */
static int block_setup(couple *c)
{
    const ebm_model_t *m = c->m;
    const ebm__kernels *k = ebm__kern();
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (c->blk >> l & 1u) {
            ebm__layer_input(m, l, c->na, c->x_rows, c->w, c->x_input + m->column[l], c->w);
            ebm__layer_input(m, l, c->na, c->y_rows, c->w, c->y_input + m->column[l], c->w);
        }
    }
    ratio_setup(c);
    for (int64_t r = 0; r < c->na; r++) {
        if (!isfinite(c->lz[r])) {
            return 0;
        }
        for (int64_t l = 0; l < m->n_layers; l++) {
            const int64_t off = r * c->w + m->column[l], nl = m->size[l];
            if ((c->blk >> l & 1u) && ebm__is_gaussian(m, l) &&
                (!k->values_ok(nl, c->x_input + off, EBM_UNITS_GAUSSIAN) ||
                 !k->values_ok(nl, c->y_input + off, EBM_UNITS_GAUSSIAN))) {
                return 0;
            }
        }
    }
    return 1;
}

/* The first draws of couple_block: x's draw, which y takes where the two
 * conditionals meet. */
typedef struct first_job {
    couple *c;
    const ebm__stream *first;
} first_job;

static void first_rows(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const first_job *f = ctx;
    couple *c = f->c;
    const int64_t w = c->w;
    for (int64_t r = begin; r < end; r++) {
        float *xr = c->x_rows + r * w;
        c->met[r] = c->log_u[r] <= draw(c, f->first, r, 1, xr, xr);
        if (c->met[r]) {
            copy_layers(c->m, c->blk, xr, c->y_rows + r * w);
        }
    }
}

/*
 * The maximal coupling of blk's conditionals in the na rows, after
 * block_setup (Qiu Alg. 4 lines 1-2, then the residuals): x' ~ p1 from the
 * stream first, and the chains meet (y' = x') iff log U <= log p2(x') -
 * log p1(x') with U from the stream meet; c->met[r] says so. Where x and y
 * agree outside blk the two conditionals are equal, the log-ratio is
 * exactly 0 and the row meets. 0 if a residual loop reached the try limit.
 */
static int couple_block(couple *c, const ebm__stream *first, const ebm__stream *meet,
                        const ebm__stream *residual)
{
    int64_t *met = c->met;
    const int64_t na = c->na, w = c->w;
    block_uniforms(c, first, na, c->id, c->x_rows, w); /* the uniforms of all rows at once */
    ebm__stream_uniform_rows(meet, na, c->id, 0, 1, c->u, 1);
    ebm__kern()->log_uniform(na, c->u, c->log_u);
    first_job f = {c, first};
    ebm__for_rows(na, na * w * 4, c->threads, first_rows, &f);
    int64_t count = 0;
    for (int64_t r = 0; r < na; r++) {
        if (!met[r]) {
            c->list[count++] = r;
        }
    }
    return residuals(c, residual, c->list, count);
}

/* 1 unless blk holds a Gaussian layer 0 whose new values overflowed in a
 * chain. */
static int draws_finite(const couple *c)
{
    if (!(c->blk & 1u) || !ebm__is_gaussian(c->m, 0)) {
        return 1;
    }
    for (int64_t r = 0; r < c->na; r++) {
        if (!ebm__kern()->values_ok(c->m->size[0], c->x_rows + r * c->w, EBM_UNITS_GAUSSIAN) ||
            !ebm__kern()->values_ok(c->m->size[0], c->y_rows + r * c->w, EBM_UNITS_GAUSSIAN)) {
            return 0;
        }
    }
    return 1;
}

/* The reflection-maximal draws of couple_apart's Gaussian block. */
typedef struct reflect_job {
    couple *c;
    const ebm__stream *st;
} reflect_job;

static void reflect_rows(void *ctx, int64_t begin, int64_t end, int thread)
{
    const reflect_job *j = ctx;
    couple *c = j->c;
    for (int64_t r = begin; r < end; r++) {
        c->met[r] = 0;
        reflect(c, &j->st[ST_FIRST], &j->st[ST_MEET], r, c->tmp + 2 * (int64_t)thread * c->w);
    }
}

/* The coupled sweep of the na rows that have not met, after B1's
 * block_setup: 1, or 0 with c->fail saying why (x_rows and y_rows are then
 * partly drawn). */
static int couple_apart(couple *c, const ebm__stream *st, float *a)
{
    const ebm_model_t *m = c->m;
    const int64_t na = c->na, w = c->w;
    const int coupling = c->k->settings->coupling;
    /* B2 = the block B1 is drawn from: both chains move B1 first. */
    if (coupling != EBM_COUPLING_MAXIMAL && c->b1 == 1u && ebm__is_gaussian(m, 0)) {
        reflect_job j = {c, st};
        ebm__for_rows(na, na * w * 4, c->threads, reflect_rows, &j);
    } else if (!couple_block(c, &st[ST_FIRST], &st[ST_MEET], &st[ST_RESIDUAL])) {
        return 0;
    }
    if (!draws_finite(c)) {
        c->fail = FAIL_DRAW;
        return 0;
    }
    if (c->b2 == 0) {
        return 1;
    }
    if (coupling == EBM_COUPLING_BLOCKWISE) {
        c->blk = c->b2;
        if (!block_setup(c)) {
            c->fail = FAIL_INPUT;
            return 0;
        }
        return couple_block(c, &st[ST_B2_FIRST], &st[ST_B2_MEET], &st[ST_B2_RESIDUAL]);
    }
    /* B2 from the new B1, from common random numbers, except y's off the
     * meeting event under MAXIMAL (independent there). Each chain draws from
     * its own conditional, so chains whose clamped layers differ keep their
     * own laws; with equal clamps, a met row's B2 inputs are equal and so
     * are its draws. */
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (!(c->b2 >> l & 1u)) {
            continue;
        }
        const int64_t nl = m->size[l], off = m->column[l];
        ebm__layer_input(m, l, na, c->x_rows, w, a, nl);
        ebm__layer_input(m, l, na, c->y_rows, w, c->x_input, nl);
        if (!ebm__kern()->values_ok(na * nl, a, EBM_UNITS_GAUSSIAN) ||
            !ebm__kern()->values_ok(na * nl, c->x_input, EBM_UNITS_GAUSSIAN)) {
            c->fail = FAIL_INPUT;
            return 0;
        }
        const float *ay = c->x_input; /* y's inputs */
        if (coupling == EBM_COUPLING_CRN && !ebm__is_gaussian(m, l)) {
            /* Both chains compare with the same uniforms: drawn once. */
            ebm__stream_uniform_rows(&st[ST_B2 + l], na, c->id, 0, nl, c->try_u, nl);
            ebm__draw_from_uniforms(m, l, na, a, nl, c->try_u, nl, c->x_rows + off, w);
            ebm__draw_from_uniforms(m, l, na, ay, nl, c->try_u, nl, c->y_rows + off, w);
            continue;
        }
        ebm__sample_from_input(m, l, &st[ST_B2 + l], c->id, 0, na, a, nl, c->x_rows + off, w);
        if (coupling == EBM_COUPLING_CRN) {
            ebm__sample_from_input(m, l, &st[ST_B2 + l], c->id, 0, na, ay, nl, c->y_rows + off, w);
            continue;
        }
        for (int64_t r = 0; r < na; r++) {
            const ebm__stream *sy = c->met[r] ? &st[ST_B2 + l] : &st[ST_B2_Y + l];
            ebm__sample_from_input(m, l, sy, c->id + r, 0, 1, ay + r * nl, nl,
                                   c->y_rows + r * w + off, w);
        }
    }
    return 1;
}

/* A coupled step's scratch: the gathered states (apart rows, then rows
 * already met) and y's apart rows, both chains' block inputs and
 * probabilities, two rows per thread for the tries, layer inputs, the meeting
 * uniforms, a try's uniforms; row lists (apart and together rows, their
 * stream rows, the rows that need tries); the meeting flags; the log-ratio
 * constants. */
typedef struct coupled_work {
    couple *c; /* gets the pieces it keeps (x_input ... met) */
    int64_t n, max_size, threads;
    float *gathered, *y_rows, *a;
    int64_t *rows, *sid;
} coupled_work;

static void coupled_layout(ebm__arena *arena, void *ctx)
{
    coupled_work *wk = ctx;
    couple *c = wk->c;
    const size_t n = (size_t)wk->n, nw = (size_t)(wk->n * c->w), f = sizeof(float);
    wk->gathered = ebm__arena_take(arena, nw, f);
    wk->y_rows = ebm__arena_take(arena, nw, f);
    c->x_input = ebm__arena_take(arena, nw, f);
    c->y_input = ebm__arena_take(arena, nw, f);
    c->x_prob = ebm__arena_take(arena, nw, f);
    c->y_prob = ebm__arena_take(arena, nw, f);
    c->tmp = ebm__arena_take(arena, (size_t)(2 * wk->threads * c->w), f);
    wk->a = ebm__arena_take(arena, (size_t)(wk->n * wk->max_size), f);
    c->u = ebm__arena_take(arena, n, f);
    c->try_u = ebm__arena_take(arena, nw, f);
    c->try_accept = ebm__arena_take(arena, 2 * n, f);
    wk->rows = ebm__arena_take(arena, 2 * n, sizeof(int64_t));
    c->met = ebm__arena_take(arena, n, sizeof(int64_t));
    wk->sid = ebm__arena_take(arena, 2 * n, sizeof(int64_t));
    c->list = ebm__arena_take(arena, n, sizeof(int64_t));
    c->lid = ebm__arena_take(arena, n, sizeof(int64_t));
    c->trying = ebm__arena_take(arena, n, sizeof(int64_t));
    c->lz = ebm__arena_take(arena, n, sizeof(double));
    c->log_u = ebm__arena_take(arena, 2 * n, sizeof(double));
}

int ebm__coupled_gibbs_step(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg,
                            ebm_rng_t *rng, const int64_t *ids, int64_t n, float *x, int64_t ldx,
                            float *y, int64_t ldy, uint8_t *met, int keep)
{
    const ebm_model_t *m = k->m;
    const int64_t w = m->width;
    const uint32_t even = ebm__unclamped_layers(m, k->settings->clamp_layers, 0),
                   odd = ebm__unclamped_layers(m, k->settings->clamp_layers, 1);
    couple c = {0};
    c.k = k;
    c.m = m;
    c.w = w;
    c.b1 = even != 0 ? even : odd;
    c.b2 = even != 0 ? odd : 0;

    c.threads = ebm__threads();
    coupled_work wk = {.c = &c, .n = n, .max_size = m->max_size, .threads = c.threads};
    if (ebm__arena_layout(k->scratch, coupled_layout, &wk) != 0) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for coupled-step scratch");
    }
    int64_t *idx = wk.rows, *sid = wk.sid; /* sid: stream rows of idx */
    int64_t na = 0, nt = 0;
    for (int64_t r = 0; r < n; r++) {
        if (ebm__rows_equal(x + r * ldx, y + r * ldy, w)) {
            idx[n + nt++] = r;
        } else {
            idx[na++] = r;
        }
    }
    /* When no row has met and the chains are stored densely (as the
     * telescoping sum keeps them), the apart rows are x and y themselves. */
    const int in_place = nt == 0 && ldx == w && ldy == w;
    float *gathered = wk.gathered, *a = wk.a; /* gathered: apart rows, then together rows */
    c.y_rows = in_place ? y : wk.y_rows;
    c.x_rows = in_place ? x : gathered;
    for (int64_t i = 0; i < na; i++) {
        sid[i] = ebm__row_id(ids, idx[i]);
    }
    for (int64_t i = 0; i < nt; i++) {
        sid[n + i] = ebm__row_id(ids, idx[n + i]);
    }
    c.na = na;
    c.id = sid;
    c.blk = c.b1;
    for (int64_t i = 0; i < na && !in_place; i++) {
        memcpy(c.x_rows + i * w, x + idx[i] * ldx, (size_t)w * sizeof *x);
        memcpy(c.y_rows + i * w, y + idx[i] * ldy, (size_t)w * sizeof *y);
    }
    static const char overflow[] = "a layer input overflowed to a non-finite value: the "
                                   "parameters are too large for float";
    if (c.b1 != 0 && !block_setup(&c)) {
        return ebm__fail(msg, EBM_EVALUE, overflow);
    }
    /* In place, the scratch of the gathered rows holds the free layers of x
     * and y (all that a stopped sweep has drawn), to undo it. */
    const int undo = in_place && keep;
    for (int64_t r = 0; r < n && undo; r++) {
        copy_layers(m, c.b1 | c.b2, x + r * w, gathered + r * w);
        copy_layers(m, c.b1 | c.b2, y + r * w, wk.y_rows + r * w);
    }
    ebm__stream st[ST_COUNT];
    ebm__rng_take_streams(rng, ST_COUNT, st);
    if (c.b1 != 0 && !couple_apart(&c, st, a)) {
        for (int64_t r = 0; r < n && undo; r++) {
            copy_layers(m, c.b1 | c.b2, gathered + r * w, x + r * w);
            copy_layers(m, c.b1 | c.b2, wk.y_rows + r * w, y + r * w);
        }
        if (c.fail == FAIL_INPUT) {
            return ebm__fail(msg, EBM_EVALUE, overflow);
        }
        if (c.fail == FAIL_DRAW) {
            return ebm__fail_overflow(msg, "coupled Gibbs step (a Gaussian draw)");
        }
        return ebm__fail(msg, EBM_ELIMIT,
                         "row %lld's residual draw did not accept in %lld tries (the two chains' "
                         "conditionals differ by less than the uniforms resolve); x, y and rng "
                         "are unchanged",
                         (long long)c.stuck, (long long)k->residual_try_limit);
    }
    /* Rows met on entry: one ordinary sweep, then y = x. */
    float *together = gathered + na * w;
    for (int64_t i = 0; i < nt; i++) {
        memcpy(together + i * w, x + idx[n + i] * ldx, (size_t)w * sizeof *x);
    }
    if (!ebm__gibbs_sweep(k, st + ST_TOGETHER, sid + n, nt, together, w, a)) {
        return ebm__fail_overflow(msg, "coupled Gibbs step");
    }

    int64_t n_met = nt;
    for (int64_t i = 0; i < na; i++) {
        if (!in_place) {
            memcpy(x + idx[i] * ldx, c.x_rows + i * w, (size_t)w * sizeof *x);
            memcpy(y + idx[i] * ldy, c.y_rows + i * w, (size_t)w * sizeof *y);
        }
        int equal = ebm__rows_equal(c.x_rows + i * w, c.y_rows + i * w, w);
        n_met += equal;
        if (met != NULL) {
            met[idx[i]] = (uint8_t)equal;
        }
    }
    for (int64_t i = 0; i < nt; i++) {
        memcpy(x + idx[n + i] * ldx, together + i * w, (size_t)w * sizeof *x);
        memcpy(y + idx[n + i] * ldy, together + i * w, (size_t)w * sizeof *y);
        if (met != NULL) {
            met[idx[n + i]] = 1;
        }
    }
    out->met_fraction = (double)n_met / (double)n;
    out->tries_mean = c.loops > 0 ? (double)c.tries_sum / (double)c.loops : 0.0;
    out->tries_max = (double)c.tries_max;
    out->accept_rate = 1.0;
    return EBM_OK;
}
