/* The option tables (src/options.h) against the behaviour of the setters
 * they replaced. For every sampler and estimator option: the default each
 * kind gets, the values at each end of its range accepted (and read back),
 * the values just past them refused with their code, a message naming the
 * option and the value, and nothing changed; the wrong setter and unknown
 * option numbers refused. The expectations are written out here from the
 * switches the tables replaced, never read from the tables. */
#include "options.h"
#include "tests.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#define EV EBM_EVALUE
#define EU EBM_EUNSUPPORTED

static const char *const sampler_names[] = {
    "EBM_SAMPLER_CLAMP_LAYERS",      "EBM_SAMPLER_COUPLING",    "EBM_SAMPLER_LANGEVIN_STEPS",
    "EBM_SAMPLER_STEP_SIZE",         "EBM_SAMPLER_COSINE",      "EBM_SAMPLER_ADJUST_AFTER",
    "EBM_SAMPLER_SCALE_BY_VARIANCE", "EBM_SAMPLER_CLOSED_FORM", "EBM_SAMPLER_ITERATION",
    "EBM_SAMPLER_PRECONDITION",      "EBM_SAMPLER_ROW_OFFSET",  "EBM_SAMPLER_GLOBAL_PROB"};
static const char *const estimator_names[] = {
    "EBM_ESTIMATOR_K",           "EBM_ESTIMATOR_MAX_STEPS",        "EBM_ESTIMATOR_CHAINS",
    "EBM_ESTIMATOR_MARGINALIZE", "EBM_ESTIMATOR_POSITIVE",         "EBM_ESTIMATOR_SAMPLER",
    "EBM_ESTIMATOR_BURN_IN",     "EBM_ESTIMATOR_SEARCH_SWEEPS",    "EBM_ESTIMATOR_MEAN_FIELD_ITERS",
    "EBM_ESTIMATOR_MEAN_FIELD_TOL", "EBM_ESTIMATOR_STEP_LIMIT",    "EBM_ESTIMATOR_ROW_OFFSET",
    "EBM_ESTIMATOR_CHAIN_OFFSET"};
#define N_SAMPLER_OPTIONS ((int)(sizeof sampler_names / sizeof sampler_names[0]))
#define N_ESTIMATOR_OPTIONS ((int)(sizeof estimator_names / sizeof estimator_names[0]))

/* One value given to an option, and the code the old setter returned. */
typedef struct int_edge {
    int option;
    int64_t value;
    int code;
} int_edge;
typedef struct double_edge {
    int option;
    double value;
    int code;
} double_edge;

/* A handle and its setters, so that one checker serves both. */
typedef struct handle {
    const ebm__options *table;
    void *h;
    const char *const *names;
    int (*set_int)(void *h, int option, int64_t value);
    int (*set_double)(void *h, int option, double value);
    const char *(*errmsg)(const void *h);
} handle;

static int s_set_int(void *h, int o, int64_t v) { return ebm_sampler_set_int(h, o, v); }
static int s_set_double(void *h, int o, double v) { return ebm_sampler_set_double(h, o, v); }
static const char *s_errmsg(const void *h) { return ebm_sampler_errmsg(h); }
static int e_set_int(void *h, int o, int64_t v) { return ebm_estimator_set_int(h, o, v); }
static int e_set_double(void *h, int o, double v) { return ebm_estimator_set_double(h, o, v); }
static const char *e_errmsg(const void *h) { return ebm_estimator_errmsg(h); }

static handle sampler_handle(ebm_sampler_t *s)
{
    return (handle){&ebm__sampler_options, s, sampler_names, s_set_int, s_set_double, s_errmsg};
}

static handle estimator_handle(ebm_estimator_t *e)
{
    return (handle){&ebm__estimator_options, e, estimator_names, e_set_int, e_set_double,
                    e_errmsg};
}

/* Every option's value as a double (an unknown one: NaN). */
static void read_all(const handle *hd, int n, double *out)
{
    for (int o = 0; o < n; o++) {
        if (ebm__option_get_double(hd->table, hd->h, o, &out[o]) != EBM_OK) {
            out[o] = NAN;
        }
    }
}

static int same_values(const double *a, const double *b, int n)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* Give each edge to the setter: the code; accepted, the value read back;
 * refused, a message naming the option and the value, nothing changed. */
static void check_int_edges(const handle *hd, int n, const int_edge *edges, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const int_edge *ed = &edges[i];
        double before[32], after[32];
        read_all(hd, n, before);
        t_soft_context("%s = %lld", hd->names[ed->option], (long long)ed->value);
        const int rc = hd->set_int(hd->h, ed->option, ed->value);
        read_all(hd, n, after);
        CHECK(rc == ed->code, "returned %s, not %s (%s)", ebm_error_name(rc),
              ebm_error_name(ed->code), hd->errmsg(hd->h));
        int64_t v = 0;
        if (rc == EBM_OK) {
            CHECK(ebm__option_get_int(hd->table, hd->h, ed->option, &v) == EBM_OK &&
                      v == ed->value,
                  "read back %lld", (long long)v);
            continue;
        }
        char value[32];
        snprintf(value, sizeof value, "%lld", (long long)ed->value);
        const char *msg = hd->errmsg(hd->h);
        CHECK(msg[0] != '\0' && (ed->code != EV || (t_contains(msg, hd->names[ed->option]) &&
                                                      t_contains(msg, value))),
              "message \"%s\"", msg);
        CHECK(same_values(before, after, n), "a refused value changed an option");
    }
    t_soft_context("%s", "");
}

static void check_double_edges(const handle *hd, int n, const double_edge *edges, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const double_edge *ed = &edges[i];
        double before[32], after[32], v = NAN;
        read_all(hd, n, before);
        t_soft_context("%s = %g (double)", hd->names[ed->option], ed->value);
        const int rc = hd->set_double(hd->h, ed->option, ed->value);
        read_all(hd, n, after);
        CHECK(rc == ed->code, "returned %s, not %s (%s)", ebm_error_name(rc),
              ebm_error_name(ed->code), hd->errmsg(hd->h));
        if (rc == EBM_OK) {
            ebm__option_get_double(hd->table, hd->h, ed->option, &v);
            CHECK(memcmp(&v, &ed->value, sizeof v) == 0, "read back %g", v);
            continue;
        }
        CHECK(t_contains(hd->errmsg(hd->h), hd->names[ed->option] + 4), "message \"%s\"",
              hd->errmsg(hd->h));
        CHECK(same_values(before, after, n), "a refused value changed an option");
    }
    t_soft_context("%s", "");
}

/* Unknown option numbers and the wrong setter, for every option
 * (double_options: bit o set for a double option o). */
static void check_wrong_calls(const handle *hd, int n, uint32_t double_options)
{
    const int unknown[] = {-1, n, n + 1, 999, INT_MAX, INT_MIN};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        char number[32];
        snprintf(number, sizeof number, "option %d", unknown[i]);
        t_soft_context("unknown option %d", unknown[i]);
        CHECK(hd->set_int(hd->h, unknown[i], 0) == EV && t_contains(hd->errmsg(hd->h), number) &&
                  t_contains(hd->errmsg(hd->h), "unknown"),
              "set_int: \"%s\"", hd->errmsg(hd->h));
        CHECK(hd->set_double(hd->h, unknown[i], 0.5) == EV &&
                  t_contains(hd->errmsg(hd->h), number),
              "set_double: \"%s\"", hd->errmsg(hd->h));
    }
    for (int o = 0; o < n; o++) {
        t_soft_context("%s by the other setter", hd->names[o]);
        double before[32], after[32];
        read_all(hd, n, before);
        if (double_options >> o & 1u) {
            CHECK(hd->set_int(hd->h, o, 1) == EV && t_contains(hd->errmsg(hd->h), hd->names[o]) &&
                      t_contains(hd->errmsg(hd->h), "double"),
                  "set_int: \"%s\"", hd->errmsg(hd->h));
        } else {
            CHECK(hd->set_double(hd->h, o, 1.0) == EV &&
                      t_contains(hd->errmsg(hd->h), "not a double"),
                  "set_double: \"%s\"", hd->errmsg(hd->h));
        }
        read_all(hd, n, after);
        CHECK(same_values(before, after, n), "a refused call changed an option");
    }
    t_soft_context("%s", "");
}

/* Every option of h against the defaults in `want`. */
static void check_defaults(const handle *hd, int n, const double *want, const char *what)
{
    double got[32];
    read_all(hd, n, got);
    for (int o = 0; o < n; o++) {
        CHECK(got[o] == want[o], "%s: %s defaults to %g, not %g", what, hd->names[o], got[o],
              want[o]);
    }
}

/* The models the option checks run on: a binary RBM (4-3), a binary DBM
 * (3-2-2) and a GRBM (4-3). */
static void make_models(ebm_model_t *models[3])
{
    const int64_t s2[2] = {4, 3}, s3[3] = {3, 2, 2};
    models[0] = t_model(2, s2, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    models[1] = t_model(3, s3, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    models[2] = t_model(2, s2, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
}

/* The tables themselves: one row per option of the header's enum, named
 * as the enum member, each default inside its range. */
START_TEST(option_tables)
{
    t_soft_reset();
    const ebm__options *tables[2] = {&ebm__sampler_options, &ebm__estimator_options};
    const char *const *names[2] = {sampler_names, estimator_names};
    const int counts[2] = {N_SAMPLER_OPTIONS, N_ESTIMATOR_OPTIONS};
    for (int t = 0; t < 2; t++) {
        CHECK(tables[t]->count == counts[t], "%s table: %d rows", tables[t]->handle,
              tables[t]->count);
        for (int o = 0; o < counts[t]; o++) {
            const ebm__option *row = ebm__option_find(tables[t], o);
            CHECK(row != NULL && strcmp(row->name, names[t][o]) == 0, "%s row %d: %s",
                  tables[t]->handle, o, row != NULL ? row->name : "none");
            if (row != NULL && row->kind != EBM__OPTION_DOUBLE) {
                CHECK(row->lo <= row->initial && row->initial <= row->hi,
                      "%s: default %g outside %lld to %lld", row->name, row->initial,
                      (long long)row->lo, (long long)row->hi);
            }
        }
        CHECK(ebm__option_find(tables[t], counts[t]) == NULL &&
                  ebm__option_find(tables[t], -1) == NULL,
              "%s: rows past the enum", tables[t]->handle);
    }
    FINISH();
}
END_TEST

START_TEST(sampler_options)
{
    t_soft_reset();
    ebm_model_t *models[3];
    make_models(models);
    ebm_model_t *rbm = models[0], *dbm = models[1];
    /* Defaults: clamp, coupling, steps, step size, cosine, adjust, scale,
     * closed form, iteration, precondition, row offset, global moves. */
    static const struct {
        int model, kind;
        double want[12];
    } defaults[] = {
        {0, EBM_SAMPLER_GIBBS, {0, EBM_COUPLING_CRN, 1, 0.01, 0, -1, 0, 1, 0, 0, 0, 0}},
        {0, EBM_SAMPLER_MH_UNIFORM, {0, EBM_COUPLING_CRN, 1, 0.01, 0, -1, 0, 1, 0, 0, 0, 0}},
        {1, EBM_SAMPLER_GIBBS, {0, EBM_COUPLING_BLOCKWISE, 1, 0.01, 0, -1, 0, 1, 0, 0, 0, 0}},
        {1, EBM_SAMPLER_TEMPERING, {0, EBM_COUPLING_BLOCKWISE, 1, 0.01, 0, -1, 0, 1, 0, 0, 0, 0}},
        {2, EBM_SAMPLER_GIBBS, {0, EBM_COUPLING_CRN, 1, 0.01, 0, -1, 0, 1, 0, 0, 0, 0}},
        {2, EBM_SAMPLER_LANGEVIN, {0, EBM_COUPLING_CRN, 1, 0.01, 0, -1, 0, 1, 0, 0, 0, 0}},
        {2, EBM_SAMPLER_GIBBS_LANGEVIN, {0, EBM_COUPLING_CRN, 10, 0.01, 1, -1, 0, 1, 0, 0, 0, 0}},
    };
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        ebm_sampler_t *s = NULL;
        ck_assert_int_eq(ebm_sampler_create(&s, models[defaults[i].model], defaults[i].kind),
                         EBM_OK);
        const handle hd = sampler_handle(s);
        check_defaults(&hd, N_SAMPLER_OPTIONS, defaults[i].want, "sampler");
        ebm_sampler_destroy(s);
    }
    /* The ends of every range, on the DBM (3 layers: masks 0 to 7). */
    static const int_edge edges[] = {
        {EBM_SAMPLER_CLAMP_LAYERS, 0, EBM_OK},
        {EBM_SAMPLER_CLAMP_LAYERS, -1, EV},
        {EBM_SAMPLER_CLAMP_LAYERS, 7, EBM_OK},
        {EBM_SAMPLER_CLAMP_LAYERS, 8, EV},
        {EBM_SAMPLER_CLAMP_LAYERS, INT64_C(1) << 40, EV},
        {EBM_SAMPLER_COUPLING, 0, EBM_OK},
        {EBM_SAMPLER_COUPLING, -1, EV},
        {EBM_SAMPLER_COUPLING, 2, EBM_OK},
        {EBM_SAMPLER_COUPLING, 3, EV},
        {EBM_SAMPLER_LANGEVIN_STEPS, 1, EBM_OK},
        {EBM_SAMPLER_LANGEVIN_STEPS, 0, EV},
        {EBM_SAMPLER_LANGEVIN_STEPS, 1000000, EBM_OK},
        {EBM_SAMPLER_LANGEVIN_STEPS, 1000001, EV},
        {EBM_SAMPLER_COSINE, 0, EBM_OK},
        {EBM_SAMPLER_COSINE, -1, EV},
        {EBM_SAMPLER_COSINE, 1, EBM_OK},
        {EBM_SAMPLER_COSINE, 2, EV},
        {EBM_SAMPLER_ADJUST_AFTER, -1, EBM_OK},
        {EBM_SAMPLER_ADJUST_AFTER, -2, EV},
        {EBM_SAMPLER_ADJUST_AFTER, INT64_MAX, EBM_OK},
        {EBM_SAMPLER_ADJUST_AFTER, INT64_MIN, EV},
        {EBM_SAMPLER_SCALE_BY_VARIANCE, 0, EBM_OK},
        {EBM_SAMPLER_SCALE_BY_VARIANCE, -1, EV},
        {EBM_SAMPLER_SCALE_BY_VARIANCE, 1, EBM_OK},
        {EBM_SAMPLER_SCALE_BY_VARIANCE, 2, EV},
        {EBM_SAMPLER_CLOSED_FORM, 0, EBM_OK},
        {EBM_SAMPLER_CLOSED_FORM, -1, EV},
        {EBM_SAMPLER_CLOSED_FORM, 1, EBM_OK},
        {EBM_SAMPLER_CLOSED_FORM, 2, EV},
        {EBM_SAMPLER_ITERATION, 0, EBM_OK},
        {EBM_SAMPLER_ITERATION, -1, EV},
        {EBM_SAMPLER_ITERATION, INT64_MAX, EBM_OK},
        {EBM_SAMPLER_ITERATION, INT64_MIN, EV},
        {EBM_SAMPLER_PRECONDITION, 0, EBM_OK},
        {EBM_SAMPLER_PRECONDITION, -1, EV},
        {EBM_SAMPLER_PRECONDITION, 1, EBM_OK},
        {EBM_SAMPLER_PRECONDITION, 2, EV},
        {EBM_SAMPLER_ROW_OFFSET, 0, EBM_OK},
        {EBM_SAMPLER_ROW_OFFSET, -1, EV},
        {EBM_SAMPLER_ROW_OFFSET, 4294967295, EBM_OK},
        {EBM_SAMPLER_ROW_OFFSET, INT64_C(4294967296), EV},
    };
    const double tiny = nextafter(0.0, 1.0);
    const double_edge dedges[] = {
        {EBM_SAMPLER_STEP_SIZE, tiny, EBM_OK},   {EBM_SAMPLER_STEP_SIZE, 0.0, EV},
        {EBM_SAMPLER_STEP_SIZE, -0.0, EV},       {EBM_SAMPLER_STEP_SIZE, -tiny, EV},
        {EBM_SAMPLER_STEP_SIZE, DBL_MAX, EBM_OK}, {EBM_SAMPLER_STEP_SIZE, INFINITY, EV},
        {EBM_SAMPLER_STEP_SIZE, -INFINITY, EV},  {EBM_SAMPLER_STEP_SIZE, NAN, EV},
        {EBM_SAMPLER_GLOBAL_PROB, 0.0, EBM_OK},  {EBM_SAMPLER_GLOBAL_PROB, -tiny, EV},
        {EBM_SAMPLER_GLOBAL_PROB, 0.5, EBM_OK},  {EBM_SAMPLER_GLOBAL_PROB, nextafter(1.0, 0.0), EBM_OK},
        {EBM_SAMPLER_GLOBAL_PROB, 1.0, EV},      {EBM_SAMPLER_GLOBAL_PROB, NAN, EV},
        {EBM_SAMPLER_GLOBAL_PROB, INFINITY, EV},
    };
    ebm_sampler_t *s = NULL;
    ck_assert_int_eq(ebm_sampler_create(&s, dbm, EBM_SAMPLER_GIBBS), EBM_OK);
    handle hd = sampler_handle(s);
    check_int_edges(&hd, N_SAMPLER_OPTIONS, edges, sizeof edges / sizeof edges[0]);
    check_double_edges(&hd, N_SAMPLER_OPTIONS, dedges, sizeof dedges / sizeof dedges[0]);
    check_wrong_calls(&hd, N_SAMPLER_OPTIONS,
                      1u << EBM_SAMPLER_STEP_SIZE | 1u << EBM_SAMPLER_GLOBAL_PROB);
    ebm_sampler_destroy(s);
    /* The mask follows the model: 2 layers, masks 0 to 3. */
    static const int_edge rbm_edges[] = {{EBM_SAMPLER_CLAMP_LAYERS, 3, EBM_OK},
                                         {EBM_SAMPLER_CLAMP_LAYERS, 4, EV}};
    ck_assert_int_eq(ebm_sampler_create(&s, rbm, EBM_SAMPLER_GIBBS), EBM_OK);
    hd = sampler_handle(s);
    check_int_edges(&hd, N_SAMPLER_OPTIONS, rbm_edges, 2);
    ebm_sampler_destroy(s);
    for (int i = 0; i < 3; i++) {
        ebm_model_destroy(models[i]);
    }
    FINISH();
}
END_TEST

START_TEST(estimator_options)
{
    t_soft_reset();
    ebm_model_t *models[3];
    make_models(models);
    ebm_model_t *rbm = models[0];
    /* Defaults: k, max steps, chains, marginalize, positive, sampler, burn-in,
     * search sweeps, mean-field iterations and tolerance, step limit, row and
     * chain offsets. */
    static const struct {
        int model, kind;
        double want[13];
    } defaults[] = {
        {0, EBM_ESTIMATOR_CD, {1, 0, 0, 1, 0, 0, 0, 10000, 100, 1e-5, 1000000, 0, 0}},
        {0, EBM_ESTIMATOR_PCD, {1, 0, 0, 1, 0, 0, 0, 10000, 100, 1e-5, 1000000, 0, 0}},
        {0, EBM_ESTIMATOR_UCD, {1, 0, 0, 1, 0, 0, 0, 10000, 100, 1e-5, 1000000, 0, 0}},
        {0, EBM_ESTIMATOR_UCD_LMI, {0, 0, 0, 3, 0, 0, 0, 10000, 100, 1e-5, 1000000, 0, 0}},
        {0, EBM_ESTIMATOR_PT, {1, 0, 0, 1, 0, 0, 0, 10000, 100, 1e-5, 1000000, 0, 0}},
        {1, EBM_ESTIMATOR_UCD, {1, 0, 0, 1, 0, 0, 0, 10000, 100, 1e-5, 1000000, 0, 0}},
        {2, EBM_ESTIMATOR_GRBM_CD, {10, 0, 0, 2, 0, 0, 0, 10000, 100, 1e-5, 1000000, 0, 0}},
    };
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        ebm_estimator_t *e = NULL;
        ck_assert_int_eq(ebm_estimator_create(&e, models[defaults[i].model], defaults[i].kind),
                         EBM_OK);
        const handle hd = estimator_handle(e);
        check_defaults(&hd, N_ESTIMATOR_OPTIONS, defaults[i].want, "estimator");
        ebm_estimator_destroy(e);
    }
    /* The ends of every range: UCD on the RBM. */
    static const int_edge edges[] = {
        {EBM_ESTIMATOR_K, 0, EBM_OK},
        {EBM_ESTIMATOR_K, -1, EV},
        {EBM_ESTIMATOR_K, 100000000, EBM_OK},
        {EBM_ESTIMATOR_K, 100000001, EV},
        {EBM_ESTIMATOR_MAX_STEPS, 0, EBM_OK},
        {EBM_ESTIMATOR_MAX_STEPS, -1, EV},
        {EBM_ESTIMATOR_MAX_STEPS, INT32_MAX, EBM_OK},
        {EBM_ESTIMATOR_MAX_STEPS, (int64_t)INT32_MAX + 1, EV},
        {EBM_ESTIMATOR_CHAINS, 0, EBM_OK},
        {EBM_ESTIMATOR_CHAINS, -1, EV},
        {EBM_ESTIMATOR_CHAINS, INT32_MAX, EBM_OK},
        {EBM_ESTIMATOR_CHAINS, (int64_t)INT32_MAX + 1, EV},
        {EBM_ESTIMATOR_MARGINALIZE, 0, EBM_OK},
        {EBM_ESTIMATOR_MARGINALIZE, -1, EV},
        {EBM_ESTIMATOR_MARGINALIZE, 3, EBM_OK},
        {EBM_ESTIMATOR_MARGINALIZE, 4, EV},
        {EBM_ESTIMATOR_POSITIVE, 0, EBM_OK},
        {EBM_ESTIMATOR_POSITIVE, -1, EV},
        {EBM_ESTIMATOR_POSITIVE, 1, EBM_OK},
        {EBM_ESTIMATOR_POSITIVE, 2, EBM_OK},
        {EBM_ESTIMATOR_POSITIVE, 3, EBM_OK},
        {EBM_ESTIMATOR_POSITIVE, 4, EBM_OK},
        {EBM_ESTIMATOR_POSITIVE, 5, EV},
        {EBM_ESTIMATOR_SAMPLER, 0, EBM_OK},
        {EBM_ESTIMATOR_SAMPLER, -1, EV},
        {EBM_ESTIMATOR_SAMPLER, 1, EV},
        {EBM_ESTIMATOR_SAMPLER, 2, EU},
        {EBM_ESTIMATOR_SAMPLER, 3, EU},
        {EBM_ESTIMATOR_SAMPLER, 4, EV},
        {EBM_ESTIMATOR_BURN_IN, 0, EBM_OK},
        {EBM_ESTIMATOR_BURN_IN, -1, EV},
        {EBM_ESTIMATOR_BURN_IN, INT32_MAX, EBM_OK},
        {EBM_ESTIMATOR_BURN_IN, (int64_t)INT32_MAX + 1, EV},
        {EBM_ESTIMATOR_SEARCH_SWEEPS, 1, EBM_OK},
        {EBM_ESTIMATOR_SEARCH_SWEEPS, 0, EV},
        {EBM_ESTIMATOR_SEARCH_SWEEPS, INT32_MAX, EBM_OK},
        {EBM_ESTIMATOR_SEARCH_SWEEPS, (int64_t)INT32_MAX + 1, EV},
        {EBM_ESTIMATOR_MEAN_FIELD_ITERS, 1, EBM_OK},
        {EBM_ESTIMATOR_MEAN_FIELD_ITERS, 0, EV},
        {EBM_ESTIMATOR_MEAN_FIELD_ITERS, INT32_MAX, EBM_OK},
        {EBM_ESTIMATOR_MEAN_FIELD_ITERS, (int64_t)INT32_MAX + 1, EV},
        {EBM_ESTIMATOR_STEP_LIMIT, 1, EBM_OK},
        {EBM_ESTIMATOR_STEP_LIMIT, 0, EV},
        {EBM_ESTIMATOR_STEP_LIMIT, INT64_MAX, EBM_OK},
        {EBM_ESTIMATOR_STEP_LIMIT, INT64_MIN, EV},
        {EBM_ESTIMATOR_ROW_OFFSET, 0, EBM_OK},
        {EBM_ESTIMATOR_ROW_OFFSET, -1, EV},
        {EBM_ESTIMATOR_ROW_OFFSET, 4294967295, EBM_OK},
        {EBM_ESTIMATOR_ROW_OFFSET, INT64_C(4294967296), EV},
        {EBM_ESTIMATOR_CHAIN_OFFSET, 0, EBM_OK},
        {EBM_ESTIMATOR_CHAIN_OFFSET, -1, EV},
        {EBM_ESTIMATOR_CHAIN_OFFSET, 4294967295, EBM_OK},
        {EBM_ESTIMATOR_CHAIN_OFFSET, INT64_C(4294967296), EV},
    };
    const double tiny = nextafter(0.0, 1.0);
    const double_edge dedges[] = {
        {EBM_ESTIMATOR_MEAN_FIELD_TOL, 0.0, EBM_OK},
        {EBM_ESTIMATOR_MEAN_FIELD_TOL, -tiny, EV},
        {EBM_ESTIMATOR_MEAN_FIELD_TOL, DBL_MAX, EBM_OK},
        {EBM_ESTIMATOR_MEAN_FIELD_TOL, -0.0, EBM_OK},
        {EBM_ESTIMATOR_MEAN_FIELD_TOL, INFINITY, EV},
        {EBM_ESTIMATOR_MEAN_FIELD_TOL, NAN, EV},
    };
    ebm_estimator_t *e = NULL;
    ck_assert_int_eq(ebm_estimator_create(&e, rbm, EBM_ESTIMATOR_UCD), EBM_OK);
    handle hd = estimator_handle(e);
    check_int_edges(&hd, N_ESTIMATOR_OPTIONS, edges, sizeof edges / sizeof edges[0]);
    check_double_edges(&hd, N_ESTIMATOR_OPTIONS, dedges, sizeof dedges / sizeof dedges[0]);
    check_wrong_calls(&hd, N_ESTIMATOR_OPTIONS, 1u << EBM_ESTIMATOR_MEAN_FIELD_TOL);
    ebm_estimator_destroy(e);
    /* What depends on the kind and the model. */
    static const struct {
        int model, kind;
        int_edge edge;
    } kinded[] = {
        {0, EBM_ESTIMATOR_CD, {EBM_ESTIMATOR_K, 0, EV}},
        {0, EBM_ESTIMATOR_CD, {EBM_ESTIMATOR_K, 1, EBM_OK}},
        {0, EBM_ESTIMATOR_PCD, {EBM_ESTIMATOR_K, 0, EV}},
        {0, EBM_ESTIMATOR_PT, {EBM_ESTIMATOR_K, 0, EV}},
        {0, EBM_ESTIMATOR_UCD_LMI, {EBM_ESTIMATOR_K, 0, EBM_OK}},
        {0, EBM_ESTIMATOR_CD, {EBM_ESTIMATOR_POSITIVE, EBM_POSITIVE_COUPLED, EU}},
        {0, EBM_ESTIMATOR_PCD, {EBM_ESTIMATOR_POSITIVE, EBM_POSITIVE_COUPLED, EU}},
        {0, EBM_ESTIMATOR_UCD_LMI, {EBM_ESTIMATOR_POSITIVE, EBM_POSITIVE_COUPLED, EBM_OK}},
        {1, EBM_ESTIMATOR_UCD, {EBM_ESTIMATOR_POSITIVE, EBM_POSITIVE_EXACT, EU}},
        {1, EBM_ESTIMATOR_UCD, {EBM_ESTIMATOR_POSITIVE, EBM_POSITIVE_SAMPLED, EU}},
        {1, EBM_ESTIMATOR_UCD, {EBM_ESTIMATOR_POSITIVE, EBM_POSITIVE_MEAN_FIELD, EBM_OK}},
        {2, EBM_ESTIMATOR_GRBM_CD, {EBM_ESTIMATOR_K, 0, EV}},
        {2, EBM_ESTIMATOR_GRBM_CD, {EBM_ESTIMATOR_SAMPLER, EBM_SAMPLER_LANGEVIN, EBM_OK}},
        {2, EBM_ESTIMATOR_GRBM_CD, {EBM_ESTIMATOR_SAMPLER, EBM_SAMPLER_GIBBS_LANGEVIN, EBM_OK}},
        {2, EBM_ESTIMATOR_GRBM_CD, {EBM_ESTIMATOR_SAMPLER, EBM_SAMPLER_MH_UNIFORM, EV}},
        {2, EBM_ESTIMATOR_GRBM_CD, {EBM_ESTIMATOR_SAMPLER, EBM_SAMPLER_TEMPERING, EV}},
    };
    for (size_t i = 0; i < sizeof kinded / sizeof kinded[0]; i++) {
        ck_assert_int_eq(ebm_estimator_create(&e, models[kinded[i].model], kinded[i].kind),
                         EBM_OK);
        hd = estimator_handle(e);
        check_int_edges(&hd, N_ESTIMATOR_OPTIONS, &kinded[i].edge, 1);
        ebm_estimator_destroy(e);
    }
    for (int i = 0; i < 3; i++) {
        ebm_model_destroy(models[i]);
    }
    FINISH();
}
END_TEST

/* EBM_ESTIMATOR_SAMPLER_OPTION + o: the sampler's ranges through the
 * estimator, the two options the estimator manages refused. */
START_TEST(estimator_sampler_options)
{
    t_soft_reset();
    const int64_t s2[2] = {4, 3};
    ebm_model_t *grbm = t_model(2, s2, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    ebm_estimator_t *e = NULL;
    ck_assert_int_eq(ebm_estimator_create(&e, grbm, EBM_ESTIMATOR_GRBM_CD), EBM_OK);
    const int so = EBM_ESTIMATOR_SAMPLER_OPTION;
    static const int_edge edges[] = {
        {EBM_SAMPLER_CLAMP_LAYERS, 0, EV},    {EBM_SAMPLER_CLAMP_LAYERS, 1, EV},
        {EBM_SAMPLER_ROW_OFFSET, 0, EV},      {EBM_SAMPLER_COUPLING, 2, EBM_OK},
        {EBM_SAMPLER_COUPLING, 3, EV},        {EBM_SAMPLER_LANGEVIN_STEPS, 1000000, EBM_OK},
        {EBM_SAMPLER_LANGEVIN_STEPS, 0, EV},  {EBM_SAMPLER_COSINE, 2, EV},
        {EBM_SAMPLER_ADJUST_AFTER, -1, EBM_OK}, {EBM_SAMPLER_ADJUST_AFTER, -2, EV},
        {EBM_SAMPLER_ITERATION, -1, EV},      {EBM_SAMPLER_STEP_SIZE, 1, EV},
        {11, 0, EV},
    };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        const int rc = ebm_estimator_set_int(e, so + edges[i].option, edges[i].value);
        CHECK(rc == edges[i].code && (rc == EBM_OK || ebm_estimator_errmsg(e)[0] != '\0'),
              "option %d = %lld: %s (%s)", edges[i].option, (long long)edges[i].value,
              ebm_error_name(rc), ebm_estimator_errmsg(e));
    }
    CHECK(ebm_estimator_set_double(e, so + EBM_SAMPLER_STEP_SIZE, 0.0) == EV &&
              t_contains(ebm_estimator_errmsg(e), "STEP_SIZE"),
          "step size 0: %s", ebm_estimator_errmsg(e));
    CHECK(ebm_estimator_set_double(e, so + EBM_SAMPLER_STEP_SIZE, 0.5) == EBM_OK,
          "step size 0.5: %s", ebm_estimator_errmsg(e));
    ebm_estimator_destroy(e);
    ebm_model_destroy(grbm);
    FINISH();
}
END_TEST

Suite *ebm_options_suite(void)
{
    const t_test tests[] = {
        {"tables", option_tables, 0, 30, NULL, NULL},
        {"sampler", sampler_options, 0, 30, NULL, NULL},
        {"estimator", estimator_options, 0, 30, NULL, NULL},
        {"estimator", estimator_sampler_options, 0, 30, NULL, NULL},
    };
    return t_suite("options", tests, sizeof tests / sizeof tests[0]);
}
