/*
 * Scratch memory that a handle keeps between calls.
 *
 * An arena is one block, handed out in 64-byte-aligned pieces. A call lays
 * its pieces out in a layout function that takes each one with
 * ebm__arena_take; ebm__arena_layout runs it twice: first to measure (takes
 * return NULL and only count), then, the block grown to fit, to hand the
 * pieces out. So a call's sizes and its carving are one piece of code, and
 * its pieces stay valid until the next layout on the same arena.
 *
 * ebm__grow keeps a single buffer of its own (the estimator's, whose
 * buffers live across phases).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef EBM_SCRATCH_H
#define EBM_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct ebm__arena {
    unsigned char *base;
    size_t cap, used;
    int measuring, overflow;
} ebm__arena;

/* count elements of size elem, 64-byte aligned (NULL while measuring). */
void *ebm__arena_take(ebm__arena *a, size_t count, size_t elem);
/* Lay the pieces out by layout(a, ctx) (see above). Returns 0, or -1 if
 * the block cannot grow (out of memory, or a size past SIZE_MAX); the
 * arena's earlier pieces are then still the last call's. */
int ebm__arena_layout(ebm__arena *a, void (*layout)(ebm__arena *a, void *ctx), void *ctx);
void ebm__arena_free(ebm__arena *a);

/* At least n (n = 0 counts as 1) elements of size elem in *buf, of *cap
 * elements, or NULL (out of memory; the buffer is then as it was). What
 * the buffer held is not kept. */
void *ebm__grow(void **buf, size_t *cap, size_t n, size_t elem);

#endif /* EBM_SCRATCH_H */
