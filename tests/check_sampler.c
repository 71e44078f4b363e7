/*
 * Samplers and coupled chains (TESTING.md, test classes 2 and 3).
 *
 * Every kernel is written down here a second time, in double precision, as
 * an exact transition matrix on a tiny model (binary and spin RBM 3x2,
 * binary and spin DBM 2-2-2, and posterior variants with clamped layers),
 * straight from include/ebm.h and the papers it cites:
 *
 *  - EBM_SAMPLER_GIBBS: block B1 = the free even layers (or the free odd
 *    ones if no even layer is free) drawn given the rest, then block B2 = the
 *    free odd layers given the new B1:
 *        P(x, y) = prod_{l in B1} p(y_l | x) * prod_{l in B2} p(y_l | y)
 *  - EBM_SAMPLER_MH_UNIFORM (Taniguchi et al. 2023, eq. 14): a uniform
 *    independent proposal z over the free units, accepted with probability
 *    min(1, exp(E(x) - E(z))).
 *  - coupled Gibbs steps (Qiu et al. 2020, Algs. 1, 3, 4 and appendix A):
 *    both couplings meet with probability sum_a min(p1(a), p2(a)) over B1
 *    configurations a. Off the meeting event EBM_COUPLING_MAXIMAL draws x's
 *    B1 from the residual r1 = (p1 - min)/TV and y's from r2 independently,
 *    then each B2 independently. EBM_COUPLING_CRN redraws both residuals by
 *    rejection from proposals made of common uniforms (unit by unit the
 *    comonotone coupling of two Bernoulli variables) with independent
 *    acceptance uniforms, and draws B2 from common uniforms too; its law is
 *    computed in closed form by ref_coupled_gibbs below.
 *  - coupled MH (Taniguchi Algs. 3 and 4): a common proposal z and a common
 *    uniform u: x moves iff u < A_x(z), y iff u < A_y(z). This is maximal
 *    too: the chains meet with probability sum_z min(P(x,z), P(y,z)).
 *
 * Then (1) the reference kernels leave the exact pi invariant (||pi P -
 * pi||_1 <= 1e-12) and MH is reversible; (2) the library's draws follow the
 * reference by chi-square tests at the 1 - 1e-6 / (number of tests) level,
 * each paired with a broken twin (a bias sign flipped, another pair's
 * law) that must fail; (3) coupled steps: both marginals, the full joint
 * law of (x', y'), the meeting frequency, the mean number of rejection
 * tries, met flags, rows met on entry, clamped layers that never move;
 * (4) the law of the meeting time from the product chain; (5) a GRBM whose
 * Gaussian block is coupled by the reflection-maximal coupling; (6)
 * determinism and row independence, statistics; (7) bad input.
 *
 * The statistical tests use fixed seeds; each compares with the exact law
 * at a threshold that a correct implementation crosses with probability
 * about 1e-6 per test function.
 *
 * EBM_TEST_LEVEL=2 multiplies the sample sizes by 10. EBM_TEST_VERBOSE=1
 * prints the statistics of every test on stderr.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"
#include "ebm_internal.h" /* the MH energy paths */

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B_ EBM_UNITS_BINARY
#define S_ EBM_UNITS_SPIN
#define G_ EBM_UNITS_GAUSSIAN

#define MAXW 8 /* widest tiny model */
#define MAXL 4 /* most layers of a tiny model */
#define NOPT (EBM_SAMPLER_ITERATION + 1)

static int verbose(void)
{
    const char *s = getenv("EBM_TEST_VERBOSE");
    return s != NULL && atoi(s) > 0;
}

#define VLOG(...)                                                                                  \
    do {                                                                                           \
        if (verbose()) {                                                                           \
            fprintf(stderr, __VA_ARGS__);                                                          \
        }                                                                                          \
    } while (0)

/* Check's own ck_assert macros record a checkpoint through a pipe on every
 * call, which costs seconds in loops over millions of draws: these only
 * call into Check when they fail. */
#define T_ASSERT_MSG(cond, ...)                                                                    \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            ck_abort_msg(__VA_ARGS__);                                                             \
        }                                                                                          \
    } while (0)
#define T_ASSERT(cond) T_ASSERT_MSG(cond, "Assertion '%s' failed", #cond)

/* Sample sizes: the make-check size, times 10 at EBM_TEST_LEVEL=2. */
static int64_t scaled(int64_t n1) { return t_level() >= 2 ? 10 * n1 : n1; }

static void *xmalloc(size_t n)
{
    void *p = malloc(n > 0 ? n : 1);
    T_ASSERT(p != NULL);
    return p;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n > 0 ? n : 1, size);
    T_ASSERT(p != NULL);
    return p;
}

static ebm_rng_t *new_rng(uint64_t seed)
{
    ebm_rng_t *r = NULL;
    ck_assert_int_eq(ebm_rng_create(&r, seed, 0), EBM_OK);
    return r;
}

static ebm_sampler_t *new_sampler(const ebm_model_t *m, int kind, uint32_t clamp, int coupling)
{
    ebm_sampler_t *s = NULL;
    int rc = ebm_sampler_create(&s, m, kind);
    T_ASSERT_MSG(rc == EBM_OK, "ebm_sampler_create(kind %d): %s", kind, ebm_model_errmsg(m));
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, clamp), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_COUPLING, coupling), EBM_OK);
    return s;
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */
/* ------------------------------------------------------------------------ */

/*
 * Q(a, x) = Gamma(a, x) / Gamma(a), the upper regularised incomplete gamma
 * function (Numerical Recipes, 2nd ed., 6.2): the series for P = 1 - Q when
 * x < a + 1, where Q is not small, and the modified Lentz continued fraction
 * for Q otherwise, where it converges fast and keeps full relative accuracy
 * in the far tail. Both are accurate to ~1e-14, far past what a test at
 * p = 1e-8 needs, so comparing the p-value Q(df/2, chi2/2) with alpha is
 * the same as comparing chi2 with the exact 1 - alpha quantile (the
 * Wilson-Hilferty approximation would be off by a few percent at small df
 * in this tail). chi_selfcheck compares it with table values.
 */
static double gamma_q(double a, double x)
{
    if (!(x > 0.0)) {
        return 1.0;
    }
    const double lpre = -x + a * log(x) - lgamma(a);
    if (x < a + 1.0) {
        double ap = a, del = 1.0 / a, sum = del;
        for (int i = 0; i < 100000 && fabs(del) > fabs(sum) * 1e-17; i++) {
            ap += 1.0;
            del *= x / ap;
            sum += del;
        }
        double p = sum * exp(lpre);
        return p >= 1.0 ? 0.0 : 1.0 - p;
    }
    const double tiny = 1e-300;
    double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
    for (int i = 1; i < 100000; i++) {
        double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < tiny) {
            d = tiny;
        }
        c = b + an / c;
        if (fabs(c) < tiny) {
            c = tiny;
        }
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-16) {
            break;
        }
    }
    return exp(lpre) * h;
}

static double phi_cdf(double z) { return 0.5 * erfc(-z / sqrt(2.0)); }

typedef struct gof {
    double stat;
    int df;
    double p;
    double impossible; /* draws that fell where the law puts no mass */
} gof;

typedef struct cell {
    double e, o;
} cell;

static int cell_cmp(const void *a, const void *b)
{
    double x = ((const cell *)a)->e, y = ((const cell *)b)->e;
    return (x > y) - (x < y);
}

/*
 * Chi-square goodness of fit of counts obs[0..k) to the law prob[0..k) (N
 * draws). Cells whose expected count is below 1e-6 are structural zeros: a
 * draw there is counted as impossible (and makes the test fail). The other
 * cells are sorted by expected count and the smallest merged until every
 * group expects at least 5 (Cochran's rule), a last small group going into
 * the one before it.
 */
static gof chisq(const double *obs, const double *prob, int64_t k, double n)
{
    gof g = {0.0, 0, 1.0, 0.0};
    cell *c = xmalloc((size_t)k * sizeof *c);
    int64_t nc = 0;
    for (int64_t i = 0; i < k; i++) {
        double e = n * prob[i];
        if (e < 1e-6) {
            g.impossible += obs[i];
        } else {
            c[nc].e = e;
            c[nc].o = obs[i];
            nc++;
        }
    }
    qsort(c, (size_t)nc, sizeof *c, cell_cmp);
    double ge = 0.0, go = 0.0, last_e = 0.0, last_o = 0.0;
    int groups = 0;
    for (int64_t i = 0; i < nc; i++) {
        ge += c[i].e;
        go += c[i].o;
        if (ge >= 5.0) {
            if (groups > 0) {
                g.stat += (last_o - last_e) * (last_o - last_e) / last_e;
            }
            last_e = ge;
            last_o = go;
            groups++;
            ge = go = 0.0;
        }
    }
    if (groups == 0) {
        last_e = ge;
        last_o = go;
        groups = last_e > 0.0 ? 1 : 0;
    } else {
        last_e += ge;
        last_o += go;
    }
    if (groups > 0) {
        g.stat += (last_o - last_e) * (last_o - last_e) / last_e;
    }
    g.df = groups - 1;
    g.p = g.df > 0 ? gamma_q(0.5 * g.df, 0.5 * g.stat) : 1.0;
    free(c);
    return g;
}

static int gof_fails(gof g, double alpha) { return g.impossible > 0.0 || g.p < alpha; }

static gof expect_fit(const char *what, const double *obs, const double *prob, int64_t k, double n,
                      double alpha)
{
    gof g = chisq(obs, prob, k, n);
    VLOG("  %-58s chi2 %9.2f df %4d p %.3g\n", what, g.stat, g.df, g.p);
    T_ASSERT_MSG(g.impossible == 0.0, "%s: %.0f draws where the exact law has no mass", what,
                 g.impossible);
    T_ASSERT_MSG(g.p >= alpha, "%s: chi2 %.2f with %d df, p = %.3g < %.3g", what, g.stat, g.df, g.p,
                 alpha);
    return g;
}

/* z-score of k successes in n trials with probability p (p in {0, 1}: 0 if
 * k is what it must be, else infinity). */
static double binom_z(double k, double n, double p)
{
    if (p <= 1e-15 || p >= 1.0 - 1e-15) {
        return fabs(k - n * p) < 0.5 ? 0.0 : INFINITY;
    }
    return (k - n * p) / sqrt(n * p * (1.0 - p));
}

/* Table values of the chi-square upper quantiles check gamma_q. */
START_TEST(chi_selfcheck)
{
    static const struct {
        int df;
        double x, p;
    } tab[] = {{1, 23.928127, 1e-6},   {1, 3.841459, 0.05},    {2, 13.815511, 0.001},
               {10, 29.588298, 0.001}, {30, 59.702660, 0.001}, {100, 149.449252, 0.001},
               {5, 1.145476, 0.95}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        double p = gamma_q(0.5 * tab[i].df, 0.5 * tab[i].x);
        T_ASSERT_MSG(fabs(p - tab[i].p) < 1e-3 * tab[i].p, "Q(df %d, %g) = %.8g, table %.8g",
                     tab[i].df, tab[i].x, p, tab[i].p);
    }
    /* Merging: 3 big cells and 100 cells expecting 1 each, which go in
     * groups of 5: 23 groups, a perfect fit. */
    double prob[103], obs[103];
    for (int i = 0; i < 103; i++) {
        prob[i] = i < 3 ? 0.3 : 0.1 / 100;
        obs[i] = i < 3 ? 300 : 1;
    }
    gof g = chisq(obs, prob, 103, 1000);
    T_ASSERT(g.df == 22 && g.stat == 0.0 && g.p == 1.0 && g.impossible == 0);
    prob[5] = 0.0;
    g = chisq(obs, prob, 103, 1000);
    T_ASSERT(g.impossible == 1.0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The reference: a tiny model in double precision                          */
/* ------------------------------------------------------------------------ */

typedef struct tref {
    int nl, width;
    int n[MAXL], off[MAXL], units[MAXL];
    double W[MAXL][16]; /* W_l, n_{l-1} x n_l row-major, l >= 1 */
    double b[MAXL][MAXW];
    double logvar[MAXW];
    uint32_t clamp;
    int ndisc, disc[MAXW]; /* the discrete columns: enumerated */
    int S;                 /* 2^ndisc states */
    double base[MAXW];     /* values of the Gaussian columns in every state */
    int layer_of[MAXW], unit_of[MAXW];
} tref;

static double sigm(double a) { return a >= 0 ? 1.0 / (1.0 + exp(-a)) : exp(a) / (1.0 + exp(a)); }

/* Read the model's parameters through the public layout only. */
static void ref_load(tref *R, const ebm_model_t *m, uint32_t clamp, const float *gauss)
{
    memset(R, 0, sizeof *R);
    R->nl = (int)ebm_model_num_layers(m);
    R->width = (int)ebm_model_state_width(m);
    T_ASSERT(R->nl <= MAXL && R->width <= MAXW);
    int64_t np = ebm_model_param_count(m);
    float *p = xmalloc((size_t)np * sizeof *p);
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    int64_t o, rows, cols;
    for (int l = 0; l < R->nl; l++) {
        R->n[l] = (int)ebm_model_layer_size(m, l);
        R->off[l] = (int)ebm_model_layer_offset(m, l);
        R->units[l] = ebm_model_layer_units(m, l);
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, l, &o, &rows, &cols), EBM_OK);
        for (int64_t j = 0; j < cols; j++) {
            R->b[l][j] = p[o + j];
        }
        if (l >= 1) {
            ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_WEIGHT, l, &o, &rows, &cols),
                             EBM_OK);
            T_ASSERT(rows * cols <= 16);
            for (int64_t i = 0; i < rows * cols; i++) {
                R->W[l][i] = p[o + i];
            }
        }
        for (int j = 0; j < R->n[l]; j++) {
            int col = R->off[l] + j;
            R->layer_of[col] = l;
            R->unit_of[col] = j;
            if (R->units[l] == G_) {
                R->base[col] = gauss != NULL ? gauss[col] : 0.0;
            } else {
                R->disc[R->ndisc++] = col;
            }
        }
    }
    if (R->units[0] == G_) {
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &o, &rows, &cols), EBM_OK);
        for (int64_t i = 0; i < cols; i++) {
            R->logvar[i] = p[o + i];
        }
    }
    R->clamp = clamp;
    R->S = 1 << R->ndisc;
    free(p);
}

static int ref_up_bit(double v) { return v > 0.5; }

static void ref_row(const tref *R, int k, double *x)
{
    for (int c = 0; c < R->width; c++) {
        x[c] = R->base[c];
    }
    for (int i = 0; i < R->ndisc; i++) {
        int col = R->disc[i], bit = k >> i & 1;
        x[col] = R->units[R->layer_of[col]] == S_ ? (bit ? 1.0 : -1.0) : (double)bit;
    }
}

static void ref_row_f(const tref *R, int k, float *x)
{
    double d[MAXW];
    ref_row(R, k, d);
    for (int c = 0; c < R->width; c++) {
        x[c] = (float)d[c];
    }
}

static int ref_index(const tref *R, const double *x)
{
    int k = 0;
    for (int i = 0; i < R->ndisc; i++) {
        k |= ref_up_bit(x[R->disc[i]]) << i;
    }
    return k;
}

/* The state index of a float row, or -1 if a value is not a valid value of
 * its unit or a Gaussian (clamped) column moved. */
static int ref_code(const tref *R, const float *x)
{
    for (int c = 0; c < R->width; c++) {
        int u = R->units[R->layer_of[c]];
        float v = x[c];
        int ok = u == B_   ? (v == 0.0f || v == 1.0f)
                 : u == S_ ? (v == -1.0f || v == 1.0f)
                           : v == (float)R->base[c];
        if (!ok) {
            return -1;
        }
    }
    double d[MAXW];
    for (int c = 0; c < R->width; c++) {
        d[c] = x[c];
    }
    return ref_index(R, d);
}

static int ref_same_clamped(const tref *R, const double *x, const double *y)
{
    for (int c = 0; c < R->width; c++) {
        if ((R->clamp >> R->layer_of[c] & 1u) && x[c] != y[c]) {
            return 0;
        }
    }
    return 1;
}

static int ref_same_clamped_k(const tref *R, int a, int b)
{
    double x[MAXW], y[MAXW];
    ref_row(R, a, x);
    ref_row(R, b, y);
    return ref_same_clamped(R, x, y);
}

/* Input of unit j of layer l from its neighbours in x (ebm.h:
 * ebm_model_layer_input); for a Gaussian layer 0, its conditional mean. */
static double ref_input(const tref *R, int l, const double *x, int j)
{
    double a = R->b[l][j];
    if (l >= 1) {
        for (int i = 0; i < R->n[l - 1]; i++) {
            double xi = x[R->off[l - 1] + i];
            if (l == 1 && R->units[0] == G_) {
                xi *= exp(-R->logvar[i]);
            }
            a += xi * R->W[l][i * R->n[l] + j];
        }
    }
    if (l + 1 < R->nl) {
        for (int k = 0; k < R->n[l + 1]; k++) {
            a += R->W[l + 1][j * R->n[l + 1] + k] * x[R->off[l + 1] + k];
        }
    }
    return a;
}

/* p(unit = 1 or +1 | input a) */
static double ref_up(const tref *R, int l, double a)
{
    return R->units[l] == S_ ? sigm(2.0 * a) : sigm(a);
}

static double ref_energy(const tref *R, const double *x)
{
    double e = 0.0;
    for (int l = 0; l < R->nl; l++) {
        for (int j = 0; j < R->n[l]; j++) {
            double v = x[R->off[l] + j];
            if (R->units[l] == G_) {
                double d = v - R->b[l][j];
                e += 0.5 * d * d * exp(-R->logvar[j]);
            } else {
                e -= R->b[l][j] * v;
            }
        }
    }
    for (int l = 1; l < R->nl; l++) {
        for (int i = 0; i < R->n[l - 1]; i++) {
            double xi = x[R->off[l - 1] + i];
            if (l == 1 && R->units[0] == G_) {
                xi *= exp(-R->logvar[i]);
            }
            for (int j = 0; j < R->n[l]; j++) {
                e -= xi * R->W[l][i * R->n[l] + j] * x[R->off[l] + j];
            }
        }
    }
    return e;
}

static uint32_t ref_free(const tref *R, int parity)
{
    uint32_t mask = 0;
    for (int l = parity; l < R->nl; l += 2) {
        mask |= 1u << l;
    }
    return mask & ~R->clamp;
}

static void ref_blocks(const tref *R, uint32_t *b1, uint32_t *b2)
{
    uint32_t e = ref_free(R, 0), o = ref_free(R, 1);
    *b1 = e != 0 ? e : o;
    *b2 = e != 0 ? o : 0;
}

static int ref_cols(const tref *R, uint32_t mask, int *cols)
{
    int c = 0;
    for (int l = 0; l < R->nl; l++) {
        if (mask >> l & 1u) {
            T_ASSERT_MSG(R->units[l] != G_, "the reference enumerates discrete free layers only");
            for (int j = 0; j < R->n[l]; j++) {
                cols[c++] = R->off[l] + j;
            }
        }
    }
    return c;
}

/* p(up) of each column of cols given the neighbours in src. */
static void ref_ups(const tref *R, const int *cols, int nc, const double *src, double *q)
{
    for (int i = 0; i < nc; i++) {
        int l = R->layer_of[cols[i]];
        q[i] = ref_up(R, l, ref_input(R, l, src, R->unit_of[cols[i]]));
    }
}

/* prod over cols of p(dst value | neighbours in src) */
static double ref_cols_prob(const tref *R, const int *cols, int nc, const double *src,
                            const double *dst)
{
    double q[MAXW], p = 1.0;
    ref_ups(R, cols, nc, src, q);
    for (int i = 0; i < nc; i++) {
        p *= ref_up_bit(dst[cols[i]]) ? q[i] : 1.0 - q[i];
    }
    return p;
}

/* Probability of configuration a (bit i = column i) under independent p(up)s. */
static double ref_config_prob(const double *q, int nc, int a)
{
    double p = 1.0;
    for (int i = 0; i < nc; i++) {
        p *= (a >> i & 1) ? q[i] : 1.0 - q[i];
    }
    return p;
}

static void ref_set_config(const tref *R, const int *cols, int nc, int a, double *x)
{
    for (int i = 0; i < nc; i++) {
        int bit = a >> i & 1;
        x[cols[i]] = R->units[R->layer_of[cols[i]]] == S_ ? (bit ? 1.0 : -1.0) : (double)bit;
    }
}

static double ref_gibbs(const tref *R, const double *x, const double *y)
{
    if (!ref_same_clamped(R, x, y)) {
        return 0.0;
    }
    uint32_t b1, b2;
    ref_blocks(R, &b1, &b2);
    int c1[MAXW], c2[MAXW];
    int n1 = ref_cols(R, b1, c1), n2 = ref_cols(R, b2, c2);
    return ref_cols_prob(R, c1, n1, x, y) * ref_cols_prob(R, c2, n2, y, y);
}

/* Configurations of the free units. */
static double ref_mh_states(const tref *R)
{
    uint32_t b1, b2;
    ref_blocks(R, &b1, &b2);
    int c[MAXW];
    return ldexp(1.0, ref_cols(R, b1 | b2, c));
}

static double ref_accept(const tref *R, const double *x, const double *z)
{
    return fmin(1.0, exp(ref_energy(R, x) - ref_energy(R, z)));
}

/* The kernel's transition matrix P[x * S + y]. */
static void ref_matrix(const tref *R, int kind, double *P)
{
    const int S = R->S;
    const double M = ref_mh_states(R);
    for (int k = 0; k < S; k++) {
        double x[MAXW], y[MAXW], off = 0.0;
        ref_row(R, k, x);
        for (int k2 = 0; k2 < S; k2++) {
            ref_row(R, k2, y);
            if (kind == EBM_SAMPLER_GIBBS) {
                P[k * S + k2] = ref_gibbs(R, x, y);
            } else if (k2 != k) {
                P[k * S + k2] = ref_same_clamped(R, x, y) ? ref_accept(R, x, y) / M : 0.0;
                off += P[k * S + k2];
            }
        }
        if (kind != EBM_SAMPLER_GIBBS) {
            P[k * S + k] = 1.0 - off;
        }
    }
}

/* pi over the states with the clamped values of state k0. */
static void ref_pi(const tref *R, int k0, double *pi)
{
    double emin = INFINITY, x[MAXW], z = 0.0;
    for (int k = 0; k < R->S; k++) {
        ref_row(R, k, x);
        emin = fmin(emin, ref_energy(R, x));
    }
    for (int k = 0; k < R->S; k++) {
        ref_row(R, k, x);
        pi[k] = ref_same_clamped_k(R, k, k0) ? exp(emin - ref_energy(R, x)) : 0.0;
        z += pi[k];
    }
    for (int k = 0; k < R->S; k++) {
        pi[k] /= z;
    }
}

/* Joint law of the pair of B1 draws unit by unit from common uniforms:
 * the comonotone coupling of Bernoulli(qx) and Bernoulli(qy). */
static double comono(double qx, double qy, int bx, int by)
{
    if (bx && by) {
        return fmin(qx, qy);
    }
    if (bx) {
        return fmax(0.0, qx - qy);
    }
    if (by) {
        return fmax(0.0, qy - qx);
    }
    return 1.0 - fmax(qx, qy);
}

/*
 * The exact law J[kx * S + ky] of one coupled Gibbs step from the states
 * kx0 (x) and ky0 (y), which have the same clamped values.
 *
 * Meeting: B1 = a for both with mass min(p1(a), p2(a)), then one B2 for
 * both. Off the meeting event (mass TV = 1 - sum_a min):
 *   MAXIMAL: B1 pair ~ r1(a) r2(b), B2 of each drawn independently.
 *   CRN: each rejection try proposes (a, b) from the comonotone coupling Q
 *   (common uniforms), x accepts a with f(a) = 1 - min(1, p2(a)/p1(a)) and
 *   y accepts b with g(b) = 1 - min(1, p1(b)/p2(b)), independently; a chain
 *   that has accepted stops proposing. With Both = Q f g, X-only = sum_b Q f
 *   (1-g), Y-only = sum_a Q (1-f) g, Neither = sum Q (1-f)(1-g), the pair
 *   accepted is (a, b) with probability
 *     [Both(a,b) + Xonly(a) r2(b) + Yonly(b) r1(a)] / (1 - Neither),
 *   and then both B2 come from common uniforms (comonotone unit by unit).
 * tries (NULL or [2]) receives the mean and variance of the number of
 * rejection tries of a pair that did not meet: MAXIMAL, y's tries alone,
 * Geometric(TV); CRN, a Geometric(1 - Neither) until one chain accepts, then
 * with probability (Xonly + Yonly)/(1 - Neither) a Geometric(TV) more for
 * the other (each chain accepts a try with probability TV).
 */
static void ref_coupled_gibbs(const tref *R, int coupling, int kx0, int ky0, double *J,
                              double *tries)
{
    const int S = R->S;
    double x0[MAXW], y0[MAXW];
    ref_row(R, kx0, x0);
    ref_row(R, ky0, y0);
    T_ASSERT(ref_same_clamped(R, x0, y0));
    uint32_t b1, b2;
    ref_blocks(R, &b1, &b2);
    int c1[MAXW], c2[MAXW];
    const int n1 = ref_cols(R, b1, c1), n2 = ref_cols(R, b2, c2);
    const int A = 1 << n1, D = 1 << n2;
    double ux[MAXW], uy[MAXW];
    ref_ups(R, c1, n1, x0, ux);
    ref_ups(R, c1, n1, y0, uy);
    double *p1 = xmalloc((size_t)A * sizeof *p1), *p2 = xmalloc((size_t)A * sizeof *p2);
    double *mn = xmalloc((size_t)A * sizeof *mn), *pb = xcalloc((size_t)A * A, sizeof *pb);
    double *vx = xmalloc((size_t)A * MAXW * sizeof *vx),
           *vy = xmalloc((size_t)A * MAXW * sizeof *vy);
    double ov = 0.0;
    for (int a = 0; a < A; a++) {
        p1[a] = ref_config_prob(ux, n1, a);
        p2[a] = ref_config_prob(uy, n1, a);
        mn[a] = fmin(p1[a], p2[a]);
        ov += mn[a];
        double xa[MAXW], ya[MAXW];
        memcpy(xa, x0, sizeof xa);
        memcpy(ya, y0, sizeof ya);
        ref_set_config(R, c1, n1, a, xa);
        ref_set_config(R, c1, n1, a, ya);
        ref_ups(R, c2, n2, xa, vx + a * MAXW); /* B2 p(up) after B1 = a */
        ref_ups(R, c2, n2, ya, vy + a * MAXW);
    }
    memset(J, 0, (size_t)S * S * sizeof *J);
    /* Meeting. */
    for (int a = 0; a < A; a++) {
        for (int d = 0; d < D; d++) {
            double z[MAXW];
            memcpy(z, x0, sizeof z);
            ref_set_config(R, c1, n1, a, z);
            ref_set_config(R, c2, n2, d, z);
            int s = ref_index(R, z);
            J[s * S + s] += mn[a] * ref_config_prob(vx + a * MAXW, n2, d);
        }
    }
    const double tv = 1.0 - ov;
    if (tries != NULL) {
        tries[0] = tries[1] = 0.0;
    }
    if (tv > 1e-14) {
        if (tries != NULL) {
            tries[0] = 1.0 / tv;
            tries[1] = (1.0 - tv) / (tv * tv);
        }
        if (coupling == EBM_COUPLING_MAXIMAL) {
            for (int a = 0; a < A; a++) {
                for (int b = 0; b < A; b++) {
                    pb[a * A + b] = (p1[a] - mn[a]) * (p2[b] - mn[b]) / tv;
                }
            }
        } else {
            double *q = xmalloc((size_t)A * A * sizeof *q), *f = xmalloc((size_t)A * sizeof *f);
            double *g = xmalloc((size_t)A * sizeof *g), *xo = xcalloc((size_t)A, sizeof *xo);
            double *yo = xcalloc((size_t)A, sizeof *yo), neither = 0.0;
            for (int a = 0; a < A; a++) {
                f[a] = p1[a] > 0.0 ? (p1[a] - mn[a]) / p1[a] : 0.0;
                g[a] = p2[a] > 0.0 ? (p2[a] - mn[a]) / p2[a] : 0.0;
            }
            for (int a = 0; a < A; a++) {
                for (int b = 0; b < A; b++) {
                    double qq = 1.0;
                    for (int i = 0; i < n1; i++) {
                        qq *= comono(ux[i], uy[i], a >> i & 1, b >> i & 1);
                    }
                    q[a * A + b] = qq;
                    xo[a] += qq * f[a] * (1.0 - g[b]);
                    yo[b] += qq * (1.0 - f[a]) * g[b];
                    neither += qq * (1.0 - f[a]) * (1.0 - g[b]);
                }
            }
            if (tries != NULL) {
                double xy = 0.0;
                for (int a = 0; a < A; a++) {
                    xy += xo[a] + yo[a];
                }
                const double p1s = 1.0 - neither, one = xy / p1s;
                const double e1 = 1.0 / p1s, e1s = (2.0 - p1s) / (p1s * p1s);
                const double e2 = 1.0 / tv, e2s = (2.0 - tv) / (tv * tv);
                tries[0] = e1 + one * e2;
                tries[1] = e1s + 2.0 * e1 * one * e2 + one * e2s - tries[0] * tries[0];
            }
            for (int a = 0; a < A; a++) {
                for (int b = 0; b < A; b++) {
                    double both = q[a * A + b] * f[a] * g[b];
                    double r1 = (p1[a] - mn[a]) / tv, r2 = (p2[b] - mn[b]) / tv;
                    pb[a * A + b] = tv * (both + xo[a] * r2 + yo[b] * r1) / (1.0 - neither);
                }
            }
            free(q);
            free(f);
            free(g);
            free(xo);
            free(yo);
        }
        for (int a = 0; a < A; a++) {
            for (int b = 0; b < A; b++) {
                if (pb[a * A + b] <= 0.0) {
                    continue;
                }
                for (int d = 0; d < D; d++) {
                    for (int e = 0; e < D; e++) {
                        double pde;
                        if (coupling == EBM_COUPLING_MAXIMAL) {
                            pde = ref_config_prob(vx + a * MAXW, n2, d) *
                                  ref_config_prob(vy + b * MAXW, n2, e);
                        } else {
                            pde = 1.0;
                            for (int i = 0; i < n2; i++) {
                                pde *= comono(vx[a * MAXW + i], vy[b * MAXW + i], d >> i & 1,
                                              e >> i & 1);
                            }
                        }
                        double zx[MAXW], zy[MAXW];
                        memcpy(zx, x0, sizeof zx);
                        memcpy(zy, y0, sizeof zy);
                        ref_set_config(R, c1, n1, a, zx);
                        ref_set_config(R, c2, n2, d, zx);
                        ref_set_config(R, c1, n1, b, zy);
                        ref_set_config(R, c2, n2, e, zy);
                        J[ref_index(R, zx) * S + ref_index(R, zy)] += pb[a * A + b] * pde;
                    }
                }
            }
        }
    }
    free(p1);
    free(p2);
    free(mn);
    free(pb);
    free(vx);
    free(vy);
}

/* The exact law of one coupled MH step (common proposal z, common u). */
static void ref_coupled_mh(const tref *R, int kx0, int ky0, double *J)
{
    const int S = R->S;
    const double M = ref_mh_states(R);
    double x0[MAXW], y0[MAXW], z[MAXW];
    ref_row(R, kx0, x0);
    ref_row(R, ky0, y0);
    T_ASSERT(ref_same_clamped(R, x0, y0));
    memset(J, 0, (size_t)S * S * sizeof *J);
    for (int k = 0; k < S; k++) {
        ref_row(R, k, z);
        if (!ref_same_clamped(R, x0, z)) {
            continue;
        }
        double ax = ref_accept(R, x0, z), ay = ref_accept(R, y0, z);
        if (kx0 == ky0) {
            J[k * S + k] += ax / M;
            J[kx0 * S + kx0] += (1.0 - ax) / M;
            continue;
        }
        double lo = fmin(ax, ay), hi = fmax(ax, ay);
        J[k * S + k] += lo / M;
        J[k * S + ky0] += (ax - lo) / M;
        J[kx0 * S + k] += (ay - lo) / M;
        J[kx0 * S + ky0] += (1.0 - hi) / M;
    }
}

/* variant: EBM_COUPLING_MAXIMAL, EBM_COUPLING_CRN, or V_MH */
enum { V_MAXIMAL = EBM_COUPLING_MAXIMAL, V_CRN = EBM_COUPLING_CRN, V_MH = 2, N_VARIANTS = 3 };
static const char *const VARIANT_NAME[N_VARIANTS] = {"Gibbs MAXIMAL", "Gibbs CRN", "MH_UNIFORM"};

static void ref_joint(const tref *R, int variant, int kx0, int ky0, double *J)
{
    if (variant == V_MH) {
        ref_coupled_mh(R, kx0, ky0, J);
    } else {
        ref_coupled_gibbs(R, variant, kx0, ky0, J, NULL);
    }
}

/* ------------------------------------------------------------------------ */
/* Tiny models                                                              */
/* ------------------------------------------------------------------------ */

typedef struct mspec {
    const char *name;
    int nl;
    int64_t sizes[3];
    int vis, hid;
    uint32_t clamp;
    uint64_t seed;
    double scale;
} mspec;

static const mspec MODELS[] = {
    {"binary RBM 3x2", 2, {3, 2, 0}, B_, B_, 0, 1101, 1.5},
    {"spin RBM 3x2", 2, {3, 2, 0}, S_, S_, 0, 1102, 0.8},
    {"binary DBM 2-2-2", 3, {2, 2, 2}, B_, B_, 0, 1103, 1.5},
    {"spin DBM 2-2-2", 3, {2, 2, 2}, S_, S_, 0, 1104, 0.8},
    {"binary DBM 2-2-2, visible clamped", 3, {2, 2, 2}, B_, B_, 1, 1105, 1.5},
    {"spin DBM 2-2-2, visible clamped", 3, {2, 2, 2}, S_, S_, 1, 1106, 0.8},
    {"binary RBM 3x2, visible clamped", 2, {3, 2, 0}, B_, B_, 1, 1107, 1.5},
    {"binary DBM 2-2-2, layer 1 clamped", 3, {2, 2, 2}, B_, B_, 2, 1108, 1.5},
    {"GRBM 2x2, visible clamped (posterior)", 2, {2, 2, 0}, G_, B_, 1, 1109, 1.0},
};
#define N_MODELS ((int)(sizeof MODELS / sizeof MODELS[0]))
#define FIRST_CLAMPED 4

/* Values of the clamped Gaussian visible units of the GRBM posterior. */
static const float GBASE[MAXW] = {0.7f, -1.3f};

/* The highest layer that moves: its unit 0's bias is set to 0.9 (the broken
 * twins flip its sign). */
static int top_free_layer(const mspec *ms)
{
    int l = ms->nl - 1;
    while (ms->clamp >> l & 1u) {
        l--;
    }
    return l;
}

static ebm_model_t *make_model(const mspec *ms)
{
    ebm_model_t *m = t_model(ms->nl, ms->sizes, ms->vis, ms->hid);
    t_random_params(m, ms->seed, ms->scale);
    int64_t np = ebm_model_param_count(m), o;
    float *p = xmalloc((size_t)np * sizeof *p);
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, top_free_layer(ms), &o, NULL, NULL),
                     EBM_OK);
    p[o] = 0.9f;
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    free(p);
    return m;
}

static void load_model(const mspec *ms, const ebm_model_t *m, tref *R)
{
    ref_load(R, m, ms->clamp, ms->vis == G_ ? GBASE : NULL);
}

/* Fill n rows (stride w) with state k. */
static void fill_rows(const tref *R, int k, int64_t n, float *x)
{
    float row[MAXW];
    ref_row_f(R, k, row);
    for (int64_t r = 0; r < n; r++) {
        memcpy(x + r * R->width, row, (size_t)R->width * sizeof *x);
    }
}

/* ------------------------------------------------------------------------ */
/* 1. The kernels' design: invariance and reversibility                     */
/* ------------------------------------------------------------------------ */

START_TEST(kernel_design)
{
    const mspec *ms = &MODELS[_i];
    ebm_model_t *m = make_model(ms);
    tref R;
    load_model(ms, m, &R);
    const int S = R.S;
    double *P = xmalloc((size_t)S * S * sizeof *P), *pi = xmalloc((size_t)S * sizeof *pi);
    for (int kind = EBM_SAMPLER_GIBBS; kind <= EBM_SAMPLER_MH_UNIFORM; kind++) {
        ref_matrix(&R, kind, P);
        double worst = 0.0, worst_db = 0.0, worst_row = 0.0;
        for (int k = 0; k < S; k++) {
            double rs = 0.0;
            for (int k2 = 0; k2 < S; k2++) {
                T_ASSERT(P[k * S + k2] >= 0.0);
                rs += P[k * S + k2];
            }
            worst_row = fmax(worst_row, fabs(rs - 1.0));
        }
        for (int k0 = 0; k0 < S; k0++) {
            int first = 1; /* one class per set of clamped values */
            for (int k = 0; k < k0; k++) {
                first &= !ref_same_clamped_k(&R, k, k0);
            }
            if (!first) {
                continue;
            }
            ref_pi(&R, k0, pi);
            double l1 = 0.0;
            for (int y = 0; y < S; y++) {
                double s = 0.0;
                for (int x = 0; x < S; x++) {
                    s += pi[x] * P[x * S + y];
                }
                l1 += fabs(s - pi[y]);
            }
            worst = fmax(worst, l1);
            if (kind == EBM_SAMPLER_MH_UNIFORM) {
                for (int x = 0; x < S; x++) {
                    for (int y = 0; y < S; y++) {
                        worst_db =
                            fmax(worst_db, fabs(pi[x] * P[x * S + y] - pi[y] * P[y * S + x]));
                    }
                }
            }
        }
        VLOG("  %s, %s: rows sum to 1 within %.2g, ||pi P - pi||_1 = %.2g, detailed balance %.2g\n",
             ms->name, kind == 0 ? "Gibbs" : "MH", worst_row, worst, worst_db);
        T_ASSERT_MSG(worst_row <= 1e-12, "%s: a row of P sums to 1 +- %g", ms->name, worst_row);
        T_ASSERT_MSG(worst <= 1e-12, "%s kind %d: ||pi P - pi||_1 = %g", ms->name, kind, worst);
        T_ASSERT_MSG(worst_db <= 1e-12, "%s: MH detailed balance off by %g", ms->name, worst_db);
    }
    /* The coupled laws have the single kernel as both marginals, and the
     * Gibbs couplings meet with the maximal probability. */
    double *J = xmalloc((size_t)S * S * sizeof *J);
    double *PM = xmalloc((size_t)S * S * sizeof *PM);
    ref_matrix(&R, EBM_SAMPLER_MH_UNIFORM, PM);
    ref_matrix(&R, EBM_SAMPLER_GIBBS, P);
    uint64_t st = 99;
    for (int t = 0; t < 20; t++) {
        int kx = (int)(t_uniform(&st) * S), ky = (int)(t_uniform(&st) * S);
        if (!ref_same_clamped_k(&R, kx, ky)) {
            continue;
        }
        for (int v = 0; v < N_VARIANTS; v++) {
            const double *K = v == V_MH ? PM : P;
            ref_joint(&R, v, kx, ky, J);
            double err = 0.0, diag = 0.0, bound = 0.0;
            for (int a = 0; a < S; a++) {
                double sx = 0.0, sy = 0.0;
                for (int b = 0; b < S; b++) {
                    sx += J[a * S + b];
                    sy += J[b * S + a];
                }
                err = fmax(err, fmax(fabs(sx - K[kx * S + a]), fabs(sy - K[ky * S + a])));
                diag += J[a * S + a];
                bound += fmin(K[kx * S + a], K[ky * S + a]);
            }
            T_ASSERT_MSG(err <= 1e-12, "%s %s: a coupled marginal is off by %g", ms->name,
                         VARIANT_NAME[v], err);
            /* MH too: with a common proposal and a common uniform the
             * chains meet with probability sum_z min(P(x,z), P(y,z)). */
            T_ASSERT_MSG(fabs(diag - bound) <= 1e-12, "%s %s: meeting %g, bound %g", ms->name,
                         VARIANT_NAME[v], diag, bound);
        }
    }
    free(J);
    free(PM);
    free(P);
    free(pi);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 2. The library follows P                                                 */
/* ------------------------------------------------------------------------ */

/* _i = 2 * model + kind */
START_TEST(step_law)
{
    const mspec *ms = &MODELS[_i / 2];
    const int kind = _i % 2;
    ebm_model_t *m = make_model(ms);
    tref R, T;
    load_model(ms, m, &R);
    T = R;
    T.b[top_free_layer(ms)][0] = -T.b[top_free_layer(ms)][0]; /* the broken twin */
    const int S = R.S, w = R.width;
    double *P = xmalloc((size_t)S * S * sizeof *P), *PT = xmalloc((size_t)S * S * sizeof *PT);
    ref_matrix(&R, kind, P);
    ref_matrix(&T, kind, PT);
    ebm_sampler_t *s = new_sampler(m, kind, ms->clamp, EBM_COUPLING_CRN);
    ebm_rng_t *rng = new_rng(2000 + (uint64_t)_i);
    const int64_t n = scaled(40000);
    const double alpha = 1e-6 / S; /* Bonferroni over the start states */
    float *x = xmalloc((size_t)(n * w) * sizeof *x);
    double *cnt = xmalloc((size_t)S * sizeof *cnt), worst = 1.0, stat_sum = 0.0;
    int twin_fails = 0;
    for (int k = 0; k < S; k++) {
        fill_rows(&R, k, n, x);
        ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
        memset(cnt, 0, (size_t)S * sizeof *cnt);
        for (int64_t r = 0; r < n; r++) {
            int c = ref_code(&R, x + r * w);
            T_ASSERT_MSG(c >= 0, "%s: row %lld left the state space", ms->name, (long long)r);
            cnt[c] += 1.0;
        }
        char what[160];
        snprintf(what, sizeof what, "%s %s from state %d", ms->name, kind ? "MH" : "Gibbs", k);
        gof g = chisq(cnt, P + k * S, S, (double)n);
        T_ASSERT_MSG(g.impossible == 0.0, "%s: %.0f draws where P is 0", what, g.impossible);
        T_ASSERT_MSG(g.p >= alpha, "%s: chi2 %.2f, %d df, p = %.3g < %.3g", what, g.stat, g.df, g.p,
                     alpha);
        worst = fmin(worst, g.p);
        stat_sum += g.stat - g.df;
        twin_fails += gof_fails(chisq(cnt, PT + k * S, S, (double)n), alpha);
    }
    VLOG("  %s %s: %d start states x %lld rows, smallest p %.3g, sum(chi2 - df) %.1f, "
         "twin fails from %d states\n",
         ms->name, kind ? "MH" : "Gibbs", S, (long long)n, worst, stat_sum, twin_fails);
    T_ASSERT_MSG(twin_fails > 0, "%s: the broken twin (bias sign flipped) was not detected",
                 ms->name);
    free(x);
    free(cnt);
    free(P);
    free(PT);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 3. Coupled steps                                                         */
/* ------------------------------------------------------------------------ */

/* Run one coupled step of n copies of the pair (kx, ky) and count. */
typedef struct pair_counts {
    double *cx, *cy, *cj; /* S, S, S*S */
    double met;
} pair_counts;

static void coupled_counts(const tref *R, ebm_sampler_t *s, ebm_rng_t *rng, int kx, int ky,
                           int64_t n, float *x, float *y, uint8_t *met, pair_counts *pc)
{
    const int S = R->S, w = R->width;
    fill_rows(R, kx, n, x);
    fill_rows(R, ky, n, y);
    memset(met, 0xAB, (size_t)n);
    int rc = ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met);
    T_ASSERT_MSG(rc == EBM_OK, "coupled step: %s", ebm_sampler_errmsg(s));
    memset(pc->cx, 0, (size_t)S * sizeof *pc->cx);
    memset(pc->cy, 0, (size_t)S * sizeof *pc->cy);
    memset(pc->cj, 0, (size_t)S * S * sizeof *pc->cj);
    pc->met = 0.0;
    for (int64_t r = 0; r < n; r++) {
        int a = ref_code(R, x + r * w), b = ref_code(R, y + r * w);
        T_ASSERT_MSG(a >= 0 && b >= 0, "row %lld left the state space", (long long)r);
        int equal = memcmp(x + r * w, y + r * w, (size_t)w * sizeof *x) == 0;
        T_ASSERT_MSG(met[r] == equal, "row %lld: met = %d but the rows are %s", (long long)r,
                     met[r], equal ? "equal" : "different");
        pc->cx[a] += 1.0;
        pc->cy[b] += 1.0;
        pc->cj[a * S + b] += 1.0;
        pc->met += met[r];
    }
}

/* Pairs of distinct states with the same clamped values: pair 0 differs in
 * one B1 unit only (its Gibbs transitions are equal: they meet surely), the
 * others are random. Returns the number of pairs. */
static int pick_pairs(const tref *R, uint64_t seed, int want, int (*pairs)[2])
{
    uint32_t b1, b2;
    ref_blocks(R, &b1, &b2);
    int c1[MAXW];
    ref_cols(R, b1, c1);
    int np = 0;
    /* column c1[0] is disc index i0 */
    int i0 = 0;
    while (R->disc[i0] != c1[0]) {
        i0++;
    }
    pairs[np][0] = 5 % R->S;
    pairs[np][1] = pairs[np][0] ^ (1 << i0);
    np++;
    uint64_t st = seed;
    for (int t = 0; np < want && t < 10000; t++) {
        int a = (int)(t_uniform(&st) * R->S), b = (int)(t_uniform(&st) * R->S);
        if (a != b && ref_same_clamped_k(R, a, b)) {
            pairs[np][0] = a;
            pairs[np][1] = b;
            np++;
        }
    }
    return np;
}

/* _i = 3 * model + variant */
START_TEST(coupled_law)
{
    const mspec *ms = &MODELS[_i / N_VARIANTS];
    const int variant = _i % N_VARIANTS;
    ebm_model_t *m = make_model(ms);
    tref R;
    load_model(ms, m, &R);
    const int S = R.S, w = R.width;
    const int kind = variant == V_MH ? EBM_SAMPLER_MH_UNIFORM : EBM_SAMPLER_GIBBS;
    ebm_sampler_t *s = new_sampler(m, kind, ms->clamp, variant == V_MH ? 1 : variant);
    ebm_rng_t *rng = new_rng(3000 + (uint64_t)_i);
    double *P = xmalloc((size_t)S * S * sizeof *P), *J = xmalloc((size_t)S * S * sizeof *J);
    ref_matrix(&R, kind, P);
    int pairs[8][2];
    const int np = pick_pairs(&R, 31 + (uint64_t)_i, 7, pairs);
    const int64_t n = scaled(60000);
    const double alpha = 1e-6 / (4.0 * (np + 1)); /* x, y, joint per pair; met on entry */
    float *x = xmalloc((size_t)(n * w) * sizeof *x), *y = xmalloc((size_t)(n * w) * sizeof *y);
    uint8_t *met = xmalloc((size_t)n);
    pair_counts pc = {xmalloc((size_t)S * sizeof(double)), xmalloc((size_t)S * sizeof(double)),
                      xmalloc((size_t)S * S * sizeof(double)), 0.0};
    double bound[8], freq[8];
    int joint_twins = 0;
    char what[200];
    for (int i = 0; i < np; i++) {
        const int kx = pairs[i][0], ky = pairs[i][1];
        coupled_counts(&R, s, rng, kx, ky, n, x, y, met, &pc);
        double tries[2] = {0.0, 0.0};
        if (variant == V_MH) {
            ref_coupled_mh(&R, kx, ky, J);
        } else {
            ref_coupled_gibbs(&R, variant, kx, ky, J, tries);
        }
        double meet = 0.0, maxbound = 0.0;
        for (int a = 0; a < S; a++) {
            meet += J[a * S + a];
            maxbound += fmin(P[kx * S + a], P[ky * S + a]);
        }
        bound[i] = meet;
        freq[i] = pc.met;
        snprintf(what, sizeof what, "%s %s pair (%d,%d): x'", ms->name, VARIANT_NAME[variant], kx,
                 ky);
        expect_fit(what, pc.cx, P + kx * S, S, (double)n, alpha);
        snprintf(what, sizeof what, "%s %s pair (%d,%d): y'", ms->name, VARIANT_NAME[variant], kx,
                 ky);
        expect_fit(what, pc.cy, P + ky * S, S, (double)n, alpha);
        snprintf(what, sizeof what, "%s %s pair (%d,%d): (x',y')", ms->name, VARIANT_NAME[variant],
                 kx, ky);
        expect_fit(what, pc.cj, J, (int64_t)S * S, (double)n, alpha);
        double z = binom_z(pc.met, (double)n, meet);
        VLOG("  %s %s pair (%d,%d): met %.5f, exact %.5f (maximal %.5f), z = %.2f, tries mean "
             "%.2f max %.0f\n",
             ms->name, VARIANT_NAME[variant], kx, ky, pc.met / n, meet, maxbound, z,
             ebm_sampler_stat(s, EBM_STAT_TRIES_MEAN), ebm_sampler_stat(s, EBM_STAT_TRIES_MAX));
        T_ASSERT_MSG(fabs(z) < 5.0, "%s %s pair (%d,%d): met %.5f, exact %.5f, z = %.2f", ms->name,
                     VARIANT_NAME[variant], kx, ky, pc.met / n, meet, z);
        T_ASSERT_MSG(fabs(meet - maxbound) < 1e-12, "reference not maximal");
        /* The rejection tries of the rows that did not meet (Gibbs). */
        const double unmet = (double)n - pc.met;
        const double tmean = ebm_sampler_stat(s, EBM_STAT_TRIES_MEAN);
        const double tmax = ebm_sampler_stat(s, EBM_STAT_TRIES_MAX);
        if (variant != V_MH && unmet >= 100.0) {
            double tz = (tmean - tries[0]) / sqrt(tries[1] / unmet);
            VLOG("  %s %s pair (%d,%d): tries mean %.4f, exact %.4f (z %.2f), max %.0f\n", ms->name,
                 VARIANT_NAME[variant], kx, ky, tmean, tries[0], tz, tmax);
            T_ASSERT_MSG(fabs(tz) < 5.0 && tmax >= tmean && tmax == floor(tmax),
                         "%s %s pair (%d,%d): EBM_STAT_TRIES_MEAN %.4f, exact %.4f (z %.2f), "
                         "max %.0f",
                         ms->name, VARIANT_NAME[variant], kx, ky, tmean, tries[0], tz, tmax);
        } else if (variant != V_MH && unmet == 0.0) {
            T_ASSERT(tmean == 0.0 && tmax == 0.0);
        }
        /* Broken twin of the joint law: the other coupling's law (Gibbs),
         * or independent chains (MH), where it differs enough. */
        double *JT = xmalloc((size_t)S * S * sizeof *JT), tvj = 0.0;
        if (variant == V_MH) {
            for (int a = 0; a < S; a++) {
                for (int b = 0; b < S; b++) {
                    JT[a * S + b] = P[kx * S + a] * P[ky * S + b];
                }
            }
        } else {
            ref_joint(&R, variant == V_CRN ? V_MAXIMAL : V_CRN, kx, ky, JT);
        }
        for (int a = 0; a < S * S; a++) {
            tvj += 0.5 * fabs(JT[a] - J[a]);
        }
        if (tvj > 0.05) {
            T_ASSERT_MSG(gof_fails(chisq(pc.cj, JT, (int64_t)S * S, (double)n), alpha),
                         "%s %s pair (%d,%d): the pairs also fit the %s law (TV %.3f)", ms->name,
                         VARIANT_NAME[variant], kx, ky, variant == V_MH ? "independent" : "other",
                         tvj);
            joint_twins++;
        }
        free(JT);
        /* Broken twin of the marginals: x' against y's law. */
        double tv = 1.0 - maxbound;
        if (tv > 0.05) {
            T_ASSERT_MSG(gof_fails(chisq(pc.cx, P + ky * S, S, (double)n), alpha),
                         "%s: x' also fits P(y0, .) (TV %.3f): the test has no power", ms->name,
                         tv);
        }
    }
    VLOG("  %s %s: %d of %d pairs had a joint-law twin\n", ms->name, VARIANT_NAME[variant],
         joint_twins, np);
    /* Broken twin of the meeting law: each pair's frequency against the
     * exact probability of the pair whose probability is most different. */
    int twins = 0;
    double spread = 0.0;
    for (int i = 0; i < np; i++) {
        int j_best = -1;
        double d_best = 0.0;
        for (int j = 0; j < np; j++) {
            if (fabs(bound[j] - bound[i]) > d_best) {
                d_best = fabs(bound[j] - bound[i]);
                j_best = j;
            }
        }
        spread = fmax(spread, d_best);
        if (j_best >= 0 && d_best > 12.0 * sqrt(0.25 / (double)n)) {
            double z = binom_z(freq[i], (double)n, bound[j_best]);
            T_ASSERT_MSG(fabs(z) >= 5.0,
                         "%s: the meeting frequency %.4f of pair %d also fits pair %d's %.4f",
                         ms->name, freq[i] / n, i, j_best, bound[j_best]);
            twins++;
        }
    }
    T_ASSERT_MSG(twins > 0 || spread < 1e-9, "%s: no broken twin for the meeting law", ms->name);
    /* Rows equal on entry: they all stay met, and move by P. */
    const int k0 = pairs[np - 1][0];
    coupled_counts(&R, s, rng, k0, k0, n, x, y, met, &pc);
    T_ASSERT_MSG(pc.met == (double)n, "%s: %.0f of %lld rows equal on entry did not stay met",
                 ms->name, (double)n - pc.met, (long long)n);
    snprintf(what, sizeof what, "%s %s: rows met on entry, from state %d", ms->name,
             VARIANT_NAME[variant], k0);
    expect_fit(what, pc.cx, P + k0 * S, S, (double)n, alpha);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_MET_FRACTION) == 1.0);
    free(pc.cx);
    free(pc.cy);
    free(pc.cj);
    free(x);
    free(y);
    free(met);
    free(P);
    free(J);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* Clamped layers never move: single steps, coupled steps with the same
 * clamped values, and coupled steps whose two chains have different clamped
 * values (different targets). For the last, the call may refuse
 * (EBM_EVALUE, nothing changed) or run; if it runs, each chain must keep its
 * clamped values, follow its own kernel, and meet only when equal. */
START_TEST(clamped_layers_fixed)
{
    const mspec *ms = &MODELS[FIRST_CLAMPED + _i / N_VARIANTS];
    const int variant = _i % N_VARIANTS;
    ebm_model_t *m = make_model(ms);
    tref R;
    load_model(ms, m, &R);
    const int S = R.S, w = R.width;
    const int kind = variant == V_MH ? EBM_SAMPLER_MH_UNIFORM : EBM_SAMPLER_GIBBS;
    ebm_sampler_t *s = new_sampler(m, kind, ms->clamp, variant == V_MH ? 1 : variant);
    ebm_rng_t *rng = new_rng(3500 + (uint64_t)_i);
    /* A pair with different clamped values, far apart in the free units;
     * for the GRBM, whose clamped units are Gaussian, y gets other values. */
    tref Ry = R;
    int kx = -1, ky = -1;
    for (int a = 0; a < S && kx < 0; a++) {
        for (int b = S - 1; b > a; b--) {
            if (!ref_same_clamped_k(&R, a, b)) {
                kx = a;
                ky = b;
                break;
            }
        }
    }
    if (kx < 0) {
        T_ASSERT(R.units[0] == G_);
        Ry.base[0] += 0.5;
        Ry.base[1] -= 0.25;
        kx = 0;
        ky = S - 1;
    }
    double *P = xmalloc((size_t)S * S * sizeof *P), *Py = xmalloc((size_t)S * S * sizeof *Py);
    ref_matrix(&R, kind, P);
    ref_matrix(&Ry, kind, Py);
    const int64_t n = scaled(20000);
    float *x = xmalloc((size_t)(n * w) * sizeof *x), *y = xmalloc((size_t)(n * w) * sizeof *y);
    float *x0 = xmalloc((size_t)(n * w) * sizeof *x0), *y0 = xmalloc((size_t)(n * w) * sizeof *y0);
    uint8_t *met = xmalloc((size_t)n);
    fill_rows(&R, kx, n, x);
    fill_rows(&Ry, ky, n, y);
    memcpy(x0, x, (size_t)(n * w) * sizeof *x);
    memcpy(y0, y, (size_t)(n * w) * sizeof *y);
    memset(met, 0xAB, (size_t)n);
    uint64_t before[EBM_RNG_STATE_WORDS], after[EBM_RNG_STATE_WORDS];
    ebm_rng_get_state(rng, before);
    int rc = ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met);
    if (rc != EBM_OK) {
        ebm_rng_get_state(rng, after);
        T_ASSERT_MSG(rc == EBM_EVALUE,
                     "%s: coupled step of chains with different clamped "
                     "values returned %d (%s)",
                     ms->name, rc, ebm_sampler_errmsg(s));
        T_ASSERT(memcmp(x, x0, (size_t)(n * w) * sizeof *x) == 0);
        T_ASSERT(memcmp(y, y0, (size_t)(n * w) * sizeof *y) == 0);
        T_ASSERT(met[0] == 0xAB && memcmp(before, after, sizeof before) == 0);
    } else {
        double *cx = xcalloc((size_t)S, sizeof *cx), *cy = xcalloc((size_t)S, sizeof *cy);
        int64_t moved = 0, bad_met = 0;
        for (int64_t r = 0; r < n; r++) {
            int a = ref_code(&R, x + r * w), b = ref_code(&Ry, y + r * w);
            double xa[MAXW], yb[MAXW], xs[MAXW], ys[MAXW];
            if (a >= 0 && b >= 0) {
                ref_row(&R, a, xa);
                ref_row(&Ry, b, yb);
                ref_row(&R, kx, xs);
                ref_row(&Ry, ky, ys);
            }
            if (a < 0 || b < 0 || !ref_same_clamped(&R, xa, xs) || !ref_same_clamped(&R, yb, ys)) {
                moved++;
                continue;
            }
            bad_met += met[r] != (memcmp(x + r * w, y + r * w, (size_t)w * sizeof *x) == 0);
            cx[a] += 1.0;
            cy[b] += 1.0;
        }
        VLOG("  %s %s, chains with different clamped values: %lld of %lld rows changed a "
             "clamped unit\n",
             ms->name, VARIANT_NAME[variant], (long long)moved, (long long)n);
        T_ASSERT_MSG(moved == 0 && bad_met == 0,
                     "%s %s: coupled step of chains with different clamped values (states %d, "
                     "%d) changed a clamped unit in %lld of %lld rows (%lld bad met flags)",
                     ms->name, VARIANT_NAME[variant], kx, ky, (long long)moved, (long long)n,
                     (long long)bad_met);
        char what[200];
        snprintf(what, sizeof what, "%s %s, different clamped values: x'", ms->name,
                 VARIANT_NAME[variant]);
        expect_fit(what, cx, P + kx * S, S, (double)n, 1e-6 / 2);
        snprintf(what, sizeof what, "%s %s, different clamped values: y'", ms->name,
                 VARIANT_NAME[variant]);
        expect_fit(what, cy, Py + ky * S, S, (double)n, 1e-6 / 2);
        free(cx);
        free(cy);
    }
    free(Py);
    free(x);
    free(y);
    free(x0);
    free(y0);
    free(met);
    free(P);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 4. The law of the meeting time                                           */
/* ------------------------------------------------------------------------ */

/*
 * The pair (x_t, y_{t-1}) is a Markov chain on S x S whose step is the
 * coupled law J; the meeting time tau is its hitting time of the diagonal.
 * law[t-1] = P(tau = t) for t = 1..tmax; returns P(tau > tmax).
 */
static double ref_meeting_law(const tref *R, int variant, int kx0, int ky0, double *law, int tmax)
{
    const int S = R->S, SS = S * S;
    double *K = xmalloc((size_t)SS * SS * sizeof *K);
    for (int a = 0; a < S; a++) {
        for (int b = 0; b < S; b++) {
            if (a != b && ref_same_clamped_k(R, a, b)) {
                ref_joint(R, variant, a, b, K + (size_t)(a * S + b) * SS);
            }
        }
    }
    double *d = xcalloc((size_t)SS, sizeof *d), *nd = xmalloc((size_t)SS * sizeof *nd);
    d[kx0 * S + ky0] = 1.0;
    double rest = 1.0;
    for (int t = 1; t <= tmax; t++) {
        memset(nd, 0, (size_t)SS * sizeof *nd);
        for (int i = 0; i < SS; i++) {
            if (d[i] > 0.0) {
                const double *k = K + (size_t)i * SS;
                for (int j = 0; j < SS; j++) {
                    nd[j] += d[i] * k[j];
                }
            }
        }
        law[t - 1] = 0.0;
        rest = 0.0;
        for (int a = 0; a < S; a++) {
            law[t - 1] += nd[a * S + a];
            nd[a * S + a] = 0.0;
        }
        for (int i = 0; i < SS; i++) {
            rest += nd[i];
        }
        memcpy(d, nd, (size_t)SS * sizeof *d);
    }
    free(K);
    free(d);
    free(nd);
    return rest;
}

enum { TAU_CAP = 1000, TAU_LAW = 200 };

/* _i = variant; the binary RBM 3x2 with larger weights, so that meeting
 * takes a few steps. */
START_TEST(meeting_time_law)
{
    const int variant = _i;
    mspec ms = MODELS[0];
    ms.scale = 2.5;
    ms.seed = 4401;
    ebm_model_t *m = make_model(&ms);
    tref R;
    load_model(&ms, m, &R);
    const int S = R.S, w = R.width;
    /* the pair with the smallest one-step meeting probability */
    double *J = xmalloc((size_t)S * S * sizeof *J);
    int kx = 0, ky = 1;
    double best = 2.0;
    for (int a = 0; a < S; a++) {
        for (int b = 0; b < S; b++) {
            if (a == b) {
                continue;
            }
            ref_joint(&R, variant, a, b, J);
            double meet = 0.0;
            for (int c = 0; c < S; c++) {
                meet += J[c * S + c];
            }
            if (meet < best) {
                best = meet;
                kx = a;
                ky = b;
            }
        }
    }
    double law[N_VARIANTS][TAU_LAW + 1];
    for (int v = 0; v < N_VARIANTS; v++) {
        law[v][TAU_LAW] = ref_meeting_law(&R, v, kx, ky, law[v], TAU_LAW);
    }
    const double *L = law[variant];
    double mean = 0.0;
    for (int t = 1; t <= TAU_LAW; t++) {
        mean += t * L[t - 1];
    }
    T_ASSERT_MSG(L[TAU_LAW] < 1e-9, "P(tau > %d) = %g: pick a faster pair", TAU_LAW, L[TAU_LAW]);
    ebm_sampler_t *s = new_sampler(m, variant == V_MH ? EBM_SAMPLER_MH_UNIFORM : EBM_SAMPLER_GIBBS,
                                   0, variant == V_MH ? 1 : variant);
    ebm_rng_t *rng = new_rng(4000 + (uint64_t)_i);
    const int64_t n = scaled(50000);
    float *x = xmalloc((size_t)(n * w) * sizeof *x), *y = xmalloc((size_t)(n * w) * sizeof *y);
    uint8_t *met = xmalloc((size_t)n);
    int *tau = xcalloc((size_t)n, sizeof *tau);
    fill_rows(&R, kx, n, x);
    fill_rows(&R, ky, n, y);
    int64_t left = n;
    int t = 0;
    double tries_max = 0.0;
    while (left > 0 && t < TAU_CAP) {
        t++;
        ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met), EBM_OK);
        tries_max = fmax(tries_max, ebm_sampler_stat(s, EBM_STAT_TRIES_MAX));
        for (int64_t r = 0; r < n; r++) {
            int equal = memcmp(x + r * w, y + r * w, (size_t)w * sizeof *x) == 0;
            T_ASSERT_MSG(met[r] == equal, "row %lld step %d: met %d, rows equal %d", (long long)r,
                         t, met[r], equal);
            if (met[r] && tau[r] == 0) {
                tau[r] = t;
                left--;
            } else if (!met[r] && tau[r] != 0) {
                ck_abort_msg("row %lld met at step %d and parted at step %d", (long long)r, tau[r],
                             t);
            }
        }
    }
    T_ASSERT_MSG(left == 0, "%lld rows had not met after %d steps", (long long)left, TAU_CAP);
    double cnt[TAU_LAW + 1] = {0}, sim_mean = 0.0;
    for (int64_t r = 0; r < n; r++) {
        cnt[tau[r] <= TAU_LAW ? tau[r] - 1 : TAU_LAW] += 1.0;
        sim_mean += tau[r];
    }
    sim_mean /= (double)n;
    VLOG("  meeting time, %s, pair (%d,%d): mean %.4f (exact %.4f), P(tau=1,2,3) = %.4f %.4f "
         "%.4f exact %.4f %.4f %.4f, longest %d, tries max %.0f\n",
         VARIANT_NAME[variant], kx, ky, sim_mean, mean, cnt[0] / n, cnt[1] / n, cnt[2] / n, L[0],
         L[1], L[2], t, tries_max);
    char what[120];
    snprintf(what, sizeof what, "meeting time law, %s", VARIANT_NAME[variant]);
    expect_fit(what, cnt, L, TAU_LAW + 1, (double)n, 1e-6 / N_VARIANTS);
    /* Broken twins: another variant's law, where the laws differ. */
    int twins = 0;
    for (int v = 0; v < N_VARIANTS; v++) {
        double tv = 0.0;
        for (int i = 0; i <= TAU_LAW; i++) {
            tv += 0.5 * fabs(law[v][i] - L[i]);
        }
        if (v != variant && tv > 0.05) {
            T_ASSERT_MSG(gof_fails(chisq(cnt, law[v], TAU_LAW + 1, (double)n), 1e-6),
                         "the meeting times also fit the law of %s (TV %.3f)", VARIANT_NAME[v], tv);
            twins++;
        }
    }
    T_ASSERT_MSG(twins > 0, "no broken twin for the meeting-time law");
    free(x);
    free(y);
    free(met);
    free(tau);
    free(J);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* CRN on a DBM (blocks of several layers): meeting is finite and quick. */
START_TEST(meeting_time_finite)
{
    const mspec *ms = &MODELS[2 + _i];
    ebm_model_t *m = make_model(ms);
    tref R;
    load_model(ms, m, &R);
    const int w = R.width;
    ebm_sampler_t *s = new_sampler(m, EBM_SAMPLER_GIBBS, 0, EBM_COUPLING_CRN);
    ebm_rng_t *rng = new_rng(4500 + (uint64_t)_i);
    const int64_t n = scaled(20000);
    float *x = xmalloc((size_t)(n * w) * sizeof *x), *y = xmalloc((size_t)(n * w) * sizeof *y);
    uint8_t *met = xmalloc((size_t)n);
    fill_rows(&R, 0, n, x);
    fill_rows(&R, R.S - 1, n, y);
    int *tau = xcalloc((size_t)n, sizeof *tau);
    int64_t left = n;
    int t = 0;
    while (left > 0 && t < TAU_CAP) {
        t++;
        ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met), EBM_OK);
        for (int64_t r = 0; r < n; r++) {
            if (met[r] && tau[r] == 0) {
                tau[r] = t;
                left--;
            }
            T_ASSERT(!(tau[r] != 0 && !met[r]));
        }
    }
    double mean = 0.0;
    for (int64_t r = 0; r < n; r++) {
        mean += tau[r];
    }
    VLOG("  %s CRN from (0, %d): mean meeting time %.3f, longest %d\n", ms->name, R.S - 1, mean / n,
         t);
    T_ASSERT_MSG(left == 0, "%s: %lld rows had not met after %d steps", ms->name, (long long)left,
                 TAU_CAP);
    free(x);
    free(y);
    free(met);
    free(tau);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 5. Gaussian layers: a GRBM 2x2                                           */
/* ------------------------------------------------------------------------ */

/* Gaussian visible (mu, logvar), binary hidden: p(v | h) = N(mu + W h,
 * sigma^2), p(h_j = 1 | v) = sigmoid(c_j + sum_i W_ij v_i / sigma_i^2). */
static ebm_model_t *make_grbm(tref *R)
{
    static const int64_t sizes[2] = {2, 2};
    ebm_model_t *m = t_model(2, sizes, G_, B_);
    int64_t np = ebm_model_param_count(m), ow, omu, oc, olv;
    float *p = xcalloc((size_t)np, sizeof *p);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_WEIGHT, 1, &ow, NULL, NULL), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, 0, &omu, NULL, NULL), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, 1, &oc, NULL, NULL), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &olv, NULL, NULL), EBM_OK);
    const float W[4] = {0.8f, -0.4f, 0.5f, 1.2f};
    memcpy(p + ow, W, sizeof W);
    p[omu] = 0.3f;
    p[omu + 1] = -0.2f;
    p[oc] = 0.1f;
    p[oc + 1] = -0.3f;
    p[olv] = (float)log(0.5);
    p[olv + 1] = (float)log(2.0);
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    free(p);
    ref_load(R, m, 0, NULL);
    return m;
}

/* Standardised visible values s_i = (v_i - m_i) / sigma_i of the rows,
 * checked to be iid N(0, 1): mean and variance z-scores, a 40-bin
 * chi-square on Phi(s_i), the correlation of s_0 and s_1; fails below
 * alpha (chi-square) or at |z| >= 5. */
static void check_normal(const char *what, const tref *R, int64_t n, const float *x,
                         const double *mean, double alpha)
{
    enum { NB = 40 };
    double s1[2] = {0, 0}, s2[2] = {0, 0}, s01 = 0.0, cnt[2][NB], prob[NB];
    memset(cnt, 0, sizeof cnt);
    for (int b = 0; b < NB; b++) {
        prob[b] = 1.0 / NB;
    }
    for (int64_t r = 0; r < n; r++) {
        double z[2];
        for (int i = 0; i < 2; i++) {
            z[i] = ((double)x[r * R->width + i] - mean[i]) / exp(0.5 * R->logvar[i]);
            s1[i] += z[i];
            s2[i] += z[i] * z[i];
            int b = (int)(phi_cdf(z[i]) * NB);
            cnt[i][b < NB ? b : NB - 1] += 1.0;
        }
        s01 += z[0] * z[1];
    }
    char buf[240];
    for (int i = 0; i < 2; i++) {
        double mz = s1[i] / sqrt((double)n), var = s2[i] / n - (s1[i] / n) * (s1[i] / n);
        double vz = (var - 1.0) / sqrt(2.0 / n);
        VLOG("  %s, unit %d: mean z %.2f, variance %.4f (z %.2f)\n", what, i, mz, var, vz);
        T_ASSERT_MSG(fabs(mz) < 5.0, "%s unit %d: mean z-score %.2f", what, i, mz);
        T_ASSERT_MSG(fabs(vz) < 5.0, "%s unit %d: variance %.4f, z-score %.2f", what, i, var, vz);
        snprintf(buf, sizeof buf, "%s, unit %d, 40 bins of Phi(s)", what, i);
        expect_fit(buf, cnt[i], prob, NB, (double)n, alpha);
    }
    double cz = s01 / sqrt((double)n);
    T_ASSERT_MSG(fabs(cz) < 5.0, "%s: correlation z-score %.2f", what, cz);
}

/* E[h'_j - p(h_j = 1 | v')] = 0 for draws h' ~ p(h | v'). */
static void check_hidden(const char *what, const tref *R, int64_t n, const float *x)
{
    for (int j = 0; j < 2; j++) {
        double s = 0.0, v = 0.0;
        for (int64_t r = 0; r < n; r++) {
            double row[MAXW];
            for (int c = 0; c < R->width; c++) {
                row[c] = x[r * R->width + c];
            }
            float h = x[r * R->width + 2 + j];
            T_ASSERT_MSG(h == 0.0f || h == 1.0f, "%s: h = %g", what, (double)h);
            double q = ref_up(R, 1, ref_input(R, 1, row, j));
            s += h - q;
            v += q * (1.0 - q);
        }
        double z = s / sqrt(v);
        VLOG("  %s: h_%d given v' z %.2f\n", what, j, z);
        T_ASSERT_MSG(fabs(z) < 5.0, "%s: h_%d does not follow p(h | v'): z = %.2f", what, j, z);
    }
}

static void grbm_mean(const tref *R, const float *row, double *m)
{
    double d[MAXW];
    for (int c = 0; c < R->width; c++) {
        d[c] = row[c];
    }
    m[0] = ref_input(R, 0, d, 0);
    m[1] = ref_input(R, 0, d, 1);
}

/* The single Gibbs step of the GRBM: v' ~ N(mu + W h, sigma^2), h' ~ p(h | v'). */
START_TEST(grbm_step)
{
    tref R;
    ebm_model_t *m = make_grbm(&R);
    ebm_sampler_t *s = new_sampler(m, EBM_SAMPLER_GIBBS, 0, EBM_COUPLING_CRN);
    ebm_rng_t *rng = new_rng(5100);
    const int64_t n = scaled(100000);
    const int w = R.width;
    float *x = xmalloc((size_t)(n * w) * sizeof *x);
    const float start[4] = {0.4f, -2.0f, 1.0f, 0.0f};
    for (int64_t r = 0; r < n; r++) {
        memcpy(x + r * w, start, sizeof start);
    }
    double mean[2];
    grbm_mean(&R, start, mean);
    ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
    check_normal("GRBM Gibbs step v'", &R, n, x, mean, 1e-6 / 2);
    check_hidden("GRBM Gibbs step", &R, n, x);
    /* broken twin: the mean of another h */
    const float other[4] = {0.4f, -2.0f, 0.0f, 1.0f};
    double wrong[2];
    grbm_mean(&R, other, wrong);
    double s0 = 0.0;
    for (int64_t r = 0; r < n; r++) {
        s0 += ((double)x[r * w] - wrong[0]) / exp(0.5 * R.logvar[0]);
    }
    T_ASSERT_MSG(fabs(s0 / sqrt((double)n)) >= 5.0, "the v' mean test cannot fail");
    free(x);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* _i = coupling. Pairs (x0, y0) with different h: the v blocks are
 * N(m1, sigma^2) and N(m2, sigma^2), whose maximal couplings meet with
 * probability 1 - TV = 2 Phi(-|z|/2), z = (m1 - m2)/sigma. */
START_TEST(grbm_coupled)
{
    const int coupling = _i;
    tref R;
    ebm_model_t *m = make_grbm(&R);
    ebm_sampler_t *s = new_sampler(m, EBM_SAMPLER_GIBBS, 0, coupling);
    ebm_rng_t *rng = new_rng(5200 + (uint64_t)_i);
    const int64_t n = scaled(150000);
    const int w = R.width;
    static const float pairs[][2][4] = {
        {{0.3f, -1.0f, 0.0f, 0.0f}, {1.2f, 0.4f, 1.0f, 0.0f}},
        {{0.3f, -1.0f, 1.0f, 0.0f}, {-0.5f, 2.0f, 1.0f, 1.0f}},
        {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 1.0f, 1.0f}},
        {{2.0f, 1.0f, 1.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}},
        {{2.0f, 1.0f, 1.0f, 0.0f}, {-1.0f, 0.5f, 1.0f, 0.0f}}, /* same h: surely meet */
    };
    enum { NP = sizeof pairs / sizeof pairs[0] };
    const double alpha = 1e-6 / (4.0 * NP);
    float *x = xmalloc((size_t)(n * w) * sizeof *x), *y = xmalloc((size_t)(n * w) * sizeof *y);
    uint8_t *met = xmalloc((size_t)n);
    double bound[NP], freq[NP];
    for (int i = 0; i < NP; i++) {
        for (int64_t r = 0; r < n; r++) {
            memcpy(x + r * w, pairs[i][0], sizeof pairs[i][0]);
            memcpy(y + r * w, pairs[i][1], sizeof pairs[i][1]);
        }
        double m1[2], m2[2], zz = 0.0, e[2];
        grbm_mean(&R, pairs[i][0], m1);
        grbm_mean(&R, pairs[i][1], m2);
        for (int k = 0; k < 2; k++) {
            e[k] = (m1[k] - m2[k]) / exp(0.5 * R.logvar[k]);
            zz += e[k] * e[k];
        }
        const double zn = sqrt(zz);
        bound[i] = 2.0 * phi_cdf(-0.5 * zn);
        ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met), EBM_OK);
        double k = 0.0, refl_err = 0.0;
        for (int64_t r = 0; r < n; r++) {
            int equal = memcmp(x + r * w, y + r * w, (size_t)w * sizeof *x) == 0;
            T_ASSERT_MSG(met[r] == equal, "pair %d row %lld: met %d, equal %d", i, (long long)r,
                         met[r], equal);
            k += met[r];
            if (!met[r] && coupling == EBM_COUPLING_CRN && zn > 0.0) {
                /* reflection: xi_y = xi_x - 2 (e.xi_x) e, so xi_y - xi_x is along e */
                double dx[2];
                for (int c = 0; c < 2; c++) {
                    double sg = exp(0.5 * R.logvar[c]);
                    double xi_x = ((double)x[r * w + c] - m1[c]) / sg;
                    double xi_y = ((double)y[r * w + c] - m2[c]) / sg;
                    dx[c] = xi_y - xi_x;
                }
                double along = (dx[0] * e[0] + dx[1] * e[1]) / zz;
                refl_err =
                    fmax(refl_err, fmax(fabs(dx[0] - along * e[0]), fabs(dx[1] - along * e[1])));
            }
        }
        freq[i] = k;
        double z = binom_z(k, (double)n, bound[i]);
        VLOG("  GRBM %s pair %d: |z| = %.3f, met %.5f, 2 Phi(-|z|/2) = %.5f, z-score %.2f, "
             "tries mean %.2f max %.0f, reflection error %.2g\n",
             coupling ? "CRN" : "MAXIMAL", i, zn, k / n, bound[i], z,
             ebm_sampler_stat(s, EBM_STAT_TRIES_MEAN), ebm_sampler_stat(s, EBM_STAT_TRIES_MAX),
             refl_err);
        T_ASSERT_MSG(fabs(z) < 5.0, "GRBM pair %d: met %.5f, 1 - TV = %.5f, z = %.2f", i, k / n,
                     bound[i], z);
        T_ASSERT_MSG(refl_err < 1e-4,
                     "GRBM CRN pair %d: unmet y is not the reflection of x "
                     "(off by %g)",
                     i, refl_err);
        char what[120];
        snprintf(what, sizeof what, "GRBM %s pair %d x'", coupling ? "CRN" : "MAXIMAL", i);
        check_normal(what, &R, n, x, m1, alpha);
        check_hidden(what, &R, n, x);
        snprintf(what, sizeof what, "GRBM %s pair %d y'", coupling ? "CRN" : "MAXIMAL", i);
        check_normal(what, &R, n, y, m2, alpha);
        check_hidden(what, &R, n, y);
        /* broken twin: y's values against x's mean */
        if (zn > 0.5) {
            double s0 = 0.0, s1 = 0.0;
            for (int64_t r = 0; r < n; r++) {
                s0 += ((double)y[r * w] - m1[0]) / exp(0.5 * R.logvar[0]);
                s1 += ((double)y[r * w + 1] - m1[1]) / exp(0.5 * R.logvar[1]);
            }
            T_ASSERT(fmax(fabs(s0), fabs(s1)) / sqrt((double)n) >= 5.0);
        }
    }
    /* broken twin of the meeting law */
    int twins = 0;
    for (int i = 0; i < NP; i++) {
        for (int j = 0; j < NP; j++) {
            if (fabs(bound[i] - bound[j]) > 0.02) {
                T_ASSERT(fabs(binom_z(freq[i], (double)n, bound[j])) >= 5.0);
                twins++;
            }
        }
    }
    T_ASSERT(twins > 0);
    free(x);
    free(y);
    free(met);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 6. Determinism, row independence, statistics                             */
/* ------------------------------------------------------------------------ */

typedef struct setup {
    const char *name;
    int model; /* -1: the GRBM */
    int kind, coupling;
    uint32_t clamp;
} setup;

static const setup SETUPS[] = {
    {"binary DBM Gibbs CRN", 2, EBM_SAMPLER_GIBBS, EBM_COUPLING_CRN, 0},
    {"binary DBM Gibbs MAXIMAL", 2, EBM_SAMPLER_GIBBS, EBM_COUPLING_MAXIMAL, 0},
    {"spin DBM MH", 3, EBM_SAMPLER_MH_UNIFORM, 0, 0},
    {"binary DBM posterior MH", 4, EBM_SAMPLER_MH_UNIFORM, 0, 1},
    {"GRBM Gibbs CRN (reflection)", -1, EBM_SAMPLER_GIBBS, EBM_COUPLING_CRN, 0},
    {"GRBM Gibbs MAXIMAL", -1, EBM_SAMPLER_GIBBS, EBM_COUPLING_MAXIMAL, 0},
    {"GRBM posterior MH", -1, EBM_SAMPLER_MH_UNIFORM, 0, 1},
};
#define N_SETUPS ((int)(sizeof SETUPS / sizeof SETUPS[0]))

static ebm_model_t *setup_model(const setup *su, tref *R)
{
    if (su->model < 0) {
        ebm_model_t *g = make_grbm(R);
        R->clamp = su->clamp;
        return g;
    }
    ebm_model_t *m = make_model(&MODELS[su->model]);
    load_model(&MODELS[su->model], m, R);
    return m;
}

/* n random rows for x, and y equal to x in every third row. */
static void random_pairs(const ebm_model_t *m, uint64_t seed, int64_t n, int w, float *x, float *y)
{
    ebm_rng_t *r = new_rng(seed);
    ck_assert_int_eq(ebm_model_random_state(m, r, n, x, w, NULL, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_random_state(m, r, n, y, w, NULL, 0), EBM_OK);
    for (int64_t i = 0; i < n; i += 3) {
        memcpy(y + i * w, x + i * w, (size_t)w * sizeof *x);
    }
    ebm_rng_destroy(r);
}

/* The posterior setups share the clamped visible values between chains. */
static void share_clamped(const setup *su, const tref *R, int64_t n, float *x, float *y)
{
    for (int64_t i = 0; i < n; i++) {
        for (int c = 0; c < R->width; c++) {
            if (su->clamp >> R->layer_of[c] & 1u) {
                y[i * R->width + c] = x[i * R->width + c];
            }
        }
    }
}

/* steps: single steps (coupled 0) or coupled steps, 2 calls, rng seed. */
static void run_steps(ebm_sampler_t *s, int coupled, uint64_t seed, int64_t n, float *x,
                      int64_t ldx, float *y, uint8_t *met)
{
    ebm_rng_t *r = new_rng(seed);
    for (int c = 0; c < 2; c++) {
        int rc = coupled ? ebm_sampler_coupled_step(s, r, n, x, ldx, y, ldx, met)
                         : ebm_sampler_step(s, r, n, x, ldx);
        T_ASSERT_MSG(rc == EBM_OK, "step: %s", ebm_sampler_errmsg(s));
    }
    ebm_rng_destroy(r);
}

START_TEST(determinism_and_rows)
{
    const setup *su = &SETUPS[_i];
    tref R;
    ebm_model_t *m = setup_model(su, &R);
    const int w = R.width;
    const int64_t n = 300; /* more than one 256-row chunk */
    ebm_sampler_t *s = new_sampler(m, su->kind, su->clamp, su->coupling);
    float *x0 = xmalloc((size_t)(n * w) * sizeof *x0), *y0 = xmalloc((size_t)(n * w) * sizeof *y0);
    float *x = xmalloc((size_t)(n * w) * sizeof *x), *y = xmalloc((size_t)(n * w) * sizeof *y);
    float *xa = xmalloc((size_t)(n * w) * sizeof *xa), *ya = xmalloc((size_t)(n * w) * sizeof *ya);
    float *xo = xmalloc((size_t)(n * w) * sizeof *xo), *yo = xmalloc((size_t)(n * w) * sizeof *yo);
    uint8_t *met = xmalloc((size_t)n), *meta = xmalloc((size_t)n);
    random_pairs(m, 71 + (uint64_t)_i, n, w, x0, y0);
    random_pairs(m, 171 + (uint64_t)_i, n, w, xo, yo); /* other rows */
    share_clamped(su, &R, n, x0, y0);
    share_clamped(su, &R, n, xo, yo);
    for (int coupled = 0; coupled < 2; coupled++) {
        /* Same seed, same bytes (twice with a fresh sampler too). */
        memcpy(x, x0, (size_t)(n * w) * sizeof *x);
        memcpy(y, y0, (size_t)(n * w) * sizeof *y);
        run_steps(s, coupled, 9, n, x, w, y, met);
        memcpy(xa, x0, (size_t)(n * w) * sizeof *x);
        memcpy(ya, y0, (size_t)(n * w) * sizeof *y);
        ebm_sampler_t *s2 = new_sampler(m, su->kind, su->clamp, su->coupling);
        run_steps(s2, coupled, 9, n, xa, w, ya, meta);
        ebm_sampler_destroy(s2);
        T_ASSERT_MSG(memcmp(x, xa, (size_t)(n * w) * sizeof *x) == 0, "%s: same seed, other x",
                     su->name);
        if (coupled) {
            T_ASSERT(memcmp(y, ya, (size_t)(n * w) * sizeof *y) == 0);
            T_ASSERT(memcmp(met, meta, (size_t)n) == 0);
        }
        /* Another seed moves something. */
        memcpy(xa, x0, (size_t)(n * w) * sizeof *x);
        memcpy(ya, y0, (size_t)(n * w) * sizeof *y);
        run_steps(s, coupled, 10, n, xa, w, ya, meta);
        T_ASSERT_MSG(memcmp(x, xa, (size_t)(n * w) * sizeof *x) != 0, "%s: seed ignored", su->name);
        /* Row r depends on row r only: a prefix batch, and a batch whose
         * other rows hold other states. */
        static const int64_t rows[] = {0, 1, 2, 3, 100, 255, 256, 257, 299};
        for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
            const int64_t r = rows[k];
            memcpy(xa, x0, (size_t)((r + 1) * w) * sizeof *x);
            memcpy(ya, y0, (size_t)((r + 1) * w) * sizeof *y);
            run_steps(s, coupled, 9, r + 1, xa, w, ya, meta);
            T_ASSERT_MSG(memcmp(xa + r * w, x + r * w, (size_t)w * sizeof *x) == 0,
                         "%s: row %lld of x depends on n", su->name, (long long)r);
            if (coupled) {
                T_ASSERT_MSG(
                    memcmp(ya + r * w, y + r * w, (size_t)w * sizeof *y) == 0 && meta[r] == met[r],
                    "%s: row %lld of the coupled step depends on n", su->name, (long long)r);
            }
            memcpy(xa, xo, (size_t)(n * w) * sizeof *x);
            memcpy(ya, yo, (size_t)(n * w) * sizeof *y);
            memcpy(xa + r * w, x0 + r * w, (size_t)w * sizeof *x);
            memcpy(ya + r * w, y0 + r * w, (size_t)w * sizeof *y);
            run_steps(s, coupled, 9, n, xa, w, ya, meta);
            T_ASSERT_MSG(memcmp(xa + r * w, x + r * w, (size_t)w * sizeof *x) == 0,
                         "%s: row %lld of x depends on the other rows", su->name, (long long)r);
            if (coupled) {
                T_ASSERT_MSG(memcmp(ya + r * w, y + r * w, (size_t)w * sizeof *y) == 0 &&
                                 meta[r] == met[r],
                             "%s: row %lld of the coupled step depends on the other rows", su->name,
                             (long long)r);
            }
        }
        /* A row stride with padding: the same results, padding untouched. */
        const int ld = w + 3;
        float *xp = xmalloc((size_t)(n * ld) * sizeof *xp),
              *yp = xmalloc((size_t)(n * ld) * sizeof *yp);
        for (int64_t r = 0; r < n; r++) {
            for (int c = 0; c < ld; c++) {
                xp[r * ld + c] = c < w ? x0[r * w + c] : 12345.0f;
                yp[r * ld + c] = c < w ? y0[r * w + c] : -777.0f;
            }
        }
        run_steps(s, coupled, 9, n, xp, ld, yp, meta);
        for (int64_t r = 0; r < n; r++) {
            T_ASSERT_MSG(memcmp(xp + r * ld, x + r * w, (size_t)w * sizeof *x) == 0,
                         "%s: row %lld differs with a padded stride", su->name, (long long)r);
            if (coupled) {
                T_ASSERT(memcmp(yp + r * ld, y + r * w, (size_t)w * sizeof *y) == 0);
            }
            for (int c = w; c < ld; c++) {
                T_ASSERT(xp[r * ld + c] == 12345.0f && yp[r * ld + c] == -777.0f);
            }
        }
        free(xp);
        free(yp);
    }
    free(x0);
    free(y0);
    free(x);
    free(y);
    free(xa);
    free(ya);
    free(xo);
    free(yo);
    free(met);
    free(meta);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

START_TEST(statistics)
{
    const setup *su = &SETUPS[_i];
    tref R;
    ebm_model_t *m = setup_model(su, &R);
    const int w = R.width;
    const int64_t n = 3000;
    ebm_sampler_t *s = new_sampler(m, su->kind, su->clamp, su->coupling);
    ebm_rng_t *rng = new_rng(6000 + (uint64_t)_i);
    float *x = xmalloc((size_t)(n * w) * sizeof *x), *y = xmalloc((size_t)(n * w) * sizeof *y);
    uint8_t *met = xmalloc((size_t)n);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 0.0);
    random_pairs(m, 81, n, w, x, y);
    share_clamped(su, &R, n, x, y);
    /* Coupled step: met fraction, tries, accept rate, rows. */
    ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met), EBM_OK);
    double nmet = 0.0;
    for (int64_t r = 0; r < n; r++) {
        nmet += met[r];
    }
    const double mf = ebm_sampler_stat(s, EBM_STAT_MET_FRACTION);
    const double tm = ebm_sampler_stat(s, EBM_STAT_TRIES_MEAN);
    const double tx = ebm_sampler_stat(s, EBM_STAT_TRIES_MAX);
    const double ar = ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
    VLOG("  %s: met fraction %.4f, tries mean %.3f max %.0f, accept rate %.4f\n", su->name, mf, tm,
         tx, ar);
    T_ASSERT_MSG(fabs(mf - nmet / n) < 1e-12, "%s: MET_FRACTION %g, met flags say %g", su->name, mf,
                 nmet / n);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ROWS) == (double)n);
    T_ASSERT(ar >= 0.0 && ar <= 1.0);
    T_ASSERT(tm >= 0.0 && tx >= 0.0 && tx == floor(tx) && tx >= tm);
    if (su->kind == EBM_SAMPLER_GIBBS) {
        T_ASSERT_MSG(ar == 1.0, "%s: a Gibbs step has no Metropolis decision: accept rate %g",
                     su->name, ar);
        if (su->model >= 0 || su->coupling == EBM_COUPLING_MAXIMAL) {
            /* rejection loops ran for the rows that did not meet */
            T_ASSERT_MSG(nmet < n && tm >= 1.0 && tx >= 1.0, "%s: tries mean %g max %g", su->name,
                         tm, tx);
        }
    } else {
        T_ASSERT(tm == 0.0 && tx == 0.0);
    }
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 1.0);
    /* Rows all equal: met fraction 1, no tries. */
    memcpy(y, x, (size_t)(n * w) * sizeof *x);
    ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met), EBM_OK);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_MET_FRACTION) == 1.0);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_TRIES_MAX) == 0.0);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 2.0);
    /* MH single step from one state: the accept rate against its exact
     * expectation sum_z min(1, exp(E(x) - E(z))) / M. */
    if (su->kind == EBM_SAMPLER_MH_UNIFORM) {
        const int k0 = 1;
        fill_rows(&R, k0, n, x);
        ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
        double xr[MAXW], zr[MAXW], expect = 0.0, moved = 0.0;
        ref_row(&R, k0, xr);
        for (int k = 0; k < R.S; k++) {
            ref_row(&R, k, zr);
            if (ref_same_clamped(&R, xr, zr)) {
                expect += ref_accept(&R, xr, zr) / ref_mh_states(&R);
            }
        }
        for (int64_t r = 0; r < n; r++) {
            moved += ref_code(&R, x + r * w) != k0;
        }
        double a = ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
        double z = binom_z(a * n, (double)n, expect);
        VLOG("  %s: MH accept rate %.4f, exact %.4f (z %.2f), moved %.4f\n", su->name, a, expect, z,
             moved / n);
        T_ASSERT_MSG(fabs(z) < 5.0 && a >= moved / n,
                     "%s: accept rate %.4f, exact %.4f, moved "
                     "%.4f",
                     su->name, a, expect, moved / n);
    } else {
        ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
        T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE) == 1.0);
    }
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ROWS) == (double)n);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 3.0);
    /* A failed call does not count; resets. */
    float bad = x[0];
    x[0] = NAN;
    ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_EVALUE);
    x[0] = bad;
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 3.0);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_ITERATION, 0), EBM_OK);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 0.0);
    ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 1.0);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_ITERATION, 41), EBM_OK);
    ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, NULL), EBM_OK);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 42.0);
    /* Unknown statistics */
    T_ASSERT(isnan(ebm_sampler_stat(s, -1)) && isnan(ebm_sampler_stat(s, EBM_STAT_COUNT)));
    T_ASSERT(isnan(ebm_sampler_stat(NULL, EBM_STAT_ROWS)));
    free(x);
    free(y);
    free(met);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 7. Bad input                                                             */
/* ------------------------------------------------------------------------ */

static int g_nfail;
static char g_first[1024];

#if defined(__GNUC__)
#define T_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define T_PRINTF(a, b)
#endif

static void soft_fail(int line, const char *fmt, ...) T_PRINTF(2, 3);
static void soft_fail(int line, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "check_sampler.c:%d: %s\n", line, buf);
    if (g_nfail++ == 0) {
        snprintf(g_first, sizeof g_first, "line %d: %s", line, buf);
    }
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            soft_fail(__LINE__, __VA_ARGS__);                                                      \
        }                                                                                          \
    } while (0)

#define FINISH()                                                                                   \
    T_ASSERT_MSG(g_nfail == 0, "%d bad-input check(s) failed (all listed on stderr); first: %s",   \
                 g_nfail, g_first)


/* Everything a failing call must leave as it was. */
typedef struct world {
    ebm_sampler_t *s;
    ebm_rng_t *rng;
    float *x, *y;
    uint8_t *met;
    size_t nx, ny, nm;
} world;

typedef struct snap {
    uint64_t x, y, met, rng[EBM_RNG_STATE_WORDS];
    double stats[EBM_STAT_COUNT]; /* compared bytewise: NaN == NaN */
} snap;

static snap take(const world *wd)
{
    snap s;
    s.x = t_checksum(wd->x, wd->nx * sizeof(float));
    s.y = t_checksum(wd->y, wd->ny * sizeof(float));
    s.met = t_checksum(wd->met, wd->nm);
    ebm_rng_get_state(wd->rng, s.rng);
    for (int k = 0; k <= EBM_STAT_ITERATION; k++) {
        s.stats[k] = ebm_sampler_stat(wd->s, k);
    }
    return s;
}

/* A failed call on wd->s: its code, a message naming each needle (NULL:
 * none), and nothing changed. */
static void expect_refused(int line, const world *wd, const snap *before, int rc, int code,
                           const char *what, const char *n1, const char *n2)
{
    snap after = take(wd);
    const char *msg = ebm_sampler_errmsg(wd->s);
    if (rc != code) {
        soft_fail(line, "%s returned %s, expected %s (message \"%s\")", what, ebm_error_name(rc),
                  ebm_error_name(code), msg);
        return;
    }
    if ((n1 != NULL && !t_contains(msg, n1)) || (n2 != NULL && !t_contains(msg, n2))) {
        soft_fail(line, "%s: message \"%s\" does not name \"%s\"%s%s", what, msg, n1,
                  n2 != NULL ? " and " : "", n2 != NULL ? n2 : "");
    }
    if (after.x != before->x || after.y != before->y || after.met != before->met) {
        soft_fail(line, "%s changed x, y or met", what);
    }
    if (memcmp(after.rng, before->rng, sizeof after.rng) != 0) {
        soft_fail(line, "%s moved the generator", what);
    }
    for (int k = 0; k <= EBM_STAT_ITERATION; k++) {
        if (memcmp(&after.stats[k], &before->stats[k], sizeof after.stats[k]) != 0) {
            soft_fail(line, "%s changed statistic %d (%g -> %g)", what, k, before->stats[k],
                      after.stats[k]);
        }
    }
}

#define REFUSED(code, call, n1, n2)                                                                \
    do {                                                                                           \
        snap before_ = take(&wd);                                                                  \
        int rc_ = (call);                                                                          \
        expect_refused(__LINE__, &wd, &before_, rc_, (code), #call, (n1), (n2));                   \
    } while (0)

START_TEST(bad_create)
{
    g_nfail = 0;
    static const int64_t rbm[2] = {3, 2}, dbm[3] = {2, 3, 2};
    ebm_model_t *m = t_model(2, rbm, B_, B_);
    ebm_model_t *g3 = t_model(3, dbm, G_, B_);
    ebm_sampler_t *s = (ebm_sampler_t *)&g_nfail; /* garbage: must become NULL */
    int rc = ebm_sampler_create(&s, NULL, EBM_SAMPLER_GIBBS);
    CHECK(rc == EBM_ENULL, "create with a NULL model returned %s", ebm_error_name(rc));
    CHECK(s == NULL, "create with a NULL model left *out = %p (must be NULL on failure)",
          (void *)s);
    rc = ebm_sampler_create(NULL, m, EBM_SAMPLER_GIBBS);
    CHECK(rc == EBM_ENULL && t_contains(ebm_model_errmsg(m), "out"),
          "create(out NULL): %s, message \"%s\"", ebm_error_name(rc), ebm_model_errmsg(m));
    static const int kinds[] = {-1, 4, 1000};
    for (size_t i = 0; i < 3; i++) {
        char v[16];
        snprintf(v, sizeof v, "%d", kinds[i]);
        s = (ebm_sampler_t *)&g_nfail;
        rc = ebm_sampler_create(&s, m, kinds[i]);
        CHECK(rc == EBM_EVALUE && s == NULL, "create(kind %d): %s, out %p", kinds[i],
              ebm_error_name(rc), (void *)s);
        CHECK(t_contains(ebm_model_errmsg(m), "kind") && t_contains(ebm_model_errmsg(m), v),
              "create(kind %d): message \"%s\"", kinds[i], ebm_model_errmsg(m));
    }
    static const int lk[] = {EBM_SAMPLER_LANGEVIN, EBM_SAMPLER_GIBBS_LANGEVIN};
    for (int i = 0; i < 2; i++) {
        s = (ebm_sampler_t *)&g_nfail;
        rc = ebm_sampler_create(&s, m, lk[i]);
        CHECK(rc == EBM_EUNSUPPORTED && s == NULL, "create(kind %d) on an RBM: %s", lk[i],
              ebm_error_name(rc));
        CHECK(t_contains(ebm_model_errmsg(m), "LANGEVIN") && t_contains(ebm_model_errmsg(m), "GRBM"),
              "create(LANGEVIN) on an RBM: message \"%s\"", ebm_model_errmsg(m));
        s = (ebm_sampler_t *)&g_nfail;
        rc = ebm_sampler_create(&s, g3, lk[i]);
        CHECK(rc == EBM_EUNSUPPORTED && s == NULL, "create(kind %d) on a Gaussian DBM: %s", lk[i],
              ebm_error_name(rc));
    }
    /* The other kinds are fine on all these models. */
    for (int k = EBM_SAMPLER_GIBBS; k <= EBM_SAMPLER_MH_UNIFORM; k++) {
        rc = ebm_sampler_create(&s, g3, k);
        CHECK(rc == EBM_OK && s != NULL, "create(kind %d) on a Gaussian DBM: %s", k,
              ebm_error_name(rc));
        ebm_sampler_destroy(s);
    }
    ebm_sampler_destroy(NULL);
    CHECK(ebm_sampler_errmsg(NULL) != NULL, "ebm_sampler_errmsg(NULL) is NULL");
    ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_GIBBS), EBM_OK);
    CHECK(ebm_sampler_errmsg(s) != NULL && ebm_sampler_errmsg(s)[0] == '\0',
          "a fresh sampler's message is \"%s\"", ebm_sampler_errmsg(s));
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
    ebm_model_destroy(g3);
    FINISH();
}
END_TEST

/* Options: codes, messages, and a refused value changes nothing (the
 * sampler then behaves exactly like a fresh one with the good settings). */
START_TEST(bad_options)
{
    g_nfail = 0;
    const mspec *ms = &MODELS[2];
    ebm_model_t *m = make_model(ms);
    tref R;
    load_model(ms, m, &R);
    const int w = R.width;
    enum { N = 64 };
    float x[N * 6], y[N * 6], x2[N * 6], y2[N * 6];
    uint8_t met[N], met2[N];
    world wd = {NULL, NULL, x, y, met, N * 6, N * 6, N};
    wd.s = new_sampler(m, EBM_SAMPLER_GIBBS, 1, EBM_COUPLING_MAXIMAL);
    wd.rng = new_rng(1);
    ebm_sampler_t *s = wd.s;
    random_pairs(m, 5, N, w, x, y);
    memset(met, 7, sizeof met);
    CHECK(ebm_sampler_set_int(NULL, EBM_SAMPLER_COUPLING, 0) == EBM_ENULL, "set_int(NULL)");
    CHECK(ebm_sampler_set_double(NULL, EBM_SAMPLER_STEP_SIZE, 0.1) == EBM_ENULL,
          "set_double(NULL)");
    REFUSED(EBM_EVALUE, ebm_sampler_set_int(s, 99, 0), "99", NULL);
    REFUSED(EBM_EVALUE, ebm_sampler_set_int(s, -1, 0), "-1", NULL);
    REFUSED(EBM_EVALUE, ebm_sampler_set_double(s, 99, 0.5), "99", NULL);
    REFUSED(EBM_EVALUE, ebm_sampler_set_double(s, -3, 0.5), "-3", NULL);
    /* int options given as double, and the double option as int */
    static const char *const names[NOPT] = {
        "EBM_SAMPLER_CLAMP_LAYERS",      "EBM_SAMPLER_COUPLING",    "EBM_SAMPLER_LANGEVIN_STEPS",
        "EBM_SAMPLER_STEP_SIZE",         "EBM_SAMPLER_COSINE",      "EBM_SAMPLER_ADJUST_AFTER",
        "EBM_SAMPLER_SCALE_BY_VARIANCE", "EBM_SAMPLER_CLOSED_FORM", "EBM_SAMPLER_ITERATION"};
    for (int o = 0; o < NOPT; o++) {
        if (o == EBM_SAMPLER_STEP_SIZE) {
            REFUSED(EBM_EVALUE, ebm_sampler_set_int(s, o, 1), names[o], "double");
        } else {
            REFUSED(EBM_EVALUE, ebm_sampler_set_double(s, o, 1.0), names[o], NULL);
        }
    }
    /* out-of-range values (the DBM has 3 layers: masks 0..7) */
    static const struct {
        int option;
        int64_t value;
        const char *text;
    } bad[] = {
        {EBM_SAMPLER_CLAMP_LAYERS, 8, "8"},   {EBM_SAMPLER_CLAMP_LAYERS, 1 << 20, "1048576"},
        {EBM_SAMPLER_CLAMP_LAYERS, -1, "-1"}, {EBM_SAMPLER_COUPLING, 5, "5"},
        {EBM_SAMPLER_COUPLING, -1, "-1"},     {EBM_SAMPLER_COUPLING, 2, "2"},
        {EBM_SAMPLER_LANGEVIN_STEPS, 0, "0"}, {EBM_SAMPLER_LANGEVIN_STEPS, -5, "-5"},
        {EBM_SAMPLER_COSINE, 2, "2"},         {EBM_SAMPLER_COSINE, -1, "-1"},
        {EBM_SAMPLER_ADJUST_AFTER, -2, "-2"}, {EBM_SAMPLER_SCALE_BY_VARIANCE, 3, "3"},
        {EBM_SAMPLER_CLOSED_FORM, -1, "-1"},  {EBM_SAMPLER_ITERATION, -1, "-1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        REFUSED(EBM_EVALUE, ebm_sampler_set_int(s, bad[i].option, bad[i].value),
                names[bad[i].option], bad[i].text);
    }
    static const struct {
        double v;
        const char *text;
    } bad_d[] = {{0.0, "0"},        {-1.0, "-1"},       {NAN, "nan"},
                 {INFINITY, "inf"}, {-INFINITY, "inf"}, {-0.0, "0"}};
    for (size_t i = 0; i < sizeof bad_d / sizeof bad_d[0]; i++) {
        REFUSED(EBM_EVALUE, ebm_sampler_set_double(s, EBM_SAMPLER_STEP_SIZE, bad_d[i].v),
                "EBM_SAMPLER_STEP_SIZE", bad_d[i].text);
    }
    /* Values at the edges are accepted. */
    CHECK(ebm_sampler_set_int(s, EBM_SAMPLER_ADJUST_AFTER, -1) == EBM_OK, "adjust -1");
    CHECK(ebm_sampler_set_int(s, EBM_SAMPLER_LANGEVIN_STEPS, 1) == EBM_OK, "steps 1");
    CHECK(ebm_sampler_set_double(s, EBM_SAMPLER_STEP_SIZE, 1e-30) == EBM_OK, "step size 1e-30");
    CHECK(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, 7) == EBM_OK, "clamp all layers");
    CHECK(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, 1) == EBM_OK, "clamp 1");
    /* After all that, s behaves like a fresh sampler with clamp 1, MAXIMAL. */
    memcpy(x2, x, sizeof x);
    memcpy(y2, y, sizeof y);
    ebm_sampler_t *fresh = new_sampler(m, EBM_SAMPLER_GIBBS, 1, EBM_COUPLING_MAXIMAL);
    for (int i = 0; i < N; i++) { /* the posterior: shared visible units */
        memcpy(y + i * w, x + i * w, 2 * sizeof *x);
    }
    memcpy(y2, y, sizeof y);
    ebm_rng_t *r1 = new_rng(3), *r2 = new_rng(3);
    ck_assert_int_eq(ebm_sampler_coupled_step(s, r1, N, x, w, y, w, met), EBM_OK);
    ck_assert_int_eq(ebm_sampler_coupled_step(fresh, r2, N, x2, w, y2, w, met2), EBM_OK);
    CHECK(memcmp(x, x2, sizeof x) == 0 && memcmp(y, y2, sizeof y) == 0 &&
              memcmp(met, met2, sizeof met) == 0,
          "a refused option changed the sampler's behaviour");
    CHECK(ebm_sampler_stat(s, EBM_STAT_ITERATION) == 1.0, "iteration %g",
          ebm_sampler_stat(s, EBM_STAT_ITERATION));
    ebm_rng_destroy(r1);
    ebm_rng_destroy(r2);
    ebm_sampler_destroy(fresh);
    ebm_sampler_destroy(wd.s);
    ebm_rng_destroy(wd.rng);
    ebm_model_destroy(m);
    FINISH();
}
END_TEST

/* Step and coupled step: NULLs, shapes, invalid states, kinds. */
START_TEST(bad_steps)
{
    g_nfail = 0;
    const mspec *ms = &MODELS[2]; /* binary DBM 2-2-2 */
    ebm_model_t *m = make_model(ms);
    tref R;
    load_model(ms, m, &R);
    const int w = R.width;
    enum { N = 5 };
    float x[N * 6], y[N * 6];
    uint8_t met[N];
    world wd = {NULL, NULL, x, y, met, N * 6, N * 6, N};
    wd.rng = new_rng(2);
    random_pairs(m, 6, N, w, x, y);
    memset(met, 0xAB, sizeof met);
    ebm_rng_t *rng = wd.rng;
    for (int kind = EBM_SAMPLER_GIBBS; kind <= EBM_SAMPLER_MH_UNIFORM; kind++) {
        wd.s = new_sampler(m, kind, 0, EBM_COUPLING_CRN);
        ebm_sampler_t *s = wd.s;
        /* one good call first, so that the counter is not 0 */
        ck_assert_int_eq(ebm_sampler_step(s, rng, N, x, w), EBM_OK);
        CHECK(ebm_sampler_step(NULL, rng, N, x, w) == EBM_ENULL, "step(NULL sampler)");
        CHECK(ebm_sampler_coupled_step(NULL, rng, N, x, w, y, w, met) == EBM_ENULL,
              "coupled_step(NULL sampler)");
        REFUSED(EBM_ENULL, ebm_sampler_step(s, NULL, N, x, w), "rng", NULL);
        REFUSED(EBM_ENULL, ebm_sampler_step(s, rng, N, NULL, w), "x", NULL);
        REFUSED(EBM_ESHAPE, ebm_sampler_step(s, rng, -1, x, w), "n", "-1");
        REFUSED(EBM_ESHAPE, ebm_sampler_step(s, rng, N, x, w - 1), "x", "5");
        REFUSED(EBM_ESHAPE, ebm_sampler_step(s, rng, N, x, 0), "x", "0");
        REFUSED(EBM_ENULL, ebm_sampler_coupled_step(s, NULL, N, x, w, y, w, met), "rng", NULL);
        REFUSED(EBM_ENULL, ebm_sampler_coupled_step(s, rng, N, NULL, w, y, w, met), "x", NULL);
        REFUSED(EBM_ENULL, ebm_sampler_coupled_step(s, rng, N, x, w, NULL, w, met), "y", NULL);
        REFUSED(EBM_ESHAPE, ebm_sampler_coupled_step(s, rng, -3, x, w, y, w, met), "n", "-3");
        REFUSED(EBM_ESHAPE, ebm_sampler_coupled_step(s, rng, N, x, w - 1, y, w, met), "x", "5");
        REFUSED(EBM_ESHAPE, ebm_sampler_coupled_step(s, rng, N, x, w, y, w - 2, met), "y", "4");
        /* invalid states: 0.5 in a binary layer, NaN, -1 in a binary layer,
         * in x and in y, in the first, a middle and the last row */
        static const struct {
            int row, col;
            float v;
            const char *text;
        } inv[] = {{0, 0, 0.5f, "0.5"},
                   {2, 3, NAN, "nan"},
                   {4, 5, -1.0f, "-1"},
                   {1, 2, INFINITY, "inf"},
                   {3, 4, 2.0f, "2"}};
        for (size_t i = 0; i < sizeof inv / sizeof inv[0]; i++) {
            float *cell_x = &x[inv[i].row * w + inv[i].col],
                  *cell_y = &y[inv[i].row * w + inv[i].col];
            float keep = *cell_x;
            *cell_x = inv[i].v;
            REFUSED(EBM_EVALUE, ebm_sampler_step(s, rng, N, x, w), "x", inv[i].text);
            REFUSED(EBM_EVALUE, ebm_sampler_coupled_step(s, rng, N, x, w, y, w, met), "x",
                    inv[i].text);
            *cell_x = keep;
            keep = *cell_y;
            *cell_y = inv[i].v;
            REFUSED(EBM_EVALUE, ebm_sampler_coupled_step(s, rng, N, x, w, y, w, met), "y",
                    inv[i].text);
            *cell_y = keep;
        }
        /* n = 0 with NULL states is a no-op; met NULL is allowed */
        CHECK(ebm_sampler_step(s, rng, 0, NULL, w) == EBM_OK, "step(n = 0, x NULL)");
        CHECK(ebm_sampler_coupled_step(s, rng, 0, NULL, w, NULL, w, NULL) == EBM_OK,
              "coupled_step(n = 0)");
        CHECK(ebm_sampler_coupled_step(s, rng, N, x, w, y, w, NULL) == EBM_OK,
              "coupled_step(met NULL)");
        ebm_sampler_destroy(s);
    }
    /* spin layers: 0 is not a spin value */
    {
        const mspec *sp = &MODELS[3];
        ebm_model_t *ms2 = make_model(sp);
        wd.s = new_sampler(ms2, EBM_SAMPLER_GIBBS, 0, EBM_COUPLING_CRN);
        ebm_rng_t *r2 = new_rng(4);
        ck_assert_int_eq(ebm_model_random_state(ms2, r2, N, x, w, NULL, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(ms2, r2, N, y, w, NULL, 0), EBM_OK);
        ebm_rng_destroy(r2);
        x[7] = 0.0f;
        REFUSED(EBM_EVALUE, ebm_sampler_step(wd.s, rng, N, x, w), "x", "spin");
        x[7] = 1.0f;
        y[11] = 0.0f;
        REFUSED(EBM_EVALUE, ebm_sampler_coupled_step(wd.s, rng, N, x, w, y, w, met), "y", "spin");
        ebm_sampler_destroy(wd.s);
        ebm_model_destroy(ms2);
    }
    /* GRBM: MH_UNIFORM with the Gaussian layer free; NaN visible; the
     * Langevin kinds have no coupled step. */
    {
        tref G;
        ebm_model_t *g = make_grbm(&G);
        const int gw = G.width;
        ebm_rng_t *r2 = new_rng(8);
        ck_assert_int_eq(ebm_model_random_state(g, r2, N, x, gw, NULL, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(g, r2, N, y, gw, NULL, 0), EBM_OK);
        ebm_rng_destroy(r2);
        wd.nx = wd.ny = (size_t)(N * gw);
        wd.s = new_sampler(g, EBM_SAMPLER_MH_UNIFORM, 0, EBM_COUPLING_CRN);
        REFUSED(EBM_EUNSUPPORTED, ebm_sampler_step(wd.s, rng, N, x, gw), "MH_UNIFORM", "Gaussian");
        REFUSED(EBM_EUNSUPPORTED, ebm_sampler_coupled_step(wd.s, rng, N, x, gw, y, gw, met),
                "MH_UNIFORM", "Gaussian");
        ck_assert_int_eq(ebm_sampler_set_int(wd.s, EBM_SAMPLER_CLAMP_LAYERS, 2), EBM_OK);
        REFUSED(EBM_EUNSUPPORTED, ebm_sampler_step(wd.s, rng, N, x, gw), "MH_UNIFORM", NULL);
        ck_assert_int_eq(ebm_sampler_set_int(wd.s, EBM_SAMPLER_CLAMP_LAYERS, 1), EBM_OK);
        CHECK(ebm_sampler_step(wd.s, rng, N, x, gw) == EBM_OK, "MH on the GRBM posterior: %s",
              ebm_sampler_errmsg(wd.s));
        ebm_sampler_destroy(wd.s);
        wd.s = new_sampler(g, EBM_SAMPLER_GIBBS, 0, EBM_COUPLING_CRN);
        float keep = x[gw + 1];
        x[gw + 1] = NAN;
        REFUSED(EBM_EVALUE, ebm_sampler_step(wd.s, rng, N, x, gw), "x", "nan");
        x[gw + 1] = keep;
        keep = y[2 * gw];
        y[2 * gw] = -INFINITY;
        REFUSED(EBM_EVALUE, ebm_sampler_coupled_step(wd.s, rng, N, x, gw, y, gw, met), "y", "inf");
        y[2 * gw] = keep;
        ebm_sampler_destroy(wd.s);
        for (int kind = EBM_SAMPLER_LANGEVIN; kind <= EBM_SAMPLER_GIBBS_LANGEVIN; kind++) {
            ck_assert_int_eq(ebm_sampler_create(&wd.s, g, kind), EBM_OK);
            REFUSED(EBM_EUNSUPPORTED, ebm_sampler_coupled_step(wd.s, rng, N, x, gw, y, gw, met),
                    "LANGEVIN", NULL);
            ebm_sampler_destroy(wd.s);
        }
        ebm_model_destroy(g);
    }
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
    FINISH();
}
END_TEST

/* Parameters so large that a layer input overflows float: the coupled step
 * refuses (EBM_EVALUE) and changes nothing (states, generator, statistics
 * of the last successful call), or runs and keeps valid states. */
START_TEST(huge_parameters)
{
    g_nfail = 0;
    static const int64_t sizes[2] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, B_, B_);
    int64_t np = ebm_model_param_count(m);
    float *p = xmalloc((size_t)np * sizeof *p);
    for (int64_t i = 0; i < np; i++) {
        p[i] = (i % 2 ? 1 : -1) * 3e38f;
    }
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    free(p);
    enum { N = 8, W = 5 };
    float x[N * W], y[N * W];
    uint8_t met[N];
    for (int i = 0; i < N * W; i++) {
        x[i] = 1.0f;
        y[i] = (float)(i % 2);
    }
    memset(met, 0xAB, sizeof met);
    world wd = {NULL, new_rng(3), x, y, met, N * W, N * W, N};
    for (int c = 0; c < 2; c++) {
        wd.s = new_sampler(m, EBM_SAMPLER_GIBBS, 0, c);
        float one[W] = {1, 1, 1, 1, 1}, two[W] = {1, 1, 1, 1, 1};
        ck_assert_int_eq(ebm_sampler_coupled_step(wd.s, wd.rng, 1, one, W, two, W, NULL), EBM_OK);
        snap before = take(&wd);
        int rc = ebm_sampler_coupled_step(wd.s, wd.rng, N, x, W, y, W, met);
        if (rc != EBM_OK) {
            expect_refused(__LINE__, &wd, &before, rc, EBM_EVALUE, "coupled step, huge params",
                           "overflow", NULL);
        } else {
            for (int i = 0; i < N * W; i++) {
                CHECK(x[i] == 0.0f || x[i] == 1.0f, "x[%d] = %g", i, (double)x[i]);
                CHECK(y[i] == 0.0f || y[i] == 1.0f, "y[%d] = %g", i, (double)y[i]);
            }
        }
        ebm_sampler_destroy(wd.s);
    }
    ebm_rng_destroy(wd.rng);
    ebm_model_destroy(m);
    FINISH();
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Suite                                                                    */
/* ------------------------------------------------------------------------ */

/* ---- MH energies: float GEMMs with a certified bound = the double path --- */

/* A spin or binary DBM; `tied` makes many energies nearly equal (weights
 * about +-3000, zero biases), so that decisions fall inside the bound and go
 * to double. */
static ebm_model_t *mh_model(int units, int tied, const int64_t *sizes, int nl, uint64_t seed)
{
    ebm_model_t *m = NULL;
    char err[256];
    ck_assert_int_eq(ebm_model_create(&m, nl, sizes, units, units, err, sizeof err), EBM_OK);
    ebm_rng_t *rng = NULL;
    ck_assert_int_eq(ebm_rng_create(&rng, seed, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 1.0), EBM_OK);
    if (tied) {
        int64_t np = ebm_model_param_count(m);
        float *p = malloc((size_t)np * sizeof *p), *u = malloc((size_t)np * sizeof *u);
        ck_assert_int_eq(ebm_rng_uniform(rng, np, u), EBM_OK);
        int64_t nw = 0;
        for (int l = 1; l < nl; l++) {
            nw += sizes[l - 1] * sizes[l];
        }
        for (int64_t i = 0; i < np; i++) {
            /* +-3000 (1 + u/1000): near ties that float rounding can flip */
            float c = 3e3f * (1.0f + 1e-3f * u[(i * 7 + 3) % np]);
            p[i] = i < nw ? (u[i] < 0.5f ? -c : c) : 0.0f;
        }
        ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
        free(p);
        free(u);
    }
    ebm_rng_destroy(rng);
    return m;
}

/* |fast - double| <= bound for random and extreme states of wide models. */
START_TEST(mh_energy_bound)
{
    const int64_t sizes[3] = {300, 200, 100}, n = 200;
    for (int units = EBM_UNITS_BINARY; units <= EBM_UNITS_SPIN; units++) {
        ebm_model_t *m = mh_model(units, 0, sizes, 3, 31 + (uint64_t)units);
        const int64_t w = ebm_model_state_width(m);
        float *x = malloc((size_t)(n * w) * sizeof *x), *t = malloc((size_t)(n * 300) * sizeof *t);
        double *ef = malloc((size_t)n * sizeof *ef), *ed = malloc((size_t)n * sizeof *ed);
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 5, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x, w, NULL, 0), EBM_OK);
        for (int64_t k = 0; k < w; k++) {
            x[k] = 1.0f; /* row 0: every unit up */
        }
        ebm__energy_fast(m, n, x, w, ef, t);
        ck_assert_int_eq(ebm_model_energy(m, n, x, w, ed), EBM_OK);
        double bound = ebm__energy_fast_bound(m), worst = 0.0;
        for (int64_t r = 0; r < n; r++) {
            worst = fmax(worst, fabs(ef[r] - ed[r]));
        }
        ck_assert_msg(worst <= bound, "units %d: |float - double| energy %g > bound %g", units,
                      worst, bound);
        ck_assert_msg(worst > 0.0 && bound < 5.0, "units %d: error %g, bound %g", units, worst,
                      bound);
        free(x);
        free(t);
        free(ef);
        free(ed);
        ebm_rng_destroy(rng);
        ebm_model_destroy(m);
    }
}
END_TEST

/* E(x) from the input of layer 1 (ebm__energy_from_input, as UCD-LMI's
 * first MH step takes it from the Gibbs sweep before it) against the double
 * energies: within the from_input bound of ebm__energy_bounds for random
 * and all-up states of wide models of two and three layers with biases;
 * its twin, which forgets layer 0's bias term, is not. */
START_TEST(mh_energy_from_input_bound)
{
    const int64_t sizes[3] = {300, 200, 100}, n = 200;
    for (int c = 0; c < 4; c++) {
        const int units = c % 2 ? EBM_UNITS_SPIN : EBM_UNITS_BINARY, nl = c < 2 ? 3 : 2;
        ebm_model_t *m = mh_model(units, 0, sizes, nl, 61 + (uint64_t)c);
        const int64_t w = ebm_model_state_width(m), np = ebm_model_param_count(m);
        float *p = malloc((size_t)np * sizeof *p);
        ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
        int64_t b0 = 0; /* layer 0's bias block */
        for (int64_t l = 0; l < nl; l++) {
            int64_t off, cols;
            ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, l, &off, NULL, &cols),
                             EBM_OK);
            b0 = l == 0 ? off : b0;
            for (int64_t j = 0; j < cols; j++) {
                p[off + j] = 0.5f + 0.01f * (float)(j % 17);
            }
        }
        ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
        float *x = malloc((size_t)(n * w) * sizeof *x), *a = malloc((size_t)(n * 200) * sizeof *a);
        double *ef = malloc((size_t)n * sizeof *ef), *ed = malloc((size_t)n * sizeof *ed);
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 5, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x, w, NULL, 0), EBM_OK);
        for (int64_t k = 0; k < w; k++) {
            x[k] = 1.0f; /* row 0: every unit up */
        }
        ebm__layer_input(m, 1, n, x, w, a, 200);
        ebm__energy_from_input(m, n, x, w, a, ef);
        ck_assert_int_eq(ebm_model_energy(m, n, x, w, ed), EBM_OK);
        double fast, bound, worst = 0.0, worst_twin = 0.0;
        ebm__energy_bounds(m, &fast, &bound);
        for (int64_t r = 0; r < n; r++) {
            double b0x0 = 0.0;
            for (int64_t j = 0; j < 300; j++) {
                b0x0 += (double)p[b0 + j] * (double)x[r * w + j];
            }
            worst = fmax(worst, fabs(ef[r] - ed[r]));
            worst_twin = fmax(worst_twin, fabs(ef[r] + b0x0 - ed[r]));
        }
        ck_assert_msg(worst <= bound, "case %d: |from input - double| energy %g > bound %g", c,
                      worst, bound);
        ck_assert_msg(worst > 0.0 && bound < 10.0 && bound > fast,
                      "case %d: error %g, bound %g (GEMM path's %g)", c, worst, bound, fast);
        ck_assert_msg(worst_twin > bound, "case %d: the twin without b_0 passed", c);
        free(p);
        free(x);
        free(a);
        free(ef);
        free(ed);
        ebm_rng_destroy(rng);
        ebm_model_destroy(m);
    }
}
END_TEST

/* An MH step that takes E(x) from the input of layer 1 (entry_input) moves
 * the chains as the double path does: after Gibbs steps, with the input
 * they leave, and (the tied model, whose Gibbs steps would leave no near
 * ties) at the states the MH steps reach, with the input ebm__layer_input
 * makes there, where the bound leaves decisions to double. Its twin, given
 * the input of the row after each row, does not. */
START_TEST(mh_entry_input_agrees)
{
    const int64_t sizes[3] = {12, 10, 8}, n = 2000, steps = 20;
    const int units = _i % 2 ? EBM_UNITS_SPIN : EBM_UNITS_BINARY, tied = _i / 2;
    ebm_model_t *m = mh_model(units, tied, sizes, 3, 70 + (uint64_t)_i);
    const int64_t w = ebm_model_state_width(m);
    float *x[3], *a = malloc((size_t)(n * 10) * sizeof *a);
    int64_t rechecks = 0;
    for (int path = 0; path < 3; path++) { /* fast, plain, the twin */
        ebm_sampler_t *s = NULL, *g = NULL;
        ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_MH_UNIFORM), EBM_OK);
        ck_assert_int_eq(ebm_sampler_create(&g, m, EBM_SAMPLER_GIBBS), EBM_OK);
        s->plain_energies = path == 1;
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 9, 1), EBM_OK);
        x[path] = malloc((size_t)(n * w) * sizeof *x[path]);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x[path], w, NULL, 0), EBM_OK);
        for (int64_t t = 0; t < steps; t++) {
            const float *input = a;
            if (tied) {
                ebm__layer_input(m, 1, n, x[path], w, a, 10);
            } else {
                ck_assert_int_eq(ebm_sampler_step(g, rng, n, x[path], w), EBM_OK);
                ck_assert_ptr_nonnull(input = g->hidden_input);
            }
            s->entry_input = input + (path == 2 ? 10 : 0);
            ck_assert_int_eq(ebm_sampler_step(s, rng, n - 1, x[path], w), EBM_OK);
            ck_assert_ptr_null(s->entry_input);
        }
        if (path == 0) {
            rechecks = s->energy_rechecks;
        }
        ebm_rng_destroy(rng);
        ebm_sampler_destroy(s);
        ebm_sampler_destroy(g);
    }
    const size_t bytes = (size_t)(n * w) * sizeof *x[0];
    ck_assert_msg(memcmp(x[0], x[1], bytes) == 0,
                  "case %d: E(x) from the Gibbs step's input moved the chains differently", _i);
    ck_assert_msg(memcmp(x[2], x[1], bytes) != 0, "case %d: the twin passed", _i);
    if (tied) {
        ck_assert_msg(rechecks >= 10, "case %d: only %lld decisions went to double", _i,
                      (long long)rechecks);
    }
    for (int path = 0; path < 3; path++) {
        free(x[path]);
    }
    free(a);
    ebm_model_destroy(m);
}
END_TEST

/* The same generator gives the same states with the float path as with the
 * double path, single and coupled, including the decisions the float
 * path's bound leaves to double (the tied model makes many). */
START_TEST(mh_energy_paths_agree)
{
    const int64_t sizes[3] = {12, 10, 8}, n = 2000, steps = 30;
    const int units = _i % 2 ? EBM_UNITS_SPIN : EBM_UNITS_BINARY, tied = _i / 2;
    ebm_model_t *m = mh_model(units, tied, sizes, 3, 40 + (uint64_t)_i);
    const int64_t w = ebm_model_state_width(m);
    float *x[2], *y[2];
    int64_t rechecks = 0;
    for (int path = 0; path < 2; path++) {
        ebm_sampler_t *s = NULL;
        ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_MH_UNIFORM), EBM_OK);
        s->plain_energies = path;
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 9, 1), EBM_OK);
        x[path] = malloc((size_t)(n * w) * sizeof *x[path]);
        y[path] = malloc((size_t)(n * w) * sizeof *y[path]);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x[path], w, NULL, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, y[path], w, NULL, 0), EBM_OK);
        for (int64_t t = 0; t < steps; t++) {
            ck_assert_int_eq(ebm_sampler_step(s, rng, n / 2, x[path], w), EBM_OK);
            ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n / 2, x[path] + n / 2 * w, w,
                                                      y[path], w, NULL), EBM_OK);
        }
        if (path == 0) {
            rechecks = s->energy_rechecks;
        } else {
            ck_assert_int_eq(s->energy_rechecks, 0);
        }
        ebm_rng_destroy(rng);
        ebm_sampler_destroy(s);
    }
    ck_assert_msg(memcmp(x[0], x[1], (size_t)(n * w) * sizeof *x[0]) == 0 &&
                      memcmp(y[0], y[1], (size_t)(n * w) * sizeof *y[0]) == 0,
                  "case %d: the float-energy path moved the chains differently", _i);
    if (tied) {
        ck_assert_msg(rechecks >= 10, "case %d: only %lld decisions went to double", _i,
                      (long long)rechecks);
    }
    for (int path = 0; path < 2; path++) {
        free(x[path]);
        free(y[path]);
    }
    ebm_model_destroy(m);
}
END_TEST

Suite *ebm_sampler_suite(void)
{
    Suite *s = suite_create("sampler");
    const double slow = t_level() >= 2 ? 20.0 : 1.0;
    TCase *tc;

    tc = tcase_create("design");
    tcase_set_timeout(tc, 30 * slow);
    tcase_add_test(tc, chi_selfcheck);
    tcase_add_loop_test(tc, kernel_design, 0, N_MODELS);
    suite_add_tcase(s, tc);

    tc = tcase_create("step_law");
    tcase_set_timeout(tc, 60 * slow);
    tcase_add_loop_test(tc, step_law, 0, 2 * N_MODELS);
    suite_add_tcase(s, tc);

    tc = tcase_create("coupled_law");
    tcase_set_timeout(tc, 60 * slow);
    tcase_add_loop_test(tc, coupled_law, 0, N_VARIANTS * N_MODELS);
    tcase_add_loop_test(tc, clamped_layers_fixed, 0, N_VARIANTS * (N_MODELS - FIRST_CLAMPED));
    suite_add_tcase(s, tc);

    tc = tcase_create("meeting_time");
    tcase_set_timeout(tc, 60 * slow);
    tcase_add_loop_test(tc, meeting_time_law, 0, N_VARIANTS);
    tcase_add_loop_test(tc, meeting_time_finite, 0, 2);
    suite_add_tcase(s, tc);

    tc = tcase_create("gaussian");
    tcase_set_timeout(tc, 60 * slow);
    tcase_add_test(tc, grbm_step);
    tcase_add_loop_test(tc, grbm_coupled, 0, 2);
    suite_add_tcase(s, tc);

    tc = tcase_create("rows");
    tcase_set_timeout(tc, 30 * slow);
    tcase_add_loop_test(tc, determinism_and_rows, 0, N_SETUPS);
    tcase_add_loop_test(tc, statistics, 0, N_SETUPS);
    tcase_add_test(tc, mh_energy_bound);
    tcase_add_loop_test(tc, mh_energy_paths_agree, 0, 4);
    tcase_add_test(tc, mh_energy_from_input_bound);
    tcase_add_loop_test(tc, mh_entry_input_agrees, 0, 4);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad_input");
    tcase_set_timeout(tc, 10 * slow);
    tcase_add_test(tc, bad_create);
    tcase_add_test(tc, bad_options);
    tcase_add_test(tc, bad_steps);
    tcase_add_test(tc, huge_parameters);
    suite_add_tcase(s, tc);
    return s;
}
