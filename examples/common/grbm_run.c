/* train_grbm's run (grbm_run.h): the standardised data, the model and its
 * initialisation, the estimator and the pictures' sampler, the optimiser,
 * the pictures, the model files and checkpoints, --resume, and the
 * held-out rows of --eval-every (scored by heldout.h, shared with the
 * other trainers). */
#include "grbm_run.h"

#include "checkpoint.h"
#include "cli.h"
#include "png.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG GRBM_PROG

/* ---- data -------------------------------------------------------------- */

/* Per-pixel (or, global, one) mean and sd of the training images. */
static void fit_standardization(const options *o, const data_set *d, float *mean, float *sd)
{
    int rc = data_standardize_fit(d, (float)o->sd_floor, mean, sd);
    if (rc != DATA_OK) {
        cli_die(PROG, "data_standardize_fit", rc, data_strerror(rc));
    }
    if (o->global) {
        double s = 0.0, s2 = 0.0;
        const double count = (double)d->n * (double)d->dim;
        for (int64_t r = 0; r < d->n; r++) {
            for (int64_t p = 0; p < d->dim; p++) {
                const double v = d->x[r * d->dim + p];
                s += v;
                s2 += v * v;
            }
        }
        const double m = s / count, sdv = sqrt(s2 / count - m * m);
        for (int64_t p = 0; p < d->dim; p++) {
            mean[p] = (float)m;
            sd[p] = (float)sdv;
        }
    }
}

/* The training images (the first --limit), standardised, and with
 * --eval-every the test images. @return 0, or an exit status after a
 * message */
int grbm_load_data(grbm_run *r)
{
    const options *o = &r->o;
    char err[512];
    const int rc = data_load_fashion_mnist(&r->train, o->eval_every > 0 ? &r->test : NULL,
                                           o->data_dir, err, sizeof err);
    if (rc != DATA_OK) {
        fprintf(stderr, "train_grbm: %s\n", err);
        return 1;
    }
    if (o->limit > 0 && o->limit < r->train.n) {
        r->train.n = o->limit;
    }
    if (o->batch > r->train.n) {
        fprintf(stderr, "train_grbm: --batch %lld is larger than the %lld images\n",
                (long long)o->batch, (long long)r->train.n);
        return 2;
    }
    r->n0 = r->train.dim;
    r->px_mean = cli_xmalloc(PROG, (size_t)r->n0 * sizeof *r->px_mean);
    r->px_sd = cli_xmalloc(PROG, (size_t)r->n0 * sizeof *r->px_sd);
    fit_standardization(o, &r->train, r->px_mean, r->px_sd);
    r->enc = data_encoding_make(DATA_GREY, 0);
    r->enc.mean = r->px_mean;
    r->enc.sd = r->px_sd;
    return 0;
}

/* ---- model, estimator, sampler ----------------------------------------- */

/* The model, initialised as the published code (mu = 0, variances 1, b = 0,
 * W ~ N(0, 1/(n_v + n_h))) from the training stream, which training then
 * continues; with --average-from the average and its model. */
void grbm_build_model(grbm_run *r)
{
    const options *o = &r->o;
    const int64_t sizes[2] = {r->n0, o->hidden};
    char err[512];
    int rc = ebm_model_create(&r->m, 2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY, err,
                              sizeof err);
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_model_create", rc, err);
    }
    if ((rc = ebm_rng_create(&r->rng, o->seed, STREAM_TRAIN)) != EBM_OK) {
        cli_die(PROG, "ebm_rng_create", rc, "");
    }
    rc = ebm_model_init(r->m, r->rng, EBM_INIT_GAUSSIAN,
                        1.0 / sqrt((double)(r->n0 + o->hidden)));
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_model_init", rc, ebm_model_errmsg(r->m));
    }
    r->width = ebm_model_state_width(r->m);
    r->n_params = ebm_model_param_count(r->m);
    if (optim_average_init(&r->avg, r->n_params, o->average_from) != OPTIM_OK) {
        cli_die(PROG, "optim_average_init", EBM_ENOMEM, "out of memory");
    }
    if (optim_average_on(&r->avg) &&
        (rc = ebm_model_create(&r->m_avg, 2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY, err,
                               sizeof err)) != EBM_OK) {
        cli_die(PROG, "ebm_model_create", rc, err);
    }
}

/* EBM_ESTIMATOR_GRBM_CD with Gibbs-Langevin negative chains, and a sampler
 * configured alike, on the shown model, for the pictures. */
void grbm_build_estimator(grbm_run *r)
{
    const options *o = &r->o;
    const int so = EBM_ESTIMATOR_SAMPLER_OPTION;
    int rc;
    if ((rc = ebm_estimator_create(&r->e, r->m, EBM_ESTIMATOR_GRBM_CD)) != EBM_OK) {
        cli_die(PROG, "ebm_estimator_create", rc, ebm_model_errmsg(r->m));
    }
    ebm_estimator_t *e = r->e;
    if ((rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_K, o->gibbs_steps)) != EBM_OK ||
        (rc = ebm_estimator_set_int(e, EBM_ESTIMATOR_SAMPLER, EBM_SAMPLER_GIBBS_LANGEVIN)) ||
        (rc = ebm_estimator_set_int(e, so + EBM_SAMPLER_LANGEVIN_STEPS, o->langevin_steps)) ||
        (rc = ebm_estimator_set_double(e, so + EBM_SAMPLER_STEP_SIZE, o->step_size)) ||
        (rc = ebm_estimator_set_int(e, so + EBM_SAMPLER_SCALE_BY_VARIANCE, !o->precondition)) ||
        (rc = ebm_estimator_set_int(e, so + EBM_SAMPLER_PRECONDITION, o->precondition)) ||
        (rc = ebm_estimator_set_int(e, so + EBM_SAMPLER_ADJUST_AFTER, o->adjust))) {
        cli_die(PROG, "estimator options", rc, ebm_estimator_errmsg(e));
    }
    if ((rc = ebm_sampler_create(&r->sampler, r->m_avg != NULL ? r->m_avg : r->m,
                                 EBM_SAMPLER_GIBBS_LANGEVIN)) != EBM_OK) {
        cli_die(PROG, "ebm_sampler_create", rc, ebm_model_errmsg(r->m));
    }
    ebm_sampler_t *s = r->sampler;
    if ((rc = ebm_sampler_set_int(s, EBM_SAMPLER_LANGEVIN_STEPS, o->langevin_steps)) ||
        (rc = ebm_sampler_set_double(s, EBM_SAMPLER_STEP_SIZE, o->step_size)) ||
        (rc = ebm_sampler_set_int(s, EBM_SAMPLER_SCALE_BY_VARIANCE, !o->precondition)) ||
        (rc = ebm_sampler_set_int(s, EBM_SAMPLER_PRECONDITION, o->precondition)) ||
        (rc = ebm_sampler_set_int(s, EBM_SAMPLER_ADJUST_AFTER, o->adjust))) {
        cli_die(PROG, "sampler options", rc, ebm_sampler_errmsg(s));
    }
    r->pic_x = cli_xmalloc(PROG, (size_t)(o->samples * r->width) * sizeof *r->pic_x);
    r->pic_grey = cli_xmalloc(PROG, (size_t)(o->samples * r->n0) * sizeof *r->pic_grey);
    r->pic_mean = cli_xmalloc(PROG, (size_t)(o->samples * r->n0) * sizeof *r->pic_mean);
}

/* The optimiser (SGD, the cosine schedule over the epochs, or a constant
 * rate that train() decays over the time budget), the step buffers, and
 * the settings text a checkpoint keeps. */
void grbm_build_optimiser(grbm_run *r)
{
    const options *o = &r->o;
    r->grad = cli_xmalloc(PROG, (size_t)r->n_params * sizeof *r->grad);
    r->theta = cli_xmalloc(PROG, (size_t)r->n_params * sizeof *r->theta);
    r->batch = cli_xmalloc(PROG, (size_t)(o->batch * r->n0) * sizeof *r->batch);
    r->xrec = cli_xmalloc(PROG, (size_t)(o->batch * r->width) * sizeof *r->xrec);
    r->rec = cli_xmalloc(PROG, (size_t)(o->batch * r->n0) * sizeof *r->rec);
    r->perm = cli_xmalloc(PROG, (size_t)r->train.n * sizeof *r->perm);
    r->batches = r->train.n / o->batch;
    r->total = o->epochs * r->batches;
    r->budget = o->minutes > 0 ? 60.0 * o->minutes : INFINITY;
    r->time_schedule = o->minutes > 0 && !r->epochs_given;
    optim_settings os = optim_settings_default(o->lr); /* SGD, no momentum */
    os.schedule = r->time_schedule ? OPTIM_CONSTANT : OPTIM_COSINE;
    os.total_steps = r->total;
    os.clip_norm = o->clip;
    if (optim_init(&r->opt, &os, r->n_params) != OPTIM_OK) {
        cli_die(PROG, "optim_init", EBM_EVALUE, optim_settings_check(&os));
    }
    snprintf(r->config, sizeof r->config,
             "train_grbm hidden=%lld batch=%lld lr=%g epochs=%lld minutes=%g gibbs_steps=%lld "
             "langevin_steps=%lld step_size=%g adjust=%lld clip=%g standardize=%s sd_floor=%g "
             "limit=%lld seed=%llu precondition=%s",
             (long long)o->hidden, (long long)o->batch, o->lr, (long long)o->epochs,
             r->time_schedule ? o->minutes : 0.0, (long long)o->gibbs_steps,
             (long long)o->langevin_steps, o->step_size, (long long)o->adjust, o->clip,
             o->global ? "global" : "pixel", o->sd_floor, (long long)o->limit,
             (unsigned long long)o->seed, o->precondition ? "on" : "off");
}

/* ---- pictures ---------------------------------------------------------- */

/* Tile n rows of grey values (stride dim) into a PNG, 10 per row. */
void grbm_write_grid(const grbm_run *r, const char *name, const float *grey, int64_t n)
{
    const data_set *d = &r->train;
    uint8_t *img;
    int w, h;
    const int scale = image_scale_for(d->height, d->width, IMAGE_MIN_SIDE, 1);
    int rc = image_tile_scaled(&img, &w, &h, grey, n, d->dim, d->height, d->width, 10, 1, scale,
                               0.0f, 1.0f);
    if (rc != IMAGE_OK) {
        cli_die(PROG, "image_tile", EBM_EVALUE, image_strerror(rc));
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", r->o.out, name);
    if ((rc = image_png_write(path, w, h, 1, img, (size_t)w)) != IMAGE_OK) {
        cli_die(PROG, path, EBM_EIO, image_strerror(rc));
    }
    free(img);
}

/* Draw the pictures of m (the shown model, the sampler's): chains from
 * N(0, I), h ~ p(h | v), then the training sampler's steps; the final v and
 * E[v | h], un-standardised. From stream STREAM_PICTURES + step, so that
 * pictures never move training. @return the sampler's mean acceptance */
double grbm_draw_pictures(grbm_run *r, const ebm_model_t *m, int64_t step)
{
    const options *o = &r->o;
    const int64_t w = r->width, n = o->samples, d = r->n0;
    ebm_rng_t *rng;
    int rc = ebm_rng_create(&rng, o->seed, STREAM_PICTURES + (uint64_t)step);
    if (rc != EBM_OK) {
        cli_die(PROG, "ebm_rng_create", rc, "");
    }
    rc = ebm_sampler_set_int(r->sampler, EBM_SAMPLER_ITERATION, 0);
    if (rc == EBM_OK) {
        rc = ebm_model_random_state(m, rng, n, r->pic_x, w, NULL, 0);
    }
    if (rc == EBM_OK) {
        rc = ebm_model_layer_sample(m, 1, rng, n, r->pic_x, w);
    }
    double acc = 0.0;
    for (int64_t t = 0; t < o->gibbs_steps && rc == EBM_OK; t++) {
        rc = ebm_sampler_step(r->sampler, rng, n, r->pic_x, w);
        acc += ebm_sampler_stat(r->sampler, EBM_STAT_ACCEPT_RATE);
    }
    if (rc != EBM_OK) {
        cli_die(PROG, "sampling", rc, ebm_sampler_errmsg(r->sampler));
    }
    ebm_rng_destroy(rng);
    char name[64];
    data_decode(&r->enc, n, d, r->pic_x, w, r->pic_grey, d);
    snprintf(name, sizeof name, "samples_%08lld.png", (long long)step);
    grbm_write_grid(r, name, r->pic_grey, n);
    if ((rc = ebm_model_layer_mean(m, 0, n, r->pic_x, w, r->pic_mean, d)) != EBM_OK) {
        cli_die(PROG, "ebm_model_layer_mean", rc, ebm_model_errmsg(m));
    }
    data_decode(&r->enc, n, d, r->pic_mean, d, r->pic_grey, d);
    snprintf(name, sizeof name, "means_%08lld.png", (long long)step);
    grbm_write_grid(r, name, r->pic_grey, n);
    return acc / (double)o->gibbs_steps;
}

/* ---- model files and checkpoints ---------------------------------------- */

/* The model shown (pictures, --eval-every, model.ebm): with --average-from,
 * r->m_avg set to the average once it holds an iterate, else to the last
 * iterate (the pictures' sampler runs on r->m_avg); without, r->m itself. */
const ebm_model_t *grbm_shown_model(grbm_run *r)
{
    if (!optim_average_on(&r->avg)) {
        return r->m;
    }
    int rc = EBM_OK;
    if (r->avg.count > 0) {
        rc = optim_average_apply(&r->avg, r->m_avg);
    } else if ((rc = ebm_model_get_params(r->m, r->theta)) == EBM_OK) {
        rc = ebm_model_set_params(r->m_avg, r->theta);
    }
    if (rc != EBM_OK) {
        cli_die(PROG, "--average-from", rc, ebm_model_errmsg(r->m_avg));
    }
    return r->m_avg;
}

/* model.ebm (the model shown) and, with --average-from, model_raw.ebm (the
 * last iterate) (checkpoint_save_models), and train_grbm.ckpt (model,
 * training generator, optimiser, the average, step, training time).
 * @return 0, or -1 after a message */
int grbm_save_state(const grbm_run *r, const ebm_model_t *shown, double elapsed)
{
    char path[1024], err[1200];
    if (checkpoint_save_models(r->o.out, shown, optim_average_on(&r->avg) ? r->m : NULL, err,
                               sizeof err) != CHECKPOINT_OK) {
        fprintf(stderr, "train_grbm: %s\n", err);
        return -1;
    }
    snprintf(path, sizeof path, "%s/train_grbm.ckpt", r->o.out);
    if (checkpoint_save(path, r->m, r->rng, &r->opt, &r->avg, r->e, r->step, elapsed, r->config,
                        err, sizeof err) != CHECKPOINT_OK) {
        fprintf(stderr, "train_grbm: %s\n", err);
        return -1;
    }
    return 0;
}

/* --resume: the model, the training generator, the optimiser's step and
 * the average, once the checkpoint's settings are this run's. @return 0, or
 * an exit status after a message (2: other settings) */
int grbm_resume(grbm_run *r)
{
    const options *o = &r->o;
    char err[512];
    checkpoint ck;
    if (checkpoint_load(&ck, o->resume, err, sizeof err) != CHECKPOINT_OK) {
        fprintf(stderr, "train_grbm: --resume: %s\n", err);
        return 1;
    }
    if (ck.config == NULL || strcmp(ck.config, r->config) != 0) {
        fprintf(stderr, "train_grbm: --resume: %s was written with other settings:\n"
                        "  it has: %s\n  now:    %s\n",
                o->resume, ck.config != NULL ? ck.config : "(none)", r->config);
        checkpoint_free(&ck);
        return 2;
    }
    const int rc = checkpoint_restore(&ck, r->m, r->rng, &r->opt, &r->avg, r->e, err, sizeof err);
    r->step = ck.iteration;
    r->seconds_before = ck.seconds;
    checkpoint_free(&ck);
    if (rc != CHECKPOINT_OK) {
        fprintf(stderr, "train_grbm: --resume: %s\n", err);
        return 1;
    }
    fprintf(stderr, "train_grbm: resumed from %s at step %lld (%.1f s of training)\n",
            o->resume, (long long)r->step, r->seconds_before);
    return 0;
}


void grbm_prepare_heldout(grbm_run *r)
{
    const options *o = &r->o;
    if (o->eval_every <= 0) {
        return;
    }
    char err[512];
    const int64_t n = o->eval_rows < r->test.n ? o->eval_rows : r->test.n;
    r->heldout_x = cli_xmalloc(PROG, (size_t)(n * r->n0) * sizeof *r->heldout_x);
    r->heldout_ll = cli_xmalloc(PROG, (size_t)n * sizeof *r->heldout_ll);
    const int rc = data_batch(&r->test, &r->enc, NULL, NULL, n, r->heldout_x, r->n0, err,
                              sizeof err);
    if (rc != DATA_OK) {
        cli_die(PROG, "data_batch (test images)", rc, err);
    }
    const heldout_set h = {.x = r->heldout_x, .n = n, .dim = r->n0,
                           .exact = o->hidden <= HELDOUT_EXACT_HIDDEN, .seed = o->seed,
                           .ais_stream = STREAM_HELDOUT, .ais_chains = o->ais_chains,
                           .ais_betas = o->eval_betas};
    r->heldout = h;
    r->heldout_column = h.exact ? "heldout_loglik_exact" : "heldout_loglik_ais";
}

/* m's mean held-out log-likelihood and log Z at step. @return 0, or -1
 * after a message */
int grbm_heldout_score(grbm_run *r, const ebm_model_t *m, double *ll_mean, double *log_z)
{
    double se, is;
    if (heldout_score(&r->heldout, m, r->step, r->heldout_ll, ll_mean, log_z, &se, &is) !=
        EBM_OK) {
        fprintf(stderr, "train_grbm: --eval-every at step %lld: %s\n", (long long)r->step,
                ebm_model_errmsg(m));
        return -1;
    }
    return 0;
}

/* ---- statistics -------------------------------------------------------- */

void grbm_variance_range(const ebm_model_t *m, const float *theta, double *mean, double *lo,
                         double *hi, int64_t *arg_lo)
{
    int64_t off, cols, arg = 0;
    ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &off, NULL, &cols);
    double s = 0.0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < cols; i++) {
        const double v = exp((double)theta[off + i]);
        s += v;
        if (v < *lo) {
            *lo = v;
            arg = i;
        }
        *hi = v > *hi ? v : *hi;
    }
    *mean = s / (double)cols;
    if (arg_lo != NULL) {
        *arg_lo = arg;
    }
}
