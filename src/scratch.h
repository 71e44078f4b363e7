/*
 * Scratch memory that a handle keeps between calls and grows on demand:
 * one buffer per element type. A request returns at least n elements;
 * what the buffer held before is not kept.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_SCRATCH_H
#define EBM_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct ebm__scratch {
    float *f;
    size_t fcap;
    double *d;
    size_t dcap;
    int64_t *i;
    size_t icap;
} ebm__scratch;

/* At least n elements (n = 0 counts as 1), or NULL (out of memory; the
 * buffer is then as it was). */
float *ebm__scratch_floats(ebm__scratch *s, size_t n);
double *ebm__scratch_doubles(ebm__scratch *s, size_t n);
int64_t *ebm__scratch_indices(ebm__scratch *s, size_t n);
void ebm__scratch_free(ebm__scratch *s);

/* The same for one buffer *buf of *cap elements of size elem. */
void *ebm__grow(void **buf, size_t *cap, size_t n, size_t elem);

#endif /* EBM_SCRATCH_H */
