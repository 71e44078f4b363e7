/*
 * Bars-and-stripes trained by CD-1, PCD-1, UCD and UCD-LMI: Qiu et al. (2020),
 * section 6.1 and Figure 2. docs/bas.md has the protocol, the results and how
 * they compare with the paper and its published code (cdtau).
 *
 * Data: the 32 rows of 4x4 bars-and-stripes (examples/common/bas.h; 30
 * distinct images, the all-0 and all-1 images twice). The best achievable
 * log-likelihood, summed over the 32 rows, is -108.13.
 *
 * Model: an RBM with 16 binary visible and 16 binary hidden units. The paper
 * does not state its initialisation; the published code draws every entry
 * of W, b and c from N(0, 0.1^2), and so do we (W by ebm_model_init, the
 * biases by ebm_rng_normal). Every method starts from the same parameters
 * (--seed, stream 0); method i draws from stream i + 1.
 *
 * Training: --iters iterations of plain SGD, theta += lr * g. Each gradient
 * g has the exact positive phase over all 32 rows (full batch) and a negative
 * phase from --chains chains:
 *  - pcd: the 32 rows go to the estimator, with EBM_ESTIMATOR_CHAINS =
 *    chains persistent chains that start, as in the published code, at data
 *    rows drawn uniformly with replacement (h drawn from p(h | v)).
 *  - cd, ucd, ucd-cap, ucd-lmi: the paper says only "1000 parallel Markov chains";
 *    the published code starts them, every iteration, at 1000 rows drawn
 *    uniformly with replacement from the 32 (its init_v0), and computes the
 *    positive phase over the 32 rows. libebm's CD, UCD and UCD-LMI
 *    estimators run one chain per data row they are given and use the same
 *    rows for the positive phase. So we pass B = chains rows drawn uniformly
 *    (32 divides 2^24, so floor(32 u) of a 24-bit uniform is exactly
 *    uniform) and then swap the positive phase of those rows for the exact
 *    one: if row i was drawn c_i times, the estimator's positive term is
 *    -(1/B) sum_i c_i dF(v_i)/dtheta, and one ebm_model_energy_grad call
 *    over the 32 rows with coefficients c_i / B - 1/32 turns it into
 *    -(1/32) sum_i dF(v_i)/dtheta. (Repeating the 32 rows to fill 1000
 *    would not divide evenly, and is not what the published code does.)
 *    UCD-LMI's chains start at local modes, not at the data: for it the
 *    drawn rows only set the number of chains.
 * UCD uses k = 1 and the coupling of --coupling: by default crn (Qiu Alg.
 * 3), which on these models meets as soon as the library's default
 * (blockwise) with cheaper steps (docs/coupling_times.md), or blockwise or
 * maximal (Qiu Alg. 1);
 * UCD-LMI the library's defaults (Taniguchi et al. 2023: k = 0, MH coupling).
 * ucd-global is ucd whose coupled chains make global moves
 * (docs/global_moves.md): with probability --global-prob a step of a chain
 * pair is one independence Metropolis-Hastings move from the 32 rows, each
 * unit flipped with probability --flip-prob, common to both chains, instead
 * of the coupled sweep (defaults 0.5 and 0.02, the prototype's of issue
 * 36, not yet measured with the library). It is not among the default
 * methods.
 * ucd, ucd-global and ucd-lmi never cap the coupling steps (the estimate
 * is unbiased);
 * ucd-cap stops a chain after --cap steps (default 100), as the published
 * code does (its max_mcmc), which truncates the estimate: biased, but with a
 * bounded variance. Capped chains are counted, never hidden.
 *
 * Averaged iterates (Qiu Alg. 2 returns the average of its SGD iterates):
 * beside the iterates theta_t, every method keeps the Polyak-Ruppert tail
 * average of those after iteration --average-from N (examples/common/optim.h,
 * optim_average), avg_t = (1 / (t - N)) sum_{s=N+1}^{t} theta_s, which never
 * changes training. The default N = 2000 leaves out the first fifth of the
 * default 10,000 iterations, where the log-likelihood still climbs, and
 * averages the rest.
 *
 * Every --every iterations the exact log-likelihood of the 32 rows is
 * computed (ebm_model_log_partition_exact, ebm_model_log_likelihood) and a
 * line goes to <out>/bas_<method>.csv: iteration, loglik_sum, loglik_mean,
 * tau_mean, tau_max, capped (means and maxima over the iterations since the
 * previous line; NaN for CD and PCD), seconds (training time so far, without
 * the evaluations), and, unless --average-from off, loglik_sum_avg and
 * loglik_mean_avg, those of the average (NaN until it holds an iterate).
 * Progress goes to stderr, a summary table to stdout (raw and averaged
 * figures), and the curves to <out>/bas_loglik.png (the averages dashed, in
 * their method's colour).
 *
 * --save DIR: after each method's run, its final model goes to
 * DIR/bas_<file>.ebm (ebm_model_save), <file> as in the CSV's name: cd, pcd,
 * ucd, ucd_cap, ucd_lmi, ucd_global, and the average, if it holds an iterate, to
 * DIR/bas_<file>_avg.ebm. DIR must exist; nothing else is written there.
 * Other programs, e.g. the Python package's tests, can compare their own
 * training with these models.
 *
 * Threads: the library never changes BLAS threading; set
 * OPENBLAS_NUM_THREADS (more than 1 gains nothing at this size: docs/bas.md).
 */
#include <ebm.h>

#include "common/bas.h"
#include "common/cli.h"
#include "common/optim.h"
#include "common/plot.h"
#include "common/png.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "bas_ucd"

enum { SIDE = 4, N_VISIBLE = SIDE * SIDE, N_HIDDEN = 16 };

typedef struct method {
    const char *name;  /* as in --methods */
    const char *file;  /* bas_<file>.csv */
    const char *label; /* in the table and the plot */
    int kind;          /* enum ebm_estimator_kind */
    int capped;        /* coupling steps capped at --cap */
    int global;        /* global moves from the data rows (--global-prob, --flip-prob) */
} method;

/* The index in this table picks the method's random stream, so a method's
 * results do not depend on which others run. */
static const method methods[] = {
    {"cd", "cd", "CD-1", EBM_ESTIMATOR_CD, 0, 0},
    {"pcd", "pcd", "PCD-1", EBM_ESTIMATOR_PCD, 0, 0},
    {"ucd", "ucd", "UCD", EBM_ESTIMATOR_UCD, 0, 0},
    {"ucd-cap", "ucd_cap", "UCD capped", EBM_ESTIMATOR_UCD, 1, 0},
    {"ucd-lmi", "ucd_lmi", "UCD-LMI", EBM_ESTIMATOR_UCD_LMI, 0, 0},
    {"ucd-global", "ucd_global", "UCD global", EBM_ESTIMATOR_UCD, 0, 1},
};
enum { N_METHODS = sizeof methods / sizeof methods[0] };
#define DEFAULT_METHODS "cd,pcd,ucd,ucd-cap,ucd-lmi,ucd-global"

/* --coupling's names, in the order of enum ebm_coupling's values. */
static const char *const coupling_names[] = {"maximal", "crn", "blockwise"};

typedef struct options {
    int use[N_METHODS];
    int64_t iters, chains, every, cap;
    int64_t average_from; /* the average of the iterates after this one; -1: none */
    int coupling;         /* enum ebm_coupling of ucd and ucd-cap */
    double lr;
    double global_prob, flip_prob; /* ucd-global's global moves */
    uint64_t seed;
    const char *out;
    const char *save; /* NULL, or where to save each method's final model */
} options;

/* One method's run. */
typedef struct run {
    int method;
    int64_t n_evals, *eval_iter; /* evaluations at iterations 0, every, ..., iters */
    double *eval_ll;             /* log-likelihood summed over the rows */
    double *eval_avg;            /* ... of the average of the iterates (NaN before it has one) */
    int64_t avg_count;           /* iterates in the final average */
    int64_t iters_done;          /* < iters if the run stopped on an error */
    double tau_sum, tau_max;     /* over all iterations (UCD kinds) */
    int64_t capped;
    double train_s, eval_s;
} run;

/* The data and the model's first parameters, shared by all runs. */
typedef struct problem {
    int64_t n;      /* 32 rows */
    float *data;    /* n x N_VISIBLE */
    float *init;    /* [param_count] */
    double optimum; /* bas_max_log_likelihood */
} problem;

/* @return 0, 1 after --help, or -1 after a message */
static int parse_options(int argc, char **argv, options *o)
{
    const char *list = DEFAULT_METHODS;
    o->iters = 10000;
    o->chains = 1000;
    o->every = 50;
    o->cap = 100;
    o->average_from = 2000;
    o->coupling = EBM_COUPLING_CRN;
    o->lr = 0.1;
    o->global_prob = 0.5;
    o->flip_prob = 0.02;
    o->seed = 1;
    o->out = "examples/out";
    o->save = NULL;
    const cli_spec specs[] = {
        CLI_STR("--methods", "LIST", &list,
                "from cd, pcd, ucd, ucd-cap (UCD with at most --cap coupling steps per chain), "
                "ucd-lmi, ucd-global (UCD with global moves from the data rows)"),
        CLI_I64("--iters", "N", &o->iters, 1, INT64_C(1) << 40, "SGD iterations"),
        CLI_DBL("--lr", "X", &o->lr, 1e-12, 1e6, "learning rate"),
        CLI_I64("--chains", "N", &o->chains, 1, INT64_C(1) << 24,
                "Markov chains of the negative phase"),
        CLI_I64("--every", "N", &o->every, 1, INT64_C(1) << 40,
                "exact log-likelihood every N iterations"),
        CLI_I64("--cap", "N", &o->cap, 1, INT64_C(1) << 40,
                "ucd-cap's cap on coupling steps (100: as cdtau)"),
        CLI_DBL("--global-prob", "P", &o->global_prob, 0.0, 0.999999,
                "ucd-global: the chance that a step is a global move (EBM_SAMPLER_GLOBAL_PROB)"),
        CLI_DBL("--flip-prob", "E", &o->flip_prob, 1e-9, 0.999999,
                "ucd-global: the chance that the proposal flips a unit of its data row"),
        {.type = CLI_CHOICE, .name = "--coupling", .field = &o->coupling,
         .choices = coupling_names, .n_choices = 3,
         .help = "the coupling of ucd's and ucd-cap's Gibbs chains (EBM_SAMPLER_COUPLING)"},
        {.type = CLI_CUSTOM, .name = "--average-from", .meta = "N", .field = &o->average_from,
         .parse = cli_parse_step_or_off, .range = "N >= 0 or off", .dflt = "2000",
         .help = "also evaluate, plot (dashed) and --save the average of the iterates after "
                 "iteration N (Polyak-Ruppert); training is unchanged"},
        {.type = CLI_SEED, .name = "--seed", .meta = "N", .field = &o->seed,
         .help = "seed of the initial model and the chains"},
        CLI_STR("--out", "DIR", &o->out, "output directory, created if missing"),
        {.type = CLI_TEXT, .name = "--save", .meta = "DIR", .field = &o->save,
         .dflt = "not saved",
         .help = "save each method's final model to DIR/bas_<file>.ebm, <file> cd, pcd, ucd, "
                 "ucd_cap, ucd_lmi or ucd_global (DIR must exist)"},
    };
    const cli_program p = {
        PROG, "[options]",
        "  Qiu et al. (2020) section 6.1: an RBM (16 visible, 16 hidden) on 4x4\n"
        "  bars-and-stripes, trained by CD-1, PCD-1, UCD and UCD-LMI (and UCD with global\n"
        "  moves from the data rows).\n",
        specs, (int)(sizeof specs / sizeof specs[0]), NULL, NULL, NULL};
    const int parsed = cli_parse(&p, argc, argv);
    if (parsed != 0) {
        return parsed;
    }
    const char *names[N_METHODS];
    char unknown[64];
    for (int k = 0; k < N_METHODS; k++) {
        names[k] = methods[k].name;
    }
    memset(o->use, 0, sizeof o->use);
    int n_use = cli_parse_names(list, names, N_METHODS, o->use, unknown, sizeof unknown);
    if (n_use < 0) {
        fprintf(stderr, "bas_ucd: unknown method '%s' (" DEFAULT_METHODS ")\n",
                unknown);
        return -1;
    }
    if (n_use == 0) {
        fprintf(stderr, "bas_ucd: --methods is empty\n");
        return -1;
    }
    return 0;
}

static ebm_model_t *new_model(void)
{
    const int64_t sizes[2] = {N_VISIBLE, N_HIDDEN};
    ebm_model_t *m;
    char err[256];
    int rc = ebm_model_create(&m, 2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, err, sizeof err);
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_model_create", rc, err);
    }
    return m;
}

/* The published initialisation: W, b, c entries all N(0, 0.1^2). */
static float *initial_params(uint64_t seed)
{
    ebm_model_t *m = new_model();
    ebm_rng_t *rng;
    int rc = ebm_rng_create(&rng, seed, 0);
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_rng_create", rc, "");
    }
    if ((rc = ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 0.1)) != EBM_OK) {
        cli_die(PROG, "ebm_model_init", rc, ebm_model_errmsg(m));
    }
    float *theta = cli_xmalloc(PROG, (size_t)ebm_model_param_count(m) * sizeof *theta);
    ebm_model_get_params(m, theta);
    for (int64_t l = 0; l < 2; l++) {
        int64_t offset, cols;
        if ((rc = ebm_model_param_block(m, EBM_PARAM_BIAS, l, &offset, NULL, &cols)) != EBM_OK ||
            (rc = ebm_rng_normal(rng, cols, theta + offset)) != EBM_OK) {
            cli_die(PROG, "bias initialisation", rc, ebm_model_errmsg(m));
        }
        for (int64_t j = 0; j < cols; j++) {
            theta[offset + j] *= 0.1f;
        }
    }
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
    return theta;
}

/* Exact log-likelihood of the data, summed over its rows. */
static double log_likelihood(const ebm_model_t *m, const problem *p, double *ll)
{
    double log_z, sum = 0.0;
    int rc = ebm_model_log_partition_exact(m, &log_z);
    if (rc != EBM_OK || (rc = ebm_model_log_likelihood(m, log_z, p->n, p->data, N_VISIBLE, ll)) !=
                            EBM_OK) {
        cli_die(PROG, "exact log-likelihood", rc, ebm_model_errmsg(m));
    }
    for (int64_t r = 0; r < p->n; r++) {
        sum += ll[r];
    }
    return sum;
}

static FILE *open_csv(const options *o, const method *me, char *path, size_t size)
{
    snprintf(path, size, "%s/bas_%s.csv", o->out, me->file);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "bas_ucd: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fprintf(f, "iteration,loglik_sum,loglik_mean,tau_mean,tau_max,capped,seconds%s\n",
            o->average_from >= 0 ? ",loglik_sum_avg,loglik_mean_avg" : "");
    return f;
}

/* Rows of x (width w, hidden layer zero) for uniform draws from the data:
 * row r is data row floor(n u_r); counts[i] += draws of row i. */
static void draw_rows(const problem *p, ebm_rng_t *rng, int64_t b, float *u, float *x, int64_t w,
                      int64_t *counts)
{
    int rc = ebm_rng_uniform(rng, b, u);
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_rng_uniform", rc, ebm_rng_errmsg(rng));
    }
    for (int64_t r = 0; r < b; r++) {
        int64_t i = (int64_t)(u[r] * (float)p->n);
        i = i < p->n ? i : p->n - 1;
        memcpy(x + r * w, p->data + i * N_VISIBLE, N_VISIBLE * sizeof *x);
        memset(x + r * w + N_VISIBLE, 0, (size_t)(w - N_VISIBLE) * sizeof *x);
        counts[i]++;
    }
}

/* Persistent chains at `chains` uniformly drawn data rows, h ~ p(h | v). */
static void start_pcd_chains(ebm_estimator_t *e, const ebm_model_t *m, const problem *p,
                             ebm_rng_t *rng, int64_t chains)
{
    const int64_t w = ebm_model_state_width(m);
    float *x = cli_xmalloc(PROG, (size_t)(chains * w) * sizeof *x), *u = cli_xmalloc(PROG, (size_t)chains * sizeof *u);
    int64_t *counts = calloc((size_t)p->n, sizeof *counts);
    if (counts == NULL) {
        cli_die(PROG, "calloc", EBM_ENOMEM, "counts");
    }
    draw_rows(p, rng, chains, u, x, w, counts);
    int rc = ebm_model_layer_sample(m, 1, rng, chains, x, w);
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_model_layer_sample", rc, ebm_model_errmsg(m));
    }
    if ((rc = ebm_estimator_set_chains(e, chains, x, w)) != EBM_OK) {
        cli_die(PROG, "ebm_estimator_set_chains", rc, ebm_estimator_errmsg(e));
    }
    free(counts);
    free(u);
    free(x);
}

static void progress(const method *me, const options *o, int64_t it, double ll, double ll_avg,
                     double n_rows, double tau, double tau_max, double train_s)
{
    char eta[32], tau_text[64] = "", avg_text[64] = "";
    const double rate = it > 0 && train_s > 0 ? (double)it / train_s : NAN;
    cli_format_duration((double)(o->iters - it) / rate, eta, sizeof eta);
    if (isfinite(tau)) {
        snprintf(tau_text, sizeof tau_text, "  tau %.2f (max %.0f)", tau, tau_max);
    }
    if (isfinite(ll_avg)) {
        snprintf(avg_text, sizeof avg_text, "  averaged %9.3f", ll_avg);
    }
    fprintf(stderr, "%-8s it %6lld/%lld  loglik %9.3f (%.4f/row)%s%s  %7.0f it/s  ETA %s\n",
            me->name, (long long)it, (long long)o->iters, ll, ll / n_rows, avg_text, tau_text,
            rate, eta);
}

/* Train one method from the shared initial parameters. */
static void train(const options *o, const problem *p, int index, run *res)
{
    const method *me = &methods[index];
    const int is_ucd = me->kind == EBM_ESTIMATOR_UCD || me->kind == EBM_ESTIMATOR_UCD_LMI;
    const int is_pcd = me->kind == EBM_ESTIMATOR_PCD;
    ebm_model_t *m = new_model();
    ebm_estimator_t *e;
    ebm_rng_t *rng;
    int rc = ebm_model_set_params(m, p->init);
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_model_set_params", rc, ebm_model_errmsg(m));
    }
    if ((rc = ebm_rng_create(&rng, o->seed, (uint64_t)index + 1)) != EBM_OK) {
        cli_die(PROG, "ebm_rng_create", rc, "");
    }
    if ((rc = ebm_estimator_create(&e, m, me->kind)) != EBM_OK) {
        cli_die(PROG, "ebm_estimator_create", rc, ebm_model_errmsg(m));
    }
    if (me->kind != EBM_ESTIMATOR_UCD_LMI && (rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_K, 1))) {
        cli_die(PROG, "ebm_estimator_set_int(K)", rc, ebm_estimator_errmsg(e));
    }
    if (me->capped && (rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_MAX_STEPS, o->cap))) {
        cli_die(PROG, "ebm_estimator_set_int(MAX_STEPS)", rc, ebm_estimator_errmsg(e));
    }
    if (me->kind == EBM_ESTIMATOR_UCD &&
        (rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_COUPLING,
                                    o->coupling)) != EBM_OK) {
        cli_die(PROG, "ebm_estimator_set_int(SAMPLER_COUPLING)", rc, ebm_estimator_errmsg(e));
    }
    if (me->global) {
        if ((rc = ebm_estimator_set_double(e, EBM_ESTIMATOR_SAMPLER_OPTION +
                                                  EBM_SAMPLER_GLOBAL_PROB, o->global_prob))) {
            cli_die(PROG, "ebm_estimator_set_double(SAMPLER_GLOBAL_PROB)", rc,
                    ebm_estimator_errmsg(e));
        }
        if ((rc = ebm_estimator_set_proposal(e, p->n, p->data, N_VISIBLE, o->flip_prob))) {
            cli_die(PROG, "ebm_estimator_set_proposal", rc, ebm_estimator_errmsg(e));
        }
    }
    if (is_pcd) {
        if ((rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_CHAINS, o->chains)) != EBM_OK) {
            cli_die(PROG, "ebm_estimator_set_int(CHAINS)", rc, ebm_estimator_errmsg(e));
        }
        start_pcd_chains(e, m, p, rng, o->chains);
    }

    const int64_t w = ebm_model_state_width(m), n_params = ebm_model_param_count(m);
    const int64_t b = is_pcd ? p->n : o->chains; /* rows given to the estimator */
    float *batch = cli_xmalloc(PROG, (size_t)(b * w) * sizeof *batch), *u = cli_xmalloc(PROG, (size_t)b * sizeof *u);
    float *grad = cli_xmalloc(PROG, (size_t)n_params * sizeof *grad);
    float *data_states = calloc((size_t)(p->n * w), sizeof *data_states);
    int64_t *counts = cli_xmalloc(PROG, (size_t)p->n * sizeof *counts);
    double *coef = cli_xmalloc(PROG, (size_t)p->n * sizeof *coef), *ll = cli_xmalloc(PROG, (size_t)p->n * sizeof *ll);
    if (data_states == NULL) {
        cli_die(PROG, "calloc", EBM_ENOMEM, "data states");
    }
    for (int64_t i = 0; i < p->n; i++) {
        memcpy(data_states + i * w, p->data + i * N_VISIBLE, N_VISIBLE * sizeof *data_states);
    }
    const int64_t max_evals = o->iters / o->every + 2;
    res->method = index;
    res->eval_iter = cli_xmalloc(PROG, (size_t)max_evals * sizeof *res->eval_iter);
    res->eval_ll = cli_xmalloc(PROG, (size_t)max_evals * sizeof *res->eval_ll);
    res->eval_avg = cli_xmalloc(PROG, (size_t)max_evals * sizeof *res->eval_avg);
    res->n_evals = 0;
    res->tau_sum = res->tau_max = 0.0;
    res->capped = 0;
    res->train_s = res->eval_s = 0.0;

    char path[4200];
    FILE *csv = open_csv(o, me, path, sizeof path);
    optim_sgd sgd = optim_sgd_plain(o->lr);
    optim_average avg; /* of the iterates after --average-from, shown by m_avg */
    if (optim_average_init(&avg, n_params, o->average_from) != OPTIM_OK) {
        cli_die(PROG, "optim_average_init", EBM_ENOMEM, "out of memory");
    }
    ebm_model_t *m_avg = optim_average_on(&avg) ? new_model() : NULL;
    double win_tau = 0.0, win_tau_max = 0.0, last_print = -INFINITY;
    int64_t win_iters = 0, win_capped = 0, it = 0;
    for (;;) {
        if (it % o->every == 0 || it == o->iters) { /* evaluate and log */
            double t0 = cli_now(), sum = log_likelihood(m, p, ll), sum_avg = NAN;
            if (avg.count > 0) {
                if ((rc = optim_average_apply(&avg, m_avg)) != EBM_OK) {
                    cli_die(PROG, "optim_average_apply", rc, ebm_model_errmsg(m_avg));
                }
                sum_avg = log_likelihood(m_avg, p, ll);
            }
            res->eval_s += cli_now() - t0;
            res->eval_iter[res->n_evals] = it;
            res->eval_avg[res->n_evals] = sum_avg;
            res->eval_ll[res->n_evals++] = sum;
            double tau = is_ucd && win_iters > 0 ? win_tau / (double)win_iters : NAN;
            double tau_max = is_ucd && win_iters > 0 ? win_tau_max : NAN;
            fprintf(csv, "%lld,%.6f,%.6f,%.4f,%.0f,%lld,%.4f", (long long)it, sum,
                    sum / (double)p->n, tau, tau_max, (long long)win_capped, res->train_s);
            if (optim_average_on(&avg)) {
                fprintf(csv, ",%.6f,%.6f", sum_avg, sum_avg / (double)p->n);
            }
            fputc('\n', csv);
            if (cli_now() - last_print >= 2.0 || it == o->iters) {
                last_print = cli_now();
                progress(me, o, it, sum, sum_avg, (double)p->n, tau, tau_max, res->train_s);
            }
            win_tau = win_tau_max = 0.0;
            win_iters = win_capped = 0;
        }
        if (it == o->iters) {
            break;
        }
        double t0 = cli_now();
        if (is_pcd) {
            rc = ebm_estimator_gradient(e, rng, p->n, p->data, N_VISIBLE, grad);
        } else {
            memset(counts, 0, (size_t)p->n * sizeof *counts);
            draw_rows(p, rng, b, u, batch, w, counts);
            rc = ebm_estimator_gradient(e, rng, b, batch, w, grad);
            if (rc == EBM_OK) { /* the exact positive phase over the 32 rows */
                for (int64_t i = 0; i < p->n; i++) {
                    coef[i] = (double)counts[i] / (double)b - 1.0 / (double)p->n;
                }
                if ((rc = ebm_model_energy_grad(m, 1u << 1, p->n, data_states, w, coef, grad)) !=
                    EBM_OK) {
                    cli_die(PROG, "ebm_model_energy_grad", rc, ebm_model_errmsg(m));
                }
            }
        }
        if (rc != EBM_OK) {
            fprintf(stderr, "bas_ucd: %s stops at iteration %lld: %s (%s)\n", me->name,
                    (long long)it, ebm_error_name(rc), ebm_estimator_errmsg(e));
            break;
        }
        if ((rc = optim_sgd_step(&sgd, m, grad)) != EBM_OK) {
            fprintf(stderr, "bas_ucd: %s stops at iteration %lld: %s (%s)\n", me->name,
                    (long long)it, ebm_error_name(rc), ebm_model_errmsg(m));
            break;
        }
        if ((rc = optim_average_update(&avg, m, sgd.step)) != EBM_OK) {
            cli_die(PROG, "optim_average_update", rc, "");
        }
        res->train_s += cli_now() - t0;
        it++;
        if (is_ucd) {
            double tau = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MEAN);
            double tau_max = ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_TAU_MAX);
            int64_t capped = (int64_t)ebm_estimator_stat(e, EBM_ESTIMATOR_STAT_CAPPED);
            win_tau += tau;
            win_tau_max = fmax(win_tau_max, tau_max);
            res->tau_sum += tau;
            res->tau_max = fmax(res->tau_max, tau_max);
            win_capped += capped;
            res->capped += capped;
        }
        win_iters++;
    }
    res->iters_done = it;
    res->avg_count = avg.count;
    if (ferror(csv) | fclose(csv)) {
        fprintf(stderr, "bas_ucd: error writing %s\n", path);
        exit(1);
    }
    if (o->save != NULL) { /* the final model, also after an early stop */
        snprintf(path, sizeof path, "%s/bas_%s.ebm", o->save, me->file);
        if ((rc = ebm_model_save(m, path)) != EBM_OK) {
            cli_die(PROG, "ebm_model_save", rc, ebm_model_errmsg(m));
        }
        snprintf(path, sizeof path, "%s/bas_%s_avg.ebm", o->save, me->file);
        if (avg.count > 0 && ((rc = optim_average_apply(&avg, m_avg)) != EBM_OK ||
                              (rc = ebm_model_save(m_avg, path)) != EBM_OK)) {
            cli_die(PROG, "ebm_model_save (average)", rc, ebm_model_errmsg(m_avg));
        }
    }
    optim_average_free(&avg);
    ebm_model_destroy(m_avg);
    free(ll);
    free(coef);
    free(counts);
    free(data_states);
    free(grad);
    free(u);
    free(batch);
    ebm_estimator_destroy(e);
    ebm_rng_destroy(rng);
    ebm_model_destroy(m);
}

/* The figures of a table row: the last evaluation, the mean over the last
 * 10% of the iterations, the best and where, over the finite values of ll. */
typedef struct figures {
    double final, tail, best;
    int64_t best_iter;
} figures;

static figures figures_of(const run *r, const double *ll)
{
    figures f = {ll[r->n_evals - 1], NAN, -INFINITY, 0};
    double tail = 0.0;
    int64_t n_tail = 0;
    for (int64_t i = 0; i < r->n_evals; i++) {
        if (ll[i] > f.best) { /* false for NaN */
            f.best = ll[i];
            f.best_iter = r->eval_iter[i];
        }
        if (10 * r->eval_iter[i] > 9 * r->iters_done && isfinite(ll[i])) { /* the last 10% */
            tail += ll[i];
            n_tail++;
        }
    }
    f.tail = n_tail > 0 ? tail / (double)n_tail : NAN;
    return f;
}

static void print_summary(const run *runs, int n_runs, const options *o, const problem *p)
{
    char averaged[96] = "";
    if (o->average_from >= 0) {
        snprintf(averaged, sizeof averaged, "; averaged: the mean of the iterates after "
                 "iteration %lld", (long long)o->average_from);
    }
    printf("\n4x4 bars-and-stripes, RBM 16-16, %lld iterations, lr %g, %lld chains, seed %llu, "
           "cap %lld (ucd-cap), coupling %s (ucd, ucd-cap)\n",
           (long long)o->iters, o->lr, (long long)o->chains, (unsigned long long)o->seed,
           (long long)o->cap, coupling_names[o->coupling]);
    printf("log-likelihood summed over the %lld rows (optimum %.2f): at the end, mean over the "
           "last 10%% of the iterations, best%s\n",
           (long long)p->n, p->optimum, averaged);
    printf("%-11s %9s %9s %9s %8s %9s %9s %7s %9s %8s %8s\n", "method", "final", "last 10%",
           "best", "at iter", "mean tau", "max tau", "capped", "train s", "it/s", "eval s");
    for (int k = 0; k < n_runs; k++) {
        const run *r = &runs[k];
        const figures raw = figures_of(r, r->eval_ll), avg = figures_of(r, r->eval_avg);
        const int is_ucd = methods[r->method].kind == EBM_ESTIMATOR_UCD ||
                           methods[r->method].kind == EBM_ESTIMATOR_UCD_LMI;
        char tau[32] = "-", tau_max[32] = "-", capped[32] = "-";
        if (is_ucd && r->iters_done > 0) {
            snprintf(tau, sizeof tau, "%.3f", r->tau_sum / (double)r->iters_done);
            snprintf(tau_max, sizeof tau_max, "%.0f", r->tau_max);
            snprintf(capped, sizeof capped, "%lld", (long long)r->capped);
        }
        printf("%-11s %9.2f %9.2f %9.2f %8lld %9s %9s %7s %9.2f %8.0f %8.2f%s\n",
               methods[r->method].label, raw.final, raw.tail, raw.best, (long long)raw.best_iter,
               tau, tau_max, capped, r->train_s, (double)r->iters_done / r->train_s, r->eval_s,
               r->iters_done < o->iters ? "  (stopped early)" : "");
        if (r->avg_count > 0) {
            printf("%-11s %9.2f %9.2f %9.2f %8lld   (the mean of %lld iterates)\n", "  averaged",
                   avg.final, avg.tail, avg.best, (long long)avg.best_iter,
                   (long long)r->avg_count);
        }
    }
}

/* The curves, binned to about 50 points each: the bin mean joined by lines,
 * the bin's min-max as a band; beside each, dashed in its colour, the bin
 * means of its average of the iterates (where it has one); the optimum as a
 * horizontal line. The y axis ends below at the initial model's
 * log-likelihood (the same for all methods): a method that falls below where
 * it started is cut off there. */
static void write_plot(const run *runs, int n_runs, const options *o, const problem *p)
{
    const int64_t per_bin_target = (o->iters + 49) / 50;
    const int64_t per_bin = (per_bin_target + o->every - 1) / o->every; /* evaluations per bin */
    plot_series series[2 * N_METHODS + 1];
    plot_style styles[2 * N_METHODS + 1];
    char avg_label[N_METHODS][64];
    double *buf[N_METHODS];
    double ymin = p->optimum;
    int n_series = 0, n_averaged = 0;
    for (int k = 0; k < n_runs; k++) {
        const run *r = &runs[k];
        const int64_t nb = 1 + (r->n_evals - 1 + per_bin - 1) / per_bin;
        double *x = buf[k] = cli_xmalloc(PROG, (size_t)(5 * nb) * sizeof *x), *y = x + nb, *lo = y + nb,
               *hi = lo + nb, *ya = hi + nb;
        int averaged = 0; /* bins with an average */
        x[0] = (double)r->eval_iter[0]; /* the initial model alone */
        y[0] = lo[0] = hi[0] = r->eval_ll[0];
        ya[0] = r->eval_avg[0];
        for (int64_t j = 1; j < nb; j++) {
            const int64_t first = 1 + (j - 1) * per_bin;
            const int64_t end = first + per_bin < r->n_evals ? first + per_bin : r->n_evals;
            double sum = 0.0, sum_avg = 0.0;
            int64_t n_avg = 0;
            lo[j] = INFINITY;
            hi[j] = -INFINITY;
            for (int64_t i = first; i < end; i++) {
                sum += r->eval_ll[i];
                lo[j] = fmin(lo[j], r->eval_ll[i]);
                hi[j] = fmax(hi[j], r->eval_ll[i]);
                if (isfinite(r->eval_avg[i])) {
                    sum_avg += r->eval_avg[i];
                    n_avg++;
                }
            }
            x[j] = (double)r->eval_iter[end - 1];
            y[j] = sum / (double)(end - first);
            ya[j] = n_avg > 0 ? sum_avg / (double)n_avg : NAN;
            averaged += n_avg > 0;
            if (x[j] >= 0.05 * (double)o->iters) { /* the range ignores the first 5% */
                ymin = fmin(ymin, lo[j]);
                ymin = n_avg > 0 ? fmin(ymin, ya[j]) : ymin;
            }
        }
        styles[n_series] = (plot_style){k, 0};
        series[n_series++] = (plot_series){methods[r->method].label, (int)nb, x, y, lo, hi,
                                           PLOT_BAND, NULL};
        if (averaged > 0) {
            snprintf(avg_label[k], sizeof avg_label[k], "%s averaged", methods[r->method].label);
            styles[n_series] = (plot_style){k, 1};
            series[n_series++] = (plot_series){avg_label[k], (int)nb, x, ya, NULL, NULL,
                                               PLOT_BAND, NULL};
            n_averaged++;
        }
    }
    const double start = runs[0].eval_ll[0];
    const int cut = ymin < start;
    ymin = fmax(ymin, start);
    char optimum_label[64], title[160], caption[200], caption2[200] = "", path[4200];
    const double ox[2] = {0.0, (double)o->iters}, oy[2] = {p->optimum, p->optimum};
    snprintf(optimum_label, sizeof optimum_label, "optimum %.2f", p->optimum);
    styles[n_series] = (plot_style){n_runs, 0};
    series[n_series++] = (plot_series){optimum_label, 2, ox, oy, NULL, NULL, PLOT_BAND, NULL};
    snprintf(title, sizeof title,
             "4x4 bars-and-stripes, RBM 16-16, lr %g, %lld chains: exact log-likelihood", o->lr,
             (long long)o->chains);
    snprintf(caption, sizeof caption,
             "Point: mean of %lld evaluations, every %lld iterations; band: their min-max%s",
             (long long)per_bin, (long long)o->every,
             cut ? "; curves below the start are cut off" : "");
    if (n_averaged > 0) {
        snprintf(caption2, sizeof caption2, "Dashed: the average of the iterates after "
                 "iteration %lld (Polyak-Ruppert), evaluated alike", (long long)o->average_from);
    }
    const double span = p->optimum - ymin;
    plot_axes axes = {title, "iteration", "log-likelihood, sum over the 32 rows", 0, 0,
                      0.0, (double)o->iters, ymin - 0.05 * span, p->optimum + 0.1 * span,
                      NULL, 0, PLOT_BOTTOM_RIGHT, series, n_series};
    const int width = 1400, height = 700, caption_h = n_averaged > 0 ? 52 : 30;
    const uint8_t black[3] = {0, 0, 0};
    plot_canvas c;
    snprintf(path, sizeof path, "%s/bas_loglik.png", o->out);
    if (plot_canvas_create(&c, width, height + caption_h) != 0) {
        cli_die(PROG, "plot_canvas_create", EBM_ENOMEM, "canvas");
    }
    if (plot_draw_styled(&c, 0, 0, width, height, &axes, styles) != 0) {
        fprintf(stderr, "bas_ucd: nothing to plot\n");
    } else {
        plot_text(&c, 20, height + 4, 2, black, caption);
        plot_text(&c, 20, height + 26, 2, black, caption2);
        int rc = plot_save_png(&c, path);
        if (rc != IMAGE_OK) {
            fprintf(stderr, "bas_ucd: cannot write %s: %s (%s)\n", path, image_strerror(rc),
                    strerror(errno));
            exit(1);
        }
        fprintf(stderr, "wrote %s\n", path);
    }
    plot_canvas_destroy(&c);
    for (int k = 0; k < n_runs; k++) {
        free(buf[k]);
    }
}

int main(int argc, char **argv)
{
    options o;
    const int parsed = parse_options(argc, argv, &o);
    if (parsed != 0) {
        return parsed == 1 ? 0 : 2;
    }
    if (cli_make_dirs(o.out) != 0) {
        fprintf(stderr, "bas_ucd: cannot create %s: %s\n", o.out, strerror(errno));
        return 1;
    }
    problem p;
    p.n = bas_rows(SIDE);
    p.data = cli_xmalloc(PROG, (size_t)(p.n * N_VISIBLE) * sizeof *p.data);
    bas_generate(SIDE, p.data, N_VISIBLE);
    p.optimum = bas_max_log_likelihood(SIDE);
    p.init = initial_params(o.seed);

    run runs[N_METHODS];
    int n_runs = 0;
    for (int k = 0; k < N_METHODS; k++) {
        if (o.use[k]) {
            train(&o, &p, k, &runs[n_runs++]);
        }
    }
    print_summary(runs, n_runs, &o, &p);
    write_plot(runs, n_runs, &o, &p);
    for (int k = 0; k < n_runs; k++) {
        free(runs[k].eval_iter);
        free(runs[k].eval_ll);
        free(runs[k].eval_avg);
    }
    free(p.init);
    free(p.data);
    return 0;
}
