/* Bad input (TESTING.md, class 4): every public function of ebm.h, each class
 * of bad input that applies to it. Each failing call must
 *  - return its documented code,
 *  - leave a message of its own (ebm_model_errmsg for model calls,
 *    ebm_rng_errmsg for rng calls, errbuf for create/load) that names the
 *    offending argument or value,
 *  - change nothing the caller can see: the model's parameters, the rng
 *    state, chain states, output buffers pre-filled with a sentinel, and
 *    gradients are checksummed before and after.
 * Checks are "soft": every broken promise of a test is printed to stderr
 * (check_badinput.c:LINE: ...) and the test fails at its end, so that one run
 * lists every defect instead of the first one. */
#include "tests.h"

#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- soft checks -------------------------------------------------------- */

#if defined(__GNUC__)
#define T_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define T_PRINTF(a, b)
#endif

static int g_nfail;
static char g_first[1024];
static const char *g_ctx = ""; /* e.g. the function a table-driven loop is on */

static void soft_fail(int line, const char *fmt, ...) T_PRINTF(2, 3);
static void soft_fail(int line, const char *fmt, ...)
{
    char text[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "check_badinput.c:%d: %s%s%s\n", line, g_ctx, g_ctx[0] ? ": " : "", text);
    if (g_nfail++ == 0) {
        snprintf(g_first, sizeof g_first, "line %d: %s%s%s", line, g_ctx, g_ctx[0] ? ": " : "",
                 text);
    }
}

#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            soft_fail(__LINE__, __VA_ARGS__);                                                   \
        }                                                                                       \
    } while (0)

#define FINISH()                                                                                \
    ck_assert_msg(g_nfail == 0, "%d bad-input check(s) failed (all listed on stderr); first: %s", \
                  g_nfail, g_first)


/* ---- snapshots: what a failed call must leave alone ---------------------- */

enum { MSG_NONE, MSG_MODEL, MSG_RNG };

#define MAX_REGIONS 8

typedef struct snap {
    const ebm_model_t *m; /* parameters checksummed; message source if src == MSG_MODEL */
    ebm_rng_t *r;         /* state checksummed; message source if src == MSG_RNG */
    int src;
    int n;
    const char *name[MAX_REGIONS];
    const void *p[MAX_REGIONS];
    size_t len[MAX_REGIONS];
    uint64_t h[MAX_REGIONS];
    uint64_t hm, hr;
    char primed[600];
} snap;

static void snap_init(snap *s, int src, const ebm_model_t *m, ebm_rng_t *r)
{
    memset(s, 0, sizeof *s);
    s->src = src;
    s->m = m;
    s->r = r;
}

static void track(snap *s, const char *name, const void *p, size_t len)
{
    ck_assert_int_lt(s->n, MAX_REGIONS);
    s->name[s->n] = name;
    s->p[s->n] = p;
    s->len[s->n] = len;
    s->n++;
}

static uint64_t model_hash(const ebm_model_t *m)
{
    int64_t np = ebm_model_param_count(m);
    ck_assert_int_gt(np, 0);
    float *p = malloc((size_t)np * sizeof *p);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ebm_model_get_params(m, p), EBM_OK);
    int64_t shape[3] = {ebm_model_num_layers(m), ebm_model_state_width(m), np};
    uint64_t h = t_checksum(p, (size_t)np * sizeof *p) ^ (3 * t_checksum(shape, sizeof shape));
    free(p);
    return h;
}

static uint64_t rng_hash(const ebm_rng_t *r)
{
    uint64_t st[EBM_RNG_STATE_WORDS];
    ck_assert_int_eq(ebm_rng_get_state(r, st), EBM_OK);
    return t_checksum(st, sizeof st);
}

static const char *snap_msg(const snap *s)
{
    if (s->src == MSG_MODEL) {
        return ebm_model_errmsg(s->m);
    }
    if (s->src == MSG_RNG) {
        return ebm_rng_errmsg(s->r);
    }
    return "";
}

/* Leave a known message first (so that the call under test must replace it),
 * then checksum everything. */
static void take(snap *s)
{
    if (s->src == MSG_MODEL) {
        (void)ebm_model_param_block(s->m, 12345, 0, NULL, NULL, NULL);
    } else if (s->src == MSG_RNG) {
        (void)ebm_rng_uniform(s->r, -12345, NULL);
    }
    const char *msg = snap_msg(s);
    snprintf(s->primed, sizeof s->primed, "%s", msg != NULL ? msg : "");
    if (s->m != NULL) {
        s->hm = model_hash(s->m);
    }
    if (s->r != NULL) {
        s->hr = rng_hash(s->r);
    }
    for (int i = 0; i < s->n; i++) {
        s->h[i] = t_checksum(s->p[i], s->len[i]);
    }
}

static void same(const snap *s, int line, const char *call)
{
    if (s->m != NULL && model_hash(s->m) != s->hm) {
        soft_fail(line, "%s changed the model's parameters", call);
    }
    if (s->r != NULL && rng_hash(s->r) != s->hr) {
        soft_fail(line, "%s changed the rng state", call);
    }
    for (int i = 0; i < s->n; i++) {
        if (t_checksum(s->p[i], s->len[i]) != s->h[i]) {
            soft_fail(line, "%s changed %s", call, s->name[i]);
        }
    }
}

static void verify(const snap *s, int line, const char *call, int rc, int code, const char *n1,
                   const char *n2, const char *n3)
{
    const char *msg = snap_msg(s);
    if (rc != code) {
        soft_fail(line, "%s returned %s (%d), expected %s (%d); message \"%s\"", call,
                  ebm_error_name(rc), rc, ebm_error_name(code), code, msg ? msg : "(null)");
    }
    if (s->src != MSG_NONE) {
        if (msg == NULL) {
            soft_fail(line, "%s: the message is NULL", call);
        } else if (strcmp(msg, s->primed) == 0) {
            soft_fail(line, "%s left no message of its own (still \"%s\")", call, msg);
        } else {
            const char *needles[3] = {n1, n2, n3};
            for (int i = 0; i < 3; i++) {
                if (needles[i] != NULL && !t_contains(msg, needles[i])) {
                    soft_fail(line, "%s: message \"%s\" does not mention \"%s\"", call, msg,
                              needles[i]);
                }
            }
        }
    }
    same(s, line, call);
}

/* The call must fail with code, its message must mention n1 and n2 (NULL:
 * no requirement beyond a new message) and nothing tracked may change. */
#define FAILS3(s, code, n1, n2, n3, call)                                                       \
    do {                                                                                        \
        take(s);                                                                                \
        int rc_ = (int)(call);                                                                  \
        verify((s), __LINE__, #call, rc_, (code), (n1), (n2), (n3));                            \
    } while (0)
#define FAILS(s, code, n1, n2, call) FAILS3(s, code, n1, n2, NULL, call)

/* A call that must succeed (a non-negative count counts as success when
 * want is 0 and the call returns counts: use OK_RC for an exact value). */
#define OK_RC(m, want, call)                                                                    \
    do {                                                                                        \
        int rc_ = (int)(call);                                                                  \
        if (rc_ != (want)) {                                                                    \
            soft_fail(__LINE__, "%s returned %s (%d), expected %d; message \"%s\"", #call,      \
                      ebm_error_name(rc_), rc_, (want),                                         \
                      (m) != NULL ? ebm_model_errmsg(m) : "");                                  \
        }                                                                                       \
    } while (0)
#define OK(m, call) OK_RC(m, EBM_OK, call)

/* The call must succeed and change nothing tracked (n = 0). */
#define NOOP(s, call)                                                                           \
    do {                                                                                        \
        take(s);                                                                                \
        int rc_ = (int)(call);                                                                  \
        if (rc_ != EBM_OK) {                                                                    \
            soft_fail(__LINE__, "%s returned %s (%d), expected EBM_OK; message \"%s\"", #call,  \
                      ebm_error_name(rc_), rc_, snap_msg(s));                                   \
        }                                                                                       \
        same((s), __LINE__, #call);                                                             \
    } while (0)

/* ---- fixtures: a binary RBM 4x3, a spin DBM 3-3-2, a GRBM 3x2 ------------ */

static ebm_model_t *g_rbm, *g_dbm, *g_grbm;
static ebm_rng_t *g_rng;

static ebm_rng_t *fresh_rng(void)
{
    ebm_rng_t *r = NULL;
    ck_assert_int_eq(ebm_rng_create(&r, 42, 7), EBM_OK);
    float z;
    /* A started stream with a spare normal: a failed call that took a
     * sequence number would show in the state. */
    ck_assert_int_eq(ebm_rng_normal(r, 1, &z), EBM_OK);
    return r;
}

static ebm_model_t *new_rbm(void)
{
    const int64_t sizes[] = {4, 3};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    t_random_params(m, 11, 1.0);
    return m;
}

static ebm_model_t *new_dbm(void)
{
    const int64_t sizes[] = {3, 3, 2};
    ebm_model_t *m = t_model(3, sizes, EBM_UNITS_SPIN, EBM_UNITS_SPIN);
    t_random_params(m, 22, 1.0);
    return m;
}

static ebm_model_t *new_grbm(void)
{
    const int64_t sizes[] = {3, 2};
    ebm_model_t *m = t_model(2, sizes, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    t_random_params(m, 33, 1.0);
    return m;
}

static void setup(void)
{
    g_nfail = 0;
    g_first[0] = '\0';
    g_ctx = "";
    g_rbm = new_rbm();
    g_dbm = new_dbm();
    g_grbm = new_grbm();
    g_rng = fresh_rng();
}

static void teardown(void)
{
    ebm_model_destroy(g_rbm);
    ebm_model_destroy(g_dbm);
    ebm_model_destroy(g_grbm);
    ebm_rng_destroy(g_rng);
    g_rbm = g_dbm = g_grbm = NULL;
    g_rng = NULL;
}


static void sentinel(void *p, size_t n) { memset(p, 0xA5, n); }

/* ======================================================================== */
/* Version, codes                                                            */
/* ======================================================================== */

START_TEST(versions_and_codes)
{
    const char *v = ebm_version_string();
    CHECK(v != NULL && strcmp(v, EBM_VERSION_STRING) == 0, "ebm_version_string() is \"%s\"",
          v ? v : "(null)");
    CHECK(ebm_version_number() == EBM_VERSION_NUMBER, "ebm_version_number() is %d",
          ebm_version_number());
    CHECK(ebm_abi_version() == EBM_ABI_VERSION, "ebm_abi_version() is %d", ebm_abi_version());
    CHECK(ebm_rng_state_words() == EBM_RNG_STATE_WORDS, "ebm_rng_state_words() is %d",
          ebm_rng_state_words());
    static const char *const names[] = {"EBM_OK",     "EBM_ENULL",   "EBM_ESHAPE",
                                        "EBM_EVALUE", "EBM_ENOMEM",  "EBM_EIO",
                                        "EBM_EFORMAT", "EBM_EUNSUPPORTED", "EBM_ELIMIT",
                                        "EBM_EINTERNAL"};
    for (int c = 0; c >= -9; c--) {
        const char *n = ebm_error_name(c), *t = ebm_strerror(c);
        CHECK(n != NULL && strcmp(n, names[-c]) == 0, "ebm_error_name(%d) is \"%s\"", c,
              n ? n : "(null)");
        CHECK(t != NULL && t[0] != '\0', "ebm_strerror(%d) is empty or NULL", c);
        for (int d = c + 1; d <= 0 && t != NULL; d++) {
            CHECK(strcmp(t, ebm_strerror(d)) != 0, "ebm_strerror(%d) == ebm_strerror(%d)", c, d);
        }
    }
    /* Any int: never NULL, never empty, never the name of a known code. */
    const int odd[] = {INT_MIN, INT_MIN + 1, -1000000, -100, -10, 1, 2, 9, 100, INT_MAX};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        const char *n = ebm_error_name(odd[i]), *t = ebm_strerror(odd[i]);
        CHECK(t != NULL && t[0] != '\0', "ebm_strerror(%d) is empty or NULL", odd[i]);
        CHECK(n != NULL && n[0] != '\0', "ebm_error_name(%d) is empty or NULL", odd[i]);
        for (int k = 0; k < 10 && n != NULL; k++) {
            CHECK(strcmp(n, names[k]) != 0, "ebm_error_name(%d) is \"%s\"", odd[i], n);
        }
    }
    for (int c = -2000; c <= 2000; c++) {
        CHECK(ebm_strerror(c) != NULL && ebm_error_name(c) != NULL, "NULL text for code %d", c);
    }
    FINISH();
}
END_TEST

/* ======================================================================== */
/* NULL handles                                                             */
/* ======================================================================== */

START_TEST(null_model_handle)
{
    /* Every model call with m = NULL and otherwise valid arguments. */
    float x[3 * 7], a[3 * 4], grad[64], p[64], mu[3 * 7];
    double e[3], coef[3] = {1.0, 1.0, 1.0}, lz = 123.0;
    uint8_t clamp[7] = {0};
    int64_t sweeps[3], off = -5, rows = -5, cols = -5;
    unsigned char buf[4096];
    size_t size = 77;
    char msg[32];
    t_fill_states(g_rbm, 3, x, 7, 1);
    t_fill_means(g_rbm, 3, mu, 7, 2);
    sentinel(a, sizeof a);
    sentinel(e, sizeof e);
    sentinel(sweeps, sizeof sweeps);
    sentinel(buf, sizeof buf);
    sentinel(msg, sizeof msg);
    for (int i = 0; i < 64; i++) {
        grad[i] = 0.25f * (float)i;
        p[i] = 0.0f;
    }
    snap s;
    snap_init(&s, MSG_NONE, NULL, g_rng);
    track(&s, "x", x, sizeof x);
    track(&s, "the output buffer", a, sizeof a);
    track(&s, "energy", e, sizeof e);
    track(&s, "grad", grad, sizeof grad);
    track(&s, "mu", mu, sizeof mu);
    track(&s, "sweeps", sweeps, sizeof sweeps);
    track(&s, "buf", buf, sizeof buf);
    track(&s, "msg", msg, sizeof msg);
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_param_block(NULL, EBM_PARAM_WEIGHT, 1, &off, &rows, &cols));
    CHECK(off == -5 && rows == -5 && cols == -5, "param_block(NULL) wrote its outputs");
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_get_params(NULL, p));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_set_params(NULL, p));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_axpy_params(NULL, 1.0f, p));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_init(NULL, g_rng, EBM_INIT_GAUSSIAN, 1.0));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_save_buffer(NULL, buf, sizeof buf, &size));
    CHECK(size == 77, "save_buffer(NULL) wrote *size");
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_errmsg_copy(NULL, msg, sizeof msg));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_energy(NULL, 3, x, 7, e));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_free_energy(NULL, 2, 3, x, 7, e));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_energy_grad(NULL, 0, 3, x, 7, coef, grad));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_energy_grad_input(NULL, 0, 1, 3, x, 7, a, 3));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_layer_input(NULL, 1, 3, x, 7, a, 3));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_layer_mean(NULL, 1, 3, x, 7, a, 3));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_layer_logprob(NULL, 1, 3, x, 7, x + 4, 7, e));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_layer_argmin(NULL, 1, 3, x, 7));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_layer_sample(NULL, 1, g_rng, 3, x, 7));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_random_state(NULL, g_rng, 3, x, 7, clamp, 0));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_local_search(NULL, g_rng, 3, x, 7, NULL, 0, 10, sweeps));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_mean_field(NULL, 3, mu, 7, NULL, 0, 10, 1e-6));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_log_partition_exact(NULL, &lz));
    CHECK(lz == 123.0, "log_partition_exact(NULL) wrote log_z");
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_log_likelihood(NULL, 1.0, 3, x, 7, e));

    /* save(NULL, path) creates no file. */
    char dir[] = "/tmp/ebm_badinput_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/m.ebm", dir);
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_model_save(NULL, path));
    CHECK(access(path, F_OK) != 0, "ebm_model_save(NULL, path) created %s", path);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int entries = 0;
    for (struct dirent *de = readdir(d); de != NULL; de = readdir(d)) {
        entries += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    }
    closedir(d);
    CHECK(entries == 0, "ebm_model_save(NULL, path) left %d file(s) in %s", entries, dir);
    (void)unlink(path);
    (void)rmdir(dir);

    /* Accessors: -1; destroy: no-op; messages: never NULL. */
    CHECK(ebm_model_num_layers(NULL) == -1, "num_layers(NULL) is not -1");
    CHECK(ebm_model_layer_size(NULL, 0) == -1, "layer_size(NULL, 0) is not -1");
    CHECK(ebm_model_layer_offset(NULL, 0) == -1, "layer_offset(NULL, 0) is not -1");
    CHECK(ebm_model_layer_units(NULL, 0) == -1, "layer_units(NULL, 0) is not -1");
    CHECK(ebm_model_state_width(NULL) == -1, "state_width(NULL) is not -1");
    CHECK(ebm_model_param_count(NULL) == -1, "param_count(NULL) is not -1");
    CHECK(ebm_model_save_size(NULL) == -1, "save_size(NULL) is not -1");
    CHECK(ebm_model_errmsg(NULL) != NULL, "ebm_model_errmsg(NULL) is NULL");
    ebm_model_destroy(NULL);
    FINISH();
}
END_TEST

/* ======================================================================== */
/* Random numbers                                                           */
/* ======================================================================== */

START_TEST(rng_bad_input)
{
    ebm_rng_t *r = g_rng, *twin = fresh_rng();
    uint64_t st[EBM_RNG_STATE_WORDS], good[EBM_RNG_STATE_WORDS], bad[EBM_RNG_STATE_WORDS];
    float buf[16];
    char hex[32];
    sentinel(st, sizeof st);
    sentinel(buf, sizeof buf);
    ck_assert_int_eq(ebm_rng_get_state(r, good), EBM_OK);

    /* NULL handles and NULL out pointers: no generator to hold a message. */
    snap s;
    snap_init(&s, MSG_NONE, NULL, r);
    track(&s, "state", st, sizeof st);
    track(&s, "out", buf, sizeof buf);
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_rng_create(NULL, 1, 2));
    ebm_rng_t *child = NULL;
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_rng_derive(&child, NULL, 3));
    CHECK(child == NULL, "ebm_rng_derive(&child, NULL, 3) wrote child");
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_rng_get_state(NULL, st));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_rng_set_state(NULL, good));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_rng_uniform(NULL, 4, buf));
    FAILS(&s, EBM_ENULL, NULL, NULL, ebm_rng_normal(NULL, 4, buf));
    CHECK(ebm_rng_errmsg(NULL) != NULL, "ebm_rng_errmsg(NULL) is NULL");
    ebm_rng_destroy(NULL);

    /* Calls on r: message in ebm_rng_errmsg(r), r unchanged. */
    s.src = MSG_RNG;
    FAILS(&s, EBM_ENULL, "state", NULL, ebm_rng_set_state(r, NULL));
    memcpy(bad, good, sizeof bad);
    bad[5] ^= 1; /* a wrong tag */
    snprintf(hex, sizeof hex, "%016" PRIx64, bad[5]);
    FAILS(&s, EBM_EVALUE, "state", hex, ebm_rng_set_state(r, bad));
    memset(bad, 0, sizeof bad); /* all zero: no tag at all */
    FAILS(&s, EBM_EVALUE, "state", NULL, ebm_rng_set_state(r, bad));
    memcpy(bad, good, sizeof bad);
    bad[3] = 2; /* has_spare is not 0 or 1 */
    FAILS(&s, EBM_EVALUE, "state[3]", "2", ebm_rng_set_state(r, bad));
    memcpy(bad, good, sizeof bad);
    double nan_spare = NAN;
    bad[3] = 1;
    memcpy(&bad[4], &nan_spare, sizeof nan_spare);
    FAILS(&s, EBM_EVALUE, "state[4]", NULL, ebm_rng_set_state(r, bad));
    memcpy(bad, good, sizeof bad);
    bad[3] = 0;
    bad[4] = 0x3ff0000000000000ULL; /* a spare value without has_spare: never written */
    FAILS(&s, EBM_EVALUE, "state[4]", NULL, ebm_rng_set_state(r, bad));

    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_rng_uniform(r, -1, buf));
    FAILS(&s, EBM_ESHAPE, "n", "-9223372036854775808", ebm_rng_uniform(r, INT64_MIN, buf));
    FAILS(&s, EBM_ESHAPE, "n", "-3", ebm_rng_normal(r, -3, buf));
    FAILS(&s, EBM_ENULL, "out", NULL, ebm_rng_uniform(r, 5, NULL));
    FAILS(&s, EBM_ENULL, "out", NULL, ebm_rng_normal(r, 5, NULL));
    /* n = 0 with NULL is a valid empty fill: it consumes nothing. */
    NOOP(&s, ebm_rng_uniform(r, 0, NULL));
    NOOP(&s, ebm_rng_normal(r, 0, NULL));

    /* Not poisoned: r still draws exactly what its twin draws. */
    float x1[5], x2[5];
    ck_assert_int_eq(ebm_rng_normal(r, 5, x1), EBM_OK);
    ck_assert_int_eq(ebm_rng_normal(twin, 5, x2), EBM_OK);
    CHECK(memcmp(x1, x2, sizeof x1) == 0, "normals after failed calls differ from the twin's");
    ck_assert_int_eq(ebm_rng_uniform(r, 5, x1), EBM_OK);
    ck_assert_int_eq(ebm_rng_uniform(twin, 5, x2), EBM_OK);
    CHECK(memcmp(x1, x2, sizeof x1) == 0, "uniforms after failed calls differ from the twin's");
    ck_assert_int_eq(ebm_rng_set_state(r, good), EBM_OK);
    CHECK(rng_hash(r) == t_checksum(good, sizeof good), "set_state(good) after failures");

    /* A fresh generator has the empty message. */
    ebm_rng_t *f = NULL;
    ck_assert_int_eq(ebm_rng_create(&f, 1, 1), EBM_OK);
    CHECK(ebm_rng_errmsg(f) != NULL && ebm_rng_errmsg(f)[0] == '\0',
          "a fresh generator's message is not \"\"");
    ebm_rng_destroy(f);
    ebm_rng_destroy(twin);
    FINISH();
}
END_TEST

/* get_state(r, NULL) and derive(NULL, r, i) are calls on a generator that
 * fail: the header promises a message in ebm_rng_errmsg(r) for every failure. */
START_TEST(rng_const_calls_leave_message)
{
    ebm_rng_t *r = g_rng;
    snap s;
    snap_init(&s, MSG_RNG, NULL, r);
    FAILS(&s, EBM_ENULL, "state", NULL, ebm_rng_get_state(r, NULL));
    FAILS(&s, EBM_ENULL, "out", NULL, ebm_rng_derive(NULL, r, 3));
    FINISH();
}
END_TEST

/* ======================================================================== */
/* Model creation, accessors, parameter blocks                              */
/* ======================================================================== */

/* create with errbuf: code, message in errbuf (NUL-terminated, within size),
 * no model handed out. */
static void create_fails(int line, int code, const char *n1, const char *n2, int64_t n_layers,
                         const int64_t *sizes, int vis, int hid)
{
    char eb[160];
    memset(eb, 'Z', sizeof eb);
    ebm_model_t *m = NULL;
    int rc = ebm_model_create(&m, n_layers, sizes, vis, hid, eb, 128);
    const char *msg = memchr(eb, '\0', 128) != NULL ? eb : "(not NUL-terminated)";
    if (rc != code) {
        soft_fail(line, "ebm_model_create(n_layers %lld, vis %d, hid %d) returned %s, expected %s: \"%s\"",
                  (long long)n_layers, vis, hid, ebm_error_name(rc), ebm_error_name(code), msg);
    }
    if (m != NULL) {
        soft_fail(line, "ebm_model_create failed but handed out a model");
        if (rc == EBM_OK) {
            ebm_model_destroy(m);
        }
    }
    if (memchr(eb, '\0', 128) == NULL) {
        soft_fail(line, "errbuf is not NUL-terminated within errbuf_size");
    } else if (eb[0] == '\0') {
        soft_fail(line, "errbuf is empty after a failed create");
    } else {
        if (n1 != NULL && !t_contains(eb, n1)) {
            soft_fail(line, "create: errbuf \"%s\" does not mention \"%s\"", eb, n1);
        }
        if (n2 != NULL && !t_contains(eb, n2)) {
            soft_fail(line, "create: errbuf \"%s\" does not mention \"%s\"", eb, n2);
        }
    }
    for (size_t i = 128; i < sizeof eb; i++) {
        if (eb[i] != 'Z') {
            soft_fail(line, "create wrote errbuf[%zu], past errbuf_size", i);
            break;
        }
    }
}

START_TEST(create_bad_input)
{
    const int64_t ok2[2] = {4, 3}, zero[2] = {4, 0}, neg[2] = {-3, 3};
    int64_t big[33];
    for (int i = 0; i < 33; i++) {
        big[i] = 2;
    }
    char eb[128];
    memset(eb, 'Z', sizeof eb);
    int rc = ebm_model_create(NULL, 2, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY, eb, sizeof eb);
    CHECK(rc == EBM_ENULL, "create(out NULL) returned %s", ebm_error_name(rc));
    CHECK(memchr(eb, '\0', sizeof eb) != NULL && t_contains(eb, "out"),
          "create(out NULL): errbuf does not mention \"out\"");
    create_fails(__LINE__, EBM_ENULL, "sizes", NULL, 2, NULL, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_ESHAPE, "n_layers", "1", 1, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_ESHAPE, "n_layers", "0", 0, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_ESHAPE, "n_layers", "-1", -1, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_ESHAPE, "n_layers", "33", 33, big, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_ESHAPE, "sizes[1]", "0", 2, zero, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_ESHAPE, "sizes[0]", "-3", 2, neg, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_EVALUE, "visible_units", "3", 2, ok2, 3, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_EVALUE, "visible_units", "-1", 2, ok2, -1, EBM_UNITS_BINARY);
    create_fails(__LINE__, EBM_EVALUE, "hidden_units", "2", 2, ok2, EBM_UNITS_BINARY,
                 EBM_UNITS_GAUSSIAN);
    create_fails(__LINE__, EBM_EVALUE, "hidden_units", "7", 2, ok2, EBM_UNITS_SPIN, 7);
    /* The state width must fit in a BLAS int. */
    const int64_t wide[2] = {2147483647, 2};
    create_fails(__LINE__, EBM_ELIMIT, "sizes", NULL, 2, wide, EBM_UNITS_BINARY, EBM_UNITS_BINARY);

    /* errbuf NULL or of size 0: the code alone; a short errbuf: truncated. */
    ebm_model_t *m = NULL;
    rc = ebm_model_create(&m, 1, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY, NULL, 100);
    CHECK(rc == EBM_ESHAPE && m == NULL, "create(errbuf NULL) returned %s", ebm_error_name(rc));
    memset(eb, 'Z', sizeof eb);
    rc = ebm_model_create(&m, 1, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY, eb, 0);
    CHECK(rc == EBM_ESHAPE, "create(errbuf_size 0) returned %s", ebm_error_name(rc));
    CHECK(eb[0] == 'Z', "create wrote errbuf of size 0");
    rc = ebm_model_create(&m, 1, ok2, EBM_UNITS_BINARY, EBM_UNITS_BINARY, eb, 6);
    CHECK(rc == EBM_ESHAPE, "create(errbuf_size 6) returned %s", ebm_error_name(rc));
    CHECK(memchr(eb, '\0', 6) != NULL && strlen(eb) == 5 && eb[6] == 'Z',
          "create: errbuf of size 6 not truncated to 5 characters");
    FINISH();
}
END_TEST

/* A model too large for memory: 65536 x 32768 weights are 2^31 floats plus
 * their double copy (24 GB). Every dimension fits a BLAS int, so the shape is
 * valid; created in a child under a 1 GB address-space limit, it must fail
 * cleanly with EBM_ENOMEM. (Skipped under ASan, whose shadow memory does not
 * run under an address-space limit.) */
#if defined(__SANITIZE_ADDRESS__)
#define EBM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EBM_TEST_ASAN 1
#endif
#endif
START_TEST(create_too_large_for_memory)
{
#ifndef EBM_TEST_ASAN
    const int64_t sizes[2] = {65536, 32768};
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct rlimit lim = {(rlim_t)1 << 30, (rlim_t)1 << 30};
        (void)setrlimit(RLIMIT_AS, &lim);
        /* No stdio here. */
        ebm_model_t *m = NULL;
        char err[256] = "";
        int rc = ebm_model_create(&m, 2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY, err, sizeof err);
        _exit(rc == EBM_ENOMEM && m == NULL && strstr(err, "memory") != NULL ? 0 : 1);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "creating a 65536 x 32768 model under a 1 GB limit did not fail with EBM_ENOMEM "
          "and a message (status %d)", status);
    FINISH();
#endif
}
END_TEST

START_TEST(accessors_bad_index)
{
    ebm_model_t *ms[3] = {g_rbm, g_dbm, g_grbm};
    for (int k = 0; k < 3; k++) {
        int64_t L1 = ebm_model_num_layers(ms[k]);
        const int64_t bad[] = {-1, L1, L1 + 1, INT64_MIN, INT64_MAX};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            CHECK(ebm_model_layer_size(ms[k], bad[i]) == -1, "model %d: layer_size(%lld) is %lld",
                  k, (long long)bad[i], (long long)ebm_model_layer_size(ms[k], bad[i]));
            CHECK(ebm_model_layer_offset(ms[k], bad[i]) == -1, "model %d: layer_offset(%lld)", k,
                  (long long)bad[i]);
            CHECK(ebm_model_layer_units(ms[k], bad[i]) == -1, "model %d: layer_units(%lld)", k,
                  (long long)bad[i]);
        }
    }
    FINISH();
}
END_TEST

START_TEST(param_block_bad_input)
{
    int64_t out3[3] = {-77, -77, -77};
    snap s;
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    track(&s, "offset/rows/cols", out3, sizeof out3);
    /* kind out of range */
    FAILS(&s, EBM_EVALUE, "kind", "3", ebm_model_param_block(g_rbm, 3, 0, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_EVALUE, "kind", "-1", ebm_model_param_block(g_rbm, -1, 1, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_EVALUE, "kind", "1000", ebm_model_param_block(g_rbm, 1000, 1, &out3[0], &out3[1], &out3[2]));
    /* layer index out of range: W_l for l = 1..L, b_l for l = 0..L */
    FAILS(&s, EBM_ESHAPE, "0", NULL, ebm_model_param_block(g_rbm, EBM_PARAM_WEIGHT, 0, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "2", NULL, ebm_model_param_block(g_rbm, EBM_PARAM_WEIGHT, 2, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_param_block(g_rbm, EBM_PARAM_WEIGHT, -1, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_param_block(g_rbm, EBM_PARAM_BIAS, -1, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "2", NULL, ebm_model_param_block(g_rbm, EBM_PARAM_BIAS, 2, &out3[0], &out3[1], &out3[2]));
    /* logvar of a binary or spin model */
    FAILS(&s, EBM_EUNSUPPORTED, "kind", NULL, ebm_model_param_block(g_rbm, EBM_PARAM_LOGVAR, 0, &out3[0], &out3[1], &out3[2]));
    snap_init(&s, MSG_MODEL, g_dbm, NULL);
    track(&s, "offset/rows/cols", out3, sizeof out3);
    FAILS(&s, EBM_EUNSUPPORTED, "kind", NULL, ebm_model_param_block(g_dbm, EBM_PARAM_LOGVAR, 0, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "3", NULL, ebm_model_param_block(g_dbm, EBM_PARAM_WEIGHT, 3, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "3", NULL, ebm_model_param_block(g_dbm, EBM_PARAM_BIAS, 3, &out3[0], &out3[1], &out3[2]));
    /* logvar of a GRBM: layer 0 only */
    snap_init(&s, MSG_MODEL, g_grbm, NULL);
    track(&s, "offset/rows/cols", out3, sizeof out3);
    FAILS(&s, EBM_ESHAPE, "1", NULL, ebm_model_param_block(g_grbm, EBM_PARAM_LOGVAR, 1, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_param_block(g_grbm, EBM_PARAM_LOGVAR, -1, &out3[0], &out3[1], &out3[2]));
    FAILS(&s, EBM_ESHAPE, "2", NULL, ebm_model_param_block(g_grbm, EBM_PARAM_WEIGHT, 2, &out3[0], &out3[1], &out3[2]));
    /* Valid: NULL outputs are allowed; the handle still works. */
    OK(g_grbm, ebm_model_param_block(g_grbm, EBM_PARAM_LOGVAR, 0, NULL, NULL, NULL));
    OK(g_grbm, ebm_model_param_block(g_grbm, EBM_PARAM_LOGVAR, 0, &out3[0], &out3[1], &out3[2]));
    CHECK(out3[0] == 11 && out3[1] == 1 && out3[2] == 3, "GRBM logvar block is %lld (%lld x %lld)",
          (long long)out3[0], (long long)out3[1], (long long)out3[2]);
    FINISH();
}
END_TEST

/* ======================================================================== */
/* Parameters                                                               */
/* ======================================================================== */

START_TEST(get_set_params_bad_input)
{
    float p[64];
    int64_t np = ebm_model_param_count(g_rbm); /* 19 */
    snap s;
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    FAILS(&s, EBM_ENULL, "out", NULL, ebm_model_get_params(g_rbm, NULL));
    FAILS(&s, EBM_ENULL, "in", NULL, ebm_model_set_params(g_rbm, NULL));
    ck_assert_int_eq(ebm_model_get_params(g_rbm, p), EBM_OK);
    track(&s, "in", p, (size_t)np * sizeof *p);
    p[5] = NAN; /* W_1[1,2] */
    FAILS(&s, EBM_EVALUE, "nan", "5", ebm_model_set_params(g_rbm, p));
    p[5] = 0.0f;
    p[18] = INFINITY; /* b_1[2] */
    FAILS(&s, EBM_EVALUE, "inf", "18", ebm_model_set_params(g_rbm, p));
    p[18] = 0.0f;
    p[0] = -INFINITY;
    FAILS(&s, EBM_EVALUE, "inf", "0", ebm_model_set_params(g_rbm, p));

    /* GRBM: log-variances (indices 11..13) within [-30, 30]. */
    float q[64];
    snap_init(&s, MSG_MODEL, g_grbm, NULL);
    ck_assert_int_eq(ebm_model_get_params(g_grbm, q), EBM_OK);
    track(&s, "in", q, 14 * sizeof *q);
    q[12] = 31.0f;
    FAILS(&s, EBM_EVALUE, "31", "12", ebm_model_set_params(g_grbm, q));
    q[12] = -30.5f;
    FAILS(&s, EBM_EVALUE, "-30.5", "12", ebm_model_set_params(g_grbm, q));
    q[12] = NAN;
    FAILS(&s, EBM_EVALUE, "nan", "12", ebm_model_set_params(g_grbm, q));
    q[12] = 0.0f;
    q[6] = INFINITY; /* the mean b_0[0] */
    FAILS(&s, EBM_EVALUE, "inf", "6", ebm_model_set_params(g_grbm, q));
    q[6] = 0.0f;
    /* The boundaries themselves are valid. */
    q[11] = 30.0f;
    q[13] = -30.0f;
    OK(g_grbm, ebm_model_set_params(g_grbm, q));
    FINISH();
}
END_TEST

START_TEST(axpy_params_bad_input)
{
    float g[64] = {0};
    int64_t np = ebm_model_param_count(g_rbm);
    snap s;
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    track(&s, "g", g, (size_t)np * sizeof *g);
    FAILS(&s, EBM_ENULL, "g", NULL, ebm_model_axpy_params(g_rbm, 1.0f, NULL));
    FAILS(&s, EBM_EVALUE, "alpha", "nan", ebm_model_axpy_params(g_rbm, NAN, g));
    FAILS(&s, EBM_EVALUE, "alpha", "inf", ebm_model_axpy_params(g_rbm, INFINITY, g));
    FAILS(&s, EBM_EVALUE, "alpha", "inf", ebm_model_axpy_params(g_rbm, -INFINITY, g));
    for (int i = 0; i < np; i++) {
        g[i] = 0.01f * (float)(i + 1);
    }
    g[3] = INFINITY;
    FAILS(&s, EBM_EVALUE, "g[3]", "inf", ebm_model_axpy_params(g_rbm, 0.5f, g));
    g[3] = 0.0f;
    g[7] = NAN;
    FAILS(&s, EBM_EVALUE, "g[7]", "nan", ebm_model_axpy_params(g_rbm, 0.5f, g));
    g[7] = 0.0f;
    /* Even alpha = 0 does not make a non-finite g acceptable. */
    g[np - 1] = NAN;
    FAILS(&s, EBM_EVALUE, "g[18]", "nan", ebm_model_axpy_params(g_rbm, 0.0f, g));
    g[np - 1] = 0.0f;
    /* Finite alpha and g, non-finite result. */
    g[0] = 1e10f;
    FAILS(&s, EBM_EVALUE, "inf", NULL, ebm_model_axpy_params(g_rbm, 1e30f, g));
    float p[64];
    ck_assert_int_eq(ebm_model_get_params(g_rbm, p), EBM_OK);
    p[2] = 3e38f;
    ck_assert_int_eq(ebm_model_set_params(g_rbm, p), EBM_OK);
    memset(g, 0, sizeof g);
    g[2] = 3e38f;
    FAILS(&s, EBM_EVALUE, "inf", NULL, ebm_model_axpy_params(g_rbm, 1.0f, g));

    /* GRBM: a finite step that would push a log-variance past +-30. */
    float gg[64] = {0};
    snap_init(&s, MSG_MODEL, g_grbm, NULL);
    track(&s, "g", gg, 14 * sizeof *gg);
    gg[11] = 40.0f;
    FAILS(&s, EBM_EVALUE, "g", NULL, ebm_model_axpy_params(g_grbm, 1.0f, gg));
    FAILS(&s, EBM_EVALUE, "g", NULL, ebm_model_axpy_params(g_grbm, -1.0f, gg));
    gg[11] = 0.0f;
    gg[13] = 1e6f;
    FAILS(&s, EBM_EVALUE, "g", NULL, ebm_model_axpy_params(g_grbm, 1e-4f, gg));
    /* A valid step still works after the failures. */
    float before[64], after[64];
    ck_assert_int_eq(ebm_model_get_params(g_grbm, before), EBM_OK);
    memset(gg, 0, sizeof gg);
    gg[0] = 1.0f;
    OK(g_grbm, ebm_model_axpy_params(g_grbm, 0.5f, gg));
    ck_assert_int_eq(ebm_model_get_params(g_grbm, after), EBM_OK);
    CHECK(after[0] == before[0] + 0.5f && memcmp(after + 1, before + 1, 13 * sizeof(float)) == 0,
          "axpy after failures did not apply the step");
    FINISH();
}
END_TEST

START_TEST(init_bad_input)
{
    ebm_model_t *ms[3] = {g_rbm, g_dbm, g_grbm};
    for (int k = 0; k < 3; k++) {
        ebm_model_t *m = ms[k];
        g_ctx = k == 0 ? "RBM" : (k == 1 ? "DBM" : "GRBM");
        snap s;
        snap_init(&s, MSG_MODEL, m, g_rng);
        FAILS(&s, EBM_ENULL, "rng", NULL, ebm_model_init(m, NULL, EBM_INIT_ORTHOGONAL, 1.0));
        FAILS(&s, EBM_EVALUE, "scheme", "7", ebm_model_init(m, g_rng, 7, 1.0));
        FAILS(&s, EBM_EVALUE, "scheme", "-1", ebm_model_init(m, g_rng, -1, 1.0));
        FAILS(&s, EBM_EVALUE, "scheme", "2", ebm_model_init(m, g_rng, 2, 1.0));
        FAILS(&s, EBM_EVALUE, "scale", "0", ebm_model_init(m, g_rng, EBM_INIT_ORTHOGONAL, 0.0));
        FAILS(&s, EBM_EVALUE, "scale", "0", ebm_model_init(m, g_rng, EBM_INIT_GAUSSIAN, -0.0));
        FAILS(&s, EBM_EVALUE, "scale", "-1", ebm_model_init(m, g_rng, EBM_INIT_GAUSSIAN, -1.0));
        FAILS(&s, EBM_EVALUE, "scale", "nan", ebm_model_init(m, g_rng, EBM_INIT_ORTHOGONAL, NAN));
        FAILS(&s, EBM_EVALUE, "scale", "inf", ebm_model_init(m, g_rng, EBM_INIT_GAUSSIAN, INFINITY));
    }
    g_ctx = "";
    /* Not poisoned: init after the failures equals init of a twin. */
    ebm_model_t *twin = new_dbm();
    ebm_rng_t *r2 = fresh_rng();
    OK(g_dbm, ebm_model_init(g_dbm, g_rng, EBM_INIT_ORTHOGONAL, 0.5));
    OK(twin, ebm_model_init(twin, r2, EBM_INIT_ORTHOGONAL, 0.5));
    CHECK(model_hash(g_dbm) == model_hash(twin), "init after failed inits differs from a twin's");
    CHECK(rng_hash(g_rng) == rng_hash(r2), "rng after failed inits differs from a twin's");
    ebm_model_destroy(twin);
    ebm_rng_destroy(r2);
    FINISH();
}
END_TEST

/* ======================================================================== */
/* Files and buffers                                                        */
/* ======================================================================== */

static int count_entries(const char *dir)
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

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(p, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(save_bad_input)
{
    char dir[] = "/tmp/ebm_badinput_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char sub[160], missing[160], file[160], under_file[200];
    snprintf(sub, sizeof sub, "%s/adir", dir);
    snprintf(missing, sizeof missing, "%s/no/such/dir/m.ebm", dir);
    snprintf(file, sizeof file, "%s/plain", dir);
    snprintf(under_file, sizeof under_file, "%s/m.ebm", file);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    write_file(file, "not a directory", 15);

    snap s;
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    FAILS(&s, EBM_ENULL, "path", NULL, ebm_model_save(g_rbm, NULL));
    FAILS(&s, EBM_EIO, missing, NULL, ebm_model_save(g_rbm, missing));
    FAILS(&s, EBM_EIO, NULL, NULL, ebm_model_save(g_rbm, ""));
    /* path is a directory: the rename fails; the directory and its parent
     * are left as they were (no temporary file behind). */
    FAILS(&s, EBM_EIO, sub, NULL, ebm_model_save(g_rbm, sub));
    struct stat st;
    CHECK(stat(sub, &st) == 0 && S_ISDIR(st.st_mode) && count_entries(sub) == 0,
          "save over a directory changed it");
    CHECK(count_entries(dir) == 2, "a failed save left %d entries in %s (want 2)",
          count_entries(dir), dir);
    /* A path under a regular file. */
    FAILS(&s, EBM_EIO, under_file, NULL, ebm_model_save(g_rbm, under_file));
    CHECK(stat(file, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 15,
          "a failed save changed %s", file);
    CHECK(count_entries(dir) == 2, "a failed save left %d entries in %s (want 2)",
          count_entries(dir), dir);
    (void)unlink(file);
    (void)rmdir(sub);
    (void)rmdir(dir);
    FINISH();
}
END_TEST

/* A load that must fail: code, errbuf message, *out NULL. */
static void load_fails(int line, int rc, ebm_model_t *out, int code, const char *eb,
                       const char *n1)
{
    if (rc != code) {
        soft_fail(line, "load returned %s, expected %s: \"%s\"", ebm_error_name(rc),
                  ebm_error_name(code), eb);
    }
    if (out != NULL) {
        soft_fail(line, "a failed load left *out non-NULL");
        if (rc == EBM_OK) {
            ebm_model_destroy(out);
        }
    }
    if (eb[0] == '\0') {
        soft_fail(line, "a failed load left errbuf empty");
    } else if (n1 != NULL && !t_contains(eb, n1)) {
        soft_fail(line, "load: errbuf \"%s\" does not mention \"%s\"", eb, n1);
    }
}

static char g_dummy_model; /* a non-NULL *out to see that failures set NULL */
#define DUMMY ((ebm_model_t *)(void *)&g_dummy_model)

START_TEST(load_bad_input)
{
    char dir[] = "/tmp/ebm_badinput_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char missing[160], garbage[160], empty[160];
    snprintf(missing, sizeof missing, "%s/missing.ebm", dir);
    snprintf(garbage, sizeof garbage, "%s/garbage.ebm", dir);
    snprintf(empty, sizeof empty, "%s/empty.ebm", dir);
    char junk[100];
    memset(junk, 'x', sizeof junk);
    write_file(garbage, junk, sizeof junk);
    write_file(empty, junk, 0);

    char eb[256];
    ebm_model_t *out;
    int rc;
    eb[0] = '\0';
    rc = ebm_model_load(NULL, garbage, eb, sizeof eb);
    load_fails(__LINE__, rc, NULL, EBM_ENULL, eb, "out");
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load(&out, NULL, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_ENULL, eb, "path");
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load(&out, missing, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EIO, eb, missing);
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load(&out, "", eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EIO, eb, NULL);
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load(&out, dir, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EIO, eb, dir);
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load(&out, garbage, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EFORMAT, eb, NULL);
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load(&out, empty, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EFORMAT, eb, NULL);
    /* errbuf NULL, size 0, short */
    out = DUMMY;
    rc = ebm_model_load(&out, missing, NULL, 50);
    CHECK(rc == EBM_EIO && out == NULL, "load(errbuf NULL) returned %s", ebm_error_name(rc));
    memset(eb, 'Z', sizeof eb);
    rc = ebm_model_load(&out, missing, eb, 0);
    CHECK(rc == EBM_EIO && eb[0] == 'Z', "load(errbuf_size 0) returned %s or wrote errbuf",
          ebm_error_name(rc));
    rc = ebm_model_load(&out, missing, eb, 8);
    CHECK(rc == EBM_EIO && memchr(eb, '\0', 8) != NULL && strlen(eb) == 7 && eb[8] == 'Z',
          "load(errbuf_size 8) did not truncate to 7 characters");
    (void)unlink(garbage);
    (void)unlink(empty);
    (void)rmdir(dir);
    FINISH();
}
END_TEST

START_TEST(buffer_bad_input)
{
    int64_t need = ebm_model_save_size(g_rbm);
    ck_assert_int_gt(need, 0);
    size_t cap = (size_t)need + 16;
    unsigned char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    sentinel(buf, cap);
    size_t size = 12345;
    char want[32];
    snprintf(want, sizeof want, "%lld", (long long)(need - 1));
    snap s;
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    track(&s, "buf", buf, cap);
    track(&s, "*size", &size, sizeof size);
    FAILS(&s, EBM_ENULL, "buf", NULL, ebm_model_save_buffer(g_rbm, NULL, cap, &size));
    FAILS(&s, EBM_ENULL, "size", NULL, ebm_model_save_buffer(g_rbm, buf, cap, NULL));
    FAILS(&s, EBM_ESHAPE, "cap", want, ebm_model_save_buffer(g_rbm, buf, (size_t)need - 1, &size));
    FAILS(&s, EBM_ESHAPE, "cap", "0", ebm_model_save_buffer(g_rbm, buf, 0, &size));
    OK(g_rbm, ebm_model_save_buffer(g_rbm, buf, cap, &size));
    CHECK(size == (size_t)need, "save_buffer wrote %zu bytes, save_size is %lld", size,
          (long long)need);

    /* load_buffer: errbuf messages, *out NULL, buf untouched. */
    char eb[256];
    ebm_model_t *out = DUMMY;
    uint64_t hb = t_checksum(buf, cap);
    int rc;
    eb[0] = '\0';
    rc = ebm_model_load_buffer(NULL, buf, size, eb, sizeof eb);
    load_fails(__LINE__, rc, NULL, EBM_ENULL, eb, "out");
    eb[0] = '\0';
    rc = ebm_model_load_buffer(&out, NULL, size, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_ENULL, eb, "buf");
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load_buffer(&out, buf, 0, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EFORMAT, eb, NULL);
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load_buffer(&out, buf, size - 1, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EFORMAT, eb, NULL);
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load_buffer(&out, buf, size + 1, eb, sizeof eb); /* a trailing byte */
    load_fails(__LINE__, rc, out, EBM_EFORMAT, eb, NULL);
    CHECK(t_checksum(buf, cap) == hb, "ebm_model_load_buffer changed buf");
    buf[0] ^= 0x20; /* wrong magic */
    out = DUMMY;
    eb[0] = '\0';
    rc = ebm_model_load_buffer(&out, buf, size, eb, sizeof eb);
    load_fails(__LINE__, rc, out, EBM_EFORMAT, eb, NULL);
    buf[0] ^= 0x20;
    rc = ebm_model_load_buffer(&out, buf, size, NULL, 0);
    CHECK(rc == EBM_OK && out != NULL, "load_buffer of a good image after failures: %s",
          ebm_error_name(rc));
    if (rc == EBM_OK) {
        CHECK(model_hash(out) == model_hash(g_rbm), "loaded model differs");
        ebm_model_destroy(out);
    }
    free(buf);
    FINISH();
}
END_TEST

/* ======================================================================== */
/* Messages                                                                 */
/* ======================================================================== */

START_TEST(errmsg_bad_input)
{
    char buf[16];
    CHECK(ebm_model_errmsg(NULL) != NULL, "ebm_model_errmsg(NULL) is NULL");
    const int64_t sizes[2] = {4, 3};
    ebm_model_t *fresh = t_model(2, sizes, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    CHECK(ebm_model_errmsg(fresh) != NULL && ebm_model_errmsg(fresh)[0] == '\0',
          "a fresh model's message is not \"\" but \"%s\"", ebm_model_errmsg(fresh));
    memset(buf, 'Z', sizeof buf);
    int rc = ebm_model_errmsg_copy(NULL, buf, sizeof buf);
    CHECK(rc == EBM_ENULL && buf[0] == 'Z', "errmsg_copy(NULL, buf) returned %s or wrote buf",
          ebm_error_name(rc));
    rc = ebm_model_errmsg_copy(fresh, NULL, 8);
    CHECK(rc == EBM_ENULL, "errmsg_copy(m, NULL, 8) returned %s", ebm_error_name(rc));
    /* Truncation to size, NUL-terminated; size 0 writes nothing. */
    ck_assert_int_eq(ebm_model_param_block(fresh, 99, 0, NULL, NULL, NULL), EBM_EVALUE);
    const char *msg = ebm_model_errmsg(fresh);
    ck_assert_uint_gt(strlen(msg), 5);
    rc = ebm_model_errmsg_copy(fresh, buf, 6);
    CHECK(rc == EBM_OK && buf[5] == '\0' && strncmp(buf, msg, 5) == 0 && buf[6] == 'Z',
          "errmsg_copy(size 6) did not truncate to 5 characters");
    memset(buf, 'Z', sizeof buf);
    rc = ebm_model_errmsg_copy(fresh, buf, 0);
    CHECK(rc == EBM_OK && buf[0] == 'Z', "errmsg_copy(size 0) returned %s or wrote buf",
          ebm_error_name(rc));
    rc = ebm_model_errmsg_copy(fresh, buf, 1);
    CHECK(rc == EBM_OK && buf[0] == '\0' && buf[1] == 'Z', "errmsg_copy(size 1) is not \"\"");
    ebm_model_destroy(fresh);
    FINISH();
}
END_TEST

/* errmsg_copy(m, NULL, n) fails on a model: the header promises a message. */
START_TEST(errmsg_copy_null_buf_leaves_message)
{
    snap s;
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    FAILS(&s, EBM_ENULL, "buf", NULL, ebm_model_errmsg_copy(g_rbm, NULL, 8));
    FINISH();
}
END_TEST

START_TEST(errmsg_is_per_model)
{
    ebm_model_t *c = new_grbm();
    float x[7] = {1, 0, 0.5f, 1, 0, 1, 0};
    double e;
    ck_assert_int_eq(ebm_model_param_block(g_dbm, 77, 0, NULL, NULL, NULL), EBM_EVALUE);
    char b_msg[600];
    snprintf(b_msg, sizeof b_msg, "%s", ebm_model_errmsg(g_dbm));
    ck_assert(t_contains(b_msg, "77"));
    /* A failure on A leaves B's and C's messages alone. */
    ck_assert_int_eq(ebm_model_energy(g_rbm, 1, x, 7, &e), EBM_EVALUE);
    CHECK(t_contains(ebm_model_errmsg(g_rbm), "0.5"), "A's message \"%s\"", ebm_model_errmsg(g_rbm));
    CHECK(strcmp(ebm_model_errmsg(g_dbm), b_msg) == 0,
          "a failure on model A changed model B's message to \"%s\"", ebm_model_errmsg(g_dbm));
    CHECK(ebm_model_errmsg(c)[0] == '\0', "a failure on model A changed model C's message to \"%s\"",
          ebm_model_errmsg(c));
    char copy[600];
    ck_assert_int_eq(ebm_model_errmsg_copy(g_dbm, copy, sizeof copy), EBM_OK);
    CHECK(strcmp(copy, b_msg) == 0, "errmsg_copy(B) is \"%s\"", copy);
    /* A failure on a generator leaves the models alone, and the reverse. */
    char a_msg[600];
    snprintf(a_msg, sizeof a_msg, "%s", ebm_model_errmsg(g_rbm));
    ck_assert_int_eq(ebm_rng_uniform(g_rng, -4, NULL), EBM_ESHAPE);
    CHECK(strcmp(ebm_model_errmsg(g_rbm), a_msg) == 0, "an rng failure changed a model message");
    char r_msg[600];
    snprintf(r_msg, sizeof r_msg, "%s", ebm_rng_errmsg(g_rng));
    ck_assert_int_eq(ebm_model_layer_sample(g_rbm, 5, g_rng, 1, x, 7), EBM_ESHAPE);
    CHECK(strcmp(ebm_rng_errmsg(g_rng), r_msg) == 0,
          "a model failure changed the rng message to \"%s\"", ebm_rng_errmsg(g_rng));
    ebm_rng_t *r2 = fresh_rng();
    CHECK(ebm_rng_errmsg(r2)[0] == '\0', "rng failure leaked into another generator");
    ebm_rng_destroy(r2);
    ebm_model_destroy(c);
    FINISH();
}
END_TEST

/* ======================================================================== */
/* Energies                                                                 */
/* ======================================================================== */

/* RBM 4x3, 3 rows, ldx 9 (2 padding columns). */
START_TEST(energy_bad_input)
{
    float x[3 * 9];
    double e[3];
    t_fill_states(g_rbm, 3, x, 9, 7);
    sentinel(e, sizeof e);
    snap s;
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    track(&s, "x", x, sizeof x);
    track(&s, "energy", e, sizeof e);
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_energy(g_rbm, 3, NULL, 9, e));
    FAILS(&s, EBM_ENULL, "energy", NULL, ebm_model_energy(g_rbm, 3, x, 9, NULL));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_energy(g_rbm, -1, x, 9, e));
    FAILS(&s, EBM_ESHAPE, "x", "6", ebm_model_energy(g_rbm, 3, x, 6, e));
    FAILS(&s, EBM_ESHAPE, "x", "0", ebm_model_energy(g_rbm, 3, x, 0, e));
    FAILS(&s, EBM_ESHAPE, "x", "-9", ebm_model_energy(g_rbm, 3, x, -9, e));
    float keep = x[1 * 9 + 2];
    x[1 * 9 + 2] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_energy(g_rbm, 3, x, 9, e));
    x[1 * 9 + 2] = keep;
    keep = x[2 * 9 + 5];
    x[2 * 9 + 5] = 2.0f; /* hidden */
    FAILS3(&s, EBM_EVALUE, "row 2", "2", "unit 5", ebm_model_energy(g_rbm, 3, x, 9, e));
    x[2 * 9 + 5] = -1.0f; /* a spin value in a binary layer */
    FAILS3(&s, EBM_EVALUE, "row 2", "-1", "unit 5", ebm_model_energy(g_rbm, 3, x, 9, e));
    x[2 * 9 + 5] = keep;
    keep = x[0];
    x[0] = NAN;
    FAILS(&s, EBM_EVALUE, "row 0", "nan", ebm_model_energy(g_rbm, 3, x, 9, e));
    x[0] = keep;
    /* Padding columns (0.5) are not read. */
    OK(g_rbm, ebm_model_energy(g_rbm, 3, x, 9, e));

    /* Spin DBM: 0 and 0.5 are not spins. */
    float y[2 * 8];
    double f[2];
    t_fill_states(g_dbm, 2, y, 8, 8);
    sentinel(f, sizeof f);
    snap_init(&s, MSG_MODEL, g_dbm, NULL);
    track(&s, "x", y, sizeof y);
    track(&s, "energy", f, sizeof f);
    keep = y[1 * 8 + 5];
    y[1 * 8 + 5] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 1", "unit 5", "0", ebm_model_energy(g_dbm, 2, y, 8, f));
    y[1 * 8 + 5] = keep;
    keep = y[0];
    y[0] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 0", "unit 0", "0.5", ebm_model_energy(g_dbm, 2, y, 8, f));
    y[0] = keep;
    FAILS(&s, EBM_ESHAPE, "x", "7", ebm_model_energy(g_dbm, 2, y, 7, f));

    /* GRBM: non-finite visible values, 0.5 in the binary hidden layer. */
    float z[2 * 5];
    t_fill_states(g_grbm, 2, z, 5, 9);
    sentinel(f, sizeof f);
    snap_init(&s, MSG_MODEL, g_grbm, NULL);
    track(&s, "x", z, sizeof z);
    track(&s, "energy", f, sizeof f);
    keep = z[1 * 5 + 1];
    z[1 * 5 + 1] = NAN;
    FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 1", ebm_model_energy(g_grbm, 2, z, 5, f));
    z[1 * 5 + 1] = INFINITY;
    FAILS3(&s, EBM_EVALUE, "row 1", "inf", "unit 1", ebm_model_energy(g_grbm, 2, z, 5, f));
    z[1 * 5 + 1] = -INFINITY;
    FAILS3(&s, EBM_EVALUE, "row 1", "inf", "unit 1", ebm_model_energy(g_grbm, 2, z, 5, f));
    z[1 * 5 + 1] = keep;
    keep = z[4];
    z[4] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 0", "0.5", "unit 4", ebm_model_energy(g_grbm, 2, z, 5, f));
    z[4] = keep;
    OK(g_grbm, ebm_model_energy(g_grbm, 2, z, 5, f));
    FINISH();
}
END_TEST

START_TEST(free_energy_bad_input)
{
    float x[3 * 9];
    double f[3];
    t_fill_states(g_rbm, 3, x, 9, 10);
    sentinel(f, sizeof f);
    snap s;
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    track(&s, "x", x, sizeof x);
    track(&s, "f", f, sizeof f);
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_free_energy(g_rbm, 2, 3, NULL, 9, f));
    FAILS(&s, EBM_ENULL, "f", NULL, ebm_model_free_energy(g_rbm, 2, 3, x, 9, NULL));
    FAILS(&s, EBM_ESHAPE, "n", "-2", ebm_model_free_energy(g_rbm, 2, -2, x, 9, f));
    FAILS(&s, EBM_ESHAPE, "x", "6", ebm_model_free_energy(g_rbm, 2, 3, x, 6, f));
    /* sum_out: adjacent layers, bits past L */
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_rbm, 0x3, 3, x, 9, f));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_rbm, 0x4, 3, x, 9, f));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_rbm, 0x6, 3, x, 9, f));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_rbm, 0x80000000u, 3, x, 9, f));
    /* invalid values in a kept layer */
    float keep = x[1 * 9 + 2];
    x[1 * 9 + 2] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_free_energy(g_rbm, 2, 3, x, 9, f));
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_free_energy(g_rbm, 0, 3, x, 9, f));
    x[1 * 9 + 2] = keep;
    /* values of a summed-out layer are ignored */
    x[1 * 9 + 5] = 0.5f;
    OK(g_rbm, ebm_model_free_energy(g_rbm, 2, 3, x, 9, f));

    float y[2 * 8];
    double g[2];
    t_fill_states(g_dbm, 2, y, 8, 11);
    sentinel(g, sizeof g);
    snap_init(&s, MSG_MODEL, g_dbm, NULL);
    track(&s, "x", y, sizeof y);
    track(&s, "f", g, sizeof g);
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_dbm, 0x6, 2, y, 8, g));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_dbm, 0x3, 2, y, 8, g));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_dbm, 0x7, 2, y, 8, g));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_dbm, 0x8, 2, y, 8, g));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_dbm, 0x9, 2, y, 8, g));
    keep = y[1 * 8 + 3];
    y[1 * 8 + 3] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 1", "unit 3", "0", ebm_model_free_energy(g_dbm, 0x5, 2, y, 8, g));
    y[1 * 8 + 3] = keep;

    float z[2 * 5];
    t_fill_states(g_grbm, 2, z, 5, 12);
    snap_init(&s, MSG_MODEL, g_grbm, NULL);
    track(&s, "x", z, sizeof z);
    track(&s, "f", g, sizeof g);
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_free_energy(g_grbm, 0x3, 2, z, 5, g));
    z[2] = NAN;
    FAILS(&s, EBM_EVALUE, "row 0", "nan", ebm_model_free_energy(g_grbm, 0x2, 2, z, 5, g));
    /* visible summed out: its (NaN) values are ignored */
    OK(g_grbm, ebm_model_free_energy(g_grbm, 0x1, 2, z, 5, g));
    FINISH();
}
END_TEST

START_TEST(energy_grad_bad_input)
{
    float x[3 * 9], grad[19];
    double coef[3] = {1.0, -0.5, 2.0};
    t_fill_states(g_rbm, 3, x, 9, 13);
    for (int i = 0; i < 19; i++) {
        grad[i] = 0.125f * (float)i - 1.0f;
    }
    snap s;
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    track(&s, "x", x, sizeof x);
    track(&s, "coef", coef, sizeof coef);
    track(&s, "grad", grad, sizeof grad);
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_energy_grad(g_rbm, 0, 3, NULL, 9, coef, grad));
    FAILS(&s, EBM_ENULL, "coef", NULL, ebm_model_energy_grad(g_rbm, 0, 3, x, 9, NULL, grad));
    FAILS(&s, EBM_ENULL, "grad", NULL, ebm_model_energy_grad(g_rbm, 0, 3, x, 9, coef, NULL));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_energy_grad(g_rbm, 0, -1, x, 9, coef, grad));
    FAILS(&s, EBM_ESHAPE, "x", "6", ebm_model_energy_grad(g_rbm, 0, 3, x, 6, coef, grad));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad(g_rbm, 0x3, 3, x, 9, coef, grad));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad(g_rbm, 0x4, 3, x, 9, coef, grad));
    coef[1] = NAN;
    FAILS(&s, EBM_EVALUE, "coef[1]", "nan", ebm_model_energy_grad(g_rbm, 0, 3, x, 9, coef, grad));
    coef[1] = -0.5;
    coef[2] = INFINITY;
    FAILS(&s, EBM_EVALUE, "coef[2]", "inf", ebm_model_energy_grad(g_rbm, 2, 3, x, 9, coef, grad));
    coef[2] = 2.0;
    coef[0] = -INFINITY;
    FAILS(&s, EBM_EVALUE, "coef[0]", "inf", ebm_model_energy_grad(g_rbm, 0, 3, x, 9, coef, grad));
    coef[0] = 1.0;
    float keep = x[1 * 9 + 2];
    x[1 * 9 + 2] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_energy_grad(g_rbm, 0, 3, x, 9, coef, grad));
    x[1 * 9 + 2] = keep;
    OK(g_rbm, ebm_model_energy_grad(g_rbm, 2, 3, x, 9, coef, grad));

    /* DBM: spin values, sum_out */
    float y[2 * 8], gy[23];
    double cy[2] = {0.5, 0.5};
    t_fill_states(g_dbm, 2, y, 8, 14);
    memset(gy, 0, sizeof gy);
    snap_init(&s, MSG_MODEL, g_dbm, NULL);
    track(&s, "x", y, sizeof y);
    track(&s, "grad", gy, sizeof gy);
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad(g_dbm, 0x6, 2, y, 8, cy, gy));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad(g_dbm, 0x8, 2, y, 8, cy, gy));
    y[1 * 8 + 7] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 1", "unit 7", "0", ebm_model_energy_grad(g_dbm, 0x2, 2, y, 8, cy, gy));

    /* GRBM: finite coefficients whose contribution overflows float: grad
     * must be left unchanged. sigma^2 = e^-30, v = 1e6. */
    float p[14], z[2 * 5], gz[14];
    double cz[2] = {1e20, 1e20};
    ck_assert_int_eq(ebm_model_get_params(g_grbm, p), EBM_OK);
    p[11] = p[12] = p[13] = -30.0f;
    ck_assert_int_eq(ebm_model_set_params(g_grbm, p), EBM_OK);
    t_fill_states(g_grbm, 2, z, 5, 15);
    z[0] = z[5] = 1e6f;
    for (int i = 0; i < 14; i++) {
        gz[i] = 0.5f;
    }
    snap_init(&s, MSG_MODEL, g_grbm, NULL);
    track(&s, "x", z, sizeof z);
    track(&s, "grad", gz, sizeof gz);
    FAILS(&s, EBM_EVALUE, NULL, NULL, ebm_model_energy_grad(g_grbm, 0, 2, z, 5, cz, gz));
    z[3] = NAN; /* a NaN in the binary hidden layer */
    cz[0] = cz[1] = 1.0;
    FAILS(&s, EBM_EVALUE, "row 0", "nan", ebm_model_energy_grad(g_grbm, 0, 2, z, 5, cz, gz));
    FINISH();
}
END_TEST

START_TEST(energy_grad_input_bad_input)
{
    /* DBM 3-3-2: l = 1 has 3 units. */
    float x[3 * 8], out[3 * 4];
    t_fill_states(g_dbm, 3, x, 8, 16);
    sentinel(out, sizeof out);
    snap s;
    snap_init(&s, MSG_MODEL, g_dbm, NULL);
    track(&s, "x", x, sizeof x);
    track(&s, "out", out, sizeof out);
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_energy_grad_input(g_dbm, 0, -1, 3, x, 8, out, 4));
    FAILS(&s, EBM_ESHAPE, "3", NULL, ebm_model_energy_grad_input(g_dbm, 0, 3, 3, x, 8, out, 4));
    FAILS(&s, EBM_ESHAPE, "4", NULL, ebm_model_energy_grad_input(g_dbm, 0, 4, 3, x, 8, out, 4));
    /* l in S */
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad_input(g_dbm, 0x2, 1, 3, x, 8, out, 4));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad_input(g_dbm, 0x5, 0, 3, x, 8, out, 4));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad_input(g_dbm, 0x5, 2, 3, x, 8, out, 4));
    /* bad S */
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad_input(g_dbm, 0x6, 0, 3, x, 8, out, 4));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad_input(g_dbm, 0x8, 1, 3, x, 8, out, 4));
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_energy_grad_input(g_dbm, 0, 1, 3, NULL, 8, out, 4));
    FAILS(&s, EBM_ENULL, "out", NULL, ebm_model_energy_grad_input(g_dbm, 0, 1, 3, x, 8, NULL, 4));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_energy_grad_input(g_dbm, 0, 1, -1, x, 8, out, 4));
    FAILS(&s, EBM_ESHAPE, "x", "7", ebm_model_energy_grad_input(g_dbm, 0, 1, 3, x, 7, out, 4));
    FAILS(&s, EBM_ESHAPE, "out", "2", ebm_model_energy_grad_input(g_dbm, 0, 1, 3, x, 8, out, 2));
    FAILS(&s, EBM_ESHAPE, "out", "0", ebm_model_energy_grad_input(g_dbm, 0, 1, 3, x, 8, out, 0));
    FAILS(&s, EBM_ESHAPE, "out", "-3", ebm_model_energy_grad_input(g_dbm, 0, 1, 3, x, 8, out, -3));
    float keep = x[2 * 8 + 7];
    x[2 * 8 + 7] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 2", "unit 7", "0", ebm_model_energy_grad_input(g_dbm, 0, 1, 3, x, 8, out, 4));
    /* ... but a summed-out layer's values are ignored */
    OK(g_dbm, ebm_model_energy_grad_input(g_dbm, 0x4, 1, 3, x, 8, out, 4));
    x[2 * 8 + 7] = keep;

    /* GRBM: Gaussian l = 0 */
    float z[2 * 5], oz[2 * 3];
    t_fill_states(g_grbm, 2, z, 5, 17);
    sentinel(oz, sizeof oz);
    snap_init(&s, MSG_MODEL, g_grbm, NULL);
    track(&s, "x", z, sizeof z);
    track(&s, "out", oz, sizeof oz);
    keep = z[1 * 5 + 2];
    z[1 * 5 + 2] = INFINITY;
    FAILS3(&s, EBM_EVALUE, "row 1", "inf", "unit 2", ebm_model_energy_grad_input(g_grbm, 0, 0, 2, z, 5, oz, 3));
    z[1 * 5 + 2] = keep;
    FAILS(&s, EBM_ESHAPE, "out", "2", ebm_model_energy_grad_input(g_grbm, 0, 0, 2, z, 5, oz, 2));
    FAILS(&s, EBM_ESHAPE, "2", NULL, ebm_model_energy_grad_input(g_grbm, 0, 2, 2, z, 5, oz, 3));
    FAILS(&s, EBM_EVALUE, "sum_out", NULL, ebm_model_energy_grad_input(g_grbm, 0x1, 0, 2, z, 5, oz, 3));
    /* layer 1 given a summed-out visible layer: the Inf is not read */
    z[1 * 5 + 2] = INFINITY;
    OK(g_grbm, ebm_model_energy_grad_input(g_grbm, 0x1, 1, 2, z, 5, oz, 3));
    FINISH();
}
END_TEST

/* ======================================================================== */
/* Conditionals                                                             */
/* ======================================================================== */

typedef int (*layer_out_fn)(const ebm_model_t *, int64_t, int64_t, const float *, int64_t,
                            float *, int64_t);

START_TEST(layer_input_mean_bad_input)
{
    static const struct {
        const char *name, *out;
        layer_out_fn fn;
    } fns[2] = {{"ebm_model_layer_input", "a", ebm_model_layer_input},
                {"ebm_model_layer_mean", "mean", ebm_model_layer_mean}};
    for (int k = 0; k < 2; k++) {
        layer_out_fn fn = fns[k].fn;
        g_ctx = fns[k].name;
        float x[3 * 8], a[3 * 4];
        t_fill_states(g_dbm, 3, x, 8, 18);
        sentinel(a, sizeof a);
        snap s;
        snap_init(&s, MSG_MODEL, g_dbm, NULL);
        track(&s, "x", x, sizeof x);
        track(&s, fns[k].out, a, sizeof a);
        FAILS(&s, EBM_ESHAPE, "-1", NULL, fn(g_dbm, -1, 3, x, 8, a, 4));
        FAILS(&s, EBM_ESHAPE, "3", NULL, fn(g_dbm, 3, 3, x, 8, a, 4));
        FAILS(&s, EBM_ENULL, "x", NULL, fn(g_dbm, 1, 3, NULL, 8, a, 4));
        FAILS(&s, EBM_ENULL, fns[k].out, NULL, fn(g_dbm, 1, 3, x, 8, NULL, 4));
        FAILS(&s, EBM_ESHAPE, "n", "-1", fn(g_dbm, 1, -1, x, 8, a, 4));
        FAILS(&s, EBM_ESHAPE, "x", "7", fn(g_dbm, 1, 3, x, 7, a, 4));
        FAILS(&s, EBM_ESHAPE, fns[k].out, "2", fn(g_dbm, 1, 3, x, 8, a, 2));
        FAILS(&s, EBM_ESHAPE, fns[k].out, "1", fn(g_dbm, 2, 3, x, 8, a, 1));
        float keep = x[1 * 8 + 1];
        x[1 * 8 + 1] = 0.0f; /* layer 0, a neighbour of 1 */
        FAILS3(&s, EBM_EVALUE, "row 1", "unit 1", "0", fn(g_dbm, 1, 3, x, 8, a, 4));
        x[1 * 8 + 1] = keep;
        keep = x[2 * 8 + 6];
        x[2 * 8 + 6] = 0.5f; /* layer 2, a neighbour of 1 */
        FAILS3(&s, EBM_EVALUE, "row 2", "unit 6", "0.5", fn(g_dbm, 1, 3, x, 8, a, 4));
        x[2 * 8 + 6] = keep;
        /* layer 1's own values are ignored */
        x[0 * 8 + 4] = 0.5f;
        OK(g_dbm, fn(g_dbm, 1, 3, x, 8, a, 4));

        float z[2 * 5], az[2 * 3];
        t_fill_states(g_grbm, 2, z, 5, 19);
        sentinel(az, sizeof az);
        snap_init(&s, MSG_MODEL, g_grbm, NULL);
        track(&s, "x", z, sizeof z);
        track(&s, fns[k].out, az, sizeof az);
        z[1 * 5 + 0] = NAN;
        FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 0", fn(g_grbm, 1, 2, z, 5, az, 3));
        z[1 * 5 + 0] = 1.0f;
        z[1 * 5 + 3] = 0.5f;
        FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 3", fn(g_grbm, 0, 2, z, 5, az, 3));
        z[1 * 5 + 3] = 1.0f;
        FAILS(&s, EBM_ESHAPE, "2", NULL, fn(g_grbm, 2, 2, z, 5, az, 3));
        FAILS(&s, EBM_ESHAPE, fns[k].out, "2", fn(g_grbm, 0, 2, z, 5, az, 2));
    }
    g_ctx = "";
    FINISH();
}
END_TEST

START_TEST(layer_logprob_bad_input)
{
    float x[3 * 8], xl[3 * 4];
    double lp[3];
    t_fill_states(g_dbm, 3, x, 8, 20);
    for (int r = 0; r < 3; r++) {
        for (int j = 0; j < 4; j++) {
            xl[r * 4 + j] = j == 3 ? 0.5f : ((r + j) % 2 ? 1.0f : -1.0f); /* col 3: padding */
        }
    }
    sentinel(lp, sizeof lp);
    snap s;
    snap_init(&s, MSG_MODEL, g_dbm, NULL);
    track(&s, "x", x, sizeof x);
    track(&s, "xl", xl, sizeof xl);
    track(&s, "logp", lp, sizeof lp);
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_layer_logprob(g_dbm, -1, 3, x, 8, xl, 4, lp));
    FAILS(&s, EBM_ESHAPE, "3", NULL, ebm_model_layer_logprob(g_dbm, 3, 3, x, 8, xl, 4, lp));
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_layer_logprob(g_dbm, 1, 3, NULL, 8, xl, 4, lp));
    FAILS(&s, EBM_ENULL, "xl", NULL, ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, NULL, 4, lp));
    FAILS(&s, EBM_ENULL, "logp", NULL, ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, xl, 4, NULL));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_layer_logprob(g_dbm, 1, -1, x, 8, xl, 4, lp));
    FAILS(&s, EBM_ESHAPE, "x", "7", ebm_model_layer_logprob(g_dbm, 1, 3, x, 7, xl, 4, lp));
    FAILS(&s, EBM_ESHAPE, "xl", "2", ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, xl, 2, lp));
    FAILS(&s, EBM_ESHAPE, "xl", "1", ebm_model_layer_logprob(g_dbm, 2, 3, x, 8, xl, 1, lp));
    float keep = xl[1 * 4 + 2];
    xl[1 * 4 + 2] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "xl", "row 1", "0", ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, xl, 4, lp));
    xl[1 * 4 + 2] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "xl", "row 1", "0.5", ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, xl, 4, lp));
    xl[1 * 4 + 2] = keep;
    keep = x[2 * 8 + 0];
    x[2 * 8 + 0] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 2", "unit 0", "0", ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, xl, 4, lp));
    x[2 * 8 + 0] = keep;
    x[1 * 8 + 3] = 0.5f; /* layer 1 in x is not read */
    OK(g_dbm, ebm_model_layer_logprob(g_dbm, 1, 3, x, 8, xl, 4, lp));

    /* RBM: 0.5 in a binary candidate at row 1 unit 2 */
    float xr[2 * 7], xlr[2 * 4] = {0, 1, 1, 0, 1, 0, 0.5f, 1};
    double lr[2];
    t_fill_states(g_rbm, 2, xr, 7, 21);
    sentinel(lr, sizeof lr);
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    track(&s, "xl", xlr, sizeof xlr);
    track(&s, "logp", lr, sizeof lr);
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_layer_logprob(g_rbm, 0, 2, xr, 7, xlr, 4, lr));
    FAILS(&s, EBM_ESHAPE, "2", NULL, ebm_model_layer_logprob(g_rbm, 2, 2, xr, 7, xlr, 4, lr));

    /* GRBM: non-finite Gaussian candidates */
    float xg[2 * 5], xlg[2 * 3] = {0.1f, 0.2f, 0.3f, 0.4f, NAN, 0.6f};
    double lg[2];
    t_fill_states(g_grbm, 2, xg, 5, 22);
    sentinel(lg, sizeof lg);
    snap_init(&s, MSG_MODEL, g_grbm, NULL);
    track(&s, "xl", xlg, sizeof xlg);
    track(&s, "logp", lg, sizeof lg);
    FAILS3(&s, EBM_EVALUE, "xl", "row 1", "nan", ebm_model_layer_logprob(g_grbm, 0, 2, xg, 5, xlg, 3, lg));
    xlg[4] = -INFINITY;
    FAILS3(&s, EBM_EVALUE, "xl", "row 1", "inf", ebm_model_layer_logprob(g_grbm, 0, 2, xg, 5, xlg, 3, lg));
    xlg[4] = 0.5f;
    xg[3] = 0.5f; /* hidden neighbour of layer 0 */
    FAILS3(&s, EBM_EVALUE, "row 0", "0.5", "unit 3", ebm_model_layer_logprob(g_grbm, 0, 2, xg, 5, xlg, 3, lg));
    FINISH();
}
END_TEST

START_TEST(layer_argmin_sample_bad_input)
{
    float x[3 * 8];
    t_fill_states(g_dbm, 3, x, 8, 23);
    snap s;
    snap_init(&s, MSG_MODEL, g_dbm, g_rng);
    track(&s, "x", x, sizeof x);
    g_ctx = "ebm_model_layer_argmin";
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_layer_argmin(g_dbm, -1, 3, x, 8));
    FAILS(&s, EBM_ESHAPE, "3", NULL, ebm_model_layer_argmin(g_dbm, 3, 3, x, 8));
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_layer_argmin(g_dbm, 1, 3, NULL, 8));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_layer_argmin(g_dbm, 1, -1, x, 8));
    FAILS(&s, EBM_ESHAPE, "x", "7", ebm_model_layer_argmin(g_dbm, 1, 3, x, 7));
    float keep = x[2 * 8 + 2];
    x[2 * 8 + 2] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 2", "unit 2", "0", ebm_model_layer_argmin(g_dbm, 1, 3, x, 8));
    g_ctx = "ebm_model_layer_sample";
    FAILS3(&s, EBM_EVALUE, "row 2", "unit 2", "0", ebm_model_layer_sample(g_dbm, 1, g_rng, 3, x, 8));
    x[2 * 8 + 2] = keep;
    FAILS(&s, EBM_ENULL, "rng", NULL, ebm_model_layer_sample(g_dbm, 1, NULL, 3, x, 8));
    FAILS(&s, EBM_ESHAPE, "-1", NULL, ebm_model_layer_sample(g_dbm, -1, g_rng, 3, x, 8));
    FAILS(&s, EBM_ESHAPE, "3", NULL, ebm_model_layer_sample(g_dbm, 3, g_rng, 3, x, 8));
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_layer_sample(g_dbm, 1, g_rng, 3, NULL, 8));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_layer_sample(g_dbm, 1, g_rng, -1, x, 8));
    FAILS(&s, EBM_ESHAPE, "x", "7", ebm_model_layer_sample(g_dbm, 1, g_rng, 3, x, 7));

    /* GRBM: a NaN visible value poisons the hidden conditional; a 0.5 hidden
     * value the visible one. */
    float z[2 * 5];
    t_fill_states(g_grbm, 2, z, 5, 24);
    snap_init(&s, MSG_MODEL, g_grbm, g_rng);
    track(&s, "x", z, sizeof z);
    z[1 * 5 + 2] = NAN;
    FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 2", ebm_model_layer_sample(g_grbm, 1, g_rng, 2, z, 5));
    g_ctx = "ebm_model_layer_argmin";
    FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 2", ebm_model_layer_argmin(g_grbm, 1, 2, z, 5));
    z[1 * 5 + 2] = 0.0f;
    z[4] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 0", "0.5", "unit 4", ebm_model_layer_argmin(g_grbm, 0, 2, z, 5));
    g_ctx = "ebm_model_layer_sample";
    FAILS3(&s, EBM_EVALUE, "row 0", "0.5", "unit 4", ebm_model_layer_sample(g_grbm, 0, g_rng, 2, z, 5));
    g_ctx = "";
    /* layer l's own values are replaced, so they may be anything */
    z[5] = NAN;
    OK(g_grbm, ebm_model_layer_sample(g_grbm, 0, g_rng, 1, z + 5, 5));
    x[1 * 8 + 4] = 0.5f;
    OK(g_dbm, ebm_model_layer_argmin(g_dbm, 1, 3, x, 8));
    FINISH();
}
END_TEST

START_TEST(random_state_bad_input)
{
    float x[3 * 9];
    uint8_t clamp[3 * 9];
    t_fill_states(g_rbm, 3, x, 9, 25);
    memset(clamp, 0, sizeof clamp);
    clamp[1] = 1;
    snap s;
    snap_init(&s, MSG_MODEL, g_rbm, g_rng);
    track(&s, "x", x, sizeof x);
    FAILS(&s, EBM_ENULL, "rng", NULL, ebm_model_random_state(g_rbm, NULL, 3, x, 9, NULL, 0));
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_random_state(g_rbm, g_rng, 3, NULL, 9, NULL, 0));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_random_state(g_rbm, g_rng, -1, x, 9, NULL, 0));
    FAILS(&s, EBM_ESHAPE, "x", "6", ebm_model_random_state(g_rbm, g_rng, 3, x, 6, NULL, 0));
    FAILS(&s, EBM_ESHAPE, "x", "-9", ebm_model_random_state(g_rbm, g_rng, 3, x, -9, NULL, 0));
    FAILS(&s, EBM_ESHAPE, "clamp", "3", ebm_model_random_state(g_rbm, g_rng, 3, x, 9, clamp, 3));
    FAILS(&s, EBM_ESHAPE, "clamp", "6", ebm_model_random_state(g_rbm, g_rng, 3, x, 9, clamp, 6));
    FAILS(&s, EBM_ESHAPE, "clamp", "-9", ebm_model_random_state(g_rbm, g_rng, 3, x, 9, clamp, -9));
    OK(g_rbm, ebm_model_random_state(g_rbm, g_rng, 3, x, 9, clamp, 9));
    OK(g_rbm, ebm_model_random_state(g_rbm, g_rng, 3, x, 9, clamp, 0));
    FINISH();
}
END_TEST

/* ======================================================================== */
/* Local search and mean field                                              */
/* ======================================================================== */

START_TEST(local_search_bad_input)
{
    float x[3 * 8];
    int64_t sweeps[3];
    uint8_t clamp[3 * 8];
    t_fill_states(g_dbm, 3, x, 8, 26);
    sentinel(sweeps, sizeof sweeps);
    memset(clamp, 0, sizeof clamp);
    clamp[0] = clamp[1] = clamp[2] = 1;
    snap s;
    snap_init(&s, MSG_MODEL, g_dbm, g_rng);
    track(&s, "x", x, sizeof x);
    track(&s, "sweeps", sweeps, sizeof sweeps);
    FAILS(&s, EBM_ENULL, "rng", NULL, ebm_model_local_search(g_dbm, NULL, 3, x, 8, NULL, 0, 10, sweeps));
    FAILS(&s, EBM_ENULL, "x", NULL, ebm_model_local_search(g_dbm, g_rng, 3, NULL, 8, NULL, 0, 10, sweeps));
    FAILS(&s, EBM_EVALUE, "max_sweeps", "0", ebm_model_local_search(g_dbm, g_rng, 3, x, 8, NULL, 0, 0, sweeps));
    FAILS(&s, EBM_EVALUE, "max_sweeps", "-5", ebm_model_local_search(g_dbm, g_rng, 3, x, 8, NULL, 0, -5, sweeps));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_local_search(g_dbm, g_rng, -1, x, 8, NULL, 0, 10, sweeps));
    FAILS(&s, EBM_ESHAPE, "x", "7", ebm_model_local_search(g_dbm, g_rng, 3, x, 7, NULL, 0, 10, sweeps));
    FAILS(&s, EBM_ESHAPE, "clamp", "4", ebm_model_local_search(g_dbm, g_rng, 3, x, 8, clamp, 4, 10, sweeps));
    FAILS(&s, EBM_ESHAPE, "clamp", "-1", ebm_model_local_search(g_dbm, g_rng, 3, x, 8, clamp, -1, 10, sweeps));
    float keep = x[2 * 8 + 4];
    x[2 * 8 + 4] = 0.0f;
    FAILS3(&s, EBM_EVALUE, "row 2", "unit 4", "0", ebm_model_local_search(g_dbm, g_rng, 3, x, 8, NULL, 0, 10, sweeps));
    x[2 * 8 + 4] = keep;
    /* an invalid value in a clamped unit is still invalid */
    keep = x[1 * 8 + 1];
    x[1 * 8 + 1] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "unit 1", "0.5", ebm_model_local_search(g_dbm, g_rng, 3, x, 8, clamp, 0, 10, sweeps));
    x[1 * 8 + 1] = keep;

    float xr[2 * 7];
    t_fill_states(g_rbm, 2, xr, 7, 27);
    snap_init(&s, MSG_MODEL, g_rbm, g_rng);
    track(&s, "x", xr, sizeof xr);
    track(&s, "sweeps", sweeps, sizeof sweeps);
    xr[1 * 7 + 2] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_local_search(g_rbm, g_rng, 2, xr, 7, NULL, 0, 10, sweeps));
    float z[2 * 5];
    t_fill_states(g_grbm, 2, z, 5, 28);
    snap_init(&s, MSG_MODEL, g_grbm, g_rng);
    track(&s, "x", z, sizeof z);
    track(&s, "sweeps", sweeps, sizeof sweeps);
    z[1] = NAN;
    FAILS3(&s, EBM_EVALUE, "row 0", "nan", "unit 1", ebm_model_local_search(g_grbm, g_rng, 2, z, 5, NULL, 0, 10, sweeps));
    z[1] = 0.0f;
    int rc = ebm_model_local_search(g_grbm, g_rng, 2, z, 5, NULL, 0, 100, sweeps);
    CHECK(rc >= 0, "local_search after failures returned %s: %s", ebm_error_name(rc),
          ebm_model_errmsg(g_grbm));
    FINISH();
}
END_TEST

START_TEST(mean_field_bad_input)
{
    float mu[3 * 9];
    uint8_t clamp[9] = {1, 1, 1, 0, 0, 0, 0, 0, 0};
    t_fill_means(g_dbm, 3, mu, 9, 29);
    snap s;
    snap_init(&s, MSG_MODEL, g_dbm, NULL);
    track(&s, "mu", mu, sizeof mu);
    FAILS(&s, EBM_ENULL, "mu", NULL, ebm_model_mean_field(g_dbm, 3, NULL, 9, NULL, 0, 10, 1e-6));
    FAILS(&s, EBM_EVALUE, "max_iter", "0", ebm_model_mean_field(g_dbm, 3, mu, 9, NULL, 0, 0, 1e-6));
    FAILS(&s, EBM_EVALUE, "max_iter", "-1", ebm_model_mean_field(g_dbm, 3, mu, 9, NULL, 0, -1, 1e-6));
    FAILS(&s, EBM_EVALUE, "tol", "-1", ebm_model_mean_field(g_dbm, 3, mu, 9, NULL, 0, 10, -1.0));
    FAILS(&s, EBM_EVALUE, "tol", "nan", ebm_model_mean_field(g_dbm, 3, mu, 9, NULL, 0, 10, NAN));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_mean_field(g_dbm, -1, mu, 9, NULL, 0, 10, 1e-6));
    FAILS(&s, EBM_ESHAPE, "mu", "7", ebm_model_mean_field(g_dbm, 3, mu, 7, NULL, 0, 10, 1e-6));
    FAILS(&s, EBM_ESHAPE, "clamp", "5", ebm_model_mean_field(g_dbm, 3, mu, 9, clamp, 5, 10, 1e-6));
    FAILS(&s, EBM_ESHAPE, "clamp", "-2", ebm_model_mean_field(g_dbm, 3, mu, 9, clamp, -2, 10, 1e-6));
    float keep = mu[1 * 9 + 4];
    mu[1 * 9 + 4] = 1.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "1.5", "unit 4", ebm_model_mean_field(g_dbm, 3, mu, 9, NULL, 0, 10, 1e-6));
    mu[1 * 9 + 4] = -1.25f;
    FAILS3(&s, EBM_EVALUE, "row 1", "-1.25", "unit 4", ebm_model_mean_field(g_dbm, 3, mu, 9, clamp, 0, 10, 1e-6));
    mu[1 * 9 + 4] = NAN;
    FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 4", ebm_model_mean_field(g_dbm, 3, mu, 9, NULL, 0, 10, 1e-6));
    mu[1 * 9 + 4] = keep;
    int rc = ebm_model_mean_field(g_dbm, 3, mu, 9, clamp, 0, 200, 1e-4);
    CHECK(rc >= 0, "mean_field after failures returned %s: %s", ebm_error_name(rc),
          ebm_model_errmsg(g_dbm));

    /* binary means in [0, 1] */
    float mr[2 * 7];
    t_fill_means(g_rbm, 2, mr, 7, 30);
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    track(&s, "mu", mr, sizeof mr);
    mr[1 * 7 + 2] = -0.25f;
    FAILS3(&s, EBM_EVALUE, "row 1", "-0.25", "unit 2", ebm_model_mean_field(g_rbm, 2, mr, 7, NULL, 0, 10, 1e-6));
    mr[1 * 7 + 2] = 1.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "1.5", "unit 2", ebm_model_mean_field(g_rbm, 2, mr, 7, NULL, 0, 10, 1e-6));
    mr[1 * 7 + 2] = 0.5f;
    mr[6] = -1.0f; /* a spin value in a binary layer */
    FAILS3(&s, EBM_EVALUE, "row 0", "-1", "unit 6", ebm_model_mean_field(g_rbm, 2, mr, 7, NULL, 0, 10, 1e-6));

    /* GRBM: Gaussian finite, hidden in [0, 1] */
    float mg[2 * 5];
    t_fill_means(g_grbm, 2, mg, 5, 31);
    snap_init(&s, MSG_MODEL, g_grbm, NULL);
    track(&s, "mu", mg, sizeof mg);
    mg[1 * 5 + 0] = INFINITY;
    FAILS3(&s, EBM_EVALUE, "row 1", "inf", "unit 0", ebm_model_mean_field(g_grbm, 2, mg, 5, NULL, 0, 10, 1e-6));
    mg[1 * 5 + 0] = NAN;
    FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 0", ebm_model_mean_field(g_grbm, 2, mg, 5, NULL, 0, 10, 1e-6));
    mg[1 * 5 + 0] = 0.0f;
    mg[3] = 1.25f;
    FAILS3(&s, EBM_EVALUE, "row 0", "1.25", "unit 3", ebm_model_mean_field(g_grbm, 2, mg, 5, NULL, 0, 10, 1e-6));
    FINISH();
}
END_TEST

/* ======================================================================== */
/* Exact evaluation                                                         */
/* ======================================================================== */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

START_TEST(log_partition_bad_input)
{
    double lz = 123.5;
    snap s;
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    track(&s, "log_z", &lz, sizeof lz);
    FAILS(&s, EBM_ENULL, "log_z", NULL, ebm_model_log_partition_exact(g_rbm, NULL));

    /* 40 + 40 binary units: 2^40 states in either class. */
    const int64_t s40[2] = {40, 40};
    ebm_model_t *big = t_model(2, s40, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    t_random_params(big, 40, 0.1);
    snap_init(&s, MSG_MODEL, big, NULL);
    track(&s, "log_z", &lz, sizeof lz);
    double t0 = now();
    FAILS(&s, EBM_ELIMIT, "40", NULL, ebm_model_log_partition_exact(big, &lz));
    double dt = now() - t0;
    CHECK(dt < 0.5, "log_partition_exact({40, 40}) took %.3f s to refuse", dt);
    ebm_model_destroy(big);

    /* GRBM 2 x 40: the visible layer is integrated, so the 40 hidden units
     * must be enumerated. */
    const int64_t g40[2] = {2, 40};
    big = t_model(2, g40, EBM_UNITS_GAUSSIAN, EBM_UNITS_BINARY);
    snap_init(&s, MSG_MODEL, big, NULL);
    track(&s, "log_z", &lz, sizeof lz);
    t0 = now();
    FAILS(&s, EBM_ELIMIT, "40", NULL, ebm_model_log_partition_exact(big, &lz));
    dt = now() - t0;
    CHECK(dt < 0.5, "log_partition_exact(GRBM {2, 40}) took %.3f s to refuse", dt);
    ebm_model_destroy(big);

    /* Spin DBM 33-1-33: odd class 1 unit, even class 66: fine and fast. */
    const int64_t s33[3] = {33, 1, 33};
    big = t_model(3, s33, EBM_UNITS_SPIN, EBM_UNITS_SPIN);
    OK(big, ebm_model_log_partition_exact(big, &lz));
    CHECK(isfinite(lz), "log Z of the 33-1-33 DBM is %g", lz);
    ebm_model_destroy(big);
    FINISH();
}
END_TEST

START_TEST(log_likelihood_bad_input)
{
    double lz;
    ck_assert_int_eq(ebm_model_log_partition_exact(g_rbm, &lz), EBM_OK);
    float data[3 * 6];
    double ll[3];
    for (int r = 0; r < 3; r++) {
        for (int j = 0; j < 6; j++) {
            data[r * 6 + j] = j >= 4 ? 0.5f : (float)((r + j) % 2);
        }
    }
    sentinel(ll, sizeof ll);
    snap s;
    snap_init(&s, MSG_MODEL, g_rbm, NULL);
    track(&s, "data", data, sizeof data);
    track(&s, "ll", ll, sizeof ll);
    FAILS(&s, EBM_EVALUE, "log_z", "nan", ebm_model_log_likelihood(g_rbm, NAN, 3, data, 6, ll));
    FAILS(&s, EBM_EVALUE, "log_z", "inf", ebm_model_log_likelihood(g_rbm, INFINITY, 3, data, 6, ll));
    FAILS(&s, EBM_EVALUE, "log_z", "inf", ebm_model_log_likelihood(g_rbm, -INFINITY, 3, data, 6, ll));
    FAILS(&s, EBM_ENULL, "data", NULL, ebm_model_log_likelihood(g_rbm, lz, 3, NULL, 6, ll));
    FAILS(&s, EBM_ENULL, "ll", NULL, ebm_model_log_likelihood(g_rbm, lz, 3, data, 6, NULL));
    FAILS(&s, EBM_ESHAPE, "n", "-1", ebm_model_log_likelihood(g_rbm, lz, -1, data, 6, ll));
    FAILS(&s, EBM_ESHAPE, "data", "3", ebm_model_log_likelihood(g_rbm, lz, 3, data, 3, ll));
    FAILS(&s, EBM_ESHAPE, "data", "0", ebm_model_log_likelihood(g_rbm, lz, 3, data, 0, ll));
    float keep = data[1 * 6 + 2];
    data[1 * 6 + 2] = 0.5f;
    FAILS3(&s, EBM_EVALUE, "row 1", "0.5", "unit 2", ebm_model_log_likelihood(g_rbm, lz, 3, data, 6, ll));
    data[1 * 6 + 2] = keep;
    OK(g_rbm, ebm_model_log_likelihood(g_rbm, lz, 3, data, 6, ll));

    /* Spin DBM: 0 is not a spin. */
    float dd[2 * 3] = {1, -1, 1, -1, 0, 1};
    double ld[2];
    sentinel(ld, sizeof ld);
    snap_init(&s, MSG_MODEL, g_dbm, NULL);
    track(&s, "data", dd, sizeof dd);
    track(&s, "ll", ld, sizeof ld);
    FAILS3(&s, EBM_EVALUE, "row 1", "0", "unit 1", ebm_model_log_likelihood(g_dbm, 1.0, 2, dd, 3, ld));
    FAILS(&s, EBM_ESHAPE, "data", "2", ebm_model_log_likelihood(g_dbm, 1.0, 2, dd, 2, ld));

    /* GRBM: non-finite data */
    float dg[2 * 3] = {0.1f, 0.2f, 0.3f, INFINITY, 0.5f, 0.6f};
    snap_init(&s, MSG_MODEL, g_grbm, NULL);
    track(&s, "data", dg, sizeof dg);
    track(&s, "ll", ld, sizeof ld);
    FAILS3(&s, EBM_EVALUE, "row 1", "inf", "unit 0", ebm_model_log_likelihood(g_grbm, 1.0, 2, dg, 3, ld));
    dg[3] = NAN;
    FAILS3(&s, EBM_EVALUE, "row 1", "nan", "unit 0", ebm_model_log_likelihood(g_grbm, 1.0, 2, dg, 3, ld));

    /* DBM 3-30-30: every hidden parity class has 30 units, 2^30 > 2^24
     * states per row: EBM_ELIMIT, quickly. */
    const int64_t s30[3] = {3, 30, 30};
    ebm_model_t *big = t_model(3, s30, EBM_UNITS_BINARY, EBM_UNITS_BINARY);
    float db[2 * 3] = {0, 1, 0, 1, 1, 0};
    snap_init(&s, MSG_MODEL, big, NULL);
    track(&s, "data", db, sizeof db);
    track(&s, "ll", ld, sizeof ld);
    double t0 = now();
    FAILS(&s, EBM_ELIMIT, "30", NULL, ebm_model_log_likelihood(big, 0.0, 2, db, 3, ld));
    double dt = now() - t0;
    CHECK(dt < 0.5, "log_likelihood(3-30-30) took %.3f s to refuse", dt);
    ebm_model_destroy(big);
    FINISH();
}
END_TEST

/* ======================================================================== */
/* n = 0, NULL buffers; no poisoning                                         */
/* ======================================================================== */

START_TEST(empty_batches_with_null_buffers)
{
    snap s;
    snap_init(&s, MSG_MODEL, g_dbm, g_rng);
    NOOP(&s, ebm_model_energy(g_dbm, 0, NULL, 8, NULL));
    NOOP(&s, ebm_model_free_energy(g_dbm, 0x2, 0, NULL, 8, NULL));
    NOOP(&s, ebm_model_energy_grad(g_dbm, 0x5, 0, NULL, 8, NULL, NULL));
    NOOP(&s, ebm_model_energy_grad_input(g_dbm, 0, 1, 0, NULL, 8, NULL, 3));
    NOOP(&s, ebm_model_layer_input(g_dbm, 1, 0, NULL, 8, NULL, 3));
    NOOP(&s, ebm_model_layer_mean(g_dbm, 2, 0, NULL, 8, NULL, 2));
    NOOP(&s, ebm_model_layer_logprob(g_dbm, 0, 0, NULL, 8, NULL, 3, NULL));
    NOOP(&s, ebm_model_layer_argmin(g_dbm, 1, 0, NULL, 8));
    NOOP(&s, ebm_model_layer_sample(g_dbm, 1, g_rng, 0, NULL, 8));
    NOOP(&s, ebm_model_random_state(g_dbm, g_rng, 0, NULL, 8, NULL, 0));
    NOOP(&s, ebm_model_local_search(g_dbm, g_rng, 0, NULL, 8, NULL, 0, 10, NULL));
    NOOP(&s, ebm_model_mean_field(g_dbm, 0, NULL, 8, NULL, 0, 10, 1e-6));
    NOOP(&s, ebm_model_log_likelihood(g_dbm, 1.0, 0, NULL, 3, NULL));
    /* a grad buffer with n = 0 is left alone */
    float grad[23];
    for (int i = 0; i < 23; i++) {
        grad[i] = (float)i;
    }
    track(&s, "grad", grad, sizeof grad);
    NOOP(&s, ebm_model_energy_grad(g_dbm, 0, 0, NULL, 8, NULL, grad));
    s.src = MSG_RNG;
    NOOP(&s, ebm_rng_uniform(g_rng, 0, NULL));
    NOOP(&s, ebm_rng_normal(g_rng, 0, NULL));
    FINISH();
}
END_TEST

START_TEST(failures_do_not_poison_the_handle)
{
    ebm_model_t *twin = new_rbm();
    ebm_rng_t *r2 = fresh_rng();
    float x[3 * 7], bad[3 * 7], p[19], a1[9], a2[9];
    double e1[3], e2[3], f1[3], f2[3], lz1, lz2;
    t_fill_states(g_rbm, 3, x, 7, 32);
    memcpy(bad, x, sizeof x);
    bad[1 * 7 + 2] = 0.5f;
    ck_assert_int_eq(ebm_model_get_params(g_rbm, p), EBM_OK);
    p[0] = NAN;
    /* A run of failures of every kind on g_rbm and g_rng. */
    CHECK(ebm_model_energy(g_rbm, 3, bad, 7, e1) == EBM_EVALUE, "energy(0.5)");
    CHECK(ebm_model_set_params(g_rbm, p) == EBM_EVALUE, "set_params(NaN)");
    CHECK(ebm_model_axpy_params(g_rbm, NAN, p) == EBM_EVALUE, "axpy(NaN)");
    CHECK(ebm_model_init(g_rbm, g_rng, 7, 1.0) == EBM_EVALUE, "init(7)");
    CHECK(ebm_model_free_energy(g_rbm, 3, 3, x, 7, f1) == EBM_EVALUE, "free_energy(0x3)");
    CHECK(ebm_model_layer_sample(g_rbm, 1, g_rng, 3, bad, 7) == EBM_EVALUE, "sample(0.5)");
    CHECK(ebm_model_local_search(g_rbm, g_rng, 3, x, 7, NULL, 0, 0, NULL) == EBM_EVALUE,
          "local_search(0)");
    CHECK(ebm_model_log_likelihood(g_rbm, NAN, 3, x, 7, e1) == EBM_EVALUE, "ll(NaN)");
    CHECK(ebm_rng_uniform(g_rng, -1, a1) == EBM_ESHAPE, "uniform(-1)");
    /* ... then every result equals the untouched twin's, bit for bit. */
    OK(g_rbm, ebm_model_energy(g_rbm, 3, x, 7, e1));
    OK(twin, ebm_model_energy(twin, 3, x, 7, e2));
    CHECK(memcmp(e1, e2, sizeof e1) == 0, "energies differ after failures");
    OK(g_rbm, ebm_model_free_energy(g_rbm, 2, 3, x, 7, f1));
    OK(twin, ebm_model_free_energy(twin, 2, 3, x, 7, f2));
    CHECK(memcmp(f1, f2, sizeof f1) == 0, "free energies differ after failures");
    OK(g_rbm, ebm_model_layer_mean(g_rbm, 1, 3, x, 7, a1, 3));
    OK(twin, ebm_model_layer_mean(twin, 1, 3, x, 7, a2, 3));
    CHECK(memcmp(a1, a2, sizeof a1) == 0, "layer means differ after failures");
    OK(g_rbm, ebm_model_log_partition_exact(g_rbm, &lz1));
    OK(twin, ebm_model_log_partition_exact(twin, &lz2));
    CHECK(lz1 == lz2, "log Z differs after failures");
    float y1[3 * 7], y2[3 * 7];
    memcpy(y1, x, sizeof x);
    memcpy(y2, x, sizeof x);
    OK(g_rbm, ebm_model_layer_sample(g_rbm, 1, g_rng, 3, y1, 7));
    OK(twin, ebm_model_layer_sample(twin, 1, r2, 3, y2, 7));
    CHECK(memcmp(y1, y2, sizeof y1) == 0, "samples differ after failures");
    CHECK(rng_hash(g_rng) == rng_hash(r2), "rng states differ after failures");
    ebm_model_destroy(twin);
    ebm_rng_destroy(r2);
    FINISH();
}
END_TEST

/* ======================================================================== */

Suite *ebm_badinput_suite(void)
{
    Suite *s = suite_create("badinput");
    TCase *tc;

    tc = tcase_create("handles");
    tcase_set_timeout(tc, 10);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, versions_and_codes);
    tcase_add_test(tc, null_model_handle);
    tcase_add_test(tc, errmsg_bad_input);
    tcase_add_test(tc, errmsg_copy_null_buf_leaves_message);
    tcase_add_test(tc, errmsg_is_per_model);
    tcase_add_test(tc, failures_do_not_poison_the_handle);
    tcase_add_test(tc, empty_batches_with_null_buffers);
    suite_add_tcase(s, tc);

    tc = tcase_create("rng");
    tcase_set_timeout(tc, 10);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, rng_bad_input);
    tcase_add_test(tc, rng_const_calls_leave_message);
    suite_add_tcase(s, tc);

    tc = tcase_create("model");
    tcase_set_timeout(tc, 10);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, create_bad_input);
    tcase_add_test(tc, create_too_large_for_memory);
    tcase_add_test(tc, accessors_bad_index);
    tcase_add_test(tc, param_block_bad_input);
    tcase_add_test(tc, get_set_params_bad_input);
    tcase_add_test(tc, axpy_params_bad_input);
    tcase_add_test(tc, init_bad_input);
    suite_add_tcase(s, tc);

    tc = tcase_create("io");
    tcase_set_timeout(tc, 10);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, save_bad_input);
    tcase_add_test(tc, load_bad_input);
    tcase_add_test(tc, buffer_bad_input);
    suite_add_tcase(s, tc);

    tc = tcase_create("energy");
    tcase_set_timeout(tc, 10);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, energy_bad_input);
    tcase_add_test(tc, free_energy_bad_input);
    tcase_add_test(tc, energy_grad_bad_input);
    tcase_add_test(tc, energy_grad_input_bad_input);
    suite_add_tcase(s, tc);

    tc = tcase_create("conditional");
    tcase_set_timeout(tc, 10);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, layer_input_mean_bad_input);
    tcase_add_test(tc, layer_logprob_bad_input);
    tcase_add_test(tc, layer_argmin_sample_bad_input);
    tcase_add_test(tc, random_state_bad_input);
    suite_add_tcase(s, tc);

    tc = tcase_create("search");
    tcase_set_timeout(tc, 10);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, local_search_bad_input);
    tcase_add_test(tc, mean_field_bad_input);
    suite_add_tcase(s, tc);

    tc = tcase_create("exact");
    tcase_set_timeout(tc, 10);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, log_partition_bad_input);
    tcase_add_test(tc, log_likelihood_bad_input);
    suite_add_tcase(s, tc);

    return s;
}
