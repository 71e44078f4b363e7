/*
 * The elementwise kernels of the library's hot loops: Philox uniforms,
 * sigmoid, tanh, Bernoulli draws and the GRBM gradient's fused pass. This file is compiled once per
 * instruction set (Makefile: build/simd_*.o), with EBM_KERNELS naming the
 * table it defines; src/simd.c picks the best table the CPU runs.
 *
 * Every build gives the same bits as the generic one (tests/check_simd.c):
 * the float functions are ebm_internal.h's branch-free ones, which use only
 * IEEE operations (no FMA contraction: -ffp-contract=off), and the Philox
 * paths below compute the same words as rng.c's scalar block function.
 *
 * SPDX-License-Identifier: MIT
 */
#include "ebm_internal.h"

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#ifndef EBM_KERNELS
#error "EBM_KERNELS must name the kernel table (see the Makefile)"
#endif

/* The Philox constants, as in rng.c. */
#define M0 0xD2511F53u
#define M1 0xCD9E8D57u
#define W0 0x9E3779B9u
#define W1 0xBB67AE85u

/* A uniform in [0,1) from one word, as ebm__u32_to_float. */
#define U24 0x1.0p-24f

/* One block, scalar: the same rounds as rng.c's philox_block. */
static void block_scalar(uint64_t block, uint64_t seq, uint32_t k0, uint32_t k1, float out[4])
{
    uint32_t c0 = (uint32_t)block, c1 = (uint32_t)(block >> 32);
    uint32_t c2 = (uint32_t)seq, c3 = (uint32_t)(seq >> 32);
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += W0;
            k1 += W1;
        }
        uint64_t p0 = (uint64_t)M0 * c0, p1 = (uint64_t)M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
    }
    out[0] = ebm__u32_to_float(c0);
    out[1] = ebm__u32_to_float(c1);
    out[2] = ebm__u32_to_float(c2);
    out[3] = ebm__u32_to_float(c3);
}

#if defined(__AVX512F__)
/* Sixteen blocks at once; lanes whose c0 would wrap are left to the caller. */
#define LANES 16
typedef __m512i vec;

static inline vec mulhi(vec c, vec m)
{
    vec even = _mm512_mul_epu32(c, m), odd = _mm512_mul_epu32(_mm512_srli_epi64(c, 32), m);
    return _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

static inline void store_words(vec w0, vec w1, vec w2, vec w3, float *out)
{
    /* Transpose four 16-word vectors into blocks 0..15 of four words:
     * per 128-bit lane L the unpacks give u_k = block 4L + k; then two
     * rounds of 128-bit shuffles put the blocks in order. */
    vec t0 = _mm512_unpacklo_epi32(w0, w1), t1 = _mm512_unpackhi_epi32(w0, w1);
    vec t2 = _mm512_unpacklo_epi32(w2, w3), t3 = _mm512_unpackhi_epi32(w2, w3);
    vec u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
    vec u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
    vec v0 = _mm512_shuffle_i32x4(u0, u1, 0x44), v1 = _mm512_shuffle_i32x4(u2, u3, 0x44);
    vec v2 = _mm512_shuffle_i32x4(u0, u1, 0xEE), v3 = _mm512_shuffle_i32x4(u2, u3, 0xEE);
    vec o[4] = {_mm512_shuffle_i32x4(v0, v1, 0x88), _mm512_shuffle_i32x4(v0, v1, 0xDD),
                _mm512_shuffle_i32x4(v2, v3, 0x88), _mm512_shuffle_i32x4(v2, v3, 0xDD)};
    const __m512 scale = _mm512_set1_ps(U24);
    for (int i = 0; i < 4; i++) {
        __m512 f = _mm512_cvtepi32_ps(_mm512_srli_epi32(o[i], 8));
        _mm512_storeu_ps(out + 16 * i, _mm512_mul_ps(f, scale));
    }
}

static void blocks_vector(uint64_t block, uint64_t seq, uint32_t k0, uint32_t k1, float *out)
{
    const vec m0 = _mm512_set1_epi32((int)M0), m1 = _mm512_set1_epi32((int)M1);
    vec c0 = _mm512_add_epi32(_mm512_set1_epi32((int)(uint32_t)block),
                              _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                14, 15));
    vec c1 = _mm512_set1_epi32((int)(uint32_t)(block >> 32));
    vec c2 = _mm512_set1_epi32((int)(uint32_t)seq), c3 = _mm512_set1_epi32((int)(seq >> 32));
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += W0;
            k1 += W1;
        }
        vec hi0 = mulhi(c0, m0), lo0 = _mm512_mullo_epi32(c0, m0);
        vec hi1 = mulhi(c2, m1), lo1 = _mm512_mullo_epi32(c2, m1);
        c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32((int)k0));
        c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32((int)k1));
        c1 = lo1;
        c3 = lo0;
    }
    store_words(c0, c1, c2, c3, out);
}
#elif defined(__AVX2__)
/* Eight blocks at once. */
#define LANES 8
typedef __m256i vec;

static inline vec mulhi(vec c, vec m)
{
    vec even = _mm256_mul_epu32(c, m), odd = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), m);
    return _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

static inline void store_words(vec w0, vec w1, vec w2, vec w3, float *out)
{
    /* Per 128-bit lane L the unpacks give u_k = block 4L + k. */
    vec t0 = _mm256_unpacklo_epi32(w0, w1), t1 = _mm256_unpackhi_epi32(w0, w1);
    vec t2 = _mm256_unpacklo_epi32(w2, w3), t3 = _mm256_unpackhi_epi32(w2, w3);
    vec u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    vec u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    vec o[4] = {_mm256_permute2x128_si256(u0, u1, 0x20), _mm256_permute2x128_si256(u2, u3, 0x20),
                _mm256_permute2x128_si256(u0, u1, 0x31), _mm256_permute2x128_si256(u2, u3, 0x31)};
    const __m256 scale = _mm256_set1_ps(U24);
    for (int i = 0; i < 4; i++) {
        __m256 f = _mm256_cvtepi32_ps(_mm256_srli_epi32(o[i], 8));
        _mm256_storeu_ps(out + 8 * i, _mm256_mul_ps(f, scale));
    }
}

static void blocks_vector(uint64_t block, uint64_t seq, uint32_t k0, uint32_t k1, float *out)
{
    const vec m0 = _mm256_set1_epi32((int)M0), m1 = _mm256_set1_epi32((int)M1);
    vec c0 = _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)block),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    vec c1 = _mm256_set1_epi32((int)(uint32_t)(block >> 32));
    vec c2 = _mm256_set1_epi32((int)(uint32_t)seq), c3 = _mm256_set1_epi32((int)(seq >> 32));
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += W0;
            k1 += W1;
        }
        vec hi0 = mulhi(c0, m0), lo0 = _mm256_mullo_epi32(c0, m0);
        vec hi1 = mulhi(c2, m1), lo1 = _mm256_mullo_epi32(c2, m1);
        c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32((int)k0));
        c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32((int)k1));
        c1 = lo1;
        c3 = lo0;
    }
    store_words(c0, c1, c2, c3, out);
}
#endif

/* out[0 .. 4 nblocks) = the uniforms of blocks block, block + 1, ... of
 * sequence seq. A group of lanes runs vectorised unless its c0 words would
 * wrap (then c1 differs between lanes: the scalar path). */
static void uniform_blocks(const uint32_t key[2], uint64_t seq, uint64_t block, int64_t nblocks,
                           float *out)
{
    int64_t b = 0;
#ifdef LANES
    for (; nblocks - b >= LANES; b += LANES) {
        uint64_t first = block + (uint64_t)b;
        if ((uint32_t)first > UINT32_MAX - (LANES - 1)) {
            break;
        }
        blocks_vector(first, seq, key[0], key[1], out + 4 * b);
    }
#endif
    for (; b < nblocks; b++) {
        block_scalar(block + (uint64_t)b, seq, key[0], key[1], out + 4 * b);
    }
}

static void sigmoid(int64_t n, float *a)
{
    for (int64_t j = 0; j < n; j++) {
        a[j] = ebm__sigmoidf(a[j]);
    }
}

static void tanh_(int64_t n, float *a)
{
    for (int64_t j = 0; j < n; j++) {
        a[j] = ebm__tanhf(a[j]);
    }
}

static void bernoulli(int64_t n, const float *restrict a, float scale, float lo,
                      float *restrict o)
{
    for (int64_t j = 0; j < n; j++) {
        o[j] = o[j] < ebm__sigmoidf(scale * a[j]) ? 1.0f : lo;
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

#define STR2(x) #x
#define STR(x) STR2(x)
const ebm__kernels EBM_KERNELS = {STR(EBM_KERNELS_LABEL), uniform_blocks, sigmoid, tanh_,
                                  bernoulli, sub_dot};
