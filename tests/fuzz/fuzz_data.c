/*
 * libFuzzer target for the trainers' data readers (examples/common/data.c):
 * IDX images and labels (Fashion-MNIST's format, gzip-compressed or plain),
 * scikit-learn's digits CSV (gzip or plain) and the MNIST digits' JSON. The
 * input's first byte picks the reader; the rest is written to files
 * (tests/fuzz/fuzz_readers.h):
 *
 *   byte 0   bits 0-1: 0 data_load_idx (images only), 1 data_load_idx
 *            (images and labels), 2 data_load_digits_csv, 3
 *            data_load_mnist_json; bits 2-7: data_load_idx's max_rows (0: all)
 *   reader 1 bytes 1-2: the images file's length L (little-endian; at most
 *            what is left), its L bytes, then the labels file
 *   others   bytes 1..: the file (reader 3: 0.json; 1.json .. 9.json are
 *            fixed, three images each, so that the split has both sides)
 *
 * The promise: each reader returns DATA_OK with a data set as data.h
 * describes it (rows, sides within the format's limits, grey values in
 * [0, 1] that are exactly the file's pixels: byte / 255 for IDX, value / 16
 * for the CSV; labels 0..9 where the format has them), or DATA_EFORMAT
 * with a message and the sets zeroed; never a crash, a sanitizer report, a
 * leak, a hang (-timeout=10), or an allocation that the file does not back
 * (libFuzzer's -malloc_limit_mb, from -rss_limit_mb=1024). A loaded set is
 * then encoded as a trainer does (data_batch: threshold, 8-bit, levels,
 * grey standardised by data_standardize_fit): DATA_OK. A broken promise is
 * printed and abort()s.
 *
 * make fuzz-ci and make fuzz build it with the library's and
 * examples/common's objects under -fsanitize=fuzzer,address,undefined into
 * build/fuzz/fuzz_data and run it from tests/fuzz/corpus/data: small
 * valid files of each format, written by tests/fuzz/make_trainer_corpus.sh
 * (make fuzz-corpus).
 */
#include <ebm.h>

#include "common/data.h"
#include "fuzz_readers.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { READ_IDX = 0, READ_IDX_LABELS = 1, READ_CSV = 2, READ_JSON = 3 };
enum { JSON_FIXED_IMAGES = 3, MNIST_PIXELS = 784 };

static int zeroed(const data_set *d)
{
    static const data_set zero;
    return memcmp(d, &zero, sizeof *d) == 0;
}

/* 1.json .. 9.json in the directory of 0.json, once: JSON_FIXED_IMAGES
 * images of 0s and 1s each. */
static void write_fixed_json(void)
{
    static int done = 0;
    if (done) {
        return;
    }
    char *text = malloc(16 + 2 * MNIST_PIXELS * JSON_FIXED_IMAGES + 8);
    if (text == NULL) {
        fuzz_violation(__FILE__, __LINE__, "out of memory in the harness", NULL);
    }
    for (int c = 1; c <= 9; c++) {
        size_t n = (size_t)sprintf(text, "{\"data\": [");
        for (int i = 0; i < MNIST_PIXELS * JSON_FIXED_IMAGES; i++) {
            n += (size_t)sprintf(text + n, "%s%d", i ? "," : "", (i + c) % 2);
        }
        n += (size_t)sprintf(text + n, "]}\n");
        char name[16], path[1024];
        snprintf(name, sizeof name, "%d.json", c);
        fuzz_files_path(path, sizeof path, name);
        fuzz_files_write(path, text, n);
    }
    free(text);
    done = 1;
}

/* What every loaded set promises; height 0: any sides; levels: grey values
 * are j / levels for an integer j (255 for IDX bytes, 16 for the CSV), or
 * 0: any value in [0, 1]. */
static void check_set(const data_set *d, int height, int width, int labels, int levels)
{
    REQUIRE(d->n >= 1 && d->x != NULL, NULL);
    REQUIRE(d->height >= 1 && d->width >= 1 && d->height <= 4096 && d->width <= 4096, NULL);
    REQUIRE(height == 0 || (d->height == height && d->width == width), NULL);
    REQUIRE(d->dim == (int64_t)d->height * d->width, NULL);
    REQUIRE(labels ? d->label != NULL && d->n_classes == 10 : d->label == NULL && d->n_classes == 0,
            NULL);
    for (int64_t i = 0; i < d->n * d->dim; i++) {
        const float v = d->x[i];
        REQUIRE(v >= 0.0f && v <= 1.0f, "grey values in [0, 1]");
        if (levels > 0) {
            const int j = (int)(v * (float)levels + 0.5f);
            REQUIRE((float)j / (float)levels == v, "grey values are the file's levels");
        }
    }
    for (int64_t r = 0; labels && r < d->n; r++) {
        REQUIRE(d->label[r] < 10, NULL);
    }
}

/* A plain IDX images file: its header and pixels against the set. */
static void check_idx_pixels(const data_set *d, const uint8_t *file, size_t size)
{
    if (size >= 2 && file[0] == 0x1f && file[1] == 0x8b) {
        return; /* gzip: the pixels are not in the input as they are */
    }
    REQUIRE(size >= 16, "a plain IDX file has its header");
    const uint32_t rows = (uint32_t)file[8] << 24 | (uint32_t)file[9] << 16 |
                          (uint32_t)file[10] << 8 | file[11];
    const uint32_t cols = (uint32_t)file[12] << 24 | (uint32_t)file[13] << 16 |
                          (uint32_t)file[14] << 8 | file[15];
    REQUIRE((uint32_t)d->height == rows && (uint32_t)d->width == cols, "the IDX sides");
    REQUIRE(size >= 16 + (size_t)(d->n * d->dim), "the images are in the file");
    for (int64_t i = 0; i < d->n * d->dim; i++) {
        REQUIRE(d->x[i] == (float)file[16 + i] / 255.0f, "pixel = byte / 255");
    }
}

/* Encode the first rows as the trainers do: each encoding succeeds. */
static void check_encodings(const data_set *d)
{
    const int64_t n = d->n < 4 ? d->n : 4;
    const int kinds[3] = {DATA_THRESHOLD, DATA_8BIT, DATA_LEVELS};
    float *mean = malloc((size_t)d->dim * sizeof *mean), *sd = malloc((size_t)d->dim * sizeof *sd);
    float *out = malloc((size_t)(n * d->dim * 8) * sizeof *out);
    char err[512] = "";
    REQUIRE(mean != NULL && sd != NULL && out != NULL, "out of memory in the harness");
    for (int k = 0; k < 3; k++) {
        data_encoding e = data_encoding_make(kinds[k], k == 1);
        const int64_t w = data_encoded_dim(&e, d->dim);
        REQUIRE(data_batch(d, &e, NULL, NULL, n, out, w, err, sizeof err) == DATA_OK, err);
    }
    REQUIRE(data_standardize_fit(d, 0.01f, mean, sd) == DATA_OK, NULL);
    data_encoding e = data_encoding_make(DATA_GREY, 0);
    e.mean = mean;
    e.sd = sd;
    REQUIRE(data_batch(d, &e, NULL, NULL, n, out, d->dim, err, sizeof err) == DATA_OK, err);
    free(mean);
    free(sd);
    free(out);
}

static void run_idx(const uint8_t *data, size_t size, int labels, int64_t max_rows)
{
    char images[1024], labels_path[1024], err[512] = "";
    fuzz_files_path(images, sizeof images, "images.idx");
    fuzz_files_path(labels_path, sizeof labels_path, "labels.idx");
    size_t n_images = size;
    if (labels) {
        const size_t want = size >= 2 ? (size_t)data[0] | (size_t)data[1] << 8 : 0;
        data += size >= 2 ? 2 : size;
        size -= size >= 2 ? 2 : size;
        n_images = want < size ? want : size;
        fuzz_files_write(labels_path, data + n_images, size - n_images);
    }
    fuzz_files_write(images, data, n_images);
    data_set d;
    const int rc =
        data_load_idx(&d, images, labels ? labels_path : NULL, max_rows, err, sizeof err);
    if (rc != DATA_OK) {
        REQUIRE(rc == DATA_EFORMAT && err[0] != '\0' && zeroed(&d), err);
        return;
    }
    check_set(&d, 0, 0, labels, 255);
    REQUIRE(max_rows == 0 || d.n <= max_rows, NULL);
    check_idx_pixels(&d, data, n_images);
    check_encodings(&d);
    data_set_free(&d);
}

/* The readers that split: train and test from one call. */
static void check_split(int rc, data_set *train, data_set *test, const char *err, int side,
                        int levels, int64_t at_least)
{
    if (rc != DATA_OK) {
        REQUIRE(rc == DATA_EFORMAT && err[0] != '\0' && zeroed(train) && zeroed(test), err);
        return;
    }
    check_set(train, side, side, 1, levels);
    check_set(test, side, side, 1, levels);
    REQUIRE(train->n + test->n >= at_least, NULL);
    check_encodings(train);
    check_encodings(test);
    data_set_free(train);
    data_set_free(test);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    const int reader = data[0] & 3;
    const int64_t max_rows = data[0] >> 2;
    data++;
    size--;
    if (reader == READ_IDX || reader == READ_IDX_LABELS) {
        run_idx(data, size, reader == READ_IDX_LABELS, max_rows);
        return 0;
    }
    char path[1024], dir[1024], err[512] = "";
    data_set train, test;
    if (reader == READ_CSV) {
        fuzz_files_path(path, sizeof path, "digits.csv");
        fuzz_files_write(path, data, size);
        const int rc = data_load_digits_csv(&train, &test, path, err, sizeof err);
        check_split(rc, &train, &test, err, 8, 16, 10);
    } else {
        write_fixed_json();
        fuzz_files_path(path, sizeof path, "0.json");
        fuzz_files_write(path, data, size);
        fuzz_files_path(dir, sizeof dir, "");
        const int rc = data_load_mnist_json(&train, &test, dir, err, sizeof err);
        check_split(rc, &train, &test, err, 28, 0, 9 * JSON_FIXED_IMAGES + 1);
    }
    return 0;
}
