/* Local search (Taniguchi et al. 2023, Algs. 1 and 5) and the mean-field
 * fixed point: both are sweeps of block updates over the free units of the
 * even and odd layers, run on the rows that are still moving. */
#include "error.h"
#include "model.h"
#include "rng.h"
#include "energy.h"
#include "kernels.h"
#include "search.h"
#include "threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum relax_mode { RELAX_ARGMIN, RELAX_MEAN };

/* One call's sweep state. The rows still moving are gathered into `work`
 * (contiguous, stride width), so every GEMM runs over those rows only.
 *
 * The incremental argmin path (binary and spin layers, enough rows): every
 * layer's input is kept for every active row in `in` (stride width, layer l
 * at column offset[l]). After a parity's units are set, the inputs of the
 * other parity are updated from the units that flipped, one weight row per
 * flip, when flips are few; when they are many (the first sweeps from
 * noise), the layer's input is recomputed by GEMM as in the plain path. */
typedef struct relax {
    const ebm_model_t *m;
    enum relax_mode mode;
    const uint8_t *clamp; /* NULL, or the caller's mask */
    int64_t ldc;          /* 0: one mask row for all rows */
    uint32_t free_layers; /* layers with at least one free unit in some row */
    float *work;          /* active rows x width */
    int64_t *rows;        /* original row of each active row */
    float *a;             /* plain: active rows x max_size: layer inputs */
    float *change;        /* per active row: largest change in this sweep */
    int64_t *order;       /* the rows of each group, for the caller to fill */
    int32_t *flip;        /* active rows x width: the units that flipped, per layer */
    /* incremental path only (in != NULL) */
    float *in;            /* active rows x width: every layer's input */
    uint32_t valid;       /* layers whose rows of `in` are current */
    float *wt;            /* W_l^T (n_l x n_{l-1}) at wt + w_off[l] */
    int64_t *nflip;       /* active rows x n_layers: how many units flipped */
    /* the caller's rows and sweep counts, to undo a call whose result
     * overflowed (guarded calls only) */
    int guarded;
    float *saved;
    int64_t *saved_sweeps;
} relax;

/* The incremental path's choice, per layer and sweep: a sparse update
 * costs one weight row per flipped unit, a GEMM one weight row per unit but
 * at several times the rate per multiply-add, so a layer whose flips reach
 * 1/SPARSE_RATIO of its units is recomputed by GEMM instead. A quarter
 * suits add_flips, which adds a row's flips four at a time. Both paths give
 * the inputs up to float rounding. */
enum { SPARSE_RATIO = 4, INCREMENTAL_MIN_ROWS = 16 };

static const uint8_t *clamp_row(const relax *rx, int64_t row)
{
    if (rx->clamp == NULL) {
        return NULL;
    }
    return rx->clamp + row * rx->ldc;
}

/* The rows of one set_layer call. */
typedef struct layer_job {
    relax *rx;
    int64_t l, lda;
    const float *a;
} layer_job;

static void set_rows(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const layer_job *c = ctx;
    relax *rx = c->rx;
    const ebm_model_t *m = rx->m;
    const int64_t l = c->l, w = m->width, nl = m->size[l], off = m->column[l];
    const int argmin = rx->mode == RELAX_ARGMIN && m->units[l] != EBM_UNITS_GAUSSIAN;
    const float low = m->units[l] == EBM_UNITS_SPIN ? -1.0f : 0.0f;
    const ebm__kernels *kern = ebm__kern();
    for (int64_t i = begin; i < end; i++) {
        const uint8_t *cl = clamp_row(rx, rx->rows[i]);
        float *xl = rx->work + i * w + off;
        const float *ar = c->a + i * c->lda;
        int32_t *flip = rx->flip + i * w + off;
        int64_t k = 0;
        float change = rx->change[i];
        if (argmin) {
            /* Ties go up (Taniguchi eqs. 15-17 with 1_{a >= 0}). */
            k = kern->argmin(nl, ar, low, cl == NULL ? NULL : cl + off, xl, flip);
            change = k > 0 ? 1.0f : change;
        } else {
            for (int64_t j = 0; j < nl; j++) {
                if (cl == NULL || !cl[off + j]) {
                    const float d = fabsf(ar[j] - xl[j]);
                    change = d > change ? d : change;
                    xl[j] = ar[j];
                }
            }
        }
        rx->change[i] = change;
        if (rx->in != NULL) {
            rx->nflip[i * m->n_layers + l] = k;
        }
    }
}

/* Set the free units of layer l of `active` rows from their inputs a (row
 * stride lda): argmins or means. Incremental path: record the flips. */
static void set_layer(relax *rx, int64_t l, int64_t active, const float *a, int64_t lda)
{
    layer_job c = {rx, l, lda, a};
    ebm__for_rows(active, active * rx->m->size[l], 0, set_rows, &c);
}

/* The rows of one neighbour's update in propagate_flips: the flips of
 * layer l added to the inputs of layer t. */
typedef struct flips_job {
    relax *rx;
    int64_t l, t;
    float step;          /* 2 for spins, 1 for binary units */
    const float *wrows;  /* the weight rows that carry layer l's units to t */
} flips_job;

static void add_rows(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const flips_job *c = ctx;
    relax *rx = c->rx;
    const ebm_model_t *m = rx->m;
    const int64_t w = m->width, nt = m->size[c->t];
    const ebm__kernels *kern = ebm__kern();
    for (int64_t i = begin; i < end; i++) {
        const int64_t o = i * w + m->column[c->l];
        kern->add_flips(nt, rx->nflip[i * m->n_layers + c->l], rx->flip + o, rx->work + o,
                        c->step, c->wrows, nt, rx->in + i * w + m->column[c->t]);
    }
}

/* Incremental path: add the flips of layer l (just set) to the inputs of
 * its neighbours whose inputs are current and would stay cheap to update;
 * the others are marked stale and recomputed when next needed. */
static void propagate_flips(relax *rx, int64_t l, int64_t active)
{
    const ebm_model_t *m = rx->m;
    const int64_t nl = m->size[l];
    int64_t total = 0;
    for (int64_t i = 0; i < active; i++) {
        total += rx->nflip[i * m->n_layers + l];
    }
    for (int64_t t = l - 1; t <= l + 1; t += 2) {
        if (t < 0 || t >= m->n_layers || !(rx->valid >> t & 1u)) {
            continue;
        }
        if (total * SPARSE_RATIO >= active * nl) {
            rx->valid &= ~(1u << t);
            continue;
        }
        /* W_{l+1} row j carries unit j of l up; W_l^T row j carries it down. */
        const int64_t nt = m->size[t];
        const float *wrows = t > l ? m->params + m->w_off[l + 1] : rx->wt + m->w_off[l];
        flips_job c = {rx, l, t, m->units[l] == EBM_UNITS_SPIN ? 2.0f : 1.0f, wrows};
        ebm__for_rows(active, total * nt, 0, add_rows, &c);
    }
}

/* Update the free units of every layer of one parity in `active` rows. */
static void update_parity(relax *rx, int parity, int64_t active)
{
    const ebm_model_t *m = rx->m;
    const int64_t w = m->width;
    for (int64_t l = parity; l < m->n_layers; l += 2) {
        if (!(rx->free_layers >> l & 1u)) {
            continue;
        }
        const int64_t nl = m->size[l];
        if (rx->in == NULL) {
            ebm__layer_input(m, l, active, rx->work, w, rx->a, nl);
            if (rx->mode == RELAX_MEAN) {
                ebm__mean_from_input(m, l, active, rx->a, nl);
            }
            set_layer(rx, l, active, rx->a, nl);
            continue;
        }
        float *in = rx->in + m->column[l];
        if (!(rx->valid >> l & 1u)) {
            ebm__layer_input(m, l, active, rx->work, w, in, w);
            rx->valid |= 1u << l;
        }
        set_layer(rx, l, active, in, w);
        propagate_flips(rx, l, active);
    }
}

/*
 * Sweep the rows list[0..count) of x, first parity `first` then the other,
 * until a sweep moves no unit by more than tol (a row leaves the batch after
 * that sweep) or max_sweeps sweeps. sweeps[row] gets the sweeps made.
 * Returns the number of rows stopped by the cap.
 */
static int64_t relax_rows(relax *rx, float *x, int64_t ldx, const int64_t *list, int64_t count,
                          int first, int64_t max_sweeps, float tol, int64_t *sweeps)
{
    const int64_t w = rx->m->width;
    for (int64_t i = 0; i < count; i++) {
        memcpy(rx->work + i * w, x + list[i] * ldx, (size_t)w * sizeof *x);
        rx->rows[i] = list[i];
    }
    int64_t active = count;
    rx->valid = 0;
    for (int64_t t = 1; t <= max_sweeps && active > 0; t++) {
        memset(rx->change, 0, (size_t)active * sizeof *rx->change);
        update_parity(rx, first, active);
        update_parity(rx, 1 - first, active);
        /* Converged rows go home; the last active row takes their place. */
        for (int64_t i = active - 1; i >= 0; i--) {
            if (rx->change[i] > tol) {
                continue;
            }
            memcpy(x + rx->rows[i] * ldx, rx->work + i * w, (size_t)w * sizeof *x);
            if (sweeps != NULL) {
                sweeps[rx->rows[i]] = t;
            }
            active--;
            if (i != active) {
                memcpy(rx->work + i * w, rx->work + active * w, (size_t)w * sizeof *x);
                rx->rows[i] = rx->rows[active];
                rx->change[i] = rx->change[active];
                if (rx->in != NULL) {
                    memcpy(rx->in + i * w, rx->in + active * w, (size_t)w * sizeof *x);
                }
            }
        }
    }
    for (int64_t i = 0; i < active; i++) {
        memcpy(x + rx->rows[i] * ldx, rx->work + i * w, (size_t)w * sizeof *x);
        if (sweeps != NULL) {
            sweeps[rx->rows[i]] = max_sweeps;
        }
    }
    return active;
}

static void relax_free(relax *rx)
{
    free(rx->work);
    free(rx->rows);
    free(rx->a);
    free(rx->change);
    free(rx->order);
    free(rx->in);
    free(rx->wt);
    free(rx->flip);
    free(rx->nflip);
    free(rx->saved);
    free(rx->saved_sweeps);
}

/* Keep a copy of the n rows of x and of sweeps (NULL: none), if guarded. */
static void relax_save(relax *rx, int64_t n, const float *x, int64_t ldx, const int64_t *sweeps)
{
    const int64_t w = rx->m->width;
    if (!rx->guarded) {
        return;
    }
    for (int64_t r = 0; r < n; r++) {
        memcpy(rx->saved + r * w, x + r * ldx, (size_t)w * sizeof *x);
    }
    if (sweeps != NULL) {
        memcpy(rx->saved_sweeps, sweeps, (size_t)n * sizeof *sweeps);
    }
}

/* Put back what relax_save kept. */
static void relax_undo(const relax *rx, int64_t n, float *x, int64_t ldx, int64_t *sweeps)
{
    const int64_t w = rx->m->width;
    for (int64_t r = 0; r < n; r++) {
        memcpy(x + r * ldx, rx->saved + r * w, (size_t)w * sizeof *x);
    }
    if (sweeps != NULL) {
        memcpy(sweeps, rx->saved_sweeps, (size_t)n * sizeof *sweeps);
    }
}

/* Scratch of the incremental path, and W_l^T for the downward updates. */
static int incremental_setup(relax *rx, int64_t rows)
{
    const ebm_model_t *m = rx->m;
    const int64_t nw = m->b_off[0]; /* the weights come first in params */
    rx->in = malloc((size_t)(rows * m->width) * sizeof *rx->in);
    rx->wt = malloc((size_t)nw * sizeof *rx->wt);
    rx->nflip = malloc((size_t)(rows * m->n_layers) * sizeof *rx->nflip);
    if (rx->in == NULL || rx->wt == NULL || rx->nflip == NULL) {
        return EBM_ENOMEM;
    }
    for (int64_t l = 1; l < m->n_layers; l++) {
        const int64_t nb = m->size[l - 1], nl = m->size[l];
        const float *wl = m->params + m->w_off[l];
        float *t = rx->wt + m->w_off[l];
        for (int64_t i = 0; i < nb; i++) {
            for (int64_t j = 0; j < nl; j++) {
                t[j * nb + i] = wl[i * nl + j];
            }
        }
    }
    return EBM_OK;
}

/* Find the layers with free units and allocate scratch (freed on failure). */
static int relax_setup(relax *rx, const ebm_model_t *m, ebm__msg *msg, enum relax_mode mode,
                       int64_t n, const uint8_t *clamp, int64_t ldc)
{
    memset(rx, 0, sizeof *rx);
    rx->m = m;
    rx->mode = mode;
    rx->clamp = clamp;
    rx->ldc = ldc;
    int64_t mask_rows = clamp == NULL ? 0 : (ldc == 0 ? 1 : n);
    rx->free_layers = clamp == NULL ? ebm__all_layers(m) : 0;
    for (int64_t r = 0; r < mask_rows; r++) {
        for (int64_t l = 0; l < m->n_layers; l++) {
            const uint8_t *c = clamp + r * ldc + m->column[l];
            for (int64_t j = 0; j < m->size[l] && !(rx->free_layers >> l & 1u); j++) {
                if (!c[j]) {
                    rx->free_layers |= 1u << l;
                }
            }
        }
    }
    /* Binary and spin argmins are 1 or the lower value and clamped units
     * keep the caller's valid ones, so only means and a Gaussian layer's
     * argmins (its input) can overflow. */
    rx->guarded = mode == RELAX_MEAN;
    for (int64_t l = 0; l < m->n_layers; l++) {
        rx->guarded |= m->units[l] != EBM_UNITS_BINARY && m->units[l] != EBM_UNITS_SPIN;
    }
    int64_t rows = n > 0 ? n : 1;
    rx->work = malloc((size_t)(rows * m->width) * sizeof *rx->work);
    rx->rows = malloc((size_t)rows * sizeof *rx->rows);
    rx->a = malloc((size_t)(rows * m->max_size) * sizeof *rx->a);
    rx->change = malloc((size_t)rows * sizeof *rx->change);
    rx->order = malloc((size_t)rows * sizeof *rx->order);
    rx->flip = malloc((size_t)(rows * m->width) * sizeof *rx->flip);
    if (rx->guarded) {
        rx->saved = malloc((size_t)(rows * m->width) * sizeof *rx->saved);
        rx->saved_sweeps = malloc((size_t)rows * sizeof *rx->saved_sweeps);
    }
    if (rx->work == NULL || rx->rows == NULL || rx->a == NULL || rx->change == NULL ||
        rx->order == NULL || rx->flip == NULL ||
        (rx->guarded && (rx->saved == NULL || rx->saved_sweeps == NULL))) {
        relax_free(rx);
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for %lld rows of scratch", (long long)n);
    }
    int incremental = mode == RELAX_ARGMIN && n >= INCREMENTAL_MIN_ROWS;
    for (int64_t l = 0; l < m->n_layers; l++) {
        incremental = incremental && m->units[l] != EBM_UNITS_GAUSSIAN;
    }
    if (incremental && incremental_setup(rx, rows) != EBM_OK) {
        relax_free(rx);
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for %lld rows of scratch", (long long)n);
    }
    return EBM_OK;
}

int ebm__local_search(const ebm_model_t *m, ebm__msg *msg, ebm_rng_t *rng, const int64_t *ids,
                      int64_t n, float *x, int64_t ldx, const uint8_t *clamp, int64_t ldc,
                      int64_t max_sweeps, int64_t *sweeps)
{
    relax rx;
    EBM__PROPAGATE(relax_setup(&rx, m, msg, RELAX_ARGMIN, n, clamp, ldc));
    int64_t capped = 0;
    relax_save(&rx, n, x, ldx, sweeps);
    const ebm__rng_mark rng_saved = ebm__rng_save(rng);
    if (n > 0) {
        /* Per row a coin (Alg. 1: u < 0.5 updates the even layers first). The
         * even-first rows fill `order` from the front, the others from the back. */
        ebm__stream s = ebm__rng_take_stream(rng);
        int64_t *order = rx.order, n_even = 0, n_odd = 0;
        for (int64_t r = 0; r < n; r++) {
            float u;
            ebm__stream_uniform(&s, ebm__row_id(ids, r), 0, 1, &u);
            if (u < 0.5f) {
                order[n_even++] = r;
            } else {
                order[n - 1 - n_odd++] = r;
            }
        }
        capped += relax_rows(&rx, x, ldx, order, n_even, 0, max_sweeps, 0.0f, sweeps);
        capped += relax_rows(&rx, x, ldx, order + n_even, n_odd, 1, max_sweeps, 0.0f, sweeps);
    }
    if (rx.guarded && ebm__check_states(m, msg, "x", ebm__all_layers(m), n, x, ldx) != EBM_OK) {
        relax_undo(&rx, n, x, ldx, sweeps);
        relax_free(&rx);
        ebm__rng_restore(rng, &rng_saved);
        return ebm__fail_overflow(msg, "local search");
    }
    relax_free(&rx);
    return capped > INT32_MAX ? INT32_MAX : (int)capped;
}

int ebm_model_local_search(const ebm_model_t *m, ebm_rng_t *rng, int64_t n, float *x, int64_t ldx,
                           const uint8_t *clamp, int64_t ldc, int64_t max_sweeps, int64_t *sweeps)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = rng == NULL ? ebm__fail(&msg, EBM_ENULL, "rng is NULL") : EBM_OK;
    if (rc == EBM_OK && ebm__is_potts(m, 0)) {
        rc = ebm__fail(&msg, EBM_EUNSUPPORTED,
                       "local search flips single units; it does not move Potts sites yet");
    }
    if (rc == EBM_OK && ebm__is_drelu(m, 1)) {
        rc = ebm__fail(&msg, EBM_EUNSUPPORTED,
                       "local search flips single units; it does not move dReLU units yet");
    }
    if (rc == EBM_OK && max_sweeps < 1) {
        rc = ebm__fail(&msg, EBM_EVALUE, "max_sweeps is %lld; it must be >= 1",
                       (long long)max_sweeps);
    }
    if (rc == EBM_OK) {
        rc = ebm__check_matrix(&msg, "x", n, x, ldx, m->width);
    }
    if (rc == EBM_OK) {
        rc = ebm__check_clamp(m, &msg, n, clamp, ldc);
    }
    if (rc == EBM_OK) {
        rc = ebm__check_states(m, &msg, "x", ebm__all_layers(m), n, x, ldx);
    }
    if (rc == EBM_OK) {
        rc = ebm__local_search(m, &msg, rng, NULL, n, x, ldx, clamp, ldc, max_sweeps, sweeps);
    }
    return rc < 0 ? ebm__model_set_error(m, rc, &msg) : rc;
}

/* Means must lie in the range of the units: [0,1], [-1,1], or be finite. */
static int check_means(const ebm_model_t *m, ebm__msg *msg, int64_t n, const float *mu,
                       int64_t ldmu)
{
    for (int64_t r = 0; r < n; r++) {
        for (int64_t l = 0; l < m->n_layers; l++) {
            const float *v = mu + r * ldmu + m->column[l];
            float lo = m->units[l] == EBM_UNITS_SPIN ? -1.0f : 0.0f;
            for (int64_t j = 0; j < m->size[l]; j++) {
                int ok = m->units[l] == EBM_UNITS_GAUSSIAN ? isfinite(v[j])
                                                           : (v[j] >= lo && v[j] <= 1.0f);
                if (!ok) {
                    return ebm__fail(msg, EBM_EVALUE,
                                     "mu: row %lld, unit %lld (layer %lld, unit %lld) is %g; "
                                     "means of this layer %s",
                                     (long long)r, (long long)(m->column[l] + j), (long long)l,
                                     (long long)j, (double)v[j],
                                     m->units[l] == EBM_UNITS_GAUSSIAN ? "must be finite"
                                     : lo < 0.0f                       ? "lie in [-1, 1]"
                                                                       : "lie in [0, 1]");
                }
            }
            const int64_t q = m->categories[l];
            for (int64_t i = 0; q > 1 && i < m->size[l]; i += q) {
                double sum = 0.0;
                for (int64_t k = 0; k < q; k++) {
                    sum += v[i + k];
                }
                if (!(fabs(sum - 1.0) <= 1e-4)) {
                    return ebm__fail(msg, EBM_EVALUE,
                                     "mu: row %lld, site %lld of layer %lld (units %lld to %lld) "
                                     "sums to %g; a Potts site's means sum to 1",
                                     (long long)r, (long long)(i / q), (long long)l,
                                     (long long)(m->column[l] + i),
                                     (long long)(m->column[l] + i + q - 1), sum);
                }
            }
        }
    }
    return EBM_OK;
}

int ebm__mean_field(const ebm_model_t *m, ebm__msg *msg, int64_t n, float *mu, int64_t ldmu,
                    const uint8_t *clamp, int64_t ldc, int64_t max_iter, double tol)
{
    relax rx;
    EBM__PROPAGATE(relax_setup(&rx, m, msg, RELAX_MEAN, n, clamp, ldc));
    for (int64_t r = 0; r < n; r++) {
        rx.order[r] = r;
    }
    relax_save(&rx, n, mu, ldmu, NULL);
    /* Odd layers first: with the visible layer clamped they see data. */
    int64_t missed = relax_rows(&rx, mu, ldmu, rx.order, n, 1, max_iter, (float)tol, NULL);
    if (check_means(m, msg, n, mu, ldmu) != EBM_OK) {
        relax_undo(&rx, n, mu, ldmu, NULL);
        relax_free(&rx);
        return ebm__fail_overflow(msg, "mean field");
    }
    relax_free(&rx);
    return missed > INT32_MAX ? INT32_MAX : (int)missed;
}

int ebm_model_mean_field(const ebm_model_t *m, int64_t n, float *mu, int64_t ldmu,
                         const uint8_t *clamp, int64_t ldc, int64_t max_iter, double tol)
{
    if (m == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = EBM_OK;
    if (ebm__is_drelu(m, 1)) {
        rc = ebm__fail(&msg, EBM_EUNSUPPORTED,
                       "mean field is not supported for dReLU hidden units yet");
    } else if (max_iter < 1) {
        rc = ebm__fail(&msg, EBM_EVALUE, "max_iter is %lld; it must be >= 1", (long long)max_iter);
    } else if (!(tol >= 0) || !isfinite(tol)) {
        rc = ebm__fail(&msg, EBM_EVALUE, "tol is %g; it must be finite and >= 0", tol);
    }
    if (rc == EBM_OK) {
        rc = ebm__check_matrix(&msg, "mu", n, mu, ldmu, m->width);
    }
    if (rc == EBM_OK) {
        rc = ebm__check_clamp(m, &msg, n, clamp, ldc);
    }
    if (rc == EBM_OK) {
        rc = check_means(m, &msg, n, mu, ldmu);
    }
    if (rc == EBM_OK) {
        rc = ebm__mean_field(m, &msg, n, mu, ldmu, clamp, ldc, max_iter, tol);
    }
    return rc < 0 ? ebm__model_set_error(m, rc, &msg) : rc;
}
