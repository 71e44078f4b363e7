/* The training loop shared by train_ucd, train_ucd_lmi and train_pcd: options,
 * data, model, estimator, optimiser, progress, CSV log, sample pictures,
 * checkpoints with exact resume, the held-out log-likelihood during training
 * (--eval-every), and the final evaluation (log-likelihood or its bound,
 * samples, image completion). Each trainer is a main() that picks the
 * estimator and the papers' defaults, then calls trainer_main. The code is
 * in trainer.c and the trainer_*.c files it runs, by concept
 * (trainer_run.h lists them).
 *
 * Random streams (seed = --seed): stream 0 initialises the model, stream 1
 * drives training (mini-batch rows, Bernoulli binarisation, the estimator),
 * stream 2 the evaluation (AIS), stream 3 + s the sample picture at step s,
 * stream 4 the completion picture, stream 2^32 the held-out rows of
 * --eval-every (their Bernoulli draws), 2^32 + s its AIS at step s and
 * 2^33 + s its IS estimate; 3 x 2^32 the final IS estimate and
 * 3 x 2^32 + 1 the final --ais-check. So
 * pictures and evaluations never change the training path, and runs with the
 * same seed start from the same model whatever the estimator.
 *
 * Outputs in --out: train.csv (a line every --log-every steps: step,
 * seconds, lr, grad_norm, tau_mean, tau_max, positive_tau_mean,
 * positive_tau_max, capped, sweeps_mean, search_capped, accept_rate,
 * mean_field_missed; with --eval-every N three more columns,
 * heldout_loglik_<method>, heldout_log_z and heldout_seconds, filled every N
 * steps and "nan" on the other lines, where <method> is exact, ais (an RBM's
 * exact log p(v) with AIS log Z) or ais_bound (a DBM's mean-field bound with
 * AIS log Z), and after ais_bound with --is-samples a fourth,
 * heldout_loglik_is (the IS estimate with the same log Z); "seconds" is
 * training time,
 * without these evaluations),
 * checkpoint.ckpt, model.ebm, samples.png, completion.png, summary.txt,
 * table_row.txt.
 *
 * --average-from N (optim_average): the Polyak-Ruppert tail average of the
 * iterates, the mean of the parameters after steps N+1, N+2, ..., is kept
 * beside training, which continues on the last iterate. Once it holds an
 * iterate, everything evaluated, drawn or saved as the model is the
 * average: --eval-every, the final evaluation, the pictures and model.ebm;
 * model_raw.ebm holds the last iterate. The average is in the checkpoint
 * (an exact resume continues it). train.csv (with --eval-every) gains three
 * columns at the end, <heldout column>_avg, heldout_log_z_avg and
 * heldout_seconds_avg (and heldout_loglik_is_avg), "nan" until the
 * average holds an iterate, beside
 * the last iterate's held-out columns. summary.txt gains average_from,
 * average_count and evaluated (averaged, or last_iterate if no step came
 * after N).
 *
 * Signals: SIGINT and SIGTERM end the run after the step in progress; the
 * checkpoint and model.ebm (and model_raw.ebm) are written and named on
 * stderr, and trainer_main returns 128 + the signal's number (130, 143).
 * --resume from that checkpoint ends with the same model, bit for bit, as a
 * run never interrupted.
 *
 * Unlike the library, trainer_main prints (progress to stderr, results to
 * stdout) and returns an exit status; it still never calls exit() itself.
 */
#ifndef EXAMPLES_COMMON_TRAINER_H
#define EXAMPLES_COMMON_TRAINER_H

#include <ebm.h>
#include <stdint.h>

#include "dist.h"

/* The most temperatures --ladder takes. */
#define TRAINER_MAX_BETAS 64

typedef struct trainer_config {
    const char *prog;   /* program name, for messages */
    const char *title;  /* the method's name in tables: "UCD-LMI" */
    int method;         /* enum ebm_estimator_kind: UCD, UCD_LMI or PCD */

    /* data */
    int data;               /* enum trainer_data */
    const char *data_dir;   /* NULL: the data set's default place */
    int bas_side;           /* --data bas: side of the images */
    int64_t train_rows;     /* 0: all; else a prefix */
    int64_t test_rows;      /* 0: all; else a prefix (evaluation) */
    int binarize;           /* enum data_binarize (threshold, bernoulli, 8bit, levels) */
    int levels;             /* --binarize levels: grey levels q, one-hot sites of q units */

    /* model */
    int64_t layers[EBM_MAX_LAYERS];
    int n_layers;           /* 0: the method's default for the data */
    int units;              /* enum trainer_units */
    int hidden;             /* enum trainer_hidden */
    int init;               /* EBM_INIT_ORTHOGONAL or EBM_INIT_GAUSSIAN */
    double init_scale;
    int centre;             /* --centre data (1): offsets that follow the data's layer means */
    double offset_rate;     /* --offset-rate: their moving-average rate per step */

    /* optimiser */
    int optimizer;          /* enum optim_kind */
    double lr, momentum, gamma, clip;
    int schedule;           /* enum optim_schedule */
    int64_t batch;
    int64_t average_from;   /* --average-from: average the iterates after this step; -1: off */

    /* estimator */
    int64_t k;              /* -1: the library's default */
    int64_t chains;         /* PCD persistent chains; 0: the batch size */
    int64_t cap;            /* EBM_ESTIMATOR_MAX_STEPS, 0: none */
    int marginalize;        /* enum ebm_marginalize, or -1: the library's default */
    int positive;           /* enum ebm_positive_phase */
    int64_t search_sweeps;  /* UCD-LMI local-search cap */
    /* train_pcd --ladder: parallel tempering (EBM_ESTIMATOR_PT) over these
     * inverse temperatures; n_ladder 0: plain PCD */
    double ladder[TRAINER_MAX_BETAS];
    int n_ladder;
    /* --global-prob, --flip-prob: global moves of the chains from the
     * training rows (EBM_SAMPLER_GLOBAL_PROB, ebm_estimator_set_proposal;
     * UCD, PCD, PT); global_prob 0: none */
    double global_prob, flip_prob;

    /* run */
    int64_t steps;          /* total steps (including those before a resume); 0: no limit */
    double minutes;         /* total training time; 0: no limit */
    uint64_t seed;
    const char *out;
    int64_t checkpoint_every, log_every, sample_every;
    const char *resume;

    /* pictures and evaluation */
    int64_t n_samples;      /* images in samples.png */
    int64_t mh_steps;       /* MH_UNIFORM steps after the local search (Taniguchi 4.4) */
    int64_t n_completions;  /* images in completion.png */
    int64_t ais_chains, ais_betas;
    int64_t ais_check;        /* a second AIS with this many times the betas (0: none) */
    int64_t ais_check_chains; /* ... and this many chains (0: --ais-chains) */
    int64_t is_samples;     /* DBMs: importance samples per test row (0: no IS estimate) */
    int eval;               /* enum trainer_eval */
    int ais_base;           /* 0: AIS from uniform units; 1: from the training data's
                             * pixel means (ebm_model_log_partition_ais_base) */
    int64_t eval_every;     /* held-out log-likelihood every N steps (0: never) */
    int64_t eval_rows;      /* ... on this prefix of the test rows (0: all) */
    int64_t eval_betas;     /* ... with this many AIS betas where AIS is needed */

    /* data-parallel (examples/mpi/train_mpi.c): the ranks, or NULL for one
     * process, and --shards (dist.h). Rank 0 alone writes the outputs,
     * evaluates and prints; every rank reads the data (and --resume's
     * checkpoint) itself. */
    const dist_comm *comm;
    int64_t shards;
} trainer_config;

/* --data digits is scikit-learn's 8x8 digits (data_load_digits_csv: 1,797
 * images split 4/5 train, 1/5 test per class, fixed). */
enum trainer_data { TRAINER_FASHION = 0, TRAINER_MNIST = 1, TRAINER_BAS = 2, TRAINER_DIGITS = 3 };
/* --units: the first two are the library's kinds, on every layer; POTTS is
 * a categorical visible layer (one-hot sites of --levels units, from
 * --binarize levels) over binary hidden layers (ebm_model_create_potts). */
/* --hidden: AUTO takes the kind of --units (binary for potts); DRELU makes
 * dReLU hidden units (an RBM; EBM_UNITS_DRELU). */
enum trainer_hidden { TRAINER_HIDDEN_AUTO = 0, TRAINER_HIDDEN_DRELU = 1 };
enum trainer_units {
    TRAINER_BINARY = EBM_UNITS_BINARY,
    TRAINER_SPIN = EBM_UNITS_SPIN,
    TRAINER_POTTS = 2
};
enum trainer_eval {
    TRAINER_EVAL_AUTO = 0, /* exact where enumeration is cheap, else AIS */
    TRAINER_EVAL_AIS = 1,  /* AIS even where exact would be possible */
    TRAINER_EVAL_NONE = 2  /* no log-likelihood (pictures only) */
};

/* The evaluation's defaults (docs/demo.md, "Evaluation", has the
 * measurements behind them): the final AIS from the data's pixel means with
 * TRAINER_AIS_BETAS temperatures, and its bias check, a second AIS with 10
 * times the temperatures on TRAINER_AIS_CHECK_CHAINS chains; --eval-every's
 * AIS with TRAINER_EVAL_BETAS. */
#define TRAINER_AIS_BETAS 10000
#define TRAINER_AIS_CHECK_CHAINS 20
#define TRAINER_EVAL_BETAS 3000

/** The defaults of a method (EBM_ESTIMATOR_UCD, UCD_LMI or PCD), from the papers. */
void trainer_defaults(trainer_config *c, int method, const char *prog, const char *title);

/**
 * Parse the command line into c (on top of its defaults), load the data, and
 * train, evaluate and write the outputs. --help prints the options.
 * @return a process exit status: 0 on success, 1 on any error, 2 for bad
 *         options, 128 + the signal's number after SIGINT or SIGTERM
 */
int trainer_main(trainer_config *c, int argc, char **argv);

/**
 * Whether AIS can start from the data's pixel means on m
 * (ebm_model_log_partition_ais_base): NULL if it can (binary, spin and
 * Potts visible units), else why not, for the note of a run that falls
 * back to uniform units.
 */
const char *trainer_data_base_unfit(const ebm_model_t *m);

#endif
