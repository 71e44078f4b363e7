/*
 * The brute-force reference of the exact tests (ref.h): every number the
 * library computes on a tiny model, written here a second time in double
 * precision straight from the definitions in include/ebm.h, by enumerating
 * every configuration.
 *
 * SPDX-License-Identifier: MIT
 */
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Models and parameter sets                                                */
/* ------------------------------------------------------------------------ */

const ref_mspec REF_MODELS[REF_N_MODELS] = {
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

/* Several random parameter draws per model, one with |W| up to 50, one
 * centred. */
const ref_pset REF_PSETS[REF_N_PSETS] = {
    {101, 1.0, 0}, {202, 1.0, 0}, {303, 3.0, 0}, {404, 50.0, 0}, {505, 2.0, 1}};

/* ------------------------------------------------------------------------ */
/* The reference                                                            */
/* ------------------------------------------------------------------------ */

void ref_load_params(ref_t *R, const ebm_model_t *m)
{
    float *pf = malloc((size_t)R->np * sizeof *pf);
    ck_assert_ptr_nonnull(pf);
    ck_assert_int_eq(ebm_model_get_params(m, pf), EBM_OK);
    for (int64_t k = 0; k < R->np; k++) {
        R->p[k] = pf[k];
    }
    free(pf);
    float *mf = malloc((size_t)R->width * sizeof *mf);
    ck_assert_ptr_nonnull(mf);
    ck_assert_int_eq(ebm_model_get_offsets(m, mf), EBM_OK);
    for (int64_t k = 0; k < R->width; k++) {
        R->mu[k] = mf[k];
    }
    free(mf);
}

void ref_centre(ref_t *R, ebm_model_t *m, uint64_t seed)
{
    float *mu = malloc((size_t)R->width * sizeof *mu);
    ck_assert_ptr_nonnull(mu);
    uint64_t rs = seed ^ 0x5bd1e995u; /* not the parameters' stream */
    for (int l = 0; l < R->nl; l++) {
        for (int64_t j = 0; j < R->n[l]; j++) {
            const double lo = ref_down(R->units[l]);
            mu[R->off[l] + j] = (float)(lo + (1.0 - lo) * t_uniform(&rs));
        }
    }
    ck_assert_int_eq(ebm_model_set_offsets(m, mu, 0), EBM_OK);
    free(mu);
    ref_load_params(R, m);
}

/* Read the shape and the layout from the library, check that the blocks are
 * consistent with the shape, disjoint and cover the parameter vector. */
void ref_init(ref_t *R, const ebm_model_t *m, const char *ctx)
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
    if (ref_gauss0(R)) {
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
    R->mu = malloc((size_t)R->width * sizeof *R->mu);
    ck_assert_ptr_nonnull(R->p);
    ck_assert_ptr_nonnull(R->y);
    ck_assert_ptr_nonnull(R->mu);
    ref_load_params(R, m);
}

void ref_free_all(ref_t *R)
{
    free(R->p);
    free(R->y);
    free(R->mu);
    R->p = NULL;
    R->y = NULL;
    R->mu = NULL;
}

/* The terms of E that involve layer 0: visible bias (or the Gaussian
 * quadratic) and the W_1 coupling. */
double ref_e0(const ref_t *R, const double *x)
{
    const double *x0 = x + R->off[0], *x1 = x + R->off[1];
    const double *m0 = R->mu + R->off[0], *m1 = R->mu + R->off[1];
    double e = 0.0;
    for (int64_t i = 0; i < R->n[0]; i++) {
        double c = 0.0;
        for (int64_t j = 0; j < R->n[1]; j++) {
            c += ref_W(R, 1, i, j) * (x1[j] - m1[j]);
        }
        if (ref_gauss0(R)) {
            double s2 = ref_S2(R, i), d = x0[i] - ref_B(R, 0, i);
            e += 0.5 * d * d / s2 - (x0[i] / s2) * c;
        } else {
            e += -ref_B(R, 0, i) * (x0[i] - m0[i]) - (x0[i] - m0[i]) * c;
        }
    }
    return e;
}

/* The other terms: hidden biases and W_2 .. W_L. */
double ref_erest(const ref_t *R, const double *x)
{
    double e = 0.0;
    for (int l = 1; l < R->nl; l++) {
        const double *xl = x + R->off[l], *ml = R->mu + R->off[l];
        for (int64_t j = 0; j < R->n[l]; j++) {
            e -= ref_B(R, l, j) * (xl[j] - ml[j]);
        }
        if (l >= 2) {
            const double *xp = x + R->off[l - 1], *mp = R->mu + R->off[l - 1];
            for (int64_t i = 0; i < R->n[l - 1]; i++) {
                for (int64_t j = 0; j < R->n[l]; j++) {
                    e -= (xp[i] - mp[i]) * ref_W(R, l, i, j) * (xl[j] - ml[j]);
                }
            }
        }
    }
    return e;
}

double ref_energy(const ref_t *R, const double *x) { return ref_e0(R, x) + ref_erest(R, x); }

/*
 * log of the integral over v of exp(-(Gaussian terms of E)) given x_1: the
 * integrand factorises over visible units, unit i contributing
 *   exp(-0.5 (v - mu_i)^2 / s2_i + v c_i / s2_i),   c_i = (W_1 x_1)_i.
 * REF_QUAD: trapezoidal rule in log-space on a grid of step 0.2 sigma_i over
 * +-40 sigma_i around the maximiser of the exponent (mu_i + c_i, the vertex
 * of a parabola); for a Gaussian integrand the trapezoidal error is
 * ~exp(-2 pi^2 / 0.2^2), i.e. none in double.
 * REF_CLOSED: completing the square, the integral is
 *   sqrt(2 pi s2_i) exp(((mu_i + c_i)^2 - mu_i^2) / (2 s2_i)),
 * used only to cross-check the quadrature (test ref_selfcheck).
 */
double ref_glogint(const ref_t *R, const double *x, int how)
{
    const double *x1 = x + R->off[1];
    double total = 0.0;
    for (int64_t i = 0; i < R->n[0]; i++) {
        double c = 0.0;
        for (int64_t j = 0; j < R->n[1]; j++) {
            c += ref_W(R, 1, i, j) * x1[j];
        }
        double mu = ref_B(R, 0, i), s2 = ref_S2(R, i), sd = sqrt(s2);
        if (how == REF_CLOSED) {
            total += 0.5 * log(2.0 * REF_PI * s2) + ((mu + c) * (mu + c) - mu * mu) / (2.0 * s2);
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

void ref_lse_init(ref_lse *a)
{
    a->m = -INFINITY;
    a->s = 0.0;
}
void ref_lse_add(ref_lse *a, double t)
{
    if (t > a->m) {
        a->s = a->s * exp(a->m - t) + 1.0;
        a->m = t;
    } else {
        a->s += exp(t - a->m);
    }
}
double ref_lse_val(const ref_lse *a) { return a->m + log(a->s); }

/* The columns of the discrete layers in `mask` in the order of the bits of
 * a code (layer by layer, unit by unit, lowest bit first), and each one's
 * "down" value (0 or -1); their number (at most 64: a code's bits). */
static int code_columns(const ref_t *R, uint32_t mask, int64_t *col, double *down)
{
    int bits = 0;
    for (int l = 0; l < R->nl; l++) {
        if (!((mask >> l) & 1u) || !ref_is_discrete(R, l)) {
            continue;
        }
        for (int64_t j = 0; j < R->n[l]; j++, bits++) {
            T_ASSERT(bits < 64);
            col[bits] = R->off[l] + j;
            down[bits] = ref_down(R->units[l]);
        }
    }
    return bits;
}

void ref_set_from_code(const ref_t *R, uint32_t mask, uint64_t code, double *y)
{
    int64_t col[64];
    double down[64];
    const int bits = code_columns(R, mask, col, down);
    for (int b = 0; b < bits; b++) {
        y[col[b]] = ((code >> b) & 1u) ? 1.0 : down[b];
    }
}

void ref_set_from_code_f(const ref_t *R, uint32_t mask, uint64_t code, float *x)
{
    int64_t col[64];
    double down[64];
    const int bits = code_columns(R, mask, col, down);
    for (int b = 0; b < bits; b++) {
        x[col[b]] = ((code >> b) & 1u) ? 1.0f : (float)down[b];
    }
}

int ref_discrete_bits(const ref_t *R, uint32_t mask)
{
    int b = 0;
    for (int l = 0; l < R->nl; l++) {
        if (((mask >> l) & 1u) && ref_is_discrete(R, l)) {
            b += (int)R->n[l];
        }
    }
    return b;
}
uint32_t ref_all_layers(const ref_t *R) { return (uint32_t)((1u << R->nl) - 1u); }
int ref_mask_valid(const ref_t *R, uint32_t mask)
{
    return (mask >> R->nl) == 0 && (mask & (mask >> 1)) == 0;
}

/*
 * F_S(x) = -log sum over the configurations of the layers in S of exp(-E),
 * by enumeration (a Gaussian layer 0 in S integrated by quadrature given x_1
 * for each enumerated configuration). Works for any S, adjacent or not:
 * S = all layers gives -log Z.
 */
double ref_free(const ref_t *R, uint32_t mask, const double *x)
{
    double *y = R->y;
    memcpy(y, x, (size_t)R->width * sizeof *y);
    int bits = ref_discrete_bits(R, mask);
    int gs = ref_gauss0(R) && (mask & 1u);
    ref_lse acc;
    ref_lse_init(&acc);
    for (uint64_t code = 0; code < (1ull << bits); code++) {
        ref_set_from_code(R, mask, code, y);
        double t = -ref_erest(R, y) + (gs ? ref_glogint(R, y, REF_QUAD) : -ref_e0(R, y));
        ref_lse_add(&acc, t);
    }
    return -ref_lse_val(&acc);
}

double ref_log_z(const ref_t *R)
{
    double *x = calloc((size_t)R->width, sizeof *x);
    ck_assert_ptr_nonnull(x);
    double lz = -ref_free(R, ref_all_layers(R), x);
    free(x);
    return lz;
}

/* Input of unit j of layer l (ebm.h's formula), and a magnitude bound (sum
 * of absolute terms) for float tolerances. Used by the simulations; the
 * conditional tests derive the logits from energy differences instead. */
double ref_input(const ref_t *R, int l, const double *x, int64_t j, double *mag)
{
    double a, g;
    if (l == 0 && ref_gauss0(R)) {
        a = ref_B(R, 0, j);
        g = fabs(a);
        for (int64_t k = 0; k < R->n[1]; k++) {
            double t = ref_W(R, 1, j, k) * x[R->off[1] + k];
            a += t;
            g += fabs(t);
        }
    } else {
        a = ref_B(R, l, j);
        g = fabs(a);
        /* Centred, the input is b_l + W_l^T (x_{l-1} - mu_{l-1}) + W_{l+1}
         * (x_{l+1} - mu_{l+1}); the magnitude counts x and mu apart, as a
         * float sum of the expanded terms would. */
        if (l >= 1) {
            for (int64_t i = 0; i < R->n[l - 1]; i++) {
                const double mi = R->mu[R->off[l - 1] + i];
                double xi = x[R->off[l - 1] + i];
                if (l == 1 && ref_gauss0(R)) {
                    xi /= ref_S2(R, i);
                }
                const double w = ref_W(R, l, i, j);
                a += (xi - mi) * w;
                g += (fabs(xi) + fabs(mi)) * fabs(w);
            }
        }
        if (l + 1 < R->nl) {
            for (int64_t k = 0; k < R->n[l + 1]; k++) {
                const double xk = x[R->off[l + 1] + k], mk = R->mu[R->off[l + 1] + k];
                const double w = ref_W(R, l + 1, j, k);
                a += (xk - mk) * w;
                g += (fabs(xk) + fabs(mk)) * fabs(w);
            }
        }
    }
    if (mag != NULL) {
        *mag = g;
    }
    return a;
}

double ref_sigmoid(double a)
{
    if (a >= 0) {
        return 1.0 / (1.0 + exp(-a));
    }
    double e = exp(a);
    return e / (1.0 + e);
}
double ref_mean_of_input(int units, double a)
{
    switch (units) {
    case EBM_UNITS_BINARY:
        return ref_sigmoid(a);
    case EBM_UNITS_SPIN:
        return tanh(a);
    default:
        return a;
    }
}

int ref_layer_of(const ref_t *R, int64_t k)
{
    for (int l = 0; l < R->nl; l++) {
        if (k >= R->off[l] && k < R->off[l] + R->n[l]) {
            return l;
        }
    }
    ck_abort_msg("column %lld is in no layer", (long long)k);
    return -1;
}

void ref_row_to_d(const ref_t *R, const float *x, double *y)
{
    for (int64_t k = 0; k < R->width; k++) {
        y[k] = x[k];
    }
}

int ref_close_rel(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(1.0, fabs(b));
}

/* Random finite visible values around the mean: mu + sigma * U(-3, 3). */
float ref_rand_v(const ref_t *R, int64_t i, uint64_t *rs)
{
    return (float)(ref_B(R, 0, i) + sqrt(ref_S2(R, i)) * (6.0 * t_uniform(rs) - 3.0));
}

/* A random valid state (in float). */
void ref_rand_state(const ref_t *R, uint64_t *rs, float *x)
{
    for (int l = 0; l < R->nl; l++) {
        for (int64_t j = 0; j < R->n[l]; j++) {
            if (!ref_is_discrete(R, l)) {
                x[R->off[l] + j] = ref_rand_v(R, j, rs);
            } else {
                x[R->off[l] + j] =
                    (t_uniform(rs) < 0.5) ? 1.0f : (float)ref_down(R->units[l]);
            }
        }
    }
}

/* Every configuration of the discrete layers, times nv random v for a
 * Gaussian visible layer; rows of stride width. */
float *ref_all_states(const ref_t *R, int nv, uint64_t *rs, int64_t *n_out)
{
    int bits = ref_discrete_bits(R, ref_all_layers(R));
    int reps = ref_gauss0(R) ? nv : 1;
    int64_t n = (int64_t)(1ll << bits) * reps;
    float *x = malloc((size_t)(n * R->width) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    int64_t r = 0;
    for (uint64_t code = 0; code < (1ull << bits); code++) {
        for (int k = 0; k < reps; k++, r++) {
            float *row = x + r * R->width;
            ref_rand_state(R, rs, row);
            ref_set_from_code_f(R, ref_all_layers(R), code, row);
        }
    }
    *n_out = n;
    return x;
}

/* Create model mi with parameter set pi and its reference. */
ebm_model_t *ref_make_model(int mi, int pi, ref_t *R)
{
    const ref_mspec *s = &REF_MODELS[mi];
    ebm_model_t *m = t_model(s->nl, s->sizes, s->vis, s->hid);
    t_random_params(m, REF_PSETS[pi].seed, REF_PSETS[pi].scale);
    const int centred = REF_PSETS[pi].centred && s->vis != G_;
    char ctx[160];
    snprintf(ctx, sizeof ctx, "[%s, seed %llu, scale %g%s]", s->name,
             (unsigned long long)REF_PSETS[pi].seed, REF_PSETS[pi].scale,
             centred ? ", centred" : "");
    ref_init(R, m, ctx);
    if (centred) {
        ref_centre(R, m, REF_PSETS[pi].seed);
    }
    return m;
}

/* ------------------------------------------------------------------------ */
/* Finite differences                                                       */
/* ------------------------------------------------------------------------ */

/* sum_r coef[r] F_S(y_r). */
double ref_batch_f(const ref_t *R, uint32_t S, int64_t n, const double *yd,
                          const double *coef)
{
    double s = 0.0;
    for (int64_t r = 0; r < n; r++) {
        s += coef[r] * ref_free(R, S, yd + r * R->width);
    }
    return s;
}

/* Central difference with step h and h/2, one Richardson step: O(h^4). */
double ref_fd_param(ref_t *R, int64_t k, uint32_t S, int64_t n, const double *yd,
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
