/*
 * GRBMs on 2-D Gaussian mixtures, trained by modified CD with five samplers:
 * Liao et al. (2022), section 4.1 and Figure 1. docs/grbm.md has the
 * protocol, the results and how they compare with the paper.
 *
 * Data: --data draws (default 1000, as the published code) from each of the
 * paper's two 3-component mixtures (examples/common/gmm.h: weights 0.33,
 * 0.33, 0.34, means (-5, -5), (5, -5), (0, 5); unit standard deviations, or
 * (1.25, 0.5), (1.25, 0.5), (0.5, 1.25)). A second set of the same size,
 * from another stream, is held out for the log-likelihood.
 *
 * Model: a GRBM with 2 Gaussian visible and --hidden binary hidden units
 * (default 256, Liao appendix B.1); mu = 0, variances 1, b = 0, W entries
 * N(0, 1/(n_v + n_h)) as in the published code (reset_parameters).
 *
 * Training (Liao Alg. 3 / Alg. 4 and appendix B): EBM_ESTIMATOR_GRBM_CD, the
 * negative chains start from N(0, I) every step, --cd-steps steps (default
 * 100, as the paper's Gaussian-mixture runs), burn-in 0 (every step's state
 * enters the estimate); plain SGD (no momentum, no weight decay) with batch
 * --batch (100), learning rate --lr (0.01) decayed to 0 by the cosine
 * schedule over all steps, the gradient's norm clipped at --clip (10), for
 * --epochs passes (default 50: all ten runs took 6 minutes on 2 busy cores;
 * the paper trains 50,000, which would take days here). The
 * positive phase and f are the library's defaults for GRBM_CD: dF/dtheta with
 * h summed out (Rao-Blackwellised; the paper's joint-energy version for the
 * Gibbs samplers would be EBM_POSITIVE_SAMPLED, MARGINALIZE_NONE).
 *
 * Methods (--methods), the five columns of Liao's Figure 1:
 *   gibbs               EBM_SAMPLER_GIBBS
 *   langevin            EBM_SAMPLER_LANGEVIN, unadjusted, one Langevin step per
 *                       CD step, the step size annealed over the chain by the
 *                       cosine schedule (Liao Alg. 1 and eq. 22, as the published
 *                       code). GRBM_CD cannot anneal across its steps, so these
 *                       runs build the gradient of Alg. 4 from the sampler and
 *                       ebm_model_energy_grad (annealed_gradient below);
 *                       --langevin-schedule constant uses GRBM_CD instead
 *   langevin-adj        the same with the Metropolis adjustment (MALA)
 *   gibbs-langevin      EBM_SAMPLER_GIBBS_LANGEVIN, --langevin-steps inner steps
 *                       with the cosine schedule inside each step (Alg. 2)
 *   gibbs-langevin-adj  the same with the adjustment of Liao eq. 12
 *   ucd                 not in the paper, not run by default: EBM_ESTIMATOR_UCD
 *                       (Qiu et al. 2020) with the library's defaults, chains
 *                       from the data, Gibbs steps coupled by the reflection
 *                       coupling of v until they meet; sampled like gibbs
 * Adjusted methods adjust at every step (EBM_SAMPLER_ADJUST_AFTER = 0, Liao
 * appendix B.1). Langevin step sizes are --step-size times the mean of
 * sigma^2 (EBM_SAMPLER_SCALE_BY_VARIANCE, Liao section 3.2). The default
 * 0.1 is the published code's drift step for these runs: it divides the
 * energy by the batch size (100) and uses alpha0 = 10 (see docs/grbm.md).
 *
 * After training, --samples chains start from N(0, I) and run --cd-steps
 * steps of the method's sampler; the final visible states are the samples.
 * Each sample goes to the component with the largest posterior, and the
 * fractions are compared with the true weights. Samples farther than 4
 * standard deviations from every component mean are also counted ("far").
 * The held-out log-likelihood uses log Z from a quadrature of exp(-F(v)) on a
 * grid over [-16, 16]^2 (0.2 apart), which a 2-D model allows.
 *
 * Output in --out: grbm_gmm_<mixture>.png (top row: the true density and
 * each method's p(v), proportional to exp(-F(v)), on [-10, 10]^2; bottom
 * row: the training data and each method's samples, coloured by component),
 * grbm_gmm.csv (one line per mixture and method), grbm_gmm_<mixture>_<method>.csv
 * (the training log) and .ebm (the trained model, ebm_model_save). Progress
 * on stderr, the table on stdout.
 *
 * Threads: runs (mixture, method) are spread over --threads POSIX threads;
 * the library's handles are per thread. Set OPENBLAS_NUM_THREADS=1: the
 * matrices are 100 x 256 and BLAS threads only compete with ours.
 */
#include <ebm.h>

#include "common/cli.h"
#include "common/data.h"
#include "common/gmm.h"
#include "common/optim.h"
#include "common/plot.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "grbm_gmm"

enum { N_VISIBLE = 2 };

typedef struct method {
    const char *name;  /* as in --methods and the CSV */
    const char *label; /* in the figure and the table */
    int sampler;       /* enum ebm_sampler_kind */
    int adjust;        /* Metropolis-adjusted at every step */
    int estimator;     /* enum ebm_estimator_kind */
} method;

/* The index in this table picks the run's random stream, so a method's
 * results do not depend on which others run. */
static const method methods[] = {
    {"gibbs", "Gibbs", EBM_SAMPLER_GIBBS, 0, EBM_ESTIMATOR_GRBM_CD},
    {"langevin", "Langevin", EBM_SAMPLER_LANGEVIN, 0, EBM_ESTIMATOR_GRBM_CD},
    {"langevin-adj", "Langevin adj.", EBM_SAMPLER_LANGEVIN, 1, EBM_ESTIMATOR_GRBM_CD},
    {"gibbs-langevin", "Gibbs-Langevin", EBM_SAMPLER_GIBBS_LANGEVIN, 0, EBM_ESTIMATOR_GRBM_CD},
    {"gibbs-langevin-adj", "Gibbs-Lang. adj.", EBM_SAMPLER_GIBBS_LANGEVIN, 1,
     EBM_ESTIMATOR_GRBM_CD},
    {"ucd", "UCD (Gibbs)", EBM_SAMPLER_GIBBS, 0, EBM_ESTIMATOR_UCD},
};
enum { N_METHODS = sizeof methods / sizeof methods[0], N_PAPER_METHODS = 5 };
#define DEFAULT_METHODS "gibbs,langevin,langevin-adj,gibbs-langevin,gibbs-langevin-adj"

static const char *const mixture_names[2] = {"iso", "aniso"};
enum { N_MIXTURES = 2 };

typedef struct options {
    int use_method[N_METHODS], use_mixture[N_MIXTURES];
    int64_t epochs, cd_steps, langevin_steps, hidden, batch, data, samples, every, threads;
    double lr, clip, step_size;
    int constant_langevin; /* --langevin-schedule constant: the estimator's fixed step */
    int precondition;      /* EBM_SAMPLER_PRECONDITION instead of SCALE_BY_VARIANCE */
    uint64_t seed;
    const char *out;
} options;

/* One mixture: its definition and data, shared read-only by its runs. */
typedef struct problem {
    int index; /* into mixture_names */
    gmm g;
    float *train, *test; /* data x N_VISIBLE each */
} problem;

/* One run (mixture, method) and its results. */
typedef struct run {
    const problem *p;
    int method;
    ebm_model_t *m;        /* the trained model */
    float *samples;        /* samples x width (full states) */
    int64_t epochs_done;   /* < epochs if training stopped on an error */
    double mass[GMM_MAX_COMPONENTS], far, outside; /* fractions of the samples */
    double test_ll, train_ll, accept, sample_accept, mean_var, seconds;
    char error[256];
} run;

/* Shared by the worker threads. */
typedef struct queue {
    pthread_mutex_t lock;
    int next, n;
    run *runs;
    const options *o;
} queue;

static const char *const schedule_names[] = {"cosine", "constant"};

static int parse_list(const char *what, const char *list, const char *const *names, int n,
                      int *use)
{
    char bad[64];
    memset(use, 0, (size_t)n * sizeof *use);
    int got = cli_parse_names(list, names, n, use, bad, sizeof bad);
    if (got < 0) {
        fprintf(stderr, "grbm_gmm: unknown %s '%s'\n", what, bad);
        return -1;
    }
    if (got == 0) {
        fprintf(stderr, "grbm_gmm: --%s is empty\n", what);
        return -1;
    }
    return 0;
}

static const char *const off_on[] = {"off", "on"};

/* @return 0, 1 after --help, or -1 after a message */
static int parse_options(int argc, char **argv, options *o)
{
    const char *method_list = DEFAULT_METHODS, *mixture_list = "iso,aniso";
    o->epochs = 50;
    o->cd_steps = 100;
    o->langevin_steps = 10;
    o->hidden = 256;
    o->batch = 100;
    o->data = 1000;
    o->samples = 1000;
    o->every = 0;
    o->threads = 2;
    o->lr = 0.01;
    o->clip = 10.0;
    o->step_size = 0.1;
    o->constant_langevin = 0;
    o->precondition = 0;
    o->seed = 1;
    o->out = "examples/out";
    const cli_spec specs[] = {
        CLI_STR("--mixtures", "LIST", &mixture_list, "from iso, aniso"),
        {.type = CLI_TEXT, .name = "--methods", .meta = "LIST", .field = &method_list,
         .dflt = "all but ucd",
         .help = "from gibbs, langevin, langevin-adj, gibbs-langevin, gibbs-langevin-adj, ucd"},
        CLI_I64("--epochs", "N", &o->epochs, 1, INT64_C(1) << 30,
                "passes over the data (the paper: 50000)"),
        CLI_I64("--cd-steps", "N", &o->cd_steps, 1, 1 << 20,
                "sampler steps per gradient and per sample"),
        CLI_I64("--langevin-steps", "N", &o->langevin_steps, 1, 1 << 20,
                "Langevin steps inside a Gibbs-Langevin step"),
        CLI_DBL("--step-size", "X", &o->step_size, 1e-12, 1e6,
                "Langevin step size alpha0, times the mean variance"),
        CLI_ONE_OF("--langevin-schedule", &o->constant_langevin, schedule_names, 0,
                   "cosine: langevin and langevin-adj anneal the step size over the chain "
                   "(Liao Alg. 1); constant: a fixed step, through EBM_ESTIMATOR_GRBM_CD"),
        CLI_ONE_OF("--precondition", &o->precondition, off_on, 0,
                   "Langevin steps preconditioned by diag(sigma^2): each unit's step is "
                   "--step-size times its own variance, not the mean variance"),
        CLI_I64("--hidden", "N", &o->hidden, 1, 1 << 20, "hidden units"),
        CLI_I64("--batch", "N", &o->batch, 1, 1 << 24, "mini-batch size"),
        CLI_I64("--data", "N", &o->data, 1, 1 << 24, "training points, and as many held out"),
        CLI_DBL("--lr", "X", &o->lr, 1e-12, 1e6, "initial learning rate, cosine-decayed to 0"),
        CLI_DBL("--clip", "X", &o->clip, 0.0, 1e30, "gradient-norm clipping; 0: none"),
        CLI_I64("--samples", "N", &o->samples, 1, 1 << 24, "samples drawn after training"),
        {.type = CLI_INT64, .name = "--every", .meta = "N", .field = &o->every, .ilo = 1,
         .ihi = INT64_C(1) << 30, .dflt = "epochs/10", .help = "log a line every N epochs"},
        CLI_I64("--threads", "N", &o->threads, 1, 64, "runs trained at once"),
        {.type = CLI_SEED, .name = "--seed", .meta = "N", .field = &o->seed,
         .help = "seed of data, models and chains"},
        CLI_STR("--out", "DIR", &o->out, "output directory, created if missing"),
    };
    const cli_program p = {
        PROG, "[options]",
        "  Liao et al. (2022) section 4.1: GRBMs on two 2-D Gaussian mixtures, trained by\n"
        "  modified CD with Gibbs, Langevin and Gibbs-Langevin sampling (with and\n"
        "  without Metropolis adjustment).\n",
        specs, (int)(sizeof specs / sizeof specs[0]), NULL, NULL, NULL};
    const int parsed = cli_parse(&p, argc, argv);
    if (parsed != 0) {
        return parsed;
    }
    if (o->batch > o->data) {
        fprintf(stderr, "grbm_gmm: --batch %lld is larger than --data %lld\n",
                (long long)o->batch, (long long)o->data);
        return -1;
    }
    if (o->every == 0) {
        o->every = o->epochs >= 10 ? o->epochs / 10 : 1;
    }
    const char *names[N_METHODS];
    for (int k = 0; k < N_METHODS; k++) {
        names[k] = methods[k].name;
    }
    if (parse_list("methods", method_list, names, N_METHODS, o->use_method) != 0 ||
        parse_list("mixtures", mixture_list, mixture_names, N_MIXTURES, o->use_mixture) != 0) {
        return -1;
    }
    return 0;
}

/* ---- the model ------------------------------------------------------- */

/* A GRBM with the published code's initialisation (see the top comment). */
static ebm_model_t *new_model(const options *o, uint64_t seed)
{
    const int64_t sizes[2] = {N_VISIBLE, o->hidden};
    ebm_model_t *m;
    ebm_rng_t *rng;
    char err[256];
    int rc = ebm_model_create(&m, 2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY, err, sizeof err);
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_model_create", rc, err);
    }
    if ((rc = ebm_rng_create(&rng, seed, 0)) != EBM_OK) {
        cli_die(PROG, "ebm_rng_create", rc, "");
    }
    rc = ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 1.0 / sqrt((double)(N_VISIBLE + o->hidden)));
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_model_init", rc, ebm_model_errmsg(m));
    }
    ebm_rng_destroy(rng);
    return m;
}

static double mean_variance(const ebm_model_t *m, float *theta)
{
    int64_t off, cols;
    ebm_model_get_params(m, theta);
    ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &off, NULL, &cols);
    double s = 0.0;
    for (int64_t i = 0; i < cols; i++) {
        s += exp((double)theta[off + i]);
    }
    return s / (double)cols;
}

/* Set a sampler option on the estimator's samplers (set_int / set_double). */
static int configure_estimator(ebm_estimator_t *e, const options *o, const method *me)
{
    const int so = EBM_ESTIMATOR_SAMPLER_OPTION;
    if (me->estimator == EBM_ESTIMATOR_UCD) {
        return EBM_OK; /* the library's defaults: k = 1, CRN / reflection coupling */
    }
    int rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_K, o->cd_steps);
    if (rc == EBM_OK) {
        rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_BURN_IN, 0);
    }
    if (rc == EBM_OK) {
        rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_SAMPLER, me->sampler);
    }
    if (rc == EBM_OK && me->sampler != EBM_SAMPLER_GIBBS) {
        rc = ebm_estimator_set_double(e, so + EBM_SAMPLER_STEP_SIZE, o->step_size);
        if (rc == EBM_OK) {
            rc = ebm_estimator_set_int(e, so + EBM_SAMPLER_SCALE_BY_VARIANCE, !o->precondition);
        }
        if (rc == EBM_OK) {
            rc = ebm_estimator_set_int(e, so + EBM_SAMPLER_PRECONDITION, o->precondition);
        }
        if (rc == EBM_OK && me->sampler == EBM_SAMPLER_GIBBS_LANGEVIN) {
            rc = ebm_estimator_set_int(e, so + EBM_SAMPLER_LANGEVIN_STEPS, o->langevin_steps);
        }
        if (rc == EBM_OK) {
            rc = ebm_estimator_set_int(e, so + EBM_SAMPLER_ADJUST_AFTER, me->adjust ? 0 : -1);
        }
    }
    return rc;
}

/* The same sampler, configured as the estimator's, for drawing samples. */
static int configure_sampler(ebm_sampler_t *s, const options *o, const method *me)
{
    int rc = EBM_OK;
    if (me->sampler != EBM_SAMPLER_GIBBS) {
        rc = ebm_sampler_set_double(s, EBM_SAMPLER_STEP_SIZE, o->step_size);
        if (rc == EBM_OK) {
            rc = ebm_sampler_set_int(s, EBM_SAMPLER_SCALE_BY_VARIANCE, !o->precondition);
        }
        if (rc == EBM_OK) {
            rc = ebm_sampler_set_int(s, EBM_SAMPLER_PRECONDITION, o->precondition);
        }
        if (rc == EBM_OK && me->sampler == EBM_SAMPLER_GIBBS_LANGEVIN) {
            rc = ebm_sampler_set_int(s, EBM_SAMPLER_LANGEVIN_STEPS, o->langevin_steps);
        }
        if (rc == EBM_OK) {
            rc = ebm_sampler_set_int(s, EBM_SAMPLER_ADJUST_AFTER, me->adjust ? 0 : -1);
        }
    }
    return rc;
}

/* Does this run anneal its Langevin steps by hand (Liao Alg. 1)? */
static int annealed(const options *o, const method *me)
{
    return me->sampler == EBM_SAMPLER_LANGEVIN && !o->constant_langevin;
}

/*
 * Liao Alg. 1 from N(0, I): T steps of the LANGEVIN sampler (one Langevin
 * step per call) with alpha_t = alpha0 (1 + cos(pi t / T)) / 2, t = 1..T
 * (eq. 22, times the mean variance by EBM_SAMPLER_SCALE_BY_VARIANCE);
 * alpha_T = 0 leaves the last state as it is. EBM_ESTIMATOR_GRBM_CD cannot
 * do this: it calls its sampler once per CD step with a fixed step size, and
 * a cosine schedule inside one call would use only the chain's last state.
 * With grad, adds (1/(n T)) sum_t sum_r dF(v_{t,r})/dtheta: the negative
 * phase of Alg. 4 with burn-in 0.
 */
static int annealed_langevin(ebm_sampler_t *s, const ebm_model_t *m, ebm_rng_t *rng, int64_t n,
                             float *x, int64_t T, double alpha0, double *coef, float *grad,
                             double *accept)
{
    const double pi = 3.14159265358979323846;
    const int64_t w = ebm_model_state_width(m);
    int rc = ebm_model_random_state(m, rng, n, x, w, NULL, 0);
    if (rc == EBM_OK) {
        rc = ebm_sampler_set_int(s, EBM_SAMPLER_ITERATION, 0);
    }
    for (int64_t r = 0; r < n; r++) {
        coef[r] = 1.0 / ((double)n * (double)T);
    }
    double acc = 0.0;
    int64_t moves = 0;
    for (int64_t t = 1; t <= T && rc == EBM_OK; t++) {
        const double alpha = t == T ? 0.0 : 0.5 * alpha0 * (1.0 + cos(pi * (double)t / (double)T));
        if (alpha > 0.0) {
            rc = ebm_sampler_set_double(s, EBM_SAMPLER_STEP_SIZE, alpha);
            if (rc == EBM_OK) {
                rc = ebm_sampler_step(s, rng, n, x, w);
            }
            acc += ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
            moves++;
        }
        if (rc == EBM_OK && grad != NULL) {
            rc = ebm_model_energy_grad(m, 1u << 1, n, x, w, coef, grad);
        }
    }
    *accept = moves > 0 ? acc / (double)moves : 1.0;
    return rc;
}

/* The annealed-Langevin gradient (Liao Alg. 4): -(1/n) sum_r dF(v_r)/dtheta
 * over the data, plus the chains' average. */
static int annealed_gradient(ebm_sampler_t *s, const ebm_model_t *m, ebm_rng_t *rng,
                             const options *o, const float *data, float *x, float *chains,
                             double *coef, float *grad, double *accept)
{
    const int64_t w = ebm_model_state_width(m), n = o->batch;
    memset(grad, 0, (size_t)ebm_model_param_count(m) * sizeof *grad);
    for (int64_t r = 0; r < n; r++) {
        memset(x + r * w, 0, (size_t)w * sizeof *x);
        memcpy(x + r * w, data + r * N_VISIBLE, N_VISIBLE * sizeof *x);
        coef[r] = -1.0 / (double)n;
    }
    int rc = ebm_model_energy_grad(m, 1u << 1, n, x, w, coef, grad);
    if (rc == EBM_OK) {
        rc = annealed_langevin(s, m, rng, n, chains, o->cd_steps, o->step_size, coef, grad,
                               accept);
    }
    return rc;
}

/* ---- evaluation ------------------------------------------------------- */

enum { GRID_N = 161 };           /* quadrature points per axis */
static const double GRID_HALF = 16.0; /* over [-16, 16]^2, 0.2 apart */

enum { CHUNK = 4096 }; /* rows of full states per free-energy call */

/* f[r] = F(v_r) with h summed out for n visible rows v (n x 2), through a
 * scratch of CHUNK full states (x, CHUNK x width). */
static int visible_free_energy(const ebm_model_t *m, int64_t n, const float *v, float *x,
                               double *f)
{
    const int64_t w = ebm_model_state_width(m);
    memset(x, 0, (size_t)(CHUNK * w) * sizeof *x);
    for (int64_t r0 = 0; r0 < n; r0 += CHUNK) {
        const int64_t rows = n - r0 < CHUNK ? n - r0 : CHUNK;
        for (int64_t r = 0; r < rows; r++) {
            memcpy(x + r * w, v + (r0 + r) * N_VISIBLE, N_VISIBLE * sizeof *x);
        }
        int rc = ebm_model_free_energy(m, 1u << 1, rows, x, w, f + r0);
        if (rc != EBM_OK) {
            return rc;
        }
    }
    return EBM_OK;
}

/* log Z = log of the sum of exp(-F) over the grid times the cell area;
 * grid: GRID_N^2 x 2 floats of scratch, f: GRID_N^2 doubles. */
static int log_partition_grid(const ebm_model_t *m, float *grid, float *x, double *f,
                              double *log_z)
{
    const double h = 2.0 * GRID_HALF / (GRID_N - 1);
    const int64_t n = (int64_t)GRID_N * GRID_N;
    for (int i = 0; i < GRID_N; i++) {
        for (int j = 0; j < GRID_N; j++) {
            grid[((int64_t)i * GRID_N + j) * N_VISIBLE] = (float)(-GRID_HALF + h * j);
            grid[((int64_t)i * GRID_N + j) * N_VISIBLE + 1] = (float)(-GRID_HALF + h * i);
        }
    }
    int rc = visible_free_energy(m, n, grid, x, f);
    if (rc != EBM_OK) {
        return rc;
    }
    double top = -INFINITY, sum = 0.0;
    for (int64_t r = 0; r < n; r++) {
        top = -f[r] > top ? -f[r] : top;
    }
    for (int64_t r = 0; r < n; r++) {
        sum += exp(-f[r] - top);
    }
    *log_z = top + log(sum * h * h);
    return EBM_OK;
}

/* Mean log p(v) of n points: -F(v) - log Z. */
static int mean_log_likelihood(const ebm_model_t *m, double log_z, int64_t n, const float *v,
                               float *x, double *f, double *out)
{
    int rc = visible_free_energy(m, n, v, x, f);
    if (rc != EBM_OK) {
        return rc;
    }
    double s = 0.0;
    for (int64_t r = 0; r < n; r++) {
        s += -f[r] - log_z;
    }
    *out = s / (double)n;
    return EBM_OK;
}

/* ---- one run ---------------------------------------------------------- */

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Draw --samples states from N(0, I) noise with the method's sampler
 * (h ~ p(h | v) first, as the negative chains of training start). */
static int draw_samples(run *res, const options *o, ebm_rng_t *rng)
{
    const method *me = &methods[res->method];
    ebm_model_t *m = res->m;
    const int64_t w = ebm_model_state_width(m), n = o->samples;
    ebm_sampler_t *s;
    int rc = ebm_sampler_create(&s, m, me->sampler);
    if (rc != EBM_OK) {
        snprintf(res->error, sizeof res->error, "ebm_sampler_create: %s", ebm_model_errmsg(m));
        return rc;
    }
    if ((rc = configure_sampler(s, o, me)) != EBM_OK) {
        snprintf(res->error, sizeof res->error, "sampler options: %s", ebm_sampler_errmsg(s));
        ebm_sampler_destroy(s);
        return rc;
    }
    double acc = 0.0;
    if (annealed(o, me)) {
        double *coef = cli_xmalloc(PROG, (size_t)n * sizeof *coef);
        rc = annealed_langevin(s, m, rng, n, res->samples, o->cd_steps, o->step_size, coef, NULL,
                               &acc);
        free(coef);
    } else {
        rc = ebm_model_random_state(m, rng, n, res->samples, w, NULL, 0);
        if (rc == EBM_OK) {
            rc = ebm_model_layer_sample(m, 1, rng, n, res->samples, w);
        }
        for (int64_t t = 0; t < o->cd_steps && rc == EBM_OK; t++) {
            rc = ebm_sampler_step(s, rng, n, res->samples, w);
            acc += ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
        }
        acc /= (double)o->cd_steps;
    }
    if (rc != EBM_OK) {
        snprintf(res->error, sizeof res->error, "sampling: %s", ebm_sampler_errmsg(s));
    }
    res->sample_accept = acc;
    ebm_sampler_destroy(s);
    return rc;
}

/* Component masses, far and outside-the-plot fractions of the samples. */
static void score_samples(run *res, const options *o)
{
    const gmm *g = &res->p->g;
    const int64_t w = ebm_model_state_width(res->m);
    int64_t counts[GMM_MAX_COMPONENTS] = {0}, far = 0, outside = 0;
    for (int64_t r = 0; r < o->samples; r++) {
        const double v[2] = {res->samples[r * w], res->samples[r * w + 1]};
        counts[gmm_assign(g, v)]++;
        far += gmm_nearest_distance(g, v) > 4.0;
        outside += fabs(v[0]) > 10.0 || fabs(v[1]) > 10.0;
    }
    for (int c = 0; c < g->k; c++) {
        res->mass[c] = (double)counts[c] / (double)o->samples;
    }
    res->far = (double)far / (double)o->samples;
    res->outside = (double)outside / (double)o->samples;
}

static FILE *open_log(const options *o, const run *res)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/grbm_gmm_%s_%s.csv", o->out, mixture_names[res->p->index],
             methods[res->method].name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "grbm_gmm: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fprintf(f, "epoch,lr,grad_norm,mean_var,accept,tau_mean,tau_max,train_ll,test_ll,seconds\n");
    return f;
}

static void train(run *res, const options *o)
{
    const method *me = &methods[res->method];
    const problem *p = res->p;
    /* Streams 1..10 for the paper's five methods, then 11.. for the others. */
    const uint64_t stream = res->method < N_PAPER_METHODS
                                ? 1 + (uint64_t)(p->index * N_PAPER_METHODS + res->method)
                                : 1 + (uint64_t)(N_MIXTURES * N_PAPER_METHODS +
                                                 (res->method - N_PAPER_METHODS) * N_MIXTURES +
                                                 p->index);
    ebm_model_t *m = new_model(o, o->seed);
    const int64_t w = ebm_model_state_width(m), n_params = ebm_model_param_count(m);
    const int64_t batches = o->data / o->batch; /* a last partial batch is dropped */
    const int64_t grid_rows = (int64_t)GRID_N * GRID_N;
    ebm_estimator_t *e;
    ebm_rng_t *rng;
    int rc = ebm_rng_create(&rng, o->seed, stream);
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_rng_create", rc, "");
    }
    if ((rc = ebm_estimator_create(&e, m, me->estimator)) != EBM_OK) {
        cli_die(PROG, "ebm_estimator_create", rc, ebm_model_errmsg(m));
    }
    if ((rc = configure_estimator(e, o, me)) != EBM_OK) {
        cli_die(PROG, "estimator options", rc, ebm_estimator_errmsg(e));
    }
    ebm_sampler_t *s = NULL; /* the annealed-Langevin runs' sampler */
    if (annealed(o, me) && ((rc = ebm_sampler_create(&s, m, EBM_SAMPLER_LANGEVIN)) != EBM_OK ||
                            (rc = configure_sampler(s, o, me)) != EBM_OK)) {
        cli_die(PROG, "Langevin sampler", rc, s != NULL ? ebm_sampler_errmsg(s) : ebm_model_errmsg(m));
    }
    float *chains = cli_xmalloc(PROG, (size_t)(o->batch * w) * sizeof *chains);
    double *coef = cli_xmalloc(PROG, (size_t)o->batch * sizeof *coef);
    float *grad = cli_xmalloc(PROG, (size_t)n_params * sizeof *grad);
    float *theta = cli_xmalloc(PROG, (size_t)n_params * sizeof *theta);
    float *batch = cli_xmalloc(PROG, (size_t)(o->batch * N_VISIBLE) * sizeof *batch);
    int64_t *perm = cli_xmalloc(PROG, (size_t)o->data * sizeof *perm);
    float *x = cli_xmalloc(PROG, (size_t)((CHUNK > o->batch ? CHUNK : o->batch) * w) * sizeof *x);
    float *grid = cli_xmalloc(PROG, (size_t)(grid_rows * N_VISIBLE) * sizeof *grid);
    double *f = cli_xmalloc(PROG, (size_t)max64(grid_rows, o->data) * sizeof *f);
    optim_sgd opt = optim_sgd_plain(o->lr);
    opt.cosine = 1;
    opt.total_steps = o->epochs * batches;
    opt.clip_norm = o->clip;
    FILE *log = open_log(o, res);
    res->m = m;
    const double t0 = cli_now();
    double eval_s = 0.0, acc_sum = 0.0, norm_sum = 0.0, tau_sum = 0.0, tau_max = 0.0;
    int64_t acc_n = 0;
    for (int64_t epoch = 1; epoch <= o->epochs && rc == EBM_OK; epoch++) {
        if ((rc = data_shuffle(perm, o->data, rng)) != DATA_OK) {
            cli_die(PROG, "data_shuffle", EBM_EVALUE, data_strerror(rc));
        }
        for (int64_t b = 0; b < batches && rc == EBM_OK; b++) {
            for (int64_t r = 0; r < o->batch; r++) {
                memcpy(batch + r * N_VISIBLE, p->train + perm[b * o->batch + r] * N_VISIBLE,
                       N_VISIBLE * sizeof *batch);
            }
            double acc = NAN;
            if (s != NULL) {
                rc = annealed_gradient(s, m, rng, o, batch, x, chains, coef, grad, &acc);
            } else {
                rc = ebm_estimator_gradient(e, rng, o->batch, batch, N_VISIBLE, grad);
                acc = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_ACCEPT_RATE);
            }
            if (rc != EBM_OK) {
                snprintf(res->error, sizeof res->error, "epoch %lld: %s", (long long)epoch,
                         s != NULL ? (ebm_sampler_errmsg(s)[0] ? ebm_sampler_errmsg(s)
                                                               : ebm_model_errmsg(m))
                                   : ebm_estimator_errmsg(e));
                break;
            }
            acc_sum += acc;
            if (me->estimator == EBM_ESTIMATOR_UCD) {
                const double tm = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MAX);
                tau_sum += ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MEAN);
                tau_max = tm > tau_max ? tm : tau_max;
            }
            acc_n++;
            const double lr = optim_sgd_rate(&opt);
            if ((rc = optim_sgd_step(&opt, m, grad)) != EBM_OK) {
                snprintf(res->error, sizeof res->error, "epoch %lld, update (lr %g): %s",
                         (long long)epoch, lr, ebm_model_errmsg(m));
                break;
            }
            norm_sum += opt.last_norm;
        }
        if (rc != EBM_OK) {
            break;
        }
        res->epochs_done = epoch;
        if (epoch % o->every == 0 || epoch == o->epochs) {
            const double te = cli_now();
            double log_z, train_ll = NAN, test_ll = NAN;
            if (log_partition_grid(m, grid, x, f, &log_z) == EBM_OK) {
                mean_log_likelihood(m, log_z, o->data, p->train, x, f, &train_ll);
                mean_log_likelihood(m, log_z, o->data, p->test, x, f, &test_ll);
            }
            eval_s += cli_now() - te;
            const double train_s = cli_now() - t0 - eval_s;
            const double acc = acc_n > 0 ? acc_sum / (double)acc_n : NAN;
            const double norm = acc_n > 0 ? norm_sum / (double)acc_n : NAN;
            const double var = mean_variance(m, theta);
            const int is_ucd = me->estimator == EBM_ESTIMATOR_UCD;
            const double tau = is_ucd && acc_n > 0 ? tau_sum / (double)acc_n : NAN;
            fprintf(log, "%lld,%.6g,%.6g,%.6g,%.6g,%.4g,%.0f,%.6f,%.6f,%.3f\n", (long long)epoch,
                    optim_sgd_rate(&opt), norm, var, acc, tau, is_ucd ? tau_max : NAN, train_ll,
                    test_ll, train_s);
            fflush(log);
            char eta[32];
            const double rate = (double)epoch / train_s;
            cli_format_duration((double)(o->epochs - epoch) / rate, eta, sizeof eta);
            fprintf(stderr,
                    "%-5s %-18s epoch %6lld/%lld  |g| %7.3f  var %.3f  %s %.3f  "
                    "test ll %8.4f  %6.2f epochs/s  ETA %s\n",
                    mixture_names[p->index], me->name, (long long)epoch, (long long)o->epochs,
                    norm, var, is_ucd ? "tau" : "accept", is_ucd ? tau : acc, test_ll, rate,
                    eta);
            res->train_ll = train_ll;
            res->test_ll = test_ll;
            res->accept = acc;
            res->mean_var = var;
            acc_sum = norm_sum = tau_sum = tau_max = 0.0;
            acc_n = 0;
        }
    }
    res->seconds = cli_now() - t0 - eval_s;
    fclose(log);
    char model_path[1024];
    snprintf(model_path, sizeof model_path, "%s/grbm_gmm_%s_%s.ebm", o->out,
             mixture_names[p->index], me->name);
    if (ebm_model_save(m, model_path) != EBM_OK) {
        fprintf(stderr, "grbm_gmm: cannot save %s: %s\n", model_path, ebm_model_errmsg(m));
    }
    res->samples = cli_xmalloc(PROG, (size_t)(o->samples * w) * sizeof *res->samples);
    if (rc == EBM_OK) {
        rc = draw_samples(res, o, rng);
    }
    if (rc == EBM_OK) {
        score_samples(res, o);
    }
    free(f);
    free(grid);
    free(x);
    free(perm);
    free(coef);
    free(chains);
    ebm_sampler_destroy(s);
    free(batch);
    free(theta);
    free(grad);
    ebm_estimator_destroy(e);
    ebm_rng_destroy(rng);
}

static void *worker(void *arg)
{
    queue *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        const int i = q->next < q->n ? q->next++ : -1;
        pthread_mutex_unlock(&q->lock);
        if (i < 0) {
            return NULL;
        }
        train(&q->runs[i], q->o);
    }
}

/* ---- the figure ------------------------------------------------------- */

enum { PANEL = 240, GAP = 14, MARGIN = 16, HEADER_H = 30, TITLE_H = 26, FOOT_H = 22 };
static const double VIEW = 10.0; /* panels show [-10, 10]^2 */

/* Matplotlib's viridis at five stops, linearly interpolated. */
static void viridis(double t, uint8_t *rgb)
{
    static const double stops[5][3] = {
        {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
    t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    const double s = t * 4.0;
    int i = (int)s;
    i = i > 3 ? 3 : i;
    const double a = s - i;
    for (int c = 0; c < 3; c++) {
        rgb[c] = (uint8_t)lround(stops[i][c] + a * (stops[i + 1][c] - stops[i][c]));
    }
}

static void put(plot_canvas *c, int x, int y, const uint8_t *rgb)
{
    if (x >= 0 && y >= 0 && x < c->width && y < c->height) {
        memcpy(c->rgb + 3 * ((size_t)y * (size_t)c->width + (size_t)x), rgb, 3);
    }
}

static void frame_panel(plot_canvas *c, int x0, int y0)
{
    static const uint8_t edge[3] = {90, 90, 90};
    for (int i = -1; i <= PANEL; i++) {
        put(c, x0 + i, y0 - 1, edge);
        put(c, x0 + i, y0 + PANEL, edge);
        put(c, x0 - 1, y0 + i, edge);
        put(c, x0 + PANEL, y0 + i, edge);
    }
}

/* A density panel: value[i * PANEL + j] at pixel row i (top = +VIEW), column
 * j, shown as viridis of value / max. */
static void density_panel(plot_canvas *c, int x0, int y0, const double *value)
{
    double top = 0.0;
    for (int k = 0; k < PANEL * PANEL; k++) {
        top = value[k] > top ? value[k] : top;
    }
    for (int i = 0; i < PANEL; i++) {
        for (int j = 0; j < PANEL; j++) {
            uint8_t rgb[3];
            viridis(top > 0.0 ? value[i * PANEL + j] / top : 0.0, rgb);
            put(c, x0 + j, y0 + i, rgb);
        }
    }
    frame_panel(c, x0, y0);
}

/* Pixel centre (i, j) -> the point it shows. */
static void pixel_point(int i, int j, double *v)
{
    v[0] = -VIEW + (j + 0.5) * (2.0 * VIEW / PANEL);
    v[1] = VIEW - (i + 0.5) * (2.0 * VIEW / PANEL);
}

/* A scatter panel: n points (row stride ld), each a 3x3 dot in the colour of
 * its component; grid lines at -5, 0, 5. */
static void scatter_panel(plot_canvas *c, int x0, int y0, const gmm *g, const float *pts,
                          int64_t n, int64_t ld)
{
    static const uint8_t bg[3] = {234, 234, 242}, line[3] = {255, 255, 255};
    static const uint8_t colours[3][3] = {{0, 114, 178}, {213, 94, 0}, {0, 158, 115}};
    for (int i = 0; i < PANEL; i++) {
        for (int j = 0; j < PANEL; j++) {
            put(c, x0 + j, y0 + i, bg);
        }
    }
    for (int t = -1; t <= 1; t++) {
        const int k = (int)lround((t * 5.0 + VIEW) / (2.0 * VIEW) * PANEL);
        for (int i = 0; i < PANEL; i++) {
            put(c, x0 + k, y0 + i, line);
            put(c, x0 + i, y0 + k, line);
        }
    }
    for (int64_t r = 0; r < n; r++) {
        const double v[2] = {pts[r * ld], pts[r * ld + 1]};
        const int px = (int)floor((v[0] + VIEW) / (2.0 * VIEW) * PANEL);
        const int py = (int)floor((VIEW - v[1]) / (2.0 * VIEW) * PANEL);
        const uint8_t *rgb = colours[gmm_assign(g, v) % 3];
        for (int dy = -1; dy <= 1; dy++) {
            for (int dx = -1; dx <= 1; dx++) {
                if (px + dx >= 0 && px + dx < PANEL && py + dy >= 0 && py + dy < PANEL) {
                    put(c, x0 + px + dx, y0 + py + dy, rgb);
                }
            }
        }
    }
    frame_panel(c, x0, y0);
}

/* One PNG per mixture: the truth and each run, densities above samples. */
static void write_figure(const options *o, const problem *p, run *const *cols, int n_cols)
{
    static const uint8_t black[3] = {0, 0, 0};
    const int w = 2 * MARGIN + (n_cols + 1) * PANEL + n_cols * GAP;
    const int h = MARGIN + HEADER_H + 2 * (TITLE_H + PANEL + FOOT_H) + 20;
    plot_canvas c;
    if (plot_canvas_create(&c, w, h) != 0) {
        cli_die(PROG, "plot_canvas_create", EBM_ENOMEM, "figure");
    }
    double *value = cli_xmalloc(PROG, (size_t)PANEL * PANEL * sizeof *value);
    float *pts = cli_xmalloc(PROG, (size_t)PANEL * PANEL * N_VISIBLE * sizeof *pts), *x = NULL;
    double *f = cli_xmalloc(PROG, (size_t)PANEL * PANEL * sizeof *f);
    for (int i = 0; i < PANEL; i++) {
        for (int j = 0; j < PANEL; j++) {
            double v[2];
            pixel_point(i, j, v);
            pts[(i * PANEL + j) * N_VISIBLE] = (float)v[0];
            pts[(i * PANEL + j) * N_VISIBLE + 1] = (float)v[1];
        }
    }
    char text[128];
    for (int col = 0; col <= n_cols; col++) {
        const int x0 = MARGIN + col * (PANEL + GAP), y_top = MARGIN + HEADER_H + TITLE_H;
        const int y_bottom = y_top + PANEL + FOOT_H + TITLE_H;
        const run *res = col > 0 ? cols[col - 1] : NULL;
        if (res == NULL) {
            snprintf(text, sizeof text, "(a) truth");
            for (int i = 0; i < PANEL; i++) {
                for (int j = 0; j < PANEL; j++) {
                    double v[2];
                    pixel_point(i, j, v);
                    value[i * PANEL + j] = exp(gmm_log_density(&p->g, v));
                }
            }
        } else {
            snprintf(text, sizeof text, "(%c) %s", 'a' + col, methods[res->method].label);
            const int64_t sw = ebm_model_state_width(res->m);
            free(x);
            x = cli_xmalloc(PROG, (size_t)(CHUNK * sw) * sizeof *x);
            int rc = visible_free_energy(res->m, PANEL * PANEL, pts, x, f);
            if (rc != EBM_OK) {
                cli_die(PROG, "ebm_model_free_energy", rc, ebm_model_errmsg(res->m));
            }
            double top = -INFINITY;
            for (int k = 0; k < PANEL * PANEL; k++) {
                top = -f[k] > top ? -f[k] : top;
            }
            for (int k = 0; k < PANEL * PANEL; k++) {
                value[k] = exp(-f[k] - top); /* p(v) up to a constant */
            }
        }
        plot_text(&c, x0, MARGIN + HEADER_H + 4, 2, black, text);
        density_panel(&c, x0, y_top, value);
        if (res == NULL) {
            snprintf(text, sizeof text, "data: %lld points", (long long)o->data);
            plot_text(&c, x0, y_top + PANEL + FOOT_H + 8, 2, black, text);
            scatter_panel(&c, x0, y_bottom, &p->g, p->train, o->data, N_VISIBLE);
            snprintf(text, sizeof text, "w %.2f %.2f %.2f", p->g.w[0], p->g.w[1], p->g.w[2]);
        } else {
            const int64_t sw = ebm_model_state_width(res->m);
            if (res->error[0] == '\0') {
                snprintf(text, sizeof text, "%lld samples", (long long)o->samples);
                plot_text(&c, x0, y_top + PANEL + FOOT_H + 8, 2, black, text);
                scatter_panel(&c, x0, y_bottom, &p->g, res->samples, o->samples, sw);
                snprintf(text, sizeof text, "m %.2f %.2f %.2f", res->mass[0], res->mass[1],
                         res->mass[2]);
            } else {
                snprintf(text, sizeof text, "failed");
            }
        }
        plot_text(&c, x0, y_bottom + PANEL + 6, 2, black, text);
        if (res != NULL) {
            snprintf(text, sizeof text, fabs(res->test_ll) < 1e4 ? "test ll %.3f" : "test ll %.3g",
                     res->test_ll);
            plot_text(&c, x0, y_top + PANEL + 6, 2, black, text);
        } else {
            double s = 0.0;
            for (int64_t r = 0; r < o->data; r++) {
                const double v[2] = {p->test[2 * r], p->test[2 * r + 1]};
                s += gmm_log_density(&p->g, v);
            }
            snprintf(text, sizeof text, "test ll %.3f", s / (double)o->data);
            plot_text(&c, x0, y_top + PANEL + 6, 2, black, text);
        }
    }
    snprintf(text, sizeof text,
             "%s, %lld epochs, %lld steps", p->g.name, (long long)o->epochs,
             (long long)o->cd_steps);
    plot_text(&c, MARGIN, MARGIN, 2, black, text);
    char path[1024];
    snprintf(path, sizeof path, "%s/grbm_gmm_%s.png", o->out, mixture_names[p->index]);
    int rc = plot_save_png(&c, path);
    if (rc != 0) {
        fprintf(stderr, "grbm_gmm: cannot write %s\n", path);
        exit(1);
    }
    fprintf(stderr, "grbm_gmm: wrote %s\n", path);
    free(f);
    free(x);
    free(pts);
    free(value);
    plot_canvas_destroy(&c);
}

/* ---- main ------------------------------------------------------------- */

int main(int argc, char **argv)
{
    options o;
    const int parsed = parse_options(argc, argv, &o);
    if (parsed != 0) {
        return parsed == 1 ? 0 : 2;
    }
    if (cli_make_dirs(o.out) != 0) {
        fprintf(stderr, "grbm_gmm: cannot create %s: %s\n", o.out, strerror(errno));
        return 1;
    }
    problem problems[N_MIXTURES];
    run runs[N_MIXTURES * N_METHODS];
    int n_runs = 0;
    memset(runs, 0, sizeof runs);
    for (int k = 0; k < N_MIXTURES; k++) {
        problem *p = &problems[k];
        p->index = k;
        gmm_liao(&p->g, k == 0 ? GMM_ISOTROPIC : GMM_ANISOTROPIC);
        p->train = cli_xmalloc(PROG, (size_t)(o.data * N_VISIBLE) * sizeof *p->train);
        p->test = cli_xmalloc(PROG, (size_t)(o.data * N_VISIBLE) * sizeof *p->test);
        ebm_rng_t *rng;
        int rc = ebm_rng_create(&rng, o.seed, 1000 + (uint64_t)k);
        if (rc == EBM_OK) {
            rc = gmm_sample(&p->g, rng, o.data, p->train, N_VISIBLE, NULL);
        }
        if (rc == EBM_OK) {
            rc = gmm_sample(&p->g, rng, o.data, p->test, N_VISIBLE, NULL);
        }
        if (rc != EBM_OK) {
            cli_die(PROG, "gmm_sample", rc, "");
        }
        ebm_rng_destroy(rng);
        for (int me = 0; me < N_METHODS && o.use_mixture[k]; me++) {
            if (o.use_method[me]) {
                runs[n_runs].p = p;
                runs[n_runs].method = me;
                n_runs++;
            }
        }
    }
    /* The slow (adjusted) runs first, so that the threads finish together. */
    for (int i = 0; i < n_runs; i++) {
        for (int j = i + 1; j < n_runs; j++) {
            if (methods[runs[j].method].adjust > methods[runs[i].method].adjust) {
                run tmp = runs[i];
                runs[i] = runs[j];
                runs[j] = tmp;
            }
        }
    }
    fprintf(stderr,
            "grbm_gmm: %d runs, %lld epochs of %lld steps each, %lld sampler steps per "
            "gradient, %lld threads\n",
            n_runs, (long long)o.epochs, (long long)(o.data / o.batch), (long long)o.cd_steps,
            (long long)o.threads);
    const double t0 = cli_now();
    queue q = {PTHREAD_MUTEX_INITIALIZER, 0, n_runs, runs, &o};
    pthread_t threads[64];
    const int n_threads = (int)(o.threads < n_runs ? o.threads : n_runs);
    for (int t = 0; t < n_threads; t++) {
        if (pthread_create(&threads[t], NULL, worker, &q) != 0) {
            cli_die(PROG, "pthread_create", EBM_ENOMEM, strerror(errno));
        }
    }
    for (int t = 0; t < n_threads; t++) {
        pthread_join(threads[t], NULL);
    }
    const double wall = cli_now() - t0;

    /* The table, the CSV and the figures, in the order of the method table. */
    char path[1024];
    snprintf(path, sizeof path, "%s/grbm_gmm.csv", o.out);
    FILE *csv = fopen(path, "w");
    if (csv == NULL) {
        fprintf(stderr, "grbm_gmm: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    fprintf(csv, "mixture,method,epochs,mass_1,mass_2,mass_3,far,outside,train_ll,test_ll,"
                 "train_accept,sample_accept,mean_var,seconds,error\n");
    int failed = 0;
    for (int k = 0; k < N_MIXTURES; k++) {
        if (!o.use_mixture[k]) {
            continue;
        }
        const problem *p = &problems[k];
        double truth_ll = 0.0;
        for (int64_t r = 0; r < o.data; r++) {
            const double v[2] = {p->test[2 * r], p->test[2 * r + 1]};
            truth_ll += gmm_log_density(&p->g, v);
        }
        truth_ll /= (double)o.data;
        printf("\n%s mixture (weights %.2f %.2f %.2f), %lld epochs; held-out log-likelihood of "
               "the true density %.4f\n",
               p->g.name, p->g.w[0], p->g.w[1], p->g.w[2], (long long)o.epochs, truth_ll);
        printf("%-20s %6s %6s %6s %6s %9s %9s %7s %7s %8s\n", "method", "mass1", "mass2",
               "mass3", "far", "train ll", "test ll", "accept", "var", "time");
        run *cols[N_METHODS];
        int n_cols = 0;
        for (int me = 0; me < N_METHODS; me++) {
            run *res = NULL;
            for (int i = 0; i < n_runs; i++) {
                if (runs[i].p == p && runs[i].method == me) {
                    res = &runs[i];
                }
            }
            if (res == NULL) {
                continue;
            }
            cols[n_cols++] = res;
            char dur[32];
            cli_format_duration(res->seconds, dur, sizeof dur);
            if (res->error[0] != '\0') {
                failed = 1;
                printf("%-20s failed after %lld epochs: %s\n", methods[me].name,
                       (long long)res->epochs_done, res->error);
            } else {
                printf("%-20s %6.3f %6.3f %6.3f %6.3f %9.4f %9.4f %7.3f %7.3f %8s\n",
                       methods[me].name, res->mass[0], res->mass[1], res->mass[2], res->far,
                       res->train_ll, res->test_ll, res->sample_accept, res->mean_var, dur);
            }
            fprintf(csv, "%s,%s,%lld,%.4f,%.4f,%.4f,%.4f,%.4f,%.6f,%.6f,%.4f,%.4f,%.6g,%.3f,\"%s\"\n",
                    mixture_names[k], methods[me].name, (long long)res->epochs_done,
                    res->mass[0], res->mass[1], res->mass[2], res->far, res->outside,
                    res->train_ll, res->test_ll, res->accept, res->sample_accept, res->mean_var,
                    res->seconds, res->error);
        }
        write_figure(&o, p, cols, n_cols);
    }
    fclose(csv);
    char dur[32];
    cli_format_duration(wall, dur, sizeof dur);
    printf("\nwall time %s (%lld threads)\n", dur, (long long)o.threads);
    for (int i = 0; i < n_runs; i++) {
        free(runs[i].samples);
        ebm_model_destroy(runs[i].m);
    }
    for (int k = 0; k < N_MIXTURES; k++) {
        free(problems[k].train);
        free(problems[k].test);
    }
    return failed;
}
