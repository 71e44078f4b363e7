/*
 * The samplers and coupled chains of include/ebm.h written down a second
 * time, in double precision, as exact transition matrices on tiny models
 * (binary and spin RBM 3x2, binary and spin DBM 2-2-2, posterior variants
 * with clamped layers, a GRBM 2x2), straight from the header and the papers
 * it cites (ref.h):
 *
 *  - off the meeting event EBM_COUPLING_MAXIMAL draws x's B1 from the
 *    residual r1 = (p1 - min)/TV and y's from r2 independently, then each
 *    B2 independently. EBM_COUPLING_CRN redraws both residuals by rejection
 *    from proposals made of common uniforms (unit by unit the comonotone
 *    coupling of two Bernoulli variables) with independent acceptance
 *    uniforms, and draws B2 from common uniforms too; its law is computed
 *    in closed form by tref_coupled_gibbs.
 *  - coupled MH is maximal too: the chains meet with probability
 *    sum_z min(P(x,z), P(y,z)).
 *
 * SPDX-License-Identifier: MIT
 */
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* A tiny model in double precision                                         */
/* ------------------------------------------------------------------------ */

/* Read the model's parameters through the public layout only. */
void tref_load(tref *R, const ebm_model_t *m, uint32_t clamp, const float *gauss)
{
    memset(R, 0, sizeof *R);
    R->nl = (int)ebm_model_num_layers(m);
    R->width = (int)ebm_model_state_width(m);
    T_ASSERT(R->nl <= TREF_MAXL && R->width <= TREF_MAXW);
    int64_t np = ebm_model_param_count(m);
    float *p = t_malloc((size_t)np * sizeof *p);
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    int64_t o, rows, cols;
    for (int l = 0; l < R->nl; l++) {
        R->n[l] = (int)ebm_model_layer_size(m, l);
        R->off[l] = (int)ebm_model_layer_offset(m, l);
        R->units[l] = ebm_model_layer_units(m, l);
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, l, &o, &rows, &cols), EBM_OK);
        for (int64_t j = 0; j < cols; j++) {
            R->b[l][j] = p[o + j];
        }
        if (l >= 1) {
            ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_WEIGHT, l, &o, &rows, &cols),
                             EBM_OK);
            T_ASSERT(rows * cols <= 16);
            for (int64_t i = 0; i < rows * cols; i++) {
                R->W[l][i] = p[o + i];
            }
        }
        for (int j = 0; j < R->n[l]; j++) {
            int col = R->off[l] + j;
            R->layer_of[col] = l;
            R->unit_of[col] = j;
            if (R->units[l] == G_) {
                R->base[col] = gauss != NULL ? gauss[col] : 0.0;
            } else {
                R->disc[R->ndisc++] = col;
            }
        }
    }
    if (R->units[0] == G_) {
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &o, &rows, &cols), EBM_OK);
        for (int64_t i = 0; i < cols; i++) {
            R->logvar[i] = p[o + i];
        }
    }
    R->clamp = clamp;
    R->S = 1 << R->ndisc;
    free(p);
}

static int tref_up_bit(double v) { return v > 0.5; }

void tref_row(const tref *R, int k, double *x)
{
    for (int c = 0; c < R->width; c++) {
        x[c] = R->base[c];
    }
    for (int i = 0; i < R->ndisc; i++) {
        int col = R->disc[i], bit = k >> i & 1;
        x[col] = R->units[R->layer_of[col]] == S_ ? (bit ? 1.0 : -1.0) : (double)bit;
    }
}

static void tref_row_f(const tref *R, int k, float *x)
{
    double d[TREF_MAXW];
    tref_row(R, k, d);
    for (int c = 0; c < R->width; c++) {
        x[c] = (float)d[c];
    }
}

static int tref_index(const tref *R, const double *x)
{
    int k = 0;
    for (int i = 0; i < R->ndisc; i++) {
        k |= tref_up_bit(x[R->disc[i]]) << i;
    }
    return k;
}

/* The state index of a float row, or -1 if a value is not a valid value of
 * its unit or a Gaussian (clamped) column moved. */
int tref_code(const tref *R, const float *x)
{
    for (int c = 0; c < R->width; c++) {
        int u = R->units[R->layer_of[c]];
        float v = x[c];
        int ok = u == B_   ? (v == 0.0f || v == 1.0f)
                 : u == S_ ? (v == -1.0f || v == 1.0f)
                           : v == (float)R->base[c];
        if (!ok) {
            return -1;
        }
    }
    double d[TREF_MAXW];
    for (int c = 0; c < R->width; c++) {
        d[c] = x[c];
    }
    return tref_index(R, d);
}

int tref_same_clamped(const tref *R, const double *x, const double *y)
{
    for (int c = 0; c < R->width; c++) {
        if ((R->clamp >> R->layer_of[c] & 1u) && x[c] != y[c]) {
            return 0;
        }
    }
    return 1;
}

int tref_same_clamped_k(const tref *R, int a, int b)
{
    double x[TREF_MAXW], y[TREF_MAXW];
    tref_row(R, a, x);
    tref_row(R, b, y);
    return tref_same_clamped(R, x, y);
}

/* Input of unit j of layer l from its neighbours in x (ebm.h:
 * ebm_model_layer_input); for a Gaussian layer 0, its conditional mean. */
double tref_input(const tref *R, int l, const double *x, int j)
{
    double a = R->b[l][j];
    if (l >= 1) {
        for (int i = 0; i < R->n[l - 1]; i++) {
            double xi = x[R->off[l - 1] + i];
            if (l == 1 && R->units[0] == G_) {
                xi *= exp(-R->logvar[i]);
            }
            a += xi * R->W[l][i * R->n[l] + j];
        }
    }
    if (l + 1 < R->nl) {
        for (int k = 0; k < R->n[l + 1]; k++) {
            a += R->W[l + 1][j * R->n[l + 1] + k] * x[R->off[l + 1] + k];
        }
    }
    return a;
}

/* p(unit = 1 or +1 | input a) */
double tref_up(const tref *R, int l, double a)
{
    return R->units[l] == S_ ? ref_sigmoid(2.0 * a) : ref_sigmoid(a);
}

double tref_energy(const tref *R, const double *x)
{
    double e = 0.0;
    for (int l = 0; l < R->nl; l++) {
        for (int j = 0; j < R->n[l]; j++) {
            double v = x[R->off[l] + j];
            if (R->units[l] == G_) {
                double d = v - R->b[l][j];
                e += 0.5 * d * d * exp(-R->logvar[j]);
            } else {
                e -= R->b[l][j] * v;
            }
        }
    }
    for (int l = 1; l < R->nl; l++) {
        for (int i = 0; i < R->n[l - 1]; i++) {
            double xi = x[R->off[l - 1] + i];
            if (l == 1 && R->units[0] == G_) {
                xi *= exp(-R->logvar[i]);
            }
            for (int j = 0; j < R->n[l]; j++) {
                e -= xi * R->W[l][i * R->n[l] + j] * x[R->off[l] + j];
            }
        }
    }
    return e;
}

static uint32_t tref_free(const tref *R, int parity)
{
    uint32_t mask = 0;
    for (int l = parity; l < R->nl; l += 2) {
        mask |= 1u << l;
    }
    return mask & ~R->clamp;
}

void tref_blocks(const tref *R, uint32_t *b1, uint32_t *b2)
{
    uint32_t e = tref_free(R, 0), o = tref_free(R, 1);
    *b1 = e != 0 ? e : o;
    *b2 = e != 0 ? o : 0;
}

int tref_cols(const tref *R, uint32_t mask, int *cols)
{
    int c = 0;
    for (int l = 0; l < R->nl; l++) {
        if (mask >> l & 1u) {
            T_ASSERT_MSG(R->units[l] != G_, "the reference enumerates discrete free layers only");
            for (int j = 0; j < R->n[l]; j++) {
                cols[c++] = R->off[l] + j;
            }
        }
    }
    return c;
}

/* p(up) of each column of cols given the neighbours in src. */
static void tref_ups(const tref *R, const int *cols, int nc, const double *src, double *q)
{
    for (int i = 0; i < nc; i++) {
        int l = R->layer_of[cols[i]];
        q[i] = tref_up(R, l, tref_input(R, l, src, R->unit_of[cols[i]]));
    }
}

/* prod over cols of p(dst value | neighbours in src) */
static double tref_cols_prob(const tref *R, const int *cols, int nc, const double *src,
                            const double *dst)
{
    double q[TREF_MAXW], p = 1.0;
    tref_ups(R, cols, nc, src, q);
    for (int i = 0; i < nc; i++) {
        p *= tref_up_bit(dst[cols[i]]) ? q[i] : 1.0 - q[i];
    }
    return p;
}

/* Probability of configuration a (bit i = column i) under independent p(up)s. */
static double tref_config_prob(const double *q, int nc, int a)
{
    double p = 1.0;
    for (int i = 0; i < nc; i++) {
        p *= (a >> i & 1) ? q[i] : 1.0 - q[i];
    }
    return p;
}

static void tref_set_config(const tref *R, const int *cols, int nc, int a, double *x)
{
    for (int i = 0; i < nc; i++) {
        int bit = a >> i & 1;
        x[cols[i]] = R->units[R->layer_of[cols[i]]] == S_ ? (bit ? 1.0 : -1.0) : (double)bit;
    }
}

static double tref_gibbs(const tref *R, const double *x, const double *y)
{
    if (!tref_same_clamped(R, x, y)) {
        return 0.0;
    }
    uint32_t b1, b2;
    tref_blocks(R, &b1, &b2);
    int c1[TREF_MAXW], c2[TREF_MAXW];
    int n1 = tref_cols(R, b1, c1), n2 = tref_cols(R, b2, c2);
    return tref_cols_prob(R, c1, n1, x, y) * tref_cols_prob(R, c2, n2, y, y);
}

/* Configurations of the free units. */
double tref_mh_states(const tref *R)
{
    uint32_t b1, b2;
    tref_blocks(R, &b1, &b2);
    int c[TREF_MAXW];
    return ldexp(1.0, tref_cols(R, b1 | b2, c));
}

double tref_accept(const tref *R, const double *x, const double *z)
{
    return fmin(1.0, exp(tref_energy(R, x) - tref_energy(R, z)));
}

/* The kernel's transition matrix P[x * S + y]. */
void tref_matrix(const tref *R, int kind, double *P)
{
    const int S = R->S;
    const double M = tref_mh_states(R);
    for (int k = 0; k < S; k++) {
        double x[TREF_MAXW], y[TREF_MAXW], off = 0.0;
        tref_row(R, k, x);
        for (int k2 = 0; k2 < S; k2++) {
            tref_row(R, k2, y);
            if (kind == EBM_SAMPLER_GIBBS) {
                P[k * S + k2] = tref_gibbs(R, x, y);
            } else if (k2 != k) {
                P[k * S + k2] = tref_same_clamped(R, x, y) ? tref_accept(R, x, y) / M : 0.0;
                off += P[k * S + k2];
            }
        }
        if (kind != EBM_SAMPLER_GIBBS) {
            P[k * S + k] = 1.0 - off;
        }
    }
}

/* pi over the states with the clamped values of state k0. */
void tref_pi(const tref *R, int k0, double *pi)
{
    double emin = INFINITY, x[TREF_MAXW], z = 0.0;
    for (int k = 0; k < R->S; k++) {
        tref_row(R, k, x);
        emin = fmin(emin, tref_energy(R, x));
    }
    for (int k = 0; k < R->S; k++) {
        tref_row(R, k, x);
        pi[k] = tref_same_clamped_k(R, k, k0) ? exp(emin - tref_energy(R, x)) : 0.0;
        z += pi[k];
    }
    for (int k = 0; k < R->S; k++) {
        pi[k] /= z;
    }
}

/* Joint law of the pair of B1 draws unit by unit from common uniforms:
 * the comonotone coupling of Bernoulli(qx) and Bernoulli(qy). */
static double tref_comono(double qx, double qy, int bx, int by)
{
    if (bx && by) {
        return fmin(qx, qy);
    }
    if (bx) {
        return fmax(0.0, qx - qy);
    }
    if (by) {
        return fmax(0.0, qy - qx);
    }
    return 1.0 - fmax(qx, qy);
}

/*
 * The maximal coupling of two product-Bernoulli laws over one block of nc
 * units (p(up) ux and uy), by rejection as the library draws it: p1(a) and
 * p2(a) over the 2^nc configurations; mn[a] = min(p1(a), p2(a)) is the
 * meeting mass; pb[a * A + b] (A = 2^nc) the law of the pair off the
 * meeting event, of total mass TV = 1 - sum_a mn[a]; mom the mean and
 * variance of the number of rejection tries of a pair that did not meet.
 *   crn = 0 (MAXIMAL): x keeps its first draw, y tries until it accepts:
 *   the pair ~ r1(a) r2(b) with r1 = (p1 - mn)/TV, r2 = (p2 - mn)/TV, the
 *   tries Geometric(TV).
 *   crn = 1: each rejection try proposes (a, b) from the comonotone
 *   coupling Q (common uniforms), x accepts a with f(a) = 1 - min(1,
 *   p2(a)/p1(a)) and y accepts b with g(b) = 1 - min(1, p1(b)/p2(b)),
 *   independently; a chain that has accepted stops proposing. With Both =
 *   Q f g, X-only = sum_b Q f (1-g), Y-only = sum_a Q (1-f) g, Neither =
 *   sum Q (1-f)(1-g), the pair accepted is (a, b) with probability
 *     [Both(a,b) + Xonly(a) r2(b) + Yonly(b) r1(a)] / (1 - Neither);
 *   the tries are a Geometric(1 - Neither) until one chain accepts, then
 *   with probability (Xonly + Yonly)/(1 - Neither) a Geometric(TV) more for
 *   the other (each chain accepts a try with probability TV).
 * Returns TV (0 when below 1e-14: pb and mom are then 0).
 */
static double tref_block_pair(const double *ux, const double *uy, int nc, int crn, double *mn,
                              double *pb, double mom[2])
{
    const int A = 1 << nc;
    double *p1 = t_malloc((size_t)A * sizeof *p1), *p2 = t_malloc((size_t)A * sizeof *p2);
    double ov = 0.0;
    for (int a = 0; a < A; a++) {
        p1[a] = tref_config_prob(ux, nc, a);
        p2[a] = tref_config_prob(uy, nc, a);
        mn[a] = fmin(p1[a], p2[a]);
        ov += mn[a];
    }
    memset(pb, 0, (size_t)A * A * sizeof *pb);
    mom[0] = mom[1] = 0.0;
    double tv = 1.0 - ov;
    if (tv <= 1e-14) {
        free(p1);
        free(p2);
        return 0.0;
    }
    if (!crn) {
        mom[0] = 1.0 / tv;
        mom[1] = (1.0 - tv) / (tv * tv);
        for (int a = 0; a < A; a++) {
            for (int b = 0; b < A; b++) {
                pb[a * A + b] = (p1[a] - mn[a]) * (p2[b] - mn[b]) / tv;
            }
        }
        free(p1);
        free(p2);
        return tv;
    }
    double *q = t_malloc((size_t)A * A * sizeof *q), *f = t_malloc((size_t)A * sizeof *f);
    double *g = t_malloc((size_t)A * sizeof *g), *xo = t_calloc((size_t)A, sizeof *xo);
    double *yo = t_calloc((size_t)A, sizeof *yo), neither = 0.0;
    for (int a = 0; a < A; a++) {
        f[a] = p1[a] > 0.0 ? (p1[a] - mn[a]) / p1[a] : 0.0;
        g[a] = p2[a] > 0.0 ? (p2[a] - mn[a]) / p2[a] : 0.0;
    }
    for (int a = 0; a < A; a++) {
        for (int b = 0; b < A; b++) {
            double qq = 1.0;
            for (int i = 0; i < nc; i++) {
                qq *= tref_comono(ux[i], uy[i], a >> i & 1, b >> i & 1);
            }
            q[a * A + b] = qq;
            xo[a] += qq * f[a] * (1.0 - g[b]);
            yo[b] += qq * (1.0 - f[a]) * g[b];
            neither += qq * (1.0 - f[a]) * (1.0 - g[b]);
        }
    }
    double xy = 0.0;
    for (int a = 0; a < A; a++) {
        xy += xo[a] + yo[a];
    }
    const double p1s = 1.0 - neither, one = xy / p1s;
    const double e1 = 1.0 / p1s, e1s = (2.0 - p1s) / (p1s * p1s);
    const double e2 = 1.0 / tv, e2s = (2.0 - tv) / (tv * tv);
    mom[0] = e1 + one * e2;
    mom[1] = e1s + 2.0 * e1 * one * e2 + one * e2s - mom[0] * mom[0];
    for (int a = 0; a < A; a++) {
        for (int b = 0; b < A; b++) {
            double both = q[a * A + b] * f[a] * g[b];
            double r1 = (p1[a] - mn[a]) / tv, r2 = (p2[b] - mn[b]) / tv;
            pb[a * A + b] = tv * (both + xo[a] * r2 + yo[b] * r1) / (1.0 - neither);
        }
    }
    free(q);
    free(f);
    free(g);
    free(xo);
    free(yo);
    free(p1);
    free(p2);
    return tv;
}

/*
 * The exact law J[kx * S + ky] of one coupled Gibbs step from the states
 * kx0 (x) and ky0 (y), which have the same clamped values.
 *
 * B1 by tref_block_pair (crn unless MAXIMAL). Meeting: B1 = a for both
 * with mass mn(a), then one B2 for both. Off the meeting event, B1 = (a, b)
 * with mass pb(a, b), then B2 given a for x and given b for y:
 *   MAXIMAL: independent draws; CRN: common uniforms (comonotone unit by
 *   unit); BLOCKWISE: tref_block_pair with crn = 1 again, whose meeting
 *   leaves B2 equal in both chains (they meet at the next step).
 * tries (NULL or [2]): MAXIMAL and CRN, B1's mom (a pair that did not meet
 * makes one loop). BLOCKWISE makes a loop per block that did not meet, and
 * EBM_STAT_TRIES_MEAN is a ratio: the sum of the tries T over the loops L
 * of n rows, of limit m = E T / E L; tries[0] = m, and tries[1] = TV1 x an
 * upper bound on Var(T - m L) / (E L)^2 (Var(X + Y) <= 2 E X^2 + 2 E Y^2
 * for the two blocks' parts), so that tries[1] / (n TV1) bounds the
 * variance of the stat as mom[1] / (n TV1) is that of B1's mean.
 */
void tref_coupled_gibbs(const tref *R, int coupling, int kx0, int ky0, double *J,
                              double *tries)
{
    const int S = R->S;
    double x0[TREF_MAXW], y0[TREF_MAXW];
    tref_row(R, kx0, x0);
    tref_row(R, ky0, y0);
    T_ASSERT(tref_same_clamped(R, x0, y0));
    uint32_t b1, b2;
    tref_blocks(R, &b1, &b2);
    int c1[TREF_MAXW], c2[TREF_MAXW];
    const int n1 = tref_cols(R, b1, c1), n2 = tref_cols(R, b2, c2);
    const int A = 1 << n1, D = 1 << n2;
    double ux[TREF_MAXW], uy[TREF_MAXW];
    tref_ups(R, c1, n1, x0, ux);
    tref_ups(R, c1, n1, y0, uy);
    double *mn = t_malloc((size_t)A * sizeof *mn), *pb = t_malloc((size_t)A * A * sizeof *pb);
    double *mn2 = t_malloc((size_t)D * sizeof *mn2), *pb2 = t_malloc((size_t)D * D * sizeof *pb2);
    double *vx = t_malloc((size_t)A * TREF_MAXW * sizeof *vx),
           *vy = t_malloc((size_t)A * TREF_MAXW * sizeof *vy);
    double mom[2], mom2[2];
    const double tv = tref_block_pair(ux, uy, n1, coupling != EBM_COUPLING_MAXIMAL, mn, pb, mom);
    for (int a = 0; a < A; a++) {
        double xa[TREF_MAXW], ya[TREF_MAXW];
        memcpy(xa, x0, sizeof xa);
        memcpy(ya, y0, sizeof ya);
        tref_set_config(R, c1, n1, a, xa);
        tref_set_config(R, c1, n1, a, ya);
        tref_ups(R, c2, n2, xa, vx + a * TREF_MAXW); /* B2 p(up) after B1 = a */
        tref_ups(R, c2, n2, ya, vy + a * TREF_MAXW);
    }
    memset(J, 0, (size_t)S * S * sizeof *J);
    /* Meeting. */
    for (int a = 0; a < A; a++) {
        for (int d = 0; d < D; d++) {
            double z[TREF_MAXW];
            memcpy(z, x0, sizeof z);
            tref_set_config(R, c1, n1, a, z);
            tref_set_config(R, c2, n2, d, z);
            int s = tref_index(R, z);
            J[s * S + s] += mn[a] * tref_config_prob(vx + a * TREF_MAXW, n2, d);
        }
    }
    /* Off it: T and L of BLOCKWISE (per row, expectations and E X^2, E Y^2). */
    double et = tv * mom[0], el = tv, ey2 = 0.0;
    struct loop2 { double w, e, v; } *loop2 = t_malloc((size_t)A * A * sizeof *loop2);
    int nloop2 = 0;
    for (int a = 0; a < A; a++) {
        for (int b = 0; b < A; b++) {
            if (pb[a * A + b] <= 0.0) {
                continue;
            }
            const double *qx = vx + a * TREF_MAXW, *qy = vy + b * TREF_MAXW;
            if (coupling == EBM_COUPLING_BLOCKWISE) {
                double tv2 = tref_block_pair(qx, qy, n2, 1, mn2, pb2, mom2);
                et += pb[a * A + b] * tv2 * mom2[0];
                el += pb[a * A + b] * tv2;
                loop2[nloop2].w = pb[a * A + b] * tv2;
                loop2[nloop2].e = mom2[0];
                loop2[nloop2++].v = mom2[1];
            }
            for (int d = 0; d < D; d++) {
                for (int e = 0; e < D; e++) {
                    double pde;
                    if (coupling == EBM_COUPLING_MAXIMAL) {
                        pde = tref_config_prob(qx, n2, d) * tref_config_prob(qy, n2, e);
                    } else if (coupling == EBM_COUPLING_CRN) {
                        pde = 1.0;
                        for (int i = 0; i < n2; i++) {
                            pde *= tref_comono(qx[i], qy[i], d >> i & 1, e >> i & 1);
                        }
                    } else {
                        pde = (d == e ? mn2[d] : 0.0) + pb2[d * D + e];
                    }
                    double zx[TREF_MAXW], zy[TREF_MAXW];
                    memcpy(zx, x0, sizeof zx);
                    memcpy(zy, y0, sizeof zy);
                    tref_set_config(R, c1, n1, a, zx);
                    tref_set_config(R, c2, n2, d, zx);
                    tref_set_config(R, c1, n1, b, zy);
                    tref_set_config(R, c2, n2, e, zy);
                    J[tref_index(R, zx) * S + tref_index(R, zy)] += pb[a * A + b] * pde;
                }
            }
        }
    }
    if (tries != NULL) {
        tries[0] = mom[0];
        tries[1] = mom[1];
        if (coupling == EBM_COUPLING_BLOCKWISE && el > 0.0) {
            const double m = et / el;
            const double ex2 = tv * (mom[1] + (mom[0] - m) * (mom[0] - m));
            for (int i = 0; i < nloop2; i++) {
                ey2 += loop2[i].w * (loop2[i].v + (loop2[i].e - m) * (loop2[i].e - m));
            }
            tries[0] = m;
            tries[1] = tv * 2.0 * (ex2 + ey2) / (el * el);
        }
    }
    free(loop2);
    free(mn);
    free(pb);
    free(mn2);
    free(pb2);
    free(vx);
    free(vy);
}

/* The exact law of one coupled MH step (common proposal z, common u). */
void tref_coupled_mh(const tref *R, int kx0, int ky0, double *J)
{
    const int S = R->S;
    const double M = tref_mh_states(R);
    double x0[TREF_MAXW], y0[TREF_MAXW], z[TREF_MAXW];
    tref_row(R, kx0, x0);
    tref_row(R, ky0, y0);
    T_ASSERT(tref_same_clamped(R, x0, y0));
    memset(J, 0, (size_t)S * S * sizeof *J);
    for (int k = 0; k < S; k++) {
        tref_row(R, k, z);
        if (!tref_same_clamped(R, x0, z)) {
            continue;
        }
        double ax = tref_accept(R, x0, z), ay = tref_accept(R, y0, z);
        if (kx0 == ky0) {
            J[k * S + k] += ax / M;
            J[kx0 * S + kx0] += (1.0 - ax) / M;
            continue;
        }
        double lo = fmin(ax, ay), hi = fmax(ax, ay);
        J[k * S + k] += lo / M;
        J[k * S + ky0] += (ax - lo) / M;
        J[kx0 * S + k] += (ay - lo) / M;
        J[kx0 * S + ky0] += (1.0 - hi) / M;
    }
}

/* variant: an enum ebm_coupling of Gibbs, or TREF_MH */
const char *const TREF_VARIANT_NAME[TREF_N_VARIANTS] = {"Gibbs MAXIMAL", "Gibbs CRN",
                                                        "Gibbs BLOCKWISE", "MH_UNIFORM"};

void tref_joint(const tref *R, int variant, int kx0, int ky0, double *J)
{
    if (variant == TREF_MH) {
        tref_coupled_mh(R, kx0, ky0, J);
    } else {
        tref_coupled_gibbs(R, variant, kx0, ky0, J, NULL);
    }
}

/* ------------------------------------------------------------------------ */
/* Tiny models                                                              */
/* ------------------------------------------------------------------------ */

const tref_mspec TREF_MODELS[TREF_N_MODELS] = {
    {"binary RBM 3x2", 2, {3, 2, 0}, B_, B_, 0, 1101, 1.5},
    {"spin RBM 3x2", 2, {3, 2, 0}, S_, S_, 0, 1102, 0.8},
    {"binary DBM 2-2-2", 3, {2, 2, 2}, B_, B_, 0, 1103, 1.5},
    {"spin DBM 2-2-2", 3, {2, 2, 2}, S_, S_, 0, 1104, 0.8},
    {"binary DBM 2-2-2, visible clamped", 3, {2, 2, 2}, B_, B_, 1, 1105, 1.5},
    {"spin DBM 2-2-2, visible clamped", 3, {2, 2, 2}, S_, S_, 1, 1106, 0.8},
    {"binary RBM 3x2, visible clamped", 2, {3, 2, 0}, B_, B_, 1, 1107, 1.5},
    {"binary DBM 2-2-2, layer 1 clamped", 3, {2, 2, 2}, B_, B_, 2, 1108, 1.5},
    {"GRBM 2x2, visible clamped (posterior)", 2, {2, 2, 0}, G_, B_, 1, 1109, 1.0},
};

/* Values of the clamped Gaussian visible units of the GRBM posterior. */
static const float TREF_GBASE[TREF_MAXW] = {0.7f, -1.3f};

/* The highest layer that moves: its unit 0's bias is set to 0.9 (the broken
 * twins flip its sign). */
int tref_top_free_layer(const tref_mspec *ms)
{
    int l = ms->nl - 1;
    while (ms->clamp >> l & 1u) {
        l--;
    }
    return l;
}

ebm_model_t *tref_make_model(const tref_mspec *ms)
{
    ebm_model_t *m = t_model(ms->nl, ms->sizes, ms->vis, ms->hid);
    t_random_params(m, ms->seed, ms->scale);
    int64_t np = ebm_model_param_count(m), o;
    float *p = t_malloc((size_t)np * sizeof *p);
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    ck_assert_int_eq(
        ebm_model_param_block(m, EBM_PARAM_BIAS, tref_top_free_layer(ms), &o, NULL, NULL), EBM_OK);
    p[o] = 0.9f;
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    free(p);
    return m;
}

void tref_load_model(const tref_mspec *ms, const ebm_model_t *m, tref *R)
{
    tref_load(R, m, ms->clamp, ms->vis == G_ ? TREF_GBASE : NULL);
}

/* Fill n rows (stride w) with state k. */
void tref_fill_rows(const tref *R, int k, int64_t n, float *x)
{
    float row[TREF_MAXW];
    tref_row_f(R, k, row);
    for (int64_t r = 0; r < n; r++) {
        memcpy(x + r * R->width, row, (size_t)R->width * sizeof *x);
    }
}

/*
 * The pair (x_t, y_{t-1}) is a Markov chain on S x S whose step is the
 * coupled law J; the meeting time tau is its hitting time of the diagonal.
 * law[t-1] = P(tau = t) for t = 1..tmax; returns P(tau > tmax).
 */
double tref_meeting_law(const tref *R, int variant, int kx0, int ky0, double *law, int tmax)
{
    const int S = R->S, SS = S * S;
    double *K = t_malloc((size_t)SS * SS * sizeof *K);
    for (int a = 0; a < S; a++) {
        for (int b = 0; b < S; b++) {
            if (a != b && tref_same_clamped_k(R, a, b)) {
                tref_joint(R, variant, a, b, K + (size_t)(a * S + b) * SS);
            }
        }
    }
    double *d = t_calloc((size_t)SS, sizeof *d), *nd = t_malloc((size_t)SS * sizeof *nd);
    d[kx0 * S + ky0] = 1.0;
    double rest = 1.0;
    for (int t = 1; t <= tmax; t++) {
        memset(nd, 0, (size_t)SS * sizeof *nd);
        for (int i = 0; i < SS; i++) {
            if (d[i] > 0.0) {
                const double *k = K + (size_t)i * SS;
                for (int j = 0; j < SS; j++) {
                    nd[j] += d[i] * k[j];
                }
            }
        }
        law[t - 1] = 0.0;
        rest = 0.0;
        for (int a = 0; a < S; a++) {
            law[t - 1] += nd[a * S + a];
            nd[a * S + a] = 0.0;
        }
        for (int i = 0; i < SS; i++) {
            rest += nd[i];
        }
        memcpy(d, nd, (size_t)SS * sizeof *d);
    }
    free(K);
    free(d);
    free(nd);
    return rest;
}

/* Gaussian visible (mu, logvar), binary hidden: p(v | h) = N(mu + W h,
 * sigma^2), p(h_j = 1 | v) = sigmoid(c_j + sum_i W_ij v_i / sigma_i^2). */
ebm_model_t *tref_make_grbm(tref *R)
{
    static const int64_t sizes[2] = {2, 2};
    ebm_model_t *m = t_model(2, sizes, G_, B_);
    int64_t np = ebm_model_param_count(m), ow, omu, oc, olv;
    float *p = t_calloc((size_t)np, sizeof *p);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_WEIGHT, 1, &ow, NULL, NULL), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, 0, &omu, NULL, NULL), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, 1, &oc, NULL, NULL), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &olv, NULL, NULL), EBM_OK);
    const float W[4] = {0.8f, -0.4f, 0.5f, 1.2f};
    memcpy(p + ow, W, sizeof W);
    p[omu] = 0.3f;
    p[omu + 1] = -0.2f;
    p[oc] = 0.1f;
    p[oc + 1] = -0.3f;
    p[olv] = (float)log(0.5);
    p[olv + 1] = (float)log(2.0);
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    free(p);
    tref_load(R, m, 0, NULL);
    return m;
}

/* Standardised visible values s_i = (v_i - m_i) / sigma_i of the rows,
 * checked to be iid N(0, 1): mean and variance z-scores, a 40-bin
 * chi-square on Phi(s_i), the correlation of s_0 and s_1; fails below
 * alpha (chi-square) or at |z| >= 5. */
void tref_check_normal(const char *what, const tref *R, int64_t n, const float *x,
                         const double *mean, double alpha)
{
    enum { NB = 40 };
    double s1[2] = {0, 0}, s2[2] = {0, 0}, s01 = 0.0, cnt[2][NB], prob[NB];
    memset(cnt, 0, sizeof cnt);
    for (int b = 0; b < NB; b++) {
        prob[b] = 1.0 / NB;
    }
    for (int64_t r = 0; r < n; r++) {
        double z[2];
        for (int i = 0; i < 2; i++) {
            z[i] = ((double)x[r * R->width + i] - mean[i]) / exp(0.5 * R->logvar[i]);
            s1[i] += z[i];
            s2[i] += z[i] * z[i];
            int b = (int)(ref_phi(z[i]) * NB);
            cnt[i][b < NB ? b : NB - 1] += 1.0;
        }
        s01 += z[0] * z[1];
    }
    char buf[240];
    for (int i = 0; i < 2; i++) {
        double mz = s1[i] / sqrt((double)n), var = s2[i] / n - (s1[i] / n) * (s1[i] / n);
        double vz = (var - 1.0) / sqrt(2.0 / n);
        T_VLOG("  %s, unit %d: mean z %.2f, variance %.4f (z %.2f)\n", what, i, mz, var, vz);
        T_ASSERT_MSG(fabs(mz) < 5.0, "%s unit %d: mean z-score %.2f", what, i, mz);
        T_ASSERT_MSG(fabs(vz) < 5.0, "%s unit %d: variance %.4f, z-score %.2f", what, i, var, vz);
        snprintf(buf, sizeof buf, "%s, unit %d, 40 bins of Phi(s)", what, i);
        ref_expect_fit(buf, cnt[i], prob, NB, (double)n, alpha);
    }
    double cz = s01 / sqrt((double)n);
    T_ASSERT_MSG(fabs(cz) < 5.0, "%s: correlation z-score %.2f", what, cz);
}

/* E[h'_j - p(h_j = 1 | v')] = 0 for draws h' ~ p(h | v'). */
void tref_check_hidden(const char *what, const tref *R, int64_t n, const float *x)
{
    for (int j = 0; j < 2; j++) {
        double s = 0.0, v = 0.0;
        for (int64_t r = 0; r < n; r++) {
            double row[TREF_MAXW];
            for (int c = 0; c < R->width; c++) {
                row[c] = x[r * R->width + c];
            }
            float h = x[r * R->width + 2 + j];
            T_ASSERT_MSG(h == 0.0f || h == 1.0f, "%s: h = %g", what, (double)h);
            double q = tref_up(R, 1, tref_input(R, 1, row, j));
            s += h - q;
            v += q * (1.0 - q);
        }
        double z = s / sqrt(v);
        T_VLOG("  %s: h_%d given v' z %.2f\n", what, j, z);
        T_ASSERT_MSG(fabs(z) < 5.0, "%s: h_%d does not follow p(h | v'): z = %.2f", what, j, z);
    }
}

void tref_grbm_mean(const tref *R, const float *row, double *m)
{
    double d[TREF_MAXW];
    for (int c = 0; c < R->width; c++) {
        d[c] = row[c];
    }
    m[0] = tref_input(R, 0, d, 0);
    m[1] = tref_input(R, 0, d, 1);
}
