/* The inside of train_grbm (examples/train_grbm.c has the method, the
 * options and the outputs): what one run holds, its generator streams, and
 * the steps grbm_run.c implements, in the order train_grbm takes them:
 * grbm_load_data, grbm_build_model, grbm_prepare_heldout,
 * grbm_build_estimator, grbm_build_optimiser, grbm_resume; then, in the
 * loop, grbm_draw_pictures, grbm_save_state and grbm_heldout_score.
 * Functions returning void end the process (cli_die) on failure, as
 * train_grbm does; the others say what they return.
 */
#ifndef EXAMPLES_COMMON_GRBM_RUN_H
#define EXAMPLES_COMMON_GRBM_RUN_H

#include <ebm.h>

#include "data.h"
#include "heldout.h"
#include "optim.h"

#include <stdint.h>
#include <stdio.h>

#define GRBM_PROG "train_grbm"

/* Generator streams of (--seed, stream): training (model, chains), the
 * pictures of step s, the batch order of epoch t. */
/* Generator streams of (--seed, stream): training (model, chains), the
 * pictures of step s, the batch order of epoch t. */
#define STREAM_TRAIN UINT64_C(0)
#define STREAM_PICTURES (UINT64_C(1) << 32)
#define STREAM_ORDER (UINT64_C(1) << 33)

/* The held-out rows of --eval-every are scored (heldout.h) exactly up to
 * HELDOUT_EXACT_HIDDEN hidden units (log Z enumerates the 2^hidden hidden
 * states; the Gaussian visible layer is integrated out), else with AIS
 * log Z (--ais-chains x --eval-betas, from the model's own base, stream
 * STREAM_HELDOUT + step). log p(v) is the density of the standardised
 * pixels, in nats per image. */
enum { HELDOUT_EXACT_HIDDEN = 20 };
#define STREAM_HELDOUT (UINT64_C(3) << 32)

/* The options (train_grbm --help). */
typedef struct options {
    int64_t hidden, batch, epochs, gibbs_steps, langevin_steps, adjust, samples, log_every,
        limit, eval_every, eval_rows, ais_chains, eval_betas, average_from;
    double lr, clip, step_size, minutes, sample_minutes, sd_floor;
    int global; /* one mean and sd for all pixels */
    int precondition; /* Langevin steps alpha sigma_i^2 per unit (EBM_SAMPLER_PRECONDITION) */
    int paper;        /* --preset paper */
    uint64_t seed;
    const char *out, *data_dir, *resume;
} options;

/* Everything one run holds. */
typedef struct grbm_run {
    options o;
    int epochs_given;
    data_set train, test;
    float *px_mean, *px_sd; /* the standardisation (enc's mean and sd) */
    data_encoding enc;
    int64_t n0, width, n_params;
    ebm_model_t *m;
    ebm_model_t *m_avg;     /* --average-from: the model that shows the average, else NULL */
    ebm_rng_t *rng;         /* training: the model's initialisation, then the chains */
    ebm_estimator_t *e;
    optim opt;
    optim_average avg;      /* --average-from (inactive when off) */
    /* the pictures: a sampler configured as the estimator's negative chains,
     * on the shown model; its chains, their grey images and E[v | h] */
    ebm_sampler_t *sampler;
    float *pic_x, *pic_grey, *pic_mean;
    /* --eval-every: the first --eval-rows test images and how they are
     * scored (heldout.h), the CSV column, the rows' scratch */
    heldout_set heldout;
    float *heldout_x;
    double *heldout_ll;
    const char *heldout_column;
    float *grad, *theta, *batch, *xrec, *rec;
    int64_t *perm;            /* the order of the training images in an epoch */
    int64_t batches, total;   /* steps per epoch (the last partial batch dropped), in all */
    double budget;            /* --minutes in seconds, or INFINITY */
    int time_schedule;        /* the learning rate decays over the time budget */
    char config[512];         /* what a resumed run must share with the checkpoint's */
    FILE *csv;
    int64_t step;
    double seconds_before;    /* training time of earlier processes (--resume) */
} grbm_run;

/** The training images (the first --limit), standardised, and with
 *  --eval-every the test images. @return 0, or an exit status after a message */
int grbm_load_data(grbm_run *r);
/** The model, initialised as the published code from the training stream,
 *  and with --average-from the average and its model. */
void grbm_build_model(grbm_run *r);
/** The estimator (GRBM CD, Gibbs-Langevin chains) and the pictures' sampler. */
void grbm_build_estimator(grbm_run *r);
/** The optimiser, the step buffers and the settings text r->config. */
void grbm_build_optimiser(grbm_run *r);
/** A PNG <out>/name of n grey rows (stride: the images' pixels), 10 a row. */
void grbm_write_grid(const grbm_run *r, const char *name, const float *grey, int64_t n);
/** samples_<step>.png and means_<step>.png of m, the sampler's model.
 *  @return the sampler's mean acceptance */
double grbm_draw_pictures(grbm_run *r, const ebm_model_t *m, int64_t step);
/** The model shown: the average of the iterates (in r->m_avg) with
 *  --average-from, else r->m. */
const ebm_model_t *grbm_shown_model(grbm_run *r);
/** model.ebm, model_raw.ebm and train_grbm.ckpt at r->step with elapsed
 *  seconds of training. @return 0, or -1 after a message */
int grbm_save_state(const grbm_run *r, const ebm_model_t *shown, double elapsed);
/** --resume. @return 0, or an exit status after a message (2: other settings) */
int grbm_resume(grbm_run *r);
/** --eval-every: the held-out rows and how they are scored. */
void grbm_prepare_heldout(grbm_run *r);
/** m's mean held-out log-likelihood and log Z at r->step.
 *  @return 0, or -1 after a message */
int grbm_heldout_score(grbm_run *r, const ebm_model_t *m, double *ll_mean, double *log_z);
/** The mean, smallest and largest variance in theta (m's parameters), and
 *  the pixel of the smallest into *arg_lo if not NULL. */
void grbm_variance_range(const ebm_model_t *m, const float *theta, double *mean, double *lo,
                         double *hi, int64_t *arg_lo);

#endif
