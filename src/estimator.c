/* Gradient estimators: CD-k, PCD-k, UCD (Qiu et al. 2020), UCD-LMI
 * (Taniguchi et al. 2023) and the GRBM modified CD (Liao et al. 2022), made
 * of the samplers, local search, mean field and the energy gradients. */
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

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_STATS EBM_ESTIMATOR_STAT_COUNT
/* The largest EBM_ESTIMATOR_K (sweeps or steps per call). */
#define EBM__MAX_K 100000000
/* Telescoping terms kept before they are turned into gradient. */
#define STACK_FLUSH_ROWS 16384

/* A list of state rows with signed coefficients: the terms of telescoping
 * sums, turned into gradients by one energy_grad call per f term. */
typedef struct stack {
    float *x;
    double *c;
    int64_t rows, cap;
} stack;

struct ebm_estimator {
    const ebm_model_t *m;
    int kind;
    /* options */
    int64_t k, max_steps, step_limit, chains_opt, burn_in, search_sweeps, mf_iters;
    int marginalize, positive, sampler_kind;
    double mf_tol;
    /* samplers: joint and with the visible layer clamped */
    ebm_sampler_t *gibbs, *gibbs_post, *mh, *mh_post, *langevin, *gibbs_langevin;
    /* PCD / GRBM_CD persistent chains */
    float *chains;
    int64_t n_chains;
    /* the gradient being built, telescoping terms, and scratch */
    float *g;
    stack pos, neg;
    float *fbuf;
    size_t fcap;
    int64_t *ibuf;
    size_t icap;
    float *gwork; /* ebm__energy_grad_rows' scratch, and its coefficients */
    size_t gwcap;
    double *gcoef;
    size_t gccap;
    /* statistics of the last call */
    double stat[N_STATS];
    double accept_sum, accept_rows, searches;
    int plain; /* tests only: ebm__estimator_set_plain */
    char errmsg[EBM__MSG_SIZE];
};

static const char *kind_name(int kind)
{
    static const char *const names[] = {"EBM_ESTIMATOR_CD", "EBM_ESTIMATOR_PCD",
                                        "EBM_ESTIMATOR_UCD", "EBM_ESTIMATOR_UCD_LMI",
                                        "EBM_ESTIMATOR_GRBM_CD"};
    return (kind >= 0 && kind <= EBM_ESTIMATOR_GRBM_CD) ? names[kind] : "unknown";
}

static int is_grbm(const ebm_model_t *m) { return m->n_layers == 2 && ebm__is_gaussian(m, 0); }

static int fail(ebm_estimator_t *e, int code, const ebm__msg *msg)
{
    ebm__copy_text(e->errmsg, sizeof e->errmsg, msg->text);
    return code;
}

/* ---- scratch ---------------------------------------------------------- */

static int stack_push(stack *st, const float *x, int64_t w, double c)
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
static int f_terms(const ebm_estimator_t *e, uint32_t clamped, uint32_t mask[2], double weight[2])
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
 * the rest, for the term that sums out layer 1 alone (see add_f_after). */
static int add_f(ebm_estimator_t *e, uint32_t clamped, int64_t n, const float *x, int64_t ldx,
                 const double *coef, double scale, const float *xm)
{
    const ebm_model_t *m = e->m;
    uint32_t mask[2];
    double weight[2];
    int terms = f_terms(e, clamped, mask, weight);
    const int64_t chunk = n < 1024 ? n : 1024;
    double *c;
    float *work;
    if (grad_scratch(e, chunk, &work, &c) != EBM_OK) {
        return EBM_ENOMEM;
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
 * scratch: n rows of w.
 */
static int add_f_after(ebm_estimator_t *e, const ebm_sampler_t *s, uint32_t clamped, int64_t n,
                       const float *x, double scale, float *scratch)
{
    const float *hidden_input = ebm__sampler_hidden_input(s);
    const ebm_model_t *m = e->m;
    const int64_t w = m->width, off1 = m->offset[1], n1 = m->size[1];
    uint32_t mask[2];
    double weight[2];
    const int terms = f_terms(e, clamped, mask, weight);
    const int layer1_term = mask[0] == 2u || (terms == 2 && mask[1] == 2u);
    if (e->plain || hidden_input == NULL || !layer1_term) {
        return add_f(e, clamped, n, x, w, NULL, scale, NULL);
    }
    const int binary = m->units[1] == EBM_UNITS_BINARY;
    for (int64_t r = 0; r < n; r++) {
        float *row = scratch + r * w;
        memcpy(row, x + r * w, (size_t)w * sizeof *row);
        if (binary) { /* the mean straight from the input: one pass */
            ebm__kern()->sigmoid(n1, hidden_input + r * n1, row + off1);
        } else {
            memcpy(row + off1, hidden_input + r * n1, (size_t)n1 * sizeof *row);
        }
    }
    if (!binary) {
        ebm__mean_from_input(m, 1, n, scratch + off1, w);
    }
    return add_f(e, clamped, n, x, w, NULL, scale, scratch);
}

/* ---- handle and options ----------------------------------------------- */

int ebm_estimator_create(ebm_estimator_t **out, const ebm_model_t *m, int kind)
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
    if (kind < EBM_ESTIMATOR_CD || kind > EBM_ESTIMATOR_GRBM_CD) {
        return ebm__model_set_error(
            m,
            ebm__fail(&msg, EBM_EVALUE,
                      "kind is %d; it must be EBM_ESTIMATOR_CD (0), _PCD (1), _UCD (2), "
                      "_UCD_LMI (3) or _GRBM_CD (4)",
                      kind),
            &msg);
    }
    if (kind == EBM_ESTIMATOR_GRBM_CD && !is_grbm(m)) {
        return ebm__model_set_error(
            m, ebm__fail(&msg, EBM_EUNSUPPORTED,
                         "EBM_ESTIMATOR_GRBM_CD needs a GRBM (2 layers, Gaussian visible units)"),
            &msg);
    }
    if (kind == EBM_ESTIMATOR_UCD_LMI && ebm__is_gaussian(m, 0)) {
        return ebm__model_set_error(
            m,
            ebm__fail(&msg, EBM_EUNSUPPORTED,
                      "EBM_ESTIMATOR_UCD_LMI's uniform MH proposal has no Gaussian version: use "
                      "EBM_ESTIMATOR_UCD for Gaussian visible units"),
            &msg);
    }
    ebm_estimator_t *e = calloc(1, sizeof *e);
    if (e == NULL) {
        return ebm__model_set_error(m, ebm__fail(&msg, EBM_ENOMEM, "out of memory"), &msg);
    }
    e->m = m;
    e->kind = kind;
    e->k = kind == EBM_ESTIMATOR_UCD_LMI ? 0 : (kind == EBM_ESTIMATOR_GRBM_CD ? 10 : 1);
    e->marginalize = kind == EBM_ESTIMATOR_UCD_LMI ? EBM_MARGINALIZE_BOTH
                     : kind == EBM_ESTIMATOR_GRBM_CD ? EBM_MARGINALIZE_ODD
                                                      : EBM_MARGINALIZE_EVEN;
    e->positive = EBM_POSITIVE_AUTO;
    e->sampler_kind = EBM_SAMPLER_GIBBS;
    e->step_limit = 1000000;
    e->search_sweeps = 10000;
    e->mf_iters = 100;
    e->mf_tol = 1e-5;
    e->g = malloc((size_t)m->n_params * sizeof *e->g);
    int rc = e->g == NULL ? EBM_ENOMEM : EBM_OK;
    if (rc == EBM_OK) {
        rc = ebm_sampler_create(&e->gibbs, m, EBM_SAMPLER_GIBBS);
    }
    if (rc == EBM_OK) {
        rc = ebm_sampler_create(&e->gibbs_post, m, EBM_SAMPLER_GIBBS);
    }
    if (rc == EBM_OK) {
        rc = ebm_sampler_set_int(e->gibbs_post, EBM_SAMPLER_CLAMP_LAYERS, 1);
    }
    if (rc == EBM_OK && !ebm__is_gaussian(m, 0)) {
        rc = ebm_sampler_create(&e->mh, m, EBM_SAMPLER_MH_UNIFORM);
        if (rc == EBM_OK) {
            rc = ebm_sampler_create(&e->mh_post, m, EBM_SAMPLER_MH_UNIFORM);
        }
        if (rc == EBM_OK) {
            rc = ebm_sampler_set_int(e->mh_post, EBM_SAMPLER_CLAMP_LAYERS, 1);
        }
    }
    if (rc == EBM_OK && is_grbm(m)) {
        rc = ebm_sampler_create(&e->langevin, m, EBM_SAMPLER_LANGEVIN);
        if (rc == EBM_OK) {
            rc = ebm_sampler_create(&e->gibbs_langevin, m, EBM_SAMPLER_GIBBS_LANGEVIN);
        }
    }
    if (rc != EBM_OK) {
        ebm_estimator_destroy(e);
        return ebm__model_set_error(m, ebm__fail(&msg, rc, "out of memory"), &msg);
    }
    e->stat[EBM_ESTIMATOR_STAT_ACCEPT_RATE] = 1.0;
    *out = e;
    return EBM_OK;
}

void ebm_estimator_destroy(ebm_estimator_t *e)
{
    if (e == NULL) {
        return;
    }
    ebm_sampler_destroy(e->gibbs);
    ebm_sampler_destroy(e->gibbs_post);
    ebm_sampler_destroy(e->mh);
    ebm_sampler_destroy(e->mh_post);
    ebm_sampler_destroy(e->langevin);
    ebm_sampler_destroy(e->gibbs_langevin);
    free(e->chains);
    free(e->g);
    free(e->pos.x);
    free(e->pos.c);
    free(e->neg.x);
    free(e->neg.c);
    free(e->fbuf);
    free(e->ibuf);
    free(e->gwork);
    free(e->gcoef);
    free(e);
}

const char *ebm_estimator_errmsg(const ebm_estimator_t *e)
{
    return e == NULL ? "estimator is NULL" : e->errmsg;
}

double ebm_estimator_stat(const ebm_estimator_t *e, int stat)
{
    return (e == NULL || stat < 0 || stat >= N_STATS) ? NAN : e->stat[stat];
}

/* The samplers an option reaches, NULL-terminated. */
static int each_sampler(ebm_estimator_t *e, ebm_sampler_t **list)
{
    ebm_sampler_t *all[] = {e->gibbs, e->gibbs_post, e->mh, e->mh_post, e->langevin,
                            e->gibbs_langevin};
    int k = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (all[i] != NULL) {
            list[k++] = all[i];
        }
    }
    return k;
}

static int set_sampler_option(ebm_estimator_t *e, int option, int is_double, int64_t iv,
                              double dv)
{
    ebm__msg msg;
    if (option == EBM_SAMPLER_CLAMP_LAYERS) {
        return fail(e,
                    ebm__fail(&msg, EBM_EVALUE,
                              "EBM_SAMPLER_CLAMP_LAYERS is managed by the estimator and cannot "
                              "be set"),
                    &msg);
    }
    ebm_sampler_t *list[6];
    int count = each_sampler(e, list);
    /* The first sampler validates; the others take the same value. */
    int rc = is_double ? ebm_sampler_set_double(list[0], option, dv)
                       : ebm_sampler_set_int(list[0], option, iv);
    if (rc != EBM_OK) {
        ebm__fail(&msg, rc, "EBM_ESTIMATOR_SAMPLER_OPTION + %d (option %d): %s", option,
                  EBM_ESTIMATOR_SAMPLER_OPTION + option, ebm_sampler_errmsg(list[0]));
        return fail(e, rc, &msg);
    }
    for (int i = 1; i < count; i++) {
        if (is_double) {
            ebm_sampler_set_double(list[i], option, dv);
        } else {
            ebm_sampler_set_int(list[i], option, iv);
        }
    }
    return EBM_OK;
}

/* The message of an integer option's value out of its range [lo, hi]. */
static int out_of_range(ebm_estimator_t *e, int option, int64_t value, int64_t lo, int64_t hi)
{
    static const char *const names[] = {
        "EBM_ESTIMATOR_K",           "EBM_ESTIMATOR_MAX_STEPS",
        "EBM_ESTIMATOR_CHAINS",      "EBM_ESTIMATOR_MARGINALIZE (enum ebm_marginalize)",
        "EBM_ESTIMATOR_POSITIVE (enum ebm_positive_phase)", "EBM_ESTIMATOR_SAMPLER",
        "EBM_ESTIMATOR_BURN_IN",     "EBM_ESTIMATOR_SEARCH_SWEEPS",
        "EBM_ESTIMATOR_MEAN_FIELD_ITERS", "EBM_ESTIMATOR_MEAN_FIELD_TOL",
        "EBM_ESTIMATOR_STEP_LIMIT"};
    ebm__msg msg;
    return fail(e,
                ebm__fail(&msg, EBM_EVALUE, "%s is %lld; it takes %lld to %lld", names[option],
                          (long long)value, (long long)lo, (long long)hi),
                &msg);
}

int ebm_estimator_set_int(ebm_estimator_t *e, int option, int64_t value)
{
    if (e == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    if (option >= EBM_ESTIMATOR_SAMPLER_OPTION) {
        return set_sampler_option(e, option - EBM_ESTIMATOR_SAMPLER_OPTION, 0, value, 0.0);
    }
    const ebm_model_t *m = e->m;
    switch (option) {
    case EBM_ESTIMATOR_K: {
        int64_t lo = (e->kind == EBM_ESTIMATOR_UCD || e->kind == EBM_ESTIMATOR_UCD_LMI) ? 0 : 1;
        if (value < lo || value > EBM__MAX_K) {
            return fail(e,
                        ebm__fail(&msg, EBM_EVALUE, "EBM_ESTIMATOR_K is %lld; %s takes %lld to %d",
                                  (long long)value, kind_name(e->kind), (long long)lo,
                                  EBM__MAX_K),
                        &msg);
        }
        e->k = value;
        return EBM_OK;
    }
    case EBM_ESTIMATOR_STEP_LIMIT:
        if (value < 1) {
            return out_of_range(e, option, value, 1, INT64_MAX);
        }
        e->step_limit = value;
        return EBM_OK;
    case EBM_ESTIMATOR_MAX_STEPS:
    case EBM_ESTIMATOR_CHAINS:
    case EBM_ESTIMATOR_BURN_IN:
        if (value < 0 || value > INT32_MAX) {
            return out_of_range(e, option, value, 0, INT32_MAX);
        }
        if (option == EBM_ESTIMATOR_MAX_STEPS) {
            e->max_steps = value;
        } else if (option == EBM_ESTIMATOR_CHAINS) {
            /* A new count starts new chains at the next call. */
            if (value != e->chains_opt) {
                free(e->chains);
                e->chains = NULL;
                e->n_chains = 0;
            }
            e->chains_opt = value;
        } else {
            e->burn_in = value;
        }
        return EBM_OK;
    case EBM_ESTIMATOR_SEARCH_SWEEPS:
    case EBM_ESTIMATOR_MEAN_FIELD_ITERS:
        if (value < 1 || value > INT32_MAX) {
            return out_of_range(e, option, value, 1, INT32_MAX);
        }
        *(option == EBM_ESTIMATOR_SEARCH_SWEEPS ? &e->search_sweeps : &e->mf_iters) = value;
        return EBM_OK;
    case EBM_ESTIMATOR_MARGINALIZE:
        if (value < EBM_MARGINALIZE_NONE || value > EBM_MARGINALIZE_BOTH) {
            return out_of_range(e, option, value, EBM_MARGINALIZE_NONE, EBM_MARGINALIZE_BOTH);
        }
        e->marginalize = (int)value;
        return EBM_OK;
    case EBM_ESTIMATOR_POSITIVE:
        if (value < EBM_POSITIVE_AUTO || value > EBM_POSITIVE_SAMPLED) {
            return out_of_range(e, option, value, EBM_POSITIVE_AUTO, EBM_POSITIVE_SAMPLED);
        }
        if (value == EBM_POSITIVE_EXACT && m->n_layers != 2) {
            return fail(e,
                        ebm__fail(&msg, EBM_EUNSUPPORTED,
                                  "EBM_POSITIVE_EXACT needs a 2-layer model; this one has %lld "
                                  "layers (use COUPLED or MEAN_FIELD)",
                                  (long long)m->n_layers),
                        &msg);
        }
        if (value == EBM_POSITIVE_SAMPLED && m->n_layers != 2) {
            return fail(e,
                        ebm__fail(&msg, EBM_EUNSUPPORTED,
                                  "EBM_POSITIVE_SAMPLED draws h ~ p(h | v) exactly only in a "
                                  "2-layer model; this one has %lld layers",
                                  (long long)m->n_layers),
                        &msg);
        }
        if (value == EBM_POSITIVE_COUPLED && e->kind != EBM_ESTIMATOR_UCD &&
            e->kind != EBM_ESTIMATOR_UCD_LMI) {
            return fail(e,
                        ebm__fail(&msg, EBM_EUNSUPPORTED,
                                  "EBM_POSITIVE_COUPLED belongs to EBM_ESTIMATOR_UCD and _UCD_LMI, "
                                  "not %s",
                                  kind_name(e->kind)),
                        &msg);
        }
        e->positive = (int)value;
        return EBM_OK;
    case EBM_ESTIMATOR_SAMPLER:
        if (value != EBM_SAMPLER_GIBBS && value != EBM_SAMPLER_LANGEVIN &&
            value != EBM_SAMPLER_GIBBS_LANGEVIN) {
            return fail(e,
                        ebm__fail(&msg, EBM_EVALUE,
                                  "EBM_ESTIMATOR_SAMPLER is %lld; it takes EBM_SAMPLER_GIBBS (0), "
                                  "_LANGEVIN (2) or _GIBBS_LANGEVIN (3)",
                                  (long long)value),
                        &msg);
        }
        if (value != EBM_SAMPLER_GIBBS && !is_grbm(m)) {
            return fail(e,
                        ebm__fail(&msg, EBM_EUNSUPPORTED,
                                  "Langevin samplers need a GRBM (2 layers, Gaussian visible)"),
                        &msg);
        }
        e->sampler_kind = (int)value;
        return EBM_OK;
    case EBM_ESTIMATOR_MEAN_FIELD_TOL:
        return fail(e,
                    ebm__fail(&msg, EBM_EVALUE,
                              "EBM_ESTIMATOR_MEAN_FIELD_TOL takes a double: use "
                              "ebm_estimator_set_double"),
                    &msg);
    default:
        return fail(e, ebm__fail(&msg, EBM_EVALUE, "option %d is unknown", option), &msg);
    }
}

int ebm_estimator_set_double(ebm_estimator_t *e, int option, double value)
{
    if (e == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    if (option >= EBM_ESTIMATOR_SAMPLER_OPTION) {
        return set_sampler_option(e, option - EBM_ESTIMATOR_SAMPLER_OPTION, 1, 0, value);
    }
    if (option != EBM_ESTIMATOR_MEAN_FIELD_TOL) {
        return fail(e, ebm__fail(&msg, EBM_EVALUE, "option %d is not a double option", option),
                    &msg);
    }
    if (!(value >= 0) || !isfinite(value)) {
        return fail(e,
                    ebm__fail(&msg, EBM_EVALUE,
                              "EBM_ESTIMATOR_MEAN_FIELD_TOL is %g; it must be finite and >= 0",
                              value),
                    &msg);
    }
    e->mf_tol = value;
    return EBM_OK;
}

/* ---- persistent chains ------------------------------------------------ */

int64_t ebm_estimator_num_chains(const ebm_estimator_t *e) { return e == NULL ? -1 : e->n_chains; }

int ebm_estimator_get_chains(const ebm_estimator_t *e, float *out, int64_t ldo)
{
    if (e == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    ebm_estimator_t *me = (ebm_estimator_t *)(uintptr_t)e; /* message slot only */
    int rc = ebm__check_matrix(&msg, "out", e->n_chains, out, ldo, e->m->width);
    if (rc != EBM_OK) {
        return fail(me, rc, &msg);
    }
    for (int64_t r = 0; r < e->n_chains; r++) {
        memcpy(out + r * ldo, e->chains + r * e->m->width, (size_t)e->m->width * sizeof *out);
    }
    return EBM_OK;
}

int ebm_estimator_set_chains(ebm_estimator_t *e, int64_t n, const float *chains, int64_t ldc)
{
    if (e == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    const ebm_model_t *m = e->m;
    int rc = ebm__check_matrix(&msg, "chains", n, chains, ldc, m->width);
    if (rc == EBM_OK) {
        rc = ebm__check_states(m, &msg, "chains", ebm__all_layers(m), n, chains, ldc);
    }
    float *copy = NULL;
    if (rc == EBM_OK && n > 0) {
        copy = malloc((size_t)(n * m->width) * sizeof *copy);
        if (copy == NULL) {
            rc = ebm__fail(&msg, EBM_ENOMEM, "out of memory for %lld chains", (long long)n);
        }
    }
    if (rc != EBM_OK) {
        return fail(e, rc, &msg);
    }
    for (int64_t r = 0; r < n; r++) {
        memcpy(copy + r * m->width, chains + r * ldc, (size_t)m->width * sizeof *copy);
    }
    free(e->chains);
    e->chains = copy;
    e->n_chains = n;
    return EBM_OK;
}

/* ---- building blocks -------------------------------------------------- */

/* Mean of a sampler's acceptance over the call, weighted by rows. */
static void note_accept(ebm_estimator_t *e, const ebm_sampler_t *s, int64_t rows)
{
    e->accept_sum += ebm_sampler_stat(s, EBM_STAT_ACCEPT_RATE) * (double)rows;
    e->accept_rows += (double)rows;
}

/* One step (in->y NULL) or coupled step of s; the chains are the
 * estimator's scratch, so a failed step may leave them partly drawn. */
static int run(ebm_estimator_t *e, ebm__msg *msg, ebm_sampler_t *s, ebm_rng_t *rng,
               ebm__step_in *in)
{
    in->keep = 0;
    int rc = ebm__sampler_run(s, msg, rng, in);
    if (rc == EBM_OK && s->kind != EBM_SAMPLER_GIBBS) {
        note_accept(e, s, in->n);
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
    ebm__random_units(m, &s, NULL, n, x, w, ebm__all_layers(m) & ~1u, NULL, 0, draw);
    return step(e, msg, e->gibbs_post, rng, NULL, n, x, w);
}

/*
 * The telescoping estimate of one phase (Qiu et al. Alg. 2, Taniguchi Alg.
 * 2): from x_0 (n rows of x, stride w; overwritten), made by a step of
 * `start`, y_0 = x_0, x_1 = one step of s, then coupled steps until x_t ==
 * y_{t-1} and t >= k; pushes coef f(x_k) and coef (f(x_t) - f(y_{t-1}))
 * for k < t < tau onto st, except that k = 0 adds coef f(x_0) to g at once
 * (add_f_after). Finished rows leave the batch; each keeps its stream row.
 */
static int telescope(ebm_estimator_t *e, ebm__msg *msg, const ebm_sampler_t *start,
                     ebm_sampler_t *s, ebm_rng_t *rng, int64_t n, float *x, float *y, double coef,
                     stack *st, uint32_t clamped, int stat_mean, int stat_max)
{
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
        ids[r] = r;
        tau[r] = 0;
    }
    if (e->k == 0 && add_f_after(e, start, clamped, n, x, coef, y) != EBM_OK) {
        free(met);
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for the telescoping sum");
    }
    memcpy(y, x, (size_t)(n * w) * sizeof *x);
    if (rc == EBM_OK) {
        ebm__step_in in = {.ids = ids, .n = n, .x = x, .ldx = w};
        if (s->kind == EBM_SAMPLER_MH_UNIFORM) { /* E(x_0) from start's sweep */
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
                rc = stack_push(st, xr, w, coef);
            } else if (t > e->k && !met[r]) {
                rc = stack_push(st, xr, w, coef);
                if (rc == EBM_OK) {
                    rc = stack_push(st, yr, w, -coef);
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
        if (st->rows >= STACK_FLUSH_ROWS) {
            rc = add_f(e, clamped, st->rows, st->x, w, st->c, 1.0, NULL);
            st->rows = 0;
            if (rc != EBM_OK) {
                rc = ebm__fail(msg, rc, "out of memory for the telescoping sum");
                break;
            }
        }
        ebm__step_in in = {.ids = ids, .n = active, .x = x, .ldx = w, .y = y, .ldy = w, .met = met};
        rc = run(e, msg, s, rng, &in);
        t++;
    }
    free(met);
    if (rc == EBM_OK) {
        e->stat[stat_mean] = n > 0 ? (double)tau_sum / (double)n : 0.0;
        e->stat[stat_max] = (double)tau_max;
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
    ebm__random_units(m, &s, NULL, n, x, w, ebm__all_layers(m) & ~(clamp_visible ? 1u : 0u),
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
    int capped = ebm__local_search(m, msg, rng, n, x, w, clamp, 0, e->search_sweeps, sweeps);
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
    return step(e, msg, clamp_visible ? e->gibbs_post : e->gibbs, rng, NULL, n, x, w);
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
static int positive_phase(ebm_estimator_t *e, ebm__msg *msg, ebm_rng_t *rng, int64_t n,
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
            rc = add_f(e, ebm__all_layers(m), n, x, w, NULL, c, NULL);
        }
        return rc == EBM_OK || rc != EBM_ENOMEM ? rc : ebm__fail(msg, rc, "out of memory");
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
        rc = add_f(e, ebm__all_layers(m), n, x, w, NULL, c, NULL);
        return rc == EBM_OK ? rc : ebm__fail(msg, rc, "out of memory");
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
            rc = telescope(e, msg, e->gibbs_post, s, rng, n, x, y, c, &e->pos, 1u,
                           EBM_ESTIMATOR_STAT_POSITIVE_TAU_MEAN,
                           EBM_ESTIMATOR_STAT_POSITIVE_TAU_MAX);
        }
        return rc;
    }
}

void ebm__estimator_set_plain(ebm_estimator_t *e, int plain)
{
    e->plain = plain;
    ebm_sampler_t *list[6] = {e->gibbs, e->gibbs_post, e->mh, e->mh_post, e->langevin,
                              e->gibbs_langevin};
    for (int i = 0; i < 6; i++) {
        if (list[i] != NULL) {
            ebm__sampler_set_plain(list[i], plain);
        }
    }
}

/* g += E_model[dE/dtheta], estimated by the kind's negative phase. */
static int negative_phase(ebm_estimator_t *e, ebm__msg *msg, ebm_rng_t *rng, int64_t n,
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
            rc = step(e, msg, e->gibbs, rng, NULL, n, x, w);
        }
        if (rc == EBM_OK &&
            (rc = add_f_after(e, e->gibbs, 0, n, x, 1.0 / (double)n, y)) != EBM_OK) {
            rc = ebm__fail(msg, rc, "out of memory");
        }
        return rc;
    case EBM_ESTIMATOR_PCD:
        for (int64_t i = 0; i < e->k && rc == EBM_OK; i++) {
            rc = step(e, msg, e->gibbs, rng, NULL, n_chains, next_chains, w);
        }
        if (rc == EBM_OK && (rc = add_f_after(e, e->gibbs, 0, n_chains, next_chains,
                                              1.0 / (double)n_chains, x)) != EBM_OK) {
            rc = ebm__fail(msg, rc, "out of memory");
        }
        return rc;
    case EBM_ESTIMATOR_GRBM_CD: {
        /* Liao Algs. 3-4: v ~ N(0, I), h ~ p(h | v), K steps; steps after
         * the burn-in M are all used. */
        ebm_sampler_t *s = e->sampler_kind == EBM_SAMPLER_LANGEVIN ? e->langevin
                           : e->sampler_kind == EBM_SAMPLER_GIBBS_LANGEVIN ? e->gibbs_langevin
                                                                           : e->gibbs;
        ebm__stream st = ebm__rng_take_stream(rng);
        ebm__random_units(m, &st, NULL, n_chains, next_chains, w, 1u, NULL, 0, draw);
        /* adjust-after-eta counts from the chains' start */
        ebm_sampler_set_int(s, EBM_SAMPLER_ITERATION, 0);
        rc = step(e, msg, e->gibbs_post, rng, NULL, n_chains, next_chains, w);
        int64_t used = e->k - e->burn_in;
        double c = used > 0 ? 1.0 / ((double)n_chains * (double)used) : 0.0;
        for (int64_t t = 1; t <= e->k && rc == EBM_OK; t++) {
            rc = step(e, msg, s, rng, NULL, n_chains, next_chains, w);
            if (rc == EBM_OK && s == e->langevin) {
                /* Langevin moves v only: draw h | v for f. */
                rc = step(e, msg, e->gibbs_post, rng, NULL, n_chains, next_chains, w);
            }
            if (rc == EBM_OK && t > e->burn_in &&
                (rc = add_f_after(e, s, 0, n_chains, next_chains, c, x)) != EBM_OK) {
                rc = ebm__fail(msg, rc, "out of memory");
            }
        }
        return rc;
    }
    case EBM_ESTIMATOR_UCD:
        rc = posterior_start(e, msg, rng, n, data, ldd, x, draw);
        if (rc == EBM_OK) {
            rc = telescope(e, msg, e->gibbs_post, e->gibbs, rng, n, x, y, 1.0 / (double)n,
                           &e->neg, 0, EBM_ESTIMATOR_STAT_TAU_MEAN, EBM_ESTIMATOR_STAT_TAU_MAX);
        }
        return rc;
    default: /* UCD_LMI */
        rc = local_mode_start(e, msg, rng, n, x, 0, draw);
        if (rc == EBM_OK) {
            rc = telescope(e, msg, e->gibbs, e->mh, rng, n, x, y, 1.0 / (double)n, &e->neg, 0,
                           EBM_ESTIMATOR_STAT_TAU_MEAN, EBM_ESTIMATOR_STAT_TAU_MAX);
        }
        return rc;
    }
}

/* ---- the gradient ----------------------------------------------------- */

int ebm_estimator_gradient(ebm_estimator_t *e, ebm_rng_t *rng, int64_t n, const float *data,
                           int64_t ldd, float *grad)
{
    if (e == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg = {""}; /* empty until a message is set (see ENOMEM below) */
    const ebm_model_t *m = e->m;
    const int64_t w = m->width;
    int rc = rng == NULL ? ebm__fail(&msg, EBM_ENULL, "rng is NULL") : EBM_OK;
    if (rc == EBM_OK && grad == NULL) {
        rc = ebm__fail(&msg, EBM_ENULL, "grad is NULL");
    }
    if (rc == EBM_OK && n < 1) {
        rc = ebm__fail(&msg, EBM_ESHAPE, "n is %lld; a gradient needs at least one data row",
                       (long long)n);
    }
    if (rc == EBM_OK) {
        rc = ebm__check_layer_values(m, &msg, "data", 0, n, data, ldd);
    }
    if (rc == EBM_OK && e->kind == EBM_ESTIMATOR_GRBM_CD && e->burn_in >= e->k) {
        rc = ebm__fail(&msg, EBM_EVALUE,
                       "EBM_ESTIMATOR_BURN_IN is %lld but EBM_ESTIMATOR_K is %lld: no step would "
                       "be used; the burn-in must be smaller than K",
                       (long long)e->burn_in, (long long)e->k);
    }
    if (rc != EBM_OK) {
        return fail(e, rc, &msg);
    }
    /* Chains of their own (PCD: persistent, new ones from uniform noise the
     * first time; GRBM_CD: new from N(0, I) each call). */
    const int own_chains = e->kind == EBM_ESTIMATOR_PCD || e->kind == EBM_ESTIMATOR_GRBM_CD;
    int64_t n_chains = own_chains ? (e->chains_opt > 0 ? e->chains_opt : n) : 0;
    if (e->kind == EBM_ESTIMATOR_PCD && e->n_chains > 0) {
        n_chains = e->n_chains;
    }
    /* Scratch: x, y (n x w each), the next chains, one row of draws. */
    int64_t rows = n > n_chains ? n : n_chains;
    float *f = ebm__grow((void **)&e->fbuf, &e->fcap, (size_t)(3 * rows * w + w), sizeof *f);
    if (f == NULL) {
        return fail(e, ebm__fail(&msg, EBM_ENOMEM, "out of memory for %lld rows", (long long)rows),
                    &msg);
    }
    float *x = f, *y = f + rows * w, *next = y + rows * w, *draw = next + rows * w;
    /* Each phase draws from a child generator of its own, so that row r's
     * draws depend only on rng and r, never on how long other rows' chains
     * ran in an earlier phase; the caller's generator moves by one sequence. */
    ebm_rng_t pos_rng, neg_rng;
    ebm__rng_child(rng, 0, &pos_rng);
    ebm__rng_child(rng, 1, &neg_rng);
    double stat_saved[N_STATS];
    memcpy(stat_saved, e->stat, sizeof stat_saved);
    ebm_sampler_t *samplers[6];
    int64_t iteration_saved[6];
    const int n_samplers = each_sampler(e, samplers);
    for (int i = 0; i < n_samplers; i++) {
        iteration_saved[i] = (int64_t)ebm_sampler_stat(samplers[i], EBM_STAT_ITERATION);
    }
    if (e->kind == EBM_ESTIMATOR_PCD) {
        if (e->n_chains == n_chains) {
            memcpy(next, e->chains, (size_t)(n_chains * w) * sizeof *next);
        } else {
            ebm__stream st = ebm__rng_take_stream(&neg_rng);
            ebm__random_units(m, &st, NULL, n_chains, next, w, ebm__all_layers(m), NULL, 0, draw);
        }
    }
    memset(e->g, 0, (size_t)m->n_params * sizeof *e->g);
    memset(e->stat, 0, sizeof e->stat);
    e->accept_sum = e->accept_rows = e->searches = 0.0;
    e->pos.rows = e->neg.rows = 0;

    rc = positive_phase(e, &msg, &pos_rng, n, data, ldd, x, y, draw);
    if (rc == EBM_OK) {
        rc = negative_phase(e, &msg, &neg_rng, n, data, ldd, x, y, draw, next, n_chains);
    }
    /* The telescoping sums: one energy_grad per f term over all their rows. */
    if (rc == EBM_OK && e->pos.rows > 0) {
        rc = add_f(e, 1u, e->pos.rows, e->pos.x, w, e->pos.c, 1.0, NULL);
    }
    if (rc == EBM_OK && e->neg.rows > 0) {
        rc = add_f(e, 0, e->neg.rows, e->neg.x, w, e->neg.c, 1.0, NULL);
    }
    if (rc == EBM_ENOMEM && msg.text[0] == '\0') {
        ebm__fail(&msg, rc, "out of memory");
    }
    const int g_finite =
        rc != EBM_OK || ebm__kern()->values_ok(m->n_params, e->g, EBM_UNITS_GAUSSIAN);
    for (int64_t i = 0; rc == EBM_OK && !g_finite && i < m->n_params; i++) {
        if (!isfinite(e->g[i])) {
            rc = ebm__fail(&msg, EBM_EVALUE,
                           "the gradient estimate is not finite at parameter %lld (%g); grad, "
                           "chains and rng are unchanged",
                           (long long)i, (double)e->g[i]);
        }
    }
    if (rc == EBM_OK && e->kind == EBM_ESTIMATOR_PCD && e->n_chains != n_chains) {
        float *c = realloc(e->chains, (size_t)(n_chains * w) * sizeof *c);
        if (c == NULL) {
            rc = ebm__fail(&msg, EBM_ENOMEM, "out of memory for the chains");
        } else {
            e->chains = c; /* nothing fails after this */
            e->n_chains = n_chains;
        }
    }
    if (rc != EBM_OK) {
        memcpy(e->stat, stat_saved, sizeof stat_saved);
        for (int i = 0; i < n_samplers; i++) {
            ebm_sampler_set_int(samplers[i], EBM_SAMPLER_ITERATION, iteration_saved[i]);
        }
        return fail(e, rc, &msg);
    }
    if (e->kind == EBM_ESTIMATOR_PCD) {
        memcpy(e->chains, next, (size_t)(n_chains * w) * sizeof *next);
    }
    if (e->searches > 0) {
        e->stat[EBM_ESTIMATOR_STAT_SWEEPS_MEAN] /= e->searches;
    }
    e->stat[EBM_ESTIMATOR_STAT_ACCEPT_RATE] =
        e->accept_rows > 0 ? e->accept_sum / e->accept_rows : 1.0;
    memcpy(grad, e->g, (size_t)m->n_params * sizeof *grad);
    (void)ebm__rng_take_stream(rng); /* the next call derives other children */
    return EBM_OK;
}
