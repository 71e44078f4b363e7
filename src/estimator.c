/* The estimator handle: creation, options, persistent chains and the PT
 * ladder (which its tempering sampler owns). The gradient call is
 * gradient.c, the estimate itself estimate.c. The kinds: CD-k, PCD-k, UCD
 * (Qiu et al. 2020), UCD-LMI (Taniguchi et al. 2023), the GRBM modified
 * CD (Liao et al. 2022) and PT (parallel tempering). */
#include "error.h"
#include "estimator.h"
#include "model.h"
#include "options.h"
#include "rng.h"
#include "sampler.h"
#include "scratch.h"
#include "tempering.h"
#include "testing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_STATS EBM_ESTIMATOR_STAT_COUNT
/* The largest EBM_ESTIMATOR_K (sweeps or steps per call). */
#define EBM__MAX_K 100000000

static const char *kind_name(int kind)
{
    static const char *const names[] = {"EBM_ESTIMATOR_CD",      "EBM_ESTIMATOR_PCD",
                                        "EBM_ESTIMATOR_UCD",     "EBM_ESTIMATOR_UCD_LMI",
                                        "EBM_ESTIMATOR_GRBM_CD", "EBM_ESTIMATOR_PT"};
    return (kind >= 0 && kind <= EBM_ESTIMATOR_PT) ? names[kind] : "unknown";
}

static int is_grbm(const ebm_model_t *m) { return m->n_layers == 2 && ebm__is_gaussian(m, 0); }


/* ---- handle and options ----------------------------------------------- */

int ebm_estimator_create(ebm_estimator_t **out, const ebm_model_t *m, int kind)
{
    if (out != NULL) {
        *out = NULL;
    }
    if (m == NULL) {
        return EBM_ENULL;
    }
    if (out == NULL) {
        return ebm__model_error(m, EBM_ENULL, "out is NULL");
    }
    if (kind < EBM_ESTIMATOR_CD || kind > EBM_ESTIMATOR_PT) {
        return ebm__model_error(m, EBM_EVALUE,
                                "kind is %d; it must be EBM_ESTIMATOR_CD (0), _PCD (1), _UCD (2), "
                                "_UCD_LMI (3), _GRBM_CD (4) or _PT (5)", kind);
    }
    if (kind == EBM_ESTIMATOR_GRBM_CD && !is_grbm(m)) {
        return ebm__model_error(
            m, EBM_EUNSUPPORTED,
            "EBM_ESTIMATOR_GRBM_CD needs a GRBM (2 layers, Gaussian visible units)");
    }
    if (kind == EBM_ESTIMATOR_UCD_LMI && ebm__is_potts(m, 0)) {
        return ebm__model_error(
            m, EBM_EUNSUPPORTED,
            "EBM_ESTIMATOR_UCD_LMI's local search and uniform MH proposals flip single "
            "units; a Potts site moves between categories: use EBM_ESTIMATOR_UCD");
    }
    if (kind == EBM_ESTIMATOR_UCD_LMI && ebm__is_gaussian(m, 0)) {
        return ebm__model_error(
            m, EBM_EUNSUPPORTED,
            "EBM_ESTIMATOR_UCD_LMI's uniform MH proposal has no Gaussian version: use "
            "EBM_ESTIMATOR_UCD for Gaussian visible units");
    }
    if ((kind == EBM_ESTIMATOR_UCD || kind == EBM_ESTIMATOR_UCD_LMI ||
         kind == EBM_ESTIMATOR_PT) &&
        ebm__is_drelu(m, 1)) {
        return ebm__model_error(
            m, EBM_EUNSUPPORTED,
            "%s is not supported for dReLU hidden units yet (it needs coupled or "
            "tempered dReLU draws): use EBM_ESTIMATOR_CD or EBM_ESTIMATOR_PCD", kind_name(kind));
    }
    ebm_estimator_t *e = calloc(1, sizeof *e);
    if (e == NULL) {
        return ebm__model_error(m, EBM_ENOMEM, "out of memory");
    }
    e->m = m;
    e->kind = kind;
    ebm__options_init(&ebm__estimator_options, e);
    if (kind == EBM_ESTIMATOR_UCD_LMI) {
        e->k = 0;
        e->marginalize = EBM_MARGINALIZE_BOTH;
    } else if (kind == EBM_ESTIMATOR_GRBM_CD) {
        e->k = 10;
        e->marginalize = EBM_MARGINALIZE_ODD;
    }
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
    /* UCD-LMI's samplers (not for Gaussian or Potts visible units) */
    if (rc == EBM_OK && !ebm__is_gaussian(m, 0) && !ebm__is_potts(m, 0) &&
        !ebm__is_drelu(m, 1)) {
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
    if (rc == EBM_OK && kind == EBM_ESTIMATOR_PT) {
        rc = ebm_sampler_create(&e->tempering, m, EBM_SAMPLER_TEMPERING);
    }
    if (rc != EBM_OK) {
        ebm_estimator_destroy(e);
        return ebm__model_error(m, rc, "out of memory");
    }
    e->stat[EBM_ESTIMATOR_STAT_ACCEPT_RATE] = 1.0;
    e->stat[EBM_ESTIMATOR_STAT_SWAP_RATE] = NAN;
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
    ebm_sampler_destroy(e->tempering);
    free(e->chains);
    free(e->g);
    free(e->pos.x);
    free(e->pos.c);
    free(e->neg.x);
    free(e->neg.c);
    ebm__arena_free(&e->scratch);
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

/* The samplers an option reaches (at most N_SAMPLERS), into list. */
#define N_SAMPLERS EBM__ESTIMATOR_SAMPLERS
static int each_sampler(ebm_estimator_t *e, ebm_sampler_t **list)
{
    ebm_sampler_t *all[] = {e->gibbs,    e->gibbs_post,     e->mh,       e->mh_post,
                            e->langevin, e->gibbs_langevin, e->tempering};
    int k = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (all[i] != NULL) {
            list[k++] = all[i];
        }
    }
    return k;
}

/* The samplers that run the model's own chains, with no layer clamped:
 * those the global moves (EBM_SAMPLER_GLOBAL_PROB, the proposal) reach. */
static int chain_samplers(ebm_estimator_t *e, ebm_sampler_t **list)
{
    int k = 0;
    list[k++] = e->gibbs;
    if (e->tempering != NULL) {
        list[k++] = e->tempering;
    }
    return k;
}

static int set_sampler_option(ebm_estimator_t *e, int option, int is_double, int64_t iv,
                              double dv)
{
    if (option == EBM_SAMPLER_CLAMP_LAYERS || option == EBM_SAMPLER_ROW_OFFSET) {
        return ebm__error(e->errmsg, EBM_EVALUE,
                          "%s is managed by the estimator and cannot be set%s",
                          ebm__option_find(&ebm__sampler_options, option)->name,
                          option == EBM_SAMPLER_ROW_OFFSET ? " (set EBM_ESTIMATOR_ROW_OFFSET)"
                                                           : "");
    }
    ebm_sampler_t *list[N_SAMPLERS];
    int count = option == EBM_SAMPLER_GLOBAL_PROB ? chain_samplers(e, list) : each_sampler(e, list);
    /* The first sampler validates; the others take the same value. */
    int rc = is_double ? ebm_sampler_set_double(list[0], option, dv)
                       : ebm_sampler_set_int(list[0], option, iv);
    if (rc != EBM_OK) {
        return ebm__error(e->errmsg, rc, "EBM_ESTIMATOR_SAMPLER_OPTION + %d (option %d): %s",
                          option, EBM_ESTIMATOR_SAMPLER_OPTION + option,
                          ebm_sampler_errmsg(list[0]));
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

/* EBM_ESTIMATOR_K: UCD and UCD_LMI take 0, the other kinds 1 or more. */
static int k_fits_kind(void *handle, ebm__msg *msg, int64_t value)
{
    const ebm_estimator_t *e = handle;
    if (value == 0 && e->kind != EBM_ESTIMATOR_UCD && e->kind != EBM_ESTIMATOR_UCD_LMI) {
        return ebm__fail(msg, EBM_EVALUE, "EBM_ESTIMATOR_K is %lld; %s takes %d to %d",
                         (long long)value, kind_name(e->kind), 1, EBM__MAX_K);
    }
    return EBM_OK;
}

/* EBM_ESTIMATOR_CHAINS: a new count starts new chains at the next call. */
static int chains_restart(void *handle, ebm__msg *msg, int64_t value)
{
    ebm_estimator_t *e = handle;
    (void)msg;
    if (value != e->chains_opt) {
        free(e->chains);
        e->chains = NULL;
        e->n_chains = 0;
    }
    return EBM_OK;
}

/* EBM_ESTIMATOR_POSITIVE: the methods the model and the kind support. */
static int positive_fits(void *handle, ebm__msg *msg, int64_t value)
{
    const ebm_estimator_t *e = handle;
    const ebm_model_t *m = e->m;
    if (value == EBM_POSITIVE_MEAN_FIELD && ebm__is_drelu(m, 1)) {
        return ebm__fail(msg, EBM_EUNSUPPORTED,
                         "EBM_POSITIVE_MEAN_FIELD is not supported for dReLU hidden units (their "
                         "shape gradients need more than the means): use EXACT or SAMPLED");
    }
    if (value == EBM_POSITIVE_EXACT && m->n_layers != 2) {
        return ebm__fail(msg, EBM_EUNSUPPORTED,
                         "EBM_POSITIVE_EXACT needs a 2-layer model; this one has %lld layers "
                         "(use COUPLED or MEAN_FIELD)",
                         (long long)m->n_layers);
    }
    if (value == EBM_POSITIVE_SAMPLED && m->n_layers != 2) {
        return ebm__fail(msg, EBM_EUNSUPPORTED,
                         "EBM_POSITIVE_SAMPLED draws h ~ p(h | v) exactly only in a 2-layer "
                         "model; this one has %lld layers",
                         (long long)m->n_layers);
    }
    if (value == EBM_POSITIVE_COUPLED && e->kind != EBM_ESTIMATOR_UCD &&
        e->kind != EBM_ESTIMATOR_UCD_LMI) {
        return ebm__fail(msg, EBM_EUNSUPPORTED,
                         "EBM_POSITIVE_COUPLED belongs to EBM_ESTIMATOR_UCD and _UCD_LMI, not %s",
                         kind_name(e->kind));
    }
    return EBM_OK;
}

/* EBM_ESTIMATOR_SAMPLER: no MH; the Langevin kinds need a GRBM. */
static int sampler_fits(void *handle, ebm__msg *msg, int64_t value)
{
    const ebm_estimator_t *e = handle;
    if (value == EBM_SAMPLER_MH_UNIFORM) {
        return ebm__option_out_of_range(&ebm__estimator_options, EBM_ESTIMATOR_SAMPLER, msg,
                                        value);
    }
    if (value != EBM_SAMPLER_GIBBS && !is_grbm(e->m)) {
        return ebm__fail(msg, EBM_EUNSUPPORTED,
                         "Langevin samplers need a GRBM (2 layers, Gaussian visible)");
    }
    return EBM_OK;
}

/* The options (enum ebm_estimator_option; include/ebm.h says what each
 * does); EBM_ESTIMATOR_SAMPLER_OPTION + o goes to the samplers' table.
 * python/tools/gen_options.py reads this table: keep one designated row per
 * option, fields as `.name = value`. */
#define FIELD(member, t) .type = EBM__FIELD_##t, .offset = offsetof(ebm_estimator_t, member)
static const ebm__option estimator_option_rows[] = {
    [EBM_ESTIMATOR_K] = {.name = "EBM_ESTIMATOR_K", .kind = EBM__OPTION_INT, FIELD(k, INT64),
        .lo = 0, .hi = EBM__MAX_K,
        .range = "1 to 100000000 (EBM_ESTIMATOR_UCD and _UCD_LMI: 0 to 100000000)",
        .initial = 1, .initial_text = "0 for EBM_ESTIMATOR_UCD_LMI, 10 for _GRBM_CD, else 1",
        .hook = k_fits_kind},
    [EBM_ESTIMATOR_MAX_STEPS] = {.name = "EBM_ESTIMATOR_MAX_STEPS", .kind = EBM__OPTION_INT,
        FIELD(max_steps, INT64), .lo = 0, .hi = INT32_MAX, .initial = 0},
    [EBM_ESTIMATOR_CHAINS] = {.name = "EBM_ESTIMATOR_CHAINS", .kind = EBM__OPTION_INT,
        FIELD(chains_opt, INT64), .lo = 0, .hi = INT32_MAX, .initial = 0,
        .hook = chains_restart},
    [EBM_ESTIMATOR_MARGINALIZE] = {.name = "EBM_ESTIMATOR_MARGINALIZE",
        .kind = EBM__OPTION_ENUM, FIELD(marginalize, INT), .lo = EBM_MARGINALIZE_NONE,
        .hi = EBM_MARGINALIZE_BOTH, .values = "ebm_marginalize", .initial = EBM_MARGINALIZE_EVEN,
        .initial_text = "EBM_MARGINALIZE_BOTH for EBM_ESTIMATOR_UCD_LMI, _ODD for _GRBM_CD, "
                        "else _EVEN"},
    [EBM_ESTIMATOR_POSITIVE] = {.name = "EBM_ESTIMATOR_POSITIVE", .kind = EBM__OPTION_ENUM,
        FIELD(positive, INT), .lo = EBM_POSITIVE_AUTO, .hi = EBM_POSITIVE_SAMPLED,
        .values = "ebm_positive_phase", .initial = EBM_POSITIVE_AUTO, .hook = positive_fits},
    [EBM_ESTIMATOR_SAMPLER] = {.name = "EBM_ESTIMATOR_SAMPLER", .kind = EBM__OPTION_ENUM,
        FIELD(sampler_kind, INT), .lo = EBM_SAMPLER_GIBBS, .hi = EBM_SAMPLER_GIBBS_LANGEVIN,
        .range = "EBM_SAMPLER_GIBBS (0), _LANGEVIN (2) or _GIBBS_LANGEVIN (3)",
        .values = "ebm_sampler_kind", .initial = EBM_SAMPLER_GIBBS, .hook = sampler_fits},
    [EBM_ESTIMATOR_BURN_IN] = {.name = "EBM_ESTIMATOR_BURN_IN", .kind = EBM__OPTION_INT,
        FIELD(burn_in, INT64), .lo = 0, .hi = INT32_MAX, .initial = 0},
    [EBM_ESTIMATOR_SEARCH_SWEEPS] = {.name = "EBM_ESTIMATOR_SEARCH_SWEEPS",
        .kind = EBM__OPTION_INT, FIELD(search_sweeps, INT64), .lo = 1, .hi = INT32_MAX,
        .initial = 10000},
    [EBM_ESTIMATOR_MEAN_FIELD_ITERS] = {.name = "EBM_ESTIMATOR_MEAN_FIELD_ITERS",
        .kind = EBM__OPTION_INT, FIELD(mf_iters, INT64), .lo = 1, .hi = INT32_MAX,
        .initial = 100},
    [EBM_ESTIMATOR_MEAN_FIELD_TOL] = {.name = "EBM_ESTIMATOR_MEAN_FIELD_TOL",
        .kind = EBM__OPTION_DOUBLE, FIELD(mf_tol, DOUBLE), .lo = 0, .open = 0, .initial = 1e-5},
    [EBM_ESTIMATOR_STEP_LIMIT] = {.name = "EBM_ESTIMATOR_STEP_LIMIT", .kind = EBM__OPTION_INT,
        FIELD(step_limit, INT64), .lo = 1, .hi = INT64_MAX, .initial = 1000000},
    [EBM_ESTIMATOR_ROW_OFFSET] = {.name = "EBM_ESTIMATOR_ROW_OFFSET", .kind = EBM__OPTION_INT,
        FIELD(row_offset, INT64), .lo = 0, .hi = UINT32_MAX, .initial = 0},
    [EBM_ESTIMATOR_CHAIN_OFFSET] = {.name = "EBM_ESTIMATOR_CHAIN_OFFSET",
        .kind = EBM__OPTION_INT, FIELD(chain_offset, INT64), .lo = 0, .hi = UINT32_MAX,
        .initial = 0},
};
#undef FIELD
const ebm__options ebm__estimator_options = {
    "estimator", estimator_option_rows,
    (int)(sizeof estimator_option_rows / sizeof estimator_option_rows[0]), 0};

int ebm_estimator_set_int(ebm_estimator_t *e, int option, int64_t value)
{
    if (e == NULL) {
        return EBM_ENULL;
    }
    if (option >= EBM_ESTIMATOR_SAMPLER_OPTION) {
        return set_sampler_option(e, option - EBM_ESTIMATOR_SAMPLER_OPTION, 0, value, 0.0);
    }
    return ebm__option_set_int(&ebm__estimator_options, e, e->errmsg, option, value);
}

int ebm_estimator_set_double(ebm_estimator_t *e, int option, double value)
{
    if (e == NULL) {
        return EBM_ENULL;
    }
    if (option >= EBM_ESTIMATOR_SAMPLER_OPTION) {
        return set_sampler_option(e, option - EBM_ESTIMATOR_SAMPLER_OPTION, 1, 0, value);
    }
    return ebm__option_set_double(&ebm__estimator_options, e, e->errmsg, option, value);
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
        return ebm__set_message(me->errmsg, rc, &msg);
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
    if (rc == EBM_OK && e->kind == EBM_ESTIMATOR_PT && n > 0) {
        const int64_t R = ebm__sampler_ladder_size(e->tempering);
        rc = R == 0 ? ebm__fail(&msg, EBM_EVALUE,
                                "EBM_ESTIMATOR_PT has no ladder yet, so no chains: call "
                                "ebm_estimator_set_ladder first")
             : n % R != 0
                 ? ebm__fail(&msg, EBM_ESHAPE,
                             "n is %lld; PT chains are whole chains of %lld replicas (rows)",
                             (long long)n, (long long)R)
                 : EBM_OK;
    }
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
        return ebm__set_message(e->errmsg, rc, &msg);
    }
    for (int64_t r = 0; r < n; r++) {
        memcpy(copy + r * m->width, chains + r * ldc, (size_t)m->width * sizeof *copy);
    }
    free(e->chains);
    e->chains = copy;
    e->n_chains = n;
    return EBM_OK;
}

int ebm_estimator_set_ladder(ebm_estimator_t *e, int64_t n_betas, const double *betas)
{
    if (e == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = e->kind == EBM_ESTIMATOR_PT
                 ? ebm__check_ladder(&msg, n_betas, betas)
                 : ebm__fail(&msg, EBM_EUNSUPPORTED, "%s has no ladder; only EBM_ESTIMATOR_PT has one",
                             kind_name(e->kind));
    const int64_t old_length = ebm__sampler_ladder_size(e->tempering);
    if (rc == EBM_OK && ebm_sampler_set_ladder(e->tempering, n_betas, betas) != EBM_OK) {
        rc = ebm__fail(&msg, EBM_ENOMEM, "out of memory for a ladder of %lld", (long long)n_betas);
    }
    if (rc != EBM_OK) {
        return ebm__set_message(e->errmsg, rc, &msg);
    }
    if (n_betas != old_length) { /* the chains were of another length */
        free(e->chains);
        e->chains = NULL;
        e->n_chains = 0;
    }
    e->stat[EBM_ESTIMATOR_STAT_SWAP_RATE] = NAN; /* no call under this ladder yet */
    return EBM_OK;
}

int ebm_estimator_set_proposal(ebm_estimator_t *e, int64_t n_rows, const float *rows, int64_t ldr,
                               double flip_prob)
{
    if (e == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    ebm_sampler_t *list[N_SAMPLERS];
    float *copies[N_SAMPLERS] = {NULL};
    const int count = chain_samplers(e, list);
    int rc = EBM_OK;
    for (int i = 0; i < count && rc == EBM_OK; i++) {
        rc = ebm__sampler_proposal_copy(list[i], &msg, n_rows, rows, ldr, flip_prob, &copies[i]);
    }
    if (rc != EBM_OK) {
        for (int i = 0; i < count; i++) {
            free(copies[i]);
        }
        return ebm__set_message(e->errmsg, rc, &msg);
    }
    for (int i = 0; i < count; i++) {
        ebm__sampler_proposal_set(list[i], copies[i], n_rows, flip_prob);
    }
    return EBM_OK;
}

int ebm_estimator_swap_counts(const ebm_estimator_t *e, int64_t n_pairs, int64_t *accepted,
                              int64_t *proposed)
{
    if (e == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    ebm_estimator_t *me = (ebm_estimator_t *)(uintptr_t)e; /* message slot only */
    const int rc = ebm__sampler_swap_counts(e->tempering, &msg, kind_name(e->kind), n_pairs,
                                            accepted, proposed);
    return rc == EBM_OK ? rc : ebm__set_message(me->errmsg, rc, &msg);
}

int ebm__estimator_samplers(ebm_estimator_t *e, ebm_sampler_t **list)
{
    return each_sampler(e, list);
}

ebm_sampler_t *ebm__estimator_tempering(const ebm_estimator_t *e)
{
    return e->tempering;
}

void ebm__estimator_set_twin_global(ebm_estimator_t *e, int twin)
{
    ebm_sampler_t *list[N_SAMPLERS];
    const int count = chain_samplers(e, list);
    for (int i = 0; i < count; i++) {
        ebm__sampler_set_twin_global(list[i], twin);
    }
}

void ebm__estimator_set_plain(ebm_estimator_t *e, int plain)
{
    e->plain = plain;
    ebm_sampler_t *list[N_SAMPLERS];
    const int count = each_sampler(e, list);
    for (int i = 0; i < count; i++) {
        ebm__sampler_set_plain(list[i], plain);
    }
}
