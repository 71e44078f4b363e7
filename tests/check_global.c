/*
 * Global moves (EBM_SAMPLER_GLOBAL_PROB, ebm_sampler_set_proposal,
 * ebm_estimator_set_proposal; docs/global_moves.md), on four tiny models
 * by enumeration: a binary RBM 3x2, a spin RBM 3x2, a Potts RBM (2 sites
 * of 3 categories, 2 hidden units) and a binary DBM 2-2-2.
 *
 * The exact kernels are written down here from the model's energies and
 * free energies (ebm_model_energy, ebm_model_free_energy: proven against
 * brute force in check_energy.c and check_potts.c): the global move G
 * (proposal q(e') p(o' | e'), e the even layers, o the odd ones; accept
 * min(1, exp(F(e) - F(e') + log q(e) - log q(e')))), with q written
 * directly (a sum over the proposal rows of the flip kernel's product; a
 * DBM's h2 from the upward pass in double), the Gibbs sweep B (p(e' | o)
 * p(o' | e')), and the mixture M = p G + (1 - p) B. Then:
 *  (a) law: q sums to 1, G keeps pi and is reversible, M keeps pi
 *      (||pi P - pi||_1 <= 1e-12), while the broken twins' G (the q terms
 *      dropped; for the binary models also F replaced by the even layers'
 *      own energy) do not (> 1e-3); the library's one-step draws from
 *      every start state fit M by chi-square at alpha = 1e-6 / S (S start
 *      states: a correct library fails with probability about 1e-6 per
 *      model), and the library's twin (q dropped) fails from some state;
 *  (b) the coupled step's two marginals fit M's rows (chi-square, alpha =
 *      1e-6 / 16 per chain and pair, 8 pairs per model);
 *  (c) chains equal on entry stay equal through 40 coupled steps, and
 *      pairs that meet stay met;
 *  (d) the probability that both chains accept a global move, and each
 *      chain's acceptance, against their exact values sum_x' prop(x')
 *      min(1, r_x, r_y) and sum_x' prop(x') min(1, r): |z| < 5 (about
 *      6e-7 per value, 1e-5 for the suite's 18 values), where the twin
 *      (q dropped) misses by more than 5 on some pair of every model;
 *  (e) UCD with GLOBAL_PROB 0.8 and a proposal whose rows overlap the
 *      model is unbiased: max |z| < 4.5 over the parameters against the
 *      exact gradient (400 calls of 200 rows; about 1e-4 per model as in
 *      check_estimator.c), while the twins must reach max |z| > 6: the q
 *      terms dropped (all four models) and, on the DBM, the acceptance
 *      without the summed-out layer's free-energy difference;
 *  (f) bad input: codes, messages naming the argument and value, nothing
 *      changed; p = 0 gives the bits of a sampler without the option;
 *  (g) tempering: one step with the beta = 1 replicas' global moves from
 *      the product of the replicas' exact laws stays in it (chi-square per
 *      replica; the twin, q dropped, is rejected with chi-square 310 to
 *      2500 on 30 to 63 degrees of freedom);
 *  (h) allocation failures: every allocation of a step, a coupled step, a
 *      tempering step, the proposals' setters and a UCD gradient, failed
 *      in turn: EBM_ENOMEM, nothing changed, the reference results after;
 *  (i) the bounded free energies the moves decide from (energy.h) lie
 *      within their bounds of the exact path's, on six larger models (to
 *      inputs in the hundreds), and the twin with bounds 1e-6 as wide does
 *      not;
 *  (j) the decisions: the same bytes as the plain path's exact free
 *      energies and as rechecking every chunk, other bytes from the twin
 *      whose proposals' free energies leave their bounds.
 * The seeds are fixed. Observed margins are in the comments of each test.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"
#include "energy.h"
#include "global.h"
#include "ref.h"
#include "testing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P_ EBM_UNITS_POTTS
#define MAXS 64 /* most states of a model here */
#define MAXW 8  /* widest state */

typedef struct gspec {
    const char *name;
    int nl;
    int64_t sizes[3];
    int vis;
    int64_t q; /* categories of a Potts visible layer, else 1 */
    int hid;
    double scale;
    uint64_t seed;
    int64_t n_rows;       /* proposal rows */
    float rows[2][MAXW];  /* their visible values */
} gspec;

static const gspec SPECS[] = {
    {"binary RBM 3x2", 2, {3, 2}, B_, 1, B_, 1.5, 11, 2, {{1, 0, 1}, {0, 1, 0}}},
    {"spin RBM 3x2", 2, {3, 2}, S_, 1, S_, 0.8, 12, 2, {{1, 1, -1}, {-1, -1, 1}}},
    {"Potts RBM 2x3 sites, 2 hidden", 2, {6, 2}, P_, 3, B_, 1.2, 13, 2,
     {{1, 0, 0, 0, 1, 0}, {0, 0, 1, 0, 0, 1}}},
    {"binary DBM 2-2-2", 3, {2, 2, 2}, B_, 1, B_, 1.5, 14, 2, {{1, 0}, {1, 1}}},
};
#define N_SPECS ((int)(sizeof SPECS / sizeof SPECS[0]))
#define EPS 0.25    /* flip_prob: a multiple of 2^-32, the library's eps exactly */
#define P_GLOBAL 0.7
/* UCD's (e): more global moves and a narrower kernel, so that the twins'
 * laws (q dropped: the global part keeps p q instead of p) are far from p */
#define UCD_P 0.8
#define UCD_EPS 0.125

/* ------------------------------------------------------------------------ */
/* The exact kernels                                                        */
/* ------------------------------------------------------------------------ */

typedef struct exact {
    const gspec *sp;
    ebm_model_t *m;
    int64_t w, n0, sites;
    int S;
    float x[MAXS * MAXW];
    double e[MAXS], pi[MAXS], f[MAXS], lq[MAXS], prop[MAXS];
} exact;

static int64_t n_layers(const exact *X) { return X->sp->nl; }

/* State `code` in mixed radix: the visible sites (q) or units (2) first,
 * then the hidden units (2). */
static void state_of(const exact *X, int code, float *row)
{
    const gspec *sp = X->sp;
    for (int64_t s = 0; s < X->sites; s++) {
        if (sp->q > 1) {
            const int c = code % (int)sp->q;
            code /= (int)sp->q;
            for (int64_t a = 0; a < sp->q; a++) {
                row[s * sp->q + a] = a == c ? 1.0f : 0.0f;
            }
        } else {
            row[s] = code % 2 ? 1.0f : (sp->vis == S_ ? -1.0f : 0.0f);
            code /= 2;
        }
    }
    for (int64_t j = X->n0; j < X->w; j++) {
        row[j] = code % 2 ? 1.0f : (sp->hid == S_ ? -1.0f : 0.0f);
        code /= 2;
    }
}

static int code_of(const exact *X, const float *row)
{
    const gspec *sp = X->sp;
    int code = 0, mult = 1;
    for (int64_t s = 0; s < X->sites; s++) {
        if (sp->q > 1) {
            int c = 0;
            while (row[s * sp->q + c] == 0.0f) {
                c++;
            }
            code += c * mult;
            mult *= (int)sp->q;
        } else {
            code += (row[s] > 0.0f) * mult;
            mult *= 2;
        }
    }
    for (int64_t j = X->n0; j < X->w; j++) {
        code += (row[j] > 0.0f) * mult;
        mult *= 2;
    }
    return code;
}

/* Is column j in an odd layer? */
static int odd_column(const exact *X, int64_t j)
{
    int64_t l = 0;
    while (l + 1 < n_layers(X) && j >= ebm_model_layer_offset(X->m, l + 1)) {
        l++;
    }
    return l % 2;
}

/* The state with the even layers of a and the odd layers of b. */
static int combine(const exact *X, int a, int b)
{
    float row[MAXW];
    for (int64_t j = 0; j < X->w; j++) {
        row[j] = odd_column(X, j) ? X->x[b * X->w + j] : X->x[a * X->w + j];
    }
    return code_of(X, row);
}

static double unit_logp(int units, double x, double a)
{
    /* log p(x | a): binary x a - softplus(a); spin x a - log(2 cosh a) */
    const double lz = units == S_ ? fabs(a) + log1p(exp(-2.0 * fabs(a)))
                                  : fmax(a, 0.0) + log1p(exp(-fabs(a)));
    return x * a - lz;
}

/* log q(e) of state k: the flip kernel around the proposal rows, and for
 * the DBM h2 ~ p(h2 | W2^T m1 + b2), m1 = E[h1 | W1^T v + b1]. */
static double log_q(const exact *X, int k, const float *params, int64_t np)
{
    const gspec *sp = X->sp;
    const float *row = X->x + k * X->w;
    double acc = -INFINITY;
    for (int64_t n = 0; n < sp->n_rows; n++) {
        double t = 0.0;
        for (int64_t s = 0; s < X->sites; s++) {
            const int64_t q = sp->q;
            const int same = memcmp(row + s * q, sp->rows[n] + s * q, (size_t)q * sizeof *row) == 0;
            t += same ? log(1.0 - EPS) : log(EPS / (double)(q > 1 ? q - 1 : 1));
        }
        acc = acc == -INFINITY ? t : fmax(acc, t) + log1p(exp(-fabs(acc - t)));
    }
    double lq = acc - log((double)sp->n_rows);
    if (sp->nl == 3) {
        int64_t w1, w2, b1, b2;
        ck_assert_int_eq(ebm_model_param_block(X->m, EBM_PARAM_WEIGHT, 1, &w1, NULL, NULL), 0);
        ck_assert_int_eq(ebm_model_param_block(X->m, EBM_PARAM_WEIGHT, 2, &w2, NULL, NULL), 0);
        ck_assert_int_eq(ebm_model_param_block(X->m, EBM_PARAM_BIAS, 1, &b1, NULL, NULL), 0);
        ck_assert_int_eq(ebm_model_param_block(X->m, EBM_PARAM_BIAS, 2, &b2, NULL, NULL), 0);
        const int64_t n0 = sp->sizes[0], n1 = sp->sizes[1], n2 = sp->sizes[2];
        double m1[MAXW];
        for (int64_t j = 0; j < n1; j++) {
            double a = params[b1 + j];
            for (int64_t i = 0; i < n0; i++) {
                a += row[i] * params[w1 + i * n1 + j];
            }
            m1[j] = sp->hid == S_ ? tanh(a) : 1.0 / (1.0 + exp(-a));
        }
        for (int64_t j = 0; j < n2; j++) {
            double a = params[b2 + j];
            for (int64_t i = 0; i < n1; i++) {
                a += m1[i] * params[w2 + i * n2 + j];
            }
            lq += unit_logp(sp->hid, row[n0 + n1 + j], a);
        }
    }
    (void)np;
    return lq;
}

static void exact_init(exact *X, const gspec *sp)
{
    memset(X, 0, sizeof *X);
    X->sp = sp;
    char err[256];
    const int rc = sp->q > 1 ? ebm_model_create_potts(&X->m, sp->nl, sp->sizes, sp->q, sp->hid,
                                                       err, sizeof err)
                             : ebm_model_create(&X->m, sp->nl, sp->sizes, sp->vis, sp->hid, err,
                                                sizeof err);
    ck_assert_msg(rc == EBM_OK, "%s: %s", sp->name, err);
    t_random_params(X->m, sp->seed, sp->scale);
    X->w = ebm_model_state_width(X->m);
    X->n0 = sp->sizes[0];
    X->sites = X->n0 / sp->q;
    int S = 1;
    for (int64_t s = 0; s < X->sites; s++) {
        S *= (int)(sp->q > 1 ? sp->q : 2);
    }
    for (int64_t j = X->n0; j < X->w; j++) {
        S *= 2;
    }
    ck_assert(S <= MAXS && X->w <= MAXW);
    X->S = S;
    for (int k = 0; k < S; k++) {
        state_of(X, k, X->x + k * X->w);
        ck_assert_int_eq(code_of(X, X->x + k * X->w), k);
    }
    uint32_t odd = 0;
    for (int l = 1; l < sp->nl; l += 2) {
        odd |= 1u << l;
    }
    ck_assert_int_eq(ebm_model_energy(X->m, S, X->x, X->w, X->e), EBM_OK);
    ck_assert_int_eq(ebm_model_free_energy(X->m, odd, S, X->x, X->w, X->f), EBM_OK);
    double lz = -INFINITY;
    for (int k = 0; k < S; k++) {
        lz = lz == -INFINITY ? -X->e[k] : fmax(lz, -X->e[k]) + log1p(exp(-fabs(lz + X->e[k])));
    }
    const int64_t np = ebm_model_param_count(X->m);
    float *params = t_floats(np);
    ck_assert_int_eq(ebm_model_get_params(X->m, params), EBM_OK);
    double total = 0.0;
    for (int k = 0; k < S; k++) {
        X->pi[k] = exp(-X->e[k] - lz);
        X->lq[k] = log_q(X, k, params, np);
        X->prop[k] = exp(X->lq[k] + X->f[k] - X->e[k]); /* q(e) p(o | e) */
        total += X->prop[k];
    }
    free(params);
    /* the proposal is a law on the states */
    ck_assert_msg(fabs(total - 1.0) <= 1e-12, "%s: the proposal sums to %.15g", sp->name, total);
}

/* The global move's matrix; twin 1: no q terms; twin 2: F replaced by the
 * energy with the odd layers at 0 (binary models). */
static void global_matrix(const exact *X, int twin, double *G)
{
    const int S = X->S;
    for (int k = 0; k < S; k++) {
        double rest = 0.0;
        for (int k2 = 0; k2 < S; k2++) {
            if (k2 == k) {
                continue;
            }
            double fk = X->f[k], fk2 = X->f[k2];
            if (twin == 2) {
                float row[MAXW];
                memcpy(row, X->x + k * X->w, (size_t)X->w * sizeof *row);
                for (int64_t j = 0; j < X->w; j++) {
                    row[j] = odd_column(X, j) ? 0.0f : row[j];
                }
                fk = X->e[code_of(X, row)];
                memcpy(row, X->x + k2 * X->w, (size_t)X->w * sizeof *row);
                for (int64_t j = 0; j < X->w; j++) {
                    row[j] = odd_column(X, j) ? 0.0f : row[j];
                }
                fk2 = X->e[code_of(X, row)];
            }
            const double log_r = fk - fk2 + (twin == 1 ? 0.0 : X->lq[k] - X->lq[k2]);
            G[k * S + k2] = X->prop[k2] * fmin(1.0, exp(log_r));
            rest += G[k * S + k2];
        }
        G[k * S + k] = 1.0 - rest;
    }
}

/* The Gibbs sweep: e' ~ p(e | o), then o' ~ p(o | e'). */
static void gibbs_matrix(const exact *X, double *B)
{
    const int S = X->S;
    for (int k = 0; k < S; k++) {
        double z = 0.0;
        for (int k2 = 0; k2 < S; k2++) {
            if (combine(X, k2, k) == k2) { /* k2 has k's odd layers */
                z += exp(-X->e[k2]);
            }
        }
        for (int k2 = 0; k2 < S; k2++) {
            const int mid = combine(X, k2, k); /* (e', o) */
            const double pe = exp(-X->e[mid]) / z;
            B[k * S + k2] = pe * exp(X->f[k2] - X->e[k2]);
        }
    }
}

static void mixture_matrix(const exact *X, const double *G, const double *B, double *M)
{
    for (int i = 0; i < X->S * X->S; i++) {
        M[i] = P_GLOBAL * G[i] + (1.0 - P_GLOBAL) * B[i];
    }
}

static double invariance(const exact *X, const double *P)
{
    double l1 = 0.0;
    for (int y = 0; y < X->S; y++) {
        double s = 0.0;
        for (int x = 0; x < X->S; x++) {
            s += X->pi[x] * P[x * X->S + y];
        }
        l1 += fabs(s - X->pi[y]);
    }
    return l1;
}

/* A Gibbs sampler with global moves and the spec's proposal. */
static ebm_sampler_t *global_sampler(const exact *X, double p, int twin)
{
    ebm_sampler_t *s = NULL;
    ck_assert_int_eq(ebm_sampler_create(&s, X->m, EBM_SAMPLER_GIBBS), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_double(s, EBM_SAMPLER_GLOBAL_PROB, p), EBM_OK);
    const int rc = ebm_sampler_set_proposal(s, X->sp->n_rows, &X->sp->rows[0][0], MAXW, EPS);
    ck_assert_msg(rc == EBM_OK, "set_proposal: %s", ebm_sampler_errmsg(s));
    ebm__sampler_set_twin_global(s, twin);
    return s;
}

static void fill(const exact *X, int k, int64_t n, float *x)
{
    for (int64_t r = 0; r < n; r++) {
        memcpy(x + r * X->w, X->x + k * X->w, (size_t)X->w * sizeof *x);
    }
}

static void histogram(const exact *X, int64_t n, const float *x, double *cnt)
{
    memset(cnt, 0, (size_t)X->S * sizeof *cnt);
    for (int64_t r = 0; r < n; r++) {
        cnt[code_of(X, x + r * X->w)] += 1.0;
    }
}

/* ------------------------------------------------------------------------ */
/* (a) the law                                                              */
/* ------------------------------------------------------------------------ */

START_TEST(global_law)
{
    exact X;
    exact_init(&X, &SPECS[_i]);
    const int S = X.S;
    double *G = t_malloc(sizeof(double) * S * S), *B = t_malloc(sizeof(double) * S * S);
    double *M = t_malloc(sizeof(double) * S * S), *T = t_malloc(sizeof(double) * S * S);
    global_matrix(&X, 0, G);
    gibbs_matrix(&X, B);
    mixture_matrix(&X, G, B, M);
    double worst_db = 0.0, worst_row = 0.0;
    for (int a = 0; a < S; a++) {
        double rs = 0.0;
        for (int b = 0; b < S; b++) {
            T_ASSERT(G[a * S + b] >= 0.0);
            rs += M[a * S + b];
            worst_db = fmax(worst_db, fabs(X.pi[a] * G[a * S + b] - X.pi[b] * G[b * S + a]));
        }
        worst_row = fmax(worst_row, fabs(rs - 1.0));
    }
    const double inv_g = invariance(&X, G), inv_b = invariance(&X, B), inv_m = invariance(&X, M);
    global_matrix(&X, 1, T);
    const double inv_twin_q = invariance(&X, T);
    double inv_twin_f = 1.0;
    if (X.sp->vis == B_ && X.sp->hid == B_) {
        global_matrix(&X, 2, T);
        inv_twin_f = invariance(&X, T);
    }
    T_VLOG("global: %s: rows %.2g, pi G %.2g, pi B %.2g, pi M %.2g, balance %.2g; twins %.3g %.3g\n",
           X.sp->name, worst_row, inv_g, inv_b, inv_m, worst_db, inv_twin_q, inv_twin_f);
    ck_assert_msg(worst_row <= 1e-12 && inv_g <= 1e-12 && inv_b <= 1e-12 && inv_m <= 1e-12 &&
                      worst_db <= 1e-12,
                  "%s: rows %g, pi G %g, pi B %g, pi M %g, detailed balance %g", X.sp->name,
                  worst_row, inv_g, inv_b, inv_m, worst_db);
    ck_assert_msg(inv_twin_q > 1e-3 && inv_twin_f > 1e-3, "%s: a twin keeps pi (%g, %g)",
                  X.sp->name, inv_twin_q, inv_twin_f);
    /* The library's draws against M, and its twin (q dropped). */
    const int64_t n = t_scaled(10000), w = X.w;
    const double alpha = 1e-6 / S;
    float *x = t_floats(n * w);
    double cnt[MAXS], worst = 1.0;
    int twin_fails = 0;
    for (int twin = 0; twin < 2; twin++) {
        ebm_sampler_t *s = global_sampler(&X, P_GLOBAL, twin);
        ebm_rng_t *rng = t_rng(300 + (uint64_t)_i, (uint64_t)twin);
        for (int k = 0; k < S; k++) {
            fill(&X, k, n, x);
            ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
            histogram(&X, n, x, cnt);
            ref_gof g = ref_chisq(cnt, M + k * S, S, (double)n);
            if (twin == 0) {
                T_ASSERT_MSG(g.impossible == 0.0 && g.p >= alpha,
                             "%s from state %d: chi2 %.2f, %d df, p = %.3g, %.0f impossible",
                             X.sp->name, k, g.stat, g.df, g.p, g.impossible);
                worst = fmin(worst, g.p);
            } else {
                twin_fails += ref_gof_fails(g, alpha);
            }
        }
        ebm_rng_destroy(rng);
        ebm_sampler_destroy(s);
    }
    T_VLOG("global: %s: %d states x %lld rows, smallest p %.3g; the twin fails from %d\n",
           X.sp->name, S, (long long)n, worst, twin_fails);
    ck_assert_msg(twin_fails > 0, "%s: the twin (q dropped) was not detected", X.sp->name);
    free(x);
    free(G);
    free(B);
    free(M);
    free(T);
    ebm_model_destroy(X.m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* (b) coupled marginals, (c) met chains, (d) both accept                   */
/* ------------------------------------------------------------------------ */

/* Start pairs kx != ky of a model, deterministic. */
static void start_pair(const exact *X, uint64_t *st, int *kx, int *ky)
{
    do {
        *kx = (int)(t_uniform(st) * X->S);
        *ky = (int)(t_uniform(st) * X->S);
    } while (*kx == *ky);
}

START_TEST(coupled_marginals)
{
    exact X;
    exact_init(&X, &SPECS[_i]);
    const int S = X.S;
    double *G = t_malloc(sizeof(double) * S * S), *B = t_malloc(sizeof(double) * S * S);
    double *M = t_malloc(sizeof(double) * S * S);
    global_matrix(&X, 0, G);
    gibbs_matrix(&X, B);
    mixture_matrix(&X, G, B, M);
    const int64_t n = t_scaled(10000), w = X.w;
    float *x = t_floats(n * w), *y = t_floats(n * w);
    ebm_sampler_t *s = global_sampler(&X, P_GLOBAL, 0);
    ebm_rng_t *rng = t_rng(400 + (uint64_t)_i, 0);
    uint64_t st = 41 + (uint64_t)_i;
    double cnt[MAXS], worst = 1.0;
    const double alpha = 1e-6 / 16;
    for (int pair = 0; pair < 8; pair++) {
        int kx, ky;
        start_pair(&X, &st, &kx, &ky);
        fill(&X, kx, n, x);
        fill(&X, ky, n, y);
        ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, NULL), EBM_OK);
        histogram(&X, n, x, cnt);
        ref_gof gx = ref_chisq(cnt, M + kx * S, S, (double)n);
        histogram(&X, n, y, cnt);
        ref_gof gy = ref_chisq(cnt, M + ky * S, S, (double)n);
        T_ASSERT_MSG(gx.impossible == 0.0 && gx.p >= alpha && gy.impossible == 0.0 &&
                         gy.p >= alpha,
                     "%s pair (%d, %d): x p = %.3g, y p = %.3g", X.sp->name, kx, ky, gx.p, gy.p);
        worst = fmin(worst, fmin(gx.p, gy.p));
    }
    T_VLOG("global: %s: coupled marginals, smallest p %.3g\n", X.sp->name, worst);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    free(x);
    free(y);
    free(G);
    free(B);
    free(M);
    ebm_model_destroy(X.m);
}
END_TEST

START_TEST(met_stay_met)
{
    exact X;
    exact_init(&X, &SPECS[_i]);
    const int64_t n = 400, w = X.w;
    float *x = t_floats(n * w), *y = t_floats(n * w);
    uint8_t *met = t_malloc((size_t)n), *was = t_malloc((size_t)n);
    uint64_t st = 77;
    for (int64_t r = 0; r < n; r++) { /* half the rows equal, half apart */
        int kx, ky;
        start_pair(&X, &st, &kx, &ky);
        memcpy(x + r * w, X.x + kx * w, (size_t)w * sizeof *x);
        memcpy(y + r * w, X.x + (r % 2 ? kx : ky) * w, (size_t)w * sizeof *y);
        was[r] = r % 2 == 1;
    }
    ebm_sampler_t *s = global_sampler(&X, 0.5, 0);
    ebm_rng_t *rng = t_rng(500 + (uint64_t)_i, 0);
    int64_t met_apart = 0;
    for (int t = 0; t < 40; t++) {
        ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met), EBM_OK);
        int64_t n_met = 0;
        for (int64_t r = 0; r < n; r++) {
            const int equal = memcmp(x + r * w, y + r * w, (size_t)w * sizeof *x) == 0;
            T_ASSERT_MSG(met[r] == equal, "%s: met[%lld] is %d", X.sp->name, (long long)r, met[r]);
            T_ASSERT_MSG(!was[r] || equal, "%s: row %lld met, then parted at step %d",
                         X.sp->name, (long long)r, t);
            met_apart += equal && !was[r];
            was[r] = (uint8_t)equal;
            n_met += equal;
        }
        T_ASSERT(ebm_sampler_stat(s, EBM_STAT_MET_FRACTION) == (double)n_met / (double)n);
        T_ASSERT(ebm_sampler_stat(s, EBM_STAT_GLOBAL_BOTH_RATE) >= 0.0);
    }
    ck_assert_msg(met_apart > 0, "%s: no pair met", X.sp->name);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    free(x);
    free(y);
    free(met);
    free(was);
    ebm_model_destroy(X.m);
}
END_TEST

/* The exact probabilities that a global move from (kx, ky) is accepted by
 * x, by y, and by both. */
static void accept_probs(const exact *X, int twin, int kx, int ky, double *px, double *py,
                         double *both)
{
    *px = *py = *both = 0.0;
    for (int k2 = 0; k2 < X->S; k2++) {
        const double q2 = twin ? 0.0 : X->lq[k2];
        const double rx = fmin(1.0, exp(X->f[kx] - X->f[k2] + (twin ? 0.0 : X->lq[kx]) - q2));
        const double ry = fmin(1.0, exp(X->f[ky] - X->f[k2] + (twin ? 0.0 : X->lq[ky]) - q2));
        *px += X->prop[k2] * rx;
        *py += X->prop[k2] * ry;
        *both += X->prop[k2] * fmin(rx, ry);
    }
}

START_TEST(both_accept)
{
    exact X;
    exact_init(&X, &SPECS[_i]);
    const int64_t n = t_scaled(20000), w = X.w;
    const double p = 0.9;
    float *x = t_floats(n * w), *y = t_floats(n * w);
    uint64_t st = 91 + (uint64_t)_i;
    double worst = 0.0, twin_worst = 0.0;
    for (int pair = 0; pair < 3; pair++) {
        int kx, ky;
        start_pair(&X, &st, &kx, &ky);
        for (int twin = 0; twin < 2; twin++) {
            double px, py, both;
            accept_probs(&X, 0, kx, ky, &px, &py, &both);
            ebm_sampler_t *s = global_sampler(&X, p, twin);
            ebm_rng_t *rng = t_rng(600 + (uint64_t)(_i * 10 + pair), 0);
            fill(&X, kx, n, x);
            fill(&X, ky, n, y);
            ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, NULL), EBM_OK);
            /* n_g ~ n p global rows; its spread moves the SE by < 1% */
            const double ng = (double)n * p;
            const double rb = ebm_sampler_stat(s, EBM_STAT_GLOBAL_BOTH_RATE);
            const double ra = ebm_sampler_stat(s, EBM_STAT_GLOBAL_ACCEPT_RATE);
            const double zb = ref_binom_z(rb * ng, ng, both);
            /* the acceptance over 2 n_g decisions: each pair's two are
             * dependent, so the SE of their mean is at most that of one */
            const double pa = 0.5 * (px + py);
            const double za = (ra - pa) / sqrt(fmax(pa * (1.0 - pa), 1e-12) / ng);
            if (twin == 0) {
                T_ASSERT_MSG(fabs(zb) < 5.0 && fabs(za) < 5.0,
                             "%s pair (%d, %d): both %.4f (exact %.4f, z %.2f), accept %.4f "
                             "(exact %.4f, z %.2f)",
                             X.sp->name, kx, ky, rb, both, zb, ra, pa, za);
                worst = fmax(worst, fmax(fabs(zb), fabs(za)));
            } else {
                twin_worst = fmax(twin_worst, fmax(fabs(zb), fabs(za)));
            }
            ebm_rng_destroy(rng);
            ebm_sampler_destroy(s);
        }
    }
    T_VLOG("global: %s: both-accept max |z| %.2f, the twin's %.2f\n", X.sp->name, worst,
           twin_worst);
    ck_assert_msg(twin_worst > 5.0, "%s: the twin's acceptance was not detected (max |z| %.2f)",
                  X.sp->name, twin_worst);
    free(x);
    free(y);
    ebm_model_destroy(X.m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* (e) UCD with global moves is unbiased                                    */
/* ------------------------------------------------------------------------ */

/* The exact gradient of (1/nd) sum_r log p(v_r): sum_x (pi(x) - (1/nd)
 * sum_r p(x | v_r)) dE(x)/dtheta, through ebm_model_energy_grad (float
 * accumulation: relative error ~1e-7, inside the z-tests' floor). */
static void exact_gradient(const exact *X, int64_t nd, const float *data, double *g)
{
    double coef[MAXS];
    for (int k = 0; k < X->S; k++) {
        coef[k] = X->pi[k];
    }
    for (int64_t r = 0; r < nd; r++) {
        double pv = 0.0;
        for (int k = 0; k < X->S; k++) {
            pv += memcmp(X->x + k * X->w, data + r * X->n0, (size_t)X->n0 * sizeof *data) == 0
                      ? X->pi[k]
                      : 0.0;
        }
        for (int k = 0; k < X->S; k++) {
            if (memcmp(X->x + k * X->w, data + r * X->n0, (size_t)X->n0 * sizeof *data) == 0) {
                coef[k] -= X->pi[k] / pv / (double)nd;
            }
        }
    }
    const int64_t np = ebm_model_param_count(X->m);
    float *gf = t_floats(np);
    memset(gf, 0, (size_t)np * sizeof *gf);
    ck_assert_int_eq(ebm_model_energy_grad(X->m, 0, X->S, X->x, X->w, coef, gf), EBM_OK);
    for (int64_t i = 0; i < np; i++) {
        g[i] = gf[i];
    }
    free(gf);
}

/* max |z| over the parameters of `calls` UCD gradients (rows data rows,
 * alternating the first two proposal rows' visible states) against the
 * exact gradient. */
static double ucd_max_z(const exact *X, int twin, uint64_t seed, double *tau)
{
    const int64_t calls = t_level() >= 2 ? 2000 : 400, rows = 200, n0 = X->n0;
    const int64_t np = ebm_model_param_count(X->m);
    float *data = t_floats(rows * n0), *g = t_floats(np);
    const float *v0 = X->x + 5 * X->w, *v1 = X->x + 2 * X->w; /* two visible states */
    for (int64_t r = 0; r < rows; r++) {
        memcpy(data + r * n0, r % 2 ? v1 : v0, (size_t)n0 * sizeof *data);
    }
    double *exact_g = t_malloc((size_t)np * sizeof *exact_g);
    exact_gradient(X, 2, data, exact_g);
    ebm_estimator_t *e = NULL;
    ck_assert_int_eq(ebm_estimator_create(&e, X->m, EBM_ESTIMATOR_UCD), EBM_OK);
    ck_assert_int_eq(ebm_estimator_set_double(e, EBM_ESTIMATOR_SAMPLER_OPTION +
                                                     EBM_SAMPLER_GLOBAL_PROB, UCD_P),
                     EBM_OK);
    int rc = ebm_estimator_set_proposal(e, X->sp->n_rows, &X->sp->rows[0][0], MAXW, UCD_EPS);
    ck_assert_msg(rc == EBM_OK, "set_proposal: %s", ebm_estimator_errmsg(e));
    ebm__estimator_set_twin_global(e, twin);
    ebm_rng_t *rng = t_rng(seed, 0xE57);
    double *mean = t_calloc((size_t)np, sizeof *mean), *var = t_calloc((size_t)np, sizeof *var);
    *tau = 0.0;
    for (int64_t c = 0; c < calls; c++) {
        rc = ebm_estimator_gradient(e, rng, rows, data, n0, g);
        ck_assert_msg(rc == EBM_OK, "gradient: %s", ebm_estimator_errmsg(e));
        for (int64_t i = 0; i < np; i++) {
            const double d = g[i] - mean[i];
            mean[i] += d / (double)(c + 1);
            var[i] += d * (g[i] - mean[i]);
        }
        *tau += ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MEAN) / (double)calls;
        const double acc = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_ACCEPT_RATE);
        /* the global moves' acceptance: 200 rows make some, not all accepted */
        ck_assert_msg(acc > 0.0 && acc < 1.0, "%s: acceptance %g", X->sp->name, acc);
    }
    double zmax = 0.0;
    for (int64_t i = 0; i < np; i++) {
        const double floor = 2e-6 * (1.0 + fabs(exact_g[i]));
        const double se = sqrt(var[i] / (double)(calls - 1) / (double)calls + floor * floor);
        zmax = fmax(zmax, fabs(mean[i] - exact_g[i]) / se);
    }
    ebm_rng_destroy(rng);
    ebm_estimator_destroy(e);
    free(mean);
    free(var);
    free(exact_g);
    free(data);
    free(g);
    return zmax;
}

/* Observed over 12 seeds (offsets of 1000): the correct kernel's max |z|
 * 0.29 to 2.65; the twin without q 7.3 to 9.3 (binary RBM), 13.7 to 18.8
 * (spin), 7.7 to 10.1 (Potts), 10.4 to 14.0 (DBM); the DBM's twin without
 * the summed-out free energy 18.3 to 24.5. About 0.35 s per model. */
START_TEST(ucd_unbiased)
{
    exact X;
    exact_init(&X, &SPECS[_i]);
    double tau, tau_twin = 0.0, tau_summed = 0.0;
    const double z = ucd_max_z(&X, 0, 700 + (uint64_t)_i, &tau);
    const double z_twin = ucd_max_z(&X, 1, 710 + (uint64_t)_i, &tau_twin);
    double z_summed = INFINITY;
    if (X.sp->nl == 3) {
        z_summed = ucd_max_z(&X, 2, 720 + (uint64_t)_i, &tau_summed);
    }
    T_VLOG("global: %s: UCD max |z| %.2f (tau %.2f); twins: q dropped %.2f, summed-out F "
           "dropped %.2f\n",
           X.sp->name, z, tau, z_twin, z_summed);
    ck_assert_msg(z < 4.5, "%s: UCD with global moves: max |z| = %.2f", X.sp->name, z);
    ck_assert_msg(z_twin > 6.0, "%s: the twin without q was not caught: max |z| = %.2f",
                  X.sp->name, z_twin);
    ck_assert_msg(z_summed > 6.0, "%s: the twin without the summed-out F was not caught: %.2f",
                  X.sp->name, z_summed);
    ebm_model_destroy(X.m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* (f) bad input; p = 0 keeps the bits                                      */
/* ------------------------------------------------------------------------ */

START_TEST(bad_input)
{
    exact X;
    exact_init(&X, &SPECS[0]);
    const int64_t n = 6, w = X.w;
    float x[6 * MAXW] = {0}, y[6 * MAXW] = {0}, x0[6 * MAXW];
    t_fill_states(X.m, n, x, w, 3);
    t_fill_states(X.m, n, y, w, 4);
    memcpy(x0, x, sizeof x);
    ebm_rng_t *rng = t_fresh_rng();
    ebm_sampler_t *s = NULL;
    ck_assert_int_eq(ebm_sampler_create(&s, X.m, EBM_SAMPLER_GIBBS), EBM_OK);
    t_snap sn;
    t_snap_init(&sn, T_MSG_NONE, X.m, rng);
    t_snap_track(&sn, "x", x, sizeof x);
    t_snap_track(&sn, "y", y, sizeof y);
    const float *rows = &X.sp->rows[0][0];
    /* the option's range */
    FAILS(&sn, EBM_EVALUE, "EBM_SAMPLER_GLOBAL_PROB", "1",
          ebm_sampler_set_double(s, EBM_SAMPLER_GLOBAL_PROB, 1.0));
    FAILS(&sn, EBM_EVALUE, "EBM_SAMPLER_GLOBAL_PROB", "-0.1",
          ebm_sampler_set_double(s, EBM_SAMPLER_GLOBAL_PROB, -0.1));
    FAILS(&sn, EBM_EVALUE, "EBM_SAMPLER_GLOBAL_PROB", "nan",
          ebm_sampler_set_double(s, EBM_SAMPLER_GLOBAL_PROB, NAN));
    CHECK(strstr(ebm_sampler_errmsg(s), "GLOBAL_PROB") != NULL, "%s", ebm_sampler_errmsg(s));
    /* the proposal's arguments */
    CHECK(ebm_sampler_set_proposal(NULL, 2, rows, MAXW, EPS) == EBM_ENULL, "NULL sampler");
    int rc = ebm_sampler_set_proposal(s, 0, rows, MAXW, EPS);
    CHECK(rc == EBM_ESHAPE && t_contains(ebm_sampler_errmsg(s), "n_rows is 0"), "%d %s", rc,
          ebm_sampler_errmsg(s));
    rc = ebm_sampler_set_proposal(s, 2, NULL, MAXW, EPS);
    CHECK(rc == EBM_ENULL && t_contains(ebm_sampler_errmsg(s), "rows"), "%d %s", rc,
          ebm_sampler_errmsg(s));
    rc = ebm_sampler_set_proposal(s, 2, rows, 2, EPS);
    CHECK(rc == EBM_ESHAPE && t_contains(ebm_sampler_errmsg(s), "stride"), "%d %s", rc,
          ebm_sampler_errmsg(s));
    const double bad_eps[] = {0.0, 1.0, -0.5, NAN, 2.0};
    for (size_t i = 0; i < sizeof bad_eps / sizeof bad_eps[0]; i++) {
        rc = ebm_sampler_set_proposal(s, 2, rows, MAXW, bad_eps[i]);
        CHECK(rc == EBM_EVALUE && t_contains(ebm_sampler_errmsg(s), "flip_prob"), "%g: %d %s",
              bad_eps[i], rc, ebm_sampler_errmsg(s));
    }
    float half[3] = {1, 0.5f, 0};
    rc = ebm_sampler_set_proposal(s, 1, half, 3, EPS);
    CHECK(rc == EBM_EVALUE && t_contains(ebm_sampler_errmsg(s), "0.5"), "%d %s", rc,
          ebm_sampler_errmsg(s));
    /* a step with p > 0 and no proposal: nothing moves */
    ck_assert_int_eq(ebm_sampler_set_double(s, EBM_SAMPLER_GLOBAL_PROB, 0.5), EBM_OK);
    FAILS(&sn, EBM_EVALUE, "no proposal", "ebm_sampler_set_proposal",
          ebm_sampler_step(s, rng, n, x, w));
    FAILS(&sn, EBM_EVALUE, "no proposal", NULL, ebm_sampler_coupled_step(s, rng, n, x, w, y, w, NULL));
    CHECK(t_contains(ebm_sampler_errmsg(s), "no proposal"), "%s", ebm_sampler_errmsg(s));
    /* clamped layers, other kinds, unsupported models */
    ck_assert_int_eq(ebm_sampler_set_proposal(s, 2, rows, MAXW, EPS), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, 1), EBM_OK);
    FAILS(&sn, EBM_EUNSUPPORTED, "CLAMP", NULL, ebm_sampler_step(s, rng, n, x, w));
    CHECK(t_contains(ebm_sampler_errmsg(s), "EBM_SAMPLER_CLAMP_LAYERS"), "%s",
          ebm_sampler_errmsg(s));
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, 0), EBM_OK);
    ebm_sampler_t *mh = NULL;
    ck_assert_int_eq(ebm_sampler_create(&mh, X.m, EBM_SAMPLER_MH_UNIFORM), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_double(mh, EBM_SAMPLER_GLOBAL_PROB, 0.5), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_proposal(mh, 2, rows, MAXW, EPS), EBM_OK);
    FAILS(&sn, EBM_EUNSUPPORTED, NULL, NULL, ebm_sampler_step(mh, rng, n, x, w));
    CHECK(t_contains(ebm_sampler_errmsg(mh), "EBM_SAMPLER_MH_UNIFORM") &&
              t_contains(ebm_sampler_errmsg(mh), "GLOBAL_PROB"),
          "%s", ebm_sampler_errmsg(mh));
    ebm_sampler_destroy(mh);
    ebm_sampler_t *gs = NULL;
    ebm_model_t *grbm = t_new_grbm();
    ck_assert_int_eq(ebm_sampler_create(&gs, grbm, EBM_SAMPLER_GIBBS), EBM_OK);
    rc = ebm_sampler_set_proposal(gs, 1, x, w, EPS);
    CHECK(rc == EBM_EUNSUPPORTED && t_contains(ebm_sampler_errmsg(gs), "Gaussian"), "%d %s", rc,
          ebm_sampler_errmsg(gs));
    ebm_sampler_destroy(gs);
    ebm_model_destroy(grbm);
    /* the estimator: arguments forwarded; p > 0 without a proposal fails
     * the gradient with nothing changed */
    ebm_estimator_t *e = NULL;
    ck_assert_int_eq(ebm_estimator_create(&e, X.m, EBM_ESTIMATOR_UCD), EBM_OK);
    CHECK(ebm_estimator_set_proposal(NULL, 2, rows, MAXW, EPS) == EBM_ENULL, "NULL estimator");
    rc = ebm_estimator_set_proposal(e, 2, rows, MAXW, 0.0);
    CHECK(rc == EBM_EVALUE && t_contains(ebm_estimator_errmsg(e), "flip_prob"), "%d %s", rc,
          ebm_estimator_errmsg(e));
    rc = ebm_estimator_set_double(e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_GLOBAL_PROB, 1.5);
    CHECK(rc == EBM_EVALUE && t_contains(ebm_estimator_errmsg(e), "GLOBAL_PROB"), "%d %s", rc,
          ebm_estimator_errmsg(e));
    ck_assert_int_eq(
        ebm_estimator_set_double(e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_GLOBAL_PROB, 0.5),
        EBM_OK);
    const int64_t np = ebm_model_param_count(X.m);
    float *grad = t_floats(np);
    t_sentinel(grad, (size_t)np * sizeof *grad);
    t_snap se;
    t_snap_init(&se, T_MSG_NONE, X.m, rng);
    se.e = e;
    t_snap_track(&se, "grad", grad, (size_t)np * sizeof *grad);
    FAILS(&se, EBM_EVALUE, NULL, NULL, ebm_estimator_gradient(e, rng, 2, rows, MAXW, grad));
    CHECK(t_contains(ebm_estimator_errmsg(e), "no proposal"), "%s", ebm_estimator_errmsg(e));
    ck_assert_int_eq(ebm_estimator_set_proposal(e, 2, rows, MAXW, EPS), EBM_OK);
    rc = ebm_estimator_gradient(e, rng, 2, rows, MAXW, grad);
    CHECK(rc == EBM_OK, "%s", ebm_estimator_errmsg(e));
    ebm_estimator_destroy(e);
    /* PT and PCD chains take them too */
    const int kinds[2] = {EBM_ESTIMATOR_PT, EBM_ESTIMATOR_PCD};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(ebm_estimator_create(&e, X.m, kinds[i]), EBM_OK);
        if (kinds[i] == EBM_ESTIMATOR_PT) {
            const double ladder[2] = {0.5, 1.0};
            ck_assert_int_eq(ebm_estimator_set_ladder(e, 2, ladder), EBM_OK);
        }
        ck_assert_int_eq(ebm_estimator_set_double(e, EBM_ESTIMATOR_SAMPLER_OPTION +
                                                         EBM_SAMPLER_GLOBAL_PROB, 0.5),
                         EBM_OK);
        ck_assert_int_eq(ebm_estimator_set_proposal(e, 2, rows, MAXW, EPS), EBM_OK);
        rc = ebm_estimator_gradient(e, rng, 2, rows, MAXW, grad);
        CHECK(rc == EBM_OK, "kind %d: %s", kinds[i], ebm_estimator_errmsg(e));
        ebm_estimator_destroy(e);
    }
    free(grad);
    /* p = 0 after a proposal: the bits of a sampler without the option */
    ebm_sampler_t *plain = NULL;
    ck_assert_int_eq(ebm_sampler_create(&plain, X.m, EBM_SAMPLER_GIBBS), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_double(s, EBM_SAMPLER_GLOBAL_PROB, 0.0), EBM_OK);
    float a[6 * MAXW], b[6 * MAXW];
    memcpy(a, x0, sizeof a);
    memcpy(b, x0, sizeof b);
    ebm_rng_t *r1 = t_rng(9, 1), *r2 = t_rng(9, 1);
    for (int t = 0; t < 5; t++) {
        ck_assert_int_eq(ebm_sampler_step(s, r1, n, a, w), EBM_OK);
        ck_assert_int_eq(ebm_sampler_step(plain, r2, n, b, w), EBM_OK);
    }
    CHECK(memcmp(a, b, sizeof a) == 0 && t_rng_hash(r1) == t_rng_hash(r2),
          "p = 0 changed the draws");
    CHECK(isnan(ebm_sampler_stat(s, EBM_STAT_GLOBAL_ACCEPT_RATE)) &&
              isnan(ebm_sampler_stat(s, EBM_STAT_GLOBAL_BOTH_RATE)),
          "global statistics without global moves");
    ebm_rng_destroy(r1);
    ebm_rng_destroy(r2);
    ebm_sampler_destroy(plain);
    ebm_sampler_destroy(s);
    ebm_rng_destroy(rng);
    ebm_model_destroy(X.m);
    FINISH();
}
END_TEST

/* EBM_SAMPLER_TEMPERING: chains started in the product of the replicas'
 * exact laws (betas 0.5 and 1, p_b ~ exp(-b E)) are still in it after one
 * step with global moves of the beta = 1 replicas (P_GLOBAL; they follow
 * the tempering step): each replica's rows fit its law by chi-square
 * (alpha 1e-6 / 2); the twin (q dropped) moves the beta = 1 rows off pi. */
START_TEST(tempering_law)
{
    exact X;
    exact_init(&X, &SPECS[_i]);
    const int S = X.S;
    const int64_t chains = t_scaled(20000), w = X.w;
    const double betas[2] = {0.5, 1.0}, alpha = 1e-6 / 2;
    double law[2][MAXS];
    for (int b = 0; b < 2; b++) {
        double z = 0.0;
        for (int k = 0; k < S; k++) {
            law[b][k] = exp(-betas[b] * (X.e[k] - X.e[0]));
            z += law[b][k];
        }
        for (int k = 0; k < S; k++) {
            law[b][k] /= z;
        }
    }
    float *x = t_floats(2 * chains * w);
    double cnt[2][MAXS];
    int twin_fails = 0;
    for (int twin = 0; twin < 2; twin++) {
        ebm_sampler_t *s = NULL;
        ck_assert_int_eq(ebm_sampler_create(&s, X.m, EBM_SAMPLER_TEMPERING), EBM_OK);
        ck_assert_int_eq(ebm_sampler_set_ladder(s, 2, betas), EBM_OK);
        ck_assert_int_eq(ebm_sampler_set_double(s, EBM_SAMPLER_GLOBAL_PROB, P_GLOBAL), EBM_OK);
        ck_assert_int_eq(ebm_sampler_set_proposal(s, X.sp->n_rows, &X.sp->rows[0][0], MAXW, EPS),
                         EBM_OK);
        ebm__sampler_set_twin_global(s, twin);
        uint64_t st = 800 + (uint64_t)_i;
        for (int64_t r = 0; r < 2 * chains; r++) { /* exact draws by the inverse CDF */
            double u = t_uniform(&st), c = 0.0;
            int k = 0;
            while (k < S - 1 && (c += law[r % 2][k]) <= u) {
                k++;
            }
            memcpy(x + r * w, X.x + k * w, (size_t)w * sizeof *x);
        }
        ebm_rng_t *rng = t_rng(810 + (uint64_t)_i, (uint64_t)twin);
        ck_assert_int_eq(ebm_sampler_step(s, rng, 2 * chains, x, w), EBM_OK);
        const double acc = ebm_sampler_stat(s, EBM_STAT_GLOBAL_ACCEPT_RATE);
        T_ASSERT_MSG(acc > 0.0 && acc <= 1.0, "%s: global acceptance %g", X.sp->name, acc);
        memset(cnt, 0, sizeof cnt);
        for (int64_t r = 0; r < 2 * chains; r++) {
            cnt[r % 2][code_of(&X, x + r * w)] += 1.0;
        }
        for (int b = 0; b < 2; b++) {
            ref_gof g = ref_chisq(cnt[b], law[b], S, (double)chains);
            if (twin == 0) {
                T_ASSERT_MSG(g.impossible == 0.0 && g.p >= alpha,
                             "%s replica %d: chi2 %.2f, %d df, p = %.3g", X.sp->name, b, g.stat,
                             g.df, g.p);
            } else if (b == 1) {
                twin_fails += ref_gof_fails(g, alpha);
                T_VLOG("global: %s: tempering twin's beta = 1 rows: chi2 %.1f, %d df\n",
                       X.sp->name, g.stat, g.df);
            }
        }
        ebm_rng_destroy(rng);
        ebm_sampler_destroy(s);
    }
    ck_assert_msg(twin_fails > 0, "%s: the tempering twin was not detected", X.sp->name);
    free(x);
    ebm_model_destroy(X.m);
}
END_TEST

/* Row r's draws depend on its stream row only: the first rows of a step
 * of 2n rows equal a step of those n rows (single and coupled). */
START_TEST(rows_independent)
{
    exact X;
    exact_init(&X, &SPECS[3]);
    const int64_t n = 50, w = X.w;
    float *x = t_floats(2 * n * w), *y = t_floats(2 * n * w);
    float *xs = t_floats(n * w), *ys = t_floats(n * w);
    t_fill_states(X.m, 2 * n, x, w, 5);
    t_fill_states(X.m, 2 * n, y, w, 6);
    memcpy(xs, x, (size_t)(n * w) * sizeof *x);
    memcpy(ys, y, (size_t)(n * w) * sizeof *y);
    ebm_sampler_t *s = global_sampler(&X, 0.5, 0);
    for (int coupled = 0; coupled < 2; coupled++) {
        ebm_rng_t *r1 = t_rng(12, 0), *r2 = t_rng(12, 0);
        for (int t = 0; t < 3; t++) {
            if (coupled) {
                ck_assert_int_eq(ebm_sampler_coupled_step(s, r1, 2 * n, x, w, y, w, NULL), 0);
                ck_assert_int_eq(ebm_sampler_coupled_step(s, r2, n, xs, w, ys, w, NULL), 0);
            } else {
                ck_assert_int_eq(ebm_sampler_step(s, r1, 2 * n, x, w), 0);
                ck_assert_int_eq(ebm_sampler_step(s, r2, n, xs, w), 0);
            }
        }
        ck_assert(memcmp(x, xs, (size_t)(n * w) * sizeof *x) == 0);
        ck_assert(memcmp(y, ys, (size_t)(n * w) * sizeof *y) == 0);
        ebm_rng_destroy(r1);
        ebm_rng_destroy(r2);
    }
    ebm_sampler_destroy(s);
    free(x);
    free(y);
    free(xs);
    free(ys);
    ebm_model_destroy(X.m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* (i) bounded free energies, (j) the decisions they make                   */
/* ------------------------------------------------------------------------ */

/* Models larger than the enumerated ones, whose summed-out layers are
 * binary or spin, with weights and biases uniform in [-scale, scale]; at
 * scale 30 the inputs reach hundreds, where e^-|a| underflows float. */
typedef struct bspec {
    int nl;
    int64_t sizes[4];
    int vis, hid;
    double scale;
} bspec;

static const bspec BSPECS[] = {
    {2, {37, 13}, B_, B_, 0.3}, {2, {37, 13}, B_, B_, 3.0},  {2, {21, 70}, S_, S_, 1.0},
    {2, {19, 11}, B_, B_, 30.0}, {3, {19, 13, 9}, B_, B_, 1.0}, {4, {9, 7, 12, 5}, S_, S_, 2.0},
};
enum { N_BSPECS = sizeof BSPECS / sizeof BSPECS[0] };

static ebm_model_t *bspec_model(int i)
{
    const bspec *b = &BSPECS[i];
    ebm_model_t *m = t_model(b->nl, b->sizes, b->vis, b->hid);
    t_random_params(m, (uint64_t)(70 + i), b->scale);
    return m;
}

/* The largest |bounded - exact| / bound over 300 random states (two
 * chunks' worth) of BSPECS[i], the odd layers summed out; also the
 * largest bound. */
static double bound_ratio(int i, double *largest)
{
    ebm_model_t *m = bspec_model(i);
    const int64_t n = 300, w = ebm_model_state_width(m), nl = BSPECS[i].nl;
    uint32_t odd = 0;
    for (int64_t l = 1; l < nl; l += 2) {
        odd |= 1u << l;
    }
    float *x = t_floats(n * w);
    t_fill_states(m, n, x, w, (uint64_t)(90 + i));
    double *f = t_calloc((size_t)n, sizeof *f), *fb = t_calloc((size_t)n, sizeof *fb);
    double *err = t_calloc((size_t)n, sizeof *err);
    double *work = t_calloc((size_t)ebm__free_energy_scratch(m, EBM__CHUNK), sizeof *work);
    double worst = 0.0;
    *largest = 0.0;
    for (int64_t r0 = 0; r0 < n; r0 += EBM__CHUNK) {
        const int64_t rows = n - r0 < EBM__CHUNK ? n - r0 : EBM__CHUNK;
        ebm__free_energy_chunk(m, odd, rows, x + r0 * w, w, f + r0, work);
        ebm__free_energy_bounded(m, odd, rows, x + r0 * w, w, fb + r0, err + r0, work);
    }
    for (int64_t r = 0; r < n; r++) {
        ck_assert(isfinite(f[r]) && isfinite(fb[r]) && err[r] > 0.0);
        worst = fmax(worst, fabs(fb[r] - f[r]) / err[r]);
        *largest = fmax(*largest, err[r]);
    }
    free(work);
    free(err);
    free(fb);
    free(f);
    free(x);
    ebm_model_destroy(m);
    return worst;
}

/* (i) Every row's bounded free energy is within its bound of the exact
 * path's (observed: at most 0.11 of the bound), and the bounds are small
 * (at most 1e-4; observed 3e-6 to 2e-5); with the bounds scaled by 1e-6,
 * the broken twin, some row is outside them (observed: by 4e4 to 1e5
 * times its bound). */
START_TEST(free_energy_bound)
{
    double largest;
    const double worst = bound_ratio(_i, &largest);
    ck_assert_msg(worst <= 1.0, "model %d: |bounded - exact| is %.3g of the bound", _i, worst);
    ck_assert_msg(largest < 1e-4, "model %d: a bound of %.3g", _i, largest);
    const double scale = ebm__energy_set_bound_scale(1e-6);
    const double twin = bound_ratio(_i, &largest);
    ebm__energy_set_bound_scale(scale);
    ck_assert_msg(twin > 1.0, "model %d: the twin's bounds held (%.3g)", _i, twin);
}
END_TEST

/* Four single and four coupled steps of 300 rows with global moves
 * (probability 0.5, a proposal of 5 random rows at flip probability 0.05,
 * the chains started at the proposal rows so that moves are accepted):
 * the rows, met flags and statistics, hashed. */
static uint64_t global_run(ebm_model_t *m, int plain, int twin, int64_t *rechecks)
{
    enum { N = 300, P = 5 };
    const int64_t w = ebm_model_state_width(m);
    float *rows = t_floats(P * w), *x = t_floats(N * w), *y = t_floats(N * w);
    uint8_t met[N];
    t_fill_states(m, P, rows, w, 3);
    for (int64_t r = 0; r < N; r++) {
        memcpy(x + r * w, rows + (r % P) * w, (size_t)w * sizeof *x);
        memcpy(y + r * w, rows + ((r + 2) % P) * w, (size_t)w * sizeof *y);
    }
    ebm_sampler_t *s = NULL;
    ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_GIBBS), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_double(s, EBM_SAMPLER_GLOBAL_PROB, 0.5), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_proposal(s, P, rows, w, 0.05), EBM_OK);
    ebm__sampler_set_plain(s, plain);
    ebm__sampler_set_twin_global(s, twin);
    ebm_rng_t *rng = t_rng(44, 1);
    uint64_t h = 0;
    double accepted = 0.0;
    for (int t = 0; t < 8; t++) {
        if (t < 4) {
            ck_assert_int_eq(ebm_sampler_step(s, rng, N, x, w), EBM_OK);
        } else {
            ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, N, x, w, y, w, met), EBM_OK);
            h ^= t_checksum(met, sizeof met) + (uint64_t)t;
        }
        accepted += ebm_sampler_stat(s, EBM_STAT_GLOBAL_ACCEPT_RATE);
        h = h * 31 + t_checksum(x, (size_t)(N * w) * sizeof *x);
        h = h * 31 + t_checksum(y, (size_t)(N * w) * sizeof *y);
    }
    ck_assert_msg(accepted > 0.1, "global moves accepted at a mean rate of %g", accepted / 8);
    *rechecks = ebm__sampler_energy_rechecks(s);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    free(y);
    free(x);
    free(rows);
    return h;
}

/* (j) The global moves decide from the bounded free energies as from the
 * exact ones: the same bytes as the plain path (every free energy exact),
 * and as with bounds so wide that every chunk is computed again by the
 * exact path (rechecks counted); the twin whose proposals' free energies
 * are moved outside their bounds gives other bytes. */
START_TEST(bounded_decisions)
{
    ebm_model_t *m = bspec_model(_i);
    int64_t rechecks = 0, plain_rechecks = 0, wide_rechecks = 0;
    const uint64_t h = global_run(m, 0, 0, &rechecks);
    ck_assert(global_run(m, 1, 0, &plain_rechecks) == h);
    ck_assert_int_eq(plain_rechecks, 0);
    const double scale = ebm__energy_set_bound_scale(1e30);
    const uint64_t wide = global_run(m, 0, 0, &wide_rechecks);
    ebm__energy_set_bound_scale(scale);
    ck_assert(wide == h);
    ck_assert_msg(wide_rechecks > rechecks, "wide bounds: %lld rechecks, against %lld",
                  (long long)wide_rechecks, (long long)rechecks);
    ck_assert_msg(global_run(m, 0, EBM__GLOBAL_TWIN_BOUND, &rechecks) != h,
                  "model %d: the twin with moved free energies gave the same bytes", _i);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* (h) allocation failures                                                  */
/* ------------------------------------------------------------------------ */

/* Each call below, with the N-th allocation failing for N = 1, 2, ...
 * until it succeeds: EBM_ENOMEM with nothing visible changed (rows,
 * generator, statistics, estimator, gradient), and the call repeated
 * without failure gives the reference results. Fresh handles each time,
 * so that their scratch must grow. */
enum { A_STEP, A_COUPLED, A_TEMPERING, A_SET_PROPOSAL, A_EST_PROPOSAL, A_GRADIENT, A_COUNT };
static const char *const A_NAMES[A_COUNT] = {"step", "coupled step", "tempering step",
                                             "ebm_sampler_set_proposal",
                                             "ebm_estimator_set_proposal (PT)", "UCD gradient"};
#define A_ROWS 16

typedef struct afx {
    exact *X;
    ebm_sampler_t *s;
    ebm_estimator_t *e;
    ebm_rng_t *rng;
    float x[A_ROWS * MAXW], y[A_ROWS * MAXW], grad[64];
} afx;

static void afx_setup(afx *f, exact *X, int which)
{
    memset(f, 0, sizeof *f);
    f->X = X;
    f->rng = t_rng(31, 7);
    t_fill_states(X->m, A_ROWS, f->x, X->w, 1);
    t_fill_states(X->m, A_ROWS, f->y, X->w, 2);
    t_sentinel(f->grad, sizeof f->grad);
    const float *rows = &X->sp->rows[0][0];
    const double ladder[2] = {0.5, 1.0};
    if (which <= A_SET_PROPOSAL) {
        f->s = global_sampler(X, 0.5, 0);
        if (which == A_TEMPERING) {
            ebm_sampler_destroy(f->s);
            ck_assert_int_eq(ebm_sampler_create(&f->s, X->m, EBM_SAMPLER_TEMPERING), EBM_OK);
            ck_assert_int_eq(ebm_sampler_set_ladder(f->s, 2, ladder), EBM_OK);
            ck_assert_int_eq(ebm_sampler_set_double(f->s, EBM_SAMPLER_GLOBAL_PROB, 0.5), EBM_OK);
            ck_assert_int_eq(ebm_sampler_set_proposal(f->s, 2, rows, MAXW, EPS), EBM_OK);
        }
        return;
    }
    ck_assert_int_eq(ebm_estimator_create(&f->e, X->m,
                                          which == A_GRADIENT ? EBM_ESTIMATOR_UCD
                                                              : EBM_ESTIMATOR_PT),
                     EBM_OK);
    if (which == A_EST_PROPOSAL) {
        ck_assert_int_eq(ebm_estimator_set_ladder(f->e, 2, ladder), EBM_OK);
    }
    ck_assert_int_eq(
        ebm_estimator_set_double(f->e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_GLOBAL_PROB,
                                 0.5),
        EBM_OK);
    ck_assert_int_eq(ebm_estimator_set_proposal(f->e, 1, rows, MAXW, EPS), EBM_OK);
}

static int afx_call(afx *f, int which)
{
    const int64_t w = f->X->w;
    const float *rows = &f->X->sp->rows[0][0];
    switch (which) {
    case A_STEP: return ebm_sampler_step(f->s, f->rng, A_ROWS, f->x, w);
    case A_COUPLED: return ebm_sampler_coupled_step(f->s, f->rng, A_ROWS, f->x, w, f->y, w, NULL);
    case A_TEMPERING: return ebm_sampler_step(f->s, f->rng, A_ROWS, f->x, w);
    case A_SET_PROPOSAL: {
        /* the new proposal, then a step that shows which proposal is set */
        int rc = ebm_sampler_set_proposal(f->s, 1, rows + MAXW, MAXW, 0.5);
        return rc != EBM_OK ? rc : ebm_sampler_step(f->s, f->rng, A_ROWS, f->x, w);
    }
    case A_EST_PROPOSAL: {
        int rc = ebm_estimator_set_proposal(f->e, 2, rows, MAXW, 0.5);
        return rc != EBM_OK ? rc : ebm_estimator_gradient(f->e, f->rng, 2, rows, MAXW, f->grad);
    }
    default: return ebm_estimator_gradient(f->e, f->rng, 2, rows, MAXW, f->grad);
    }
}

static uint64_t afx_hash(const afx *f)
{
    uint64_t h = t_checksum(f->x, sizeof f->x) ^ 3 * t_checksum(f->y, sizeof f->y) ^
                 5 * t_checksum(f->grad, sizeof f->grad) ^ 7 * t_rng_hash(f->rng);
    if (f->s != NULL) {
        double st[EBM_STAT_COUNT];
        for (int i = 0; i < EBM_STAT_COUNT; i++) {
            st[i] = ebm_sampler_stat(f->s, i);
        }
        h ^= 11 * t_checksum(st, sizeof st);
    }
    if (f->e != NULL) {
        h ^= 13 * t_estimator_hash(f->e, f->X->m);
    }
    return h;
}

static void afx_free(afx *f)
{
    ebm_sampler_destroy(f->s);
    ebm_estimator_destroy(f->e);
    ebm_rng_destroy(f->rng);
}

START_TEST(alloc_failures)
{
    exact X;
    exact_init(&X, &SPECS[3]); /* the DBM: every part of the move */
    for (int which = 0; which < A_COUNT; which++) {
        afx f;
        afx_setup(&f, &X, which);
        ck_assert_int_eq(afx_call(&f, which), EBM_OK);
        const uint64_t ref = afx_hash(&f);
        afx_free(&f);
        long n = 1, failures = 0;
        for (;; n++) {
            afx_setup(&f, &X, which);
            const uint64_t before = afx_hash(&f);
            t_fault_arm(n);
            int rc = afx_call(&f, which);
            t_fault_disarm();
            if (!t_fault_fired()) {
                CHECK(rc == EBM_OK && afx_hash(&f) == ref, "%s: allocation %ld: %s", A_NAMES[which],
                      n, ebm_error_name(rc));
                afx_free(&f);
                break;
            }
            failures += rc == EBM_ENOMEM;
            CHECK(rc == EBM_ENOMEM || rc == EBM_OK, "%s: allocation %ld failed: %s",
                  A_NAMES[which], n, ebm_error_name(rc));
            if (rc == EBM_ENOMEM) {
                CHECK(afx_hash(&f) == before, "%s: allocation %ld failed and something changed",
                      A_NAMES[which], n);
                rc = afx_call(&f, which);
            }
            CHECK(rc == EBM_OK && afx_hash(&f) == ref,
                  "%s: after allocation %ld failed, the call gave other results", A_NAMES[which],
                  n);
            afx_free(&f);
            ck_assert(n < 10000);
        }
        T_VLOG("global: %s: %ld allocations, %ld refused with EBM_ENOMEM\n", A_NAMES[which], n - 1,
               failures);
        CHECK(failures > 0, "%s: no allocation failure was reported", A_NAMES[which]);
    }
    ebm_model_destroy(X.m);
    FINISH();
}
END_TEST

Suite *ebm_global_suite(void)
{
    const double slow = t_level() >= 2 ? 20.0 : 1.0;
    const t_test tests[] = {
        {"law", global_law, N_SPECS, 30 * slow, NULL, NULL},
        {"coupled marginals", coupled_marginals, N_SPECS, 30 * slow, NULL, NULL},
        {"met chains", met_stay_met, N_SPECS, 10 * slow, NULL, NULL},
        {"both accept", both_accept, N_SPECS, 30 * slow, NULL, NULL},
        {"ucd unbiased", ucd_unbiased, N_SPECS, 60 * slow, NULL, NULL},
        {"tempering", tempering_law, N_SPECS, 30 * slow, NULL, NULL},
        {"rows", rows_independent, 0, 10 * slow, NULL, NULL},
        {"free energy bound", free_energy_bound, N_BSPECS, 30 * slow, NULL, NULL},
        {"bounded decisions", bounded_decisions, N_BSPECS, 30 * slow, NULL, NULL},
        {"bad input", bad_input, 0, 10 * slow, t_soft_setup, NULL},
        {"allocation failures", alloc_failures, 0, 30 * slow, t_soft_setup, NULL},
    };
    return t_suite("global", tests, sizeof tests / sizeof tests[0]);
}
