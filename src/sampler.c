/* The sampler handle: creation, options, statistics, argument checks, the
 * one dispatch to the kernels (gibbs.c, mh.c, coupling.c, langevin.c,
 * tempering.c; proposal.c mixes global.c's global moves with them)
 * through their contract (step.h), with the undo of a failed call, and the
 * tempering ladder with its swap counts, which the sampler owns for the
 * estimator too. */
#include "coupling.h"
#include "error.h"
#include "gibbs.h"
#include "global.h"
#include "langevin.h"
#include "mh.h"
#include "model.h"
#include "options.h"
#include "rng.h"
#include "sampler.h"
#include "scratch.h"
#include "step.h"
#include "tempering.h"
#include "testing.h"

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
    case EBM_SAMPLER_TEMPERING: return "EBM_SAMPLER_TEMPERING";
    default: return "unknown";
    }
}

/* ---- handle ----------------------------------------------------------- */

/* The coupling that meets sooner for the model's kind (docs/coupling_times.md):
 * BLOCKWISE for DBMs and spin units; CRN for binary RBMs, where both meet
 * equally soon and CRN's steps cost less, and for a Gaussian visible layer,
 * where BLOCKWISE meets later. */
static int default_coupling(const ebm_model_t *m)
{
    if (ebm__is_gaussian(m, 0)) {
        return EBM_COUPLING_CRN;
    }
    int spin = 0;
    for (int64_t l = 0; l < m->n_layers; l++) {
        spin |= m->units[l] == EBM_UNITS_SPIN;
    }
    return m->n_layers >= 3 || spin ? EBM_COUPLING_BLOCKWISE : EBM_COUPLING_CRN;
}

int ebm_sampler_create(ebm_sampler_t **out, const ebm_model_t *m, int kind)
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
    if (kind < EBM_SAMPLER_GIBBS || kind > EBM_SAMPLER_TEMPERING) {
        return ebm__model_error(
            m, EBM_EVALUE,
            "kind is %d; it must be EBM_SAMPLER_GIBBS (0), EBM_SAMPLER_MH_UNIFORM (1), "
            "EBM_SAMPLER_LANGEVIN (2), EBM_SAMPLER_GIBBS_LANGEVIN (3) or "
            "EBM_SAMPLER_TEMPERING (4)", kind);
    }
    if ((kind == EBM_SAMPLER_LANGEVIN || kind == EBM_SAMPLER_GIBBS_LANGEVIN) &&
        (m->n_layers != 2 || !ebm__is_gaussian(m, 0))) {
        return ebm__model_error(
            m, EBM_EUNSUPPORTED,
            "%s needs a GRBM (2 layers, Gaussian visible units); this model has %lld "
            "layers and %s visible units", kind_name(kind), (long long)m->n_layers,
            ebm__is_gaussian(m, 0) ? "Gaussian" : "discrete");
    }
    if (kind == EBM_SAMPLER_MH_UNIFORM && ebm__is_potts(m, 0)) {
        return ebm__model_error(m, EBM_EUNSUPPORTED,
                                "EBM_SAMPLER_MH_UNIFORM is not supported for Potts units yet: use "
                                "EBM_SAMPLER_GIBBS or EBM_SAMPLER_TEMPERING");
    }
    if ((kind == EBM_SAMPLER_MH_UNIFORM || kind == EBM_SAMPLER_TEMPERING) && ebm__is_drelu(m, 1)) {
        return ebm__model_error(
            m, EBM_EUNSUPPORTED,
            "%s is not supported for dReLU hidden units yet: use EBM_SAMPLER_GIBBS",
            kind_name(kind));
    }
    ebm_sampler_t *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return ebm__model_error(m, EBM_ENOMEM, "out of memory");
    }
    s->m = m;
    s->kind = kind;
    ebm__options_init(&ebm__sampler_options, s);
    s->settings.coupling = default_coupling(m);
    /* LANGEVIN's default is one step per call, which a cosine schedule over
     * the call's steps would make a step of size 0. */
    if (kind == EBM_SAMPLER_GIBBS_LANGEVIN) {
        s->settings.langevin_steps = 10;
        s->settings.cosine = 1;
    }
    s->stat[EBM_STAT_ACCEPT_RATE] = 1.0;
    s->stat[EBM_STAT_SWAP_RATE] = NAN;
    s->stat[EBM_STAT_GLOBAL_ACCEPT_RATE] = NAN;
    s->stat[EBM_STAT_GLOBAL_BOTH_RATE] = NAN;
    *out = s;
    return EBM_OK;
}

void ebm_sampler_destroy(ebm_sampler_t *s)
{
    if (s == NULL) {
        return;
    }
    ebm__arena_free(&s->scratch);
    ebm__arena_free(&s->global_scratch);
    free(s->proposal_rows);
    free(s->top_ids);
    free(s->saved_rows);
    free(s->row_ids);
    free(s->betas);
    free(s->swaps);
    free(s);
}

const char *ebm_sampler_errmsg(const ebm_sampler_t *s)
{
    return s == NULL ? "sampler is NULL" : s->errmsg;
}


double ebm_sampler_stat(const ebm_sampler_t *s, int stat)
{
    if (s == NULL || stat < 0 || stat >= EBM__N_SAMPLER_STATS) {
        return NAN;
    }
    return stat == EBM_STAT_ITERATION ? (double)s->iteration : s->stat[stat];
}

/* ---- options ---------------------------------------------------------- */

/* EBM_SAMPLER_CLAMP_LAYERS: bits of the model's layers only. */
static int clamp_fits_model(void *handle, ebm__msg *msg, int64_t value)
{
    const ebm_sampler_t *s = handle;
    return (uint64_t)value <= ebm__all_layers(s->m)
               ? EBM_OK
               : ebm__option_out_of_range(&ebm__sampler_options, EBM_SAMPLER_CLAMP_LAYERS, msg,
                                          value);
}

/* The options (enum ebm_sampler_option; include/ebm.h says what each does).
 * A row's field is SETTING(member, type), one of the settings the kernels
 * read (step.h), or FIELD(member, type), one of the handle's own.
 * python/tools/gen_options.py reads this table: keep one designated row per
 * option, fields as `.name = value`. */
#define SETTING(member, t)                                                                 \
    .type = EBM__FIELD_##t,                                                                \
    .offset = offsetof(ebm_sampler_t, settings) + offsetof(ebm__sampler_settings, member)
#define FIELD(member, t) .type = EBM__FIELD_##t, .offset = offsetof(ebm_sampler_t, member)
static const ebm__option sampler_option_rows[] = {
    [EBM_SAMPLER_CLAMP_LAYERS] = {.name = "EBM_SAMPLER_CLAMP_LAYERS", .kind = EBM__OPTION_MASK,
        SETTING(clamp_layers, UINT32), .lo = 0, .hi = UINT32_MAX,
        .range = "a mask of the model's layers, bits 0 to L of a model of L + 1 layers",
        .initial = 0, .hook = clamp_fits_model},
    [EBM_SAMPLER_COUPLING] = {.name = "EBM_SAMPLER_COUPLING", .kind = EBM__OPTION_ENUM,
        SETTING(coupling, INT), .lo = EBM_COUPLING_MAXIMAL, .hi = EBM_COUPLING_BLOCKWISE,
        .range = "EBM_COUPLING_MAXIMAL (0), EBM_COUPLING_CRN (1) or EBM_COUPLING_BLOCKWISE (2)",
        .values = "ebm_coupling", .initial = EBM_COUPLING_CRN,
        .initial_text = "EBM_COUPLING_BLOCKWISE for DBMs and spin units, else EBM_COUPLING_CRN"},
    [EBM_SAMPLER_LANGEVIN_STEPS] = {.name = "EBM_SAMPLER_LANGEVIN_STEPS",
        .kind = EBM__OPTION_INT, SETTING(langevin_steps, INT64), .lo = 1, .hi = 1000000,
        .initial = 1, .initial_text = "10 for EBM_SAMPLER_GIBBS_LANGEVIN, else 1"},
    [EBM_SAMPLER_STEP_SIZE] = {.name = "EBM_SAMPLER_STEP_SIZE", .kind = EBM__OPTION_DOUBLE,
        SETTING(step_size, DOUBLE), .lo = 0, .open = 1, .initial = 0.01},
    [EBM_SAMPLER_COSINE] = {.name = "EBM_SAMPLER_COSINE", .kind = EBM__OPTION_FLAG,
        SETTING(cosine, INT), .lo = 0, .hi = 1, .initial = 0,
        .initial_text = "1 for EBM_SAMPLER_GIBBS_LANGEVIN, else 0"},
    [EBM_SAMPLER_ADJUST_AFTER] = {.name = "EBM_SAMPLER_ADJUST_AFTER", .kind = EBM__OPTION_INT,
        SETTING(adjust_after, INT64), .lo = -1, .hi = INT64_MAX, .initial = -1},
    [EBM_SAMPLER_SCALE_BY_VARIANCE] = {.name = "EBM_SAMPLER_SCALE_BY_VARIANCE",
        .kind = EBM__OPTION_FLAG, SETTING(scale_by_variance, INT), .lo = 0, .hi = 1,
        .initial = 0},
    [EBM_SAMPLER_CLOSED_FORM] = {.name = "EBM_SAMPLER_CLOSED_FORM", .kind = EBM__OPTION_FLAG,
        SETTING(closed_form, INT), .lo = 0, .hi = 1, .initial = 1},
    [EBM_SAMPLER_ITERATION] = {.name = "EBM_SAMPLER_ITERATION", .kind = EBM__OPTION_INT,
        FIELD(iteration, INT64), .lo = 0, .hi = INT64_MAX, .initial = 0},
    [EBM_SAMPLER_PRECONDITION] = {.name = "EBM_SAMPLER_PRECONDITION", .kind = EBM__OPTION_FLAG,
        SETTING(precondition, INT), .lo = 0, .hi = 1, .initial = 0},
    [EBM_SAMPLER_ROW_OFFSET] = {.name = "EBM_SAMPLER_ROW_OFFSET", .kind = EBM__OPTION_INT,
        FIELD(row_offset, INT64), .lo = 0, .hi = UINT32_MAX, .initial = 0},
    [EBM_SAMPLER_GLOBAL_PROB] = {.name = "EBM_SAMPLER_GLOBAL_PROB", .kind = EBM__OPTION_DOUBLE,
        SETTING(global_prob, DOUBLE), .lo = 0, .open = 0, .hi = 1, .below = 1, .initial = 0},
};
#undef SETTING
#undef FIELD
const ebm__options ebm__sampler_options = {
    "sampler", sampler_option_rows,
    (int)(sizeof sampler_option_rows / sizeof sampler_option_rows[0]), 1};

int ebm_sampler_set_int(ebm_sampler_t *s, int option, int64_t value)
{
    if (s == NULL) {
        return EBM_ENULL;
    }
    return ebm__option_set_int(&ebm__sampler_options, s, s->errmsg, option, value);
}

int ebm_sampler_set_double(ebm_sampler_t *s, int option, double value)
{
    if (s == NULL) {
        return EBM_ENULL;
    }
    return ebm__option_set_double(&ebm__sampler_options, s, s->errmsg, option, value);
}

/* ---- public steps ----------------------------------------------------- */

/* A step call's statistics start afresh; a failed call puts them back
 * (statistics change only if the call succeeds). ebm__sampler_run moves
 * the step counter, and back on failure. */
static void begin_call(ebm_sampler_t *s, int64_t n, double met_fraction, double *saved)
{
    memcpy(saved, s->stat, sizeof s->stat);
    s->stat[EBM_STAT_ROWS] = (double)n;
    s->stat[EBM_STAT_ACCEPT_RATE] = 1.0;
    s->stat[EBM_STAT_MET_FRACTION] = met_fraction;
    s->stat[EBM_STAT_TRIES_MEAN] = 0.0;
    s->stat[EBM_STAT_TRIES_MAX] = 0.0;
    s->stat[EBM_STAT_SWAP_RATE] = NAN;
    s->stat[EBM_STAT_GLOBAL_ACCEPT_RATE] = NAN;
    s->stat[EBM_STAT_GLOBAL_BOTH_RATE] = NAN;
    s->accepted = 0;
    if (s->n_betas > 0) {
        ebm__sampler_tally_begin(s);
    }
}

static int undo_call(ebm_sampler_t *s, const double *saved, ebm_rng_t *rng,
                     const ebm__rng_mark *rng_saved, int rc, const ebm__msg *msg)
{
    memcpy(s->stat, saved, sizeof s->stat);
    ebm__rng_restore(rng, rng_saved);
    return ebm__set_message(s->errmsg, rc, msg);
}

int ebm__sampler_check_options(const ebm_sampler_t *s, ebm__msg *msg)
{
    const int langevin = s->kind == EBM_SAMPLER_LANGEVIN || s->kind == EBM_SAMPLER_GIBBS_LANGEVIN;
    if (langevin && s->settings.precondition && s->settings.scale_by_variance) {
        return ebm__fail(msg, EBM_EVALUE,
                         "EBM_SAMPLER_PRECONDITION and EBM_SAMPLER_SCALE_BY_VARIANCE are both 1: "
                         "they are two ways of scaling the step by the variances; set one");
    }
    const double p = s->settings.global_prob;
    if (p == 0.0) {
        return EBM_OK;
    }
    if (s->kind != EBM_SAMPLER_GIBBS && s->kind != EBM_SAMPLER_TEMPERING) {
        return ebm__fail(msg, EBM_EUNSUPPORTED,
                         "EBM_SAMPLER_GLOBAL_PROB is %g: global moves are built for "
                         "EBM_SAMPLER_GIBBS and EBM_SAMPLER_TEMPERING only, not yet for %s (set "
                         "it to 0)",
                         p, kind_name(s->kind));
    }
    EBM__PROPAGATE(ebm__global_supported(s->m, msg));
    if (s->settings.clamp_layers != 0) {
        return ebm__fail(msg, EBM_EUNSUPPORTED,
                         "EBM_SAMPLER_GLOBAL_PROB is %g and EBM_SAMPLER_CLAMP_LAYERS is %lu: a "
                         "global move proposes the visible and even layers anew, so it cannot "
                         "keep layers clamped (set one of them to 0)",
                         p, (unsigned long)s->settings.clamp_layers);
    }
    if (s->proposal.n_rows == 0) {
        return ebm__fail(msg, EBM_EVALUE,
                         "EBM_SAMPLER_GLOBAL_PROB is %g but no proposal is set: call "
                         "ebm_sampler_set_proposal (an estimator's: ebm_estimator_set_proposal) "
                         "first",
                         p);
    }
    return EBM_OK;
}

/* The residual try limit of coupled Gibbs steps (testing.h). */
static int64_t residual_try_limit = EBM__RESIDUAL_TRY_LIMIT;

int64_t ebm__set_residual_try_limit(int64_t limit)
{
    const int64_t previous = residual_try_limit;
    residual_try_limit = limit;
    return previous;
}

/* What the kernel of s reads for the step of rows in: s's settings, not
 * a copy, and the step's particulars. */
static ebm__kernel_in kernel_in(ebm_sampler_t *s, const ebm__step_in *in)
{
    return (ebm__kernel_in){
        .m = s->m,
        .settings = &s->settings,
        .scratch = &s->scratch,
        .iteration = s->iteration,
        .n_betas = s->n_betas,
        .betas = s->betas,
        .entry_input = in->entry_input,
        .residual_try_limit = residual_try_limit,
        .proposal = &s->proposal,
        .global_scratch = &s->global_scratch,
    };
}

int ebm__sampler_dispatch(const ebm_sampler_t *s, const ebm__kernel_in *k, ebm__kernel_out *out,
                          ebm__msg *msg, ebm_rng_t *rng, const ebm__step_in *in)
{
    if (in->y != NULL) {
        return s->kind == EBM_SAMPLER_GIBBS
                   ? ebm__coupled_gibbs_step(k, out, msg, rng, in->ids, in->n, in->x, in->ldx,
                                             in->y, in->ldy, in->met, in->keep)
                   : ebm__coupled_mh_step(k, out, msg, rng, in->ids, in->n, in->x, in->ldx,
                                          in->y, in->ldy, in->met);
    }
    switch (s->kind) {
    case EBM_SAMPLER_GIBBS:
        return ebm__gibbs_step(k, out, msg, rng, in->ids, in->n, in->x, in->ldx, in->keep);
    case EBM_SAMPLER_MH_UNIFORM:
        return ebm__mh_step(k, out, msg, rng, in->ids, in->n, in->x, in->ldx);
    case EBM_SAMPLER_LANGEVIN:
        return ebm__langevin_step(k, out, msg, rng, in->ids, in->n, in->x, in->ldx);
    case EBM_SAMPLER_TEMPERING:
        return ebm__tempering_step(k, out, msg, rng, in->ids, in->n, in->x, in->ldx, in->keep);
    default:
        return ebm__gibbs_langevin_step(k, out, msg, rng, in->ids, in->n, in->x, in->ldx);
    }
}

/* What s keeps of a kernel's report on a step (in) that succeeded. */
static void keep_report(ebm_sampler_t *s, const ebm__step_in *in, const ebm__kernel_out *out)
{
    s->stat[EBM_STAT_ACCEPT_RATE] = out->accept_rate;
    if (in->y != NULL) {
        s->stat[EBM_STAT_MET_FRACTION] = out->met_fraction;
        s->stat[EBM_STAT_TRIES_MEAN] = out->tries_mean;
        s->stat[EBM_STAT_TRIES_MAX] = out->tries_max;
    }
    s->stat[EBM_STAT_GLOBAL_ACCEPT_RATE] = out->global_accept_rate;
    s->stat[EBM_STAT_GLOBAL_BOTH_RATE] = out->global_both_rate;
    s->global_decisions = out->global_decisions;
    s->accepted = out->accepted;
    s->energy_rechecks += out->energy_rechecks;
    s->hidden_input = out->hidden_input;
    for (int64_t k = 0; s->kind == EBM_SAMPLER_TEMPERING && k < s->n_betas - 1; k++) {
        s->tally_accepted[k] += s->step_accepted[k];
        s->tally_proposed[k] += s->step_proposed[k];
    }
}

int ebm__sampler_run(ebm_sampler_t *s, ebm__msg *msg, ebm_rng_t *rng, const ebm__step_in *in,
                     ebm__step_out *report)
{
    EBM__PROPAGATE(ebm__sampler_check_options(s, msg));
    s->iteration++;
    s->hidden_input = NULL; /* set again by the kernels that leave it */
    s->global_decisions = 0;
    /* No rows, no kernel; but tempering reports the (no) swaps of the step. */
    if (in->n > 0 || s->kind == EBM_SAMPLER_TEMPERING) {
        const ebm__kernel_in k = kernel_in(s, in);
        ebm__kernel_out out = {.accept_rate = 1.0, .met_fraction = 1.0,
                               .swap_accepted = s->step_accepted,
                               .swap_proposed = s->step_proposed,
                               .global_accept_rate = NAN, .global_both_rate = NAN};
        const int rc = ebm__sampler_mixture(s, &k, &out, msg, rng, in);
        if (rc != EBM_OK) {
            s->iteration--;
            return rc;
        }
        keep_report(s, in, &out);
    }
    if (report != NULL) {
        *report = (ebm__step_out){.kind = s->kind,
                                  .accept_rate = s->stat[EBM_STAT_ACCEPT_RATE],
                                  .accepted = s->accepted,
                                  .global_decisions = s->global_decisions,
                                  .global_accept_rate = s->stat[EBM_STAT_GLOBAL_ACCEPT_RATE]};
    }
    return EBM_OK;
}

const float *ebm__sampler_hidden_input(const ebm_sampler_t *s)
{
    return s->hidden_input;
}

void ebm__sampler_set_plain(ebm_sampler_t *s, int plain)
{
    s->settings.plain_energies = plain;
}

int64_t ebm__sampler_energy_rechecks(const ebm_sampler_t *s)
{
    return s->energy_rechecks;
}

void ebm__sampler_set_twin_density(ebm_sampler_t *s, int twin)
{
    s->settings.twin_density = twin;
}

void ebm__sampler_set_twin_swap(ebm_sampler_t *s, int twin)
{
    s->settings.twin_swap = twin;
}

void ebm__sampler_set_twin_global(ebm_sampler_t *s, int twin)
{
    s->settings.twin_global = twin;
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
        uint32_t moving = ebm__unclamped_layers(m, s->settings.clamp_layers, 0) |
                          ebm__unclamped_layers(m, s->settings.clamp_layers, 1);
        if (ebm__is_gaussian(m, 0) && (moving & 1u)) {
            rc = ebm__fail(msg, EBM_EUNSUPPORTED,
                           "EBM_SAMPLER_MH_UNIFORM has no uniform proposal for the Gaussian "
                           "visible layer: clamp it (EBM_SAMPLER_CLAMP_LAYERS bit 0)");
        }
    }
    return rc;
}

/* The stream rows of a public call's n rows: NULL (row r) without
 * EBM_SAMPLER_ROW_OFFSET, else row_offset + r in s->row_ids; EBM_ESHAPE
 * past stream row 2^32 - 1, EBM_ENOMEM (nothing changed). */
static int public_rows(ebm_sampler_t *s, ebm__msg *msg, int64_t n, const int64_t **ids)
{
    *ids = NULL;
    if (s->row_offset == 0) {
        return EBM_OK;
    }
    if (n > (int64_t)UINT32_MAX + 1 - s->row_offset) {
        return ebm__fail(msg, EBM_ESHAPE,
                         "n is %lld and EBM_SAMPLER_ROW_OFFSET is %lld: the rows would reach "
                         "past stream row 2^32 - 1",
                         (long long)n, (long long)s->row_offset);
    }
    int64_t *rows = ebm__grow((void **)&s->row_ids, &s->row_ids_cap, (size_t)(n > 0 ? n : 1),
                              sizeof *rows);
    if (rows == NULL) {
        return ebm__fail(msg, EBM_ENOMEM, "out of memory for %lld row numbers", (long long)n);
    }
    for (int64_t r = 0; r < n; r++) {
        rows[r] = s->row_offset + r;
    }
    *ids = rows;
    return EBM_OK;
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
    if (rc == EBM_OK && s->kind == EBM_SAMPLER_TEMPERING) {
        rc = ebm__tempering_check(&msg, s->n_betas, s->settings.clamp_layers, n);
    }
    const int64_t *ids = NULL;
    if (rc == EBM_OK) {
        rc = public_rows(s, &msg, n, &ids);
    }
    if (rc != EBM_OK) {
        return ebm__set_message(s->errmsg, rc, &msg);
    }
    double saved[EBM__N_SAMPLER_STATS];
    const ebm__rng_mark rng_saved = ebm__rng_save(rng);
    begin_call(s, n, NAN, saved);
    const ebm__step_in in = {.ids = ids, .n = n, .x = x, .ldx = ldx, .keep = 1};
    rc = ebm__sampler_run(s, &msg, rng, &in, NULL);
    if (rc != EBM_OK) {
        return undo_call(s, saved, rng, &rng_saved, rc, &msg);
    }
    if (s->n_betas > 0) {
        ebm__sampler_tally_commit(s);
    }
    return EBM_OK;
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
    if (rc == EBM_OK && ebm__is_drelu(s->m, 1)) {
        rc = ebm__fail(&msg, EBM_EUNSUPPORTED,
                       "the coupled step has no coupling of dReLU units yet");
    }
    if (rc == EBM_OK) {
        rc = check_chain(s, &msg, "x", n, x, ldx);
    }
    if (rc == EBM_OK) {
        rc = check_chain(s, &msg, "y", n, y, ldy);
    }
    const int64_t *ids = NULL;
    if (rc == EBM_OK) {
        rc = public_rows(s, &msg, n, &ids);
    }
    if (rc != EBM_OK) {
        return ebm__set_message(s->errmsg, rc, &msg);
    }
    double saved[EBM__N_SAMPLER_STATS];
    const ebm__rng_mark rng_saved = ebm__rng_save(rng);
    begin_call(s, n, 1.0, saved);
    const ebm__step_in in = {.ids = ids, .n = n, .x = x, .ldx = ldx, .y = y, .ldy = ldy,
                             .met = met, .keep = 1};
    rc = ebm__sampler_run(s, &msg, rng, &in, NULL);
    return rc == EBM_OK ? rc : undo_call(s, saved, rng, &rng_saved, rc, &msg);
}

/* ---- parallel tempering ----------------------------------------------- */

int ebm_sampler_set_ladder(ebm_sampler_t *s, int64_t n_betas, const double *betas)
{
    if (s == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    int rc = s->kind == EBM_SAMPLER_TEMPERING
                 ? ebm__check_ladder(&msg, n_betas, betas)
                 : ebm__fail(&msg, EBM_EUNSUPPORTED, "%s has no ladder; only "
                             "EBM_SAMPLER_TEMPERING has one", kind_name(s->kind));
    double *copy = NULL;
    int64_t *swaps = NULL;
    const int64_t pairs = n_betas - 1;
    if (rc == EBM_OK) {
        copy = malloc((size_t)n_betas * sizeof *copy);
        swaps = calloc((size_t)(6 * pairs), sizeof *swaps);
        if (copy == NULL || swaps == NULL) {
            free(copy);
            free(swaps);
            rc = ebm__fail(&msg, EBM_ENOMEM, "out of memory for a ladder of %lld", (long long)n_betas);
        }
    }
    if (rc != EBM_OK) {
        return ebm__set_message(s->errmsg, rc, &msg);
    }
    memcpy(copy, betas, (size_t)n_betas * sizeof *copy);
    free(s->betas);
    free(s->swaps);
    s->betas = copy;
    s->swaps = swaps;
    s->swap_accepted = swaps;
    s->swap_proposed = swaps + pairs;
    s->tally_accepted = swaps + 2 * pairs;
    s->tally_proposed = swaps + 3 * pairs;
    s->step_accepted = swaps + 4 * pairs;
    s->step_proposed = swaps + 5 * pairs;
    s->n_betas = n_betas;
    s->stat[EBM_STAT_SWAP_RATE] = NAN; /* no call under this ladder yet */
    return EBM_OK;
}

int64_t ebm__sampler_ladder_size(const ebm_sampler_t *s)
{
    return s == NULL ? 0 : s->n_betas;
}

void ebm__sampler_tally_begin(ebm_sampler_t *s)
{
    const int64_t pairs = s->n_betas - 1;
    memset(s->tally_accepted, 0, (size_t)pairs * sizeof *s->tally_accepted);
    memset(s->tally_proposed, 0, (size_t)pairs * sizeof *s->tally_proposed);
}

void ebm__sampler_tally_commit(ebm_sampler_t *s)
{
    const int64_t pairs = s->n_betas - 1;
    int64_t accepted = 0, proposed = 0;
    for (int64_t k = 0; k < pairs; k++) {
        s->swap_accepted[k] = s->tally_accepted[k];
        s->swap_proposed[k] = s->tally_proposed[k];
        accepted += s->tally_accepted[k];
        proposed += s->tally_proposed[k];
    }
    s->stat[EBM_STAT_SWAP_RATE] = proposed > 0 ? (double)accepted / (double)proposed : 1.0;
}

int ebm__sampler_swap_counts(const ebm_sampler_t *s, ebm__msg *msg, const char *kind,
                             int64_t n_pairs, int64_t *accepted, int64_t *proposed)
{
    const int64_t R = ebm__sampler_ladder_size(s);
    if (R == 0) {
        return ebm__fail(msg, EBM_EVALUE, "%s has no ladder, so no swaps", kind);
    }
    if (n_pairs != R - 1) {
        return ebm__fail(msg, EBM_ESHAPE, "n_pairs is %lld; the ladder of %lld has %lld pairs",
                         (long long)n_pairs, (long long)R, (long long)(R - 1));
    }
    for (int64_t k = 0; k < n_pairs; k++) {
        if (accepted != NULL) {
            accepted[k] = s->swap_accepted[k];
        }
        if (proposed != NULL) {
            proposed[k] = s->swap_proposed[k];
        }
    }
    return EBM_OK;
}

int ebm_sampler_swap_counts(const ebm_sampler_t *s, int64_t n_pairs, int64_t *accepted,
                            int64_t *proposed)
{
    if (s == NULL) {
        return EBM_ENULL;
    }
    ebm__msg msg;
    ebm_sampler_t *ms = (ebm_sampler_t *)(uintptr_t)s; /* message slot only */
    const int rc = ebm__sampler_swap_counts(s, &msg, kind_name(s->kind), n_pairs, accepted,
                                            proposed);
    return rc == EBM_OK ? rc : ebm__set_message(ms->errmsg, rc, &msg);
}
