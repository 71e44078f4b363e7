/* The sampler handle: options, statistics, scratch, argument checks, and
 * the single-chain Gibbs and Metropolis-Hastings kernels. */
#include "error.h"
#include "model.h"
#include "rng.h"
#include "energy.h"
#include "conditional.h"
#include "kernels.h"
#include "sampler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(int kind)
{
    switch (kind) {
    case EBM_SAMPLER_GIBBS: return "EBM_SAMPLER_GIBBS";
    case EBM_SAMPLER_MH_UNIFORM: return "EBM_SAMPLER_MH_UNIFORM";
    case EBM_SAMPLER_LANGEVIN: return "EBM_SAMPLER_LANGEVIN";
    case EBM_SAMPLER_GIBBS_LANGEVIN: return "EBM_SAMPLER_GIBBS_LANGEVIN";
    default: return "unknown";
    }
}

/* ---- handle ----------------------------------------------------------- */

int ebm_sampler_create(ebm_sampler_t **out, const ebm_model_t *m, int kind)
{
    ebm__msg msg;
    if (out != NULL) {
        *out = NULL;
    }
    if (m == NULL) {
        return EBM_ENULL;
    }
    if (out == NULL) {
        return ebm__model_set_error(m, ebm__fail(&msg, EBM_ENULL, "out is NULL"), &msg);
    }
    if (kind < EBM_SAMPLER_GIBBS || kind > EBM_SAMPLER_GIBBS_LANGEVIN) {
        return ebm__model_set_error(
            m,
            ebm__fail(&msg, EBM_EVALUE,
                      "kind is %d; it must be EBM_SAMPLER_GIBBS (0), EBM_SAMPLER_MH_UNIFORM (1), "
                      "EBM_SAMPLER_LANGEVIN (2) or EBM_SAMPLER_GIBBS_LANGEVIN (3)",
                      kind),
            &msg);
    }
    if ((kind == EBM_SAMPLER_LANGEVIN || kind == EBM_SAMPLER_GIBBS_LANGEVIN) &&
        (m->n_layers != 2 || !ebm__is_gaussian(m, 0))) {
        return ebm__model_set_error(
            m,
            ebm__fail(&msg, EBM_EUNSUPPORTED,
                      "%s needs a GRBM (2 layers, Gaussian visible units); this model has %lld "
                      "layers and %s visible units",
                      kind_name(kind), (long long)m->n_layers,
                      ebm__is_gaussian(m, 0) ? "Gaussian" : "discrete"),
            &msg);
    }
    ebm_sampler_t *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return ebm__model_set_error(m, ebm__fail(&msg, EBM_ENOMEM, "out of memory"), &msg);
    }
    s->m = m;
    s->kind = kind;
    s->coupling = EBM_COUPLING_CRN;
    s->langevin_steps = kind == EBM_SAMPLER_GIBBS_LANGEVIN ? 10 : 1;
    s->step_size = 0.01;
    /* LANGEVIN's default is one step per call, which a cosine schedule over
     * the call's steps would make a step of size 0. */
    s->cosine = kind == EBM_SAMPLER_GIBBS_LANGEVIN;
    s->adjust_after = -1;
    s->closed_form = 1;
    s->stat[EBM_STAT_ACCEPT_RATE] = 1.0;
    *out = s;
    return EBM_OK;
}

void ebm_sampler_destroy(ebm_sampler_t *s)
{
    if (s == NULL) {
        return;
    }
    free(s->fbuf);
    free(s->dbuf);
    free(s->ibuf);
    free(s);
}

const char *ebm_sampler_errmsg(const ebm_sampler_t *s)
{
    return s == NULL ? "sampler is NULL" : s->errmsg;
}

static int sampler_error(ebm_sampler_t *s, int code, const ebm__msg *msg)
{
    ebm__copy_text(s->errmsg, sizeof s->errmsg, msg->text);
    return code;
}

double ebm_sampler_stat(const ebm_sampler_t *s, int stat)
{
    if (s == NULL || stat < 0 || stat >= EBM__N_SAMPLER_STATS) {
        return NAN;
    }
    return stat == EBM_STAT_ITERATION ? (double)s->iteration : s->stat[stat];
}

/* Grow a scratch buffer; contents are not kept. */
static void *grow(void **buf, size_t *cap, size_t n, size_t elem)
{
    if (n > *cap) {
        size_t want = n + n / 2;
        void *p = realloc(*buf, want * elem);
        if (p == NULL) {
            return NULL;
        }
        *buf = p;
        *cap = want;
    }
    return *buf;
}

float *ebm__sampler_floats(ebm_sampler_t *s, size_t n)
{
    return grow((void **)&s->fbuf, &s->fcap, n > 0 ? n : 1, sizeof(float));
}

double *ebm__sampler_doubles(ebm_sampler_t *s, size_t n)
{
    return grow((void **)&s->dbuf, &s->dcap, n > 0 ? n : 1, sizeof(double));
}

int64_t *ebm__sampler_indices(ebm_sampler_t *s, size_t n)
{
    return grow((void **)&s->ibuf, &s->icap, n > 0 ? n : 1, sizeof(int64_t));
}

uint32_t ebm__free_layers(const ebm_sampler_t *s, int parity)
{
    uint32_t mask = 0;
    for (int64_t l = parity; l < s->m->n_layers; l += 2) {
        mask |= 1u << l;
    }
    return mask & ~s->clamp_layers;
}

ebm__stream ebm__stream_for_try(const ebm__stream *base, uint64_t k)
{
    ebm__stream t = *base;
    uint64_t state = base->seq ^ (k * 0x9e3779b97f4a7c15ULL);
    t.seq = ebm__splitmix64(&state);
    return t;
}

/* ---- options ---------------------------------------------------------- */

static const char *option_name(int option)
{
    static const char *const names[] = {
        "EBM_SAMPLER_CLAMP_LAYERS", "EBM_SAMPLER_COUPLING",          "EBM_SAMPLER_LANGEVIN_STEPS",
        "EBM_SAMPLER_STEP_SIZE",    "EBM_SAMPLER_COSINE",            "EBM_SAMPLER_ADJUST_AFTER",
        "EBM_SAMPLER_SCALE_BY_VARIANCE", "EBM_SAMPLER_CLOSED_FORM", "EBM_SAMPLER_ITERATION"};
    return (option >= 0 && option <= EBM_SAMPLER_ITERATION) ? names[option] : "unknown";
}

int ebm_sampler_set_int(ebm_sampler_t *s, int option, int64_t value)
{
    if (s == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int flag = value == 0 || value == 1;
    switch (option) {
    case EBM_SAMPLER_CLAMP_LAYERS:
        if (value < 0 || (uint64_t)value > ebm__all_layers(s->m)) {
            break;
        }
        s->clamp_layers = (uint32_t)value;
        return EBM_OK;
    case EBM_SAMPLER_COUPLING:
        if (value != EBM_COUPLING_MAXIMAL && value != EBM_COUPLING_CRN) {
            break;
        }
        s->coupling = (int)value;
        return EBM_OK;
    case EBM_SAMPLER_LANGEVIN_STEPS:
        if (value < 1 || value > 1000000) {
            break;
        }
        s->langevin_steps = value;
        return EBM_OK;
    case EBM_SAMPLER_COSINE:
        if (!flag) {
            break;
        }
        s->cosine = (int)value;
        return EBM_OK;
    case EBM_SAMPLER_ADJUST_AFTER:
        if (value < -1) {
            break;
        }
        s->adjust_after = value;
        return EBM_OK;
    case EBM_SAMPLER_SCALE_BY_VARIANCE:
        if (!flag) {
            break;
        }
        s->scale_by_variance = (int)value;
        return EBM_OK;
    case EBM_SAMPLER_CLOSED_FORM:
        if (!flag) {
            break;
        }
        s->closed_form = (int)value;
        return EBM_OK;
    case EBM_SAMPLER_ITERATION:
        if (value < 0) {
            break;
        }
        s->iteration = value;
        return EBM_OK;
    case EBM_SAMPLER_STEP_SIZE:
        return sampler_error(s,
                             ebm__fail(&msg, EBM_EVALUE,
                                       "option %d (%s) takes a double: use ebm_sampler_set_double",
                                       option, option_name(option)),
                             &msg);
    default:
        return sampler_error(s, ebm__fail(&msg, EBM_EVALUE, "option %d is unknown", option), &msg);
    }
    static const char *const range[] = {
        "a mask of the model's layers", "EBM_COUPLING_MAXIMAL (0) or EBM_COUPLING_CRN (1)",
        "1 to 1000000", "", "0 or 1", "-1 or more", "0 or 1", "0 or 1", "0 or more"};
    return sampler_error(s,
                         ebm__fail(&msg, EBM_EVALUE,
                                   "option %d (%s): value %lld is out of range; it takes %s%s",
                                   option, option_name(option), (long long)value, range[option],
                                   option == EBM_SAMPLER_CLAMP_LAYERS
                                       ? ", bits 0 to L of a model of L + 1 layers"
                                       : ""),
                         &msg);
}

int ebm_sampler_set_double(ebm_sampler_t *s, int option, double value)
{
    if (s == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    if (option != EBM_SAMPLER_STEP_SIZE) {
        return sampler_error(
            s,
            ebm__fail(&msg, EBM_EVALUE, "option %d (%s) is not a double option", option,
                      option_name(option)),
            &msg);
    }
    if (!(value > 0) || !isfinite(value)) {
        return sampler_error(
            s, ebm__fail(&msg, EBM_EVALUE, "EBM_SAMPLER_STEP_SIZE is %g; it must be finite and > 0",
                         value),
            &msg);
    }
    s->step_size = value;
    return EBM_OK;
}

/* ---- single-chain kernels --------------------------------------------- */

int ebm__gibbs_sweep(const ebm_sampler_t *s, const ebm__stream *layer_streams,
                     const int64_t *rows, int64_t n, float *x, int64_t ldx, float *a)
{
    const ebm_model_t *m = s->m;
    /* Even layers given the odd ones, then odd given even. */
    for (int parity = 0; parity < 2; parity++) {
        uint32_t layers = ebm__free_layers(s, parity);
        for (int64_t l = parity; l < m->n_layers; l += 2) {
            if (layers >> l & 1u) {
                ebm__layer_input(m, l, n, x, ldx, a, m->size[l]);
                if (!ebm__kern()->values_ok(n * m->size[l], a, EBM_UNITS_GAUSSIAN)) {
                    return 0;
                }
                ebm__sample_from_input(m, l, &layer_streams[l], rows, 0, n, a, m->size[l],
                                       x + m->offset[l], ldx);
                for (int64_t r = 0; r < n && ebm__is_gaussian(m, l); r++) {
                    if (!ebm__kern()->values_ok(m->size[l], x + r * ldx + m->offset[l],
                                                EBM_UNITS_GAUSSIAN)) {
                        return 0; /* a draw of a finite mean overflowed */
                    }
                }
            }
        }
    }
    return 1;
}

int ebm__gibbs_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                    int64_t n, float *x, int64_t ldx, int keep)
{
    const int64_t w = s->m->width;
    float *a = ebm__sampler_floats(s, (size_t)(n * s->m->max_size + (keep ? n * w : 0)));
    if (a == NULL) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for %lld rows of inputs", (long long)n);
    }
    float *saved = a + n * s->m->max_size; /* x, to undo a sweep that overflowed */
    for (int64_t r = 0; r < n && keep; r++) {
        memcpy(saved + r * w, x + r * ldx, (size_t)w * sizeof *x);
    }
    ebm__stream streams[EBM_MAX_LAYERS];
    ebm__take_streams(rng, (int)s->m->n_layers, streams);
    if (!ebm__gibbs_sweep(s, streams, ids, n, x, ldx, a)) {
        for (int64_t r = 0; r < n && keep; r++) {
            memcpy(x + r * ldx, saved + r * w, (size_t)w * sizeof *x);
        }
        return ebm__fail_overflow(msg, "Gibbs sweep");
    }
    s->stat[EBM_STAT_ACCEPT_RATE] = 1.0;
    /* With one odd layer (two or three layers) the sweep ends with layer 1
     * drawn from its input at the new state, left in a. */
    s->hidden_input = s->m->n_layers <= 3 && (ebm__free_layers(s, 1) & 2u) ? a : NULL;
    return EBM_OK;
}

/*
 * The MH kernel with a uniform independent proposal (Taniguchi eq. 14), for
 * one chain (y NULL) or two coupled by a common proposal and a common
 * uniform (Taniguchi Algs. 3 and 4): x accepts iff log u < E(x) - E(x'), y
 * iff log u < E(y) - E(x'). Energies in double. Rows in chunks; stream rows
 * are the caller's row numbers, so chunking changes nothing.
 */
/* Energies of a chunk's rows: float GEMMs when every layer is binary or
 * spin (t != NULL), else the double path. */
static void mh_energies(const ebm_model_t *m, int64_t rows, const float *x, int64_t ldx, double *e,
                        float *t, double *work)
{
    if (t != NULL) {
        ebm__energy_fast(m, rows, x, ldx, e, t);
    } else {
        ebm__free_energy_chunk(m, 0, rows, x, ldx, e, work);
    }
}

/* log u < E(a) - E(b), decided from the float energies when they are
 * further than the sum of their error bounds from the threshold (then the
 * exact and the double-precision decisions agree with it), else recomputed
 * in double for this row, as the plain path does. A bound < 0: the
 * energies are the double path's. */
static int mh_accepts(ebm_sampler_t *s, double log_u, const float *a, const float *b,
                      double e_a, double e_b, double bound_a, double bound_b, double *work)
{
    const ebm_model_t *m = s->m;
    double margin = e_a - e_b - log_u;
    if (bound_a < 0.0 || fabs(margin) > bound_a + bound_b) {
        return log_u < e_a - e_b;
    }
    s->energy_rechecks++;
    double ed[2];
    ebm__free_energy_chunk(m, 0, 1, a, 0, &ed[0], work);
    ebm__free_energy_chunk(m, 0, 1, b, 0, &ed[1], work);
    return log_u < ed[0] - ed[1];
}

/*
 * The MH kernel with a uniform independent proposal (Taniguchi eq. 14), for
 * one chain (y NULL) or two coupled by a common proposal and a common
 * uniform (Taniguchi Algs. 3 and 4): x accepts iff log u < E(x) - E(x'), y
 * iff log u < E(y) - E(x'). Energies in double, or (binary and spin
 * models) from float GEMMs with a certified error bound and the double
 * energies where the bound leaves a decision open: the same decisions
 * either way. Rows in chunks; stream rows are the caller's row numbers, so
 * chunking changes nothing.
 */
static int mh_run(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids, int64_t n,
                  float *x, int64_t ldx, float *y, int64_t ldy, uint8_t *met)
{
    const ebm_model_t *m = s->m;
    const int64_t w = m->width, chunk = n < EBM__CHUNK ? n : EBM__CHUNK;
    const int fast = !s->plain_energies && ebm__energy_fast_ok(m);
    /* E(x) from the input of layer 1 that the caller's Gibbs step left */
    const float *entry = fast && m->n_layers <= 3 ? s->entry_input : NULL;
    s->entry_input = NULL;
    float *xp = ebm__sampler_floats(s, (size_t)(2 * chunk * w + w + chunk * m->max_size));
    double *d = ebm__sampler_doubles(s, (size_t)(4 * chunk + ebm__free_energy_scratch(m, chunk)));
    if (xp == NULL || d == NULL) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for MH scratch");
    }
    double *e_x = d, *e_y = d + chunk, *e_p = d + 2 * chunk, *e_yp = d + 3 * chunk;
    double *work = d + 4 * chunk;
    float *yp = xp + chunk * w, *draw = yp + chunk * w, *t = fast ? draw + w : NULL;
    double bound = -1.0, bound_input = -1.0;
    if (fast) {
        ebm__energy_bounds(m, &bound, entry != NULL ? &bound_input : NULL);
    }
    const double bound_x = entry != NULL ? bound_input : bound;
    ebm__stream streams[2];
    ebm__take_streams(rng, 2, streams); /* proposal, acceptance */
    uint32_t layers = ebm__free_layers(s, 0) | ebm__free_layers(s, 1);
    int64_t accepted = 0, decisions = 0, n_met = 0;
    for (int64_t r0 = 0; r0 < n; r0 += chunk) {
        int64_t rows = n - r0 < chunk ? n - r0 : chunk;
        float *xc = x + r0 * ldx, *yc = y == NULL ? NULL : y + r0 * ldy;
        for (int64_t r = 0; r < rows; r++) {
            int64_t id = ebm__row_id(ids, r0 + r);
            memcpy(xp + r * w, xc + r * ldx, (size_t)w * sizeof *xp);
            ebm__random_units(m, &streams[0], &id, 1, xp + r * w, w, layers, NULL, 0, draw);
        }
        if (entry != NULL) {
            ebm__energy_from_input(m, rows, xc, ldx, entry + r0 * m->size[1], e_x);
        } else {
            mh_energies(m, rows, xc, ldx, e_x, t, work);
        }
        mh_energies(m, rows, xp, w, e_p, t, work);
        if (yc != NULL) {
            /* y's proposal: the common free units, y's own clamped units (the
             * same as x's proposal when the clamps agree, as in UCD-LMI). */
            int clamps_differ = 0;
            for (int64_t r = 0; r < rows; r++) {
                float *q = yp + r * w;
                memcpy(q, xp + r * w, (size_t)w * sizeof *q);
                for (int64_t l = 0; l < m->n_layers; l++) {
                    if (!(layers >> l & 1u)) {
                        memcpy(q + m->offset[l], yc + r * ldy + m->offset[l],
                               (size_t)m->size[l] * sizeof *q);
                    }
                }
                clamps_differ |= !ebm__rows_equal(q, xp + r * w, w);
            }
            mh_energies(m, rows, yc, ldy, e_y, t, work);
            if (clamps_differ) {
                mh_energies(m, rows, yp, w, e_yp, t, work);
            } else {
                memcpy(e_yp, e_p, (size_t)rows * sizeof *e_yp);
            }
        }
        for (int64_t r = 0; r < rows; r++) {
            float u;
            ebm__stream_uniform(&streams[1], ebm__row_id(ids, r0 + r), 0, 1, &u);
            double log_u = log((double)u); /* -inf for u = 0: always accepts */
            float *xr = xc + r * ldx, *yr = yc == NULL ? NULL : yc + r * ldy;
            int together = yr != NULL && ebm__rows_equal(xr, yr, w);
            if (mh_accepts(s, log_u, xr, xp + r * w, e_x[r], e_p[r], bound_x, bound, work)) {
                memcpy(xr, xp + r * w, (size_t)w * sizeof *xr);
                accepted++;
            }
            decisions++;
            if (yr == NULL) {
                continue;
            }
            if (together) {
                /* Met rows move together and stay equal. */
                memcpy(yr, xr, (size_t)w * sizeof *yr);
            } else {
                if (mh_accepts(s, log_u, yr, yp + r * w, e_y[r], e_yp[r], bound, bound, work)) {
                    memcpy(yr, yp + r * w, (size_t)w * sizeof *yr);
                    accepted++;
                }
                decisions++;
            }
            int equal = ebm__rows_equal(xr, yr, w);
            n_met += equal;
            if (met != NULL) {
                met[r0 + r] = (uint8_t)equal;
            }
        }
    }
    s->stat[EBM_STAT_ACCEPT_RATE] = decisions > 0 ? (double)accepted / (double)decisions : 1.0;
    if (y != NULL) {
        s->stat[EBM_STAT_MET_FRACTION] = n > 0 ? (double)n_met / (double)n : 1.0;
    }
    return EBM_OK;
}

int ebm__mh_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids, int64_t n,
                 float *x, int64_t ldx)
{
    return mh_run(s, msg, rng, ids, n, x, ldx, NULL, 0, NULL);
}

int ebm__coupled_mh_step(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                         int64_t n, float *x, int64_t ldx, float *y, int64_t ldy, uint8_t *met)
{
    return mh_run(s, msg, rng, ids, n, x, ldx, y, ldy, met);
}

/* ---- public steps ----------------------------------------------------- */

/* A step call's statistics start afresh and its counter moves; a failed
 * call undoes both (statistics change only if the call succeeds). The
 * kernels see the counter t of the step they make (1 for the first). */
static void begin_call(ebm_sampler_t *s, int64_t n, double met_fraction, double *saved)
{
    memcpy(saved, s->stat, sizeof s->stat);
    s->stat[EBM_STAT_ROWS] = (double)n;
    s->stat[EBM_STAT_ACCEPT_RATE] = 1.0;
    s->stat[EBM_STAT_MET_FRACTION] = met_fraction;
    s->stat[EBM_STAT_TRIES_MEAN] = 0.0;
    s->stat[EBM_STAT_TRIES_MAX] = 0.0;
    s->hidden_input = NULL;
    s->iteration++;
}

static int undo_call(ebm_sampler_t *s, const double *saved, ebm_rng_t *rng,
                     const ebm__rng_mark *rng_saved, int rc, const ebm__msg *msg)
{
    memcpy(s->stat, saved, sizeof s->stat);
    s->iteration--;
    ebm__rng_restore(rng, rng_saved);
    return sampler_error(s, rc, msg);
}

/* Checks shared by the single and coupled steps for one state matrix. */
static int check_chain(const ebm_sampler_t *s, ebm__msg *msg, const char *name, int64_t n,
                       const float *x, int64_t ldx)
{
    const ebm_model_t *m = s->m;
    int rc = ebm__check_matrix(msg, name, n, x, ldx, m->width);
    if (rc == EBM_OK) {
        rc = ebm__check_states(m, msg, name, ebm__all_layers(m), n, x, ldx);
    }
    if (rc == EBM_OK && s->kind == EBM_SAMPLER_MH_UNIFORM) {
        uint32_t moving = ebm__free_layers(s, 0) | ebm__free_layers(s, 1);
        if (ebm__is_gaussian(m, 0) && (moving & 1u)) {
            rc = ebm__fail(msg, EBM_EUNSUPPORTED,
                           "EBM_SAMPLER_MH_UNIFORM has no uniform proposal for the Gaussian "
                           "visible layer: clamp it (EBM_SAMPLER_CLAMP_LAYERS bit 0)");
        }
    }
    return rc;
}

int ebm_sampler_step(ebm_sampler_t *s, ebm_rng_t *rng, int64_t n, float *x, int64_t ldx)
{
    if (s == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = rng == NULL ? ebm__fail(&msg, EBM_ENULL, "rng is NULL") : EBM_OK;
    if (rc == EBM_OK) {
        rc = check_chain(s, &msg, "x", n, x, ldx);
    }
    if (rc != EBM_OK) {
        return sampler_error(s, rc, &msg);
    }
    double saved[EBM__N_SAMPLER_STATS];
    const ebm__rng_mark rng_saved = ebm__rng_save(rng);
    begin_call(s, n, NAN, saved);
    if (n == 0) {
        return EBM_OK;
    }
    switch (s->kind) {
    case EBM_SAMPLER_GIBBS: rc = ebm__gibbs_step(s, &msg, rng, NULL, n, x, ldx, 1); break;
    case EBM_SAMPLER_MH_UNIFORM: rc = ebm__mh_step(s, &msg, rng, NULL, n, x, ldx); break;
    case EBM_SAMPLER_LANGEVIN: rc = ebm__langevin_step(s, &msg, rng, NULL, n, x, ldx); break;
    default: rc = ebm__gibbs_langevin_step(s, &msg, rng, NULL, n, x, ldx); break;
    }
    return rc == EBM_OK ? rc : undo_call(s, saved, rng, &rng_saved, rc, &msg);
}

int ebm_sampler_coupled_step(ebm_sampler_t *s, ebm_rng_t *rng, int64_t n, float *x, int64_t ldx,
                             float *y, int64_t ldy, uint8_t *met)
{
    if (s == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = rng == NULL ? ebm__fail(&msg, EBM_ENULL, "rng is NULL") : EBM_OK;
    if (rc == EBM_OK && s->kind != EBM_SAMPLER_GIBBS && s->kind != EBM_SAMPLER_MH_UNIFORM) {
        rc = ebm__fail(&msg, EBM_EUNSUPPORTED,
                       "%s has no coupled step; use EBM_SAMPLER_GIBBS (which couples Gaussian "
                       "layers too) or EBM_SAMPLER_MH_UNIFORM",
                       kind_name(s->kind));
    }
    if (rc == EBM_OK) {
        rc = check_chain(s, &msg, "x", n, x, ldx);
    }
    if (rc == EBM_OK) {
        rc = check_chain(s, &msg, "y", n, y, ldy);
    }
    if (rc != EBM_OK) {
        return sampler_error(s, rc, &msg);
    }
    double saved[EBM__N_SAMPLER_STATS];
    const ebm__rng_mark rng_saved = ebm__rng_save(rng);
    begin_call(s, n, 1.0, saved);
    if (n == 0) {
        return EBM_OK;
    }
    rc = s->kind == EBM_SAMPLER_GIBBS
             ? ebm__coupled_gibbs_step(s, &msg, rng, NULL, n, x, ldx, y, ldy, met, 1)
             : ebm__coupled_mh_step(s, &msg, rng, NULL, n, x, ldx, y, ldy, met);
    return rc == EBM_OK ? rc : undo_call(s, saved, rng, &rng_saved, rc, &msg);
}
