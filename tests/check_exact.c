/*
 * Exact-answer tests (TESTING.md, test class 1): every number the library
 * computes on a tiny model is compared with a brute-force reference written
 * here, in double precision, straight from the definitions in include/ebm.h:
 *
 *   E(x) = - sum_l b_l . x_l - sum_{l>=1} x_{l-1}^T W_l x_l      (0/1 and -1/+1 layers)
 *   Gaussian layer 0 (mu = b_0, sigma^2 = exp(logvar)):
 *   E(v, x_1, ...) = 0.5 sum_i (v_i - mu_i)^2 / sigma_i^2
 *                    - sum_ij (v_i / sigma_i^2) W1_ij x1_j - (the other terms as above)
 *
 * The reference never uses softplus / log cosh / the Gaussian closed form to
 * compute a free energy: it enumerates every configuration of the summed-out
 * layers and adds exp(-E) (log-sum-exp in double); a summed-out Gaussian
 * layer is integrated per unit by the trapezoidal rule (see ref_glogint).
 * Gradients are central finite differences (with one Richardson step) of
 * that brute-force free energy in a double copy of the parameters.
 *
 * The parameter layout is taken from ebm_model_param_block only.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Models and parameter sets                                                */
/* ------------------------------------------------------------------------ */

#define B_ EBM_UNITS_BINARY
#define S_ EBM_UNITS_SPIN
#define G_ EBM_UNITS_GAUSSIAN

static const double PI_ = 3.14159265358979323846;

typedef struct mspec {
    const char *name;
    int nl;
    int64_t sizes[4];
    int vis, hid;
} mspec;

static const mspec MODELS[] = {
    {"binary RBM 4x3", 2, {4, 3, 0, 0}, B_, B_},
    {"spin RBM 4x3", 2, {4, 3, 0, 0}, S_, S_},
    {"binary DBM 3-3-2", 3, {3, 3, 2, 0}, B_, B_},
    {"spin DBM 3-3-2", 3, {3, 3, 2, 0}, S_, S_},
    {"binary DBM 2-3-2-2", 4, {2, 3, 2, 2}, B_, B_},
    {"spin DBM 2-3-2-2", 4, {2, 3, 2, 2}, S_, S_},
    {"GRBM 3x2 (binary hidden)", 2, {3, 2, 0, 0}, G_, B_},
    {"GRBM 3x2 (spin hidden)", 2, {3, 2, 0, 0}, G_, S_},
    {"Gaussian DBM 2-3-2", 3, {2, 3, 2, 0}, G_, B_},
    {"binary-visible spin-hidden DBM 3-2-2", 3, {3, 2, 2, 0}, B_, S_},
};
#define N_MODELS ((int)(sizeof MODELS / sizeof MODELS[0]))

typedef struct pset {
    uint64_t seed;
    double scale;
} pset;

/* Several random parameter draws per model, the last with |W| up to 50. */
static const pset PSETS[] = {{101, 1.0}, {202, 1.0}, {303, 3.0}, {404, 50.0}};
#define N_PSETS ((int)(sizeof PSETS / sizeof PSETS[0]))

/* ------------------------------------------------------------------------ */
/* The brute-force reference                                                */
/* ------------------------------------------------------------------------ */

typedef struct ref {
    int nl;
    int64_t n[EBM_MAX_LAYERS];
    int64_t off[EBM_MAX_LAYERS];
    int units[EBM_MAX_LAYERS];
    int64_t width;
    int64_t np;
    int64_t woff[EBM_MAX_LAYERS]; /* W_l at p + woff[l], n_{l-1} x n_l row-major */
    int64_t boff[EBM_MAX_LAYERS];
    int64_t lvoff; /* -1 unless layer 0 is Gaussian */
    double *p;     /* double copy of the parameters (perturbed by the FD tests) */
    double *y;     /* scratch state of ref_free */
    char ctx[160]; /* model / parameter set, for messages */
} ref_t;

static int gauss0(const ref_t *R) { return R->units[0] == EBM_UNITS_GAUSSIAN; }
static double Wv(const ref_t *R, int l, int64_t i, int64_t j)
{
    return R->p[R->woff[l] + i * R->n[l] + j];
}
static double Bv(const ref_t *R, int l, int64_t j) { return R->p[R->boff[l] + j]; }
static double S2v(const ref_t *R, int64_t i) { return exp(R->p[R->lvoff + i]); }
static double down_val(int units) { return units == EBM_UNITS_SPIN ? -1.0 : 0.0; }
static int is_discrete(const ref_t *R, int l) { return R->units[l] != EBM_UNITS_GAUSSIAN; }

static int valid_value(int units, float v)
{
    switch (units) {
    case EBM_UNITS_BINARY:
        return v == 0.0f || v == 1.0f;
    case EBM_UNITS_SPIN:
        return v == -1.0f || v == 1.0f;
    default:
        return isfinite(v);
    }
}

static void ref_load_params(ref_t *R, const ebm_model_t *m)
{
    float *pf = malloc((size_t)R->np * sizeof *pf);
    ck_assert_ptr_nonnull(pf);
    ck_assert_int_eq(ebm_model_get_params(m, pf), EBM_OK);
    for (int64_t k = 0; k < R->np; k++) {
        R->p[k] = pf[k];
    }
    free(pf);
}

/* Read the shape and the layout from the library, check that the blocks are
 * consistent with the shape, disjoint and cover the parameter vector. */
static void ref_init(ref_t *R, const ebm_model_t *m, const char *ctx)
{
    memset(R, 0, sizeof *R);
    snprintf(R->ctx, sizeof R->ctx, "%s", ctx);
    R->nl = (int)ebm_model_num_layers(m);
    ck_assert_int_ge(R->nl, 2);
    ck_assert_int_le(R->nl, EBM_MAX_LAYERS);
    R->width = ebm_model_state_width(m);
    R->np = ebm_model_param_count(m);
    ck_assert_int_gt(R->np, 0);
    int64_t w = 0;
    for (int l = 0; l < R->nl; l++) {
        R->n[l] = ebm_model_layer_size(m, l);
        R->off[l] = ebm_model_layer_offset(m, l);
        R->units[l] = ebm_model_layer_units(m, l);
        ck_assert_int_ge(R->n[l], 1);
        ck_assert_int_ge(R->off[l], 0);
        ck_assert_int_le(R->off[l] + R->n[l], R->width);
        w += R->n[l];
    }
    ck_assert_int_eq(w, R->width);
    char *cover = calloc((size_t)R->np, 1);
    ck_assert_ptr_nonnull(cover);
    int64_t off, rows, cols;
    for (int l = 1; l < R->nl; l++) {
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_WEIGHT, l, &off, &rows, &cols), EBM_OK);
        ck_assert_int_eq(rows, R->n[l - 1]);
        ck_assert_int_eq(cols, R->n[l]);
        R->woff[l] = off;
        ck_assert_int_ge(off, 0);
        ck_assert_int_le(off + rows * cols, R->np);
        for (int64_t k = 0; k < rows * cols; k++) {
            ck_assert_int_eq(cover[off + k], 0);
            cover[off + k] = 1;
        }
    }
    for (int l = 0; l < R->nl; l++) {
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, l, &off, &rows, &cols), EBM_OK);
        ck_assert_int_eq(rows, 1);
        ck_assert_int_eq(cols, R->n[l]);
        R->boff[l] = off;
        ck_assert_int_ge(off, 0);
        ck_assert_int_le(off + cols, R->np);
        for (int64_t k = 0; k < cols; k++) {
            ck_assert_int_eq(cover[off + k], 0);
            cover[off + k] = 1;
        }
    }
    int rc = ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &off, &rows, &cols);
    if (gauss0(R)) {
        ck_assert_int_eq(rc, EBM_OK);
        ck_assert_int_eq(rows, 1);
        ck_assert_int_eq(cols, R->n[0]);
        R->lvoff = off;
        ck_assert_int_ge(off, 0);
        ck_assert_int_le(off + cols, R->np);
        for (int64_t k = 0; k < cols; k++) {
            ck_assert_int_eq(cover[off + k], 0);
            cover[off + k] = 1;
        }
    } else {
        ck_assert_int_eq(rc, EBM_EUNSUPPORTED);
        R->lvoff = -1;
    }
    for (int64_t k = 0; k < R->np; k++) {
        ck_assert_msg(cover[k] == 1, "%s: parameter %lld is in no block", ctx, (long long)k);
    }
    free(cover);
    R->p = malloc((size_t)R->np * sizeof *R->p);
    R->y = malloc((size_t)R->width * sizeof *R->y);
    ck_assert_ptr_nonnull(R->p);
    ck_assert_ptr_nonnull(R->y);
    ref_load_params(R, m);
}

static void ref_free_all(ref_t *R)
{
    free(R->p);
    free(R->y);
    R->p = NULL;
    R->y = NULL;
}

/* The terms of E that involve layer 0: visible bias (or the Gaussian
 * quadratic) and the W_1 coupling. */
static double ref_e0(const ref_t *R, const double *x)
{
    const double *x0 = x + R->off[0], *x1 = x + R->off[1];
    double e = 0.0;
    for (int64_t i = 0; i < R->n[0]; i++) {
        double c = 0.0;
        for (int64_t j = 0; j < R->n[1]; j++) {
            c += Wv(R, 1, i, j) * x1[j];
        }
        if (gauss0(R)) {
            double s2 = S2v(R, i), d = x0[i] - Bv(R, 0, i);
            e += 0.5 * d * d / s2 - (x0[i] / s2) * c;
        } else {
            e += -Bv(R, 0, i) * x0[i] - x0[i] * c;
        }
    }
    return e;
}

/* The other terms: hidden biases and W_2 .. W_L. */
static double ref_erest(const ref_t *R, const double *x)
{
    double e = 0.0;
    for (int l = 1; l < R->nl; l++) {
        const double *xl = x + R->off[l];
        for (int64_t j = 0; j < R->n[l]; j++) {
            e -= Bv(R, l, j) * xl[j];
        }
        if (l >= 2) {
            const double *xp = x + R->off[l - 1];
            for (int64_t i = 0; i < R->n[l - 1]; i++) {
                for (int64_t j = 0; j < R->n[l]; j++) {
                    e -= xp[i] * Wv(R, l, i, j) * xl[j];
                }
            }
        }
    }
    return e;
}

static double ref_energy(const ref_t *R, const double *x) { return ref_e0(R, x) + ref_erest(R, x); }

/*
 * log of the integral over v of exp(-(Gaussian terms of E)) given x_1: the
 * integrand factorises over visible units, unit i contributing
 *   exp(-0.5 (v - mu_i)^2 / s2_i + v c_i / s2_i),   c_i = (W_1 x_1)_i.
 * QUAD: trapezoidal rule in log-space on a grid of step 0.2 sigma_i over
 * +-40 sigma_i around the maximiser of the exponent (mu_i + c_i, the vertex
 * of a parabola); for a Gaussian integrand the trapezoidal error is
 * ~exp(-2 pi^2 / 0.2^2), i.e. none in double.
 * CLOSED: completing the square, the integral is
 *   sqrt(2 pi s2_i) exp(((mu_i + c_i)^2 - mu_i^2) / (2 s2_i)),
 * used only to cross-check the quadrature (test ref_selfcheck).
 */
enum { QUAD = 0, CLOSED = 1 };
static double ref_glogint(const ref_t *R, const double *x, int how)
{
    const double *x1 = x + R->off[1];
    double total = 0.0;
    for (int64_t i = 0; i < R->n[0]; i++) {
        double c = 0.0;
        for (int64_t j = 0; j < R->n[1]; j++) {
            c += Wv(R, 1, i, j) * x1[j];
        }
        double mu = Bv(R, 0, i), s2 = S2v(R, i), sd = sqrt(s2);
        if (how == CLOSED) {
            total += 0.5 * log(2.0 * PI_ * s2) + ((mu + c) * (mu + c) - mu * mu) / (2.0 * s2);
            continue;
        }
        double center = mu + c, h = 0.2 * sd;
        double mx = -INFINITY, s = 0.0;
        for (int k = -200; k <= 200; k++) {
            double v = center + k * h;
            double t = -(0.5 * (v - mu) * (v - mu) - v * c) / s2;
            if (t > mx) {
                s = s * exp(mx - t) + 1.0;
                mx = t;
            } else {
                s += exp(t - mx);
            }
        }
        total += mx + log(s) + log(h);
    }
    return total;
}

typedef struct lse {
    double m, s;
} lse_t;
static void lse_init(lse_t *a)
{
    a->m = -INFINITY;
    a->s = 0.0;
}
static void lse_add(lse_t *a, double t)
{
    if (t > a->m) {
        a->s = a->s * exp(a->m - t) + 1.0;
        a->m = t;
    } else {
        a->s += exp(t - a->m);
    }
}
static double lse_val(const lse_t *a) { return a->m + log(a->s); }

/* Set the discrete layers in `mask` of y from the bits of code (layer by
 * layer, unit by unit, lowest bit first). */
static void set_from_code(const ref_t *R, uint32_t mask, uint64_t code, double *y)
{
    int bit = 0;
    for (int l = 0; l < R->nl; l++) {
        if (!((mask >> l) & 1u) || !is_discrete(R, l)) {
            continue;
        }
        for (int64_t j = 0; j < R->n[l]; j++, bit++) {
            y[R->off[l] + j] = ((code >> bit) & 1u) ? 1.0 : down_val(R->units[l]);
        }
    }
}
static void set_from_code_f(const ref_t *R, uint32_t mask, uint64_t code, float *x)
{
    int bit = 0;
    for (int l = 0; l < R->nl; l++) {
        if (!((mask >> l) & 1u) || !is_discrete(R, l)) {
            continue;
        }
        for (int64_t j = 0; j < R->n[l]; j++, bit++) {
            x[R->off[l] + j] = ((code >> bit) & 1u) ? 1.0f : (float)down_val(R->units[l]);
        }
    }
}
static int discrete_bits(const ref_t *R, uint32_t mask)
{
    int b = 0;
    for (int l = 0; l < R->nl; l++) {
        if (((mask >> l) & 1u) && is_discrete(R, l)) {
            b += (int)R->n[l];
        }
    }
    return b;
}
static uint32_t all_layers(const ref_t *R) { return (uint32_t)((1u << R->nl) - 1u); }
static int mask_valid(const ref_t *R, uint32_t mask)
{
    return (mask >> R->nl) == 0 && (mask & (mask >> 1)) == 0;
}

/*
 * F_S(x) = -log sum over the configurations of the layers in S of exp(-E),
 * by enumeration (a Gaussian layer 0 in S integrated by quadrature given x_1
 * for each enumerated configuration). Works for any S, adjacent or not:
 * S = all layers gives -log Z.
 */
static double ref_free(const ref_t *R, uint32_t mask, const double *x)
{
    double *y = R->y;
    memcpy(y, x, (size_t)R->width * sizeof *y);
    int bits = discrete_bits(R, mask);
    int gs = gauss0(R) && (mask & 1u);
    lse_t acc;
    lse_init(&acc);
    for (uint64_t code = 0; code < (1ull << bits); code++) {
        set_from_code(R, mask, code, y);
        double t = -ref_erest(R, y) + (gs ? ref_glogint(R, y, QUAD) : -ref_e0(R, y));
        lse_add(&acc, t);
    }
    return -lse_val(&acc);
}

static double ref_log_z(const ref_t *R)
{
    double *x = calloc((size_t)R->width, sizeof *x);
    ck_assert_ptr_nonnull(x);
    double lz = -ref_free(R, all_layers(R), x);
    free(x);
    return lz;
}

/* Input of unit j of layer l (ebm.h's formula), and a magnitude bound (sum
 * of absolute terms) for float tolerances. Used by the simulations; the
 * conditional tests derive the logits from energy differences instead. */
static double ref_input(const ref_t *R, int l, const double *x, int64_t j, double *mag)
{
    double a, g;
    if (l == 0 && gauss0(R)) {
        a = Bv(R, 0, j);
        g = fabs(a);
        for (int64_t k = 0; k < R->n[1]; k++) {
            double t = Wv(R, 1, j, k) * x[R->off[1] + k];
            a += t;
            g += fabs(t);
        }
    } else {
        a = Bv(R, l, j);
        g = fabs(a);
        if (l >= 1) {
            for (int64_t i = 0; i < R->n[l - 1]; i++) {
                double xi = x[R->off[l - 1] + i];
                if (l == 1 && gauss0(R)) {
                    xi /= S2v(R, i);
                }
                double t = xi * Wv(R, l, i, j);
                a += t;
                g += fabs(t);
            }
        }
        if (l + 1 < R->nl) {
            for (int64_t k = 0; k < R->n[l + 1]; k++) {
                double t = Wv(R, l + 1, j, k) * x[R->off[l + 1] + k];
                a += t;
                g += fabs(t);
            }
        }
    }
    if (mag != NULL) {
        *mag = g;
    }
    return a;
}

static double sigmoid(double a)
{
    if (a >= 0) {
        return 1.0 / (1.0 + exp(-a));
    }
    double e = exp(a);
    return e / (1.0 + e);
}
static double ref_mean_of_input(int units, double a)
{
    switch (units) {
    case EBM_UNITS_BINARY:
        return sigmoid(a);
    case EBM_UNITS_SPIN:
        return tanh(a);
    default:
        return a;
    }
}

static int layer_of(const ref_t *R, int64_t k)
{
    for (int l = 0; l < R->nl; l++) {
        if (k >= R->off[l] && k < R->off[l] + R->n[l]) {
            return l;
        }
    }
    ck_abort_msg("column %lld is in no layer", (long long)k);
    return -1;
}

static void row_to_d(const ref_t *R, const float *x, double *y)
{
    for (int64_t k = 0; k < R->width; k++) {
        y[k] = x[k];
    }
}

static int close_rel(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(1.0, fabs(b));
}

/* Random finite visible values around the mean: mu + sigma * U(-3, 3). */
static float rand_v(const ref_t *R, int64_t i, uint64_t *rs)
{
    return (float)(Bv(R, 0, i) + sqrt(S2v(R, i)) * (6.0 * t_uniform(rs) - 3.0));
}

/* A random valid state (in float). */
static void rand_state(const ref_t *R, uint64_t *rs, float *x)
{
    for (int l = 0; l < R->nl; l++) {
        for (int64_t j = 0; j < R->n[l]; j++) {
            if (!is_discrete(R, l)) {
                x[R->off[l] + j] = rand_v(R, j, rs);
            } else {
                x[R->off[l] + j] =
                    (t_uniform(rs) < 0.5) ? 1.0f : (float)down_val(R->units[l]);
            }
        }
    }
}

/* Every configuration of the discrete layers, times nv random v for a
 * Gaussian visible layer; rows of stride width. */
static float *all_states(const ref_t *R, int nv, uint64_t *rs, int64_t *n_out)
{
    int bits = discrete_bits(R, all_layers(R));
    int reps = gauss0(R) ? nv : 1;
    int64_t n = (int64_t)(1ll << bits) * reps;
    float *x = malloc((size_t)(n * R->width) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    int64_t r = 0;
    for (uint64_t code = 0; code < (1ull << bits); code++) {
        for (int k = 0; k < reps; k++, r++) {
            float *row = x + r * R->width;
            rand_state(R, rs, row);
            set_from_code_f(R, all_layers(R), code, row);
        }
    }
    *n_out = n;
    return x;
}

/* Create model mi with parameter set pi and its reference. */
static ebm_model_t *make_model(int mi, int pi, ref_t *R)
{
    const mspec *s = &MODELS[mi];
    ebm_model_t *m = t_model(s->nl, s->sizes, s->vis, s->hid);
    t_random_params(m, PSETS[pi].seed, PSETS[pi].scale);
    char ctx[160];
    snprintf(ctx, sizeof ctx, "[%s, seed %llu, scale %g]", s->name,
             (unsigned long long)PSETS[pi].seed, PSETS[pi].scale);
    ref_init(R, m, ctx);
    return m;
}

/* ------------------------------------------------------------------------ */
/* 0. The reference itself and the documented layout                        */
/* ------------------------------------------------------------------------ */

/* The quadrature agrees with the closed form; the brute-force F_S satisfies
 * sum_kept exp(-F_S) = Z on a discrete model (a property of the reference,
 * so that a failure elsewhere is not a bug of the reference). */
START_TEST(ref_selfcheck)
{
    for (int mi = 0; mi < N_MODELS; mi++) {
        for (int pi = 0; pi < N_PSETS; pi++) {
            ref_t R;
            ebm_model_t *m = make_model(mi, pi, &R);
            uint64_t rs = 77;
            double *y = malloc((size_t)R.width * sizeof *y);
            float *xf = malloc((size_t)R.width * sizeof *xf);
            if (gauss0(&R)) {
                for (int t = 0; t < 8; t++) {
                    rand_state(&R, &rs, xf);
                    row_to_d(&R, xf, y);
                    double q = ref_glogint(&R, y, QUAD), c = ref_glogint(&R, y, CLOSED);
                    ck_assert_msg(close_rel(q, c, 1e-12), "%s quadrature %.17g closed %.17g",
                                  R.ctx, q, c);
                }
            }
            /* Input formula = energy difference (binary) or half of it (spin). */
            for (int t = 0; t < 8; t++) {
                rand_state(&R, &rs, xf);
                row_to_d(&R, xf, y);
                for (int l = 0; l < R.nl; l++) {
                    if (!is_discrete(&R, l)) {
                        continue;
                    }
                    for (int64_t j = 0; j < R.n[l]; j++) {
                        double save = y[R.off[l] + j], mag;
                        y[R.off[l] + j] = 1.0;
                        double eu = ref_energy(&R, y);
                        y[R.off[l] + j] = down_val(R.units[l]);
                        double ed = ref_energy(&R, y);
                        y[R.off[l] + j] = save;
                        double a = ref_input(&R, l, y, j, &mag);
                        double d = (ed - eu) / (R.units[l] == EBM_UNITS_SPIN ? 2.0 : 1.0);
                        ck_assert_msg(fabs(a - d) <= 1e-11 * fmax(1.0, mag), "%s input", R.ctx);
                    }
                }
            }
            double lz = ref_log_z(&R);
            ck_assert(isfinite(lz));
            if (!gauss0(&R)) {
                /* Z by F_S for S = {1}: sum over all other layers. */
                uint32_t S = 2u;
                uint32_t kept = all_layers(&R) & ~S;
                lse_t acc;
                lse_init(&acc);
                for (uint64_t code = 0; code < (1ull << discrete_bits(&R, kept)); code++) {
                    rand_state(&R, &rs, xf);
                    row_to_d(&R, xf, y);
                    set_from_code(&R, kept, code, y);
                    lse_add(&acc, -ref_free(&R, S, y));
                }
                ck_assert_msg(close_rel(lse_val(&acc), lz, 1e-12), "%s", R.ctx);
            }
            free(y);
            free(xf);
            ref_free_all(&R);
            ebm_model_destroy(m);
        }
    }
}
END_TEST

/* The header documents [W_1 .. W_L | b_0 .. b_L | logvar_0]. */
START_TEST(param_layout)
{
    for (int mi = 0; mi < N_MODELS; mi++) {
        ref_t R;
        ebm_model_t *m = make_model(mi, 0, &R);
        int64_t k = 0;
        for (int l = 1; l < R.nl; l++) {
            ck_assert_int_eq(R.woff[l], k);
            k += R.n[l - 1] * R.n[l];
        }
        for (int l = 0; l < R.nl; l++) {
            ck_assert_int_eq(R.boff[l], k);
            k += R.n[l];
        }
        if (gauss0(&R)) {
            ck_assert_int_eq(R.lvoff, k);
            k += R.n[0];
        }
        ck_assert_int_eq(k, R.np);
        /* get_params returns exactly what t_random_params set (set/get round trip). */
        float *p = malloc((size_t)R.np * sizeof *p);
        ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
        ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
        float *q = malloc((size_t)R.np * sizeof *q);
        ck_assert_int_eq(ebm_model_get_params(m, q), EBM_OK);
        ck_assert(memcmp(p, q, (size_t)R.np * sizeof *p) == 0);
        free(p);
        free(q);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 1. Energies                                                              */
/* ------------------------------------------------------------------------ */

START_TEST(energy_all_states)
{
    int mi = _i;
    for (int pi = 0; pi < N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = make_model(mi, pi, &R);
        uint64_t rs = 1000 + (uint64_t)pi;
        int64_t n;
        float *x = all_states(&R, 6, &rs, &n);
        /* A padded copy: ldx > width. */
        int64_t ld = R.width + 3;
        float *xp = malloc((size_t)(n * ld) * sizeof *xp);
        for (int64_t r = 0; r < n; r++) {
            memcpy(xp + r * ld, x + r * R.width, (size_t)R.width * sizeof *x);
            for (int64_t k = R.width; k < ld; k++) {
                xp[r * ld + k] = NAN; /* padding is never read */
            }
        }
        double *e = malloc((size_t)n * sizeof *e), *e2 = malloc((size_t)n * sizeof *e2);
        double *y = malloc((size_t)R.width * sizeof *y);
        ck_assert_int_eq(ebm_model_energy(m, n, x, R.width, e), EBM_OK);
        ck_assert_int_eq(ebm_model_energy(m, n, xp, ld, e2), EBM_OK);
        for (int64_t r = 0; r < n; r++) {
            row_to_d(&R, x + r * R.width, y);
            double ref = ref_energy(&R, y);
            ck_assert_msg(close_rel(e[r], ref, 1e-10), "%s row %lld: energy %.17g, reference %.17g",
                          R.ctx, (long long)r, e[r], ref);
            ck_assert_msg(e2[r] == e[r], "%s row %lld: energy depends on ldx (%.17g vs %.17g)",
                          R.ctx, (long long)r, e2[r], e[r]);
        }
        free(x);
        free(xp);
        free(e);
        free(e2);
        free(y);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 2. Free energies for every valid sum-out mask                            */
/* ------------------------------------------------------------------------ */

START_TEST(free_energy_all_masks)
{
    int mi = _i;
    for (int pi = 0; pi < N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = make_model(mi, pi, &R);
        uint64_t rs = 2000 + (uint64_t)pi;
        double lz = ref_log_z(&R);
        double *y = malloc((size_t)R.width * sizeof *y);
        int n_masks = 0;
        for (uint32_t S = 0; S <= all_layers(&R); S++) {
            if (!mask_valid(&R, S)) {
                continue;
            }
            n_masks++;
            uint32_t kept = all_layers(&R) & ~S;
            int gkept = gauss0(&R) && !(S & 1u);
            int reps = gkept ? 5 : 1;
            int64_t nk = (int64_t)(1ll << discrete_bits(&R, kept)) * reps;
            float *x = malloc((size_t)(nk * R.width) * sizeof *x);
            float *x2 = malloc((size_t)(nk * R.width) * sizeof *x2);
            double *f = malloc((size_t)nk * sizeof *f), *f2 = malloc((size_t)nk * sizeof *f2);
            int64_t r = 0;
            for (uint64_t code = 0; code < (1ull << discrete_bits(&R, kept)); code++) {
                for (int k = 0; k < reps; k++, r++) {
                    float *row = x + r * R.width;
                    rand_state(&R, &rs, row); /* layers of S: random valid values */
                    set_from_code_f(&R, kept, code, row);
                    /* The same kept values, other values in the layers of S. */
                    float *row2 = x2 + r * R.width;
                    rand_state(&R, &rs, row2);
                    for (int l = 0; l < R.nl; l++) {
                        if ((kept >> l) & 1u) {
                            memcpy(row2 + R.off[l], row + R.off[l], (size_t)R.n[l] * sizeof *row);
                        }
                    }
                }
            }
            ck_assert_int_eq(ebm_model_free_energy(m, S, nk, x, R.width, f), EBM_OK);
            ck_assert_int_eq(ebm_model_free_energy(m, S, nk, x2, R.width, f2), EBM_OK);
            lse_t acc;
            lse_init(&acc);
            for (r = 0; r < nk; r++) {
                row_to_d(&R, x + r * R.width, y);
                double ref = ref_free(&R, S, y);
                ck_assert_msg(close_rel(f[r], ref, 1e-10),
                              "%s S=0x%x row %lld: free energy %.17g, reference %.17g", R.ctx, S,
                              (long long)r, f[r], ref);
                ck_assert_msg(close_rel(f2[r], f[r], 1e-12),
                              "%s S=0x%x row %lld: F_S depends on the values of the summed-out "
                              "layers (%.17g vs %.17g)",
                              R.ctx, S, (long long)r, f2[r], f[r]);
                lse_add(&acc, -f[r]);
            }
            if (!gkept) {
                ck_assert_msg(close_rel(lse_val(&acc), lz, 1e-10),
                              "%s S=0x%x: log sum_kept exp(-F_S) = %.17g, log Z = %.17g", R.ctx, S,
                              lse_val(&acc), lz);
            }
            if (S == 0) {
                double *e = malloc((size_t)nk * sizeof *e);
                ck_assert_int_eq(ebm_model_energy(m, nk, x, R.width, e), EBM_OK);
                for (r = 0; r < nk; r++) {
                    ck_assert_msg(close_rel(f[r], e[r], 1e-12), "%s: F_0 != E", R.ctx);
                }
                free(e);
            }
            free(x);
            free(x2);
            free(f);
            free(f2);
        }
        ck_assert_int_ge(n_masks, 3);

        /* Invalid masks: adjacent layers, bits >= n_layers. Nothing is written. */
        float *x = malloc((size_t)(2 * R.width) * sizeof *x);
        rand_state(&R, &rs, x);
        rand_state(&R, &rs, x + R.width);
        float *g = calloc((size_t)R.np, sizeof *g);
        float *o = malloc((size_t)(2 * R.width) * sizeof *o);
        double coef[2] = {1.0, -0.5};
        for (uint32_t S = 0; S <= all_layers(&R); S++) {
            if (mask_valid(&R, S)) {
                continue;
            }
            double f[2] = {-123.0, -123.0};
            ck_assert_int_eq(ebm_model_free_energy(m, S, 2, x, R.width, f), EBM_EVALUE);
            ck_assert(f[0] == -123.0 && f[1] == -123.0);
            ck_assert_int_eq(ebm_model_energy_grad(m, S, 2, x, R.width, coef, g), EBM_EVALUE);
        }
        for (int b = R.nl; b < 32; b++) {
            uint32_t bad[3] = {1u << b, (1u << b) | 1u, (1u << b) | 2u};
            for (int k = 0; k < 3; k++) {
                double f[2] = {-123.0, -123.0};
                ck_assert_msg(ebm_model_free_energy(m, bad[k], 2, x, R.width, f) == EBM_EVALUE,
                              "%s: sum_out 0x%x accepted", R.ctx, bad[k]);
                ck_assert(f[0] == -123.0 && f[1] == -123.0);
                ck_assert_int_eq(ebm_model_energy_grad(m, bad[k], 2, x, R.width, coef, g),
                                 EBM_EVALUE);
                ck_assert_int_eq(ebm_model_energy_grad_input(m, bad[k], R.nl - 1, 2, x, R.width,
                                                             o, R.width),
                                 EBM_EVALUE);
            }
        }
        for (int64_t k = 0; k < R.np; k++) {
            ck_assert_msg(g[k] == 0.0f, "%s: a failed energy_grad wrote grad", R.ctx);
        }
        /* grad_input for a layer in S. */
        ck_assert_int_eq(ebm_model_energy_grad_input(m, 1u, 0, 2, x, R.width, o, R.width),
                         EBM_EVALUE);
        ck_assert_int_eq(ebm_model_energy_grad_input(m, 2u, 1, 2, x, R.width, o, R.width),
                         EBM_EVALUE);
        free(x);
        free(g);
        free(o);
        free(y);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 3. Exact log Z                                                           */
/* ------------------------------------------------------------------------ */

START_TEST(log_partition)
{
    int mi = _i;
    for (int pi = 0; pi < N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = make_model(mi, pi, &R);
        double lz = NAN;
        ck_assert_int_eq(ebm_model_log_partition_exact(m, &lz), EBM_OK);
        double ref = ref_log_z(&R);
        ck_assert_msg(isfinite(lz), "%s: log Z = %g", R.ctx, lz);
        ck_assert_msg(close_rel(lz, ref, 1e-10), "%s: log Z %.17g, reference %.17g", R.ctx, lz,
                      ref);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
    /* All parameters zero: Z = 2^(number of discrete units) times
     * (2 pi)^(n_0 / 2) for unit-variance Gaussian visible units. */
    const mspec *s = &MODELS[mi];
    ebm_model_t *m = t_model(s->nl, s->sizes, s->vis, s->hid);
    ref_t R;
    ref_init(&R, m, s->name);
    double lz = NAN;
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &lz), EBM_OK);
    double ref = discrete_bits(&R, all_layers(&R)) * log(2.0) +
                 (gauss0(&R) ? 0.5 * (double)R.n[0] * log(2.0 * PI_) : 0.0);
    ck_assert_msg(close_rel(lz, ref, 1e-12), "%s zero model: log Z %.17g, expected %.17g", s->name,
                  lz, ref);
    ref_free_all(&R);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 4. Conditionals                                                          */
/* ------------------------------------------------------------------------ */

START_TEST(conditionals)
{
    int mi = _i;
    for (int pi = 0; pi < N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = make_model(mi, pi, &R);
        uint64_t rs = 3000 + (uint64_t)pi;
        int64_t n;
        float *x = all_states(&R, 3, &rs, &n);
        double *y = malloc((size_t)R.width * sizeof *y);
        for (int l = 0; l < R.nl; l++) {
            int64_t nl_ = R.n[l];
            int units = R.units[l];
            float *a = malloc((size_t)(n * nl_) * sizeof *a);
            float *mean = malloc((size_t)(n * nl_) * sizeof *mean);
            float *a2 = malloc((size_t)(n * nl_) * sizeof *a2);
            ck_assert_int_eq(ebm_model_layer_input(m, l, n, x, R.width, a, nl_), EBM_OK);
            ck_assert_int_eq(ebm_model_layer_mean(m, l, n, x, R.width, mean, nl_), EBM_OK);
            /* The values of layer l itself are ignored by layer_input. */
            float *xs = malloc((size_t)(n * R.width) * sizeof *xs);
            memcpy(xs, x, (size_t)(n * R.width) * sizeof *x);
            for (int64_t r = 0; r < n; r++) {
                float tmp[64];
                rand_state(&R, &rs, tmp);
                memcpy(xs + r * R.width + R.off[l], tmp + R.off[l], (size_t)nl_ * sizeof *tmp);
            }
            ck_assert_int_eq(ebm_model_layer_input(m, l, n, xs, R.width, a2, nl_), EBM_OK);
            ck_assert_msg(memcmp(a, a2, (size_t)(n * nl_) * sizeof *a) == 0,
                          "%s layer %d: layer_input depends on layer l's own values", R.ctx, l);
            free(xs);

            if (units == EBM_UNITS_GAUSSIAN) {
                /* Conditional mean mu + W_1 x_1; log p = Gaussian density. */
                int nc = 3;
                float *xl = malloc((size_t)(n * nc * nl_) * sizeof *xl);
                float *xr = malloc((size_t)(n * nc * R.width) * sizeof *xr);
                double *lp = malloc((size_t)(n * nc) * sizeof *lp);
                for (int64_t r = 0; r < n; r++) {
                    row_to_d(&R, x + r * R.width, y);
                    for (int64_t i = 0; i < nl_; i++) {
                        double mag, mref = ref_input(&R, 0, y, i, &mag);
                        ck_assert_msg(fabs(a[r * nl_ + i] - mref) <= 1e-5 * fmax(1.0, mag),
                                      "%s Gaussian input row %lld unit %lld: %.9g vs %.9g", R.ctx,
                                      (long long)r, (long long)i, a[r * nl_ + i], mref);
                        ck_assert_msg(fabs(mean[r * nl_ + i] - mref) <= 1e-5 * fmax(1.0, mag),
                                      "%s Gaussian mean", R.ctx);
                    }
                    for (int c = 0; c < nc; c++) {
                        memcpy(xr + (r * nc + c) * R.width, x + r * R.width,
                               (size_t)R.width * sizeof *x);
                        for (int64_t i = 0; i < nl_; i++) {
                            xl[(r * nc + c) * nl_ + i] = rand_v(&R, i, &rs);
                        }
                    }
                }
                ck_assert_int_eq(
                    ebm_model_layer_logprob(m, 0, n * nc, xr, R.width, xl, nl_, lp), EBM_OK);
                for (int64_t r = 0; r < n * nc; r++) {
                    row_to_d(&R, xr + r * R.width, y);
                    double ref = 0.0;
                    for (int64_t i = 0; i < nl_; i++) {
                        double mu = ref_input(&R, 0, y, i, NULL), s2 = S2v(&R, i);
                        double d = xl[r * nl_ + i] - mu;
                        ref += -0.5 * d * d / s2 - 0.5 * log(2.0 * PI_ * s2);
                    }
                    ck_assert_msg(close_rel(lp[r], ref, 1e-9),
                                  "%s Gaussian logprob row %lld: %.17g vs %.17g", R.ctx,
                                  (long long)r, lp[r], ref);
                }
                /* Brute-force check of the density: -E + integral identity:
                 * log p(v | x_1) = -E(v, x) + (Gaussian part of F_{0}). */
                for (int64_t r = 0; r < n * nc; r += 7) {
                    row_to_d(&R, xr + r * R.width, y);
                    for (int64_t i = 0; i < nl_; i++) {
                        y[i] = xl[r * nl_ + i];
                    }
                    double ref = -ref_energy(&R, y) + ref_free(&R, 1u, y);
                    ck_assert_msg(close_rel(lp[r], ref, 1e-9),
                                  "%s Gaussian logprob vs -E + F_{0}: %.17g vs %.17g", R.ctx, lp[r],
                                  ref);
                }
                free(xl);
                free(xr);
                free(lp);
                free(a);
                free(a2);
                free(mean);
                continue;
            }

            /* Discrete layer: enumerate the 2^n_l candidates of every row. */
            int64_t nc = 1ll << nl_;
            float *xr = malloc((size_t)(n * nc * R.width) * sizeof *xr);
            float *xl = malloc((size_t)(n * nc * nl_) * sizeof *xl);
            double *lp = malloc((size_t)(n * nc) * sizeof *lp);
            double *ec = malloc((size_t)nc * sizeof *ec);
            for (int64_t r = 0; r < n; r++) {
                for (int64_t c = 0; c < nc; c++) {
                    memcpy(xr + (r * nc + c) * R.width, x + r * R.width,
                           (size_t)R.width * sizeof *x);
                    for (int64_t j = 0; j < nl_; j++) {
                        xl[(r * nc + c) * nl_ + j] =
                            ((c >> j) & 1) ? 1.0f : (float)down_val(units);
                    }
                }
            }
            ck_assert_int_eq(ebm_model_layer_logprob(m, l, n * nc, xr, R.width, xl, nl_, lp),
                             EBM_OK);
            for (int64_t r = 0; r < n; r++) {
                row_to_d(&R, x + r * R.width, y);
                lse_t acc;
                lse_init(&acc);
                double psum = 0.0;
                for (int64_t c = 0; c < nc; c++) {
                    for (int64_t j = 0; j < nl_; j++) {
                        y[R.off[l] + j] = xl[(r * nc + c) * nl_ + j];
                    }
                    ec[c] = ref_energy(&R, y);
                    lse_add(&acc, -ec[c]);
                    psum += exp(lp[r * nc + c]);
                }
                ck_assert_msg(fabs(psum - 1.0) <= 1e-10, "%s layer %d row %lld: sum p = %.17g",
                              R.ctx, l, (long long)r, psum);
                for (int64_t c = 0; c < nc; c++) {
                    double ref = -ec[c] - lse_val(&acc);
                    double got = lp[r * nc + c];
                    ck_assert_msg(close_rel(got, ref, 1e-9),
                                  "%s layer %d row %lld cand %lld: logprob %.17g, reference %.17g",
                                  R.ctx, l, (long long)r, (long long)c, got, ref);
                    /* Logit of unit j: only unit j differs between c and c ^ (1 << j). */
                    for (int64_t j = 0; j < nl_; j++) {
                        if (!((c >> j) & 1)) {
                            continue;
                        }
                        int64_t cd = c ^ (1ll << j);
                        double logit = lp[r * nc + c] - lp[r * nc + cd];
                        double dref = ec[cd] - ec[c];
                        ck_assert_msg(fabs(logit - dref) <= 1e-9 * (1.0 + fabs(dref)),
                                      "%s layer %d row %lld unit %lld: logit %.17g, E(down) - "
                                      "E(up) = %.17g",
                                      R.ctx, l, (long long)r, (long long)j, logit, dref);
                    }
                }
                /* Inputs and means. */
                for (int64_t j = 0; j < nl_; j++) {
                    double mag;
                    row_to_d(&R, x + r * R.width, y);
                    (void)ref_input(&R, l, y, j, &mag);
                    y[R.off[l] + j] = 1.0;
                    double eu = ref_energy(&R, y);
                    y[R.off[l] + j] = down_val(units);
                    double ed = ref_energy(&R, y);
                    double aref = (ed - eu) / (units == EBM_UNITS_SPIN ? 2.0 : 1.0);
                    float al = a[r * nl_ + j], ml = mean[r * nl_ + j];
                    ck_assert_msg(fabs(al - aref) <= 1e-5 * fmax(1.0, mag),
                                  "%s layer %d row %lld unit %lld: input %.9g, reference %.17g",
                                  R.ctx, l, (long long)r, (long long)j, al, aref);
                    double mf = ref_mean_of_input(units, al);
                    ck_assert_msg(fabs(ml - mf) <= 1e-6,
                                  "%s layer %d: mean %.9g != f(input) %.9g", R.ctx, l, ml, mf);
                    /* Brute-force conditional expectation of unit j. */
                    double ex = 0.0;
                    for (int64_t c = 0; c < nc; c++) {
                        double v = ((c >> j) & 1) ? 1.0 : down_val(units);
                        ex += v * exp(-ec[c] - lse_val(&acc));
                    }
                    ck_assert_msg(fabs(ml - ex) <= 1e-5 + 1e-6 * mag,
                                  "%s layer %d row %lld unit %lld: mean %.9g, E[x|rest] %.12g",
                                  R.ctx, l, (long long)r, (long long)j, ml, ex);
                }
            }
            free(xr);
            free(xl);
            free(lp);
            free(ec);
            free(a);
            free(a2);
            free(mean);
        }
        free(x);
        free(y);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 5. Argmin                                                                */
/* ------------------------------------------------------------------------ */

START_TEST(argmin)
{
    int mi = _i;
    for (int pi = 0; pi < N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = make_model(mi, pi, &R);
        uint64_t rs = 4000 + (uint64_t)pi;
        int64_t n;
        float *x0 = all_states(&R, 4, &rs, &n);
        int64_t ld = R.width + 2;
        float *x = malloc((size_t)(n * ld) * sizeof *x);
        double *y = malloc((size_t)R.width * sizeof *y);
        int skipped = 0;
        for (int l = 0; l < R.nl; l++) {
            for (int64_t r = 0; r < n; r++) {
                memcpy(x + r * ld, x0 + r * R.width, (size_t)R.width * sizeof *x);
                x[r * ld + R.width] = 0.25f;
                x[r * ld + R.width + 1] = 0.25f;
            }
            ck_assert_int_eq(ebm_model_layer_argmin(m, l, n, x, ld), EBM_OK);
            for (int64_t r = 0; r < n; r++) {
                const float *xr = x + r * ld, *x0r = x0 + r * R.width;
                for (int64_t k = 0; k < R.width; k++) {
                    if (k < R.off[l] || k >= R.off[l] + R.n[l]) {
                        ck_assert_msg(memcmp(&xr[k], &x0r[k], sizeof *xr) == 0,
                                      "%s argmin of layer %d changed column %lld", R.ctx, l,
                                      (long long)k);
                    }
                }
                ck_assert(xr[R.width] == 0.25f && xr[R.width + 1] == 0.25f);
                row_to_d(&R, x0r, y);
                if (!is_discrete(&R, l)) {
                    for (int64_t i = 0; i < R.n[l]; i++) {
                        double mag, mref = ref_input(&R, 0, y, i, &mag);
                        ck_assert_msg(fabs(xr[i] - mref) <= 1e-5 * fmax(1.0, mag),
                                      "%s Gaussian argmin %.9g, mean %.17g", R.ctx, xr[i], mref);
                    }
                    continue;
                }
                /* Brute force: the configuration of layer l with the lowest E. */
                double best = INFINITY;
                uint64_t bc = 0;
                for (uint64_t c = 0; c < (1ull << R.n[l]); c++) {
                    set_from_code(&R, 1u << l, c, y);
                    double e = ref_energy(&R, y);
                    if (e < best) {
                        best = e;
                        bc = c;
                    }
                }
                set_from_code(&R, 1u << l, bc, y);
                for (int64_t j = 0; j < R.n[l]; j++) {
                    double want = y[R.off[l] + j];
                    if (xr[R.off[l] + j] != want) {
                        double mag, a = ref_input(&R, l, y, j, &mag);
                        ck_assert_msg(fabs(a) <= 1e-6 * fmax(1.0, mag),
                                      "%s layer %d row %lld unit %lld: argmin %g, brute force %g "
                                      "(input %.17g)",
                                      R.ctx, l, (long long)r, (long long)j, xr[R.off[l] + j], want,
                                      a);
                        skipped++;
                    }
                }
            }
        }
        ck_assert_int_le(skipped, 2);
        free(x0);
        free(x);
        free(y);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* Ties (input exactly 0) go to 1 / +1. */
START_TEST(argmin_ties)
{
    for (int mi = 0; mi < N_MODELS; mi++) {
        const mspec *s = &MODELS[mi];
        ebm_model_t *m = t_model(s->nl, s->sizes, s->vis, s->hid);
        ref_t R;
        ref_init(&R, m, s->name);
        uint64_t rs = 5;
        float *x = malloc((size_t)(4 * R.width) * sizeof *x);
        for (int r = 0; r < 4; r++) {
            rand_state(&R, &rs, x + r * R.width);
        }
        for (int l = 0; l < R.nl; l++) {
            if (!is_discrete(&R, l)) {
                continue;
            }
            ck_assert_int_eq(ebm_model_layer_argmin(m, l, 4, x, R.width), EBM_OK);
            for (int r = 0; r < 4; r++) {
                for (int64_t j = 0; j < R.n[l]; j++) {
                    ck_assert_msg(x[r * R.width + R.off[l] + j] == 1.0f,
                                  "%s zero model: argmin of a zero input is %g, not 1", s->name,
                                  x[r * R.width + R.off[l] + j]);
                }
            }
        }
        free(x);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
    /* A nonzero tie: 1x1 RBM with b_0 = 1, W = -1, h = 1: input of v is 1 - 1 = 0. */
    for (int u = 0; u < 2; u++) {
        int64_t sizes[2] = {1, 1};
        ebm_model_t *m = t_model(2, sizes, u == 0 ? B_ : S_, u == 0 ? B_ : S_);
        ref_t R;
        ref_init(&R, m, "1x1");
        float p[3];
        p[R.woff[1]] = -1.0f;
        p[R.boff[0]] = 1.0f;
        p[R.boff[1]] = 0.0f;
        ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
        float x[2] = {0, 1};
        x[R.off[0]] = (float)down_val(R.units[0]);
        x[R.off[1]] = 1.0f;
        float a = -7.0f;
        ck_assert_int_eq(ebm_model_layer_input(m, 0, 1, x, 2, &a, 1), EBM_OK);
        ck_assert(a == 0.0f);
        ck_assert_int_eq(ebm_model_layer_argmin(m, 0, 1, x, 2), EBM_OK);
        ck_assert_msg(x[R.off[0]] == 1.0f, "tie with nonzero parameters went to %g",
                      x[R.off[0]]);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 6. Local search                                                          */
/* ------------------------------------------------------------------------ */

/* Replace the free units of layer l by their conditional argmin (double);
 * *amin tracks the smallest relative |input| met (tie sensitivity). */
static void sim_argmin_layer(const ref_t *R, int l, double *y, const uint8_t *clamp,
                             double *amin)
{
    for (int64_t j = 0; j < R->n[l]; j++) {
        if (clamp != NULL && clamp[R->off[l] + j]) {
            continue;
        }
        double mag, a = ref_input(R, l, y, j, &mag);
        if (!is_discrete(R, l)) {
            y[R->off[l] + j] = a;
            continue;
        }
        double rel = fabs(a) / fmax(1.0, mag);
        if (rel < *amin) {
            *amin = rel;
        }
        y[R->off[l] + j] = (a >= 0) ? 1.0 : down_val(R->units[l]);
    }
}

/* Algorithm 1 of Taniguchi et al. with clamping: order 0 = even layers
 * first. Returns 1 if stopped by the cap. */
static int sim_local_search(const ref_t *R, double *y, const uint8_t *clamp, int order,
                            int64_t cap, int64_t *sweeps, double *amin)
{
    double *old = malloc((size_t)R->width * sizeof *old);
    ck_assert_ptr_nonnull(old);
    int capped = 0;
    for (int64_t t = 1;; t++) {
        memcpy(old, y, (size_t)R->width * sizeof *y);
        for (int half = 0; half < 2; half++) {
            int parity = (order == 0) ? half : 1 - half;
            for (int l = parity; l < R->nl; l += 2) {
                sim_argmin_layer(R, l, y, clamp, amin);
            }
        }
        int changed = 0;
        for (int64_t k = 0; k < R->width; k++) {
            changed |= old[k] != y[k];
        }
        if (!changed) {
            *sweeps = t;
            break;
        }
        if (t >= cap) {
            *sweeps = t;
            capped = 1;
            break;
        }
    }
    free(old);
    return capped;
}

/* Is y a fixed point of every free unit's conditional argmin (brute force
 * over each layer's configurations restricted to the free units)? */
static int ref_is_fixed(const ref_t *R, const double *y0, const uint8_t *clamp)
{
    double *y = malloc((size_t)R->width * sizeof *y);
    ck_assert_ptr_nonnull(y);
    memcpy(y, y0, (size_t)R->width * sizeof *y);
    int fixed = 1;
    double e0 = ref_energy(R, y0);
    for (int l = 0; l < R->nl && fixed; l++) {
        if (!is_discrete(R, l)) {
            continue;
        }
        /* Every configuration of the free units of layer l: none lower. */
        int64_t free_idx[64];
        int nf = 0;
        for (int64_t j = 0; j < R->n[l]; j++) {
            if (clamp == NULL || !clamp[R->off[l] + j]) {
                free_idx[nf++] = R->off[l] + j;
            }
        }
        for (uint64_t c = 0; c < (1ull << nf); c++) {
            memcpy(y, y0, (size_t)R->width * sizeof *y);
            for (int k = 0; k < nf; k++) {
                y[free_idx[k]] = ((c >> k) & 1u) ? 1.0 : down_val(R->units[l]);
            }
            double e = ref_energy(R, y);
            if (e < e0 - 1e-9 * fmax(1.0, fabs(e0))) {
                fixed = 0;
                break;
            }
        }
    }
    free(y);
    return fixed;
}

/* One model and parameter set, 48 random starts; clamp_kind 0: nothing
 * clamped, 1: the visible layer clamped (ldc = 0, one mask row for all),
 * 2: a random half of the visible units clamped, a different mask per row.
 * Each start is run with max_sweeps 1000, 1 and 2 (fresh generator of the
 * same seed each time). The result must equal the reference trajectory of
 * one of the two orders (even-first / odd-first) with the same sweep count. */
static void run_local_search_case(int mi, int pi, int clamp_kind)
{
    ref_t R;
    ebm_model_t *m = make_model(mi, pi, &R);
    const int64_t n = 48;
    int64_t ld = R.width + 1;
    float *x0 = malloc((size_t)(n * ld) * sizeof *x0);
    float *x = malloc((size_t)(n * ld) * sizeof *x);
    uint8_t *clamp = NULL;
    int64_t ldc = 0;
    uint64_t rs = 6000 + (uint64_t)pi * 10 + (uint64_t)clamp_kind;
    if (clamp_kind == 1) {
        clamp = calloc((size_t)R.width, 1);
        for (int64_t i = 0; i < R.n[0]; i++) {
            clamp[R.off[0] + i] = 1;
        }
        ldc = 0;
    } else if (clamp_kind == 2) {
        ldc = R.width + 2;
        clamp = calloc((size_t)(n * ldc), 1);
        for (int64_t r = 0; r < n; r++) {
            for (int64_t i = 0; i < R.n[0]; i++) {
                clamp[r * ldc + R.off[0] + i] = (uint8_t)(t_uniform(&rs) < 0.5 ? 1 : 0);
            }
            /* A nonzero byte other than 1 also clamps. */
            if (clamp[r * ldc + R.off[0]]) {
                clamp[r * ldc + R.off[0]] = 7;
            }
        }
    }
    ebm_rng_t *rng = NULL;
    ck_assert_int_eq(ebm_rng_create(&rng, 99 + (uint64_t)pi, 3), EBM_OK);
    for (int64_t r = 0; r < n; r++) {
        rand_state(&R, &rs, x0 + r * ld);
        x0[r * ld + R.width] = 0.25f;
    }
    /* Also random starts from the library. */
    ck_assert_int_eq(ebm_model_random_state(m, rng, n / 2, x0, ld, clamp, ldc), EBM_OK);
    ebm_rng_destroy(rng);

    double *y = malloc((size_t)R.width * sizeof *y);
    double *ys = malloc((size_t)R.width * sizeof *ys);
    int64_t *sw = malloc((size_t)n * sizeof *sw);
    const int64_t caps[3] = {1000, 1, 2};
    int order_seen[2] = {0, 0};
    int distinguishable = 0;
    for (int ci = 0; ci < 3; ci++) {
        int64_t cap = caps[ci];
        memcpy(x, x0, (size_t)(n * ld) * sizeof *x);
        ck_assert_int_eq(ebm_rng_create(&rng, 1234 + (uint64_t)pi, 0), EBM_OK);
        for (int64_t r = 0; r < n; r++) {
            sw[r] = -1;
        }
        int ret = ebm_model_local_search(m, rng, n, x, ld, clamp, ldc, cap, sw);
        ebm_rng_destroy(rng);
        ck_assert_msg(ret >= 0, "%s local_search: %s (%s)", R.ctx, ebm_error_name(ret),
                      ebm_model_errmsg(m));
        int cap_lo = 0, cap_hi = 0, ambiguous = 0;
        for (int64_t r = 0; r < n; r++) {
            const uint8_t *cr = (clamp == NULL) ? NULL : clamp + (ldc == 0 ? 0 : r * ldc);
            float *xr = x + r * ld;
            const float *x0r = x0 + r * ld;
            ck_assert_msg(sw[r] >= 1 && sw[r] <= cap, "%s row %lld: sweeps %lld (cap %lld)",
                          R.ctx, (long long)r, (long long)sw[r], (long long)cap);
            ck_assert(xr[R.width] == 0.25f);
            for (int64_t k = 0; k < R.width; k++) {
                ck_assert_msg(valid_value(R.units[layer_of(&R, k)], xr[k]),
                              "%s row %lld: local search wrote %g", R.ctx, (long long)r, xr[k]);
                if (cr != NULL && cr[k]) {
                    ck_assert_msg(memcmp(&xr[k], &x0r[k], sizeof *xr) == 0,
                                  "%s row %lld: clamped column %lld changed", R.ctx, (long long)r,
                                  (long long)k);
                }
            }
            /* The result must be one of the two orders' trajectories. */
            int match = 0, capped_if_match[2] = {0, 0}, matched[2] = {0, 0};
            double amin = INFINITY;
            double *yo[2];
            int64_t so[2];
            int co[2];
            for (int o = 0; o < 2; o++) {
                yo[o] = malloc((size_t)R.width * sizeof *y);
                row_to_d(&R, x0r, yo[o]);
                co[o] = sim_local_search(&R, yo[o], cr, o, cap, &so[o], &amin);
                row_to_d(&R, xr, y);
                int eq = 1;
                for (int64_t k = 0; k < R.width; k++) {
                    if (y[k] != yo[o][k]) {
                        eq = 0;
                    }
                }
                if (eq && so[o] == sw[r]) {
                    match = 1;
                    matched[o] = 1;
                    capped_if_match[o] = co[o];
                }
            }
            if (amin < 1e-6) {
                ambiguous++;
            } else {
                ck_assert_msg(match,
                              "%s cap %lld row %lld: the result (sweeps %lld) follows neither "
                              "order (even-first: %lld sweeps, odd-first: %lld sweeps)",
                              R.ctx, (long long)cap, (long long)r, (long long)sw[r],
                              (long long)so[0], (long long)so[1]);
                if (matched[0] && matched[1]) {
                    cap_lo += capped_if_match[0] && capped_if_match[1];
                    cap_hi += capped_if_match[0] || capped_if_match[1];
                } else {
                    int o = matched[0] ? 0 : 1;
                    cap_lo += capped_if_match[o];
                    cap_hi += capped_if_match[o];
                    if (cap == 1000) {
                        order_seen[o]++;
                        distinguishable++;
                    }
                }
            }
            if (cap == 1000) {
                /* Fixed point by brute force, and E did not go up. */
                row_to_d(&R, xr, y);
                row_to_d(&R, x0r, ys);
                if (amin >= 1e-6) {
                    ck_assert_msg(ref_is_fixed(&R, y, cr),
                                  "%s row %lld: the result is not a local minimum", R.ctx,
                                  (long long)r);
                    ck_assert_int_eq(sw[r] == 1, ref_is_fixed(&R, ys, cr));
                }
                double e_end = ref_energy(&R, y), e_start = ref_energy(&R, ys);
                ck_assert_msg(e_end <= e_start + 1e-9 * fmax(1.0, fabs(e_start)),
                              "%s row %lld: local search raised E from %.17g to %.17g", R.ctx,
                              (long long)r, e_start, e_end);
            }
            if (cap == 1) {
                ck_assert_int_eq(sw[r], 1);
            }
            free(yo[0]);
            free(yo[1]);
        }
        ck_assert_int_le(ambiguous, 2);
        ck_assert_msg(ret >= cap_lo && ret <= cap_hi + ambiguous,
                      "%s cap %lld: returned %d capped rows, expected %d..%d", R.ctx,
                      (long long)cap, ret, cap_lo, cap_hi + ambiguous);
        if (cap == 1000) {
            ck_assert_int_eq(ret, 0);
            /* The library's own argmin leaves the result unchanged. */
            float *xc = malloc((size_t)(n * ld) * sizeof *xc);
            memcpy(xc, x, (size_t)(n * ld) * sizeof *x);
            if (clamp == NULL) {
                for (int l = 0; l < R.nl; l++) {
                    ck_assert_int_eq(ebm_model_layer_argmin(m, l, n, xc, ld), EBM_OK);
                    ck_assert_msg(memcmp(xc, x, (size_t)(n * ld) * sizeof *x) == 0,
                                  "%s: layer_argmin(%d) moves a local search result", R.ctx, l);
                }
            }
            free(xc);
        }
        if (cap == 1 && clamp_kind == 0) {
            ck_assert_msg(ret > 0, "%s: no row needed a second sweep", R.ctx);
        }
    }
    if (distinguishable >= 12) {
        ck_assert_msg(order_seen[0] > 0 && order_seen[1] > 0,
                      "%s: %d rows tell the orders apart but only one order was used (%d/%d)",
                      R.ctx, distinguishable, order_seen[0], order_seen[1]);
    }
    free(x0);
    free(x);
    free(y);
    free(ys);
    free(sw);
    free(clamp);
    ref_free_all(&R);
    ebm_model_destroy(m);
}

START_TEST(local_search)
{
    int mi = _i;
    if (MODELS[mi].vis == G_) {
        /* Gaussian visible units: only with the visible layer clamped. */
        for (int pi = 0; pi < N_PSETS; pi++) {
            run_local_search_case(mi, pi, 1);
        }
        return;
    }
    for (int pi = 0; pi < N_PSETS; pi++) {
        for (int ck = 0; ck < 3; ck++) {
            run_local_search_case(mi, pi, ck);
        }
    }
}
END_TEST

/* Layers wide enough that, after the first sweeps, the library updates layer
 * inputs from the few units that flipped (its incremental path): every row
 * must still follow the double-precision reference trajectory of one of the
 * two orders, with the same sweep count, and end at a fixed point of every
 * layer's argmin. Rows whose decisions come within 1e-6 (relative) of a tie
 * may differ by float rounding, as the BLAS's own blocking may; at most a
 * few are allowed. Spin and binary units; visible layer free and clamped. */
START_TEST(local_search_wide)
{
    const int64_t sizes[4] = {60, 50, 40, 30}, n = 96;
    for (int kind = 0; kind < 4; kind++) {
        int units = kind < 2 ? EBM_UNITS_SPIN : EBM_UNITS_BINARY, clamped = kind & 1;
        ebm_model_t *m = NULL;
        char err[256];
        ck_assert_int_eq(ebm_model_create(&m, 4, sizes, units, units, err, sizeof err), EBM_OK);
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 77 + (uint64_t)kind, 0), EBM_OK);
        ck_assert_int_eq(ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 2.0), EBM_OK);
        ref_t R;
        ref_init(&R, m, units == EBM_UNITS_SPIN ? "wide spin DBM" : "wide binary DBM");
        const int64_t w = R.width;
        uint8_t *clamp = calloc((size_t)w, 1);
        for (int64_t j = 0; clamped && j < sizes[0]; j++) {
            clamp[j] = 1;
        }
        float *x0 = malloc((size_t)(n * w) * sizeof *x0), *x = malloc((size_t)(n * w) * sizeof *x);
        int64_t sw[96];
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x0, w, NULL, 0), EBM_OK);
        memcpy(x, x0, (size_t)(n * w) * sizeof *x);
        ck_assert_int_eq(ebm_model_local_search(m, rng, n, x, w, clamped ? clamp : NULL, 0, 1000,
                                                sw), 0);
        double *y = malloc((size_t)w * sizeof *y), *yo = malloc((size_t)w * sizeof *yo);
        int ambiguous = 0;
        int64_t max_sweeps = 0;
        for (int64_t r = 0; r < n; r++) {
            double amin = INFINITY;
            int match = 0;
            row_to_d(&R, x + r * w, y);
            for (int o = 0; o < 2; o++) {
                int64_t so;
                row_to_d(&R, x0 + r * w, yo);
                ck_assert_int_eq(sim_local_search(&R, yo, clamped ? clamp : NULL, o, 1000, &so,
                                                  &amin), 0);
                match |= so == sw[r] && memcmp(y, yo, (size_t)w * sizeof *y) == 0;
            }
            max_sweeps = sw[r] > max_sweeps ? sw[r] : max_sweeps;
            if (amin < 1e-6) {
                ambiguous++;
                continue;
            }
            ck_assert_msg(match, "%s row %lld: the result (%lld sweeps) follows neither order",
                          R.ctx, (long long)r, (long long)sw[r]);
        }
        ck_assert_msg(ambiguous <= 4, "%s: %d of %lld rows came within 1e-6 of a tie", R.ctx,
                      ambiguous, (long long)n);
        /* The incremental updates ran: rows kept sweeping after the first. */
        ck_assert_int_ge(max_sweeps, 4);
        float *xc = malloc((size_t)(n * w) * sizeof *xc);
        memcpy(xc, x, (size_t)(n * w) * sizeof *x);
        for (int l = clamped; l < 4; l++) {
            ck_assert_int_eq(ebm_model_layer_argmin(m, l, n, xc, w), EBM_OK);
        }
        ck_assert_msg(memcmp(xc, x, (size_t)(n * w) * sizeof *x) == 0,
                      "%s: a layer argmin moves a local search result", R.ctx);
        free(xc);
        free(y);
        free(yo);
        free(x0);
        free(x);
        free(clamp);
        ref_free_all(&R);
        ebm_rng_destroy(rng);
        ebm_model_destroy(m);
    }
}
END_TEST

/* GRBM without clamping: the result is a fixed point of the library's own
 * argmins (v = mean given h, h = argmin given v). */
START_TEST(local_search_gaussian_free)
{
    for (int mi = 0; mi < N_MODELS; mi++) {
        if (MODELS[mi].vis != G_) {
            continue;
        }
        for (int pi = 0; pi < N_PSETS; pi++) {
            ref_t R;
            ebm_model_t *m = make_model(mi, pi, &R);
            const int64_t n = 16;
            float *x = malloc((size_t)(n * R.width) * sizeof *x);
            ebm_rng_t *rng = NULL;
            ck_assert_int_eq(ebm_rng_create(&rng, 5, 5), EBM_OK);
            ck_assert_int_eq(ebm_model_random_state(m, rng, n, x, R.width, NULL, 0), EBM_OK);
            int64_t sw[16];
            int ret = ebm_model_local_search(m, rng, n, x, R.width, NULL, 0, 1000, sw);
            ck_assert_msg(ret == 0, "%s: local search on a free Gaussian layer returned %d (%s)",
                          R.ctx, ret, ebm_model_errmsg(m));
            float *xc = malloc((size_t)(n * R.width) * sizeof *xc);
            memcpy(xc, x, (size_t)(n * R.width) * sizeof *x);
            for (int l = 0; l < R.nl; l++) {
                ck_assert_int_eq(ebm_model_layer_argmin(m, l, n, xc, R.width), EBM_OK);
                ck_assert_msg(memcmp(xc, x, (size_t)(n * R.width) * sizeof *x) == 0,
                              "%s: layer %d argmin moves the local search result", R.ctx, l);
            }
            double *y = malloc((size_t)R.width * sizeof *y);
            for (int64_t r = 0; r < n; r++) {
                ck_assert(sw[r] >= 1);
                row_to_d(&R, x + r * R.width, y);
                ck_assert(ref_is_fixed(&R, y, NULL));
            }
            free(y);
            free(xc);
            free(x);
            ebm_rng_destroy(rng);
            ref_free_all(&R);
            ebm_model_destroy(m);
        }
    }
}
END_TEST

/* All-zero parameters: every input is 0, so from any start one sweep moves
 * every unit up and the second changes nothing. */
START_TEST(local_search_ties)
{
    for (int mi = 0; mi < N_MODELS; mi++) {
        if (MODELS[mi].vis == G_) {
            continue;
        }
        const mspec *s = &MODELS[mi];
        ebm_model_t *m = t_model(s->nl, s->sizes, s->vis, s->hid);
        ref_t R;
        ref_init(&R, m, s->name);
        const int64_t n = 8;
        float *x = malloc((size_t)(n * R.width) * sizeof *x);
        uint64_t rs = 9;
        for (int64_t r = 0; r < n; r++) {
            rand_state(&R, &rs, x + r * R.width);
        }
        for (int64_t k = 0; k < R.width; k++) {
            x[k] = 1.0f; /* row 0 starts at the answer */
        }
        int all_up[8];
        for (int64_t r = 0; r < n; r++) {
            all_up[r] = 1;
            for (int64_t k = 0; k < R.width; k++) {
                all_up[r] &= x[r * R.width + k] == 1.0f;
            }
        }
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 1, 1), EBM_OK);
        int64_t sw[8];
        ck_assert_int_eq(ebm_model_local_search(m, rng, n, x, R.width, NULL, 0, 10, sw), 0);
        for (int64_t r = 0; r < n; r++) {
            for (int64_t k = 0; k < R.width; k++) {
                ck_assert_msg(x[r * R.width + k] == 1.0f, "%s: tie not broken upwards", s->name);
            }
            ck_assert_int_eq(sw[r], all_up[r] ? 1 : 2);
        }
        free(x);
        ebm_rng_destroy(rng);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 7. Mean field                                                            */
/* ------------------------------------------------------------------------ */

START_TEST(mean_field)
{
    int mi = _i;
    for (int pi = 0; pi < 2; pi++) { /* the two parameter sets with scale 1 */
        for (int ck = 0; ck < 2; ck++) {
            if (ck == 1 && MODELS[mi].vis == G_) {
                continue;
            }
            ref_t R;
            ebm_model_t *m = make_model(mi, pi, &R);
            const int64_t n = 16;
            uint64_t rs = 7000 + (uint64_t)pi;
            float *mu = malloc((size_t)(n * R.width) * sizeof *mu);
            float *mu0 = malloc((size_t)(n * R.width) * sizeof *mu0);
            uint8_t *clamp;
            int64_t ldc;
            if (ck == 0) {
                clamp = calloc((size_t)R.width, 1);
                for (int64_t i = 0; i < R.n[0]; i++) {
                    clamp[R.off[0] + i] = 1;
                }
                ldc = 0;
            } else {
                ldc = R.width;
                clamp = calloc((size_t)(n * ldc), 1);
                for (int64_t r = 0; r < n; r++) {
                    for (int64_t i = 0; i < R.n[0]; i++) {
                        clamp[r * ldc + R.off[0] + i] = (uint8_t)(((r >> i) & 1) ? 1 : 0);
                    }
                }
            }
            for (int64_t r = 0; r < n; r++) {
                float *row = mu + r * R.width;
                rand_state(&R, &rs, row);
                for (int l = 0; l < R.nl; l++) {
                    for (int64_t j = 0; j < R.n[l]; j++) {
                        const uint8_t *cr = clamp + (ldc == 0 ? 0 : r * ldc);
                        if (cr[R.off[l] + j] || !is_discrete(&R, l)) {
                            continue;
                        }
                        double u = t_uniform(&rs);
                        row[R.off[l] + j] =
                            (float)(R.units[l] == EBM_UNITS_SPIN ? 2.0 * u - 1.0 : u);
                    }
                }
            }
            memcpy(mu0, mu, (size_t)(n * R.width) * sizeof *mu);
            double tol = 1e-6;
            int ret = ebm_model_mean_field(m, n, mu, R.width, clamp, ldc, 1000, tol);
            ck_assert_msg(ret == 0, "%s mean field returned %d (%s)", R.ctx, ret,
                          ebm_model_errmsg(m));
            double *y = malloc((size_t)R.width * sizeof *y);
            for (int64_t r = 0; r < n; r++) {
                const uint8_t *cr = clamp + (ldc == 0 ? 0 : r * ldc);
                row_to_d(&R, mu + r * R.width, y);
                for (int l = 0; l < R.nl; l++) {
                    for (int64_t j = 0; j < R.n[l]; j++) {
                        int64_t k = R.off[l] + j;
                        if (cr[k]) {
                            ck_assert_msg(mu[r * R.width + k] == mu0[r * R.width + k],
                                          "%s: mean field changed a clamped unit", R.ctx);
                            continue;
                        }
                        double a = ref_input(&R, l, y, j, NULL);
                        double f = ref_mean_of_input(R.units[l], a);
                        ck_assert_msg(fabs(y[k] - f) <= 10.0 * tol,
                                      "%s row %lld layer %d unit %lld: mean %.9g, f(input) %.9g",
                                      R.ctx, (long long)r, l, (long long)j, y[k], f);
                    }
                }
            }
            free(y);
            free(mu);
            free(mu0);
            free(clamp);
            ref_free_all(&R);
            ebm_model_destroy(m);
        }
    }
}
END_TEST

/* RBM with the visible layer clamped: one update gives the exact posterior
 * means. */
START_TEST(mean_field_rbm_exact)
{
    for (int mi = 0; mi < N_MODELS; mi++) {
        if (MODELS[mi].nl != 2) {
            continue;
        }
        for (int pi = 0; pi < N_PSETS; pi++) {
            ref_t R;
            ebm_model_t *m = make_model(mi, pi, &R);
            const int64_t n = 8;
            uint64_t rs = 8000;
            float *mu = malloc((size_t)(n * R.width) * sizeof *mu);
            for (int64_t r = 0; r < n; r++) {
                rand_state(&R, &rs, mu + r * R.width);
            }
            uint8_t *clamp = calloc((size_t)R.width, 1);
            for (int64_t i = 0; i < R.n[0]; i++) {
                clamp[R.off[0] + i] = 1;
            }
            ck_assert_int_eq(ebm_model_mean_field(m, n, mu, R.width, clamp, 0, 100, 1e-6), 0);
            double *y = malloc((size_t)R.width * sizeof *y);
            for (int64_t r = 0; r < n; r++) {
                row_to_d(&R, mu + r * R.width, y);
                for (int64_t j = 0; j < R.n[1]; j++) {
                    double mag, f = ref_mean_of_input(R.units[1], ref_input(&R, 1, y, j, &mag));
                    ck_assert_msg(fabs(y[R.off[1] + j] - f) <= 1e-6 + 1e-7 * mag,
                                  "%s: RBM posterior mean %.9g, exact %.9g", R.ctx,
                                  y[R.off[1] + j], f);
                }
            }
            free(y);
            free(mu);
            free(clamp);
            ref_free_all(&R);
            ebm_model_destroy(m);
        }
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 8. Energy gradients                                                      */
/* ------------------------------------------------------------------------ */

static double ref_batch_f(const ref_t *R, uint32_t S, int64_t n, const double *yd,
                          const double *coef)
{
    double s = 0.0;
    for (int64_t r = 0; r < n; r++) {
        s += coef[r] * ref_free(R, S, yd + r * R->width);
    }
    return s;
}

/* Central difference with step h and h/2, one Richardson step: O(h^4). */
static double ref_fd_param(ref_t *R, int64_t k, uint32_t S, int64_t n, const double *yd,
                           const double *coef, double h)
{
    double save = R->p[k], d[2];
    for (int t = 0; t < 2; t++) {
        double hh = (t == 0) ? h : 0.5 * h;
        R->p[k] = save + hh;
        double fp = ref_batch_f(R, S, n, yd, coef);
        R->p[k] = save - hh;
        double fm = ref_batch_f(R, S, n, yd, coef);
        d[t] = (fp - fm) / (2.0 * hh);
    }
    R->p[k] = save;
    return (4.0 * d[1] - d[0]) / 3.0;
}

START_TEST(energy_grad)
{
    int mi = _i;
    for (int pi = 0; pi < N_PSETS; pi++) {
        /* h = 1e-3, except for a Gaussian layer with |W| up to 50: there the
         * exponent of the Gaussian integral, c^2 / (2 sigma^2) with
         * c = (W_1 x_1)_i, is ~1e4, so are its derivatives in mu and logvar,
         * and the truncation error ~h^4 F^(5) of the Richardson difference
         * needs h = 1e-5 (the double round-off, ~1e-16 |F| / h, stays ~1000
         * times below the tolerance). */
        double fd_step = (MODELS[mi].vis == G_ && PSETS[pi].scale > 3.0) ? 1e-5 : 1e-3;
        ref_t R;
        ebm_model_t *m = make_model(mi, pi, &R);
        uint64_t rs = 9000 + (uint64_t)pi;
        const int64_t n = 6;
        float *x = malloc((size_t)(n * R.width) * sizeof *x);
        double *yd = malloc((size_t)(n * R.width) * sizeof *yd);
        double coef[6];
        float *g1 = malloc((size_t)R.np * sizeof *g1), *g2 = malloc((size_t)R.np * sizeof *g2);
        float *g0 = malloc((size_t)R.np * sizeof *g0), *g3 = malloc((size_t)R.np * sizeof *g3);
        for (uint32_t S = 0; S <= all_layers(&R); S++) {
            if (!mask_valid(&R, S)) {
                continue;
            }
            double csum = 0.0;
            for (int64_t r = 0; r < n; r++) {
                rand_state(&R, &rs, x + r * R.width);
                row_to_d(&R, x + r * R.width, yd + r * R.width);
                double mag = 0.1 + 2.9 * t_uniform(&rs);
                coef[r] = (t_uniform(&rs) < 0.5) ? -mag : mag;
                csum += fabs(coef[r]);
            }
            memset(g1, 0, (size_t)R.np * sizeof *g1);
            int rc = ebm_model_energy_grad(m, S, n, x, R.width, coef, g1);
            ck_assert_msg(rc == EBM_OK, "%s S=0x%x energy_grad: %s (%s)", R.ctx, S,
                          ebm_error_name(rc), ebm_model_errmsg(m));
            for (int64_t k = 0; k < R.np; k++) {
                double fd = ref_fd_param(&R, k, S, n, yd, coef, fd_step);
                ck_assert_msg(fabs(g1[k] - fd) <= 1e-3 * fabs(fd) + 1e-4 * csum,
                              "%s S=0x%x param %lld: grad %.9g, finite difference %.9g", R.ctx, S,
                              (long long)k, g1[k], fd);
            }
            /* Accumulation: a second call adds the same amount. */
            memcpy(g2, g1, (size_t)R.np * sizeof *g1);
            ck_assert_int_eq(ebm_model_energy_grad(m, S, n, x, R.width, coef, g2), EBM_OK);
            for (int64_t k = 0; k < R.np; k++) {
                ck_assert_msg(fabs(g2[k] - 2.0 * g1[k]) <= 1e-6 * fabs(g1[k]) + 1e-7 * csum,
                              "%s S=0x%x param %lld: two calls give %.9g, one %.9g", R.ctx, S,
                              (long long)k, g2[k], g1[k]);
                g0[k] = (float)(t_uniform(&rs) - 0.5);
                g3[k] = g0[k];
            }
            ck_assert_int_eq(ebm_model_energy_grad(m, S, n, x, R.width, coef, g3), EBM_OK);
            for (int64_t k = 0; k < R.np; k++) {
                ck_assert_msg(fabs((g3[k] - g0[k]) - g1[k]) <=
                                  1e-6 * fabs(g1[k]) + 1e-6 + 1e-7 * csum,
                              "%s S=0x%x param %lld: grad is not accumulated (+=)", R.ctx, S,
                              (long long)k);
            }
            /* Linearity in coef: splitting the batch gives the same sum. */
            memset(g2, 0, (size_t)R.np * sizeof *g2);
            ck_assert_int_eq(ebm_model_energy_grad(m, S, 2, x, R.width, coef, g2), EBM_OK);
            ck_assert_int_eq(
                ebm_model_energy_grad(m, S, n - 2, x + 2 * R.width, R.width, coef + 2, g2),
                EBM_OK);
            for (int64_t k = 0; k < R.np; k++) {
                ck_assert_msg(fabs(g2[k] - g1[k]) <= 1e-5 * fabs(g1[k]) + 1e-5 * csum,
                              "%s S=0x%x: split batch differs", R.ctx, S);
            }
        }
        free(x);
        free(yd);
        free(g0);
        free(g1);
        free(g2);
        free(g3);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* Batches past the library's internal chunk sizes (rows are processed in
 * chunks of a few hundred / a thousand): gradients, state gradients and
 * log-likelihoods of 2100 rows against the reference. */
START_TEST(large_batches)
{
    const int which[2] = {2, 6}; /* binary DBM 3-3-2, GRBM 3x2 */
    for (int w = 0; w < 2; w++) {
        int mi = which[w];
        ref_t R;
        ebm_model_t *m = make_model(mi, 0, &R);
        uint64_t rs = 15000;
        const int64_t n = 2100;
        float *x = malloc((size_t)(n * R.width) * sizeof *x);
        double *yd = malloc((size_t)(n * R.width) * sizeof *yd);
        double *coef = malloc((size_t)n * sizeof *coef);
        float *g = malloc((size_t)R.np * sizeof *g);
        double csum = 0.0;
        for (int64_t r = 0; r < n; r++) {
            rand_state(&R, &rs, x + r * R.width);
            row_to_d(&R, x + r * R.width, yd + r * R.width);
            coef[r] = (t_uniform(&rs) - 0.3) / (double)n;
            csum += fabs(coef[r]);
        }
        const uint32_t masks[2] = {0u, 2u};
        for (int k = 0; k < 2; k++) {
            uint32_t S = masks[k];
            memset(g, 0, (size_t)R.np * sizeof *g);
            ck_assert_int_eq(ebm_model_energy_grad(m, S, n, x, R.width, coef, g), EBM_OK);
            for (int64_t q = 0; q < R.np; q++) {
                double fd = ref_fd_param(&R, q, S, n, yd, coef, 1e-3);
                ck_assert_msg(fabs(g[q] - fd) <= 1e-3 * fabs(fd) + 1e-4 * csum,
                              "%s S=0x%x n=%lld param %lld: grad %.9g, finite difference %.9g",
                              R.ctx, S, (long long)n, (long long)q, g[q], fd);
            }
        }
        /* State gradient of layer 0 with layer 1 summed out. */
        int64_t n0 = R.n[0];
        float *out = malloc((size_t)(n * n0) * sizeof *out);
        ck_assert_int_eq(ebm_model_energy_grad_input(m, 2u, 0, n, x, R.width, out, n0), EBM_OK);
        for (int64_t r = 0; r < n; r += 7) {
            double *y = yd + r * R.width;
            for (int64_t i = 0; i < n0; i++) {
                double h = 1e-5, save = y[i];
                y[i] = save + h;
                double fp = ref_free(&R, 2u, y);
                y[i] = save - h;
                double fm = ref_free(&R, 2u, y);
                y[i] = save;
                double fd = (fp - fm) / (2.0 * h);
                ck_assert_msg(fabs(out[r * n0 + i] - fd) <= 1e-4 * (1.0 + fabs(fd)),
                              "%s n=%lld row %lld: dF/dv %.9g, finite difference %.9g", R.ctx,
                              (long long)n, (long long)r, out[r * n0 + i], fd);
            }
        }
        /* Log-likelihood of many rows. */
        float *data = malloc((size_t)(n * n0) * sizeof *data);
        double *ll = malloc((size_t)n * sizeof *ll);
        for (int64_t r = 0; r < n; r++) {
            memcpy(data + r * n0, x + r * R.width + R.off[0], (size_t)n0 * sizeof *data);
        }
        double lz = ref_log_z(&R);
        ck_assert_int_eq(ebm_model_log_likelihood(m, lz, n, data, n0, ll), EBM_OK);
        for (int64_t r = 0; r < n; r++) {
            double ref = -ref_free(&R, all_layers(&R) & ~1u, yd + r * R.width) - lz;
            ck_assert_msg(close_rel(ll[r], ref, 1e-9), "%s n=%lld row %lld: log p(v) %.17g, %.17g",
                          R.ctx, (long long)n, (long long)r, ll[r], ref);
        }
        free(data);
        free(ll);
        free(out);
        free(x);
        free(yd);
        free(coef);
        free(g);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 9. Gradients with respect to the state                                   */
/* ------------------------------------------------------------------------ */

START_TEST(energy_grad_input)
{
    int mi = _i;
    for (int pi = 0; pi < N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = make_model(mi, pi, &R);
        uint64_t rs = 10000 + (uint64_t)pi;
        const int64_t n = 6;
        float *x = malloc((size_t)(n * R.width) * sizeof *x);
        double *y = malloc((size_t)R.width * sizeof *y);
        for (int64_t r = 0; r < n; r++) {
            rand_state(&R, &rs, x + r * R.width);
        }
        for (int l = 0; l < R.nl; l++) {
            int64_t nl_ = R.n[l];
            float *out = malloc((size_t)(n * (nl_ + 1)) * sizeof *out);
            float *a = malloc((size_t)(n * nl_) * sizeof *a);
            ck_assert_int_eq(ebm_model_layer_input(m, l, n, x, R.width, a, nl_), EBM_OK);
            for (uint32_t S = 0; S <= all_layers(&R); S++) {
                if (!mask_valid(&R, S) || ((S >> l) & 1u)) {
                    continue;
                }
                int64_t ldo = nl_ + 1;
                for (int64_t k = 0; k < n * ldo; k++) {
                    out[k] = 0.25f;
                }
                int rc = ebm_model_energy_grad_input(m, S, l, n, x, R.width, out, ldo);
                ck_assert_msg(rc == EBM_OK, "%s S=0x%x l=%d grad_input: %s (%s)", R.ctx, S, l,
                              ebm_error_name(rc), ebm_model_errmsg(m));
                int nb_in_s = ((l > 0) && ((S >> (l - 1)) & 1u)) ||
                              ((l + 1 < R.nl) && ((S >> (l + 1)) & 1u));
                for (int64_t r = 0; r < n; r++) {
                    ck_assert(out[r * ldo + nl_] == 0.25f);
                    for (int64_t j = 0; j < nl_; j++) {
                        row_to_d(&R, x + r * R.width, y);
                        double mag;
                        (void)ref_input(&R, l, y, j, &mag);
                        if (!is_discrete(&R, l)) {
                            mag = (fabs(y[j] - Bv(&R, 0, j)) + mag) / S2v(&R, j);
                        }
                        /* dF_S/dx_lj by central differences of the reference
                         * (x_l treated as real: F_S is multilinear / smooth in it). */
                        double h = is_discrete(&R, l) ? 1e-4 : 1e-5, d[2];
                        double save = y[R.off[l] + j];
                        for (int t = 0; t < 2; t++) {
                            double hh = t == 0 ? h : 0.5 * h;
                            y[R.off[l] + j] = save + hh;
                            double fp = ref_free(&R, S, y);
                            y[R.off[l] + j] = save - hh;
                            double fm = ref_free(&R, S, y);
                            d[t] = (fp - fm) / (2.0 * hh);
                        }
                        y[R.off[l] + j] = save;
                        double fd = (4.0 * d[1] - d[0]) / 3.0;
                        float got = out[r * ldo + j];
                        ck_assert_msg(fabs(got - fd) <= 1e-5 * (1.0 + mag) + 1e-4 * fabs(fd),
                                      "%s S=0x%x layer %d row %lld unit %lld: dF/dx %.9g, finite "
                                      "difference %.9g",
                                      R.ctx, S, l, (long long)r, (long long)j, got, fd);
                        if (is_discrete(&R, l) && !nb_in_s) {
                            float al = a[r * nl_ + j];
                            ck_assert_msg(fabs(got + al) <= 1e-6 * (1.0 + fabs(al)),
                                          "%s layer %d: grad_input %.9g != -input %.9g", R.ctx, l,
                                          got, al);
                        }
                    }
                }
            }
            free(out);
            free(a);
        }
        free(x);
        free(y);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 10. Log-likelihood                                                       */
/* ------------------------------------------------------------------------ */

START_TEST(log_likelihood)
{
    int mi = _i;
    for (int pi = 0; pi < N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = make_model(mi, pi, &R);
        uint64_t rs = 11000 + (uint64_t)pi;
        double lz = ref_log_z(&R);
        int64_t n = gauss0(&R) ? 12 : (1ll << R.n[0]);
        int64_t ldd = R.n[0] + 2;
        float *data = malloc((size_t)(n * ldd) * sizeof *data);
        float *row = malloc((size_t)R.width * sizeof *row);
        double *y = malloc((size_t)R.width * sizeof *y);
        double *ll = malloc((size_t)n * sizeof *ll);
        for (int64_t r = 0; r < n; r++) {
            rand_state(&R, &rs, row);
            if (!gauss0(&R)) {
                set_from_code_f(&R, 1u, (uint64_t)r, row);
            }
            memcpy(data + r * ldd, row + R.off[0], (size_t)R.n[0] * sizeof *row);
            data[r * ldd + R.n[0]] = NAN; /* padding is never read */
            data[r * ldd + R.n[0] + 1] = NAN;
        }
        int rc = ebm_model_log_likelihood(m, lz, n, data, ldd, ll);
        ck_assert_msg(rc == EBM_OK, "%s log_likelihood: %s (%s)", R.ctx, ebm_error_name(rc),
                      ebm_model_errmsg(m));
        double psum = 0.0;
        for (int64_t r = 0; r < n; r++) {
            for (int64_t k = 0; k < R.width; k++) {
                y[k] = 0.0;
            }
            for (int64_t i = 0; i < R.n[0]; i++) {
                y[R.off[0] + i] = data[r * ldd + i];
            }
            double ref = -ref_free(&R, all_layers(&R) & ~1u, y) - lz;
            ck_assert_msg(close_rel(ll[r], ref, 1e-9),
                          "%s row %lld: log p(v) %.17g, brute force %.17g", R.ctx, (long long)r,
                          ll[r], ref);
            psum += exp(ll[r]);
        }
        if (!gauss0(&R)) {
            ck_assert_msg(fabs(psum - 1.0) <= 1e-9, "%s: sum_v p(v) = %.17g", R.ctx, psum);
        }
        free(data);
        free(row);
        free(y);
        free(ll);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 11. Random states and sampling                                           */
/* ------------------------------------------------------------------------ */

START_TEST(random_state)
{
    int mi = _i;
    ref_t R;
    ebm_model_t *m = make_model(mi, 0, &R);
    const int64_t n = 8;
    int64_t ld = R.width + 2, ldc = R.width + 1;
    float *x = malloc((size_t)(n * ld) * sizeof *x);
    float *x3 = malloc((size_t)(3 * ld) * sizeof *x3);
    uint8_t *clamp = calloc((size_t)(n * ldc), 1);
    uint64_t rs = 12000;
    for (int64_t r = 0; r < n; r++) {
        for (int64_t k = 0; k < R.width; k++) {
            clamp[r * ldc + k] = (uint8_t)(t_uniform(&rs) < 0.3 ? 1 : 0);
        }
    }
    for (int variant = 0; variant < 3; variant++) {
        const uint8_t *cl = variant == 0 ? NULL : clamp;
        int64_t lc = variant == 2 ? 0 : ldc;
        for (int64_t k = 0; k < n * ld; k++) {
            x[k] = 0.25f; /* a sentinel: never a valid binary/spin value */
        }
        memcpy(x3, x, (size_t)(3 * ld) * sizeof *x);
        ebm_rng_t *rng = NULL;
        ck_assert_int_eq(ebm_rng_create(&rng, 42, 7), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(m, rng, n, x, ld, cl, lc), EBM_OK);
        ebm_rng_destroy(rng);
        ck_assert_int_eq(ebm_rng_create(&rng, 42, 7), EBM_OK);
        ck_assert_int_eq(ebm_model_random_state(m, rng, 3, x3, ld, cl, lc), EBM_OK);
        ebm_rng_destroy(rng);
        ck_assert_msg(memcmp(x, x3, (size_t)(3 * ld) * sizeof *x) == 0,
                      "%s: random_state row draws depend on n", R.ctx);
        for (int64_t r = 0; r < n; r++) {
            const uint8_t *cr = cl == NULL ? NULL : cl + (lc == 0 ? 0 : r * lc);
            for (int l = 0; l < R.nl; l++) {
                for (int64_t j = 0; j < R.n[l]; j++) {
                    int64_t k = R.off[l] + j;
                    float v = x[r * ld + k];
                    if (cr != NULL && cr[k]) {
                        ck_assert_msg(v == 0.25f, "%s: random_state wrote a clamped unit", R.ctx);
                    } else {
                        ck_assert_msg(valid_value(R.units[l], v),
                                      "%s: random_state wrote %g to layer %d", R.ctx, v, l);
                    }
                }
            }
            ck_assert(x[r * ld + R.width] == 0.25f && x[r * ld + R.width + 1] == 0.25f);
        }
    }
    /* Rough balance over many rows (about 6 standard errors). */
    const int64_t nb = 4096;
    float *xb = malloc((size_t)(nb * R.width) * sizeof *xb);
    ebm_rng_t *rng = NULL;
    ck_assert_int_eq(ebm_rng_create(&rng, 43, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_random_state(m, rng, nb, xb, R.width, NULL, 0), EBM_OK);
    ebm_rng_destroy(rng);
    for (int64_t k = 0; k < R.width; k++) {
        double s = 0.0, s2 = 0.0;
        for (int64_t r = 0; r < nb; r++) {
            s += xb[r * R.width + k];
            s2 += (double)xb[r * R.width + k] * xb[r * R.width + k];
        }
        int l = 0;
        while (l + 1 < R.nl && k >= R.off[l + 1]) {
            l++;
        }
        double mean = s / (double)nb;
        double expect = R.units[l] == EBM_UNITS_BINARY ? 0.5 : 0.0;
        double se = R.units[l] == EBM_UNITS_BINARY ? 0.5 / 64.0 : 1.0 / 64.0;
        ck_assert_msg(fabs(mean - expect) <= 6.0 * se, "%s column %lld: mean %g", R.ctx,
                      (long long)k, mean);
        if (R.units[l] == EBM_UNITS_GAUSSIAN) {
            ck_assert_msg(fabs(s2 / (double)nb - 1.0) <= 0.15, "%s: N(0,1) variance %g", R.ctx,
                          s2 / (double)nb);
        }
    }
    free(xb);
    free(x);
    free(x3);
    free(clamp);
    ref_free_all(&R);
    ebm_model_destroy(m);
}
END_TEST

START_TEST(layer_sample)
{
    int mi = _i;
    for (int pi = 0; pi < N_PSETS; pi++) {
        ref_t R;
        ebm_model_t *m = make_model(mi, pi, &R);
        const int64_t n = 8;
        int64_t ld = R.width + 2;
        uint64_t rs = 13000 + (uint64_t)pi;
        float *x0 = malloc((size_t)(n * ld) * sizeof *x0);
        float *x = malloc((size_t)(n * ld) * sizeof *x);
        float *x3 = malloc((size_t)(3 * ld) * sizeof *x3);
        double *y = malloc((size_t)R.width * sizeof *y);
        for (int64_t r = 0; r < n; r++) {
            rand_state(&R, &rs, x0 + r * ld);
            x0[r * ld + R.width] = 0.25f;
            x0[r * ld + R.width + 1] = 0.25f;
        }
        int decided = 0;
        for (int l = 0; l < R.nl; l++) {
            memcpy(x, x0, (size_t)(n * ld) * sizeof *x);
            memcpy(x3, x0, (size_t)(3 * ld) * sizeof *x);
            ebm_rng_t *rng = NULL;
            ck_assert_int_eq(ebm_rng_create(&rng, 77, (uint64_t)l), EBM_OK);
            ck_assert_int_eq(ebm_model_layer_sample(m, l, rng, n, x, ld), EBM_OK);
            ebm_rng_destroy(rng);
            ck_assert_int_eq(ebm_rng_create(&rng, 77, (uint64_t)l), EBM_OK);
            ck_assert_int_eq(ebm_model_layer_sample(m, l, rng, 3, x3, ld), EBM_OK);
            ebm_rng_destroy(rng);
            ck_assert_msg(memcmp(x, x3, (size_t)(3 * ld) * sizeof *x) == 0,
                          "%s layer %d: row draws depend on n", R.ctx, l);
            for (int64_t r = 0; r < n; r++) {
                for (int64_t k = 0; k < ld; k++) {
                    int in_l = k >= R.off[l] && k < R.off[l] + R.n[l];
                    float v = x[r * ld + k];
                    if (!in_l) {
                        ck_assert_msg(memcmp(&v, &x0[r * ld + k], sizeof v) == 0,
                                      "%s: layer_sample(%d) wrote column %lld", R.ctx, l,
                                      (long long)k);
                    } else {
                        ck_assert_msg(valid_value(R.units[l], v),
                                      "%s: layer_sample(%d) wrote %g", R.ctx, l, v);
                    }
                }
                /* Units with an overwhelming input must take their mode. */
                row_to_d(&R, x0 + r * ld, y);
                for (int64_t j = 0; j < R.n[l] && is_discrete(&R, l); j++) {
                    double a = ref_input(&R, l, y, j, NULL);
                    double logit = R.units[l] == EBM_UNITS_SPIN ? 2.0 * a : a;
                    if (fabs(logit) > 40.0) {
                        decided++;
                        float want = logit > 0 ? 1.0f : (float)down_val(R.units[l]);
                        ck_assert_msg(x[r * ld + R.off[l] + j] == want,
                                      "%s layer %d: logit %g but sampled %g", R.ctx, l, logit,
                                      x[r * ld + R.off[l] + j]);
                    }
                }
            }
        }
        if (PSETS[pi].scale >= 50.0) {
            ck_assert_int_gt(decided, 0);
        }
        free(x0);
        free(x);
        free(x3);
        free(y);
        ref_free_all(&R);
        ebm_model_destroy(m);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */

Suite *ebm_exact_suite(void)
{
    Suite *s = suite_create("exact");
    TCase *tc;

    tc = tcase_create("reference");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ref_selfcheck);
    tcase_add_test(tc, param_layout);
    suite_add_tcase(s, tc);

    tc = tcase_create("energy");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, energy_all_states, 0, N_MODELS);
    tcase_add_loop_test(tc, free_energy_all_masks, 0, N_MODELS);
    tcase_add_loop_test(tc, log_partition, 0, N_MODELS);
    tcase_add_loop_test(tc, log_likelihood, 0, N_MODELS);
    suite_add_tcase(s, tc);

    tc = tcase_create("conditional");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, conditionals, 0, N_MODELS);
    tcase_add_loop_test(tc, argmin, 0, N_MODELS);
    tcase_add_test(tc, argmin_ties);
    tcase_add_loop_test(tc, random_state, 0, N_MODELS);
    tcase_add_loop_test(tc, layer_sample, 0, N_MODELS);
    suite_add_tcase(s, tc);

    tc = tcase_create("search");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, local_search, 0, N_MODELS);
    tcase_add_test(tc, local_search_wide);
    tcase_add_test(tc, local_search_gaussian_free);
    tcase_add_test(tc, local_search_ties);
    tcase_add_loop_test(tc, mean_field, 0, N_MODELS);
    tcase_add_test(tc, mean_field_rbm_exact);
    suite_add_tcase(s, tc);

    tc = tcase_create("gradient");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, energy_grad, 0, N_MODELS);
    tcase_add_loop_test(tc, energy_grad_input, 0, N_MODELS);
    tcase_add_test(tc, large_batches);
    suite_add_tcase(s, tc);

    return s;
}
