/* Parallel tempering (tempering.h): replicas of a chain at inverse
 * temperatures beta_0 < ... < beta_{R-1} = 1, each with the law
 * p_b(x) ~ exp(-E_G(x) - b (E(x) - E_G(x))), where E_G is the Gaussian
 * visible layer's self-energy (0 for discrete layers): the path of the AIS
 * estimate of log Z. A step sweeps every replica by Gibbs at its beta,
 * then proposes to exchange the states of adjacent replicas, first the
 * pairs (0, 1), (2, 3), ..., then (1, 2), (3, 4), ...; an exchange of
 * replicas i < j is accepted with probability
 *   min(1, exp((b_i - b_j) (E'(x_i) - E'(x_j)))),   E' = E - E_G,
 * which keeps the product of the replicas' laws (Swendsen and Wang 1986;
 * Desjardins et al. 2010). Each pass is a product of independent
 * Metropolis moves on disjoint pairs, so the step keeps that product law. */
#include "conditional.h"
#include "energy.h"
#include "error.h"
#include "kernels.h"
#include "model.h"
#include "rng.h"
#include "scratch.h"
#include "tempering.h"
#include "threads.h"

#include <math.h>
#include <string.h>

int ebm__check_ladder(ebm__msg *msg, int64_t n_betas, const double *betas)
{
    if (betas == NULL) {
        return ebm__fail(msg, EBM_ENULL, "betas is NULL");
    }
    if (n_betas < 2 || n_betas > EBM__MAX_BETAS) {
        return ebm__fail(msg, EBM_ESHAPE, "n_betas is %lld; a ladder has 2 to %d temperatures",
                         (long long)n_betas, EBM__MAX_BETAS);
    }
    for (int64_t k = 0; k < n_betas; k++) {
        const double b = betas[k];
        if (!(b >= 0.0 && b <= 1.0)) {
            return ebm__fail(msg, EBM_EVALUE, "betas[%lld] is %g; inverse temperatures lie in [0, 1]",
                             (long long)k, b);
        }
        if (k > 0 && !(b > betas[k - 1])) {
            return ebm__fail(msg, EBM_EVALUE,
                             "betas[%lld] is %g and betas[%lld] is %g; the ladder must increase",
                             (long long)k, b, (long long)(k - 1), betas[k - 1]);
        }
    }
    if (betas[n_betas - 1] != 1.0) {
        return ebm__fail(msg, EBM_EVALUE,
                         "betas[%lld] is %g; the last inverse temperature must be 1 (the model)",
                         (long long)(n_betas - 1), betas[n_betas - 1]);
    }
    return EBM_OK;
}

int ebm__tempering_check(ebm__msg *msg, int64_t n_betas, uint32_t clamp_layers, int64_t n)
{
    if (n_betas == 0) {
        return ebm__fail(msg, EBM_EVALUE,
                         "EBM_SAMPLER_TEMPERING has no ladder: call ebm_sampler_set_ladder first");
    }
    if (clamp_layers != 0) {
        return ebm__fail(msg, EBM_EUNSUPPORTED,
                         "EBM_SAMPLER_TEMPERING exchanges whole states, so it clamps no layer "
                         "(EBM_SAMPLER_CLAMP_LAYERS is %lld)",
                         (long long)clamp_layers);
    }
    if (n % n_betas != 0) {
        return ebm__fail(msg, EBM_ESHAPE,
                         "n is %lld; EBM_SAMPLER_TEMPERING takes whole chains of %lld replicas "
                         "(one row per inverse temperature)",
                         (long long)n, (long long)n_betas);
    }
    return EBM_OK;
}

/* A step's scratch: the layer inputs, the energies E', the free-energy
 * routine's work, one chain's swap uniforms per chain, the swap decisions,
 * and (keep) x, to undo a step that failed. */
typedef struct tempering_work {
    int64_t n, chains, pairs, input_size, width, fwork_size;
    int keep;
    float *a, *u, *saved;
    double *e, *fwork;
    uint8_t *took;
} tempering_work;

static void tempering_layout(ebm__arena *arena, void *ctx)
{
    tempering_work *wk = ctx;
    wk->a = ebm__arena_take(arena, (size_t)(wk->n * wk->input_size), sizeof(float));
    wk->e = ebm__arena_take(arena, (size_t)wk->n, sizeof(double));
    wk->fwork = ebm__arena_take(arena, (size_t)wk->fwork_size, sizeof(double));
    wk->u = ebm__arena_take(arena, (size_t)(wk->chains * wk->pairs), sizeof(float));
    wk->took = ebm__arena_take(arena, (size_t)(wk->chains * wk->pairs), sizeof(uint8_t));
    wk->saved = wk->keep ? ebm__arena_take(arena, (size_t)(wk->n * wk->width), sizeof(float)) : NULL;
}

/* E'(x_r) = E(x_r) - E_G(x_r) into e, in double. */
static void tempered_energies(const ebm_model_t *m, int64_t n, const float *x, int64_t ldx,
                              double *e, double *work)
{
    for (int64_t r0 = 0; r0 < n; r0 += EBM__CHUNK) {
        const int64_t rows = n - r0 < EBM__CHUNK ? n - r0 : EBM__CHUNK;
        ebm__free_energy_chunk(m, 0, rows, x + r0 * ldx, ldx, e + r0, work);
    }
    if (!ebm__is_gaussian(m, 0)) {
        return;
    }
    const double *mu = m->params_d + m->b_off[0];
    for (int64_t r = 0; r < n; r++) {
        const float *v = x + r * ldx;
        double g = 0.0;
        for (int64_t i = 0; i < m->size[0]; i++) {
            const double d = (double)v[i] - mu[i];
            g += 0.5 * d * d * m->inv_var_d[i];
        }
        e[r] -= g;
    }
}

static void swap_rows(float *a, float *b, int64_t w)
{
    for (int64_t j = 0; j < w; j++) {
        const float t = a[j];
        a[j] = b[j];
        b[j] = t;
    }
}

/* The swaps of one tempering step, chain by chain. */
typedef struct swap_job {
    tempering_work *wk;
    const double *betas;
    const ebm__stream *stream;
    const int64_t *ids;
    float *x;
    int64_t ldx, w, R;
    double sign; /* -1: the broken twin of the tests (testing.h) */
} swap_job;

static void swap_chains(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const swap_job *s = ctx;
    tempering_work *wk = s->wk;
    const int64_t pairs = wk->pairs, R = s->R;
    for (int64_t c = begin; c < end; c++) {
        float *u = wk->u + c * pairs;
        uint8_t *took = wk->took + c * pairs;
        ebm__stream_uniform(s->stream, ebm__row_id(s->ids, c * R), 0, pairs, u);
        for (int pass = 0; pass < 2; pass++) {
            for (int64_t j = pass; j < pairs; j += 2) {
                const int64_t i = c * R + j;
                const double log_ratio =
                    s->sign * (s->betas[j] - s->betas[j + 1]) * (wk->e[i] - wk->e[i + 1]);
                took[j] = log((double)u[j]) < log_ratio;
                if (took[j]) {
                    swap_rows(s->x + i * s->ldx, s->x + (i + 1) * s->ldx, s->w);
                    const double t = wk->e[i];
                    wk->e[i] = wk->e[i + 1];
                    wk->e[i + 1] = t;
                }
            }
        }
    }
}

int ebm__tempering_step(const ebm__kernel_in *k, ebm__kernel_out *out, ebm__msg *msg,
                        ebm_rng_t *rng, const int64_t *ids, int64_t n, float *x, int64_t ldx,
                        int keep)
{
    const ebm_model_t *m = k->m;
    const int64_t w = m->width, R = k->n_betas, chains = n / R, pairs = R - 1;
    const double *betas = k->betas;
    if (n == 0) {
        memset(out->swap_accepted, 0, (size_t)pairs * sizeof *out->swap_accepted);
        memset(out->swap_proposed, 0, (size_t)pairs * sizeof *out->swap_proposed);
        return EBM_OK;
    }
    tempering_work wk = {.n = n, .chains = chains, .pairs = pairs, .input_size = m->max_size,
                         .width = w, .keep = keep,
                         .fwork_size = ebm__free_energy_scratch(m, n < EBM__CHUNK ? n : EBM__CHUNK)};
    if (ebm__arena_layout(k->scratch, tempering_layout, &wk) != 0) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for %lld rows of replicas", (long long)n);
    }
    for (int64_t r = 0; r < n && keep; r++) {
        memcpy(wk.saved + r * w, x + r * ldx, (size_t)w * sizeof *x);
    }
    /* One stream per layer, as a Gibbs step takes them (a replica at beta
     * = 1 draws what a Gibbs step would), and one for the swaps. */
    ebm__stream streams[EBM_MAX_LAYERS + 1];
    ebm__rng_take_streams(rng, (int)m->n_layers + 1, streams);
    const ebm__stream *swap_stream = &streams[m->n_layers];
    const ebm__kernels *kern = ebm__kern();
    int ok = 1;
    for (int parity = 0; parity < 2 && ok; parity++) {
        for (int64_t l = parity; l < m->n_layers && ok; l += 2) {
            const int64_t nl = m->size[l];
            ebm__layer_input(m, l, n, x, ldx, wk.a, nl);
            ebm__temper_input(m, l, n, wk.a, nl, betas, R);
            ok = kern->values_ok(n * nl, wk.a, EBM_UNITS_GAUSSIAN);
            if (ok) {
                ebm__sample_from_input(m, l, &streams[l], ids, 0, n, wk.a, nl, x + m->column[l],
                                       ldx);
                for (int64_t r = 0; r < n && ok && ebm__is_gaussian(m, l); r++) {
                    /* a draw of a finite mean overflowed */
                    ok = kern->values_ok(nl, x + r * ldx + m->column[l], EBM_UNITS_GAUSSIAN);
                }
            }
        }
    }
    if (ok) {
        tempered_energies(m, n, x, ldx, wk.e, wk.fwork);
        for (int64_t r = 0; r < n && ok; r++) {
            ok = isfinite(wk.e[r]);
        }
    }
    if (!ok) {
        for (int64_t r = 0; r < n && keep; r++) {
            memcpy(x + r * ldx, wk.saved + r * w, (size_t)w * sizeof *x);
        }
        return ebm__fail_overflow(msg, "tempering step");
    }
    /* Chain c's swap uniforms come from its first row's stream row, word j
     * for pair (j, j + 1): they depend on neither n nor the other chains. */
    swap_job job = {&wk, betas, swap_stream, ids, x, ldx, w, R,
                  k->settings->twin_swap ? -1.0 : 1.0};
    ebm__for_rows(chains, n * w, 0, swap_chains, &job);
    for (int64_t j = 0; j < pairs; j++) {
        int64_t count = 0;
        for (int64_t c = 0; c < chains; c++) {
            count += wk.took[c * pairs + j];
        }
        out->swap_accepted[j] = count;
        out->swap_proposed[j] = chains;
    }
    return EBM_OK;
}
