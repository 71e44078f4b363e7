/* The Gibbs kernel: block sweeps of the free layers, even layers given the
 * odd ones, then odd given even (gibbs.h). */
#include "conditional.h"
#include "energy.h"
#include "error.h"
#include "gibbs.h"
#include "kernels.h"
#include "model.h"
#include "rng.h"
#include "scratch.h"

#include <string.h>

int ebm__gibbs_sweep(const ebm__kernel_in *k, const ebm__stream *layer_streams,
                     const int64_t *rows, int64_t n, float *x, int64_t ldx, float *a)
{
    const ebm_model_t *m = k->m;
    /* Even layers given the odd ones, then odd given even. */
    for (int parity = 0; parity < 2; parity++) {
        uint32_t layers = ebm__unclamped_layers(m, k->settings->clamp_layers, parity);
        for (int64_t l = parity; l < m->n_layers; l += 2) {
            if (layers >> l & 1u) {
                ebm__layer_input(m, l, n, x, ldx, a, m->size[l]);
                if (!ebm__kern()->values_ok(n * m->size[l], a, EBM_UNITS_GAUSSIAN)) {
                    return 0;
                }
                ebm__sample_from_input(m, l, &layer_streams[l], rows, 0, n, a, m->size[l],
                                       x + m->column[l], ldx);
                for (int64_t r = 0; r < n && !ebm__is_discrete(m, l); r++) {
                    if (!ebm__kern()->values_ok(m->size[l], x + r * ldx + m->column[l],
                                                EBM_UNITS_GAUSSIAN)) {
                        return 0; /* a draw of a finite mean overflowed */
                    }
                }
            }
        }
    }
    return 1;
}

/* A step's scratch: the layer inputs, and (keep) x, to undo a sweep that
 * overflowed. */
typedef struct gibbs_work {
    int64_t n, input_size, width;
    int keep;
    float *a, *saved;
} gibbs_work;

static void gibbs_layout(ebm__arena *arena, void *ctx)
{
    gibbs_work *wk = ctx;
    wk->a = ebm__arena_take(arena, (size_t)(wk->n * wk->input_size), sizeof(float));
    wk->saved = wk->keep ? ebm__arena_take(arena, (size_t)(wk->n * wk->width), sizeof(float)) : NULL;
}

int ebm__gibbs_step(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg, ebm_rng_t *rng,
                    const int64_t *ids, int64_t n, float *x, int64_t ldx, int keep)
{
    const ebm_model_t *m = k->m;
    const int64_t w = m->width;
    gibbs_work wk = {.n = n, .input_size = m->max_size, .width = w, .keep = keep};
    if (ebm__arena_layout(k->scratch, gibbs_layout, &wk) != 0) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for %lld rows of inputs", (long long)n);
    }
    float *a = wk.a, *saved = wk.saved;
    for (int64_t r = 0; r < n && keep; r++) {
        memcpy(saved + r * w, x + r * ldx, (size_t)w * sizeof *x);
    }
    ebm__stream streams[EBM_MAX_LAYERS];
    ebm__rng_take_streams(rng, (int)m->n_layers, streams);
    if (!ebm__gibbs_sweep(k, streams, ids, n, x, ldx, a)) {
        for (int64_t r = 0; r < n && keep; r++) {
            memcpy(x + r * ldx, saved + r * w, (size_t)w * sizeof *x);
        }
        return ebm__fail_overflow(msg, "Gibbs sweep");
    }
    out->accept_rate = 1.0;
    /* With one odd layer (two or three layers) the sweep ends with layer 1
     * drawn from its input at the new state, left in a. */
    const uint32_t odd = ebm__unclamped_layers(m, k->settings->clamp_layers, 1);
    out->hidden_input = m->n_layers <= 3 && (odd & 2u) ? a : NULL;
    return EBM_OK;
}
