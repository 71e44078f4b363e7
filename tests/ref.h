/* The reference implementations the tests compare the library with
 * (tests/README.md): written a second time here, in double precision,
 * straight from the definitions in include/ebm.h and the papers it cites,
 * and never from the library's code.
 *
 *   ref_energy.c    brute-force enumeration: energies, free energies of
 *                   every sum-out mask, log Z, conditionals, finite
 *                   differences; the tiny models of the exact tests
 *   ref_search.c    local search (Taniguchi et al., Alg. 1) as a
 *                   double-precision trajectory, fixed points by brute force
 *   ref_sampler.c   the samplers and couplings as exact transition matrices
 *                   on tiny models, the law of the meeting time
 *   ref_langevin.c  a GRBM whose visible law is an exact Gaussian mixture:
 *                   its moments, exact draws, the moments of K Langevin steps
 *   ref_gradient.c  the exact gradient of the log-likelihood, by enumeration
 *                   (binary and spin models) or in closed form (GRBMs)
 *   ref_stats.c     the laws the statistical tests compare with: chi-square
 *                   p-values and goodness of fit, normal quantiles, z-scores
 *
 * The references of the generator (Philox, the counter layout) and of the
 * vectorised kernels stay in check_rng.c and check_simd.c: they are written
 * against internal symbols (src/). */
#ifndef EBM_TESTS_REF_H
#define EBM_TESTS_REF_H

#include <math.h>
#include <stdint.h>

#include "tests.h"

#define REF_PI 3.14159265358979323846

/* ======================================================================== */
/* ref_energy.c: brute-force enumeration                                    */
/* ======================================================================== */
/*
 *   E(x) = - sum_l b_l . x_l - sum_{l>=1} x_{l-1}^T W_l x_l      (0/1 and -1/+1 layers)
 *   centred (offsets mu): every x_l of a 0/1 or -1/+1 layer above is x_l - mu_l
 *   Gaussian layer 0 (mu = b_0, sigma^2 = exp(logvar)):
 *   E(v, x_1, ...) = 0.5 sum_i (v_i - mu_i)^2 / sigma_i^2
 *                    - sum_ij (v_i / sigma_i^2) W1_ij x1_j - (the other terms as above)
 *
 * A free energy is never computed by softplus / log cosh / the Gaussian
 * closed form: every configuration of the summed-out layers is enumerated
 * and exp(-E) added (log-sum-exp in double); a summed-out Gaussian layer is
 * integrated per unit by the trapezoidal rule (ref_glogint). The parameter
 * layout is taken from ebm_model_param_block only.
 */

/* The tiny models of the exact tests, and several random parameter draws
 * per model, one with |W| up to 50 and one centred (random offsets in the
 * units' ranges, on the models without Gaussian units). */
typedef struct ref_mspec {
    const char *name;
    int nl;
    int64_t sizes[4];
    int vis, hid;
} ref_mspec;
#define REF_N_MODELS 10
extern const ref_mspec REF_MODELS[REF_N_MODELS];

typedef struct ref_pset {
    uint64_t seed;
    double scale;
    int centred;
} ref_pset;
#define REF_N_PSETS 5
extern const ref_pset REF_PSETS[REF_N_PSETS];

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
    double *mu;    /* the offsets (0 unless centred) */
    double *y;     /* scratch state of ref_free */
    char ctx[160]; /* model / parameter set, for messages */
} ref_t;

static inline int ref_gauss0(const ref_t *R) { return R->units[0] == EBM_UNITS_GAUSSIAN; }
static inline double ref_W(const ref_t *R, int l, int64_t i, int64_t j)
{
    return R->p[R->woff[l] + i * R->n[l] + j];
}
static inline double ref_B(const ref_t *R, int l, int64_t j) { return R->p[R->boff[l] + j]; }
static inline double ref_S2(const ref_t *R, int64_t i) { return exp(R->p[R->lvoff + i]); }
static inline double ref_down(int units) { return units == EBM_UNITS_SPIN ? -1.0 : 0.0; }
static inline int ref_is_discrete(const ref_t *R, int l)
{
    return R->units[l] != EBM_UNITS_GAUSSIAN;
}

/* Model mi of REF_MODELS with parameter set pi, and its reference. */
ebm_model_t *ref_make_model(int mi, int pi, ref_t *R);
/* Read the shape and the layout from the library, check that the blocks are
 * consistent with the shape, disjoint and cover the parameter vector; copy
 * the parameters. ref_free_all frees the copies. */
void ref_init(ref_t *R, const ebm_model_t *m, const char *ctx);
void ref_load_params(ref_t *R, const ebm_model_t *m);
/* Draw offsets in the units' ranges (seeded), set them without keeping the
 * law (ebm_model_set_offsets(m, mu, 0)) and reload the reference. */
void ref_centre(ref_t *R, ebm_model_t *m, uint64_t seed);
void ref_free_all(ref_t *R);

/* E(x), and its terms that involve layer 0 (ref_e0) and the others. */
double ref_energy(const ref_t *R, const double *x);
double ref_e0(const ref_t *R, const double *x);
double ref_erest(const ref_t *R, const double *x);
/* log of the integral over v of exp(-(Gaussian terms of E)) given x_1: by
 * quadrature (REF_QUAD) or, to check it, in closed form (REF_CLOSED). */
enum { REF_QUAD = 0, REF_CLOSED = 1 };
double ref_glogint(const ref_t *R, const double *x, int how);

/* A running log-sum-exp. */
typedef struct ref_lse {
    double m, s;
} ref_lse;
void ref_lse_init(ref_lse *a);
void ref_lse_add(ref_lse *a, double t);
double ref_lse_val(const ref_lse *a);

/* Set the discrete layers in `mask` of y from the bits of code (layer by
 * layer, unit by unit, lowest bit first); their number of bits. */
void ref_set_from_code(const ref_t *R, uint32_t mask, uint64_t code, double *y);
void ref_set_from_code_f(const ref_t *R, uint32_t mask, uint64_t code, float *x);
int ref_discrete_bits(const ref_t *R, uint32_t mask);
uint32_t ref_all_layers(const ref_t *R);
/* A valid sum-out mask: no two adjacent layers, no bit past the last. */
int ref_mask_valid(const ref_t *R, uint32_t mask);
/* F_S(x) = -log sum over the configurations of the layers in S of exp(-E),
 * by enumeration (any S, adjacent or not: all layers gives -log Z). */
double ref_free(const ref_t *R, uint32_t mask, const double *x);
double ref_log_z(const ref_t *R);
/* Input of unit j of layer l (ebm.h's formula), and a magnitude bound (sum
 * of absolute terms) for float tolerances. */
double ref_input(const ref_t *R, int l, const double *x, int64_t j, double *mag);
double ref_sigmoid(double a);
/* The conditional mean of a unit of kind units with input a. */
double ref_mean_of_input(int units, double a);
int ref_layer_of(const ref_t *R, int64_t k);
void ref_row_to_d(const ref_t *R, const float *x, double *y);
int ref_close_rel(double a, double b, double rel);
/* Random finite visible values around the mean (mu + sigma U(-3, 3)), a
 * random valid state, every configuration of the discrete layers (times nv
 * random v for a Gaussian visible layer; rows of stride width). */
float ref_rand_v(const ref_t *R, int64_t i, uint64_t *rs);
void ref_rand_state(const ref_t *R, uint64_t *rs, float *x);
float *ref_all_states(const ref_t *R, int nv, uint64_t *rs, int64_t *n_out);
/* sum_r coef[r] F_S(y_r), and its derivative in parameter k by central
 * differences with steps h and h/2 and one Richardson step: O(h^4). */
double ref_batch_f(const ref_t *R, uint32_t S, int64_t n, const double *yd, const double *coef);
double ref_fd_param(ref_t *R, int64_t k, uint32_t S, int64_t n, const double *yd,
                    const double *coef, double h);

/* ======================================================================== */
/* ref_search.c: local search                                               */
/* ======================================================================== */

/* Algorithm 1 of Taniguchi et al. with clamping, in double: order 0 = even
 * layers first. *sweeps gets the sweeps made, *amin the smallest relative
 * |input| met (tie sensitivity). Returns 1 if stopped by the cap. */
int ref_local_search(const ref_t *R, double *y, const uint8_t *clamp, int order, int64_t cap,
                     int64_t *sweeps, double *amin);
/* Is y a fixed point of every free unit's conditional argmin (brute force
 * over each layer's configurations restricted to the free units)? */
int ref_is_fixed(const ref_t *R, const double *y0, const uint8_t *clamp);

/* ======================================================================== */
/* ref_sampler.c: the kernels as exact transition matrices                  */
/* ======================================================================== */
/*
 *  - EBM_SAMPLER_GIBBS: block B1 = the free even layers (or the free odd
 *    ones if no even layer is free) drawn given the rest, then block B2 = the
 *    free odd layers given the new B1:
 *        P(x, y) = prod_{l in B1} p(y_l | x) * prod_{l in B2} p(y_l | y)
 *  - EBM_SAMPLER_MH_UNIFORM (Taniguchi et al. 2023, eq. 14): a uniform
 *    independent proposal z over the free units, accepted with probability
 *    min(1, exp(E(x) - E(z))).
 *  - coupled Gibbs steps (Qiu et al. 2020, Algs. 1, 3, 4 and appendix A):
 *    all three couplings meet with probability sum_a min(p1(a), p2(a)) over
 *    B1 configurations a (tref_coupled_gibbs); BLOCKWISE couples B2 the
 *    same way given each chain's new B1.
 *  - coupled MH (Taniguchi Algs. 3 and 4): a common proposal z and a common
 *    uniform u: x moves iff u < A_x(z), y iff u < A_y(z).
 */

#define TREF_MAXW 8 /* widest tiny model */
#define TREF_MAXL 4 /* most layers of a tiny model */

/* A tiny model in double precision, read through the public layout. */
typedef struct tref {
    int nl, width;
    int n[TREF_MAXL], off[TREF_MAXL], units[TREF_MAXL];
    double W[TREF_MAXL][16]; /* W_l, n_{l-1} x n_l row-major, l >= 1 */
    double b[TREF_MAXL][TREF_MAXW];
    double logvar[TREF_MAXW];
    uint32_t clamp;
    int ndisc, disc[TREF_MAXW]; /* the discrete columns: enumerated */
    int S;                      /* 2^ndisc states */
    double base[TREF_MAXW];     /* values of the Gaussian columns in every state */
    int layer_of[TREF_MAXW], unit_of[TREF_MAXW];
} tref;

/* The tiny models; the first TREF_FIRST_CLAMPED have no clamped layer. */
typedef struct tref_mspec {
    const char *name;
    int nl;
    int64_t sizes[3];
    int vis, hid;
    uint32_t clamp;
    uint64_t seed;
    double scale;
} tref_mspec;
#define TREF_N_MODELS 9
#define TREF_FIRST_CLAMPED 4
extern const tref_mspec TREF_MODELS[TREF_N_MODELS];

/* The coupled kernels: the Gibbs couplings and coupled MH. */
enum { TREF_MAXIMAL = EBM_COUPLING_MAXIMAL, TREF_CRN = EBM_COUPLING_CRN,
       TREF_BLOCKWISE = EBM_COUPLING_BLOCKWISE, TREF_MH = 3, TREF_N_VARIANTS = 4 };
extern const char *const TREF_VARIANT_NAME[TREF_N_VARIANTS];

/* The highest layer that moves: its unit 0's bias is set to 0.9 (the broken
 * twins flip its sign). */
int tref_top_free_layer(const tref_mspec *ms);
ebm_model_t *tref_make_model(const tref_mspec *ms);
void tref_load_model(const tref_mspec *ms, const ebm_model_t *m, tref *R);
/* Read the model's parameters (clamp: the clamped layers; gauss: the values
 * of Gaussian columns in every state, NULL: 0). */
void tref_load(tref *R, const ebm_model_t *m, uint32_t clamp, const float *gauss);
/* A GRBM 2x2 (Gaussian visible, binary hidden) and its reference. */
ebm_model_t *tref_make_grbm(tref *R);

/* State k as a row; the state of a float row (-1 if a value is not a valid
 * value of its unit or a Gaussian (clamped) column moved); n rows (stride
 * width) of state k. */
void tref_row(const tref *R, int k, double *x);
int tref_code(const tref *R, const float *x);
void tref_fill_rows(const tref *R, int k, int64_t n, float *x);
int tref_same_clamped(const tref *R, const double *x, const double *y);
int tref_same_clamped_k(const tref *R, int a, int b);
/* Input of unit j of layer l (for a Gaussian layer 0 its conditional
 * mean), p(unit up | input a), the energy. */
double tref_input(const tref *R, int l, const double *x, int j);
double tref_up(const tref *R, int l, double a);
double tref_energy(const tref *R, const double *x);
void tref_blocks(const tref *R, uint32_t *b1, uint32_t *b2);
/* The columns of the layers in mask (discrete layers only). */
int tref_cols(const tref *R, uint32_t mask, int *cols);
/* MH: the number of configurations of the free units; min(1, exp(E(x) -
 * E(z))). */
double tref_mh_states(const tref *R);
double tref_accept(const tref *R, const double *x, const double *z);
/* The kernel's transition matrix P[x * S + y]; pi over the states with the
 * clamped values of state k0. */
void tref_matrix(const tref *R, int kind, double *P);
void tref_pi(const tref *R, int k0, double *pi);
/* The exact law J[kx * S + ky] of one coupled step from the states kx0 and
 * ky0 (same clamped values); tries (NULL or [2]) the mean and variance of
 * the rejection tries of a pair that did not meet. */
void tref_coupled_gibbs(const tref *R, int coupling, int kx0, int ky0, double *J,
                        double *tries);
void tref_coupled_mh(const tref *R, int kx0, int ky0, double *J);
void tref_joint(const tref *R, int variant, int kx0, int ky0, double *J);
/* law[t-1] = P(tau = t) for t = 1..tmax from the product chain; returns
 * P(tau > tmax). */
double tref_meeting_law(const tref *R, int variant, int kx0, int ky0, double *law, int tmax);

/* The GRBM's conditional mean of v given row's h; checks (fatal) that
 * standardised visible values are iid N(0, 1) and that h follows p(h | v). */
void tref_grbm_mean(const tref *R, const float *row, double *m);
void tref_check_normal(const char *what, const tref *R, int64_t n, const float *x,
                       const double *mean, double alpha);
void tref_check_hidden(const char *what, const tref *R, int64_t n, const float *x);

/* ======================================================================== */
/* ref_langevin.c: a GRBM 3x2 whose visible law is a Gaussian mixture       */
/* ======================================================================== */
/*
 *   p(v) = sum_h p(h) N(v; mu + W h, diag(sigma^2)),  p(h) ~ exp(-F_0(h)),
 * with F_0 the free energy with layer 0 summed out (ebm_model_free_energy
 * with sum_out = 1, constants kept).
 */

enum { REF_GRBM_NV = 3, REF_GRBM_NH = 2, REF_GRBM_WIDTH = 5, REF_GRBM_NSTATES = 4 };

typedef struct ref_grbm {
    ebm_model_t *m;
    int hid;
    double mu[REF_GRBM_NV], sig2[REF_GRBM_NV], w[REF_GRBM_NV][REF_GRBM_NH], b[REF_GRBM_NH];
    float hval[REF_GRBM_NSTATES][REF_GRBM_NH]; /* state s: h = (vals[s >> 1], vals[s & 1]) */
    double ph[REF_GRBM_NSTATES];
    double comp[REF_GRBM_NSTATES][REF_GRBM_NV]; /* mu + W h */
    double ev[REF_GRBM_NV], cov[REF_GRBM_NV][REF_GRBM_NV], evh[REF_GRBM_NV][REF_GRBM_NH];
    double ev2; /* E ||v||^2 */
} ref_grbm;

/* The options of a Langevin kernel under test. */
typedef struct ref_langevin_config {
    int kind;
    int64_t steps; /* EBM_SAMPLER_LANGEVIN_STEPS */
    double step_size;
    int cosine;
    int64_t adjust_after;
    int closed_form;
    int scale_by_variance;
    int precondition; /* EBM_SAMPLER_PRECONDITION: unit i's step alpha_k sigma_i^2 */
} ref_langevin_config;

/* The model (hidden units of kind hid) and its exact moments. */
void ref_grbm_setup(ref_grbm *g, int hid);
/* n exact draws of p(v, h): h ~ p(h), then v ~ N(mu + W h, sigma^2). */
void ref_grbm_draws(const ref_grbm *g, uint64_t seed, int64_t n, float *x, int64_t ldx);
/* The step sizes alpha_1..alpha_K of c's schedule. */
void ref_langevin_steps(const ref_grbm *g, const ref_langevin_config *c, double *alpha);
/* Mean and variance of v after K Langevin steps with h fixed (c_m: W h's
 * part of the mean), by the forward recursion of one step; `broken` is the
 * twin that must fail. */
void ref_langevin_moments(const ref_grbm *g, const ref_langevin_config *c, const double *v,
                          const double *cm, int broken, double *mean, double *var);

/* ======================================================================== */
/* ref_gradient.c: exact gradients of the log-likelihood                    */
/* ======================================================================== */

/* g = (1/n) sum_r d/dtheta log p(v_r) over the data rows (stride ldd):
 * binary and spin models with at most 12 units by enumeration, GRBMs with
 * at most 8 hidden units in closed form (the energies, free energies and
 * positive phases are checked against the library's on the way). */
void ref_exact_grad(const ebm_model_t *m, int64_t n, const float *data, int64_t ldd, double *g);

/* ======================================================================== */
/* ref_stats.c: the laws of the statistical tests                           */
/* ======================================================================== */

/* Q(a, x), the upper regularised incomplete gamma function; Phi(z). */
double ref_gamma_q(double a, double x);
double ref_phi(double z);

/* Chi-square goodness of fit of counts obs[0..k) to the law prob[0..k) (n
 * draws): cells with expected counts below 1e-6 are structural zeros (a
 * draw there is "impossible"), the others merged until each expects 5. */
typedef struct ref_gof {
    double stat;
    int df;
    double p;
    double impossible; /* draws that fell where the law puts no mass */
} ref_gof;
ref_gof ref_chisq(const double *obs, const double *prob, int64_t k, double n);
int ref_gof_fails(ref_gof g, double alpha);
/* ref_chisq that fails the test (impossible draws, or p < alpha). */
ref_gof ref_expect_fit(const char *what, const double *obs, const double *prob, int64_t k,
                       double n, double alpha);
/* z-score of k successes in n trials with probability p. */
double ref_binom_z(double k, double n, double p);

/* Two-sided normal limit z with P(|Z| > z) = p; the chi-square limit with
 * 3 degrees of freedom. */
double ref_z_limit(double p);
double ref_chi2_3_limit(double p);
/* The mean of q[0..n) and its standard error; the z of that mean against
 * expect. */
void ref_mean_and_se(const double *q, int64_t n, double *mean, double *se);
double ref_z_of(const double *q, int64_t n, double expect);
/* A list of named z-scores and the largest |z| (NaN: infinite). */
typedef struct ref_zlist {
    int k;
    double z[64];
    char name[64][32];
} ref_zlist;
void ref_z_add(ref_zlist *zl, double z, const char *what, int a, int b);
double ref_z_max(const ref_zlist *zl, int *arg);

#endif
