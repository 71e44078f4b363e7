/*
 * Scalar numerics shared by the kernels and the double-precision paths:
 * sigmoid, exp, tanh, log, Box-Muller, softplus.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_NUMERICS_H
#define EBM_NUMERICS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* sigmoid branches on the sign and never clamps. */
static inline double ebm__sigmoid(double a)
{
    if (a >= 0) {
        return 1.0 / (1.0 + exp(-a));
    }
    double e = exp(a);
    return e / (1.0 + e);
}
/*
 * Float exp, sigmoid and tanh without branches or libm, so that a loop of
 * them vectorises (src/simd/kernels.c) and every build of it, scalar, AVX2
 * or AVX-512, gives the same bits: only IEEE +, -, *, / and exact integer
 * steps, no contraction into FMA (the library is built with
 * -ffp-contract=off).
 *
 * ebm__expf: Cody-Waite reduction x = k ln 2 + r, |r| <= ln 2 / 2, and
 * Cephes' degree-6 polynomial for e^r (about 1 ulp), scaled by 2^k as
 * 2^(k/2) 2^(k - k/2) so that results down to the smallest subnormal are
 * rounded once. Below -103.97 e^x is 0 in float, above 88.72 it
 * overflows (inf). NaN gives NaN.
 */
static inline float ebm__expf(float x)
{
    float xc = x > 88.7228394f ? 88.7228394f : x;
    xc = xc < -103.972076f ? -103.972076f : xc;
    xc = xc == xc ? xc : 0.0f; /* NaN: no float-to-int conversion of it */
    float k = (xc * 1.44269504f + 0x1.8p23f) - 0x1.8p23f; /* round to nearest */
    float r = xc - k * 0.693359375f;
    r = r - k * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float y = p * (r * r) + r + 1.0f;
    int32_t n = (int32_t)k, n1 = n / 2, n2 = n - n1; /* |k| <= 150: 2^n1, 2^n2 normal */
    uint32_t b1 = (uint32_t)(n1 + 127) << 23, b2 = (uint32_t)(n2 + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    y = y * s1 * s2;
    y = x < -103.972076f ? 0.0f : y;
    y = x > 88.7228394f ? INFINITY : y;
    return x == x ? y : x;
}
/* With e = e^-|a| in (0, 1]: 1 / (1 + e) for a >= 0, e / (1 + e) below,
 * so that sigmoid(a) keeps its relative accuracy down to the subnormals
 * (about 3 ulp); both sides are computed and one is selected. */
static inline float ebm__sigmoidf(float a)
{
    float e = ebm__expf(-fabsf(a)), r = 1.0f / (1.0f + e);
    return a >= 0.0f ? r : e * r;
}
/* log(1 + e) for e in [0, 1] in float: x = 1 + e, halved above sqrt(2)
 * (k = 1), then Cephes' logf polynomial for log(1 + f), f = m - 1 in
 * [-0.29, 0.42]. Within 1.26 2^-24 of log1p(e) for every float e in [0, 1]
 * (the rounding of 1 + e included; tests/check_energy.c scans them). */
static inline float ebm__log1pf01(float e)
{
    float x = 1.0f + e;
    float k = x > 1.41421356f ? 1.0f : 0.0f;
    float m = x > 1.41421356f ? 0.5f * x : x;
    float f = m - 1.0f, z = f * f;
    float p = 7.0376836292E-2f;
    p = p * f - 1.1514610310E-1f;
    p = p * f + 1.1676998740E-1f;
    p = p * f - 1.2420140846E-1f;
    p = p * f + 1.4249322787E-1f;
    p = p * f - 1.6668057665E-1f;
    p = p * f + 2.0000714765E-1f;
    p = p * f - 2.4999993993E-1f;
    p = p * f + 3.3333331174E-1f;
    float y = f * z * p + k * -2.12194440e-4f - 0.5f * z;
    return (f + y) + k * 0.693359375f;
}
/* tanh: Cephes' odd polynomial below |a| = 0.625, (1 - e) / (1 + e) with
 * e = e^-2|a| above (no cancellation there: e < 0.29). */
static inline float ebm__tanhf(float a)
{
    float z = a * a, t = fabsf(a);
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    float small = p * z * t + t;
    float e = ebm__expf(-2.0f * t), large = (1.0f - e) / (1.0f + e);
    return copysignf(t < 0.625f ? small : large, a); /* odd, -0 included */
}
/*
 * The Box-Muller pair of four Philox words, in double without libm, so that
 * a loop of pairs vectorises and every build gives the same bits:
 * u1 in (0, 1] from words 0 and 1 and u2 in [0, 1) from words 2 and 3 (53
 * bits each), z0 = r cos(2 pi u2), z1 = r sin(2 pi u2), r = sqrt(-2 log u1).
 * log is fdlibm's (e_log.c: m in [sqrt(2)/2, sqrt(2)), a degree-14 odd
 * series in s = (m - 1) / (m + 1)); u1 is a normal double, so no special
 * cases. The angle is reduced exactly: q = round(4 u2) and t = u2 - q/4 in
 * [-1/8, 1/8] are exact, so theta = 2 pi t lies in [-pi/4, pi/4] where
 * fdlibm's kernel sine and cosine polynomials hold (< 1 ulp), and the
 * quadrant q rotates (cos, sin). All within an ulp or two of double, far
 * below the float rounding of the results.
 */
/* log x for a positive normal double x (the u1 of Box-Muller, the products
 * of the coupling's factors). */
static inline double ebm__log_pos(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int32_t k = (int32_t)(bits >> 52) - 1023;
    uint64_t mb = (bits & UINT64_C(0x000FFFFFFFFFFFFF)) | UINT64_C(0x3FF0000000000000);
    double m;
    memcpy(&m, &mb, sizeof m);
    int big = m > 1.4142135623730951; /* sqrt(2): halve m */
    m = big ? 0.5 * m : m;
    k = big ? k + 1 : k;
    double f = m - 1.0, s = f / (2.0 + f), z = s * s, w = z * z, dk = (double)k;
    double t1 = w * (3.999999999940941908e-01 +
                     w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
    double t2 = z * (6.666666666666735130e-01 +
                     w * (2.857142874366239149e-01 +
                          w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
    double r = t2 + t1, hfsq = 0.5 * f * f;
    return dk * 6.93147180369123816490e-01 -
           ((hfsq - (s * (hfsq + r) + dk * 1.90821492927058770002e-10)) - f);
}

static inline void ebm__box_muller(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3,
                                   float *z0, float *z1)
{
    /* (b + 1) 2^-53 and b 2^-53 for the 53-bit b = hi 2^26 + lo, as exact
     * sums of two int32 conversions (which every vector unit has). */
    double u1 = (double)(int32_t)(w0 >> 5) * 0x1.0p-27 +
                (double)(int32_t)((w1 >> 6) + 1) * 0x1.0p-53;
    double u2 =
        (double)(int32_t)(w2 >> 5) * 0x1.0p-27 + (double)(int32_t)(w3 >> 6) * 0x1.0p-53;
    double radius = sqrt(-2.0 * ebm__log_pos(u1));
    double q = (u2 * 4.0 + 0x1.8p52) - 0x1.8p52; /* round(4 u2): 0..4 */
    double x = 6.283185307179586476925286766559 * (u2 - 0.25 * q), z = x * x;
    double sr = 8.33333333332248946124e-03 +
                z * (-1.98412698298579493134e-04 +
                     z * (2.75573137070700676789e-06 +
                          z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)));
    double sn = x + z * x * (-1.66666666666666324348e-01 + z * sr);
    double cr = z * (4.16666666666666019037e-02 +
                     z * (-1.38888888888741095749e-03 +
                          z * (2.48015872894767294178e-05 +
                               z * (-2.75573143513906633035e-07 +
                                    z * (2.08757232129817482790e-09 +
                                         z * -1.13596475577881948265e-11)))));
    double hz = 0.5 * z, cw = 1.0 - hz;
    double cs = cw + (((1.0 - cw) - hz) + z * cr);
    /* (cos, sin)(theta + q pi/2) = (cs, sn), (-sn, cs), (-cs, -sn), (sn, -cs)
     * for q = 0, 1, 2, 3 (4 is 0): swap on odd q, then the signs. */
    int32_t quad = (int32_t)q & 3;
    double a = (quad & 1) ? sn : cs, b = (quad & 1) ? cs : sn;
    double c = ((quad + 1) & 2) ? -a : a, sv = (quad & 2) ? -b : b;
    *z0 = (float)(radius * c);
    *z1 = (float)(radius * sv);
}
/* log(1 + e^a) */
static inline double ebm__softplus(double a) { return fmax(a, 0.0) + log1p(exp(-fabs(a))); }
/* log(2 cosh a) = |a| + log1p(e^{-2|a|}) */
static inline double ebm__log2cosh(double a)
{
    double t = fabs(a);
    return t + log1p(exp(-2.0 * t));
}
/* log sigmoid(a) = -softplus(-a) */
static inline double ebm__log_sigmoid(double a) { return -ebm__softplus(-a); }

/* log sum_k exp(a[k]) of q float inputs, in double (a categorical site). */
static inline double ebm__site_lse(int64_t q, const float *a)
{
    double mx = a[0];
    for (int64_t k = 1; k < q; k++) {
        mx = a[k] > mx ? a[k] : mx;
    }
    double s = 0.0;
    for (int64_t k = 0; k < q; k++) {
        s += exp((double)a[k] - mx);
    }
    return mx + log(s);
}

/* The softmax of a site's q inputs, in float from double: every Potts mean
 * and draw uses these. p may be a. */
static inline void ebm__site_softmax(int64_t q, const float *a, float *p)
{
    const double lse = ebm__site_lse(q, a);
    for (int64_t k = 0; k < q; k++) {
        p[k] = (float)exp((double)a[k] - lse);
    }
}

/* The category at uniform t of a site with probabilities p: the first k
 * with t < p_0 + .. + p_k (sums in double), else q - 1 (rounding). */
static inline int64_t ebm__site_pick(int64_t q, const float *p, double t)
{
    double cum = 0.0;
    for (int64_t k = 0; k < q - 1; k++) {
        cum += (double)p[k];
        if (t < cum) {
            return k;
        }
    }
    return q - 1;
}

/* The same for double inputs. */
static inline double ebm__site_lse_d(int64_t q, const double *a)
{
    double mx = a[0];
    for (int64_t k = 1; k < q; k++) {
        mx = a[k] > mx ? a[k] : mx;
    }
    double s = 0.0;
    for (int64_t k = 0; k < q; k++) {
        s += exp(a[k] - mx);
    }
    return mx + log(s);
}

#endif /* EBM_NUMERICS_H */
