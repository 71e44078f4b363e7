/*
 * libFuzzer target for the trainers' checkpoint reader (examples/common/
 * checkpoint.c), driven as trainer.c's resume() drives it. The input is
 * written to a file (tests/fuzz/fuzz_readers.h) and:
 *
 *  1. checkpoint_load returns CHECKPOINT_OK, or CHECKPOINT_EFORMAT with a
 *     message and *out zeroed. A loaded checkpoint has what checkpoint.h
 *     promises: a model and a generator state, buffers exactly as long as
 *     their counts say, an iteration, optimiser step and average start and
 *     count in 0..CHECKPOINT_MAX_STEP, a finite time >= 0;
 *  2. checkpoint_config_tunable against two run texts: a fixed one, and one
 *     whose part before " | " is the checkpoint's own (so that the tunable
 *     part is always reached): NULL, or a string inside the checkpoint's text;
 *  3. checkpoint_restore into the handles a trainer would have for the
 *     checkpoint's model: a copy of it re-initialised (so that a restore
 *     shows), a generator, an optimiser whose buffers fit the checkpoint's
 *     (plain SGD, momentum or Adam), an average from the checkpoint's start
 *     (or none), a PCD estimator; or, for half the inputs (a hash of the
 *     input picks), handles that differ in one respect (handles_make). It
 *     returns CHECKPOINT_OK and the handles then hold exactly the
 *     checkpoint's parameters, offsets, generator state, optimiser step and
 *     buffers, average and chains; or CHECKPOINT_EMISMATCH with a message
 *     and none of them changed;
 *  4. training goes on as in trainer.c: one optimiser step (EBM_OK, or
 *     EBM_EVALUE when the restored buffers overflow the parameters) and the
 *     average's update; then checkpoint_save and checkpoint_load again give
 *     back the same handles, iteration, seconds and text.
 * A broken promise is printed and abort()s; sanitizer reports, leaks and
 * hangs (-timeout=10) fail too. Each input runs twice: as it is, and with
 * its CRCs made right (the model section's own, then the file's), so that
 * mutations reach the sections' parsing and the restore.
 *
 * make fuzz-ci (CI: FUZZ_CI_SECONDS) and make fuzz (FUZZ_SECONDS) build it
 * with the library's and examples/common's objects under
 * -fsanitize=fuzzer,address,undefined into build/fuzz/fuzz_checkpoint and
 * run it from tests/fuzz/corpus/checkpoint: real checkpoints of tiny
 * trainer runs, written by tests/fuzz/make_trainer_corpus.sh (make
 * fuzz-corpus).
 */
#include <ebm.h>

#include "common/checkpoint.h"
#include "common/optim.h"
#include "fuzz_readers.h"

#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { HEADER_BYTES = 16, SECTION_HEAD = 12, CRC_BYTES = 4 };

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n > 0 ? n : 1, size);
    if (p == NULL) {
        fuzz_violation(__FILE__, __LINE__, "out of memory in the harness", NULL);
    }
    return p;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = v << 8 | p[i];
    }
    return v;
}

static void put_crc(uint8_t *at, const uint8_t *p, size_t n)
{
    const uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
    for (int i = 0; i < 4; i++) {
        at[i] = (uint8_t)(crc >> (8 * i));
    }
}

/* The CRC of every model section that the section walk reaches, then the file's. */
static void fix_crcs(uint8_t *p, size_t n)
{
    const size_t end = n - CRC_BYTES;
    for (size_t at = HEADER_BYTES; at <= end && end - at >= SECTION_HEAD;) {
        const uint64_t len = get_u64(p + at + 4);
        if (len > end - at - SECTION_HEAD) {
            break;
        }
        if (memcmp(p + at, "MODL", 4) == 0 && len >= CRC_BYTES) {
            uint8_t *model = p + at + SECTION_HEAD;
            put_crc(model + len - CRC_BYTES, model, (size_t)len - CRC_BYTES);
        }
        at += SECTION_HEAD + (size_t)len;
    }
    put_crc(p + end, p, end);
}

/* ---- what a caller can see of the handles -------------------------------- */

typedef struct handles {
    ebm_model_t *m;
    ebm_rng_t *rng;
    optim opt;
    optim_average avg;
    ebm_estimator_t *e;
} handles;

typedef struct snapshot {
    int64_t n_params, width;
    float *params, *offsets;
    uint64_t rng[EBM_RNG_STATE_WORDS];
    int64_t opt_step, opt_floats;
    float *opt_buffers;
    int avg_on;
    int64_t avg_from, avg_count, avg_n;
    double *avg_mean;
    int64_t n_chains;
    float *chains;
} snapshot;

static void snap_take(snapshot *s, const handles *h)
{
    memset(s, 0, sizeof *s);
    s->n_params = ebm_model_param_count(h->m);
    s->width = ebm_model_state_width(h->m);
    s->params = xcalloc((size_t)s->n_params, sizeof *s->params);
    s->offsets = xcalloc((size_t)s->width, sizeof *s->offsets);
    REQUIRE(ebm_model_get_params(h->m, s->params) == EBM_OK, NULL);
    REQUIRE(ebm_model_get_offsets(h->m, s->offsets) == EBM_OK, NULL);
    REQUIRE(ebm_rng_get_state(h->rng, s->rng) == EBM_OK, NULL);
    s->opt_floats = optim_buffer_floats(&h->opt);
    s->opt_buffers = xcalloc((size_t)s->opt_floats, sizeof *s->opt_buffers);
    optim_state_get(&h->opt, &s->opt_step, s->opt_buffers);
    s->avg_on = optim_average_on(&h->avg);
    s->avg_from = h->avg.from;
    s->avg_count = h->avg.count;
    s->avg_n = h->avg.n;
    s->avg_mean = xcalloc((size_t)s->avg_n, sizeof *s->avg_mean);
    if (s->avg_on) {
        memcpy(s->avg_mean, h->avg.mean, (size_t)s->avg_n * sizeof *s->avg_mean);
    }
    s->n_chains = h->e != NULL ? ebm_estimator_num_chains(h->e) : 0;
    s->chains = xcalloc((size_t)(s->n_chains * s->width), sizeof *s->chains);
    if (s->n_chains > 0) {
        REQUIRE(ebm_estimator_get_chains(h->e, s->chains, s->width) == EBM_OK, NULL);
    }
}

static void snap_free(snapshot *s)
{
    free(s->params);
    free(s->offsets);
    free(s->opt_buffers);
    free(s->avg_mean);
    free(s->chains);
}

static int same(const void *a, const void *b, size_t bytes)
{
    return bytes == 0 || memcmp(a, b, bytes) == 0;
}

/* Whether two snapshots are equal bit for bit. */
static int snap_equal(const snapshot *a, const snapshot *b)
{
    return a->n_params == b->n_params && a->width == b->width &&
           same(a->params, b->params, (size_t)a->n_params * sizeof(float)) &&
           same(a->offsets, b->offsets, (size_t)a->width * sizeof(float)) &&
           same(a->rng, b->rng, sizeof a->rng) && a->opt_step == b->opt_step &&
           a->opt_floats == b->opt_floats &&
           same(a->opt_buffers, b->opt_buffers, (size_t)a->opt_floats * sizeof(float)) &&
           a->avg_on == b->avg_on && a->avg_from == b->avg_from &&
           a->avg_count == b->avg_count && a->avg_n == b->avg_n &&
           same(a->avg_mean, b->avg_mean, (size_t)a->avg_n * sizeof(double)) &&
           a->n_chains == b->n_chains &&
           same(a->chains, b->chains, (size_t)(a->n_chains * a->width) * sizeof(float));
}

/* Whether the handles (snapshot s) hold exactly what c holds. */
static int snap_holds(const snapshot *s, const checkpoint *c)
{
    snapshot want;
    memset(&want, 0, sizeof want);
    want.n_params = ebm_model_param_count(c->model);
    want.width = ebm_model_state_width(c->model);
    if (want.n_params != s->n_params || want.width != s->width) {
        return 0;
    }
    want.params = xcalloc((size_t)want.n_params, sizeof(float));
    want.offsets = xcalloc((size_t)want.width, sizeof(float));
    ebm_model_get_params(c->model, want.params);
    ebm_model_get_offsets(c->model, want.offsets);
    int ok = same(want.params, s->params, (size_t)s->n_params * sizeof(float)) &&
             same(want.offsets, s->offsets, (size_t)s->width * sizeof(float)) &&
             same(c->rng_state, s->rng, sizeof s->rng) && c->opt_step == s->opt_step &&
             c->opt_floats == s->opt_floats &&
             same(c->opt_buffers, s->opt_buffers, (size_t)s->opt_floats * sizeof(float));
    if (s->avg_on) {
        ok = ok && s->avg_count == (c->has_average ? c->avg_count : 0) &&
             (!c->has_average || same(c->avg_mean, s->avg_mean, (size_t)s->avg_n * sizeof(double)));
    }
    if (c->n_chains > 0) {
        ok = ok && s->n_chains == c->n_chains &&
             same(c->chains, s->chains, (size_t)(c->n_chains * c->chain_width) * sizeof(float));
    }
    free(want.params);
    free(want.offsets);
    return ok;
}

/* ---- the resume ---------------------------------------------------------- */

/* A copy of c's model, re-initialised so that a restore shows. */
static ebm_model_t *model_like(const checkpoint *c, ebm_rng_t *rng)
{
    const size_t size = (size_t)ebm_model_save_size(c->model);
    uint8_t *bytes = xcalloc(size, 1);
    size_t n = 0;
    ebm_model_t *m = NULL;
    REQUIRE(ebm_model_save_buffer(c->model, bytes, size, &n) == EBM_OK && n == size, NULL);
    REQUIRE(ebm_model_load_buffer(&m, bytes, n, NULL, 0) == EBM_OK, "a saved model reloads");
    free(bytes);
    ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 0.1); /* may refuse a model kind: then a copy */
    return m;
}

/* The handles of a run that resumes from c: those a trainer with c's
 * settings has (pick % 8 < 4), or ones that differ in one respect, which
 * the restore must refuse (or, for an average that starts at the
 * checkpoint's step, accept): 4 the average's start (with an average, one
 * step later; without, one step earlier), 5 no average (with one; without,
 * one from the checkpoint's step), 6 another optimiser, 7 another model's
 * shape (pick & 8) or no estimator. */
static void handles_make(handles *h, const checkpoint *c, uint32_t pick)
{
    memset(h, 0, sizeof *h);
    const uint32_t variant = pick % 8;
    REQUIRE(ebm_rng_create(&h->rng, 20240611, 3) == EBM_OK, NULL);
    if (variant == 7 && (pick & 8)) {
        const int64_t sizes[2] = {3, 2};
        REQUIRE(ebm_model_create(&h->m, 2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, NULL, 0) ==
                    EBM_OK,
                NULL);
    } else {
        h->m = model_like(c, h->rng);
    }
    const int64_t n = ebm_model_param_count(h->m);
    optim_settings s = optim_settings_default(0.01);
    int64_t floats = c->opt_floats;
    if (variant == 6) {
        floats = floats == 0 ? n : floats == n ? 2 * n : 0;
    }
    if (floats == 2 * n) {
        s.kind = OPTIM_ADAM;
    } else if (floats != 0) {
        s.momentum = 0.9; /* n floats: the checkpoint's; else a mismatch */
    }
    s.schedule = OPTIM_INVSQRT;
    s.gamma = 1e-3;
    REQUIRE(optim_init(&h->opt, &s, n) == OPTIM_OK, NULL);
    int64_t from = c->has_average ? c->avg_from : -1;
    if (variant == 4) {
        from = c->has_average ? c->avg_from + 1 : c->opt_step - 1;
    } else if (variant == 5) {
        from = c->has_average ? -1 : c->opt_step;
    }
    REQUIRE(optim_average_init(&h->avg, n, from < 0 ? -1 : from) == OPTIM_OK, NULL);
    if ((variant == 7 && !(pick & 8)) ||
        ebm_estimator_create(&h->e, h->m, EBM_ESTIMATOR_PCD) != EBM_OK) {
        h->e = NULL;
    }
}

static void handles_free(handles *h)
{
    ebm_estimator_destroy(h->e);
    ebm_model_destroy(h->m);
    ebm_rng_destroy(h->rng);
    optim_free(&h->opt);
    optim_average_free(&h->avg);
}

static int step_ok(int64_t v)
{
    return v >= 0 && v <= CHECKPOINT_MAX_STEP;
}

/* What a loaded checkpoint promises (checkpoint.h). */
static void check_loaded(const checkpoint *c)
{
    REQUIRE(c->model != NULL && c->has_rng, NULL);
    REQUIRE(step_ok(c->iteration) && c->seconds >= 0.0 && c->seconds <= DBL_MAX,
            "the iteration and the time a trainer goes on from");
    REQUIRE(step_ok(c->opt_step), "the optimiser's step");
    REQUIRE(!c->has_average || (step_ok(c->avg_from) && step_ok(c->avg_count)), "the average's");
    REQUIRE(c->opt_floats >= 0 && (c->opt_floats == 0) == (c->opt_buffers == NULL), NULL);
    REQUIRE(!c->has_average || (c->avg_n >= 1 && c->avg_mean != NULL && c->avg_from >= 0 &&
                                c->avg_count >= 0),
            NULL);
    REQUIRE(c->has_average || c->avg_mean == NULL, NULL);
    REQUIRE(c->n_chains >= 0 && (c->n_chains == 0) == (c->chains == NULL), NULL);
    REQUIRE(c->n_chains == 0 || c->chain_width >= 1, NULL);
}

/* Both run texts of the promise 2. */
static void check_config(const checkpoint *c)
{
    static const char fixed_now[] =
        "method=pcd data=bas bas_side=4 train_rows=0 binarize=threshold units=spin "
        "layers=16,8 optimizer=sgd momentum=off batch=8 chains=4 seed=1 | lr=0.01";
    const char *texts[2] = {fixed_now, NULL};
    char *own = NULL;
    if (c->config != NULL) {
        const char *bar = strstr(c->config, " | ");
        const size_t fixed = bar != NULL ? (size_t)(bar - c->config) : strlen(c->config);
        own = xcalloc(fixed + 16, 1);
        memcpy(own, c->config, fixed);
        memcpy(own + fixed, " | lr=0.5", 10);
        texts[1] = own;
    }
    const size_t len = c->config != NULL ? strlen(c->config) : 0;
    for (int i = 0; i < 2 && texts[i] != NULL; i++) {
        const char *tunable = checkpoint_config_tunable(c, texts[i]);
        REQUIRE(tunable == NULL ||
                    (tunable >= c->config && tunable <= c->config + len &&
                     strlen(tunable) == len - (size_t)(tunable - c->config)),
                "the tunable settings lie inside the checkpoint's text");
    }
    free(own);
}

/* Promise 4: one step, the average's update, a save and a load. */
static void check_continue(handles *h, const checkpoint *c, const char *path)
{
    const int64_t n = ebm_model_param_count(h->m);
    float *g = xcalloc((size_t)n, sizeof *g);
    for (int64_t i = 0; i < n; i++) {
        g[i] = (float)((i % 7) - 3) * 0.01f;
    }
    const int rc = optim_step(&h->opt, h->m, g);
    REQUIRE(rc == EBM_OK || rc == EBM_EVALUE, "optim_step after a restore");
    if (rc == EBM_OK) {
        REQUIRE(optim_average_update(&h->avg, h->m, h->opt.step) == EBM_OK, NULL);
    }
    free(g);

    char err[512] = "";
    REQUIRE(checkpoint_save(path, h->m, h->rng, &h->opt, &h->avg, h->e, c->iteration, c->seconds,
                            c->config, err, sizeof err) == CHECKPOINT_OK,
            err);
    checkpoint again;
    REQUIRE(checkpoint_load(&again, path, err, sizeof err) == CHECKPOINT_OK, err);
    check_loaded(&again);
    snapshot s;
    snap_take(&s, h);
    REQUIRE(snap_holds(&s, &again), "a saved run loads back as it was");
    REQUIRE(again.iteration == c->iteration && same(&again.seconds, &c->seconds, sizeof c->seconds),
            NULL);
    REQUIRE((again.config == NULL) == (c->config == NULL) &&
                (c->config == NULL || strcmp(again.config, c->config) == 0),
            NULL);
    snap_free(&s);
    checkpoint_free(&again);
}

static void check_one(const uint8_t *data, size_t size, uint32_t pick)
{
    char path[1024], again[1024], err[512] = "";
    fuzz_files_path(path, sizeof path, "input.ckpt");
    fuzz_files_path(again, sizeof again, "again.ckpt");
    fuzz_files_write(path, data, size);

    checkpoint c;
    int rc = checkpoint_load(&c, path, err, sizeof err);
    if (rc != CHECKPOINT_OK) {
        static const checkpoint zero;
        REQUIRE(rc == CHECKPOINT_EFORMAT && err[0] != '\0', err);
        REQUIRE(memcmp(&c, &zero, sizeof c) == 0, "*out zeroed on failure");
        return;
    }
    check_loaded(&c);
    check_config(&c);

    handles h;
    handles_make(&h, &c, pick);
    snapshot before, after;
    snap_take(&before, &h);
    err[0] = '\0';
    rc = checkpoint_restore(&c, h.m, h.rng, &h.opt, &h.avg, h.e, err, sizeof err);
    snap_take(&after, &h);
    if (rc == CHECKPOINT_OK) {
        REQUIRE(snap_holds(&after, &c), "a restore puts back everything the checkpoint holds");
        check_continue(&h, &c, again);
    } else {
        REQUIRE(rc == CHECKPOINT_EMISMATCH && err[0] != '\0', err);
        REQUIRE(snap_equal(&before, &after), "a refused restore changes nothing");
    }
    snap_free(&before);
    snap_free(&after);
    handles_free(&h);
    checkpoint_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* FNV-1a of the input: any mutation may change the handles' variant */
    uint32_t pick = 2166136261u;
    for (size_t i = 0; i < size; i++) {
        pick = (pick ^ data[i]) * 16777619u;
    }
    check_one(data, size, pick);
    if (size >= HEADER_BYTES + CRC_BYTES) {
        uint8_t *copy = xcalloc(size, 1);
        memcpy(copy, data, size);
        fix_crcs(copy, size);
        check_one(copy, size, pick);
        free(copy);
    }
    return 0;
}
