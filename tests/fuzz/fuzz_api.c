/*
 * libFuzzer target for the numerical API (make fuzz, make fuzz-ci). From the
 * input bytes it builds a small model and states, then makes every kind of
 * call on them and checks the promises of include/ebm.h and
 * docs/conventions.md that hold for ANY valid model, however extreme its
 * parameters (anything ebm_model_set_params accepts: up to +-FLT_MAX,
 * denormals, log-variances within +-30):
 *
 *  1. no crash, no sanitizer report, no leak, no hang (-timeout=10);
 *  2. every call returns EBM_OK (or, for local search and mean field, a
 *     count from 0 to n) or one of the negative codes its documentation
 *     lists. The arguments are always valid in shape and pointer, so
 *     EBM_ENULL and EBM_ESHAPE are violations too;
 *  3. on success every double or float output the call wrote is finite:
 *     energies, free energies, log-probabilities, log Z and its error,
 *     log-likelihoods and bounds, gradients, inputs, means (binary in [0,1],
 *     spin in [-1,1]), states (valid unit values: 0/1, -1/+1, finite), and
 *     parameters made by ebm_model_init;
 *  4. on failure nothing the caller can see changed: the state and output
 *     buffers, the generator (ebm_rng_get_state), PCD chains; and the
 *     handle has a message;
 *  5. structural promises: clamped units and clamped layers keep their
 *     values; random_state never reads x; coupled rows' met flags say
 *     whether the rows are equal, and rows equal on entry stay equal; the
 *     values of summed-out layers (and of layer l in the layer
 *     conditionals) are ignored entirely (the call on a copy with garbage
 *     there gives the same code and the same bits); stride padding is never
 *     written; no const call changes the parameters;
 *  6. dReLU hidden units (EBM_UNITS_DRELU, RBMs over discrete visible units
 *     only): create refuses a DBM or Gaussian visible units with
 *     EBM_EUNSUPPORTED (*out NULL, a message); set_params accepts exactly
 *     the finite vectors whose log gammas (and log-variances) are within
 *     +-30, and refuses the others with EBM_EVALUE, changing nothing (so
 *     does axpy_params pushing a log gamma past 30); init leaves the shape
 *     block 0; EBM_PARAM_SHAPE is the last 3 x n_1 block (and
 *     EBM_EUNSUPPORTED for the other models); the calls the header lists as
 *     not supported yet return exactly EBM_EUNSUPPORTED and change nothing:
 *     MH_UNIFORM and TEMPERING samplers, coupled steps, local search, mean
 *     field, log_likelihood_bound, nonzero offsets on dReLU units, the
 *     estimators UCD, UCD_LMI and PT, and a mean-field positive phase (at
 *     ebm_estimator_set_int, or at the gradient); the supported calls
 *     (energies, conditionals, random states, exact and AIS log Z,
 *     log-likelihood, Gibbs steps, CD and PCD) never return it.
 * A violation is printed (call, what, the model) and abort()s, so libFuzzer
 * saves the input. For triage: FUZZ_API_KEEP_GOING=1 prints each distinct
 * violation once and carries on (one run lists every kind), and with
 * FUZZ_API_SAVE_DIR=dir saves the first input of each; FUZZ_API_ONLY=text
 * ignores violations in calls whose name lacks text (to minimise one:
 * -minimize_crash=1); FUZZ_API_VERBOSE=1 prints the decoded model and states.
 *
 * Input layout (missing bytes read as 0; tests/fuzz/make_corpus.c writes seeds):
 *   header      bit 0: 3 layers (else 2); bits 1-2: visible units (0 binary,
 *               1 spin, 2 Gaussian, 3 Potts); bit 3: spin hidden units;
 *               bit 4: parameters by ebm_model_init (bit 7: Gaussian scheme)
 *               from one value code (the scale), else one value code per
 *               parameter in the flat layout [W | b | logvar | shape];
 *               bits 5-6: rows - 1 (1 to 4); bit 7 without bit 4: dReLU
 *               hidden units (bit 3 ignored). A dReLU DBM or a dReLU model
 *               over Gaussian visible units must be refused; the input then
 *               goes on with an RBM (a Gaussian visible layer becomes spin
 *               if bit 3 is set, else binary)
 *   sizes       one byte per layer: 1 + b % 6 units; Potts visible units:
 *               q = 2 + (b & 1) categories, sites 1 + (b >> 1) % 3
 *   dReLU       (dReLU only) one byte: bit 0: parameters by ebm_model_init
 *               (bit 1: Gaussian scheme) from one value code, then one value
 *               code per entry of the shape block; bit 2: log gammas as
 *               coded (any float: outside +-30 set_params must refuse),
 *               else clamped into [-30, 30] (NaN read as 0); deltas as coded
 *   parameters  as above; dReLU: then one byte, the axpy refusal's log
 *               gamma ((b >> 1) % 2 n_1) and the sign of its step (bit 0)
 *   states      rows x width bytes: bit 0 for binary/spin units, a value
 *               code for Gaussian and dReLU ones (non-finite raw values
 *               read as 0), b % q at a Potts site's first column for its
 *               category, then one byte: the row stride ldx = width + b % 3
 *   centring    one byte: bit 0 set (and no Gaussian layer): then one byte
 *               per unit, offset (b % 5) / 4 (spin units: 2 that - 1; dReLU
 *               units: 0.5 if b % 8 == 7, else 0), set with keep_law = bit 1
 *               (ebm_model_set_offsets; a refusal must change nothing, and
 *               a nonzero dReLU offset is EBM_EUNSUPPORTED)
 *   options     the rest: one or two bytes per decision, in call order
 * A value code c is: c = 0xff: the next 4 bytes are a raw binary32; else
 * magnitude class c >> 4 (0, 1.4e-45, 1e-38, 1e-20, 1e-3, 0.1, 0.5, 1, 2,
 * 10, 1e3, 1e8, 1e16, 1e30, 1e38 times 1 + (c & 7)/8; class 15 is
 * FLT_MAX (1 - (c & 7)/16)), negative if c & 8.
 *
 * SPDX-License-Identifier: MIT
 */
#include "ebm.h"
#include "../../src/testing.h" /* ebm__set_residual_try_limit (built with -Iinclude only) */

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The coupled step's residual try limit (ebm__set_residual_try_limit,
 * src/testing.h), lowered from 2^22 to 2^16 by every input: a row whose
 * float probabilities leave it a residual no uniform can accept (huge
 * parameters) then fails in milliseconds instead of seconds of sanitised
 * code; what the limit does is the same (EBM_ELIMIT, nothing changed), and
 * check_faults.c tests it at its real value. */

enum { MAX_LAYERS = 3, MAX_UNITS = 9, MAX_ROWS = 4, MAX_PAD = 2 };

/* ---- input decoding ----------------------------------------------------- */

typedef struct reader {
    const uint8_t *p;
    size_t n, i;
} reader;

static unsigned u8(reader *r) { return r->i < r->n ? r->p[r->i++] : 0u; }
static int pick(reader *r, int k) { return (int)(u8(r) % (unsigned)k); }

static const float MAGNITUDE[15] = {0.0f,  0x1p-149f, 1e-38f, 1e-20f, 1e-3f,  0.1f, 0.5f, 1.0f,
                                    2.0f,  10.0f,     1e3f,   1e8f,   1e16f,  1e30f, 1e38f};

static float value_of(reader *r, unsigned c)
{
    if (c == 0xffu) {
        uint32_t u = u8(r);
        u |= (uint32_t)u8(r) << 8;
        u |= (uint32_t)u8(r) << 16;
        u |= (uint32_t)u8(r) << 24;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    unsigned mag = c >> 4, k = c & 7u;
    float v = mag == 15 ? FLT_MAX * (1.0f - (float)k / 16.0f)
                        : MAGNITUDE[mag] * (1.0f + (float)k / 8.0f);
    return (c & 8u) ? -v : v;
}

static float value(reader *r) { return value_of(r, u8(r)); }

/* A finite value > 0 (step sizes, scales): |v|, or 1 for 0 / non-finite. */
static double positive(reader *r)
{
    float v = fabsf(value(r));
    return (isfinite(v) && v > 0.0f) ? (double)v : 1.0;
}

/* ---- the model and its states ------------------------------------------- */

typedef struct ctx {
    ebm_model_t *m;
    ebm_rng_t *rng;
    int L1;                    /* layers */
    int64_t size[MAX_LAYERS], off[MAX_LAYERS];
    int units[MAX_LAYERS];
    int64_t q;                 /* categories of a Potts visible layer, else 1 */
    int drelu;                 /* layer 1 holds dReLU units (an RBM) */
    int64_t shape_off;         /* the EBM_PARAM_SHAPE block (dReLU), else -1 */
    int64_t w, np, n, ldx;
    uint32_t all;              /* mask of all layers */
    float *params;             /* as set, to show no const call changes them */
    float *x0;                 /* n x ldx valid states; padding holds PAD_BITS */
    float amax;                /* largest |parameter| */
    char desc[320];
} ctx;

static const ctx *g_ctx;
static const uint32_t PAD_BITS = 0x7fc0beefu; /* a quiet NaN no call writes */
static const uint32_t OUT_BITS = 0x7fc0dead;  /* outputs not yet written */

/* ---- reporting ---------------------------------------------------------- */

static int keep_going(void)
{
    static int v = -1;
    if (v < 0) {
        const char *s = getenv("FUZZ_API_KEEP_GOING");
        v = s != NULL && *s != '\0' && *s != '0';
    }
    return v;
}


static void violation(const char *call, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *env(const char *name)
{
    const char *s = getenv(name);
    return s != NULL && *s != '\0' ? s : NULL;
}

static const uint8_t *g_input;
static size_t g_input_size;

/* Triage: FUZZ_API_SAVE_DIR=dir (with KEEP_GOING) writes the input of each
 * new violation there; FUZZ_API_ONLY=text ignores violations in calls whose
 * name does not contain text (to minimise a reproducer of one of them:
 * -minimize_crash=1). */
static void save_input(const char *call, int index)
{
    const char *dir = env("FUZZ_API_SAVE_DIR");
    if (dir == NULL || g_input == NULL) {
        return;
    }
    char path[512], name[64];
    size_t k = 0;
    for (const char *p = call; *p != '\0' && k + 1 < sizeof name; p++) {
        name[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                            (*p >= '0' && *p <= '9') ? *p : '_';
    }
    name[k] = '\0';
    snprintf(path, sizeof path, "%s/%02d-%s.bin", dir, index, name);
    FILE *f = fopen(path, "wb");
    if (f != NULL) {
        fwrite(g_input, 1, g_input_size, f);
        fclose(f);
        fprintf(stderr, "  input saved as %s\n", path);
    }
}

static void violation(const char *call, const char *fmt, ...)
{
    const char *only = env("FUZZ_API_ONLY");
    if (only != NULL && strstr(call, only) == NULL) {
        return;
    }
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int index = -1;
    if (keep_going()) {
        /* once per call and format */
        static char seen[256][96];
        static int n_seen;
        char key[96];
        snprintf(key, sizeof key, "%.40s|%.50s", call, fmt);
        for (int i = 0; i < n_seen; i++) {
            if (strcmp(seen[i], key) == 0) {
                return;
            }
        }
        if (n_seen < 256) {
            index = n_seen;
            strcpy(seen[n_seen++], key);
        }
    }
    fprintf(stderr, "\nfuzz_api: CONTRACT VIOLATION in %s: %s\n  model: %s\n", call, what,
            g_ctx != NULL ? g_ctx->desc : "(none yet)");
    if (!keep_going()) {
        abort();
    }
    if (index >= 0) {
        save_input(call, index);
    }
}

/* ---- result codes ------------------------------------------------------- */

#define C(code) (1u << -(code))
#define C_MEM C(EBM_ENOMEM)

static const char *code_name(int rc) { return ebm_error_name(rc); }

/* 1 if rc is EBM_OK (or a count in [0, max_count] when max_count >= 0),
 * 0 if it is an allowed error; a violation otherwise. */
static int rc_ok(const char *call, int rc, unsigned allowed, int64_t max_count)
{
    if (rc == EBM_OK || (max_count >= 0 && rc >= 0 && rc <= max_count)) {
        return 1;
    }
    if (rc > 0) {
        violation(call, "returned %d, not EBM_OK%s", rc,
                  max_count >= 0 ? " nor a count of rows" : "");
        return 0;
    }
    if (rc < -31 || !(allowed & C(rc))) {
        violation(call, "returned %d (%s), which its documentation does not list here", rc,
                  code_name(rc));
    }
    return 0;
}

/* ---- buffers ------------------------------------------------------------ */

static void *xmalloc(size_t n)
{
    void *p = malloc(n > 0 ? n : 1);
    if (p == NULL) {
        abort();
    }
    return p;
}

static void *copy_of(const void *p, size_t n)
{
    void *q = xmalloc(n);
    memcpy(q, p, n);
    return q;
}

static float *fbuf(size_t n, uint32_t bits)
{
    float *p = xmalloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++) {
        memcpy(&p[i], &bits, sizeof bits);
    }
    return p;
}

static double *dbuf(size_t n)
{
    double *p = xmalloc(n * sizeof *p);
    uint64_t bits = 0x7ff8deaddeadbeefull;
    for (size_t i = 0; i < n; i++) {
        memcpy(&p[i], &bits, sizeof bits);
    }
    return p;
}

static int same(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

static int valid_unit(int units, float v)
{
    switch (units) {
    case EBM_UNITS_BINARY:
    case EBM_UNITS_POTTS: return v == 0.0f || v == 1.0f;
    case EBM_UNITS_SPIN: return v == 1.0f || v == -1.0f;
    default: return isfinite(v);
    }
}

static int valid_mean(int units, float v)
{
    switch (units) {
    case EBM_UNITS_BINARY:
    case EBM_UNITS_POTTS: return v >= 0.0f && v <= 1.0f;
    case EBM_UNITS_SPIN: return v >= -1.0f && v <= 1.0f;
    default: return isfinite(v);
    }
}

static int layer_of(const ctx *c, int64_t col)
{
    int l = 0;
    while (l + 1 < c->L1 && col >= c->off[l + 1]) {
        l++;
    }
    return l;
}

/* The states of the layers in mask are valid (means: in range); padding intact. */
static void check_states(const char *call, const ctx *c, const float *x, int64_t n, int64_t ld,
                         uint32_t mask, int means)
{
    for (int64_t r = 0; r < n; r++) {
        for (int64_t j = 0; j < ld; j++) {
            const float v = x[r * ld + j];
            if (j >= c->w) {
                uint32_t bits;
                memcpy(&bits, &v, sizeof bits);
                if (bits != PAD_BITS) {
                    violation(call, "wrote stride padding: row %lld column %lld (width %lld, "
                              "ld %lld) is %g", (long long)r, (long long)j, (long long)c->w,
                              (long long)ld, (double)v);
                    return;
                }
                continue;
            }
            const int l = layer_of(c, j);
            if (!(mask & (1u << l))) {
                continue;
            }
            if (means ? !valid_mean(c->units[l], v) : !valid_unit(c->units[l], v)) {
                violation(call, "returned EBM_OK with %s %g at row %lld, layer %d, unit %lld",
                          means ? "the mean" : "the state value", (double)v, (long long)r, l,
                          (long long)(j - c->off[l]));
                return;
            }
            if (c->units[l] == EBM_UNITS_POTTS && (j - c->off[l]) % c->q == 0) {
                /* a site's values: one 1 (means: they sum to 1) */
                double sum = 0.0;
                for (int64_t k = 0; k < c->q; k++) {
                    sum += x[r * ld + j + k];
                }
                if (means ? !(fabs(sum - 1.0) <= 1e-5) : sum != 1.0) {
                    violation(call, "returned EBM_OK with a Potts site summing to %g at row "
                              "%lld, unit %lld", sum, (long long)r, (long long)j);
                    return;
                }
            }
        }
    }
}

static void check_finite_d(const char *call, const double *v, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) {
            violation(call, "returned EBM_OK with %s[%lld] = %g", what, (long long)i, v[i]);
            return;
        }
    }
}

/* n rows of cols values at stride ld: finite (or valid means of `units`
 * when units >= 0); padding columns keep OUT_BITS. */
static void check_finite_f(const char *call, const float *v, int64_t n, int64_t cols, int64_t ld,
                           const char *what, int units)
{
    for (int64_t r = 0; r < n; r++) {
        for (int64_t j = 0; j < ld; j++) {
            const float x = v[r * ld + j];
            if (j >= cols) {
                uint32_t bits;
                memcpy(&bits, &x, sizeof bits);
                if (bits != OUT_BITS) {
                    violation(call, "wrote %s padding at row %lld column %lld", what,
                              (long long)r, (long long)j);
                    return;
                }
            } else if (units >= 0 ? !valid_mean(units, x) : !isfinite(x)) {
                violation(call, "returned EBM_OK with %s %g at row %lld, column %lld", what,
                          (double)x, (long long)r, (long long)j);
                return;
            }
        }
    }
}

typedef struct rng_snap {
    uint64_t s[EBM_RNG_STATE_WORDS];
} rng_snap;

static rng_snap rng_take(const ebm_rng_t *r)
{
    rng_snap s;
    if (ebm_rng_get_state(r, s.s) != EBM_OK) {
        abort();
    }
    return s;
}

static void rng_unchanged(const char *call, const ebm_rng_t *r, const rng_snap *before)
{
    rng_snap now = rng_take(r);
    if (!same(now.s, before->s, sizeof now.s)) {
        violation(call, "failed and moved the generator");
    }
}

static void model_msg(const char *call, const ctx *c)
{
    if (ebm_model_errmsg(c->m)[0] == '\0') {
        violation(call, "failed without a message in ebm_model_errmsg");
    }
}

/* ---- building the model --------------------------------------------------- */

/* 1 if every log-variance and dReLU log gamma of p is within +-30 and every
 * value is finite: what ebm_model_set_params must accept. */
static int params_valid(const ctx *c, const float *p)
{
    int64_t lv_off = -1, lv_n = 0;
    if (ebm_model_param_block(c->m, EBM_PARAM_LOGVAR, 0, &lv_off, NULL, &lv_n) != EBM_OK) {
        lv_off = -1;
    }
    for (int64_t i = 0; i < c->np; i++) {
        const int bounded = (lv_off >= 0 && i >= lv_off && i < lv_off + lv_n) ||
                            (c->shape_off >= 0 && i >= c->shape_off &&
                             i < c->shape_off + 2 * c->size[1]);
        if (!isfinite(p[i]) || (bounded && fabsf(p[i]) > 30.0f)) {
            return 0;
        }
    }
    return 1;
}

/* set_params(p) on a model holding `before`: accepted exactly when p is
 * valid; a refusal is EBM_EVALUE with a message and changes nothing. */
static int set_params_checked(ctx *c, const float *p, const float *before)
{
    const int valid = params_valid(c, p);
    const int rc = ebm_model_set_params(c->m, p);
    if (rc == EBM_OK) {
        if (!valid) {
            violation("ebm_model_set_params", "accepted a non-finite value, or a log-variance "
                      "or dReLU log gamma outside +-30");
        }
        return 1;
    }
    rc_ok("ebm_model_set_params", rc, C(EBM_EVALUE), -1);
    if (valid) {
        violation("ebm_model_set_params", "refused (%s) finite parameters with every "
                  "log-variance and log gamma within +-30: %s", code_name(rc),
                  ebm_model_errmsg(c->m));
    }
    float *after = xmalloc((size_t)c->np * sizeof *after);
    ebm_model_get_params(c->m, after);
    if (!same(after, before, (size_t)c->np * sizeof *after)) {
        violation("ebm_model_set_params", "failed (%s) and changed the parameters",
                  code_name(rc));
    }
    free(after);
    model_msg("ebm_model_set_params", c);
    return 0;
}

/* A log gamma from a value code: as coded (raw), or clamped into [-30, 30]. */
static float log_gamma(reader *rd, int raw)
{
    const float v = value(rd);
    if (raw) {
        return v;
    }
    return v != v ? 0.0f : fminf(30.0f, fmaxf(-30.0f, v));
}

/* The shape block of a dReLU model from codes: log gamma+ and log gamma- of
 * every unit, then every delta. */
static void read_shapes(const ctx *c, reader *rd, int raw, float *p)
{
    for (int64_t k = 0; k < 3 * c->size[1]; k++) {
        p[c->shape_off + k] = k < 2 * c->size[1] ? log_gamma(rd, raw) : value(rd);
    }
}

/* The EBM_PARAM_SHAPE block is the last 3 x n_1 of a dReLU model, and
 * there is none in the other models. */
static void check_shape_block(const ctx *c)
{
    const char *call = "ebm_model_param_block (EBM_PARAM_SHAPE)";
    int64_t off = -7, rows = -7, cols = -7;
    const int rc = ebm_model_param_block(c->m, EBM_PARAM_SHAPE, 1, &off, &rows, &cols);
    if (c->drelu) {
        if (rc != EBM_OK || off != c->np - 3 * c->size[1] || rows != 3 || cols != c->size[1]) {
            violation(call, "returned %s, offset %lld, %lld x %lld for a dReLU layer of %lld "
                      "units in %lld parameters", code_name(rc), (long long)off,
                      (long long)rows, (long long)cols, (long long)c->size[1],
                      (long long)c->np);
        }
    } else if (rc != EBM_EUNSUPPORTED) {
        violation(call, "returned %s for a model without dReLU units, not EBM_EUNSUPPORTED",
                  code_name(rc));
    }
}

/* axpy_params pushing a log gamma past 30 (either sign) must refuse with
 * EBM_EVALUE and change nothing. */
static void check_axpy_refused(const ctx *c, unsigned b)
{
    const char *call = "ebm_model_axpy_params (a log gamma past 30)";
    const int64_t k = (int64_t)(b >> 1) % (2 * c->size[1]);
    float *g = xmalloc((size_t)c->np * sizeof *g), *p = xmalloc((size_t)c->np * sizeof *p);
    memset(g, 0, (size_t)c->np * sizeof *g);
    g[c->shape_off + k] = 61.0f; /* from anything within +-30 to beyond it */
    const int rc = ebm_model_axpy_params(c->m, (b & 1u) ? -1.0f : 1.0f, g);
    if (rc != EBM_EVALUE) {
        violation(call, "returned %s (log gamma %lld), not EBM_EVALUE", code_name(rc),
                  (long long)k);
    }
    ebm_model_get_params(c->m, p);
    if (!same(p, c->params, (size_t)c->np * sizeof *p)) {
        violation(call, "%s and changed the parameters (log gamma %lld is now %g)",
                  rc == EBM_OK ? "succeeded" : "failed", (long long)k,
                  (double)p[c->shape_off + k]);
        /* (FUZZ_API_KEEP_GOING: the rest on the model meant) */
        if (ebm_model_set_params(c->m, c->params) != EBM_OK) {
            abort();
        }
    }
    if (rc != EBM_OK) {
        model_msg(call, c);
    }
    free(g);
    free(p);
}

static int build(ctx *c, reader *rd)
{
    const unsigned h = u8(rd);
    c->L1 = 2 + (int)(h & 1u);
    int vis_kind = (int)((h >> 1) & 3u);
    c->drelu = !(h & 16u) && (h & 128u);
    const int hid_kind =
        c->drelu ? EBM_UNITS_DRELU : (h & 8u) ? EBM_UNITS_SPIN : EBM_UNITS_BINARY;
    c->n = 1 + (int64_t)((h >> 5) & 3u);
    c->q = 1;
    c->shape_off = -1;
    for (int l = 0; l < c->L1; l++) {
        const unsigned b = u8(rd);
        c->size[l] = 1 + (int64_t)(b % 6u);
        if (l == 0 && vis_kind == EBM_UNITS_POTTS) {
            c->q = 2 + (int64_t)(b & 1u);
            c->size[0] = c->q * (1 + (int64_t)((b >> 1) % 3u));
        }
    }
    const unsigned dr = c->drelu ? u8(rd) : 0u;
    char err[256];
    int rc;
    const char *refused = "";
    if (c->drelu && (c->L1 != 2 || vis_kind == EBM_UNITS_GAUSSIAN)) {
        /* dReLU units only in an RBM over discrete visible units */
        const char *call = c->L1 != 2 ? "ebm_model_create (a dReLU DBM)"
                                      : "ebm_model_create (dReLU over Gaussian units)";
        static int dummy;
        ebm_model_t *bad = (ebm_model_t *)(void *)&dummy;
        err[0] = '\0';
        rc = vis_kind == EBM_UNITS_POTTS
                 ? ebm_model_create_potts(&bad, c->L1, c->size, c->q, hid_kind, err, sizeof err)
                 : ebm_model_create(&bad, c->L1, c->size, vis_kind, hid_kind, err, sizeof err);
        if (rc != EBM_EUNSUPPORTED) {
            violation(call, "returned %d (%s), not EBM_EUNSUPPORTED", rc, code_name(rc));
            if (rc == EBM_OK) {
                ebm_model_destroy(bad);
                bad = NULL;
            }
        }
        if (bad != NULL) {
            violation(call, "failed and left *out non-NULL");
        }
        if (err[0] == '\0') {
            violation(call, "failed without a message in errbuf");
        }
        refused = c->L1 != 2 ? " (as a DBM: refused)" : " (over Gaussian units: refused)";
        c->L1 = 2;
        if (vis_kind == EBM_UNITS_GAUSSIAN) {
            vis_kind = (h & 8u) ? EBM_UNITS_SPIN : EBM_UNITS_BINARY;
        }
    }
    rc = vis_kind == EBM_UNITS_POTTS
             ? ebm_model_create_potts(&c->m, c->L1, c->size, c->q, hid_kind, err, sizeof err)
             : ebm_model_create(&c->m, c->L1, c->size, vis_kind, hid_kind, err, sizeof err);
    if (rc != EBM_OK) {
        violation("ebm_model_create", "a valid shape failed: %d (%s) %s", rc, code_name(rc), err);
        return 0;
    }
    c->w = ebm_model_state_width(c->m);
    c->np = ebm_model_param_count(c->m);
    c->all = (1u << c->L1) - 1u;
    for (int l = 0; l < c->L1; l++) {
        c->off[l] = ebm_model_layer_offset(c->m, l);
        c->units[l] = ebm_model_layer_units(c->m, l);
    }
    if (c->drelu) {
        c->shape_off = c->np - 3 * c->size[1];
        if (c->units[1] != EBM_UNITS_DRELU) {
            violation("ebm_model_layer_units", "layer 1 of a dReLU model is kind %d",
                      c->units[1]);
        }
    }
    check_shape_block(c);
    c->params = xmalloc((size_t)c->np * sizeof *c->params);
    if (ebm_rng_create(&c->rng, 0x5eed, 0) != EBM_OK) {
        abort();
    }
    const int raw_gammas = (dr & 4u) != 0;
    float *before = xmalloc((size_t)c->np * sizeof *before);
    ebm_model_get_params(c->m, before); /* zeros */
    if ((h & 16u) || (dr & 1u)) {
        const int scheme = ((h & 16u) ? (h & 128u) : (dr & 2u)) ? EBM_INIT_GAUSSIAN
                                                                : EBM_INIT_ORTHOGONAL;
        const float scale = fabsf(value(rd));
        rng_snap rs = rng_take(c->rng);
        rc = ebm_model_init(c->m, c->rng, scheme, (double)scale);
        if (!rc_ok("ebm_model_init", rc, C(EBM_EVALUE) | C_MEM, -1)) {
            ebm_model_get_params(c->m, c->params);
            if (!same(before, c->params, (size_t)c->np * sizeof *before)) {
                violation("ebm_model_init", "failed and changed the parameters");
            }
            rng_unchanged("ebm_model_init", c->rng, &rs);
            free(before);
            return 0;
        }
        ebm_model_get_params(c->m, c->params);
        /* what init made must be a valid parameter vector */
        for (int64_t i = 0; i < c->np; i++) {
            if (!isfinite(c->params[i])) {
                snprintf(c->desc, sizeof c->desc, "init scheme %d scale %g", scheme,
                         (double)scale);
                g_ctx = c;
                violation("ebm_model_init", "returned EBM_OK with parameter %lld = %g",
                          (long long)i, (double)c->params[i]);
                free(before);
                return 0;
            }
            if (c->drelu && i >= c->shape_off && c->params[i] != 0.0f) {
                violation("ebm_model_init", "left dReLU shape parameter %lld = %g, not 0",
                          (long long)(i - c->shape_off), (double)c->params[i]);
            }
        }
        if (ebm_model_set_params(c->m, c->params) != EBM_OK) {
            violation("ebm_model_init", "made parameters set_params refuses: %s",
                      ebm_model_errmsg(c->m));
            free(before);
            return 0;
        }
        if (c->drelu) { /* the shapes from codes over init's weights */
            memcpy(before, c->params, (size_t)c->np * sizeof *before);
            read_shapes(c, rd, raw_gammas, c->params);
            if (!set_params_checked(c, c->params, before)) {
                free(before);
                return 0;
            }
        }
    } else {
        const int64_t coded = c->drelu ? c->shape_off : c->np;
        for (int64_t i = 0; i < coded; i++) {
            c->params[i] = value(rd);
        }
        if (c->drelu) {
            read_shapes(c, rd, raw_gammas, c->params);
        }
        if (!set_params_checked(c, c->params, before)) {
            free(before);
            return 0; /* a parameter set_params refuses: nothing to test */
        }
    }
    free(before);
    /* the byte of the axpy refusal (made once the model is described) */
    const unsigned axpy_byte = c->drelu ? u8(rd) : 0u;
    c->amax = 0.0f;
    for (int64_t i = 0; i < c->np; i++) {
        c->amax = fmaxf(c->amax, fabsf(c->params[i]));
    }
    /* states */
    c->ldx = c->w; /* the padding byte comes after the states */
    float *vals = xmalloc((size_t)(c->n * c->w) * sizeof *vals);
    for (int64_t r = 0; r < c->n; r++) {
        for (int64_t j = 0; j < c->w; j++) {
            const int l = layer_of(c, j);
            const unsigned b = u8(rd);
            float v;
            if (c->units[l] == EBM_UNITS_GAUSSIAN || c->units[l] == EBM_UNITS_DRELU) {
                v = value_of(rd, b);
                if (!isfinite(v)) {
                    v = 0.0f;
                }
            } else if (c->units[l] == EBM_UNITS_SPIN) {
                v = (b & 1u) ? 1.0f : -1.0f;
            } else if (c->units[l] == EBM_UNITS_POTTS) {
                /* a site's first column picks its category, b % q */
                if ((j - c->off[l]) % c->q == 0) {
                    const int64_t cat = (int64_t)(b % (unsigned)c->q);
                    for (int64_t t = 0; t < c->q; t++) {
                        vals[r * c->w + j + t] = t == cat ? 1.0f : 0.0f;
                    }
                }
                continue;
            } else {
                v = (float)(b & 1u);
            }
            vals[r * c->w + j] = v;
        }
    }
    c->ldx = c->w + pick(rd, MAX_PAD + 1);
    const unsigned centring = u8(rd);
    if ((centring & 1u) && vis_kind != EBM_UNITS_GAUSSIAN) {
        float mu[MAX_LAYERS * MAX_UNITS], mu0[MAX_LAYERS * MAX_UNITS];
        int drelu_offset = 0; /* a nonzero offset on a dReLU unit */
        for (int l = 0; l < c->L1; l++) {
            for (int64_t j = 0; j < c->size[l]; j++) {
                const unsigned b = u8(rd);
                const float q = (float)(b % 5u) / 4.0f;
                mu[c->off[l] + j] = c->units[l] == EBM_UNITS_SPIN    ? 2.0f * q - 1.0f
                                    : c->units[l] == EBM_UNITS_DRELU ? (b % 8u == 7u ? 0.5f : 0.0f)
                                                                     : q;
                drelu_offset |= mu[c->off[l] + j] != 0.0f && c->units[l] == EBM_UNITS_DRELU;
            }
        }
        ebm_model_get_offsets(c->m, mu0);
        rc = ebm_model_set_offsets(c->m, mu, (int)(centring >> 1 & 1u));
        if (drelu_offset && rc != EBM_EUNSUPPORTED) {
            violation("ebm_model_set_offsets", "returned %s with a nonzero offset on a dReLU "
                      "unit, not EBM_EUNSUPPORTED", code_name(rc));
        }
        if (!rc_ok("ebm_model_set_offsets", rc,
                   C(EBM_EVALUE) | (drelu_offset ? C(EBM_EUNSUPPORTED) : 0u), -1)) {
            float *after = xmalloc((size_t)c->np * sizeof *after);
            ebm_model_get_params(c->m, after);
            if (!same(after, c->params, (size_t)c->np * sizeof *after)) {
                violation("ebm_model_set_offsets", "failed and changed the parameters");
            }
            free(after);
            float mu1[MAX_LAYERS * MAX_UNITS];
            ebm_model_get_offsets(c->m, mu1);
            if (!same(mu1, mu0, (size_t)c->w * sizeof *mu1)) {
                violation("ebm_model_set_offsets", "failed and changed the offsets");
            }
            model_msg("ebm_model_set_offsets", c);
        }
        ebm_model_get_params(c->m, c->params); /* keep_law moves the biases */
    }
    c->x0 = fbuf((size_t)(c->n * c->ldx), PAD_BITS);
    for (int64_t r = 0; r < c->n; r++) {
        memcpy(c->x0 + r * c->ldx, vals + r * c->w, (size_t)c->w * sizeof *vals);
    }
    free(vals);
    static const char *UNITS[5] = {"binary", "spin", "Gaussian", "Potts", "dReLU"};
    int k = snprintf(c->desc, sizeof c->desc, "%s visible, %s hidden%s%s, sizes", UNITS[vis_kind],
                     UNITS[hid_kind], refused, c->drelu && raw_gammas ? " (raw log gammas)" : "");
    for (int l = 0; l < c->L1 && k > 0 && (size_t)k < sizeof c->desc; l++) {
        k += snprintf(c->desc + k, sizeof c->desc - (size_t)k, "%s%lld", l ? "x" : " ",
                      (long long)c->size[l]);
    }
    if (k > 0 && (size_t)k < sizeof c->desc) {
        snprintf(c->desc + k, sizeof c->desc - (size_t)k,
                 ", %lld params (max |p| %g), %lld rows, ldx %lld", (long long)c->np,
                 (double)c->amax, (long long)c->n, (long long)c->ldx);
    }
    g_ctx = c;
    if (c->drelu) {
        check_axpy_refused(c, axpy_byte);
    }
    if (env("FUZZ_API_VERBOSE") != NULL) {
        fprintf(stderr, "fuzz_api: %s\n  params:", c->desc);
        for (int64_t i = 0; i < c->np; i++) {
            fprintf(stderr, " %.9g", (double)c->params[i]);
        }
        for (int64_t r = 0; r < c->n; r++) {
            fprintf(stderr, "\n  state %lld:", (long long)r);
            for (int64_t j = 0; j < c->w; j++) {
                fprintf(stderr, " %.9g", (double)c->x0[r * c->ldx + j]);
            }
        }
        fprintf(stderr, "\n");
    }
    return 1;
}

static float *state_copy(const ctx *c) { return copy_of(c->x0, (size_t)(c->n * c->ldx) * sizeof(float)); }

/* Garbage (NaN, inf, 0.5, 7) in the layers of mask, for the "ignored" checks. */
static void fill_garbage(const ctx *c, float *x, uint32_t mask, unsigned kind)
{
    static const float G[4] = {0.5f, 7.0f, -3.0f, 1e30f};
    for (int64_t r = 0; r < c->n; r++) {
        for (int l = 0; l < c->L1; l++) {
            if (!(mask & (1u << l))) {
                continue;
            }
            for (int64_t j = 0; j < c->size[l]; j++) {
                float v = (kind & 4u) ? (kind & 1u ? NAN : INFINITY) : G[(kind + (unsigned)j) & 3u];
                x[r * c->ldx + c->off[l] + j] = v;
            }
        }
    }
}

/* A sum-out set: none, the odd or the even layers, or any subset. */
static uint32_t pick_sum_out(const ctx *c, reader *rd)
{
    const unsigned b = u8(rd);
    switch (b & 3u) {
    case 0: return 0;
    case 1: return 0xaaaaaaaau & c->all;
    case 2: return 0x55555555u & c->all;
    default: return (b >> 2) & c->all;
    }
}

/* A call the header lists as not supported yet for dReLU units returned rc:
 * it must be exactly EBM_EUNSUPPORTED (EBM_ENOMEM aside). 1 if it was. */
static int drelu_refused(const char *call, int rc)
{
    if (rc == EBM_EUNSUPPORTED || rc == EBM_ENOMEM) {
        return 1;
    }
    violation(call, "returned %d (%s) on a model with dReLU hidden units, not "
              "EBM_EUNSUPPORTED (documented: not supported yet)", rc, code_name(rc));
    return 0;
}

/* ---- energies -------------------------------------------------------------- */

static void op_energy(const ctx *c)
{
    const char *call = "ebm_model_energy";
    double *e = dbuf((size_t)c->n), *e0 = copy_of(e, (size_t)c->n * sizeof *e);
    int rc = ebm_model_energy(c->m, c->n, c->x0, c->ldx, e);
    if (rc_ok(call, rc, C(EBM_EVALUE) | C_MEM, -1)) {
        check_finite_d(call, e, c->n, "energy");
    } else {
        if (!same(e, e0, (size_t)c->n * sizeof *e)) {
            violation(call, "failed (%s) and wrote energy", code_name(rc));
        }
        model_msg(call, c);
    }
    free(e);
    free(e0);
}

static void op_free_energy(const ctx *c, reader *rd)
{
    const char *call = "ebm_model_free_energy";
    const uint32_t S = pick_sum_out(c, rd);
    const unsigned g = u8(rd);
    double *f = dbuf((size_t)c->n), *f0 = copy_of(f, (size_t)c->n * sizeof *f);
    int rc = ebm_model_free_energy(c->m, S, c->n, c->x0, c->ldx, f);
    if (rc_ok(call, rc, C(EBM_EVALUE) | C_MEM, -1)) {
        check_finite_d(call, f, c->n, "free energy");
    } else {
        if (!same(f, f0, (size_t)c->n * sizeof *f)) {
            violation(call, "failed (%s) and wrote f", code_name(rc));
        }
        model_msg(call, c);
    }
    /* the values of summed-out layers are ignored entirely */
    if (S != 0 && rc != EBM_ENOMEM) {
        float *xg = state_copy(c);
        fill_garbage(c, xg, S, g);
        double *fg = dbuf((size_t)c->n);
        int rcg = ebm_model_free_energy(c->m, S, c->n, xg, c->ldx, fg);
        if (rcg != rc || (rc == EBM_OK && !same(f, fg, (size_t)c->n * sizeof *f))) {
            violation(call, "the summed-out layers (S = 0x%x) are not ignored: %s with them "
                      "valid, %s with garbage there%s", S, code_name(rc), code_name(rcg),
                      rc == rcg ? " (different values)" : "");
        }
        free(xg);
        free(fg);
    }
    free(f);
    free(f0);
}

static void op_energy_grad(const ctx *c, reader *rd)
{
    const char *call = "ebm_model_energy_grad";
    const uint32_t S = pick_sum_out(c, rd);
    const unsigned g = u8(rd);
    double *coef = xmalloc((size_t)c->n * sizeof *coef);
    for (int64_t r = 0; r < c->n; r++) {
        double v = value(rd);
        if (!isfinite(v)) {
            v = 1.0;
        }
        coef[r] = fabs(v) > 1e30 ? copysign(1e30, v) : v;
    }
    float *grad = xmalloc((size_t)c->np * sizeof *grad);
    const int small = pick(rd, 2); /* start from 0 or from small values */
    for (int64_t i = 0; i < c->np; i++) {
        grad[i] = small ? (float)((i % 7) - 3) * 0.25f : 0.0f;
    }
    float *g0 = copy_of(grad, (size_t)c->np * sizeof *grad);
    int rc = ebm_model_energy_grad(c->m, S, c->n, c->x0, c->ldx, coef, grad);
    if (rc_ok(call, rc, C(EBM_EVALUE) | C_MEM, -1)) {
        check_finite_f(call, grad, 1, c->np, c->np, "grad", -1);
    } else {
        if (!same(grad, g0, (size_t)c->np * sizeof *grad)) {
            violation(call, "failed (%s) and changed grad", code_name(rc));
        }
        model_msg(call, c);
    }
    if (S != 0 && rc != EBM_ENOMEM) {
        float *xg = state_copy(c);
        fill_garbage(c, xg, S, g);
        float *gg = copy_of(g0, (size_t)c->np * sizeof *grad);
        int rcg = ebm_model_energy_grad(c->m, S, c->n, xg, c->ldx, coef, gg);
        if (rcg != rc || (rc == EBM_OK && !same(grad, gg, (size_t)c->np * sizeof *grad))) {
            violation(call, "the summed-out layers (S = 0x%x) are not ignored: %s with them "
                      "valid, %s with garbage there%s", S, code_name(rc), code_name(rcg),
                      rc == rcg ? " (different values)" : "");
        }
        free(xg);
        free(gg);
    }
    free(coef);
    free(grad);
    free(g0);
}

static void op_energy_grad_input(const ctx *c, reader *rd)
{
    const char *call = "ebm_model_energy_grad_input";
    const uint32_t S = pick_sum_out(c, rd);
    const int l = pick(rd, c->L1);
    const int64_t ldo = c->size[l] + pick(rd, MAX_PAD + 1);
    const unsigned g = u8(rd);
    const size_t no = (size_t)(c->n * ldo);
    float *out = fbuf(no, OUT_BITS), *o0 = copy_of(out, no * sizeof *out);
    int rc = ebm_model_energy_grad_input(c->m, S, l, c->n, c->x0, c->ldx, out, ldo);
    if (rc_ok(call, rc, C(EBM_EVALUE) | C_MEM, -1)) {
        check_finite_f(call, out, c->n, c->size[l], ldo, "out", -1);
    } else {
        if (!same(out, o0, no * sizeof *out)) {
            violation(call, "failed (%s) and wrote out", code_name(rc));
        }
        model_msg(call, c);
    }
    if (S != 0 && rc != EBM_ENOMEM) {
        float *xg = state_copy(c);
        fill_garbage(c, xg, S, g);
        float *og = fbuf(no, OUT_BITS);
        int rcg = ebm_model_energy_grad_input(c->m, S, l, c->n, xg, c->ldx, og, ldo);
        if (rcg != rc || (rc == EBM_OK && !same(out, og, no * sizeof *out))) {
            violation(call, "the summed-out layers (S = 0x%x, l = %d) are not ignored: %s "
                      "with them valid, %s with garbage there%s", S, l, code_name(rc),
                      code_name(rcg), rc == rcg ? " (different values)" : "");
        }
        free(xg);
        free(og);
    }
    free(out);
    free(o0);
}

/* ---- conditionals of one layer ------------------------------------------- */

/* input (what 0) or mean (1) of layer l */
static void op_layer_input_mean(const ctx *c, reader *rd, int what)
{
    const char *call = what ? "ebm_model_layer_mean" : "ebm_model_layer_input";
    const int l = pick(rd, c->L1);
    const int64_t lda = c->size[l] + pick(rd, MAX_PAD + 1);
    const unsigned g = u8(rd);
    const size_t na = (size_t)(c->n * lda);
    float *a = fbuf(na, OUT_BITS), *a0 = copy_of(a, na * sizeof *a);
    int rc = what ? ebm_model_layer_mean(c->m, l, c->n, c->x0, c->ldx, a, lda)
                  : ebm_model_layer_input(c->m, l, c->n, c->x0, c->ldx, a, lda);
    if (rc_ok(call, rc, C(EBM_EVALUE) | C_MEM, -1)) {
        check_finite_f(call, a, c->n, c->size[l], lda, what ? "mean" : "input",
                       what ? c->units[l] : -1);
    } else {
        if (!same(a, a0, na * sizeof *a)) {
            violation(call, "failed (%s) and wrote its output", code_name(rc));
        }
        model_msg(call, c);
    }
    /* the values of layer l itself are ignored */
    float *xg = state_copy(c);
    fill_garbage(c, xg, 1u << l, g);
    float *ag = fbuf(na, OUT_BITS);
    int rcg = what ? ebm_model_layer_mean(c->m, l, c->n, xg, c->ldx, ag, lda)
                   : ebm_model_layer_input(c->m, l, c->n, xg, c->ldx, ag, lda);
    if (rcg != rc || (rc == EBM_OK && !same(a, ag, na * sizeof *a))) {
        violation(call, "the values of layer %d itself are not ignored: %s with them valid, "
                  "%s with garbage there%s", l, code_name(rc), code_name(rcg),
                  rc == rcg ? " (different values)" : "");
    }
    free(xg);
    free(ag);
    free(a);
    free(a0);
}

static void op_layer_logprob(const ctx *c, reader *rd)
{
    const char *call = "ebm_model_layer_logprob";
    const int l = pick(rd, c->L1);
    const int64_t ldxl = c->size[l] + pick(rd, MAX_PAD + 1);
    const unsigned g = u8(rd);
    float *xl = fbuf((size_t)(c->n * ldxl), PAD_BITS);
    for (int64_t r = 0; r < c->n; r++) {
        for (int64_t j = 0; j < c->size[l]; j++) {
            const unsigned b = u8(rd);
            float v = c->units[l] == EBM_UNITS_GAUSSIAN || c->units[l] == EBM_UNITS_DRELU
                          ? value_of(rd, b)
                      : c->units[l] == EBM_UNITS_SPIN ? ((b & 1u) ? 1.0f : -1.0f)
                                                      : (float)(b & 1u);
            xl[r * ldxl + j] = isfinite(v) ? v : 0.0f;
        }
    }
    float *xl0 = copy_of(xl, (size_t)(c->n * ldxl) * sizeof *xl);
    double *lp = dbuf((size_t)c->n), *lp0 = copy_of(lp, (size_t)c->n * sizeof *lp);
    int rc = ebm_model_layer_logprob(c->m, l, c->n, c->x0, c->ldx, xl, ldxl, lp);
    if (rc_ok(call, rc, C(EBM_EVALUE) | C_MEM, -1)) {
        check_finite_d(call, lp, c->n, "logp");
    } else {
        if (!same(lp, lp0, (size_t)c->n * sizeof *lp)) {
            violation(call, "failed (%s) and wrote logp", code_name(rc));
        }
        model_msg(call, c);
    }
    if (!same(xl, xl0, (size_t)(c->n * ldxl) * sizeof *xl)) {
        violation(call, "wrote its input xl");
    }
    if (rc != EBM_ENOMEM) {
        float *xg = state_copy(c);
        fill_garbage(c, xg, 1u << l, g);
        double *lg = dbuf((size_t)c->n);
        int rcg = ebm_model_layer_logprob(c->m, l, c->n, xg, c->ldx, xl, ldxl, lg);
        if (rcg != rc || (rc == EBM_OK && !same(lp, lg, (size_t)c->n * sizeof *lp))) {
            violation(call, "the values of layer %d in x are not ignored: %s with them valid, "
                      "%s with garbage there%s", l, code_name(rc), code_name(rcg),
                      rc == rcg ? " (different values)" : "");
        }
        free(xg);
        free(lg);
    }
    free(xl);
    free(xl0);
    free(lp);
    free(lp0);
}

/* argmin (what 0) or sample (1) of layer l, in place */
static void op_layer_argmin_sample(const ctx *c, reader *rd, int what)
{
    const char *call = what ? "ebm_model_layer_sample" : "ebm_model_layer_argmin";
    const int l = pick(rd, c->L1);
    const unsigned g = u8(rd);
    const size_t nx = (size_t)(c->n * c->ldx) * sizeof(float);
    float *x = state_copy(c);
    rng_snap rs = rng_take(c->rng);
    int rc = what ? ebm_model_layer_sample(c->m, l, c->rng, c->n, x, c->ldx)
                  : ebm_model_layer_argmin(c->m, l, c->n, x, c->ldx);
    if (rc_ok(call, rc, C(EBM_EVALUE) | C_MEM, -1)) {
        check_states(call, c, x, c->n, c->ldx, c->all, 0);
        for (int64_t r = 0; r < c->n; r++) {
            for (int64_t j = 0; j < c->w; j++) {
                if (layer_of(c, j) != l &&
                    !same(&x[r * c->ldx + j], &c->x0[r * c->ldx + j], sizeof(float))) {
                    violation(call, "changed layer %d, not layer %d", layer_of(c, j), l);
                    r = c->n;
                    break;
                }
            }
        }
    } else {
        if (!same(x, c->x0, nx)) {
            violation(call, "failed (%s) and changed x", code_name(rc));
        }
        if (what) {
            rng_unchanged(call, c->rng, &rs);
        }
        model_msg(call, c);
    }
    if (rc != EBM_ENOMEM) {
        rng_snap after = rng_take(c->rng);
        float *xg = state_copy(c);
        fill_garbage(c, xg, 1u << l, g);
        ebm_rng_set_state(c->rng, rs.s);
        int rcg = what ? ebm_model_layer_sample(c->m, l, c->rng, c->n, xg, c->ldx)
                       : ebm_model_layer_argmin(c->m, l, c->n, xg, c->ldx);
        if (rcg != rc || (rc == EBM_OK && !same(x, xg, nx))) {
            violation(call, "the values of layer %d itself are not ignored: %s with them "
                      "valid, %s with garbage there%s", l, code_name(rc), code_name(rcg),
                      rc == rcg ? " (different values)" : "");
        }
        ebm_rng_set_state(c->rng, after.s);
        free(xg);
    }
    free(x);
}

/* ---- random states, local search, mean field ------------------------------ */

/* A clamp mask: NULL, one row shared (ldc 0) or one per row (ldc >= width). */
static uint8_t *make_clamp(const ctx *c, reader *rd, int64_t *ldc)
{
    const unsigned mode = u8(rd) % 4u;
    if (mode == 0) {
        *ldc = 0;
        return NULL;
    }
    *ldc = mode == 1 ? 0 : c->w + (int64_t)(mode - 2);
    const int64_t rows = *ldc == 0 ? 1 : c->n;
    const int64_t ld = *ldc == 0 ? c->w : *ldc;
    uint8_t *clamp = xmalloc((size_t)(rows * ld));
    const unsigned layers = u8(rd); /* whole layers, or units by the bytes */
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < ld; j++) {
            clamp[r * ld + j] = (uint8_t)(j >= c->w ? 0x5a /* ignored */
                                          : (layers & 0x80u) ? (u8(rd) & 1u)
                                                             : ((layers >> layer_of(c, j)) & 1u));
            if (j < c->off[1] && j % c->q != 0) {
                clamp[r * ld + j] = clamp[r * ld + j - j % c->q]; /* a Potts site: whole */
            }
        }
    }
    return clamp;
}

static int clamped(const ctx *c, const uint8_t *clamp, int64_t ldc, int64_t r, int64_t j)
{
    (void)c;
    return clamp != NULL && clamp[(ldc == 0 ? 0 : r * ldc) + j] != 0;
}

static void check_clamped_kept(const char *call, const ctx *c, const float *x, const float *x0,
                               const uint8_t *clamp, int64_t ldc)
{
    for (int64_t r = 0; r < c->n; r++) {
        for (int64_t j = 0; j < c->w; j++) {
            if (clamped(c, clamp, ldc, r, j) &&
                !same(&x[r * c->ldx + j], &x0[r * c->ldx + j], sizeof(float))) {
                violation(call, "changed clamped unit (row %lld, column %lld): %g -> %g",
                          (long long)r, (long long)j, (double)x0[r * c->ldx + j],
                          (double)x[r * c->ldx + j]);
                return;
            }
        }
    }
}

static void op_random_state(const ctx *c, reader *rd)
{
    const char *call = "ebm_model_random_state";
    int64_t ldc;
    uint8_t *clamp = make_clamp(c, rd, &ldc);
    /* x is only written: every unit starts as garbage, clamped ones keep it */
    float *x = state_copy(c);
    fill_garbage(c, x, c->all, 5);
    float *x0 = copy_of(x, (size_t)(c->n * c->ldx) * sizeof *x);
    rng_snap rs = rng_take(c->rng);
    int rc = ebm_model_random_state(c->m, c->rng, c->n, x, c->ldx, clamp, ldc);
    if (rc_ok(call, rc, C_MEM, -1)) {
        check_clamped_kept(call, c, x, x0, clamp, ldc);
        for (int64_t r = 0; r < c->n; r++) {
            for (int64_t j = 0; j < c->ldx; j++) {
                const float v = x[r * c->ldx + j];
                if (j >= c->w) {
                    if (!same(&v, &x0[r * c->ldx + j], sizeof v)) {
                        violation(call, "wrote stride padding");
                    }
                } else if (!clamped(c, clamp, ldc, r, j) && !valid_unit(c->units[layer_of(c, j)], v)) {
                    violation(call, "returned EBM_OK with %g at row %lld, column %lld",
                              (double)v, (long long)r, (long long)j);
                    r = c->n;
                    break;
                }
            }
        }
    } else {
        if (!same(x, x0, (size_t)(c->n * c->ldx) * sizeof *x)) {
            violation(call, "failed (%s) and changed x", code_name(rc));
        }
        rng_unchanged(call, c->rng, &rs);
    }
    free(x);
    free(x0);
    free(clamp);
}

static void op_local_search(const ctx *c, reader *rd)
{
    const char *call = "ebm_model_local_search";
    int64_t ldc;
    uint8_t *clamp = make_clamp(c, rd, &ldc);
    const int64_t max_sweeps = 1 + pick(rd, 16);
    const int want_sweeps = pick(rd, 2);
    float *x = state_copy(c);
    int64_t *sweeps = xmalloc((size_t)c->n * sizeof *sweeps);
    for (int64_t r = 0; r < c->n; r++) {
        sweeps[r] = -77;
    }
    rng_snap rs = rng_take(c->rng);
    int rc = ebm_model_local_search(c->m, c->rng, c->n, x, c->ldx, clamp, ldc, max_sweeps,
                                    want_sweeps ? sweeps : NULL);
    /* (EBM_EUNSUPPORTED: Potts units, documented; dReLU units: only that) */
    const unsigned potts = c->q > 1 ? C(EBM_EUNSUPPORTED) : 0u;
    if (c->drelu) {
        drelu_refused(call, rc);
    }
    if (rc_ok(call, rc, C(EBM_EVALUE) | C_MEM | potts | (c->drelu ? C(EBM_EUNSUPPORTED) : 0u),
              c->n)) {
        check_states(call, c, x, c->n, c->ldx, c->all, 0);
        check_clamped_kept(call, c, x, c->x0, clamp, ldc);
        int64_t capped = 0;
        for (int64_t r = 0; want_sweeps && r < c->n; r++) {
            if (sweeps[r] < 1 || sweeps[r] > max_sweeps) {
                violation(call, "sweeps[%lld] = %lld with max_sweeps %lld", (long long)r,
                          (long long)sweeps[r], (long long)max_sweeps);
            }
            capped += sweeps[r] == max_sweeps;
        }
        if (want_sweeps && rc > capped) {
            violation(call, "returned %d capped rows but only %lld rows made max_sweeps", rc,
                      (long long)capped);
        }
    } else {
        if (!same(x, c->x0, (size_t)(c->n * c->ldx) * sizeof *x)) {
            violation(call, "failed (%s) and changed x", code_name(rc));
        }
        for (int64_t r = 0; r < c->n; r++) {
            if (sweeps[r] != -77) {
                violation(call, "failed (%s) and wrote sweeps", code_name(rc));
                break;
            }
        }
        rng_unchanged(call, c->rng, &rs);
        model_msg(call, c);
    }
    free(x);
    free(sweeps);
    free(clamp);
}

static void op_mean_field(const ctx *c, reader *rd)
{
    const char *call = "ebm_model_mean_field";
    int64_t ldc;
    uint8_t *clamp = make_clamp(c, rd, &ldc);
    const int64_t max_iter = 1 + pick(rd, 16);
    double tol = fabs((double)value(rd));
    if (!isfinite(tol)) {
        tol = 0.0;
    }
    /* free units start at data values or at means in the interior */
    float *mu = state_copy(c);
    const unsigned start = u8(rd);
    for (int64_t r = 0; (start & 1u) && r < c->n; r++) {
        for (int64_t j = 0; j < c->w; j++) {
            const int u = c->units[layer_of(c, j)];
            if (!clamped(c, clamp, ldc, r, j) && u == EBM_UNITS_POTTS) {
                mu[r * c->ldx + j] = 1.0f / (float)c->q; /* uniform sites */
            } else if (!clamped(c, clamp, ldc, r, j) && u != EBM_UNITS_GAUSSIAN &&
                       u != EBM_UNITS_DRELU) {
                const float t = (float)(u8(rd) % 5u) / 4.0f; /* 0, 1/4, .., 1 */
                mu[r * c->ldx + j] = u == EBM_UNITS_SPIN ? 2.0f * t - 1.0f : t;
            }
        }
    }
    float *mu0 = copy_of(mu, (size_t)(c->n * c->ldx) * sizeof *mu);
    int rc = ebm_model_mean_field(c->m, c->n, mu, c->ldx, clamp, ldc, max_iter, tol);
    if (c->drelu) {
        drelu_refused(call, rc);
    }
    if (rc_ok(call, rc, C(EBM_EVALUE) | C_MEM | (c->drelu ? C(EBM_EUNSUPPORTED) : 0u), c->n)) {
        check_states(call, c, mu, c->n, c->ldx, c->all, 1);
        check_clamped_kept(call, c, mu, mu0, clamp, ldc);
    } else {
        if (!same(mu, mu0, (size_t)(c->n * c->ldx) * sizeof *mu)) {
            violation(call, "failed (%s) and changed mu", code_name(rc));
        }
        model_msg(call, c);
    }
    free(mu);
    free(mu0);
    free(clamp);
}

/* ---- evaluation ------------------------------------------------------------ */

static double op_log_partition_exact(const ctx *c)
{
    const char *call = "ebm_model_log_partition_exact";
    double log_z = -777.0;
    int rc = ebm_model_log_partition_exact(c->m, &log_z);
    if (rc_ok(call, rc, C(EBM_ELIMIT) | C_MEM, -1)) {
        check_finite_d(call, &log_z, 1, "log_z");
        return log_z;
    }
    if (log_z != -777.0) {
        violation(call, "failed (%s) and wrote log_z", code_name(rc));
    }
    model_msg(call, c);
    return 0.0;
}

/* log-likelihood (what 0) or its mean-field bound (1) */
static void op_log_likelihood(const ctx *c, double log_z, int what)
{
    const char *call = what ? "ebm_model_log_likelihood_bound" : "ebm_model_log_likelihood";
    double *ll = dbuf((size_t)c->n), *ll0 = copy_of(ll, (size_t)c->n * sizeof *ll);
    /* data: the visible layer of the states, at the states' stride, with
     * garbage in the hidden columns (they are not data) */
    float *d = state_copy(c);
    fill_garbage(c, d, c->all & ~1u, 4);
    int rc = what ? ebm_model_log_likelihood_bound(c->m, log_z, c->n, d, c->ldx, ll)
                  : ebm_model_log_likelihood(c->m, log_z, c->n, d, c->ldx, ll);
    unsigned allowed = C(EBM_EVALUE) | C_MEM | (what ? 0u : C(EBM_ELIMIT));
    if (what && c->drelu) {
        drelu_refused(call, rc);
        allowed |= C(EBM_EUNSUPPORTED);
    }
    if (rc_ok(call, rc, allowed, -1)) {
        check_finite_d(call, ll, c->n, "ll");
    } else {
        if (!same(ll, ll0, (size_t)c->n * sizeof *ll)) {
            violation(call, "failed (%s) and wrote ll", code_name(rc));
        }
        model_msg(call, c);
    }
    free(d);
    free(ll);
    free(ll0);
}

static void op_ais(const ctx *c, reader *rd)
{
    const char *call = "ebm_model_log_partition_ais";
    const int64_t chains = 2 + pick(rd, 4), betas = 1 + pick(rd, 24);
    const int want_se = pick(rd, 2);
    double log_z = -777.0, se = -777.0;
    rng_snap rs = rng_take(c->rng);
    int rc = ebm_model_log_partition_ais(c->m, c->rng, chains, betas, &log_z,
                                         want_se ? &se : NULL);
    if (rc_ok(call, rc, C(EBM_EVALUE) | C_MEM, -1)) {
        check_finite_d(call, &log_z, 1, "log_z");
        if (want_se) {
            check_finite_d(call, &se, 1, "std_err");
        }
    } else {
        if (log_z != -777.0 || se != -777.0) {
            violation(call, "failed (%s) and wrote log_z or std_err", code_name(rc));
        }
        rng_unchanged(call, c->rng, &rs);
        model_msg(call, c);
    }
}

/* ---- samplers -------------------------------------------------------------- */

static const char *SAMPLER_NAME[5] = {"GIBBS", "MH_UNIFORM", "LANGEVIN", "GIBBS_LANGEVIN",
                                     "TEMPERING"};

/* A ladder of 2 to 4 inverse temperatures from the input: increasing to 1,
 * or (one time in four) broken: one beta out of order, out of [0, 1] or
 * NaN, or the last not 1. */
static int64_t fuzz_ladder(reader *rd, double *betas)
{
    const int64_t n = 2 + pick(rd, 3);
    for (int64_t k = 0; k < n; k++) {
        betas[k] = (double)(k + 1) / (double)n - 0.01 * pick(rd, 3);
    }
    betas[0] = betas[0] < 0 ? 0 : betas[0];
    betas[n - 1] = 1.0;
    const unsigned how = u8(rd);
    if ((how & 3u) == 0) {
        static const double bad[4] = {2.0, -0.5, 0.3, NAN};
        betas[pick(rd, (int)n)] = bad[how >> 2 & 3u];
    }
    return n;
}

/* Global moves (EBM_SAMPLER_GLOBAL_PROB) on a sampler s or an estimator e
 * (the other NULL), with a proposal of 1 to 4 of the states' visible rows,
 * or of NaN padding (refused), and a flip probability that may be out of
 * (0, 1) (refused): the steps then mix in global moves, refuse them
 * (EBM_EUNSUPPORTED: kinds without Gibbs chains, Gaussian or clamped
 * layers) or refuse a GLOBAL_PROB without a proposal (EBM_EVALUE), each
 * changing nothing. Returns 1 if GLOBAL_PROB was set. */
static int global_moves(const ctx *c, ebm_sampler_t *s, ebm_estimator_t *e, reader *rd)
{
    const unsigned g = u8(rd);
    if (!(g & 1u)) {
        return 0;
    }
    const double p = 0.25 * (double)(g >> 1 & 3u);
    const int set = rc_ok("ebm_*_set_double (GLOBAL_PROB)",
                          s != NULL ? ebm_sampler_set_double(s, EBM_SAMPLER_GLOBAL_PROB, p)
                                    : ebm_estimator_set_double(e, EBM_ESTIMATOR_SAMPLER_OPTION +
                                                                      EBM_SAMPLER_GLOBAL_PROB, p),
                          C(EBM_EVALUE) | C(EBM_EUNSUPPORTED), -1);
    if (g & 8u) {
        const int64_t rows = 1 + (int64_t)(g >> 4 & 3u) < c->n ? 1 + (int64_t)(g >> 4 & 3u) : c->n;
        float *pad = fbuf((size_t)(rows * c->ldx), PAD_BITS);
        const float *from = g & 64u ? pad : c->x0;
        const double flip = g & 128u ? positive(rd) : 0.05;
        rc_ok("ebm_*_set_proposal",
              s != NULL ? ebm_sampler_set_proposal(s, rows, from, c->ldx, flip)
                        : ebm_estimator_set_proposal(e, rows, from, c->ldx, flip),
              C(EBM_EVALUE) | C(EBM_EUNSUPPORTED) | C_MEM, -1);
        free(pad);
    }
    return set;
}

static void sampler_options(const ctx *c, ebm_sampler_t *s, int kind, reader *rd,
                            uint32_t *clamp_layers)
{
    char call[96];
    snprintf(call, sizeof call, "ebm_sampler_set_int/double (%s)", SAMPLER_NAME[kind]);
    const unsigned cl = u8(rd);
    *clamp_layers = 0;
    /* a row offset, sometimes so large that the rows pass stream row
     * 2^32 - 1 (the steps must refuse with EBM_ESHAPE, changing nothing) */
    const unsigned ro = u8(rd);
    if (ro & 1u) {
        rc_ok(call, ebm_sampler_set_int(s, EBM_SAMPLER_ROW_OFFSET,
                                        ro & 2u ? (int64_t)UINT32_MAX - (ro >> 2 & 7u)
                                                : (int64_t)(ro >> 2)),
              C(EBM_EVALUE), -1);
    }
    if (cl & 0x80u) {
        int rc = ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, (int64_t)(cl & c->all));
        if (rc_ok(call, rc, C(EBM_EVALUE), -1)) {
            *clamp_layers = cl & c->all;
        }
    }
    if ((kind == EBM_SAMPLER_GIBBS || kind == EBM_SAMPLER_TEMPERING) && !c->drelu) {
        global_moves(c, s, NULL, rd);
    }
    if (kind == EBM_SAMPLER_TEMPERING) {
        double betas[4];
        const int64_t n = fuzz_ladder(rd, betas);
        rc_ok("ebm_sampler_set_ladder", ebm_sampler_set_ladder(s, n, betas), C(EBM_EVALUE) | C_MEM,
              -1);
    } else if (kind >= EBM_SAMPLER_LANGEVIN) {
        rc_ok(call, ebm_sampler_set_int(s, EBM_SAMPLER_LANGEVIN_STEPS, 1 + pick(rd, 4)),
              C(EBM_EVALUE), -1);
        rc_ok(call, ebm_sampler_set_double(s, EBM_SAMPLER_STEP_SIZE, positive(rd)),
              C(EBM_EVALUE), -1);
        rc_ok(call, ebm_sampler_set_int(s, EBM_SAMPLER_COSINE, pick(rd, 2)), C(EBM_EVALUE), -1);
        rc_ok(call, ebm_sampler_set_int(s, EBM_SAMPLER_ADJUST_AFTER, pick(rd, 5) - 1),
              C(EBM_EVALUE), -1);
        rc_ok(call, ebm_sampler_set_int(s, EBM_SAMPLER_SCALE_BY_VARIANCE, pick(rd, 2)),
              C(EBM_EVALUE), -1);
        /* both scalings at once: the step must refuse, changing nothing */
        rc_ok(call, ebm_sampler_set_int(s, EBM_SAMPLER_PRECONDITION, pick(rd, 2)),
              C(EBM_EVALUE), -1);
        rc_ok(call, ebm_sampler_set_int(s, EBM_SAMPLER_CLOSED_FORM, pick(rd, 2)),
              C(EBM_EVALUE), -1);
    }
}

static void check_layers_kept(const char *call, const ctx *c, const float *x, const float *x0,
                              uint32_t layers)
{
    for (int64_t r = 0; r < c->n; r++) {
        for (int64_t j = 0; j < c->w; j++) {
            if (((layers >> layer_of(c, j)) & 1u) &&
                !same(&x[r * c->ldx + j], &x0[r * c->ldx + j], sizeof(float))) {
                violation(call, "changed clamped layer %d", layer_of(c, j));
                return;
            }
        }
    }
}

static void op_sampler(const ctx *c, reader *rd, int kind)
{
    char call[96], ccall[96];
    snprintf(call, sizeof call, "ebm_sampler_step (%s)", SAMPLER_NAME[kind]);
    snprintf(ccall, sizeof ccall, "ebm_sampler_coupled_step (%s)", SAMPLER_NAME[kind]);
    ebm_sampler_t *s = NULL;
    int rc = ebm_sampler_create(&s, c->m, kind);
    const int refused = c->drelu && (kind == EBM_SAMPLER_MH_UNIFORM ||
                                     kind == EBM_SAMPLER_TEMPERING);
    if (refused) {
        char kcall[96];
        snprintf(kcall, sizeof kcall, "ebm_sampler_create (%s)", SAMPLER_NAME[kind]);
        drelu_refused(kcall, rc);
    } else if (c->drelu && kind == EBM_SAMPLER_GIBBS && rc == EBM_EUNSUPPORTED) {
        violation("ebm_sampler_create", "refused GIBBS on a model with dReLU hidden units: %s",
                  ebm_model_errmsg(c->m));
    }
    if (!rc_ok("ebm_sampler_create", rc, C(EBM_EUNSUPPORTED) | C_MEM, -1)) {
        if (s != NULL) {
            violation("ebm_sampler_create", "failed and left *out non-NULL");
        }
        model_msg("ebm_sampler_create", c);
        return;
    }
    uint32_t cl;
    sampler_options(c, s, kind, rd, &cl);
    const size_t nx = (size_t)(c->n * c->ldx) * sizeof(float);
    /* single steps */
    float *x = state_copy(c);
    const int steps = 1 + pick(rd, 3);
    for (int t = 0; t < steps; t++) {
        float *before = copy_of(x, nx);
        rng_snap rs = rng_take(c->rng);
        rc = ebm_sampler_step(s, c->rng, c->n, x, c->ldx);
        if (c->drelu && rc == EBM_EUNSUPPORTED) {
            violation(call, "refused a step on a model with dReLU hidden units (supported): %s",
                      ebm_sampler_errmsg(s));
        }
        if (rc_ok(call, rc, C(EBM_EVALUE) | C(EBM_ESHAPE) | C(EBM_EUNSUPPORTED) | C_MEM, -1)) {
            check_states(call, c, x, c->n, c->ldx, c->all, 0);
            check_layers_kept(call, c, x, before, cl);
        } else {
            if (!same(x, before, nx)) {
                violation(call, "failed (%s) and changed x", code_name(rc));
            }
            rng_unchanged(call, c->rng, &rs);
            if (ebm_sampler_errmsg(s)[0] == '\0') {
                violation(call, "failed without a message in ebm_sampler_errmsg");
            }
            t = steps;
        }
        free(before);
    }
    /* coupled steps: GIBBS with both couplings, the others once each */
    const int couplings = kind == EBM_SAMPLER_GIBBS ? 2 : 1;
    for (int cp = 0; cp < couplings; cp++) {
        if (kind == EBM_SAMPLER_GIBBS) {
            rc_ok("ebm_sampler_set_int (GIBBS)", ebm_sampler_set_int(s, EBM_SAMPLER_COUPLING, cp),
                  C(EBM_EVALUE), -1);
        }
        float *cx = state_copy(c), *cy = state_copy(c);
        /* bit r of eq: row r of y equals row r of x; else one unit differs */
        const unsigned eq = u8(rd);
        for (int64_t r = 0; r < c->n; r++) {
            if (!((eq >> r) & 1u)) {
                const int64_t j = pick(rd, (int)c->w);
                float *v = &cy[r * c->ldx + j];
                switch (c->units[layer_of(c, j)]) {
                case EBM_UNITS_BINARY: *v = 1.0f - *v; break;
                case EBM_UNITS_SPIN: *v = -*v; break;
                default: *v = *v + 1.0f == *v ? -*v : *v + 1.0f; break;
                }
            }
        }
        uint8_t *met = xmalloc((size_t)c->n);
        const int csteps = 1 + pick(rd, 3);
        for (int t = 0; t < csteps; t++) {
            float *bx = copy_of(cx, nx), *by = copy_of(cy, nx);
            memset(met, 0xa5, (size_t)c->n);
            rng_snap rs = rng_take(c->rng);
            rc = ebm_sampler_coupled_step(s, c->rng, c->n, cx, c->ldx, cy, c->ldx, met);
            if (c->drelu) {
                drelu_refused(ccall, rc);
            }
            if (rc_ok(ccall, rc,
                      C(EBM_EVALUE) | C(EBM_ESHAPE) | C(EBM_EUNSUPPORTED) | C(EBM_ELIMIT) | C_MEM,
                      -1)) {
                if (kind >= EBM_SAMPLER_LANGEVIN) {
                    violation(ccall, "returned EBM_OK for a Langevin or tempering kind "
                              "(documented: EBM_EUNSUPPORTED)");
                }
                check_states(ccall, c, cx, c->n, c->ldx, c->all, 0);
                check_states(ccall, c, cy, c->n, c->ldx, c->all, 0);
                check_layers_kept(ccall, c, cx, bx, cl);
                check_layers_kept(ccall, c, cy, by, cl);
                for (int64_t r = 0; r < c->n; r++) {
                    int equal = 1, was = 1;
                    for (int64_t j = 0; j < c->w; j++) {
                        equal &= cx[r * c->ldx + j] == cy[r * c->ldx + j];
                        was &= bx[r * c->ldx + j] == by[r * c->ldx + j];
                    }
                    if (met[r] != equal) {
                        violation(ccall, "met[%lld] = %d but the rows are %s", (long long)r,
                                  met[r], equal ? "equal" : "different");
                        break;
                    }
                    if (was && !equal) {
                        violation(ccall, "rows equal on entry (row %lld) did not stay equal",
                                  (long long)r);
                        break;
                    }
                }
            } else {
                if (!same(cx, bx, nx) || !same(cy, by, nx)) {
                    violation(ccall, "failed (%s) and changed x or y", code_name(rc));
                }
                for (int64_t r = 0; r < c->n; r++) {
                    if (met[r] != 0xa5) {
                        violation(ccall, "failed (%s) and wrote met", code_name(rc));
                        break;
                    }
                }
                rng_unchanged(ccall, c->rng, &rs);
                if (ebm_sampler_errmsg(s)[0] == '\0') {
                    violation(ccall, "failed without a message in ebm_sampler_errmsg");
                }
                t = csteps;
            }
            free(bx);
            free(by);
        }
        free(cx);
        free(cy);
        free(met);
    }
    free(x);
    ebm_sampler_destroy(s);
}

/* ---- estimators ------------------------------------------------------------ */

static const char *EST_NAME[6] = {"CD", "PCD", "UCD", "UCD_LMI", "GRBM_CD", "PT"};

static int est_set(const char *call, ebm_estimator_t *e, int option, int64_t v)
{
    return rc_ok(call, ebm_estimator_set_int(e, option, v),
                 C(EBM_EVALUE) | C(EBM_EUNSUPPORTED), -1);
}

static void op_estimator(const ctx *c, reader *rd, int kind)
{
    char call[96], scall[96];
    snprintf(call, sizeof call, "ebm_estimator_gradient (%s)", EST_NAME[kind]);
    snprintf(scall, sizeof scall, "ebm_estimator_set_int/double (%s)", EST_NAME[kind]);
    ebm_estimator_t *e = NULL;
    int rc = ebm_estimator_create(&e, c->m, kind);
    if (c->drelu) {
        char kcall[96];
        snprintf(kcall, sizeof kcall, "ebm_estimator_create (%s)", EST_NAME[kind]);
        if (kind == EBM_ESTIMATOR_UCD || kind == EBM_ESTIMATOR_UCD_LMI ||
            kind == EBM_ESTIMATOR_PT) {
            drelu_refused(kcall, rc);
        } else if (kind != EBM_ESTIMATOR_GRBM_CD && rc == EBM_EUNSUPPORTED) {
            violation(kcall, "refused a model with dReLU hidden units (supported): %s",
                      ebm_model_errmsg(c->m));
        }
    }
    if (!rc_ok("ebm_estimator_create", rc, C(EBM_EUNSUPPORTED) | C_MEM, -1)) {
        if (e != NULL) {
            violation("ebm_estimator_create", "failed and left *out non-NULL");
        }
        model_msg("ebm_estimator_create", c);
        return;
    }
    const int ucd = kind == EBM_ESTIMATOR_UCD || kind == EBM_ESTIMATOR_UCD_LMI;
    if (kind == EBM_ESTIMATOR_PT) {
        double betas[4];
        const int64_t n = fuzz_ladder(rd, betas);
        rc_ok("ebm_estimator_set_ladder", ebm_estimator_set_ladder(e, n, betas),
              C(EBM_EVALUE) | C_MEM, -1);
    }
    /* with global moves a gradient may refuse them (EBM_EUNSUPPORTED) */
    const unsigned global = !c->drelu && global_moves(c, NULL, e, rd) ? C(EBM_EUNSUPPORTED) : 0u;
    /* the caps that keep every input fast: a UCD kind without its coupling
     * cap (and UCD_LMI without its search cap) makes no gradient */
    int capped = est_set(scall, e, EBM_ESTIMATOR_MAX_STEPS, 1 + pick(rd, 50)) || !ucd;
    capped &= est_set(scall, e, EBM_ESTIMATOR_SEARCH_SWEEPS, 1 + pick(rd, 32)) ||
              kind != EBM_ESTIMATOR_UCD_LMI;
    est_set(scall, e, EBM_ESTIMATOR_MEAN_FIELD_ITERS, 1 + pick(rd, 20));
    est_set(scall, e, EBM_ESTIMATOR_K, ucd ? pick(rd, 3) : 1 + pick(rd, 3));
    est_set(scall, e, EBM_ESTIMATOR_CHAINS, pick(rd, 5));
    est_set(scall, e, EBM_ESTIMATOR_MARGINALIZE, pick(rd, 4));
    /* a mean-field positive phase is mean field, not supported for dReLU
     * units: refused here or by the gradient, never computed */
    const int64_t pos_kind = pick(rd, 5);
    int mf_pending = est_set(scall, e, EBM_ESTIMATOR_POSITIVE, pos_kind) && c->drelu &&
                     pos_kind == EBM_POSITIVE_MEAN_FIELD;
    double tol = fabs((double)value(rd));
    rc_ok(scall, ebm_estimator_set_double(e, EBM_ESTIMATOR_MEAN_FIELD_TOL, isfinite(tol) ? tol : 0),
          C(EBM_EVALUE) | C(EBM_EUNSUPPORTED), -1);
    if (kind == EBM_ESTIMATOR_GRBM_CD) {
        static const int SAMPLERS[3] = {EBM_SAMPLER_GIBBS, EBM_SAMPLER_LANGEVIN,
                                        EBM_SAMPLER_GIBBS_LANGEVIN};
        est_set(scall, e, EBM_ESTIMATOR_SAMPLER, SAMPLERS[pick(rd, 3)]);
        est_set(scall, e, EBM_ESTIMATOR_BURN_IN, pick(rd, 3));
    }
    const unsigned so = u8(rd);
    if (so & 1u) {
        est_set(scall, e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_COUPLING, (so >> 1) & 1u);
    }
    if (so & 4u) {
        est_set(scall, e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_LANGEVIN_STEPS,
                1 + ((so >> 3) & 3u));
        rc_ok(scall, ebm_estimator_set_double(e, EBM_ESTIMATOR_SAMPLER_OPTION +
                                                         EBM_SAMPLER_STEP_SIZE, positive(rd)),
              C(EBM_EVALUE) | C(EBM_EUNSUPPORTED), -1);
        est_set(scall, e, EBM_ESTIMATOR_SAMPLER_OPTION + EBM_SAMPLER_ADJUST_AFTER,
                (int64_t)((so >> 5) & 3u) - 1);
    }
    if (ucd) { /* the guard against chains that never meet: EBM_ELIMIT */
        est_set(scall, e, EBM_ESTIMATOR_STEP_LIMIT, 1 + pick(rd, 100));
    }
    if (!capped) {
        ebm_estimator_destroy(e);
        return;
    }
    if (kind == EBM_ESTIMATOR_PCD && (so & 0x80u)) {
        rc_ok("ebm_estimator_set_chains", ebm_estimator_set_chains(e, c->n, c->x0, c->ldx),
              C(EBM_EVALUE) | C_MEM, -1);
    }
    /* data: the visible layer of the states; the other columns are stride */
    float *data = state_copy(c);
    fill_garbage(c, data, c->all & ~1u, 5);
    const int calls = 1 + pick(rd, 2);
    const size_t ng = (size_t)c->np * sizeof(float);
    for (int k = 0; k < calls; k++) {
        float *grad = fbuf((size_t)c->np, OUT_BITS), *g0 = copy_of(grad, ng);
        const int64_t nch = ebm_estimator_num_chains(e);
        float *ch0 = NULL;
        if (nch > 0) {
            ch0 = xmalloc((size_t)(nch * c->w) * sizeof *ch0);
            if (ebm_estimator_get_chains(e, ch0, c->w) != EBM_OK) {
                violation("ebm_estimator_get_chains", "failed on valid arguments");
            }
        }
        rng_snap rs = rng_take(c->rng);
        rc = ebm_estimator_gradient(e, c->rng, c->n, data, c->ldx, grad);
        if (mf_pending && rc != EBM_EUNSUPPORTED && rc != EBM_ENOMEM) {
            violation(call, "EBM_POSITIVE_MEAN_FIELD on dReLU hidden units (mean field is not "
                      "supported for them) was accepted by ebm_estimator_set_int and the "
                      "gradient returned %s, not EBM_EUNSUPPORTED", code_name(rc));
            mf_pending = 0; /* once per estimator */
        }
        if (rc_ok(call, rc,
                  C(EBM_EVALUE) | C(EBM_ELIMIT) | C_MEM | global |
                      (mf_pending ? C(EBM_EUNSUPPORTED) : 0u),
                  -1)) {
            check_finite_f(call, grad, 1, c->np, c->np, "grad", -1);
            const int64_t n2 = ebm_estimator_num_chains(e);
            if (n2 > 0) {
                float *ch = xmalloc((size_t)(n2 * c->w) * sizeof *ch);
                if (ebm_estimator_get_chains(e, ch, c->w) != EBM_OK) {
                    violation("ebm_estimator_get_chains", "failed on valid arguments");
                }
                for (int64_t r = 0; r < n2; r++) {
                    for (int64_t j = 0; j < c->w; j++) {
                        if (!valid_unit(c->units[layer_of(c, j)], ch[r * c->w + j])) {
                            violation(call, "left persistent chain %lld with %g at column %lld",
                                      (long long)r, (double)ch[r * c->w + j], (long long)j);
                            r = n2;
                            break;
                        }
                    }
                }
                free(ch);
            }
        } else {
            if (!same(grad, g0, ng)) {
                violation(call, "failed (%s) and wrote grad", code_name(rc));
            }
            rng_unchanged(call, c->rng, &rs);
            if (ebm_estimator_num_chains(e) != nch) {
                violation(call, "failed (%s) and changed the number of chains", code_name(rc));
            } else if (nch > 0) {
                float *ch = xmalloc((size_t)(nch * c->w) * sizeof *ch);
                ebm_estimator_get_chains(e, ch, c->w);
                if (!same(ch, ch0, (size_t)(nch * c->w) * sizeof *ch)) {
                    violation(call, "failed (%s) and changed the chains", code_name(rc));
                }
                free(ch);
            }
            if (ebm_estimator_errmsg(e)[0] == '\0') {
                violation(call, "failed without a message in ebm_estimator_errmsg");
            }
            k = calls;
        }
        free(ch0);
        free(grad);
        free(g0);
    }
    free(data);
    ebm_estimator_destroy(e);
}

/* ---- the target ------------------------------------------------------------ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ebm__set_residual_try_limit(INT64_C(1) << 16);
    reader rd = {data, size, 0};
    g_input = data;
    g_input_size = size;
    ctx c;
    memset(&c, 0, sizeof c);
    g_ctx = NULL;
    if (build(&c, &rd)) {
        op_energy(&c);
        op_free_energy(&c, &rd);
        op_energy_grad(&c, &rd);
        op_energy_grad_input(&c, &rd);
        op_layer_input_mean(&c, &rd, 0);
        op_layer_input_mean(&c, &rd, 1);
        op_layer_logprob(&c, &rd);
        op_layer_argmin_sample(&c, &rd, 0);
        op_layer_argmin_sample(&c, &rd, 1);
        op_random_state(&c, &rd);
        op_local_search(&c, &rd);
        op_mean_field(&c, &rd);
        const double log_z = op_log_partition_exact(&c);
        op_log_likelihood(&c, log_z, 0);
        op_log_likelihood(&c, log_z, 1);
        op_ais(&c, &rd);
        for (int kind = 0; kind < 5; kind++) {
            op_sampler(&c, &rd, kind);
        }
        for (int kind = 0; kind < 6; kind++) {
            op_estimator(&c, &rd, kind);
        }
        /* no const call changed the parameters */
        float *p = xmalloc((size_t)c.np * sizeof *p);
        ebm_model_get_params(c.m, p);
        if (!same(p, c.params, (size_t)c.np * sizeof *p)) {
            violation("const calls", "the parameters changed");
        }
        free(p);
    }
    g_ctx = NULL;
    ebm_model_destroy(c.m);
    ebm_rng_destroy(c.rng);
    free(c.params);
    free(c.x0);
    return 0;
}
