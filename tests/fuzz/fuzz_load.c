/*
 * libFuzzer target for the model loader. The promise under test: on any
 * input, ebm_model_load_buffer returns EBM_OK with a valid model or
 * EBM_EFORMAT with a message, never crashes, never reads outside the
 * input, never leaks, and never allocates for a declared shape that the
 * input does not back. Not part of `make check`; see docs/format.md.
 * `make fuzz-ci` (CI: 60 s) and `make fuzz` (600 s) build it with the
 * library's objects, including the kernels of src/simd/kernels.c, under
 * -fsanitize=fuzzer,address,undefined into build/fuzz/fuzz_load and run it
 * with -rss_limit_mb=1024 -timeout=10 from a copy of the seeds in
 * tests/fuzz/corpus/load (valid files of every unit kind, written by
 * tests/fuzz/make_corpus.c: make fuzz-corpus).
 */
#include "ebm.h"

#include <stdlib.h>
#include <string.h>

/* CRC-32 (zlib) bit by bit, to rewrite the last 4 bytes of a copy: random
 * inputs almost never carry a valid CRC, and without one the fuzzer would
 * rarely get past it to the parameter checks. */
static uint32_t crc32_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) {
            c = (c & 1u) ? (c >> 1) ^ 0xedb88320u : c >> 1;
        }
    }
    return c ^ 0xffffffffu;
}

/* Load one input and check the promise; abort() reports a violation. */
static void check_one(const uint8_t *data, size_t size)
{
    ebm_model_t *m = NULL;
    char err[512];
    int rc = ebm_model_load_buffer(&m, data, size, err, sizeof err);
    if (rc == EBM_OK) {
        /* A valid file is exactly the serialisation of the model it holds. */
        uint8_t *again = malloc(size > 0 ? size : 1);
        size_t n = 0;
        if (again == NULL || m == NULL || ebm_model_save_size(m) != (int64_t)size ||
            ebm_model_save_buffer(m, again, size, &n) != EBM_OK || n != size ||
            memcmp(again, data, size) != 0) {
            abort();
        }
        free(again);
        ebm_model_destroy(m);
    } else if (rc != EBM_EFORMAT || m != NULL || err[0] == '\0') {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_one(data, size);
    if (size >= 4) {
        /* The same bytes with a correct CRC, in an exact-size copy so that
         * ASan still sees any read past the end. */
        uint8_t *copy = malloc(size);
        if (copy == NULL) {
            abort();
        }
        memcpy(copy, data, size);
        uint32_t crc = crc32_bitwise(copy, size - 4);
        for (int i = 0; i < 4; i++) {
            copy[size - 4 + i] = (uint8_t)(crc >> (8 * i));
        }
        check_one(copy, size);
        free(copy);
    }
    return 0;
}
