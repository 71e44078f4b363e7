/* A sampler's global moves (docs/global_moves.md): its proposal
 * (ebm_sampler_set_proposal: the checks and the copy of the rows, which
 * the sampler keeps and hands its kernels through ebm__kernel_in; an
 * estimator sets the proposal of its samplers through the two internal
 * parts, sampler.h), and the mixture of the global moves with the
 * sampler's kernel in a step (ebm__sampler_mixture). */
#include "error.h"
#include "global.h"
#include "model.h"
#include "sampler.h"
#include "scratch.h"
#include "step.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Where the bits of the block of n_rows proposal rows of n0 units start. */
static uint64_t *proposal_bits(float *block, int64_t n_rows, int64_t n0)
{
    return (uint64_t *)(void *)((char *)block + 8 * ((n_rows * n0 + 1) / 2));
}

int ebm__sampler_proposal_copy(const ebm_sampler_t *s, ebm__msg *msg, int64_t n_rows,
                               const float *rows, int64_t ldr, double flip_prob, float **copy)
{
    const ebm_model_t *m = s->m;
    const int64_t n0 = m->size[0];
    *copy = NULL;
    EBM__PROPAGATE(ebm__global_supported(m, msg));
    if (n_rows < 1) {
        return ebm__fail(msg, EBM_ESHAPE, "n_rows is %lld; a proposal needs at least one row",
                         (long long)n_rows);
    }
    EBM__PROPAGATE(ebm__check_matrix(msg, "rows", n_rows, rows, ldr, n0));
    if (!(flip_prob > 0.0 && flip_prob < 1.0)) {
        return ebm__fail(msg, EBM_EVALUE,
                         "flip_prob is %g; it must be in (0, 1): above 0 so that the proposal "
                         "reaches every state, below 1 so that it stays near the rows",
                         flip_prob);
    }
    EBM__PROPAGATE(ebm__check_layer_values(m, msg, "rows", 0, n_rows, rows, ldr));
    /* One block: the rows (n_rows x n0 floats), then their bits from a
     * multiple of 8 bytes (ebm__sampler_proposal_set finds them there). */
    const uint64_t size_limit = SIZE_MAX < (uint64_t)INT64_MAX ? SIZE_MAX : (uint64_t)INT64_MAX;
    const int64_t limit = (int64_t)(size_limit / 8); /* in 8-byte words */
    int64_t floats, nbits;
    float *block = NULL;
    if (ebm__mul_overflow(n_rows, n0, &floats) ||
        ebm__mul_overflow(n_rows, ebm__global_bit_words(n0), &nbits) ||
        nbits > limit - (floats / 2 + 1) ||
        (block = malloc((size_t)(8 * ((floats + 1) / 2 + nbits)))) == NULL) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for %lld proposal rows",
                         (long long)n_rows);
    }
    for (int64_t r = 0; r < n_rows; r++) {
        memcpy(block + r * n0, rows + r * ldr, (size_t)n0 * sizeof *block);
    }
    ebm__global_row_bits(m, n_rows, block, n0, proposal_bits(block, n_rows, n0));
    *copy = block;
    return EBM_OK;
}

void ebm__sampler_proposal_set(ebm_sampler_t *s, float *copy, int64_t n_rows, double flip_prob)
{
    free(s->proposal_rows);
    s->proposal_rows = copy;
    s->proposal = (ebm__proposal){.n_rows = n_rows, .rows = copy,
                                  .bits = proposal_bits(copy, n_rows, s->m->size[0]),
                                  .flip_prob = flip_prob};
}

int ebm_sampler_set_proposal(ebm_sampler_t *s, int64_t n_rows, const float *rows, int64_t ldr,
                             double flip_prob)
{
    if (s == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    float *copy;
    const int rc = ebm__sampler_proposal_copy(s, &msg, n_rows, rows, ldr, flip_prob, &copy);
    if (rc != EBM_OK) {
        return ebm__set_message(s->errmsg, rc, &msg);
    }
    ebm__sampler_proposal_set(s, copy, n_rows, flip_prob);
    return EBM_OK;
}

/* EBM_SAMPLER_TEMPERING with EBM_SAMPLER_GLOBAL_PROB > 0: the tempering
 * step of every row, then the global moves of the beta = 1 replicas whose
 * coin says so (chain c's replica R - 1, drawing from its stream row).
 * Both keep each replica's law, so their composition keeps the product
 * (docs/global_moves.md). keep: the rows are copied first, and put back if
 * the global moves fail after the tempering step. */
static int tempered_mixture(ebm_sampler_t *s, const ebm__kernel_in *k, ebm__kernel_out *out,
                            ebm__msg *msg, ebm_rng_t *rng, const ebm__step_in *in)
{
    const int64_t R = s->n_betas, n = in->n, chains = n / R, w = s->m->width;
    if (chains == 0) {
        return ebm__sampler_dispatch(s, k, out, msg, rng, in);
    }
    int64_t *top = ebm__grow((void **)&s->top_ids, &s->top_ids_cap, (size_t)chains, sizeof *top);
    float *saved = in->keep ? ebm__grow((void **)&s->saved_rows, &s->saved_cap, (size_t)(n * w),
                                        sizeof *saved)
                            : NULL;
    if (top == NULL || (in->keep && saved == NULL)) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for the global moves of %lld chains",
                         (long long)chains);
    }
    for (int64_t r = 0; r < n && in->keep; r++) {
        memcpy(saved + r * w, in->x + r * in->ldx, (size_t)w * sizeof *saved);
    }
    EBM__PROPAGATE(ebm__sampler_dispatch(s, k, out, msg, rng, in));
    for (int64_t c = 0; c < chains; c++) {
        top[c] = ebm__row_id(in->ids, c * R + R - 1);
    }
    float *x_top = in->x + (R - 1) * in->ldx;
    const int64_t ld_top = R * in->ldx;
    ebm__global_split g;
    const int rc = ebm__global_begin(k, &g, msg, rng, top, chains, x_top, ld_top, NULL, 0);
    if (rc != EBM_OK) {
        for (int64_t r = 0; r < n && in->keep; r++) {
            memcpy(in->x + r * in->ldx, saved + r * w, (size_t)w * sizeof *saved);
        }
        return rc;
    }
    ebm__global_apply(&g, out, x_top, ld_top);
    return EBM_OK;
}

int ebm__sampler_mixture(ebm_sampler_t *s, const ebm__kernel_in *k, ebm__kernel_out *out,
                         ebm__msg *msg, ebm_rng_t *rng, const ebm__step_in *in)
{
    if (s->settings.global_prob == 0.0) {
        return ebm__sampler_dispatch(s, k, out, msg, rng, in);
    }
    if (s->kind == EBM_SAMPLER_TEMPERING) {
        return tempered_mixture(s, k, out, msg, rng, in);
    }
    ebm__global_split g;
    EBM__PROPAGATE(ebm__global_begin(k, &g, msg, rng, in->ids, in->n, in->x, in->ldx, in->y,
                                     in->ldy));
    if (g.n_sweep > 0) {
        const ebm__step_in sweep = {.ids = g.sweep_ids, .n = g.n_sweep, .x = g.sweep_x,
                                    .ldx = s->m->width, .y = in->y != NULL ? g.sweep_y : NULL,
                                    .ldy = s->m->width, .keep = 0};
        EBM__PROPAGATE(ebm__sampler_dispatch(s, k, out, msg, rng, &sweep));
    }
    ebm__global_end(&g, out, in->n, in->x, in->ldx, in->y, in->ldy, in->met);
    return EBM_OK;
}
