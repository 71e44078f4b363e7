/* Training checkpoints for the example trainers: everything a run needs to
 * continue exactly where it stopped, in one file, written atomically.
 *
 * A checkpoint holds the model (its ebm_model_save_buffer bytes), the
 * training generator's state (ebm_rng_get_state), the optimiser's step count
 * and buffers (optim.h), the average of the iterates if one is kept
 * (optim_average: its start step, count and double accumulator), the
 * estimator's persistent chains if it has any (ebm_estimator_get_chains:
 * PCD), the iteration, the training time so far, and a free-form
 * configuration text the trainer uses to refuse a resume with different
 * settings. Resuming restores all of it, so that a run of 2N steps and a run
 * of N steps + checkpoint + resume for N steps end with the same parameters
 * (and the same average) bit for bit (on the same machine, BLAS and threads).
 *
 * File layout (every integer little-endian, floats as IEEE-754 bit patterns):
 *   magic "EBMCKPT1" (8 bytes) | u32 format version | u32 section count |
 *   sections: 4-byte tag, u64 payload length, payload |
 *   u32 CRC-32 (zlib's) of every byte before it.
 * Sections: "MODL" model file bytes (docs/format.md); "RNG " 6 x u64;
 * "ITER" i64 iteration, f64 seconds; "OPTM" i64 step, i64 n, n floats;
 * "AVRG" i64 from, i64 count, i64 n, n doubles (the running mean);
 * "CHNS" i64 rows, i64 width, rows x width floats; "CONF" text.
 * Unknown tags are skipped, so later versions may add sections that a
 * reader may ignore. Version 2 adds AVRG, which must not be ignored (a
 * resume without it would lose the average): a file with AVRG is version 2,
 * a file without is version 1, byte for byte as before, so that programs
 * that read only version 1 still resume runs without an average, and refuse
 * those with one. Both versions are read.
 *
 * Writing goes to "<path>.tmp", which is flushed, synced and renamed over
 * path: a crash leaves the old checkpoint or the new one, never half of one.
 * Nothing here prints or exits: functions return CHECKPOINT_OK (0) or a
 * negative code, with a message in the caller's buffer.
 */
#ifndef EXAMPLES_COMMON_CHECKPOINT_H
#define EXAMPLES_COMMON_CHECKPOINT_H

#include "optim.h"

#include <ebm.h>
#include <stddef.h>
#include <stdint.h>

enum checkpoint_status {
    CHECKPOINT_OK = 0,
    CHECKPOINT_EARG = -1,     /* a NULL pointer or an inconsistent argument */
    CHECKPOINT_ENOMEM = -2,   /* out of memory */
    CHECKPOINT_EIO = -3,      /* the file could not be read or written (errno in the message) */
    CHECKPOINT_EFORMAT = -4,  /* not a checkpoint, a bad CRC, or a malformed section */
    CHECKPOINT_EMISMATCH = -5 /* the checkpoint does not fit the handles it is restored into */
};

/** The largest iteration, optimiser step, average start and count that a
 * checkpoint holds (2^62): a run resumed from one can go on for 2^62 more
 * steps before a counter overflows. */
#define CHECKPOINT_MAX_STEP (INT64_C(1) << 62)

/** A checkpoint read from a file; checkpoint_free releases it. */
typedef struct checkpoint {
    ebm_model_t *model;                       /* owned */
    uint64_t rng_state[EBM_RNG_STATE_WORDS];
    int has_rng;
    int64_t iteration;
    double seconds;                           /* training time so far */
    int64_t opt_step;
    int64_t opt_floats;
    float *opt_buffers;                       /* owned, [opt_floats] or NULL */
    int has_average;                          /* an AVRG section was read */
    int64_t avg_from, avg_count, avg_n;
    double *avg_mean;                         /* owned, [avg_n] or NULL */
    int64_t n_chains, chain_width;
    float *chains;                            /* owned, n_chains x chain_width, or NULL */
    char *config;                             /* owned, NUL-terminated, or NULL */
} checkpoint;

/**
 * Save the state of a run to path, atomically.
 * @param avg    NULL, or the average of the iterates (saved if active: then
 *               the file is version 2)
 * @param e      NULL, or the estimator whose persistent chains (if any) to save
 * @param config NULL, or a text stored as is
 * @return CHECKPOINT_OK, CHECKPOINT_EARG, CHECKPOINT_ENOMEM, CHECKPOINT_EIO
 */
int checkpoint_save(const char *path, const ebm_model_t *m, const ebm_rng_t *rng,
                    const optim *o, const optim_average *avg, const ebm_estimator_t *e,
                    int64_t iteration, double seconds, const char *config, char *err,
                    size_t err_size);

/**
 * The model files beside a checkpoint: <out>/model.ebm (shown: the model
 * evaluated, e.g. the average of the iterates) and, if raw is not NULL,
 * <out>/model_raw.ebm (raw: the last iterate), each by ebm_model_save.
 * @return CHECKPOINT_OK, or CHECKPOINT_EIO with err "<path>: <the model's
 *         message>"
 */
int checkpoint_save_models(const char *out, const ebm_model_t *shown, const ebm_model_t *raw,
                           char *err, size_t err_size);

/**
 * Read and verify a checkpoint (magic, version 1 or 2, CRC, every section's
 * length, the model through ebm_model_load_buffer; the iteration, the
 * optimiser's step and the average's start and count in 0..
 * CHECKPOINT_MAX_STEP, the seconds finite and >= 0). *out is zeroed on
 * failure.
 * @return CHECKPOINT_OK, CHECKPOINT_EARG, CHECKPOINT_ENOMEM, CHECKPOINT_EIO,
 *         CHECKPOINT_EFORMAT
 */
int checkpoint_load(checkpoint *out, const char *path, char *err, size_t err_size);

/**
 * Put a loaded checkpoint into a run's handles: m's parameters (m must have
 * the same layer sizes and unit kinds), rng's state, o's step and buffers,
 * avg's average, e's persistent chains (when the checkpoint has some; e may
 * be NULL only if it has none). Everything is checked before anything
 * changes. The average: a checkpoint with one needs an active avg with the
 * same start step; one without (version 1) restores into an inactive or NULL
 * avg, or into an active one whose start step is at or past the
 * checkpoint's optimiser step (then nothing was to be averaged yet, and avg
 * starts empty), else it would miss iterates: CHECKPOINT_EMISMATCH.
 * @return CHECKPOINT_OK, CHECKPOINT_EARG, CHECKPOINT_EMISMATCH
 */
int checkpoint_restore(const checkpoint *c, ebm_model_t *m, ebm_rng_t *rng, optim *o,
                       optim_average *avg, ebm_estimator_t *e, char *err, size_t err_size);

/**
 * Whether a run whose configuration text is now may resume from c. The
 * trainers' texts are "FIXED | TUNABLE": a resume must keep the settings
 * before " | " (they fix the model, the data and the optimiser's state) and
 * may change those after it.
 * @return c's settings after " | " if its settings before it are now's (the
 *         caller may compare the two tails to note changed tunable settings),
 *         else NULL (also when c or now is NULL, or either text has no " | ")
 */
const char *checkpoint_config_tunable(const checkpoint *c, const char *now);

/** Free what a loaded checkpoint owns and zero it. NULL is a no-op. */
void checkpoint_free(checkpoint *c);

#endif
