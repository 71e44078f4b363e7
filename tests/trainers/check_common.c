/*
 * Unit tests of examples/common that the trainers' runs cannot show alone:
 * optim_average (optim.h), the running mean against the mean of the
 * iterates computed directly, and its checkpoint section (checkpoint.h):
 * saved and restored bit for bit, the version it writes, the restores it
 * refuses; the counters and times a checkpoint may hold;
 * checkpoint_config_tunable's comparison of settings texts; IDX files whose
 * header declares more images than they hold; the one-hot grey levels of
 * data.h (DATA_LEVELS) against values worked by hand; cli_open_log's cut
 * of a resumed run's log (cli.h); which visible units the trainers' AIS can
 * start from the data's pixel means on (trainer_data_base_unfit,
 * trainer.h), and the reason it gives where it cannot. Built by `make
 * examples` as build/examples/check_common and run by
 * tests/trainers/run.sh. Prints one line per check and exits 1 if any failed.
 */
#include <ebm.h>

#include "common/checkpoint.h"
#include "common/cli.h"
#include "common/data.h"
#include "common/optim.h"
#include "common/trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { STEPS = 9, FROM = 3 };

static int failed = 0;

static void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    failed += !ok;
}

static ebm_model_t *small_model(void)
{
    const int64_t sizes[2] = {5, 3};
    ebm_model_t *m = NULL;
    if (ebm_model_create(&m, 2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, NULL, 0) != EBM_OK) {
        fprintf(stderr, "check_common: ebm_model_create failed\n");
        exit(2);
    }
    return m;
}

/* STEPS SGD steps on m along normal "gradients" from rng, each followed by
 * an update of avg; theta[t] receives the parameters after step t + 1. */
static void train(ebm_model_t *m, optim_sgd *sgd, optim_average *avg, ebm_rng_t *rng, int steps,
                  float *g, float *theta)
{
    const int64_t n = ebm_model_param_count(m);
    for (int t = 0; t < steps; t++) {
        if (ebm_rng_normal(rng, n, g) != EBM_OK || optim_sgd_step(sgd, m, g) != EBM_OK ||
            optim_average_update(avg, m, sgd->step) != EBM_OK) {
            fprintf(stderr, "check_common: a training step failed\n");
            exit(2);
        }
        if (theta != NULL) {
            ebm_model_get_params(m, theta + (int64_t)t * n);
        }
    }
}

static int same_bits(const void *a, const void *b, size_t bytes)
{
    return memcmp(a, b, bytes) == 0;
}

static void running_mean(void)
{
    ebm_model_t *m = small_model(), *shown = small_model();
    const int64_t n = ebm_model_param_count(m);
    ebm_rng_t *rng = NULL;
    ebm_rng_create(&rng, 7, 0);
    ebm_model_init(m, rng, EBM_INIT_GAUSSIAN, 0.5);
    float *g = malloc((size_t)n * sizeof *g), *theta = malloc((size_t)(STEPS * n) * sizeof *theta);
    float *out = malloc((size_t)n * sizeof *out), *back = malloc((size_t)n * sizeof *back);
    optim_sgd sgd = optim_sgd_plain(0.3);
    optim_average avg, all;
    check(optim_average_init(&avg, n, FROM) == OPTIM_OK && optim_average_on(&avg),
          "optim_average_init with from 3: active");
    check(optim_average_get(&avg, out) == OPTIM_EARG &&
              optim_average_apply(&avg, shown) == EBM_EVALUE,
          "nothing averaged yet: get and apply refuse");
    optim_average_init(&all, n, 0);
    for (int t = 0; t < STEPS; t++) {
        train(m, &sgd, &avg, rng, 1, g, theta + (int64_t)t * n);
        optim_average_update(&all, m, sgd.step);
    }
    check(avg.count == STEPS - FROM && all.count == STEPS,
          "count is the number of steps after from (6 of 9; 9 from 0)");
    /* The mean of theta_4 .. theta_9, directly in long double. */
    double worst = 0.0;
    int rounding_ok = 1;
    optim_average_get(&avg, out);
    for (int64_t i = 0; i < n; i++) {
        long double sum = 0.0L;
        for (int t = FROM; t < STEPS; t++) {
            sum += theta[(int64_t)t * n + i];
        }
        const double direct = (double)(sum / (STEPS - FROM));
        worst = fmax(worst, fabs(avg.mean[i] - direct) / fmax(fabs(direct), 1e-30));
        rounding_ok &= out[i] == (float)avg.mean[i] &&
                       fabsf(out[i] - (float)direct) <= 1e-6f * fmaxf(fabsf(out[i]), 1.0f);
    }
    char what[160];
    snprintf(what, sizeof what,
             "the running mean equals the direct mean of theta_4..theta_9 (worst relative "
             "error %.1e <= 1e-14)", worst);
    check(worst <= 1e-14, what);
    /* Its twin, one iterate off (theta_3 .. theta_8), must be far from it. */
    double twin = 0.0;
    for (int64_t i = 0; i < n; i++) {
        long double sum = 0.0L;
        for (int t = FROM - 1; t < STEPS - 1; t++) {
            sum += theta[(int64_t)t * n + i];
        }
        twin = fmax(twin, fabs(avg.mean[i] - (double)(sum / (STEPS - FROM))));
    }
    check(twin > 1e-3, "twin: the mean of theta_3..theta_8 (one iterate off) differs by > 1e-3");
    check(rounding_ok, "optim_average_get rounds the mean to float");
    check(optim_average_apply(&avg, shown) == EBM_OK &&
              ebm_model_get_params(shown, back) == EBM_OK &&
              same_bits(back, out, (size_t)n * sizeof *out),
          "optim_average_apply sets the model to the rounded mean");
    double worst_all = 0.0;
    for (int64_t i = 0; i < n; i++) {
        long double sum = 0.0L;
        for (int t = 0; t < STEPS; t++) {
            sum += theta[(int64_t)t * n + i];
        }
        const double direct = (double)(sum / STEPS);
        worst_all = fmax(worst_all, fabs(all.mean[i] - direct) / fmax(fabs(direct), 1e-30));
    }
    check(worst_all <= 1e-14, "from 0: the mean of every iterate after the first step");

    optim_average off;
    check(optim_average_init(&off, n, -1) == OPTIM_OK && !optim_average_on(&off) &&
              optim_average_update(&off, m, 100) == EBM_OK && off.count == 0 &&
              optim_average_get(&off, out) == OPTIM_EARG,
          "from -1: inactive, updates do nothing");
    const int64_t sizes[2] = {4, 3};
    ebm_model_t *other = NULL;
    ebm_model_create(&other, 2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, NULL, 0);
    const int64_t count = avg.count;
    check(optim_average_update(&avg, other, 100) == EBM_ESHAPE && avg.count == count &&
              optim_average_apply(&avg, other) == EBM_ESHAPE,
          "a model of another size: EBM_ESHAPE, nothing changes");
    check(optim_average_init(&off, 0, 0) == OPTIM_EARG, "n_params 0 with averaging on: OPTIM_EARG");
    optim_average_free(&avg);
    optim_average_free(&all);
    optim_average_free(&off);
    check(!optim_average_on(&avg) && avg.mean == NULL, "optim_average_free leaves it inactive");
    ebm_model_destroy(other);
    ebm_model_destroy(shown);
    ebm_model_destroy(m);
    ebm_rng_destroy(rng);
    free(g), free(theta), free(out), free(back);
}

/* A run of the example optimiser (optim, with momentum) and its average. */
typedef struct state {
    ebm_model_t *m;
    ebm_rng_t *rng;
    optim opt;
    optim_average avg;
} state;

static void state_init(state *s, int64_t from)
{
    s->m = small_model();
    ebm_rng_create(&s->rng, 11, 1);
    ebm_rng_t *init = NULL;
    ebm_rng_create(&init, 11, 0);
    ebm_model_init(s->m, init, EBM_INIT_GAUSSIAN, 0.5);
    ebm_rng_destroy(init);
    optim_settings set = optim_settings_default(0.2);
    set.momentum = 0.5;
    optim_init(&s->opt, &set, ebm_model_param_count(s->m));
    optim_average_init(&s->avg, ebm_model_param_count(s->m), from);
}

static void state_steps(state *s, int steps)
{
    const int64_t n = ebm_model_param_count(s->m);
    float *g = malloc((size_t)n * sizeof *g);
    for (int t = 0; t < steps; t++) {
        if (ebm_rng_normal(s->rng, n, g) != EBM_OK || optim_step(&s->opt, s->m, g) != EBM_OK ||
            optim_average_update(&s->avg, s->m, s->opt.step) != EBM_OK) {
            fprintf(stderr, "check_common: a training step failed\n");
            exit(2);
        }
    }
    free(g);
}

static void state_free(state *s)
{
    ebm_model_destroy(s->m);
    ebm_rng_destroy(s->rng);
    optim_free(&s->opt);
    optim_average_free(&s->avg);
}

static unsigned file_version(const char *path)
{
    unsigned char head[12] = {0};
    FILE *f = fopen(path, "rb");
    if (f == NULL || fread(head, 1, sizeof head, f) != sizeof head) {
        head[8] = 0;
    }
    if (f != NULL) {
        fclose(f);
    }
    return head[8] | (unsigned)head[9] << 8;
}

/* The checkpoint at path (at most 64 KB); *n its size. */
static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = malloc(1 << 16);
    *n = f != NULL && b != NULL ? fread(b, 1, 1 << 16, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    return b;
}

/* Write b[0..n) to path with its CRC (the last 4 bytes) made right; free b. */
static void write_with_crc(const char *path, unsigned char *b, size_t n)
{
    if (b != NULL && n >= 4) {
        const uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), b, (uInt)(n - 4));
        for (int i = 0; i < 4; i++) {
            b[n - 4 + (size_t)i] = (unsigned char)(crc >> (8 * i));
        }
        FILE *f = fopen(path, "wb");
        if (f != NULL) {
            fwrite(b, 1, n, f);
            fclose(f);
        }
    }
    free(b);
}

/* Rewrite the version field of the checkpoint at path, and its CRC. */
static void set_version(const char *path, unsigned version)
{
    size_t n;
    unsigned char *b = read_all(path, &n);
    if (b != NULL && n > 8) {
        b[8] = (unsigned char)version;
    }
    write_with_crc(path, b, n);
}

/* Write the 8 bytes of v (little-endian) at offset of section tag's payload
 * in the checkpoint at path, and its CRC. */
static void patch_section(const char *path, const char tag[4], size_t offset, uint64_t v)
{
    size_t n;
    unsigned char *b = read_all(path, &n);
    for (size_t at = 16; b != NULL && at + 12 + 4 <= n;) {
        uint64_t len = 0;
        for (int i = 7; i >= 0; i--) {
            len = len << 8 | b[at + 4 + (size_t)i];
        }
        if (memcmp(b + at, tag, 4) == 0 && offset + 8 <= len) {
            for (int i = 0; i < 8; i++) {
                b[at + 12 + offset + (size_t)i] = (unsigned char)(v >> (8 * i));
            }
        }
        at += 12 + (size_t)len;
    }
    write_with_crc(path, b, n);
}

static void checkpoints(const char *dir)
{
    char path[4096], path1[4096], err[512];
    snprintf(path, sizeof path, "%s/average.ckpt", dir);
    snprintf(path1, sizeof path1, "%s/plain.ckpt", dir);

    /* 10 steps straight against 5 + checkpoint + restore into fresh handles + 5. */
    state ref, a, b;
    state_init(&ref, FROM);
    state_steps(&ref, 10);
    state_init(&a, FROM);
    state_steps(&a, 5);
    check(checkpoint_save(path, a.m, a.rng, &a.opt, &a.avg, NULL, 5, 1.0, "cfg", err,
                          sizeof err) == CHECKPOINT_OK,
          "checkpoint_save with an average");
    check(file_version(path) == 2, "a checkpoint with an average is version 2");
    checkpoint ck;
    int rc = checkpoint_load(&ck, path, err, sizeof err);
    check(rc == CHECKPOINT_OK && ck.has_average && ck.avg_from == FROM &&
              ck.avg_count == a.avg.count && ck.avg_n == a.avg.n &&
              same_bits(ck.avg_mean, a.avg.mean, (size_t)a.avg.n * sizeof(double)),
          "checkpoint_load reads the average's start, count and accumulator bit for bit");
    state_init(&b, FROM);
    rc = checkpoint_restore(&ck, b.m, b.rng, &b.opt, &b.avg, NULL, err, sizeof err);
    check(rc == CHECKPOINT_OK && b.avg.count == a.avg.count &&
              same_bits(b.avg.mean, a.avg.mean, (size_t)a.avg.n * sizeof(double)),
          "checkpoint_restore puts the average back");
    state_steps(&b, 5);
    check(b.avg.count == ref.avg.count &&
              same_bits(b.avg.mean, ref.avg.mean, (size_t)ref.avg.n * sizeof(double)),
          "5 steps + checkpoint + 5 steps: the same average, bit for bit, as 10 steps");

    state c;
    state_init(&c, FROM + 1);
    rc = checkpoint_restore(&ck, c.m, c.rng, &c.opt, &c.avg, NULL, err, sizeof err);
    check(rc == CHECKPOINT_EMISMATCH && strstr(err, "after step 3") != NULL && c.opt.step == 0,
          "restoring into an average from another step: CHECKPOINT_EMISMATCH, nothing changes");
    rc = checkpoint_restore(&ck, c.m, c.rng, &c.opt, NULL, NULL, err, sizeof err);
    check(rc == CHECKPOINT_EMISMATCH && strstr(err, "--average-from 3") != NULL,
          "restoring an average into a run without one: CHECKPOINT_EMISMATCH naming the option");
    checkpoint_free(&ck);
    state_free(&c);

    /* Without an average: version 1, as before; it restores into a run whose
     * average starts at or after its step, not before. */
    state d;
    state_init(&d, -1);
    state_steps(&d, 5);
    check(checkpoint_save(path1, d.m, d.rng, &d.opt, &d.avg, NULL, 5, 1.0, "cfg", err,
                          sizeof err) == CHECKPOINT_OK &&
              file_version(path1) == 1,
          "a checkpoint without an average is version 1");
    rc = checkpoint_load(&ck, path1, err, sizeof err);
    check(rc == CHECKPOINT_OK && !ck.has_average, "version 1 loads, without an average");
    state e, f;
    state_init(&e, 5);
    rc = checkpoint_restore(&ck, e.m, e.rng, &e.opt, &e.avg, NULL, err, sizeof err);
    check(rc == CHECKPOINT_OK && e.avg.count == 0 && e.opt.step == 5,
          "version 1 at step 5 restores into an average from step 5 (empty)");
    state_init(&f, 4);
    rc = checkpoint_restore(&ck, f.m, f.rng, &f.opt, &f.avg, NULL, err, sizeof err);
    check(rc == CHECKPOINT_EMISMATCH && f.opt.step == 0,
          "version 1 at step 5 into an average from step 4: CHECKPOINT_EMISMATCH");
    checkpoint_free(&ck);

    set_version(path, 3);
    rc = checkpoint_load(&ck, path, err, sizeof err);
    check(rc == CHECKPOINT_EFORMAT && strstr(err, "version 3") != NULL,
          "version 3 (with a valid CRC): CHECKPOINT_EFORMAT");
    state_free(&ref);
    state_free(&a);
    state_free(&b);
    state_free(&d);
    state_free(&e);
    state_free(&f);
    remove(path);
    remove(path1);
}

/* Counters and times a trainer goes on from: an iteration, an optimiser
 * step, an average's start or count below 0 or past 2^62, or seconds that
 * are not a finite time >= 0 are malformed (checkpoint_load took them: a
 * NaN time never reached --minutes, a step of -2^63 ran past --steps and
 * overflowed, a negative optimiser step was left out of a restore that
 * succeeded; fuzz_checkpoint, tests/fuzz/findings/checkpoint/). */
static void checkpoint_fields(const char *dir)
{
    typedef struct field_case {
        const char *tag;
        size_t offset;
        uint64_t value;
        const char *what, *message;
    } field_case;
    const uint64_t past = ((uint64_t)1 << 62) + 1, nan_bits = 0x7ff8000000000000u,
                   minus_one = 0xbff0000000000000u, inf_bits = 0x7ff0000000000000u;
    const field_case cases[] = {
        {"ITER", 0, (uint64_t)-1, "iteration -1", "section ITER: iteration -1,"},
        {"ITER", 0, (uint64_t)1 << 63, "iteration -2^63",
         "section ITER: iteration -9223372036854775808"},
        {"ITER", 0, past, "iteration 2^62 + 1", "section ITER: iteration 4611686018427387905"},
        {"ITER", 8, nan_bits, "seconds NaN", "seconds nan"},
        {"ITER", 8, inf_bits, "seconds +inf", "seconds inf"},
        {"ITER", 8, minus_one, "seconds -1", "seconds -1 "},
        {"OPTM", 0, (uint64_t)-1, "optimiser step -1", "section OPTM: step -1 "},
        {"OPTM", 0, past, "optimiser step 2^62 + 1", "section OPTM: step 4611686018427387905"},
        {"AVRG", 0, (uint64_t)-1, "average from -1", "section AVRG: from -1,"},
        {"AVRG", 8, past, "average count 2^62 + 1", "count 4611686018427387905"},
    };
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/fields.ckpt", dir);
    state a;
    state_init(&a, FROM);
    state_steps(&a, 5);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const field_case *fc = &cases[k];
        err[0] = '\0';
        int rc = checkpoint_save(path, a.m, a.rng, &a.opt, &a.avg, NULL, 5, 1.0, "cfg", err,
                                 sizeof err);
        patch_section(path, fc->tag, fc->offset, fc->value);
        checkpoint ck;
        rc = rc == CHECKPOINT_OK ? checkpoint_load(&ck, path, err, sizeof err) : rc;
        char what[160];
        snprintf(what, sizeof what, "checkpoint %s %s: CHECKPOINT_EFORMAT naming the path and it",
                 fc->tag, fc->what);
        check(rc == CHECKPOINT_EFORMAT && strstr(err, path) != NULL &&
                  strstr(err, fc->message) != NULL,
              what);
        if (rc == CHECKPOINT_OK) {
            checkpoint_free(&ck);
        }
    }
    /* the largest values load */
    checkpoint_save(path, a.m, a.rng, &a.opt, &a.avg, NULL, 5, 1.0, "cfg", err, sizeof err);
    patch_section(path, "ITER", 0, (uint64_t)1 << 62);
    patch_section(path, "ITER", 8, 0);
    patch_section(path, "OPTM", 0, (uint64_t)1 << 62);
    patch_section(path, "AVRG", 8, (uint64_t)1 << 62);
    checkpoint ck;
    const int rc = checkpoint_load(&ck, path, err, sizeof err);
    check(rc == CHECKPOINT_OK && ck.iteration == CHECKPOINT_MAX_STEP && ck.seconds == 0.0 &&
              ck.opt_step == CHECKPOINT_MAX_STEP && ck.avg_count == CHECKPOINT_MAX_STEP,
          "checkpoint: iteration, step and count 2^62 and 0 seconds load");
    if (rc == CHECKPOINT_OK) {
        checkpoint_free(&ck);
    }
    state_free(&a);
    remove(path);
}

/* checkpoint_config_tunable: a resume keeps the settings before " | ". A
 * checkpoint text without " | " never fits: one that held only the run's
 * fixed settings made the trainer read past its end (fuzz_checkpoint,
 * tests/fuzz/findings/checkpoint/config_without_bar.ckpt). */
static void config_texts(void)
{
    char with_bar[] = "method=pcd layers=16,8 | lr=0.01", fixed_only[] = "method=pcd layers=16,8";
    checkpoint c;
    memset(&c, 0, sizeof c);
    c.config = with_bar;
    const char *tunable = checkpoint_config_tunable(&c, "method=pcd layers=16,8 | lr=0.5");
    check(tunable != NULL && strcmp(tunable, "lr=0.01") == 0,
          "config: the same fixed settings: the checkpoint's tunable ones");
    check(checkpoint_config_tunable(&c, "method=pcd layers=16,9 | lr=0.01") == NULL,
          "config: other fixed settings: NULL");
    check(checkpoint_config_tunable(&c, "method=pcd layers=16,8") == NULL,
          "config: a run's text without \" | \": NULL");
    c.config = fixed_only;
    check(checkpoint_config_tunable(&c, "method=pcd layers=16,8 | lr=0.01") == NULL,
          "config: a checkpoint's text without \" | \" (the run's fixed settings alone): NULL");
    c.config = NULL;
    check(checkpoint_config_tunable(&c, "method=pcd layers=16,8 | lr=0.01") == NULL,
          "config: a checkpoint without a text: NULL");
}

/* An IDX header that declares 2^28 images of 28 x 28 (842 GB as floats)
 * before one image: a truncated file, not an allocation for the count
 * (data_load_idx allocated it first and failed with "out of memory";
 * fuzz_data, tests/fuzz/findings/data/idx_declares_more_images.bin). Then
 * a whole file of 3 images with max_rows 2 and 0. */
static void idx_counts(const char *dir)
{
    char path[4096], err[512] = "";
    snprintf(path, sizeof path, "%s/declared.idx", dir);
    unsigned char file[16 + 3 * 784];
    const unsigned char header[16] = {0, 0, 8, 3, 16, 0, 0, 0, 0, 0, 0, 28, 0, 0, 0, 28};
    memcpy(file, header, sizeof header);
    for (size_t i = 16; i < sizeof file; i++) {
        file[i] = (unsigned char)(i * 7);
    }
    FILE *f = fopen(path, "wb");
    const int written = f != NULL && fwrite(file, 1, 16 + 784, f) == 16 + 784;
    if (f != NULL) {
        fclose(f);
    }
    data_set d;
    int rc = data_load_idx(&d, path, NULL, 0, err, sizeof err);
    check(written && rc == DATA_EFORMAT && strstr(err, "declared.idx: truncated") != NULL &&
              strstr(err, "image 1") != NULL && d.x == NULL,
          "idx: a header of 2^28 images before one image: truncated at image 1, no "
          "allocation for the count");
    file[4] = 0; /* 3 images */
    file[7] = 3;
    f = fopen(path, "wb");
    const int whole = f != NULL && fwrite(file, 1, sizeof file, f) == sizeof file;
    if (f != NULL) {
        fclose(f);
    }
    rc = data_load_idx(&d, path, NULL, 2, err, sizeof err);
    check(whole && rc == DATA_OK && d.n == 2 && d.dim == 784 &&
              d.x[784] == (float)file[16 + 784] / 255.0f,
          "idx: max_rows 2 of 3 images: 2 rows, the file's pixels");
    data_set_free(&d);
    rc = data_load_idx(&d, path, NULL, 0, err, sizeof err);
    check(rc == DATA_OK && d.n == 3 && d.x[2 * 784 + 5] == (float)file[16 + 2 * 784 + 5] / 255.0f,
          "idx: all 3 images");
    data_set_free(&d);
    /* 3 images of 256 x 257 (more than the first allocation's 2^16
     * floats each): the rows grow from 1 to 2 to 3 */
    const size_t px = 256 * 257, size = 16 + 3 * px;
    unsigned char *big = malloc(size);
    const unsigned char large[16] = {0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 1, 0, 0, 0, 1, 1};
    int same_pixels = big != NULL;
    if (big != NULL) {
        memcpy(big, large, sizeof large);
        for (size_t i = 16; i < size; i++) {
            big[i] = (unsigned char)(i * 7 + i / 1031);
        }
        f = fopen(path, "wb");
        same_pixels = f != NULL && fwrite(big, 1, size, f) == size;
        if (f != NULL) {
            fclose(f);
        }
    }
    rc = data_load_idx(&d, path, NULL, 0, err, sizeof err);
    same_pixels = same_pixels && rc == DATA_OK && d.n == 3 && d.dim == (int64_t)px;
    for (size_t i = 0; same_pixels && i < 3 * px; i++) {
        same_pixels = d.x[i] == (float)big[16 + i] / 255.0f;
    }
    check(same_pixels, "idx: 3 images of 256 x 257 (the rows grow), every pixel the file's");
    free(big);
    data_set_free(&d);
    remove(path);
}

/* DATA_LEVELS with q = 4: level round(3 grey), its one-hot units, and back. */
static void grey_levels(void)
{
    data_encoding e = data_encoding_make(DATA_LEVELS, 0);
    const float grey[5] = {0.0f, 0.2f, 0.49f, 0.9f, 1.7f}; /* 1.7 clips to 1 */
    const int level[5] = {0, 1, 1, 3, 3};                   /* round(0, 0.6, 1.47, 2.7, 3) */
    float x[20], back[5];
    char err[256];
    check(data_encoded_dim(&e, 5) == 20, "levels: 4 units a pixel");
    int ok = data_encode(&e, NULL, 1, 5, grey, 5, x, 20, err, sizeof err) == DATA_OK;
    for (int p = 0; p < 5; p++) {
        for (int k = 0; k < 4; k++) {
            ok = ok && x[4 * p + k] == (k == level[p] ? 1.0f : 0.0f);
        }
    }
    check(ok, "levels: each pixel's unit of its level is 1, the others 0");
    ok = data_decode(&e, 1, 5, x, 20, back, 5) == DATA_OK;
    for (int p = 0; p < 5; p++) {
        ok = ok && fabsf(back[p] - (float)level[p] / 3.0f) < 1e-6f;
    }
    check(ok, "levels: one-hot rows decode to level / (q - 1)");
    const float probs[4] = {0.1f, 0.2f, 0.3f, 0.4f}; /* expected level 2 */
    ok = data_decode(&e, 1, 1, probs, 4, back, 1) == DATA_OK && fabsf(back[0] - 2.0f / 3.0f) < 1e-6f;
    check(ok, "levels: probabilities decode to the expected level");
    e.spin = 1;
    ok = data_encode(&e, NULL, 1, 1, grey + 3, 1, x, 4, err, sizeof err) == DATA_OK &&
         x[0] == -1.0f && x[1] == -1.0f && x[2] == -1.0f && x[3] == 1.0f;
    check(ok, "levels with spin values: the other units are -1");
    e.spin = 0;
    e.levels = 1;
    const int64_t d1 = data_encoded_dim(&e, 5);
    e.levels = DATA_MAX_LEVELS + 1;
    check(d1 == -1 && data_encoded_dim(&e, 5) == -1 &&
              data_encode(&e, NULL, 1, 5, grey, 5, x, 20, err, sizeof err) == DATA_EARG,
          "levels 1 and DATA_MAX_LEVELS + 1 are not encodings");
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static int has_text(const char *path, const char *text)
{
    char got[512] = "";
    FILE *f = fopen(path, "r");
    const size_t n = f != NULL ? fread(got, 1, sizeof got - 1, f) : 0;
    if (f != NULL) {
        fclose(f);
    }
    got[n] = '\0';
    return strcmp(got, text) == 0;
}

/* cli_open_log: a resumed run keeps the header and the whole rows of steps
 * up to its checkpoint's; a new run starts the file again. */
static void run_logs(const char *dir)
{
    char path[1024], err[1024];
    FILE *f = NULL;
    snprintf(path, sizeof path, "%s/check_common_log.csv", dir);
    const char *head = "step,x\n";
    write_text(path, "step,x\n1,a\n2,b\n3,c\n4,d\n5,e");
    int rc = cli_open_log(&f, path, head, 3, "", err, sizeof err);
    if (rc == 0) {
        fputs("4,D\n", f);
        fclose(f);
    }
    check(rc == 0 && has_text(path, "step,x\n1,a\n2,b\n3,c\n4,D\n"),
          "log: a resume at step 3 cuts the rows of steps 4 and 5 (cut short) and appends");
    write_text(path, "step,x\n1,a\n2,");
    rc = cli_open_log(&f, path, head, 3, "", err, sizeof err);
    if (rc == 0) {
        fclose(f);
    }
    check(rc == 0 && has_text(path, "step,x\n1,a\n"), "log: a row cut in the middle goes");
    write_text(path, "ste");
    rc = cli_open_log(&f, path, head, 3, "", err, sizeof err);
    if (rc == 0) {
        fclose(f);
    }
    check(rc == 0 && has_text(path, head), "log: a header cut in the middle is written again");
    remove(path);
    rc = cli_open_log(&f, path, head, 3, "", err, sizeof err);
    if (rc == 0) {
        fclose(f);
    }
    check(rc == 0 && has_text(path, head), "log: a resume without a log starts one");
    write_text(path, "step,y\n1,a\n");
    rc = cli_open_log(&f, path, head, 3, " (hint)", err, sizeof err);
    check(rc == CLI_LOG_OTHER_COLUMNS && strstr(err, path) != NULL &&
              strstr(err, "other columns") != NULL && strstr(err, "(hint)") != NULL &&
              has_text(path, "step,y\n1,a\n"),
          "log: other columns are refused, naming the file, and the file is kept");
    write_text(path, "step,x\n1,a\n");
    rc = cli_open_log(&f, path, head, -1, "", err, sizeof err);
    if (rc == 0) {
        fclose(f);
    }
    check(rc == 0 && has_text(path, head), "log: a new run starts the file again");
    remove(path);
    rc = cli_open_log(&f, dir, head, 3, "", err, sizeof err);
    check(rc == CLI_LOG_EIO && strstr(err, dir) != NULL && strstr(err, "directory") != NULL,
          "log: a directory is refused, naming it");
}

/* --ais-base data: binary, spin and Potts visible units have a base from the
 * data's means; a Gaussian visible layer (a GRBM) falls back to the
 * library's own start, with a reason for the run's note. */
static void data_base(void)
{
    const int64_t sizes[2] = {8, 3};
    const int units[4] = {EBM_UNITS_BINARY, EBM_UNITS_SPIN, EBM_UNITS_POTTS, EBM_UNITS_GAUSSIAN};
    const char *names[4] = {"binary", "spin", "Potts", "Gaussian"};
    for (int k = 0; k < 4; k++) {
        ebm_model_t *m = NULL;
        const int rc = units[k] == EBM_UNITS_POTTS
                           ? ebm_model_create_potts(&m, 2, sizes, 4, EBM_UNITS_BINARY, NULL, 0)
                           : ebm_model_create(&m, 2, sizes, units[k], EBM_UNITS_BINARY, NULL, 0);
        char what[128];
        const char *why = rc == EBM_OK ? trainer_data_base_unfit(m) : "not created";
        if (units[k] == EBM_UNITS_GAUSSIAN) {
            snprintf(what, sizeof what, "data base: %s visible units fall back, saying why", names[k]);
            check(rc == EBM_OK && why != NULL && strstr(why, "Gaussian") != NULL, what);
        } else {
            snprintf(what, sizeof what, "data base: %s visible units have one", names[k]);
            check(rc == EBM_OK && why == NULL, what);
        }
        ebm_model_destroy(m);
    }
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    running_mean();
    checkpoints(dir);
    checkpoint_fields(dir);
    config_texts();
    idx_counts(dir);
    grey_levels();
    run_logs(dir);
    data_base();
    printf("check_common: %d failed\n", failed);
    return failed ? 1 : 0;
}
