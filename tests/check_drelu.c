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
 *    at p >= 1e-6 (false failure 1e-6 a law; 6 laws), for both signs of
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

static const double PI = 3.14159265358979323846;

/* log of the integral over [0, L] of exp(-g h^2 / 2 + t h) by Simpson's
 * rule on 2 x 10^5 intervals, relative to the integrand's maximum. */
static double simpson_log(double g, double t)
{
    const double s = 1.0 / sqrt(g);
    const double mode = t > 0.0 ? t / g : 0.0;
    const double L = t < 0.0 ? fmin(60.0 / -t, 60.0 * s) : mode + 40.0 * s;
    const int n = 200000;
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
        double h;
        ck_assert(ebm__drelu_draw(gp, gn, tp, tn, s, i, 8, &h) == 0);
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

Suite *ebm_drelu_suite(void)
{
    const t_test tests[] = {
        {"integrals", drelu_half_integral, 0, 30, NULL, NULL},
        {"integrals", drelu_erfcx, 0, 30, NULL, NULL},
        {"integrals", drelu_free_energy, 0, 30, NULL, NULL},
        {"integrals", drelu_moments, 0, 30, NULL, NULL},
        {"draws", drelu_draws, 0, 60, NULL, NULL},
    };
    return t_suite("drelu", tests, sizeof tests / sizeof tests[0]);
}
