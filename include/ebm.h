/*
 * libebm: energy-based latent-variable models (RBM, DBM, GRBM) for C.
 *
 * This header is the whole public contract. It is C99, declares no public
 * structs and no variadic functions, and has no platform conditionals after
 * the export macro, so that ctypes, cffi, Julia and Go can bind it from the
 * header alone.
 *
 * Conventions (docs/conventions.md has the long form):
 *  - Every fallible function returns int: EBM_OK (0) or a negative EBM_E*
 *    code. A few functions also return a non-negative count (documented).
 *  - A call that fails changes nothing the caller can see: parameters, chain
 *    states, output buffers and generators are left as they were.
 *  - A call that returns EBM_OK has written only finite numbers. Parameters
 *    so large that a layer input or a result overflows float are reported
 *    as EBM_EVALUE ("... is not finite (it overflowed float ...)").
 *  - Every call returns: loops that are exact but unbounded in principle
 *    (coupled chains, rejection) fail with EBM_ELIMIT at a documented limit.
 *  - Every failure leaves a message naming the argument and its value:
 *    ebm_model_errmsg(m) for calls on a model, ebm_rng_errmsg(r) for calls on
 *    a generator; calls that create a model from nothing fill a caller buffer.
 *  - States are float matrices, one row per configuration, layers side by
 *    side (see ebm_model_layer_offset). Energies and log-probabilities are
 *    double.
 *  - Threads: a handle is used by one thread at a time, except that calls
 *    taking a const model may run concurrently on the same model. The
 *    library's own row loops run on ebm_get_num_threads() threads (see
 *    "Threads" below); results are the same bits for every thread count.
 *  - The library never aborts, exits, prints, or changes BLAS thread settings.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_H
#define EBM_H

/* Only size_t is taken from <stddef.h> (GCC's and Clang's honour
 * __need_size_t; other compilers include all of it): its max_align_t carries
 * attributes that FFI parsers reject. */
#define __need_size_t
#include <stddef.h>
#include <stdint.h>

/* Defining EBM_API before including this header replaces the export
 * attribute: `cc -E -P -DEBM_API= ebm.h` gives plain declarations that FFI
 * generators (cffi's cdef) read. */
#ifndef EBM_API
#if defined(_WIN32) && defined(EBM_BUILDING_DLL)
#define EBM_API __declspec(dllexport)
#elif defined(_WIN32) && defined(EBM_USING_DLL)
#define EBM_API __declspec(dllimport)
#elif defined(__GNUC__) && __GNUC__ >= 4
#define EBM_API __attribute__((visibility("default")))
#else
#define EBM_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                  */
/* ------------------------------------------------------------------------ */

#define EBM_VERSION_MAJOR 0
#define EBM_VERSION_MINOR 1
#define EBM_VERSION_PATCH 0
#define EBM_VERSION_STRING "0.1.0"
/** Major * 10000 + minor * 100 + patch. */
#define EBM_VERSION_NUMBER (EBM_VERSION_MAJOR * 10000 + EBM_VERSION_MINOR * 100 + EBM_VERSION_PATCH)
/** N in libebm.so.N: releases with the same ABI version are binary compatible. */
#define EBM_ABI_VERSION 0

/** @return the library's version, e.g. "0.1.0" (static, never NULL). */
EBM_API const char *ebm_version_string(void);
/** @return major * 10000 + minor * 100 + patch of the library in use. */
EBM_API int ebm_version_number(void);
/** @return the ABI version of the library in use (EBM_ABI_VERSION). */
EBM_API int ebm_abi_version(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/** Result codes. Frozen: never renumbered. */
enum ebm_status {
    EBM_OK = 0,
    EBM_ENULL = -1,        /**< a required pointer argument is NULL */
    EBM_ESHAPE = -2,       /**< a size, stride or layer index is wrong */
    EBM_EVALUE = -3,       /**< a value outside its domain (NaN, 0.5 in a binary layer, ...) */
    EBM_ENOMEM = -4,       /**< memory could not be allocated */
    EBM_EIO = -5,          /**< a file could not be read or written */
    EBM_EFORMAT = -6,      /**< a model file or buffer is not valid */
    EBM_EUNSUPPORTED = -7, /**< the operation is not defined for this model */
    EBM_ELIMIT = -8,       /**< a size limit (e.g. exact enumeration past 2^32 states) */
    EBM_EINTERNAL = -9     /**< a bug in libebm: please report it */
};

/** @return a static description of a result code, never NULL. */
EBM_API const char *ebm_strerror(int code);
/** @return the code's constant name ("EBM_EVALUE"), static, never NULL. */
EBM_API const char *ebm_error_name(int code);

/* ------------------------------------------------------------------------ */
/* Threads                                                                  */
/* ------------------------------------------------------------------------ */

/**
 * The library's own row loops (draws, means, local-search decisions and
 * updates, coupled rows with their rejection loops, Gaussian moves) run on
 * up to ebm_get_num_threads() threads, the calling thread included. The
 * default is the environment variable EBM_NUM_THREADS (1 to 256), read when
 * first needed, else the number of CPUs the process may run on
 * (sched_getaffinity). ebm_set_num_threads(n) sets it for the process; 0
 * returns to the default. Loops with little work run on the calling thread.
 *
 * The BLAS is called from the calling thread and uses its own threads
 * (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, ...): the library never changes
 * its settings. The library's workers stop polling for work when the
 * library enters a BLAS call and sleep, so they leave the cores to the
 * BLAS's threads.
 *
 * Results are the same bits for every thread count: each row's draws come
 * from its own counters and each row's arithmetic does not depend on the
 * split. (A multithreaded BLAS may itself round differently with another
 * thread count; OpenBLAS's sgemm does.)
 *
 * One loop uses the workers at a time, process-wide: a loop that finds them
 * busy (a call from another of the user's threads) runs on its calling
 * thread, so the library's loops never run on more than the calling
 * threads and ebm_get_num_threads() - 1 workers. Called from inside a user's OpenMP
 * parallel region, the library's loops run on the calling thread in the
 * OpenMP build (Makefile: OPENMP), which uses OpenMP's threads instead of
 * its own workers. A forked child makes its own workers when it needs them.
 */

/**
 * Set the number of threads of the library's row loops, for the process.
 * @param n 1 to 256, or 0 for the default (EBM_NUM_THREADS, else the CPUs
 *          the process may run on).
 * @return EBM_OK, or EBM_EVALUE (n outside 0..256; nothing changes; the
 *         message goes to errbuf if it is not NULL).
 */
EBM_API int ebm_set_num_threads(int64_t n, char *errbuf, size_t errbuf_size);
/** @return the number of threads the library's row loops may use now. */
EBM_API int ebm_get_num_threads(void);

/* ------------------------------------------------------------------------ */
/* Random numbers                                                           */
/* ------------------------------------------------------------------------ */

/**
 * A counter-based generator: Philox4x32-10 with a 64-bit key made from
 * (seed, stream) by splitmix64. Uniforms and normals are bit-identical on
 * every platform and instruction set: the normals' log, sine and cosine are
 * the library's own (fdlibm's polynomials), not the C library's.
 * The state is EBM_RNG_STATE_WORDS words and can be saved and restored
 * exactly (checkpoints). Batched library calls draw row r's numbers from
 * counters that depend only on (key, call sequence number, r, unit), so
 * they do not depend on the batch size or on how rows are split.
 */
typedef struct ebm_rng ebm_rng_t;

#define EBM_RNG_STATE_WORDS 6
/** @return EBM_RNG_STATE_WORDS, for callers that cannot see macros. */
EBM_API int ebm_rng_state_words(void);

/**
 * Create a generator.
 * @param[out] out    the new generator, owned by the caller (ebm_rng_destroy);
 *                    NULL on failure
 * @param[in]  seed   any value
 * @param[in]  stream any value; distinct (seed, stream) pairs give independent streams
 * @return EBM_OK, EBM_ENULL, EBM_ENOMEM
 */
EBM_API int ebm_rng_create(ebm_rng_t **out, uint64_t seed, uint64_t stream);
/**
 * Create the child generator number `index` of `parent` (e.g. one per
 * thread). The child depends on the parent's whole position (key, sequence,
 * word) and on index; the parent is not changed. *out is NULL on failure.
 * @return EBM_OK, EBM_ENULL, EBM_ENOMEM
 */
EBM_API int ebm_rng_derive(ebm_rng_t **out, const ebm_rng_t *parent, uint64_t index);
/** Copy the state into state[EBM_RNG_STATE_WORDS]. @return EBM_OK, EBM_ENULL */
EBM_API int ebm_rng_get_state(const ebm_rng_t *r, uint64_t *state);
/**
 * Restore a state saved by ebm_rng_get_state.
 * @return EBM_OK, EBM_ENULL, EBM_EVALUE (not a state this library wrote; r unchanged)
 */
EBM_API int ebm_rng_set_state(ebm_rng_t *r, const uint64_t *state);
/**
 * Fill out[0..n) with uniform floats in [0, 1) (24 random bits each).
 * Consecutive fills continue one stream: fill(3) then fill(1) equals fill(4),
 * unless a batched library call on r comes between (each batched call takes
 * a fresh sequence of its own and retires the one the fills were reading).
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE (n < 0)
 */
EBM_API int ebm_rng_uniform(ebm_rng_t *r, int64_t n, float *out);
/**
 * Fill out[0..n) with standard normal floats (Box-Muller in double precision
 * on 53-bit uniforms; a spare value is kept in the state, so consecutive
 * fills continue one stream).
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE (n < 0)
 */
EBM_API int ebm_rng_normal(ebm_rng_t *r, int64_t n, float *out);
/** @return the message of the last failed call on r ("" if none), never NULL. */
EBM_API const char *ebm_rng_errmsg(const ebm_rng_t *r);
/** Free a generator. NULL is a no-op. */
EBM_API void ebm_rng_destroy(ebm_rng_t *r);

/* ------------------------------------------------------------------------ */
/* Model                                                                    */
/* ------------------------------------------------------------------------ */

/**
 * A layered Boltzmann machine with layers 0..L (layer 0 visible), L >= 1:
 * an RBM (L = 1), a DBM (L >= 2) or, with Gaussian visible units, a GRBM or
 * GDBM. Layer l-1 and layer l are connected by W_l (n_{l-1} x n_l).
 *
 * Energy (binary or spin layers):
 *   E(x) = - sum_l b_l . x_l - sum_{l>=1} x_{l-1}^T W_l x_l
 * With Gaussian visible units v (mean mu = b_0, variance sigma^2 =
 * exp(logvar)), the term -b_0 . v is replaced by 0.5 ||(v - mu) / sigma||^2
 * and v couples through v / sigma^2 (Liao et al. 2022, eq. 1):
 *   E(v, x_1, ...) = 0.5 ||(v - mu)/sigma||^2 - (v/sigma^2)^T W_1 x_1 - ...
 * An RBM's hidden layer may hold dReLU units (Tubiana et al. 2019): real
 * units h with the self-energy, per unit j,
 *   S_j(h) = gamma+_j (h+)^2 / 2 + gamma-_j (h-)^2 / 2 - delta_j |h|
 * (h+ = max(h, 0), h- = min(h, 0); gamma+- = exp(log gamma+-), the shape
 * block EBM_PARAM_SHAPE), added to the energy: E = ... - b_1 . h - v^T W_1 h
 * + sum_j S_j(h_j). Given its input a = b_1 + W_1^T v, a unit is a normal
 * truncated to h > 0 (mean (a + delta) / gamma+) or to h < 0 (mean (a -
 * delta) / gamma-), each half with its own weight: a Gaussian unit when
 * gamma+ = gamma- and delta = 0, a ReLU-like one as gamma- grows, bimodal
 * when delta > 0. Its free energy, mean and mode have closed forms (erfc).
 * A centred model (ebm_model_set_offsets) measures every binary, spin or
 * Potts unit from its offset mu_l (Melchior, Fischer and Wiskott 2016):
 *   E(x) = - sum_l b_l . (x_l - mu_l) - sum_{l>=1} (x_{l-1} - mu_{l-1})^T W_l (x_l - mu_l)
 * Every call below (energies, conditionals, samplers, estimators, log Z)
 * uses this energy; the offsets are 0 until set, which is the energy above.
 */
typedef struct ebm_model ebm_model_t;

/** Unit kinds. */
enum ebm_units {
    EBM_UNITS_BINARY = 0,   /**< values 0 or 1 */
    EBM_UNITS_SPIN = 1,     /**< values -1 or +1 */
    EBM_UNITS_GAUSSIAN = 2, /**< real values; visible layer only */
    EBM_UNITS_POTTS = 3,    /**< categorical (one-hot) sites; visible layer only
                                 (ebm_model_create_potts) */
    EBM_UNITS_DRELU = 4     /**< real dReLU units (Tubiana et al. 2019); the hidden
                                 layer of an RBM only (EBM_PARAM_SHAPE) */
};

/** Parameter block kinds (see ebm_model_param_block). */
enum ebm_param_kind {
    EBM_PARAM_WEIGHT = 0, /**< W_l, l = 1..L: n_{l-1} x n_l, row-major */
    EBM_PARAM_BIAS = 1,   /**< b_l, l = 0..L; for a Gaussian layer 0 this is the mean mu */
    EBM_PARAM_LOGVAR = 2, /**< log sigma^2, l = 0 only, Gaussian visible units only */
    EBM_PARAM_SHAPE = 3   /**< l = 1 of an RBM with dReLU hidden units: 3 x n_1, the
                               rows log gamma+, log gamma-, delta */
};

/** Initialisation schemes (see ebm_model_init). */
enum ebm_init_scheme {
    EBM_INIT_ORTHOGONAL = 0, /**< Haar-random (semi-)orthogonal W_l times scale */
    EBM_INIT_GAUSSIAN = 1    /**< W_l entries N(0, scale^2) */
};

/** Largest number of layers (sum-out masks are 32-bit). */
#define EBM_MAX_LAYERS 32
/** @return EBM_MAX_LAYERS, for callers that cannot see macros. */
EBM_API int ebm_max_layers(void);

/**
 * Create a model with all parameters zero (log-variances zero: sigma = 1).
 * @param[out] out           the new model, owned by the caller (ebm_model_destroy);
 *                           NULL on failure
 * @param[in]  n_layers      L + 1, from 2 to EBM_MAX_LAYERS
 * @param[in]  sizes         n_layers unit counts, each from 1 to 2^31 - 1, and
 *                           the state width (their sum) at most 2^31 - 1, so
 *                           that every dimension and stride fits a BLAS int
 * @param[in]  visible_units EBM_UNITS_BINARY, EBM_UNITS_SPIN or EBM_UNITS_GAUSSIAN
 * @param[in]  hidden_units  EBM_UNITS_BINARY or EBM_UNITS_SPIN, or EBM_UNITS_DRELU
 *                           for an RBM (n_layers 2) with discrete visible units
 * @param[out] errbuf        NULL, or a buffer that receives a message on failure
 * @param[in]  errbuf_size   its size in bytes (the message is truncated to fit)
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE, EBM_ELIMIT, EBM_ENOMEM,
 *         EBM_EUNSUPPORTED (dReLU units in a DBM, or over Gaussian visible units)
 */
EBM_API int ebm_model_create(ebm_model_t **out, int64_t n_layers, const int64_t *sizes,
                             int visible_units, int hidden_units, char *errbuf,
                             size_t errbuf_size);
/**
 * Create a model whose visible units are categorical (Potts): layer 0 is
 * sites of q categories each, one-hot, so its n_0 = sizes[0] columns are
 * sizes[0] / q sites of q consecutive columns (site i, category a at column
 * i q + a). A visible state holds one 1 and q - 1 zeros per site. The
 * energy is the same formula, -b.x - x^T W h - ...: b_0 and the rows of
 * W_1 are per (site, category). Parameters start at zero.
 * @param[in] categories q, from 2 to 65536, dividing sizes[0]
 * @param[in] hidden_units EBM_UNITS_BINARY or EBM_UNITS_SPIN, or EBM_UNITS_DRELU
 *                         for an RBM
 * @return as ebm_model_create; EBM_ESHAPE when q does not divide sizes[0]
 */
EBM_API int ebm_model_create_potts(ebm_model_t **out, int64_t n_layers, const int64_t *sizes,
                                   int64_t categories, int hidden_units, char *errbuf,
                                   size_t errbuf_size);
/** @return q of a Potts layer l, 1 for the other layers, -1 if m is NULL or l
 *  out of range. */
EBM_API int64_t ebm_model_layer_categories(const ebm_model_t *m, int64_t l);
/** Free a model. NULL is a no-op. */
EBM_API void ebm_model_destroy(ebm_model_t *m);

/** @return L + 1, or -1 if m is NULL. */
EBM_API int64_t ebm_model_num_layers(const ebm_model_t *m);
/** @return n_l, or -1 if m is NULL or l is out of range. */
EBM_API int64_t ebm_model_layer_size(const ebm_model_t *m, int64_t l);
/** @return the first column of layer l in a state row, or -1 (as above). */
EBM_API int64_t ebm_model_layer_offset(const ebm_model_t *m, int64_t l);
/** @return the unit kind of layer l (enum ebm_units), or -1 (as above). */
EBM_API int ebm_model_layer_units(const ebm_model_t *m, int64_t l);
/** @return the width of a state row, sum_l n_l, or -1 if m is NULL. */
EBM_API int64_t ebm_model_state_width(const ebm_model_t *m);
/** @return the number of parameters, or -1 if m is NULL. */
EBM_API int64_t ebm_model_param_count(const ebm_model_t *m);

/**
 * Locate a parameter block in the flat parameter vector. The layout is
 * [W_1 .. W_L | b_0 .. b_L | logvar_0 (Gaussian only) | shape_1 (dReLU
 * only)]; gradients use it too.
 * @param[in]  kind   EBM_PARAM_WEIGHT (l = 1..L), EBM_PARAM_BIAS (l = 0..L),
 *                    EBM_PARAM_LOGVAR (l = 0, Gaussian visible units),
 *                    EBM_PARAM_SHAPE (l = 1, dReLU hidden units: 3 rows)
 * @param[out] offset first index of the block (may be NULL)
 * @param[out] rows   rows of the block: n_{l-1} for weights, 1 otherwise (may be NULL)
 * @param[out] cols   columns: n_l for weights and biases, n_0 for logvar (may be NULL)
 * @return EBM_OK, EBM_ENULL, EBM_EVALUE (unknown kind), EBM_ESHAPE (l out of
 *         range), EBM_EUNSUPPORTED (logvar of a non-Gaussian model, shape of a
 *         model without dReLU units)
 */
EBM_API int ebm_model_param_block(const ebm_model_t *m, int kind, int64_t l, int64_t *offset,
                                  int64_t *rows, int64_t *cols);
/** Copy all parameters to out[param_count]. @return EBM_OK, EBM_ENULL */
EBM_API int ebm_model_get_params(const ebm_model_t *m, float *out);
/**
 * Replace all parameters by in[param_count].
 * @return EBM_OK, EBM_ENULL, EBM_EVALUE (a non-finite value, or a
 *         log-variance or dReLU log gamma outside [-30, 30]; the model is
 *         unchanged)
 */
EBM_API int ebm_model_set_params(ebm_model_t *m, const float *in);
/**
 * theta += alpha * g over the whole parameter vector.
 * @return EBM_OK, EBM_ENULL, EBM_EVALUE (alpha or g not finite, or a result
 *         that would be non-finite or a log-variance or dReLU log gamma
 *         outside [-30, 30]; the model is unchanged)
 */
EBM_API int ebm_model_axpy_params(ebm_model_t *m, float alpha, const float *g);
/**
 * Initialise all parameters.
 *  - EBM_INIT_ORTHOGONAL: each W_l is `scale` times a Haar-random matrix with
 *    orthonormal columns (n_{l-1} >= n_l) or rows (otherwise), by the QR
 *    decomposition of a Gaussian matrix with the sign correction of
 *    Mezzadri (2006) (computed as CholeskyQR2 in double precision).
 *  - EBM_INIT_GAUSSIAN: each entry of W_l is N(0, scale^2).
 * Biases: spin hidden and spin visible biases are drawn from Logistic(0, 0.5)
 * (Taniguchi et al. 2023, appendix B: breaks the flip symmetry of spin
 * models); binary biases are 0; a Gaussian layer has mean 0 and log-variance 0
 * (Liao et al. 2022, appendix B); dReLU shapes are 0 (gamma+- = 1, delta =
 * 0: standard Gaussian units).
 * @param[in] scale > 0 and at most 1e30
 * @return EBM_OK, EBM_ENULL, EBM_EVALUE (unknown scheme or bad scale),
 *         EBM_ENOMEM; on failure the parameters and rng are unchanged
 */
EBM_API int ebm_model_init(ebm_model_t *m, ebm_rng_t *rng, int scheme, double scale);

/**
 * Centring. The offsets mu are one value per unit, a state row's width of
 * them (layer l at ebm_model_layer_offset), outside the parameter vector:
 * they are not trained but moved by the caller, usually towards the data's
 * or the model's layer means (Melchior et al. 2016). Gradients
 * (ebm_model_energy_grad, every estimator) are then with respect to the
 * centred parameters: dE/db_l = -(x_l - mu_l), dE/dW_l = -(x_{l-1} -
 * mu_{l-1}) (x_l - mu_l)^T. A binary or Potts unit's offset is in [0, 1],
 * a spin unit's in [-1, 1]; a model with Gaussian visible units has none.
 * Offsets are saved with the model (format version 2, docs/format.md).
 */
/** Copy the offsets to out[state width]. @return EBM_OK, EBM_ENULL */
EBM_API int ebm_model_get_offsets(const ebm_model_t *m, float *out);
/**
 * Replace the offsets by mu[state width].
 * @param[in] keep_law 1: first move the biases, b_l += W_l^T (mu'_{l-1} -
 *                     mu_{l-1}) + W_{l+1} (mu'_{l+1} - mu_{l+1}), so that the
 *                     distribution stays the same (up to the rounding of the
 *                     new biases to float; energies move by a constant);
 *                     0: keep the parameters, so that the distribution changes
 * @return EBM_OK, EBM_ENULL, EBM_EVALUE (an offset outside its unit's range
 *         or not finite, keep_law not 0 or 1, or a moved bias beyond float's
 *         range), EBM_EUNSUPPORTED (a nonzero offset in a model with Gaussian
 *         visible units), EBM_ENOMEM; on failure the model is unchanged
 */
EBM_API int ebm_model_set_offsets(ebm_model_t *m, const float *mu, int keep_law);
/**
 * The offset update of centred training: mu <- mu + rate (target - mu),
 * an exponential moving average of the targets (e.g. batch means of the
 * data or of the model's samples), with the biases moved as in
 * ebm_model_set_offsets(..., 1) so that the distribution stays the same.
 * @param[in] rate   in [0, 1] (Melchior et al. 2016 use 0.01 to 0.1)
 * @param[in] target state width values, each in its unit's offset range
 * @return as ebm_model_set_offsets, and EBM_EVALUE for a bad rate
 */
EBM_API int ebm_model_move_offsets(ebm_model_t *m, double rate, const float *target);

/**
 * Save to a file atomically: write a temporary file beside it, flush, then
 * rename over path. On failure no file at path is changed. Only a regular
 * file (or a link to one) is replaced: a path naming a directory, a FIFO or
 * a device is refused with EBM_EIO. Format: docs/format.md.
 * @return EBM_OK, EBM_ENULL, EBM_EIO, EBM_ENOMEM
 */
EBM_API int ebm_model_save(const ebm_model_t *m, const char *path);
/**
 * Load a model file. The path is opened without blocking and must be a
 * regular file: a FIFO, a device or a directory is EBM_EIO at once.
 * @param[out] out         the new model (NULL on failure)
 * @param[out] errbuf      NULL, or a buffer for the message on failure
 * @return EBM_OK, EBM_ENULL, EBM_EIO, EBM_EFORMAT, EBM_ENOMEM
 */
EBM_API int ebm_model_load(ebm_model_t **out, const char *path, char *errbuf,
                           size_t errbuf_size);
/** @return the exact size in bytes of the model's serialised form, or -1 if m is NULL. */
EBM_API int64_t ebm_model_save_size(const ebm_model_t *m);
/**
 * Serialise into buf[0..cap); *size receives the bytes written.
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE (cap < ebm_model_save_size(m))
 */
EBM_API int ebm_model_save_buffer(const ebm_model_t *m, void *buf, size_t cap, size_t *size);
/** Load from memory; same validation and messages as ebm_model_load. */
EBM_API int ebm_model_load_buffer(ebm_model_t **out, const void *buf, size_t size, char *errbuf,
                                  size_t errbuf_size);

/**
 * @return the message of the last failed call on m ("" if none), never NULL.
 * The text stays valid until the next failing call on m. If other threads may
 * fail calls on m at the same time, use ebm_model_errmsg_copy instead.
 */
EBM_API const char *ebm_model_errmsg(const ebm_model_t *m);
/** Copy the last message into buf (NUL-terminated, truncated to size). @return EBM_OK, EBM_ENULL */
EBM_API int ebm_model_errmsg_copy(const ebm_model_t *m, char *buf, size_t size);

/* ------------------------------------------------------------------------ */
/* Energies, free energies and their gradients                              */
/*                                                                          */
/* States x: n rows, row r at x + r*ldx, with state width <= ldx and both   */
/* ldx and n at most 2^31 - 1 (they are passed to BLAS). Binary layers      */
/* must hold 0/1, spin layers -1/+1, Gaussian layers finite values, Potts   */
/* layers one 1 and q - 1 zeros per site: any other value is EBM_EVALUE     */
/* with a message naming row, unit (or site) and value.                     */
/* Potts units: a layer's mean is each site's softmax, its argmin each      */
/* site's category of the largest input (the lowest of ties), a free        */
/* energy sums each site's q categories out. Local search and UCD-LMI,      */
/* which flip single units, and EBM_SAMPLER_MH_UNIFORM (not yet proven for  */
/* them) refuse Potts models with EBM_EUNSUPPORTED.                         */
/* dReLU units: finite values; a layer's mean, argmin (mode) and draws are  */
/* those of its truncated-normal halves, a free energy integrates them out  */
/* in closed form. Not supported yet (EBM_EUNSUPPORTED): MH_UNIFORM,        */
/* TEMPERING and coupled steps, local search, mean field and its bound,     */
/* offsets on dReLU units, and the estimators UCD, UCD_LMI and PT.          */
/* Only the layers a call reads are checked: values of summed-out layers,   */
/* and of layer l itself in the layer conditionals, are ignored entirely.   */
/* n = 0 is valid and does nothing.                                         */
/* ------------------------------------------------------------------------ */

/**
 * energy[r] = E(x_r), computed in double precision.
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE, EBM_ENOMEM
 */
EBM_API int ebm_model_energy(const ebm_model_t *m, int64_t n, const float *x, int64_t ldx,
                             double *energy);
/**
 * f[r] = F_S(x_r) = -log sum_{x_S} exp(-E(x)): the free energy with the layers
 * in S = sum_out (bit l = layer l) summed (integrated) out analytically. The
 * layers of S must be pairwise non-adjacent; their values in x are ignored.
 * Constants are kept (softplus for 0/1, log(2 cosh a) for spins, the Gaussian
 * integral for a Gaussian layer), so sum over the kept layers of exp(-F_S) = Z.
 * S = 0 gives E. For a DBM, S = odd layers gives E_even (Taniguchi eq. 22),
 * S = even layers gives E_odd (eq. 23), S = {2} with layer 0 fixed gives the
 * posterior marginal energy of eq. 26; for an RBM or GRBM, S = {1} gives the
 * marginal energy of the visible units (Liao eq. 5).
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE (adjacent layers or bits
 *         past L in sum_out, invalid unit values), EBM_ENOMEM
 */
EBM_API int ebm_model_free_energy(const ebm_model_t *m, uint32_t sum_out, int64_t n,
                                  const float *x, int64_t ldx, double *f);
/**
 * grad += sum_r coef[r] * dF_S(x_r)/dtheta, in the flat parameter layout
 * (S = sum_out as in ebm_model_free_energy; S = 0 is the energy). The
 * derivative of a free energy is the conditional expectation of dE/dtheta
 * given the kept layers, so summed-out layers enter through their means (and,
 * for a Gaussian layer, its second moment). One GEMM per weight block for
 * the whole batch: signed coefficients express averages and telescoping sums.
 * Accumulation is in float; grad is unchanged if any coefficient or any
 * contribution is not finite.
 * @param[in]     coef [n] row weights, finite with |coef| <= 1e30
 * @param[in,out] grad [param_count]
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE, EBM_ENOMEM
 */
EBM_API int ebm_model_energy_grad(const ebm_model_t *m, uint32_t sum_out, int64_t n,
                                  const float *x, int64_t ldx, const double *coef, float *grad);
/**
 * out = dF_S/dx_l for a layer l not in S, where each neighbour of l enters as
 * its value, or as its conditional mean if it is in S. For a Gaussian layer
 * 0: (v - mu)/sigma^2 - W_1 m_1 / sigma^2 (Liao eqs. 21 and 28); for a binary
 * or spin layer, the derivative of the multilinear energy, -(b_l + inputs
 * from the neighbours), which is minus the layer input when no neighbour is
 * summed out; for a dReLU unit S'(h) - a: gamma+ h - a - delta (h > 0),
 * gamma- h - a + delta (h < 0), -a at h = 0 (between the one-sided ones).
 * @param[out] out n x n_l, row stride ldo >= n_l
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE (l in S, invalid values), EBM_ENOMEM
 */
EBM_API int ebm_model_energy_grad_input(const ebm_model_t *m, uint32_t sum_out, int64_t l,
                                        int64_t n, const float *x, int64_t ldx, float *out,
                                        int64_t ldo);

/* ------------------------------------------------------------------------ */
/* Conditionals of one layer given its neighbours                           */
/* ------------------------------------------------------------------------ */

/**
 * a = input of layer l given its neighbours in x (the values of layer l
 * itself are ignored). Binary or spin layer: a = b_l + W_l^T x_{l-1} + W_{l+1}
 * x_{l+1}, with x_0 / sigma^2 in place of x_0 when layer 0 is Gaussian, so
 * that p(x_l = 1 | rest) = sigmoid(a) (binary) or sigmoid(2a) (spin).
 * Gaussian layer 0: a = mu + W_1 x_1, the conditional mean.
 * @param[out] a n x n_l, row stride lda >= n_l
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE (invalid states, or an
 *         input that overflowed float; a unchanged), EBM_ENOMEM
 */
EBM_API int ebm_model_layer_input(const ebm_model_t *m, int64_t l, int64_t n, const float *x,
                                  int64_t ldx, float *a, int64_t lda);
/**
 * mean = E[x_l | neighbours]: sigmoid(a) (binary), tanh(a) (spin), a (Gaussian),
 * the truncated halves' mixture mean (dReLU).
 * @return as ebm_model_layer_input
 */
EBM_API int ebm_model_layer_mean(const ebm_model_t *m, int64_t l, int64_t n, const float *x,
                                 int64_t ldx, float *mean, int64_t ldm);
/**
 * logp[r] = log p(x_l = xl_r | neighbours in x_r), in double precision.
 * @param[in] xl candidate values of layer l: n x n_l, row stride ldxl >= n_l
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE, EBM_ENOMEM
 */
EBM_API int ebm_model_layer_logprob(const ebm_model_t *m, int64_t l, int64_t n, const float *x,
                                    int64_t ldx, const float *xl, int64_t ldxl, double *logp);
/**
 * Replace layer l of every row by its conditional argmin (mode) given its
 * neighbours: 1 (binary) or +1 (spin) where a >= 0 (ties go up), else 0 or
 * -1; the mean for a Gaussian layer; for a dReLU unit 0 if a + delta <= 0
 * <= a - delta, else (a + delta) / gamma+ or (a - delta) / gamma-, whichever
 * has the lower energy (ties: the positive one). (Taniguchi eqs. 15-17.)
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE, EBM_ENOMEM
 */
EBM_API int ebm_model_layer_argmin(const ebm_model_t *m, int64_t l, int64_t n, float *x,
                                   int64_t ldx);
/**
 * Replace layer l of every row by a draw from its conditional given its
 * neighbours. Row r's draws depend only on (rng, r), not on n. A dReLU
 * unit picks its half, then draws the truncated normal by rejection (N(0,
 * 1) proposals, or Robert's (1995) exponential ones in the tail); each try
 * succeeds with probability 1/2 or more, and after 64 failures (probability
 * below 2^-64) the last proposal is kept.
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE (invalid states, or an
 *         input or a Gaussian draw that overflowed float; x and rng
 *         unchanged), EBM_ENOMEM
 */
EBM_API int ebm_model_layer_sample(const ebm_model_t *m, int64_t l, ebm_rng_t *rng, int64_t n,
                                   float *x, int64_t ldx);
/**
 * Fill the units of x that are not clamped with independent uniform values
 * (binary: 0/1 with probability 1/2, spin: -1/+1) or N(0, 1) draws
 * (Gaussian, dReLU). x is only written, never read: clamped units keep whatever
 * they hold. Row r's draws depend only on (rng, r).
 * @param[in] clamp NULL (no unit clamped) or a mask: clamp[r*ldc + j] != 0
 *                  fixes column j of row r; ldc = 0 uses row 0 for every row,
 *                  otherwise ldc >= state width
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_ENOMEM (x and rng unchanged)
 */
EBM_API int ebm_model_random_state(const ebm_model_t *m, ebm_rng_t *rng, int64_t n, float *x,
                                   int64_t ldx, const uint8_t *clamp, int64_t ldc);

/* ------------------------------------------------------------------------ */
/* Local search and mean field                                              */
/* ------------------------------------------------------------------------ */

/**
 * Local search for a local minimum of E (Taniguchi et al. 2023, Algs. 1 and
 * 5). Per row a fair coin picks even-first or odd-first; a sweep replaces
 * the free units of the even layers, then of the odd layers (or the other
 * way round), by their conditional argmins; a row stops after the first
 * sweep that changes nothing. Clamped units keep their values, so one call
 * serves the joint (no clamp), the posterior (visible clamped) and image
 * completion (the observed pixels clamped). A free Gaussian layer is set to
 * its mean, which is its argmin; since it is then a function of the binary
 * layers, the search still ends. Rows that stopped leave the batch.
 * @param[in,out] x      starting states; the local minima on return
 * @param[in]     clamp  as in ebm_model_random_state
 * @param[in]     max_sweeps the cap, >= 1
 * @param[out]    sweeps NULL or [n]: sweeps made per row, counting the
 *                       final sweep that changed nothing; max_sweeps for a
 *                       row stopped by the cap (a row whose max_sweeps-th
 *                       sweep changed nothing converged: it is not capped)
 * @return the number of rows stopped by the cap before converging (0 when
 *         every row converged; never hidden), or EBM_ENULL, EBM_ESHAPE,
 *         EBM_EVALUE (invalid states, or a Gaussian layer's mean that
 *         overflowed float), EBM_ENOMEM (x, sweeps and rng unchanged)
 */
EBM_API int ebm_model_local_search(const ebm_model_t *m, ebm_rng_t *rng, int64_t n, float *x,
                                   int64_t ldx, const uint8_t *clamp, int64_t ldc,
                                   int64_t max_sweeps, int64_t *sweeps);
/**
 * Mean-field fixed point for the units that are not clamped: the odd layers'
 * free means are updated from their neighbours, then the even layers', until
 * no mean moves by more than tol (or max_iter sweeps). mu holds means:
 * binary in [0, 1], spin in [-1, 1], Gaussian finite; clamped units hold
 * data. For a DBM with the visible layer clamped this is the variational
 * posterior of Salakhutdinov & Larochelle (2010).
 * @param[in] tol finite and >= 0
 * @return the number of rows that did not reach tol within max_iter (0 when
 *         all converged), or EBM_ENULL, EBM_ESHAPE, EBM_EVALUE (invalid
 *         means, or means that are not finite because an input overflowed
 *         float), EBM_ENOMEM (mu unchanged)
 */
EBM_API int ebm_model_mean_field(const ebm_model_t *m, int64_t n, float *mu, int64_t ldmu,
                                 const uint8_t *clamp, int64_t ldc, int64_t max_iter, double tol);

/* ------------------------------------------------------------------------ */
/* Exact evaluation                                                         */
/* ------------------------------------------------------------------------ */

/**
 * log Z by exact enumeration of the parity class of layers (even or odd)
 * with fewer units, the other class summed out analytically (a Gaussian
 * layer is always summed out). In double precision.
 * @return EBM_OK, EBM_ENULL, EBM_ELIMIT (more than 2^32 states to
 *         enumerate), EBM_ENOMEM
 */
EBM_API int ebm_model_log_partition_exact(const ebm_model_t *m, double *log_z);
/**
 * ll[r] = log p(v_r) = -F(v_r) - log_z, exact: for an RBM or GRBM F is the
 * visible free energy; for a DBM the hidden parity class (odd or even hidden
 * layers) with fewer units is enumerated per row (EBM_ELIMIT past 2^24 of its
 * configurations) and the other summed out.
 * @param[in] data n x n_0 visible rows, row stride ldd >= n_0
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE, EBM_ELIMIT, EBM_ENOMEM
 */
EBM_API int ebm_model_log_likelihood(const ebm_model_t *m, double log_z, int64_t n,
                                     const float *data, int64_t ldd, double *ll);

/**
 * log Z by annealed importance sampling (Neal 2001; Salakhutdinov and Murray
 * 2008 for RBMs, Salakhutdinov and Hinton 2009 for DBMs). The path
 * p_beta(x) ~ exp(-E_beta(x)) scales every weight and every bias of a binary
 * or spin layer by beta (a Gaussian layer keeps its own mean and variance and
 * couples through beta W), from p_0 (independent uniform units and N(mu,
 * sigma^2) visible units, whose log Z is known) to p_1, the model. The odd
 * layers are summed out analytically in the importance weights and the even
 * layers carry the chains; the transition at beta is one Gibbs sweep of
 * p_beta. The schedule of n_betas inverse temperatures (beta_0 = 0 excluded,
 * beta_{n_betas} = 1) spaces them uniformly on [0, 0.5] for the first 10%,
 * on [0.5, 0.9] for the next 30% and on [0.9, 1] for the last 60%.
 * @param[in]  n_chains independent runs (rows), >= 2
 * @param[in]  n_betas  >= 1
 * @param[out] log_z    log of the mean importance weight plus log Z_0
 * @param[out] std_err  NULL, or its standard error over the chains (delta method)
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE (n_chains < 2, n_betas < 1),
 *         EBM_EVALUE (non-finite weights), EBM_ENOMEM; on failure log_z,
 *         std_err and rng are unchanged
 */
EBM_API int ebm_model_log_partition_ais(const ebm_model_t *m, ebm_rng_t *rng, int64_t n_chains,
                                        int64_t n_betas, double *log_z, double *std_err);
/**
 * ebm_model_log_partition_ais from a base distribution fitted to the data
 * (Salakhutdinov and Murray 2008): p_0 has independent visible units with
 * inputs base[0..n_0) (binary: P(v_i = 1) = sigmoid(base_i); spin: P(+1) =
 * sigmoid(2 base_i)) and uniform other units, and the path is
 * p_beta(x) ~ exp((1 - beta) base.v - beta E(x)). With base set to the
 * log-odds of the training data's pixel means the path starts near the
 * data and anneals sharp models with far fewer temperatures than from
 * uniform units. base NULL is ebm_model_log_partition_ais.
 * @param[in] base NULL, or n_0 biases, each finite and within +-1e4
 * @return as ebm_model_log_partition_ais; also EBM_EVALUE (a base bias out
 *         of range, named), EBM_EUNSUPPORTED (a base for a Gaussian visible
 *         layer, whose p_0 is N(mu, sigma^2) already)
 */
EBM_API int ebm_model_log_partition_ais_base(const ebm_model_t *m, ebm_rng_t *rng,
                                             int64_t n_chains, int64_t n_betas,
                                             const float *base, double *log_z, double *std_err);
/**
 * ll[r] = the variational lower bound on log p(v_r) of the mean-field
 * posterior Q (ebm_model_mean_field with the visible layer clamped, 200
 * iterations at most, tolerance 1e-7): -E(v, mu) + H(Q) - log_z, where mu are
 * Q's means (the energy is multilinear, so E_Q[E] = E(v, mu)) and H is the
 * entropy of the factorised Q. For an RBM the bound is not tight; use
 * ebm_model_log_likelihood there.
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE, EBM_ENOMEM
 */
EBM_API int ebm_model_log_likelihood_bound(const ebm_model_t *m, double log_z, int64_t n,
                                           const float *data, int64_t ldd, double *ll);
/**
 * ll[r] = an importance-sampled estimate of log p(v_r) (Burda et al. 2016,
 * IWAE): the hidden parity class (odd or even hidden layers) with fewer
 * units is sampled, the other summed out exactly, and
 *     ll[r] = log( (1/K) sum_k p~(v_r, h_k) / q(h_k | v_r) ) - log_z,
 * with p~ the unnormalised marginal (exp(-F), the other class summed out)
 * and q the defensive mixture 0.95 Q + 0.05 U of the mean-field posterior Q
 * (as in ebm_model_log_likelihood_bound) and the uniform distribution U, so
 * that no weight exceeds p~(v, h) 2^m / 0.05 for m sampled units. Its
 * expectation is a lower bound on log p(v) that rises with K to log p(v)
 * (exact for an RBM or GRBM, which have nothing to sample: there K is
 * ignored). Row r's sample k draws from stream row r of one sequence, so
 * rows do not depend on n; q is the law of those draws (a mean is rounded
 * up to a multiple of 2^-24, the uniforms' grid). K = n_samples. With the
 * exact log_z the estimate is a lower bound in expectation; with AIS's
 * (biased low) it moves up by AIS's error.
 * @param[in] n_samples K, 1 to 2^30, and K (m + 1) <= 2^34 (a row's stream)
 * @param[in] n         rows, at most 2^32; n = 0 draws nothing
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE (a bad K or log_z, a
 *         non-finite estimate), EBM_ELIMIT (K (m + 1) > 2^34), EBM_ENOMEM;
 *         on failure ll and rng are unchanged
 */
EBM_API int ebm_model_log_likelihood_is(const ebm_model_t *m, ebm_rng_t *rng, double log_z,
                                        int64_t n_samples, int64_t n, const float *data,
                                        int64_t ldd, double *ll);

/* ------------------------------------------------------------------------ */
/* Samplers and coupled chains                                              */
/* ------------------------------------------------------------------------ */

/**
 * A transition kernel on the states of one model, single or coupled. The
 * sampler holds configuration, scratch and the statistics of its last call;
 * chain states belong to the caller. It keeps a pointer to the model, which
 * must outlive it; the model's parameters may change between calls.
 *
 * Kinds:
 *  - EBM_SAMPLER_GIBBS: one sweep = the free units of the even layers drawn
 *    given the odd layers, then those of the odd layers given the new even
 *    layers (for an RBM: v | h, then h | v). Any unit kinds.
 *  - EBM_SAMPLER_MH_UNIFORM: Metropolis-Hastings with an independent uniform
 *    proposal over all free units (Taniguchi et al. 2023, eq. 14), accepted
 *    iff log u < E(x) - E(x'). Binary and spin free layers only.
 *  - EBM_SAMPLER_LANGEVIN: K Langevin steps on the visible marginal energy
 *    F(v) of a GRBM (Liao et al. 2022, Alg. 1); Metropolis-adjusted (MALA)
 *    once the step counter passes EBM_SAMPLER_ADJUST_AFTER. Only layer 0 moves.
 *  - EBM_SAMPLER_GIBBS_LANGEVIN: one step = K Langevin steps on v with h
 *    fixed, then h ~ p(h | v), then the Metropolis adjustment of Liao eq. 12
 *    once the step counter passes EBM_SAMPLER_ADJUST_AFTER (Liao Alg. 2).
 *    With h fixed the K-step proposal is the Gaussian of eq. 11, drawn in
 *    closed form by default (EBM_SAMPLER_CLOSED_FORM).
 *  - EBM_SAMPLER_TEMPERING: parallel tempering (Swendsen and Wang 1986;
 *    Desjardins et al. 2010). Rows come in chains of R replicas, one per
 *    inverse temperature of the ladder beta_0 < ... < beta_{R-1} = 1 (set
 *    by ebm_sampler_set_ladder; a step without one fails): row cR + k of a
 *    call holds replica k of chain c, and n must be a multiple of R. Replica
 *    k has the law p_b(x) ~ exp(-E_G(x) - b (E(x) - E_G(x))), b = beta_k,
 *    E_G the Gaussian visible layer's self-energy (0 if discrete): the path
 *    of ebm_model_log_partition_ais, so beta = 0 is uniform noise (discrete
 *    layers) and beta = 1 the model. One step = a Gibbs sweep of every
 *    replica at its beta (a beta = 1 row draws what EBM_SAMPLER_GIBBS
 *    would), then exchange proposals between adjacent replicas, first the
 *    pairs (0, 1), (2, 3), ..., then (1, 2), (3, 4), ...; a pair i < j
 *    swaps its states iff log u < (b_i - b_j) (E'(x_i) - E'(x_j)), E' = E -
 *    E_G, in double. The states move between rows; the temperatures stay,
 *    so the last row of each chain always holds a state of the model's
 *    law. The product of the replicas' laws is kept; the beta = 1 rows mix
 *    faster than Gibbs chains where modes are far apart. No layer may be
 *    clamped; there is no coupled step. Chain c's swap uniforms come from
 *    stream row cR (plus EBM_SAMPLER_ROW_OFFSET), so a chain's result
 *    depends on neither n nor the other chains. EBM_STAT_SWAP_RATE and
 *    ebm_sampler_swap_counts report the exchanges.
 * LANGEVIN and GIBBS_LANGEVIN need a GRBM (2 layers, Gaussian visible).
 * Clamps apply to them too: LANGEVIN with the visible layer clamped does
 * nothing; GIBBS_LANGEVIN with it clamped only draws h | v, and with the
 * hidden layer clamped moves v alone (the adjustment then targets p(v | h)).
 * A proposal that is not finite is rejected; it counts as a Metropolis
 * decision even when adjustment is off, so EBM_STAT_ACCEPT_RATE < 1 reports
 * a diverging unadjusted chain.
 *
 * Randomness: a call takes fresh sequences from rng, and row r's draws come
 * from stream row r only, so row r's result does not depend on n or on the
 * other rows.
 */
typedef struct ebm_sampler ebm_sampler_t;

/** Sampler kinds. */
enum ebm_sampler_kind {
    EBM_SAMPLER_GIBBS = 0,
    EBM_SAMPLER_MH_UNIFORM = 1,
    EBM_SAMPLER_LANGEVIN = 2,
    EBM_SAMPLER_GIBBS_LANGEVIN = 3,
    EBM_SAMPLER_TEMPERING = 4
};

/** Couplings of the Gibbs kernel (EBM_SAMPLER_COUPLING). */
enum ebm_coupling {
    /** Qiu et al. 2020, Alg. 1: the maximal coupling of the two transitions;
     * off the meeting event the second chain's first block is drawn
     * independently from its residual by rejection. */
    EBM_COUPLING_MAXIMAL = 0,
    /** Qiu et al. 2020, Alg. 3, generalised to layer blocks: also maximal, but
     * the residual draws share common random numbers, and so does the second
     * block, which keeps unmet chains close. A first block that is a single
     * Gaussian layer uses the reflection-maximal coupling instead. */
    EBM_COUPLING_CRN = 1,
    /** The default for DBMs and spin units. Each half-step of the sweep
     * coupled maximally on its own: the first block as under
     * EBM_COUPLING_CRN, then the second block (drawn given each chain's new
     * first block) by the same rejection method with common random numbers
     * in its residual draws. Also a maximal coupling of the two transitions
     * (the chains meet only where the first blocks agree), but chains whose
     * first blocks differ can still draw equal second blocks, and then meet
     * at the next step for certain; so they can meet sooner than under CRN,
     * whose second block agrees only unit by unit (docs/coupling_times.md).
     * Each chain is marginally an exact Gibbs chain; no loop is
     * truncated. */
    EBM_COUPLING_BLOCKWISE = 2
};

/** Options (ebm_sampler_set_int / ebm_sampler_set_double). */
enum ebm_sampler_option {
    /** int: bitmask of layers held fixed (bits 0 to L only); bit 0 clamps
     * the visible layer, so that the kernel targets p(h | v). Default 0. */
    EBM_SAMPLER_CLAMP_LAYERS = 0,
    /** int: enum ebm_coupling, for coupled Gibbs steps. Default by the
     * model's kind: EBM_COUPLING_BLOCKWISE for DBMs (3 layers or more) and
     * models with spin units, where it meets sooner; EBM_COUPLING_CRN for
     * binary RBMs, where both meet equally soon and CRN's steps cost less,
     * and for a Gaussian visible layer, where BLOCKWISE meets later. */
    EBM_SAMPLER_COUPLING = 1,
    /** int K, 1 to 10^6: Langevin steps per call (LANGEVIN, default 1) or
     * per Gibbs-Langevin step (default 10). */
    EBM_SAMPLER_LANGEVIN_STEPS = 2,
    /** double alpha0, finite and > 0: the Langevin step size. Default 0.01. */
    EBM_SAMPLER_STEP_SIZE = 3,
    /** int 0/1: step sizes alpha_k = alpha0 (1 + cos(pi k / K)) / 2 over the
     * K steps of one call (Liao eq. 22) instead of alpha0; alpha_K = 0, so
     * the last of the K steps does nothing. Liao's Alg. 1 with its schedule
     * over T steps is one LANGEVIN call with K = T. Default 1 for
     * GIBBS_LANGEVIN, 0 for LANGEVIN. */
    EBM_SAMPLER_COSINE = 4,
    /** int eta >= -1: Metropolis-adjust the steps whose counter t (1, 2, ...
     * since the last reset) exceeds eta; -1 never adjusts. Default -1. */
    EBM_SAMPLER_ADJUST_AFTER = 5,
    /** int 0/1: multiply alpha0 by the mean of sigma^2 (Liao section 3.2). Default 0. */
    EBM_SAMPLER_SCALE_BY_VARIANCE = 6,
    /** int 0/1: draw Gibbs-Langevin's K inner steps as one Gaussian (eq. 11)
     * rather than step by step; the two have the same distribution. Default 1. */
    EBM_SAMPLER_CLOSED_FORM = 7,
    /** int >= 0: the step counter: the number of successful step or coupled
     * step calls since the last reset (the step being made counts as t =
     * counter + 1); set 0 to restart. */
    EBM_SAMPLER_ITERATION = 8,
    /** int 0/1: precondition the Langevin steps (LANGEVIN, GIBBS_LANGEVIN)
     * by diag(sigma^2): visible unit i moves by alpha_k sigma_i^2 times its
     * gradient, with noise of variance 2 alpha_k sigma_i^2. In
     * Gibbs-Langevin, where v given h is N(mu + W h, diag(sigma^2)), every
     * unit then contracts by the same 1 - alpha_k whatever the spread of the
     * variances; on LANGEVIN's marginal the hidden units lower the
     * curvature (the marginal is wider than sigma), and alpha0 may need to
     * be larger than for GIBBS_LANGEVIN. The Metropolis adjustment uses the
     * preconditioned proposal's density, and the closed form of
     * Gibbs-Langevin's K steps is that of the preconditioned steps
     * (docs/samplers.md). An alternative to EBM_SAMPLER_SCALE_BY_VARIANCE,
     * exclusive with it: a step of a Langevin kind, or a GRBM_CD gradient
     * that makes such steps, fails with EBM_EVALUE when both are set.
     * Default 0. */
    EBM_SAMPLER_PRECONDITION = 9,
    /** int o, 0 to 2^32 - 1: row r of a step or coupled step draws from
     * stream row o + r instead of r, so that a process holding rows
     * [o, o + n) of a larger batch draws exactly the random numbers those
     * rows would draw in one call on the whole batch, and makes their
     * sampling decisions wherever the BLAS rounds the rows alike in both
     * shapes (data-parallel training: each rank sets its slice's first
     * global row; docs/distributed.md; docs/conventions.md, "Same bits"). A call
     * with o + n > 2^32 fails with EBM_ESHAPE. Default 0. */
    EBM_SAMPLER_ROW_OFFSET = 10,
    /** double p, 0 <= p < 1: the probability that a step of a row is a
     * global move instead of the kernel's sweep (EBM_SAMPLER_GIBBS;
     * ebm_sampler_set_proposal and docs/global_moves.md). Each row (each
     * chain, or chain pair of a coupled step) flips its own coin from its
     * stream row; a global move is an independence Metropolis-Hastings
     * move: the even layers proposed from q (the visible layer from the
     * proposal rows, the hidden even layers of a DBM by an upward pass),
     * the odd layers drawn from their conditional given them, accepted
     * iff log u < F(x) - F(x') + log q(x) - log q(x'), F the free energy
     * with the odd layers summed out. Each component keeps the model's
     * law, so the mixture does. In a coupled step both chains take one
     * coin, one proposal and one uniform: where both accept they meet,
     * and chains that have met stay met. EBM_SAMPLER_TEMPERING: the
     * tempering step of every row, then each chain's beta = 1 replica
     * makes a global move with probability p (its coin from its row's
     * stream row); each part keeps each replica's law. A step with p > 0
     * fails with EBM_EVALUE if no proposal is set, and with
     * EBM_EUNSUPPORTED for another kind, a Gaussian or dReLU layer, or a
     * clamped layer; nothing moves then. Default 0: no coin is drawn and
     * the kernels' draws are as without the option. */
    EBM_SAMPLER_GLOBAL_PROB = 11
};

/** Statistics of the last call (ebm_sampler_stat). */
enum ebm_sampler_stat {
    /** rows moved by the last call */
    EBM_STAT_ROWS = 0,
    /** accepted / proposed over the Metropolis decisions of the last call (1 if none) */
    EBM_STAT_ACCEPT_RATE = 1,
    /** coupled steps: fraction of rows with x_{t+1} == y_t after the call */
    EBM_STAT_MET_FRACTION = 2,
    /** coupled Gibbs steps: mean tries per residual-rejection loop (a row that did
     * not meet makes one loop; under BLOCKWISE one per block that did not meet) */
    EBM_STAT_TRIES_MEAN = 3,
    /** coupled Gibbs steps: largest number of tries any row needed (never truncated) */
    EBM_STAT_TRIES_MAX = 4,
    /** the step counter t after the call */
    EBM_STAT_ITERATION = 5,
    /** TEMPERING: accepted / proposed replica exchanges of the last call (1 if
     * none); NaN for the other kinds */
    EBM_STAT_SWAP_RATE = 6,
    /** EBM_SAMPLER_GLOBAL_PROB > 0: accepted / proposed over the global
     * moves' Metropolis decisions of the last call (a coupled step's row
     * makes two, one per chain); NaN if the call made no global move */
    EBM_STAT_GLOBAL_ACCEPT_RATE = 7,
    /** coupled steps with EBM_SAMPLER_GLOBAL_PROB > 0: the fraction of the
     * rows that made a global move in which both chains accepted (they
     * meet there); NaN if no row made one, and for single steps */
    EBM_STAT_GLOBAL_BOTH_RATE = 8,
    /** the number of statistics (not one itself; later versions may add more) */
    EBM_STAT_COUNT = 9
};

/**
 * Create a sampler for m. On failure *out is NULL and the message is left in
 * the model (ebm_model_errmsg(m)).
 * @return EBM_OK, EBM_ENULL, EBM_EVALUE (unknown kind), EBM_EUNSUPPORTED
 *         (LANGEVIN or GIBBS_LANGEVIN on a model that is not a GRBM), EBM_ENOMEM
 */
EBM_API int ebm_sampler_create(ebm_sampler_t **out, const ebm_model_t *m, int kind);
/** Free a sampler. NULL is a no-op. */
EBM_API void ebm_sampler_destroy(ebm_sampler_t *s);
/**
 * Set an integer option (enum ebm_sampler_option).
 * @return EBM_OK, EBM_ENULL, EBM_EVALUE (unknown option, a double option, or
 *         a value outside its range; nothing changes)
 */
EBM_API int ebm_sampler_set_int(ebm_sampler_t *s, int option, int64_t value);
/** Set a double option. @return as ebm_sampler_set_int */
EBM_API int ebm_sampler_set_double(ebm_sampler_t *s, int option, double value);
/**
 * One transition of every row of x, in place (see the kinds above).
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE (also: TEMPERING with n not a
 *         multiple of the ladder's length), EBM_EVALUE (invalid states, a
 *         Gibbs layer input that overflowed float, TEMPERING without a
 *         ladder, EBM_SAMPLER_GLOBAL_PROB > 0 without a proposal),
 *         EBM_EUNSUPPORTED (MH_UNIFORM with a free Gaussian layer,
 *         TEMPERING with a clamped layer, EBM_SAMPLER_GLOBAL_PROB > 0 where
 *         global moves are not built), EBM_ENOMEM; on failure x, rng, the
 *         step counter and the statistics are unchanged
 */
EBM_API int ebm_sampler_step(ebm_sampler_t *s, ebm_rng_t *rng, int64_t n, float *x, int64_t ldx);
/**
 * One step of coupled chains, row by row: x_t -> x_{t+1} and
 * y_{t-1} -> y_t, each marginally one step of this sampler's kernel, coupled
 * so that they meet with positive probability: GIBBS by EBM_SAMPLER_COUPLING
 * (all three couplings are maximal couplings of the two transitions, so
 * P(meet) = sum_z min(P(x_t, z), P(y_{t-1}, z))); MH_UNIFORM by a common
 * proposal and a common uniform (Taniguchi Algs. 3 and 4). Rows with
 * x == y on entry move together and stay equal. Rejection loops are exact:
 * they run until they accept (EBM_STAT_TRIES_MAX reports the longest), but
 * a row that needs more than 2^22 tries fails the call with EBM_ELIMIT (a
 * try accepts with probability TV, the distance between the two chains'
 * conditionals, so in exact arithmetic this happens with probability at
 * most 1/(e 2^22) < 1e-7 per chain, loop and step, so below 4e-7 per row
 * and step under BLOCKWISE's two loops; in float it ends the loop
 * where rounding leaves a residual that no uniform can accept). The log
 * ratios are formed unit by unit, so inputs of any finite size lose
 * nothing to cancellation.
 * @param[out] met NULL or [n]: 1 where x_{t+1} == y_t after the call, else 0
 * With EBM_SAMPLER_GLOBAL_PROB > 0 (GIBBS), a row's step is with that
 * probability a global move common to both chains (one proposal, one
 * uniform; where both accept they meet), else the coupled sweep.
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE (invalid states, or a
 *         layer input that overflowed float; EBM_SAMPLER_GLOBAL_PROB > 0
 *         without a proposal), EBM_EUNSUPPORTED (LANGEVIN kinds; global
 *         moves where they are not built), EBM_ELIMIT (the residual try
 *         limit), EBM_ENOMEM; on failure x, y, met and rng are unchanged
 */
EBM_API int ebm_sampler_coupled_step(ebm_sampler_t *s, ebm_rng_t *rng, int64_t n, float *x,
                                     int64_t ldx, float *y, int64_t ldy, uint8_t *met);
/**
 * Set the ladder of an EBM_SAMPLER_TEMPERING sampler: n_betas (2 to 1024)
 * inverse temperatures in [0, 1], strictly increasing, the last exactly 1.
 * The sampler copies them; the swap counts start at 0 and
 * EBM_STAT_SWAP_RATE at NaN.
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE (n_betas), EBM_EVALUE (a beta out
 *         of [0, 1] or NaN, not increasing, or the last not 1; the message
 *         names it), EBM_EUNSUPPORTED (another kind), EBM_ENOMEM; on
 *         failure the sampler is unchanged
 */
EBM_API int ebm_sampler_set_ladder(ebm_sampler_t *s, int64_t n_betas, const double *betas);
/**
 * Set the proposal of the global moves (EBM_SAMPLER_GLOBAL_PROB): n_rows
 * visible rows (typically the training set), copied. A global move
 * proposes v' from q(v') = (1/N) sum_n prod_i k(v'_i | row_n,i): a row
 * chosen uniformly, each visible unit changed with probability flip_prob
 * (binary and spin units: flipped; a Potts site: moved to one of the other
 * q - 1 categories, uniformly). flip_prob is in (0, 1): above 0 so that q
 * is positive on every visible state (log q is finite, and a global move
 * can leave and reach every state), below 1 so that it stays a kernel
 * around the rows. A DBM's hidden even layers are proposed by an upward
 * pass from v' (docs/global_moves.md). A new proposal replaces the old
 * one; the rows are validated like data.
 * @param[in] rows n_rows x n_0, row stride ldr >= n_0, n_rows >= 1
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE (n_rows, ldr), EBM_EVALUE (invalid
 *         values, flip_prob out of (0, 1) or NaN), EBM_EUNSUPPORTED (a
 *         Gaussian visible layer or dReLU hidden units: no proposal kernel
 *         for them yet), EBM_ENOMEM; on failure the sampler is unchanged
 */
EBM_API int ebm_sampler_set_proposal(ebm_sampler_t *s, int64_t n_rows, const float *rows,
                                     int64_t ldr, double flip_prob);
/**
 * The replica exchanges of the last call of an EBM_SAMPLER_TEMPERING
 * sampler, per adjacent pair k (replicas k and k + 1): accepted[k] and
 * proposed[k] (one proposal per chain). Either pointer may be NULL.
 * @param n_pairs the ladder's length minus 1
 * @return EBM_OK, EBM_ENULL, EBM_EVALUE (no ladder), EBM_ESHAPE (n_pairs)
 */
EBM_API int ebm_sampler_swap_counts(const ebm_sampler_t *s, int64_t n_pairs, int64_t *accepted,
                                    int64_t *proposed);
/** @return a statistic of the last call (enum ebm_sampler_stat), or NaN for
 *  a NULL sampler or an unknown stat. */
EBM_API double ebm_sampler_stat(const ebm_sampler_t *s, int stat);
/** @return the message of the last failed call on s ("" if none), never NULL. */
EBM_API const char *ebm_sampler_errmsg(const ebm_sampler_t *s);

/* ------------------------------------------------------------------------ */
/* Gradient estimators                                                      */
/* ------------------------------------------------------------------------ */

/**
 * An estimator of the gradient of the batch-average log-likelihood
 *   (1/n) sum_r d/dtheta log p(v_r) = -(1/n) sum_r E[dE/dtheta | v_r]
 *                                     + E_model[dE/dtheta],
 * built from the samplers and the energy gradients. It owns its samplers,
 * scratch and (PCD) persistent chains; it keeps a pointer to the model,
 * which must outlive it.
 *
 * Kinds (the negative phase E_model[.]; positive phases below):
 *  - EBM_ESTIMATOR_CD: chains start at the data (hidden layers drawn by one
 *    sweep of p(h | v) from uniform noise), K Gibbs sweeps. Biased.
 *  - EBM_ESTIMATOR_PCD: persistent chains owned by the estimator, K Gibbs
 *    sweeps per call. Biased.
 *  - EBM_ESTIMATOR_UCD (Qiu et al. 2020, Alg. 2): per data row, chains start
 *    at (v, h from one sweep of p(h | v)); coupled Gibbs chains (the
 *    sampler's coupling, by default EBM_COUPLING_BLOCKWISE for DBMs and
 *    spin units, else CRN; a Gaussian visible layer is coupled by the
 *    reflection-maximal coupling) run until they meet and at least K steps;
 *    the estimate is f(x_K) + sum_{t=K+1}^{tau-1} (f(x_t) - f(y_{t-1})).
 *    Unbiased.
 *  - EBM_ESTIMATOR_UCD_LMI (Taniguchi et al. 2023, Alg. 2): chains start at a
 *    local mode (local search from uniform noise, Alg. 1) moved by one Gibbs
 *    sweep; Metropolis-Hastings coupling with a common proposal and uniform
 *    (Alg. 3); the same telescoping estimate (K = 0 by default). Unbiased.
 *    In practice: from a local mode a uniform proposal is almost never
 *    accepted in hundreds of dimensions, so the chains meet at tau = 1 and
 *    a row's estimate is f at "local mode + one Gibbs sweep", in both
 *    phases. The expectation is exact only through the correction terms of
 *    the rare rows whose first proposal is accepted; a run in which none is
 *    has in effect applied that CD-like gradient from the local mode.
 *    EBM_ESTIMATOR_STAT_MH_ACCEPTED counts the accepted moves
 *    (docs/samplers.md, and the released code's variant there).
 *  - EBM_ESTIMATOR_GRBM_CD (Liao et al. 2022, modified CD): negative chains
 *    start from N(0, I) (hidden layer drawn given v), K steps of the sampler
 *    chosen by EBM_ESTIMATOR_SAMPLER (Gibbs by default, or Langevin or
 *    Gibbs-Langevin), all steps after the burn-in M used. GRBMs only.
 *  - EBM_ESTIMATOR_PT: PCD whose persistent chains are parallel-tempering
 *    chains (EBM_SAMPLER_TEMPERING) of R replicas each, R the length of the
 *    ladder set by ebm_estimator_set_ladder (a gradient call without one
 *    fails); K tempering steps per call, f averaged over the beta = 1 rows.
 *    Biased as PCD is, but its chains cross between modes that Gibbs
 *    chains rarely leave (Desjardins et al. 2010). Any model.
 * f, the quantity averaged, is a free-energy gradient chosen by
 * EBM_ESTIMATOR_MARGINALIZE: summing layers out of dE/dtheta analytically
 * (Rao-Blackwellisation) keeps every estimator's expectation and lowers its
 * variance.
 *
 * Positive phases (EBM_ESTIMATOR_POSITIVE): exact for a 2-layer model
 * (-dF(v)/dtheta with the hidden layer summed out); for a DBM, by coupled
 * chains on the hidden layers with v clamped (UCD: Gibbs; UCD_LMI: local
 * search for the posterior (Alg. 5), one Gibbs sweep, MH coupling (Alg. 4)),
 * which is unbiased, or by the mean-field posterior (Salakhutdinov and
 * Larochelle 2010), which is biased.
 *
 * A cap on coupling steps (EBM_ESTIMATOR_MAX_STEPS) exists only as a safety
 * net: a capped row's estimate is truncated (biased) and is counted in
 * EBM_ESTIMATOR_STAT_CAPPED, never hidden.
 */
typedef struct ebm_estimator ebm_estimator_t;

/** Estimator kinds. */
enum ebm_estimator_kind {
    EBM_ESTIMATOR_CD = 0,
    EBM_ESTIMATOR_PCD = 1,
    EBM_ESTIMATOR_UCD = 2,
    EBM_ESTIMATOR_UCD_LMI = 3,
    EBM_ESTIMATOR_GRBM_CD = 4,
    EBM_ESTIMATOR_PT = 5
};

/** Positive-phase methods (EBM_ESTIMATOR_POSITIVE). */
enum ebm_positive_phase {
    /** EXACT for 2-layer models; for DBMs COUPLED (UCD, UCD_LMI) or MEAN_FIELD (CD, PCD). */
    EBM_POSITIVE_AUTO = 0,
    /** -dF(v)/dtheta with the hidden layer summed out: 2-layer models only. */
    EBM_POSITIVE_EXACT = 1,
    /** the mean-field posterior's expected gradient: biased for DBMs. */
    EBM_POSITIVE_MEAN_FIELD = 2,
    /** coupled chains with v clamped: unbiased (UCD, UCD_LMI). */
    EBM_POSITIVE_COUPLED = 3,
    /** one draw h ~ p(h | v): the joint-energy estimate of Liao et al.;
     * 2-layer models only */
    EBM_POSITIVE_SAMPLED = 4
};

/** What f sums out of dE/dtheta (EBM_ESTIMATOR_MARGINALIZE). Layer 0 is
 * never summed out in a positive phase (the data clamp it). */
enum ebm_marginalize {
    /** f = dE/dtheta at the chain's state */
    EBM_MARGINALIZE_NONE = 0,
    /** f = dF/dtheta with the free even layers summed out (Qiu et al. sec. 4
     * for an RBM: v summed out) */
    EBM_MARGINALIZE_EVEN = 1,
    /** f = dF/dtheta with the free odd layers summed out (for a GRBM: the
     * marginal energy of v, Liao et al. eqs. 33-36; for CD and PCD on an
     * RBM, scikit-learn's v^T E[h | v], which costs one GEMM less per step
     * than EVEN: the Gibbs sweep's input of h is reused) */
    EBM_MARGINALIZE_ODD = 2,
    /** f = (dF_even + dF_odd) / 2: Taniguchi et al. eq. 27 */
    EBM_MARGINALIZE_BOTH = 3
};

/** Options (ebm_estimator_set_int / ebm_estimator_set_double). */
enum ebm_estimator_option {
    /** int: CD/PCD sweeps and GRBM_CD steps (1 to 10^8, default 1; GRBM_CD
     * 10); UCD/UCD_LMI: the step k of the estimate (0 to 10^8; UCD default
     * 1, UCD_LMI 0) */
    EBM_ESTIMATOR_K = 0,
    /** int, 0 to 2^31 - 1: cap on coupling steps per row; 0 (default) means
     * none. A row is stopped by the cap only once it has reached step k, so
     * its estimate is truncated (biased), never empty. */
    EBM_ESTIMATOR_MAX_STEPS = 1,
    /** int, 0 to 2^31 - 1: PCD chains, GRBM_CD chains, PT chains (of R
     * replicas, so R rows, each); 0 (default): the batch size. Changing it
     * discards existing PCD and PT chains. */
    EBM_ESTIMATOR_CHAINS = 2,
    /** int: enum ebm_marginalize. Defaults: UCD_LMI BOTH, GRBM_CD ODD, others EVEN */
    EBM_ESTIMATOR_MARGINALIZE = 3,
    /** int: enum ebm_positive_phase. Default EBM_POSITIVE_AUTO */
    EBM_ESTIMATOR_POSITIVE = 4,
    /** int: GRBM_CD's sampler kind: EBM_SAMPLER_GIBBS (default),
     * EBM_SAMPLER_LANGEVIN or EBM_SAMPLER_GIBBS_LANGEVIN */
    EBM_ESTIMATOR_SAMPLER = 5,
    /** int M, 0 to 2^31 - 1: GRBM_CD's burn-in steps, not used in the
     * estimate; must be smaller than K when the gradient is computed.
     * Default 0 */
    EBM_ESTIMATOR_BURN_IN = 6,
    /** int, 1 to 2^31 - 1: local-search sweep cap (UCD_LMI). Default 10000 */
    EBM_ESTIMATOR_SEARCH_SWEEPS = 7,
    /** int, 1 to 2^31 - 1: mean-field iterations. Default 100 */
    EBM_ESTIMATOR_MEAN_FIELD_ITERS = 8,
    /** double, finite and >= 0: mean-field tolerance. Default 1e-5 */
    EBM_ESTIMATOR_MEAN_FIELD_TOL = 9,
    /** int >= 1: the guard against chains that never meet (UCD, UCD_LMI).
     * A row whose coupled chains have not met after this many steps, and
     * that no EBM_ESTIMATOR_MAX_STEPS cap stopped, fails the call with
     * EBM_ELIMIT (nothing changes) instead of running on: with parameters
     * so large that the float conditionals are certain, two chains can
     * cycle apart forever. Default 1000000. Unlike MAX_STEPS it never
     * truncates an estimate: a call either is unbiased or fails. */
    EBM_ESTIMATOR_STEP_LIMIT = 10,
    /** int o, 0 to 2^32 - 1: the global number of the first data row: row
     * r of a gradient call, and everything drawn for it (its chains in
     * both phases under CD, UCD and UCD_LMI), draws from stream row o + r
     * instead of r. A process holding rows [o, o + n) of a global batch
     * (and, for PCD and GRBM_CD, chains [c, c + m) of the global chains,
     * EBM_ESTIMATOR_CHAIN_OFFSET c) then draws exactly the random numbers
     * those rows draw in one call on the whole batch with the same
     * generator, and so makes their sampling decisions (the same chains,
     * the same meeting times) wherever the BLAS rounds the rows alike in
     * both shapes (docs/conventions.md, "Same bits"); its
     * gradient times n, summed over the processes and divided by the
     * global batch size, is the whole batch's gradient up to the order of
     * floating-point summation (for PCD and GRBM_CD, whose negative phase
     * averages over the chains, when every process holds the same share
     * of the chains as of the rows; docs/distributed.md). A call with
     * o + n > 2^32 fails with EBM_ESHAPE. Default 0. */
    EBM_ESTIMATOR_ROW_OFFSET = 11,
    /** int c, 0 to 2^32 - 1: the global number of the estimator's first
     * own chain: PCD's persistent chain j and GRBM_CD's chain j draw from
     * stream row c + j instead of j (see EBM_ESTIMATOR_ROW_OFFSET). For PT
     * it numbers rows (R per chain): a process holding whole chains [a, b)
     * of the global chains sets c = aR. A call with c + chain rows > 2^32
     * fails with EBM_ESHAPE. Default 0. */
    EBM_ESTIMATOR_CHAIN_OFFSET = 12,
    /** EBM_ESTIMATOR_SAMPLER_OPTION + o sets sampler option o (enum
     * ebm_sampler_option, e.g. Langevin steps, step size, coupling) on the
     * estimator's samplers (EBM_SAMPLER_GLOBAL_PROB: on those of the
     * model's own chains only, as ebm_estimator_set_proposal).
     * EBM_SAMPLER_CLAMP_LAYERS and EBM_SAMPLER_ROW_OFFSET are managed by
     * the estimator (the latter is EBM_ESTIMATOR_ROW_OFFSET) and cannot be
     * set. */
    EBM_ESTIMATOR_SAMPLER_OPTION = 1000
};

/** Statistics of the last ebm_estimator_gradient call. */
enum ebm_estimator_stat {
    /** negative phase: mean and largest meeting time tau over the chains */
    EBM_ESTIMATOR_STAT_TAU_MEAN = 0,
    EBM_ESTIMATOR_STAT_TAU_MAX = 1,
    /** positive phase (coupled): mean and largest tau */
    EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN = 2,
    EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX = 3,
    /** chains stopped by EBM_ESTIMATOR_MAX_STEPS (both phases) */
    EBM_ESTIMATOR_STAT_CAPPED = 4,
    /** mean local-search sweeps per chain (UCD_LMI, both phases) */
    EBM_ESTIMATOR_STAT_SWEEPS_MEAN = 5,
    /** local searches stopped by their sweep cap */
    EBM_ESTIMATOR_STAT_SEARCH_CAPPED = 6,
    /** Metropolis acceptance over the call (1 where there is none); the
     * global moves of EBM_SAMPLER_GLOBAL_PROB count, weighted by their
     * decisions */
    EBM_ESTIMATOR_STAT_ACCEPT_RATE = 7,
    /** mean-field rows that did not reach the tolerance */
    EBM_ESTIMATOR_STAT_MEAN_FIELD_MISSED = 8,
    /** uniform-proposal Metropolis moves accepted in the call, both phases
     * (UCD_LMI; 0 for the other kinds): summed over a run, it says whether
     * the MH coupling ever moved a chain (docs/samplers.md) */
    EBM_ESTIMATOR_STAT_MH_ACCEPTED = 9,
    /** PT: accepted / proposed replica exchanges over the call's K steps
     * (per pair: ebm_estimator_swap_counts); NaN for the other kinds */
    EBM_ESTIMATOR_STAT_SWAP_RATE = 10,
    /** the number of statistics (not one itself; later versions may add more) */
    EBM_ESTIMATOR_STAT_COUNT = 11
};

/**
 * Create an estimator for m. On failure *out is NULL and the message is in
 * ebm_model_errmsg(m).
 * @return EBM_OK, EBM_ENULL, EBM_EVALUE (unknown kind), EBM_EUNSUPPORTED
 *         (GRBM_CD on a model that is not a GRBM; UCD_LMI with a Gaussian
 *         layer), EBM_ENOMEM
 */
EBM_API int ebm_estimator_create(ebm_estimator_t **out, const ebm_model_t *m, int kind);
/** Free an estimator. NULL is a no-op. */
EBM_API void ebm_estimator_destroy(ebm_estimator_t *e);
/** Set an integer option. @return EBM_OK, EBM_ENULL, EBM_EVALUE (unknown
 * option or value out of range; nothing changes), EBM_EUNSUPPORTED (an
 * option value this model cannot use, e.g. EXACT positive phase on a DBM) */
EBM_API int ebm_estimator_set_int(ebm_estimator_t *e, int option, int64_t value);
/** Set a double option. @return as ebm_estimator_set_int */
EBM_API int ebm_estimator_set_double(ebm_estimator_t *e, int option, double value);
/**
 * grad = the estimate of (1/n) sum_r d/dtheta log p(v_r) (ascent
 * direction), in the flat parameter layout. Data rows: layer 0 values.
 * Every call ends: CD, PCD and GRBM_CD make a fixed number of steps, and
 * UCD and UCD_LMI stop at EBM_ESTIMATOR_STEP_LIMIT coupled steps per row.
 * @param[in]  data n x n_0 rows, row stride ldd >= n_0, n >= 1
 * @param[out] grad [param_count], overwritten; unchanged on failure
 * Each phase draws from its own child generator of rng, so row r's draws
 * depend only on rng's state and r; on success rng moves by one sequence,
 * on failure nothing changes (grad, chains, statistics, rng).
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE, EBM_EVALUE (invalid data values;
 *         GRBM_CD burn-in >= K; a layer input that overflowed float; a
 *         non-finite gradient, reported and never returned), EBM_ELIMIT
 *         (a row reached EBM_ESTIMATOR_STEP_LIMIT, or a coupled step's
 *         residual try limit, see ebm_sampler_coupled_step), EBM_ENOMEM
 */
EBM_API int ebm_estimator_gradient(ebm_estimator_t *e, ebm_rng_t *rng, int64_t n,
                                   const float *data, int64_t ldd, float *grad);
/** @return a statistic of the last gradient call, or NaN (NULL, unknown stat). */
EBM_API double ebm_estimator_stat(const ebm_estimator_t *e, int stat);
/** @return the message of the last failed call on e ("" if none), never NULL. */
EBM_API const char *ebm_estimator_errmsg(const ebm_estimator_t *e);
/** @return the number of persistent chain rows (PCD: chains; PT: chains
 * times the ladder's length, replica k of chain c in row cR + k; 0 before
 * the first call or after a reset), or -1 if e is NULL. */
EBM_API int64_t ebm_estimator_num_chains(const ebm_estimator_t *e);
/**
 * Copy the persistent chains (full states, one per row) into out
 * (ebm_estimator_num_chains rows, stride ldo >= state width), for checkpoints.
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE
 */
EBM_API int ebm_estimator_get_chains(const ebm_estimator_t *e, float *out, int64_t ldo);
/**
 * Replace the persistent chains by n valid states (n = 0 resets them: the next
 * call starts new chains from uniform noise). PT: n rows of whole chains, a
 * multiple of the ladder's length (set first).
 * @return EBM_OK, EBM_ENULL, EBM_ESHAPE (also: PT rows not whole chains),
 *         EBM_EVALUE (invalid states; PT without a ladder), EBM_ENOMEM
 */
EBM_API int ebm_estimator_set_chains(ebm_estimator_t *e, int64_t n, const float *chains,
                                     int64_t ldc);
/**
 * Set the ladder of an EBM_ESTIMATOR_PT estimator, as ebm_sampler_set_ladder.
 * A ladder of another length discards the chains (the next call starts new
 * ones from uniform noise); one of the same length keeps them.
 * @return as ebm_sampler_set_ladder; EBM_EUNSUPPORTED for other kinds
 */
EBM_API int ebm_estimator_set_ladder(ebm_estimator_t *e, int64_t n_betas, const double *betas);
/**
 * Set the proposal of the global moves of e's chains, as
 * ebm_sampler_set_proposal, on the samplers that run the model's chains
 * (those EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_GLOBAL_PROB reaches:
 * the Gibbs chains of CD, PCD, UCD and UCD_LMI's start, and PT's
 * tempering chains; not the positive phase's chains, whose visible layer
 * is clamped). With GLOBAL_PROB > 0, UCD's coupled chains make coupled
 * global moves and stay unbiased.
 * @return as ebm_sampler_set_proposal; on failure e is unchanged
 */
EBM_API int ebm_estimator_set_proposal(ebm_estimator_t *e, int64_t n_rows, const float *rows,
                                       int64_t ldr, double flip_prob);
/**
 * The replica exchanges of the last gradient call of an EBM_ESTIMATOR_PT
 * estimator, summed over its K steps, per adjacent pair k: accepted[k] and
 * proposed[k] (K per chain). Either pointer may be NULL.
 * @param n_pairs the ladder's length minus 1
 * @return EBM_OK, EBM_ENULL, EBM_EVALUE (no ladder), EBM_ESHAPE (n_pairs)
 */
EBM_API int ebm_estimator_swap_counts(const ebm_estimator_t *e, int64_t n_pairs,
                                      int64_t *accepted, int64_t *proposed);

#ifdef __cplusplus
}
#endif

#endif /* EBM_H */
