/*
 * The laws the statistical tests compare with (ref.h): chi-square p-values
 * and goodness of fit with merged cells, binomial and normal z-scores,
 * normal and chi-square limits for a given false-failure probability.
 *
 * SPDX-License-Identifier: MIT
 */
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* Chi-square goodness of fit                                               */
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
double ref_gamma_q(double a, double x)
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

double ref_phi(double z) { return 0.5 * erfc(-z / sqrt(2.0)); }

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
ref_gof ref_chisq(const double *obs, const double *prob, int64_t k, double n)
{
    ref_gof g = {0.0, 0, 1.0, 0.0};
    cell *c = t_malloc((size_t)k * sizeof *c);
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
    g.p = g.df > 0 ? ref_gamma_q(0.5 * g.df, 0.5 * g.stat) : 1.0;
    free(c);
    return g;
}

int ref_gof_fails(ref_gof g, double alpha) { return g.impossible > 0.0 || g.p < alpha; }

ref_gof ref_expect_fit(const char *what, const double *obs, const double *prob, int64_t k, double n,
                      double alpha)
{
    ref_gof g = ref_chisq(obs, prob, k, n);
    T_VLOG("  %-58s chi2 %9.2f df %4d p %.3g\n", what, g.stat, g.df, g.p);
    T_ASSERT_MSG(g.impossible == 0.0, "%s: %.0f draws where the exact law has no mass", what,
                 g.impossible);
    T_ASSERT_MSG(g.p >= alpha, "%s: chi2 %.2f with %d df, p = %.3g < %.3g", what, g.stat, g.df, g.p,
                 alpha);
    return g;
}

/* z-score of k successes in n trials with probability p (p in {0, 1}: 0 if
 * k is what it must be, else infinity). */
double ref_binom_z(double k, double n, double p)
{
    if (p <= 1e-15 || p >= 1.0 - 1e-15) {
        return fabs(k - n * p) < 0.5 ? 0.0 : INFINITY;
    }
    return (k - n * p) / sqrt(n * p * (1.0 - p));
}

/* ------------------------------------------------------------------------ */
/* Normal limits and z-scores                                               */
/* ------------------------------------------------------------------------ */

/* Largest z P(|Z| > z) = p for a standard normal Z, by bisection. */
double ref_z_limit(double p)
{
    double lo = 0.0, hi = 40.0;
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        if (erfc(mid / sqrt(2.0)) > p) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return hi;
}

/* The chi-square quantile with 3 degrees of freedom: P(X > x) = p, where
 * P(X > x) = erfc(sqrt(x/2)) + sqrt(2x/pi) exp(-x/2). */
double ref_chi2_3_limit(double p)
{
    double lo = 0.0, hi = 500.0;
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        double sf = erfc(sqrt(mid / 2.0)) + sqrt(2.0 * mid / REF_PI) * exp(-mid / 2.0);
        if (sf > p) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return hi;
}

/* A list of named z-scores. */
/* Add z under the name "what a b" (b < 0: "what a"). */
void ref_z_add(ref_zlist *zl, double z, const char *what, int a, int b)
{
    ck_assert_int_lt(zl->k, 64);
    if (b < 0) {
        snprintf(zl->name[zl->k], sizeof zl->name[0], "%s %d", what, a);
    } else {
        snprintf(zl->name[zl->k], sizeof zl->name[0], "%s %d %d", what, a, b);
    }
    zl->z[zl->k++] = z;
}

/* The largest |z|; *arg gets its index. A NaN counts as infinitely large. */
double ref_z_max(const ref_zlist *zl, int *arg)
{
    double best = -1.0;
    *arg = 0;
    for (int q = 0; q < zl->k; q++) {
        double a = isnan(zl->z[q]) ? INFINITY : fabs(zl->z[q]);
        if (a > best) {
            best = a;
            *arg = q;
        }
    }
    return best;
}

/* The mean of q[0..n) and its standard error (from the sample variance). */
void ref_mean_and_se(const double *q, int64_t n, double *mean, double *se)
{
    double sum = 0.0, sum2 = 0.0;
    for (int64_t r = 0; r < n; r++) {
        sum += q[r];
    }
    *mean = sum / (double)n;
    for (int64_t r = 0; r < n; r++) {
        sum2 += (q[r] - *mean) * (q[r] - *mean);
    }
    *se = sqrt(sum2 / (double)(n - 1) / (double)n);
}

/* z of the mean of q[0..n) against `expect`. */
double ref_z_of(const double *q, int64_t n, double expect)
{
    double mean, se;
    ref_mean_and_se(q, n, &mean, &se);
    return (mean - expect) / se;
}
