/* Bars-and-stripes images: see bas.h. */
#include "bas.h"

#include <math.h>
#include <stddef.h>

int64_t bas_rows(int d)
{
    return d >= 1 && d <= BAS_MAX_SIDE ? INT64_C(2) << d : -1;
}

int bas_generate(int d, float *out, int64_t ldo)
{
    if (bas_rows(d) < 0 || out == NULL || ldo < (int64_t)d * d) {
        return -1;
    }
    for (int64_t p = 0; p < (INT64_C(1) << d); p++) {
        float *stripes = out + 2 * p * ldo, *bars = stripes + ldo;
        for (int i = 0; i < d; i++) {
            const float bit = (float)((p >> (d - 1 - i)) & 1);
            for (int j = 0; j < d; j++) {
                stripes[i * d + j] = bit; /* image row i constant */
                bars[j * d + i] = bit;    /* image column i constant */
            }
        }
    }
    return 0;
}

double bas_max_log_likelihood(int d)
{
    const int64_t n = bas_rows(d);
    if (n < 0) {
        return NAN;
    }
    const double N = (double)n;
    return (N - 4.0) * log(1.0 / N) + 4.0 * log(2.0 / N);
}
