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
