/* Half-line Gaussian integrals for dReLU units (drelu.h). */
#include "drelu.h"

#include <math.h>

static const double LOG_PI = 1.1447298858494001741;

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
