/*
 * Coupled chains (include/ebm.h, "Samplers and coupled chains",
 * ebm_sampler_coupled_step; tests/README.md, classes 2 and 3): the coupled
 * Gibbs steps (Qiu et al. 2020, Algs. 1, 3, 4 and appendix A) under
 * EBM_COUPLING_MAXIMAL, EBM_COUPLING_CRN and EBM_COUPLING_BLOCKWISE, and
 * coupled MH (Taniguchi et al. 2023, Algs. 3 and 4), against their exact
 * laws in ref_sampler.c.
 *
 * (1) One coupled step from a pair of states: both marginals, the full
 * joint law of (x', y'), the meeting frequency, the mean number of
 * rejection tries, met flags, rows met on entry (they stay met and move by
 * P), and clamped layers that never move, also when the two chains have
 * different clamped values; (2) the law of the meeting time from the
 * product chain, and finite meeting on DBMs; (3) a GRBM whose Gaussian
 * block is coupled by the reflection-maximal coupling (meeting with
 * probability 2 Phi(-|z|/2), unmet y the reflection of x), and under
 * BLOCKWISE its h block maximally given the two v (equal with probability
 * 1 - TV of the two laws of h). Each
 * statistical test has a broken twin (the other coupling's law, independent
 * chains, another pair's meeting probability, y's law for x) that must
 * fail; each fails a correct implementation with probability about 1e-6.
 *
 * EBM_TEST_LEVEL=2 multiplies the sample sizes by 10. EBM_TEST_VERBOSE=1
 * prints the statistics of every test on stderr.
 *
 * SPDX-License-Identifier: MIT
 */
#include "tests.h"
#include "ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* 1. One coupled step against its exact law                                */
/* ------------------------------------------------------------------------ */

/* Run one coupled step of n copies of the pair (kx, ky) and count. */
typedef struct pair_counts {
    double *cx, *cy, *cj; /* S, S, S*S */
    double met;
} pair_counts;

static void coupled_counts(const tref *R, ebm_sampler_t *s, ebm_rng_t *rng, int kx, int ky,
                           int64_t n, float *x, float *y, uint8_t *met, pair_counts *pc)
{
    const int S = R->S, w = R->width;
    tref_fill_rows(R, kx, n, x);
    tref_fill_rows(R, ky, n, y);
    memset(met, 0xAB, (size_t)n);
    int rc = ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met);
    T_ASSERT_MSG(rc == EBM_OK, "coupled step: %s", ebm_sampler_errmsg(s));
    memset(pc->cx, 0, (size_t)S * sizeof *pc->cx);
    memset(pc->cy, 0, (size_t)S * sizeof *pc->cy);
    memset(pc->cj, 0, (size_t)S * S * sizeof *pc->cj);
    pc->met = 0.0;
    for (int64_t r = 0; r < n; r++) {
        int a = tref_code(R, x + r * w), b = tref_code(R, y + r * w);
        T_ASSERT_MSG(a >= 0 && b >= 0, "row %lld left the state space", (long long)r);
        int equal = memcmp(x + r * w, y + r * w, (size_t)w * sizeof *x) == 0;
        T_ASSERT_MSG(met[r] == equal, "row %lld: met = %d but the rows are %s", (long long)r,
                     met[r], equal ? "equal" : "different");
        pc->cx[a] += 1.0;
        pc->cy[b] += 1.0;
        pc->cj[a * S + b] += 1.0;
        pc->met += met[r];
    }
}

/* Pairs of distinct states with the same clamped values: pair 0 differs in
 * one B1 unit only (its Gibbs transitions are equal: they meet surely), the
 * others are random. Returns the number of pairs. */
static int pick_pairs(const tref *R, uint64_t seed, int want, int (*pairs)[2])
{
    uint32_t b1, b2;
    tref_blocks(R, &b1, &b2);
    int c1[TREF_MAXW];
    tref_cols(R, b1, c1);
    int np = 0;
    /* column c1[0] is disc index i0 */
    int i0 = 0;
    while (R->disc[i0] != c1[0]) {
        i0++;
    }
    pairs[np][0] = 5 % R->S;
    pairs[np][1] = pairs[np][0] ^ (1 << i0);
    np++;
    uint64_t st = seed;
    for (int t = 0; np < want && t < 10000; t++) {
        int a = (int)(t_uniform(&st) * R->S), b = (int)(t_uniform(&st) * R->S);
        if (a != b && tref_same_clamped_k(R, a, b)) {
            pairs[np][0] = a;
            pairs[np][1] = b;
            np++;
        }
    }
    return np;
}

/* Model ms, its reference R and a sampler of the variant (Gibbs with its
 * coupling, or MH); *kind gets the sampler's kind. */
static ebm_sampler_t *variant_sampler(const tref_mspec *ms, int variant, ebm_model_t **m, tref *R,
                                      int *kind)
{
    *m = tref_make_model(ms);
    tref_load_model(ms, *m, R);
    *kind = variant == TREF_MH ? EBM_SAMPLER_MH_UNIFORM : EBM_SAMPLER_GIBBS;
    return t_sampler(*m, *kind, ms->clamp, variant == TREF_MH ? 1 : variant);
}

/* _i = TREF_N_VARIANTS * model + variant */
START_TEST(coupled_law)
{
    const tref_mspec *ms = &TREF_MODELS[_i / TREF_N_VARIANTS];
    const int variant = _i % TREF_N_VARIANTS;
    ebm_model_t *m;
    tref R;
    int kind;
    ebm_sampler_t *s = variant_sampler(ms, variant, &m, &R, &kind);
    const int S = R.S, w = R.width;
    ebm_rng_t *rng = t_rng(3000 + (uint64_t)_i, 0);
    double *P = t_malloc((size_t)S * S * sizeof *P), *J = t_malloc((size_t)S * S * sizeof *J);
    tref_matrix(&R, kind, P);
    int pairs[8][2];
    const int np = pick_pairs(&R, 31 + (uint64_t)_i, 7, pairs);
    const int64_t n = t_scaled(60000);
    const double alpha = 1e-6 / (4.0 * (np + 1)); /* x, y, joint per pair; met on entry */
    float *x = t_malloc((size_t)(n * w) * sizeof *x), *y = t_malloc((size_t)(n * w) * sizeof *y);
    uint8_t *met = t_malloc((size_t)n);
    pair_counts pc = {t_malloc((size_t)S * sizeof(double)), t_malloc((size_t)S * sizeof(double)),
                      t_malloc((size_t)S * S * sizeof(double)), 0.0};
    double bound[8], freq[8];
    int joint_twins = 0;
    char what[200];
    for (int i = 0; i < np; i++) {
        const int kx = pairs[i][0], ky = pairs[i][1];
        coupled_counts(&R, s, rng, kx, ky, n, x, y, met, &pc);
        double tries[2] = {0.0, 0.0};
        if (variant == TREF_MH) {
            tref_coupled_mh(&R, kx, ky, J);
        } else {
            tref_coupled_gibbs(&R, variant, kx, ky, J, tries);
        }
        double meet = 0.0, maxbound = 0.0;
        for (int a = 0; a < S; a++) {
            meet += J[a * S + a];
            maxbound += fmin(P[kx * S + a], P[ky * S + a]);
        }
        bound[i] = meet;
        freq[i] = pc.met;
        snprintf(what, sizeof what, "%s %s pair (%d,%d): x'", ms->name, TREF_VARIANT_NAME[variant],
                 kx, ky);
        ref_expect_fit(what, pc.cx, P + kx * S, S, (double)n, alpha);
        snprintf(what, sizeof what, "%s %s pair (%d,%d): y'", ms->name, TREF_VARIANT_NAME[variant],
                 kx, ky);
        ref_expect_fit(what, pc.cy, P + ky * S, S, (double)n, alpha);
        snprintf(what, sizeof what, "%s %s pair (%d,%d): (x',y')", ms->name,
                 TREF_VARIANT_NAME[variant], kx, ky);
        ref_expect_fit(what, pc.cj, J, (int64_t)S * S, (double)n, alpha);
        double z = ref_binom_z(pc.met, (double)n, meet);
        T_VLOG("  %s %s pair (%d,%d): met %.5f, exact %.5f (maximal %.5f), z = %.2f, tries mean "
               "%.2f max %.0f\n",
               ms->name, TREF_VARIANT_NAME[variant], kx, ky, pc.met / n, meet, maxbound, z,
               ebm_sampler_stat(s, EBM_STAT_TRIES_MEAN), ebm_sampler_stat(s, EBM_STAT_TRIES_MAX));
        T_ASSERT_MSG(fabs(z) < 5.0, "%s %s pair (%d,%d): met %.5f, exact %.5f, z = %.2f", ms->name,
                     TREF_VARIANT_NAME[variant], kx, ky, pc.met / n, meet, z);
        T_ASSERT_MSG(fabs(meet - maxbound) < 1e-12, "reference not maximal");
        /* The rejection tries of the rows that did not meet (Gibbs). */
        const double unmet = (double)n - pc.met;
        const double tmean = ebm_sampler_stat(s, EBM_STAT_TRIES_MEAN);
        const double tmax = ebm_sampler_stat(s, EBM_STAT_TRIES_MAX);
        if (variant != TREF_MH && unmet >= 100.0) {
            double tz = (tmean - tries[0]) / sqrt(tries[1] / unmet);
            T_VLOG("  %s %s pair (%d,%d): tries mean %.4f, exact %.4f (z %.2f), max %.0f\n",
                   ms->name, TREF_VARIANT_NAME[variant], kx, ky, tmean, tries[0], tz, tmax);
            T_ASSERT_MSG(fabs(tz) < 5.0 && tmax >= tmean && tmax == floor(tmax),
                         "%s %s pair (%d,%d): EBM_STAT_TRIES_MEAN %.4f, exact %.4f (z %.2f), "
                         "max %.0f",
                         ms->name, TREF_VARIANT_NAME[variant], kx, ky, tmean, tries[0], tz, tmax);
        } else if (variant != TREF_MH && unmet == 0.0) {
            T_ASSERT(tmean == 0.0 && tmax == 0.0);
        }
        /* Broken twin of the joint law: the other Gibbs coupling whose law
         * is farthest (Gibbs), or independent chains (MH), where it differs
         * enough. */
        double *JT = t_malloc((size_t)S * S * sizeof *JT), tvj = 0.0;
        int twin = -1;
        if (variant == TREF_MH) {
            for (int a = 0; a < S; a++) {
                for (int b = 0; b < S; b++) {
                    JT[a * S + b] = P[kx * S + a] * P[ky * S + b];
                }
            }
            for (int a = 0; a < S * S; a++) {
                tvj += 0.5 * fabs(JT[a] - J[a]);
            }
        } else {
            double *JO = t_malloc((size_t)S * S * sizeof *JO);
            for (int v = TREF_MAXIMAL; v <= TREF_BLOCKWISE; v++) {
                double tv_v = 0.0;
                if (v == variant) {
                    continue;
                }
                tref_joint(&R, v, kx, ky, JO);
                for (int a = 0; a < S * S; a++) {
                    tv_v += 0.5 * fabs(JO[a] - J[a]);
                }
                if (tv_v > tvj) {
                    tvj = tv_v;
                    twin = v;
                    memcpy(JT, JO, (size_t)S * S * sizeof *JT);
                }
            }
            free(JO);
        }
        if (tvj > 0.05) {
            T_ASSERT_MSG(ref_gof_fails(ref_chisq(pc.cj, JT, (int64_t)S * S, (double)n), alpha),
                         "%s %s pair (%d,%d): the pairs also fit the %s law (TV %.3f)", ms->name,
                         TREF_VARIANT_NAME[variant], kx, ky,
                         twin < 0 ? "independent" : TREF_VARIANT_NAME[twin], tvj);
            joint_twins++;
        }
        free(JT);
        /* Broken twin of the marginals: x' against y's law. */
        double tv = 1.0 - maxbound;
        if (tv > 0.05) {
            T_ASSERT_MSG(ref_gof_fails(ref_chisq(pc.cx, P + ky * S, S, (double)n), alpha),
                         "%s: x' also fits P(y0, .) (TV %.3f): the test has no power", ms->name,
                         tv);
        }
    }
    T_VLOG("  %s %s: %d of %d pairs had a joint-law twin\n", ms->name, TREF_VARIANT_NAME[variant],
           joint_twins, np);
    /* Without clamps the couplings' laws differ enough to tell them apart. */
    T_ASSERT_MSG(joint_twins > 0 || _i / TREF_N_VARIANTS >= TREF_FIRST_CLAMPED,
                 "%s %s: no pair's joint law differs from the other couplings'", ms->name,
                 TREF_VARIANT_NAME[variant]);
    /* Broken twin of the meeting law: each pair's frequency against the
     * exact probability of the pair whose probability is most different. */
    int twins = 0;
    double spread = 0.0;
    for (int i = 0; i < np; i++) {
        int j_best = -1;
        double d_best = 0.0;
        for (int j = 0; j < np; j++) {
            if (fabs(bound[j] - bound[i]) > d_best) {
                d_best = fabs(bound[j] - bound[i]);
                j_best = j;
            }
        }
        spread = fmax(spread, d_best);
        if (j_best >= 0 && d_best > 12.0 * sqrt(0.25 / (double)n)) {
            double z = ref_binom_z(freq[i], (double)n, bound[j_best]);
            T_ASSERT_MSG(fabs(z) >= 5.0,
                         "%s: the meeting frequency %.4f of pair %d also fits pair %d's %.4f",
                         ms->name, freq[i] / n, i, j_best, bound[j_best]);
            twins++;
        }
    }
    T_ASSERT_MSG(twins > 0 || spread < 1e-9, "%s: no broken twin for the meeting law", ms->name);
    /* Rows equal on entry: they all stay met, and move by P. */
    const int k0 = pairs[np - 1][0];
    coupled_counts(&R, s, rng, k0, k0, n, x, y, met, &pc);
    T_ASSERT_MSG(pc.met == (double)n, "%s: %.0f of %lld rows equal on entry did not stay met",
                 ms->name, (double)n - pc.met, (long long)n);
    snprintf(what, sizeof what, "%s %s: rows met on entry, from state %d", ms->name,
             TREF_VARIANT_NAME[variant], k0);
    ref_expect_fit(what, pc.cx, P + k0 * S, S, (double)n, alpha);
    T_ASSERT(ebm_sampler_stat(s, EBM_STAT_MET_FRACTION) == 1.0);
    free(pc.cx);
    free(pc.cy);
    free(pc.cj);
    free(x);
    free(y);
    free(met);
    free(P);
    free(J);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* Clamped layers never move: single steps, coupled steps with the same
 * clamped values, and coupled steps whose two chains have different clamped
 * values (different targets). For the last, the call may refuse
 * (EBM_EVALUE, nothing changed) or run; if it runs, each chain must keep its
 * clamped values, follow its own kernel, and meet only when equal. */
START_TEST(clamped_layers_fixed)
{
    const tref_mspec *ms = &TREF_MODELS[TREF_FIRST_CLAMPED + _i / TREF_N_VARIANTS];
    const int variant = _i % TREF_N_VARIANTS;
    ebm_model_t *m;
    tref R;
    int kind;
    ebm_sampler_t *s = variant_sampler(ms, variant, &m, &R, &kind);
    const int S = R.S, w = R.width;
    ebm_rng_t *rng = t_rng(3500 + (uint64_t)_i, 0);
    /* A pair with different clamped values, far apart in the free units;
     * for the GRBM, whose clamped units are Gaussian, y gets other values. */
    tref Ry = R;
    int kx = -1, ky = -1;
    for (int a = 0; a < S && kx < 0; a++) {
        for (int b = S - 1; b > a; b--) {
            if (!tref_same_clamped_k(&R, a, b)) {
                kx = a;
                ky = b;
                break;
            }
        }
    }
    if (kx < 0) {
        T_ASSERT(R.units[0] == G_);
        Ry.base[0] += 0.5;
        Ry.base[1] -= 0.25;
        kx = 0;
        ky = S - 1;
    }
    double *P = t_malloc((size_t)S * S * sizeof *P), *Py = t_malloc((size_t)S * S * sizeof *Py);
    tref_matrix(&R, kind, P);
    tref_matrix(&Ry, kind, Py);
    const int64_t n = t_scaled(20000);
    float *x = t_malloc((size_t)(n * w) * sizeof *x), *y = t_malloc((size_t)(n * w) * sizeof *y);
    float *x0 = t_malloc((size_t)(n * w) * sizeof *x0),
          *y0 = t_malloc((size_t)(n * w) * sizeof *y0);
    uint8_t *met = t_malloc((size_t)n);
    tref_fill_rows(&R, kx, n, x);
    tref_fill_rows(&Ry, ky, n, y);
    memcpy(x0, x, (size_t)(n * w) * sizeof *x);
    memcpy(y0, y, (size_t)(n * w) * sizeof *y);
    memset(met, 0xAB, (size_t)n);
    uint64_t before[EBM_RNG_STATE_WORDS], after[EBM_RNG_STATE_WORDS];
    ebm_rng_get_state(rng, before);
    int rc = ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met);
    if (rc != EBM_OK) {
        ebm_rng_get_state(rng, after);
        T_ASSERT_MSG(rc == EBM_EVALUE,
                     "%s: coupled step of chains with different clamped "
                     "values returned %d (%s)",
                     ms->name, rc, ebm_sampler_errmsg(s));
        T_ASSERT(memcmp(x, x0, (size_t)(n * w) * sizeof *x) == 0);
        T_ASSERT(memcmp(y, y0, (size_t)(n * w) * sizeof *y) == 0);
        T_ASSERT(met[0] == 0xAB && memcmp(before, after, sizeof before) == 0);
    } else {
        double *cx = t_calloc((size_t)S, sizeof *cx), *cy = t_calloc((size_t)S, sizeof *cy);
        int64_t moved = 0, bad_met = 0;
        for (int64_t r = 0; r < n; r++) {
            int a = tref_code(&R, x + r * w), b = tref_code(&Ry, y + r * w);
            double xa[TREF_MAXW], yb[TREF_MAXW], xs[TREF_MAXW], ys[TREF_MAXW];
            if (a >= 0 && b >= 0) {
                tref_row(&R, a, xa);
                tref_row(&Ry, b, yb);
                tref_row(&R, kx, xs);
                tref_row(&Ry, ky, ys);
            }
            if (a < 0 || b < 0 || !tref_same_clamped(&R, xa, xs) ||
                !tref_same_clamped(&R, yb, ys)) {
                moved++;
                continue;
            }
            bad_met += met[r] != (memcmp(x + r * w, y + r * w, (size_t)w * sizeof *x) == 0);
            cx[a] += 1.0;
            cy[b] += 1.0;
        }
        T_VLOG("  %s %s, chains with different clamped values: %lld of %lld rows changed a "
               "clamped unit\n",
               ms->name, TREF_VARIANT_NAME[variant], (long long)moved, (long long)n);
        T_ASSERT_MSG(moved == 0 && bad_met == 0,
                     "%s %s: coupled step of chains with different clamped values (states %d, "
                     "%d) changed a clamped unit in %lld of %lld rows (%lld bad met flags)",
                     ms->name, TREF_VARIANT_NAME[variant], kx, ky, (long long)moved, (long long)n,
                     (long long)bad_met);
        char what[200];
        snprintf(what, sizeof what, "%s %s, different clamped values: x'", ms->name,
                 TREF_VARIANT_NAME[variant]);
        ref_expect_fit(what, cx, P + kx * S, S, (double)n, 1e-6 / 2);
        snprintf(what, sizeof what, "%s %s, different clamped values: y'", ms->name,
                 TREF_VARIANT_NAME[variant]);
        ref_expect_fit(what, cy, Py + ky * S, S, (double)n, 1e-6 / 2);
        free(cx);
        free(cy);
    }
    free(Py);
    free(x);
    free(y);
    free(x0);
    free(y0);
    free(met);
    free(P);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 2. The law of the meeting time                                           */
/* ------------------------------------------------------------------------ */

enum { TAU_CAP = 1000, TAU_LAW = 200 };

/* _i = variant; the binary RBM 3x2 with larger weights, so that meeting
 * takes a few steps. */
START_TEST(meeting_time_law)
{
    const int variant = _i;
    tref_mspec ms = TREF_MODELS[0];
    ms.scale = 2.5;
    ms.seed = 4401;
    ebm_model_t *m = tref_make_model(&ms);
    tref R;
    tref_load_model(&ms, m, &R);
    const int S = R.S, w = R.width;
    /* the pair with the smallest one-step meeting probability */
    double *J = t_malloc((size_t)S * S * sizeof *J);
    int kx = 0, ky = 1;
    double best = 2.0;
    for (int a = 0; a < S; a++) {
        for (int b = 0; b < S; b++) {
            if (a == b) {
                continue;
            }
            tref_joint(&R, variant, a, b, J);
            double meet = 0.0;
            for (int c = 0; c < S; c++) {
                meet += J[c * S + c];
            }
            if (meet < best) {
                best = meet;
                kx = a;
                ky = b;
            }
        }
    }
    double law[TREF_N_VARIANTS][TAU_LAW + 1];
    for (int v = 0; v < TREF_N_VARIANTS; v++) {
        law[v][TAU_LAW] = tref_meeting_law(&R, v, kx, ky, law[v], TAU_LAW);
    }
    const double *L = law[variant];
    double mean = 0.0;
    for (int t = 1; t <= TAU_LAW; t++) {
        mean += t * L[t - 1];
    }
    T_ASSERT_MSG(L[TAU_LAW] < 1e-9, "P(tau > %d) = %g: pick a faster pair", TAU_LAW, L[TAU_LAW]);
    ebm_sampler_t *s = t_sampler(m, variant == TREF_MH ? EBM_SAMPLER_MH_UNIFORM : EBM_SAMPLER_GIBBS,
                                 0, variant == TREF_MH ? 1 : variant);
    ebm_rng_t *rng = t_rng(4000 + (uint64_t)_i, 0);
    const int64_t n = t_scaled(50000);
    float *x = t_malloc((size_t)(n * w) * sizeof *x), *y = t_malloc((size_t)(n * w) * sizeof *y);
    uint8_t *met = t_malloc((size_t)n);
    int *tau = t_calloc((size_t)n, sizeof *tau);
    tref_fill_rows(&R, kx, n, x);
    tref_fill_rows(&R, ky, n, y);
    int64_t left = n;
    int t = 0;
    double tries_max = 0.0;
    while (left > 0 && t < TAU_CAP) {
        t++;
        ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met), EBM_OK);
        tries_max = fmax(tries_max, ebm_sampler_stat(s, EBM_STAT_TRIES_MAX));
        for (int64_t r = 0; r < n; r++) {
            int equal = memcmp(x + r * w, y + r * w, (size_t)w * sizeof *x) == 0;
            T_ASSERT_MSG(met[r] == equal, "row %lld step %d: met %d, rows equal %d", (long long)r,
                         t, met[r], equal);
            if (met[r] && tau[r] == 0) {
                tau[r] = t;
                left--;
            } else if (!met[r] && tau[r] != 0) {
                ck_abort_msg("row %lld met at step %d and parted at step %d", (long long)r, tau[r],
                             t);
            }
        }
    }
    T_ASSERT_MSG(left == 0, "%lld rows had not met after %d steps", (long long)left, TAU_CAP);
    double cnt[TAU_LAW + 1] = {0}, sim_mean = 0.0;
    for (int64_t r = 0; r < n; r++) {
        cnt[tau[r] <= TAU_LAW ? tau[r] - 1 : TAU_LAW] += 1.0;
        sim_mean += tau[r];
    }
    sim_mean /= (double)n;
    T_VLOG("  meeting time, %s, pair (%d,%d): mean %.4f (exact %.4f), P(tau=1,2,3) = %.4f %.4f "
           "%.4f exact %.4f %.4f %.4f, longest %d, tries max %.0f\n",
           TREF_VARIANT_NAME[variant], kx, ky, sim_mean, mean, cnt[0] / n, cnt[1] / n, cnt[2] / n,
           L[0], L[1], L[2], t, tries_max);
    char what[120];
    snprintf(what, sizeof what, "meeting time law, %s", TREF_VARIANT_NAME[variant]);
    ref_expect_fit(what, cnt, L, TAU_LAW + 1, (double)n, 1e-6 / TREF_N_VARIANTS);
    /* Broken twins: another variant's law, where the laws differ. */
    int twins = 0;
    for (int v = 0; v < TREF_N_VARIANTS; v++) {
        double tv = 0.0;
        for (int i = 0; i <= TAU_LAW; i++) {
            tv += 0.5 * fabs(law[v][i] - L[i]);
        }
        if (v != variant && tv > 0.05) {
            T_ASSERT_MSG(ref_gof_fails(ref_chisq(cnt, law[v], TAU_LAW + 1, (double)n), 1e-6),
                         "the meeting times also fit the law of %s (TV %.3f)", TREF_VARIANT_NAME[v],
                         tv);
            twins++;
        }
    }
    T_ASSERT_MSG(twins > 0, "no broken twin for the meeting-time law");
    free(x);
    free(y);
    free(met);
    free(tau);
    free(J);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* CRN and BLOCKWISE on the DBMs (blocks of several layers): meeting is
 * finite and quick. _i = 2 model + (coupling == BLOCKWISE). */
START_TEST(meeting_time_finite)
{
    const tref_mspec *ms = &TREF_MODELS[2 + _i / 2];
    const int coupling = _i % 2 ? EBM_COUPLING_BLOCKWISE : EBM_COUPLING_CRN;
    ebm_model_t *m = tref_make_model(ms);
    tref R;
    tref_load_model(ms, m, &R);
    const int w = R.width;
    ebm_sampler_t *s = t_sampler(m, EBM_SAMPLER_GIBBS, 0, coupling);
    ebm_rng_t *rng = t_rng(4500 + (uint64_t)_i, 0);
    const int64_t n = t_scaled(20000);
    float *x = t_malloc((size_t)(n * w) * sizeof *x), *y = t_malloc((size_t)(n * w) * sizeof *y);
    uint8_t *met = t_malloc((size_t)n);
    tref_fill_rows(&R, 0, n, x);
    tref_fill_rows(&R, R.S - 1, n, y);
    int *tau = t_calloc((size_t)n, sizeof *tau);
    int64_t left = n;
    int t = 0;
    while (left > 0 && t < TAU_CAP) {
        t++;
        ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met), EBM_OK);
        for (int64_t r = 0; r < n; r++) {
            if (met[r] && tau[r] == 0) {
                tau[r] = t;
                left--;
            }
            T_ASSERT(!(tau[r] != 0 && !met[r]));
        }
    }
    double mean = 0.0;
    for (int64_t r = 0; r < n; r++) {
        mean += tau[r];
    }
    T_VLOG("  %s %s from (0, %d): mean meeting time %.3f, longest %d\n", ms->name,
           t_coupling_name(coupling), R.S - 1, mean / n, t);
    T_ASSERT_MSG(left == 0, "%s: %lld rows had not met after %d steps", ms->name, (long long)left,
                 TAU_CAP);
    free(x);
    free(y);
    free(met);
    free(tau);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 3. Gaussian layers: the reflection-maximal coupling of a GRBM 2x2        */
/* ------------------------------------------------------------------------ */

/* The GRBM's p(h_j = 1 | v) of a row. */
static void h_probs(const tref *R, const float *row, double *q)
{
    double x[TREF_MAXW];
    for (int c = 0; c < R->width; c++) {
        x[c] = row[c];
    }
    for (int j = 0; j < 2; j++) {
        q[j] = tref_up(R, 1, tref_input(R, 1, x, j));
    }
}

/* The probability of configuration a (bit j: unit j) of independent
 * Bernoulli(q_j). */
static double config_p(const double *q, int a)
{
    return (a & 1 ? q[0] : 1.0 - q[0]) * (a & 2 ? q[1] : 1.0 - q[1]);
}

/* _i = coupling. Pairs (x0, y0) with different h: the v blocks are
 * N(m1, sigma^2) and N(m2, sigma^2), whose maximal couplings meet with
 * probability 1 - TV = 2 Phi(-|z|/2), z = (m1 - m2)/sigma; under CRN and
 * BLOCKWISE unmet y is the reflection of x, and under BLOCKWISE h is then
 * coupled maximally given the two v. */
START_TEST(grbm_coupled)
{
    const int coupling = _i;
    tref R;
    ebm_model_t *m = tref_make_grbm(&R);
    ebm_sampler_t *s = t_sampler(m, EBM_SAMPLER_GIBBS, 0, coupling);
    ebm_rng_t *rng = t_rng(5200 + (uint64_t)_i, 0);
    const int64_t n = t_scaled(150000);
    const int w = R.width;
    static const float pairs[][2][4] = {
        {{0.3f, -1.0f, 0.0f, 0.0f}, {1.2f, 0.4f, 1.0f, 0.0f}},
        {{0.3f, -1.0f, 1.0f, 0.0f}, {-0.5f, 2.0f, 1.0f, 1.0f}},
        {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 1.0f, 1.0f}},
        {{2.0f, 1.0f, 1.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}},
        {{2.0f, 1.0f, 1.0f, 0.0f}, {-1.0f, 0.5f, 1.0f, 0.0f}}, /* same h: surely meet */
    };
    enum { NP = sizeof pairs / sizeof pairs[0] };
    const double alpha = 1e-6 / (4.0 * NP);
    float *x = t_malloc((size_t)(n * w) * sizeof *x), *y = t_malloc((size_t)(n * w) * sizeof *y);
    uint8_t *met = t_malloc((size_t)n);
    double bound[NP], freq[NP];
    int h_twins = 0;
    for (int i = 0; i < NP; i++) {
        for (int64_t r = 0; r < n; r++) {
            memcpy(x + r * w, pairs[i][0], sizeof pairs[i][0]);
            memcpy(y + r * w, pairs[i][1], sizeof pairs[i][1]);
        }
        double m1[2], m2[2], zz = 0.0, e[2];
        tref_grbm_mean(&R, pairs[i][0], m1);
        tref_grbm_mean(&R, pairs[i][1], m2);
        for (int k = 0; k < 2; k++) {
            e[k] = (m1[k] - m2[k]) / exp(0.5 * R.logvar[k]);
            zz += e[k] * e[k];
        }
        const double zn = sqrt(zz);
        bound[i] = 2.0 * ref_phi(-0.5 * zn);
        ck_assert_int_eq(ebm_sampler_coupled_step(s, rng, n, x, w, y, w, met), EBM_OK);
        double k = 0.0, refl_err = 0.0, hk = 0.0, hp = 0.0, hv = 0.0, hcrn = 0.0, hvc = 0.0;
        for (int64_t r = 0; r < n; r++) {
            int equal = memcmp(x + r * w, y + r * w, (size_t)w * sizeof *x) == 0;
            T_ASSERT_MSG(met[r] == equal, "pair %d row %lld: met %d, equal %d", i, (long long)r,
                         met[r], equal);
            k += met[r];
            if (!met[r] && coupling == EBM_COUPLING_BLOCKWISE) {
                /* h given v maximally coupled: equal with probability
                 * 1 - TV of the two product laws, and, as the broken
                 * twin, the unit-by-unit (CRN) prod_j (1 - |q_j - q'_j|) */
                double qx[2], qy[2], same = 1.0;
                h_probs(&R, x + r * w, qx);
                h_probs(&R, y + r * w, qy);
                double tvh = 0.0;
                for (int a = 0; a < 4; a++) {
                    tvh += 0.5 * fabs(config_p(qx, a) - config_p(qy, a));
                }
                for (int j = 0; j < 2; j++) {
                    same *= 1.0 - fabs(qx[j] - qy[j]);
                }
                const int equal_h = x[r * w + 2] == y[r * w + 2] && x[r * w + 3] == y[r * w + 3];
                hk += equal_h;
                hp += 1.0 - tvh;
                hv += (1.0 - tvh) * tvh;
                hcrn += same;
                hvc += same * (1.0 - same);
            }
            if (!met[r] && coupling != EBM_COUPLING_MAXIMAL && zn > 0.0) {
                /* reflection: xi_y = xi_x - 2 (e.xi_x) e, so xi_y - xi_x is along e */
                double dx[2];
                for (int c = 0; c < 2; c++) {
                    double sg = exp(0.5 * R.logvar[c]);
                    double xi_x = ((double)x[r * w + c] - m1[c]) / sg;
                    double xi_y = ((double)y[r * w + c] - m2[c]) / sg;
                    dx[c] = xi_y - xi_x;
                }
                double along = (dx[0] * e[0] + dx[1] * e[1]) / zz;
                refl_err =
                    fmax(refl_err, fmax(fabs(dx[0] - along * e[0]), fabs(dx[1] - along * e[1])));
            }
        }
        freq[i] = k;
        double z = ref_binom_z(k, (double)n, bound[i]);
        T_VLOG("  GRBM %s pair %d: |z| = %.3f, met %.5f, 2 Phi(-|z|/2) = %.5f, z-score %.2f, "
               "tries mean %.2f max %.0f, reflection error %.2g\n",
               t_coupling_name(coupling), i, zn, k / n, bound[i], z,
               ebm_sampler_stat(s, EBM_STAT_TRIES_MEAN), ebm_sampler_stat(s, EBM_STAT_TRIES_MAX),
               refl_err);
        T_ASSERT_MSG(fabs(z) < 5.0, "GRBM pair %d: met %.5f, 1 - TV = %.5f, z = %.2f", i, k / n,
                     bound[i], z);
        if (hv > 0.0) {
            const double zh = (hk - hp) / sqrt(hv), zc = (hk - hcrn) / sqrt(hvc + hv);
            T_VLOG("  GRBM BLOCKWISE pair %d: h equal in %.0f rows apart in v, expected %.1f "
                   "(z %.2f); unit by unit %.1f (z %.2f)\n",
                   i, hk, hp, zh, hcrn, zc);
            T_ASSERT_MSG(fabs(zh) < 5.0, "GRBM BLOCKWISE pair %d: h equal in %.0f rows, expected "
                         "%.1f (z %.2f)", i, hk, hp, zh);
            if (fabs(hp - hcrn) > 12.0 * sqrt(hv + hvc)) {
                T_ASSERT_MSG(fabs(zc) >= 5.0, "GRBM BLOCKWISE pair %d: the h meetings also fit "
                             "the unit-by-unit law", i);
                h_twins++;
            }
        }
        T_ASSERT_MSG(refl_err < 1e-4,
                     "GRBM %s pair %d: unmet y is not the reflection of x (off by %g)",
                     t_coupling_name(coupling), i, refl_err);
        char what[120];
        snprintf(what, sizeof what, "GRBM %s pair %d x'", t_coupling_name(coupling), i);
        tref_check_normal(what, &R, n, x, m1, alpha);
        tref_check_hidden(what, &R, n, x);
        snprintf(what, sizeof what, "GRBM %s pair %d y'", t_coupling_name(coupling), i);
        tref_check_normal(what, &R, n, y, m2, alpha);
        tref_check_hidden(what, &R, n, y);
        /* broken twin: y's values against x's mean */
        if (zn > 0.5) {
            double s0 = 0.0, s1 = 0.0;
            for (int64_t r = 0; r < n; r++) {
                s0 += ((double)y[r * w] - m1[0]) / exp(0.5 * R.logvar[0]);
                s1 += ((double)y[r * w + 1] - m1[1]) / exp(0.5 * R.logvar[1]);
            }
            T_ASSERT(fmax(fabs(s0), fabs(s1)) / sqrt((double)n) >= 5.0);
        }
    }
    /* broken twin of the meeting law */
    int twins = 0;
    for (int i = 0; i < NP; i++) {
        for (int j = 0; j < NP; j++) {
            if (fabs(bound[i] - bound[j]) > 0.02) {
                T_ASSERT(fabs(ref_binom_z(freq[i], (double)n, bound[j])) >= 5.0);
                twins++;
            }
        }
    }
    T_ASSERT(twins > 0);
    T_ASSERT_MSG(coupling != EBM_COUPLING_BLOCKWISE || h_twins > 0,
                 "no broken twin for the meeting of h");
    free(x);
    free(y);
    free(met);
    ebm_rng_destroy(rng);
    ebm_sampler_destroy(s);
    ebm_model_destroy(m);
}
END_TEST

/* The default coupling by the model's kind: BLOCKWISE for a DBM and for
 * spin units, CRN for a binary RBM and a GRBM. A sampler left at its default
 * makes the same coupled steps (same bits) as one set to that coupling, and
 * others than one set to the other. */
START_TEST(default_coupling)
{
    tref R;
    enum { KINDS = 4, N = 200 };
    ebm_model_t *models[KINDS] = {tref_make_model(&TREF_MODELS[2]), tref_make_model(&TREF_MODELS[1]),
                                  tref_make_model(&TREF_MODELS[0]), tref_make_grbm(&R)};
    static const char *const kind_name[KINDS] = {"binary DBM", "spin RBM", "binary RBM", "GRBM"};
    const int expect[KINDS] = {EBM_COUPLING_BLOCKWISE, EBM_COUPLING_BLOCKWISE, EBM_COUPLING_CRN,
                               EBM_COUPLING_CRN};
    for (int k = 0; k < KINDS; k++) {
        const int other = expect[k] == EBM_COUPLING_CRN ? EBM_COUPLING_BLOCKWISE : EBM_COUPLING_CRN;
        ebm_model_t *m = models[k];
        const int64_t w = ebm_model_state_width(m);
        float *x0 = t_malloc((size_t)(2 * N * w) * sizeof *x0), *y0 = x0 + N * w;
        float *out[3][2];
        t_fill_states(m, N, x0, w, 61);
        t_fill_states(m, N, y0, w, 62);
        for (int v = 0; v < 3; v++) { /* default, expected, other */
            ebm_sampler_t *s = NULL;
            ck_assert_int_eq(ebm_sampler_create(&s, m, EBM_SAMPLER_GIBBS), EBM_OK);
            if (v > 0) {
                ck_assert_int_eq(
                    ebm_sampler_set_int(s, EBM_SAMPLER_COUPLING, v == 1 ? expect[k] : other),
                    EBM_OK);
            }
            out[v][0] = t_malloc((size_t)(2 * N * w) * sizeof(float));
            out[v][1] = out[v][0] + N * w;
            memcpy(out[v][0], x0, (size_t)(2 * N * w) * sizeof(float));
            ebm_rng_t *rng = t_rng(77, 0);
            for (int t = 0; t < 3; t++) {
                ck_assert_int_eq(
                    ebm_sampler_coupled_step(s, rng, N, out[v][0], w, out[v][1], w, NULL), EBM_OK);
            }
            ebm_rng_destroy(rng);
            ebm_sampler_destroy(s);
        }
        const size_t bytes = (size_t)(2 * N * w) * sizeof(float);
        T_ASSERT_MSG(memcmp(out[0][0], out[1][0], bytes) == 0,
                     "%s: the default coupling is not %s", kind_name[k],
                     t_coupling_name(expect[k]));
        T_ASSERT_MSG(memcmp(out[0][0], out[2][0], bytes) != 0,
                     "%s: the default coupling also matches %s (the test has no power)",
                     kind_name[k], t_coupling_name(other));
        for (int v = 0; v < 3; v++) {
            free(out[v][0]);
        }
        free(x0);
        ebm_model_destroy(m);
    }
}
END_TEST

Suite *ebm_coupling_suite(void)
{
    const double slow = t_level() >= 2 ? 20.0 : 1.0;
    const t_test tests[] = {
        {"coupled_law", coupled_law, TREF_N_VARIANTS * TREF_N_MODELS, 60 * slow, NULL, NULL},
        {"coupled_law", clamped_layers_fixed,
         TREF_N_VARIANTS * (TREF_N_MODELS - TREF_FIRST_CLAMPED), 60 * slow, NULL, NULL},
        {"meeting_time", meeting_time_law, TREF_N_VARIANTS, 60 * slow, NULL, NULL},
        {"meeting_time", meeting_time_finite, 4, 60 * slow, NULL, NULL},
        {"gaussian", grbm_coupled, 3, 60 * slow, NULL, NULL},
        {"default", default_coupling, 1, 60 * slow, NULL, NULL},
    };
    return t_suite("coupling", tests, sizeof tests / sizeof tests[0]);
}
