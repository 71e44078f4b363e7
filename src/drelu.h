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

#endif /* EBM_DRELU_H */
