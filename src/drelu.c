/* Half-line Gaussian integrals for dReLU units (drelu.h). */
#include "drelu.h"

#include <math.h>

static const double LOG_PI = 1.1447298858494001741;
static const double TWO_PI = 6.283185307179586476925;

double ebm__log_erfcx(double z)
{
    if (z < 26.0) {
        /* erfc(z) is accurate to a few ulps (relative) until it underflows
         * near z = 26.5; below 0 it is in (1, 2). */
        return log(erfc(z)) + z * z;
    }
    /* The asymptotic series 1/(z sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2z^2)^k
     * to k = 6: its next term, 135135/(128 z^14), is below 2e-17 for
     * z >= 26. */
    const double r = 1.0 / (z * z);
    const double s =
        1.0 + r * (-0.5 + r * (0.75 + r * (-1.875 + r * (6.5625 + r * (-29.53125 +
                                                                         r * 162.421875)))));
    return log(s) - log(z) - 0.5 * LOG_PI;
}

double ebm__half_log_int(double g, double t)
{
    return 0.5 * (LOG_PI - log(2.0 * g)) + ebm__log_erfcx(-t / sqrt(2.0 * g));
}

double ebm__drelu_free(double gp, double gn, double tp, double tn)
{
    const double a = ebm__half_log_int(gp, tp), b = ebm__half_log_int(gn, -tn);
    const double mx = a > b ? a : b;
    return -(mx + log1p(exp(-fabs(a - b))));
}

/*
 * With m = t / g, s = 1 / sqrt(g) and alpha = -m / s, the half-line law is
 * N(m, s^2) truncated to h > 0, whose mean is m + s lambda, lambda =
 * phi(alpha) / (1 - Phi(alpha)) = sqrt(2 / pi) / erfcx(alpha / sqrt(2)),
 * and (integrating (h - m) h f(h) by parts; f vanishes at infinity and the
 * boundary term at 0 carries a factor h) E[h^2] = m E[h] + s^2.
 */
void ebm__half_moments(double g, double t, double *m1, double *m2)
{
    const double s = 1.0 / sqrt(g), m = t / g, alpha = -m / s;
    if (alpha > 3.0) {
        /* Far in the tail both formulas cancel. By Laplace's continued
         * fraction of the Mills ratio, lambda = alpha + 1 / (alpha + c),
         * c = 2 / (alpha + 3 / (alpha + 4 / ...)), so E[h] = s (lambda -
         * alpha) = s / (alpha + c) and E[h^2] = s^2 (1 - alpha (lambda -
         * alpha)) = s^2 c / (alpha + c), without cancellation. */
        double c = alpha;
        for (int k = 200; k >= 3; k--) {
            c = alpha + k / c;
        }
        c = 2.0 / c;
        *m1 = s / (alpha + c);
        *m2 = s * s * c / (alpha + c);
        return;
    }
    const double lambda = sqrt(2.0 / 3.14159265358979323846) *
                          exp(-ebm__log_erfcx(alpha / sqrt(2.0)));
    *m1 = m + s * lambda;
    *m2 = m * *m1 + s * s;
}

void ebm__drelu_moments_of(double gp, double gn, double tp, double tn, ebm__drelu_moments *mo)
{
    const double a = ebm__half_log_int(gp, tp), b = ebm__half_log_int(gn, -tn);
    /* pp = e^a / (e^a + e^b), without overflow */
    mo->pp = a >= b ? 1.0 / (1.0 + exp(b - a)) : exp(a - b) / (1.0 + exp(a - b));
    mo->pn = a >= b ? exp(b - a) / (1.0 + exp(b - a)) : 1.0 / (1.0 + exp(a - b));
    ebm__half_moments(gp, tp, &mo->m1p, &mo->m2p);
    /* the negative half: h = -u, u > 0 with law exp(-gn u^2 / 2 - tn u) */
    double u1, u2;
    ebm__half_moments(gn, -tn, &u1, &u2);
    mo->m1n = -u1;
    mo->m2n = u2;
}

/* log of the density at u >= 0 of the law exp(-g u^2 / 2 + t u) on u > 0. */
static double half_log_density(double g, double t, double u)
{
    const double z = -t / sqrt(2.0 * g);
    if (z < 26.0) { /* erfc(z) does not underflow */
        const double c = u - t / g;
        return -0.5 * g * c * c - 0.5 * (LOG_PI - log(2.0 * g)) - log(erfc(z));
    }
    return -0.5 * g * u * u + t * u - ebm__half_log_int(g, t); /* t < 0: no cancellation */
}

double ebm__drelu_logprob(double gp, double gn, double tp, double tn, double h)
{
    const double a = ebm__half_log_int(gp, tp), b = ebm__half_log_int(gn, -tn);
    /* log pp = a - logaddexp(a, b), log pn = b - logaddexp(a, b) */
    const double lse = (a > b ? a : b) + log1p(exp(-fabs(a - b)));
    return h >= 0.0 ? (a - lse) + half_log_density(gp, tp, h)
                    : (b - lse) + half_log_density(gn, -tn, -h);
}

double ebm__drelu_mean(double gp, double gn, double tp, double tn)
{
    ebm__drelu_moments mo;
    ebm__drelu_moments_of(gp, gn, tp, tn, &mo);
    return mo.pp * mo.m1p + mo.pn * mo.m1n;
}

double ebm__drelu_mode(double gp, double gn, double tp, double tn)
{
    /* On h > 0 the minimum of E is at tp / gp when tp > 0, where E =
     * -tp^2 / (2 gp); on h < 0 at tn / gn when tn < 0; else at 0 (E = 0). */
    const double up = tp > 0.0 ? tp * tp / gp : 0.0, down = tn < 0.0 ? tn * tn / gn : 0.0;
    if (up == 0.0 && down == 0.0) {
        return 0.0;
    }
    return up >= down ? tp / gp : tn / gn;
}

/* (b + 1) 2^-53 for the 53-bit b of two words: in (0, 1]. */
static double open_uniform(uint32_t hi, uint32_t lo)
{
    return ((double)(hi >> 5) * 0x1.0p26 + (double)(lo >> 6) + 1.0) * 0x1.0p-53;
}

/* e = z - alpha for z ~ N(0, 1) truncated to z > alpha (the excess, so that
 * a far tail keeps its digits). After EBM__DRELU_TRIES rejections the last
 * proposal's excess, clipped at 0, is returned. */
static double truncated_normal_excess(double alpha, const ebm__stream *s, uint32_t row,
                                      uint64_t word)
{
    if (!(alpha < INFINITY)) {
        return 0.0; /* all the mass at the boundary (or a NaN input) */
    }
    const double lam = 0.5 * (alpha + sqrt(alpha * alpha + 4.0));
    double e = 0.0;
    for (uint64_t k = 0; k < EBM__DRELU_TRIES; k++) {
        const ebm__stream t = k == 0 ? *s : ebm__stream_for_try(s, k);
        uint32_t w[4];
        ebm__stream_block(&t, row, word, w);
        const double u1 = open_uniform(w[0], w[1]), u2 = open_uniform(w[2], w[3]);
        if (alpha <= 0.0) {
            const double x = sqrt(-2.0 * log(u1)) * cos(TWO_PI * u2);
            e = fmax(x - alpha, 0.0);
            if (x > alpha) {
                return e;
            }
        } else {
            e = -log(u1) / lam;
            const double d = alpha + e - lam;
            if (log(u2) <= -0.5 * d * d) {
                return e;
            }
        }
    }
    return e;
}

double ebm__drelu_draw(double gp, double gn, double tp, double tn, const ebm__stream *s,
                       uint32_t row, uint64_t word)
{
    uint32_t w[4];
    ebm__stream_block(s, row, word + 4, w);
    const double a = ebm__half_log_int(gp, tp), b = ebm__half_log_int(gn, -tn);
    const double pp = a >= b ? 1.0 / (1.0 + exp(b - a)) : exp(a - b) / (1.0 + exp(a - b));
    const int positive = open_uniform(w[0], w[1]) <= pp;
    /* The negative half is u = -h > 0 with law exp(-gn u^2 / 2 - tn u):
     * u = t / g + z / sqrt(g) = (z - alpha) / sqrt(g). */
    const double g = positive ? gp : gn, t = positive ? tp : -tn, sg = sqrt(g);
    const double e = truncated_normal_excess(-t / sg, s, row, word);
    return positive ? e / sg : -e / sg;
}
