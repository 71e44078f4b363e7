/*
 * The random-number kernels of the kernel table (kernels.c): Philox
 * uniforms, whole blocks or a block per row, and Box-Muller normals, with
 * the Philox rounds in vector lanes where the instruction set has them.
 * Included by src/simd/kernels.c only, so that it is compiled once per
 * instruction set with the rest of the table; the words equal rng.c's
 * scalar block function's (tests/check_simd.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_SIMD_RANDOM_H
#define EBM_SIMD_RANDOM_H

#include "../numerics.h"
#include "../philox.h"
#include "../rng.h"

#include <stdint.h>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

/* A uniform in [0,1) from one word, as ebm__u32_to_float. */
#define U24 0x1.0p-24f

/* One block, scalar: block index (c0 low, c1 high) of sequence seq. */
static void block_scalar(uint64_t block, uint64_t seq, uint32_t k0, uint32_t k1, uint32_t out[4])
{
    ebm__philox_block((uint32_t)block, (uint32_t)(block >> 32), (uint32_t)seq,
                      (uint32_t)(seq >> 32), k0, k1, out);
}

/* Each instruction set names its vector of 32-bit lanes and the few
 * operations Philox needs; one body below uses them. */
#if defined(__AVX512F__)
/* Sixteen blocks at once (a group); groups whose c0 would wrap go scalar. */
#define LANES 16
#define VECTOR_PHILOX 1
typedef __m512i vec;
#define V_SET1(x) _mm512_set1_epi32((int)(x))
#define V_ADD(a, b) _mm512_add_epi32(a, b)
#define V_XOR(a, b) _mm512_xor_si512(a, b)
#define V_MULLO(a, b) _mm512_mullo_epi32(a, b)
#define V_LANE_INDEX _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define V_STOREU(p, v) _mm512_storeu_si512((void *)(p), v)
#define V_LOADU(p) _mm512_loadu_si512((const void *)(p))

static inline vec mulhi(vec c, vec m)
{
    vec even = _mm512_mul_epu32(c, m), odd = _mm512_mul_epu32(_mm512_srli_epi64(c, 32), m);
    return _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

/* Transpose four 16-word vectors into blocks 0..15 of four words, as
 * uniforms: per 128-bit lane L the unpacks give u_k = block 4L + k; then two
 * rounds of 128-bit shuffles put the blocks in order. */
static inline void store_words(const vec c[4], float *out)
{
    vec t0 = _mm512_unpacklo_epi32(c[0], c[1]), t1 = _mm512_unpackhi_epi32(c[0], c[1]);
    vec t2 = _mm512_unpacklo_epi32(c[2], c[3]), t3 = _mm512_unpackhi_epi32(c[2], c[3]);
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
#elif defined(__AVX2__)
/* Eight blocks at once. */
#define LANES 8
#define VECTOR_PHILOX 1
typedef __m256i vec;
#define V_SET1(x) _mm256_set1_epi32((int)(x))
#define V_ADD(a, b) _mm256_add_epi32(a, b)
#define V_XOR(a, b) _mm256_xor_si256(a, b)
#define V_MULLO(a, b) _mm256_mullo_epi32(a, b)
#define V_LANE_INDEX _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
#define V_STOREU(p, v) _mm256_storeu_si256((void *)(p), v)
#define V_LOADU(p) _mm256_loadu_si256((const void *)(p))

static inline vec mulhi(vec c, vec m)
{
    vec even = _mm256_mul_epu32(c, m), odd = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), m);
    return _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

/* As above; per 128-bit lane L the unpacks give u_k = block 4L + k. */
static inline void store_words(const vec c[4], float *out)
{
    vec t0 = _mm256_unpacklo_epi32(c[0], c[1]), t1 = _mm256_unpackhi_epi32(c[0], c[1]);
    vec t2 = _mm256_unpacklo_epi32(c[2], c[3]), t3 = _mm256_unpackhi_epi32(c[2], c[3]);
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
#else
/* No vector Philox: groups of eight blocks one at a time, so that the
 * Box-Muller loop over a group's lanes still vectorises. */
#define LANES 8
#endif

#ifdef VECTOR_PHILOX
/* The four words of the blocks with counters (c0, c1) lane by lane: the
 * rounds of block_scalar, a block per lane. */
static inline void blocks_at(vec c0, vec c1, uint64_t seq, uint32_t k0, uint32_t k1, vec c[4])
{
    const vec m0 = V_SET1(EBM__PHILOX_M0), m1 = V_SET1(EBM__PHILOX_M1);
    vec c2 = V_SET1((uint32_t)seq), c3 = V_SET1((uint32_t)(seq >> 32));
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += EBM__PHILOX_W0;
            k1 += EBM__PHILOX_W1;
        }
        vec hi0 = mulhi(c0, m0), lo0 = V_MULLO(c0, m0);
        vec hi1 = mulhi(c2, m1), lo1 = V_MULLO(c2, m1);
        c0 = V_XOR(V_XOR(hi1, c1), V_SET1(k0));
        c2 = V_XOR(V_XOR(hi0, c3), V_SET1(k1));
        c1 = lo1;
        c3 = lo0;
    }
    c[0] = c0;
    c[1] = c1;
    c[2] = c2;
    c[3] = c3;
}

/* The four words of blocks block .. block + LANES - 1 (c0 must not wrap). */
static void blocks_vector(uint64_t block, uint64_t seq, uint32_t k0, uint32_t k1, vec c[4])
{
    blocks_at(V_ADD(V_SET1((uint32_t)block), V_LANE_INDEX), V_SET1((uint32_t)(block >> 32)), seq,
              k0, k1, c);
}
#endif

/* The words of the LANES blocks from `first`: w[k][j] = word k of block first + j. */
static inline void group_words(uint64_t first, uint64_t seq, const uint32_t key[2],
                               uint32_t w[4][LANES])
{
#ifdef VECTOR_PHILOX
    vec c[4];
    blocks_vector(first, seq, key[0], key[1], c);
    for (int i = 0; i < 4; i++) {
        V_STOREU(w[i], c[i]);
    }
#else
    for (int j = 0; j < LANES; j++) {
        uint32_t b[4];
        block_scalar(first + (uint64_t)j, seq, key[0], key[1], b);
        for (int k = 0; k < 4; k++) {
            w[k][j] = b[k];
        }
    }
#endif
}

/* The uniforms of the LANES blocks from `first`, in block order. */
static inline void group_uniforms(uint64_t first, uint64_t seq, const uint32_t key[2], float *out)
{
#ifdef VECTOR_PHILOX
    vec c[4];
    blocks_vector(first, seq, key[0], key[1], c);
    store_words(c, out);
#else
    uint32_t w[4][LANES];
    group_words(first, seq, key, w);
    for (int j = 0; j < LANES; j++) {
        for (int k = 0; k < 4; k++) {
            out[4 * j + k] = ebm__u32_to_float(w[k][j]);
        }
    }
#endif
}

/* Whole groups of LANES blocks from block `first` on that the vector path
 * can take (c0 must not wrap inside a group): how many blocks. */
static int64_t vector_blocks(uint64_t first, int64_t nblocks)
{
    int64_t b = 0;
    for (; nblocks - b >= LANES; b += LANES) {
        if ((uint32_t)(first + (uint64_t)b) > UINT32_MAX - (LANES - 1)) {
            break;
        }
    }
    return b;
}

/* out[0 .. 4 nblocks) = the uniforms of blocks block, block + 1, ... of
 * sequence seq. */
static void uniform_blocks(const uint32_t key[2], uint64_t seq, uint64_t block, int64_t nblocks,
                           float *out)
{
    int64_t b = 0, nv = vector_blocks(block, nblocks);
    for (; b < nv; b += LANES) {
        group_uniforms(block + (uint64_t)b, seq, key, out + 4 * b);
    }
    for (; b < nblocks; b++) {
        uint32_t w[4];
        block_scalar(block + (uint64_t)b, seq, key[0], key[1], w);
        for (int k = 0; k < 4; k++) {
            out[4 * b + k] = ebm__u32_to_float(w[k]);
        }
    }
}

/* Short rows: row r's first `count` uniforms from block `block` on go to
 * out + r ldo. Its blocks are (row << 32) + block + b, as rng.c's row
 * layout names them; a vector takes the blocks of several rows at once
 * (LANES (row, block) pairs in turn), so that rows of a few blocks do not
 * leave most lanes empty. When a vector holds whole rows (nb divides LANES)
 * and c0 cannot carry, lane j is block j % nb of row j / nb of the group
 * (rows_whole); the other rows take the general loop. */
#ifdef VECTOR_PHILOX
static int64_t rows_whole(const uint32_t key[2], uint64_t seq, int64_t n, const int64_t *rows,
                          uint64_t block, int64_t count, float *out, int64_t ldo)
{
    const int64_t nb = (count + 3) / 4;
    if (nb == 0 || LANES % nb != 0 || block + (uint64_t)nb - 1 > UINT32_MAX) {
        return 0;
    }
    const int64_t per = LANES / nb;
    if (n < per) {
        return 0;
    }
    uint32_t lane_block[LANES];
    int64_t lane_row[LANES];
    for (int64_t j = 0, k = 0, q = 0; j < LANES; j++) { /* k = j % nb, q = j / nb */
        lane_block[j] = (uint32_t)(block + (uint64_t)k);
        lane_row[j] = q;
        if (++k == nb) {
            k = 0;
            q++;
        }
    }
    const vec c0 = V_LOADU(lane_block);
    int64_t r = 0;
    for (; n - r >= per; r += per) {
        uint32_t id[LANES];
        for (int j = 0; j < LANES; j++) {
            id[j] = ebm__row_id(rows, r + lane_row[j]);
        }
        vec c[4];
        float u[4 * LANES];
        blocks_at(c0, V_LOADU(id), seq, key[0], key[1], c);
        store_words(c, u);
        for (int64_t k = 0; k < per; k++) {
            for (int64_t i = 0; i < count; i++) {
                out[(r + k) * ldo + i] = u[4 * nb * k + i];
            }
        }
    }
    return r;
}
#endif

/* Up to this many blocks, one by one is faster than a vector of LANES (a
 * lone row's few words: a coupled step of one chain pair). */
enum { FEW_BLOCKS = 2 };

static void uniform_rows(const uint32_t key[2], uint64_t seq, int64_t n, const int64_t *rows,
                         uint64_t block, int64_t count, float *out, int64_t ldo)
{
    int64_t r = 0;
#ifdef VECTOR_PHILOX
    r = rows_whole(key, seq, n, rows, block, count, out, ldo);
#endif
    const int64_t nb = (count + 3) / 4, items = (n - r) * nb;
    int64_t b = 0;
    for (int64_t i = 0; i < items; i += LANES) {
        const int lanes = items - i < LANES ? (int)(items - i) : LANES;
        uint32_t c0[LANES] = {0}, c1[LANES] = {0};
        float *dst[LANES];
        int len[LANES];
        for (int j = 0; j < lanes; j++) {
            uint64_t blk = ((uint64_t)ebm__row_id(rows, r) << 32) + block + (uint64_t)b;
            c0[j] = (uint32_t)blk;
            c1[j] = (uint32_t)(blk >> 32);
            dst[j] = out + r * ldo + 4 * b;
            len[j] = count - 4 * b < 4 ? (int)(count - 4 * b) : 4;
            if (++b == nb) {
                b = 0;
                r++;
            }
        }
        float u[4 * LANES];
#ifdef VECTOR_PHILOX
        if (lanes > FEW_BLOCKS) {
            vec c[4];
            blocks_at(V_LOADU(c0), V_LOADU(c1), seq, key[0], key[1], c);
            store_words(c, u);
        } else
#endif
        {
            for (int j = 0; j < lanes; j++) {
                uint32_t w[4];
                block_scalar((uint64_t)c1[j] << 32 | c0[j], seq, key[0], key[1], w);
                for (int k = 0; k < 4; k++) {
                    u[4 * j + k] = ebm__u32_to_float(w[k]);
                }
            }
        }
        for (int j = 0; j < lanes; j++) {
            for (int k = 0; k < len[j]; k++) {
                dst[j][k] = u[4 * j + k];
            }
        }
    }
}

/* out[2j], out[2j + 1] = the Box-Muller pair of block block + j, j <
 * npairs: the words come a group at a time, the pairs in a loop over the
 * group's lanes (vectorised by the compiler). */
static void normal_blocks(const uint32_t key[2], uint64_t seq, uint64_t block, int64_t npairs,
                          float *out)
{
    int64_t b = 0, nv = vector_blocks(block, npairs);
    for (; b < nv; b += LANES) {
        uint32_t w[4][LANES];
        group_words(block + (uint64_t)b, seq, key, w);
        float z0[LANES], z1[LANES];
        for (int j = 0; j < LANES; j++) {
            ebm__box_muller(w[0][j], w[1][j], w[2][j], w[3][j], &z0[j], &z1[j]);
        }
        for (int j = 0; j < LANES; j++) {
            out[2 * (b + j)] = z0[j];
            out[2 * (b + j) + 1] = z1[j];
        }
    }
    for (; b < npairs; b++) {
        uint32_t w[4];
        block_scalar(block + (uint64_t)b, seq, key[0], key[1], w);
        ebm__box_muller(w[0], w[1], w[2], w[3], &out[2 * b], &out[2 * b + 1]);
    }
}

#endif
