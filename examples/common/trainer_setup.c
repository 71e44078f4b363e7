/* A training run's set-up (trainer_run.h): the data, the model and its
 * initialisation, the estimator (or a distributed rank's shards), the
 * optimiser and the average of the iterates, --resume from a checkpoint,
 * and the centring offsets of --centre data with their moves at each step. */
#include "trainer_run.h"

#include "checkpoint.h"
#include "data.h"
#include "dist.h"
#include "optim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int trainer_load_data(run *r)
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
        return trainer_complain(c, "%s: %s", data_strerror(rc), err);
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

int trainer_build_model(run *r)
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
        return trainer_complain(c, "--layers starts with %lld, but the %s images have %lld "
                                   "visible units after --binarize %s",
                                (long long)c->layers[0], trainer_data_names[c->data],
                                (long long)r->dim, trainer_binarize_names[c->binarize]);
    }
    int rc = new_model(c, &r->m, err, sizeof err);
    if (rc != EBM_OK) {
        return trainer_complain(c, "%s", err);
    }
    ebm_rng_t *init_rng;
    if ((rc = ebm_rng_create(&init_rng, c->seed, 0)) != EBM_OK) {
        return trainer_complain(c, "ebm_rng_create: %s", ebm_strerror(rc));
    }
    rc = ebm_model_init(r->m, init_rng, c->init, c->init_scale);
    ebm_rng_destroy(init_rng);
    if (rc != EBM_OK) {
        return trainer_complain(c, "ebm_model_init: %s", ebm_model_errmsg(r->m));
    }
    r->width = ebm_model_state_width(r->m);
    r->n_params = ebm_model_param_count(r->m);
    if (c->average_from >= 0 && (rc = new_model(c, &r->m_avg, err, sizeof err)) != EBM_OK) {
        return trainer_complain(c, "%s (--average-from)", err);
    }
    if ((rc = ebm_rng_create(&r->rng, c->seed, 1)) != EBM_OK) {
        return trainer_complain(c, "ebm_rng_create: %s", ebm_strerror(rc));
    }
    return 0;
}

static int set_option(run *r, ebm_estimator_t *e, int option, int64_t value, const char *name)
{
    const int rc = ebm_estimator_set_int(e, option, value);
    if (rc != EBM_OK) {
        return trainer_complain(r->c, "%s: %s", name, ebm_estimator_errmsg(e));
    }
    return 0;
}

/* --global-prob: the training rows encoded once, as a batch encodes them
 * (a Bernoulli encoding draws from its own stream, PROPOSAL_STREAM), into
 * r->proposal; the estimators copy them. @return 0, or 1 after a message */
static int proposal_rows(run *r)
{
    const trainer_config *c = r->c;
    if (r->proposal != NULL) {
        return 0;
    }
    const int64_t n = r->train.n;
    ebm_rng_t *rng = NULL;
    char err[ERR_SIZE] = "";
    r->proposal = malloc((size_t)(n * r->dim) * sizeof *r->proposal);
    int rc = r->proposal == NULL ? -1
             : ebm_rng_create(&rng, c->seed, PROPOSAL_STREAM) == EBM_OK ? DATA_OK
                                                                        : DATA_ERNG;
    if (rc == DATA_OK) {
        rc = data_batch(&r->train, &r->enc, rng, NULL, n, r->proposal, r->dim, err, sizeof err);
    }
    ebm_rng_destroy(rng);
    if (rc != DATA_OK) {
        free(r->proposal);
        r->proposal = NULL;
        return trainer_complain(c, "--global-prob: %s", rc == -1 ? "out of memory" : err);
    }
    return 0;
}

/* --global-prob and its proposal on e. @return 0, or 1 after a message */
static int set_global_moves(run *r, ebm_estimator_t *e)
{
    const trainer_config *c = r->c;
    if (c->global_prob == 0.0) {
        return 0;
    }
    if (proposal_rows(r)) {
        return 1;
    }
    int rc = ebm_estimator_set_double(e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_GLOBAL_PROB,
                                      c->global_prob);
    if (rc == EBM_OK) {
        rc = ebm_estimator_set_proposal(e, r->train.n, r->proposal, r->dim, c->flip_prob);
    }
    return rc == EBM_OK ? 0 : trainer_complain(c, "--global-prob: %s", ebm_estimator_errmsg(e));
}

/* A new estimator with the run's options, or NULL after a message. */
static ebm_estimator_t *new_estimator(run *r)
{
    trainer_config *c = r->c;
    ebm_estimator_t *e = NULL;
    int rc = ebm_estimator_create(&e, r->m, c->method);
    if (rc != EBM_OK) {
        trainer_complain(c, "ebm_estimator_create: %s", ebm_model_errmsg(r->m));
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
         trainer_complain(c, "--ladder: %s", ebm_estimator_errmsg(e))) ||
        (trainer_persistent(c->method) &&
         set_option(r, e, EBM_ESTIMATOR_CHAINS, c->chains > 0 ? c->chains : c->batch,
                    "--chains")) ||
        set_global_moves(r, e)) {
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
        trainer_persistent(c->method) ? (c->chains > 0 ? c->chains : c->batch) : 0;
    const int64_t replicas = c->method == EBM_ESTIMATOR_PT ? c->n_ladder : 1;
    if (dist_init(&r->dist, c->comm, c->shards, c->batch, chains, replicas, r->n_params, r->width,
                  err, sizeof err) != 0) {
        return trainer_complain(c, "%s", err);
    }
    for (int64_t i = 0; i < r->dist.hi - r->dist.lo; i++) {
        if ((r->dist.e[i] = new_estimator(r)) == NULL) {
            return 1;
        }
        if (dist_configure(&r->dist, i, r->dist.e[i]) != EBM_OK) {
            return trainer_complain(c, "shard %lld: %s", (long long)(r->dist.lo + i),
                                    ebm_estimator_errmsg(r->dist.e[i]));
        }
    }
    return 0;
}

int trainer_build_estimator(run *r)
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
        return trainer_complain(c, "optimiser: %s", why);
    }
    if (optim_init(&r->opt, &s, r->n_params) != OPTIM_OK) {
        return trainer_complain(c, "optimiser: out of memory");
    }
    if (optim_average_init(&r->avg, r->n_params, c->average_from) != OPTIM_OK) {
        return trainer_complain(c, "--average-from: out of memory");
    }
    r->batch = malloc((size_t)(c->batch * r->dim) * sizeof *r->batch);
    r->grad = malloc((size_t)r->n_params * sizeof *r->grad);
    r->rows = malloc((size_t)c->batch * sizeof *r->rows);
    if (r->batch == NULL || r->grad == NULL || r->rows == NULL) {
        return trainer_complain(c, "out of memory for a batch of %lld", (long long)c->batch);
    }
    return 0;
}

int trainer_resume(run *r)
{
    trainer_config *c = r->c;
    char err[ERR_SIZE] = "";
    checkpoint ck;
    int rc = checkpoint_load(&ck, c->resume, err, sizeof err);
    if (rc != CHECKPOINT_OK) {
        return trainer_complain(c, "--resume: %s", err);
    }
    const char *tunable = checkpoint_config_tunable(&ck, r->config_text);
    if (tunable == NULL) {
        trainer_complain(c,
                         "--resume: %s was written with other settings:\n  it has:  %s\n"
                         "  now:     %s",
                         c->resume, ck.config != NULL ? ck.config : "(none)", r->config_text);
        checkpoint_free(&ck);
        return 1;
    }
    /* r->config_text always holds " | " */
    const char *now_tunable = strstr(r->config_text, " | ") + 3;
    if (strcmp(tunable, now_tunable) != 0 && r->root) {
        fprintf(stderr,
                "%s: note: resuming with other tunable settings\n  it had:  %s\n"
                "  now:     %s\n",
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
    return rc == CHECKPOINT_OK ? 0 : trainer_complain(c, "--resume: %s", err);
}

/* p[j] = (count + 1) / (N + 2), the smoothed frequency of 1 (spin: of +1)
 * of each encoded unit over the training images (a Bernoulli encoding with
 * its own stream, AIS_BASE_STREAM). */
int trainer_training_means(run *r, double *p, const char *what)
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
        return trainer_complain(c, "%s: %s", what, rc == -1 ? "out of memory" : err);
    }
    return 0;
}

/*
 * --centre data. A fresh run's offsets (keep_law 0: the initial parameters
 * are read as centred ones): the visible units' trainer_training_means (spin: 2p -
 * 1), and 0.5 (spin: 0) for the hidden units, PyDeep's defaults; a resumed
 * run's come from its checkpoint. Then the scratch of trainer_centre_step.
 */
int trainer_centre_start(run *r)
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
        return trainer_complain(c, "--centre data: out of memory");
    }
    memset(r->centre_clamp, 1, (size_t)d); /* the visible layer */
    if (c->resume == NULL) {
        if (trainer_training_means(r, p, "--centre data") != 0) {
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
            return trainer_complain(c, "--centre data: %s", ebm_model_errmsg(r->m));
        }
    }
    free(p);
    return 0;
}

/* --centre data, before a step's gradient: move the offsets, with the law
 * kept, towards the batch's layer means: the visible units' mean and the
 * hidden layers' mean-field means given each row (10 iterations from the
 * offsets). */
int trainer_centre_step(run *r)
{
    const trainer_config *c = r->c;
    const int64_t w = r->width, d = r->dim, n = c->batch;
    if (ebm_model_get_offsets(r->m, r->centre_target) != EBM_OK) {
        return trainer_complain(c, "--centre data: %s", ebm_model_errmsg(r->m));
    }
    for (int64_t i = 0; i < n; i++) {
        memcpy(r->centre_mu + i * w, r->batch + i * d, (size_t)d * sizeof *r->batch);
        memcpy(r->centre_mu + i * w + d, r->centre_target + d, (size_t)(w - d) * sizeof *r->batch);
    }
    const int rc = ebm_model_mean_field(r->m, n, r->centre_mu, w, r->centre_clamp, 0, 10, 1e-4);
    if (rc < 0) {
        return trainer_complain(c, "step %lld: --centre data: ebm_model_mean_field: %s",
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
        return trainer_complain(c, "step %lld: --centre data: %s", (long long)r->step + 1,
                                ebm_model_errmsg(r->m));
    }
    return 0;
}
