/* The trainers' options (trainer.h, trainer_run.h): each method's defaults
 * from its paper, the table of options that drives parsing, --help and the
 * messages, the checks of combinations the table cannot express, and the
 * settings text a checkpoint stores. */
#include "trainer_run.h"

#include "cli.h"
#include "data.h"
#include "optim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const trainer_data_names[] = {"fashion", "mnist", "bas", "digits"};
const char *const trainer_units_names[] = {"binary", "spin", "potts"};
static const char *const hidden_names[] = {"auto", "drelu"};
const char *const trainer_binarize_names[] = {"grey",   "threshold", "bernoulli",
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
    c->flip_prob = 0.02;
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

/* ADD(spec) appends a spec to s, counting in n; text[*t] is the next free
 * buffer for a default or range made up at run time. */
#define ADD(...) (s[n++] = (cli_spec)__VA_ARGS__)

/* The options of the data and the model into s. @return how many */
static int data_model_specs(trainer_config *c, cli_spec *s, char (*text)[256], int *t)
{
    int n = 0;
    ADD(CLI_HEAD("data:"));
    ADD(CLI_ONE_OF("--data", &c->data, trainer_data_names, 0,
                   "data set: Fashion-MNIST, MNIST digits (make mnist-data), bars-and-stripes, "
                   "or scikit-learn's 8x8 digits (python3-sklearn)"));
    const int digits_dir = (int)(strlen(DATA_DIGITS_CSV) - strlen("/digits.csv.gz"));
    snprintf(text[*t], sizeof text[*t], "fashion: %s; mnist: %s; digits: %.*s",
             DATA_FASHION_MNIST_DIR, DATA_MNIST_JSON_DIR, digits_dir, DATA_DIGITS_CSV);
    ADD({.type = CLI_TEXT, .name = "--data-dir", .meta = "DIR", .field = &c->data_dir,
         .help = "the directory of the data set's files (digits: of digits.csv.gz)",
         .dflt = text[(*t)++]});
    ADD(CLI_I32("--bas-side", "N", &c->bas_side, 1, 12,
                "--data bas: side of the bars-and-stripes images"));
    ADD(CLI_I64("--train-rows", "N", &c->train_rows, 0, INT64_C(1) << 40,
                "train on the first N training images only; 0: all"));
    ADD(CLI_I64("--test-rows", "N", &c->test_rows, 0, INT64_C(1) << 40,
                "evaluate on the first N test images only; 0: all"));
    ADD(CLI_ONE_OF("--binarize", &c->binarize, trainer_binarize_names, 1,
                   "1-bit threshold at 0.5, a fresh Bernoulli draw per batch, 8 bits per "
                   "pixel, or the pixel's grey level of --levels as one-hot units (for "
                   "--units potts)"));
    ADD(CLI_I32("--levels", "Q", &c->levels, 2, DATA_MAX_LEVELS,
                "--binarize levels: grey levels round((Q - 1) grey), each pixel Q units"));
    ADD(CLI_HEAD("model:"));
    snprintf(text[*t], sizeof text[*t], "2 to %d sizes, each >= 1", EBM_MAX_LAYERS);
    ADD({.type = CLI_CUSTOM, .name = "--layers", .meta = "N0,N1,...", .field = c,
         .parse = parse_layers, .range = text[(*t)++],
         .help = "layer sizes, the visible layer's (N0) first",
         .dflt = c->method == EBM_ESTIMATOR_UCD
                     ? "N0,1000; bas and digits: N0,N0"
                     : "N0,N0,N0 with N0 visible units"});
    ADD(CLI_ONE_OF("--units", &c->units, trainer_units_names, 0,
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
    return n;
}

/* The options of the optimiser and the estimator (those of c's method) into
 * s. @return how many */
static int optimiser_estimator_specs(trainer_config *c, cli_spec *s, char (*text)[256], int *t)
{
    const int lmi = c->method == EBM_ESTIMATOR_UCD_LMI, pcd = trainer_persistent(c->method);
    int n = 0;
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
        snprintf(text[*t], sizeof text[*t], "2 to %d values in [0, 1], increasing, the last 1",
                 TRAINER_MAX_BETAS);
        ADD({.type = CLI_CUSTOM, .name = "--ladder", .meta = "B0,B1,...,1", .field = c,
             .parse = parse_ladder, .range = text[(*t)++], .dflt = "none: plain PCD",
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
    } else {
        ADD(CLI_DBL("--global-prob", "P", &c->global_prob, 0.0, 0.999999,
                    "the chance that a chain's step is a global move from the training rows "
                    "(EBM_SAMPLER_GLOBAL_PROB, docs/global_moves.md; PT: of the beta = 1 "
                    "replicas); 0: none"));
        ADD(CLI_DBL("--flip-prob", "E", &c->flip_prob, 1e-9, 0.999999,
                    "the global moves' proposal: the chance that a unit of the chosen "
                    "training row flips"));
    }
    return n;
}

/* The options of the run and the evaluation into s. @return how many */
static int run_evaluation_specs(trainer_config *c, cli_spec *s, char (*text)[256], int *t)
{
    int n = 0;
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
    snprintf(text[*t], sizeof text[*t], "examples/out/%s", trainer_method_flag(c->method));
    ADD({.type = CLI_TEXT, .name = "--out", .meta = "DIR", .field = &c->out,
         .help = "output directory, created if missing", .dflt = text[(*t)++]});
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
    return n;
}
#undef ADD

/* The table of options (cli.h) for c's method, at most MAX_SPECS, with up
 * to 4 texts made up at run time in text: what is parsed, what --help
 * prints and what the messages say all come from it. Defaults are c's
 * values, or the texts here where a sentinel stands for "the library's" or
 * "the data's". @return the number of options */
static int option_specs(trainer_config *c, cli_spec *s, char (*text)[256])
{
    int n = 0, t = 0;
    n += data_model_specs(c, s + n, text, &t);
    n += optimiser_estimator_specs(c, s + n, text, &t);
    n += run_evaluation_specs(c, s + n, text, &t);
    return n;
}

/* @return 0, 1 for --help, 2 for a bad option */
int trainer_parse_options(trainer_config *c, int argc, char **argv)
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
        trainer_complain(c, "--schedule cosine needs --steps (the length of the decay)");
        return 2;
    }
    if (c->steps == 0 && c->minutes == 0.0) {
        trainer_complain(c, "give --steps or --minutes (or both)");
        return 2;
    }
    if (c->eval_every > 0 && c->eval == TRAINER_EVAL_NONE) {
        trainer_complain(c, "--eval-every needs --eval auto or ais (it uses the same method)");
        return 2;
    }
    if (c->hidden == TRAINER_HIDDEN_DRELU && c->centre) {
        trainer_complain(c, "--centre data with --hidden drelu: dReLU units have no offsets");
        return 2;
    }
    if (c->units == TRAINER_POTTS && c->binarize != DATA_LEVELS) {
        trainer_complain(c, "--units potts needs --binarize levels (a site of --levels one-hot "
                            "units per pixel), not --binarize %s",
                         trainer_binarize_names[c->binarize]);
        return 2;
    }
    if (c->centre && c->average_from >= 0) {
        trainer_complain(c, "--centre data with --average-from: an average of parameters "
                            "centred on moving offsets is not a model; give one of them");
        return 2;
    }
    if (c->centre && c->comm != NULL) {
        trainer_complain(c, "--centre data is not supported in distributed runs yet");
        return 2;
    }
    if (c->ais_check_chains == 1) {
        trainer_complain(c, "--ais-check-chains 1: AIS needs at least 2 chains (0: --ais-chains)");
        return 2;
    }
    if (c->ais_check > 0 && c->ais_betas > (INT64_C(1) << 30) / c->ais_check) {
        trainer_complain(c, "--ais-check %lld x --ais-betas %lld is more than 2^30 temperatures",
                         (long long)c->ais_check, (long long)c->ais_betas);
        return 2;
    }
    return 0;
}
/* The settings of a run, as stored in its checkpoints: first those a resumed
 * run must share (they fix the model, the data and the optimiser's state),
 * then, after " | ", those it may change (with a warning), e.g. a --cap
 * added to rescue a run whose coupling does not meet. */
int trainer_config_text(const run *r, char *buf, size_t size)
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
                      trainer_method_flag(c->method), trainer_data_names[c->data], c->bas_side,
                      (long long)c->train_rows, trainer_binarize_names[c->binarize], levels,
                      trainer_units_names[c->units], hidden);
    for (int l = 0; l < c->n_layers && at > 0 && (size_t)at < size; l++) {
        at += snprintf(buf + at, size - (size_t)at, "%s%lld", l ? "," : "",
                       (long long)c->layers[l]);
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
        char global[80] = "";
        if (c->global_prob > 0.0) {
            snprintf(global, sizeof global, " global_prob=%.17g flip_prob=%.17g", c->global_prob,
                     c->flip_prob);
        }
        char centre[64] = "";
    if (c->centre) {
        snprintf(centre, sizeof centre, " centre=data offset_rate=%.17g", c->offset_rate);
    }
    tail = snprintf(buf + at, size - (size_t)at,
                 " optimizer=%s momentum=%s batch=%lld chains=%lld seed=%llu%s%s%s | lr=%.17g "
                 "schedule=%s gamma=%.17g clip=%.17g k=%lld cap=%lld marginalize=%d "
                 "positive=%d search_sweeps=%lld%s",
                 optimizer_names[c->optimizer], c->momentum > 0 ? "on" : "off",
                 (long long)c->batch, (long long)c->chains, (unsigned long long)c->seed,
                 c->schedule == OPTIM_COSINE ? " cosine" : "", centre, shards, c->lr,
                 schedule_names[c->schedule],
                 c->gamma, c->clip, (long long)c->k, (long long)c->cap, c->marginalize,
                 c->positive, (long long)c->search_sweeps, global);
    }
    /* a cut text would let a resume change what it must keep */
    return tail >= 0 && (size_t)tail < size - (size_t)at
               ? 0
               : trainer_complain(c, "internal: the settings text does not fit in %zu bytes", size);
}
