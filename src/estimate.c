/* The estimate of an estimator's gradient: its positive and negative
 * phases (CD, PCD, UCD, UCD-LMI, GRBM modified CD), the telescoping sums
 * of coupled chains, and f, the free-energy gradient they average
 * (estimator.h). */
#include "conditional.h"
#include "energy.h"
#include "error.h"
#include "estimator.h"
#include "kernels.h"
#include "model.h"
#include "rng.h"
#include "sampler.h"
#include "scratch.h"
#include "search.h"

#include <stdlib.h>
#include <string.h>

/* Telescoping terms kept before they are turned into gradient. */
#define FLUSH_ROWS 16384

/* ---- scratch ---------------------------------------------------------- */

static int push_weighted_row(ebm__weighted_rows *st, const float *x, int64_t w, double c)
{
    if (st->rows == st->cap) {
        int64_t cap = st->cap > 0 ? 2 * st->cap : 64;
        float *nx = realloc(st->x, (size_t)(cap * w) * sizeof *nx);
        if (nx == NULL) {
            return EBM_ENOMEM;
        }
        st->x = nx;
        double *nc = realloc(st->c, (size_t)cap * sizeof *nc);
        if (nc == NULL) {
            return EBM_ENOMEM;
        }
        st->c = nc;
        st->cap = cap;
    }
    memcpy(st->x + st->rows * w, x, (size_t)w * sizeof *x);
    st->c[st->rows++] = c;
    return EBM_OK;
}

/* ---- f: the free-energy gradients averaged ---------------------------- */

/* The sum-out masks and weights of f (at most two terms); `clamped` are the
 * layers fixed by the data, never summed out. */
static int f_sum_outs(const ebm_estimator_t *e, uint32_t clamped, uint32_t mask[2], double weight[2])
{
    const ebm_model_t *m = e->m;
    uint32_t even = 0, odd = 0;
    for (int64_t l = 0; l < m->n_layers; l++) {
        if (!(clamped >> l & 1u)) {
            if (l % 2 == 0) {
                even |= 1u << l;
            } else {
                odd |= 1u << l;
            }
        }
    }
    switch (e->marginalize) {
    case EBM_MARGINALIZE_EVEN: mask[0] = even; weight[0] = 1.0; return 1;
    case EBM_MARGINALIZE_ODD: mask[0] = odd; weight[0] = 1.0; return 1;
    case EBM_MARGINALIZE_BOTH:
        mask[0] = even;
        mask[1] = odd;
        weight[0] = weight[1] = 0.5;
        return 2;
    default: mask[0] = 0; weight[0] = 1.0; return 1;
    }
}

/* The scratch of ebm__energy_grad_rows for `rows` rows and as many
 * coefficients, kept by the estimator (no allocation per call). */
static int grad_scratch(ebm_estimator_t *e, int64_t rows, float **work, double **coef)
{
    *work = ebm__grow((void **)&e->gwork, &e->gwcap, (size_t)ebm__energy_grad_scratch(e->m, rows),
                 sizeof **work);
    *coef = ebm__grow((void **)&e->gcoef, &e->gccap, (size_t)rows, sizeof **coef);
    return *work != NULL && *coef != NULL ? EBM_OK : EBM_ENOMEM;
}

/* g += sum over rows of coef * f(x), in chunks, for f with `clamped` layers.
 * xm (NULL: none): the rows of x (stride w) with layer 1 at its mean given
 * the rest, for the term that sums out layer 1 alone (see add_f_after_step).
 * EBM_ENOMEM (msg set) if the scratch cannot grow. */
static int add_f_rows(ebm_estimator_t *e, ebm__msg *msg, uint32_t clamped, int64_t n,
                      const float *x, int64_t ldx, const double *coef, double scale,
                      const float *xm)
{
    const ebm_model_t *m = e->m;
    uint32_t mask[2];
    double weight[2];
    int terms = f_sum_outs(e, clamped, mask, weight);
    const int64_t chunk = n < 1024 ? n : 1024;
    double *c;
    float *work;
    if (grad_scratch(e, chunk, &work, &c) != EBM_OK) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for the gradient of %lld rows",
                         (long long)chunk);
    }
    for (int64_t r0 = 0; r0 < n; r0 += chunk) {
        int64_t rows = n - r0 < chunk ? n - r0 : chunk;
        for (int t = 0; t < terms; t++) {
            for (int64_t r = 0; r < rows; r++) {
                c[r] = scale * weight[t] * (coef == NULL ? 1.0 : coef[r0 + r]);
            }
            if (xm != NULL && mask[t] == 2u) { /* E is linear in layer 1 */
                ebm__energy_grad_rows(m, 0, rows, xm + r0 * m->width, m->width, c, e->g, work);
            } else {
                ebm__energy_grad_rows(m, mask[t], rows, x + r0 * ldx, ldx, c, e->g, work);
            }
        }
    }
    return EBM_OK;
}

/*
 * g += scale sum_r f(x_r), f with `clamped` layers, right after the step of
 * s that made the rows x (stride w). If the step left the input of layer 1
 * at every row (ebm__sampler_hidden_input: a Gibbs sweep that drew layer 1 last, or a
 * Gibbs-Langevin step that took every proposal), the term of f that sums
 * out layer 1 alone is dE/dtheta at the rows with x_1 = E[x_1 | rest], the
 * mean from that input (E is linear in x_1; the mean is the one
 * expected_state would compute, from the same GEMM): one layer input fewer.
 * scratch: n rows of w. EBM_ENOMEM (msg set) as add_f_rows.
 */
static int add_f_after_step(ebm_estimator_t *e, ebm__msg *msg, const ebm_sampler_t *s,
                            uint32_t clamped, int64_t n, const float *x, double scale,
                            float *scratch)
{
    const float *hidden_input = ebm__sampler_hidden_input(s);
    const ebm_model_t *m = e->m;
    const int64_t w = m->width, off1 = m->column[1], n1 = m->size[1];
    uint32_t mask[2];
    double weight[2];
    const int terms = f_sum_outs(e, clamped, mask, weight);
    const int layer1_term = mask[0] == 2u || (terms == 2 && mask[1] == 2u);
    /* (h summed out equals h at its mean only where E is linear in h: not for
     * dReLU units, whose shape gradients need the second moments) */
    if (e->plain || hidden_input == NULL || !layer1_term || ebm__is_drelu(m, 1)) {
        return add_f_rows(e, msg, clamped, n, x, w, NULL, scale, NULL);
    }
    const int binary = m->units[1] == EBM_UNITS_BINARY;
    for (int64_t r = 0; r < n; r++) {
        float *row = scratch + r * w;
        const float *xr = x + r * w;
        memcpy(row, xr, (size_t)off1 * sizeof *row); /* layer 1 is written below */
        memcpy(row + off1 + n1, xr + off1 + n1, (size_t)(w - off1 - n1) * sizeof *row);
        if (binary) { /* the mean straight from the input: one pass */
            ebm__kern()->sigmoid(n1, hidden_input + r * n1, row + off1);
        } else {
            memcpy(row + off1, hidden_input + r * n1, (size_t)n1 * sizeof *row);
        }
    }
    if (!binary) {
        ebm__mean_from_input(m, 1, n, scratch + off1, w);
    }
    return add_f_rows(e, msg, clamped, n, x, w, NULL, scale, scratch);
}


int ebm__add_weighted_rows(ebm_estimator_t *e, ebm__msg *msg, uint32_t clamped,
                           const ebm__weighted_rows *rows)
{
    if (rows->rows == 0) {
        return EBM_OK;
    }
    return add_f_rows(e, msg, clamped, rows->rows, rows->x, e->m->width, rows->c, 1.0, NULL);
}

/* ---- building blocks -------------------------------------------------- */

/* Mean of a sampler's acceptance over the call, weighted by rows; and the
 * MH moves it accepted, counted exactly (a coupled step on rows that have
 * not met makes two decisions per row). */
static void note_accept(ebm_estimator_t *e, const ebm__step_out *step, int64_t rows)
{
    e->accept_sum += step->accept_rate * (double)rows;
    e->accept_rows += (double)rows;
    if (step->kind == EBM_SAMPLER_MH_UNIFORM) {
        e->stat[EBM_ESTIMATOR_STAT_MH_ACCEPTED] += (double)step->accepted;
    }
}

/* The global moves of a step (EBM_SAMPLER_GLOBAL_PROB) in the call's
 * acceptance, weighted by their decisions. */
static void note_global(ebm_estimator_t *e, const ebm__step_out *step)
{
    e->accept_sum += step->global_accept_rate * (double)step->global_decisions;
    e->accept_rows += (double)step->global_decisions;
}

/* One step (in->y NULL) or coupled step of s; the chains are the
 * estimator's scratch, so a failed step may leave them partly drawn. */
static int run(ebm_estimator_t *e, ebm__msg *msg, ebm_sampler_t *s, ebm_rng_t *rng,
               ebm__step_in *in)
{
    in->keep = 0;
    ebm__step_out step;
    int rc = ebm__sampler_run(s, msg, rng, in, &step);
    if (rc == EBM_OK && step.kind != EBM_SAMPLER_GIBBS && step.kind != EBM_SAMPLER_TEMPERING) {
        note_accept(e, &step, in->n);
    }
    if (rc == EBM_OK && step.global_decisions > 0) {
        note_global(e, &step);
    }
    return rc;
}

/* One step of s on rows x (stream rows ids). */
static int step(ebm_estimator_t *e, ebm__msg *msg, ebm_sampler_t *s, ebm_rng_t *rng,
                const int64_t *ids, int64_t n, float *x, int64_t ldx)
{
    ebm__step_in in = {.ids = ids, .n = n, .x = x, .ldx = ldx};
    return run(e, msg, s, rng, &in);
}

/* Rows of x (n x w) with layer 0 = data and the hidden layers drawn by one
 * sweep of p(h | v) from uniform noise. */
static int posterior_start(ebm_estimator_t *e, ebm__msg *msg, ebm_rng_t *rng, int64_t n,
                           const float *data, int64_t ldd, float *x, float *draw)
{
    const ebm_model_t *m = e->m;
    const int64_t w = m->width;
    for (int64_t r = 0; r < n; r++) {
        memcpy(x + r * w, data + r * ldd, (size_t)m->size[0] * sizeof *x);
    }
    ebm__stream s = ebm__rng_take_stream(rng);
    ebm__random_units(m, &s, e->row_ids, n, x, w, ebm__all_layers(m) & ~1u, NULL, 0, draw);
    return step(e, msg, e->gibbs_post, rng, e->row_ids, n, x, w);
}

/*
 * The telescoping estimate of one phase (Qiu et al. Alg. 2, Taniguchi Alg.
 * 2): from x_0 (n rows of x, stride w; overwritten), made by a step of
 * `start`, y_0 = x_0, x_1 = one step of s, then coupled steps until x_t ==
 * y_{t-1} and t >= k; pushes coef f(x_k) and coef (f(x_t) - f(y_{t-1}))
 * for k < t < tau onto st, except that k = 0 adds coef f(x_0) to g at once
 * (add_f_after_step). Finished rows leave the batch; each keeps its stream row.
 */
typedef struct telescope_spec {
    const ebm_sampler_t *start; /* the sampler whose step made x_0 */
    ebm_sampler_t *s;           /* the kernel of the chains, single and coupled */
    double coef;                /* the weight of every row's terms */
    ebm__weighted_rows *terms;  /* where the terms go */
    uint32_t clamped;           /* the layers f keeps (the data's) */
    int stat_mean, stat_max;    /* where tau's mean and largest value go */
} telescope_spec;

static int telescope(ebm_estimator_t *e, ebm__msg *msg, const telescope_spec *spec, ebm_rng_t *rng,
                     int64_t n, float *x, float *y)
{
    const ebm_sampler_t *start = spec->start;
    ebm_sampler_t *s = spec->s;
    const double coef = spec->coef;
    ebm__weighted_rows *st = spec->terms;
    const uint32_t clamped = spec->clamped;
    const int64_t w = e->m->width;
    int64_t *ids = ebm__grow((void **)&e->ibuf, &e->icap, (size_t)(3 * n), sizeof *ids);
    uint8_t *met = malloc((size_t)(n > 0 ? n : 1));
    if (ids == NULL || met == NULL) {
        free(met);
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for the coupled chains");
    }
    int64_t *tau = ids + n;
    int rc = EBM_OK;
    for (int64_t r = 0; r < n; r++) {
        ids[r] = ebm__row_id(e->row_ids, r);
        tau[r] = 0;
    }
    if (e->k == 0) {
        rc = add_f_after_step(e, msg, start, clamped, n, x, coef, y);
    }
    memcpy(y, x, (size_t)(n * w) * sizeof *x);
    if (rc == EBM_OK) {
        ebm__step_in in = {.ids = ids, .n = n, .x = x, .ldx = w};
        if (e->kind == EBM_ESTIMATOR_UCD_LMI) { /* MH chains: E(x_0) from start's sweep */
            in.entry_input = ebm__sampler_hidden_input(start);
        }
        rc = run(e, msg, s, rng, &in);
    }
    for (int64_t r = 0; r < n; r++) {
        met[r] = (uint8_t)ebm__rows_equal(x + r * w, y + r * w, w);
    }
    int64_t active = n, t = 1, tau_sum = 0, tau_max = 0, limit_row = -1;
    while (rc == EBM_OK && active > 0) {
        for (int64_t r = active - 1; r >= 0 && rc == EBM_OK; r--) {
            float *xr = x + r * w, *yr = y + r * w;
            if (met[r] && tau[r] == 0) {
                tau[r] = t;
            }
            if (t == e->k) {
                rc = push_weighted_row(st, xr, w, coef);
            } else if (t > e->k && !met[r]) {
                rc = push_weighted_row(st, xr, w, coef);
                if (rc == EBM_OK) {
                    rc = push_weighted_row(st, yr, w, -coef);
                }
            }
            /* The cap stops a row only once it has reached step k: its estimate is
             * then truncated, never empty. */
            int capped = e->max_steps > 0 && t >= e->max_steps && t >= e->k && !met[r];
            if (rc == EBM_OK && !capped && !met[r] && t >= e->step_limit) {
                limit_row = ids[r];
                break;
            }
            if (rc != EBM_OK || !((met[r] && t >= e->k) || capped)) {
                continue;
            }
            /* This row is done: record it, and move the last active row here. */
            int64_t row_tau = capped ? t : tau[r];
            tau_sum += row_tau;
            tau_max = row_tau > tau_max ? row_tau : tau_max;
            e->stat[EBM_ESTIMATOR_STAT_CAPPED] += capped;
            active--;
            if (r != active) {
                memcpy(xr, x + active * w, (size_t)w * sizeof *x);
                memcpy(yr, y + active * w, (size_t)w * sizeof *y);
                ids[r] = ids[active];
                tau[r] = tau[active];
                met[r] = met[active];
            }
        }
        if (rc != EBM_OK) {
            rc = ebm__fail(msg, EBM_ENOMEM, "out of memory for the telescoping sum");
            break;
        }
        if (limit_row >= 0) {
            rc = ebm__fail(msg, EBM_ELIMIT,
                           "row %lld's coupled chains had not met after %lld steps "
                           "(EBM_ESTIMATOR_STEP_LIMIT); grad, chains and rng are unchanged: "
                           "raise the limit, or cap the steps with EBM_ESTIMATOR_MAX_STEPS, which "
                           "truncates the estimate (biased)",
                           (long long)limit_row, (long long)t);
            break;
        }
        if (active == 0) {
            break;
        }
        /* Meeting times are heavy-tailed: turn the terms into gradient as they
         * pile up, so memory stays bounded however long a chain runs. */
        if (st->rows >= FLUSH_ROWS) {
            rc = add_f_rows(e, msg, clamped, st->rows, st->x, w, st->c, 1.0, NULL);
            st->rows = 0;
            if (rc != EBM_OK) {
                break;
            }
        }
        ebm__step_in in = {.ids = ids, .n = active, .x = x, .ldx = w, .y = y, .ldy = w, .met = met};
        rc = run(e, msg, s, rng, &in);
        t++;
    }
    free(met);
    if (rc == EBM_OK) {
        e->stat[spec->stat_mean] = n > 0 ? (double)tau_sum / (double)n : 0.0;
        e->stat[spec->stat_max] = (double)tau_max;
    }
    return rc;
}

/* Local search (Alg. 1, or Alg. 5 with the visible layer clamped), then one
 * Gibbs sweep: the local-mode initialisation of UCD-LMI. */
static int local_mode_start(ebm_estimator_t *e, ebm__msg *msg, ebm_rng_t *rng, int64_t n,
                            float *x, int clamp_visible, float *draw)
{
    const ebm_model_t *m = e->m;
    const int64_t w = m->width;
    ebm__stream s = ebm__rng_take_stream(rng);
    ebm__random_units(m, &s, e->row_ids, n, x, w, ebm__all_layers(m) & ~(clamp_visible ? 1u : 0u),
                      NULL, 0, draw);
    uint8_t *clamp = NULL;
    int64_t *sweeps = malloc((size_t)(n > 0 ? n : 1) * sizeof *sweeps);
    if (clamp_visible) {
        clamp = calloc((size_t)w, 1);
        if (clamp != NULL) {
            memset(clamp, 1, (size_t)m->size[0]);
        }
    }
    if (sweeps == NULL || (clamp_visible && clamp == NULL)) {
        free(sweeps);
        free(clamp);
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for the local search");
    }
    int capped = ebm__local_search(m, msg, rng, e->row_ids, n, x, w, clamp, 0, e->search_sweeps,
                                   sweeps);
    free(clamp);
    if (capped < 0) {
        free(sweeps);
        return capped;
    }
    int64_t total = 0;
    for (int64_t r = 0; r < n; r++) {
        total += sweeps[r];
    }
    free(sweeps);
    e->stat[EBM_ESTIMATOR_STAT_SWEEPS_MEAN] += (double)total;
    e->searches += (double)n;
    e->stat[EBM_ESTIMATOR_STAT_SEARCH_CAPPED] += capped;
    return step(e, msg, clamp_visible ? e->gibbs_post : e->gibbs, rng, e->row_ids, n, x, w);
}

/* ---- the phases ------------------------------------------------------- */

static int positive_method(const ebm_estimator_t *e)
{
    if (e->positive != EBM_POSITIVE_AUTO) {
        return e->positive;
    }
    if (e->m->n_layers == 2) {
        return EBM_POSITIVE_EXACT;
    }
    return (e->kind == EBM_ESTIMATOR_UCD || e->kind == EBM_ESTIMATOR_UCD_LMI)
               ? EBM_POSITIVE_COUPLED
               : EBM_POSITIVE_MEAN_FIELD;
}

/* g += -(1/n) sum_r E[dE/dtheta | v_r], by the chosen method. */
int ebm__positive_phase(ebm_estimator_t *e, ebm__msg *msg, ebm_rng_t *rng, int64_t n,
                          const float *data, int64_t ldd, float *x, float *y, float *draw)
{
    const ebm_model_t *m = e->m;
    const int64_t w = m->width;
    const double c = -1.0 / (double)n;
    int rc = EBM_OK;
    switch (positive_method(e)) {
    case EBM_POSITIVE_EXACT: {
        /* dF/dtheta with the hidden layer summed out. */
        for (int64_t r = 0; r < n; r++) {
            memcpy(x + r * w, data + r * ldd, (size_t)m->size[0] * sizeof *x);
            memset(x + r * w + m->size[0], 0, (size_t)(w - m->size[0]) * sizeof *x);
        }
        float *work;
        double *coef;
        if (grad_scratch(e, n, &work, &coef) != EBM_OK) {
            return ebm__fail(msg, EBM_ENOMEM, "out of memory");
        }
        for (int64_t r = 0; r < n; r++) {
            coef[r] = c;
        }
        ebm__energy_grad_rows(m, ebm__all_layers(m) & ~1u, n, x, w, coef, e->g, work);
        return EBM_OK;
    }
    case EBM_POSITIVE_SAMPLED:
        rc = posterior_start(e, msg, rng, n, data, ldd, x, draw);
        if (rc == EBM_OK) {
            /* all layers count as clamped: f = dE/dtheta */
            rc = add_f_rows(e, msg, ebm__all_layers(m), n, x, w, NULL, c, NULL);
        }
        return rc;
    case EBM_POSITIVE_MEAN_FIELD: {
        for (int64_t r = 0; r < n; r++) {
            float *row = x + r * w;
            memcpy(row, data + r * ldd, (size_t)m->size[0] * sizeof *x);
            for (int64_t k = m->size[0]; k < w; k++) {
                row[k] = m->units[1] == EBM_UNITS_SPIN ? 0.0f : 0.5f;
            }
        }
        uint8_t *clamp = calloc((size_t)w, 1);
        if (clamp == NULL) {
            return ebm__fail(msg, EBM_ENOMEM, "out of memory");
        }
        memset(clamp, 1, (size_t)m->size[0]);
        int missed = ebm__mean_field(m, msg, n, x, w, clamp, 0, e->mf_iters, e->mf_tol);
        free(clamp);
        if (missed < 0) {
            return missed;
        }
        e->stat[EBM_ESTIMATOR_STAT_MEAN_FIELD_MISSED] = missed;
        /* The energy is multilinear: its expectation under a factorised
         * posterior is dE/dtheta at the means (all layers as if clamped). */
        return add_f_rows(e, msg, ebm__all_layers(m), n, x, w, NULL, c, NULL);
    }
    default: /* COUPLED */
        if (e->kind == EBM_ESTIMATOR_UCD_LMI) {
            for (int64_t r = 0; r < n; r++) {
                memcpy(x + r * w, data + r * ldd, (size_t)m->size[0] * sizeof *x);
            }
            rc = local_mode_start(e, msg, rng, n, x, 1, draw);
        } else {
            rc = posterior_start(e, msg, rng, n, data, ldd, x, draw);
        }
        if (rc == EBM_OK) {
            ebm_sampler_t *s = e->kind == EBM_ESTIMATOR_UCD_LMI ? e->mh_post : e->gibbs_post;
            const telescope_spec spec = {e->gibbs_post, s, c, &e->pos, 1u,
                                         EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN,
                                         EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX};
            rc = telescope(e, msg, &spec, rng, n, x, y);
        }
        return rc;
    }
}


/* g += E_model[dE/dtheta], estimated by the kind's negative phase. */
int ebm__negative_phase(ebm_estimator_t *e, ebm__msg *msg, ebm_rng_t *rng, int64_t n,
                          const float *data, int64_t ldd, float *x, float *y, float *draw,
                          float *next_chains, int64_t n_chains)
{
    const ebm_model_t *m = e->m;
    const int64_t w = m->width;
    int rc = EBM_OK;
    switch (e->kind) {
    case EBM_ESTIMATOR_CD:
        rc = posterior_start(e, msg, rng, n, data, ldd, x, draw);
        for (int64_t i = 0; i < e->k && rc == EBM_OK; i++) {
            rc = step(e, msg, e->gibbs, rng, e->row_ids, n, x, w);
        }
        if (rc == EBM_OK) {
            rc = add_f_after_step(e, msg, e->gibbs, 0, n, x, 1.0 / (double)n, y);
        }
        return rc;
    case EBM_ESTIMATOR_PCD:
        for (int64_t i = 0; i < e->k && rc == EBM_OK; i++) {
            rc = step(e, msg, e->gibbs, rng, e->chain_ids, n_chains, next_chains, w);
        }
        if (rc == EBM_OK) {
            rc = add_f_after_step(e, msg, e->gibbs, 0, n_chains, next_chains,
                                  1.0 / (double)n_chains, x);
        }
        return rc;
    case EBM_ESTIMATOR_PT: {
        /* K tempering steps of the R-replica chains (their swaps go to
         * the sampler's tally); f over the beta = 1 rows (the last of
         * each chain). */
        const int64_t R = ebm__sampler_ladder_size(e->tempering), pairs = R - 1,
                      chains = n_chains / R;
        for (int64_t i = 0; i < e->k && rc == EBM_OK; i++) {
            rc = step(e, msg, e->tempering, rng, e->chain_ids, n_chains, next_chains, w);
        }
        if (rc == EBM_OK) {
            rc = add_f_rows(e, msg, 0, chains, next_chains + pairs * w, R * w, NULL,
                            1.0 / (double)chains, NULL);
        }
        return rc;
    }
    case EBM_ESTIMATOR_GRBM_CD: {
        /* Liao Algs. 3-4: v ~ N(0, I), h ~ p(h | v), K steps; steps after
         * the burn-in M are all used. */
        ebm_sampler_t *s = e->sampler_kind == EBM_SAMPLER_LANGEVIN ? e->langevin
                           : e->sampler_kind == EBM_SAMPLER_GIBBS_LANGEVIN ? e->gibbs_langevin
                                                                           : e->gibbs;
        ebm__stream st = ebm__rng_take_stream(rng);
        ebm__random_units(m, &st, e->chain_ids, n_chains, next_chains, w, 1u, NULL, 0, draw);
        /* adjust-after-eta counts from the chains' start */
        ebm_sampler_set_int(s, EBM_SAMPLER_ITERATION, 0);
        rc = step(e, msg, e->gibbs_post, rng, e->chain_ids, n_chains, next_chains, w);
        int64_t used = e->k - e->burn_in;
        double c = used > 0 ? 1.0 / ((double)n_chains * (double)used) : 0.0;
        for (int64_t t = 1; t <= e->k && rc == EBM_OK; t++) {
            rc = step(e, msg, s, rng, e->chain_ids, n_chains, next_chains, w);
            if (rc == EBM_OK && s == e->langevin) {
                /* Langevin moves v only: draw h | v for f. */
                rc = step(e, msg, e->gibbs_post, rng, e->chain_ids, n_chains, next_chains, w);
            }
            if (rc == EBM_OK && t > e->burn_in) {
                rc = add_f_after_step(e, msg, s, 0, n_chains, next_chains, c, x);
            }
        }
        return rc;
    }
    case EBM_ESTIMATOR_UCD:
        rc = posterior_start(e, msg, rng, n, data, ldd, x, draw);
        if (rc == EBM_OK) {
            const telescope_spec spec = {e->gibbs_post, e->gibbs, 1.0 / (double)n, &e->neg, 0,
                                         EBM_ESTIMATOR_STAT_TAU_MEAN, EBM_ESTIMATOR_STAT_TAU_MAX};
            rc = telescope(e, msg, &spec, rng, n, x, y);
        }
        return rc;
    default: /* UCD_LMI */
        rc = local_mode_start(e, msg, rng, n, x, 0, draw);
        if (rc == EBM_OK) {
            const telescope_spec spec = {e->gibbs, e->mh, 1.0 / (double)n, &e->neg, 0,
                                         EBM_ESTIMATOR_STAT_TAU_MEAN, EBM_ESTIMATOR_STAT_TAU_MAX};
            rc = telescope(e, msg, &spec, rng, n, x, y);
        }
        return rc;
    }
}

