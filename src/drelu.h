/*
 * The numerics of dReLU units (Tubiana et al. 2019): a unit h with energy
 * gp (h+)^2 / 2 - tp h+ + gn (h-)^2 / 2 - tn h- (h+ = max(h, 0), h- =
 * min(h, 0)) and their half-line Gaussian integrals, in double precision
 * (drelu.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_DRELU_H
#define EBM_DRELU_H

#include "rng.h"

#include <stdint.h>

/* log erfcx(z) = log(exp(z^2) erfc(z)), for every finite z: the relative
 * error of erfcx is below 1e-13. */
double ebm__log_erfcx(double z);
/* log of the integral over h > 0 of exp(-g h^2 / 2 + t h), g > 0:
 * 0.5 log(pi / (2 g)) + log erfcx(-t / sqrt(2 g)). */
double ebm__half_log_int(double g, double t);
/* The free energy of one dReLU unit, -log of the integral over all h of
 * exp(-E(h)): -logaddexp(half_log_int(gp, tp), half_log_int(gn, -tn)). */
double ebm__drelu_free(double gp, double gn, double tp, double tn);

/* The law of one dReLU unit given its inputs: the probability pp of the
 * positive half (pn = 1 - pp), and the half-line moments E[h | h > 0],
 * E[h^2 | h > 0], E[h | h < 0], E[h^2 | h < 0]. */
typedef struct ebm__drelu_moments {
    double pp, pn;
    double m1p, m2p, m1n, m2n;
} ebm__drelu_moments;
void ebm__drelu_moments_of(double gp, double gn, double tp, double tn, ebm__drelu_moments *mo);
/* The mean and second moment of the positive half-line law exp(-g h^2 / 2 +
 * t h), h > 0 (a normal N(t/g, 1/g) truncated to h > 0). */
void ebm__half_moments(double g, double t, double *m1, double *m2);

/* log p(h) of one dReLU unit: log pp + the log density of the positive
 * half-line law at h (h >= 0), or log pn + that of the negative one; the
 * half's density is written around its centre t / g, -g (h - t / g)^2 / 2 -
 * 0.5 log(pi / (2 g)) - log erfc(-t / sqrt(2 g)), where its terms would
 * otherwise cancel (large t). */
double ebm__drelu_logprob(double gp, double gn, double tp, double tn, double h);
/* The mean of one dReLU unit: pp E[h | h > 0] + pn E[h | h < 0]. */
double ebm__drelu_mean(double gp, double gn, double tp, double tn);
/* The most probable value of one dReLU unit (the argmin of E(h)): 0 when
 * tp <= 0 <= tn, else tp / gp or tn / gn, whichever lowers E more (ties:
 * the positive one). */
double ebm__drelu_mode(double gp, double gn, double tp, double tn);

/* Rejection tries of one half-line draw. Each is accepted with probability
 * 1/2 or more, so all are rejected with probability below 2^-64; then the
 * last proposal is taken (clipped to its half). */
#define EBM__DRELU_TRIES 64
/* One draw of a dReLU unit given its law, from the words word .. word + 7
 * of stream row `row` (word a multiple of 4) and, for rejection try k >= 1,
 * the words word .. word + 3 of ebm__stream_for_try(s, k): the half by a
 * uniform in (0, 1] of words 4-5 (positive iff at most pp), then a normal
 * truncated to it: for alpha = -t / sqrt(g) <= 0 by rejection of N(0, 1)
 * proposals (Box-Muller of the try's words), else by Robert's (1995)
 * exponential proposals alpha + Exp(1) / lam, lam = (alpha + sqrt(alpha^2 +
 * 4)) / 2, accepted when log u <= -(z - lam)^2 / 2. */
double ebm__drelu_draw(double gp, double gn, double tp, double tn, const ebm__stream *s,
                       uint32_t row, uint64_t word);

#endif /* EBM_DRELU_H */
