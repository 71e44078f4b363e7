/*
 * Internal declarations shared by the files of src/. Nothing here is
 * exported: internal non-static symbols are named ebm__name and hidden by
 * -fvisibility=hidden and the version script.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_INTERNAL_H
#define EBM_INTERNAL_H

#include "ebm.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define EBM__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define EBM__PRINTF(a, b)
#endif

/* ---- errors (error.c) ------------------------------------------------- */

#define EBM__MSG_SIZE 512

/* A message being built by a call; the public entry point decides where it
 * goes (the model's slot, a handle's slot, a caller buffer). */
typedef struct ebm__msg {
    char text[EBM__MSG_SIZE];
} ebm__msg;

/* Format the message into msg (if not NULL) and return code. */
int ebm__fail(ebm__msg *msg, int code, const char *fmt, ...) EBM__PRINTF(3, 4);
/* EBM_EVALUE: in `what`, a layer input or a result overflowed float (the
 * parameters are too large); the call changed nothing. */
int ebm__fail_overflow(ebm__msg *msg, const char *what);
/* Copy text into a caller buffer (NULL or size 0: nothing). */
void ebm__copy_text(char *buf, size_t size, const char *text);

/* ---- checked sizes ---------------------------------------------------- */

/* Largest value passed to BLAS as an int. */
#define EBM__BLAS_MAX 2147483647LL

/* a * b into *out unless it overflows int64 or is negative. Returns 0 on success. */
int ebm__mul_overflow(int64_t a, int64_t b, int64_t *out);

/* ---- random numbers (rng.c) ------------------------------------------- */

/* Philox4x32-10: out = philox(ctr, key). */
void ebm__philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
uint64_t ebm__splitmix64(uint64_t *state);

struct ebm_rng {
    uint64_t key;       /* Philox key: low word key[0], high word key[1] */
    uint64_t seq;       /* sequence number: counter words 2 and 3 */
    uint64_t pos;       /* next 32-bit word of sequence seq used by the fills */
    int has_spare;      /* a spare normal from the last Box-Muller pair */
    double spare;
    char errmsg[EBM__MSG_SIZE];
};

/*
 * A batched call takes one sequence number and draws row r's numbers from
 * counters (block, r, seq): they depend on neither n nor other rows. The
 * counter words are ctr = {block, row, seq low, seq high}.
 */
typedef struct ebm__stream {
    uint32_t key[2];
    uint64_t seq;
} ebm__stream;

/* The child generator number `index` of parent, as ebm_rng_derive makes it,
 * into caller storage (no allocation). */
void ebm__rng_child(const ebm_rng_t *parent, uint64_t index, ebm_rng_t *child);
/* Take a fresh sequence number from r for one batched call. */
ebm__stream ebm__rng_take_stream(ebm_rng_t *r);
/* A generator's position, saved at the start of a call that moves it and
 * put back if the call fails (a failed call changes nothing). */
typedef struct ebm__rng_mark {
    uint64_t seq, pos;
    int has_spare;
    double spare;
} ebm__rng_mark;
ebm__rng_mark ebm__rng_save(const ebm_rng_t *r);
void ebm__rng_restore(ebm_rng_t *r, const ebm__rng_mark *mark);
/* Take count fresh streams from rng, as count calls of the above would (a
 * fixed number per call, whatever the data, so that row r's draws never
 * depend on other rows). */
void ebm__take_streams(ebm_rng_t *rng, int count, ebm__stream *out);
/* out[0..count) = uniforms in [0,1) of row `row`, starting at 32-bit word
 * `word` of that row's part of the stream. */
void ebm__stream_uniform(const ebm__stream *s, uint32_t row, uint64_t word, int64_t count,
                         float *out);
/* The same for n rows: out + r ldo gets ebm__stream_uniform(s,
 * ebm__row_id(rows, r), word, count). Rows of at most EBM__SHORT_ROW words
 * share vector work; longer ones are filled one by one. */
#define EBM__SHORT_ROW 64
void ebm__stream_uniform_rows(const ebm__stream *s, int64_t n, const int64_t *rows,
                              uint64_t word, int64_t count, float *out, int64_t ldo);
/* out[0..count) = standard normals of row `row`, made in Box-Muller pairs:
 * pair j uses words word + 4j .. word + 4j + 3 (two 53-bit uniforms) and
 * gives normals 2j (cosine) and 2j + 1 (sine); an odd count drops the last
 * sine. */
void ebm__stream_normal(const ebm__stream *s, uint32_t row, uint64_t word, int64_t count,
                        float *out);
/* A uniform in [0,1) from one 32-bit word. */
static inline float ebm__u32_to_float(uint32_t w) { return (float)(w >> 8) * 0x1.0p-24f; }

/* ---- numerics --------------------------------------------------------- */

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

/* ---- vectorised kernels (simd.c, simd/kernels.c) ------------------------ */

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
     * rows % 4 terms one at a time. The bias gradients: not a BLAS gemv,
     * which a threaded BLAS splits over its threads from about 9000
     * entries on, waking them for microseconds of work (item 21 of
     * docs/performance.md). */
    void (*col_sums)(int64_t rows, int64_t n, const float *x, int64_t ldx, const double *c,
                     float *g);
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
    /* The local search's update of a row's input y[0..n) from its flips:
     * for k < count in order, y += d_k x[flip[k] ldx .. + n), d_k = step
     * where the unit's new value v[flip[k]] > 0, else -step (new - old;
     * +-1 or +-2: the product is exact, so each sum is rounded once, as by
     * an FMA). */
    void (*add_flips)(int64_t n, int64_t count, const int32_t *flip, const float *v, float step,
                      const float *x, int64_t ldx, float *y);
    /* Nonzero if some g[i] or p[i] + alpha g[i] is not finite (the scan of
     * ebm_model_axpy_params before it changes anything). */
    int (*update_suspect)(int64_t n, float alpha, const float *g, const float *p);
    /* 1 if every x[j] is a value of `units` (EBM_UNITS_*): 0 or 1, -1 or
     * +1, finite; else 0 (the callers then find and name the first bad one). */
    int (*values_ok)(int64_t n, const float *x, int units);
    /* p[i] += alpha g[i], pd[i] = p[i]. */
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

/* ---- threads ------------------------------------------------------------ */

/* for (int64_t r = 0; r < n; r++) { body }: a loop over independent rows,
 * on OpenMP threads when the library is built with OpenMP and the loop has
 * at least EBM__PARALLEL_MIN units of work. Below that the plain loop runs:
 * not even a team of one is formed (`omp parallel if (0)` still costs
 * libgomp a team's allocation per loop, which made BAS, with its many
 * loops over few rows, 1.5x slower). Each row's draws come from its own
 * stream row, so the results do not depend on the number of threads. */
#define EBM__PARALLEL_MIN 32768
#if defined(_OPENMP)
#define EBM__PRAGMA(x) _Pragma(#x)
#define EBM__FOR_ROWS(r, n, work, ...)                                  \
    do {                                                                \
        if ((work) >= EBM__PARALLEL_MIN) {                              \
            EBM__PRAGMA(omp parallel for schedule(static))              \
            for (int64_t r = 0; r < (n); r++) {                         \
                __VA_ARGS__                                             \
            }                                                           \
        } else {                                                        \
            for (int64_t r = 0; r < (n); r++) {                         \
                __VA_ARGS__                                             \
            }                                                           \
        }                                                               \
    } while (0)
#else
#define EBM__FOR_ROWS(r, n, work, ...)          \
    do {                                        \
        for (int64_t r = 0; r < (n); r++) {     \
            __VA_ARGS__                         \
        }                                       \
    } while (0)
#endif
/* The threads a parallel loop may use, and this thread's number in it. */
int ebm__max_threads(void);
int ebm__thread_num(void);

/* ---- model (model.c) -------------------------------------------------- */

/* Log-variances are kept in [-EBM__LOGVAR_MAX, EBM__LOGVAR_MAX] so that
 * 1/sigma^2 and sigma^2 stay finite in float. */
#define EBM__LOGVAR_MAX 30.0

struct ebm_model {
    int64_t n_layers;
    int64_t size[EBM_MAX_LAYERS];
    int64_t offset[EBM_MAX_LAYERS]; /* first column of layer l in a state row */
    int units[EBM_MAX_LAYERS];
    int64_t width;
    int64_t max_size; /* largest layer */
    int64_t n_params;
    int64_t w_off[EBM_MAX_LAYERS]; /* W_l at params + w_off[l], l >= 1 */
    int64_t b_off[EBM_MAX_LAYERS];
    int64_t logvar_off; /* -1 unless layer 0 is Gaussian */
    float *params;
    /* Derived from params by ebm__model_refresh after every change: */
    double *params_d;   /* double copy: energies are computed in double */
    /* Gaussian visible units only (NULL otherwise): */
    float *inv_var;     /* 1/sigma^2 [n_0] */
    double *inv_var_d;
    float *w1_scaled;   /* diag(1/sigma^2) W_1: couples v/sigma^2 to layer 1 */
    double *w1_scaled_d;
    pthread_mutex_t lock; /* guards errmsg: const calls may fail concurrently */
    char errmsg[EBM__MSG_SIZE];
};

/* Validate a shape and allocate a zeroed model (create and load share it). */
int ebm__model_new(ebm_model_t **out, ebm__msg *msg, int64_t n_layers, const int64_t *sizes,
                   int visible_units, int hidden_units);
/* Every value finite, every log-variance within +-EBM__LOGVAR_MAX; the
 * message names the block and index ("W_2[3,4] is nan"). */
int ebm__check_params(const ebm_model_t *m, ebm__msg *msg, const char *name, const float *p);
/* Store a message in the model's slot (thread-safe; m may be const). Returns code. */
int ebm__model_set_error(const ebm_model_t *m, int code, const ebm__msg *msg);
/* Recompute params_d and the Gaussian caches from params. */
void ebm__model_refresh(ebm_model_t *m);
static inline int ebm__is_gaussian(const ebm_model_t *m, int64_t l)
{
    return m->units[l] == EBM_UNITS_GAUSSIAN;
}

/* ---- argument checks (model.c) ---------------------------------------- */

/* n >= 0, x != NULL (if n > 0), ld >= width, and n*ld fits. */
int ebm__check_matrix(ebm__msg *msg, const char *name, int64_t n, const void *x, int64_t ld,
                      int64_t width);
/* Every unit of the layers in layer_mask holds a valid value of its kind. */
int ebm__check_states(const ebm_model_t *m, ebm__msg *msg, const char *name, uint32_t layer_mask,
                      int64_t n, const float *x, int64_t ldx);
/* Values of layer l given separately (n x n_l, stride ld). */
int ebm__check_layer_values(const ebm_model_t *m, ebm__msg *msg, const char *name, int64_t l,
                            int64_t n, const float *xl, int64_t ld);
/* sum_out: bits only below n_layers, no two adjacent. */
int ebm__check_sum_out(const ebm_model_t *m, ebm__msg *msg, uint32_t sum_out);
/* clamp mask: NULL, or ldc == 0, or ldc >= width. */
int ebm__check_clamp(const ebm_model_t *m, ebm__msg *msg, int64_t n, const uint8_t *clamp,
                     int64_t ldc);
/* A layer index l in [lo, L]. */
int ebm__check_layer(const ebm_model_t *m, ebm__msg *msg, const char *name, int64_t l, int64_t lo);
/* Mask of all layers. */
static inline uint32_t ebm__all_layers(const ebm_model_t *m)
{
    return (m->n_layers >= 32) ? 0xffffffffu : ((1u << m->n_layers) - 1u);
}
/* Mask of the neighbours of layer l. */
static inline uint32_t ebm__neighbours(const ebm_model_t *m, int64_t l)
{
    uint32_t mask = 0;
    if (l > 0) {
        mask |= 1u << (l - 1);
    }
    if (l + 1 < m->n_layers) {
        mask |= 1u << (l + 1);
    }
    return mask;
}

/* ---- layer inputs and free energies (energy.c) --------------------------
 * No argument checks: callers have validated. */

/* a = input of layer l from the float state x (see ebm_model_layer_input). */
void ebm__layer_input(const ebm_model_t *m, int64_t l, int64_t n, const float *x, int64_t ldx,
                      float *a, int64_t lda);
/* The same in double from a double state xd. */
void ebm__layer_input_d(const ebm_model_t *m, int64_t l, int64_t n, const double *xd,
                        int64_t ldxd, double *a, int64_t lda);
/* In place: a -> E[x_l | a] (sigmoid, tanh, identity). */
void ebm__mean_from_input(const ebm_model_t *m, int64_t l, int64_t n, float *a, int64_t lda);

/* Tests only: 1 makes the estimator and its samplers take their plain
 * paths (no reuse of a sampler's layer inputs, double MH energies). */
void ebm__estimator_set_plain(ebm_estimator_t *e, int plain);

/* Rows per chunk of the double-precision paths (bounds their scratch). */
#define EBM__CHUNK 256

/* Scratch of ebm__free_energy_chunk, in doubles, for `rows` rows. */
int64_t ebm__free_energy_scratch(const ebm_model_t *m, int64_t rows);
/* f[r] = F_S(x_r) in double for rows <= EBM__CHUNK rows; S validated;
 * work has ebm__free_energy_scratch(m, rows) doubles. */
void ebm__free_energy_chunk(const ebm_model_t *m, uint32_t sum_out, int64_t rows, const float *x,
                            int64_t ldx, double *f, double *work);
/* f over any n, allocating scratch once. Returns EBM_OK or EBM_ENOMEM. */
int ebm__free_energy(const ebm_model_t *m, ebm__msg *msg, uint32_t sum_out, int64_t n,
                     const float *x, int64_t ldx, double *f);

/* Energies of binary/spin states (every layer binary or spin:
 * ebm__energy_fast_ok) with the coupling sums in float GEMMs: e[r] is within
 * ebm__energy_fast_bound(m) of E(x_r), and so is the double path's
 * ebm__free_energy_chunk(m, 0, ...). t: rows x max_size floats. */
int ebm__energy_fast_ok(const ebm_model_t *m);
double ebm__energy_fast_bound(const ebm_model_t *m);
/* E(x_r) of such a model of two or three layers from a1, the float input
 * of layer 1 at x_r (rows of n_1) as ebm__layer_input makes it: E =
 * -sum_{l != 1} b_l.x_l - x_1.a_1 in double, no GEMM. */
void ebm__energy_from_input(const ebm_model_t *m, int64_t rows, const float *x, int64_t ldx,
                            const float *a1, double *e);
/* *fast = ebm__energy_fast_bound(m); *from_input (unless NULL; two or three
 * layers) bounds ebm__energy_from_input's error and the double path's
 * alike. One pass over the weights. */
void ebm__energy_bounds(const ebm_model_t *m, double *fast, double *from_input);
void ebm__energy_fast(const ebm_model_t *m, int64_t rows, const float *x, int64_t ldx, double *e,
                      float *t);

/* Scratch of ebm__energy_grad_rows, in floats, for `rows` rows. */
int64_t ebm__energy_grad_scratch(const ebm_model_t *m, int64_t rows);
/* g += sum_r coef[r] dF_S(x_r)/dtheta (no checks, no allocation; g float). */
void ebm__energy_grad_rows(const ebm_model_t *m, uint32_t sum_out, int64_t n, const float *x,
                           int64_t ldx, const double *coef, float *g, float *work);

/* ---- conditionals (conditional.c) -------------------------------------- */

/* Draw layer l from its input a into the layer block xl (stride ldx); row r
 * uses stream row rows[r] (rows NULL: row r), from its 32-bit word `word`
 * on (uniforms) or 2 * word on past the normals' base (Gaussian): layers
 * drawn from one stream must start at disjoint words, e.g. their offsets. */
void ebm__sample_from_input(const ebm_model_t *m, int64_t l, const ebm__stream *s,
                            const int64_t *rows, uint64_t word, int64_t n, const float *a,
                            int64_t lda, float *xl, int64_t ldx);
/* The draws of a discrete layer l from its inputs a and uniforms u (stride
 * ldu; u may be xl), as ebm__sample_from_input makes them from its
 * uniforms. */
void ebm__bernoulli_from_input(const ebm_model_t *m, int64_t l, int64_t n, const float *a,
                               int64_t lda, const float *u, int64_t ldu, float *xl, int64_t ldx);
/* Replace the units of the layers in `layers` that clamp does not fix (clamp
 * as in ebm_model_random_state) by uniform values (binary, spin) or N(0,1)
 * draws (Gaussian); row r from stream row rows[r]; draw: width floats. */
void ebm__random_units(const ebm_model_t *m, const ebm__stream *s, const int64_t *rows, int64_t n,
                       float *x, int64_t ldx, uint32_t layers, const uint8_t *clamp, int64_t ldc,
                       float *draw);
/* Two state rows hold the same values (compared as floats: -0 == +0). */
static inline int ebm__rows_equal(const float *a, const float *b, int64_t w)
{
    int64_t k = 0;
    for (; k + 8 <= w; k += 8) { /* eight comparisons, one branch */
        int differ = 0;
        for (int j = 0; j < 8; j++) {
            differ |= a[k + j] != b[k + j];
        }
        if (differ) {
            return 0;
        }
    }
    for (; k < w; k++) {
        if (a[k] != b[k]) {
            return 0;
        }
    }
    return 1;
}
/* Stream row of work row r. */
static inline uint32_t ebm__row_id(const int64_t *rows, int64_t r)
{
    return (uint32_t)(rows == NULL ? r : rows[r]);
}
/* log p(x_l = xl | input a) summed over the units of layer l, added to
 * logp[r], in double (inputs are float). */
void ebm__add_layer_logprob(const ebm_model_t *m, int64_t l, int64_t n, const float *a,
                            int64_t lda, const float *xl, int64_t ldx, double *logp);

/* ---- samplers (sampler.c, coupling.c, langevin.c) ----------------------- */

#define EBM__N_SAMPLER_STATS EBM_STAT_COUNT

struct ebm_sampler {
    const ebm_model_t *m;
    int kind;
    /* options (enum ebm_sampler_option) */
    uint32_t clamp_layers;
    int coupling;
    int64_t langevin_steps;
    double step_size;
    int cosine;
    int64_t adjust_after;
    int scale_by_variance;
    int closed_form;
    int64_t iteration;
    /* statistics of the last call (enum ebm_sampler_stat) */
    double stat[EBM__N_SAMPLER_STATS];
    /* MH energies: plain_energies (set only by tests) turns the float-GEMM
     * path off; energy_rechecks counts the decisions it left to double. */
    int plain_energies;
    int64_t energy_rechecks;
    /* After a Gibbs step that drew layer 1 last (models of two or three
     * layers), or a Gibbs-Langevin step in which every row took its
     * proposal: the input of layer 1 at each row's new state (n x n_1,
     * stride n_1, in the scratch: valid until the next call), else NULL. */
    const float *hidden_input;
    /* Set by an internal caller right before an MH call that will run
     * (mh_run clears it first thing): the hidden_input of the Gibbs step
     * that made that call's x, so that E(x) needs no GEMM
     * (ebm__energy_from_input). */
    const float *entry_input;
    /* scratch kept between calls, grown on demand */
    float *fbuf;
    size_t fcap;
    double *dbuf;
    size_t dcap;
    int64_t *ibuf;
    size_t icap;
    char errmsg[EBM__MSG_SIZE];
};

/* Scratch of at least n elements (grown, contents not kept), or NULL. */
float *ebm__sampler_floats(ebm_sampler_t *s, size_t n);
double *ebm__sampler_doubles(ebm_sampler_t *s, size_t n);
int64_t *ebm__sampler_indices(ebm_sampler_t *s, size_t n);
/* Layers whose units move (not clamped), of one parity (0 even, 1 odd). */
uint32_t ebm__free_layers(const ebm_sampler_t *s, int parity);
/* A stream for try k >= 1 of a rejection loop that started on stream base:
 * a sequence of its own, so loops never run out of numbers. */
ebm__stream ebm__stream_for_try(const ebm__stream *base, uint64_t k);

/* One Gibbs sweep of n rows (even free layers given odd, then odd given
 * even); layer l draws from layer_streams[l], row r from stream row rows[r]
 * (NULL: r); a: n x max_size scratch. Returns 0, with x partly drawn, at
 * the first layer input that overflowed float (parameters too large),
 * else 1. */
int ebm__gibbs_sweep(const ebm_sampler_t *s, const ebm__stream *layer_streams,
                     const int64_t *rows, int64_t n, float *x, int64_t ldx, float *a);

/* Kernels on validated rows, in place. Row r draws from stream row ids[r]
 * (ids NULL: row r), so a caller that compacts its batch keeps every row's
 * randomness. Each takes what it needs from rng, sets the stats of the call,
 * and returns EBM_OK or an error with its message in msg. */
int ebm__gibbs_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                    int64_t n, float *x, int64_t ldx, int keep);
int ebm__mh_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids, int64_t n,
                 float *x, int64_t ldx);
int ebm__langevin_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                       int64_t n, float *x, int64_t ldx);
int ebm__gibbs_langevin_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng,
                             const int64_t *ids, int64_t n, float *x, int64_t ldx);
/* The coupled Gibbs step. keep (here and in ebm__gibbs_step): 1 leaves x
 * and y as they were on any failure (the public calls); 0 lets a failed
 * step leave them partly drawn, for callers that discard them (the
 * estimator's scratch chains). */
int ebm__coupled_gibbs_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                            int64_t n, float *x, int64_t ldx, float *y, int64_t ldy, uint8_t *met,
                            int keep);
/* The residual tries a row of a coupled Gibbs step may make before the
 * step fails with EBM_ELIMIT (2^22; tests lower it). */
extern int64_t ebm__residual_try_limit;
int ebm__coupled_mh_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                         int64_t n, float *x, int64_t ldx, float *y, int64_t ldy, uint8_t *met);

#endif /* EBM_INTERNAL_H */
