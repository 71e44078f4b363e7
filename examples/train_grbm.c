/*
 * A Gaussian-Bernoulli RBM trained on images by Liao et al.'s (2022) modified
 * CD with Gibbs-Langevin sampling: Fashion-MNIST (their section 4.2 and
 * appendix B.3). docs/grbm.md has the protocol, a run and its samples.
 *
 * Data: Fashion-MNIST's 60,000 training images (examples/common/data.h;
 * `apt-get install -y dataset-fashion-mnist`), grey in [0, 1], standardised
 * per pixel as the paper says (x = (grey - mean_p) / sd_p, sd floored at
 * --sd-floor), or with one mean and sd for all pixels (--standardize global,
 * what the published code's config does: 0.286 and 0.353).
 *
 * Model: n_v = 784 Gaussian visible units with one learned log-variance
 * each, --hidden binary hidden units. mu = 0, variances 1, b = 0, W entries
 * N(0, 1/(n_v + n_h)) (the published code's initialisation).
 *
 * Training (Liao Alg. 3, appendix B): EBM_ESTIMATOR_GRBM_CD with
 * EBM_SAMPLER_GIBBS_LANGEVIN: the negative chains start from N(0, I) at
 * every step and make --gibbs-steps Gibbs-Langevin steps of
 * --langevin-steps Langevin steps each (the cosine step-size schedule inside
 * a step); pixel i's Langevin step is --step-size times its own variance
 * (--precondition on, EBM_SAMPLER_PRECONDITION: every pixel contracts alike
 * given h) or times the mean variance (off, EBM_SAMPLER_SCALE_BY_VARIANCE:
 * unstable once a pixel's variance is below about a quarter of the mean);
 * --preset paper sets the published code's protocol (global standardisation,
 * steps of 20/512 times the mean variance). Every step's state enters the
 * estimate (burn-in 0). --adjust ETA Metropolis-adjusts the Gibbs-Langevin steps after
 * the ETA-th (Liao eq. 12; -1, the default, never). Plain SGD with the
 * gradient norm clipped at --clip and the learning rate decayed from --lr to
 * 0 by the cosine schedule over --epochs (or, with --minutes and no
 * --epochs, over the time budget: then the run is not reproducible to the
 * bit, since the rate depends on the clock).
 *
 * Output in --out (default examples/out/grbm):
 *   train_grbm.csv       one line per --log-every steps: step, epoch, seconds,
 *                        lr, grad norm, mean / min / max variance,
 *                        acceptance, reconstruction MSE (standardised units),
 *                        sample acceptance, var_ratio (mean / min
 *                        variance); with --eval-every N three more
 *                        columns, filled every N steps ("nan" elsewhere):
 *                        heldout_loglik_exact (up to 20 hidden units: log Z
 *                        by enumerating the hidden states) or
 *                        heldout_loglik_ais (AIS log Z, --ais-chains x
 *                        --eval-betas), the mean log-density of the first
 *                        --eval-rows test images in standardised units;
 *                        heldout_log_z; heldout_seconds
 *   samples_<step>.png   --samples chains from N(0, I), --gibbs-steps
 *                        steps of the training sampler, un-standardised
 *   means_<step>.png     the same chains' E[v | h] = mu + W h: the published
 *                        code shows this as its last sample
 *   data.png             training images, for comparison
 *   model.ebm            the model (ebm_model_save), after each picture
 *   model_raw.ebm        with --average-from: the last iterate (model.ebm is
 *                        then the average, below)
 *   train_grbm.ckpt      a checkpoint (examples/common/checkpoint.h) with each
 *                        picture: model, training generator, optimiser step,
 *                        the average of the iterates
 * Progress lines with rate and ETA go to stderr. "seconds" is training time:
 * pictures, checkpoints and held-out evaluations are not counted.
 *
 * --average-from N (examples/common/optim.h, optim_average): the mean of
 * the parameters after steps N+1, N+2, ... (Polyak-Ruppert averaging) is
 * kept beside training, which goes on from the last iterate. The pictures,
 * the held-out evaluation and model.ebm show that average once it holds an
 * iterate (the last iterate before); model_raw.ebm is the last iterate.
 * The variance and reconstruction columns stay those of the last iterate;
 * with --eval-every the CSV ends with three more columns,
 * heldout_loglik_<exact|ais>_avg, heldout_log_z_avg, heldout_seconds_avg,
 * "nan" until the average holds an iterate.
 *
 * Resuming: --resume <out>/train_grbm.ckpt continues a run with the same
 * settings (the checkpoint's configuration text must match) bit for bit:
 * the batch order of epoch t comes from generator (seed, 2^33 + t), the
 * pictures of step s from (seed, 2^32 + s), the held-out AIS of step s from
 * (seed, 3 * 2^32 + s), and training from (seed, 0), whose state the
 * checkpoint holds. (With --minutes and no --epochs the learning rate follows
 * the clock, so that run is not reproducible anyway.) train_grbm.csv is
 * appended to.
 *
 * Signals: SIGINT or SIGTERM ends training after the step in progress; the
 * model.ebm and train_grbm.ckpt of that step are written and named on
 * stderr, and the exit status is 130 (SIGINT) or 143 (SIGTERM). A second
 * signal ends the program at once. Exit status otherwise: 0 done, 1 an error,
 * 2 a bad option.
 *
 * Threads: OpenBLAS's (OPENBLAS_NUM_THREADS); the library has none of its own.
 *
 * The code: this file has the options, the training loop and main, which
 * reads as its steps; the run's set-up, pictures, model files, checkpoints
 * and held-out rows are in examples/common/grbm_run.c. It shares with the
 * DBM/RBM trainers (examples/common/trainer.h) the option table and the
 * CSV log (cli.h), the optimiser and the average of the iterates (optim.h),
 * the checkpoints and model files (checkpoint.h) and the held-out score
 * (heldout.h).
 */
#include <ebm.h>

#include "common/cli.h"
#include "common/data.h"
#include "common/grbm_run.h"
#include "common/optim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG GRBM_PROG

static const char *const standardize_names[] = {"pixel", "global"};
static const char *const off_on[] = {"off", "on"};
static const char *const preset_names[] = {"libebm", "paper"};

/* What --preset sets, unless the option itself is given. */
typedef struct preset {
    int global, precondition;
    double step_size;
} preset;
static const preset presets[2] = {
    {0, 1, 1.0},             /* libebm: per pixel, preconditioned steps of 1 x sigma_i^2 */
    {1, 0, 20.0 / 512.0},    /* paper: global, the published code's drift 20/512 x mean var */
};

/* @return 0, 1 after --help, or -1 after a message */
static int parse_options(int argc, char **argv, options *o, int *epochs_given)
{
    o->hidden = 10000;
    o->batch = 512;
    o->epochs = 3000;
    o->gibbs_steps = 100;
    o->langevin_steps = 10;
    o->adjust = -1;
    o->samples = 100;
    o->log_every = 20;
    o->limit = 0;
    o->eval_every = 0;
    o->eval_rows = 500;
    o->ais_chains = 100;
    o->eval_betas = 100;
    o->average_from = -1;
    o->lr = 0.01;
    o->clip = 10.0;
    o->step_size = presets[0].step_size;
    o->minutes = 0.0;
    o->sample_minutes = 2.0;
    o->sd_floor = 0.05;
    o->global = presets[0].global;
    o->precondition = presets[0].precondition;
    o->seed = 1;
    o->out = "examples/out/grbm";
    o->data_dir = NULL;
    o->resume = NULL;
    o->paper = 0;
    *epochs_given = 0;
    int seen_standardize = 0, seen_step = 0, seen_precondition = 0;
    const cli_spec specs[] = {
        CLI_ONE_OF("--preset", &o->paper, preset_names, 0,
                   "the defaults of --standardize, --step-size and --precondition: libebm's "
                   "(pixel, 1, on) or the paper's (global, 20/512, off; docs/grbm.md)"),
        CLI_I64("--hidden", "N", &o->hidden, 1, 1 << 24, "hidden units; the paper's 10000"),
        CLI_I64("--batch", "N", &o->batch, 1, 1 << 20, "mini-batch size"),
        CLI_DBL("--lr", "X", &o->lr, 1e-12, 1e6, "initial learning rate, cosine-decayed to 0"),
        {.type = CLI_INT64, .name = "--epochs", .meta = "N", .field = &o->epochs, .ilo = 1,
         .ihi = 1 << 30, .seen = epochs_given, .help = "passes over the training images"},
        {.type = CLI_DOUBLE, .name = "--minutes", .meta = "X", .field = &o->minutes,
         .dlo = 1e-12, .dhi = 1e9, .dflt = "none",
         .help = "stop after X minutes of training; without --epochs the learning rate "
                 "decays over this budget instead (then a run does not repeat to the bit)"},
        CLI_I64("--gibbs-steps", "N", &o->gibbs_steps, 1, 1 << 20,
                "Gibbs-Langevin steps per gradient and per sample"),
        CLI_I64("--langevin-steps", "N", &o->langevin_steps, 1, 1 << 20,
                "Langevin steps in one Gibbs-Langevin step"),
        {.type = CLI_DOUBLE, .name = "--step-size", .meta = "X", .field = &o->step_size,
         .dlo = 1e-12, .dhi = 1e6, .seen = &seen_step, .dflt = "by --preset",
         .help = "Langevin step size, times the mean variance (--precondition on: times each "
                 "pixel's variance)"},
        {.type = CLI_CHOICE, .name = "--precondition", .field = &o->precondition,
         .choices = off_on, .n_choices = 2, .seen = &seen_precondition, .dflt = "by --preset",
         .help = "Langevin steps preconditioned by diag(sigma^2): each pixel's step is "
                 "--step-size times its variance (EBM_SAMPLER_PRECONDITION)"},
        CLI_I64("--adjust", "ETA", &o->adjust, -1, 1 << 30,
                "Metropolis-adjust the steps after the ETA-th; -1: never"),
        CLI_DBL("--clip", "X", &o->clip, 0.0, 1e30, "gradient-norm clipping; 0: none"),
        {.type = CLI_CUSTOM, .name = "--average-from", .meta = "N", .field = &o->average_from,
         .parse = cli_parse_step_or_off, .range = "N >= 0 or off", .dflt = "off",
         .help = "show (pictures, --eval-every) and save as model.ebm the average of the "
                 "iterates after step N (Polyak-Ruppert); training goes on from the last "
                 "iterate, saved as model_raw.ebm"},
        {.type = CLI_CHOICE, .name = "--standardize", .field = &o->global,
         .choices = standardize_names, .n_choices = 2, .seen = &seen_standardize,
         .dflt = "by --preset",
         .help = "per pixel (the paper's text) or one mean and sd (the published config)"},
        CLI_DBL("--sd-floor", "X", &o->sd_floor, 1e-6, 1.0, "smallest per-pixel sd, grey units"),
        {.type = CLI_INT64, .name = "--limit", .meta = "N", .field = &o->limit, .ilo = 1,
         .ihi = INT64_C(1) << 40, .dflt = "all",
         .help = "use the first N training images"},
        CLI_I64("--samples", "N", &o->samples, 1, 1 << 16, "chains in each picture"),
        CLI_DBL("--sample-every", "M", &o->sample_minutes, 1e-12, 1e9,
                "pictures, model.ebm and a checkpoint every M minutes"),
        CLI_I64("--log-every", "N", &o->log_every, 1, INT64_C(1) << 40,
                "a CSV line and a progress line every N steps"),
        CLI_I64("--eval-every", "N", &o->eval_every, 0, INT64_C(1) << 40,
                "held-out log-likelihood every N steps into train_grbm.csv; 0: none"),
        CLI_I64("--eval-rows", "N", &o->eval_rows, 1, 10000,
                "--eval-every: the first N Fashion-MNIST test images"),
        CLI_I64("--ais-chains", "N", &o->ais_chains, 2, 1 << 24,
                "--eval-every: AIS runs, where AIS is needed (more than 20 hidden units)"),
        CLI_I64("--eval-betas", "N", &o->eval_betas, 1, 1 << 30,
                "--eval-every: AIS inverse temperatures"),
        {.type = CLI_SEED, .name = "--seed", .meta = "N", .field = &o->seed,
         .help = "seed of the model, batches and chains"},
        {.type = CLI_TEXT, .name = "--data", .meta = "DIR", .field = &o->data_dir,
         .dflt = DATA_FASHION_MNIST_DIR, .help = "Fashion-MNIST directory"},
        CLI_STR("--out", "DIR", &o->out, "output directory, created if missing"),
        CLI_STR("--resume", "FILE", &o->resume,
                "continue from a checkpoint (<out>/train_grbm.ckpt) written with the same "
                "settings"),
    };
    const cli_program p = {
        PROG, "[options]",
        "  Liao et al. (2022): a GRBM on Fashion-MNIST by modified CD with Gibbs-Langevin\n"
        "  sampling. Defaults are the paper's (appendix B), except the three that\n"
        "  --preset sets (docs/grbm.md). Each option: what it sets (the values it\n"
        "  accepts, its default).\n",
        specs, (int)(sizeof specs / sizeof specs[0]),
        "SIGINT or SIGTERM: the step in progress ends, the checkpoint and model.ebm\n"
        "are written, and the exit status is 130 or 143 (man ebm-train-grbm).\n",
        NULL, NULL};
    const int rc = cli_parse(&p, argc, argv);
    const preset *ps = &presets[o->paper];
    o->global = seen_standardize ? o->global : ps->global;
    o->step_size = seen_step ? o->step_size : ps->step_size;
    o->precondition = seen_precondition ? o->precondition : ps->precondition;
    return rc;
}

/* ---- statistics -------------------------------------------------------- */

/* After a non-finite gradient: the pixel of smallest variance, its variance
 * and the mean/min ratio, and what the step does to it. */
static void explain_divergence(const options *o, const ebm_model_t *m, float *theta)
{
    int64_t arg;
    double mean, lo, hi;
    ebm_model_get_params(m, theta);
    grbm_variance_range(m, theta, &mean, &lo, &hi, &arg);
    fprintf(stderr,
            "train_grbm: the smallest variance is pixel %lld's, %.4g; the mean is %.4g (ratio "
            "%.3g). ",
            (long long)arg, lo, mean, mean / lo);
    if (o->precondition) {
        fprintf(stderr, "The steps are preconditioned: each pixel's is %g times its variance.\n",
                o->step_size);
    } else {
        fprintf(stderr,
                "A step of %g x the mean variance is %.3g times that pixel's variance: unadjusted "
                "steps diverge above about 2 (a constant step) to 4 (the cosine schedule of a "
                "Gibbs-Langevin step) times a pixel's variance. --precondition on scales each "
                "pixel's step by its own variance.\n",
                o->step_size, o->step_size * mean / lo);
    }
}

/* Mean squared error of v against mu + W E[h | v] over a batch (the
 * published code's "reconstruction loss"), in standardised units. With h
 * summed out, dF/dv = (v - mu - W E[h | v]) / sigma^2 (Liao eq. 21), so the
 * residual is sigma^2 dF/dv: layer_input would reject the fractional h. */
static double reconstruction_mse(ebm_model_t *m, int64_t n, const float *batch, int64_t n0,
                                 const float *theta, float *x, float *res)
{
    const int64_t w = ebm_model_state_width(m);
    int64_t off;
    ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &off, NULL, NULL);
    for (int64_t r = 0; r < n; r++) {
        memset(x + r * w, 0, (size_t)w * sizeof *x);
        memcpy(x + r * w, batch + r * n0, (size_t)n0 * sizeof *x);
    }
    if (ebm_model_energy_grad_input(m, 1u << 1, 0, n, x, w, res, n0) != EBM_OK) {
        return NAN;
    }
    double s = 0.0;
    for (int64_t r = 0; r < n; r++) {
        for (int64_t i = 0; i < n0; i++) {
            const double e = exp((double)theta[off + i]) * (double)res[r * n0 + i];
            s += e * e;
        }
    }
    return s / ((double)n * (double)n0);
}


/* ---- training ---------------------------------------------------------- */

/* train_grbm.csv: appended to when resuming (its columns must be the same;
 * rows after the checkpoint's step are cut), else written anew; the
 * held-out columns come last, and the average's after them. @return 0, or
 * an exit status after a message */
static int open_csv(grbm_run *r)
{
    char path[1024], header[512], averaged[128] = "", err[512];
    const char *column = r->heldout_column;
    if (column != NULL && optim_average_on(&r->avg)) {
        snprintf(averaged, sizeof averaged, ",%s_avg,heldout_log_z_avg,heldout_seconds_avg",
                 column);
    }
    snprintf(header, sizeof header,
             "step,epoch,seconds,lr,grad_norm,var_mean,var_min,var_max,accept,recon_mse,"
             "sample_accept,var_ratio%s%s%s%s\n", column != NULL ? "," : "",
             column != NULL ? column : "",
             column != NULL ? ",heldout_log_z,heldout_seconds" : "", averaged);
    snprintf(path, sizeof path, "%s/train_grbm.csv", r->o.out);
    const int rc = cli_open_log(&r->csv, path, header, r->o.resume != NULL ? r->step : -1, "",
                                err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "train_grbm: %s\n", err);
        return rc == CLI_LOG_OTHER_COLUMNS ? 2 : 1;
    }
    return 0;
}

/* The step's mini-batch: the rows of its epoch's order, which comes from a
 * generator of its own (STREAM_ORDER + epoch), so a resumed run continues
 * mid-epoch with the same batches. *perm_epoch is the epoch r->perm holds. */
static void next_batch(grbm_run *r, int64_t *perm_epoch)
{
    const int64_t epoch = r->step / r->batches, b = r->step % r->batches;
    char err[512];
    int rc;
    if (epoch != *perm_epoch) {
        ebm_rng_t *order;
        if ((rc = ebm_rng_create(&order, r->o.seed, STREAM_ORDER + (uint64_t)epoch)) != EBM_OK ||
            (rc = data_shuffle(r->perm, r->train.n, order)) != DATA_OK) {
            cli_die(PROG, "data_shuffle", rc, data_strerror(rc));
        }
        ebm_rng_destroy(order);
        *perm_epoch = epoch;
    }
    rc = data_batch(&r->train, &r->enc, NULL, r->perm + b * r->o.batch, r->o.batch, r->batch,
                    r->n0, err, sizeof err);
    if (rc != DATA_OK) {
        cli_die(PROG, "data_batch", rc, err);
    }
}

/* Statistics averaged between two lines of the CSV. */
typedef struct window {
    int64_t steps;
    double accept, norm;
} window;

/* One model's held-out figures at a step (NaN where not measured). */
typedef struct heldout_figures {
    double ll, log_z, seconds;
} heldout_figures;

/* --eval-every at this step: the last iterate's figures into *last and,
 * once the average holds an iterate, the average's into *avg, and a line on
 * stderr. @return 0, or -1 after a message */
static int heldout_at_step(grbm_run *r, heldout_figures *last, heldout_figures *avg)
{
    const double te = cli_now();
    if (grbm_heldout_score(r, r->m, &last->ll, &last->log_z) != 0) {
        return -1;
    }
    last->seconds = cli_now() - te;
    char averaged_ll[96] = "";
    if (r->avg.count > 0) {
        if (grbm_heldout_score(r, grbm_shown_model(r), &avg->ll, &avg->log_z) != 0) {
            return -1;
        }
        avg->seconds = cli_now() - te - last->seconds;
        snprintf(averaged_ll, sizeof averaged_ll, "; average of %lld iterates %.4f",
                 (long long)r->avg.count, avg->ll);
    }
    fprintf(stderr, "step %7lld  held-out %s = %.4f (%lld images, %.2f s)%s\n",
            (long long)r->step, r->heldout_column, last->ll, (long long)r->heldout.n,
            last->seconds, averaged_ll);
    return 0;
}

/* A line of train_grbm.csv and a progress line on stderr (the window's
 * means); the variance and reconstruction figures are the last iterate's. */
static void log_line(grbm_run *r, const window *win, double elapsed, double lr,
                     double sample_acc, const heldout_figures *last, const heldout_figures *avg)
{
    double vmean, vlo, vhi;
    ebm_model_get_params(r->m, r->theta);
    grbm_variance_range(r->m, r->theta, &vmean, &vlo, &vhi, NULL);
    const double mse =
        reconstruction_mse(r->m, r->o.batch, r->batch, r->n0, r->theta, r->xrec, r->rec);
    const double ep = (double)r->step / (double)r->batches;
    const double norm = win->norm / (double)win->steps, acc = win->accept / (double)win->steps;
    fprintf(r->csv, "%lld,%.4f,%.2f,%.6g,%.6g,%.6g,%.6g,%.6g,%.4f,%.6g,%.4f,%.4f",
            (long long)r->step, ep, elapsed, lr, norm, vmean, vlo, vhi, acc, mse, sample_acc,
            vmean / vlo);
    if (r->heldout_column != NULL) {
        fprintf(r->csv, ",%.6f,%.6f,%.3f", last->ll, last->log_z, last->seconds);
    }
    if (r->heldout_column != NULL && optim_average_on(&r->avg)) {
        fprintf(r->csv, ",%.6f,%.6f,%.3f", avg->ll, avg->log_z, avg->seconds);
    }
    fputc('\n', r->csv);
    fflush(r->csv);
    const double rate = (double)r->step / elapsed;
    double left = (double)(r->total - r->step) / rate;
    left = r->budget - elapsed < left ? r->budget - elapsed : left;
    char eta[32], took[32];
    cli_format_duration(left, eta, sizeof eta);
    cli_format_duration(elapsed, took, sizeof took);
    fprintf(stderr,
            "step %7lld  epoch %7.2f  lr %.5f  |g| %7.3f  var %.3g [%.2g, %.2g]  "
            "accept %.3f  recon %.4f  %.2f steps/s  %s  ETA %s\n",
            (long long)r->step, ep, lr, norm, vmean, vlo, vhi, acc, mse, rate, took, eta);
}

/* Train until the last step, the time budget, an error or SIGINT/SIGTERM
 * (*stopped_by). Training time is the clock less *pictures_s, the time
 * spent on pictures, checkpoints and held-out evaluations. @return 0, or -1
 * after a message */
static int train(grbm_run *r, double t0, double *pictures_s, int *stopped_by)
{
    const options *o = &r->o;
    double next_picture = r->seconds_before + 60.0 * o->sample_minutes, sample_acc = NAN;
    int64_t perm_epoch = -1;
    window win = {0, 0.0, 0.0};
    while (r->step < r->total) {
        if ((*stopped_by = cli_stop_signal()) != 0) { /* save in finish() */
            return 0;
        }
        next_batch(r, &perm_epoch);
        int rc = ebm_estimator_gradient(r->e, r->rng, o->batch, r->batch, r->n0, r->grad);
        if (rc != EBM_OK) {
            fprintf(stderr, "train_grbm: step %lld: %s\n", (long long)r->step,
                    ebm_estimator_errmsg(r->e));
            if (rc == EBM_EVALUE) { /* a non-finite gradient: how far the variances spread */
                explain_divergence(o, r->m, r->theta);
            }
            return -1;
        }
        const double elapsed = cli_now() - t0 - *pictures_s;
        if (r->time_schedule) {
            /* The cosine schedule over the fraction of the budget used. */
            const double frac = elapsed < r->budget ? elapsed / r->budget : 1.0;
            r->opt.set.lr = 0.5 * o->lr * (1.0 + cos(3.14159265358979323846 * frac));
        }
        const double lr = optim_rate(&r->opt);
        if (optim_step(&r->opt, r->m, r->grad) != EBM_OK) {
            fprintf(stderr, "train_grbm: step %lld, update (lr %g): %s\n", (long long)r->step,
                    lr, ebm_model_errmsg(r->m));
            return -1;
        }
        if ((rc = optim_average_update(&r->avg, r->m, r->opt.step)) != EBM_OK) {
            cli_die(PROG, "optim_average_update", rc, "");
        }
        r->step++;
        win.steps++;
        win.accept += ebm_estimator_stat(r->e, EBM_ESTIMATOR_STAT_ACCEPT_RATE);
        win.norm += r->opt.last_norm;
        const int last = r->step == r->total || elapsed >= r->budget;
        const int pictures = elapsed >= next_picture || last;
        if (pictures) {
            const double tp = cli_now();
            sample_acc = grbm_draw_pictures(r, grbm_shown_model(r), r->step);
            *pictures_s += cli_now() - tp;
            next_picture = elapsed + 60.0 * o->sample_minutes;
        }
        const int eval_now = o->eval_every > 0 && r->step % o->eval_every == 0;
        heldout_figures h_last = {NAN, NAN, NAN}, h_avg = {NAN, NAN, NAN};
        if (eval_now) {
            const double te = cli_now();
            if (heldout_at_step(r, &h_last, &h_avg) != 0) {
                return -1;
            }
            *pictures_s += cli_now() - te;
        }
        if (r->step % o->log_every == 0 || last || eval_now) {
            log_line(r, &win, elapsed, lr, sample_acc, &h_last, &h_avg);
            memset(&win, 0, sizeof win);
        }
        /* With the pictures, the model files and the checkpoint, after the
         * step's CSV line: a run resumed from the checkpoint (which cuts the
         * CSV's later lines) then has every line. */
        if (pictures) {
            const double tp = cli_now();
            if (grbm_save_state(r, grbm_shown_model(r), elapsed) != 0) {
                return -1;
            }
            *pictures_s += cli_now() - tp;
        }
        if (last) {
            return 0;
        }
    }
    return 0;
}

/* ---- main -------------------------------------------------------------- */

static void free_run(grbm_run *r)
{
    if (r->csv != NULL) {
        fclose(r->csv);
    }
    free(r->perm);
    free(r->rec);
    free(r->xrec);
    free(r->batch);
    free(r->theta);
    free(r->grad);
    free(r->pic_mean);
    free(r->pic_grey);
    free(r->pic_x);
    ebm_sampler_destroy(r->sampler);
    ebm_estimator_destroy(r->e);
    optim_free(&r->opt);
    optim_average_free(&r->avg);
    ebm_rng_destroy(r->rng);
    ebm_model_destroy(r->m_avg);
    ebm_model_destroy(r->m);
    free(r->px_sd);
    free(r->px_mean);
    free(r->heldout_x);
    free(r->heldout_ll);
    data_set_free(&r->train);
    data_set_free(&r->test);
}

/* Everything before the first step: the output directory, the data, the
 * model, the estimator, the optimiser, the held-out rows, data.png, --resume
 * and the CSV. @return 0, or an exit status after a message */
static int set_up(grbm_run *r)
{
    const options *o = &r->o;
    if (cli_make_dirs(o->out) != 0) {
        fprintf(stderr, "train_grbm: cannot create %s: %s\n", o->out, strerror(errno));
        return 1;
    }
    int rc = grbm_load_data(r);
    if (rc != 0) {
        return rc;
    }
    grbm_build_model(r);
    grbm_prepare_heldout(r);
    grbm_build_estimator(r);
    grbm_build_optimiser(r);
    grbm_write_grid(r, "data.png", r->train.x, o->samples < r->train.n ? o->samples : r->train.n);
    fprintf(stderr,
            "train_grbm: %lld images (standardised %s), %lld x %lld GRBM, batch %lld, %lld x %lld "
            "Gibbs-Langevin steps (step size %g x %s, adjust %lld), lr %g, %s\n",
            (long long)r->train.n, o->global ? "globally" : "per pixel", (long long)r->n0,
            (long long)o->hidden, (long long)o->batch, (long long)o->gibbs_steps,
            (long long)o->langevin_steps, o->step_size,
            o->precondition ? "each pixel's variance" : "mean variance", (long long)o->adjust,
            o->lr, r->time_schedule ? "cosine over the time budget" : "cosine over the epochs");
    if (o->resume != NULL && (rc = grbm_resume(r)) != 0) {
        return rc;
    }
    return open_csv(r);
}

/* After training: with a signal, the state of the last step saved and where
 * to resume; else done or stopped on an error. @return the exit status */
static int finish(grbm_run *r, int failed, int stopped_by, double t0, double pictures_s)
{
    const options *o = &r->o;
    char result[256] = "";
    if (optim_average_on(&r->avg) && r->avg.count > 0) {
        snprintf(result, sizeof result, " (the average of the %lld iterates after step %lld, "
                 "--average-from; the last iterate: model_raw.ebm)", (long long)r->avg.count,
                 (long long)r->avg.from);
    } else if (optim_average_on(&r->avg)) {
        snprintf(result, sizeof result, " (the last iterate: no step came after "
                 "--average-from %lld; also model_raw.ebm)", (long long)r->avg.from);
    }
    if (stopped_by != 0) {
        const double elapsed = cli_now() - t0 - pictures_s;
        if (grbm_save_state(r, grbm_shown_model(r), elapsed) != 0) {
            failed = 1;
        } else {
            fprintf(stderr, "train_grbm: %s: stopped after step %lld; wrote %s/train_grbm.ckpt "
                            "and %s/model.ebm%s; continue with --resume %s/train_grbm.ckpt\n",
                    cli_signal_name(stopped_by), (long long)r->step, o->out, o->out, result,
                    o->out);
        }
    } else {
        fprintf(stderr, "train_grbm: %s after %lld steps; pictures and model in %s%s\n",
                failed ? "stopped on an error" : "done", (long long)r->step, o->out,
                failed ? "" : result);
    }
    if (failed) {
        return 1;
    }
    if (stopped_by == 0) {
        stopped_by = cli_stop_signal(); /* one that came during the last pictures */
    }
    return stopped_by != 0 ? 128 + stopped_by : 0;
}

int main(int argc, char **argv)
{
    grbm_run r;
    memset(&r, 0, sizeof r);
    const int parsed = parse_options(argc, argv, &r.o, &r.epochs_given);
    if (parsed != 0) {
        return parsed == 1 ? 0 : 2;
    }
    int rc = set_up(&r);
    if (rc != 0) {
        return rc; /* as before the restructuring: the process ends, the OS frees */
    }
    if (cli_catch_stop_signals() != 0) {
        fprintf(stderr, "train_grbm: warning: cannot catch SIGINT and SIGTERM: %s\n",
                strerror(errno));
    }
    const double t0 = cli_now() - r.seconds_before;
    double pictures_s = 0.0;
    int stopped_by = 0;
    const int failed = train(&r, t0, &pictures_s, &stopped_by) != 0;
    fclose(r.csv);
    r.csv = NULL;
    rc = finish(&r, failed, stopped_by, t0, pictures_s);
    free_run(&r);
    return rc;
}

