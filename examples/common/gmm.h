/* Gaussian mixtures with diagonal covariances: the synthetic densities of
 * Liao et al. (2022), section 4.1 and Figure 1.
 *
 *   p(x) = sum_k w_k N(x; mu_k, diag(sd_k^2))
 *
 * The two 2-D mixtures of the paper are built in (gmm_liao): the paper gives
 * no numbers, and these are the ones of its published code (main.py,
 * create_dataset): weights 0.33, 0.33, 0.34; means (-5, -5), (5, -5), (0, 5);
 * standard deviations (1, 1) for all three components (isotropic), or
 * (1.25, 0.5), (1.25, 0.5), (0.5, 1.25) (anisotropic).
 *
 * Draws come from an ebm_rng_t, so a data set is fixed by (seed, stream).
 * Nothing here prints or exits.
 */
#ifndef EXAMPLES_COMMON_GMM_H
#define EXAMPLES_COMMON_GMM_H

#include <ebm.h>
#include <stdint.h>

/** Most components and dimensions a mixture may have. */
#define GMM_MAX_COMPONENTS 8
#define GMM_MAX_DIM 8

typedef struct gmm {
    const char *name; /* e.g. "isotropic" */
    int k, dim;
    double w[GMM_MAX_COMPONENTS];               /* weights, summing to 1 */
    double mu[GMM_MAX_COMPONENTS][GMM_MAX_DIM]; /* means */
    double sd[GMM_MAX_COMPONENTS][GMM_MAX_DIM]; /* standard deviations, > 0 */
} gmm;

enum gmm_liao_kind { GMM_ISOTROPIC = 0, GMM_ANISOTROPIC = 1 };

/** The mixture of Liao et al.'s Figure 1 (see above). @return 0, or -1 for an unknown kind */
int gmm_liao(gmm *g, int kind);
/**
 * n draws into x (n x dim floats, row stride ldx >= dim): a component by the
 * inverse CDF of one uniform, then mu + sd * N(0, 1) per coordinate.
 * @param[out] comp NULL, or [n]: the component each row was drawn from
 * @return 0, or a negative EBM_E* code from the generator
 */
int gmm_sample(const gmm *g, ebm_rng_t *rng, int64_t n, float *x, int64_t ldx, int *comp);
/** log p(x) of one point, in double. */
double gmm_log_density(const gmm *g, const double *x);
/** The component with the largest posterior w_k N(x; mu_k, sd_k) (ties: the first). */
int gmm_assign(const gmm *g, const double *x);
/** The smallest Mahalanobis distance of x to a component mean, in standard deviations. */
double gmm_nearest_distance(const gmm *g, const double *x);

#endif
