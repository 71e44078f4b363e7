/*
 * The table of vectorised elementwise kernels (simd.c picks a build of
 * simd/kernels.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_KERNELS_H
#define EBM_KERNELS_H

#include <stdint.h>

/* One build of the elementwise kernels. Every build gives the same bits. */
typedef struct ebm__kernels {
    const char *name; /* "generic", "avx2", "avx512" */
    /* out[0 .. 4 nblocks) = uniforms in [0,1) from Philox blocks block,
     * block + 1, ... of sequence seq (c0 = low word of the block, c1 = high). */
    void (*uniform)(const uint32_t key[2], uint64_t seq, uint64_t block, int64_t nblocks,
                    float *out);
    /* Short rows: out[r ldo + j] for j < count = uniform j of the row
     * ebm__row_id(rows, r) from block `block` of that row on, for r < n
     * (the words ebm__stream_uniform gives from word 4 block). */
    void (*uniform_rows)(const uint32_t key[2], uint64_t seq, int64_t n, const int64_t *rows,
                         uint64_t block, int64_t count, float *out, int64_t ldo);
    /* out[2j], out[2j + 1] = ebm__box_muller of the words of block block + j
     * of sequence seq, for j < npairs. */
    void (*normal)(const uint32_t key[2], uint64_t seq, uint64_t block, int64_t npairs,
                   float *out);
    /* out[j] = ebm__sigmoidf(in[j]); in == out is allowed. */
    void (*sigmoid)(int64_t n, const float *in, float *out);
    void (*tanh)(int64_t n, float *a);    /* in place, ebm__tanhf */
    /* o[r ldo + j] = u[r ldu + j] < sigmoid(scale a[r lda + j]) ? 1 : lo for
     * r < rows, j < n; u may be o (then ldu = ldo). */
    void (*bernoulli)(int64_t rows, int64_t n, const float *a, int64_t lda, float scale,
                      float lo, const float *u, int64_t ldu, float *o, int64_t ldo);
    /* g[j] -= p[j] and return sum_j w[j] p[j], summed in double: lane
     * j % 8 in order, then the lanes 0..7 and the tail in order. */
    double (*sub_dot)(int64_t n, const float *w, const float *p, float *g);
    /* g[j] -= sum_r c[r] x[r ldx + j] for j < n, r < rows, with t_r =
     * c[r] x[r ldx + j] summed in double: each group of four rows as (t0 +
     * t1) + (t2 + t3), added to the column's sum in order, then the last
     * rows % 4 terms one at a time. The bias gradients are these column
     * sums, not a BLAS gemv: a threaded BLAS splits a gemv over its
     * threads from a few thousand entries on, and would wake them for
     * microseconds of work. */
    void (*col_sums)(int64_t rows, int64_t n, const float *x, int64_t ldx, const double *c,
                     float *g);
    /* The kept Gaussian visible units' terms of a GRBM gradient (Liao eqs.
     * 15-16) over `rows` rows v (stride ldv) of n units with coefficients
     * c: with d = v_ri - mu_i in double, gmu[i] += (float)gm_i and gs[i] +=
     * (float)gs_i, where gm_i -= (c_r d) inv_d[i] and gs_i -= (((c_r 0.5) d)
     * d) inv_d[i] from 0 over the rows in order; and vs[r n + i] = v_ri
     * inv[i] in float (v / sigma^2 for W_1's gradient). */
    void (*grbm_visible_grad)(int64_t rows, int64_t n, const float *v, int64_t ldv,
                              const float *mu, const float *inv, const double *inv_d,
                              const double *c, float *vs, float *gmu, float *gs);
    /* One row of a Gibbs-Langevin move of n units: out[i] = (float)(move[i]
     * v[i] + move[n + i] c[i] + move[2 n + i] z[i]), the products and sums
     * in double in that order (out may be v or z); returns 1 if every out[i]
     * is finite, else 0. */
    int (*affine_row)(int64_t n, const double *move, const float *v, const float *c,
                      const float *z, float *out);
    /* out[r ldo + j] = c[r] x[r ldx + j] in float for r < rows, j < n (the
     * rows of a weight gradient's GEMM scaled by their coefficients). */
    void (*scale_rows)(int64_t rows, int64_t n, const float *c, const float *x, int64_t ldx,
                       float *out, int64_t ldo);
    /* Argmin of binary or spin units from their inputs a (ties go up:
     * a >= 0 gives 1, else low), except where clamp (NULL: none) is set;
     * x is updated and flip[0..count) gets the units that changed, in
     * order. Returns count. */
    int64_t (*argmin)(int64_t n, const float *a, float low, const uint8_t *clamp, float *x,
                      int32_t *flip);
    /* The coupled Gibbs step's setup for n units of one layer (binary: k =
     * 1, spin: k = 2) of `rows` rows (stride ld) at the inputs a1, a2 of
     * the two chains: p1 = sigmoid(k a1), p2 = sigmoid(k a2) (as the draws
     * use them), and lz[r] += sum over row r's units of log(sigmoid(k|a1|)
     * / sigmoid(k|a2|)), with sigmoid(k|a|) = max(p, 1 - p) of the float
     * probabilities (so the log ratios are as exact as the probabilities
     * the draws use, about 1e-7 per unit): the part of LZ(a2) - LZ(a1),
     * LZ(a) = lin(a) - log sigmoid(k|a|) the log partition sum of a unit
     * (lin = max(a, 0) binary, |a| spin), that is bounded by log 2 per
     * unit; draw_ratio adds the linear parts unit by unit. Per block of 512
     * units, unit j's factor (in [1/2, 2]) goes to lane j % 8, the lanes'
     * product to one log; the row's sum is its blocks' logs in order.
     * lz[r] stays finite if and only if row r's inputs are all finite: the
     * step's check of its inputs. */
    void (*coupling_setup)(int64_t rows, int64_t n, int spin, const float *a1, const float *a2,
                           int64_t ld, float *p1, float *p2, double *lz);
    /* out[j] = log u[j] in double for uniforms u[j] in [0, 1) (ebm__log_pos,
     * within an ulp of libm's), -inf for 0: the coupled step's
     * acceptance thresholds. */
    void (*log_uniform)(int64_t n, const float *u, double *out);
    /* A coupled step's draw of one row of a discrete layer and its share
     * of the log ratio log p2(z) - log p1(z) but for -lz: z[j] = u[j] <
     * p[j] ? 1 : lo (u may be z; lo = -1 means spin, k = 2, else k = 1),
     * and return the sum over j of z[j] (a2[j] - a1[j]) - (lin(a2[j]) -
     * lin(a1[j])), computed per unit as k (min(a2, 0) - min(a1, 0)) where
     * z = 1 and k (max(a1, 0) - max(a2, 0)) where z = lo, in double: no
     * term is a difference of two large numbers, so inputs of any size
     * lose nothing to cancellation. Unit j in sum j % 4, in order, then
     * (s0 + s1) + (s2 + s3). */
    double (*draw_ratio)(int64_t n, float lo, const float *u, const float *p, const float *a1,
                         const float *a2, float *z);
    /* draw_ratio of two chains at once from the same uniforms u (a
     * residual try under CRN): out[0] and out[1] have the bits of
     * draw_ratio(n, lo, u, p1, a1, a2, z1) and draw_ratio(n, lo, u, p2,
     * a1, a2, z2); u, z1 and z2 do not overlap. */
    void (*draw_ratio_pair)(int64_t n, float lo, const float *u, const float *p1,
                            const float *p2, const float *a1, const float *a2, float *z1,
                            float *z2, double out[2]);
    /* The local search's update of a row's input y[0..n) from its flips:
     * for k < count in order, y += d_k x[flip[k] ldx .. + n), d_k = step
     * where the unit's new value v[flip[k]] > 0, else -step (new - old;
     * +-1 or +-2: the product is exact, so each sum is rounded once, as by
     * an FMA). */
    void (*add_flips)(int64_t n, int64_t count, const int32_t *flip, const float *v, float step,
                      const float *x, int64_t ldx, float *y);
    /* An approximation of sum_j LZ(a[j]), j < n, for binary (spin = 0: LZ(a)
     * = softplus(a)) or spin units (LZ(a) = log(2 cosh a)): each term as
     * lin(a) + log(1 + e), e = ebm__expf(-k |a|) in float (k = 1, or 2 for
     * spins; lin = max(a, 0), or |a|), the log by ebm__log1pf01; the sum
     * in eight lanes. Also stores sum_j e_j in sums[0] and sum_j |term_j| in
     * sums[1], from which energy.c bounds the distance to the exact sum. */
    double (*lz_sum)(int64_t n, const double *a, int spin, double sums[2]);
    /* The Hamming distances of `rows` rows of bits a (words 64-bit words
     * each) to n rows of bits b: d[c rows + r] = the popcount of a_r XOR
     * b_c, halved if halve (Potts sites), for c < n, r < rows. */
    void (*hamming)(int64_t rows, int64_t n, int64_t words, const uint64_t *a, const uint64_t *b,
                    int halve, int32_t *d);
    /* Nonzero if some g[i] or p[i] + alpha g[i] is not finite (the scan of
     * ebm_model_axpy_params before it changes anything). */
    int (*update_suspect)(int64_t n, float alpha, const float *g, const float *p);
    /* 1 if every x[j] is a value of `units` (EBM_UNITS_*): 0 or 1, -1 or
     * +1, finite; else 0 (the callers then find and name the first bad one). */
    int (*values_ok)(int64_t n, const float *x, int units);
    /* p[i] += alpha g[i], pd[i] = p[i] (pd NULL: p only). */
    void (*update_apply)(int64_t n, float alpha, const float *g, float *p, double *pd);
} ebm__kernels;

/* The kernels in use: the best build this CPU runs, or the one named by the
 * environment variable EBM_SIMD (generic, avx2, avx512) if it runs here. */
const ebm__kernels *ebm__kern(void);
/* Build `level` (0 generic, 1 AVX2, 2 AVX-512), or NULL if it is not compiled
 * in or this CPU lacks it (tests compare the builds). */
const ebm__kernels *ebm__kernels_level(int level);
/* Use k from now on (tests only: not safe while other threads draw). */
void ebm__kernels_use(const ebm__kernels *k);

#endif /* EBM_KERNELS_H */
