/* The shared training loop of the DBM/RBM trainers: see trainer.h. */
#include "trainer.h"

#include "checkpoint.h"
#include "cli.h"
#include "data.h"
#include "dist.h"
#include "optim.h"
#include "png.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ERR_SIZE = 1024, PICTURE_SCALE = 2, EXACT_LOG_Z_BITS = 24, EXACT_ROW_BITS = 20 };
/* Gibbs sweeps behind each sample picture of a model the local search does
 * not move (Potts sites, dReLU units); rounds of conditional modes behind a
 * dReLU model's completions. */
enum { GIBBS_SAMPLE_SWEEPS = 1000, COMPLETION_MODE_ROUNDS = 100 };

/* --eval-every is exact under tighter limits than the final evaluation, to
 * keep each evaluation short: at most 2^20 states for log Z, 1e8 rows x
 * hidden states for the rows. */
enum { HELDOUT_LOG_Z_BITS = 20 };
#define HELDOUT_ROW_STATES 1e8
/* The generator streams of --eval-every: the held-out rows' encoding, AIS
 * at step s from HELDOUT_STREAM + s, and a DBM's IS estimate at step s from
 * HELDOUT_IS_STREAM + s. */
#define HELDOUT_STREAM (UINT64_C(1) << 32)
#define HELDOUT_IS_STREAM (UINT64_C(2) << 32)
/* The final evaluation's IS estimate and its AIS check (the final AIS is
 * stream 2; the pictures 3 + step and 4). */
#define FINAL_IS_STREAM (UINT64_C(3) << 32)
#define AIS_CHECK_STREAM ((UINT64_C(3) << 32) + 1)
/* --ais-base data: the Bernoulli draws of the training images' encoding */
#define AIS_BASE_STREAM ((UINT64_C(3) << 32) + 2)

/* Everything one run holds. */
typedef struct run {
    trainer_config *c;
    data_set train, test;
    data_encoding enc;
    int64_t dim;       /* units of an encoded image: the visible layer */
    ebm_model_t *m;
    ebm_estimator_t *e; /* distributed: holds the global chains for checkpoints only */
    ebm_rng_t *rng;    /* the training stream */
    dist_shards dist;  /* distributed (c->comm): this rank's shards */
    int root;          /* this process writes the outputs (rank 0, or the only one) */
    optim opt;
    optim_average avg; /* --average-from (inactive when off) */
    ebm_model_t *m_avg; /* the average as a model, brought up to date by shown_model */
    int64_t width, n_params;
    float *batch, *grad;
    int64_t *rows;
    int64_t step;
    double seconds_before; /* training time of earlier processes (resume) */
    FILE *csv;
    char config_text[1024 + 24 * TRAINER_MAX_BETAS]; /* (config_text) */
    /* coupling statistics over this process's steps (UCD kinds) */
    int64_t stat_steps;
    double tau_sum, tau_max, ptau_sum, ptau_max, capped;
    double mh_accepted; /* UCD-LMI: MH moves accepted over this process's steps */
    /* PT: the swap rate summed over steps, and per adjacent pair of the
     * ladder the exchanges accepted and proposed over this process's steps */
    double swap_sum, swap_accepted[TRAINER_MAX_BETAS], swap_proposed[TRAINER_MAX_BETAS];
    /* --eval-every: the held-out rows, encoded once, and how they are scored */
    float *heldout_x;
    float *ais_base; /* --ais-base data: the base's visible biases, else NULL */
    const char *ais_base_note; /* why --ais-base data fell back to uniform units, else NULL */
    /* --eval-every: the AIS log Z (and its s.e.) of the shown model's last
     * held-out evaluation in this process, and its step (0: none) */
    double heldout_last_log_z, heldout_last_se;
    int64_t heldout_last_step;
    /* --centre data: mean-field states of a batch, its clamp mask, the
     * offsets' target */
    float *centre_mu, *centre_target;
    uint8_t *centre_clamp;
    int64_t heldout_n;
    int heldout_exact, heldout_bound;
    int heldout_is; /* a DBM's IS estimate too (--is-samples > 0) */
    const char *heldout_column;
    double heldout_seconds; /* spent on it in this process (not training time) */
    int stopped_by;         /* the signal that stopped training, or 0 */
    int failed;             /* distributed: this rank failed in the last step (rank_failed) */
} run;

/* The last message of complain, for the other ranks of a distributed run. */
static char last_complaint[ERR_SIZE];

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int complain(const trainer_config *c, const char *fmt, ...)
{
    va_list ap, copy;
    va_start(ap, fmt);
    va_copy(copy, ap);
    vsnprintf(last_complaint, sizeof last_complaint, fmt, copy);
    va_end(copy);
    if (c->comm != NULL) {
        fprintf(stderr, "%s: rank %d: ", c->prog, c->comm->rank);
    } else {
        fprintf(stderr, "%s: ", c->prog);
    }
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

/* Distributed: whether any rank failed (each says so by `failed`, after
 * complain); the others then say which rank and why. Alone: `failed`. */
static int any_failed(const trainer_config *c, int failed)
{
    if (c->comm == NULL) {
        return failed;
    }
    char msg[ERR_SIZE];
    snprintf(msg, sizeof msg, "%s", failed ? last_complaint : "");
    const int who = dist_agree(c->comm, failed, msg, sizeof msg);
    if (who >= 0 && !failed) {
        fprintf(stderr, "%s: rank %d: stopping: rank %d failed: %s\n", c->prog, c->comm->rank,
                who, msg);
    }
    return who >= 0;
}

/* FNV-1a over n bytes, continuing from h. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * UINT64_C(0x100000001b3);
    }
    return h;
}

/* Distributed: every rank must start from rank 0's training data, model,
 * generator and step (each reads its own files: a stale copy on one machine
 * would train on another batch, silently). 0, or 1 after a message. */
static int same_start_as_root(run *r)
{
    const dist_comm *cm = r->c->comm;
    float *theta = malloc((size_t)r->n_params * sizeof *theta);
    if (theta == NULL) {
        return complain(r->c, "out of memory");
    }
    uint64_t state[EBM_RNG_STATE_WORDS];
    ebm_model_get_params(r->m, theta);
    ebm_rng_get_state(r->rng, state);
    uint64_t h = fnv1a(UINT64_C(0xcbf29ce484222325), r->train.x,
                       (size_t)(r->train.n * r->train.dim) * sizeof *r->train.x);
    h = fnv1a(h, theta, (size_t)r->n_params * sizeof *theta);
    h = fnv1a(h, state, sizeof state);
    h = fnv1a(h, &r->step, sizeof r->step);
    free(theta);
    uint64_t root = h;
    if (cm->bcast(cm->ctx, &root, sizeof root, 0) != 0) {
        return complain(r->c, "the transport failed");
    }
    if (root != h) {
        return complain(r->c, "its training data, model, generator or step differ from rank "
                              "0's: give every rank the same data and --resume checkpoint");
    }
    return 0;
}

static const char *method_flag(int method)
{
    return method == EBM_ESTIMATOR_UCD_LMI ? "ucd-lmi"
           : method == EBM_ESTIMATOR_UCD   ? "ucd"
           : method == EBM_ESTIMATOR_CD    ? "cd"
           : method == EBM_ESTIMATOR_PT    ? "pt"
                                           : "pcd";
}

/* PCD's persistent chains: plain or tempered. */
static int persistent_method(int method)
{
    return method == EBM_ESTIMATOR_PCD || method == EBM_ESTIMATOR_PT;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

static const char *const data_names[] = {"fashion", "mnist", "bas", "digits"};
static const char *const units_names[] = {"binary", "spin", "potts"};
static const char *const hidden_names[] = {"auto", "drelu"};
static const char *const binarize_names[] = {"grey",   "threshold", "bernoulli",
                                             "8bit",   "levels"};
static const char *const ais_base_names[] = {"uniform", "data"};
static const char *const centre_names[] = {"none", "data"};
static const char *const init_names[] = {"orthogonal", "gaussian"};
static const char *const optimizer_names[] = {"sgd", "adam"};
static const char *const schedule_names[] = {"constant", "invsqrt", "cosine"};
static const char *const marginalize_names[] = {"none", "even", "odd", "both"};
static const char *const positive_names[] = {"auto", "exact", "mean-field", "coupled", "sampled"};
static const char *const eval_names[] = {"auto", "ais", "none"};

void trainer_defaults(trainer_config *c, int method, const char *prog, const char *title)
{
    memset(c, 0, sizeof *c);
    c->prog = prog;
    c->title = title;
    c->method = method;
    c->data = TRAINER_FASHION;
    c->bas_side = 4;
    c->levels = 4;
    c->init_scale = 1.0;
    c->offset_rate = 0.01;
    c->optimizer = OPTIM_SGD;
    c->gamma = 1e-3;
    c->batch = 1000;
    c->average_from = -1;
    c->k = -1;
    c->marginalize = -1;
    c->positive = EBM_POSITIVE_AUTO;
    c->search_sweeps = 10000;
    c->seed = 1;
    c->out = NULL;
    c->checkpoint_every = 1000;
    c->log_every = 10;
    c->sample_every = 500;
    c->n_samples = 64;
    c->mh_steps = 10;
    c->n_completions = 10;
    c->ais_chains = 100;
    c->ais_betas = TRAINER_AIS_BETAS;
    c->ais_base = 1;
    c->ais_check = 10;
    c->ais_check_chains = TRAINER_AIS_CHECK_CHAINS;
    c->is_samples = 100;
    c->eval = TRAINER_EVAL_AUTO;
    c->eval_every = 0;
    c->eval_rows = 500;
    c->eval_betas = TRAINER_EVAL_BETAS;
    if (method == EBM_ESTIMATOR_UCD) {
        /* Qiu et al. (2020) section 6.3: a binary RBM with 1000 hidden units on
         * Bernoulli-binarised Fashion-MNIST, batch 1000, lr 0.1; their code
         * initialises with N(0, 0.1^2) weights. */
        c->binarize = DATA_BERNOULLI;
        c->units = TRAINER_BINARY;
        c->init = EBM_INIT_GAUSSIAN;
        c->init_scale = 0.1;
        c->lr = 0.1;
        c->schedule = OPTIM_CONSTANT;
        c->steps = 5000;
    } else {
        /* Taniguchi et al. (2023) sections 4.1-4.3 and appendix C, and their
         * code: spin units, orthogonal weights, SGD lr 0.01 decayed as
         * 1/sqrt(1 + 1e-3 t), batch 1000, 100,000 steps; 1-bit threshold
         * binarisation (their --bits 1). PCD is their Table 2 baseline with
         * everything else equal. */
        c->binarize = DATA_THRESHOLD;
        c->units = TRAINER_SPIN;
        c->init = EBM_INIT_ORTHOGONAL;
        c->lr = 0.01;
        c->schedule = OPTIM_INVSQRT;
        c->steps = 100000;
    }
}

/* --layers N0,N1,...: 2 to EBM_MAX_LAYERS sizes, each >= 1. */
static int parse_layers(const char *val, void *field)
{
    trainer_config *c = field;
    int64_t layers[EBM_MAX_LAYERS];
    int n = 0;
    for (const char *p = val; *p != '\0';) {
        char *end;
        errno = 0;
        const long long v = strtoll(p, &end, 10);
        if (errno || end == p || v < 1 || v > INT32_MAX || n == EBM_MAX_LAYERS ||
            (*end != ',' && *end != '\0')) {
            return -1;
        }
        layers[n++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    if (n < 2) {
        return -1;
    }
    memcpy(c->layers, layers, sizeof layers);
    c->n_layers = n;
    return 0;
}

/* --ladder B0,B1,...,1: 2 to TRAINER_MAX_BETAS values in [0, 1] (the
 * library checks that they increase to 1); the run becomes PT. */
static int parse_ladder(const char *val, void *field)
{
    trainer_config *c = field;
    double b[TRAINER_MAX_BETAS];
    int n = 0;
    for (const char *p = val; *p != '\0';) {
        char *end;
        errno = 0;
        const double v = strtod(p, &end);
        if (errno || end == p || !(v >= 0.0 && v <= 1.0) || n == TRAINER_MAX_BETAS ||
            (*end != ',' && *end != '\0') || (*end == ',' && end[1] == '\0')) {
            return -1;
        }
        b[n++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    if (n < 2) {
        return -1;
    }
    memcpy(c->ladder, b, (size_t)n * sizeof *b);
    c->n_ladder = n;
    c->method = EBM_ESTIMATOR_PT;
    c->title = "PT";
    return 0;
}

enum { MAX_SPECS = 64 }; /* room for every option of any method (about 50) */

/* The table of options (cli.h) for c's method: what is parsed, what --help
 * prints and what the messages say all come from it. Defaults are c's
 * values, or the texts here where a sentinel stands for "the library's" or
 * "the data's". */
static int option_specs(trainer_config *c, cli_spec *s, char (*text)[256])
{
    const int lmi = c->method == EBM_ESTIMATOR_UCD_LMI, pcd = persistent_method(c->method);
    int n = 0, t = 0;
#define ADD(...) (s[n++] = (cli_spec)__VA_ARGS__)
    ADD(CLI_HEAD("data:"));
    ADD(CLI_ONE_OF("--data", &c->data, data_names, 0,
                   "data set: Fashion-MNIST, MNIST digits (make mnist-data), bars-and-stripes, "
                   "or scikit-learn's 8x8 digits (python3-sklearn)"));
    const int digits_dir = (int)(strlen(DATA_DIGITS_CSV) - strlen("/digits.csv.gz"));
    snprintf(text[t], sizeof text[t], "fashion: %s; mnist: %s; digits: %.*s",
             DATA_FASHION_MNIST_DIR, DATA_MNIST_JSON_DIR, digits_dir, DATA_DIGITS_CSV);
    ADD({.type = CLI_TEXT, .name = "--data-dir", .meta = "DIR", .field = &c->data_dir,
         .help = "the directory of the data set's files (digits: of digits.csv.gz)",
         .dflt = text[t++]});
    ADD(CLI_I32("--bas-side", "N", &c->bas_side, 1, 12,
                "--data bas: side of the bars-and-stripes images"));
    ADD(CLI_I64("--train-rows", "N", &c->train_rows, 0, INT64_C(1) << 40,
                "train on the first N training images only; 0: all"));
    ADD(CLI_I64("--test-rows", "N", &c->test_rows, 0, INT64_C(1) << 40,
                "evaluate on the first N test images only; 0: all"));
    ADD(CLI_ONE_OF("--binarize", &c->binarize, binarize_names, 1,
                   "1-bit threshold at 0.5, a fresh Bernoulli draw per batch, 8 bits per "
                   "pixel, or the pixel's grey level of --levels as one-hot units (for "
                   "--units potts)"));
    ADD(CLI_I32("--levels", "Q", &c->levels, 2, DATA_MAX_LEVELS,
                "--binarize levels: grey levels round((Q - 1) grey), each pixel Q units"));
    ADD(CLI_HEAD("model:"));
    snprintf(text[t], sizeof text[t], "2 to %d sizes, each >= 1", EBM_MAX_LAYERS);
    ADD({.type = CLI_CUSTOM, .name = "--layers", .meta = "N0,N1,...", .field = c,
         .parse = parse_layers, .range = text[t++],
         .help = "layer sizes, the visible layer's (N0) first",
         .dflt = c->method == EBM_ESTIMATOR_UCD
                     ? "N0,1000; bas and digits: N0,N0"
                     : "N0,N0,N0 with N0 visible units"});
    ADD(CLI_ONE_OF("--units", &c->units, units_names, 0,
                   "unit values {0,1} or {-1,+1}, or categorical (Potts) visible sites of "
                   "--binarize levels over binary hidden units"));
    ADD(CLI_ONE_OF("--hidden", &c->hidden, hidden_names, 0,
                   "hidden units: those of --units (binary for potts), or dReLU units "
                   "(Tubiana et al. 2019; an RBM trained by train_pcd)"));
    ADD(CLI_ONE_OF("--init", &c->init, init_names, 0, "weight initialisation"));
    ADD(CLI_DBL("--init-scale", "X", &c->init_scale, 1e-12, 1e6, "scale of the initial weights"));
    ADD(CLI_ONE_OF("--centre", &c->centre, centre_names, 0,
                   "centring (ebm_model_set_offsets): none, or offsets that start at the "
                   "training data's pixel means and 0.5 (spin: 0) and follow each batch's "
                   "layer means, the hidden ones by mean field given the batch (Melchior et "
                   "al. 2016)"));
    ADD(CLI_DBL("--offset-rate", "X", &c->offset_rate, 0.0, 1.0,
                "--centre data: the offsets' moving-average rate per step "
                "(ebm_model_move_offsets)"));
    ADD(CLI_HEAD("optimiser:"));
    ADD(CLI_ONE_OF("--optimizer", &c->optimizer, optimizer_names, 0, "update rule"));
    ADD(CLI_DBL("--lr", "X", &c->lr, 1e-12, 1e6, "learning rate"));
    ADD(CLI_DBL("--momentum", "X", &c->momentum, 0.0, 0.999999, "momentum; 0: none"));
    ADD(CLI_ONE_OF("--schedule", &c->schedule, schedule_names, 0,
                   "learning-rate schedule: constant, lr/sqrt(1 + gamma t), or cosine over "
                   "--steps"));
    ADD(CLI_DBL("--gamma", "X", &c->gamma, 1e-12, 1e6, "gamma of --schedule invsqrt"));
    ADD(CLI_DBL("--clip", "X", &c->clip, 0.0, 1e30, "gradient norm clipping; 0: none"));
    ADD(CLI_I64("--batch", "N", &c->batch, 1, INT64_C(1) << 24, "mini-batch size"));
    ADD({.type = CLI_CUSTOM, .name = "--average-from", .meta = "N", .field = &c->average_from,
         .parse = cli_parse_step_or_off, .range = "N >= 0 or off", .dflt = "off",
         .help = "evaluate, draw and save as model.ebm the average of the iterates after step "
                 "N (Polyak-Ruppert); training goes on from the last iterate, saved as "
                 "model_raw.ebm"});
    ADD(CLI_HEAD("estimator:"));
    ADD({.type = CLI_INT64, .name = "--k", .meta = "N", .field = &c->k, .ilo = 0,
         .ihi = INT64_C(1) << 30,
         .help = pcd ? "Gibbs sweeps per step" : "the step k of the estimate",
         .dflt = pcd || !lmi ? "the library's, 1" : "the library's, 0"});
    if (pcd) {
        ADD({.type = CLI_INT64, .name = "--chains", .meta = "N", .field = &c->chains, .ilo = 1,
             .ihi = INT64_C(1) << 24, .help = "persistent chains (--ladder: of R replicas each)",
             .dflt = "the batch size"});
        snprintf(text[t], sizeof text[t], "2 to %d values in [0, 1], increasing, the last 1",
                 TRAINER_MAX_BETAS);
        ADD({.type = CLI_CUSTOM, .name = "--ladder", .meta = "B0,B1,...,1", .field = c,
             .parse = parse_ladder, .range = text[t++], .dflt = "none: plain PCD",
             .help = "parallel tempering (PT): each chain has one replica per inverse "
                     "temperature, Gibbs sweeps at each and replica exchanges; f from the "
                     "beta = 1 replicas (a step costs R sweeps)"});
    } else {
        ADD(CLI_I64("--cap", "N", &c->cap, 0, INT64_C(1) << 40,
                    "cap on coupling steps; 0: none (a cap biases the estimate)"));
    }
    ADD({.type = CLI_CHOICE, .name = "--marginalize", .field = &c->marginalize,
         .choices = marginalize_names, .n_choices = 4, .help = "what the estimate's f sums out",
         .dflt = lmi ? "the library's, both" : "the library's, even"});
    ADD(CLI_ONE_OF("--positive", &c->positive, positive_names, 0, "positive phase"));
    if (lmi) {
        ADD(CLI_I64("--search-sweeps", "N", &c->search_sweeps, 1, INT64_C(1) << 40,
                    "local-search sweep cap"));
    }
    ADD(CLI_HEAD("run:"));
    if (c->comm != NULL) {
        ADD(CLI_I64("--shards", "N", &c->shards, 1, INT64_C(1) << 24,
                    "shards of the global batch, at least the ranks: the results depend on N "
                    "and not on the number of ranks"));
    }
    ADD(CLI_I64("--steps", "N", &c->steps, 0, INT64_C(1) << 50,
                "total steps, counting those before a resume; 0: no limit (give --minutes)"));
    ADD(CLI_DBL("--minutes", "X", &c->minutes, 0.0, 1e9,
                "training time budget, total; 0: none (a run stopped by it does not repeat)"));
    ADD({.type = CLI_SEED, .name = "--seed", .meta = "N", .field = &c->seed,
         .help = "seed of the model, the batches, the chains and the pictures"});
    snprintf(text[t], sizeof text[t], "examples/out/%s", method_flag(c->method));
    ADD({.type = CLI_TEXT, .name = "--out", .meta = "DIR", .field = &c->out,
         .help = "output directory, created if missing", .dflt = text[t++]});
    ADD(CLI_I64("--checkpoint-every", "N", &c->checkpoint_every, 0, INT64_C(1) << 50,
                "write <out>/checkpoint.ckpt every N steps; 0: only at the end"));
    ADD(CLI_STR("--resume", "FILE", &c->resume,
                "continue from a checkpoint.ckpt written with the same settings"));
    ADD(CLI_I64("--log-every", "N", &c->log_every, 0, INT64_C(1) << 50,
                "a line of <out>/train.csv every N steps; 0: none"));
    ADD(CLI_I64("--sample-every", "N", &c->sample_every, 0, INT64_C(1) << 50,
                "<out>/samples.png every N steps; 0: only at the end"));
    ADD(CLI_HEAD("evaluation:"));
    ADD(CLI_I64("--samples", "N", &c->n_samples, 0, 4096, "images in samples.png"));
    ADD(CLI_I64("--mh-steps", "N", &c->mh_steps, 0, INT64_C(1) << 30,
                "MH steps after the local search, for samples"));
    ADD(CLI_I64("--completions", "N", &c->n_completions, 0, 4096,
                "test images in completion.png"));
    ADD(CLI_ONE_OF("--eval", &c->eval, eval_names, 0,
                   "final test log-likelihood: exact where enumeration is cheap, else AIS "
                   "(auto); always AIS; or none"));
    ADD(CLI_I64("--ais-chains", "N", &c->ais_chains, 2, INT64_C(1) << 24,
                "AIS runs (the final evaluation and --eval-every)"));
    ADD(CLI_I64("--ais-betas", "N", &c->ais_betas, 1, INT64_C(1) << 30,
                "AIS inverse temperatures of the final evaluation"));
    ADD(CLI_ONE_OF("--ais-base", &c->ais_base, ais_base_names, 0,
                   "AIS's start: independent uniform units, or visible units with the training "
                   "data's pixel means (Salakhutdinov and Murray 2008: far fewer temperatures "
                   "for sharp models; uniform where the visible units have no such base)"));
    ADD(CLI_I64("--ais-check", "N", &c->ais_check, 0, 1000,
                "the AIS bias check: a second AIS with N x --ais-betas temperatures beside "
                "the first (its own generator), and its verdict; 0: none"));
    ADD(CLI_I64("--ais-check-chains", "N", &c->ais_check_chains, 0, INT64_C(1) << 24,
                "its chains; 0: --ais-chains"));
    ADD(CLI_I64("--is-samples", "N", &c->is_samples, 0, INT64_C(1) << 30,
                "DBMs: importance samples per test row for the IS estimate of log p(v) beside "
                "the mean-field bound (ebm_model_log_likelihood_is); 0: none"));
    ADD(CLI_I64("--eval-every", "N", &c->eval_every, 0, INT64_C(1) << 50,
                "held-out log-likelihood every N steps into train.csv (column "
                "heldout_loglik_<method>); 0: none"));
    ADD(CLI_I64("--eval-rows", "N", &c->eval_rows, 0, INT64_C(1) << 40,
                "--eval-every: the first N test images; 0: all"));
    ADD(CLI_I64("--eval-betas", "N", &c->eval_betas, 1, INT64_C(1) << 30,
                "--eval-every: AIS inverse temperatures, where AIS is needed"));
#undef ADD
    return n;
}

/* @return 0, 1 for --help, 2 for a bad option */
static int parse_options(trainer_config *c, int argc, char **argv)
{
    cli_spec specs[MAX_SPECS];
    char text[4][256];
    char about[512];
    snprintf(about, sizeof about,
             "  Train an RBM or DBM by %s on binarised images (docs/demo.md).\n%s"
             "  Each option: what it sets (the values it accepts, its default).\n",
             c->title,
             c->comm != NULL
                 ? "  On MPI ranks (docs/distributed.md); --estimator ucd|ucd-lmi|pcd|cd\n"
                   "  (default ucd) picks the estimator; --batch is the global batch.\n"
                 : "");
    const cli_program p = {c->prog, "[options]", about, specs, option_specs(c, specs, text),
                           "--eval-every: exact where log Z enumerates at most 2^20 states,\n"
                           "else AIS, about --ais-chains x --eval-betas Gibbs sweeps per\n"
                           "evaluation; its time is not training time, and it never changes\n"
                           "training.\n"
                           "SIGINT or SIGTERM: the step in progress ends, the checkpoint and\n"
                           "model.ebm are written, and the exit status is 130 or 143.\n"
                           "man ebm-train-* has the outputs and the exit statuses.\n",
                           NULL, NULL};
    const int rc = cli_parse(&p, argc, argv);
    if (rc != 0) {
        return rc == 1 ? 1 : 2;
    }
    if (c->schedule == OPTIM_COSINE && c->steps == 0) {
        complain(c, "--schedule cosine needs --steps (the length of the decay)");
        return 2;
    }
    if (c->steps == 0 && c->minutes == 0.0) {
        complain(c, "give --steps or --minutes (or both)");
        return 2;
    }
    if (c->eval_every > 0 && c->eval == TRAINER_EVAL_NONE) {
        complain(c, "--eval-every needs --eval auto or ais (it uses the same method)");
        return 2;
    }
    if (c->hidden == TRAINER_HIDDEN_DRELU && c->centre) {
        complain(c, "--centre data with --hidden drelu: dReLU units have no offsets");
        return 2;
    }
    if (c->units == TRAINER_POTTS && c->binarize != DATA_LEVELS) {
        complain(c, "--units potts needs --binarize levels (a site of --levels one-hot "
                    "units per pixel), not --binarize %s", binarize_names[c->binarize]);
        return 2;
    }
    if (c->centre && c->average_from >= 0) {
        complain(c, "--centre data with --average-from: an average of parameters centred on "
                    "moving offsets is not a model; give one of them");
        return 2;
    }
    if (c->centre && c->comm != NULL) {
        complain(c, "--centre data is not supported in distributed runs yet");
        return 2;
    }
    if (c->ais_check_chains == 1) {
        complain(c, "--ais-check-chains 1: AIS needs at least 2 chains (0: --ais-chains)");
        return 2;
    }
    if (c->ais_check > 0 && c->ais_betas > (INT64_C(1) << 30) / c->ais_check) {
        complain(c, "--ais-check %lld x --ais-betas %lld is more than 2^30 temperatures",
                 (long long)c->ais_check, (long long)c->ais_betas);
        return 2;
    }
    return 0;
}
/* The settings of a run, as stored in its checkpoints: first those a resumed
 * run must share (they fix the model, the data and the optimiser's state),
 * then, after " | ", those it may change (with a warning), e.g. a --cap
 * added to rescue a run whose coupling does not meet. */
static int config_text(const run *r, char *buf, size_t size)
{
    const trainer_config *c = r->c;
    char levels[32] = "";
    if (c->binarize == DATA_LEVELS) {
        snprintf(levels, sizeof levels, " levels=%d", c->levels);
    }
    const char *hidden = c->hidden == TRAINER_HIDDEN_DRELU ? " hidden=drelu" : "";
    int at = snprintf(buf, size,
                      "method=%s data=%s bas_side=%d train_rows=%lld binarize=%s%s units=%s%s "
                      "layers=",
                      method_flag(c->method), data_names[c->data], c->bas_side,
                      (long long)c->train_rows, binarize_names[c->binarize], levels,
                      units_names[c->units], hidden);
    for (int l = 0; l < c->n_layers && at > 0 && (size_t)at < size; l++) {
        at += snprintf(buf + at, size - (size_t)at, "%s%lld", l ? "," : "", (long long)c->layers[l]);
    }
    /* A distributed run's shards, and a PT run's ladder, fix its results:
     * settings it must keep. At most 25 characters a beta. */
    char shards[48 + 26 * TRAINER_MAX_BETAS] = "";
    size_t sat = 0;
    if (c->comm != NULL) {
        sat += (size_t)snprintf(shards, sizeof shards, " shards=%lld", (long long)c->shards);
    }
    for (int k = 0; k < c->n_ladder && sat < sizeof shards; k++) {
        sat += (size_t)snprintf(shards + sat, sizeof shards - sat, "%s%.17g",
                                k ? "," : " ladder=", c->ladder[k]);
    }
    int tail = -1;
    if (at > 0 && (size_t)at < size && sat < sizeof shards) {
        char centre[64] = "";
    if (c->centre) {
        snprintf(centre, sizeof centre, " centre=data offset_rate=%.17g", c->offset_rate);
    }
    tail = snprintf(buf + at, size - (size_t)at,
                 " optimizer=%s momentum=%s batch=%lld chains=%lld seed=%llu%s%s%s | lr=%.17g "
                 "schedule=%s gamma=%.17g clip=%.17g k=%lld cap=%lld marginalize=%d "
                 "positive=%d search_sweeps=%lld",
                 optimizer_names[c->optimizer], c->momentum > 0 ? "on" : "off",
                 (long long)c->batch, (long long)c->chains, (unsigned long long)c->seed,
                 c->schedule == OPTIM_COSINE ? " cosine" : "", centre, shards, c->lr,
                 schedule_names[c->schedule],
                 c->gamma, c->clip, (long long)c->k, (long long)c->cap, c->marginalize,
                 c->positive, (long long)c->search_sweeps);
    }
    /* a cut text would let a resume change what it must keep */
    return tail >= 0 && (size_t)tail < size - (size_t)at
               ? 0
               : complain(c, "internal: the settings text does not fit in %zu bytes", size);
}

/* ------------------------------------------------------------------------ */
/* Set-up                                                                   */
/* ------------------------------------------------------------------------ */

static int load_data(run *r)
{
    trainer_config *c = r->c;
    char err[ERR_SIZE] = "";
    int rc;
    if (c->data == TRAINER_FASHION) {
        rc = data_load_fashion_mnist(&r->train, &r->test, c->data_dir, err, sizeof err);
    } else if (c->data == TRAINER_MNIST) {
        rc = data_load_mnist_json(&r->train, &r->test, c->data_dir, err, sizeof err);
    } else if (c->data == TRAINER_DIGITS) {
        /* --data-dir names the directory of digits.csv.gz. */
        char path[4200];
        if (c->data_dir != NULL) {
            snprintf(path, sizeof path, "%s/digits.csv.gz", c->data_dir);
        }
        rc = data_load_digits_csv(&r->train, &r->test, c->data_dir != NULL ? path : NULL, err,
                                  sizeof err);
    } else {
        /* Bars-and-stripes has no held-out images: train and test are the same rows. */
        rc = data_load_bas(&r->train, c->bas_side, err, sizeof err);
        if (rc == DATA_OK) {
            rc = data_load_bas(&r->test, c->bas_side, err, sizeof err);
        }
    }
    if (rc != DATA_OK) {
        return complain(c, "%s: %s", data_strerror(rc), err);
    }
    if (c->train_rows > 0 && c->train_rows < r->train.n) {
        r->train.n = c->train_rows;
    }
    if (c->test_rows > 0 && c->test_rows < r->test.n) {
        r->test.n = c->test_rows;
    }
    r->enc = data_encoding_make(c->binarize, c->units == TRAINER_SPIN);
    r->enc.levels = c->levels;
    r->dim = data_encoded_dim(&r->enc, r->train.dim);
    return 0;
}

/* An untrained model of the configuration's layers and units; err names
 * the function that failed. */
static int new_model(const trainer_config *c, ebm_model_t **out, char *err, size_t size)
{
    char why[ERR_SIZE] = "";
    const int hidden = c->hidden == TRAINER_HIDDEN_DRELU ? EBM_UNITS_DRELU
                       : c->units == TRAINER_POTTS       ? EBM_UNITS_BINARY
                                                         : c->units;
    const int rc =
        c->units == TRAINER_POTTS
            ? ebm_model_create_potts(out, c->n_layers, c->layers, c->levels, hidden, why,
                                     sizeof why)
            : ebm_model_create(out, c->n_layers, c->layers, c->units, hidden, why, sizeof why);
    if (rc != EBM_OK) {
        snprintf(err, size, "%s: %s",
                 c->units == TRAINER_POTTS ? "ebm_model_create_potts" : "ebm_model_create", why);
    }
    return rc;
}

static int build_model(run *r)
{
    trainer_config *c = r->c;
    char err[ERR_SIZE] = "";
    if (c->n_layers == 0) {
        c->layers[0] = r->dim;
        if (c->method == EBM_ESTIMATOR_UCD) {
            c->layers[1] = c->data == TRAINER_BAS || c->data == TRAINER_DIGITS ? r->dim : 1000;
            c->n_layers = 2;
        } else {
            c->layers[1] = c->layers[2] = r->dim; /* Taniguchi appendix C: n_h = n_v */
            c->n_layers = 3;
        }
    }
    if (c->layers[0] != r->dim) {
        return complain(c, "--layers starts with %lld, but the %s images have %lld visible "
                        "units after --binarize %s", (long long)c->layers[0], data_names[c->data],
                        (long long)r->dim, binarize_names[c->binarize]);
    }
    int rc = new_model(c, &r->m, err, sizeof err);
    if (rc != EBM_OK) {
        return complain(c, "%s", err);
    }
    ebm_rng_t *init_rng;
    if ((rc = ebm_rng_create(&init_rng, c->seed, 0)) != EBM_OK) {
        return complain(c, "ebm_rng_create: %s", ebm_strerror(rc));
    }
    rc = ebm_model_init(r->m, init_rng, c->init, c->init_scale);
    ebm_rng_destroy(init_rng);
    if (rc != EBM_OK) {
        return complain(c, "ebm_model_init: %s", ebm_model_errmsg(r->m));
    }
    r->width = ebm_model_state_width(r->m);
    r->n_params = ebm_model_param_count(r->m);
    if (c->average_from >= 0 && (rc = new_model(c, &r->m_avg, err, sizeof err)) != EBM_OK) {
        return complain(c, "%s (--average-from)", err);
    }
    if ((rc = ebm_rng_create(&r->rng, c->seed, 1)) != EBM_OK) {
        return complain(c, "ebm_rng_create: %s", ebm_strerror(rc));
    }
    return 0;
}

static int set_option(run *r, ebm_estimator_t *e, int option, int64_t value, const char *name)
{
    const int rc = ebm_estimator_set_int(e, option, value);
    if (rc != EBM_OK) {
        return complain(r->c, "%s: %s", name, ebm_estimator_errmsg(e));
    }
    return 0;
}

/* A new estimator with the run's options, or NULL after a message. */
static ebm_estimator_t *new_estimator(run *r)
{
    trainer_config *c = r->c;
    ebm_estimator_t *e = NULL;
    int rc = ebm_estimator_create(&e, r->m, c->method);
    if (rc != EBM_OK) {
        complain(c, "ebm_estimator_create: %s", ebm_model_errmsg(r->m));
        return NULL;
    }
    if ((c->k >= 0 && set_option(r, e, EBM_ESTIMATOR_K, c->k, "--k")) ||
        (c->cap > 0 && set_option(r, e, EBM_ESTIMATOR_MAX_STEPS, c->cap, "--cap")) ||
        (c->marginalize >= 0 &&
         set_option(r, e, EBM_ESTIMATOR_MARGINALIZE, c->marginalize, "--marginalize")) ||
        set_option(r, e, EBM_ESTIMATOR_POSITIVE, c->positive, "--positive") ||
        (c->method == EBM_ESTIMATOR_UCD_LMI &&
         set_option(r, e, EBM_ESTIMATOR_SEARCH_SWEEPS, c->search_sweeps, "--search-sweeps")) ||
        (c->method == EBM_ESTIMATOR_PT &&
         ebm_estimator_set_ladder(e, c->n_ladder, c->ladder) != EBM_OK &&
         complain(c, "--ladder: %s", ebm_estimator_errmsg(e))) ||
        (persistent_method(c->method) &&
         set_option(r, e, EBM_ESTIMATOR_CHAINS, c->chains > 0 ? c->chains : c->batch,
                    "--chains"))) {
        ebm_estimator_destroy(e);
        return NULL;
    }
    return e;
}

/* Distributed: this rank's shards (dist.h), each an estimator of its own. */
static int build_shards(run *r)
{
    trainer_config *c = r->c;
    char err[ERR_SIZE];
    const int64_t chains =
        persistent_method(c->method) ? (c->chains > 0 ? c->chains : c->batch) : 0;
    const int64_t replicas = c->method == EBM_ESTIMATOR_PT ? c->n_ladder : 1;
    if (dist_init(&r->dist, c->comm, c->shards, c->batch, chains, replicas, r->n_params, r->width,
                  err, sizeof err) != 0) {
        return complain(c, "%s", err);
    }
    for (int64_t i = 0; i < r->dist.hi - r->dist.lo; i++) {
        if ((r->dist.e[i] = new_estimator(r)) == NULL) {
            return 1;
        }
        if (dist_configure(&r->dist, i, r->dist.e[i]) != EBM_OK) {
            return complain(c, "shard %lld: %s", (long long)(r->dist.lo + i),
                            ebm_estimator_errmsg(r->dist.e[i]));
        }
    }
    return 0;
}

static int build_estimator(run *r)
{
    trainer_config *c = r->c;
    if ((r->e = new_estimator(r)) == NULL || (c->comm != NULL && build_shards(r))) {
        return 1;
    }
    optim_settings s = optim_settings_default(c->lr);
    s.kind = c->optimizer;
    s.schedule = c->schedule;
    s.gamma = c->gamma;
    s.total_steps = c->steps > 0 ? c->steps : 1;
    s.momentum = c->momentum;
    s.clip_norm = c->clip;
    const char *why = optim_settings_check(&s);
    if (why != NULL) {
        return complain(c, "optimiser: %s", why);
    }
    if (optim_init(&r->opt, &s, r->n_params) != OPTIM_OK) {
        return complain(c, "optimiser: out of memory");
    }
    if (optim_average_init(&r->avg, r->n_params, c->average_from) != OPTIM_OK) {
        return complain(c, "--average-from: out of memory");
    }
    r->batch = malloc((size_t)(c->batch * r->dim) * sizeof *r->batch);
    r->grad = malloc((size_t)r->n_params * sizeof *r->grad);
    r->rows = malloc((size_t)c->batch * sizeof *r->rows);
    if (r->batch == NULL || r->grad == NULL || r->rows == NULL) {
        return complain(c, "out of memory for a batch of %lld", (long long)c->batch);
    }
    return 0;
}

static int resume(run *r)
{
    trainer_config *c = r->c;
    char err[ERR_SIZE] = "";
    checkpoint ck;
    int rc = checkpoint_load(&ck, c->resume, err, sizeof err);
    if (rc != CHECKPOINT_OK) {
        return complain(c, "--resume: %s", err);
    }
    const char *tunable = checkpoint_config_tunable(&ck, r->config_text);
    if (tunable == NULL) {
        complain(c, "--resume: %s was written with other settings:\n  it has:  %s\n  now:     %s",
                 c->resume, ck.config != NULL ? ck.config : "(none)", r->config_text);
        checkpoint_free(&ck);
        return 1;
    }
    /* config_text always holds " | " */
    const char *now_tunable = strstr(r->config_text, " | ") + 3;
    if (strcmp(tunable, now_tunable) != 0 && r->root) {
        fprintf(stderr, "%s: note: resuming with other tunable settings\n  it had:  %s\n  now:     %s\n",
                c->prog, tunable, now_tunable);
    }
    rc = checkpoint_restore(&ck, r->m, r->rng, &r->opt, &r->avg, r->e, err, sizeof err);
    if (rc == CHECKPOINT_OK && c->comm != NULL &&
        dist_scatter_chains(&r->dist, r->e, err, sizeof err) != 0) {
        rc = CHECKPOINT_EFORMAT;
    }
    if (rc == CHECKPOINT_OK) {
        r->step = ck.iteration;
        r->seconds_before = ck.seconds;
        if (r->root) {
            fprintf(stderr, "%s: resumed from %s at step %lld (%.1f s of training)\n", c->prog,
                    c->resume, (long long)r->step, r->seconds_before);
        }
    }
    checkpoint_free(&ck);
    return rc == CHECKPOINT_OK ? 0 : complain(c, "--resume: %s", err);
}

/* ------------------------------------------------------------------------ */
/* Pictures                                                                 */
/* ------------------------------------------------------------------------ */

/* Tile n grey images (rows of grey, stride ld) into cols columns, each pixel
 * a square of PICTURE_SCALE or more pixels, so that an image is at least
 * IMAGE_MIN_SIDE pixels on a side (4 x 4 bars-and-stripes: 7; 8 x 8 digits:
 * 4), and write a PNG. */
static int write_grid(const run *r, const char *path, const float *grey, int64_t n, int64_t ld,
                      int cols)
{
    uint8_t *tile = NULL;
    int w, h;
    const int scale =
        image_scale_for(r->train.height, r->train.width, IMAGE_MIN_SIDE, PICTURE_SCALE);
    int rc = image_tile_scaled(&tile, &w, &h, grey, n, ld, r->train.height, r->train.width, cols,
                               scale > PICTURE_SCALE ? 2 : 1, scale, 0.0f, 1.0f);
    if (rc == IMAGE_OK) {
        rc = image_png_write(path, w, h, 1, tile, (size_t)w);
    }
    free(tile);
    if (rc != IMAGE_OK) {
        return complain(r->c, "%s: %s", path, image_strerror(rc));
    }
    return 0;
}

/* The local search moves binary and spin units only (not Potts sites, not
 * dReLU units). */
static int can_search(const trainer_config *c)
{
    return c->units != TRAINER_POTTS && c->hidden != TRAINER_HIDDEN_DRELU;
}

/* Visible layers of n states (stride width) to grey rows (stride pixels). */
static void visible_to_grey(const run *r, int64_t n, const float *x, float *grey)
{
    data_decode(&r->enc, n, r->train.dim, x, r->width, grey, r->train.dim);
}

/*
 * Samples as Taniguchi et al. section 4.4 draws them: uniform random states,
 * the local search to a local minimum of E, then a few MH_UNIFORM steps, and
 * the visible layer; for Potts sites, which neither supports,
 * POTTS_SAMPLE_SWEEPS Gibbs sweeps from the uniform states. Its own stream
 * (seed, 3 + step): pictures never move the training generator. *accept
 * receives the MH acceptance rate (NaN without MH steps).
 */
static int write_samples(const run *r, const ebm_model_t *m, const char *path, int64_t step,
                         double *accept, double *sweeps_mean)
{
    const trainer_config *c = r->c;
    const int64_t n = c->n_samples;
    if (n < 1) {
        return 0;
    }
    float *x = malloc((size_t)(n * r->width) * sizeof *x);
    float *grey = malloc((size_t)(n * r->train.dim) * sizeof *grey);
    int64_t *sweeps = malloc((size_t)n * sizeof *sweeps);
    ebm_rng_t *rng = NULL;
    ebm_sampler_t *s = NULL;
    int rc = x && grey && sweeps ? ebm_rng_create(&rng, c->seed, 3 + (uint64_t)step) : EBM_ENOMEM;
    if (rc == EBM_OK) {
        rc = ebm_model_random_state(m, rng, n, x, r->width, NULL, 0);
    }
    const int gibbs = !can_search(c);
    if (rc == EBM_OK && !gibbs) {
        rc = ebm_model_local_search(m, rng, n, x, r->width, NULL, 0, c->search_sweeps, sweeps);
        rc = rc > 0 ? EBM_OK : rc; /* rows stopped by the cap are still pictures */
    }
    double acc_sum = 0.0;
    if (rc == EBM_OK && gibbs) {
        rc = ebm_sampler_create(&s, m, EBM_SAMPLER_GIBBS);
        for (int64_t t = 0; rc == EBM_OK && t < GIBBS_SAMPLE_SWEEPS; t++) {
            rc = ebm_sampler_step(s, rng, n, x, r->width);
        }
        for (int64_t i = 0; i < n; i++) {
            sweeps[i] = GIBBS_SAMPLE_SWEEPS;
        }
    } else if (rc == EBM_OK && c->mh_steps > 0) {
        rc = ebm_sampler_create(&s, m, EBM_SAMPLER_MH_UNIFORM);
        for (int64_t t = 0; rc == EBM_OK && t < c->mh_steps; t++) {
            rc = ebm_sampler_step(s, rng, n, x, r->width);
            acc_sum += ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
        }
    }
    if (rc != EBM_OK) {
        complain(c, "samples: %s (%s)", ebm_error_name(rc),
                 s != NULL ? ebm_sampler_errmsg(s) : ebm_model_errmsg(m));
    } else {
        double sw = 0.0;
        for (int64_t i = 0; i < n; i++) {
            sw += (double)sweeps[i];
        }
        *sweeps_mean = sw / (double)n;
        *accept = c->mh_steps > 0 && !gibbs ? acc_sum / (double)c->mh_steps : NAN;
        visible_to_grey(r, n, x, grey);
        const int cols = (int)ceil(sqrt((double)n));
        rc = write_grid(r, path, grey, n, r->train.dim, cols);
    }
    ebm_sampler_destroy(s);
    ebm_rng_destroy(rng);
    free(sweeps);
    free(grey);
    free(x);
    return rc != 0;
}

/*
 * Image completion (Taniguchi Fig. 3, there with the lower half masked): the
 * top half of each test image is clamped, the rest of the state starts
 * uniform and the local search finds a low-energy completion. Rows of the
 * picture: the images as the model sees them (binarised), the masked
 * inputs (hidden part dark grey), the completions.
 */
/* A dReLU RBM's completion (no local search, no mean field): the layers'
 * conditional modes in turn, h given v, then the free visible units given
 * h, COMPLETION_MODE_ROUNDS times: a local minimum of E with the shown
 * pixels fixed. */
static int complete_by_modes(const run *r, const ebm_model_t *m, int64_t n, float *x,
                             const uint8_t *clamp)
{
    const int64_t w = r->width, d = r->dim;
    float *v = malloc((size_t)(n * d) * sizeof *v); /* the shown pixels, kept */
    int rc = v != NULL ? EBM_OK : EBM_ENOMEM;
    for (int64_t i = 0; rc == EBM_OK && i < n; i++) {
        memcpy(v + i * d, x + i * w, (size_t)d * sizeof *v);
    }
    for (int t = 0; rc == EBM_OK && t < COMPLETION_MODE_ROUNDS; t++) {
        rc = ebm_model_layer_argmin(m, 1, n, x, w);
        if (rc == EBM_OK) {
            rc = ebm_model_layer_argmin(m, 0, n, x, w);
        }
        for (int64_t i = 0; rc == EBM_OK && i < n; i++) {
            for (int64_t j = 0; j < d; j++) {
                x[i * w + j] = clamp[j] ? v[i * d + j] : x[i * w + j];
            }
        }
    }
    free(v);
    return rc;
}

static int write_completions(const run *r, const ebm_model_t *m, const char *path)
{
    const trainer_config *c = r->c;
    const int64_t n = c->n_completions < r->test.n ? c->n_completions : r->test.n;
    if (n < 1) {
        return 0;
    }
    const int64_t pixels = r->train.dim, shown = (int64_t)(r->train.height / 2) * r->train.width;
    const int64_t per_pixel = r->dim / pixels;
    float *x = calloc((size_t)(n * r->width), sizeof *x);
    float *grey = malloc((size_t)(3 * n * pixels) * sizeof *grey);
    uint8_t *clamp = calloc((size_t)r->width, 1);
    ebm_rng_t *rng = NULL;
    char err[ERR_SIZE] = "";
    int rc = x && grey && clamp ? ebm_rng_create(&rng, c->seed, 4) : EBM_ENOMEM;
    if (rc != EBM_OK) {
        free(x), free(grey), free(clamp);
        return complain(c, "completion: out of memory");
    }
    memset(clamp, 1, (size_t)(shown * per_pixel));
    rc = data_batch(&r->test, &r->enc, rng, NULL, n, x, r->width, err, sizeof err);
    if (rc == DATA_OK) {
        visible_to_grey(r, n, x, grey);                  /* row 1: the data */
        memcpy(grey + n * pixels, grey, (size_t)(n * pixels) * sizeof *grey);
        for (int64_t i = 0; i < n; i++) {                /* row 2: masked */
            for (int64_t p = shown; p < pixels; p++) {
                grey[(n + i) * pixels + p] = 0.3f;
            }
        }
        rc = ebm_model_random_state(m, rng, n, x, r->width, clamp, 0);
        if (rc == EBM_OK && c->hidden == TRAINER_HIDDEN_DRELU) {
            rc = complete_by_modes(r, m, n, x, clamp);
        } else if (rc == EBM_OK && c->units == TRAINER_POTTS) {
            /* Potts sites: the mean-field posterior's expected levels. */
            rc = ebm_model_mean_field(m, n, x, r->width, clamp, 0, 200, 1e-5);
            rc = rc > 0 ? EBM_OK : rc;
        } else if (rc == EBM_OK) {
            rc = ebm_model_local_search(m, rng, n, x, r->width, clamp, 0, c->search_sweeps,
                                        NULL);
            rc = rc > 0 ? EBM_OK : rc;
        }
        if (rc != EBM_OK) {
            snprintf(err, sizeof err, "%s", ebm_model_errmsg(m));
        } else {
            visible_to_grey(r, n, x, grey + 2 * n * pixels); /* row 3: completed */
        }
    }
    ebm_rng_destroy(rng);
    free(clamp);
    free(x);
    if (rc != 0) {
        free(grey);
        return complain(c, "completion: %s", err);
    }
    rc = write_grid(r, path, grey, 3 * n, pixels, (int)n);
    free(grey);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Training                                                                 */
/* ------------------------------------------------------------------------ */

/* The model evaluated, drawn and saved as model.ebm: once the average of
 * the iterates holds one (--average-from), m_avg set to it; else the last
 * iterate. NULL after a message if the average cannot be set. */
static const ebm_model_t *shown_model(run *r)
{
    if (r->avg.count == 0) {
        return r->m;
    }
    const int rc = optim_average_apply(&r->avg, r->m_avg);
    if (rc != EBM_OK) {
        complain(r->c, "--average-from: the average: %s (%s)", ebm_error_name(rc),
                 ebm_model_errmsg(r->m_avg));
        return NULL;
    }
    return r->m_avg;
}

/* model.ebm (shown_model) and, with --average-from, model_raw.ebm: the last
 * iterate. */
static int save_models(run *r)
{
    char path[4200];
    const ebm_model_t *m = shown_model(r);
    if (m == NULL) {
        return 1;
    }
    snprintf(path, sizeof path, "%s/model.ebm", r->c->out);
    if (ebm_model_save(m, path) != EBM_OK) {
        return complain(r->c, "%s: %s", path, ebm_model_errmsg(m));
    }
    snprintf(path, sizeof path, "%s/model_raw.ebm", r->c->out);
    if (optim_average_on(&r->avg) && ebm_model_save(r->m, path) != EBM_OK) {
        return complain(r->c, "%s: %s", path, ebm_model_errmsg(r->m));
    }
    return 0;
}

/* Distributed, every rank calls it: the shards' chains are gathered into
 * r->e first, and rank 0 writes. */
static int save_checkpoint(run *r, double seconds)
{
    char path[4200], err[ERR_SIZE] = "";
    if (r->c->comm != NULL && dist_gather_chains(&r->dist, r->e, err, sizeof err) != 0) {
        return complain(r->c, "checkpoint: %s", err);
    }
    if (!r->root) {
        return 0;
    }
    snprintf(path, sizeof path, "%s/checkpoint.ckpt", r->c->out);
    const int rc = checkpoint_save(path, r->m, r->rng, &r->opt, &r->avg, r->e, r->step, seconds,
                                   r->config_text, err, sizeof err);
    return rc == CHECKPOINT_OK ? 0 : complain(r->c, "checkpoint: %s", err);
}

/* train.csv: appended to when resuming (an existing file must have the
 * same columns; rows after the checkpoint's step are cut), else written
 * anew. The held-out columns come last, and those of the average after
 * them, so the others keep their places with or without --eval-every and
 * --average-from. */
static int open_csv(run *r)
{
    char path[4200], header[1024], averaged[256] = "", err[ERR_SIZE];
    snprintf(path, sizeof path, "%s/train.csv", r->c->out);
    const char *is = r->heldout_is ? ",heldout_loglik_is" : "";
    if (r->heldout_column != NULL && optim_average_on(&r->avg)) {
        snprintf(averaged, sizeof averaged, ",%s_avg,heldout_log_z_avg,heldout_seconds_avg%s",
                 r->heldout_column, r->heldout_is ? ",heldout_loglik_is_avg" : "");
    }
    snprintf(header, sizeof header,
             "step,seconds,lr,grad_norm,tau_mean,tau_max,positive_tau_mean,positive_tau_max,"
             "capped,sweeps_mean,search_capped,accept_rate,mean_field_missed%s%s%s%s%s%s\n",
             r->c->method == EBM_ESTIMATOR_PT ? ",swap_rate" : "",
             r->heldout_column != NULL ? "," : "",
             r->heldout_column != NULL ? r->heldout_column : "",
             r->heldout_column != NULL ? ",heldout_log_z,heldout_seconds" : "", is, averaged);
    if (cli_open_log(&r->csv, path, header, r->c->resume != NULL ? r->step : -1,
                     " (another --eval-every, --average-from or --is-samples?)", err,
                     sizeof err) != 0) {
        return complain(r->c, "%s", err);
    }
    return 0;
}

/* Statistics averaged between two progress lines. */
typedef struct window {
    int64_t steps;
    double tau, tau_max, ptau, sweeps, accept, capped, mf_missed, swap;
} window;

/* PT: add the last step's exchanges, pair by pair. */
static void record_swaps(run *r)
{
    int64_t acc[TRAINER_MAX_BETAS], prop[TRAINER_MAX_BETAS];
    const int pairs = r->c->n_ladder - 1;
    if (r->c->comm != NULL) { /* all shards' (dist_gradient) */
        memcpy(acc, r->dist.swap_accepted, (size_t)pairs * sizeof *acc);
        memcpy(prop, r->dist.swap_proposed, (size_t)pairs * sizeof *prop);
    } else if (ebm_estimator_swap_counts(r->e, pairs, acc, prop) != EBM_OK) {
        return;
    }
    for (int k = 0; k < pairs; k++) {
        r->swap_accepted[k] += (double)acc[k];
        r->swap_proposed[k] += (double)prop[k];
    }
}

static double stat(const run *r, int s)
{
    return r->c->comm != NULL ? r->dist.stat[s] : ebm_estimator_stat(r->e, s);
}

static void progress(const run *r, const window *w, double seconds, int64_t steps_here,
                     double seconds_here)
{
    const trainer_config *c = r->c;
    char eta[32] = "?", stats[256] = "";
    const double rate = seconds_here > 0 ? (double)steps_here / seconds_here : NAN;
    double left = INFINITY;
    if (c->steps > 0) {
        left = (double)(c->steps - r->step) / rate;
    }
    if (c->minutes > 0 && c->minutes * 60.0 - seconds < left) {
        left = c->minutes * 60.0 - seconds;
    }
    cli_format_duration(left < 0 ? 0 : left, eta, sizeof eta);
    const double n = w->steps > 0 ? (double)w->steps : 1.0;
    if (c->method == EBM_ESTIMATOR_PT) {
        snprintf(stats, sizeof stats, "swap rate %.3f  mean-field rows missed %.1f",
                 w->swap / n, w->mf_missed / n);
    } else if (c->method == EBM_ESTIMATOR_PCD) {
        snprintf(stats, sizeof stats, "mean-field rows missed %.1f", w->mf_missed / n);
    } else {
        snprintf(stats, sizeof stats, "tau %.2f (max %.0f, positive %.2f)  sweeps %.1f  accept %.3f%s",
                 w->tau / n, w->tau_max, w->ptau / n, w->sweeps / n, w->accept / n,
                 w->capped > 0 ? "  CAPPED" : "");
    }
    char total[32];
    if (c->steps > 0) {
        snprintf(total, sizeof total, "%lld", (long long)c->steps);
    } else {
        snprintf(total, sizeof total, "-");
    }
    fprintf(stderr, "%s step %lld/%s  %.2f steps/s  ETA %s  %s  |g| %.3g  lr %.3g\n",
            method_flag(c->method), (long long)r->step, total, rate, eta, stats,
            r->opt.last_norm, optim_rate(&r->opt));
}

static int centre_step(run *r);
static int heldout_evaluate(run *r, const ebm_model_t *m, int64_t step, double *ll,
                            double *log_z, double *log_z_se, double *is_mean);

/* After a failure in training (the message is out): alone, 1: stop;
 * distributed, 0: carry on to the next step's agreement, which stops every
 * rank with this one's message. */
static int rank_failed(run *r)
{
    if (r->c->comm == NULL) {
        return 1;
    }
    r->failed = 1;
    return 0;
}

static int train(run *r, double *seconds_out)
{
    trainer_config *c = r->c;
    char err[ERR_SIZE] = "", path[4200];
    const double t0 = cli_now();
    const int64_t step0 = r->step;
    double last_print = -INFINITY, seconds = r->seconds_before;
    window w;
    memset(&w, 0, sizeof w);
    for (;;) {
        seconds = r->seconds_before + (cli_now() - t0 - r->heldout_seconds);
        int done = (c->steps > 0 && r->step >= c->steps) ||
                   (c->minutes > 0 && seconds >= c->minutes * 60.0);
        /* SIGINT or SIGTERM (cli_catch_stop_signals): stop between steps; the
         * caller writes the checkpoint and the model. */
        int sig = cli_stop_signal();
        if (c->comm != NULL) {
            /* A rank that failed in the last step stops all; then rank 0's
             * clock decides, and any rank's signal stops all. */
            if (any_failed(c, r->failed)) {
                return 1;
            }
            double v[2] = {r->root ? done : 0, sig};
            if (c->comm->max_f64(c->comm->ctx, v, 2) != 0) {
                return complain(c, "step %lld: the transport failed", (long long)r->step + 1);
            }
            done = v[0] != 0.0;
            sig = (int)v[1];
        }
        if (done) {
            break;
        }
        if ((r->stopped_by = sig) != 0) {
            break;
        }
        int rc = data_draw_rows(r->rows, c->batch, r->train.n, r->rng);
        if (rc == DATA_OK) {
            rc = data_batch(&r->train, &r->enc, r->rng, r->rows, c->batch, r->batch, r->dim, err,
                            sizeof err);
        }
        if (rc != DATA_OK) {
            complain(c, "batch: %s %s", data_strerror(rc), err);
            if (c->comm == NULL) {
                return 1;
            }
        }
        if (rc == DATA_OK && c->centre && centre_step(r) != 0) {
            return 1;
        }
        if (c->comm != NULL) {
            /* Every rank fails together, with the failing rank's message. */
            if (dist_gradient(&r->dist, r->rng, r->batch, r->dim, r->grad, rc != DATA_OK, err,
                              sizeof err) != 0) {
                return r->root && rc == DATA_OK
                           ? complain(c, "step %lld: %s", (long long)r->step + 1, err)
                           : 1;
            }
        } else if ((rc = ebm_estimator_gradient(r->e, r->rng, c->batch, r->batch, r->dim,
                                                r->grad)) != EBM_OK) {
            return complain(c, "step %lld: ebm_estimator_gradient: %s", (long long)r->step + 1,
                            ebm_estimator_errmsg(r->e));
        }
        const double lr = optim_rate(&r->opt);
        rc = optim_step(&r->opt, r->m, r->grad);
        if (rc != EBM_OK) {
            complain(c, "step %lld: update: %s", (long long)r->step + 1, ebm_model_errmsg(r->m));
            if (rank_failed(r)) {
                return 1;
            }
            continue; /* the next step's agreement stops every rank */
        }
        if ((rc = optim_average_update(&r->avg, r->m, r->opt.step)) != EBM_OK) {
            complain(c, "step %lld: --average-from: %s", (long long)r->step + 1,
                     ebm_error_name(rc));
            if (rank_failed(r)) {
                return 1;
            }
            continue;
        }
        r->step++;
        w.steps++;
        w.tau += stat(r, EBM_ESTIMATOR_STAT_TAU_MEAN);
        w.tau_max = fmax(w.tau_max, stat(r, EBM_ESTIMATOR_STAT_TAU_MAX));
        w.ptau += stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN);
        w.sweeps += stat(r, EBM_ESTIMATOR_STAT_SWEEPS_MEAN);
        w.accept += stat(r, EBM_ESTIMATOR_STAT_ACCEPT_RATE);
        w.capped += stat(r, EBM_ESTIMATOR_STAT_CAPPED);
        w.mf_missed += stat(r, EBM_ESTIMATOR_STAT_MEAN_FIELD_MISSED);
        if (c->method == EBM_ESTIMATOR_PT) {
            w.swap += stat(r, EBM_ESTIMATOR_STAT_SWAP_RATE);
            r->swap_sum += stat(r, EBM_ESTIMATOR_STAT_SWAP_RATE);
            record_swaps(r);
        }
        r->stat_steps++;
        r->tau_sum += stat(r, EBM_ESTIMATOR_STAT_TAU_MEAN);
        r->tau_max = fmax(r->tau_max, stat(r, EBM_ESTIMATOR_STAT_TAU_MAX));
        r->ptau_sum += stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN);
        r->ptau_max = fmax(r->ptau_max, stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX));
        r->capped += stat(r, EBM_ESTIMATOR_STAT_CAPPED);
        r->mh_accepted += stat(r, EBM_ESTIMATOR_STAT_MH_ACCEPTED);
        seconds = r->seconds_before + (cli_now() - t0 - r->heldout_seconds);
        /* The outputs are rank 0's; a failure there stops every rank at
         * the next step (rank_failed). */
        const int eval_now = r->root && c->eval_every > 0 && r->step % c->eval_every == 0;
        double heldout_ll = NAN, heldout_log_z = NAN, heldout_s = NAN, heldout_is = NAN;
        double heldout_se = NAN;
        /* the average's, once it has one */
        double avg_ll = NAN, avg_log_z = NAN, avg_s = NAN, avg_is = NAN, avg_se = NAN;
        if (eval_now) {
            const double te = cli_now();
            if (heldout_evaluate(r, r->m, r->step, &heldout_ll, &heldout_log_z, &heldout_se,
                                 &heldout_is) &&
                rank_failed(r)) {
                return 1;
            }
            heldout_s = cli_now() - te;
            if (r->avg.count > 0) {
                const ebm_model_t *m_avg = shown_model(r);
                if ((m_avg == NULL || heldout_evaluate(r, m_avg, r->step, &avg_ll, &avg_log_z,
                                                       &avg_se, &avg_is)) &&
                    rank_failed(r)) {
                    return 1;
                }
                avg_s = cli_now() - te - heldout_s;
            }
            r->heldout_seconds += cli_now() - te;
            /* the model the final evaluation sees, for heldout_check */
            r->heldout_last_step = r->step;
            r->heldout_last_log_z = r->avg.count > 0 ? avg_log_z : heldout_log_z;
            r->heldout_last_se = r->avg.count > 0 ? avg_se : heldout_se;
        }
        if (r->root && ((c->log_every > 0 && r->step % c->log_every == 0) || eval_now)) {
            fprintf(r->csv, "%lld,%.3f,%.6g,%.6g,%.4f,%.0f,%.4f,%.0f,%.0f,%.3f,%.0f,%.5f,%.0f",
                    (long long)r->step, seconds, lr, r->opt.last_norm,
                    stat(r, EBM_ESTIMATOR_STAT_TAU_MEAN), stat(r, EBM_ESTIMATOR_STAT_TAU_MAX),
                    stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN),
                    stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX),
                    stat(r, EBM_ESTIMATOR_STAT_CAPPED), stat(r, EBM_ESTIMATOR_STAT_SWEEPS_MEAN),
                    stat(r, EBM_ESTIMATOR_STAT_SEARCH_CAPPED),
                    stat(r, EBM_ESTIMATOR_STAT_ACCEPT_RATE),
                    stat(r, EBM_ESTIMATOR_STAT_MEAN_FIELD_MISSED));
            if (c->method == EBM_ESTIMATOR_PT) {
                fprintf(r->csv, ",%.5f", stat(r, EBM_ESTIMATOR_STAT_SWAP_RATE));
            }
            if (r->heldout_column != NULL) {
                fprintf(r->csv, ",%.6f,%.6f,%.3f", heldout_ll, heldout_log_z, heldout_s);
            }
            if (r->heldout_is) {
                fprintf(r->csv, ",%.6f", heldout_is);
            }
            if (r->heldout_column != NULL && optim_average_on(&r->avg)) {
                fprintf(r->csv, ",%.6f,%.6f,%.3f", avg_ll, avg_log_z, avg_s);
                if (r->heldout_is) {
                    fprintf(r->csv, ",%.6f", avg_is);
                }
            }
            fputc('\n', r->csv);
            fflush(r->csv);
        }
        const double now = cli_now();
        if (eval_now) {
            char is[64] = "", averaged[128] = "", avg_is_text[48] = "";
            if (r->heldout_is) {
                snprintf(is, sizeof is, ", IS estimate (K = %lld) %.4f",
                         (long long)c->is_samples, heldout_is);
                snprintf(avg_is_text, sizeof avg_is_text, ", IS %.4f", avg_is);
            }
            if (r->avg.count > 0) {
                snprintf(averaged, sizeof averaged, "; average of %lld iterates %.4f%s",
                         (long long)r->avg.count, avg_ll, avg_is_text);
            }
            fprintf(stderr, "%s step %lld: held-out %s = %.4f%s (%lld rows, %.2f s)%s\n",
                    method_flag(c->method), (long long)r->step, r->heldout_column, heldout_ll,
                    is, (long long)r->heldout_n, heldout_s, averaged);
        }
        if (r->root && (now - last_print >= 5.0 || r->step - step0 <= 3)) {
            progress(r, &w, seconds, r->step - step0, now - t0 - r->heldout_seconds);
            memset(&w, 0, sizeof w);
            last_print = now;
        }
        if (r->root && c->sample_every > 0 && r->step % c->sample_every == 0) {
            double acc, sw;
            const ebm_model_t *shown = shown_model(r);
            snprintf(path, sizeof path, "%s/samples.png", c->out);
            if ((shown == NULL || write_samples(r, shown, path, r->step, &acc, &sw)) &&
                rank_failed(r)) {
                return 1;
            }
        }
        if (c->checkpoint_every > 0 && r->step % c->checkpoint_every == 0 &&
            save_checkpoint(r, seconds) && rank_failed(r)) {
            return 1;
        }
    }
    *seconds_out = seconds;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Evaluation                                                               */
/* ------------------------------------------------------------------------ */

typedef struct result {
    double log_z, log_z_se;   /* AIS (NaN if not run) */
    double exact_log_z;       /* NaN if not computed */
    double ll_mean;           /* RBM: log p(v) with AIS or exact log Z; DBM: the bound */
    double exact_ll_mean;     /* exact log p(v) (NaN if not computed) */
    double ais_s, ll_s, exact_s;
    int is_bound;
    double is_ll_mean, is_s;  /* DBMs: the IS estimate with AIS log Z (NaN if not run) */
    double check_log_z, check_log_z_se, check_s; /* --ais-check (NaN if not run) */
    double base_ll_mean;      /* --ais-base data: the base's own log p (NaN if not run) */
} result;

static int64_t smaller_parity_class(const ebm_model_t *m, int hidden_only)
{
    int64_t even = 0, odd = 0;
    for (int64_t l = hidden_only ? 1 : 0; l < ebm_model_num_layers(m); l++) {
        /* A layer of Potts sites has q^sites states: sites log2 q bits; a
         * dReLU layer cannot be enumerated. */
        const int64_t q = ebm_model_layer_categories(m, l), size = ebm_model_layer_size(m, l);
        const int64_t bits = ebm_model_layer_units(m, l) == EBM_UNITS_DRELU ? INT64_C(1) << 40
                             : q > 1 ? (int64_t)ceil((double)(size / q) * log2((double)q))
                                     : size;
        if (l % 2 == 0) {
            even += bits;
        } else {
            odd += bits;
        }
    }
    if (hidden_only && ebm_model_num_layers(m) == 2) {
        return 0; /* an RBM's hidden layer is summed out */
    }
    return even < odd && even > 0 ? even : odd;
}

static double mean_of(const double *x, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s += x[i];
    }
    return s / (double)n;
}

/* The mean log-likelihood of n encoded rows under AIS's base alone
 * (--ais-base data): independent units, or independent Potts sites, with the
 * training data's frequencies: the yardstick of a model without weights. */
static double base_loglik(const run *r, int64_t n, const float *x)
{
    const int64_t d = r->dim, q = r->c->units == TRAINER_POTTS ? r->c->levels : 1;
    const int spin = r->c->units == TRAINER_SPIN;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float *xi = x + i * d;
        for (int64_t j = 0; j < d; j += q) {
            const float *b = r->ais_base + j;
            if (q == 1) { /* log sigmoid(+-logit) */
                const double logit = spin ? 2.0 * b[0] : b[0];
                const double z = xi[j] > (spin ? 0.0f : 0.5f) ? logit : -logit;
                sum -= z > 0.0 ? log1p(exp(-z)) : log1p(exp(z)) - z;
                continue;
            }
            double top = b[0], lse = 0.0, on = 0.0;
            for (int64_t k = 1; k < q; k++) {
                top = b[k] > top ? b[k] : top;
            }
            for (int64_t k = 0; k < q; k++) {
                lse += exp(b[k] - top);
                on += xi[j + k] > 0.5f ? b[k] : 0.0;
            }
            sum += on - top - log(lse);
        }
    }
    return sum / (double)n;
}

/*
 * --eval-every: fix the held-out rows (the first --eval-rows test images,
 * encoded once with stream HELDOUT_STREAM, so Bernoulli draws do not change
 * between evaluations) and the method: exact (log Z and log p(v) by
 * enumeration) under tighter limits than the final evaluation, else AIS with
 * --ais-chains x --eval-betas and, for a DBM, the mean-field bound. Names the
 * CSV column after the method.
 */
/* p[j] = (count + 1) / (N + 2), the smoothed frequency of 1 (spin: of +1)
 * of each encoded unit over the training images (a Bernoulli encoding with
 * its own stream, AIS_BASE_STREAM). */
static int training_means(run *r, double *p, const char *what)
{
    const trainer_config *c = r->c;
    enum { CHUNK = 1024 };
    const int64_t d = r->dim, n = r->train.n;
    double *ones = calloc((size_t)d, sizeof *ones);
    float *x = malloc((size_t)(CHUNK * d) * sizeof *x);
    ebm_rng_t *rng = NULL;
    char err[ERR_SIZE] = "";
    int rc = ones != NULL && x != NULL
                 ? (ebm_rng_create(&rng, c->seed, AIS_BASE_STREAM) == EBM_OK ? DATA_OK : DATA_ERNG)
                 : -1;
    for (int64_t r0 = 0; rc == DATA_OK && r0 < n; r0 += CHUNK) {
        const int64_t rows = n - r0 < CHUNK ? n - r0 : CHUNK;
        int64_t ids[CHUNK];
        for (int64_t i = 0; i < rows; i++) {
            ids[i] = r0 + i;
        }
        rc = data_batch(&r->train, &r->enc, rng, ids, rows, x, d, err, sizeof err);
        for (int64_t i = 0; rc == DATA_OK && i < rows * d; i++) {
            ones[i % d] += c->units == TRAINER_SPIN ? 0.5 * (x[i] + 1.0) : x[i];
        }
    }
    for (int64_t j = 0; rc == DATA_OK && j < d; j++) {
        p[j] = (ones[j] + 1.0) / ((double)n + 2.0);
    }
    ebm_rng_destroy(rng);
    free(ones);
    free(x);
    if (rc != DATA_OK) {
        return complain(c, "%s: %s", what, rc == -1 ? "out of memory" : err);
    }
    return 0;
}

const char *trainer_data_base_unfit(const ebm_model_t *m)
{
    switch (ebm_model_layer_units(m, 0)) {
    case EBM_UNITS_BINARY:
    case EBM_UNITS_SPIN:
    case EBM_UNITS_POTTS:
        return NULL;
    case EBM_UNITS_GAUSSIAN:
        return "Gaussian visible units start from N(mu, sigma^2), the model's own";
    default:
        return "these visible units have no base from the data's means";
    }
}

/* --ais-base data: the visible biases of AIS's base distribution, the
 * log-odds of training_means (spin units: half the log-odds of +1; Potts
 * sites, whose base is the softmax of a site's biases: the log-frequencies).
 * Where the visible units have none (trainer_data_base_unfit), AIS starts
 * from uniform units and the run says why. */
static int prepare_ais_base(run *r)
{
    const trainer_config *c = r->c;
    if (c->ais_base == 0 || c->eval == TRAINER_EVAL_NONE) {
        return 0;
    }
    r->ais_base_note = trainer_data_base_unfit(r->m);
    if (r->ais_base_note != NULL) {
        if (r->root) {
            fprintf(stderr, "%s: note: AIS starts from uniform units, not the data's pixel "
                    "means: %s\n", c->prog, r->ais_base_note);
        }
        return 0;
    }
    const int64_t d = r->dim;
    double *p = malloc((size_t)d * sizeof *p);
    r->ais_base = malloc((size_t)d * sizeof *r->ais_base);
    if (p == NULL || r->ais_base == NULL) {
        free(p);
        return complain(c, "--ais-base data: out of memory");
    }
    if (training_means(r, p, "--ais-base data") != 0) {
        free(p);
        return 1;
    }
    for (int64_t j = 0; j < d; j++) {
        const double logit = log(p[j] / (1.0 - p[j]));
        r->ais_base[j] = (float)(c->units == TRAINER_SPIN    ? 0.5 * logit
                                 : c->units == TRAINER_POTTS ? log(p[j])
                                                             : logit);
    }
    free(p);
    return 0;
}

/*
 * --centre data. A fresh run's offsets (keep_law 0: the initial parameters
 * are read as centred ones): the visible units' training_means (spin: 2p -
 * 1), and 0.5 (spin: 0) for the hidden units, PyDeep's defaults; a resumed
 * run's come from its checkpoint. Then the scratch of centre_step.
 */
static int centre_start(run *r)
{
    const trainer_config *c = r->c;
    if (!c->centre) {
        return 0;
    }
    const int64_t w = r->width, d = r->dim;
    r->centre_mu = malloc((size_t)(c->batch * w) * sizeof *r->centre_mu);
    r->centre_target = malloc((size_t)w * sizeof *r->centre_target);
    r->centre_clamp = calloc((size_t)w, 1);
    double *p = malloc((size_t)d * sizeof *p);
    if (r->centre_mu == NULL || r->centre_target == NULL || r->centre_clamp == NULL ||
        p == NULL) {
        free(p);
        return complain(c, "--centre data: out of memory");
    }
    memset(r->centre_clamp, 1, (size_t)d); /* the visible layer */
    if (c->resume == NULL) {
        if (training_means(r, p, "--centre data") != 0) {
            free(p);
            return 1;
        }
        const int spin = c->units == TRAINER_SPIN;
        for (int64_t j = 0; j < w; j++) {
            r->centre_target[j] = j < d ? (float)(spin ? 2.0 * p[j] - 1.0 : p[j])
                                        : (spin ? 0.0f : 0.5f);
        }
        if (ebm_model_set_offsets(r->m, r->centre_target, 0) != EBM_OK) {
            free(p);
            return complain(c, "--centre data: %s", ebm_model_errmsg(r->m));
        }
    }
    free(p);
    return 0;
}

/* --centre data, before a step's gradient: move the offsets, with the law
 * kept, towards the batch's layer means: the visible units' mean and the
 * hidden layers' mean-field means given each row (10 iterations from the
 * offsets). */
static int centre_step(run *r)
{
    const trainer_config *c = r->c;
    const int64_t w = r->width, d = r->dim, n = c->batch;
    if (ebm_model_get_offsets(r->m, r->centre_target) != EBM_OK) {
        return complain(c, "--centre data: %s", ebm_model_errmsg(r->m));
    }
    for (int64_t i = 0; i < n; i++) {
        memcpy(r->centre_mu + i * w, r->batch + i * d, (size_t)d * sizeof *r->batch);
        memcpy(r->centre_mu + i * w + d, r->centre_target + d, (size_t)(w - d) * sizeof *r->batch);
    }
    const int rc = ebm_model_mean_field(r->m, n, r->centre_mu, w, r->centre_clamp, 0, 10, 1e-4);
    if (rc < 0) {
        return complain(c, "step %lld: --centre data: ebm_model_mean_field: %s",
                        (long long)r->step + 1, ebm_model_errmsg(r->m));
    }
    for (int64_t j = 0; j < w; j++) {
        double s = 0.0;
        for (int64_t i = 0; i < n; i++) {
            s += r->centre_mu[i * w + j];
        }
        r->centre_target[j] = (float)(s / (double)n);
    }
    if (ebm_model_move_offsets(r->m, c->offset_rate, r->centre_target) != EBM_OK) {
        return complain(c, "step %lld: --centre data: %s", (long long)r->step + 1,
                        ebm_model_errmsg(r->m));
    }
    return 0;
}

static int prepare_heldout(run *r)
{
    const trainer_config *c = r->c;
    if (c->eval_every <= 0) {
        return 0;
    }
    const int64_t n = c->eval_rows > 0 && c->eval_rows < r->test.n ? c->eval_rows : r->test.n;
    ebm_rng_t *rng = NULL;
    char err[ERR_SIZE] = "";
    r->heldout_x = malloc((size_t)(n * r->dim) * sizeof *r->heldout_x);
    int rc = r->heldout_x != NULL ? ebm_rng_create(&rng, c->seed, HELDOUT_STREAM) : EBM_ENOMEM;
    if (rc != EBM_OK) {
        return complain(c, "--eval-every: out of memory");
    }
    rc = data_batch(&r->test, &r->enc, rng, NULL, n, r->heldout_x, r->dim, err, sizeof err);
    ebm_rng_destroy(rng);
    if (rc != DATA_OK) {
        return complain(c, "--eval-every data: %s", err);
    }
    r->heldout_n = n;
    const int64_t bits_z = smaller_parity_class(r->m, 0), bits_row = smaller_parity_class(r->m, 1);
    r->heldout_exact = c->eval == TRAINER_EVAL_AUTO && bits_z <= HELDOUT_LOG_Z_BITS &&
                       bits_row <= EXACT_ROW_BITS &&
                       (double)n * ldexp(1.0, (int)bits_row) <= HELDOUT_ROW_STATES;
    r->heldout_bound = !r->heldout_exact && ebm_model_num_layers(r->m) > 2;
    r->heldout_is = r->heldout_bound && c->is_samples > 0;
    r->heldout_column = r->heldout_exact   ? "heldout_loglik_exact"
                        : r->heldout_bound ? "heldout_loglik_ais_bound"
                                           : "heldout_loglik_ais";
    return 0;
}

/* The mean held-out log-likelihood (or bound) of m at this step, its log Z
 * (and AIS's standard error, else 0) and, for a DBM with --is-samples, the
 * mean IS estimate (else NaN). */
static int heldout_evaluate(run *r, const ebm_model_t *m, int64_t step, double *ll_mean,
                            double *log_z, double *log_z_se, double *is_mean)
{
    const trainer_config *c = r->c;
    const int64_t n = r->heldout_n;
    double *ll = malloc((size_t)n * sizeof *ll);
    ebm_rng_t *rng = NULL;
    if (ll == NULL) {
        return complain(c, "--eval-every: out of memory");
    }
    int rc;
    *log_z_se = 0.0;
    if (r->heldout_exact) {
        rc = ebm_model_log_partition_exact(m, log_z);
    } else {
        rc = ebm_rng_create(&rng, c->seed, HELDOUT_STREAM + (uint64_t)step);
        if (rc == EBM_OK) {
            rc = ebm_model_log_partition_ais_base(m, rng, c->ais_chains, c->eval_betas,
                                                  r->ais_base, log_z, log_z_se);
        }
    }
    if (rc == EBM_OK) {
        rc = r->heldout_bound
                 ? ebm_model_log_likelihood_bound(m, *log_z, n, r->heldout_x, r->dim, ll)
                 : ebm_model_log_likelihood(m, *log_z, n, r->heldout_x, r->dim, ll);
    }
    if (rc == EBM_OK) {
        *ll_mean = mean_of(ll, n);
    }
    if (rc == EBM_OK && r->heldout_is) {
        ebm_rng_destroy(rng);
        rc = ebm_rng_create(&rng, c->seed, HELDOUT_IS_STREAM + (uint64_t)step);
        if (rc == EBM_OK) {
            rc = ebm_model_log_likelihood_is(m, rng, *log_z, c->is_samples, n, r->heldout_x,
                                             r->dim, ll);
        }
        if (rc == EBM_OK) {
            *is_mean = mean_of(ll, n);
        }
    }
    if (rc != EBM_OK) {
        complain(c, "--eval-every at step %lld: %s", (long long)step,
                 rc == EBM_ENOMEM ? "out of memory" : ebm_model_errmsg(m));
    }
    ebm_rng_destroy(rng);
    free(ll);
    return rc != EBM_OK;
}

static int64_t check_chains(const trainer_config *c)
{
    return c->ais_check_chains > 0 ? c->ais_check_chains : c->ais_chains;
}

static int evaluate(const run *r, const ebm_model_t *m, result *res)
{
    const trainer_config *c = r->c;
    res->log_z = res->log_z_se = res->exact_log_z = res->ll_mean = res->exact_ll_mean = NAN;
    res->is_ll_mean = res->check_log_z = res->check_log_z_se = res->base_ll_mean = NAN;
    res->check_s = 0.0;
    res->ais_s = res->ll_s = res->exact_s = res->is_s = 0.0;
    res->is_bound = ebm_model_num_layers(m) > 2;
    if (c->eval == TRAINER_EVAL_NONE) {
        return 0;
    }
    const int64_t n = r->test.n;
    float *x = malloc((size_t)(n * r->dim) * sizeof *x);
    double *ll = malloc((size_t)n * sizeof *ll);
    ebm_rng_t *rng = NULL;
    char err[ERR_SIZE] = "";
    int rc = x && ll ? ebm_rng_create(&rng, c->seed, 2) : EBM_ENOMEM;
    if (rc != EBM_OK) {
        free(x), free(ll);
        return complain(c, "evaluation: out of memory");
    }
    rc = data_batch(&r->test, &r->enc, rng, NULL, n, x, r->dim, err, sizeof err);
    if (rc != DATA_OK) {
        complain(c, "evaluation data: %s", err);
        goto done;
    }
    if (r->ais_base != NULL) {
        res->base_ll_mean = base_loglik(r, n, x);
    }
    /* Exact where enumeration is cheap: log Z enumerates the smaller parity
     * class; a DBM's log p(v) enumerates its smaller hidden class per row. */
    const int64_t bits_z = smaller_parity_class(m, 0), bits_row = smaller_parity_class(m, 1);
    const int exact = c->eval == TRAINER_EVAL_AUTO && bits_z <= EXACT_LOG_Z_BITS &&
                      bits_row <= EXACT_ROW_BITS && (double)n * ldexp(1.0, (int)bits_row) <= 1e9;
    if (exact) {
        double t = cli_now();
        rc = ebm_model_log_partition_exact(m, &res->exact_log_z);
        if (rc == EBM_OK) {
            rc = ebm_model_log_likelihood(m, res->exact_log_z, n, x, r->dim, ll);
        }
        if (rc != EBM_OK) {
            complain(c, "exact evaluation: %s", ebm_model_errmsg(m));
            goto done;
        }
        res->exact_ll_mean = mean_of(ll, n);
        res->exact_s = cli_now() - t;
    }
    if (!exact || res->is_bound) {
        double t = cli_now();
        rc = ebm_model_log_partition_ais_base(m, rng, c->ais_chains, c->ais_betas, r->ais_base,
                                              &res->log_z, &res->log_z_se);
        res->ais_s = cli_now() - t;
        if (rc != EBM_OK) {
            complain(c, "AIS: %s", ebm_model_errmsg(m));
            goto done;
        }
        if (c->ais_check > 0) {
            /* Its own generator: the check never moves AIS's. A failure
             * leaves NaN and a warning; the rest of the report stands. */
            ebm_rng_t *check_rng = NULL;
            t = cli_now();
            int crc = ebm_rng_create(&check_rng, c->seed, AIS_CHECK_STREAM);
            if (crc == EBM_OK) {
                crc = ebm_model_log_partition_ais_base(m, check_rng, check_chains(c),
                                                       c->ais_check * c->ais_betas, r->ais_base,
                                                       &res->check_log_z, &res->check_log_z_se);
            }
            const int no_rng = check_rng == NULL;
            ebm_rng_destroy(check_rng);
            res->check_s = cli_now() - t;
            if (crc != EBM_OK) {
                res->check_log_z = res->check_log_z_se = NAN;
                complain(c, "warning: the AIS check failed (%s); the report goes on without it",
                         no_rng ? "out of memory" : ebm_model_errmsg(m));
            }
        }
        t = cli_now();
        rc = res->is_bound ? ebm_model_log_likelihood_bound(m, res->log_z, n, x, r->dim, ll)
                           : ebm_model_log_likelihood(m, res->log_z, n, x, r->dim, ll);
        res->ll_s = cli_now() - t;
        if (rc != EBM_OK) {
            complain(c, "log-likelihood: %s", ebm_model_errmsg(m));
            goto done;
        }
        res->ll_mean = mean_of(ll, n);
        if (res->is_bound && c->is_samples > 0) {
            /* Its own generator: the estimate never moves AIS's. A failure
             * leaves NaN and a warning; the rest of the report stands. */
            ebm_rng_t *is_rng = NULL;
            t = cli_now();
            int irc = ebm_rng_create(&is_rng, c->seed, FINAL_IS_STREAM);
            if (irc == EBM_OK) {
                irc = ebm_model_log_likelihood_is(m, is_rng, res->log_z, c->is_samples, n, x,
                                                  r->dim, ll);
            }
            const int no_rng = is_rng == NULL;
            ebm_rng_destroy(is_rng);
            res->is_s = cli_now() - t;
            if (irc == EBM_OK) {
                res->is_ll_mean = mean_of(ll, n);
            } else {
                complain(c, "warning: the IS estimate failed (%s); the report goes on without it",
                         no_rng ? "out of memory" : ebm_model_errmsg(m));
            }
        }
    }
done:
    ebm_rng_destroy(rng);
    free(x);
    free(ll);
    return rc != 0;
}

/* A distributed run's stragglers (docs/distributed.md), means per step:
 * the slowest and the fastest rank's compute ms, the busiest rank's and
 * the mean rank's coupled steps; 0 if there is nothing to say. */
static int stragglers(const run *r, double out[4])
{
    const dist_shards *d = &r->dist;
    if (r->c->comm == NULL || d->steps == 0) {
        return 0;
    }
    out[0] = 1e3 * d->slowest_s / (double)d->steps;
    out[1] = 1e3 * d->fastest_s / (double)d->steps;
    out[2] = d->busiest_taus / (double)d->steps;
    out[3] = d->all_taus / (double)d->steps / r->c->comm->size;
    return 1;
}

/* AIS underestimates log Z when it has too few temperatures, and its
 * standard error does not show it; an estimate with more temperatures
 * tells. The verdict on the first from d, the second's log Z less the
 * first's, and se, the two standard errors combined: "agrees" (within
 * AIS_AGREE_NATS, with noise that small), "biased" (the first is lower by
 * more than that and 3 se: its likelihoods are too high), or "unclear"
 * (noise of the size of the difference: more chains would tell). */
#define AIS_AGREE_NATS 1.0
static const char *ais_verdict(double d, double se)
{
    if (fabs(d) <= AIS_AGREE_NATS && se <= AIS_AGREE_NATS) {
        return "agrees";
    }
    return d > AIS_AGREE_NATS && d > 3.0 * se ? "biased" : "unclear";
}

/* --eval-every's bias check (heldout_check): the AIS log Z of its last
 * evaluation, if that was at the final step, against the final
 * evaluation's of the same model (exact, or AIS with more temperatures).
 * Returns the verdict and sets *d (the final's less the held-out's) and
 * *se, or returns "not_shown" and sets *why. */
static const char *heldout_verdict(const run *r, const result *res, double *d, double *se,
                                   const char **why)
{
    const trainer_config *c = r->c;
    const int exact = isfinite(res->exact_log_z);
    *d = *se = NAN;
    if (r->heldout_last_step != r->step || !isfinite(r->heldout_last_log_z)) {
        *why = "no held-out evaluation at the final step (make --steps a multiple of "
               "--eval-every)";
    } else if (!exact && !isfinite(res->log_z)) {
        *why = "the final evaluation has no log Z";
    } else if (!exact && c->ais_betas <= c->eval_betas) {
        *why = "the final AIS has no more temperatures than --eval-betas";
    } else {
        *d = (exact ? res->exact_log_z : res->log_z) - r->heldout_last_log_z;
        *se = exact ? r->heldout_last_se : hypot(r->heldout_last_se, res->log_z_se);
        return ais_verdict(*d, *se);
    }
    return "not_shown";
}

static void report(const run *r, const result *res, double train_s, double pictures_s,
                   double sample_accept, double sample_sweeps)
{
    const trainer_config *c = r->c;
    char path[4200], dur[32];
    cli_format_duration(train_s, dur, sizeof dur);
    const int64_t steps_here = r->step;
    printf("\n== %s: %lld steps in %s of training (%.2f steps/s)\n", c->title,
           (long long)steps_here, dur, train_s > 0 ? (double)steps_here / train_s : NAN);
    printf("model: layers");
    for (int l = 0; l < c->n_layers; l++) {
        printf("%s%lld", l ? "-" : " ", (long long)c->layers[l]);
    }
    printf(", %s units%s; data %s (%lld train, %lld test images), %s", units_names[c->units],
           c->hidden == TRAINER_HIDDEN_DRELU ? " over dReLU hidden units" : "",
           data_names[c->data], (long long)r->train.n, (long long)r->test.n,
           binarize_names[c->binarize]);
    if (c->binarize == DATA_LEVELS) {
        printf(" (%d)", c->levels);
    }
    printf("\n");
    if (c->method == EBM_ESTIMATOR_PT && r->stat_steps > 0) {
        printf("parallel tempering, %d replicas per chain: swap rate %.4f over %lld steps; per "
               "pair (beta_k, beta_k+1):", c->n_ladder, r->swap_sum / (double)r->stat_steps,
               (long long)r->stat_steps);
        for (int k = 0; k + 1 < c->n_ladder; k++) {
            printf(" %.3f", r->swap_proposed[k] > 0 ? r->swap_accepted[k] / r->swap_proposed[k]
                                                    : NAN);
        }
        printf("\n");
    }
    if (!persistent_method(c->method) && r->stat_steps > 0) {
        printf("coupling over %lld steps: tau mean %.3f (max %.0f), positive phase tau mean "
               "%.3f (max %.0f); rows stopped by --cap: %.0f\n", (long long)r->stat_steps,
               r->tau_sum / (double)r->stat_steps, r->tau_max,
               r->ptau_sum / (double)r->stat_steps, r->ptau_max, r->capped);
    }
    if (c->method == EBM_ESTIMATOR_UCD_LMI && r->stat_steps > 0) {
        printf("MH moves accepted over %lld steps: %.0f%s\n", (long long)r->stat_steps,
               r->mh_accepted,
               r->mh_accepted == 0 ? " (so every chain met at once and the gradient applied was "
                                     "f at the local mode plus one Gibbs sweep: docs/samplers.md)"
                                   : "");
    }
    if (optim_average_on(&r->avg) && r->avg.count > 0) {
        printf("evaluated and saved (model.ebm): the average of the %lld iterates after step "
               "%lld (--average-from); the last iterate is model_raw.ebm\n",
               (long long)r->avg.count, (long long)r->avg.from);
    } else if (optim_average_on(&r->avg)) {
        printf("evaluated and saved (model.ebm): the last iterate, since no step came after "
               "--average-from %lld (also model_raw.ebm)\n", (long long)r->avg.from);
    }
    if (isfinite(res->exact_log_z)) {
        printf("exact:  log Z = %.3f, test log p(v) = %.3f nats/image (%.1f s)\n",
               res->exact_log_z, res->exact_ll_mean, res->exact_s);
    }
    const double check_d = res->check_log_z - res->log_z;
    const double check_se = hypot(res->log_z_se, res->check_log_z_se);
    const char *verdict = isfinite(res->check_log_z) ? ais_verdict(check_d, check_se) : NULL;
    if (isfinite(res->log_z)) {
        char check[96] = "";
        if (verdict != NULL) {
            snprintf(check, sizeof check, "; bias check: %s (%+.2f nats at %lldx the betas)",
                     verdict, check_d, (long long)c->ais_check);
        }
        printf("AIS (%lld chains, %lld betas, from %s%s): log Z = %.3f +- %.3f (%.1f s)%s\n",
               (long long)c->ais_chains, (long long)c->ais_betas,
               r->ais_base != NULL ? "the data's pixel means" : "uniform units",
               r->ais_base_note != NULL ? ", as --ais-base data does not apply" : "",
               res->log_z, res->log_z_se, res->ais_s, check);
        printf("test %s = %.3f nats/image (%.1f s)\n",
               res->is_bound ? "log-likelihood lower bound (mean field)" : "log-likelihood",
               res->ll_mean, res->ll_s);
    }
    if (verdict != NULL) {
        printf("AIS check (%lld chains, %lld betas): log Z = %.3f +- %.3f (%.1f s): %+.3f "
               "nats (%.1f s.e.) from the first: %s\n",
               (long long)check_chains(c), (long long)(c->ais_check * c->ais_betas),
               res->check_log_z, res->check_log_z_se, res->check_s, check_d,
               check_se > 0 ? check_d / check_se : 0.0,
               verdict[0] == 'a' ? "agrees, within 1 nat"
               : verdict[0] == 'b' ? "biased, the first AIS is too low (the likelihoods above "
                                     "too high): raise --ais-betas"
                                   : "unclear, the difference is within the noise or the "
                                     "check is the lower: more --ais-check-chains would tell");
    } else if (isfinite(res->log_z) && c->ais_check == 0) {
        printf("AIS check: none (--ais-check 0), so AIS's bias is not measured\n");
    }
    double held_d = NAN, held_se = NAN;
    const char *held_why = NULL;
    const char *held = r->heldout_column != NULL && !r->heldout_exact
                           ? heldout_verdict(r, res, &held_d, &held_se, &held_why)
                           : NULL;
    if (held != NULL && held_why != NULL) {
        printf("held-out curves (train.csv, AIS with %lld betas): bias not checked: %s\n",
               (long long)c->eval_betas, held_why);
    } else if (held != NULL) {
        printf("held-out curves (train.csv, AIS with %lld betas): their log Z at step %lld is "
               "%+.3f nats (%.1f s.e.) from the final evaluation's: %s\n",
               (long long)c->eval_betas, (long long)r->step, held_d,
               held_se > 0 ? held_d / held_se : 0.0,
               held[0] == 'a' ? "agrees, within 1 nat"
               : held[0] == 'b' ? "biased, their likelihoods are too high: raise --eval-betas"
                                : "unclear, the difference is within the noise");
    }
    if (isfinite(res->base_ll_mean)) {
        printf("AIS's base alone (independent %s with the training frequencies): test "
               "log-likelihood = %.3f nats/image\n",
               c->units == TRAINER_POTTS ? "sites" : "units", res->base_ll_mean);
    }
    if (isfinite(res->is_ll_mean)) {
        printf("test log-likelihood, importance-sampled (%lld samples per image, AIS log Z) = "
               "%.3f nats/image (%.1f s)\n",
               (long long)c->is_samples, res->is_ll_mean, res->is_s);
    }
    if (c->n_samples > 0 && !can_search(c)) {
        printf("samples: %d Gibbs sweeps from uniform states; pictures %.1f s\n",
               GIBBS_SAMPLE_SWEEPS, pictures_s);
    } else if (c->n_samples > 0) {
        printf("samples: local search (%.1f sweeps) + %lld MH steps (acceptance %.4f); "
               "pictures %.1f s\n", sample_sweeps, (long long)c->mh_steps, sample_accept,
               pictures_s);
    }

    snprintf(path, sizeof path, "%s/summary.txt", c->out);
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fprintf(f, "method=%s\nsteps=%lld\ntrain_seconds=%.3f\nais_chains=%lld\nais_betas=%lld\n"
                   "ais_log_z=%.6f\nais_log_z_se=%.6f\nais_seconds=%.3f\ntest_ll_mean=%.6f\n"
                   "test_ll_is_bound=%d\nll_seconds=%.3f\nexact_log_z=%.6f\nexact_ll_mean=%.6f\n"
                   "capped_rows=%.0f\ntau_max=%.0f\npositive_tau_max=%.0f\n",
                c->title, (long long)r->step, train_s, (long long)c->ais_chains,
                (long long)c->ais_betas, res->log_z, res->log_z_se, res->ais_s, res->ll_mean,
                res->is_bound, res->ll_s, res->exact_log_z, res->exact_ll_mean, r->capped, r->tau_max,
                r->ptau_max);
        fprintf(f, "ais_base=%s\n", c->eval == TRAINER_EVAL_NONE ? "none"
                                     : r->ais_base != NULL         ? "data"
                                                                   : "uniform");
        if (r->ais_base_note != NULL) {
            fprintf(f, "ais_base_note=--ais-base data does not apply: %s\n", r->ais_base_note);
        }
        if (isfinite(res->base_ll_mean)) {
            fprintf(f, "base_ll_mean=%.6f\n", res->base_ll_mean);
        }
        if (c->centre) {
            fprintf(f, "centre=data\noffset_rate=%.17g\n", c->offset_rate);
        }
        if (c->method == EBM_ESTIMATOR_UCD_LMI) {
            fprintf(f, "mh_accepted=%.0f\n", r->mh_accepted);
        }
        if (c->method == EBM_ESTIMATOR_PT) {
            fprintf(f, "swap_rate=%.6f\n",
                    r->stat_steps > 0 ? r->swap_sum / (double)r->stat_steps : NAN);
        }
        if (isfinite(res->is_ll_mean)) {
            fprintf(f, "is_samples=%lld\nis_ll_mean=%.6f\nis_seconds=%.3f\n",
                    (long long)c->is_samples, res->is_ll_mean, res->is_s);
        }
        if (isfinite(res->check_log_z)) {
            fprintf(f, "ais_check_chains=%lld\nais_check_betas=%lld\nais_check_log_z=%.6f\n"
                       "ais_check_log_z_se=%.6f\nais_check_seconds=%.3f\n",
                    (long long)check_chains(c), (long long)(c->ais_check * c->ais_betas),
                    res->check_log_z, res->check_log_z_se, res->check_s);
            fprintf(f, "ais_check_verdict=%s\n", verdict);
        }
        if (held != NULL) {
            fprintf(f, "heldout_check=%s\n", held);
            if (held_why == NULL) {
                fprintf(f, "heldout_check_diff=%.6f\n", held_d);
            }
        }
        if (optim_average_on(&r->avg)) {
            /* The figures above are those of the model evaluated: the average or, if
             * no step came after average_from, the last iterate. */
            fprintf(f, "average_from=%lld\naverage_count=%lld\nevaluated=%s\n",
                    (long long)r->avg.from, (long long)r->avg.count,
                    r->avg.count > 0 ? "averaged" : "last_iterate");
        }
        double st[4];
        if (stragglers(r, st)) {
            fprintf(f, "ranks=%d\nshards=%lld\nslowest_rank_ms=%.3f\nfastest_rank_ms=%.3f\n"
                       "busiest_rank_taus=%.2f\nmean_rank_taus=%.2f\n",
                    c->comm->size, (long long)r->dist.n_shards, st[0], st[1], st[2], st[3]);
        }
        fprintf(f, "config=%s\n", r->config_text);
        fclose(f);
    }
    /* One row of the demo's table (Makefile: make demo). */
    snprintf(path, sizeof path, "%s/table_row.txt", c->out);
    f = fopen(path, "w");
    if (f != NULL) {
        char ll[64], is[64] = "-", lz[64], check[64] = "-";
        const double shown = isfinite(res->ll_mean) ? res->ll_mean : res->exact_ll_mean;
        snprintf(ll, sizeof ll, "%.2f", shown);
        if (isfinite(res->is_ll_mean)) {
            snprintf(is, sizeof is, "%.2f", res->is_ll_mean);
        }
        if (isfinite(res->log_z)) {
            snprintf(lz, sizeof lz, "%.2f +- %.2f", res->log_z, res->log_z_se);
        } else {
            snprintf(lz, sizeof lz, "%.2f (exact)", res->exact_log_z);
        }
        if (verdict != NULL) {
            snprintf(check, sizeof check, "%s %+.2f", verdict, check_d);
        }
        fprintf(f, "%-8s %8lld %10s %18s %12s %20s %15s %9.1f s\n", c->title, (long long)r->step,
                dur, ll, is, lz, check,
                res->ais_s + res->ll_s + res->exact_s + res->is_s + res->check_s);
        fclose(f);
    }
}

/* ------------------------------------------------------------------------ */

static void free_run(run *r)
{
    if (r->csv != NULL) {
        fclose(r->csv);
    }
    ebm_estimator_destroy(r->e);
    dist_free(&r->dist);
    ebm_model_destroy(r->m);
    ebm_model_destroy(r->m_avg);
    ebm_rng_destroy(r->rng);
    optim_free(&r->opt);
    optim_average_free(&r->avg);
    free(r->batch);
    free(r->grad);
    free(r->rows);
    free(r->heldout_x);
    free(r->ais_base);
    free(r->centre_mu);
    free(r->centre_target);
    free(r->centre_clamp);
    data_set_free(&r->train);
    data_set_free(&r->test);
}

int trainer_main(trainer_config *c, int argc, char **argv)
{
    int rc = parse_options(c, argc, argv);
    if (c->comm != NULL) {
        /* Every rank parses; if one asked for --help or failed, all stop. */
        double worst = rc;
        if (c->comm->max_f64(c->comm->ctx, &worst, 1) != 0) {
            return complain(c, "the transport failed");
        }
        rc = (int)worst;
    }
    if (rc == 1) {
        return 0;
    }
    if (rc != 0) {
        return 2;
    }
    char out_default[256];
    if (c->out == NULL) {
        snprintf(out_default, sizeof out_default, "examples/out/%s", method_flag(c->method));
        c->out = out_default;
    }
    run r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.root = c->comm == NULL || c->comm->rank == 0;
    /* Distributed, every rank sets up alike (its own data, model, shards),
     * and all stop if one fails (a missing data file on one machine); only
     * rank 0 writes, so only it makes the output directory. */
    rc = r.root && cli_make_dirs(c->out) != 0
             ? complain(c, "cannot create %s: %s", c->out, strerror(errno))
             : 0;
    rc = any_failed(c, rc || load_data(&r) || build_model(&r) || centre_start(&r) ||
                           build_estimator(&r) ||
                           prepare_heldout(&r) || prepare_ais_base(&r));
    if (rc == 0) {
        rc = any_failed(c, config_text(&r, r.config_text, sizeof r.config_text) ||
                               (c->resume != NULL && resume(&r)) || (r.root && open_csv(&r)));
    }
    if (rc == 0 && c->comm != NULL) {
        rc = any_failed(c, same_start_as_root(&r));
    }
    double train_s = 0.0;
    if (rc == 0 && r.root) {
        fprintf(stderr, "%s: %s, layers", c->prog, c->title);
        for (int l = 0; l < c->n_layers; l++) {
            fprintf(stderr, "%s%lld", l ? "-" : " ", (long long)c->layers[l]);
        }
        fprintf(stderr, " (%lld parameters), %lld training images, batch %lld, lr %g\n",
                (long long)r.n_params, (long long)r.train.n, (long long)c->batch, c->lr);
        if (r.heldout_column != NULL) {
            fprintf(stderr, "%s: --eval-every %lld: %s%s on %lld test images%s\n", c->prog,
                    (long long)c->eval_every, r.heldout_column,
                    r.heldout_is ? " and heldout_loglik_is (--is-samples per image)" : "",
                    (long long)r.heldout_n,
                    r.heldout_exact ? "" : " (AIS with --ais-chains x --eval-betas)");
        }
        if (optim_average_on(&r.avg)) {
            fprintf(stderr, "%s: --average-from %lld: the average of the iterates after step "
                    "%lld is evaluated and saved as model.ebm, the last iterate as "
                    "model_raw.ebm\n", c->prog, (long long)c->average_from,
                    (long long)c->average_from);
        }
    }
    if (rc == 0) {
        if (cli_catch_stop_signals() != 0) {
            fprintf(stderr, "%s: warning: cannot catch SIGINT and SIGTERM: %s\n", c->prog,
                    strerror(errno));
        }
        rc = train(&r, &train_s);
    }
    if (rc == 0) {
        rc = save_checkpoint(&r, train_s);
    }
    double st[4];
    if (r.root && stragglers(&r, st)) {
        fprintf(stderr, "%s: %d ranks, %lld shards: per step the slowest rank computed %.1f ms, "
                "the fastest %.1f ms; the busiest rank's rows made %.1f coupled steps, the "
                "mean rank's %.1f\n", c->prog, c->comm->size, (long long)r.dist.n_shards, st[0],
                st[1], st[2], st[3]);
    }
    if (!r.root) { /* the rest is rank 0's: the model, the pictures, the evaluation */
        free_run(&r);
        return rc != 0 ? 1 : r.stopped_by != 0 ? 128 + r.stopped_by : 0;
    }
    rc = rc || save_models(&r);
    char path[4200], raw[4300] = "";
    if (optim_average_on(&r.avg) && r.avg.count > 0) {
        snprintf(raw, sizeof raw, " (the average of %lld iterates; the last iterate: "
                 "%s/model_raw.ebm)", (long long)r.avg.count, c->out);
    } else if (optim_average_on(&r.avg)) {
        snprintf(raw, sizeof raw, " (the last iterate, also in %s/model_raw.ebm)", c->out);
    }
    if (rc == 0 && r.stopped_by != 0) {
        fprintf(stderr, "%s: %s: stopped after step %lld; wrote %s/checkpoint.ckpt and "
                        "%s/model.ebm%s; continue with --resume %s/checkpoint.ckpt\n",
                c->prog, cli_signal_name(r.stopped_by), (long long)r.step, c->out, c->out,
                raw, c->out);
        free_run(&r);
        return 128 + r.stopped_by;
    }
    double accept = NAN, sweeps = NAN, pictures_s = 0.0;
    const ebm_model_t *shown = rc == 0 ? shown_model(&r) : NULL;
    rc = rc || shown == NULL;
    if (rc == 0) {
        const double t = cli_now();
        snprintf(path, sizeof path, "%s/samples.png", c->out);
        rc = write_samples(&r, shown, path, r.step, &accept, &sweeps);
        snprintf(path, sizeof path, "%s/completion.png", c->out);
        rc = rc || write_completions(&r, shown, path);
        pictures_s = cli_now() - t;
    }
    result res;
    if (rc == 0 && cli_stop_signal() == 0) {
        fprintf(stderr, "%s: evaluating %son %lld test images...\n", c->prog,
                shown != r.m ? "the average of the iterates " : "", (long long)r.test.n);
        rc = evaluate(&r, shown, &res);
    }
    if (rc == 0 && cli_stop_signal() == 0) {
        report(&r, &res, train_s, pictures_s, accept, sweeps);
    }
    free_run(&r);
    if (cli_stop_signal() != 0) {
        /* The signal came after the last step: the outputs of training are whole. */
        fprintf(stderr, "%s: %s after training (step %lld); %s/checkpoint.ckpt and "
                        "%s/model.ebm are complete%s\n", c->prog,
                cli_signal_name(cli_stop_signal()), (long long)r.step, c->out, c->out,
                rc == 0 ? "; the final evaluation was skipped or cut short" : "");
        return 128 + cli_stop_signal();
    }
    return rc == 0 ? 0 : 1;
}
