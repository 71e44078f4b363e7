/* The inside of trainer_main (trainer.h), shared by its files: what one run
 * holds (run), the final evaluation's figures (result), the limits and
 * generator streams, and the steps each file implements:
 *   trainer.c           messages, the distributed agreement, trainer_main
 *   trainer_options.c   defaults, the option table, checks, the settings text
 *   trainer_setup.c     data, model, estimator, optimiser, resume, centring
 *   trainer_pictures.c  samples.png and completion.png
 *   trainer_loop.c      the training loop, train.csv, checkpoints, model files
 *   trainer_eval.c      --eval-every and the final evaluation
 *   trainer_report.c    the report on stdout, summary.txt, table_row.txt
 * Only these files include it; a trainer sees trainer.h alone.
 *
 * Every function returning int returns 0 on success, or 1 after a message
 * (trainer_complain) unless it says otherwise. Run's fields belong to the
 * run; set-up fills them, free_run (trainer.c) frees them.
 */
#ifndef EXAMPLES_COMMON_TRAINER_RUN_H
#define EXAMPLES_COMMON_TRAINER_RUN_H

#include "trainer.h"

#include "data.h"
#include "dist.h"
#include "optim.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
/* --global-prob: the Bernoulli draws of the proposal rows' encoding */
#define PROPOSAL_STREAM ((UINT64_C(3) << 32) + 3)

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
    ebm_model_t *m_avg; /* the average as a model, brought up to date by trainer_shown_model */
    int64_t width, n_params;
    float *batch, *grad;
    int64_t *rows;
    int64_t step;
    double seconds_before; /* training time of earlier processes (resume) */
    FILE *csv;
    char config_text[1024 + 24 * TRAINER_MAX_BETAS]; /* (trainer_config_text) */
    /* coupling statistics over this process's steps (UCD kinds) */
    int64_t stat_steps;
    double tau_sum, tau_max, ptau_sum, ptau_max, capped;
    double mh_accepted; /* UCD-LMI: MH moves accepted over this process's steps */
    float *proposal;    /* --global-prob: the encoded training rows (train.n x dim), or NULL */
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

/* The final evaluation's figures (trainer_evaluate), for trainer_report. */
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

/* The names of --data, --units and --binarize, indexed by their values. */
extern const char *const trainer_data_names[4];
extern const char *const trainer_units_names[3];
extern const char *const trainer_binarize_names[5];

/* ---- trainer.c ---------------------------------------------------------- */

/** Print "<prog>: [rank R: ]<message>" to stderr and keep it for
 *  trainer_any_failed. @return 1 */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int trainer_complain(const trainer_config *c, const char *fmt, ...);
/** Distributed: whether any rank failed (each says so by failed, after
 *  trainer_complain); the others then say which rank and why. Alone: failed. */
int trainer_any_failed(const trainer_config *c, int failed);
/** The method's name as --estimator and the default --out spell it: "ucd-lmi". */
const char *trainer_method_flag(int method);
/** Whether the method keeps persistent chains (PCD, PT). */
int trainer_persistent(int method);

/* ---- trainer_options.c -------------------------------------------------- */

/** Parse argv into c (on top of its defaults) and check the combination.
 *  @return 0, 1 after --help, 2 after a message about a bad option */
int trainer_parse_options(trainer_config *c, int argc, char **argv);
/** The run's settings as its checkpoints store them into buf[size]: those a
 *  resumed run must share, " | ", those it may change. */
int trainer_config_text(const run *r, char *buf, size_t size);

/* ---- trainer_setup.c ---------------------------------------------------- */

/** The data set into r->train and r->test (cut to --train-rows, --test-rows),
 *  its encoding r->enc and r->dim. */
int trainer_load_data(run *r);
/** The model (stream 0 initialises it; the method's default layers if none
 *  were given), r->m_avg for --average-from, and the training stream r->rng. */
int trainer_build_model(run *r);
/** The estimator (and, distributed, this rank's shards), the optimiser, the
 *  average of the iterates and the batch buffers. */
int trainer_build_estimator(run *r);
/** --resume: the checkpoint's model, generator, optimiser, average, chains,
 *  step and training time, once its settings match r->config_text. */
int trainer_resume(run *r);
/** p[r->dim]: each encoded unit's smoothed frequency of 1 (spin: of +1) over
 *  the training images; what names the option in messages. */
int trainer_training_means(run *r, double *p, const char *what);
/** --centre data: the first offsets (fresh runs) and trainer_centre_step's scratch. */
int trainer_centre_start(run *r);
/** --centre data: move the offsets towards r->batch's layer means. */
int trainer_centre_step(run *r);

/* ---- trainer_pictures.c ------------------------------------------------- */

/** Whether the local search moves the run's units (not Potts, not dReLU). */
int trainer_can_search(const trainer_config *c);
/** samples.png of m at path, from stream 3 + step; *accept (the MH
 *  acceptance, NaN without MH steps) and *sweeps_mean. */
int trainer_write_samples(const run *r, const ebm_model_t *m, const char *path, int64_t step,
                          double *accept, double *sweeps_mean);
/** completion.png of m at path: data, top half given, completed (stream 4). */
int trainer_write_completions(const run *r, const ebm_model_t *m, const char *path);

/* ---- trainer_loop.c ----------------------------------------------------- */

/** The model evaluated, drawn and saved: the average of the iterates once
 *  it holds one (r->m_avg), else r->m; NULL after a message. */
const ebm_model_t *trainer_shown_model(run *r);
/** model.ebm (the shown model) and, with --average-from, model_raw.ebm. */
int trainer_save_models(run *r);
/** checkpoint.ckpt at r->step with seconds of training (every rank calls it). */
int trainer_save_checkpoint(run *r, double seconds);
/** train.csv, appended to when resuming, else written anew (r->csv). */
int trainer_open_csv(run *r);
/** Train until --steps, --minutes or a signal (r->stopped_by); *seconds_out
 *  receives the total training time. */
int trainer_train(run *r, double *seconds_out);

/* ---- trainer_eval.c ----------------------------------------------------- */

/** --ais-base data: r->ais_base, or r->ais_base_note saying why not. */
int trainer_prepare_ais_base(run *r);
/** --eval-every: the held-out rows and how they are scored (r->heldout_*). */
int trainer_prepare_heldout(run *r);
/** --eval-every at step: m's mean held-out log-likelihood (or bound), its
 *  log Z and AIS's s.e. (0 if exact), and the IS estimate (DBMs). */
int trainer_heldout_evaluate(run *r, const ebm_model_t *m, int64_t step, double *ll_mean,
                             double *log_z, double *log_z_se, double *is_mean);
/** The chains of the AIS check: --ais-check-chains, else --ais-chains. */
int64_t trainer_check_chains(const trainer_config *c);
/** The final evaluation of m on the test images into res. */
int trainer_evaluate(const run *r, const ebm_model_t *m, result *res);

/* ---- trainer_report.c --------------------------------------------------- */

/** Distributed: the stragglers' figures per step into out; 0 if none. */
int trainer_stragglers(const run *r, double out[4]);
/** The report on stdout, summary.txt and table_row.txt. */
void trainer_report(const run *r, const result *res, double train_s, double pictures_s,
                    double sample_accept, double sample_sweeps);

#endif
