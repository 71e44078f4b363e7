/* The global moves' proposal of a sampler (ebm_sampler_set_proposal;
 * docs/global_moves.md): the checks and the copy of the rows, which the
 * sampler keeps and hands its kernels through ebm__kernel_in. An
 * estimator sets the proposal of its samplers through the two internal
 * parts (sampler.h). */
#include "error.h"
#include "global.h"
#include "model.h"
#include "sampler.h"
#include "step.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    int64_t count;
    float *block = NULL;
    if (ebm__mul_overflow(n_rows, n0 + 1, &count) || count > (int64_t)(SIZE_MAX / sizeof *block) ||
        (block = malloc((size_t)count * sizeof *block)) == NULL) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for %lld proposal rows",
                         (long long)n_rows);
    }
    for (int64_t r = 0; r < n_rows; r++) {
        memcpy(block + r * n0, rows + r * ldr, (size_t)n0 * sizeof *block);
    }
    ebm__global_row_ones(m, n_rows, block, block + n_rows * n0);
    *copy = block;
    return EBM_OK;
}

void ebm__sampler_proposal_set(ebm_sampler_t *s, float *copy, int64_t n_rows, double flip_prob)
{
    free(s->proposal_rows);
    s->proposal_rows = copy;
    s->proposal = (ebm__proposal){.n_rows = n_rows, .rows = copy,
                                  .ones = copy + n_rows * s->m->size[0], .flip_prob = flip_prob};
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
