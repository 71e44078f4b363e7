/* Allocation-failure injection (tests/fault.c): every public call that can
 * allocate, on small models, with the N-th allocation failed for N = 1, 2,
 * ... until the call succeeds without the failure firing. For each N where
 * the failure fired the call must
 *  - return EBM_ENOMEM and leave a new, non-empty message in the handle the
 *    contract names (the model, generator, sampler or estimator, or the
 *    caller's errbuf), or else (a failure the library tolerated) succeed
 *    with exactly the results of a call without failure;
 *  - after EBM_ENOMEM, have changed nothing the caller can see: the model's
 *    parameters, the generator's state (all words), the states and output
 *    buffers (whole arrays, padding included), the sampler's statistics and
 *    step counter, the estimator's persistent chains and statistics, the
 *    files beside a saved model, and any handle it was to create (NULL);
 *  - and the same call made again without failure must give exactly the
 *    results of the reference call: nothing hidden changed either.
 * One table row per call and set-up; one runner (alloc_case) for all rows.
 * Every defect is printed to stderr (check_alloc.c: <row> N=<n>: ...) and the
 * row fails at its end, so one run lists them all. The last test prints the
 * number of injection points covered. EBM_ALLOC_VERBOSE=1 prints each row's
 * count, EBM_ALLOC_VERBOSE=2 also every message. */
#include "tests.h"
#include "sampler.h" /* a tempering sampler's ladder */
#include "testing.h" /* a PT estimator's tempering sampler */

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- sizes -------------------------------------------------------------- */

enum {
    NR_DEFAULT = 4, /* rows of a batch */
    NR_MIN = 8, /* rows allocated at least (set_chains reads 5) */
    NR_MAX = 320, /* > 256: the chunked loops run more than one chunk */
    LD = 16,  /* state stride: wider than every model below, padding checked */
    LDD = 7,  /* data stride: wider than every visible layer below */
    NP_MAX = 64,
    MAX_N = 100000 /* more injection points than any call can have */
};

/* ---- models ------------------------------------------------------------- */

enum {
    M_RBM,       /* binary RBM 4x3 */
    M_RBM_SPIN,  /* spin RBM 4x3 */
    M_RBM_WIDE,  /* binary RBM 3x5 (fewer visible than hidden units) */
    M_DBM,       /* spin DBM 3-3-2 */
    M_DBM_BIN,   /* binary DBM 3-3-2 */
    M_DBM4,      /* spin DBM 3-3-2-2 */
    M_DBM4_BIN,  /* binary DBM 3-4-2-3 */
    M_GRBM,      /* Gaussian-binary RBM 3x2 */
    M_GRBM_SPIN, /* Gaussian-spin RBM 3x2 */
    M_GDBM,      /* Gaussian-binary DBM 3-3-2 */
    M_POTTS,     /* Potts RBM of 2 sites x 3 categories, 3 binary hidden units */
    M_DRELU,     /* binary-visible RBM 4x3 with dReLU hidden units */
    M_DRELU_SPIN, /* spin-visible RBM 3x2 with dReLU hidden units */
    M_DRELU_POTTS, /* Potts RBM of 2 sites x 3 categories, 3 dReLU hidden units */
    M_COUNT
};

typedef struct mspec {
    const char *name;
    int64_t layers;
    int64_t sizes[4];
    int visible, hidden;
} mspec;

static const mspec specs[M_COUNT] = {
    [M_RBM] = {"binary RBM 4x3", 2, {4, 3}, EBM_UNITS_BINARY, EBM_UNITS_BINARY},
    [M_RBM_SPIN] = {"spin RBM 4x3", 2, {4, 3}, EBM_UNITS_SPIN, EBM_UNITS_SPIN},
    [M_RBM_WIDE] = {"binary RBM 3x5", 2, {3, 5}, EBM_UNITS_BINARY, EBM_UNITS_BINARY},
    [M_DBM] = {"spin DBM 3-3-2", 3, {3, 3, 2}, EBM_UNITS_SPIN, EBM_UNITS_SPIN},
    [M_DBM_BIN] = {"binary DBM 3-3-2", 3, {3, 3, 2}, EBM_UNITS_BINARY, EBM_UNITS_BINARY},
    [M_DBM4] = {"spin DBM 3-3-2-2", 4, {3, 3, 2, 2}, EBM_UNITS_SPIN, EBM_UNITS_SPIN},
    [M_DBM4_BIN] = {"binary DBM 3-4-2-3", 4, {3, 4, 2, 3}, EBM_UNITS_BINARY, EBM_UNITS_BINARY},
    [M_GRBM] = {"GRBM 3x2 (binary hidden)", 2, {3, 2}, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY},
    [M_GRBM_SPIN] = {"GRBM 3x2 (spin hidden)", 2, {3, 2}, EBM_UNITS_GAUSSIAN, EBM_UNITS_SPIN},
    [M_GDBM] = {"Gaussian DBM 3-3-2", 3, {3, 3, 2}, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY},
    [M_POTTS] = {"Potts RBM (2 sites x 3) x 3", 2, {6, 3}, EBM_UNITS_POTTS, EBM_UNITS_BINARY},
    [M_DRELU] = {"dReLU RBM 4x3 (binary visible)", 2, {4, 3}, EBM_UNITS_BINARY, EBM_UNITS_DRELU},
    [M_DRELU_SPIN] = {"dReLU RBM 3x2 (spin visible)", 2, {3, 2}, EBM_UNITS_SPIN, EBM_UNITS_DRELU},
    [M_DRELU_POTTS] = {"dReLU RBM (2 sites x 3) x 3 (Potts visible)", 2, {6, 3}, EBM_UNITS_POTTS,
                       EBM_UNITS_DRELU},
};

/* A model of spec sp (Potts visible units: 3 categories) into *out. */
static int create_spec(const mspec *sp, ebm_model_t **out, char *err, size_t size)
{
    return sp->visible == EBM_UNITS_POTTS
               ? ebm_model_create_potts(out, sp->layers, sp->sizes, 3, sp->hidden, err, size)
               : ebm_model_create(out, sp->layers, sp->sizes, sp->visible, sp->hidden, err, size);
}

/* Where a failed call leaves its message. */
enum { MSG_NONE, MSG_MODEL, MSG_RNG, MSG_SAMPLER, MSG_ESTIMATOR, MSG_ERRBUF };

/* An option of a sampler or estimator: stored as option + 1 so that a zero
 * entry ends the list. */
#define O(option, value) {(option) + 1, (value)}
#define MAX_OPTS 4

typedef struct fx fx;

/* One row of the table: a call on a set-up. */
typedef struct acase {
    const char *name;
    int model;              /* M_* */
    int (*call)(fx *);      /* the call under test: one library call, nothing else */
    void (*prep)(fx *);     /* extra set-up after the common one, or NULL */
    int msg;                /* MSG_*: the handle that receives the message */
    int kind;               /* init scheme, sampler or estimator kind, ... */
    int64_t arg;            /* sum-out mask, layer, ... */
    int64_t arg2;           /* a second argument (layer of energy_grad_input, ...) */
    int clamp;              /* 1: the visible layer clamped (ldc = 0) */
    int warm;               /* calls made before the tested one (see the preps) */
    int64_t n;              /* rows (0: NR_DEFAULT) */
    int64_t opt[MAX_OPTS][2];
} acase;

/* Everything a call may touch. The arrays are allocated for each set-up
 * (rows of them, padding included) and snapshots cover them whole; a write
 * past them is caught by ASan or valgrind. */
struct fx {
    const acase *c;
    int64_t n, rows, w, n0, np;
    ebm_model_t *m;
    ebm_rng_t *rng;
    ebm_sampler_t *s;
    ebm_estimator_t *e;
    /* handles made by the call under test (NULL unless it succeeds) */
    ebm_model_t *m_out;
    ebm_rng_t *r_out;
    ebm_sampler_t *s_out;
    ebm_estimator_t *e_out;
    float *x, *y, *xl, *out; /* rows x LD */
    float *data;             /* rows x LDD */
    double *d;               /* rows + 2 */
    double *coef;            /* rows */
    uint8_t *met;            /* rows */
    int64_t *sweeps;         /* rows */
    float grad[NP_MAX];
    uint8_t clamp[LD];
    char errbuf[256];
    /* files and buffers of save and load */
    char dir[256], path[300];
    void *buf;
    size_t buf_size;
};

static fx g_f;

/* ---- soft checks -------------------------------------------------------- */

/* The context of the soft checks that follow: the row, its model, N. */
static void at(const acase *c, long n)
{
    char where[32] = "";
    if (n > 0) {
        snprintf(where, sizeof where, " N=%ld", n);
    }
    t_soft_context("%s [%s]%s", c->name, specs[c->model].name, where);
}

#define ALLOC_FAIL(c, n, ...)                                                                      \
    do {                                                                                           \
        at((c), (n));                                                                              \
        T_SOFT_FAIL(__VA_ARGS__);                                                                  \
    } while (0)

/* ---- the tally of injection points (tests run in forked children) ------- */

static FILE *g_tally;

static void tally_add(long points)
{
    if (g_tally == NULL) {
        return;
    }
    long rec[2] = {points, 1};
    ssize_t put = write(fileno(g_tally), rec, sizeof rec);
    (void)put;
}

/* ---- fixtures ----------------------------------------------------------- */


static void apply_opts(fx *f)
{
    for (int i = 0; i < MAX_OPTS && f->c->opt[i][0] != 0; i++) {
        int option = (int)f->c->opt[i][0] - 1;
        int64_t value = f->c->opt[i][1];
        if (f->e != NULL) {
            ck_assert_msg(ebm_estimator_set_int(f->e, option, value) == EBM_OK,
                          "estimator option %d = %lld: %s", option, (long long)value,
                          ebm_estimator_errmsg(f->e));
        } else if (f->s != NULL) {
            ck_assert_msg(ebm_sampler_set_int(f->s, option, value) == EBM_OK,
                          "sampler option %d = %lld: %s", option, (long long)value,
                          ebm_sampler_errmsg(f->s));
        }
    }
}

static void fx_setup(fx *f, const acase *c)
{
    memset(f, 0, sizeof *f);
    f->c = c;
    f->n = c->n > 0 ? c->n : NR_DEFAULT;
    ck_assert_int_le(f->n, NR_MAX);
    f->rows = f->n > NR_MIN ? f->n : NR_MIN;
    const size_t rows = (size_t)f->rows;
    f->x = malloc(rows * LD * sizeof *f->x);
    f->y = malloc(rows * LD * sizeof *f->y);
    f->xl = malloc(rows * LD * sizeof *f->xl);
    f->out = malloc(rows * LD * sizeof *f->out);
    f->data = malloc(rows * LDD * sizeof *f->data);
    f->d = malloc((rows + 2) * sizeof *f->d);
    f->coef = malloc(rows * sizeof *f->coef);
    f->met = malloc(rows * sizeof *f->met);
    f->sweeps = malloc(rows * sizeof *f->sweeps);
    ck_assert(f->x != NULL && f->y != NULL && f->xl != NULL && f->out != NULL &&
              f->data != NULL && f->d != NULL && f->coef != NULL && f->met != NULL &&
              f->sweeps != NULL);
    char err[256] = "";
    ck_assert_msg(create_spec(&specs[c->model], &f->m, err, sizeof err) == EBM_OK, "%s", err);
    /* the unit kinds of the spec (the dReLU rows must test dReLU units) */
    ck_assert_int_eq(ebm_model_layer_units(f->m, 0), specs[c->model].visible);
    ck_assert_int_eq(ebm_model_layer_units(f->m, specs[c->model].layers - 1),
                     specs[c->model].hidden);
    t_random_params(f->m, 1000 + (uint64_t)c->model, 1.0);
    f->w = ebm_model_state_width(f->m);
    f->n0 = ebm_model_layer_size(f->m, 0);
    f->np = ebm_model_param_count(f->m);
    ck_assert_int_le(f->w, LD - 1);
    ck_assert_int_le(f->n0, LDD - 1);
    ck_assert_int_le(f->np, NP_MAX);
    f->rng = t_rng_started(42, 7, 3); /* any move shows in the state */
    ck_assert_ptr_nonnull(f->rng);
    t_fill_states(f->m, f->rows, f->x, LD, 1);
    t_fill_states(f->m, f->rows, f->y, LD, 2);
    t_fill_states(f->m, f->rows, f->xl, LD, 3);
    /* coupled steps: row 0 starts met (x == y: the rows move together) */
    memcpy(f->y, f->x, LD * sizeof *f->y);
    for (int64_t r = 0; r < f->rows; r++) {
        for (int64_t j = 0; j < LDD; j++) {
            f->data[r * LDD + j] = j < f->n0 ? f->xl[r * LD + j] : 0.5f;
        }
        f->coef[r] = (r % 3 == 0 ? 0.5 : -0.25) * (double)(r + 1);
    }
    memset(f->out, 0xA5, rows * LD * sizeof *f->out);
    memset(f->d, 0xA5, (rows + 2) * sizeof *f->d);
    memset(f->met, 0xA5, rows * sizeof *f->met);
    memset(f->sweeps, 0xA5, rows * sizeof *f->sweeps);
    for (int i = 0; i < NP_MAX; i++) {
        f->grad[i] = (float)(0.125 * (i % 7) - 0.25);
    }
    if (c->clamp) {
        memset(f->clamp, 1, (size_t)f->n0);
    }
    if (c->prep != NULL) {
        c->prep(f);
    }
}

static void fx_teardown(fx *f)
{
    ebm_estimator_destroy(f->e_out);
    ebm_sampler_destroy(f->s_out);
    ebm_rng_destroy(f->r_out);
    ebm_model_destroy(f->m_out);
    ebm_estimator_destroy(f->e);
    ebm_sampler_destroy(f->s);
    ebm_rng_destroy(f->rng);
    ebm_model_destroy(f->m);
    free(f->buf);
    free(f->x);
    free(f->y);
    free(f->xl);
    free(f->out);
    free(f->data);
    free(f->d);
    free(f->coef);
    free(f->met);
    free(f->sweeps);
    if (f->dir[0] != '\0') {
        t_rm_tree(f->dir);
    }
    memset(f, 0, sizeof *f);
}

/* ---- snapshots: what the caller can see ---------------------------------- */

#define MAX_SEGS 24

typedef struct snap {
    int n;
    const char *name[MAX_SEGS];
    unsigned char *p[MAX_SEGS];
    size_t len[MAX_SEGS];
} snap;

static void seg(snap *s, const char *name, const void *p, size_t len)
{
    ck_assert_int_lt(s->n, MAX_SEGS);
    s->name[s->n] = name;
    s->p[s->n] = malloc(len > 0 ? len : 1);
    ck_assert_ptr_nonnull(s->p[s->n]);
    if (len > 0) {
        memcpy(s->p[s->n], p, len);
    }
    s->len[s->n] = len;
    s->n++;
}

static void snap_free(snap *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->p[i]);
    }
    s->n = 0;
}

static void seg_model(snap *s, const char *name, const ebm_model_t *m)
{
    if (m == NULL) {
        seg(s, name, "NULL", 4);
        return;
    }
    float buf[NP_MAX + 3 * 4 + 1];
    int64_t np = ebm_model_param_count(m), L = ebm_model_num_layers(m);
    ck_assert_int_le(np, NP_MAX);
    ck_assert_int_le(L, 4);
    memset(buf, 0, sizeof buf);
    ck_assert_int_eq(ebm_model_get_params(m, buf), EBM_OK);
    buf[NP_MAX] = (float)L;
    for (int64_t l = 0; l < L; l++) {
        buf[NP_MAX + 1 + 3 * l] = (float)ebm_model_layer_size(m, l);
        buf[NP_MAX + 2 + 3 * l] = (float)ebm_model_layer_units(m, l);
        buf[NP_MAX + 3 + 3 * l] = (float)ebm_model_layer_offset(m, l);
    }
    seg(s, name, buf, sizeof buf);
}

static void seg_rng(snap *s, const char *name, const ebm_rng_t *r)
{
    if (r == NULL) {
        seg(s, name, "NULL", 4);
        return;
    }
    uint64_t st[EBM_RNG_STATE_WORDS];
    ck_assert_int_eq(ebm_rng_get_state(r, st), EBM_OK);
    seg(s, name, st, sizeof st);
}

/* A tempering sampler's ladder (sampler.h) and the swap counts reported
 * by sm (if not NULL) or else e: none of them may change on failure
 * either. */
static void seg_ladder(snap *s, const char *name, const ebm_sampler_t *sm,
                       const ebm_estimator_t *e)
{
    const ebm_sampler_t *t = sm != NULL ? sm : ebm__estimator_tempering(e);
    const int64_t R = ebm__sampler_ladder_size(t), pairs = R - 1;
    seg(s, name, &R, sizeof R);
    if (R == 0) {
        return;
    }
    seg(s, name, t->betas, (size_t)R * sizeof *t->betas);
    int64_t *counts = malloc((size_t)(2 * pairs) * sizeof *counts);
    ck_assert_ptr_nonnull(counts);
    ck_assert_int_eq(sm != NULL ? ebm_sampler_swap_counts(sm, pairs, counts, counts + pairs)
                                : ebm_estimator_swap_counts(e, pairs, counts, counts + pairs),
                     EBM_OK);
    seg(s, name, counts, (size_t)(2 * pairs) * sizeof *counts);
    free(counts);
}

static void seg_sampler(snap *s, const char *name, const ebm_sampler_t *sm)
{
    if (sm == NULL) {
        seg(s, name, "NULL", 4);
        return;
    }
    double st[EBM_STAT_COUNT];
    for (int i = 0; i < EBM_STAT_COUNT; i++) {
        st[i] = ebm_sampler_stat(sm, i);
    }
    seg(s, name, st, sizeof st);
    seg_ladder(s, name, sm, NULL);
}

static void seg_estimator(snap *s, const char *stats, const char *chains,
                          const ebm_estimator_t *e)
{
    if (e == NULL) {
        seg(s, stats, "NULL", 4);
        return;
    }
    double st[EBM_ESTIMATOR_STAT_COUNT + 1];
    for (int i = 0; i < EBM_ESTIMATOR_STAT_COUNT; i++) {
        st[i] = ebm_estimator_stat(e, i);
    }
    int64_t nc = ebm_estimator_num_chains(e);
    st[EBM_ESTIMATOR_STAT_COUNT] = (double)nc;
    seg(s, stats, st, sizeof st);
    if (ebm__estimator_tempering(e) != NULL) { /* PT: the ladder and the last call's swaps */
        seg_ladder(s, stats, NULL, e);
    }
    if (chains != NULL) {
        ck_assert_int_ge(nc, 0);
        int64_t w = ebm_model_state_width(g_f.m);
        float *buf = malloc((size_t)(nc * w + 1) * sizeof *buf);
        ck_assert_ptr_nonnull(buf);
        ck_assert_int_eq(ebm_estimator_get_chains(e, buf, w), EBM_OK);
        seg(s, chains, buf, (size_t)(nc * w) * sizeof *buf);
        free(buf);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the files in the directory of a save, and the saved file. */
static void seg_dir(snap *s, fx *f)
{
    char names[2048] = "";
    char *list[64];
    int k = 0;
    DIR *d = opendir(f->dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *de;
    char store[64][256];
    while ((de = readdir(d)) != NULL && k < 64) {
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            snprintf(store[k], sizeof store[k], "%s", de->d_name);
            list[k] = store[k];
            k++;
        }
    }
    closedir(d);
    qsort(list, (size_t)k, sizeof list[0], cmp_str);
    for (int i = 0; i < k; i++) {
        strncat(names, list[i], sizeof names - strlen(names) - 2);
        strncat(names, "/", sizeof names - strlen(names) - 1);
    }
    seg(s, "the files in the directory", names, strlen(names));
    unsigned char content[4096];
    size_t got = 0;
    FILE *fp = fopen(f->path, "rb");
    if (fp != NULL) {
        got = fread(content, 1, sizeof content, fp);
        fclose(fp);
    }
    seg(s, "the file at path", content, got);
}

static void snap_take(snap *s, fx *f)
{
    s->n = 0;
    seg_model(s, "the model's parameters", f->m);
    seg_rng(s, "the generator's state", f->rng);
    const size_t rows = (size_t)f->rows;
    seg(s, "x", f->x, rows * LD * sizeof *f->x);
    seg(s, "y", f->y, rows * LD * sizeof *f->y);
    seg(s, "xl", f->xl, rows * LD * sizeof *f->xl);
    seg(s, "the output rows", f->out, rows * LD * sizeof *f->out);
    seg(s, "the data", f->data, rows * LDD * sizeof *f->data);
    seg(s, "grad", f->grad, sizeof f->grad);
    seg(s, "the double outputs", f->d, (rows + 2) * sizeof *f->d);
    seg(s, "met", f->met, rows * sizeof *f->met);
    seg(s, "sweeps", f->sweeps, rows * sizeof *f->sweeps);
    if (f->s != NULL) {
        seg_sampler(s, "the sampler's statistics and step counter", f->s);
    }
    if (f->e != NULL) {
        seg_estimator(s, "the estimator's statistics and chain count",
                      "the estimator's persistent chains", f->e);
    }
    seg_model(s, "the created model", f->m_out);
    seg_rng(s, "the created generator", f->r_out);
    seg_sampler(s, "the created sampler", f->s_out);
    seg_estimator(s, "the created estimator", NULL, f->e_out);
    if (f->dir[0] != '\0') {
        seg_dir(s, f);
    }
}

/* Names of the segments that differ, or "" */
static void snap_diff(const snap *a, const snap *b, char *out, size_t cap)
{
    out[0] = '\0';
    ck_assert_int_eq(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        if (a->len[i] != b->len[i] || memcmp(a->p[i], b->p[i], a->len[i]) != 0) {
            size_t used = strlen(out);
            snprintf(out + used, cap - used, "%s%s", used > 0 ? ", " : "", a->name[i]);
        }
    }
}

/* ---- messages ------------------------------------------------------------ */

/* Leave a known message in the handle first, so that the call must replace it. */
static void prime_message(fx *f)
{
    switch (f->c->msg) {
    case MSG_MODEL: (void)ebm_model_param_block(f->m, 12345, 0, NULL, NULL, NULL); break;
    case MSG_RNG: (void)ebm_rng_uniform(f->rng, -12345, NULL); break;
    case MSG_SAMPLER: (void)ebm_sampler_set_int(f->s, 12345, 0); break;
    case MSG_ESTIMATOR: (void)ebm_estimator_set_int(f->e, 12345, 0); break;
    case MSG_ERRBUF: snprintf(f->errbuf, sizeof f->errbuf, "primed errbuf"); break;
    default: break;
    }
}

static const char *message(const fx *f)
{
    switch (f->c->msg) {
    case MSG_MODEL: return ebm_model_errmsg(f->m);
    case MSG_RNG: return ebm_rng_errmsg(f->rng);
    case MSG_SAMPLER: return ebm_sampler_errmsg(f->s);
    case MSG_ESTIMATOR: return ebm_estimator_errmsg(f->e);
    case MSG_ERRBUF: return f->errbuf;
    default: return NULL;
    }
}

static const char *msg_source(int msg)
{
    static const char *const names[] = {"none", "ebm_model_errmsg", "ebm_rng_errmsg",
                                        "ebm_sampler_errmsg", "ebm_estimator_errmsg", "errbuf"};
    return names[msg];
}

/* ======================================================================== */
/* The calls                                                                 */
/* ======================================================================== */

/* ---- model life cycle ---- */

static int call_create(fx *f)
{
    return create_spec(&specs[f->c->model], &f->m_out, f->errbuf, sizeof f->errbuf);
}

static void prep_dir(fx *f)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/ebm_alloc_XXXXXX", tmp != NULL && tmp[0] ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/model.ebm", f->dir);
}

/* A file already at path: a failed save must leave it as it was. */
static void prep_save(fx *f)
{
    prep_dir(f);
    FILE *fp = fopen(f->path, "wb");
    ck_assert_ptr_nonnull(fp);
    fputs("the file that was there before\n", fp);
    ck_assert_int_eq(fclose(fp), 0);
}

static int call_save(fx *f) { return ebm_model_save(f->m, f->path); }

static void prep_load(fx *f)
{
    prep_dir(f);
    ck_assert_int_eq(ebm_model_save(f->m, f->path), EBM_OK);
}

static int call_load(fx *f) { return ebm_model_load(&f->m_out, f->path, f->errbuf, sizeof f->errbuf); }

static void prep_buffer(fx *f)
{
    int64_t size = ebm_model_save_size(f->m);
    ck_assert_int_gt(size, 0);
    f->buf = malloc((size_t)size);
    ck_assert_ptr_nonnull(f->buf);
    ck_assert_int_eq(ebm_model_save_buffer(f->m, f->buf, (size_t)size, &f->buf_size), EBM_OK);
}

/* Offsets 0.25 + 0.5 j / width: in every unit's range. */
static void quarter_offsets(const fx *f, float *mu)
{
    const int64_t w = ebm_model_state_width(f->m);
    for (int64_t j = 0; j < w; j++) {
        mu[j] = 0.25f + 0.5f * (float)j / (float)w;
    }
}

/* A centred model's image (format version 2). */
static void prep_centred_buffer(fx *f)
{
    float mu[64];
    quarter_offsets(f, mu);
    ck_assert_int_eq(ebm_model_set_offsets(f->m, mu, 0), EBM_OK);
    prep_buffer(f);
}

static int call_set_offsets(fx *f)
{
    float mu[64];
    quarter_offsets(f, mu);
    return ebm_model_set_offsets(f->m, mu, 1);
}

static int call_move_offsets(fx *f)
{
    float mu[64];
    quarter_offsets(f, mu);
    return ebm_model_move_offsets(f->m, 0.5, mu);
}

/* Offsets on the visible units only (quarter_offsets there, 0 elsewhere):
 * the centring a model with dReLU hidden units accepts (theirs must be 0). */
static void visible_offsets(const fx *f, float *mu)
{
    quarter_offsets(f, mu);
    for (int64_t j = f->n0; j < ebm_model_state_width(f->m); j++) {
        mu[j] = 0.0f;
    }
}

/* A dReLU model centred on its visible units (format version 2). */
static void prep_visible_centred_buffer(fx *f)
{
    float mu[64];
    visible_offsets(f, mu);
    ck_assert_int_eq(ebm_model_set_offsets(f->m, mu, 0), EBM_OK);
    prep_buffer(f);
}

static int call_set_visible_offsets(fx *f)
{
    float mu[64];
    visible_offsets(f, mu);
    return ebm_model_set_offsets(f->m, mu, 1);
}

static int call_load_buffer(fx *f)
{
    return ebm_model_load_buffer(&f->m_out, f->buf, f->buf_size, f->errbuf, sizeof f->errbuf);
}

static int call_init(fx *f) { return ebm_model_init(f->m, f->rng, f->c->kind, 0.75); }
static int call_set_params(fx *f) { return ebm_model_set_params(f->m, f->grad); }
static int call_axpy_params(fx *f) { return ebm_model_axpy_params(f->m, 0.5f, f->grad); }

/* ---- energies ---- */

static int call_energy(fx *f) { return ebm_model_energy(f->m, f->n, f->x, LD, f->d); }

static int call_free_energy(fx *f)
{
    return ebm_model_free_energy(f->m, (uint32_t)f->c->arg, f->n, f->x, LD, f->d);
}

static int call_energy_grad(fx *f)
{
    return ebm_model_energy_grad(f->m, (uint32_t)f->c->arg, f->n, f->x, LD, f->coef, f->grad);
}

static int call_energy_grad_input(fx *f)
{
    return ebm_model_energy_grad_input(f->m, (uint32_t)f->c->arg, f->c->arg2, f->n, f->x, LD,
                                       f->out, LD);
}

/* ---- conditionals ---- */

static int call_layer_input(fx *f)
{
    return ebm_model_layer_input(f->m, f->c->arg, f->n, f->x, LD, f->out, LD);
}

static int call_layer_mean(fx *f)
{
    return ebm_model_layer_mean(f->m, f->c->arg, f->n, f->x, LD, f->out, LD);
}

static int call_layer_logprob(fx *f)
{
    const int64_t off = ebm_model_layer_offset(f->m, f->c->arg);
    return ebm_model_layer_logprob(f->m, f->c->arg, f->n, f->x, LD, f->xl + off, LD, f->d);
}

static int call_layer_argmin(fx *f) { return ebm_model_layer_argmin(f->m, f->c->arg, f->n, f->x, LD); }

static int call_layer_sample(fx *f)
{
    return ebm_model_layer_sample(f->m, f->c->arg, f->rng, f->n, f->x, LD);
}

static int call_random_state(fx *f)
{
    return ebm_model_random_state(f->m, f->rng, f->n, f->x, LD, f->c->clamp ? f->clamp : NULL, 0);
}

/* ---- local search and mean field ---- */

static int call_local_search(fx *f)
{
    return ebm_model_local_search(f->m, f->rng, f->n, f->x, LD, f->c->clamp ? f->clamp : NULL, 0,
                                  50, f->sweeps);
}

static void prep_means(fx *f) { t_fill_means(f->m, f->rows, f->x, LD, 4); }

static int call_mean_field(fx *f)
{
    return ebm_model_mean_field(f->m, f->n, f->x, LD, f->c->clamp ? f->clamp : NULL, 0, 30, 1e-6);
}

/* ---- exact and AIS evaluation ---- */

static int call_log_partition_exact(fx *f) { return ebm_model_log_partition_exact(f->m, f->d); }

static int call_log_likelihood(fx *f)
{
    return ebm_model_log_likelihood(f->m, 2.5, f->n, f->data, LDD, f->d);
}

static int call_log_partition_ais(fx *f)
{
    return ebm_model_log_partition_ais(f->m, f->rng, 4, 3, &f->d[0], &f->d[1]);
}

static int call_log_partition_ais_base(fx *f)
{
    static const float base[8] = {0.5f, -1.0f, 0.25f, 1.5f, -0.75f, 0.0f, 2.0f, -2.0f};
    return ebm_model_log_partition_ais_base(f->m, f->rng, 4, 3, base, &f->d[0], &f->d[1]);
}

static int call_log_likelihood_bound(fx *f)
{
    return ebm_model_log_likelihood_bound(f->m, 2.5, f->n, f->data, LDD, f->d);
}

static int call_log_likelihood_is(fx *f)
{
    return ebm_model_log_likelihood_is(f->m, f->rng, 2.5, 8, f->n, f->data, LDD, f->d);
}

/* ---- generators ---- */

static int call_rng_create(fx *f) { return ebm_rng_create(&f->r_out, 42, 9); }
static int call_rng_derive(fx *f) { return ebm_rng_derive(&f->r_out, f->rng, 3); }
static int call_rng_uniform(fx *f) { return ebm_rng_uniform(f->rng, 5, f->out); }
static int call_rng_normal(fx *f) { return ebm_rng_normal(f->rng, 5, f->out); }

/* ---- samplers ---- */

static int call_sampler_create(fx *f) { return ebm_sampler_create(&f->s_out, f->m, f->c->kind); }

/* A sampler of kind c->kind with c->opt; warm = 1: one earlier step of one
 * row (the scratch then grows in the tested call), 2: of all rows (the tested
 * call finds its scratch). */
static const double LADDER[3] = {0.25, 0.5, 1.0};

static void prep_sampler(fx *f)
{
    ck_assert_int_eq(ebm_sampler_create(&f->s, f->m, f->c->kind), EBM_OK);
    if (f->c->kind == EBM_SAMPLER_TEMPERING) { /* chains of two replicas */
        ck_assert_int_eq(ebm_sampler_set_ladder(f->s, 2, LADDER + 1), EBM_OK);
    }
    apply_opts(f);
    if (f->c->warm > 0) {
        const int64_t one = f->c->kind == EBM_SAMPLER_TEMPERING ? 2 : 1; /* one chain */
        int64_t rows = f->c->warm == 1 ? one : f->n;
        ck_assert_int_eq(ebm_sampler_step(f->s, f->rng, rows, f->x, LD), EBM_OK);
    }
}

static void prep_coupled(fx *f)
{
    ck_assert_int_eq(ebm_sampler_create(&f->s, f->m, f->c->kind), EBM_OK);
    apply_opts(f);
    if (f->c->warm > 0) {
        int64_t rows = f->c->warm == 1 ? 1 : f->n;
        ck_assert_int_eq(ebm_sampler_coupled_step(f->s, f->rng, rows, f->x, LD, f->y, LD, NULL),
                         EBM_OK);
    }
}

static int call_sampler_step(fx *f) { return ebm_sampler_step(f->s, f->rng, f->n, f->x, LD); }

static int call_coupled_step(fx *f)
{
    return ebm_sampler_coupled_step(f->s, f->rng, f->n, f->x, LD, f->y, LD, f->met);
}

static int call_sampler_set_ladder(fx *f) { return ebm_sampler_set_ladder(f->s, 3, LADDER); }

static int call_sampler_set_int(fx *f)
{
    return ebm_sampler_set_int(f->s, EBM_SAMPLER_LANGEVIN_STEPS, 3);
}

/* ---- estimators ---- */

static int call_estimator_create(fx *f)
{
    return ebm_estimator_create(&f->e_out, f->m, f->c->kind);
}

/* An estimator of kind c->kind with c->opt; warm = 1: one earlier gradient
 * call on the same data (scratch and PCD chains exist), 2: chains set by
 * ebm_estimator_set_chains instead, 3: one earlier call on one row (the
 * scratch grows again in the tested call; PCD keeps one chain). */
static void prep_estimator(fx *f)
{
    ck_assert_int_eq(ebm_estimator_create(&f->e, f->m, f->c->kind), EBM_OK);
    if (f->c->kind == EBM_ESTIMATOR_PT) { /* chains of two replicas */
        ck_assert_int_eq(ebm_estimator_set_ladder(f->e, 2, LADDER + 1), EBM_OK);
    }
    apply_opts(f);
    if (f->c->warm == 1 || f->c->warm == 3) {
        int64_t rows = f->c->warm == 1 ? f->n : 1;
        ck_assert_msg(ebm_estimator_gradient(f->e, f->rng, rows, f->data, LDD, f->grad) == EBM_OK,
                      "warm-up gradient: %s", ebm_estimator_errmsg(f->e));
        for (int i = 0; i < NP_MAX; i++) {
            f->grad[i] = (float)(0.125 * (i % 7) - 0.25);
        }
    } else if (f->c->warm == 2) {
        ck_assert_msg(ebm_estimator_set_chains(f->e, 3, f->y, LD) == EBM_OK, "set_chains: %s",
                      ebm_estimator_errmsg(f->e));
    }
}

static int call_gradient(fx *f)
{
    return ebm_estimator_gradient(f->e, f->rng, f->n, f->data, LDD, f->grad);
}

static int call_estimator_set_ladder(fx *f) { return ebm_estimator_set_ladder(f->e, 3, LADDER); }

static int call_set_chains(fx *f) { return ebm_estimator_set_chains(f->e, 5, f->xl, LD); }

static int call_estimator_set_int(fx *f)
{
    return ebm_estimator_set_int(f->e, (int)f->c->arg, f->c->arg2);
}

/* ======================================================================== */
/* The table                                                                 */
/* ======================================================================== */

#define ORTH EBM_INIT_ORTHOGONAL
#define GAUSS EBM_INIT_GAUSSIAN
#define GIBBS EBM_SAMPLER_GIBBS
#define MH EBM_SAMPLER_MH_UNIFORM
#define LANGEVIN EBM_SAMPLER_LANGEVIN
#define GL EBM_SAMPLER_GIBBS_LANGEVIN
#define PTS EBM_SAMPLER_TEMPERING
#define SO(o) (EBM_ESTIMATOR_SAMPLER_OPTION + (o))

/* row constructors */
#define LIFE(name, model, call, prep, msg) {name, model, call, prep, msg, 0, 0, 0, 0, 0, 0, {{0}}}
#define INIT(scheme, model)                                                                     \
    {"ebm_model_init " #scheme, model, call_init, NULL, MSG_MODEL, scheme, 0, 0, 0, 0, 0, {{0}}}
#define MODEL(name, model, call, arg, arg2, clamp, n)                                           \
    {name, model, call, NULL, MSG_MODEL, 0, arg, arg2, clamp, 0, n, {{0}}}
#define MEANS(name, model, call, clamp)                                                         \
    {name, model, call, prep_means, MSG_MODEL, 0, 0, 0, clamp, 0, 0, {{0}}}
#define SAMPLER(name, model, kind, warm, ...)                                                   \
    {name, model, call_sampler_step, prep_sampler, MSG_SAMPLER, kind, 0, 0, 0, warm, 0,         \
     {__VA_ARGS__}}
#define COUPLED(name, model, kind, warm, ...)                                                   \
    {name, model, call_coupled_step, prep_coupled, MSG_SAMPLER, kind, 0, 0, 0, warm, 0,         \
     {__VA_ARGS__}}
#define GRADIENT(name, model, kind, warm, n, ...)                                               \
    {name, model, call_gradient, prep_estimator, MSG_ESTIMATOR, kind, 0, 0, 0, warm, n,         \
     {__VA_ARGS__}}
/* each gradient row on a fresh estimator (its first call) and on a warm one */
#define GRADIENT2(name, model, kind, n, ...)                                                    \
    GRADIENT(name ", first call", model, kind, 0, n, __VA_ARGS__),                              \
        GRADIENT(name ", later call", model, kind, 1, n, __VA_ARGS__)
/* ... and on one that made a one-row call before (its scratch grows again) */
#define GRADIENT3(name, model, kind, n, ...)                                                    \
    GRADIENT2(name, model, kind, n, __VA_ARGS__),                                               \
        GRADIENT(name ", after a 1-row call", model, kind, 3, n, __VA_ARGS__)

#define CD EBM_ESTIMATOR_CD
#define PCD EBM_ESTIMATOR_PCD
#define UCD EBM_ESTIMATOR_UCD
#define LMI EBM_ESTIMATOR_UCD_LMI
#define GCD EBM_ESTIMATOR_GRBM_CD
#define PT EBM_ESTIMATOR_PT
#define POS EBM_ESTIMATOR_POSITIVE
#define MARG EBM_ESTIMATOR_MARGINALIZE
#define K_ EBM_ESTIMATOR_K

static const acase cases[] = {
    /* ---- life cycle ---- */
    LIFE("ebm_model_create", M_RBM, call_create, NULL, MSG_ERRBUF),
    LIFE("ebm_model_create", M_DBM4, call_create, NULL, MSG_ERRBUF),
    LIFE("ebm_model_create", M_GRBM, call_create, NULL, MSG_ERRBUF),
    LIFE("ebm_model_create_potts", M_POTTS, call_create, NULL, MSG_ERRBUF),
    LIFE("ebm_model_load_buffer Potts", M_POTTS, call_load_buffer, prep_buffer, MSG_ERRBUF),
    LIFE("ebm_model_save", M_RBM, call_save, prep_save, MSG_MODEL),
    LIFE("ebm_model_save", M_DBM, call_save, prep_save, MSG_MODEL),
    LIFE("ebm_model_save", M_GRBM, call_save, prep_save, MSG_MODEL),
    LIFE("ebm_model_load", M_RBM, call_load, prep_load, MSG_ERRBUF),
    LIFE("ebm_model_load", M_DBM, call_load, prep_load, MSG_ERRBUF),
    LIFE("ebm_model_load", M_GRBM, call_load, prep_load, MSG_ERRBUF),
    LIFE("ebm_model_load_buffer", M_RBM, call_load_buffer, prep_buffer, MSG_ERRBUF),
    LIFE("ebm_model_load_buffer", M_DBM4, call_load_buffer, prep_buffer, MSG_ERRBUF),
    LIFE("ebm_model_load_buffer", M_GRBM, call_load_buffer, prep_buffer, MSG_ERRBUF),
    LIFE("ebm_model_load_buffer centred", M_DBM4_BIN, call_load_buffer, prep_centred_buffer,
         MSG_ERRBUF),
    INIT(ORTH, M_RBM_SPIN),
    INIT(ORTH, M_RBM_WIDE),
    INIT(ORTH, M_DBM),
    INIT(ORTH, M_DBM_BIN),
    INIT(ORTH, M_DBM4),
    INIT(ORTH, M_DBM4_BIN),
    INIT(ORTH, M_GRBM_SPIN),
    INIT(GAUSS, M_RBM_SPIN),
    INIT(GAUSS, M_RBM_WIDE),
    INIT(GAUSS, M_DBM),
    INIT(GAUSS, M_DBM_BIN),
    INIT(GAUSS, M_DBM4),
    INIT(GAUSS, M_DBM4_BIN),
    INIT(GAUSS, M_GRBM_SPIN),
    MODEL("ebm_model_set_params", M_GRBM, call_set_params, 0, 0, 0, 0),
    MODEL("ebm_model_axpy_params", M_GDBM, call_axpy_params, 0, 0, 0, 0),
    MODEL("ebm_model_set_offsets", M_DBM_BIN, call_set_offsets, 0, 0, 0, 0),
    MODEL("ebm_model_move_offsets", M_RBM_SPIN, call_move_offsets, 0, 0, 0, 0),
    /* ---- energies ---- */
    MODEL("ebm_model_energy", M_RBM, call_energy, 0, 0, 0, 0),
    MODEL("ebm_model_energy", M_DBM4, call_energy, 0, 0, 0, 0),
    MODEL("ebm_model_energy", M_GRBM, call_energy, 0, 0, 0, 0),
    MODEL("ebm_model_energy", M_GDBM, call_energy, 0, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {1}", M_RBM, call_free_energy, 2, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {0}", M_RBM_SPIN, call_free_energy, 1, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {0,2}", M_DBM, call_free_energy, 5, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {1,3}", M_DBM4_BIN, call_free_energy, 10, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {1}", M_GRBM, call_free_energy, 2, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {0}", M_GRBM, call_free_energy, 1, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {0,2}", M_GDBM, call_free_energy, 5, 0, 0, 0),
    MODEL("ebm_model_energy_grad sum_out {}", M_DBM4, call_energy_grad, 0, 0, 0, 0),
    MODEL("ebm_model_energy_grad sum_out {1}", M_RBM, call_energy_grad, 2, 0, 0, 0),
    MODEL("ebm_model_energy_grad sum_out {0}", M_RBM_SPIN, call_energy_grad, 1, 0, 0, 0),
    MODEL("ebm_model_energy_grad sum_out {0,2}", M_DBM, call_energy_grad, 5, 0, 0, 0),
    MODEL("ebm_model_energy_grad sum_out {1}", M_GRBM, call_energy_grad, 2, 0, 0, 0),
    MODEL("ebm_model_energy_grad sum_out {0}", M_GRBM, call_energy_grad, 1, 0, 0, 0),
    MODEL("ebm_model_energy_grad sum_out {1}", M_GDBM, call_energy_grad, 2, 0, 0, 0),
    MODEL("ebm_model_energy_grad_input l=1 sum_out {}", M_RBM, call_energy_grad_input, 0, 1, 0, 0),
    MODEL("ebm_model_energy_grad_input l=1 sum_out {0}", M_RBM, call_energy_grad_input, 1, 1, 0, 0),
    MODEL("ebm_model_energy_grad_input l=1 sum_out {0,2}", M_DBM, call_energy_grad_input, 5, 1, 0,
          0),
    MODEL("ebm_model_energy_grad_input l=0 sum_out {1}", M_GRBM, call_energy_grad_input, 2, 0, 0,
          0),
    MODEL("ebm_model_energy_grad_input l=1 sum_out {0}", M_GRBM, call_energy_grad_input, 1, 1, 0,
          0),
    /* ---- conditionals ---- */
    MODEL("ebm_model_layer_input l=1", M_DBM, call_layer_input, 1, 0, 0, 0),
    MODEL("ebm_model_layer_mean l=0", M_GRBM, call_layer_mean, 0, 0, 0, 0),
    MODEL("ebm_model_layer_logprob l=1", M_RBM, call_layer_logprob, 1, 0, 0, 0),
    MODEL("ebm_model_layer_logprob l=1", M_DBM, call_layer_logprob, 1, 0, 0, 0),
    MODEL("ebm_model_layer_logprob l=0", M_GRBM, call_layer_logprob, 0, 0, 0, 0),
    MODEL("ebm_model_layer_argmin l=0", M_RBM, call_layer_argmin, 0, 0, 0, 0),
    MODEL("ebm_model_layer_argmin l=2", M_DBM, call_layer_argmin, 2, 0, 0, 0),
    MODEL("ebm_model_layer_argmin l=0", M_GRBM, call_layer_argmin, 0, 0, 0, 0),
    MODEL("ebm_model_layer_sample l=1", M_RBM, call_layer_sample, 1, 0, 0, 0),
    MODEL("ebm_model_layer_sample l=1", M_DBM, call_layer_sample, 1, 0, 0, 0),
    MODEL("ebm_model_layer_sample l=0", M_GRBM, call_layer_sample, 0, 0, 0, 0),
    MODEL("ebm_model_random_state", M_DBM, call_random_state, 0, 0, 0, 0),
    MODEL("ebm_model_random_state, visible clamped", M_GRBM, call_random_state, 0, 0, 1, 0),
    /* ---- local search and mean field ---- */
    MODEL("ebm_model_local_search", M_RBM, call_local_search, 0, 0, 0, 0),
    MODEL("ebm_model_local_search", M_DBM4, call_local_search, 0, 0, 0, 0),
    MODEL("ebm_model_local_search, 20 rows (incremental)", M_DBM_BIN, call_local_search, 0, 0, 0,
          20),
    MODEL("ebm_model_local_search, visible clamped", M_DBM, call_local_search, 0, 0, 1, 0),
    MODEL("ebm_model_local_search, visible clamped, 20 rows", M_DBM4_BIN, call_local_search, 0, 0,
          1, 20),
    MODEL("ebm_model_local_search", M_GRBM, call_local_search, 0, 0, 0, 0),
    MODEL("ebm_model_local_search, visible clamped", M_GDBM, call_local_search, 0, 0, 1, 0),
    MEANS("ebm_model_mean_field", M_RBM, call_mean_field, 0),
    MEANS("ebm_model_mean_field", M_POTTS, call_mean_field, 0),
    MODEL("ebm_model_layer_mean l=0", M_POTTS, call_layer_mean, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_exact", M_POTTS, call_log_partition_exact, 0, 0, 0, 0),
    MEANS("ebm_model_mean_field, visible clamped", M_DBM, call_mean_field, 1),
    MEANS("ebm_model_mean_field, visible clamped", M_DBM4_BIN, call_mean_field, 1),
    MEANS("ebm_model_mean_field", M_GRBM, call_mean_field, 0),
    MEANS("ebm_model_mean_field, visible clamped", M_GDBM, call_mean_field, 1),
    /* ---- evaluation ---- */
    MODEL("ebm_model_log_partition_exact", M_RBM, call_log_partition_exact, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_exact", M_DBM, call_log_partition_exact, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_exact", M_DBM4_BIN, call_log_partition_exact, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_exact", M_GRBM, call_log_partition_exact, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_exact", M_GDBM, call_log_partition_exact, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood", M_RBM, call_log_likelihood, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood", M_DBM, call_log_likelihood, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood", M_DBM4, call_log_likelihood, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood", M_GRBM, call_log_likelihood, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood", M_GDBM, call_log_likelihood, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_ais", M_RBM, call_log_partition_ais, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_ais", M_POTTS, call_log_partition_ais, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_ais", M_DBM, call_log_partition_ais, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_ais", M_DBM4_BIN, call_log_partition_ais, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_ais", M_GRBM, call_log_partition_ais, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_ais_base", M_RBM_SPIN, call_log_partition_ais_base, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_ais_base", M_DBM_BIN, call_log_partition_ais_base, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood_bound", M_RBM, call_log_likelihood_bound, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood_bound", M_DBM, call_log_likelihood_bound, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood_bound", M_DBM4, call_log_likelihood_bound, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood_bound", M_GRBM, call_log_likelihood_bound, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood_bound", M_GDBM, call_log_likelihood_bound, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood_is", M_RBM, call_log_likelihood_is, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood_is", M_DBM, call_log_likelihood_is, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood_is", M_DBM4, call_log_likelihood_is, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood_is", M_GDBM, call_log_likelihood_is, 0, 0, 0, 0),
    /* ---- generators ---- */
    LIFE("ebm_rng_create", M_RBM, call_rng_create, NULL, MSG_NONE),
    LIFE("ebm_rng_derive", M_RBM, call_rng_derive, NULL, MSG_RNG),
    LIFE("ebm_rng_uniform", M_RBM, call_rng_uniform, NULL, MSG_RNG),
    LIFE("ebm_rng_normal", M_RBM, call_rng_normal, NULL, MSG_RNG),
    /* ---- samplers ---- */
    {"ebm_sampler_create GIBBS", M_RBM, call_sampler_create, NULL, MSG_MODEL, GIBBS, 0, 0, 0, 0, 0,
     {{0}}},
    {"ebm_sampler_create MH_UNIFORM", M_DBM, call_sampler_create, NULL, MSG_MODEL, MH, 0, 0, 0, 0,
     0, {{0}}},
    {"ebm_sampler_create LANGEVIN", M_GRBM, call_sampler_create, NULL, MSG_MODEL, LANGEVIN, 0, 0,
     0, 0, 0, {{0}}},
    {"ebm_sampler_create GIBBS_LANGEVIN", M_GRBM, call_sampler_create, NULL, MSG_MODEL, GL, 0, 0,
     0, 0, 0, {{0}}},
    {"ebm_sampler_create TEMPERING", M_DBM, call_sampler_create, NULL, MSG_MODEL, PTS, 0, 0, 0, 0,
     0, {{0}}},
    {"ebm_sampler_set_ladder", M_RBM, call_sampler_set_ladder, prep_sampler, MSG_SAMPLER, PTS, 0,
     0, 0, 0, 0, {{0}}},
    SAMPLER("ebm_sampler_step TEMPERING, first step", M_DBM, PTS, 0, {0}),
    SAMPLER("ebm_sampler_step TEMPERING, after a 1-chain step", M_RBM_SPIN, PTS, 1, {0}),
    {"ebm_sampler_step TEMPERING, 300 rows", M_GRBM, call_sampler_step, prep_sampler,
     MSG_SAMPLER, PTS, 0, 0, 0, 0, 300, {{0}}},
    {"ebm_sampler_set_int LANGEVIN_STEPS", M_GRBM, call_sampler_set_int, prep_sampler,
     MSG_SAMPLER, LANGEVIN, 0, 0, 0, 0, 0, {{0}}},
    SAMPLER("ebm_sampler_step GIBBS, first step", M_RBM, GIBBS, 0, {0}),
    SAMPLER("ebm_sampler_step GIBBS, after a 1-row step", M_RBM, GIBBS, 1, {0}),
    SAMPLER("ebm_sampler_step GIBBS, after a full step", M_RBM, GIBBS, 2, {0}),
    SAMPLER("ebm_sampler_step GIBBS", M_RBM_SPIN, GIBBS, 0, {0}),
    SAMPLER("ebm_sampler_step GIBBS", M_DBM, GIBBS, 0, {0}),
    SAMPLER("ebm_sampler_step GIBBS, visible clamped", M_DBM4, GIBBS, 0,
            O(EBM_SAMPLER_CLAMP_LAYERS, 1)),
    SAMPLER("ebm_sampler_step GIBBS", M_GRBM, GIBBS, 0, {0}),
    SAMPLER("ebm_sampler_step GIBBS, after a 1-row step", M_GRBM, GIBBS, 1, {0}),
    SAMPLER("ebm_sampler_step GIBBS", M_GDBM, GIBBS, 0, {0}),
    SAMPLER("ebm_sampler_step MH_UNIFORM", M_RBM, MH, 0, {0}),
    SAMPLER("ebm_sampler_step MH_UNIFORM", M_DBM, MH, 0, {0}),
    SAMPLER("ebm_sampler_step MH_UNIFORM, after a 1-row step", M_DBM4_BIN, MH, 1, {0}),
    SAMPLER("ebm_sampler_step MH_UNIFORM, visible clamped", M_GRBM, MH, 0,
            O(EBM_SAMPLER_CLAMP_LAYERS, 1)),
    SAMPLER("ebm_sampler_step LANGEVIN", M_GRBM, LANGEVIN, 0, {0}),
    SAMPLER("ebm_sampler_step LANGEVIN, after a 1-row step", M_GRBM, LANGEVIN, 1, {0}),
    SAMPLER("ebm_sampler_step LANGEVIN K=3, MALA", M_GRBM, LANGEVIN, 0,
            O(EBM_SAMPLER_LANGEVIN_STEPS, 3), O(EBM_SAMPLER_ADJUST_AFTER, 0)),
    SAMPLER("ebm_sampler_step LANGEVIN K=3, cosine, scaled by variance", M_GRBM_SPIN, LANGEVIN, 0,
            O(EBM_SAMPLER_LANGEVIN_STEPS, 3), O(EBM_SAMPLER_COSINE, 1),
            O(EBM_SAMPLER_SCALE_BY_VARIANCE, 1)),
    SAMPLER("ebm_sampler_step GIBBS_LANGEVIN", M_GRBM, GL, 0, {0}),
    SAMPLER("ebm_sampler_step GIBBS_LANGEVIN, after a 1-row step", M_GRBM, GL, 1, {0}),
    SAMPLER("ebm_sampler_step GIBBS_LANGEVIN, adjusted", M_GRBM, GL, 0,
            O(EBM_SAMPLER_ADJUST_AFTER, 0)),
    SAMPLER("ebm_sampler_step GIBBS_LANGEVIN, step by step, adjusted", M_GRBM_SPIN, GL, 0,
            O(EBM_SAMPLER_CLOSED_FORM, 0), O(EBM_SAMPLER_ADJUST_AFTER, 0),
            O(EBM_SAMPLER_LANGEVIN_STEPS, 3)),
    SAMPLER("ebm_sampler_step LANGEVIN K=3, MALA, preconditioned", M_GRBM, LANGEVIN, 0,
            O(EBM_SAMPLER_LANGEVIN_STEPS, 3), O(EBM_SAMPLER_ADJUST_AFTER, 0),
            O(EBM_SAMPLER_PRECONDITION, 1)),
    SAMPLER("ebm_sampler_step GIBBS_LANGEVIN, step by step, adjusted, preconditioned",
            M_GRBM_SPIN, GL, 0, O(EBM_SAMPLER_CLOSED_FORM, 0), O(EBM_SAMPLER_ADJUST_AFTER, 0),
            O(EBM_SAMPLER_LANGEVIN_STEPS, 3), O(EBM_SAMPLER_PRECONDITION, 1)),
    SAMPLER("ebm_sampler_step GIBBS_LANGEVIN, visible clamped", M_GRBM, GL, 0,
            O(EBM_SAMPLER_CLAMP_LAYERS, 1)),
    SAMPLER("ebm_sampler_step GIBBS_LANGEVIN, hidden clamped, adjusted", M_GRBM, GL, 0,
            O(EBM_SAMPLER_CLAMP_LAYERS, 2), O(EBM_SAMPLER_ADJUST_AFTER, 0)),
    COUPLED("ebm_sampler_coupled_step GIBBS MAXIMAL", M_RBM, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_MAXIMAL)),
    COUPLED("ebm_sampler_coupled_step GIBBS MAXIMAL", M_POTTS, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_MAXIMAL)),
    COUPLED("ebm_sampler_coupled_step GIBBS CRN", M_POTTS, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_CRN)),
    SAMPLER("ebm_sampler_step GIBBS", M_POTTS, GIBBS, 0, {0}),
    COUPLED("ebm_sampler_coupled_step GIBBS CRN", M_RBM, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_CRN)),
    COUPLED("ebm_sampler_coupled_step GIBBS CRN, after a 1-row step", M_RBM_SPIN, GIBBS, 1,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_CRN)),
    COUPLED("ebm_sampler_coupled_step GIBBS MAXIMAL", M_DBM, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_MAXIMAL)),
    COUPLED("ebm_sampler_coupled_step GIBBS CRN", M_DBM, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_CRN)),
    COUPLED("ebm_sampler_coupled_step GIBBS MAXIMAL", M_DBM4_BIN, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_MAXIMAL)),
    COUPLED("ebm_sampler_coupled_step GIBBS CRN, visible clamped", M_DBM4, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_CRN), O(EBM_SAMPLER_CLAMP_LAYERS, 1)),
    COUPLED("ebm_sampler_coupled_step GIBBS MAXIMAL", M_GRBM, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_MAXIMAL)),
    COUPLED("ebm_sampler_coupled_step GIBBS CRN (reflection)", M_GRBM, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_CRN)),
    COUPLED("ebm_sampler_coupled_step GIBBS CRN", M_GDBM, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_CRN)),
    COUPLED("ebm_sampler_coupled_step GIBBS BLOCKWISE", M_RBM, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_BLOCKWISE)),
    COUPLED("ebm_sampler_coupled_step GIBBS BLOCKWISE, visible clamped", M_DBM4, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_BLOCKWISE), O(EBM_SAMPLER_CLAMP_LAYERS, 1)),
    COUPLED("ebm_sampler_coupled_step GIBBS BLOCKWISE (reflection)", M_GRBM, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_BLOCKWISE)),
    COUPLED("ebm_sampler_coupled_step MH_UNIFORM", M_RBM, MH, 0, {0}),
    COUPLED("ebm_sampler_coupled_step MH_UNIFORM", M_DBM, MH, 0, {0}),
    COUPLED("ebm_sampler_coupled_step MH_UNIFORM, after a 1-row step", M_DBM4_BIN, MH, 1, {0}),
    COUPLED("ebm_sampler_coupled_step MH_UNIFORM, visible clamped", M_DBM, MH, 0,
            O(EBM_SAMPLER_CLAMP_LAYERS, 1)),
    /* ---- estimators ---- */
    {"ebm_estimator_create CD", M_RBM, call_estimator_create, NULL, MSG_MODEL, CD, 0, 0, 0, 0, 0,
     {{0}}},
    {"ebm_estimator_create PCD", M_DBM, call_estimator_create, NULL, MSG_MODEL, PCD, 0, 0, 0, 0, 0,
     {{0}}},
    {"ebm_estimator_create UCD", M_GRBM, call_estimator_create, NULL, MSG_MODEL, UCD, 0, 0, 0, 0,
     0, {{0}}},
    {"ebm_estimator_create UCD_LMI", M_DBM4, call_estimator_create, NULL, MSG_MODEL, LMI, 0, 0, 0,
     0, 0, {{0}}},
    {"ebm_estimator_create GRBM_CD", M_GRBM, call_estimator_create, NULL, MSG_MODEL, GCD, 0, 0, 0,
     0, 0, {{0}}},
    GRADIENT3("ebm_estimator_gradient CD (exact positive)", M_RBM, CD, 0, {0}),
    GRADIENT2("ebm_estimator_gradient CD K=2, sampled positive, marginalize NONE", M_RBM_SPIN, CD,
              0, O(POS, EBM_POSITIVE_SAMPLED), O(MARG, EBM_MARGINALIZE_NONE), O(K_, 2)),
    GRADIENT2("ebm_estimator_gradient CD, mean-field positive, marginalize ODD", M_RBM, CD, 0,
              O(POS, EBM_POSITIVE_MEAN_FIELD), O(MARG, EBM_MARGINALIZE_ODD)),
    GRADIENT2("ebm_estimator_gradient CD, marginalize BOTH", M_RBM, CD, 0,
              O(MARG, EBM_MARGINALIZE_BOTH)),
    GRADIENT2("ebm_estimator_gradient CD, exact positive (explicit)", M_RBM_SPIN, CD, 0,
              O(POS, EBM_POSITIVE_EXACT)),
    GRADIENT2("ebm_estimator_gradient CD (mean-field positive)", M_DBM, CD, 0, {0}),
    GRADIENT2("ebm_estimator_gradient CD (mean-field positive)", M_GDBM, CD, 0, {0}),
    GRADIENT2("ebm_estimator_gradient CD", M_GRBM, CD, 0, {0}),
    GRADIENT3("ebm_estimator_gradient PCD (exact positive)", M_RBM, PCD, 0, {0}),
    GRADIENT2("ebm_estimator_gradient PCD, 6 chains", M_RBM_SPIN, PCD, 0,
              O(EBM_ESTIMATOR_CHAINS, 6)),
    GRADIENT2("ebm_estimator_gradient PCD, sampled positive", M_RBM, PCD, 0,
              O(POS, EBM_POSITIVE_SAMPLED)),
    GRADIENT3("ebm_estimator_gradient PCD K=2 (mean-field positive)", M_DBM4, PCD, 0, O(K_, 2)),
    GRADIENT("ebm_estimator_gradient PCD, chains set by set_chains", M_DBM, PCD, 2, 0, {0}),
    {"ebm_estimator_create PT", M_DBM, call_estimator_create, NULL, MSG_MODEL, PT, 0, 0, 0, 0, 0,
     {{0}}},
    {"ebm_estimator_set_ladder", M_RBM, call_estimator_set_ladder, prep_estimator, MSG_ESTIMATOR,
     PT, 0, 0, 0, 1, 0, {{0}}},
    GRADIENT2("ebm_estimator_gradient PT (exact positive)", M_RBM, PT, 0, {0}),
    GRADIENT2("ebm_estimator_gradient PT K=2 (mean-field positive)", M_DBM4, PT, 0, O(K_, 2)),
    GRADIENT2("ebm_estimator_gradient PT", M_GRBM, PT, 0, {0}),
    GRADIENT2("ebm_estimator_gradient UCD (exact positive)", M_RBM, UCD, 0, {0}),
    GRADIENT2("ebm_estimator_gradient UCD", M_POTTS, UCD, 0, {0}),
    GRADIENT2("ebm_estimator_gradient PCD", M_POTTS, PCD, 0, {0}),
    GRADIENT3("ebm_estimator_gradient UCD, coupled positive", M_RBM_SPIN, UCD, 0,
              O(POS, EBM_POSITIVE_COUPLED)),
    GRADIENT2("ebm_estimator_gradient UCD, sampled positive", M_RBM, UCD, 0,
              O(POS, EBM_POSITIVE_SAMPLED)),
    GRADIENT2("ebm_estimator_gradient UCD, mean-field positive", M_RBM, UCD, 0,
              O(POS, EBM_POSITIVE_MEAN_FIELD)),
    GRADIENT2("ebm_estimator_gradient UCD K=0, MAXIMAL coupling", M_RBM, UCD, 0, O(K_, 0),
              O(SO(EBM_SAMPLER_COUPLING), EBM_COUPLING_MAXIMAL)),
    GRADIENT2("ebm_estimator_gradient UCD K=2, capped at 2 steps, marginalize BOTH", M_RBM_SPIN,
              UCD, 0, O(K_, 2), O(EBM_ESTIMATOR_MAX_STEPS, 2), O(MARG, EBM_MARGINALIZE_BOTH)),
    GRADIENT3("ebm_estimator_gradient UCD (coupled positive)", M_DBM, UCD, 0, {0}),
    GRADIENT2("ebm_estimator_gradient UCD, mean-field positive", M_DBM_BIN, UCD, 0,
              O(POS, EBM_POSITIVE_MEAN_FIELD)),
    GRADIENT2("ebm_estimator_gradient UCD (coupled positive)", M_DBM4_BIN, UCD, 0, {0}),
    GRADIENT2("ebm_estimator_gradient UCD", M_GRBM, UCD, 0, {0}),
    GRADIENT2("ebm_estimator_gradient UCD (coupled positive)", M_GDBM, UCD, 0, {0}),
    GRADIENT2("ebm_estimator_gradient UCD, 72 rows (the term stacks grow)", M_RBM, UCD, 72,
              O(SO(EBM_SAMPLER_COUPLING), EBM_COUPLING_MAXIMAL)),
    GRADIENT2("ebm_estimator_gradient UCD_LMI (exact positive)", M_RBM_SPIN, LMI, 0, {0}),
    GRADIENT2("ebm_estimator_gradient UCD_LMI K=2", M_RBM, LMI, 0, O(K_, 2)),
    GRADIENT2("ebm_estimator_gradient UCD_LMI, coupled positive", M_RBM, LMI, 0,
              O(POS, EBM_POSITIVE_COUPLED)),
    GRADIENT2("ebm_estimator_gradient UCD_LMI, sampled positive", M_RBM_SPIN, LMI, 0,
              O(POS, EBM_POSITIVE_SAMPLED)),
    GRADIENT2("ebm_estimator_gradient UCD_LMI, mean-field positive", M_RBM, LMI, 0,
              O(POS, EBM_POSITIVE_MEAN_FIELD)),
    GRADIENT3("ebm_estimator_gradient UCD_LMI (coupled positive)", M_DBM, LMI, 0, {0}),
    GRADIENT2("ebm_estimator_gradient UCD_LMI, mean-field positive", M_DBM_BIN, LMI, 0,
              O(POS, EBM_POSITIVE_MEAN_FIELD)),
    GRADIENT2("ebm_estimator_gradient UCD_LMI (coupled positive)", M_DBM4, LMI, 0, {0}),
    GRADIENT2("ebm_estimator_gradient UCD_LMI, 20 rows (incremental search)", M_DBM_BIN, LMI, 20,
              {0}),
    GRADIENT3("ebm_estimator_gradient GRBM_CD K=3 Gibbs", M_GRBM, GCD, 0, O(K_, 3)),
    GRADIENT2("ebm_estimator_gradient GRBM_CD K=2 Gibbs, mean-field positive", M_GRBM, GCD, 0,
              O(K_, 2), O(POS, EBM_POSITIVE_MEAN_FIELD)),
    GRADIENT2("ebm_estimator_gradient GRBM_CD K=3 Langevin, burn-in 1, 6 chains", M_GRBM, GCD, 0,
              O(K_, 3), O(EBM_ESTIMATOR_SAMPLER, LANGEVIN), O(EBM_ESTIMATOR_BURN_IN, 1),
              O(EBM_ESTIMATOR_CHAINS, 6)),
    GRADIENT2("ebm_estimator_gradient GRBM_CD K=2 Langevin MALA, sampled positive", M_GRBM_SPIN,
              GCD, 0, O(K_, 2), O(EBM_ESTIMATOR_SAMPLER, LANGEVIN),
              O(SO(EBM_SAMPLER_ADJUST_AFTER), 0), O(POS, EBM_POSITIVE_SAMPLED)),
    GRADIENT2("ebm_estimator_gradient GRBM_CD K=2 Gibbs-Langevin, adjusted", M_GRBM, GCD, 0,
              O(K_, 2), O(EBM_ESTIMATOR_SAMPLER, GL), O(SO(EBM_SAMPLER_ADJUST_AFTER), 0)),
    {"ebm_estimator_set_chains, no chains before", M_RBM, call_set_chains, prep_estimator,
     MSG_ESTIMATOR, PCD, 0, 0, 0, 0, 0, {{0}}},
    {"ebm_estimator_set_chains, replacing chains", M_DBM, call_set_chains, prep_estimator,
     MSG_ESTIMATOR, PCD, 0, 0, 0, 1, 0, {{0}}},
    {"ebm_estimator_set_int CHAINS, replacing chains", M_RBM, call_estimator_set_int,
     prep_estimator, MSG_ESTIMATOR, PCD, EBM_ESTIMATOR_CHAINS, 2, 0, 1, 0, {{0}}},
    /* ---- dReLU hidden units (RBMs over binary, spin and Potts visible units) ---- */
    LIFE("ebm_model_create dReLU hidden", M_DRELU, call_create, NULL, MSG_ERRBUF),
    LIFE("ebm_model_create dReLU hidden", M_DRELU_SPIN, call_create, NULL, MSG_ERRBUF),
    LIFE("ebm_model_create_potts dReLU hidden", M_DRELU_POTTS, call_create, NULL, MSG_ERRBUF),
    LIFE("ebm_model_save", M_DRELU, call_save, prep_save, MSG_MODEL),
    LIFE("ebm_model_load", M_DRELU, call_load, prep_load, MSG_ERRBUF),
    LIFE("ebm_model_load_buffer", M_DRELU, call_load_buffer, prep_buffer, MSG_ERRBUF),
    LIFE("ebm_model_load_buffer", M_DRELU_POTTS, call_load_buffer, prep_buffer, MSG_ERRBUF),
    LIFE("ebm_model_load_buffer, visible units centred", M_DRELU_SPIN, call_load_buffer,
         prep_visible_centred_buffer, MSG_ERRBUF),
    INIT(ORTH, M_DRELU),
    INIT(GAUSS, M_DRELU_SPIN),
    MODEL("ebm_model_set_params", M_DRELU, call_set_params, 0, 0, 0, 0),
    MODEL("ebm_model_axpy_params", M_DRELU_POTTS, call_axpy_params, 0, 0, 0, 0),
    MODEL("ebm_model_set_offsets, visible units", M_DRELU, call_set_visible_offsets, 0, 0, 0, 0),
    MODEL("ebm_model_energy", M_DRELU, call_energy, 0, 0, 0, 0),
    MODEL("ebm_model_energy", M_DRELU_POTTS, call_energy, 0, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {}", M_DRELU, call_free_energy, 0, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {0}", M_DRELU, call_free_energy, 1, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {1}", M_DRELU, call_free_energy, 2, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {0}", M_DRELU_SPIN, call_free_energy, 1, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {0}", M_DRELU_POTTS, call_free_energy, 1, 0, 0, 0),
    MODEL("ebm_model_free_energy sum_out {1}", M_DRELU_POTTS, call_free_energy, 2, 0, 0, 0),
    MODEL("ebm_model_energy_grad sum_out {} (hidden kept)", M_DRELU, call_energy_grad, 0, 0, 0,
          0),
    MODEL("ebm_model_energy_grad sum_out {0} (hidden kept)", M_DRELU, call_energy_grad, 1, 0, 0,
          0),
    MODEL("ebm_model_energy_grad sum_out {1} (hidden summed)", M_DRELU, call_energy_grad, 2, 0,
          0, 0),
    MODEL("ebm_model_energy_grad sum_out {} (hidden kept)", M_DRELU_SPIN, call_energy_grad, 0, 0,
          0, 0),
    MODEL("ebm_model_energy_grad sum_out {1} (hidden summed)", M_DRELU_POTTS, call_energy_grad, 2,
          0, 0, 0),
    MODEL("ebm_model_energy_grad_input l=1 sum_out {}", M_DRELU, call_energy_grad_input, 0, 1, 0,
          0),
    MODEL("ebm_model_energy_grad_input l=1 sum_out {0}", M_DRELU, call_energy_grad_input, 1, 1, 0,
          0),
    MODEL("ebm_model_energy_grad_input l=0 sum_out {1}", M_DRELU_SPIN, call_energy_grad_input, 2,
          0, 0, 0),
    MODEL("ebm_model_layer_input l=1", M_DRELU, call_layer_input, 1, 0, 0, 0),
    MODEL("ebm_model_layer_mean l=1", M_DRELU, call_layer_mean, 1, 0, 0, 0),
    MODEL("ebm_model_layer_mean l=1", M_DRELU_POTTS, call_layer_mean, 1, 0, 0, 0),
    MODEL("ebm_model_layer_mean l=0", M_DRELU_SPIN, call_layer_mean, 0, 0, 0, 0),
    MODEL("ebm_model_layer_argmin l=1", M_DRELU, call_layer_argmin, 1, 0, 0, 0),
    MODEL("ebm_model_layer_argmin l=1", M_DRELU_SPIN, call_layer_argmin, 1, 0, 0, 0),
    MODEL("ebm_model_layer_sample l=1", M_DRELU, call_layer_sample, 1, 0, 0, 0),
    MODEL("ebm_model_layer_sample l=1", M_DRELU_POTTS, call_layer_sample, 1, 0, 0, 0),
    MODEL("ebm_model_layer_sample l=0", M_DRELU_SPIN, call_layer_sample, 0, 0, 0, 0),
    MODEL("ebm_model_layer_logprob l=1", M_DRELU, call_layer_logprob, 1, 0, 0, 0),
    MODEL("ebm_model_layer_logprob l=1", M_DRELU_SPIN, call_layer_logprob, 1, 0, 0, 0),
    MODEL("ebm_model_layer_logprob l=0", M_DRELU_POTTS, call_layer_logprob, 0, 0, 0, 0),
    MODEL("ebm_model_random_state", M_DRELU, call_random_state, 0, 0, 0, 0),
    MODEL("ebm_model_random_state, visible clamped", M_DRELU_POTTS, call_random_state, 0, 0, 1,
          0),
    {"ebm_sampler_create GIBBS", M_DRELU, call_sampler_create, NULL, MSG_MODEL, GIBBS, 0, 0, 0, 0,
     0, {{0}}},
    SAMPLER("ebm_sampler_step GIBBS, first step", M_DRELU, GIBBS, 0, {0}),
    SAMPLER("ebm_sampler_step GIBBS, after a 1-row step", M_DRELU, GIBBS, 1, {0}),
    SAMPLER("ebm_sampler_step GIBBS, after a full step", M_DRELU, GIBBS, 2, {0}),
    SAMPLER("ebm_sampler_step GIBBS", M_DRELU_SPIN, GIBBS, 0, {0}),
    SAMPLER("ebm_sampler_step GIBBS", M_DRELU_POTTS, GIBBS, 0, {0}),
    SAMPLER("ebm_sampler_step GIBBS, visible clamped", M_DRELU, GIBBS, 0,
            O(EBM_SAMPLER_CLAMP_LAYERS, 1)),
    SAMPLER("ebm_sampler_step GIBBS, hidden clamped, row offset", M_DRELU_SPIN, GIBBS, 0,
            O(EBM_SAMPLER_CLAMP_LAYERS, 2), O(EBM_SAMPLER_ROW_OFFSET, 7)),
    {"ebm_estimator_create CD", M_DRELU, call_estimator_create, NULL, MSG_MODEL, CD, 0, 0, 0, 0,
     0, {{0}}},
    {"ebm_estimator_create PCD", M_DRELU_POTTS, call_estimator_create, NULL, MSG_MODEL, PCD, 0, 0,
     0, 0, 0, {{0}}},
    GRADIENT3("ebm_estimator_gradient CD (exact positive)", M_DRELU, CD, 0, {0}),
    GRADIENT2("ebm_estimator_gradient CD K=2, sampled positive, marginalize NONE", M_DRELU_SPIN,
              CD, 0, O(POS, EBM_POSITIVE_SAMPLED), O(MARG, EBM_MARGINALIZE_NONE), O(K_, 2)),
    GRADIENT2("ebm_estimator_gradient CD, marginalize ODD", M_DRELU, CD, 0,
              O(MARG, EBM_MARGINALIZE_ODD)),
    GRADIENT2("ebm_estimator_gradient CD, marginalize BOTH", M_DRELU_POTTS, CD, 0,
              O(MARG, EBM_MARGINALIZE_BOTH)),
    GRADIENT3("ebm_estimator_gradient PCD (exact positive)", M_DRELU, PCD, 0, {0}),
    GRADIENT2("ebm_estimator_gradient PCD, 6 chains, sampled positive", M_DRELU_SPIN, PCD, 0,
              O(EBM_ESTIMATOR_CHAINS, 6), O(POS, EBM_POSITIVE_SAMPLED)),
    GRADIENT2("ebm_estimator_gradient PCD", M_DRELU_POTTS, PCD, 0, {0}),
    GRADIENT("ebm_estimator_gradient PCD, chains set by set_chains", M_DRELU, PCD, 2, 0, {0}),
    GRADIENT("ebm_estimator_gradient PCD, row and chain offsets", M_DRELU, PCD, 0, 0,
             O(EBM_ESTIMATOR_ROW_OFFSET, 7), O(EBM_ESTIMATOR_CHAIN_OFFSET, 5)),
    {"ebm_estimator_set_chains, no chains before", M_DRELU, call_set_chains, prep_estimator,
     MSG_ESTIMATOR, PCD, 0, 0, 0, 0, 0, {{0}}},
    MODEL("ebm_model_log_partition_exact", M_DRELU, call_log_partition_exact, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_exact", M_DRELU_SPIN, call_log_partition_exact, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_exact", M_DRELU_POTTS, call_log_partition_exact, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_ais", M_DRELU, call_log_partition_ais, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_ais", M_DRELU_POTTS, call_log_partition_ais, 0, 0, 0, 0),
    MODEL("ebm_model_log_partition_ais_base", M_DRELU_SPIN, call_log_partition_ais_base, 0, 0, 0,
          0),
    MODEL("ebm_model_log_likelihood", M_DRELU, call_log_likelihood, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood", M_DRELU_SPIN, call_log_likelihood, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood", M_DRELU_POTTS, call_log_likelihood, 0, 0, 0, 0),
    MODEL("ebm_model_log_likelihood_is (nothing sampled)", M_DRELU, call_log_likelihood_is, 0,
          0, 0, 0),
    MODEL("ebm_model_energy, 300 rows", M_DRELU, call_energy, 0, 0, 0, 300),
    MODEL("ebm_model_free_energy sum_out {1}, 300 rows", M_DRELU, call_free_energy, 2, 0, 0, 300),
    MODEL("ebm_model_energy_grad sum_out {1}, 300 rows", M_DRELU_SPIN, call_energy_grad, 2, 0, 0,
          300),
    MODEL("ebm_model_layer_sample l=1, 300 rows", M_DRELU, call_layer_sample, 1, 0, 0, 300),
    MODEL("ebm_model_layer_logprob l=1, 300 rows", M_DRELU, call_layer_logprob, 1, 0, 0, 300),
    MODEL("ebm_model_log_likelihood, 300 rows", M_DRELU_POTTS, call_log_likelihood, 0, 0, 0, 300),
    {"ebm_sampler_step GIBBS, 300 rows", M_DRELU, call_sampler_step, prep_sampler, MSG_SAMPLER,
     GIBBS, 0, 0, 0, 0, 300, {{0}}},
    GRADIENT("ebm_estimator_gradient PCD, 300 rows, first call", M_DRELU, PCD, 0, 300, {0}),
    /* ---- batches of more than one chunk (256 rows) ---- */
    MODEL("ebm_model_energy, 300 rows", M_RBM, call_energy, 0, 0, 0, 300),
    MODEL("ebm_model_energy, 300 rows", M_GDBM, call_energy, 0, 0, 0, 300),
    MODEL("ebm_model_free_energy sum_out {1}, 300 rows", M_GRBM, call_free_energy, 2, 0, 0, 300),
    MODEL("ebm_model_energy_grad sum_out {0,2}, 300 rows", M_DBM, call_energy_grad, 5, 0, 0, 300),
    MODEL("ebm_model_energy_grad_input l=1 sum_out {0}, 300 rows", M_RBM_SPIN,
          call_energy_grad_input, 1, 1, 0, 300),
    MODEL("ebm_model_layer_logprob l=1, 300 rows", M_DBM, call_layer_logprob, 1, 0, 0, 300),
    MODEL("ebm_model_layer_sample l=0, 300 rows", M_GRBM, call_layer_sample, 0, 0, 0, 300),
    MODEL("ebm_model_local_search, 300 rows", M_DBM4_BIN, call_local_search, 0, 0, 0, 300),
    {"ebm_model_mean_field, visible clamped, 300 rows", M_DBM, call_mean_field, prep_means,
     MSG_MODEL, 0, 0, 0, 1, 0, 300, {{0}}},
    MODEL("ebm_model_log_likelihood, 300 rows", M_DBM, call_log_likelihood, 0, 0, 0, 300),
    MODEL("ebm_model_log_likelihood_bound, 300 rows", M_DBM4, call_log_likelihood_bound, 0, 0, 0,
          300),
    {"ebm_sampler_step GIBBS, 300 rows", M_GDBM, call_sampler_step, prep_sampler, MSG_SAMPLER,
     GIBBS, 0, 0, 0, 0, 300, {{0}}},
    {"ebm_sampler_step MH_UNIFORM, 300 rows", M_DBM, call_sampler_step, prep_sampler,
     MSG_SAMPLER, MH, 0, 0, 0, 0, 300, {{0}}},
    {"ebm_sampler_step LANGEVIN K=3 MALA, 300 rows", M_GRBM, call_sampler_step, prep_sampler,
     MSG_SAMPLER, LANGEVIN, 0, 0, 0, 0, 300,
     {O(EBM_SAMPLER_LANGEVIN_STEPS, 3), O(EBM_SAMPLER_ADJUST_AFTER, 0)}},
    {"ebm_sampler_step GIBBS_LANGEVIN adjusted, 300 rows", M_GRBM, call_sampler_step,
     prep_sampler, MSG_SAMPLER, GL, 0, 0, 0, 0, 300, {O(EBM_SAMPLER_ADJUST_AFTER, 0)}},
    {"ebm_sampler_coupled_step GIBBS MAXIMAL, 300 rows", M_DBM, call_coupled_step, prep_coupled,
     MSG_SAMPLER, GIBBS, 0, 0, 0, 0, 300, {O(EBM_SAMPLER_COUPLING, EBM_COUPLING_MAXIMAL)}},
    {"ebm_sampler_coupled_step GIBBS CRN, 300 rows", M_GRBM, call_coupled_step, prep_coupled,
     MSG_SAMPLER, GIBBS, 0, 0, 0, 0, 300, {O(EBM_SAMPLER_COUPLING, EBM_COUPLING_CRN)}},
    {"ebm_sampler_coupled_step GIBBS BLOCKWISE, 300 rows", M_DBM, call_coupled_step,
     prep_coupled, MSG_SAMPLER, GIBBS, 0, 0, 0, 0, 300,
     {O(EBM_SAMPLER_COUPLING, EBM_COUPLING_BLOCKWISE)}},
    {"ebm_sampler_coupled_step MH_UNIFORM, 300 rows", M_RBM, call_coupled_step, prep_coupled,
     MSG_SAMPLER, MH, 0, 0, 0, 0, 300, {{0}}},
    GRADIENT("ebm_estimator_gradient PCD, 300 rows, first call", M_DBM, PCD, 0, 300, {0}),
    GRADIENT("ebm_estimator_gradient UCD, 300 rows, first call", M_RBM, UCD, 0, 300, {0}),
    SAMPLER("ebm_sampler_step GIBBS, row offset", M_DBM, GIBBS, 0, O(EBM_SAMPLER_ROW_OFFSET, 7)),
    COUPLED("ebm_sampler_coupled_step GIBBS CRN, row offset", M_RBM, GIBBS, 0,
            O(EBM_SAMPLER_COUPLING, EBM_COUPLING_CRN), O(EBM_SAMPLER_ROW_OFFSET, 7)),
    GRADIENT("ebm_estimator_gradient UCD_LMI, row offset", M_DBM, LMI, 0, 0,
             O(EBM_ESTIMATOR_ROW_OFFSET, 7)),
    GRADIENT("ebm_estimator_gradient PCD, row and chain offsets", M_RBM, PCD, 0, 0,
             O(EBM_ESTIMATOR_ROW_OFFSET, 7), O(EBM_ESTIMATOR_CHAIN_OFFSET, 5)),
};
static const int n_cases = (int)(sizeof cases / sizeof cases[0]);

/* Printable text of at most 1000 characters. */
static int readable(const char *msg)
{
    size_t i = 0;
    for (; msg[i] != '\0' && i < 1000; i++) {
        if (!isprint((unsigned char)msg[i])) {
            return 0;
        }
    }
    return msg[i] == '\0';
}


/* EBM_ALLOC_VERBOSE: 1 prints each row's points, 2 also each message. */
static int alloc_verbose(void)
{
    const char *v = getenv("EBM_ALLOC_VERBOSE");
    return v != NULL ? atoi(v) : 0;
}

/* ---- the runner ---------------------------------------------------------- */

static int ok_rc(int rc) { return rc >= 0; } /* counts (local search, mean field) succeed */

START_TEST(alloc_case)
{
    const acase *c = &cases[_i];
    fx *f = &g_f;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    t_soft_reset();

    /* The reference: the call without failure; the allocations it makes. */
    snap ref, before, after;
    fx_setup(f, c);
    t_fault_arm(LONG_MAX);
    const int ref_rc = c->call(f);
    const long allocs = t_fault_disarm();
    ck_assert_msg(ok_rc(ref_rc), "%s [%s]: the call without failure returned %s (%d): %s",
                  c->name, specs[c->model].name, ebm_error_name(ref_rc), ref_rc,
                  message(f) != NULL ? message(f) : "");
    snap_take(&ref, f);
    fx_teardown(f);

    long points = 0, n_fail = 0;
    long n;
    for (n = 1; n <= MAX_N; n++) {
        fx_setup(f, c);
        prime_message(f);
        char primed[300];
        snprintf(primed, sizeof primed, "%s", message(f) != NULL ? message(f) : "");
        snap_take(&before, f);
        t_fault_arm(n);
        int rc = c->call(f);
        t_fault_disarm();
        const int fired = t_fault_fired();
        snap_take(&after, f);
        char diff[600];
        const int nf0 = t_soft_failures();
        if (!fired) {
            /* Past the last allocation: the call must be the reference one. */
            if (rc != ref_rc) {
                ALLOC_FAIL(c, n, "without a failure the call returned %s (%d), the reference %d",
                           ebm_error_name(rc), rc, ref_rc);
            }
            snap_diff(&ref, &after, diff, sizeof diff);
            if (diff[0] != '\0') {
                ALLOC_FAIL(c, n, "without a failure the results differ from the reference: %s",
                           diff);
            }
            snap_free(&before);
            snap_free(&after);
            fx_teardown(f);
            break;
        }
        points++;
        if (ok_rc(rc)) {
            /* Tolerated: exactly the reference results. */
            if (rc != ref_rc) {
                ALLOC_FAIL(c, n, "the failure was tolerated but the call returned %d, not %d", rc,
                           ref_rc);
            }
            snap_diff(&ref, &after, diff, sizeof diff);
            if (diff[0] != '\0') {
                ALLOC_FAIL(c, n, "the failure was tolerated (EBM_OK) but changed: %s", diff);
            }
        } else {
            if (rc != EBM_ENOMEM) {
                ALLOC_FAIL(c, n, "returned %s (%d), not EBM_ENOMEM; message \"%s\"",
                           ebm_error_name(rc), rc, message(f) != NULL ? message(f) : "(null)");
            }
            if (c->msg != MSG_NONE) {
                const char *msg = message(f);
                if (msg == NULL || msg[0] == '\0') {
                    ALLOC_FAIL(c, n, "left an empty message in %s", msg_source(c->msg));
                } else if (strcmp(msg, primed) == 0) {
                    ALLOC_FAIL(c, n, "left no message of its own in %s (still \"%s\")",
                               msg_source(c->msg), msg);
                } else if (!readable(msg) || !t_contains(msg, "memory")) {
                    ALLOC_FAIL(c, n, "the message in %s does not say memory ran out: \"%s\"",
                               msg_source(c->msg), msg);
                }
                if (alloc_verbose() >= 2) {
                    fprintf(stderr, "check_alloc.c: %s N=%ld: \"%s\"\n", c->name, n,
                            msg != NULL ? msg : "(null)");
                }
            }
            snap_diff(&before, &after, diff, sizeof diff);
            const int visible = diff[0] != '\0';
            if (visible) {
                ALLOC_FAIL(c, n, "the failed call changed: %s", diff);
            }
            /* The same call again, without failure: the reference results
             * (reported only if nothing visible changed, which explains it). */
            t_fault_arm(LONG_MAX);
            int rc2 = c->call(f);
            t_fault_disarm();
            snap_free(&after);
            snap_take(&after, f);
            if (!visible && rc2 != ref_rc) {
                ALLOC_FAIL(c, n, "the call repeated without failure returned %s (%d), not %d",
                           ebm_error_name(rc2), rc2, ref_rc);
            }
            snap_diff(&ref, &after, diff, sizeof diff);
            if (!visible && diff[0] != '\0') {
                ALLOC_FAIL(c, n,
                           "the call repeated without failure gave other results than the "
                           "reference (the failed call changed hidden state): %s",
                           diff);
            }
        }
        n_fail += t_soft_failures() > nf0;
        snap_free(&before);
        snap_free(&after);
        fx_teardown(f);
    }
    snap_free(&ref);
    if (n > MAX_N) {
        ALLOC_FAIL(c, 0, "still failing after %d injection points", MAX_N);
    }
    if (points != allocs) {
        ALLOC_FAIL(c, 0, "the reference call made %ld allocations but %ld injection points fired",
                   allocs, points);
    }
    if (alloc_verbose() >= 1) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        fprintf(stderr, "check_alloc.c: %-58s [%s]: %ld points, %ld with defects, %.1f ms\n",
                c->name, specs[c->model].name, points, n_fail,
                1e3 * ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)));
    }
    tally_add(points);
    ck_assert_msg(t_soft_failures() == 0,
                  "%d allocation-failure check(s) failed (%ld of %ld "
                  "points; all listed on stderr); first: %s",
                  t_soft_failures(), n_fail, points, t_soft_first());
}
END_TEST

START_TEST(alloc_summary)
{
    long total = 0, calls = 0, rec[2];
    off_t off = 0;
    if (g_tally != NULL) {
        while (pread(fileno(g_tally), rec, sizeof rec, off) == (ssize_t)sizeof rec) {
            total += rec[0];
            calls += rec[1];
            off += (off_t)sizeof rec;
        }
    }
    fprintf(stderr, "allocation-failure points covered: %ld (%ld calls)\n", total, calls);
}
END_TEST

Suite *ebm_alloc_suite(void)
{
    /* The tally outlives the forked tests: they append, the last one reads. */
    if (g_tally == NULL) {
        g_tally = tmpfile();
    }
    const t_test tests[] = {
        {"calls", alloc_case, n_cases, 60, NULL, NULL},
        /* In the same test case, so that it runs after every call's row,
         * in the same worker process of the runner. */
        {"calls", alloc_summary, 0, 0, NULL, NULL},
    };
    return t_suite("alloc", tests, sizeof tests / sizeof tests[0]);
}
