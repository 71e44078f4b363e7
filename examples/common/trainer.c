/* The shared training loop of the DBM/RBM trainers: see trainer.h. */
#include "trainer.h"

#include "checkpoint.h"
#include "cli.h"
#include "data.h"
#include "optim.h"
#include "png.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ERR_SIZE = 1024, PICTURE_SCALE = 2, EXACT_LOG_Z_BITS = 24, EXACT_ROW_BITS = 20 };

/* Everything one run holds. */
typedef struct run {
    trainer_config *c;
    data_set train, test;
    data_encoding enc;
    int64_t dim;       /* units of an encoded image: the visible layer */
    ebm_model_t *m;
    ebm_estimator_t *e;
    ebm_rng_t *rng;    /* the training stream */
    optim opt;
    int64_t width, n_params;
    float *batch, *grad;
    int64_t *rows;
    int64_t step;
    double seconds_before; /* training time of earlier processes (resume) */
    FILE *csv;
    char config_text[1024];
    /* coupling statistics over this process's steps (UCD kinds) */
    int64_t stat_steps;
    double tau_sum, tau_max, ptau_sum, ptau_max, capped;
} run;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int complain(const trainer_config *c, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", c->prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

static const char *method_flag(int method)
{
    return method == EBM_ESTIMATOR_UCD_LMI ? "ucd-lmi" : method == EBM_ESTIMATOR_UCD ? "ucd" : "pcd";
}

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

static const char *const data_names[] = {"fashion", "mnist", "bas"};
static const char *const units_names[] = {"binary", "spin"};
static const char *const binarize_names[] = {"grey", "threshold", "bernoulli", "8bit"};
static const char *const init_names[] = {"orthogonal", "gaussian"};
static const char *const optimizer_names[] = {"sgd", "adam"};
static const char *const schedule_names[] = {"constant", "invsqrt", "cosine"};
static const char *const marginalize_names[] = {"none", "even", "odd", "both"};
static const char *const positive_names[] = {"auto", "exact", "mean-field", "coupled", "sampled"};
static const char *const eval_names[] = {"auto", "ais", "none"};

/* Index of val in names[lo..n), or -1. */
static int pick(const char *val, const char *const *names, int lo, int n)
{
    for (int i = lo; i < n; i++) {
        if (strcmp(val, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

void trainer_defaults(trainer_config *c, int method, const char *prog, const char *title)
{
    memset(c, 0, sizeof *c);
    c->prog = prog;
    c->title = title;
    c->method = method;
    c->data = TRAINER_FASHION;
    c->bas_side = 4;
    c->init_scale = 1.0;
    c->optimizer = OPTIM_SGD;
    c->gamma = 1e-3;
    c->batch = 1000;
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
    c->ais_betas = 1000;
    c->eval = TRAINER_EVAL_AUTO;
    if (method == EBM_ESTIMATOR_UCD) {
        /* Qiu et al. (2020) section 6.3: a binary RBM with 1000 hidden units on
         * Bernoulli-binarised Fashion-MNIST, batch 1000, lr 0.1; their code
         * initialises with N(0, 0.1^2) weights. */
        c->binarize = DATA_BERNOULLI;
        c->units = EBM_UNITS_BINARY;
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
        c->units = EBM_UNITS_SPIN;
        c->init = EBM_INIT_ORTHOGONAL;
        c->lr = 0.01;
        c->schedule = OPTIM_INVSQRT;
        c->steps = 100000;
    }
}

static void usage(const trainer_config *c, FILE *f)
{
    const int lmi = c->method == EBM_ESTIMATOR_UCD_LMI, pcd = c->method == EBM_ESTIMATOR_PCD;
    fprintf(f,
            "usage: %s [options]\n"
            "  Train an RBM or DBM by %s on binarised images (docs/demo.md).\n"
            "data:\n"
            "  --data fashion|mnist|bas    data set (default %s)\n"
            "  --data-dir DIR              where it is (Fashion-MNIST: %s;\n"
            "                              MNIST: %s, see make mnist-data)\n"
            "  --bas-side N                side of the bars-and-stripes images (default %d)\n"
            "  --train-rows N, --test-rows N  use only the first N images (0: all)\n"
            "  --binarize threshold|bernoulli|8bit  (default %s)\n"
            "model:\n"
            "  --layers N0,N1,...          layer sizes, visible first (default %s)\n"
            "  --units binary|spin         unit values {0,1} or {-1,+1} (default %s)\n"
            "  --init orthogonal|gaussian  weight initialisation (default %s), --init-scale X (%g)\n"
            "optimiser:\n"
            "  --optimizer sgd|adam (%s), --lr X (%g), --momentum X (0),\n"
            "  --schedule constant|invsqrt|cosine (%s), --gamma X (1e-3: lr/sqrt(1+gamma t)),\n"
            "  --clip X (gradient norm clipping, 0: none), --batch N (%lld)\n"
            "estimator:\n"
            "  --k N                       %s (default: the library's, %s)\n"
            "%s%s"
            "  --marginalize none|even|odd|both  what f sums out (default: the library's, %s)\n"
            "  --positive auto|exact|mean-field|coupled  positive phase (default auto)\n"
            "%s"
            "run:\n"
            "  --steps N (default %lld, total), --minutes X (training time budget, total)\n"
            "  --seed N (1), --out DIR (default examples/out/%s)\n"
            "  --checkpoint-every N (%lld), --resume FILE (a checkpoint.ckpt)\n"
            "  --log-every N (%lld), --sample-every N (%lld; 0: only at the end)\n"
            "evaluation:\n"
            "  --samples N (%lld), --mh-steps N (%lld), --completions N (%lld)\n"
            "  --eval auto|ais|none (auto: exact when enumeration is cheap, else AIS)\n"
            "  --ais-chains N (%lld), --ais-betas N (%lld)\n",
            c->prog, c->title, data_names[c->data], DATA_FASHION_MNIST_DIR, DATA_MNIST_JSON_DIR,
            c->bas_side, binarize_names[c->binarize],
            c->method == EBM_ESTIMATOR_UCD ? "N,1000" : "N,N,N with N visible units",
            units_names[c->units], init_names[c->init], c->init_scale,
            optimizer_names[c->optimizer], c->lr, schedule_names[c->schedule],
            (long long)c->batch,
            pcd ? "Gibbs sweeps per step" : "the step k of the estimate",
            pcd ? "1" : lmi ? "0" : "1",
            pcd ? "  --chains N                  persistent chains (default: the batch size)\n" : "",
            pcd ? "" : "  --cap N                     cap on coupling steps (0: none; biased)\n",
            lmi ? "both" : "even",
            lmi ? "  --search-sweeps N           local-search sweep cap (default 10000)\n" : "",
            (long long)c->steps, method_flag(c->method), (long long)c->checkpoint_every,
            (long long)c->log_every, (long long)c->sample_every, (long long)c->n_samples,
            (long long)c->mh_steps, (long long)c->n_completions, (long long)c->ais_chains,
            (long long)c->ais_betas);
}

static int parse_layers(const char *val, trainer_config *c)
{
    int n = 0;
    for (const char *p = val; *p != '\0';) {
        char *end;
        errno = 0;
        const long long v = strtoll(p, &end, 10);
        if (errno || end == p || v < 1 || v > INT32_MAX || n == EBM_MAX_LAYERS ||
            (*end != ',' && *end != '\0')) {
            return -1;
        }
        c->layers[n++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    if (n < 2) {
        return -1;
    }
    c->n_layers = n;
    return 0;
}

/* @return 0, 1 for --help, 2 for a bad option */
static int parse_options(trainer_config *c, int argc, char **argv)
{
    const int lmi = c->method == EBM_ESTIMATOR_UCD_LMI, pcd = c->method == EBM_ESTIMATOR_PCD;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val;
        size_t len;
        const int rc = cli_next_option(argc, argv, &i, &len, &val);
        if (rc == 1) {
            usage(c, stdout);
            return 1;
        }
        if (rc != 0) {
            complain(c, "%s needs a value", arg);
            return 2;
        }
        int64_t iv = 0;
        int bad = 0, k;
#define IS(name) cli_is_option(arg, len, name)
#define INT_OPT(name, lo, hi, field)                         \
    else if (IS(name))                                       \
    {                                                        \
        bad = cli_parse_int(val, lo, hi, &iv);               \
        if (!bad) {                                          \
            field = iv;                                      \
        }                                                    \
    }
#define DBL_OPT(name, lo, hi, field) \
    else if (IS(name))               \
    {                                \
        bad = cli_parse_double(val, lo, hi, &field); \
    }
#define NAME_OPT(name, names, lo, field)                                           \
    else if (IS(name))                                                           \
    {                                                                            \
        k = pick(val, names, lo, (int)(sizeof names / sizeof names[0]));         \
        bad = k < 0;                                                             \
        if (!bad) {                                                              \
            field = k;                                                           \
        }                                                                        \
    }
        if (0) {
        }
        NAME_OPT("--data", data_names, 0, c->data)
        else if (IS("--data-dir")) { c->data_dir = val; }
        INT_OPT("--bas-side", 1, 12, c->bas_side)
        INT_OPT("--train-rows", 0, INT64_C(1) << 40, c->train_rows)
        INT_OPT("--test-rows", 0, INT64_C(1) << 40, c->test_rows)
        NAME_OPT("--binarize", binarize_names, 1, c->binarize)
        else if (IS("--layers")) { bad = parse_layers(val, c); }
        NAME_OPT("--units", units_names, 0, c->units)
        NAME_OPT("--init", init_names, 0, c->init)
        DBL_OPT("--init-scale", 1e-12, 1e6, c->init_scale)
        NAME_OPT("--optimizer", optimizer_names, 0, c->optimizer)
        DBL_OPT("--lr", 1e-12, 1e6, c->lr)
        DBL_OPT("--momentum", 0.0, 0.999999, c->momentum)
        NAME_OPT("--schedule", schedule_names, 0, c->schedule)
        DBL_OPT("--gamma", 1e-12, 1e6, c->gamma)
        DBL_OPT("--clip", 0.0, 1e30, c->clip)
        INT_OPT("--batch", 1, INT64_C(1) << 24, c->batch)
        INT_OPT("--k", 0, INT64_C(1) << 30, c->k)
        else if (IS("--chains") && pcd) { bad = cli_parse_int(val, 1, INT64_C(1) << 24, &c->chains); }
        else if (IS("--cap") && !pcd) { bad = cli_parse_int(val, 0, INT64_C(1) << 40, &c->cap); }
        NAME_OPT("--marginalize", marginalize_names, 0, c->marginalize)
        NAME_OPT("--positive", positive_names, 0, c->positive)
        else if (IS("--search-sweeps") && lmi) { bad = cli_parse_int(val, 1, INT64_C(1) << 40, &c->search_sweeps); }
        INT_OPT("--steps", 0, INT64_C(1) << 50, c->steps)
        DBL_OPT("--minutes", 0.0, 1e9, c->minutes)
        else if (IS("--seed")) {
            bad = cli_parse_int(val, 0, INT64_MAX, &iv);
            c->seed = (uint64_t)iv;
        }
        else if (IS("--out")) { c->out = val; }
        INT_OPT("--checkpoint-every", 0, INT64_C(1) << 50, c->checkpoint_every)
        else if (IS("--resume")) { c->resume = val; }
        INT_OPT("--log-every", 0, INT64_C(1) << 50, c->log_every)
        INT_OPT("--sample-every", 0, INT64_C(1) << 50, c->sample_every)
        INT_OPT("--samples", 0, 4096, c->n_samples)
        INT_OPT("--mh-steps", 0, INT64_C(1) << 30, c->mh_steps)
        INT_OPT("--completions", 0, 4096, c->n_completions)
        NAME_OPT("--eval", eval_names, 0, c->eval)
        INT_OPT("--ais-chains", 2, INT64_C(1) << 24, c->ais_chains)
        INT_OPT("--ais-betas", 1, INT64_C(1) << 30, c->ais_betas)
        else {
            complain(c, "unknown option %s (--help lists them)", arg);
            return 2;
        }
#undef IS
#undef INT_OPT
#undef DBL_OPT
#undef NAME_OPT
        if (bad) {
            complain(c, "bad value '%s' for %.*s (--help lists the choices)", val, (int)len, arg);
            return 2;
        }
    }
    if (c->schedule == OPTIM_COSINE && c->steps == 0) {
        complain(c, "--schedule cosine needs --steps (the length of the decay)");
        return 2;
    }
    if (c->steps == 0 && c->minutes == 0.0) {
        complain(c, "give --steps or --minutes (or both)");
        return 2;
    }
    return 0;
}

/* The settings of a run, as stored in its checkpoints: first those a resumed
 * run must share (they fix the model, the data and the optimiser's state),
 * then, after " | ", those it may change (with a warning), e.g. a --cap
 * added to rescue a run whose coupling does not meet. */
static void config_text(const run *r, char *buf, size_t size)
{
    const trainer_config *c = r->c;
    int at = snprintf(buf, size,
                      "method=%s data=%s bas_side=%d train_rows=%lld binarize=%s units=%s "
                      "layers=",
                      method_flag(c->method), data_names[c->data], c->bas_side,
                      (long long)c->train_rows, binarize_names[c->binarize],
                      units_names[c->units]);
    for (int l = 0; l < c->n_layers && at > 0 && (size_t)at < size; l++) {
        at += snprintf(buf + at, size - (size_t)at, "%s%lld", l ? "," : "", (long long)c->layers[l]);
    }
    if (at > 0 && (size_t)at < size) {
        snprintf(buf + at, size - (size_t)at,
                 " optimizer=%s momentum=%s batch=%lld chains=%lld seed=%llu%s | lr=%.17g "
                 "schedule=%s gamma=%.17g clip=%.17g k=%lld cap=%lld marginalize=%d "
                 "positive=%d search_sweeps=%lld",
                 optimizer_names[c->optimizer], c->momentum > 0 ? "on" : "off",
                 (long long)c->batch, (long long)c->chains, (unsigned long long)c->seed,
                 c->schedule == OPTIM_COSINE ? " cosine" : "", c->lr, schedule_names[c->schedule],
                 c->gamma, c->clip, (long long)c->k, (long long)c->cap, c->marginalize,
                 c->positive, (long long)c->search_sweeps);
    }
}

/* Length of the part before " | " (the whole text if there is none). */
static size_t fixed_part(const char *text)
{
    const char *bar = strstr(text, " | ");
    return bar != NULL ? (size_t)(bar - text) : strlen(text);
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
    r->enc = data_encoding_make(c->binarize, c->units == EBM_UNITS_SPIN);
    r->dim = data_encoded_dim(&r->enc, r->train.dim);
    return 0;
}

static int build_model(run *r)
{
    trainer_config *c = r->c;
    char err[ERR_SIZE] = "";
    if (c->n_layers == 0) {
        c->layers[0] = r->dim;
        if (c->method == EBM_ESTIMATOR_UCD) {
            c->layers[1] = c->data == TRAINER_BAS ? r->dim : 1000;
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
    int rc = ebm_model_create(&r->m, c->n_layers, c->layers, c->units, c->units, err, sizeof err);
    if (rc != EBM_OK) {
        return complain(c, "ebm_model_create: %s", err);
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
    if ((rc = ebm_rng_create(&r->rng, c->seed, 1)) != EBM_OK) {
        return complain(c, "ebm_rng_create: %s", ebm_strerror(rc));
    }
    return 0;
}

static int set_option(run *r, int option, int64_t value, const char *name)
{
    const int rc = ebm_estimator_set_int(r->e, option, value);
    if (rc != EBM_OK) {
        return complain(r->c, "%s: %s", name, ebm_estimator_errmsg(r->e));
    }
    return 0;
}

static int build_estimator(run *r)
{
    trainer_config *c = r->c;
    int rc = ebm_estimator_create(&r->e, r->m, c->method);
    if (rc != EBM_OK) {
        return complain(c, "ebm_estimator_create: %s", ebm_model_errmsg(r->m));
    }
    if ((c->k >= 0 && set_option(r, EBM_ESTIMATOR_K, c->k, "--k")) ||
        (c->cap > 0 && set_option(r, EBM_ESTIMATOR_MAX_STEPS, c->cap, "--cap")) ||
        (c->marginalize >= 0 &&
         set_option(r, EBM_ESTIMATOR_MARGINALIZE, c->marginalize, "--marginalize")) ||
        set_option(r, EBM_ESTIMATOR_POSITIVE, c->positive, "--positive") ||
        (c->method == EBM_ESTIMATOR_UCD_LMI &&
         set_option(r, EBM_ESTIMATOR_SEARCH_SWEEPS, c->search_sweeps, "--search-sweeps")) ||
        (c->method == EBM_ESTIMATOR_PCD &&
         set_option(r, EBM_ESTIMATOR_CHAINS, c->chains > 0 ? c->chains : c->batch, "--chains"))) {
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
    const size_t fixed = fixed_part(r->config_text);
    if (ck.config == NULL || fixed_part(ck.config) != fixed ||
        strncmp(ck.config, r->config_text, fixed) != 0) {
        complain(c, "--resume: %s was written with other settings:\n  it has:  %s\n  now:     %s",
                 c->resume, ck.config != NULL ? ck.config : "(none)", r->config_text);
        checkpoint_free(&ck);
        return 1;
    }
    if (strcmp(ck.config, r->config_text) != 0) {
        fprintf(stderr, "%s: note: resuming with other tunable settings\n  it had:  %s\n  now:     %s\n",
                c->prog, ck.config + fixed + 3, r->config_text + fixed + 3);
    }
    rc = checkpoint_restore(&ck, r->m, r->rng, &r->opt, r->e, err, sizeof err);
    if (rc == CHECKPOINT_OK) {
        r->step = ck.iteration;
        r->seconds_before = ck.seconds;
        fprintf(stderr, "%s: resumed from %s at step %lld (%.1f s of training)\n", c->prog,
                c->resume, (long long)r->step, r->seconds_before);
    }
    checkpoint_free(&ck);
    return rc == CHECKPOINT_OK ? 0 : complain(c, "--resume: %s", err);
}

/* ------------------------------------------------------------------------ */
/* Pictures                                                                 */
/* ------------------------------------------------------------------------ */

/* Tile n grey images (rows of grey, stride ld) into cols columns, each pixel
 * PICTURE_SCALE x PICTURE_SCALE, and write a PNG. */
static int write_grid(const run *r, const char *path, const float *grey, int64_t n, int64_t ld,
                      int cols)
{
    uint8_t *tile = NULL, *big = NULL;
    int w, h;
    int rc = image_tile(&tile, &w, &h, grey, n, ld, r->train.height, r->train.width, cols, 1,
                        0.0f, 1.0f);
    if (rc == IMAGE_OK) {
        const int s = PICTURE_SCALE;
        big = malloc((size_t)w * s * (size_t)h * s);
        if (big == NULL) {
            rc = IMAGE_ENOMEM;
        } else {
            for (int y = 0; y < h * s; y++) {
                for (int x = 0; x < w * s; x++) {
                    big[(size_t)y * (size_t)(w * s) + (size_t)x] = tile[(y / s) * w + x / s];
                }
            }
            rc = image_png_write(path, w * s, h * s, 1, big, (size_t)(w * s));
        }
    }
    free(tile);
    free(big);
    if (rc != IMAGE_OK) {
        return complain(r->c, "%s: %s", path, image_strerror(rc));
    }
    return 0;
}

/* Visible layers of n states (stride width) to grey rows (stride pixels). */
static void visible_to_grey(const run *r, int64_t n, const float *x, float *grey)
{
    data_decode(&r->enc, n, r->train.dim, x, r->width, grey, r->train.dim);
}

/*
 * Samples as Taniguchi et al. section 4.4 draws them: uniform random states,
 * the local search to a local minimum of E, then a few MH_UNIFORM steps, and
 * the visible layer. Its own stream (seed, 3 + step): pictures never move
 * the training generator. *accept receives the MH acceptance rate.
 */
static int write_samples(const run *r, const char *path, int64_t step, double *accept,
                         double *sweeps_mean)
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
        rc = ebm_model_random_state(r->m, rng, n, x, r->width, NULL, 0);
    }
    if (rc == EBM_OK) {
        rc = ebm_model_local_search(r->m, rng, n, x, r->width, NULL, 0, c->search_sweeps, sweeps);
        rc = rc > 0 ? EBM_OK : rc; /* rows stopped by the cap are still pictures */
    }
    double acc_sum = 0.0;
    if (rc == EBM_OK && c->mh_steps > 0) {
        rc = ebm_sampler_create(&s, r->m, EBM_SAMPLER_MH_UNIFORM);
        for (int64_t t = 0; rc == EBM_OK && t < c->mh_steps; t++) {
            rc = ebm_sampler_step(s, rng, n, x, r->width);
            acc_sum += ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE);
        }
    }
    if (rc != EBM_OK) {
        complain(c, "samples: %s (%s)", ebm_error_name(rc),
                 s != NULL ? ebm_sampler_errmsg(s) : ebm_model_errmsg(r->m));
    } else {
        double sw = 0.0;
        for (int64_t i = 0; i < n; i++) {
            sw += (double)sweeps[i];
        }
        *sweeps_mean = sw / (double)n;
        *accept = c->mh_steps > 0 ? acc_sum / (double)c->mh_steps : NAN;
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
static int write_completions(const run *r, const char *path)
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
        rc = ebm_model_random_state(r->m, rng, n, x, r->width, clamp, 0);
        if (rc == EBM_OK) {
            rc = ebm_model_local_search(r->m, rng, n, x, r->width, clamp, 0, c->search_sweeps,
                                        NULL);
            rc = rc > 0 ? EBM_OK : rc;
        }
        if (rc != EBM_OK) {
            snprintf(err, sizeof err, "%s", ebm_model_errmsg(r->m));
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

static int save_checkpoint(const run *r, double seconds)
{
    char path[4200], err[ERR_SIZE] = "";
    snprintf(path, sizeof path, "%s/checkpoint.ckpt", r->c->out);
    const int rc = checkpoint_save(path, r->m, r->rng, &r->opt, r->e, r->step, seconds,
                                   r->config_text, err, sizeof err);
    return rc == CHECKPOINT_OK ? 0 : complain(r->c, "checkpoint: %s", err);
}

static int open_csv(run *r)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/train.csv", r->c->out);
    const int append = r->c->resume != NULL;
    FILE *probe = append ? fopen(path, "r") : NULL;
    const int has_header = probe != NULL;
    if (probe != NULL) {
        fclose(probe);
    }
    r->csv = fopen(path, append ? "a" : "w");
    if (r->csv == NULL) {
        return complain(r->c, "cannot write %s: %s", path, strerror(errno));
    }
    if (!has_header) {
        fprintf(r->csv, "step,seconds,lr,grad_norm,tau_mean,tau_max,positive_tau_mean,"
                        "positive_tau_max,capped,sweeps_mean,search_capped,accept_rate,"
                        "mean_field_missed\n");
    }
    return 0;
}

/* Statistics averaged between two progress lines. */
typedef struct window {
    int64_t steps;
    double tau, tau_max, ptau, sweeps, accept, capped, mf_missed;
} window;

static double stat(const run *r, int s)
{
    return ebm_estimator_stat(r->e, s);
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
    if (c->method == EBM_ESTIMATOR_PCD) {
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
        seconds = r->seconds_before + (cli_now() - t0);
        if ((c->steps > 0 && r->step >= c->steps) ||
            (c->minutes > 0 && seconds >= c->minutes * 60.0)) {
            break;
        }
        int rc = data_draw_rows(r->rows, c->batch, r->train.n, r->rng);
        if (rc == DATA_OK) {
            rc = data_batch(&r->train, &r->enc, r->rng, r->rows, c->batch, r->batch, r->dim, err,
                            sizeof err);
        }
        if (rc != DATA_OK) {
            return complain(c, "batch: %s %s", data_strerror(rc), err);
        }
        rc = ebm_estimator_gradient(r->e, r->rng, c->batch, r->batch, r->dim, r->grad);
        if (rc != EBM_OK) {
            return complain(c, "step %lld: ebm_estimator_gradient: %s", (long long)r->step + 1,
                            ebm_estimator_errmsg(r->e));
        }
        const double lr = optim_rate(&r->opt);
        rc = optim_step(&r->opt, r->m, r->grad);
        if (rc != EBM_OK) {
            return complain(c, "step %lld: update: %s", (long long)r->step + 1,
                            ebm_model_errmsg(r->m));
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
        r->stat_steps++;
        r->tau_sum += stat(r, EBM_ESTIMATOR_STAT_TAU_MEAN);
        r->tau_max = fmax(r->tau_max, stat(r, EBM_ESTIMATOR_STAT_TAU_MAX));
        r->ptau_sum += stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN);
        r->ptau_max = fmax(r->ptau_max, stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX));
        r->capped += stat(r, EBM_ESTIMATOR_STAT_CAPPED);
        seconds = r->seconds_before + (cli_now() - t0);
        if (c->log_every > 0 && r->step % c->log_every == 0) {
            fprintf(r->csv, "%lld,%.3f,%.6g,%.6g,%.4f,%.0f,%.4f,%.0f,%.0f,%.3f,%.0f,%.5f,%.0f\n",
                    (long long)r->step, seconds, lr, r->opt.last_norm,
                    stat(r, EBM_ESTIMATOR_STAT_TAU_MEAN), stat(r, EBM_ESTIMATOR_STAT_TAU_MAX),
                    stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN),
                    stat(r, EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX),
                    stat(r, EBM_ESTIMATOR_STAT_CAPPED), stat(r, EBM_ESTIMATOR_STAT_SWEEPS_MEAN),
                    stat(r, EBM_ESTIMATOR_STAT_SEARCH_CAPPED),
                    stat(r, EBM_ESTIMATOR_STAT_ACCEPT_RATE),
                    stat(r, EBM_ESTIMATOR_STAT_MEAN_FIELD_MISSED));
            fflush(r->csv);
        }
        const double now = cli_now();
        if (now - last_print >= 5.0 || r->step - step0 <= 3) {
            progress(r, &w, seconds, r->step - step0, now - t0);
            memset(&w, 0, sizeof w);
            last_print = now;
        }
        if (c->sample_every > 0 && r->step % c->sample_every == 0) {
            double acc, sw;
            snprintf(path, sizeof path, "%s/samples.png", c->out);
            if (write_samples(r, path, r->step, &acc, &sw)) {
                return 1;
            }
        }
        if (c->checkpoint_every > 0 && r->step % c->checkpoint_every == 0 &&
            save_checkpoint(r, seconds)) {
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
} result;

static int64_t smaller_parity_class(const ebm_model_t *m, int hidden_only)
{
    int64_t even = 0, odd = 0;
    for (int64_t l = hidden_only ? 1 : 0; l < ebm_model_num_layers(m); l++) {
        if (l % 2 == 0) {
            even += ebm_model_layer_size(m, l);
        } else {
            odd += ebm_model_layer_size(m, l);
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

static int evaluate(const run *r, result *res)
{
    const trainer_config *c = r->c;
    res->log_z = res->log_z_se = res->exact_log_z = res->ll_mean = res->exact_ll_mean = NAN;
    res->ais_s = res->ll_s = res->exact_s = 0.0;
    res->is_bound = ebm_model_num_layers(r->m) > 2;
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
    /* Exact where enumeration is cheap: log Z enumerates the smaller parity
     * class; a DBM's log p(v) enumerates its smaller hidden class per row. */
    const int64_t bits_z = smaller_parity_class(r->m, 0), bits_row = smaller_parity_class(r->m, 1);
    const int exact = c->eval == TRAINER_EVAL_AUTO && bits_z <= EXACT_LOG_Z_BITS &&
                      bits_row <= EXACT_ROW_BITS && (double)n * ldexp(1.0, (int)bits_row) <= 1e9;
    if (exact) {
        double t = cli_now();
        rc = ebm_model_log_partition_exact(r->m, &res->exact_log_z);
        if (rc == EBM_OK) {
            rc = ebm_model_log_likelihood(r->m, res->exact_log_z, n, x, r->dim, ll);
        }
        if (rc != EBM_OK) {
            complain(c, "exact evaluation: %s", ebm_model_errmsg(r->m));
            goto done;
        }
        res->exact_ll_mean = mean_of(ll, n);
        res->exact_s = cli_now() - t;
    }
    if (!exact || res->is_bound) {
        double t = cli_now();
        rc = ebm_model_log_partition_ais(r->m, rng, c->ais_chains, c->ais_betas, &res->log_z,
                                         &res->log_z_se);
        res->ais_s = cli_now() - t;
        if (rc != EBM_OK) {
            complain(c, "AIS: %s", ebm_model_errmsg(r->m));
            goto done;
        }
        t = cli_now();
        rc = res->is_bound ? ebm_model_log_likelihood_bound(r->m, res->log_z, n, x, r->dim, ll)
                           : ebm_model_log_likelihood(r->m, res->log_z, n, x, r->dim, ll);
        res->ll_s = cli_now() - t;
        if (rc != EBM_OK) {
            complain(c, "log-likelihood: %s", ebm_model_errmsg(r->m));
            goto done;
        }
        res->ll_mean = mean_of(ll, n);
    }
done:
    ebm_rng_destroy(rng);
    free(x);
    free(ll);
    return rc != 0;
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
    printf(", %s units; data %s (%lld train, %lld test images), %s\n", units_names[c->units],
           data_names[c->data], (long long)r->train.n, (long long)r->test.n,
           binarize_names[c->binarize]);
    if (c->method != EBM_ESTIMATOR_PCD && r->stat_steps > 0) {
        printf("coupling over %lld steps: tau mean %.3f (max %.0f), positive phase tau mean "
               "%.3f (max %.0f); rows stopped by --cap: %.0f\n", (long long)r->stat_steps,
               r->tau_sum / (double)r->stat_steps, r->tau_max,
               r->ptau_sum / (double)r->stat_steps, r->ptau_max, r->capped);
    }
    if (isfinite(res->exact_log_z)) {
        printf("exact:  log Z = %.3f, test log p(v) = %.3f nats/image (%.1f s)\n",
               res->exact_log_z, res->exact_ll_mean, res->exact_s);
    }
    if (isfinite(res->log_z)) {
        printf("AIS (%lld chains, %lld betas): log Z = %.3f +- %.3f (%.1f s)\n",
               (long long)c->ais_chains, (long long)c->ais_betas, res->log_z, res->log_z_se,
               res->ais_s);
        printf("test %s = %.3f nats/image (%.1f s)\n",
               res->is_bound ? "log-likelihood lower bound (mean field)" : "log-likelihood",
               res->ll_mean, res->ll_s);
    }
    if (c->n_samples > 0) {
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
                   "capped_rows=%.0f\ntau_max=%.0f\npositive_tau_max=%.0f\nconfig=%s\n",
                c->title, (long long)r->step, train_s, (long long)c->ais_chains,
                (long long)c->ais_betas, res->log_z, res->log_z_se, res->ais_s, res->ll_mean,
                res->is_bound, res->ll_s, res->exact_log_z, res->exact_ll_mean, r->capped, r->tau_max,
                r->ptau_max, r->config_text);
        fclose(f);
    }
    /* One row of the demo's table (Makefile: make demo). */
    snprintf(path, sizeof path, "%s/table_row.txt", c->out);
    f = fopen(path, "w");
    if (f != NULL) {
        char ll[64], lz[64];
        const double shown = isfinite(res->ll_mean) ? res->ll_mean : res->exact_ll_mean;
        snprintf(ll, sizeof ll, "%.2f", shown);
        if (isfinite(res->log_z)) {
            snprintf(lz, sizeof lz, "%.2f +- %.2f", res->log_z, res->log_z_se);
        } else {
            snprintf(lz, sizeof lz, "%.2f (exact)", res->exact_log_z);
        }
        fprintf(f, "%-8s %8lld %10s %18s %20s %9.1f s\n", c->title, (long long)r->step, dur, ll,
                lz, res->ais_s + res->ll_s + res->exact_s);
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
    ebm_model_destroy(r->m);
    ebm_rng_destroy(r->rng);
    optim_free(&r->opt);
    free(r->batch);
    free(r->grad);
    free(r->rows);
    data_set_free(&r->train);
    data_set_free(&r->test);
}

int trainer_main(trainer_config *c, int argc, char **argv)
{
    int rc = parse_options(c, argc, argv);
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
    if (cli_make_dirs(c->out) != 0) {
        return complain(c, "cannot create %s: %s", c->out, strerror(errno));
    }
    run r;
    memset(&r, 0, sizeof r);
    r.c = c;
    rc = load_data(&r) || build_model(&r) || build_estimator(&r);
    if (rc == 0) {
        config_text(&r, r.config_text, sizeof r.config_text);
        rc = (c->resume != NULL && resume(&r)) || open_csv(&r);
    }
    double train_s = 0.0;
    if (rc == 0) {
        fprintf(stderr, "%s: %s, layers", c->prog, c->title);
        for (int l = 0; l < c->n_layers; l++) {
            fprintf(stderr, "%s%lld", l ? "-" : " ", (long long)c->layers[l]);
        }
        fprintf(stderr, " (%lld parameters), %lld training images, batch %lld, lr %g\n",
                (long long)r.n_params, (long long)r.train.n, (long long)c->batch, c->lr);
        rc = train(&r, &train_s);
    }
    if (rc == 0) {
        rc = save_checkpoint(&r, train_s);
    }
    char path[4200];
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/model.ebm", c->out);
        if (ebm_model_save(r.m, path) != EBM_OK) {
            rc = complain(c, "%s: %s", path, ebm_model_errmsg(r.m));
        }
    }
    double accept = NAN, sweeps = NAN, pictures_s = 0.0;
    if (rc == 0) {
        const double t = cli_now();
        snprintf(path, sizeof path, "%s/samples.png", c->out);
        rc = write_samples(&r, path, r.step, &accept, &sweeps);
        snprintf(path, sizeof path, "%s/completion.png", c->out);
        rc = rc || write_completions(&r, path);
        pictures_s = cli_now() - t;
    }
    result res;
    if (rc == 0) {
        fprintf(stderr, "%s: evaluating on %lld test images...\n", c->prog, (long long)r.test.n);
        rc = evaluate(&r, &res);
    }
    if (rc == 0) {
        report(&r, &res, train_s, pictures_s, accept, sweeps);
    }
    free_run(&r);
    return rc == 0 ? 0 : 1;
}
