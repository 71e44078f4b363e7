/* The test runner and the helpers shared by the suites (tests.h). */
#include "tests.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- suites and running ------------------------------------------------------ */

/* The test cases of every suite, in order (t_add_unit): the runner's units. */
enum { MAX_UNITS = 1024 };
static struct {
    const char *suite, *tcase;
} g_units[MAX_UNITS];
static int g_n_units;

void t_add_unit(const char *suite, const char *tcase)
{
    if (g_n_units < MAX_UNITS) {
        g_units[g_n_units].suite = suite;
        g_units[g_n_units].tcase = tcase;
    }
    g_n_units++; /* past MAX_UNITS: main runs the suites in one process */
}

Suite *t_suite(const char *name, const t_test *tests, size_t n)
{
    Suite *s = suite_create(name);
    TCase *tc = NULL;
    const char *current = NULL;
    for (size_t i = 0; i < n; i++) {
        if (current == NULL || strcmp(tests[i].tcase, current) != 0) {
            current = tests[i].tcase;
            tc = tcase_create(current);
            t_add_unit(name, current);
            /* Its tag "suite:test_case" (spaces as '_'), for CK_EXCLUDE_TAGS. */
            char tag[128];
            snprintf(tag, sizeof tag, "%s:%s", name, current);
            for (char *c = tag; *c != '\0'; c++) {
                *c = *c == ' ' ? '_' : *c;
            }
            tcase_set_tags(tc, tag);
            if (tests[i].timeout > 0) {
                tcase_set_timeout(tc, tests[i].timeout);
            }
            if (tests[i].setup != NULL || tests[i].teardown != NULL) {
                tcase_add_checked_fixture(tc, tests[i].setup, tests[i].teardown);
            }
            suite_add_tcase(s, tc);
        }
        if (tests[i].loop > 0) {
            tcase_add_loop_test(tc, tests[i].test, 0, tests[i].loop);
        } else {
            tcase_add_test(tc, tests[i].test);
        }
    }
    return s;
}

int t_level(void)
{
    const char *s = getenv("EBM_TEST_LEVEL");
    return (s != NULL && atoi(s) >= 2) ? 2 : 1;
}

int64_t t_scaled(int64_t n1) { return t_level() >= 2 ? 10 * n1 : n1; }

int t_verbose(void)
{
    const char *s = getenv("EBM_TEST_VERBOSE");
    return s != NULL && atoi(s) > 0;
}

void *t_malloc(size_t n)
{
    void *p = malloc(n > 0 ? n : 1);
    T_ASSERT(p != NULL);
    return p;
}

void *t_calloc(size_t n, size_t size)
{
    void *p = calloc(n > 0 ? n : 1, size > 0 ? size : 1);
    T_ASSERT(p != NULL);
    return p;
}

float *t_floats(int64_t n) { return t_malloc((size_t)(n > 0 ? n : 1) * sizeof(float)); }

/* ---- models, generators, states ------------------------------------------------ */

ebm_model_t *t_model(int64_t n_layers, const int64_t *sizes, int visible_units, int hidden_units)
{
    ebm_model_t *m = NULL;
    char err[256];
    int rc = ebm_model_create(&m, n_layers, sizes, visible_units, hidden_units, err, sizeof err);
    ck_assert_msg(rc == EBM_OK, "ebm_model_create: %s", err);
    return m;
}

double t_uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

void t_random_params(ebm_model_t *m, uint64_t seed, double scale)
{
    int64_t np = ebm_model_param_count(m);
    float *p = malloc((size_t)np * sizeof *p);
    ck_assert_ptr_nonnull(p);
    for (int64_t i = 0; i < np; i++) {
        p[i] = (float)((2.0 * t_uniform(&seed) - 1.0) * scale);
    }
    int64_t off, rows, cols;
    if (ebm_model_param_block(m, EBM_PARAM_LOGVAR, 0, &off, &rows, &cols) == EBM_OK) {
        for (int64_t i = 0; i < rows * cols; i++) {
            p[off + i] = (float)(2.0 * t_uniform(&seed) - 1.0);
        }
    }
    ck_assert_int_eq(ebm_model_set_params(m, p), EBM_OK);
    free(p);
}

const char *t_coupling_name(int coupling)
{
    static const char *const names[] = {"MAXIMAL", "CRN", "BLOCKWISE"};
    return coupling >= EBM_COUPLING_MAXIMAL && coupling <= EBM_COUPLING_BLOCKWISE ? names[coupling]
                                                                                  : "unknown";
}

ebm_sampler_t *t_sampler(const ebm_model_t *m, int kind, uint32_t clamp, int coupling)
{
    ebm_sampler_t *s = NULL;
    int rc = ebm_sampler_create(&s, m, kind);
    T_ASSERT_MSG(rc == EBM_OK, "ebm_sampler_create(kind %d): %s", kind, ebm_model_errmsg(m));
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_CLAMP_LAYERS, clamp), EBM_OK);
    ck_assert_int_eq(ebm_sampler_set_int(s, EBM_SAMPLER_COUPLING, coupling), EBM_OK);
    return s;
}

ebm_rng_t *t_rng(uint64_t seed, uint64_t stream)
{
    ebm_rng_t *r = NULL;
    ck_assert_int_eq(ebm_rng_create(&r, seed, stream), EBM_OK);
    ck_assert_ptr_nonnull(r);
    return r;
}

ebm_rng_t *t_rng_started(uint64_t seed, uint64_t stream, int64_t normals)
{
    ebm_rng_t *r = NULL;
    float z[4];
    if (ebm_rng_create(&r, seed, stream) != EBM_OK) {
        T_SOFT_FAIL("ebm_rng_create(%llu, %llu) failed", (unsigned long long)seed,
                    (unsigned long long)stream);
        return NULL;
    }
    if (ebm_rng_normal(r, normals < 4 ? normals : 4, z) != EBM_OK) {
        T_SOFT_FAIL("ebm_rng_normal: %s", ebm_rng_errmsg(r));
        ebm_rng_destroy(r);
        return NULL;
    }
    return r;
}

/* n rows of states (means = 0) or means (means = 1) of m from seed. */
static void fill_rows(const ebm_model_t *m, int64_t n, float *x, int64_t ld, uint64_t seed,
                      int means)
{
    int64_t w = ebm_model_state_width(m);
    for (int64_t r = 0; r < n; r++) {
        for (int64_t c = w; c < ld; c++) {
            x[r * ld + c] = means ? 7.0f : 0.5f; /* padding: never read */
        }
        for (int64_t l = 0; l < ebm_model_num_layers(m); l++) {
            int64_t off = ebm_model_layer_offset(m, l);
            for (int64_t j = 0; j < ebm_model_layer_size(m, l); j++) {
                double u = t_uniform(&seed);
                float v;
                switch (ebm_model_layer_units(m, l)) {
                case EBM_UNITS_POTTS: {
                    /* a site: uniform means, or a category (at its first column) */
                    const int64_t q = ebm_model_layer_categories(m, l);
                    const int64_t k = j % q;
                    const int64_t cat = (int64_t)(t_uniform(&seed) * (double)q);
                    for (int64_t t = 0; k == 0 && t < q; t++) {
                        x[r * ld + off + j + t] = means ? 1.0f / (float)q : (t == cat);
                    }
                    v = x[r * ld + off + j];
                    (void)u;
                    break;
                }
                case EBM_UNITS_BINARY: v = means ? (float)u : (u < 0.5 ? 0.0f : 1.0f); break;
                case EBM_UNITS_SPIN:
                    v = means ? (float)(2.0 * u - 1.0) : (u < 0.5 ? -1.0f : 1.0f);
                    break;
                default: v = (float)(4.0 * u - 2.0); break;
                }
                x[r * ld + off + j] = v;
            }
        }
    }
}

void t_fill_states(const ebm_model_t *m, int64_t n, float *x, int64_t ld, uint64_t seed)
{
    fill_rows(m, n, x, ld, seed, 0);
}

void t_fill_means(const ebm_model_t *m, int64_t n, float *mu, int64_t ld, uint64_t seed)
{
    fill_rows(m, n, mu, ld, seed, 1);
}

int t_unit_ok(int units, float v, int mean)
{
    switch (units) {
    case EBM_UNITS_BINARY:
    case EBM_UNITS_POTTS: return mean ? (v >= 0.0f && v <= 1.0f) : (v == 0.0f || v == 1.0f);
    case EBM_UNITS_SPIN: return mean ? (v >= -1.0f && v <= 1.0f) : (v == -1.0f || v == 1.0f);
    default: return isfinite(v);
    }
}

void t_sentinel(void *p, size_t n) { memset(p, 0xA5, n); }

/* ---- checksums ------------------------------------------------------------------ */

uint32_t t_crc32(const unsigned char *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) {
            c = (c & 1u) ? (c >> 1) ^ 0xedb88320u : c >> 1;
        }
    }
    return c ^ 0xffffffffu;
}

void t_fix_crc(unsigned char *p, size_t n)
{
    if (n >= 4) {
        const uint32_t crc = t_crc32(p, n - 4);
        for (int i = 0; i < 4; i++) {
            p[n - 4 + (size_t)i] = (unsigned char)(crc >> (8 * i));
        }
    }
}

uint64_t t_checksum(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211ULL;
    }
    return h;
}

uint64_t t_model_hash(const ebm_model_t *m)
{
    int64_t np = ebm_model_param_count(m);
    float *p = np > 0 ? malloc((size_t)np * sizeof *p) : NULL;
    if (p == NULL || ebm_model_get_params(m, p) != EBM_OK) {
        T_SOFT_FAIL("could not read the parameters of a model (%lld of them)", (long long)np);
        free(p);
        return 0;
    }
    int64_t shape[3] = {ebm_model_num_layers(m), ebm_model_state_width(m), np};
    uint64_t h = t_checksum(p, (size_t)np * sizeof *p) ^ (3 * t_checksum(shape, sizeof shape));
    free(p);
    /* The offsets are part of the model too. */
    float *mu = malloc((size_t)shape[1] * sizeof *mu);
    if (mu == NULL || ebm_model_get_offsets(m, mu) != EBM_OK) {
        T_SOFT_FAIL("could not read the offsets of a model");
    } else {
        h ^= 5 * t_checksum(mu, (size_t)shape[1] * sizeof *mu);
    }
    free(mu);
    return h;
}

uint64_t t_rng_hash(const ebm_rng_t *r)
{
    uint64_t st[EBM_RNG_STATE_WORDS] = {0};
    if (ebm_rng_get_state(r, st) != EBM_OK) {
        T_SOFT_FAIL("could not read a generator's state");
    }
    return t_checksum(st, sizeof st);
}

uint64_t t_estimator_hash(const ebm_estimator_t *e, const ebm_model_t *m)
{
    double st[EBM_ESTIMATOR_STAT_COUNT];
    for (int i = 0; i < EBM_ESTIMATOR_STAT_COUNT; i++) {
        st[i] = ebm_estimator_stat(e, i);
    }
    int64_t nc = ebm_estimator_num_chains(e), w = ebm_model_state_width(m);
    uint64_t h = t_checksum(st, sizeof st) ^ (7 * t_checksum(&nc, sizeof nc));
    if (nc > 0) {
        float *c = malloc((size_t)(nc * w) * sizeof *c);
        if (c != NULL && ebm_estimator_get_chains(e, c, w) == EBM_OK) {
            h ^= 13 * t_checksum(c, (size_t)(nc * w) * sizeof *c);
        }
        free(c);
    }
    return h;
}

int t_contains(const char *hay, const char *needle)
{
    if (hay == NULL) {
        return 0;
    }
    size_t n = strlen(needle);
    for (const char *p = hay; *p != '\0'; p++) {
        size_t i = 0;
        while (i < n && p[i] != '\0' &&
               tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i])) {
            i++;
        }
        if (i == n) {
            return 1;
        }
    }
    return n == 0;
}

/* ---- files ------------------------------------------------------------------------ */

char *t_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

char *t_temp_dir(const char *prefix)
{
    const char *base = getenv("TMPDIR");
    char name[256];
    snprintf(name, sizeof name, "%sXXXXXX", prefix);
    char *tmpl = t_path(base != NULL && base[0] != '\0' ? base : "/tmp", name);
    ck_assert_msg(mkdtemp(tmpl) != NULL, "mkdtemp: %s", strerror(errno));
    return tmpl;
}

void t_rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *ent;
        while ((ent = readdir(d)) != NULL) {
            if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) {
                continue;
            }
            char *p = t_path(dir, ent->d_name);
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
                t_rm_tree(p);
            } else {
                (void)unlink(p);
            }
            free(p);
        }
        closedir(d);
    }
    (void)rmdir(dir);
}

int t_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *de = readdir(d); de != NULL; de = readdir(d)) {
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    }
    closedir(d);
    return n;
}

void t_write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(p, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* ---- soft checks ------------------------------------------------------------------- */

static int g_nfail;
static char g_first[1300];
static char g_ctx[256];
static int g_child_fd = -1; /* t_soft_to_pipe: the pipe to the parent */

static void pipe_write(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

/* text and a newline to the parent, whole or cut to the buffer. */
static void pipe_line(const char *prefix, const char *text)
{
    char buf[1400];
    int k = snprintf(buf, sizeof buf, "%s%s\n", prefix, text);
    pipe_write(g_child_fd, buf, (size_t)(k < (int)sizeof buf ? k : (int)sizeof buf - 1));
}

void t_soft_reset(void)
{
    g_nfail = 0;
    g_first[0] = '\0';
    g_ctx[0] = '\0';
}

void t_soft_record(const char *text)
{
    if (g_child_fd >= 0) {
        pipe_line("", text);
    } else {
        fprintf(stderr, "%s\n", text);
    }
    if (g_nfail++ == 0) {
        snprintf(g_first, sizeof g_first, "%s", text);
    }
}

void t_soft_context(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_ctx, sizeof g_ctx, fmt, ap);
    va_end(ap);
    if (g_child_fd >= 0) {
        pipe_line("@", g_ctx);
    }
}

void t_soft_fail_at(const char *file, int line, const char *fmt, ...)
{
    char text[900], full[1300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    snprintf(full, sizeof full, "%s:%d: %s%s%s", base != NULL ? base + 1 : file, line, g_ctx,
             g_ctx[0] != '\0' ? ": " : "", text);
    for (char *c = full; *c != '\0'; c++) {
        if (*c == '\n') {
            *c = ' ';
        }
    }
    t_soft_record(full);
}

void t_soft_to_pipe(int fd)
{
    g_child_fd = fd;
    g_nfail = 0;
}

void t_soft_child_done(void) { pipe_line("@@", "done"); }

int t_soft_failures(void) { return g_nfail; }

const char *t_soft_first(void) { return g_first; }

/* ---- snapshots ----------------------------------------------------------------------- */

void t_snap_init(t_snap *s, int src, const ebm_model_t *m, ebm_rng_t *r)
{
    memset(s, 0, sizeof *s);
    s->src = src;
    s->m = m;
    s->r = r;
}

void t_snap_track(t_snap *s, const char *name, const void *p, size_t len)
{
    if (s->n >= T_SNAP_MAX) {
        T_SOFT_FAIL("more than %d buffers to watch (%s)", T_SNAP_MAX, name);
        return;
    }
    if (p == NULL) {
        return;
    }
    s->name[s->n] = name;
    s->p[s->n] = p;
    s->len[s->n] = len;
    s->h[s->n] = t_checksum(p, len);
    s->n++;
}

const char *t_snap_msg(const t_snap *s)
{
    if (s->src == T_MSG_MODEL) {
        return ebm_model_errmsg(s->m);
    }
    if (s->src == T_MSG_RNG) {
        return ebm_rng_errmsg(s->r);
    }
    return "";
}

void t_snap_take(t_snap *s)
{
    if (s->src == T_MSG_MODEL) {
        (void)ebm_model_param_block(s->m, 12345, 0, NULL, NULL, NULL);
    } else if (s->src == T_MSG_RNG) {
        (void)ebm_rng_uniform(s->r, -12345, NULL);
    }
    const char *msg = t_snap_msg(s);
    snprintf(s->primed, sizeof s->primed, "%s", msg != NULL ? msg : "");
    s->hm = s->m != NULL ? t_model_hash(s->m) : 0;
    s->hr = s->r != NULL ? t_rng_hash(s->r) : 0;
    s->he = s->e != NULL ? t_estimator_hash(s->e, s->m) : 0;
    for (int i = 0; i < s->n; i++) {
        s->h[i] = t_checksum(s->p[i], s->len[i]);
    }
}

void t_snap_same(const t_snap *s, const char *file, int line, const char *call)
{
    if (s->m != NULL && t_model_hash(s->m) != s->hm) {
        t_soft_fail_at(file, line, "%s changed the model's parameters", call);
    }
    if (s->r != NULL && t_rng_hash(s->r) != s->hr) {
        t_soft_fail_at(file, line, "%s moved the generator (ebm_rng_get_state differs)", call);
    }
    if (s->e != NULL && t_estimator_hash(s->e, s->m) != s->he) {
        t_soft_fail_at(file, line, "%s changed the estimator's chains or statistics", call);
    }
    for (int i = 0; i < s->n; i++) {
        if (t_checksum(s->p[i], s->len[i]) != s->h[i]) {
            t_soft_fail_at(file, line, "%s changed %s", call, s->name[i]);
        }
    }
}

void t_snap_verify(const t_snap *s, const char *file, int line, const char *call, int rc,
                   int code, const char *n1, const char *n2, const char *n3)
{
    const char *msg = t_snap_msg(s);
    if (rc != code) {
        t_soft_fail_at(file, line, "%s returned %s (%d), expected %s (%d); message \"%s\"", call,
                       ebm_error_name(rc), rc, ebm_error_name(code), code,
                       msg ? msg : "(null)");
    }
    if (s->src != T_MSG_NONE) {
        if (msg == NULL) {
            t_soft_fail_at(file, line, "%s: the message is NULL", call);
        } else if (strcmp(msg, s->primed) == 0) {
            t_soft_fail_at(file, line, "%s left no message of its own (still \"%s\")", call, msg);
        } else {
            const char *needles[3] = {n1, n2, n3};
            for (int i = 0; i < 3; i++) {
                if (needles[i] != NULL && !t_contains(msg, needles[i])) {
                    t_soft_fail_at(file, line, "%s: message \"%s\" does not mention \"%s\"", call,
                                   msg, needles[i]);
                }
            }
        }
    }
    t_snap_same(s, file, line, call);
}

/* ---- fixtures ------------------------------------------------------------------------ */

ebm_model_t *g_rbm, *g_dbm, *g_grbm;
ebm_rng_t *g_rng;

static ebm_model_t *fixture_model(int64_t n_layers, const int64_t *sizes, int visible,
                                  int hidden, uint64_t seed)
{
    ebm_model_t *m = t_model(n_layers, sizes, visible, hidden);
    t_random_params(m, seed, 1.0);
    return m;
}

ebm_model_t *t_new_rbm(void)
{
    static const int64_t sizes[] = {4, 3};
    return fixture_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, 11);
}

ebm_model_t *t_new_dbm(void)
{
    static const int64_t sizes[] = {3, 3, 2};
    return fixture_model(3, sizes, EBM_UNITS_SPIN, EBM_UNITS_SPIN, 22);
}

ebm_model_t *t_new_grbm(void)
{
    static const int64_t sizes[] = {3, 2};
    return fixture_model(2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY, 33);
}

/* A started stream with a spare normal: a failed call that took a sequence
 * number would show in the state. */
ebm_rng_t *t_fresh_rng(void)
{
    ebm_rng_t *r = t_rng_started(42, 7, 1);
    ck_assert_ptr_nonnull(r);
    return r;
}

void t_soft_setup(void) { t_soft_reset(); }

void t_fixture_setup(void)
{
    t_soft_reset();
    g_rbm = t_new_rbm();
    g_dbm = t_new_dbm();
    g_grbm = t_new_grbm();
    g_rng = t_fresh_rng();
}

void t_fixture_teardown(void)
{
    ebm_model_destroy(g_rbm);
    ebm_model_destroy(g_dbm);
    ebm_model_destroy(g_grbm);
    ebm_rng_destroy(g_rng);
    g_rbm = g_dbm = g_grbm = NULL;
    g_rng = NULL;
}

/* ---- the runner ---------------------------------------------------------------------- */

/* The number of worker processes: EBM_TEST_JOBS, else the online CPUs (at
 * most 8). */
static int test_jobs(void)
{
    const char *s = getenv("EBM_TEST_JOBS");
    long n = s != NULL && *s != '\0' ? strtol(s, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

/* Whether the environment asks Check for a selection or a log file, which
 * the runner leaves to Check itself (one process, srunner_run_all). */
static int check_env_set(void)
{
    static const char *const vars[] = {"CK_RUN_SUITE", "CK_RUN_CASE", "CK_INCLUDE_TAGS",
                                       "CK_LOG_FILE_NAME", "CK_XML_LOG_FILE_NAME",
                                       "CK_TAP_LOG_FILE_NAME"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        if (getenv(vars[i]) != NULL) {
            return 1;
        }
    }
    return 0;
}

/* What a worker reports to the parent when its queue is empty. */
typedef struct {
    int run, failed, errors;
} totals;

/* A worker: takes unit numbers from the queue (2 bytes each; a pipe read of
 * at most PIPE_BUF bytes is atomic, so no unit runs twice) until it is
 * empty, runs each unit's test case, prints each failure as Check does
 * (file:line:F or E:test case: message) and writes its totals to out. */
static void worker(SRunner *sr, int queue, int out)
{
    uint16_t u;
    while (read(queue, &u, sizeof u) == (ssize_t)sizeof u) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        srunner_run(sr, g_units[u].suite, g_units[u].tcase, CK_SILENT);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        T_VLOG("check_ebm: %s:%s %.2f s\n", g_units[u].suite, g_units[u].tcase,
               (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    }
    TestResult **failures = srunner_failures(sr);
    totals t = {srunner_ntests_run(sr), 0, 0};
    for (int i = 0; i < srunner_ntests_failed(sr); i++) {
        const int error = tr_rtype(failures[i]) == CK_ERROR;
        t.errors += error;
        t.failed += !error;
        printf("%s:%d:%c:%s: %s\n", tr_lfile(failures[i]), tr_lno(failures[i]), error ? 'E' : 'F',
               tr_tcname(failures[i]), tr_msg(failures[i]));
    }
    free(failures);
    fflush(stdout);
    const ssize_t w = write(out, &t, sizeof t);
    _exit(w == (ssize_t)sizeof t ? EXIT_SUCCESS : EXIT_FAILURE);
}

/* The test cases of sr run in `jobs` worker processes, each taking the next
 * unit from a shared queue, in the suites' order; then Check's summary line
 * for all of them. Returns the count of failed tests (a worker that did not
 * report, or exited with a failure, e.g. valgrind's error exit code, counts
 * as one). */
static int run_parallel(SRunner *sr, int jobs)
{
    int queue[2], results[2];
    if (pipe(queue) != 0 || pipe(results) != 0) {
        perror("check_ebm: pipe");
        return 1;
    }
    uint16_t units[MAX_UNITS];
    for (int i = 0; i < g_n_units; i++) {
        units[i] = (uint16_t)i;
    }
    /* 2 KiB at most: within a pipe's buffer, so this write does not block. */
    const size_t bytes = (size_t)g_n_units * sizeof units[0];
    if (write(queue[1], units, bytes) != (ssize_t)bytes) {
        perror("check_ebm: queue");
        return 1;
    }
    close(queue[1]);
    printf("Running %d test cases in %d worker processes (EBM_TEST_JOBS)\n", g_n_units, jobs);
    /* Whole lines, flushed before the forks: the workers share stdout. */
    fflush(stdout);
    setvbuf(stdout, NULL, _IOLBF, 0);
    pid_t pids[8];
    int started = 0;
    for (; started < jobs; started++) {
        pids[started] = fork();
        if (pids[started] == 0) {
            close(results[0]);
            worker(sr, queue[0], results[1]);
        }
        if (pids[started] < 0) {
            perror("check_ebm: fork");
            break;
        }
    }
    close(queue[0]);
    close(results[1]);
    totals sum = {0, 0, 0}, t;
    int reports = 0, lost = 0;
    while (read(results[0], &t, sizeof t) == (ssize_t)sizeof t) {
        sum.run += t.run;
        sum.failed += t.failed;
        sum.errors += t.errors;
        reports++;
    }
    close(results[0]);
    for (int i = 0; i < started; i++) {
        int status = 0;
        if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            printf("check_ebm: worker %d (pid %ld) failed (%s %d)\n", i, (long)pids[i],
                   WIFSIGNALED(status) ? "signal" : "exit status",
                   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
            lost++;
        }
    }
    if (started == 0 || reports < started) {
        lost += started == 0 ? 1 : 0;
        printf("check_ebm: %d of %d workers reported (the test cases a failed worker had left did "
               "not run)\n", reports, started);
    }
    sum.errors += lost; /* counted as errors in the summary line */
    const int bad = sum.failed + sum.errors;
    printf("%d%%: Checks: %d, Failures: %d, Errors: %d\n",
           sum.run > 0 ? (int)(100.0 * (sum.run - bad) / sum.run) : 0, sum.run, sum.failed,
           sum.errors);
    return bad;
}

int main(void)
{
    /* One suite per public area, in the order of include/ebm.h, then the
     * cross-cutting classes (threads, faults, allocation failures). */
    Suite *(*const suites[])(void) = {
        ebm_rng_suite,       ebm_simd_suite,        ebm_model_suite,    ebm_centring_suite, ebm_potts_suite, ebm_drelu_suite,
        ebm_io_suite,
        ebm_energy_suite,    ebm_conditional_suite, ebm_search_suite,   ebm_evaluation_suite,
        ebm_sampler_suite,   ebm_coupling_suite,    ebm_langevin_suite, ebm_tempering_suite,
        ebm_global_suite,
        ebm_estimator_suite, ebm_options_suite,
        ebm_threads_suite,   ebm_faults_suite,      ebm_alloc_suite,
    };
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        srunner_add_suite(sr, suites[i]());
    }
    /* The test cases run in worker processes (EBM_TEST_JOBS, default the
     * CPUs), unless Check is asked for a selection or a log. */
    const int jobs = test_jobs();
    int failed;
    if (jobs > 1 && g_n_units <= MAX_UNITS && !check_env_set()) {
        failed = run_parallel(sr, jobs);
    } else {
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
    }
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
