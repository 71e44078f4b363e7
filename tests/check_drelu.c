/* The numerics of dReLU units (src/drelu.c), against quadrature.
 *
 * 1. ebm__half_log_int(g, t) = log of the integral over h > 0 of
 *    exp(-g h^2 / 2 + t h) against Simpson's rule on a grid fine enough for
 *    1e-10 (the integrand's scale is min(1/sqrt(g), 1/|t|)), for g from
 *    e^-5 to e^5 and t from -50 to 50; the twin without its
 *    0.5 log(pi / (2 g)) term fails.
 * 2. ebm__log_erfcx against Laplace's continued fraction for erfc from
 *    z = 5 to 1000, both sides of where its branches meet (z = 26), to
 *    1e-13; erfcx(0) = 1, the reflection erfcx(-z) = 2 exp(z^2) -
 *    erfcx(z), and the asymptote -log(z sqrt(pi)) far out.
 * 3. ebm__drelu_free(gp, gn, tp, tn) is -log of the sum of the two halves.
 * 4. The half-line moments and branch probabilities against quadrature.
 * 5. ebm__drelu_draw: 10^5 draws of one unit against its exact CDF (closed
 *    form from the half-line integrals) in 40 equiprobable bins, chi-square
 *    at p >= 1e-6 (false failure 1e-6 a law; 7 laws), for both signs of
 *    alpha (N(0, 1) rejection and Robert's exponential proposals), far
 *    tails and a bimodal unit; the twins (the halves' probabilities
 *    swapped; 1/g for g) fail. The mode against a grid minimum; the mean
 *    against the draws'.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"
#include "drelu.h"
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

/* log of the integral over [0, L] of exp(-g h^2 / 2 + t h) by Simpson's
 * rule on n intervals, relative to the integrand's maximum. */
static double simpson_log_n(double g, double t, int n)
{
    const double s = 1.0 / sqrt(g);
    const double mode = t > 0.0 ? t / g : 0.0;
    const double L = t < 0.0 ? fmin(60.0 / -t, 60.0 * s) : mode + 40.0 * s;
    const double h = L / n;
    const double top = -0.5 * g * mode * mode + t * mode;
    double sum = 0.0;
    for (int i = 0; i <= n; i++) {
        const double x = i * h;
        const double f = exp(-0.5 * g * x * x + t * x - top);
        sum += f * (i == 0 || i == n ? 1.0 : (i % 2 ? 4.0 : 2.0));
    }
    return top + log(sum * h / 3.0);
}

/* 2 x 10^5 intervals: the references of the integrals themselves. */
static double simpson_log(double g, double t) { return simpson_log_n(g, t, 200000); }

START_TEST(drelu_half_integral)
{
    static const double gs[] = {0.006737946999085467, 0.1353352832366127, 1.0, 7.38905609893065,
                                148.4131591025766};
    static const double ts[] = {-50.0, -10.0, -1.0, -0.1, 0.0, 0.1, 1.0, 10.0, 50.0};
    double worst = 0.0, worst_twin = INFINITY;
    for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++) {
        for (size_t j = 0; j < sizeof ts / sizeof ts[0]; j++) {
            const double g = gs[i], t = ts[j];
            const double want = simpson_log(g, t), got = ebm__half_log_int(g, t);
            const double err = fabs(got - want) / (1.0 + fabs(want));
            worst = fmax(worst, err);
            const double twin = got - 0.5 * (log(PI) - log(2.0 * g));
            worst_twin = fmin(worst_twin, fabs(twin - want));
            ck_assert_msg(err < 1e-10, "g %g, t %g: %.15g, quadrature %.15g", g, t, got, want);
        }
    }
    T_VLOG("  half-line integral: worst relative error %.2g; twin's best %.2g\n", worst,
           worst_twin);
    ck_assert_msg(worst_twin > 0.1, "the twin (no 0.5 log(pi / 2g)) passed: %g", worst_twin);
}
END_TEST

/* log erfcx(z) by Laplace's continued fraction, erfcx(z) = 1 / (sqrt(pi)
 * (z + (1/2) / (z + 1 / (z + (3/2) / (z + ...))))), 400 levels (z >= 5). */
static double cf_log_erfcx(double z)
{
    double t = z;
    for (int k = 400; k >= 1; k--) {
        t = z + 0.5 * k / t;
    }
    return -log(sqrt(PI) * t);
}

START_TEST(drelu_erfcx)
{
    static const double zs[] = {5.0, 10.0, 25.9, 25.999999, 26.0, 26.000001, 26.1, 30.0, 100.0,
                                1000.0};
    for (size_t i = 0; i < sizeof zs / sizeof zs[0]; i++) {
        const double got = ebm__log_erfcx(zs[i]), want = cf_log_erfcx(zs[i]);
        ck_assert_msg(fabs(got - want) < 1e-13, "z %g: %.17g, continued fraction %.17g", zs[i],
                      got, want);
    }
    const double z = 1e10;
    ck_assert_msg(fabs(ebm__log_erfcx(z) + log(z * sqrt(PI))) < 1e-15, "asymptote");
    ck_assert(isfinite(ebm__log_erfcx(1e4)) && isfinite(ebm__log_erfcx(-1e4)));
    /* erfcx(0) = 1; erfcx(-z) = 2 exp(z^2) - erfcx(z) */
    ck_assert(fabs(ebm__log_erfcx(0.0)) < 1e-15);
    const double zz = 3.0;
    ck_assert_msg(fabs(exp(ebm__log_erfcx(-zz)) - (2.0 * exp(zz * zz) - exp(ebm__log_erfcx(zz)))) <
                      1e-12 * exp(zz * zz),
                  "reflection");
}
END_TEST

START_TEST(drelu_free_energy)
{
    const double gp = 1.3, gn = 0.4, tp = 0.7, tn = -2.1;
    const double want = -log(exp(simpson_log(gp, tp)) + exp(simpson_log(gn, -tn)));
    const double got = ebm__drelu_free(gp, gn, tp, tn);
    ck_assert_msg(fabs(got - want) < 1e-10, "F %.15g, quadrature %.15g", got, want);
    /* gp = gn, tp = tn: a Gaussian unit, F = -(t^2 / (2 g) + 0.5 log(2 pi / g)) */
    const double g = 2.5, t = -0.8;
    ck_assert(fabs(ebm__drelu_free(g, g, t, t) + t * t / (2.0 * g) + 0.5 * log(2.0 * PI / g)) <
              1e-12);
}
END_TEST

/* The half-line moments and the branch probability against quadrature
 * (Simpson, as above), rel 1e-9. */
static double simpson_moment(double g, double t, int k)
{
    const double s = 1.0 / sqrt(g);
    const double mode = t > 0.0 ? t / g : 0.0;
    const double L = t < 0.0 ? fmin(60.0 / -t, 60.0 * s) : mode + 40.0 * s;
    const int n = 200000;
    const double h = L / n;
    const double top = -0.5 * g * mode * mode + t * mode;
    double sum = 0.0, z = 0.0;
    for (int i = 0; i <= n; i++) {
        const double x = i * h, wgt = i == 0 || i == n ? 1.0 : (i % 2 ? 4.0 : 2.0);
        const double f = exp(-0.5 * g * x * x + t * x - top);
        sum += wgt * f * (k == 1 ? x : x * x);
        z += wgt * f;
    }
    return sum / z;
}

START_TEST(drelu_moments)
{
    static const double gs[] = {0.05, 1.0, 20.0};
    static const double ts[] = {-20.0, -2.0, 0.0, 2.0, 20.0};
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 5; j++) {
            double m1, m2;
            ebm__half_moments(gs[i], ts[j], &m1, &m2);
            const double w1 = simpson_moment(gs[i], ts[j], 1), w2 = simpson_moment(gs[i], ts[j], 2);
            ck_assert_msg(fabs(m1 - w1) <= 1e-9 * fabs(w1) && fabs(m2 - w2) <= 1e-9 * fabs(w2),
                          "g %g, t %g: moments %.12g %.12g, quadrature %.12g %.12g", gs[i], ts[j],
                          m1, m2, w1, w2);
        }
    }
    ebm__drelu_moments mo;
    const double gp = 1.3, gn = 0.4, tp = 0.7, tn = -2.1;
    ebm__drelu_moments_of(gp, gn, tp, tn, &mo);
    const double ip = exp(simpson_log(gp, tp)), in = exp(simpson_log(gn, -tn));
    ck_assert(fabs(mo.pp - ip / (ip + in)) < 1e-10 && fabs(mo.pp + mo.pn - 1.0) < 1e-15);
    ck_assert(fabs(mo.m1n + simpson_moment(gn, -tn, 1)) < 1e-9);
    /* the twin: the branch probabilities swapped */
    ck_assert(fabs(mo.pn - ip / (ip + in)) > 1e-3);
}
END_TEST

/* P(H <= x) of one dReLU unit: for x >= 0, pn + pp (1 - e^{-g x^2/2 + t x}
 * I(g, t - g x) / I(g, t)) with I the half-line integral (the part beyond x,
 * shifted to 0); for x < 0 by symmetry from the negative half. */
static double drelu_cdf(double gp, double gn, double tp, double tn, double x)
{
    ebm__drelu_moments mo;
    ebm__drelu_moments_of(gp, gn, tp, tn, &mo);
    if (x >= 0.0) {
        const double tail = -0.5 * gp * x * x + tp * x + ebm__half_log_int(gp, tp - gp * x) -
                            ebm__half_log_int(gp, tp);
        return mo.pn + mo.pp * -expm1(tail);
    }
    const double u = -x, t = -tn; /* P(H <= x) = pn P(U >= u) */
    const double tail = -0.5 * gn * u * u + t * u + ebm__half_log_int(gn, t - gn * u) -
                        ebm__half_log_int(gn, t);
    return mo.pn * exp(tail);
}

/* The x with drelu_cdf(x) = p, by bisection. */
static double drelu_quantile(double gp, double gn, double tp, double tn, double p)
{
    double lo = -1.0, hi = 1.0;
    while (drelu_cdf(gp, gn, tp, tn, lo) > p) {
        lo *= 2.0;
    }
    while (drelu_cdf(gp, gn, tp, tn, hi) < p) {
        hi *= 2.0;
    }
    for (int i = 0; i < 200 && hi - lo > 1e-15 * fmax(1.0, fabs(lo)); i++) {
        const double mid = 0.5 * (lo + hi);
        *(drelu_cdf(gp, gn, tp, tn, mid) < p ? &lo : &hi) = mid;
    }
    return 0.5 * (lo + hi);
}

/* Chi-square p-value of n draws from stream s against the law (gp, gn, tp,
 * tn) in K equiprobable bins; the draws' mean in *mean. */
enum { K_BINS = 40, N_DRAWS = 100000 };
static double draws_fit(double gp, double gn, double tp, double tn, double lgp, double lgn,
                        double ltp, double ltn, const ebm__stream *s, double *mean)
{
    double edge[K_BINS - 1], obs[K_BINS] = {0}, prob[K_BINS];
    for (int k = 0; k < K_BINS - 1; k++) {
        edge[k] = drelu_quantile(lgp, lgn, ltp, ltn, (k + 1.0) / K_BINS);
    }
    for (int k = 0; k < K_BINS; k++) {
        prob[k] = 1.0 / K_BINS;
    }
    double sum = 0.0;
    for (uint32_t i = 0; i < N_DRAWS; i++) {
        const double h = ebm__drelu_draw(gp, gn, tp, tn, s, i, 8);
        int lo = 0, hi = K_BINS - 1; /* the bin: the first edge above h */
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            *(h < edge[mid] ? &hi : &lo) = h < edge[mid] ? mid : mid + 1;
        }
        obs[lo] += 1.0;
        sum += h;
    }
    *mean = sum / N_DRAWS;
    return ref_chisq(obs, prob, K_BINS, N_DRAWS).p;
}

START_TEST(drelu_draws)
{
    /* gp, gn, tp, tn: a Gaussian-like unit, a ReLU-like one (alpha > 0 on
     * the negative half), a bimodal one, units with one half far in its
     * tail, a narrow unit */
    static const double laws[][4] = {
        {1.0, 1.0, 0.3, 0.3},   {2.0, 0.5, 1.5, 4.0},     {1.0, 1.0, 3.0, -3.0},
        {0.5, 3.0, -40.0, 0.2}, {4.0, 0.01, 25.0, 30.0}, {100.0, 100.0, 0.0, 0.0},
        {1.0, 2.0, -30.0, 20.0}, /* both halves far in the tail: Robert's proposals */
    };
    ebm_rng_t *rng = NULL;
    ck_assert(ebm_rng_create(&rng, 71, 0) == EBM_OK);
    const ebm__stream s = ebm__rng_take_stream(rng);
    ebm_rng_destroy(rng);
    for (size_t i = 0; i < sizeof laws / sizeof laws[0]; i++) {
        const double *L = laws[i];
        double mean;
        const double p = draws_fit(L[0], L[1], L[2], L[3], L[0], L[1], L[2], L[3], &s, &mean);
        ebm__drelu_moments mo;
        ebm__drelu_moments_of(L[0], L[1], L[2], L[3], &mo);
        const double sd = sqrt(mo.pp * mo.m2p + mo.pn * mo.m2n - pow(ebm__drelu_mean(L[0], L[1], L[2], L[3]), 2));
        const double z = (mean - ebm__drelu_mean(L[0], L[1], L[2], L[3])) / (sd / sqrt(N_DRAWS));
        T_VLOG("  law %zu: chi-square p %.3g, mean z %.2f\n", i, p, z);
        ck_assert_msg(p >= 1e-6, "law %zu (gp %g, gn %g, tp %g, tn %g): chi-square p %.3g", i, L[0],
                      L[1], L[2], L[3], p);
        ck_assert_msg(fabs(z) < 5.0, "law %zu: mean z %.2f", i, z);
    }
    /* The twins, against law 1: draws of its mirror image (h -> -h), and
     * draws with its precisions inverted. */
    double mean;
    const double swapped = draws_fit(0.5, 2.0, -4.0, -1.5, 2.0, 0.5, 1.5, 4.0, &s, &mean);
    const double var = draws_fit(2.0, 0.5, 1.5, 4.0, 0.5, 2.0, 1.5, 4.0, &s, &mean);
    T_VLOG("  twins: p %.3g, %.3g\n", swapped, var);
    ck_assert_msg(swapped < 1e-6 && var < 1e-6, "a twin passed: p %.3g, %.3g", swapped, var);
    /* The mode: the minimum of E on a grid of step 1e-4 over [-20, 20]; the
     * twin, the mode of the mirrored law, is off. */
    ck_assert(fabs(ebm__drelu_mode(0.5, 2.0, -4.0, -1.5) - ebm__drelu_mode(2.0, 0.5, 1.5, 4.0)) > 1.0);
    for (size_t i = 0; i < 4; i++) {
        const double *L = laws[i];
        double best = 0.0, best_e = 0.0;
        for (int k = -200000; k <= 200000; k++) {
            const double h = k * 1e-4;
            const double e = h > 0 ? 0.5 * L[0] * h * h - L[2] * h : 0.5 * L[1] * h * h - L[3] * h;
            if (e < best_e) {
                best_e = e;
                best = h;
            }
        }
        /* (law 2 is symmetric: its two modes tie, and the mode is the positive one) */
        const double mode = ebm__drelu_mode(L[0], L[1], L[2], L[3]);
        ck_assert_msg(fabs(mode - best) <= 1e-4 || (i == 2 && fabs(mode + best) <= 1e-4),
                      "law %zu: mode %g, grid %g", i, mode, best);
    }
}
END_TEST

/* ======================================================================== */
/* dReLU RBMs through the public API, against references written here      */
/* ======================================================================== */

/* A test RBM: n0 visible units of kind `vis` (Potts: q categories), n1
 * dReLU hidden units, parameters drawn from seed. */
typedef struct drbm {
    ebm_model_t *m;
    int64_t n0, n1, q, w, np;
    float *p; /* a copy of the parameters */
    int64_t wo, b0, b1, sh;
} drbm;

static void drbm_make(drbm *d, int vis, int64_t n0, int64_t n1, int64_t q, uint64_t seed)
{
    const int64_t sizes[2] = {n0, n1};
    char err[256];
    int rc = vis == EBM_UNITS_POTTS
                 ? ebm_model_create_potts(&d->m, 2, sizes, q, EBM_UNITS_DRELU, err, sizeof err)
                 : ebm_model_create(&d->m, 2, sizes, vis, EBM_UNITS_DRELU, err, sizeof err);
    ck_assert_msg(rc == EBM_OK, "create: %s", err);
    d->n0 = n0, d->n1 = n1, d->q = vis == EBM_UNITS_POTTS ? q : 1;
    d->w = n0 + n1;
    d->np = ebm_model_param_count(d->m);
    ck_assert_int_eq(ebm_model_param_block(d->m, EBM_PARAM_WEIGHT, 1, &d->wo, NULL, NULL), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(d->m, EBM_PARAM_BIAS, 0, &d->b0, NULL, NULL), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(d->m, EBM_PARAM_BIAS, 1, &d->b1, NULL, NULL), EBM_OK);
    int64_t rows, cols;
    ck_assert_int_eq(ebm_model_param_block(d->m, EBM_PARAM_SHAPE, 1, &d->sh, &rows, &cols),
                     EBM_OK);
    ck_assert(rows == 3 && cols == n1 && d->sh + 3 * n1 == d->np);
    d->p = t_floats(d->np);
    ebm_rng_t *rng = t_rng(seed, 0);
    float *z = t_floats(d->np);
    ck_assert_int_eq(ebm_rng_normal(rng, d->np, z), EBM_OK);
    for (int64_t i = 0; i < d->np; i++) {
        const int in_shape = i >= d->sh && i < d->sh + 2 * n1;
        d->p[i] = in_shape ? 0.6f * z[i] : (i >= d->sh ? 0.8f : i < d->b0 ? 0.7f : 0.5f) * z[i];
    }
    free(z);
    ebm_rng_destroy(rng);
    ck_assert_int_eq(ebm_model_set_params(d->m, d->p), EBM_OK);
}

static void drbm_free(drbm *d)
{
    ebm_model_destroy(d->m);
    free(d->p);
}

/* log of the integral of exp(-S_j(h) + a h) over the line, by quadrature. */
static double dr_unit_log_int(const drbm *d, const float *p, int64_t j, double a)
{
    const double gp = exp(p[d->sh + j]), gn = exp(p[d->sh + d->n1 + j]),
                 dd = p[d->sh + 2 * d->n1 + j];
    /* 2 x 10^4 intervals: Simpson's error, (interval / scale)^4 of the
     * integrand's scale, stays below 1e-11 */
    const double x = simpson_log_n(gp, a + dd, 20000), y = simpson_log_n(gn, -(a - dd), 20000);
    const double mx = fmax(x, y);
    return mx + log(exp(x - mx) + exp(y - mx));
}

/* The hidden input a_j = b1_j + sum_i v_i W_ij. */
static double dr_input(const drbm *d, const float *p, const float *v, int64_t j)
{
    double a = p[d->b1 + j];
    for (int64_t i = 0; i < d->n0; i++) {
        a += (double)v[i] * p[d->wo + i * d->n1 + j];
    }
    return a;
}

/* F(v) with the hidden layer integrated out, and E(v, h), from parameters p. */
static double dr_free(const drbm *d, const float *p, const float *v)
{
    double f = 0.0;
    for (int64_t i = 0; i < d->n0; i++) {
        f -= (double)p[d->b0 + i] * v[i];
    }
    for (int64_t j = 0; j < d->n1; j++) {
        f -= dr_unit_log_int(d, p, j, dr_input(d, p, v, j));
    }
    return f;
}

static double dr_energy(const drbm *d, const float *p, const float *x)
{
    double e = 0.0;
    for (int64_t i = 0; i < d->n0; i++) {
        e -= (double)p[d->b0 + i] * x[i];
    }
    for (int64_t j = 0; j < d->n1; j++) {
        const double h = x[d->n0 + j];
        const double gp = exp(p[d->sh + j]), gn = exp(p[d->sh + d->n1 + j]),
                     dd = p[d->sh + 2 * d->n1 + j];
        e += 0.5 * (h > 0 ? gp : gn) * h * h - dd * fabs(h) - (dr_input(d, p, x, j)) * h;
    }
    return e;
}

/* Visible configuration k of the enumeration: binary digits, spin digits,
 * or Potts sites in mixed radix. */
static int64_t drbm_states(const drbm *d)
{
    int64_t s = 1;
    for (int64_t i = 0; i < d->n0 / d->q; i++) {
        s *= d->q > 1 ? d->q : 2;
    }
    return s;
}

static void drbm_state(const drbm *d, int vis, int64_t k, float *v)
{
    if (d->q > 1) {
        for (int64_t i = 0; i < d->n0; i += d->q, k /= d->q) {
            for (int64_t c = 0; c < d->q; c++) {
                v[i + c] = c == k % d->q ? 1.0f : 0.0f;
            }
        }
        return;
    }
    for (int64_t i = 0; i < d->n0; i++, k >>= 1) {
        v[i] = k & 1 ? 1.0f : (vis == EBM_UNITS_SPIN ? -1.0f : 0.0f);
    }
}

static double dr_log_z(const drbm *d, int vis, const float *p, double *pv)
{
    const int64_t S = drbm_states(d);
    float *v = t_floats(d->n0);
    double mx = -INFINITY;
    for (int64_t k = 0; k < S; k++) {
        drbm_state(d, vis, k, v);
        pv[k] = -dr_free(d, p, v);
        mx = fmax(mx, pv[k]);
    }
    double s = 0.0;
    for (int64_t k = 0; k < S; k++) {
        s += exp(pv[k] - mx);
    }
    const double lz = mx + log(s);
    for (int64_t k = 0; k < S; k++) {
        pv[k] = exp(pv[k] - lz);
    }
    free(v);
    return lz;
}

static const int DR_KINDS[3] = {EBM_UNITS_BINARY, EBM_UNITS_SPIN, EBM_UNITS_POTTS};

/* Energies (random real h), free energies with either layer summed out,
 * exact log Z, log p(v) summing to 1, and log Z by AIS (from uniform units
 * and from a base; 100 chains, 1000 temperatures) within 4 SE (false
 * failure about 4e-4 over the 6 estimates, were the SE exact); the twin: a
 * model with delta + 1 is more than 10 SE from the AIS estimate. */
START_TEST(drelu_rbm_exact)
{
    for (int kind = 0; kind < 3; kind++) {
        const int vis = DR_KINDS[kind];
        drbm d;
        drbm_make(&d, vis, vis == EBM_UNITS_POTTS ? 6 : 5, 3, 3, 11 + (uint64_t)kind);
        const int64_t S = drbm_states(&d), w = d.w;
        float *x = t_floats(S * w), *z = t_floats(S * d.n1);
        double *pv = malloc((size_t)S * sizeof *pv), *f = malloc((size_t)S * sizeof *f);
        ebm_rng_t *rng = t_rng(5, 1);
        ck_assert_int_eq(ebm_rng_normal(rng, S * d.n1, z), EBM_OK);
        for (int64_t k = 0; k < S; k++) {
            drbm_state(&d, vis, k, x + k * w);
            for (int64_t j = 0; j < d.n1; j++) {
                x[k * w + d.n0 + j] = 1.5f * z[k * d.n1 + j];
            }
        }
        ck_assert_int_eq(ebm_model_energy(d.m, S, x, w, f), EBM_OK);
        for (int64_t k = 0; k < S; k++) {
            const double want = dr_energy(&d, d.p, x + k * w);
            ck_assert_msg(fabs(f[k] - want) < 1e-9 * (1 + fabs(want)), "kind %d: E %.12g, ref %.12g",
                          vis, f[k], want);
        }
        ck_assert_int_eq(ebm_model_free_energy(d.m, 2u, S, x, w, f), EBM_OK);
        for (int64_t k = 0; k < S; k++) {
            const double want = dr_free(&d, d.p, x + k * w);
            ck_assert_msg(fabs(f[k] - want) < 1e-9 * (1 + fabs(want)), "kind %d: F %.12g, ref %.12g",
                          vis, f[k], want);
        }
        /* The visible layer summed out, h kept: E's h terms minus the
         * visible log-sums (one per unit, or per site). */
        ck_assert_int_eq(ebm_model_free_energy(d.m, 1u, S, x, w, f), EBM_OK);
        for (int64_t k = 0; k < S; k++) {
            const float *h = x + k * w + d.n0;
            double want = 0.0;
            for (int64_t j = 0; j < d.n1; j++) {
                const double gp = exp(d.p[d.sh + j]), gn = exp(d.p[d.sh + d.n1 + j]),
                             dd = d.p[d.sh + 2 * d.n1 + j];
                want += 0.5 * (h[j] > 0 ? gp : gn) * h[j] * h[j] - dd * fabs(h[j]) -
                        (double)d.p[d.b1 + j] * h[j];
            }
            for (int64_t i = 0; i < d.n0; i += d.q) {
                double c[8], mx = -INFINITY, s = 0.0;
                const int64_t nc = d.q > 1 ? d.q : 2;
                for (int64_t t = 0; t < nc; t++) {
                    /* unit value (binary 0/1, spin -1/+1) or category t */
                    const double val = d.q > 1 ? 1.0 : vis == EBM_UNITS_SPIN ? 2.0 * t - 1.0 : t;
                    const int64_t u = d.q > 1 ? i + t : i;
                    double in = d.p[d.b0 + u];
                    for (int64_t j = 0; j < d.n1; j++) {
                        in += (double)d.p[d.wo + u * d.n1 + j] * h[j];
                    }
                    c[t] = val * in;
                    mx = fmax(mx, c[t]);
                }
                for (int64_t t = 0; t < nc; t++) {
                    s += exp(c[t] - mx);
                }
                want -= mx + log(s);
            }
            ck_assert_msg(fabs(f[k] - want) < 1e-9 * (1 + fabs(want)),
                          "kind %d: F(h) %.12g, ref %.12g", vis, f[k], want);
        }
        double lz, lz_ref = dr_log_z(&d, vis, d.p, pv);
        ck_assert_int_eq(ebm_model_log_partition_exact(d.m, &lz), EBM_OK);
        ck_assert_msg(fabs(lz - lz_ref) < 1e-9 * (1 + fabs(lz_ref)), "kind %d: log Z %.12g, ref %.12g",
                      vis, lz, lz_ref);
        ck_assert_int_eq(ebm_model_log_likelihood(d.m, lz, S, x, w, f), EBM_OK);
        double total = 0.0;
        for (int64_t k = 0; k < S; k++) {
            total += exp(f[k]);
            ck_assert(fabs(exp(f[k]) - pv[k]) < 1e-9);
        }
        ck_assert_msg(fabs(total - 1.0) < 1e-9, "kind %d: p(v) sums to %.12g", vis, total);
        /* AIS, from uniform units and from a base of 0.3 per visible unit */
        float *base = t_floats(d.n0);
        for (int64_t i = 0; i < d.n0; i++) {
            base[i] = 0.3f * (float)(i % 3) - 0.2f;
        }
        for (int b = 0; b < 2; b++) {
            double az, se;
            ck_assert_int_eq(ebm_model_log_partition_ais_base(d.m, rng, 100, 1000, b ? base : NULL,
                                                              &az, &se),
                             EBM_OK);
            T_VLOG("  kind %d AIS%s: %.4f +- %.4f, exact %.4f\n", vis, b ? " (base)" : "", az, se,
                   lz);
            ck_assert_msg(fabs(az - lz) < 4.0 * se + 1e-3, "kind %d: AIS %.5f +- %.5f, exact %.5f",
                          vis, az, se, lz);
            /* the twin: the exact log Z of the model with delta + 1 */
            float *q = t_floats(d.np);
            memcpy(q, d.p, (size_t)d.np * sizeof *q);
            for (int64_t j = 0; j < d.n1; j++) {
                q[d.sh + 2 * d.n1 + j] += 1.0f;
            }
            double *pv2 = malloc((size_t)S * sizeof *pv2);
            const double lz_twin = dr_log_z(&d, vis, q, pv2);
            ck_assert_msg(fabs(az - lz_twin) > 10.0 * se, "kind %d: the twin is within 10 SE", vis);
            free(pv2);
            free(q);
        }
        free(base);
        ebm_rng_destroy(rng);
        free(x), free(z), free(pv), free(f);
        drbm_free(&d);
    }
}
END_TEST

/* Gradients of E (h kept) and of F (h summed out) in every parameter,
 * against central differences of the references (step 1e-3 on the float
 * parameters, in double). */
START_TEST(drelu_rbm_gradient)
{
    for (int kind = 0; kind < 3; kind++) {
        const int vis = DR_KINDS[kind];
        drbm d;
        drbm_make(&d, vis, vis == EBM_UNITS_POTTS ? 4 : 3, 2, 2, 21 + (uint64_t)kind);
        float *x = t_floats(d.w), *g = t_floats(d.np), *q = t_floats(d.np);
        drbm_state(&d, vis, 1, x);
        x[d.n0] = 0.7f, x[d.n0 + 1] = -1.3f;
        for (int summed = 0; summed < 2; summed++) {
            memset(g, 0, (size_t)d.np * sizeof *g);
            const double one = 1.0;
            ck_assert_int_eq(ebm_model_energy_grad(d.m, summed ? 2u : 0u, 1, x, d.w, &one, g),
                             EBM_OK);
            for (int64_t i = 0; i < d.np; i++) {
                const double eps = 1e-3;
                memcpy(q, d.p, (size_t)d.np * sizeof *q);
                q[i] = (float)(d.p[i] + eps);
                const double hi = (double)q[i];
                const double fh = summed ? dr_free(&d, q, x) : dr_energy(&d, q, x);
                q[i] = (float)(d.p[i] - eps);
                const double lo = (double)q[i];
                const double fl = summed ? dr_free(&d, q, x) : dr_energy(&d, q, x);
                const double fd = (fh - fl) / (hi - lo);
                ck_assert_msg(fabs(g[i] - fd) < 2e-4 * (1 + fabs(fd)),
                              "kind %d, %s, parameter %lld: %.8g, differences %.8g", vis,
                              summed ? "F" : "E", (long long)i, (double)g[i], fd);
            }
        }
        free(x), free(g), free(q);
        drbm_free(&d);
    }
}
END_TEST

/* The hidden layer's conditionals through the public calls: means against
 * quadrature, log-probabilities against the reference density, argmins
 * against a grid, and layer_sample's draws (many rows of one v) against the
 * exact CDF of each unit (chi-square p >= 1e-6 for each of 3 units: false
 * failure 3e-6); the twin: the means of the model with delta negated. */
START_TEST(drelu_rbm_conditionals)
{
    drbm d;
    drbm_make(&d, EBM_UNITS_BINARY, 4, 3, 1, 31);
    const int64_t n = 20000, w = d.w;
    float *x = t_floats(n * w), *mu = t_floats(3);
    double lp;
    for (int64_t r = 0; r < n; r++) {
        drbm_state(&d, EBM_UNITS_BINARY, 5, x + r * w);
        for (int64_t j = 0; j < 3; j++) {
            x[r * w + 4 + j] = 0.25f * (float)j - 0.3f;
        }
    }
    ck_assert_int_eq(ebm_model_layer_mean(d.m, 1, 1, x, w, mu, 3), EBM_OK);
    ck_assert_int_eq(ebm_model_layer_logprob(d.m, 1, 1, x, w, x + 4, w, &lp), EBM_OK);
    double lp_ref = 0.0;
    for (int64_t j = 0; j < 3; j++) {
        const double a = dr_input(&d, d.p, x, j);
        const double gp = exp(d.p[d.sh + j]), gn = exp(d.p[d.sh + 3 + j]), dd = d.p[d.sh + 6 + j];
        /* the mean by quadrature: pp m1p + pn m1n */
        const double lip = simpson_log(gp, a + dd), lin = simpson_log(gn, -(a - dd));
        const double pp = 1.0 / (1.0 + exp(lin - lip));
        const double mean = pp * simpson_moment(gp, a + dd, 1) -
                            (1.0 - pp) * simpson_moment(gn, -(a - dd), 1);
        ck_assert_msg(fabs(mu[j] - mean) < 1e-5 * (1 + fabs(mean)), "unit %lld: mean %.8g, ref %.8g",
                      (long long)j, (double)mu[j], mean);
        const double h = x[4 + j];
        lp_ref += -0.5 * (h > 0 ? gp : gn) * h * h + dd * fabs(h) + a * h -
                  dr_unit_log_int(&d, d.p, j, a);
    }
    ck_assert_msg(fabs(lp - lp_ref) < 1e-8, "log p(h | v) %.12g, ref %.12g", lp, lp_ref);
    /* the argmin: the grid minimum of S_j(h) - a h */
    ck_assert_int_eq(ebm_model_layer_argmin(d.m, 1, 1, x, w), EBM_OK);
    for (int64_t j = 0; j < 3; j++) {
        const double a = dr_input(&d, d.p, x, j);
        const double gp = exp(d.p[d.sh + j]), gn = exp(d.p[d.sh + 3 + j]), dd = d.p[d.sh + 6 + j];
        double best = 0.0, best_e = 0.0;
        for (int k = -300000; k <= 300000; k++) {
            const double h = k * 1e-4;
            const double e = 0.5 * (h > 0 ? gp : gn) * h * h - dd * fabs(h) - a * h;
            if (e < best_e) {
                best_e = e, best = h;
            }
        }
        ck_assert_msg(fabs(x[4 + j] - best) < 2e-4, "unit %lld: argmin %g, grid %g", (long long)j,
                      (double)x[4 + j], best);
    }
    /* layer_sample: n draws of h given the same v */
    ebm_rng_t *rng = t_rng(9, 3);
    ck_assert_int_eq(ebm_model_layer_sample(d.m, 1, rng, n, x, w), EBM_OK);
    for (int64_t j = 0; j < 3; j++) {
        const double a = dr_input(&d, d.p, x, j);
        const double gp = exp(d.p[d.sh + j]), gn = exp(d.p[d.sh + 3 + j]), dd = d.p[d.sh + 6 + j];
        double edge[K_BINS - 1], obs[K_BINS] = {0}, prob[K_BINS];
        for (int k = 0; k < K_BINS - 1; k++) {
            edge[k] = drelu_quantile(gp, gn, a + dd, a - dd, (k + 1.0) / K_BINS);
        }
        for (int k = 0; k < K_BINS; k++) {
            prob[k] = 1.0 / K_BINS;
        }
        for (int64_t r = 0; r < n; r++) {
            const double h = x[r * w + 4 + j];
            int b = 0;
            while (b < K_BINS - 1 && h >= edge[b]) {
                b++;
            }
            obs[b] += 1.0;
        }
        const double p = ref_chisq(obs, prob, K_BINS, (double)n).p;
        T_VLOG("  layer_sample unit %lld: chi-square p %.3g\n", (long long)j, p);
        ck_assert_msg(p >= 1e-6, "unit %lld: chi-square p %.3g", (long long)j, p);
    }
    ebm_rng_destroy(rng);
    /* the twin: delta negated moves the means */
    float *q = t_floats(d.np), *mu2 = t_floats(3);
    memcpy(q, d.p, (size_t)d.np * sizeof *q);
    for (int64_t j = 0; j < 3; j++) {
        q[d.sh + 6 + j] = -q[d.sh + 6 + j];
    }
    ck_assert_int_eq(ebm_model_set_params(d.m, q), EBM_OK);
    drbm_state(&d, EBM_UNITS_BINARY, 5, x);
    ck_assert_int_eq(ebm_model_layer_mean(d.m, 1, 1, x, w, mu2, 3), EBM_OK);
    double moved = 0.0;
    for (int64_t j = 0; j < 3; j++) {
        moved = fmax(moved, fabs(mu2[j] - mu[j]));
    }
    ck_assert_msg(moved > 1e-2, "the twin's means moved by %g only", moved);
    free(q), free(mu2), free(x), free(mu);
    drbm_free(&d);
}
END_TEST

/* Gibbs keeps p: visible states drawn exactly from p(v) (inverse CDF over
 * the enumeration) and h from p(h | v) (layer_sample), then K = 3 Gibbs
 * sweeps; the visible histogram against
 * p(v) by chi-square (p >= 1e-6); the twin: the same sweeps on the model
 * with delta negated, against the first model's p(v), must fail. */
START_TEST(drelu_rbm_gibbs)
{
    drbm d;
    drbm_make(&d, EBM_UNITS_BINARY, 4, 2, 1, 41);
    const int64_t S = drbm_states(&d), n = 40000, w = d.w;
    double *pv = malloc((size_t)S * sizeof *pv), *obs = malloc((size_t)S * sizeof *obs);
    dr_log_z(&d, EBM_UNITS_BINARY, d.p, pv);
    float *x = t_floats(n * w), *u = t_floats(n), *q = t_floats(d.np);
    memcpy(q, d.p, (size_t)d.np * sizeof *q);
    for (int64_t j = 0; j < d.n1; j++) {
        q[d.sh + 2 * d.n1 + j] = -q[d.sh + 2 * d.n1 + j] - 1.0f;
    }
    double pvals[2];
    for (int twin = 0; twin < 2; twin++) {
        ck_assert_int_eq(ebm_model_set_params(d.m, twin ? q : d.p), EBM_OK);
        ebm_rng_t *rng = t_rng(77, (uint64_t)twin);
        ck_assert_int_eq(ebm_rng_uniform(rng, n, u), EBM_OK);
        for (int64_t r = 0; r < n; r++) {
            double c = 0.0;
            int64_t k = 0;
            while (k < S - 1 && (c += pv[k]) <= u[r]) {
                k++;
            }
            drbm_state(&d, EBM_UNITS_BINARY, k, x + r * w);
            x[r * w + 4] = x[r * w + 5] = 0.0f;
        }
        /* h ~ p(h | v): the joint law (the sweep draws v | h first) */
        ck_assert_int_eq(ebm_model_layer_sample(d.m, 1, rng, n, x, w), EBM_OK);
        ebm_sampler_t *s;
        ck_assert_int_eq(ebm_sampler_create(&s, d.m, EBM_SAMPLER_GIBBS), EBM_OK);
        for (int t = 0; t < 3; t++) {
            ck_assert_int_eq(ebm_sampler_step(s, rng, n, x, w), EBM_OK);
        }
        ebm_sampler_destroy(s);
        memset(obs, 0, (size_t)S * sizeof *obs);
        for (int64_t r = 0; r < n; r++) {
            int64_t k = 0;
            for (int64_t i = 0; i < 4; i++) {
                k |= (int64_t)(x[r * w + i] > 0.5f) << i;
            }
            obs[k] += 1.0;
        }
        pvals[twin] = ref_chisq(obs, pv, S, (double)n).p;
        ebm_rng_destroy(rng);
    }
    T_VLOG("  Gibbs: chi-square p %.3g; twin %.3g\n", pvals[0], pvals[1]);
    ck_assert_msg(pvals[0] >= 1e-6, "Gibbs moved p(v): chi-square p %.3g", pvals[0]);
    ck_assert_msg(pvals[1] < 1e-6, "the twin passed: p %.3g", pvals[1]);
    free(x), free(u), free(q), free(pv), free(obs);
    drbm_free(&d);
}
END_TEST

/* PCD-1 on a dReLU RBM is unbiased from stationary chains: each call's
 * chains are set to exact draws (v from p(v) by the inverse CDF, h from
 * p(h | v) by layer_sample), so the negative phase averages dF/dtheta over
 * p after one Gibbs sweep; over C calls the mean gradient of every
 * parameter against the exact (1/n) sum_d -dF(v_d) + sum_v p(v) dF(v),
 * max |z| < 4.5 for each of the 4 marginalisations (4 x 28 z-scores: false
 * failure below 1e-3; the largest over 8 seeds was 3.3). The twin, PCD-1
 * from fresh uniform chains at every call, must exceed 6 (observed 23.7 to
 * 26.4 over the 8 seeds). */
static double pcd_max_z(drbm *d, const double *pv, int fresh, int marginalize, const float *data,
                        int64_t nd, const double *exact)
{
    const int64_t S = drbm_states(d), chains = 64, w = d->w, C = 600;
    ebm_estimator_t *e;
    ck_assert_int_eq(ebm_estimator_create(&e, d->m, EBM_ESTIMATOR_PCD), EBM_OK);
    ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_CHAINS, chains), EBM_OK);
    ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_MARGINALIZE, marginalize), EBM_OK);
    float *x = t_floats(chains * w), *u = t_floats(chains), *g = t_floats(d->np);
    double *sum = calloc((size_t)d->np, sizeof *sum), *sq = calloc((size_t)d->np, sizeof *sq);
    ebm_rng_t *rng = t_rng(123, (uint64_t)(4 * fresh + marginalize));
    for (int64_t c = 0; c < C; c++) {
        if (fresh) {
            ck_assert_int_eq(ebm_estimator_set_chains(e, 0, NULL, 0), EBM_OK);
        } else {
            ck_assert_int_eq(ebm_rng_uniform(rng, chains, u), EBM_OK);
            for (int64_t r = 0; r < chains; r++) {
                double acc = 0.0;
                int64_t k = 0;
                while (k < S - 1 && (acc += pv[k]) <= u[r]) {
                    k++;
                }
                drbm_state(d, EBM_UNITS_BINARY, k, x + r * w);
            }
            ck_assert_int_eq(ebm_model_layer_sample(d->m, 1, rng, chains, x, w), EBM_OK);
            ck_assert_int_eq(ebm_estimator_set_chains(e, chains, x, w), EBM_OK);
        }
        ck_assert_int_eq(ebm_estimator_gradient(e, rng, nd, data, d->n0, g), EBM_OK);
        for (int64_t i = 0; i < d->np; i++) {
            sum[i] += g[i];
            sq[i] += (double)g[i] * g[i];
        }
    }
    double worst = 0.0;
    for (int64_t i = 0; i < d->np; i++) {
        const double mean = sum[i] / C, var = (sq[i] / C - mean * mean) * C / (C - 1.0);
        const double se = sqrt(var / C);
        if (se > 0) {
            worst = fmax(worst, fabs(mean - exact[i]) / se);
        }
    }
    ebm_estimator_destroy(e);
    ebm_rng_destroy(rng);
    free(x), free(u), free(g), free(sum), free(sq);
    return worst;
}

START_TEST(drelu_rbm_pcd)
{
    drbm d;
    drbm_make(&d, EBM_UNITS_BINARY, 4, 3, 1, 61);
    const int64_t S = drbm_states(&d), w = d.w, nd = 6;
    double *pv = malloc((size_t)S * sizeof *pv), *exact = calloc((size_t)d.np, sizeof *exact);
    dr_log_z(&d, EBM_UNITS_BINARY, d.p, pv);
    /* the exact gradient: -(1/nd) sum_d dF(v_d) + sum_v p(v) dF(v), dF by
     * ebm_model_energy_grad with h summed out (checked above) */
    float *xs = t_floats(S * w), *data = t_floats(nd * d.n0), *g = t_floats(d.np);
    for (int64_t k = 0; k < S; k++) {
        drbm_state(&d, EBM_UNITS_BINARY, k, xs + k * w);
    }
    memset(g, 0, (size_t)d.np * sizeof *g);
    ck_assert_int_eq(ebm_model_energy_grad(d.m, 2u, S, xs, w, pv, g), EBM_OK);
    for (int64_t i = 0; i < d.np; i++) {
        exact[i] = g[i];
    }
    double *cd = malloc((size_t)nd * sizeof *cd);
    float *xd = t_floats(nd * w);
    for (int64_t r = 0; r < nd; r++) {
        drbm_state(&d, EBM_UNITS_BINARY, (3 * r + 1) % S, xd + r * w);
        memcpy(data + r * d.n0, xd + r * w, (size_t)d.n0 * sizeof *data);
        cd[r] = -1.0 / nd;
    }
    memset(g, 0, (size_t)d.np * sizeof *g);
    ck_assert_int_eq(ebm_model_energy_grad(d.m, 2u, nd, xd, w, cd, g), EBM_OK);
    for (int64_t i = 0; i < d.np; i++) {
        exact[i] += g[i];
    }
    /* each way of summing out layers in f (NONE, EVEN, ODD, BOTH): ODD sums
     * out h after the sweep that drew it last, the estimator's shortcut for
     * units whose energy is linear (not dReLU's) */
    for (int mg = EBM_MARGINALIZE_NONE; mg <= EBM_MARGINALIZE_BOTH; mg++) {
        const double z = pcd_max_z(&d, pv, 0, mg, data, nd, exact);
        T_VLOG("  PCD-1 from stationary chains, marginalize %d: max |z| %.2f\n", mg, z);
        ck_assert_msg(z < 4.5, "PCD-1 from exact chains, marginalize %d: max |z| %.2f", mg, z);
    }
    const double z_twin = pcd_max_z(&d, pv, 1, EBM_MARGINALIZE_EVEN, data, nd, exact);
    T_VLOG("  PCD-1 from fresh chains (twin): max |z| %.2f\n", z_twin);
    ck_assert_msg(z_twin > 6.0, "the twin (fresh chains) passed: max |z| %.2f", z_twin);
    free(pv), free(exact), free(xs), free(data), free(g), free(cd), free(xd);
    drbm_free(&d);
}
END_TEST

/* The edges: a deeper negative mode; dE/dh against differences of the
 * reference energy on both halves and at 0; a one-step Gibbs sweep with v
 * clamped redraws h from p(h | v) from any start (h = 0 here), by the
 * CDF's bins; log p(h | v) where its terms are 1e16 (a = 1e8) against the
 * closed form; and the overflows (a mode or a draw beyond float) refused
 * with x unchanged; EBM_POSITIVE_MEAN_FIELD refused. */
START_TEST(drelu_rbm_edges)
{
    /* the deeper mode is the negative one: -3 (E = -4.5) beats 2 (E = -2) */
    ck_assert(ebm__drelu_mode(1.0, 1.0, 2.0, -3.0) == -3.0);
    drbm d;
    drbm_make(&d, EBM_UNITS_BINARY, 4, 3, 1, 71);
    const int64_t w = d.w, n = 20000;
    float x[7] = {1, 0, 1, 1, 0.8f, -1.1f, 0.0f}, out[3];
    ck_assert_int_eq(ebm_model_energy_grad_input(d.m, 0u, 1, 1, x, w, out, 3), EBM_OK);
    for (int64_t j = 0; j < 2; j++) { /* the kinked h = 0 is -a: checked below */
        float xp[7], xm[7];
        memcpy(xp, x, sizeof xp), memcpy(xm, x, sizeof xm);
        xp[4 + j] += 1e-3f, xm[4 + j] -= 1e-3f;
        const double fd = (dr_energy(&d, d.p, xp) - dr_energy(&d, d.p, xm)) /
                          ((double)xp[4 + j] - xm[4 + j]);
        ck_assert_msg(fabs(out[j] - fd) < 1e-4 * (1 + fabs(fd)), "dE/dh_%lld %g, differences %g",
                      (long long)j, (double)out[j], fd);
    }
    ck_assert(fabs(out[2] + dr_input(&d, d.p, x, 2)) < 1e-5);
    /* Gibbs with v clamped: h from 0 to p(h | v) in one sweep */
    float *xs = t_floats(n * w);
    for (int64_t r = 0; r < n; r++) {
        memcpy(xs + r * w, x, sizeof x);
        xs[r * w + 4] = xs[r * w + 5] = xs[r * w + 6] = 0.0f;
    }
    ebm_sampler_t *s;
    ebm_rng_t *rng = t_rng(8, 8);
    ck_assert_int_eq(ebm_sampler_create(&s, d.m, EBM_SAMPLER_GIBBS), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, 1), EBM_OK);
    ck_assert_int_eq(ebm_sampler_step(s, rng, n, xs, w), EBM_OK);
    const double a = dr_input(&d, d.p, x, 1);
    const double gp = exp(d.p[d.sh + 1]), gn = exp(d.p[d.sh + 4]), dd = d.p[d.sh + 7];
    double edge[K_BINS - 1], obs[K_BINS] = {0}, prob[K_BINS];
    for (int k = 0; k < K_BINS - 1; k++) {
        edge[k] = drelu_quantile(gp, gn, a + dd, a - dd, (k + 1.0) / K_BINS);
    }
    for (int k = 0; k < K_BINS; k++) {
        prob[k] = 1.0 / K_BINS;
    }
    for (int64_t r = 0; r < n; r++) {
        int b = 0;
        while (b < K_BINS - 1 && xs[r * w + 5] >= edge[b]) {
            b++;
        }
        obs[b] += 1.0;
    }
    const double p = ref_chisq(obs, prob, K_BINS, (double)n).p;
    T_VLOG("  a clamped Gibbs sweep's h: chi-square p %.3g\n", p);
    ck_assert_msg(p >= 1e-6, "a Gibbs sweep with v clamped: h's chi-square p %.3g", p);
    ebm_sampler_destroy(s);
    /* log p(h | v) at a = 1e8 + 0.5 (W = 0, b_1 = 1e8, delta = 0.5, gamma = 1):
     * at h = 1e8, -(0.5)^2 / 2 - 0.5 log(pi / 2) - log 2 (erfc(-inf) = 2,
     * pp = 1) */
    float *q = t_floats(d.np);
    memset(q, 0, (size_t)d.np * sizeof *q);
    q[d.b1 + 0] = 1e8f;
    q[d.sh + 6] = 0.5f;
    ck_assert_int_eq(ebm_model_set_params(d.m, q), EBM_OK);
    float h[3] = {1e8f, 0.0f, 0.0f};
    double lp;
    ck_assert_int_eq(ebm_model_layer_logprob(d.m, 1, 1, x, w, h, 3, &lp), EBM_OK);
    /* units 1 and 2: a = 0, delta = 0, gamma = 1: N(0, 1) densities at 0 */
    const double want = -0.125 - 0.5 * log(PI / 2.0) - log(2.0) - 2.0 * 0.5 * log(2.0 * PI);
    ck_assert_msg(fabs(lp - want) < 1e-6, "log p(h | v) %.10g, closed form %.10g", lp, want);
    /* overflows: b_1 = 1e30 and log gamma+ = -30 put the mode and the draws
     * beyond float */
    q[d.b1 + 0] = 1e30f;
    q[d.sh + 0] = -30.0f;
    ck_assert_int_eq(ebm_model_set_params(d.m, q), EBM_OK);
    float before[7];
    memcpy(before, x, sizeof x);
    ck_assert_int_eq(ebm_model_layer_argmin(d.m, 1, 1, x, w), EBM_EVALUE);
    ck_assert(memcmp(before, x, sizeof x) == 0);
    ck_assert_int_eq(ebm_sampler_create(&s, d.m, EBM_SAMPLER_GIBBS), EBM_OK);
    ck_assert_int_eq(ebm_sampler_step(s, rng, 1, x, w), EBM_EVALUE);
    ck_assert(memcmp(before, x, sizeof x) == 0);
    ebm_sampler_destroy(s);
    ebm_estimator_t *e;
    ck_assert_int_eq(ebm_estimator_create(&e, d.m, EBM_ESTIMATOR_PCD), EBM_OK);
    ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_POSITIVE, EBM_POSITIVE_MEAN_FIELD),
                     EBM_EUNSUPPORTED);
    ebm_estimator_destroy(e);
    ebm_rng_destroy(rng);
    free(xs), free(q);
    drbm_free(&d);
}
END_TEST

/* What dReLU units refuse, with the model unchanged: DBMs and Gaussian
 * visible units at creation, log gammas beyond +-30 (named), non-finite h,
 * offsets on dReLU units, and the calls not supported yet; the file round
 * trip (version 2, byte-identical) and a version-1 file naming kind 4. */
START_TEST(drelu_rbm_refusals)
{
    char err[256];
    ebm_model_t *m = NULL;
    const int64_t s3[3] = {3, 2, 2}, s2[2] = {3, 2};
    ck_assert_int_eq(ebm_model_create(&m, 3, s3, EBM_UNITS_BINARY, EBM_UNITS_DRELU, err, sizeof err),
                     EBM_EUNSUPPORTED);
    ck_assert(strstr(err, "RBM") != NULL && m == NULL);
    ck_assert_int_eq(ebm_model_create(&m, 2, s2, EBM_UNITS_GAUSSIAN, EBM_UNITS_DRELU, err, sizeof err),
                     EBM_EUNSUPPORTED);
    drbm d;
    drbm_make(&d, EBM_UNITS_BINARY, 3, 2, 1, 51);
    float *q = t_floats(d.np);
    memcpy(q, d.p, (size_t)d.np * sizeof *q);
    q[d.sh + 3] = 31.0f; /* log gamma- of unit 1 */
    ck_assert_int_eq(ebm_model_set_params(d.m, q), EBM_EVALUE);
    ck_assert_msg(strstr(ebm_model_errmsg(d.m), "log_gamma_minus_1[1]") != NULL, "%s",
                  ebm_model_errmsg(d.m));
    /* an update that would carry log gamma+ of unit 0 past 30 */
    memset(q, 0, (size_t)d.np * sizeof *q);
    q[d.sh] = 1.0f;
    ck_assert_int_eq(ebm_model_axpy_params(d.m, 40.0f, q), EBM_EVALUE);
    ck_assert_msg(strstr(ebm_model_errmsg(d.m), "log_gamma_plus_1[0]") != NULL, "%s",
                  ebm_model_errmsg(d.m));
    float x[5] = {1, 0, 1, 0.5f, NAN}, mu[5] = {0.5f, 0.5f, 0.5f, 0.0f, 0.3f};
    double e;
    ck_assert_int_eq(ebm_model_energy(d.m, 1, x, 5, &e), EBM_EVALUE);
    ck_assert(strstr(ebm_model_errmsg(d.m), "dReLU units take finite values") != NULL);
    ck_assert_int_eq(ebm_model_set_offsets(d.m, mu, 0), EBM_EUNSUPPORTED);
    ebm_sampler_t *s = NULL;
    ck_assert_int_eq(ebm_sampler_create(&s, d.m, EBM_SAMPLER_MH_UNIFORM), EBM_EUNSUPPORTED);
    ck_assert_int_eq(ebm_sampler_create(&s, d.m, EBM_SAMPLER_TEMPERING), EBM_EUNSUPPORTED);
    ebm_estimator_t *est = NULL;
    ck_assert_int_eq(ebm_estimator_create(&est, d.m, EBM_ESTIMATOR_UCD), EBM_EUNSUPPORTED);
    ck_assert_int_eq(ebm_estimator_create(&est, d.m, EBM_ESTIMATOR_UCD_LMI), EBM_EUNSUPPORTED);
    ck_assert_int_eq(ebm_estimator_create(&est, d.m, EBM_ESTIMATOR_PT), EBM_EUNSUPPORTED);
    ck_assert_int_eq(ebm_estimator_create(&est, d.m, EBM_ESTIMATOR_PCD), EBM_OK);
    ebm_estimator_destroy(est);
    ebm_rng_t *rng = t_rng(1, 0);
    x[4] = 0.2f;
    ck_assert_int_eq(ebm_model_local_search(d.m, rng, 1, x, 5, NULL, 0, 10, NULL), EBM_EUNSUPPORTED);
    ck_assert_int_eq(ebm_model_mean_field(d.m, 1, x, 5, NULL, 0, 10, 1e-6), EBM_EUNSUPPORTED);
    double ll;
    ck_assert_int_eq(ebm_model_log_likelihood_bound(d.m, 1.0, 1, x, 5, &ll), EBM_EUNSUPPORTED);
    ck_assert_int_eq(ebm_sampler_create(&s, d.m, EBM_SAMPLER_GIBBS), EBM_OK);
    float y[5] = {0, 1, 1, -0.5f, 0.1f};
    uint8_t met;
    ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, 1, x, 5, y, 5, &met), EBM_EUNSUPPORTED);
    ebm_sampler_destroy(s);
    ebm_rng_destroy(rng);
    float *got = t_floats(d.np);
    ck_assert_int_eq(ebm_model_get_params(d.m, got), EBM_OK);
    ck_assert(memcmp(got, d.p, (size_t)d.np * sizeof *got) == 0);
    /* files */
    const int64_t size = ebm_model_save_size(d.m);
    unsigned char *buf = malloc((size_t)size), *buf2 = malloc((size_t)size);
    size_t used;
    ck_assert_int_eq(ebm_model_save_buffer(d.m, buf, (size_t)size, &used), EBM_OK);
    ck_assert(buf[8] == 2 && buf[20] == EBM_UNITS_DRELU);
    ebm_model_t *m2 = NULL;
    ck_assert_int_eq(ebm_model_load_buffer(&m2, buf, used, err, sizeof err), EBM_OK);
    ck_assert_int_eq(ebm_model_layer_units(m2, 1), EBM_UNITS_DRELU);
    ck_assert_int_eq(ebm_model_save_buffer(m2, buf2, (size_t)size, &used), EBM_OK);
    ck_assert(memcmp(buf, buf2, (size_t)size) == 0);
    ebm_model_destroy(m2);
    buf[8] = 1; /* version 1 naming kind 4 (the CRC fixed) */
    t_fix_crc(buf, (size_t)size);
    ck_assert_int_eq(ebm_model_load_buffer(&m2, buf, (size_t)size, err, sizeof err), EBM_EFORMAT);
    ck_assert_msg(strstr(err, "dReLU hidden units (4) need format version 2") != NULL, "%s", err);
    free(buf), free(buf2), free(got), free(q);
    drbm_free(&d);
}
END_TEST

Suite *ebm_drelu_suite(void)
{
    const t_test tests[] = {
        {"integrals", drelu_half_integral, 0, 30, NULL, NULL},
        {"integrals", drelu_erfcx, 0, 30, NULL, NULL},
        {"integrals", drelu_free_energy, 0, 30, NULL, NULL},
        {"integrals", drelu_moments, 0, 30, NULL, NULL},
        {"draws", drelu_draws, 0, 60, NULL, NULL},
        {"rbm", drelu_rbm_exact, 0, 120, NULL, NULL},
        {"rbm", drelu_rbm_gradient, 0, 60, NULL, NULL},
        {"rbm", drelu_rbm_conditionals, 0, 60, NULL, NULL},
        {"rbm", drelu_rbm_gibbs, 0, 60, NULL, NULL},
        {"rbm", drelu_rbm_pcd, 0, 60, NULL, NULL},
        {"rbm", drelu_rbm_edges, 0, 30, NULL, NULL},
        {"rbm", drelu_rbm_refusals, 0, 30, NULL, NULL},
    };
    return t_suite("drelu", tests, sizeof tests / sizeof tests[0]);
}
