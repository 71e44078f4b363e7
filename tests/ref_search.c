/*
 * The local search of Taniguchi et al. (Alg. 1, with clamping) as a
 * double-precision trajectory, and fixed points by brute force (ref.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Replace the free units of layer l by their conditional argmin (double);
 * *amin tracks the smallest relative |input| met (tie sensitivity). */
static void argmin_layer(const ref_t *R, int l, double *y, const uint8_t *clamp,
                             double *amin)
{
    for (int64_t j = 0; j < R->n[l]; j++) {
        if (clamp != NULL && clamp[R->off[l] + j]) {
            continue;
        }
        double mag, a = ref_input(R, l, y, j, &mag);
        if (!ref_is_discrete(R, l)) {
            y[R->off[l] + j] = a;
            continue;
        }
        double rel = fabs(a) / fmax(1.0, mag);
        if (rel < *amin) {
            *amin = rel;
        }
        y[R->off[l] + j] = (a >= 0) ? 1.0 : ref_down(R->units[l]);
    }
}

/* Algorithm 1 of Taniguchi et al. with clamping: order 0 = even layers
 * first. Returns 1 if stopped by the cap. */
int ref_local_search(const ref_t *R, double *y, const uint8_t *clamp, int order,
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
                argmin_layer(R, l, y, clamp, amin);
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
int ref_is_fixed(const ref_t *R, const double *y0, const uint8_t *clamp)
{
    double *y = malloc((size_t)R->width * sizeof *y);
    ck_assert_ptr_nonnull(y);
    memcpy(y, y0, (size_t)R->width * sizeof *y);
    int fixed = 1;
    double e0 = ref_energy(R, y0);
    for (int l = 0; l < R->nl && fixed; l++) {
        if (!ref_is_discrete(R, l)) {
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
                y[free_idx[k]] = ((c >> k) & 1u) ? 1.0 : ref_down(R->units[l]);
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
