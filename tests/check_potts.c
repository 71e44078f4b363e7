/* Categorical (Potts) visible units (ebm_model_create_potts, ebm.h).
 *
 * The reference here enumerates one-hot configurations itself: a visible
 * state is a vector of categories, one per site, written one-hot; the
 * energy is ebm.h's formula -b.x - x^T W h - ... in double.
 *
 * 1. exact: energies, free energies with the visible or the first hidden
 *    layer summed out, log Z and log p(v) against enumeration, on RBMs and
 *    a DBM with q = 2, 3, 5; the binary identity (q = 2 is a binary layer
 *    whose biases and weights are the differences of the two categories'),
 *    with its twin (the categories swapped).
 * 2. conditionals: means, log-probabilities and argmins of the visible
 *    layer against the exact conditional law; a hidden layer given Potts
 *    visible states.
 * 3. draws: one Gibbs sweep's visible law from a fixed state by chi-square
 *    (false failure below 1e-6), and its twin (a bias flipped) rejected;
 *    random states uniform over categories.
 * 4. AIS: within 4 standard errors of the exact log Z (fixed seeds; a
 *    normal tail of 6e-5 per comparison), from uniform sites and from a
 *    base; the twin (a flipped bias) outside.
 * 5. bad input: non-one-hot states with their messages, bad shapes and
 *    categories, the calls not yet supported; nothing changes.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct potts_spec {
    const char *name;
    int nl;
    int64_t sizes[3]; /* sizes[0] = sites x q */
    int64_t q;
    int hid;
    double scale;
} potts_spec;

static const potts_spec SPECS[] = {
    {"Potts RBM 3 sites x q 3, 2 binary hidden", 2, {9, 2, 0}, 3, EBM_UNITS_BINARY, 1.0},
    {"Potts RBM 2 sites x q 5, 3 spin hidden", 2, {10, 3, 0}, 5, EBM_UNITS_SPIN, 0.8},
    {"Potts RBM 4 sites x q 2, 2 binary hidden", 2, {8, 2, 0}, 2, EBM_UNITS_BINARY, 1.5},
    {"Potts DBM 2 sites x q 3, 2-2 binary hidden", 3, {6, 2, 2}, 3, EBM_UNITS_BINARY, 1.0},
    /* fewer visible configurations (9) than hidden ones (32): log Z
     * enumerates the sites */
    {"Potts RBM 2 sites x q 3, 5 binary hidden", 2, {6, 5, 0}, 3, EBM_UNITS_BINARY, 1.0},
};
#define N_SPECS ((int)(sizeof SPECS / sizeof SPECS[0]))

/* The model of a spec with random parameters. */
static ebm_model_t *potts_model(const potts_spec *s, uint64_t seed)
{
    ebm_model_t *m = NULL;
    char err[256] = "";
    ck_assert_msg(ebm_model_create_potts(&m, s->nl, s->sizes, s->q, s->hid, err, sizeof err) ==
                      EBM_OK,
                  "%s: %s", s->name, err);
    t_random_params(m, seed, s->scale);
    return m;
}

/* ---- the reference ------------------------------------------------------------------ */

typedef struct pref {
    const ebm_model_t *m;
    int nl;
    int64_t n[3], off[3], q, sites, width;
    int hid;
    double *p; /* parameters in double */
    int64_t woff[3], boff[3];
} pref;

static void pref_init(pref *R, const ebm_model_t *m, const potts_spec *s)
{
    memset(R, 0, sizeof *R);
    R->m = m;
    R->nl = s->nl;
    R->q = s->q;
    R->sites = s->sizes[0] / s->q;
    R->hid = s->hid;
    R->width = ebm_model_state_width(m);
    for (int l = 0; l < s->nl; l++) {
        R->n[l] = s->sizes[l];
        R->off[l] = ebm_model_layer_offset(m, l);
        ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, l, &R->boff[l], NULL, NULL),
                         EBM_OK);
        if (l > 0) {
            ck_assert_int_eq(
                ebm_model_param_block(m, EBM_PARAM_WEIGHT, l, &R->woff[l], NULL, NULL), EBM_OK);
        }
    }
    const int64_t np = ebm_model_param_count(m);
    float *pf = t_floats(np);
    ck_assert_int_eq(ebm_model_get_params(m, pf), EBM_OK);
    R->p = malloc((size_t)np * sizeof *R->p);
    ck_assert_ptr_nonnull(R->p);
    for (int64_t i = 0; i < np; i++) {
        R->p[i] = pf[i];
    }
    free(pf);
}

/* Visible configuration k (a category per site, mixed radix) one-hot into x. */
static void pref_visible(const pref *R, uint64_t k, float *x)
{
    for (int64_t i = 0; i < R->sites; i++, k /= (uint64_t)R->q) {
        for (int64_t a = 0; a < R->q; a++) {
            x[R->off[0] + i * R->q + a] = (uint64_t)a == k % (uint64_t)R->q ? 1.0f : 0.0f;
        }
    }
}

/* Hidden configuration k (bits, layer 1 first) into x. */
static void pref_hidden(const pref *R, uint64_t k, float *x)
{
    for (int l = 1; l < R->nl; l++) {
        for (int64_t j = 0; j < R->n[l]; j++, k >>= 1) {
            x[R->off[l] + j] = (k & 1u) ? 1.0f : (R->hid == EBM_UNITS_SPIN ? -1.0f : 0.0f);
        }
    }
}

static uint64_t pref_visible_count(const pref *R)
{
    uint64_t c = 1;
    for (int64_t i = 0; i < R->sites; i++) {
        c *= (uint64_t)R->q;
    }
    return c;
}

static uint64_t pref_hidden_count(const pref *R)
{
    int64_t bits = 0;
    for (int l = 1; l < R->nl; l++) {
        bits += R->n[l];
    }
    return UINT64_C(1) << bits;
}

/* E(x) = -sum_l b_l.x_l - sum_l x_{l-1}^T W_l x_l, in double. */
static double pref_energy(const pref *R, const float *x)
{
    double e = 0.0;
    for (int l = 0; l < R->nl; l++) {
        for (int64_t j = 0; j < R->n[l]; j++) {
            e -= R->p[R->boff[l] + j] * x[R->off[l] + j];
        }
        for (int64_t i = 0; l > 0 && i < R->n[l - 1]; i++) {
            for (int64_t j = 0; j < R->n[l]; j++) {
                e -= x[R->off[l - 1] + i] * R->p[R->woff[l] + i * R->n[l] + j] *
                     x[R->off[l] + j];
            }
        }
    }
    return e;
}

static double lse_add(double acc, double t)
{
    if (acc == -INFINITY) {
        return t;
    }
    return acc > t ? acc + log1p(exp(t - acc)) : t + log1p(exp(acc - t));
}

/* -log sum over the visible (which = 0) or hidden (which = 1) configurations
 * of exp(-E), the other part of x kept. */
static double pref_free(const pref *R, int which, const float *x0)
{
    float *x = t_floats(R->width);
    memcpy(x, x0, (size_t)R->width * sizeof *x);
    double acc = -INFINITY;
    const uint64_t count = which == 0 ? pref_visible_count(R) : pref_hidden_count(R);
    for (uint64_t k = 0; k < count; k++) {
        if (which == 0) {
            pref_visible(R, k, x);
        } else {
            pref_hidden(R, k, x);
        }
        acc = lse_add(acc, -pref_energy(R, x));
    }
    free(x);
    return -acc;
}

static double pref_log_z(const pref *R)
{
    float *x = t_floats(R->width);
    double acc = -INFINITY;
    for (uint64_t k = 0; k < pref_visible_count(R); k++) {
        pref_visible(R, k, x);
        acc = lse_add(acc, -pref_free(R, 1, x));
    }
    free(x);
    return acc;
}

/* ---- 1. exact ----------------------------------------------------------------------- */

START_TEST(potts_exact)
{
    const potts_spec *s = &SPECS[_i];
    ebm_model_t *m = potts_model(s, 100 + (uint64_t)_i);
    pref R;
    pref_init(&R, m, s);
    ck_assert_int_eq(ebm_model_layer_units(m, 0), EBM_UNITS_POTTS);
    ck_assert_int_eq(ebm_model_layer_categories(m, 0), s->q);
    ck_assert_int_eq(ebm_model_layer_categories(m, 1), 1);
    const int64_t w = R.width, nv = (int64_t)pref_visible_count(&R);
    const int64_t nh = (int64_t)pref_hidden_count(&R);
    /* every joint configuration */
    float *x = t_floats(nv * nh * w);
    for (int64_t v = 0; v < nv; v++) {
        for (int64_t h = 0; h < nh; h++) {
            float *row = x + (v * nh + h) * w;
            pref_visible(&R, (uint64_t)v, row);
            pref_hidden(&R, (uint64_t)h, row);
        }
    }
    const int64_t n = nv * nh;
    double *e = malloc((size_t)n * sizeof *e), *f = malloc((size_t)n * sizeof *f);
    ck_assert_int_eq(ebm_model_energy(m, n, x, w, e), EBM_OK);
    double worst = 0.0;
    for (int64_t r = 0; r < n; r++) {
        worst = fmax(worst, fabs(e[r] - pref_energy(&R, x + r * w)));
    }
    ck_assert_msg(worst < 1e-12, "%s: energies off by %g", s->name, worst);
    /* F with the visible layer summed out, and with layer 1 (an RBM's
     * hidden layer; a DBM's middle layer) summed out */
    ck_assert_int_eq(ebm_model_free_energy(m, 1u, n, x, w, f), EBM_OK);
    worst = 0.0;
    for (int64_t r = 0; r < n; r += 3) {
        worst = fmax(worst, fabs(f[r] - pref_free(&R, 0, x + r * w)));
    }
    ck_assert_msg(worst < 1e-10, "%s: F with the sites summed out off by %g", s->name, worst);
    if (s->nl == 2) {
        ck_assert_int_eq(ebm_model_free_energy(m, 2u, n, x, w, f), EBM_OK);
        worst = 0.0;
        for (int64_t r = 0; r < n; r += nh) {
            worst = fmax(worst, fabs(f[r] - pref_free(&R, 1, x + r * w)));
        }
        ck_assert_msg(worst < 1e-10, "%s: F with h summed out off by %g", s->name, worst);
    }
    double log_z, want = pref_log_z(&R);
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &log_z), EBM_OK);
    ck_assert_msg(fabs(log_z - want) < 1e-10 * (1.0 + fabs(want)), "%s: log Z %.15g, want %.15g",
                  s->name, log_z, want);
    /* log p(v) of every visible configuration sums to 1 */
    float *v = t_floats(nv * R.n[0]);
    for (int64_t k = 0; k < nv; k++) {
        pref_visible(&R, (uint64_t)k, x);
        memcpy(v + k * R.n[0], x, (size_t)R.n[0] * sizeof *v);
    }
    double *ll = malloc((size_t)nv * sizeof *ll), total = 0.0;
    ck_assert_int_eq(ebm_model_log_likelihood(m, log_z, nv, v, R.n[0], ll), EBM_OK);
    for (int64_t k = 0; k < nv; k++) {
        pref_visible(&R, (uint64_t)k, x);
        const double lp = -pref_free(&R, 1, x) - want;
        ck_assert_msg(fabs(ll[k] - lp) < 1e-9, "%s: log p(v_%lld) %.12g, want %.12g", s->name,
                      (long long)k, ll[k], lp);
        total += exp(ll[k]);
    }
    ck_assert_msg(fabs(total - 1.0) < 1e-9, "%s: p(v) sums to %.15g", s->name, total);
    free(v);
    free(ll);
    free(x);
    free(e);
    free(f);
    free(R.p);
    ebm_model_destroy(m);
}
END_TEST

/* q = 2 is a binary layer: site i's unit z_i = x_(i,1) with bias b_i1 -
 * b_i0, weights W_(i1) - W_(i0), and the hidden biases plus sum_i W_(i0);
 * log p(v) agrees and log Z differs by sum_i b_i0. The twin swaps the
 * categories (z_i = x_(i,0)). */
START_TEST(potts_binary_identity)
{
    static const int64_t psizes[] = {8, 3}, bsizes[] = {4, 3};
    ebm_model_t *pm = NULL, *bm = NULL;
    ck_assert_int_eq(ebm_model_create_potts(&pm, 2, psizes, 2, EBM_UNITS_BINARY, NULL, 0), EBM_OK);
    ck_assert_int_eq(ebm_model_create(&bm, 2, bsizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, NULL, 0),
                     EBM_OK);
    t_random_params(pm, 71, 1.2);
    float pp[24 + 8 + 3], bp[12 + 4 + 3];
    ck_assert_int_eq(ebm_model_param_count(pm), 35);
    ck_assert_int_eq(ebm_model_get_params(pm, pp), EBM_OK);
    double b0sum = 0.0;
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 3; j++) {
            bp[i * 3 + j] = pp[(2 * i + 1) * 3 + j] - pp[(2 * i) * 3 + j];
        }
        bp[12 + i] = pp[24 + 2 * i + 1] - pp[24 + 2 * i];
        b0sum += pp[24 + 2 * i];
    }
    for (int j = 0; j < 3; j++) {
        double c = pp[32 + j];
        for (int i = 0; i < 4; i++) {
            c += pp[(2 * i) * 3 + j];
        }
        bp[16 + j] = (float)c;
    }
    ck_assert_int_eq(ebm_model_set_params(bm, bp), EBM_OK);
    double zp, zb;
    ck_assert_int_eq(ebm_model_log_partition_exact(pm, &zp), EBM_OK);
    ck_assert_int_eq(ebm_model_log_partition_exact(bm, &zb), EBM_OK);
    ck_assert_msg(fabs(zp - (zb + b0sum)) < 1e-5, "log Z %.9g vs %.9g + %.9g", zp, zb, b0sum);
    float pv[16 * 8], bv[16 * 4], tv[16 * 4];
    for (int k = 0; k < 16; k++) {
        for (int i = 0; i < 4; i++) {
            const int z = k >> i & 1;
            pv[k * 8 + 2 * i] = (float)(1 - z);
            pv[k * 8 + 2 * i + 1] = (float)z;
            bv[k * 4 + i] = (float)z;
            tv[k * 4 + i] = (float)(1 - z);
        }
    }
    double lp[16], lb[16], lt[16];
    ck_assert_int_eq(ebm_model_log_likelihood(pm, zp, 16, pv, 8, lp), EBM_OK);
    ck_assert_int_eq(ebm_model_log_likelihood(bm, zb, 16, bv, 4, lb), EBM_OK);
    ck_assert_int_eq(ebm_model_log_likelihood(bm, zb, 16, tv, 4, lt), EBM_OK);
    double worst = 0.0, twin = 0.0;
    for (int k = 0; k < 16; k++) {
        worst = fmax(worst, fabs(lp[k] - lb[k]));
        twin = fmax(twin, fabs(lp[k] - lt[k]));
    }
    ck_assert_msg(worst < 1e-5, "log p(v) differ by %g", worst);
    ck_assert_msg(twin > 0.1, "the twin (categories swapped) agrees: %g", twin);
    ebm_model_destroy(pm);
    ebm_model_destroy(bm);
}
END_TEST

/* ---- 2. conditionals ---------------------------------------------------------------- */

START_TEST(potts_conditionals)
{
    const potts_spec *s = &SPECS[_i];
    ebm_model_t *m = potts_model(s, 200 + (uint64_t)_i);
    pref R;
    pref_init(&R, m, s);
    const int64_t w = R.width, nv = (int64_t)pref_visible_count(&R), n0 = R.n[0], q = R.q;
    const int64_t nh = (int64_t)pref_hidden_count(&R);
    float *x = t_floats(nh * w), *mean = t_floats(nh * n0), *am = t_floats(nh * w);
    double *lp = malloc((size_t)nh * sizeof *lp);
    for (int64_t h = 0; h < nh; h++) {
        pref_visible(&R, 0, x + h * w);
        pref_hidden(&R, (uint64_t)h, x + h * w);
    }
    ck_assert_int_eq(ebm_model_layer_mean(m, 0, nh, x, w, mean, n0), EBM_OK);
    memcpy(am, x, (size_t)(nh * w) * sizeof *am);
    ck_assert_int_eq(ebm_model_layer_argmin(m, 0, nh, am, w), EBM_OK);
    float *y = t_floats(w);
    for (int64_t h = 0; h < nh; h++) {
        /* the exact conditional law of v given h: exp(-E) over v */
        double *pv = malloc((size_t)nv * sizeof *pv), zsum = 0.0, best = -INFINITY;
        int64_t arg = 0;
        memcpy(y, x + h * w, (size_t)w * sizeof *y);
        for (int64_t k = 0; k < nv; k++) {
            pref_visible(&R, (uint64_t)k, y);
            pv[k] = -pref_energy(&R, y);
            if (pv[k] > best) {
                best = pv[k];
                arg = k;
            }
        }
        for (int64_t k = 0; k < nv; k++) {
            pv[k] = exp(pv[k] - best);
            zsum += pv[k];
        }
        /* marginal of site i, category a; and log p of configuration 1 */
        for (int64_t i = 0; i < R.sites; i++) {
            for (int64_t a = 0; a < q; a++) {
                double pm = 0.0;
                for (int64_t k = 0; k < nv; k++) {
                    uint64_t kk = (uint64_t)k;
                    for (int64_t t = 0; t < i; t++) {
                        kk /= (uint64_t)q;
                    }
                    pm += (int64_t)(kk % (uint64_t)q) == a ? pv[k] : 0.0;
                }
                pm /= zsum;
                ck_assert_msg(fabs(mean[h * n0 + i * q + a] - pm) < 1e-6,
                              "%s: h %lld, site %lld, category %lld: mean %g, want %g", s->name,
                              (long long)h, (long long)i, (long long)a,
                              (double)mean[h * n0 + i * q + a], pm);
            }
        }
        pref_visible(&R, (uint64_t)arg, y);
        ck_assert_msg(memcmp(am + h * w, y, (size_t)n0 * sizeof *y) == 0,
                      "%s: h %lld: argmin is not the most probable configuration", s->name,
                      (long long)h);
        pref_visible(&R, 1, y);
        ck_assert_int_eq(ebm_model_layer_logprob(m, 0, 1, x + h * w, w, y, w, &lp[h]), EBM_OK);
        ck_assert_msg(fabs(lp[h] - log(pv[1] / zsum)) < 1e-9, "%s: log p %.12g, want %.12g",
                      s->name, lp[h], log(pv[1] / zsum));
        free(pv);
    }
    /* a hidden layer given Potts states: sigmoid / tanh of W^T x + b */
    float *hm = t_floats(nh * R.n[1]);
    ck_assert_int_eq(ebm_model_layer_mean(m, 1, nh, x, w, hm, R.n[1]), EBM_OK);
    for (int64_t h = 0; h < nh; h++) {
        for (int64_t j = 0; j < R.n[1]; j++) {
            double a = R.p[R.boff[1] + j];
            for (int64_t i = 0; i < n0; i++) {
                a += x[h * w + i] * R.p[R.woff[1] + i * R.n[1] + j];
            }
            for (int64_t k = 0; s->nl == 3 && k < R.n[2]; k++) {
                a += R.p[R.woff[2] + j * R.n[2] + k] * x[h * w + R.off[2] + k];
            }
            const double want = s->hid == EBM_UNITS_SPIN ? tanh(a) : 1.0 / (1.0 + exp(-a));
            ck_assert_msg(fabs(hm[h * R.n[1] + j] - want) < 1e-6, "%s: hidden mean %g, want %g",
                          s->name, (double)hm[h * R.n[1] + j], want);
        }
    }
    free(hm);
    free(y);
    free(x);
    free(mean);
    free(am);
    free(lp);
    free(R.p);
    ebm_model_destroy(m);
}
END_TEST

/* ---- 3. draws ----------------------------------------------------------------------- */

/* The visible law after one sample of layer 0 from a fixed hidden state, by
 * chi-square over the nv configurations (p >= 1e-6); the twin's law (a
 * visible bias flipped) is rejected. Random states: uniform categories. */
START_TEST(potts_draws)
{
    const potts_spec *s = &SPECS[0];
    ebm_model_t *m = potts_model(s, 300);
    pref R;
    pref_init(&R, m, s);
    const int64_t w = R.width, nv = (int64_t)pref_visible_count(&R), n = 60000;
    float *x = t_floats(n * w);
    for (int64_t r = 0; r < n; r++) {
        pref_visible(&R, 0, x + r * w);
        pref_hidden(&R, 2, x + r * w);
    }
    ebm_rng_t *rng = t_rng(31, 0);
    ck_assert_int_eq(ebm_model_layer_sample(m, 0, rng, n, x, w), EBM_OK);
    double *count = calloc((size_t)nv, sizeof *count), *p = malloc((size_t)nv * sizeof *p);
    for (int64_t r = 0; r < n; r++) {
        uint64_t k = 0, mul = 1;
        for (int64_t i = 0; i < R.sites; i++, mul *= (uint64_t)R.q) {
            int64_t cat = -1;
            for (int64_t a = 0; a < R.q; a++) {
                if (x[r * w + i * R.q + a] == 1.0f) {
                    ck_assert_int_eq(cat, -1);
                    cat = a;
                }
            }
            ck_assert_int_ge(cat, 0);
            k += (uint64_t)cat * mul;
        }
        count[k] += 1.0;
    }
    for (int twin = 0; twin < 2; twin++) {
        float *y = t_floats(w);
        pref_hidden(&R, 2, y);
        double zsum = 0.0;
        for (int64_t k = 0; k < nv; k++) {
            pref_visible(&R, (uint64_t)k, y);
            /* (the twin: b_0[0], of site 0's category 0, flipped) */
            p[k] = exp(-pref_energy(&R, y) - (twin && y[0] == 1.0f ? 2.0 * R.p[R.boff[0]] : 0.0));
            zsum += p[k];
        }
        for (int64_t k = 0; k < nv; k++) {
            p[k] /= zsum;
        }
        const ref_gof g = ref_chisq(count, p, nv, (double)n);
        if (twin) {
            ck_assert_msg(ref_gof_fails(g, 1e-6), "the twin's law was not rejected (p %g)", g.p);
        } else {
            ck_assert_msg(!ref_gof_fails(g, 1e-6), "one draw's law: chi-square p %g", g.p);
        }
        free(y);
    }
    /* random states: each site's category uniform (p >= 1e-6) */
    ck_assert_int_eq(ebm_model_random_state(m, rng, n, x, w, NULL, 0), EBM_OK);
    double cat[3] = {0}, pu[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3};
    for (int64_t r = 0; r < n; r++) {
        for (int64_t a = 0; a < 3; a++) {
            cat[a] += x[r * w + 3 + a]; /* site 1 */
        }
    }
    ck_assert_msg(!ref_gof_fails(ref_chisq(cat, pu, 3, (double)n), 1e-6),
                  "random sites are not uniform");
    free(count);
    free(p);
    free(x);
    free(R.p);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
}
END_TEST

/* ---- coupling and UCD --------------------------------------------------------------- */

/* One coupled Gibbs step from x = (v0, h1_a, h2), y = (v1, h1_b, h2) of the
 * 27-state Potts RBM and of the Potts DBM 6-2-2, under each coupling. The
 * first block B1 is the sites (with the DBM's top layer): given h1, the
 * chains draw it from p(B1 | h1_a) and p(B1 | h1_b), coupled maximally. So
 * each chain's new B1 has its conditional law (chi-square, p >= 1e-6), and
 * the new B1 agree with probability sum_b min(p(b | h1_a), p(b | h1_b))
 * (|z| < 5). The twin is the agreement of independent draws, which must be
 * far off. */
START_TEST(potts_coupled_step)
{
    static const int couplings[3] = {EBM_COUPLING_MAXIMAL, EBM_COUPLING_CRN,
                                     EBM_COUPLING_BLOCKWISE};
    const potts_spec *s = &SPECS[_i == 0 ? 0 : 3];
    ebm_model_t *m = potts_model(s, 600 + (uint64_t)_i);
    pref R;
    pref_init(&R, m, s);
    ck_assert_int_eq(R.q, 3);
    const int64_t w = R.width, nv = (int64_t)pref_visible_count(&R), n = 40000;
    const int64_t n1 = R.n[1], nt = s->nl == 3 ? INT64_C(1) << R.n[2] : 1, nb = nv * nt;
    double pa[64], pb[64], za = 0.0, zb = 0.0, meet = 0.0, indep = 0.0;
    ck_assert_int_le(nb, 64);
    float *t = t_floats(w);
    for (int64_t b = 0; b < nb; b++) { /* b = v + nv * (layer 2's bits) */
        pref_visible(&R, (uint64_t)(b % nv), t);
        pref_hidden(&R, 1u | (uint64_t)(b / nv) << n1, t);
        pa[b] = exp(-pref_energy(&R, t));
        pref_hidden(&R, 2u | (uint64_t)(b / nv) << n1, t);
        pb[b] = exp(-pref_energy(&R, t));
        za += pa[b];
        zb += pb[b];
    }
    for (int64_t b = 0; b < nb; b++) {
        pa[b] /= za;
        pb[b] /= zb;
        meet += fmin(pa[b], pb[b]);
        indep += pa[b] * pb[b];
    }
    float *x = t_floats(n * w), *y = t_floats(n * w);
    for (int64_t r = 0; r < n; r++) {
        pref_visible(&R, 0, x + r * w);
        pref_hidden(&R, 1, x + r * w);
        pref_visible(&R, 5, y + r * w);
        pref_hidden(&R, 2, y + r * w);
    }
    for (int ci = 0; ci < 3; ci++) {
        float *xc = t_floats(n * w), *yc = t_floats(n * w);
        memcpy(xc, x, (size_t)(n * w) * sizeof *xc);
        memcpy(yc, y, (size_t)(n * w) * sizeof *yc);
        ebm_sampler_t *sm = t_sampler(m, EBM_SAMPLER_GIBBS, 0, couplings[ci]);
        ebm_rng_t *rng = t_rng(61, (uint64_t)ci);
        ck_assert_int_eq(ebm_sampler_coupled_step(sm, rng, n, xc, w, yc, w, NULL), EBM_OK);
        double cx[64] = {0}, cy[64] = {0}, same = 0.0;
        for (int64_t r = 0; r < n; r++) {
            uint64_t kx = 0, ky = 0, mul = 1;
            for (int64_t i = 0; i < R.sites; i++, mul *= 3) {
                for (int64_t a = 0; a < 3; a++) {
                    kx += xc[r * w + i * 3 + a] == 1.0f ? (uint64_t)a * mul : 0;
                    ky += yc[r * w + i * 3 + a] == 1.0f ? (uint64_t)a * mul : 0;
                }
            }
            for (int64_t k = 0; s->nl == 3 && k < R.n[2]; k++, mul *= 2) {
                kx += xc[r * w + R.off[2] + k] == 1.0f ? mul : 0;
                ky += yc[r * w + R.off[2] + k] == 1.0f ? mul : 0;
            }
            cx[kx] += 1.0;
            cy[ky] += 1.0;
            same += kx == ky;
        }
        const char *name = t_coupling_name(couplings[ci]);
        ck_assert_msg(!ref_gof_fails(ref_chisq(cx, pa, nb, (double)n), 1e-6),
                      "%s: x's new first block does not have its conditional law", name);
        ck_assert_msg(!ref_gof_fails(ref_chisq(cy, pb, nb, (double)n), 1e-6),
                      "%s: y's new first block does not have its conditional law", name);
        const double z = ref_binom_z(same, (double)n, meet);
        const double z_twin = ref_binom_z(same, (double)n, indep);
        T_VLOG("  %s %s: B1 met %.4f (maximal %.4f, independent %.4f), z %.2f, twin z %.1f\n",
               s->name, name, same / (double)n, meet, indep, z, z_twin);
        ck_assert_msg(fabs(z) < 5.0, "%s: the new B1 agree in %g of the rows; maximal %g (z %g)",
                      name, same / (double)n, meet, z);
        ck_assert_msg(fabs(z_twin) > 5.0, "%s: the twin (independent draws) passed", name);
        free(xc);
        free(yc);
        ebm_rng_destroy(rng);
        ebm_sampler_destroy(sm);
    }
    free(x);
    free(y);
    free(t);
    free(R.p);
    ebm_model_destroy(m);
}
END_TEST

/* UCD on a Potts RBM (2 sites x q 3, 2 binary hidden; data: two visible
 * configurations) is unbiased: over 4000 calls of 50 rows, the mean of every
 * parameter's estimate is within 4.5 standard errors of the exact gradient
 * of the mean log-likelihood, computed by enumeration (false failure below
 * 23 x 7e-6). The twin, CD-1, is biased beyond that. */
static double max_z_of(ebm_model_t *m, int kind, const float *data, int64_t n0,
                       const double *exact, int64_t calls)
{
    const int64_t np = ebm_model_param_count(m), n = 50;
    ebm_estimator_t *e = NULL;
    ck_assert_int_eq(ebm_estimator_create(&e, m, kind), EBM_OK);
    ebm_rng_t *rng = t_rng(77, (uint64_t)kind);
    float *g = t_floats(np), *batch = t_floats(n * n0);
    for (int64_t r = 0; r < n; r++) {
        memcpy(batch + r * n0, data + (r % 2) * n0, (size_t)n0 * sizeof *batch);
    }
    double *sum = calloc((size_t)np, sizeof *sum), *sq = calloc((size_t)np, sizeof *sq);
    for (int64_t c = 0; c < calls; c++) {
        ck_assert_int_eq(ebm_estimator_gradient(e, rng, n, batch, n0, g), EBM_OK);
        for (int64_t i = 0; i < np; i++) {
            sum[i] += g[i];
            sq[i] += (double)g[i] * g[i];
        }
    }
    double worst = 0.0;
    for (int64_t i = 0; i < np; i++) {
        const double mean = sum[i] / (double)calls;
        const double var = fmax(sq[i] / (double)calls - mean * mean, 1e-300);
        worst = fmax(worst, fabs(mean - exact[i]) / sqrt(var / (double)calls));
    }
    free(sum);
    free(sq);
    free(g);
    free(batch);
    ebm_rng_destroy(rng);
    ebm_estimator_destroy(e);
    return worst;
}

START_TEST(potts_ucd_unbiased)
{
    static const int64_t sizes[] = {6, 2};
    ebm_model_t *m = NULL;
    ck_assert_int_eq(ebm_model_create_potts(&m, 2, sizes, 3, EBM_UNITS_BINARY, NULL, 0), EBM_OK);
    t_random_params(m, 700, 1.5);
    const potts_spec spec = {"Potts RBM 2 sites x q 3", 2, {6, 2, 0}, 3, EBM_UNITS_BINARY, 1.5};
    pref R;
    pref_init(&R, m, &spec);
    const int64_t w = R.width, np = ebm_model_param_count(m), nv = 9, nh = 4;
    /* data: configurations 2 and 7 */
    float data[12], *all = t_floats(nv * nh * w);
    pref_visible(&R, 2, all);
    memcpy(data, all, 6 * sizeof *data);
    pref_visible(&R, 7, all);
    memcpy(data + 6, all, 6 * sizeof *data);
    /* exact: d/dtheta mean log p(v) = -E[dE | v] (mean over the data) + E[dE] */
    double *coef = malloc((size_t)(nv * nh) * sizeof *coef), zsum = 0.0;
    for (int64_t k = 0; k < nv * nh; k++) {
        pref_visible(&R, (uint64_t)(k / nh), all + k * w);
        pref_hidden(&R, (uint64_t)(k % nh), all + k * w);
        coef[k] = exp(-pref_energy(&R, all + k * w));
        zsum += coef[k];
    }
    float *gm = t_floats(np), *gp = t_floats(np);
    memset(gm, 0, (size_t)np * sizeof *gm);
    memset(gp, 0, (size_t)np * sizeof *gp);
    double *cm = malloc((size_t)(nv * nh) * sizeof *cm), *cp = malloc((size_t)(nv * nh) * sizeof *cp);
    for (int64_t k = 0; k < nv * nh; k++) {
        cm[k] = coef[k] / zsum;
        cp[k] = 0.0;
    }
    for (int d = 0; d < 2; d++) {
        const int64_t v = d == 0 ? 2 : 7;
        double zv = 0.0;
        for (int64_t h = 0; h < nh; h++) {
            zv += coef[v * nh + h];
        }
        for (int64_t h = 0; h < nh; h++) {
            cp[v * nh + h] += 0.5 * coef[v * nh + h] / zv;
        }
    }
    ck_assert_int_eq(ebm_model_energy_grad(m, 0, nv * nh, all, w, cm, gm), EBM_OK);
    ck_assert_int_eq(ebm_model_energy_grad(m, 0, nv * nh, all, w, cp, gp), EBM_OK);
    double *exact = malloc((size_t)np * sizeof *exact);
    for (int64_t i = 0; i < np; i++) {
        exact[i] = (double)gm[i] - (double)gp[i];
    }
    const int64_t calls = t_level() >= 2 ? 20000 : 4000;
    const double z = max_z_of(m, EBM_ESTIMATOR_UCD, data, 6, exact, calls);
    const double z_twin = max_z_of(m, EBM_ESTIMATOR_CD, data, 6, exact, calls);
    T_VLOG("  UCD on a Potts RBM: max |z| %.2f; CD-1's %.1f\n", z, z_twin);
    ck_assert_msg(z < 4.5, "UCD: max |z| %.2f", z);
    ck_assert_msg(z_twin > 6.0, "the twin (CD-1) passed: max |z| %.2f", z_twin);
    free(exact);
    free(coef);
    free(cm);
    free(cp);
    free(gm);
    free(gp);
    free(all);
    free(R.p);
    ebm_model_destroy(m);
}
END_TEST

/* ---- 4. AIS ------------------------------------------------------------------------- */

START_TEST(potts_ais)
{
    const potts_spec *s = &SPECS[_i];
    ebm_model_t *m = potts_model(s, 400 + (uint64_t)_i);
    double exact, est, se, est_b, se_b;
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &exact), EBM_OK);
    ebm_rng_t *rng = t_rng(41, (uint64_t)_i);
    ck_assert_int_eq(ebm_model_log_partition_ais(m, rng, 200, 5000, &est, &se), EBM_OK);
    float base[10];
    for (int64_t i = 0; i < s->sizes[0]; i++) {
        base[i] = (float)(0.7 * sin(1.1 * (double)i));
    }
    ck_assert_int_eq(ebm_model_log_partition_ais_base(m, rng, 200, 5000, base, &est_b, &se_b),
                     EBM_OK);
    T_VLOG("  %s: exact %.5f, AIS %.5f +- %.5f, from a base %.5f +- %.5f\n", s->name, exact, est,
           se, est_b, se_b);
    ck_assert_msg(fabs(est - exact) <= 4.0 * se + 1e-9, "%s: AIS %.6f +- %.6f, exact %.6f",
                  s->name, est, se, exact);
    ck_assert_msg(fabs(est_b - exact) <= 4.0 * se_b + 1e-9,
                  "%s: AIS from a base %.6f +- %.6f, exact %.6f", s->name, est_b, se_b, exact);
    /* the twin: the model with its first visible bias flipped */
    const int64_t np = ebm_model_param_count(m);
    float *p = t_floats(np);
    int64_t off;
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    ck_assert_int_eq(ebm_model_param_block(m, EBM_PARAM_BIAS, 0, &off, NULL, NULL), EBM_OK);
    p[off] = -p[off] + (p[off] == 0.0f ? 1.0f : 0.0f);
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    double flipped;
    ck_assert_int_eq(ebm_model_log_partition_exact(m, &flipped), EBM_OK);
    ck_assert_msg(fabs(est - flipped) > 4.0 * se, "%s: the twin was not detected", s->name);
    free(p);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
}
END_TEST

/* ---- 5. bad input ------------------------------------------------------------------- */

START_TEST(potts_bad_input)
{
    static const int64_t sizes[] = {6, 2}, odd[] = {7, 2};
    ebm_model_t *m = NULL, *none = (ebm_model_t *)&m;
    char err[256];
    /* creation */
    ck_assert_int_eq(ebm_model_create_potts(&none, 2, odd, 3, EBM_UNITS_BINARY, err, sizeof err),
                     EBM_ESHAPE);
    ck_assert_ptr_null(none);
    ck_assert_msg(t_contains(err, "sizes[0] is 7, not a multiple of categories (3)"), "%s", err);
    ck_assert_int_eq(ebm_model_create_potts(&none, 2, sizes, 1, EBM_UNITS_BINARY, err, sizeof err),
                     EBM_EVALUE);
    ck_assert_msg(t_contains(err, "categories is 1; it must be from 2 to 65536"), "%s", err);
    /* Every value is a value: -1 and INT64_MIN name themselves. */
    static const int64_t bad_q[] = {-1, 0, INT64_MIN, INT64_MAX};
    for (size_t k = 0; k < sizeof bad_q / sizeof bad_q[0]; k++) {
        char want[64];
        snprintf(want, sizeof want, "categories is %lld; it must be from 2 to 65536",
                 (long long)bad_q[k]);
        ck_assert_int_eq(
            ebm_model_create_potts(&none, 2, sizes, bad_q[k], EBM_UNITS_BINARY, err, sizeof err),
            EBM_EVALUE);
        ck_assert_msg(t_contains(err, want), "q %lld: %s", (long long)bad_q[k], err);
    }
    ck_assert_int_eq(
        ebm_model_create_potts(&none, 2, sizes, 70000, EBM_UNITS_BINARY, err, sizeof err),
        EBM_EVALUE);
    ck_assert_int_eq(ebm_model_create(&none, 2, sizes, EBM_UNITS_POTTS, EBM_UNITS_BINARY, err,
                                      sizeof err),
                     EBM_EVALUE);
    ck_assert_msg(t_contains(err, "ebm_model_create_potts"), "%s", err);
    ck_assert_int_eq(ebm_model_create_potts(&none, 2, sizes, 3, EBM_UNITS_POTTS, err, sizeof err),
                     EBM_EVALUE);
    ck_assert_int_eq(ebm_model_create_potts(&m, 2, sizes, 3, EBM_UNITS_SPIN, err, sizeof err),
                     EBM_OK);
    t_random_params(m, 9, 1.0);
    /* states: two ones, none, a value that is not 0 or 1 */
    float x[8] = {0, 1, 0, 1, 0, 0, 1, -1};
    double e;
    t_snap s;
    t_snap_init(&s, T_MSG_MODEL, m, NULL);
    t_snap_track(&s, "x", x, sizeof x);
    x[3] = 1.0f;
    x[4] = 1.0f;
    FAILS3(&s, EBM_EVALUE, "row 0, units 3 to 5 (layer 0, site 1) hold 2 ones",
           "exactly one", NULL, ebm_model_energy(m, 1, x, 8, &e));
    x[3] = x[4] = 0.0f;
    FAILS(&s, EBM_EVALUE, "hold 0 ones", NULL, ebm_model_energy(m, 1, x, 8, &e));
    x[4] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "unit 4 (layer 0, site 1, category 1) is 0.5", "Potts units take 0 "
           "or 1", NULL, ebm_model_energy(m, 1, x, 8, &e));
    x[4] = 1.0f;
    ck_assert_int_eq(ebm_model_energy(m, 1, x, 8, &e), EBM_OK);
    /* the calls not supported yet */
    ebm_sampler_t *sm = NULL;
    ebm_estimator_t *es = NULL;
    ck_assert_int_eq(ebm_sampler_create(&sm, m, EBM_SAMPLER_MH_UNIFORM), EBM_EUNSUPPORTED);
    ck_assert_msg(t_contains(ebm_model_errmsg(m), "Potts"), "%s", ebm_model_errmsg(m));
    ck_assert_int_eq(ebm_estimator_create(&es, m, EBM_ESTIMATOR_UCD_LMI), EBM_EUNSUPPORTED);
    ck_assert_msg(t_contains(ebm_model_errmsg(m), "EBM_ESTIMATOR_UCD"), "%s", ebm_model_errmsg(m));
    ebm_rng_t *rng = t_rng(3, 0);
    ck_assert_int_eq(ebm_model_local_search(m, rng, 1, x, 8, NULL, 0, 10, NULL), EBM_EUNSUPPORTED);
    ebm_rng_destroy(rng);
    FINISH();
    ebm_model_destroy(m);
}
END_TEST

/* A Potts model saves as format version 2 with its categories, and loads
 * back to the same bytes; a file whose categories do not divide the
 * visible columns is refused with the shape's message. */
START_TEST(potts_round_trip)
{
    ebm_model_t *m = potts_model(&SPECS[1], 500);
    const int64_t size = ebm_model_save_size(m);
    unsigned char *buf = malloc((size_t)size), *again = malloc((size_t)size);
    size_t used = 0, used2 = 0;
    ck_assert_int_eq(ebm_model_save_buffer(m, buf, (size_t)size, &used), EBM_OK);
    ck_assert_uint_eq(buf[8], 2);
    ck_assert_uint_eq(buf[24], 5); /* categories */
    ebm_model_t *back = NULL;
    char err[256] = "";
    ck_assert_msg(ebm_model_load_buffer(&back, buf, used, err, sizeof err) == EBM_OK, "%s", err);
    ck_assert_int_eq(ebm_model_layer_categories(back, 0), 5);
    ck_assert_int_eq(ebm_model_save_buffer(back, again, (size_t)size, &used2), EBM_OK);
    ck_assert(used == used2 && memcmp(buf, again, used) == 0);
    ebm_model_destroy(back);
    buf[24] = 3; /* 10 columns are not sites of 3 (the CRC made right) */
    t_fix_crc(buf, used);
    ck_assert_int_eq(ebm_model_load_buffer(&back, buf, used, err, sizeof err), EBM_EFORMAT);
    ck_assert_ptr_null(back);
    ck_assert_msg(t_contains(err, "sizes[0] is 10, not a multiple of categories (3)"), "%s", err);
    free(buf);
    free(again);
    ebm_model_destroy(back);
    ebm_model_destroy(m);
}
END_TEST

Suite *ebm_potts_suite(void)
{
    const t_test tests[] = {
        {"exact", potts_exact, N_SPECS, 60, NULL, NULL},
        {"exact", potts_binary_identity, 0, 30, NULL, NULL},
        {"conditionals", potts_conditionals, N_SPECS, 60, NULL, NULL},
        {"draws", potts_draws, 0, 60, NULL, NULL},
        {"coupling", potts_coupled_step, 2, 60, NULL, NULL},
        {"coupling", potts_ucd_unbiased, 0, 120, NULL, NULL},
        {"ais", potts_ais, N_SPECS, 120, NULL, NULL},
        {"bad input", potts_bad_input, 0, 30, t_soft_setup, NULL},
        {"io", potts_round_trip, 0, 30, NULL, NULL},
    };
    return t_suite("potts", tests, sizeof tests / sizeof tests[0]);
}
