/*
 * The elementwise kernels of the library's hot loops: Philox uniforms and
 * normals (random.h, included here), sigmoid, tanh, Bernoulli draws, the GRBM gradient's fused passes,
 * the weight gradients' scaled rows, the Gibbs-Langevin move of a row,
 * the bias gradients' column sums, the coupled Gibbs step's setup, the
 * local search's argmins and input updates, the global moves' Hamming
 * distances and bounded free energies' sums, and the parameter update. This
 * file is compiled once per instruction set (Makefile: build/simd_*.o),
 * with EBM_KERNELS naming the table it defines; src/simd.c picks the best
 * table the CPU runs.
 *
 * Every build gives the same bits as the generic one (tests/check_simd.c):
 * the float functions are numerics.h's branch-free ones, which use only
 * IEEE operations (no FMA contraction: -ffp-contract=off), and the Philox
 * paths below compute the same words as rng.c's scalar block function.
 *
 * SPDX-License-Identifier: MIT
 */
#include "../kernels.h"
#include "../philox.h"
#include "../numerics.h"
#include "../rng.h"

#include <float.h>
#include <string.h>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#ifndef EBM_KERNELS
#error "EBM_KERNELS must name the kernel table (see the Makefile)"
#endif

#include "random.h"

static void sigmoid(int64_t n, const float *in, float *out)
{
    for (int64_t j = 0; j < n; j++) {
        out[j] = ebm__sigmoidf(in[j]);
    }
}

static void tanh_(int64_t n, float *a)
{
    for (int64_t j = 0; j < n; j++) {
        a[j] = ebm__tanhf(a[j]);
    }
}

static void bernoulli_in_place(int64_t n, const float *restrict a, float scale, float lo,
                               float *restrict o)
{
    for (int64_t j = 0; j < n; j++) {
        o[j] = o[j] < ebm__sigmoidf(scale * a[j]) ? 1.0f : lo;
    }
}

static void bernoulli_apart(int64_t n, const float *restrict a, float scale, float lo,
                            const float *restrict u, float *restrict o)
{
    for (int64_t j = 0; j < n; j++) {
        o[j] = u[j] < ebm__sigmoidf(scale * a[j]) ? 1.0f : lo;
    }
}

static void bernoulli(int64_t rows, int64_t n, const float *a, int64_t lda, float scale, float lo,
                      const float *u, int64_t ldu, float *o, int64_t ldo)
{
    for (int64_t r = 0; r < rows; r++) {
        if (u == o) {
            bernoulli_in_place(n, a + r * lda, scale, lo, o + r * ldo);
        } else {
            bernoulli_apart(n, a + r * lda, scale, lo, u + r * ldu, o + r * ldo);
        }
    }
}

static double sub_dot(int64_t n, const float *restrict w, const float *restrict p,
                      float *restrict g)
{
    const int64_t n8 = n - n % 8;
    double lane[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (int64_t j = 0; j < n8; j += 8) {
        for (int k = 0; k < 8; k++) {
            g[j + k] -= p[j + k];
            lane[k] += (double)w[j + k] * (double)p[j + k];
        }
    }
    double sum = 0.0;
    for (int k = 0; k < 8; k++) {
        sum += lane[k];
    }
    for (int64_t j = n8; j < n; j++) {
        g[j] -= p[j];
        sum += (double)w[j] * (double)p[j];
    }
    return sum;
}

/* g[j] -= sum_r c[r] x[r ldx + j], with t_r = c[r] x[r ldx + j] summed in
 * double: each group of four rows as (t0 + t1) + (t2 + t3) added to the
 * column's sum in order, then the last rows % 4 terms one at a time. A
 * group at a time over 256 columns (their sums in L1). */
static void col_sums(int64_t rows, int64_t n, const float *restrict x, int64_t ldx,
                     const double *restrict c, float *restrict g)
{
    enum { C = 256 };
    double acc[C];
    for (int64_t j0 = 0; j0 < n; j0 += C) {
        const int64_t len = n - j0 < C ? n - j0 : C;
        for (int64_t k = 0; k < len; k++) {
            acc[k] = 0.0;
        }
        int64_t r = 0;
        for (; r + 4 <= rows; r += 4) {
            const float *restrict x0 = x + r * ldx + j0, *restrict x1 = x0 + ldx;
            const float *restrict x2 = x1 + ldx, *restrict x3 = x2 + ldx;
            const double c0 = c[r], c1 = c[r + 1], c2 = c[r + 2], c3 = c[r + 3];
            for (int64_t k = 0; k < len; k++) {
                acc[k] += (c0 * (double)x0[k] + c1 * (double)x1[k]) +
                          (c2 * (double)x2[k] + c3 * (double)x3[k]);
            }
        }
        for (; r < rows; r++) {
            const float *restrict xr = x + r * ldx + j0;
            for (int64_t k = 0; k < len; k++) {
                acc[k] += c[r] * (double)xr[k];
            }
        }
        for (int64_t k = 0; k < len; k++) {
            g[j0 + k] -= (float)acc[k];
        }
    }
}

/* The GRBM visible terms a group of 256 columns at a time (their double
 * sums in L1), the rows in order within each group. */
static void grbm_visible_grad(int64_t rows, int64_t n, const float *restrict v, int64_t ldv,
                              const float *restrict mu, const float *restrict inv,
                              const double *restrict inv_d, const double *restrict c,
                              float *restrict vs, float *restrict gmu, float *restrict gs)
{
    enum { C = 256 };
    double am[C], as[C];
    for (int64_t j0 = 0; j0 < n; j0 += C) {
        const int64_t len = n - j0 < C ? n - j0 : C;
        for (int64_t k = 0; k < len; k++) {
            am[k] = 0.0;
            as[k] = 0.0;
        }
        for (int64_t r = 0; r < rows; r++) {
            const float *restrict vr = v + r * ldv + j0;
            float *restrict vsr = vs + r * n + j0;
            const double cr = c[r], hr = cr * 0.5;
            for (int64_t k = 0; k < len; k++) {
                const double d = (double)vr[k] - (double)mu[j0 + k];
                am[k] -= cr * d * inv_d[j0 + k];
                as[k] -= hr * d * d * inv_d[j0 + k];
                vsr[k] = vr[k] * inv[j0 + k];
            }
        }
        for (int64_t k = 0; k < len; k++) {
            gmu[j0 + k] += (float)am[k];
            gs[j0 + k] += (float)as[k];
        }
    }
}

static void scale_rows(int64_t rows, int64_t n, const float *restrict c, const float *restrict x,
                       int64_t ldx, float *restrict out, int64_t ldo)
{
    for (int64_t r = 0; r < rows; r++) {
        const float cr = c[r];
        const float *restrict xr = x + r * ldx;
        float *restrict o = out + r * ldo;
        for (int64_t j = 0; j < n; j++) {
            o[j] = cr * xr[j];
        }
    }
}

static int affine_row(int64_t n, const double *restrict move, const float *v,
                      const float *restrict c, const float *z, float *out)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const float o = (float)(move[i] * (double)v[i] + move[n + i] * (double)c[i] +
                                move[2 * n + i] * (double)z[i]);
        out[i] = o;
        bad |= !(fabsf(o) <= FLT_MAX);
    }
    return !bad;
}

static int64_t argmin(int64_t n, const float *restrict a, float low, const uint8_t *restrict clamp,
                      float *restrict x, int32_t *restrict flip)
{
    int64_t k = 0, j = 0;
#if defined(__AVX2__)
    /* One pass: eight units at a time, the flipped ones' indices appended
     * from the bits of a mask (flips are few after the first sweeps). The
     * comparisons are C's: a >= 0 false for NaN, v != x true for NaN. */
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    const __m256 lo = _mm256_set1_ps(low);
    for (; j + 8 <= n; j += 8) {
        const __m256 up = _mm256_cmp_ps(_mm256_loadu_ps(a + j), zero, _CMP_GE_OQ);
        const __m256 v = _mm256_blendv_ps(lo, one, up);
        const __m256 old = _mm256_loadu_ps(x + j);
        __m256 f = _mm256_cmp_ps(v, old, _CMP_NEQ_UQ);
        if (clamp == NULL) {
            _mm256_storeu_ps(x + j, v);
        } else {
            const __m128i c8 = _mm_loadl_epi64((const __m128i *)(const void *)(clamp + j));
            const __m256i c = _mm256_cvtepu8_epi32(c8);
            const __m256i free_ = _mm256_cmpeq_epi32(c, _mm256_setzero_si256());
            f = _mm256_and_ps(f, _mm256_castsi256_ps(free_));
            _mm256_storeu_ps(x + j, _mm256_blendv_ps(old, v, f));
        }
        unsigned bits = (unsigned)_mm256_movemask_ps(f);
        while (bits != 0) {
            flip[k++] = (int32_t)(j + __builtin_ctz(bits));
            bits &= bits - 1;
        }
    }
    for (; j < n; j++) {
        const float v = a[j] >= 0.0f ? 1.0f : low;
        const int f = v != x[j] && (clamp == NULL || clamp[j] == 0);
        if (clamp == NULL || f) {
            x[j] = v;
        }
        if (f) {
            flip[k++] = (int32_t)j;
        }
    }
#else
    /* Pass 1 (vectorised): the new units and a flag per unit in flip. */
    if (clamp == NULL) {
        for (j = 0; j < n; j++) {
            const float v = a[j] >= 0.0f ? 1.0f : low;
            const int32_t f = v != x[j];
            x[j] = v;
            flip[j] = f;
        }
    } else {
        for (j = 0; j < n; j++) {
            const float v = a[j] >= 0.0f ? 1.0f : low;
            const int32_t f = (v != x[j]) & (clamp[j] == 0);
            x[j] = f ? v : x[j];
            flip[j] = f;
        }
    }
    /* Pass 2: compact the flagged indices to the front, skipping blocks of
     * eight without a flag (flips are few after the first sweeps). k <= j:
     * each flag is read before its slot can be written. */
    for (j = 0; j + 8 <= n; j += 8) {
        if ((flip[j] | flip[j + 1] | flip[j + 2] | flip[j + 3] | flip[j + 4] | flip[j + 5] |
             flip[j + 6] | flip[j + 7]) == 0) {
            continue;
        }
        for (int64_t t = j; t < j + 8; t++) {
            const int32_t f = flip[t];
            flip[k] = (int32_t)t;
            k += f;
        }
    }
    for (; j < n; j++) {
        const int32_t f = flip[j];
        flip[k] = (int32_t)j;
        k += f;
    }
#endif
    return k;
}

/* One block of at most 512 units of a row: p1, p2, the product of the
 * factors sigmoid(k |a1|) / sigmoid(k |a2|) (returned), and 0 (a1 - a2)
 * added to flag[j % 8]: exact zeros for finite inputs, NaN for an
 * infinite or NaN one (the log of the product would hide it). */
static double setup_block(int64_t len, int spin, const float *restrict a1,
                          const float *restrict a2, float *restrict p1, float *restrict p2,
                          double flag[8])
{
    const float scale = spin ? 2.0f : 1.0f;
    /* Elementwise first (the vectorised loop), then the lanes. The factor
     * takes sigmoid(k |a|) = max(p, 1 - p) from the probabilities the
     * draws use. */
    double f[512], z[512];
    for (int64_t j = 0; j < len; j++) {
        const float q1 = ebm__sigmoidf(scale * a1[j]);
        const float q2 = ebm__sigmoidf(scale * a2[j]);
        p1[j] = q1;
        p2[j] = q2;
        const float m1 = q1 > 1.0f - q1 ? q1 : 1.0f - q1;
        const float m2 = q2 > 1.0f - q2 ? q2 : 1.0f - q2;
        f[j] = (double)m1 / (double)m2;
        z[j] = 0.0 * ((double)a1[j] - (double)a2[j]);
    }
    double prod[8] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
    int64_t j = 0;
    for (; j + 8 <= len; j += 8) { /* lane j % 8, in order: a vector op */
        for (int l = 0; l < 8; l++) {
            prod[l] *= f[j + l];
            flag[l] += z[j + l];
        }
    }
    for (; j < len; j++) {
        prod[j % 8] *= f[j];
        flag[j % 8] += z[j];
    }
    double p = 1.0; /* at most 512 factors in [1/2, 2]: no overflow */
    for (int l = 0; l < 8; l++) {
        p *= prod[l];
    }
    return p;
}

/* Rows of one block each (n <= 512, the usual case) take their logs
 * together, 64 rows at a time (a vectorised loop); longer rows one per
 * block. */
static void coupling_setup(int64_t rows, int64_t n, int spin, const float *restrict a1,
                           const float *restrict a2, int64_t ld, float *restrict p1,
                           float *restrict p2, double *restrict lz)
{
    for (int64_t r0 = 0; r0 < rows; r0 += 64) {
        const int64_t g = rows - r0 < 64 ? rows - r0 : 64;
        double logs[64], flag[64][8];
        for (int64_t i = 0; i < g; i++) {
            const int64_t o = (r0 + i) * ld;
            for (int l = 0; l < 8; l++) {
                flag[i][l] = 0.0;
            }
            if (n <= 512) {
                logs[i] = setup_block(n, spin, a1 + o, a2 + o, p1 + o, p2 + o, flag[i]);
                continue;
            }
            logs[i] = 0.0;
            for (int64_t c0 = 0; c0 < n; c0 += 512) {
                const int64_t len = n - c0 < 512 ? n - c0 : 512;
                logs[i] += ebm__log_pos(setup_block(len, spin, a1 + o + c0, a2 + o + c0,
                                                    p1 + o + c0, p2 + o + c0, flag[i]));
            }
        }
        if (n <= 512) {
            for (int64_t i = 0; i < g; i++) {
                logs[i] = ebm__log_pos(logs[i]);
            }
        }
        for (int64_t i = 0; i < g; i++) {
            double sum = logs[i];
            for (int l = 0; l < 8; l++) {
                sum += flag[i][l];
            }
            lz[r0 + i] += sum;
        }
    }
}

/* Unit j's linear term, k (min(a2, 0) - min(a1, 0)) for the upper value
 * and k (max(a1, 0) - max(a2, 0)) for the lower: one rounding, so a term
 * is 0 exactly where both inputs make the drawn value certain, however
 * large they are. */
static inline double linear_pick(int up, double k, double x1, double x2)
{
    return up ? k * ((x2 < 0.0 ? x2 : 0.0) - (x1 < 0.0 ? x1 : 0.0))
              : k * ((x1 > 0.0 ? x1 : 0.0) - (x2 > 0.0 ? x2 : 0.0));
}

#if defined(__GNUC__)
/* Four units in the lanes of GCC's vector types: the compiler does not
 * vectorise draw_ratio's selects by itself (draw_ratio_pair's two became
 * branches on random draws, which mispredict), so the kernels below pick
 * with bit masks; each lane does the operations of linear_pick. */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4l __attribute__((vector_size(32)));

/* Four units' terms of linear_pick added to the sums t, for the draws up
 * (u < p: all-ones lanes) and the terms t_up, t_lo of linear_terms4 (by
 * pointer: 32-byte vectors have no by-value ABI in the baseline build). */
static inline void add_pick4(v4d *t, v4i up, const v4l *t_up, const v4l *t_lo)
{
    const v4l m = __builtin_convertvector(up, v4l);
    *t += (v4d)((*t_up & m) | (*t_lo & ~m));
}

/* Four units' terms for the upper and the lower value. */
static inline void linear_terms4(const float *a1, const float *a2, double k, v4l *t_up,
                                 v4l *t_lo)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0}, kv = {k, k, k, k};
    v4f b1, b2;
    memcpy(&b1, a1, sizeof b1);
    memcpy(&b2, a2, sizeof b2);
    const v4d x1 = __builtin_convertvector(b1, v4d), x2 = __builtin_convertvector(b2, v4d);
    const v4d min1 = (v4d)((v4l)x1 & (x1 < zero)), min2 = (v4d)((v4l)x2 & (x2 < zero));
    const v4d max1 = (v4d)((v4l)x1 & (x1 > zero)), max2 = (v4d)((v4l)x2 & (x2 > zero));
    *t_up = (v4l)(kv * (min2 - min1));
    *t_lo = (v4l)(kv * (max1 - max2));
}

/* Four draws z = up ? 1 : lo into z. */
static inline void store_draws4(v4i up, float lo, float *z)
{
    const v4f one = {1.0f, 1.0f, 1.0f, 1.0f}, low = {lo, lo, lo, lo};
    const v4f w = (v4f)(((v4i)one & up) | ((v4i)low & ~up));
    memcpy(z, &w, sizeof w);
}
#endif

/* Four units at a time, unit j in sum j % 4. u may be z: a chunk's
 * uniforms are read before its draws are written. */
static double draw_ratio(int64_t n, float lo, const float *u, const float *restrict p,
                         const float *restrict a1, const float *restrict a2, float *z)
{
    const double k = lo < 0.0f ? 2.0 : 1.0;
    double sum[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t j = 0;
#if defined(__GNUC__)
    v4d t = {0.0, 0.0, 0.0, 0.0};
    for (; j + 4 <= n; j += 4) {
        v4f uu, q;
        memcpy(&uu, u + j, sizeof uu);
        memcpy(&q, p + j, sizeof q);
        v4l t_up, t_lo;
        linear_terms4(a1 + j, a2 + j, k, &t_up, &t_lo);
        const v4i up = uu < q;
        store_draws4(up, lo, z + j);
        add_pick4(&t, up, &t_up, &t_lo);
    }
    for (int i = 0; i < 4; i++) {
        sum[i] = t[i];
    }
#endif
    for (; j + 4 <= n; j += 4) {
        float uk[4];
        for (int i = 0; i < 4; i++) {
            uk[i] = u[j + i];
        }
        for (int i = 0; i < 4; i++) {
            const int up = uk[i] < p[j + i];
            z[j + i] = up ? 1.0f : lo;
            sum[i] += linear_pick(up, k, a1[j + i], a2[j + i]);
        }
    }
    for (int i = 0; j < n; j++, i++) {
        const int up = u[j] < p[j];
        z[j] = up ? 1.0f : lo;
        sum[i] += linear_pick(up, k, a1[j], a2[j]);
    }
    return (sum[0] + sum[1]) + (sum[2] + sum[3]);
}

/* draw_ratio for two chains' draws from the same uniforms: unit j's two
 * candidate terms are formed once and each chain's sum takes the one its
 * draw picks, so out[0] and out[1] are the bits of draw_ratio(n, lo, u, p1,
 * a1, a2, z1) and draw_ratio(n, lo, u, p2, a1, a2, z2). */
static void draw_ratio_pair(int64_t n, float lo, const float *restrict u,
                            const float *restrict p1, const float *restrict p2,
                            const float *restrict a1, const float *restrict a2,
                            float *restrict z1, float *restrict z2, double out[2])
{
    const double k = lo < 0.0f ? 2.0 : 1.0;
    double s1[4] = {0.0, 0.0, 0.0, 0.0}, s2[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t j = 0;
#if defined(__GNUC__)
    v4d t1 = {0.0, 0.0, 0.0, 0.0}, t2 = t1;
    for (; j + 4 <= n; j += 4) {
        v4f uu, q1, q2;
        memcpy(&uu, u + j, sizeof uu);
        memcpy(&q1, p1 + j, sizeof q1);
        memcpy(&q2, p2 + j, sizeof q2);
        v4l t_up, t_lo;
        linear_terms4(a1 + j, a2 + j, k, &t_up, &t_lo);
        const v4i up1 = uu < q1, up2 = uu < q2;
        store_draws4(up1, lo, z1 + j);
        store_draws4(up2, lo, z2 + j);
        add_pick4(&t1, up1, &t_up, &t_lo);
        add_pick4(&t2, up2, &t_up, &t_lo);
    }
    for (int i = 0; i < 4; i++) {
        s1[i] = t1[i];
        s2[i] = t2[i];
    }
#endif
    for (; j + 4 <= n; j += 4) {
        for (int i = 0; i < 4; i++) {
            const int up1 = u[j + i] < p1[j + i], up2 = u[j + i] < p2[j + i];
            z1[j + i] = up1 ? 1.0f : lo;
            z2[j + i] = up2 ? 1.0f : lo;
            s1[i] += linear_pick(up1, k, a1[j + i], a2[j + i]);
            s2[i] += linear_pick(up2, k, a1[j + i], a2[j + i]);
        }
    }
    for (int i = 0; j < n; j++, i++) {
        const int up1 = u[j] < p1[j], up2 = u[j] < p2[j];
        z1[j] = up1 ? 1.0f : lo;
        z2[j] = up2 ? 1.0f : lo;
        s1[i] += linear_pick(up1, k, a1[j], a2[j]);
        s2[i] += linear_pick(up2, k, a1[j], a2[j]);
    }
    out[0] = (s1[0] + s1[1]) + (s1[2] + s1[3]);
    out[1] = (s2[0] + s2[1]) + (s2[2] + s2[3]);
}

static void log_uniform(int64_t n, const float *restrict u, double *restrict out)
{
    for (int64_t j = 0; j < n; j++) {
        const double x = u[j] > 0.0f ? (double)u[j] : 1.0; /* positive ones are >= 2^-24 */
        const double l = ebm__log_pos(x);
        out[j] = u[j] > 0.0f ? l : -INFINITY;
    }
}

/* Eight terms of lz_sum from a[0..8): log(1 + e) in float (vectorised
 * 8 wide), e into e8, lin(a) + log(1 + e) added in double. */
static inline void lz_block(int64_t n, const double *restrict a, int spin, double *restrict lane,
                            double *restrict lane_e, double *restrict lane_abs)
{
    float e8[8], l8[8];
    for (int k = 0; k < 8; k++) {
        const float t = (float)fabs(k < n ? a[k] : 0.0);
        e8[k] = ebm__expf(spin ? -2.0f * t : -t);
        l8[k] = ebm__log1pf01(e8[k]);
    }
    for (int k = 0; k < n; k++) {
        const double v = (spin ? fabs(a[k]) : fmax(a[k], 0.0)) + (double)l8[k];
        lane[k] += v;
        lane_e[k] += (double)e8[k];
        lane_abs[k] += fabs(v);
    }
}

static double lz_sum(int64_t n, const double *restrict a, int spin, double sums[2])
{
    double lane[8] = {0.0}, lane_e[8] = {0.0}, lane_abs[8] = {0.0};
    for (int64_t j = 0; j < n; j += 8) {
        lz_block(n - j < 8 ? n - j : 8, a + j, spin, lane, lane_e, lane_abs);
    }
    double sum = 0.0, sum_e = 0.0, sum_abs = 0.0;
    for (int k = 0; k < 8; k++) {
        sum += lane[k];
        sum_e += lane_e[k];
        sum_abs += lane_abs[k];
    }
    sums[0] = sum_e;
    sums[1] = sum_abs;
    return sum;
}

static void hamming(int64_t rows, int64_t n, int64_t words, const uint64_t *restrict a,
                    const uint64_t *restrict b, int halve, int32_t *restrict d)
{
    for (int64_t c = 0; c < n; c++) {
        const uint64_t *bc = b + c * words;
        for (int64_t r = 0; r < rows; r++) {
            const uint64_t *ar = a + r * words;
            int32_t k = 0;
            for (int64_t j = 0; j < words; j++) {
                k += __builtin_popcountll(ar[j] ^ bc[j]);
            }
            d[c * rows + r] = halve ? k / 2 : k;
        }
    }
}

/* Four flips per pass over y: each element takes their terms one after
 * the other (the same roundings as four passes), loaded and stored once. */
static void add_flips(int64_t n, int64_t count, const int32_t *restrict flip,
                      const float *restrict v, float step, const float *restrict x, int64_t ldx,
                      float *restrict y)
{
    int64_t k = 0;
    for (; k + 4 <= count; k += 4) {
        float d[4];
        const float *xk[4];
        for (int i = 0; i < 4; i++) {
            d[i] = v[flip[k + i]] > 0.0f ? step : -step;
            xk[i] = x + flip[k + i] * ldx;
        }
        for (int64_t j = 0; j < n; j++) {
            float t = y[j];
            t += d[0] * xk[0][j];
            t += d[1] * xk[1][j];
            t += d[2] * xk[2][j];
            t += d[3] * xk[3][j];
            y[j] = t;
        }
    }
    for (; k < count; k++) {
        const float d = v[flip[k]] > 0.0f ? step : -step;
        const float *xk = x + flip[k] * ldx;
        for (int64_t j = 0; j < n; j++) {
            y[j] += d * xk[j];
        }
    }
}

static int update_suspect(int64_t n, float alpha, const float *restrict g,
                          const float *restrict p)
{
    int suspect = 0; /* NaN fails both comparisons */
    for (int64_t i = 0; i < n; i++) {
        const float v = p[i] + alpha * g[i];
        suspect |= !(fabsf(g[i]) <= FLT_MAX) | !(fabsf(v) <= FLT_MAX);
    }
    return suspect;
}

static int values_ok(int64_t n, const float *restrict x, int units)
{
    int bad = 0;
    if (units == EBM_UNITS_BINARY) {
        for (int64_t j = 0; j < n; j++) {
            bad |= (x[j] != 0.0f) & (x[j] != 1.0f);
        }
    } else if (units == EBM_UNITS_SPIN) {
        for (int64_t j = 0; j < n; j++) {
            bad |= (x[j] != -1.0f) & (x[j] != 1.0f);
        }
    } else {
        for (int64_t j = 0; j < n; j++) {
            bad |= !(fabsf(x[j]) <= FLT_MAX);
        }
    }
    return !bad;
}

static void update_apply(int64_t n, float alpha, const float *restrict g, float *restrict p,
                         double *restrict pd)
{
    if (pd == NULL) {
        for (int64_t i = 0; i < n; i++) {
            p[i] += alpha * g[i];
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        p[i] += alpha * g[i];
        pd[i] = p[i];
    }
}

#define STR2(x) #x
#define STR(x) STR2(x)
const ebm__kernels EBM_KERNELS = {.name = STR(EBM_KERNELS_LABEL),
                                  .uniform = uniform_blocks,
                                  .uniform_rows = uniform_rows,
                                  .normal = normal_blocks,
                                  .sigmoid = sigmoid,
                                  .tanh = tanh_,
                                  .bernoulli = bernoulli,
                                  .sub_dot = sub_dot,
                                  .col_sums = col_sums,
                                  .grbm_visible_grad = grbm_visible_grad,
                                  .scale_rows = scale_rows,
                                  .affine_row = affine_row,
                                  .argmin = argmin,
                                  .coupling_setup = coupling_setup,
                                  .log_uniform = log_uniform,
                                  .draw_ratio = draw_ratio,
                                  .draw_ratio_pair = draw_ratio_pair,
                                  .add_flips = add_flips,
                                  .lz_sum = lz_sum,
                                  .hamming = hamming,
                                  .values_ok = values_ok,
                                  .update_suspect = update_suspect,
                                  .update_apply = update_apply};
