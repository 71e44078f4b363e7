/* The Langevin kernels of a GRBM (Liao et al. 2022): Langevin on the
 * visible marginal energy, optionally Metropolis-adjusted (MALA, Alg. 1),
 * and Gibbs-Langevin (Alg. 2) with the adjustment of eq. 12.
 *
 * Both work on the whole batch at once: every inner step is a few GEMMs over
 * all rows, and takes its own streams from the generator, whose row r feeds
 * row r only. Proposals and accept decisions are made in double from the
 * float states actually stored, so the Metropolis ratio is the one of the
 * chain the caller sees.
 *
 * SPDX-License-Identifier: MIT
 */
#include "conditional.h"
#include "energy.h"
#include "error.h"
#include "kernels.h"
#include "langevin.h"
#include "model.h"
#include "rng.h"
#include "scratch.h"
#include "threads.h"

#include <math.h>
#include <string.h>

static const double PI_ = 3.14159265358979323846;

/* alpha[k-1] = alpha_k for k = 1..K: alpha0 (times the mean of sigma^2 with
 * EBM_SAMPLER_SCALE_BY_VARIANCE, Liao section 3.2), annealed by the cosine
 * schedule of Liao eq. 22 when asked. With the schedule alpha_K = 0: that
 * step is skipped by the callers (no move, no noise, no decision). */
static void step_sizes(const ebm__kernel_in *in, double *alpha)
{
    const ebm_model_t *m = in->m;
    const int64_t K = in->settings->langevin_steps, n0 = m->size[0];
    double alpha0 = in->settings->step_size;
    if (in->settings->scale_by_variance) {
        double sum = 0.0;
        for (int64_t i = 0; i < n0; i++) {
            sum += exp(m->params_d[m->logvar_off + i]);
        }
        alpha0 *= sum / (double)n0;
    }
    for (int64_t k = 1; k <= K; k++) {
        if (!in->settings->cosine) {
            alpha[k - 1] = alpha0;
        } else {
            /* cos(pi) is -1 in every libm, but say alpha_K = 0 outright. */
            alpha[k - 1] = k == K ? 0.0 : 0.5 * alpha0 * (1.0 + cos(PI_ * (double)k / (double)K));
        }
    }
}

/* d[i]: the factor of visible unit i's step, sigma_i^2 under
 * EBM_SAMPLER_PRECONDITION (the preconditioner diag(sigma^2)), else 1: unit
 * i moves by alpha_k d_i times its gradient, with noise of variance
 * 2 alpha_k d_i. */
static void unit_factors(const ebm__kernel_in *in, double *d)
{
    for (int64_t i = 0; i < in->m->size[0]; i++) {
        d[i] = in->settings->precondition ? 1.0 / in->m->inv_var_d[i] : 1.0;
    }
}

/* Metropolis-adjusted iff the step counter t passed EBM_SAMPLER_ADJUST_AFTER. */
static int is_adjusted(const ebm__kernel_in *in)
{
    return in->settings->adjust_after >= 0 && in->iteration > in->settings->adjust_after;
}

/* Accept iff log u < log_ratio; a non-finite ratio is never accepted
 * (u = 0 accepts any finite ratio, without evaluating log 0). */
static int metropolis_accept(double log_ratio, float u)
{
    return isfinite(log_ratio) && ((double)u == 0.0 || log((double)u) < log_ratio);
}

/* Every value finite (the kernels' screen of Gaussian values). */
static int all_finite(const float *v, int64_t count)
{
    return ebm__kern()->values_ok(count, v, EBM_UNITS_GAUSSIAN);
}

/* ---- Langevin on the visible marginal energy (Liao Alg. 1) ------------- */

/*
 * g = dF/dv for the rows of the work state xs (n x width, stride width),
 * where F is the free energy with layer 1 summed out (Liao eq. 5):
 * g = (v - mu - W_1 E[x_1 | v]) / sigma^2 (Liao eq. 21). The layer-1 block
 * of xs is overwritten with E[x_1 | v]: three GEMM-backed passes over the
 * batch and no per-row products.
 */
static void marginal_grad(const ebm_model_t *m, int64_t n, float *xs, float *g)
{
    const int64_t w = m->width, n0 = m->size[0], off1 = m->column[1];
    ebm__layer_input(m, 1, n, xs, w, xs + off1, w);
    ebm__mean_from_input(m, 1, n, xs + off1, w);
    ebm__layer_input(m, 0, n, xs, w, g, n0); /* mu + W_1 m_1 */
    for (int64_t r = 0; r < n; r++) {
        const float *v = xs + r * w;
        float *gr = g + r * n0;
        for (int64_t i = 0; i < n0; i++) {
            gr[i] = (v[i] - gr[i]) * m->inv_var[i];
        }
    }
}

/* F(v) = F_{1}(x_r) in double for all rows, in chunks of EBM__CHUNK rows. */
static void marginal_free_energy(const ebm_model_t *m, int64_t n, const float *x, int64_t ldx,
                                 double *f, double *work)
{
    for (int64_t r0 = 0; r0 < n; r0 += EBM__CHUNK) {
        int64_t rows = n - r0 < EBM__CHUNK ? n - r0 : EBM__CHUNK;
        ebm__free_energy_chunk(m, 1u << 1, rows, x + r0 * ldx, ldx, f + r0, work);
    }
}

/* log q(to | from) of the Langevin proposal N(from - alpha D g_from,
 * 2 alpha D), D = diag(d) (d NULL: the identity), up to its constant:
 * -sum_i (to_i - from_i + alpha d_i g_i)^2 / (4 alpha d_i). */
static double langevin_log_q(const float *to, const float *from, const float *g_from, int64_t n0,
                             double alpha, const double *d)
{
    double s = 0.0;
    for (int64_t i = 0; i < n0; i++) {
        const double di = d != NULL ? d[i] : 1.0;
        double e = (double)to[i] - (double)from[i] + alpha * di * (double)g_from[i];
        s += e * e / di;
    }
    return -s / (4.0 * alpha);
}

/* A Langevin step's scratch. Floats: the proposal state xp (n x width; its
 * layer-1 block is work space for E[h | v]), g(v) and g(v') (n x n0 each).
 * Doubles: the step sizes; the units' factors d, and a step's alpha_k d
 * and sqrt(2 alpha_k d) (n0 each); F(v) and F(v') (n each); the
 * free-energy scratch. */
typedef struct langevin_work {
    const ebm_model_t *m;
    int64_t n, chunk, steps;
    float *xp, *g, *gp;
    double *alpha, *d, *ad, *sd, *f, *fp, *work;
} langevin_work;

static void langevin_layout(ebm__arena *arena, void *ctx)
{
    langevin_work *wk = ctx;
    const size_t n = (size_t)wk->n, n0 = (size_t)wk->m->size[0];
    wk->xp = ebm__arena_take(arena, n * (size_t)wk->m->width, sizeof(float));
    wk->g = ebm__arena_take(arena, n * n0, sizeof(float));
    wk->gp = ebm__arena_take(arena, n * n0, sizeof(float));
    wk->alpha = ebm__arena_take(arena, (size_t)wk->steps, sizeof(double));
    wk->d = ebm__arena_take(arena, n0, sizeof(double));
    wk->ad = ebm__arena_take(arena, n0, sizeof(double));
    wk->sd = ebm__arena_take(arena, n0, sizeof(double));
    wk->f = ebm__arena_take(arena, n, sizeof(double));
    wk->fp = ebm__arena_take(arena, n, sizeof(double));
    wk->work = ebm__arena_take(arena, (size_t)ebm__free_energy_scratch(wk->m, wk->chunk),
                               sizeof(double));
}

int ebm__langevin_step(const ebm__kernel_in *in, ebm__kernel_out *out, ebm__msg *msg,
                       ebm_rng_t *rng, const int64_t *ids, int64_t n, float *x, int64_t ldx)
{
    const ebm_model_t *m = in->m;
    const int64_t K = in->settings->langevin_steps, n0 = m->size[0], w = m->width;
    const int64_t chunk = n < EBM__CHUNK ? n : EBM__CHUNK;
    const int adjust = is_adjusted(in);
    if (in->settings->clamp_layers & 1u) {
        return EBM_OK; /* the visible layer is held: nothing moves */
    }
    langevin_work wk = {.m = m, .n = n, .chunk = chunk, .steps = K};
    if (ebm__arena_layout(in->scratch, langevin_layout, &wk) != 0) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for Langevin scratch (%lld rows)",
                         (long long)n);
    }
    float *xp = wk.xp, *g = wk.g, *gp = wk.gp;
    double *alpha = wk.alpha, *d = wk.d, *ad = wk.ad, *sd = wk.sd;
    double *f = wk.f, *fp = wk.fp, *work = wk.work;
    step_sizes(in, alpha);
    unit_factors(in, d);
    const double *q_d = in->settings->twin_density ? NULL : d; /* the adjustment's D */

    int started = 0;
    int64_t rejected = 0, decisions = 0;
    for (int64_t k = 0; k < K; k++) {
        const double a = alpha[k];
        if (!(a > 0.0)) {
            continue;
        }
        if (!started) {
            /* g(v) and F(v) of the current states, carried along afterwards. */
            for (int64_t r = 0; r < n; r++) {
                memcpy(xp + r * w, x + r * ldx, (size_t)n0 * sizeof *xp);
            }
            marginal_grad(m, n, xp, g);
            if (adjust) {
                marginal_free_energy(m, n, x, ldx, f, work);
            }
            started = 1;
        }
        /* v' = v - alpha_k D g(v) + sqrt(2 alpha_k D) xi (Liao Alg. 1, line 4,
         * preconditioned by D = diag(d)). */
        for (int64_t i = 0; i < n0; i++) {
            ad[i] = a * d[i];
            sd[i] = sqrt(2.0 * ad[i]);
        }
        ebm__stream noise = ebm__rng_take_stream(rng);
        for (int64_t r = 0; r < n; r++) {
            float *vp = xp + r * w;
            const float *v = x + r * ldx, *gr = g + r * n0;
            ebm__stream_normal(&noise, ebm__row_id(ids, r), 0, n0, vp);
            for (int64_t i = 0; i < n0; i++) {
                vp[i] = (float)((double)v[i] - ad[i] * (double)gr[i] + sd[i] * (double)vp[i]);
            }
        }
        marginal_grad(m, n, xp, gp);
        /* The uniforms of the decisions: a stream of their own (adjusted only). */
        const ebm__stream accept = adjust ? ebm__rng_take_stream(rng) : noise;
        if (adjust) {
            marginal_free_energy(m, n, xp, w, fp, work);
        }
        for (int64_t r = 0; r < n; r++) {
            float *v = x + r * ldx;
            const float *vp = xp + r * w;
            int take;
            if (adjust) {
                /* MALA (Liao eqs. 7 and 23):
                 * log A = F(v) - F(v') + log q(v | v') - log q(v' | v). */
                double log_ratio = f[r] - fp[r] + langevin_log_q(v, vp, gp + r * n0, n0, a, q_d) -
                                   langevin_log_q(vp, v, g + r * n0, n0, a, q_d);
                float u;
                ebm__stream_uniform(&accept, ebm__row_id(ids, r), 0, 1, &u);
                take = all_finite(vp, n0) && metropolis_accept(log_ratio, u);
                decisions++;
            } else {
                /* Unadjusted: every finite proposal is taken; a non-finite
                 * one (a diverging step) is rejected, and that counts as a
                 * decision. */
                take = all_finite(vp, n0);
                decisions += !take;
            }
            rejected += !take;
            if (take) {
                memcpy(v, vp, (size_t)n0 * sizeof *v);
                memcpy(g + r * n0, gp + r * n0, (size_t)n0 * sizeof *g);
                if (adjust) {
                    f[r] = fp[r];
                }
            }
        }
    }
    out->accept_rate = decisions > 0 ? 1.0 - (double)rejected / (double)decisions : 1.0;
    return EBM_OK;
}

/* ---- Gibbs-Langevin (Liao Alg. 2) -------------------------------------- */

/*
 * The K-step Langevin proposal on v with h fixed is Gaussian (Liao eq. 11):
 *   q(v' | v, h) = N(beta_0 v + shift (mu + W h), diag(var)),
 *   beta_k = prod_{j=k+1..K} (1 - a_j / sigma^2), beta_K = 1,
 *   shift  = sum_k beta_k a_k / sigma^2   (the paper's a),
 *   var    = sum_k 2 a_k beta_k^2         (the paper's sigma~^2),
 * per visible unit, built backwards from beta_K = 1, with a_k = alpha_k d
 * the unit's step (unit_factors; preconditioned, d = sigma^2 and so
 * 1 - a_k / sigma^2 = 1 - alpha_k for every unit).
 */
static void proposal_coefficients(const ebm_model_t *m, int64_t K, const double *alpha,
                                  const double *d, double *beta0, double *shift, double *var)
{
    for (int64_t i = 0; i < m->size[0]; i++) {
        double inv = m->inv_var_d[i], beta = 1.0, sum_ba = 0.0, sum_v = 0.0;
        for (int64_t k = K; k >= 1; k--) {
            double a = alpha[k - 1] * d[i];
            sum_ba += beta * a;
            sum_v += 2.0 * a * beta * beta;
            beta *= 1.0 - a * inv;
        }
        beta0[i] = beta;
        shift[i] = sum_ba * inv;
        var[i] = sum_v;
    }
}

/* The rows of one Gaussian move: v_i <- move[i] v_i + move[n0 + i] c_i +
 * move[2 n0 + i] xi_i for the visible block of every row, with xi from the
 * row's stream row, made in its thread's row of xi (n0 floats per thread).
 * taken NULL: v is overwritten; else the move is made in xi, taken[r] says
 * whether it is finite, and only then is it written over v. */
typedef struct move_job {
    const int64_t *ids;
    int64_t n0, ldx;
    float *x, *xi;
    const float *c;
    const double *move;
    const ebm__stream *noise;
    uint8_t *taken;
} move_job;

static void move_rows(void *ctx, int64_t begin, int64_t end, int thread)
{
    const move_job *j = ctx;
    const int64_t n0 = j->n0;
    float *z = j->xi + (int64_t)thread * n0;
    for (int64_t r = begin; r < end; r++) {
        float *v = j->x + r * j->ldx;
        ebm__stream_normal(j->noise, ebm__row_id(j->ids, r), 0, n0, z);
        if (j->taken == NULL) {
            (void)ebm__kern()->affine_row(n0, j->move, v, j->c + r * n0, z, v);
            continue;
        }
        j->taken[r] = (uint8_t)ebm__kern()->affine_row(n0, j->move, v, j->c + r * n0, z, z);
        if (j->taken[r]) {
            memcpy(v, z, (size_t)n0 * sizeof *v);
        }
    }
}

/* The move of move_rows on n rows of xs (row stride w), v overwritten;
 * xi holds `threads` rows of n0 floats. */
static void affine_gaussian_move(const int64_t *ids, int64_t n, int64_t n0, float *xs, int64_t w,
                                 const float *c, const double *move, const ebm__stream *noise,
                                 float *xi, int threads)
{
    move_job j = {ids, n0, w, xs, xi, c, move, noise, NULL};
    ebm__for_rows(n, n * n0 * 8, threads, move_rows, &j);
}

/* log q(to | from, c) up to its constant, with c = mu + W h_from (eq. 12's
 * exponents). A unit with var 0 (no step moved it) is a point mass on both
 * sides of the ratio and contributes nothing. */
static double gibbs_langevin_log_q(const float *to, const float *from, const float *c, int64_t n0,
                                   const double *beta0, const double *shift, const double *var)
{
    double s = 0.0;
    for (int64_t i = 0; i < n0; i++) {
        if (var[i] > 0.0) {
            double d = (double)to[i] - beta0[i] * (double)from[i] - shift[i] * (double)c[i];
            s += d * d / var[i];
        }
    }
    return -0.5 * s;
}

/* A Gibbs-Langevin step's scratch. Floats: the proposal (v', h') (n x
 * width); c = mu + W h and c' = mu + W h' (n x n0 each); the inputs of h at
 * v' and at v (n x n1 each); the normals of one row (n0) per thread.
 * Doubles: the step sizes; beta_0, shift and var (n0 each); the
 * coefficients of one move (3 n0); the log ratio and log p(h' | v') (n
 * each); E(x) and E(x') of a chunk; the free-energy scratch. Bytes: which
 * rows took their proposal (n; closed_form_step). */
typedef struct gibbs_langevin_work {
    const ebm_model_t *m;
    int64_t n, chunk, steps, threads;
    float *xp, *c, *cp, *ap, *a, *xi;
    double *alpha, *d, *beta0, *shift, *var, *move, *log_ratio, *lp_new, *e, *ep, *work;
    uint8_t *taken;
} gibbs_langevin_work;

static void gibbs_langevin_layout(ebm__arena *arena, void *ctx)
{
    gibbs_langevin_work *wk = ctx;
    const ebm_model_t *m = wk->m;
    const size_t n = (size_t)wk->n, n0 = (size_t)m->size[0], n1 = (size_t)m->size[1];
    const size_t chunk = (size_t)wk->chunk, f = sizeof(float), d = sizeof(double);
    wk->xp = ebm__arena_take(arena, n * (size_t)m->width, f);
    wk->c = ebm__arena_take(arena, n * n0, f);
    wk->cp = ebm__arena_take(arena, n * n0, f);
    wk->ap = ebm__arena_take(arena, n * n1, f);
    wk->a = ebm__arena_take(arena, n * n1, f);
    wk->xi = ebm__arena_take(arena, (size_t)wk->threads * n0, f);
    wk->alpha = ebm__arena_take(arena, (size_t)wk->steps, d);
    wk->d = ebm__arena_take(arena, n0, d);
    wk->beta0 = ebm__arena_take(arena, n0, d);
    wk->shift = ebm__arena_take(arena, n0, d);
    wk->var = ebm__arena_take(arena, n0, d);
    wk->move = ebm__arena_take(arena, 3 * n0, d);
    wk->log_ratio = ebm__arena_take(arena, n, d);
    wk->lp_new = ebm__arena_take(arena, n, d);
    wk->e = ebm__arena_take(arena, chunk, d);
    wk->ep = ebm__arena_take(arena, chunk, d);
    wk->work = ebm__arena_take(arena, (size_t)ebm__free_energy_scratch(m, wk->chunk), d);
    wk->taken = ebm__arena_take(arena, n, 1);
}

/*
 * The unadjusted closed-form step of both layers, which needs no copy of
 * the proposal: each row's v' = beta_0 v + shift c + sqrt(var) xi (eq. 11)
 * is made in its thread's row of xi and, if finite, written over v in x;
 * the input of h is then taken at x, whose rows hold v' wherever the step
 * keeps them, and h' is drawn straight into x (if a row was rejected, into
 * the proposal, copied to x for the rows that moved). The same operations
 * per row as the general path below, so the same bits
 * (tests/check_langevin.c compares the two).
 */
static void closed_form_step(const ebm__kernel_in *in, const gibbs_langevin_work *wk,
                             ebm__kernel_out *out, ebm_rng_t *rng, const int64_t *ids, int64_t n,
                             float *x, int64_t ldx)
{
    const ebm_model_t *m = in->m;
    const int64_t n0 = m->size[0], n1 = m->size[1], w = m->width, off1 = m->column[1];
    const float *c = wk->c;
    double *move = wk->move;
    uint8_t *taken = wk->taken;
    ebm__layer_input(m, 0, n, x, ldx, wk->c, n0); /* c = mu + W h */
    for (int64_t i = 0; i < n0; i++) {
        move[i] = wk->beta0[i];
        move[n0 + i] = wk->shift[i];
        move[2 * n0 + i] = sqrt(wk->var[i]);
    }
    ebm__stream noise = ebm__rng_take_stream(rng);
    move_job j = {ids, n0, ldx, x, wk->xi, c, move, &noise, taken};
    ebm__for_rows(n, n * n0 * 8, (int)wk->threads, move_rows, &j);
    int64_t rejected = 0;
    for (int64_t r = 0; r < n; r++) {
        rejected += !taken[r];
    }
    ebm__layer_input(m, 1, n, x, ldx, wk->ap, n1);
    ebm__stream hidden = ebm__rng_take_stream(rng);
    if (rejected == 0) {
        ebm__sample_from_input(m, 1, &hidden, ids, 0, n, wk->ap, n1, x + off1, ldx);
    } else {
        ebm__sample_from_input(m, 1, &hidden, ids, 0, n, wk->ap, n1, wk->xp + off1, w);
        for (int64_t r = 0; r < n; r++) {
            if (taken[r]) {
                memcpy(x + r * ldx + off1, wk->xp + r * w + off1, (size_t)n1 * sizeof *x);
            }
        }
    }
    const int64_t decisions = rejected; /* as in the general path: unadjusted */
    out->accept_rate = decisions > 0 ? 1.0 - (double)rejected / (double)decisions : 1.0;
    out->hidden_input = rejected == 0 ? wk->ap : NULL;
}

int ebm__gibbs_langevin_step(const ebm__kernel_in *in, ebm__kernel_out *out, ebm__msg *msg,
                             ebm_rng_t *rng, const int64_t *ids, int64_t n, float *x,
                             int64_t ldx)
{
    const ebm_model_t *m = in->m;
    const int64_t K = in->settings->langevin_steps;
    const int64_t n0 = m->size[0], n1 = m->size[1], w = m->width;
    const int64_t off1 = m->column[1], chunk = n < EBM__CHUNK ? n : EBM__CHUNK;
    const uint32_t clamp = in->settings->clamp_layers;
    const int move_v = !(clamp & 1u), move_h = !(clamp >> 1 & 1u);
    /* With v held the step is a Gibbs draw of h, which eq. 12 always accepts. */
    const int adjust = is_adjusted(in) && move_v;
    if (!move_v && !move_h) {
        return EBM_OK;
    }
    gibbs_langevin_work wk = {.m = m, .n = n, .chunk = chunk, .steps = K,
                              .threads = ebm__threads()};
    if (ebm__arena_layout(in->scratch, gibbs_langevin_layout, &wk) != 0) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for Gibbs-Langevin scratch (%lld rows)",
                         (long long)n);
    }
    float *xp = wk.xp, *c = wk.c, *cp = wk.cp, *ap = wk.ap, *a = wk.a, *xi = wk.xi;
    double *alpha = wk.alpha, *d = wk.d, *beta0 = wk.beta0, *shift = wk.shift, *var = wk.var;
    double *move = wk.move, *log_ratio = wk.log_ratio, *lp_new = wk.lp_new;
    double *e = wk.e, *ep = wk.ep, *work = wk.work;
    step_sizes(in, alpha);
    unit_factors(in, d);
    proposal_coefficients(m, K, alpha, d, beta0, shift, var);
    if (!adjust && move_v && move_h && in->settings->closed_form &&
        !in->settings->plain_energies) {
        closed_form_step(in, &wk, out, rng, ids, n, x, ldx);
        return EBM_OK;
    }

    /* xp starts as x: v always (the moves start from it), h only if it is
     * held (else h' is drawn over it). */
    for (int64_t r = 0; r < n; r++) {
        memcpy(xp + r * w, x + r * ldx, (size_t)(move_h ? off1 : w) * sizeof *xp);
    }
    if (move_v) {
        ebm__layer_input(m, 0, n, x, ldx, c, n0); /* c = mu + W h, once */
        if (in->settings->closed_form) {
            /* v' = beta_0 v + shift c + sqrt(var) xi: eq. 11 in one draw. */
            for (int64_t i = 0; i < n0; i++) {
                move[i] = beta0[i];
                move[n0 + i] = shift[i];
                move[2 * n0 + i] = sqrt(var[i]);
            }
            ebm__stream noise = ebm__rng_take_stream(rng);
            affine_gaussian_move(ids, n, n0, xp, w, c, move, &noise, xi, (int)wk.threads);
        } else {
            /* K steps v <- v - a_k (v - c) / sigma^2 + sqrt(2 a_k) xi_k with
             * a_k = alpha_k d (Alg. 2, line 5 with Liao eq. 28); alpha_k = 0
             * is skipped. */
            for (int64_t k = 0; k < K; k++) {
                if (!(alpha[k] > 0.0)) {
                    continue;
                }
                for (int64_t i = 0; i < n0; i++) {
                    const double ai = alpha[k] * d[i];
                    move[i] = 1.0 - ai * m->inv_var_d[i];
                    move[n0 + i] = ai * m->inv_var_d[i];
                    move[2 * n0 + i] = sqrt(2.0 * ai);
                }
                ebm__stream noise = ebm__rng_take_stream(rng);
                affine_gaussian_move(ids, n, n0, xp, w, c, move, &noise, xi, (int)wk.threads);
            }
        }
    }
    /* h' ~ p(h | v') (Alg. 2, line 10); ap keeps the input for log p(h' | v').
     * A non-finite v' gives garbage here, but that row is rejected below. */
    if (move_h) {
        ebm__layer_input(m, 1, n, xp, w, ap, n1);
        ebm__stream hidden = ebm__rng_take_stream(rng);
        ebm__sample_from_input(m, 1, &hidden, ids, 0, n, ap, n1, xp + off1, w);
    }
    if (adjust) {
        /* Eq. 12: log A = E(v, h) - E(v', h') + log q(v | v', h') - log q(v' | v, h)
         *               + log p(h | v) - log p(h' | v'). */
        for (int64_t r0 = 0; r0 < n; r0 += chunk) {
            int64_t rows = n - r0 < chunk ? n - r0 : chunk;
            ebm__free_energy_chunk(m, 0, rows, x + r0 * ldx, ldx, e, work);
            ebm__free_energy_chunk(m, 0, rows, xp + r0 * w, w, ep, work);
            for (int64_t r = 0; r < rows; r++) {
                log_ratio[r0 + r] = e[r] - ep[r];
            }
        }
        ebm__layer_input(m, 0, n, xp, w, cp, n0); /* c' = mu + W h' */
        if (in->settings->twin_density) { /* the unpreconditioned proposal's law */
            for (int64_t i = 0; i < n0; i++) {
                d[i] = 1.0;
            }
            proposal_coefficients(m, K, alpha, d, beta0, shift, var);
        }
        for (int64_t r = 0; r < n; r++) {
            const float *v = x + r * ldx, *vp = xp + r * w;
            log_ratio[r] +=
                gibbs_langevin_log_q(v, vp, cp + r * n0, n0, beta0, shift, var) -
                gibbs_langevin_log_q(vp, v, c + r * n0, n0, beta0, shift, var);
        }
        if (move_h) {
            ebm__layer_input(m, 1, n, x, ldx, a, n1);
            ebm__add_layer_logprob(m, 1, n, a, n1, x + off1, ldx, log_ratio);
            memset(lp_new, 0, (size_t)n * sizeof *lp_new);
            ebm__add_layer_logprob(m, 1, n, ap, n1, xp + off1, w, lp_new);
            for (int64_t r = 0; r < n; r++) {
                log_ratio[r] -= lp_new[r];
            }
        }
    }
    const ebm__stream accept = adjust ? ebm__rng_take_stream(rng) : (ebm__stream){{0, 0}, 0};
    int64_t rejected = 0, decisions = 0;
    for (int64_t r = 0; r < n; r++) {
        const float *vp = xp + r * w;
        int take;
        if (adjust) {
            float u;
            ebm__stream_uniform(&accept, ebm__row_id(ids, r), 0, 1, &u);
            take = all_finite(vp, n0) && metropolis_accept(log_ratio[r], u);
            decisions++;
        } else {
            take = all_finite(vp, n0); /* as in ebm__langevin_step */
            decisions += !take;
        }
        rejected += !take;
        if (take) {
            memcpy(x + r * ldx, vp, (size_t)w * sizeof *vp);
        }
    }
    out->accept_rate = decisions > 0 ? 1.0 - (double)rejected / (double)decisions : 1.0;
    out->hidden_input = move_h && rejected == 0 ? ap : NULL;
    return EBM_OK;
}
