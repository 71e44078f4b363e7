/*
 * The vectorised kernels (src/simd/kernels.c): the float exp, sigmoid and
 * tanh are accurate to a few ulp against double precision, the Box-Muller
 * normals match libm's, the coupled step's setup, the local search's
 * argmin, the fused
 * subtract-and-dot and visible terms of the GRBM gradient, the scaled
 * rows of the weight gradients and a Gibbs-Langevin row move match plain
 * loops, and every build
 * the CPU runs (AVX2, AVX-512) gives the same bits as the generic one, for
 * the kernels alone and for whole library calls. Each comparison has a
 * broken twin that must fail.
 */
#include "tests.h"

#include "kernels.h"
#include "numerics.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- accuracy ------------------------------------------------------------ */

/* Distance in representable floats between two finite floats of one sign. */
static int64_t ulps(float a, float b)
{
    int32_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    return llabs((long long)ia - (long long)ib);
}

typedef float (*float_fn)(float);
typedef double (*double_fn)(double);

/* The largest ulp error of f against the double reference g, rounded to
 * float, on `count` points evenly spaced in [lo, hi] plus every float
 * within 64 of each end; *where gets the worst x. */
static int64_t max_ulps(float_fn f, double_fn g, float lo, float hi, int64_t count, float *where)
{
    int64_t worst = 0;
    for (int64_t i = 0; i < count + 128; i++) {
        float x;
        if (i < count) {
            x = (float)((double)lo + ((double)hi - (double)lo) * (double)i / (double)(count - 1));
        } else {
            int64_t k = i - count;
            x = k < 64 ? nextafterf(lo, hi) : nextafterf(hi, lo);
            for (int64_t j = 0; j < k % 64; j++) {
                x = nextafterf(x, k < 64 ? hi : lo);
            }
        }
        float want = (float)g((double)x), got = f(x);
        int64_t e = signbit(want) == signbit(got) ? ulps(want, got) : INT64_MAX;
        if (e > worst) {
            worst = e;
            *where = x;
        }
    }
    return worst;
}

static float vexp(float x) { return ebm__expf(x); }
static float vsigmoid(float x) { return ebm__sigmoidf(x); }
static float vtanh(float x) { return ebm__tanhf(x); }
static double dsigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
/* Broken twins: an exp 3 ulp too large, and a tanh cut to two terms of
 * its series below 0.7 (errors of up to 1e-3 relative). */
static float exp_biased(float x) { return ebm__expf(x) * (1.0f + 0x1.8p-23f); }
static float tanh_linear_too_far(float x)
{
    return fabsf(x) < 0.7f ? x - x * x * x / 3.0f : ebm__tanhf(x);
}

enum { POINTS = 2000003 };

START_TEST(exp_accurate)
{
    float where = 0.0f;
    /* e^x is subnormal below -87.3; the bound is in ulps there too. */
    int64_t e = max_ulps(vexp, exp, -103.97f, 88.72f, POINTS, &where);
    ck_assert_msg(e <= 2, "expf: %lld ulp at x = %.9g", (long long)e, (double)where);
    ck_assert_msg(max_ulps(exp_biased, exp, -103.97f, 88.72f, POINTS, &where) > 2,
                  "the twin 3 ulp off passed");
    /* The ends: 0, inf and NaN, exactly 1 at 0. */
    ck_assert(ebm__expf(-INFINITY) == 0.0f && ebm__expf(-200.0f) == 0.0f);
    ck_assert(isinf(ebm__expf(INFINITY)) && isinf(ebm__expf(89.0f)));
    ck_assert(isnan(ebm__expf(NAN)));
    ck_assert(ebm__expf(0.0f) == 1.0f && ebm__expf(-0.0f) == 1.0f);
}
END_TEST

/* The float log(1 + e) of the bounded free energies (energy.c: their
 * bound takes 1.26 2^-24, the worst of an exhaustive scan): every 61st
 * float of [0, 1] within 1.3 2^-24 of log1p in double; the twin without
 * the halving above sqrt(2) (its series at f up to 1) is not. */
static float log1p_unhalved(float e)
{
    float f = e, z = f * f, p = 3.3333331174E-1f;
    return f + (f * z * p - 0.5f * z);
}

static double log1p_worst(float (*fn)(float))
{
    double worst = 0.0;
    uint32_t b = 0;
    for (float e = 0.0f; e <= 1.0f;) {
        worst = fmax(worst, fabs((double)fn(e) - log1p((double)e)));
        b += 61u;
        memcpy(&e, &b, sizeof e);
    }
    return worst;
}

START_TEST(log1p01_accurate)
{
    const double worst = log1p_worst(ebm__log1pf01);
    ck_assert_msg(worst <= 1.3 * 0x1p-24, "log1pf01: %.3g (%.2f 2^-24)", worst, worst / 0x1p-24);
    ck_assert(ebm__log1pf01(0.0f) == 0.0f);
    ck_assert_msg(log1p_worst(log1p_unhalved) > 1.3 * 0x1p-24, "the twin log1p passed");
}
END_TEST

START_TEST(sigmoid_tanh_accurate)
{
    float where = 0.0f;
    int64_t e = max_ulps(vsigmoid, dsigmoid, -103.0f, 30.0f, POINTS, &where);
    ck_assert_msg(e <= 4, "sigmoid: %lld ulp at a = %.9g", (long long)e, (double)where);
    e = max_ulps(vtanh, tanh, -20.0f, 20.0f, POINTS, &where);
    ck_assert_msg(e <= 4, "tanh: %lld ulp at a = %.9g", (long long)e, (double)where);
    /* near 0 tanh is relative: */
    e = max_ulps(vtanh, tanh, -1e-6f, 1e-6f, 200001, &where);
    ck_assert_msg(e <= 2, "tanh near 0: %lld ulp at a = %.9g", (long long)e, (double)where);
    ck_assert_msg(max_ulps(tanh_linear_too_far, tanh, -20.0f, 20.0f, POINTS, &where) > 4,
                  "the twin with a short series passed");
    /* The ends: saturation without overflow, NaN kept. */
    ck_assert(ebm__sigmoidf(-INFINITY) == 0.0f && ebm__sigmoidf(INFINITY) == 1.0f);
    ck_assert(ebm__sigmoidf(-200.0f) == 0.0f && ebm__sigmoidf(200.0f) == 1.0f);
    ck_assert(ebm__sigmoidf(0.0f) == 0.5f);
    ck_assert(ebm__tanhf(INFINITY) == 1.0f && ebm__tanhf(-INFINITY) == -1.0f);
    ck_assert(ebm__tanhf(0.0f) == 0.0f && signbit(ebm__tanhf(-0.0f)));
    ck_assert(isnan(ebm__sigmoidf(NAN)) && isnan(ebm__tanhf(NAN)));
}
END_TEST

/* Box-Muller in double with libm, as documented (the reference). */
static void libm_pair(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3, float *z0, float *z1)
{
    double u1 = (double)((((uint64_t)(w0 >> 5)) << 26 | (w1 >> 6)) + 1) * 0x1.0p-53;
    double u2 = (double)(((uint64_t)(w2 >> 5)) << 26 | (w3 >> 6)) * 0x1.0p-53;
    double r = sqrt(-2.0 * log(u1)), t = 6.283185307179586476925286766559 * u2;
    *z0 = (float)(r * cos(t));
    *z1 = (float)(r * sin(t));
}

/* The broken twin: the same in float precision. */
static void float_pair(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3, float *z0, float *z1)
{
    float u1 = (float)(((w0 >> 8) + 1)) * 0x1.0p-24f, u2 = (float)(w2 >> 8) * 0x1.0p-24f;
    (void)w1;
    (void)w3;
    float r = sqrtf(-2.0f * logf(u1)), t = 6.2831853f * u2;
    *z0 = r * cosf(t);
    *z1 = r * sinf(t);
}

typedef void (*pair_fn)(uint32_t, uint32_t, uint32_t, uint32_t, float *, float *);

/* How many of `count` pairs of f differ from the libm reference, and the
 * largest difference in ulps. */
static int64_t pairs_off(pair_fn f, int64_t count, int64_t *worst)
{
    uint64_t seed = 2024;
    int64_t off = 0;
    *worst = 0;
    for (int64_t i = 0; i < count; i++) {
        uint32_t w[4];
        for (int k = 0; k < 4; k++) {
            w[k] = (uint32_t)(t_uniform(&seed) * 4294967296.0);
        }
        if (i < 4) { /* the ends: u1 = 1 and 2^-53, u2 = 0 and 1 - 2^-53 */
            w[0] = w[1] = i % 2 ? 0xFFFFFFFFu : 0u;
            w[2] = w[3] = i / 2 ? 0xFFFFFFFFu : 0u;
        }
        float a[2], b[2];
        f(w[0], w[1], w[2], w[3], &a[0], &a[1]);
        libm_pair(w[0], w[1], w[2], w[3], &b[0], &b[1]);
        for (int k = 0; k < 2; k++) {
            /* Near a zero of cos or sin (|z| < 1e-6) the reference's own
             * angle error (2 pi rounded, ~1e-16 absolute) dominates: there
             * an absolute 1e-12 counts as agreement. */
            int64_t e = fmaxf(fabsf(a[k]), fabsf(b[k])) < 1e-6f
                            ? (fabsf(a[k] - b[k]) > 1e-12f) * INT64_C(1000)
                            : ulps(a[k], b[k]);
            off += e != 0;
            *worst = e > *worst ? e : *worst;
        }
    }
    return off;
}

/* ebm__box_muller against libm: log within 1 ulp of double, and the float
 * normals equal to libm's but for rare ties of the float rounding (at most
 * 1 in 10^5, at most 1 ulp; libms differ from each other as much). */
START_TEST(box_muller_accurate)
{
    uint64_t seed = 7;
    for (int i = 0; i < 1000000; i++) {
        double u = (double)((uint64_t)(t_uniform(&seed) * 0x1.0p53) + 1) * 0x1.0p-53;
        u = i < 2 ? (i ? 1.0 : 0x1.0p-53) : u;
        double got = ebm__log_pos(u), want = log(u);
        ck_assert_msg(fabs(got - want) <= 1.0 * fabs(want) * 0x1.0p-52 || got == want,
                      "log(%a) = %a, libm %a", u, got, want);
    }
    const int64_t count = 1000000;
    int64_t worst = 0, off = pairs_off(ebm__box_muller, count, &worst);
    ck_assert_msg(off <= 2 * count / 100000 && worst <= 1,
                  "%lld of %lld normals differ from libm's, by up to %lld ulp", (long long)off,
                  (long long)(2 * count), (long long)worst);
    off = pairs_off(float_pair, count, &worst);
    ck_assert_msg(off > 2 * count / 100000, "the float-precision twin passed");
}
END_TEST

/* ---- every build against the generic one --------------------------------- */

enum { MAXN = 300 };

/* Inputs: special values first (0 with uniform 0.5: a tie of u and p;
 * infinities, NaN, subnormals, the exp clamps), then random ones. */
static void inputs(float *a, float *u, int64_t n, uint64_t seed)
{
    static const float special[] = {0.0f,      -0.0f,        INFINITY,   -INFINITY,
                                    NAN,       1e-40f,       -1e-40f,    88.7228394f,
                                    -88.7228394f, 103.972076f, -103.972076f, 0.625f,
                                    -0.625f,   0.3125f,      20.0f,      -20.0f};
    const int64_t ns = (int64_t)(sizeof special / sizeof special[0]);
    for (int64_t i = 0; i < n; i++) {
        a[i] = i < ns ? special[i] : (float)(40.0 * t_uniform(&seed) - 20.0);
        u[i] = i == 0 ? 0.5f : (float)t_uniform(&seed);
    }
}

/* 0 if the tables agree on every kernel, else the first kernel that does not. */
static const char *tables_differ(const ebm__kernels *k, const ebm__kernels *ref)
{
    static float a[MAXN], u1[MAXN], u2[MAXN], o1[4 * MAXN + 16], o2[4 * MAXN + 16];
    static const uint64_t blocks[] = {0, 5, (UINT64_C(7) << 32) + 3, UINT64_C(0xFFFFFFF0),
                                      UINT64_C(0x1FFFFFFF5)};
    static const uint64_t seqs[] = {0, UINT64_C(0x123456789abcdef)};
    const uint32_t key[2] = {0xdeadbeefu, 0x01234567u};
    for (int64_t n = 0; n < MAXN; n += n < 40 ? 1 : 37) {
        for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
            for (int sq = 0; sq < 2; sq++) {
                memset(o1, 0xA5, sizeof o1);
                memset(o2, 0xA5, sizeof o2);
                k->uniform(key, seqs[sq], blocks[b], n, o1);
                ref->uniform(key, seqs[sq], blocks[b], n, o2);
                if (memcmp(o1, o2, sizeof o1) != 0) {
                    return "uniform";
                }
                k->normal(key, seqs[sq], blocks[b], n, o1);
                ref->normal(key, seqs[sq], blocks[b], n, o2);
                if (memcmp(o1, o2, sizeof o1) != 0) {
                    return "normal";
                }
            }
        }
        for (int s = 0; s < 2; s++) {
            /* in place, one row; then three rows of n / 3 at strides */
            const float scale = s ? 2.0f : 1.0f, lo = s ? -1.0f : 0.0f;
            inputs(a, u1, n, (uint64_t)(17 + n));
            memcpy(u2, u1, sizeof u1);
            k->bernoulli(1, n, a, n, scale, lo, u1, n, u1, n);
            ref->bernoulli(1, n, a, n, scale, lo, u2, n, u2, n);
            if (memcmp(u1, u2, (size_t)n * sizeof *u1) != 0) {
                return "bernoulli";
            }
            const int64_t nr = n / 3;
            inputs(a, u1, n, (uint64_t)(29 + n));
            memset(o1, 0xA5, sizeof o1);
            memset(o2, 0xA5, sizeof o2);
            k->bernoulli(3, nr, a, nr, scale, lo, u1, nr, o1, nr + 1);
            ref->bernoulli(3, nr, a, nr, scale, lo, u1, nr, o2, nr + 1);
            if (memcmp(o1, o2, sizeof o1) != 0) {
                return "bernoulli over rows";
            }
        }
        for (int s = 0; s < 2; s++) {
            const float lo = s ? -1.0f : 0.0f;
            inputs(a, u1, n, (uint64_t)(31 * n + s));
            inputs(u2, o1, n, (uint64_t)(37 * n + s)); /* u2: a1, o1: a2 */
            for (int64_t i = 0; i < n; i++) { /* finite inputs, as the step has, of */
                u2[i] = isfinite(u2[i]) ? u2[i] : 1.5f; /* many scales (rounding) */
                o1[i] = ldexpf(4.0f * o1[i] - 2.0f, (int)(i % 48) - 24);
            }
            static float z1[MAXN], z2[MAXN];
            double d1 = k->draw_ratio(n, lo, u1, a, u2, o1, z1);
            double d2 = ref->draw_ratio(n, lo, u1, a, u2, o1, z2);
            if (memcmp(&d1, &d2, sizeof d1) != 0 || memcmp(z1, z2, (size_t)n * sizeof *z1) != 0) {
                return "draw_ratio";
            }
            static float p2[MAXN], y1[MAXN], y2[MAXN];
            inputs(p2, y1, n, (uint64_t)(41 * n + s)); /* p2: chain 2's probabilities */
            double e1[2], e2[2];
            k->draw_ratio_pair(n, lo, u1, a, p2, u2, o1, z1, y1, e1);
            ref->draw_ratio_pair(n, lo, u1, a, p2, u2, o1, z2, y2, e2);
            if (memcmp(e1, e2, sizeof e1) != 0 || memcmp(z1, z2, (size_t)n * sizeof *z1) != 0 ||
                memcmp(y1, y2, (size_t)n * sizeof *y1) != 0) {
                return "draw_ratio_pair";
            }
        }
        inputs(u1, o1, n, (uint64_t)n);
        memcpy(u2, u1, sizeof u1);
        k->sigmoid(n, u1, u1);
        ref->sigmoid(n, u2, u2);
        if (memcmp(u1, u2, (size_t)n * sizeof *u1) != 0) {
            return "sigmoid";
        }
        inputs(a, u1, n, (uint64_t)(3 * n));
        memcpy(u2, u1, sizeof u1);
        inputs(o1, o2, n, (uint64_t)(5 * n + 1)); /* o1: w, o2: p */
        double d1 = k->sub_dot(n, o1, o2, u1), d2 = ref->sub_dot(n, o1, o2, u2);
        if (memcmp(&d1, &d2, sizeof d1) != 0 || memcmp(u1, u2, (size_t)n * sizeof *u1) != 0) {
            return "sub_dot";
        }
        { /* n / 3 columns of three rows at stride n / 3 + 1 */
            const int64_t nc = n / 3;
            static double c3[3] = {0.25, -1.0 / 3.0, 0.1};
            inputs(a, u1, n, (uint64_t)(11 * n));
            memcpy(u2, u1, sizeof u1);
            k->col_sums(n >= 3 ? 3 : 0, nc, a, nc + 1, c3, u1);
            ref->col_sums(n >= 3 ? 3 : 0, nc, a, nc + 1, c3, u2);
            if (memcmp(u1, u2, (size_t)n * sizeof *u1) != 0) {
                return "col_sums";
            }
        }
        { /* the GRBM visible terms: three rows of n / 3 at stride n / 3 + 1 */
            const int64_t nc = n / 3, rows = n >= 3 ? 3 : 0;
            static double c3[3] = {0.25, -1.0 / 3.0, 0.1}, inv_d[MAXN];
            static float g1[2 * MAXN], g2[2 * MAXN], inv[MAXN];
            inputs(a, u1, n, (uint64_t)(13 * n));
            for (int64_t i = 0; i < nc; i++) {
                inv_d[i] = 0.5 + (double)u1[i];
                inv[i] = (float)inv_d[i];
            }
            memset(g1, 0, sizeof g1);
            memset(g2, 0, sizeof g2);
            k->grbm_visible_grad(rows, nc, a, nc + 1, u1, inv, inv_d, c3, o1, g1, g1 + MAXN);
            ref->grbm_visible_grad(rows, nc, a, nc + 1, u1, inv, inv_d, c3, o2, g2, g2 + MAXN);
            if (memcmp(g1, g2, sizeof g1) != 0 ||
                memcmp(o1, o2, (size_t)(rows * nc) * sizeof *o1) != 0) {
                return "grbm_visible_grad";
            }
            static double mv[3 * MAXN];
            for (int64_t i = 0; i < 3 * nc; i++) {
                mv[i] = (double)a[i] * 0.01;
            }
            memcpy(o2, u1, (size_t)nc * sizeof *o2);
            int f1 = k->affine_row(nc, mv, a, u1, a + nc, o1);
            int f2 = ref->affine_row(nc, mv, a, u1, a + nc, o2);
            if (f1 != f2 || memcmp(o1, o2, (size_t)nc * sizeof *o1) != 0) {
                return "affine_row";
            }
            const float cf[3] = {0.25f, -3.0f, 1e-30f};
            k->scale_rows(rows, nc, cf, a, nc + 1, o1, nc);
            ref->scale_rows(rows, nc, cf, a, nc + 1, o2, nc);
            if (memcmp(o1, o2, (size_t)(rows * nc) * sizeof *o1) != 0) {
                return "scale_rows";
            }
        }
        for (int cl = 0; cl < 2; cl++) {
            int32_t f1[MAXN], f2[MAXN];
            uint8_t clamp[MAXN];
            inputs(a, u1, n, (uint64_t)(7 * n + cl));
            for (int64_t i = 0; i < n; i++) {
                u1[i] = u1[i] < 0.5f ? -1.0f : 1.0f;
                clamp[i] = (uint8_t)(i % 3 == 0);
            }
            memcpy(u2, u1, sizeof u1);
            int64_t c1 = k->argmin(n, a, -1.0f, cl ? clamp : NULL, u1, f1);
            int64_t c2 = ref->argmin(n, a, -1.0f, cl ? clamp : NULL, u2, f2);
            if (c1 != c2 || memcmp(u1, u2, (size_t)n * sizeof *u1) != 0 ||
                memcmp(f1, f2, (size_t)c1 * sizeof *f1) != 0) {
                return "argmin";
            }
        }
        for (int spin = 0; spin < 2; spin++) {
            float q1[MAXN], q2[MAXN], r1[MAXN], r2[MAXN];
            inputs(a, u1, n, (uint64_t)(17 * n + spin));
            for (int64_t i = 0; i < n; i++) { /* finite inputs, as the step checks */
                a[i] = isfinite(a[i]) ? a[i] : 3.0f;
                u1[i] = 30.0f * u1[i] - 15.0f;
            }
            /* one row of n, and (n >= 3) three rows of n / 3 */
            for (int64_t rows = 1; rows <= 3 && rows <= (n > 0 ? n : 1); rows += 2) {
                const int64_t nl = n / rows;
                double l1[3] = {0.0, 0.0, 0.0}, l2[3] = {0.0, 0.0, 0.0};
                k->coupling_setup(rows, nl, spin, a, u1, nl, q1, r1, l1);
                ref->coupling_setup(rows, nl, spin, a, u1, nl, q2, r2, l2);
                if (memcmp(l1, l2, sizeof l1) != 0 ||
                    memcmp(q1, q2, (size_t)(rows * nl) * sizeof *q1) != 0 ||
                    memcmp(r1, r2, (size_t)(rows * nl) * sizeof *r1) != 0) {
                    return "coupling_setup";
                }
            }
        }
        {
            static double g1[MAXN], g2[MAXN];
            inputs(a, u1, n, (uint64_t)(23 * n));
            for (int64_t i = 0; i < n; i++) { /* uniforms, zeros among them */
                u1[i] = i % 5 == 0 ? 0.0f : fabsf(u1[i]) - floorf(fabsf(u1[i]));
            }
            k->log_uniform(n, u1, g1);
            ref->log_uniform(n, u1, g2);
            if (memcmp(g1, g2, (size_t)n * sizeof *g1) != 0) {
                return "log_uniform";
            }
        }
        {
            /* five flips of four weight rows of n (stride n + 3), one twice */
            static const int32_t flip[5] = {2, 0, 3, 2, 1};
            static const float v[4] = {1.0f, -1.0f, 0.0f, 1.0f};
            inputs(a, u1, n, (uint64_t)(11 * n));
            inputs(o1, o2, 4 * n + 9, (uint64_t)(13 * n)); /* rows at 0, n + 3, ... */
            memcpy(u2, u1, sizeof u1);
            k->add_flips(n, 5, flip, v, 2.0f, o1, n + 3, u1);
            ref->add_flips(n, 5, flip, v, 2.0f, o1, n + 3, u2);
            if (memcmp(u1, u2, (size_t)n * sizeof *u1) != 0) {
                return "add_flips";
            }
        }
        for (int spin = 0; spin < 2; spin++) { /* lz_sum on the inputs' doubles */
            static double ad[MAXN];
            inputs(a, u1, n, (uint64_t)(23 * n + spin));
            for (int64_t i = 0; i < n; i++) {
                ad[i] = (double)a[i] * (1.0 + (double)u1[i] * 0x1p-30);
            }
            double s1[2], s2[2];
            const double f1 = k->lz_sum(n, ad, spin, s1), f2 = ref->lz_sum(n, ad, spin, s2);
            if (memcmp(&f1, &f2, sizeof f1) != 0 || memcmp(s1, s2, sizeof s1) != 0) {
                return "lz_sum";
            }
        }
        { /* hamming: 3 rows against n rows of 2 words */
            static uint64_t bits[2 * MAXN + 6];
            static int32_t h1[3 * MAXN], h2[3 * MAXN];
            uint64_t seed = (uint64_t)(43 * n + 1);
            for (int64_t i = 0; i < 2 * n + 6; i++) {
                bits[i] = (uint64_t)(t_uniform(&seed) * 0x1p32) << 32 |
                          (uint64_t)(t_uniform(&seed) * 0x1p32);
            }
            for (int halve = 0; halve < 2; halve++) {
                k->hamming(3, n, 2, bits, bits + 6, halve, h1);
                ref->hamming(3, n, 2, bits, bits + 6, halve, h2);
                if (memcmp(h1, h2, (size_t)(3 * n) * sizeof *h1) != 0) {
                    return "hamming";
                }
                for (int64_t c = 0; c < n; c++) { /* against popcounts bit by bit */
                    for (int64_t r = 0; r < 3; r++) {
                        int32_t want = 0;
                        for (int b = 0; b < 128; b++) {
                            want += (int32_t)((bits[2 * r + b / 64] ^ bits[6 + 2 * c + b / 64]) >>
                                                  (b % 64) & 1u);
                        }
                        if (h1[c * 3 + r] != (halve ? want / 2 : want)) {
                            return "hamming (distances)";
                        }
                    }
                }
            }
        }
        for (int units = 0; units < 3; units++) {
            inputs(a, u1, n, (uint64_t)(19 * n + units));
            for (int64_t i = 0; i < n; i++) { /* valid values, and one bad one */
                float lo = units == EBM_UNITS_SPIN ? -1.0f : 0.0f;
                u1[i] = units == EBM_UNITS_GAUSSIAN ? (isfinite(a[i]) ? a[i] : 0.5f)
                                                    : (u1[i] < 0.5f ? lo : 1.0f);
            }
            for (int64_t bad = -1; bad < n; bad += n / 3 + 1) {
                float keep = bad >= 0 ? u1[bad] : 0.0f;
                if (bad >= 0) {
                    u1[bad] = units == EBM_UNITS_GAUSSIAN ? INFINITY : 0.5f;
                }
                if (k->values_ok(n, u1, units) != ref->values_ok(n, u1, units) ||
                    ref->values_ok(n, u1, units) != (bad < 0)) {
                    return "values_ok";
                }
                if (bad >= 0) {
                    u1[bad] = keep;
                }
            }
        }
        /* the parameter update: with the special inputs (NaN, inf) and
         * with finite ones only (from index 16) */
        for (int64_t from = 0; from <= 16 && from <= n; from += 16) {
            static double pd1[MAXN], pd2[MAXN];
            static float p3[MAXN], p4[MAXN];
            inputs(a, u1, n, (uint64_t)(13 * n));
            memcpy(u2, u1, sizeof u1);
            memcpy(p3, u1, sizeof u1);
            memcpy(p4, u1, sizeof u1);
            const int64_t m = n - from;
            if (k->update_suspect(m, 0.25f, a + from, u1) !=
                ref->update_suspect(m, 0.25f, a + from, u2)) {
                return "update_suspect";
            }
            k->update_apply(m, 0.25f, a + from, u1, pd1);
            ref->update_apply(m, 0.25f, a + from, u2, pd2);
            if (memcmp(u1, u2, (size_t)m * sizeof *u1) != 0 ||
                memcmp(pd1, pd2, (size_t)m * sizeof *pd1) != 0) {
                return "update_apply";
            }
            /* without the double copy: the same floats */
            k->update_apply(m, 0.25f, a + from, p3, NULL);
            ref->update_apply(m, 0.25f, a + from, p4, NULL);
            if (memcmp(p3, u1, (size_t)m * sizeof *u1) != 0 ||
                memcmp(p4, u1, (size_t)m * sizeof *u1) != 0) {
                return "update_apply (floats only)";
            }
        }
        inputs(u1, o1, n, (uint64_t)n);
        memcpy(u2, u1, sizeof u1);
        k->tanh(n, u1);
        ref->tanh(n, u2);
        if (memcmp(u1, u2, (size_t)n * sizeof *u1) != 0) {
            return "tanh";
        }
    }
    return NULL;
}

/* The uniforms of every build against rng.c's block function. */
static void check_uniform_reference(const ebm__kernels *k)
{
    const uint32_t key[2] = {0x9e3779b9u, 0x7f4a7c15u};
    const uint64_t seq = UINT64_C(0xfedcba9876543210);
    const uint64_t first = UINT64_C(0x2FFFFFFE0); /* crosses c0 = 2^32 - 1 */
    float out[4 * 80];
    k->uniform(key, seq, first, 80, out);
    for (int64_t b = 0; b < 80; b++) {
        uint64_t block = first + (uint64_t)b;
        uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)seq,
                           (uint32_t)(seq >> 32)};
        uint32_t w[4];
        ebm__philox4x32_10(ctr, key, w);
        for (int j = 0; j < 4; j++) {
            ck_assert_msg(out[4 * b + j] == ebm__u32_to_float(w[j]),
                          "%s: block %lld word %d differs from the reference", k->name,
                          (long long)b, j);
        }
    }
}

/* uniform_rows of a table against the row layout's definition: row r's
 * word j is word j % 4 of block (id << 32) + block + j / 4 (a 64-bit sum:
 * c0 carries into c1), for every row id, and nothing past `count` in a row
 * is written. 1 if it matches everywhere. */
typedef void (*uniform_rows_fn)(const uint32_t key[2], uint64_t seq, int64_t n,
                                const int64_t *rows, uint64_t block, int64_t count, float *out,
                                int64_t ldo);
static int uniform_rows_match(uniform_rows_fn f)
{
    const uint32_t key[2] = {0x01234567u, 0x89abcdefu};
    const uint64_t seq = UINT64_C(0x0123456789abcdef);
    static const int64_t ids[40] = {4,  0,  0xFFFFFFFF, 7,  7,  1,  99, 3,  2,  5,
                                    6,  8,  10,         11, 12, 13, 9,  20, 21, 0xFFFFFFFE,
                                    14, 15, 16,         17, 18, 19, 22, 23, 24, 25,
                                    26, 27, 28,         29, 30, 31, 32, 33, 34, 35};
    static const int64_t ns[] = {0, 1, 3, 5, 17, 40}, counts[] = {0, 1, 3, 4, 5, 16, 17, 63, 64};
    static const uint64_t blocks[] = {0, 3, UINT64_C(0xFFFFFFFE)};
    static float out[40 * 70];
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
                for (int listed = 0; listed < 2; listed++) {
                    const int64_t n = ns[i], count = counts[c], ldo = count + 3;
                    for (size_t k = 0; k < sizeof out / sizeof out[0]; k++) {
                        out[k] = -1.0f;
                    }
                    f(key, seq, n, listed ? ids : NULL, blocks[b], count, out, ldo);
                    for (int64_t r = 0; r < n; r++) {
                        const uint64_t id = listed ? (uint64_t)ids[r] : (uint64_t)r;
                        for (int64_t j = 0; j < ldo; j++) {
                            const float got = out[r * ldo + j];
                            if (j >= count) {
                                if (got != -1.0f) {
                                    return 0;
                                }
                                continue;
                            }
                            const uint64_t blk = (id << 32) + blocks[b] + (uint64_t)(j / 4);
                            uint32_t ctr[4] = {(uint32_t)blk, (uint32_t)(blk >> 32),
                                               (uint32_t)seq, (uint32_t)(seq >> 32)};
                            uint32_t w[4];
                            ebm__philox4x32_10(ctr, key, w);
                            if (got != ebm__u32_to_float(w[j % 4])) {
                                return 0;
                            }
                        }
                    }
                }
            }
        }
    }
    return 1;
}

/* Its broken twin: the rows' ids ignored (row r takes id r). */
static void uniform_rows_by_position(const uint32_t key[2], uint64_t seq, int64_t n,
                                     const int64_t *rows, uint64_t block, int64_t count,
                                     float *out, int64_t ldo)
{
    (void)rows;
    ebm__kernels_level(0)->uniform_rows(key, seq, n, NULL, block, count, out, ldo);
}

/* Broken twins of the generic table: one word u changed to 1 - u after 16
 * blocks (where the vector paths begin), and Bernoulli draws that take
 * u == p as a 1. */
static void uniform_one_word_off(const uint32_t key[2], uint64_t seq, uint64_t block,
                                 int64_t nblocks, float *out)
{
    ebm__kernels_level(0)->uniform(key, seq, block, nblocks, out);
    if (nblocks > 16) {
        out[4 * 16 + 1] = 1.0f - out[4 * 16 + 1];
    }
}

static void bernoulli_ties_up(int64_t rows, int64_t n, const float *a, int64_t lda, float scale,
                              float lo, const float *u, int64_t ldu, float *o, int64_t ldo)
{
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < n; j++) {
            o[r * ldo + j] = u[r * ldu + j] <= ebm__sigmoidf(scale * a[r * lda + j]) ? 1.0f : lo;
        }
    }
}

/* draw_ratio's linear term of one unit: z (a2 - a1) - (lin(a2) - lin(a1)),
 * lin(a) = max(a, 0) (binary) or |a| (spin), written as the two cases. */
static double linear_term(float z, float lo, float a1, float a2)
{
    const double k = lo < 0.0f ? 2.0 : 1.0;
    return z == 1.0f ? k * (fmin(a2, 0.0) - fmin(a1, 0.0)) : k * (fmax(a1, 0.0) - fmax(a2, 0.0));
}

/* draw_ratio's twin sums its terms in one running sum. */
static double draw_ratio_one_sum(int64_t n, float lo, const float *u, const float *p,
                                 const float *a1, const float *a2, float *z)
{
    double sum = 0.0;
    for (int64_t j = 0; j < n; j++) {
        z[j] = u[j] < p[j] ? 1.0f : lo;
        sum += linear_term(z[j], lo, a1[j], a2[j]);
    }
    return sum;
}

/* draw_ratio_pair's twin draws chain 2 from chain 1's probabilities. */
static void draw_ratio_pair_one_p(int64_t n, float lo, const float *u, const float *p1,
                                  const float *p2, const float *a1, const float *a2, float *z1,
                                  float *z2, double out[2])
{
    (void)p2;
    out[0] = draw_ratio_one_sum(n, lo, u, p1, a1, a2, z1);
    out[1] = draw_ratio_one_sum(n, lo, u, p1, a1, a2, z2);
}

/* sub_dot against the plain loop in double: the same g, a sum within
 * rounding (the lanes change the order of the additions). */
START_TEST(sub_dot_plain)
{
    float w[203], p[203], g1[203], g2[203];
    uint64_t seed = 11;
    for (int i = 0; i < 203; i++) {
        w[i] = (float)(2.0 * t_uniform(&seed) - 1.0);
        p[i] = (float)(2.0 * t_uniform(&seed) - 1.0);
        g1[i] = g2[i] = (float)t_uniform(&seed);
    }
    for (int n = 0; n <= 203; n += 29) {
        double want = 0.0, scale = 0.0;
        for (int i = 0; i < n; i++) {
            g2[i] -= p[i];
            want += (double)w[i] * (double)p[i];
            scale += fabs((double)w[i] * (double)p[i]);
        }
        double got = ebm__kern()->sub_dot(n, w, p, g1);
        ck_assert_msg(fabs(got - want) <= 1e-14 * scale, "n %d: %.17g vs %.17g", n, got, want);
        ck_assert(memcmp(g1, g2, sizeof g1) == 0);
    }
}
END_TEST

/* col_sums' twin sums each column in float, as a float gemv would. (The
 * order of the double sums hardly ever shows in the float result.) */
static void col_sums_in_float(int64_t rows, int64_t n, const float *x, int64_t ldx,
                              const double *c, float *g)
{
    for (int64_t j = 0; j < n; j++) {
        float acc = 0.0f;
        for (int64_t r = 0; r < rows; r++) {
            acc += (float)c[r] * x[r * ldx + j];
        }
        g[j] -= acc;
    }
}

/* col_sums gives the bits of its sums written as a plain loop, for every
 * count of rows modulo 4, at widths on both sides of its 256-column chunks
 * and at a stride wider than the row (a layer's columns of a state). */
static int col_sums_match(void (*col_sums)(int64_t, int64_t, const float *, int64_t,
                                           const double *, float *))
{
    enum { R = 37, N = 530, LD = 541 };
    static float x[R * LD], g1[N], g2[N];
    static double c[R];
    uint64_t seed = 13;
    for (int i = 0; i < R * LD; i++) {
        x[i] = (float)(2.0 * t_uniform(&seed) - 1.0);
    }
    for (int r = 0; r < R; r++) {
        c[r] = (r % 3 == 0 ? -1.0 : 1.0) / (double)(r + 3);
    }
    for (int64_t n = 0; n <= N; n += n < 40 ? 1 : 49) {
        for (int64_t rows = 0; rows <= R; rows += 9) {
            for (int64_t j = 0; j < N; j++) {
                g1[j] = g2[j] = (float)j;
            }
            col_sums(rows, n, x, LD, c, g1);
            for (int64_t j = 0; j < n; j++) {
                double acc = 0.0;
                int64_t r = 0;
                for (; r + 4 <= rows; r += 4) {
                    const float *xr = x + r * LD + j;
                    acc += (c[r] * (double)xr[0] + c[r + 1] * (double)xr[LD]) +
                           (c[r + 2] * (double)xr[2 * LD] + c[r + 3] * (double)xr[3 * LD]);
                }
                for (; r < rows; r++) {
                    acc += c[r] * (double)x[r * LD + j];
                }
                g2[j] -= (float)acc;
            }
            if (memcmp(g1, g2, sizeof g1) != 0) {
                return 0;
            }
        }
    }
    return 1;
}

START_TEST(col_sums_plain)
{
    ck_assert_msg(col_sums_match(ebm__kern()->col_sums), "col_sums differs from the plain loop");
    ck_assert_msg(!col_sums_match(col_sums_in_float), "the twin summing in float passed");
}
END_TEST

/* The GRBM visible terms as energy_grad.c's plain loops: unit by unit,
 * the rows in order, v / sigma^2 row by row. */
static void grbm_visible_plain(int64_t rows, int64_t n, const float *v, int64_t ldv,
                               const float *mu, const float *inv, const double *inv_d,
                               const double *c, float *vs, float *gmu, float *gs)
{
    for (int64_t i = 0; i < n; i++) {
        double gm = 0.0, gv = 0.0;
        for (int64_t r = 0; r < rows; r++) {
            double d = (double)v[r * ldv + i] - mu[i];
            gm -= c[r] * d * inv_d[i];
            gv -= c[r] * 0.5 * d * d * inv_d[i];
        }
        gmu[i] += (float)gm;
        gs[i] += (float)gv;
    }
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < n; i++) {
            vs[r * n + i] = v[r * ldv + i] * inv[i];
        }
    }
}

/* The twin ignores the stride of v (reads the rows packed, at n). */
static void grbm_visible_packed(int64_t rows, int64_t n, const float *v, int64_t ldv,
                                const float *mu, const float *inv, const double *inv_d,
                                const double *c, float *vs, float *gmu, float *gs)
{
    (void)ldv;
    grbm_visible_plain(rows, n, v, n, mu, inv, inv_d, c, vs, gmu, gs);
}

typedef void (*visible_fn)(int64_t, int64_t, const float *, int64_t, const float *, const float *,
                           const double *, const double *, float *, float *, float *);

/* f gives the plain loops' bits, for row counts 0 to 37 and widths on both
 * sides of its 256-column groups, at a stride wider than the row. */
static int visible_grad_matches(visible_fn f)
{
    enum { R = 37, N = 530, LD = 541 };
    static float v[R * LD], mu[N], inv[N], vs1[R * N], vs2[R * N], g1[2 * N], g2[2 * N];
    static double inv_d[N], c[R];
    uint64_t seed = 23;
    for (int i = 0; i < R * LD; i++) {
        v[i] = (float)(6.0 * t_uniform(&seed) - 3.0);
    }
    for (int i = 0; i < N; i++) {
        mu[i] = (float)(t_uniform(&seed) - 0.5);
        inv_d[i] = exp(-(double)(float)(2.0 * t_uniform(&seed) - 1.0));
        inv[i] = (float)inv_d[i];
    }
    for (int r = 0; r < R; r++) {
        c[r] = (r % 3 == 0 ? -1.0 : 1.0) / (double)(r + 3);
    }
    for (int64_t n = 0; n <= N; n += n < 40 ? 1 : 49) {
        for (int64_t rows = 0; rows <= R; rows += 9) {
            for (int64_t j = 0; j < 2 * N; j++) {
                g1[j] = g2[j] = (float)j;
            }
            memset(vs1, 0, sizeof vs1);
            memset(vs2, 0, sizeof vs2);
            f(rows, n, v, LD, mu, inv, inv_d, c, vs1, g1, g1 + N);
            grbm_visible_plain(rows, n, v, LD, mu, inv, inv_d, c, vs2, g2, g2 + N);
            if (memcmp(g1, g2, sizeof g1) != 0 || memcmp(vs1, vs2, sizeof vs1) != 0) {
                return 0;
            }
        }
    }
    return 1;
}

START_TEST(grbm_visible_grad_plain)
{
    ck_assert_msg(visible_grad_matches(ebm__kern()->grbm_visible_grad),
                  "grbm_visible_grad differs from the plain loops");
    ck_assert_msg(!visible_grad_matches(grbm_visible_packed), "the twin that ignores the stride passed");
}
END_TEST

/* scale_rows' twin scales by the coefficient one ulp up. */
static void scale_rows_ulp_up(int64_t rows, int64_t n, const float *c, const float *x, int64_t ldx,
                              float *out, int64_t ldo)
{
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < n; j++) {
            out[r * ldo + j] = nextafterf(c[r], INFINITY) * x[r * ldx + j];
        }
    }
}

typedef void (*scale_fn)(int64_t, int64_t, const float *, const float *, int64_t, float *,
                         int64_t);

/* f gives c[r] x[r ldx + j] as a float product, at strides, and writes
 * nothing else. */
static int scale_rows_match(scale_fn f)
{
    enum { R = 5, N = 70, LD = 73, LDO = 71 };
    static float x[R * LD], u[R * LD], o1[R * LDO], o2[R * LDO], c[R];
    uint64_t seed = 29;
    inputs(x, u, R * LD, seed); /* u: the uniforms inputs() also makes, unused */
    for (int r = 0; r < R; r++) {
        c[r] = (float)(t_uniform(&seed) - 0.5);
    }
    for (int64_t n = 0; n <= N; n += 7) {
        memset(o1, 0xA5, sizeof o1);
        memset(o2, 0xA5, sizeof o2);
        f(R, n, c, x, LD, o1, LDO);
        for (int64_t r = 0; r < R; r++) {
            for (int64_t j = 0; j < n; j++) {
                o2[r * LDO + j] = c[r] * x[r * LD + j];
            }
        }
        if (memcmp(o1, o2, sizeof o1) != 0) {
            return 0;
        }
    }
    return 1;
}

START_TEST(scale_rows_plain)
{
    ck_assert_msg(scale_rows_match(ebm__kern()->scale_rows), "scale_rows differs from the loop");
    ck_assert_msg(!scale_rows_match(scale_rows_ulp_up), "the twin one ulp off passed");
}
END_TEST

/* affine_row as a plain loop, and its twin that sums the terms in float
 * (each product rounded to float first). */
static int affine_row_plain(int64_t n, const double *move, const float *v, const float *c,
                            const float *z, float *out)
{
    int ok = 1;
    for (int64_t i = 0; i < n; i++) {
        out[i] = (float)(move[i] * (double)v[i] + move[n + i] * (double)c[i] +
                         move[2 * n + i] * (double)z[i]);
        ok &= isfinite(out[i]) != 0;
    }
    return ok;
}

static int affine_row_in_float(int64_t n, const double *move, const float *v, const float *c,
                               const float *z, float *out)
{
    int ok = 1;
    for (int64_t i = 0; i < n; i++) {
        out[i] = (float)(move[i] * (double)v[i]) + (float)(move[n + i] * (double)c[i]) +
                 (float)(move[2 * n + i] * (double)z[i]);
        ok &= isfinite(out[i]) != 0;
    }
    return ok;
}

typedef int (*affine_fn)(int64_t, const double *, const float *, const float *, const float *,
                         float *);

/* f gives the plain loop's row and verdict, out apart, over v and over z,
 * with rows that overflow (a coefficient of 1e300 on one unit) or start
 * non-finite. */
static int affine_row_matches(affine_fn f)
{
    enum { N = 300 };
    static double move[3 * N];
    static float v[N], c[N], z[N], o1[N], o2[N], v2[N], z2[N];
    uint64_t seed = 31;
    for (int64_t n = 0; n <= N; n += n < 20 ? 1 : 41) {
        for (int bad = 0; bad < 3; bad++) {
            for (int64_t i = 0; i < 3 * n; i++) {
                move[i] = 4.0 * t_uniform(&seed) - 2.0;
            }
            for (int64_t i = 0; i < n; i++) {
                v[i] = (float)(6.0 * t_uniform(&seed) - 3.0);
                c[i] = (float)(6.0 * t_uniform(&seed) - 3.0);
                z[i] = (float)(6.0 * t_uniform(&seed) - 3.0);
            }
            if (n > 0 && bad == 1) {
                move[n / 2] = 1e300;
            } else if (n > 0 && bad == 2) {
                c[n - 1] = NAN;
            }
            int r1 = f(n, move, v, c, z, o1), r2 = affine_row_plain(n, move, v, c, z, o2);
            if (r1 != r2 || memcmp(o1, o2, (size_t)n * sizeof *o1) != 0) {
                return 0;
            }
            memcpy(v2, v, sizeof v);
            memcpy(z2, z, sizeof z);
            r1 = f(n, move, v2, c, z, v2); /* in place, over v and over z */
            int r3 = f(n, move, v, c, z2, z2);
            if (r1 != r2 || r3 != r2 || memcmp(v2, o2, (size_t)n * sizeof *o1) != 0 ||
                memcmp(z2, o2, (size_t)n * sizeof *o1) != 0) {
                return 0;
            }
        }
    }
    return 1;
}

START_TEST(affine_row_plain_loop)
{
    ck_assert_msg(affine_row_matches(ebm__kern()->affine_row), "affine_row differs from the loop");
    ck_assert_msg(!affine_row_matches(affine_row_in_float), "the twin summing in float passed");
}
END_TEST

/* The coupled step's setup against libm in double: the probabilities are
 * ebm__sigmoidf's, the bounded part of the log-partition difference,
 * sum log(1 + e^{-k|a2|}) - log(1 + e^{-k|a1|}), within 10 2^-24 per unit
 * of the per-unit libm formula (sigmoid(k |a|) is max(p, 1 - p) of the
 * float probabilities, each within 4 ulp, and 1 - p adds a rounding: log of
 * each within 5 2^-24), plus 1e-13 of the sum of its terms' sizes for the
 * double sums, also over 1300 units (three log blocks). The twin forgets
 * spin's factor 2. */
static double lz_plain(int64_t n, int spin, const float *a1, const float *a2, double *scale)
{
    double sum = 0.0;
    *scale = 0.0;
    for (int64_t j = 0; j < n; j++) {
        double z[2];
        for (int c = 0; c < 2; c++) {
            double a = c ? a2[j] : a1[j];
            z[c] = log1p(exp(-(spin ? 2.0 : 1.0) * fabs(a)));
            *scale += fabs(z[c]);
        }
        sum += z[1] - z[0];
    }
    return sum;
}

static void coupling_twin(int64_t rows, int64_t n, int spin, const float *a1, const float *a2,
                          int64_t ld, float *p1, float *p2, double *lz)
{
    (void)spin;
    ebm__kern()->coupling_setup(rows, n, 0, a1, a2, ld, p1, p2, lz);
}

typedef void (*setup_fn)(int64_t, int64_t, int, const float *, const float *, int64_t, float *,
                         float *, double *);

static int setup_matches(setup_fn f)
{
    enum { N = 1300 };
    static float a1[N], a2[N], p1[N], p2[N];
    uint64_t seed = 99;
    for (int spin = 0; spin < 2; spin++) {
        for (int64_t n = 1; n <= N; n = n < 40 ? n + 1 : n * 3) {
            for (int64_t j = 0; j < n; j++) {
                a1[j] = (float)(40.0 * t_uniform(&seed) - 20.0);
                a2[j] = j % 7 == 0 ? a1[j] : (float)(4.0 * t_uniform(&seed) - 2.0);
            }
            double scale, want = lz_plain(n, spin, a1, a2, &scale);
            double got = 0.0;
            f(1, n, spin, a1, a2, n, p1, p2, &got);
            if (!(fabs(got - want) <= (double)n * 10.0 * 0x1p-24 + 1e-13 * scale)) {
                return 0;
            }
            for (int64_t j = 0; j < n; j++) {
                const float k = spin ? 2.0f : 1.0f;
                if (p1[j] != ebm__sigmoidf(k * a1[j]) || p2[j] != ebm__sigmoidf(k * a2[j])) {
                    return 0;
                }
            }
        }
    }
    return 1;
}

/* Rows at a stride (70: past a group of 64) give each row's single-row
 * result, added to lz. */
static int setup_rows_match(void)
{
    enum { ROWS = 70, N = 1300, LD = N + 5 };
    static float a1[ROWS * LD], a2[ROWS * LD], p1[ROWS * LD], p2[ROWS * LD], q1[N], q2[N];
    static const int64_t sizes[] = {1, 16, 100, 512, 513, 1300};
    uint64_t seed = 7;
    const ebm__kernels *k = ebm__kern();
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        const int64_t n = sizes[c];
        for (int64_t i = 0; i < ROWS * LD; i++) {
            a1[i] = (float)(40.0 * t_uniform(&seed) - 20.0);
            a2[i] = (float)(4.0 * t_uniform(&seed) - 2.0);
        }
        double lz[ROWS];
        for (int64_t r = 0; r < ROWS; r++) {
            lz[r] = (double)r;
        }
        k->coupling_setup(ROWS, n, (int)(c % 2), a1, a2, LD, p1, p2, lz);
        for (int64_t r = 0; r < ROWS; r++) {
            double one = 0.0;
            k->coupling_setup(1, n, (int)(c % 2), a1 + r * LD, a2 + r * LD, n, q1, q2, &one);
            if (lz[r] != (double)r + one || memcmp(q1, p1 + r * LD, (size_t)n * sizeof *q1) != 0 ||
                memcmp(q2, p2 + r * LD, (size_t)n * sizeof *q2) != 0) {
                return 0;
            }
        }
    }
    return 1;
}

/* draw_ratio against its definition written out: the draws, and the sum
 * in the order documented (unit j in sum j % 4); its twin (one running
 * sum) must differ somewhere. */
static int draw_ratio_matches(double (*f)(int64_t, float, const float *, const float *,
                                          const float *, const float *, float *))
{
    enum { N = 67 };
    float u[N], p[N], a1[N], a2[N], z[N];
    uint64_t seed = 41;
    int all = 1;
    for (int64_t n = 0; n <= N; n++) {
        for (int64_t j = 0; j < n; j++) {
            u[j] = (float)t_uniform(&seed);
            p[j] = (float)t_uniform(&seed);
            a1[j] = ldexpf((float)t_uniform(&seed) - 0.5f, (int)(j % 40) - 20);
            a2[j] = (float)(4.0 * t_uniform(&seed) - 2.0);
        }
        const float lo = n % 2 ? -1.0f : 0.0f;
        double sum[4] = {0.0, 0.0, 0.0, 0.0};
        for (int64_t j = 0; j < n; j++) {
            const float zj = u[j] < p[j] ? 1.0f : lo;
            sum[j % 4] += linear_term(zj, lo, a1[j], a2[j]);
        }
        const double want = (sum[0] + sum[1]) + (sum[2] + sum[3]);
        memcpy(z, u, sizeof z); /* in place, as the step's first draw */
        const double got = f(n, lo, z, p, a1, a2, z);
        all = all && memcmp(&got, &want, sizeof got) == 0;
        for (int64_t j = 0; j < n; j++) {
            all = all && z[j] == (u[j] < p[j] ? 1.0f : lo);
        }
    }
    return all;
}

/* draw_ratio_pair against two calls of draw_ratio (the plain path of a
 * CRN try), bit for bit, at rows of 0 to 67 units whose inputs span many
 * scales (so that the order of the sums shows) and both unit kinds; its
 * twin must differ somewhere. */
static int draw_ratio_pair_matches(void (*f)(int64_t, float, const float *, const float *,
                                             const float *, const float *, const float *,
                                             float *, float *, double *))
{
    enum { N = 67 };
    const ebm__kernels *k = ebm__kern();
    float u[N], p1[N], p2[N], a1[N], a2[N], z1[N], z2[N], w1[N], w2[N];
    uint64_t seed = 43;
    int all = 1;
    for (int64_t n = 0; n <= N; n++) {
        for (int64_t j = 0; j < n; j++) {
            u[j] = (float)t_uniform(&seed);
            p1[j] = (float)t_uniform(&seed);
            p2[j] = j % 5 == 0 ? p1[j] : (float)t_uniform(&seed);
            a1[j] = ldexpf((float)t_uniform(&seed) - 0.5f, (int)(j % 40) - 20);
            a2[j] = j % 7 == 0 ? -a1[j] : (float)(4.0 * t_uniform(&seed) - 2.0);
        }
        const float lo = n % 2 ? -1.0f : 0.0f;
        const double want[2] = {k->draw_ratio(n, lo, u, p1, a1, a2, w1),
                                k->draw_ratio(n, lo, u, p2, a1, a2, w2)};
        double got[2];
        f(n, lo, u, p1, p2, a1, a2, z1, z2, got);
        all = all && memcmp(got, want, sizeof got) == 0 &&
              memcmp(z1, w1, (size_t)n * sizeof *z1) == 0 &&
              memcmp(z2, w2, (size_t)n * sizeof *z2) == 0;
    }
    return all;
}

/* add_flips against its definition written out (flips in order, each
 * product exact); its twin adds the flips last to first. */
static void add_flips_reversed(int64_t n, int64_t count, const int32_t *flip, const float *v,
                               float step, const float *x, int64_t ldx, float *y)
{
    for (int64_t k = count - 1; k >= 0; k--) {
        const float d = v[flip[k]] > 0.0f ? step : -step;
        for (int64_t j = 0; j < n; j++) {
            y[j] += d * x[flip[k] * ldx + j];
        }
    }
}

static int add_flips_matches(void (*f)(int64_t, int64_t, const int32_t *, const float *, float,
                                       const float *, int64_t, float *))
{
    enum { N = 70, ROWS = 9 };
    float x[ROWS * N], v[ROWS], y[N], want[N];
    int32_t flip[12];
    uint64_t seed = 5;
    int all = 1;
    for (int64_t n = 1; n <= N; n += 3) {
        for (int64_t i = 0; i < ROWS * N; i++) {
            x[i] = ldexpf((float)t_uniform(&seed) - 0.5f, (int)(i % 30) - 15);
        }
        for (int64_t r = 0; r < ROWS; r++) {
            v[r] = t_uniform(&seed) < 0.5 ? -1.0f : 1.0f;
        }
        for (int k = 0; k < 12; k++) {
            flip[k] = (int32_t)(t_uniform(&seed) * ROWS);
        }
        for (int64_t j = 0; j < n; j++) {
            y[j] = want[j] = (float)t_uniform(&seed);
        }
        for (int k = 0; k < 12; k++) {
            const float d = v[flip[k]] > 0.0f ? 2.0f : -2.0f;
            for (int64_t j = 0; j < n; j++) {
                want[j] = want[j] + d * x[flip[k] * N + j];
            }
        }
        f(n, 12, flip, v, 2.0f, x, N, y);
        all = all && memcmp(y, want, (size_t)n * sizeof *y) == 0;
    }
    return all;
}

START_TEST(add_flips_plain)
{
    ck_assert_msg(add_flips_matches(ebm__kern()->add_flips), "add_flips differs");
    ck_assert_msg(!add_flips_matches(add_flips_reversed), "the twin in reverse order passed");
}
END_TEST

START_TEST(draw_ratio_plain)
{
    ck_assert_msg(draw_ratio_matches(ebm__kern()->draw_ratio), "draw_ratio differs");
    ck_assert_msg(!draw_ratio_matches(draw_ratio_one_sum), "the twin with one sum passed");
}
END_TEST

START_TEST(draw_ratio_pair_plain)
{
    ck_assert_msg(draw_ratio_pair_matches(ebm__kern()->draw_ratio_pair),
                  "draw_ratio_pair differs from two draw_ratio calls");
    ck_assert_msg(!draw_ratio_pair_matches(draw_ratio_pair_one_p),
                  "the twin that draws both chains from p1 passed");
}
END_TEST

/* lz[r] is finite iff row r's inputs are (the coupled step's check of its
 * inputs): one infinite or NaN input at each place of one row of three,
 * in either chain, binary and spin, short and long rows. */
static int setup_flags_nonfinite(const ebm__kernels *k)
{
    enum { N = 600 };
    static float a1[3 * N], a2[3 * N], p1[3 * N], p2[3 * N];
    static const float bad[] = {INFINITY, -INFINITY, NAN};
    static const int64_t sizes[] = {1, 16, 17, 600};
    uint64_t seed = 3;
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        const int64_t n = sizes[c];
        for (int spin = 0; spin < 2; spin++) {
            for (int64_t i = 0; i < 3 * n; i++) {
                a1[i] = (float)(40.0 * t_uniform(&seed) - 20.0);
                a2[i] = (float)(40.0 * t_uniform(&seed) - 20.0);
            }
            for (int64_t j = -1; j < n; j += n > 20 ? 37 : 1) {
                for (int b = 0; b < 6; b++) {
                    float *at = b % 2 ? a2 : a1, keep = 0.0f;
                    if (j >= 0) {
                        keep = at[n + j]; /* row 1 */
                        at[n + j] = bad[b / 2];
                    }
                    double lz[3] = {0.0, 0.0, 0.0};
                    k->coupling_setup(3, n, spin, a1, a2, n, p1, p2, lz);
                    if (!isfinite(lz[0]) || !isfinite(lz[2]) || isfinite(lz[1]) != (j < 0)) {
                        return 0;
                    }
                    if (j >= 0) {
                        at[n + j] = keep;
                    }
                }
            }
        }
    }
    return 1;
}

START_TEST(coupling_setup_plain)
{
    for (int level = 0; level <= 2; level++) {
        const ebm__kernels *k = ebm__kernels_level(level);
        ck_assert_msg(k == NULL || setup_flags_nonfinite(k),
                      "build %d: coupling_setup's lz does not flag non-finite inputs", level);
    }
    ck_assert_msg(setup_matches(ebm__kern()->coupling_setup), "coupling_setup differs");
    ck_assert_msg(!setup_matches(coupling_twin), "the twin without spin's factor passed");
    ck_assert_msg(setup_rows_match(), "coupling_setup over rows differs from row by row");
}
END_TEST

/* log_uniform on every uniform the generator makes (k 2^-24, k < 2^24)
 * against libm: within an ulp, -inf at 0. Its twin takes the log in float. */
static void log_uniform_float(int64_t n, const float *u, double *out)
{
    for (int64_t j = 0; j < n; j++) {
        out[j] = (double)logf(u[j]);
    }
}

static int log_uniform_matches(void (*f)(int64_t, const float *, double *))
{
    enum { CHUNK = 4096 };
    static float u[CHUNK];
    static double got[CHUNK];
    for (int64_t k0 = 0; k0 < (INT64_C(1) << 24); k0 += CHUNK) {
        for (int64_t i = 0; i < CHUNK; i++) {
            u[i] = (float)(k0 + i) * 0x1p-24f;
        }
        f(CHUNK, u, got);
        for (int64_t i = 0; i < CHUNK; i++) {
            const double want = log((double)u[i]);
            if (u[i] == 0.0f ? got[i] != -INFINITY
                             : !(fabs(got[i] - want) <= nextafter(fabs(want), INFINITY) - fabs(want))) {
                return 0;
            }
        }
    }
    return 1;
}

START_TEST(log_uniform_plain)
{
    ck_assert_msg(log_uniform_matches(ebm__kern()->log_uniform), "log_uniform differs from libm");
    ck_assert_msg(!log_uniform_matches(log_uniform_float), "the twin in float passed");
}
END_TEST

/* The argmin kernel against the plain loop it replaced (ties go up, NaN
 * goes down, clamped units stay), and its twin with ties going down. */
static int64_t argmin_plain(int64_t n, const float *a, float low, const uint8_t *clamp, float *x,
                            int32_t *flip, int ties_up)
{
    int64_t k = 0;
    for (int64_t j = 0; j < n; j++) {
        const float v = (ties_up ? a[j] >= 0.0f : a[j] > 0.0f) ? 1.0f : low;
        if (v != x[j] && (clamp == NULL || !clamp[j])) {
            x[j] = v;
            flip[k++] = (int32_t)j;
        }
    }
    return k;
}

static int argmin_matches(int64_t (*argmin)(int64_t, const float *, float, const uint8_t *, float *,
                                            int32_t *),
                          int ties_up)
{
    float a[MAXN], x1[MAXN], x2[MAXN], u[MAXN];
    int32_t f1[MAXN], f2[MAXN];
    uint8_t clamp[MAXN];
    for (int64_t n = 0; n < MAXN; n += 7) {
        for (int cl = 0; cl < 2; cl++) {
            inputs(a, u, n, (uint64_t)(n + 100 * cl));
            for (int64_t i = 0; i < n; i++) {
                /* sparse flips in places, dense in others */
                x1[i] = x2[i] = (u[i] < 0.5f) == (a[i] >= 0.0f || i % 5 != 0) ? 1.0f : 0.0f;
                clamp[i] = (uint8_t)(i % 4 == 1);
            }
            int64_t c1 = argmin(n, a, 0.0f, cl ? clamp : NULL, x1, f1);
            int64_t c2 = argmin_plain(n, a, 0.0f, cl ? clamp : NULL, x2, f2, ties_up);
            if (c1 != c2 || memcmp(x1, x2, (size_t)n * sizeof *x1) != 0 ||
                memcmp(f1, f2, (size_t)c1 * sizeof *f1) != 0) {
                return 0;
            }
        }
    }
    return 1;
}

START_TEST(argmin_plain_loop)
{
    for (int level = 0; level <= 2; level++) {
        const ebm__kernels *k = ebm__kernels_level(level);
        ck_assert_msg(k == NULL || argmin_matches(k->argmin, 1),
                      "%s: the argmin kernel differs from the plain loop", k ? k->name : "");
        ck_assert_msg(k == NULL || !argmin_matches(k->argmin, 0),
                      "%s: the twin with ties going down passed", k ? k->name : "");
    }
}
END_TEST

START_TEST(builds_agree)
{
    const ebm__kernels *generic = ebm__kernels_level(0);
    ck_assert_ptr_nonnull(generic);
    check_uniform_reference(generic);
    ck_assert_msg(!uniform_rows_match(uniform_rows_by_position),
                  "the twin uniform_rows that ignores the row ids passed");
    for (int level = 0; level <= 2; level++) {
        const ebm__kernels *k = ebm__kernels_level(level);
        ck_assert_msg(k == NULL || uniform_rows_match(k->uniform_rows),
                      "%s: uniform_rows differs from the row layout", k ? k->name : "");
    }
    int compared = 0;
    for (int level = 1; level <= 2; level++) {
        const ebm__kernels *k = ebm__kernels_level(level);
        if (k == NULL) {
            continue;
        }
        check_uniform_reference(k);
        const char *d = tables_differ(k, generic);
        ck_assert_msg(d == NULL, "build %s differs from generic in %s", k->name, d);
        compared++;
    }
    printf("simd: %d build(s) compared with generic; in use: %s\n", compared, ebm__kern()->name);
    ebm__kernels twin = *generic;
    twin.uniform = uniform_one_word_off;
    ck_assert_msg(tables_differ(&twin, generic) != NULL, "the twin uniform passed");
    twin = *generic;
    twin.bernoulli = bernoulli_ties_up;
    ck_assert_msg(tables_differ(&twin, generic) != NULL, "the twin Bernoulli passed");
    twin = *generic;
    twin.draw_ratio = draw_ratio_one_sum;
    ck_assert_msg(tables_differ(&twin, generic) != NULL, "the twin draw_ratio passed");
    twin = *generic;
    twin.draw_ratio_pair = draw_ratio_pair_one_p;
    ck_assert_msg(tables_differ(&twin, generic) != NULL, "the twin draw_ratio_pair passed");
    twin = *generic;
    twin.col_sums = col_sums_in_float;
    ck_assert_msg(tables_differ(&twin, generic) != NULL, "the twin col_sums passed");
    twin = *generic;
    twin.grbm_visible_grad = grbm_visible_packed;
    ck_assert_msg(tables_differ(&twin, generic) != NULL, "the twin grbm_visible_grad passed");
    twin = *generic;
    twin.affine_row = affine_row_in_float;
    ck_assert_msg(tables_differ(&twin, generic) != NULL, "the twin affine_row passed");
    twin = *generic;
    twin.scale_rows = scale_rows_ulp_up;
    ck_assert_msg(tables_differ(&twin, generic) != NULL, "the twin scale_rows passed");
}
END_TEST

/* ---- whole calls --------------------------------------------------------- */

enum { ROWS = 200 };

/* Draws of every layer, means, a Gibbs sweep, a UCD-LMI gradient and a
 * GRBM Gibbs-Langevin step, from seed, into out; returns the floats written. */
static int64_t run_calls(int units, float *out)
{
    static const int64_t sizes[3] = {70, 50, 40};
    ebm_model_t *m = t_model(3, sizes, units, units);
    ebm_rng_t *rng = NULL;
    ck_assert_int_eq(ebm_rng_create(&rng, 5, (uint64_t)units), EBM_OK);
    ck_assert_int_eq(ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 0.3), EBM_OK);
    const int64_t w = ebm_model_state_width(m), np = ebm_model_param_count(m);
    float *x = out, *mean = x + ROWS * w, *g = mean + ROWS * sizes[1];
    ck_assert_int_eq(ebm_model_random_state(m, rng, ROWS, x, w, NULL, 0), EBM_OK);
    for (int64_t l = 0; l < 3; l++) {
        ck_assert_int_eq(ebm_model_layer_sample(m, l, rng, ROWS, x, w), EBM_OK);
    }
    ck_assert_int_eq(ebm_model_layer_mean(m, 1, ROWS, x, w, mean, sizes[1]), EBM_OK);
    ebm_sampler_t *s = NULL;
    ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_GIBBS), EBM_OK);
    for (int t = 0; t < 3; t++) {
        ck_assert_int_eq(ebm_sampler_step(s, rng, ROWS, x, w), EBM_OK);
    }
    ebm_sampler_destroy(s);
    float *data = malloc((size_t)(ROWS * sizes[0]) * sizeof *data);
    for (int64_t r = 0; r < ROWS; r++) {
        memcpy(data + r * sizes[0], x + r * w, (size_t)sizes[0] * sizeof *data);
    }
    ebm_estimator_t *e = NULL;
    ck_assert_int_eq(ebm_estimator_create(&e, m, EBM_ESTIMATOR_UCD_LMI), EBM_OK);
    ck_assert_int_eq(ebm_estimator_set_int(e, EBM_ESTIMATOR_MAX_STEPS, 100), EBM_OK);
    ck_assert_int_eq(ebm_estimator_gradient(e, rng, ROWS, data, sizes[0], g), EBM_OK);
    ebm_estimator_destroy(e);
    free(data);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
    return ROWS * w + ROWS * sizes[1] + np;
}

static int64_t run_grbm(float *out)
{
    static const int64_t sizes[2] = {30, 60};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    t_random_params(m, 3, 0.2);
    ebm_rng_t *rng = NULL;
    ck_assert_int_eq(ebm_rng_create(&rng, 8, 1), EBM_OK);
    const int64_t w = ebm_model_state_width(m);
    ck_assert_int_eq(ebm_model_random_state(m, rng, ROWS, out, w, NULL, 0), EBM_OK);
    ebm_sampler_t *s = NULL;
    ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_GIBBS_LANGEVIN), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_ADJUST_AFTER, 0), EBM_OK);
    for (int t = 0; t < 4; t++) {
        ck_assert_int_eq(ebm_sampler_step(s, rng, ROWS, out, w), EBM_OK);
    }
    ebm_sampler_destroy(s);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
    return ROWS * w;
}

/* Run everything with build k, then restore the build in use. */
static int64_t run_with(const ebm__kernels *k, int what, float *out)
{
    const ebm__kernels *saved = ebm__kern();
    ebm__kernels_use(k);
    int64_t count = what == 2 ? run_grbm(out)
                              : run_calls(what ? EBM_UNITS_SPIN : EBM_UNITS_BINARY, out);
    ebm__kernels_use(saved);
    return count;
}

START_TEST(calls_agree)
{
    const size_t cap = 200000;
    float *ref = calloc(cap, sizeof *ref), *got = calloc(cap, sizeof *got);
    const ebm__kernels *generic = ebm__kernels_level(0);
    for (int level = 1; level <= 2; level++) {
        const ebm__kernels *k = ebm__kernels_level(level);
        if (k == NULL) {
            continue;
        }
        for (int what = 0; what < 3; what++) {
            int64_t n = run_with(generic, what, ref);
            ck_assert(n <= (int64_t)cap && run_with(k, what, got) == n);
            for (int64_t i = 0; i < n; i++) {
                ck_assert_msg(memcmp(&ref[i], &got[i], sizeof *ref) == 0,
                              "%s: %s call results differ from generic at float %lld (%g vs %g)",
                              k->name, what == 0 ? "binary" : what == 1 ? "spin" : "GRBM",
                              (long long)i, (double)ref[i], (double)got[i]);
            }
        }
    }
    /* The twin: generic with its uniforms one word off changes the results. */
    ebm__kernels twin = *generic;
    twin.uniform = uniform_one_word_off;
    int64_t n = run_with(generic, 0, ref);
    ck_assert(run_with(&twin, 0, got) == n);
    ck_assert_msg(memcmp(ref, got, (size_t)n * sizeof *ref) != 0, "the twin build passed");
    free(ref);
    free(got);
}
END_TEST

Suite *ebm_simd_suite(void)
{
    const t_test tests[] = {
        {"simd", exp_accurate, 0, 120, NULL, NULL},
        {"simd", sigmoid_tanh_accurate, 0, 120, NULL, NULL},
        {"simd", box_muller_accurate, 0, 120, NULL, NULL},
        {"simd", sub_dot_plain, 0, 120, NULL, NULL},
        {"simd", col_sums_plain, 0, 120, NULL, NULL},
        {"simd", grbm_visible_grad_plain, 0, 120, NULL, NULL},
        {"simd", scale_rows_plain, 0, 120, NULL, NULL},
        {"simd", affine_row_plain_loop, 0, 120, NULL, NULL},
        {"simd", argmin_plain_loop, 0, 120, NULL, NULL},
        {"simd", coupling_setup_plain, 0, 120, NULL, NULL},
        {"simd", draw_ratio_plain, 0, 120, NULL, NULL},
        {"simd", draw_ratio_pair_plain, 0, 120, NULL, NULL},
        {"simd", add_flips_plain, 0, 120, NULL, NULL},
        {"simd", log_uniform_plain, 0, 120, NULL, NULL},
        {"simd", builds_agree, 0, 120, NULL, NULL},
        {"simd", calls_agree, 0, 120, NULL, NULL},
        {"float log1p", log1p01_accurate, 0, 120, NULL, NULL},
    };
    return t_suite("simd", tests, sizeof tests / sizeof tests[0]);
}
